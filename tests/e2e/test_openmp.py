"""OpenMP on both runtimes: GCC's libgomp (gcc -fopenmp, its GOMP_* entry points interposed) and
LLVM's libomp (clang -fopenmp, OMPT). examples/openmp/known.c has a known structure (its header
comment): parallel regions of 4 threads, a schedule(static) loop, a barrier the fourth thread
reaches last, a critical section and a lock taken a known number of times. examples/openmp/
hybrid.c runs OpenMP teams inside MPI ranks."""

import csv
import io
import json
import os
import re
import subprocess

import pytest

from conftest import (
    ROOT,
    _fail_message,
    build,
    clean_env,
    path_of,
    plx,
    report_csv,
    run,
)
from components import require, require_tools

KNOWN = ROOT / "examples" / "openmp" / "known.c"
HYBRID = ROOT / "examples" / "openmp" / "hybrid.c"
THREADS = 4
REGIONS = 3
SLEEP_MS = 40
ITERATIONS = 32


def parallel_line():
    for n, line in enumerate(KNOWN.read_text().splitlines(), 1):
        if "PARALLEL_LINE" in line and "#pragma" in line:
            return n
    raise AssertionError("no PARALLEL_LINE in known.c")


def line_of(text):
    for n, line in enumerate(KNOWN.read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError("%r not in known.c" % text)


def llvm_openmp():
    require_tools("clang", what="clang (LLVM's OpenMP runtime is used through it)")
    libomp = [p for p in ("/usr/lib/llvm-14/lib/libomp.so", "/usr/lib/x86_64-linux-gnu/libomp.so.5")
              if os.path.exists(p)]
    require(bool(libomp) or subprocess.run(["sh", "-c", "ldconfig -p | grep -q libomp"]).returncode == 0,
            "LLVM's OpenMP runtime (libomp-dev)")


@pytest.fixture(scope="module", params=["gcc", "clang"])
def known_exp(request, tmp_path_factory):
    """(runtime, experiment) of known.c built with plx-cc and the runtime's compiler."""
    env = None
    if request.param == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    d = tmp_path_factory.mktemp("omp-" + request.param)
    exe = build(KNOWN, d / "known", "-fopenmp", "-O1", env=env)
    exp = d / "exp"
    cp = run(exp, exe, str(REGIONS), str(SLEEP_MS))
    assert "total %d (expected %d)" % (REGIONS * THREADS * 25, REGIONS * THREADS * 25) in cp.stdout
    return request.param, exp


def by_thread_name(rows):
    out = {}
    for r in rows:
        if r["process"] == "all":
            continue
        out.setdefault(r["thread_name"], []).append(r)
    return out


def test_parallel_regions_on_every_thread(known_exp):
    _, exp = known_exp
    rows = report_csv(exp, "--callpath")
    threads = by_thread_name(rows)
    # the master and three workers, named after their OpenMP thread number
    assert sorted(threads) == ["main", "omp thread 1", "omp thread 2", "omp thread 3"]
    region = "parallel@known.c:%d" % parallel_line()
    for name, trs in threads.items():
        paths = {path_of(r): r for r in trs}
        expected = ("main", "region", region) if name == "main" else (region,)
        assert int(paths[expected]["calls"]) == REGIONS, (name, expected)
        # the outlined body is the region: no main._omp_fn.N or .omp_outlined. of its own
        assert not [p for p in paths if any("_omp_fn" in f or f.startswith(".omp") for f in p)]
        # schedule(static): 32 iterations over 4 threads, each calls work() once
        work = [r for p, r in paths.items() if p[-1] == "work"]
        assert all(path_of(r)[: len(expected)] == expected for r in work), name
        assert sum(int(r["calls"]) for r in work) == REGIONS * ITERATIONS // THREADS, name
    # one single per region, run by one thread of the team
    total_single = sum(int(r["calls"]) for r in rows
                       if r["process"] != "all" and r["function"].startswith("single@known.c:"))
    assert total_single == REGIONS
    nap = [r for r in rows if r["process"] != "all" and r["function"] == "nap"]
    assert [(r["thread_name"], path_of(r), int(r["calls"])) for r in nap] == [
        ("omp thread 3", (region, "nap"), REGIONS)
    ]


def test_barrier_wait_on_early_threads_only(known_exp):
    _, exp = known_exp
    rows = report_csv(exp, "--sync")
    label = "omp-barrier known.c:%d " % line_of("#pragma omp barrier")
    waits = {r["thread_name"]: r for r in rows
             if r["process"] != "all" and r["object"].startswith(label)}
    assert sorted(waits) == ["main", "omp thread 1", "omp thread 2", "omp thread 3"]
    for name, r in waits.items():
        assert int(r["acquisitions"]) == REGIONS and int(r["releases"]) == REGIONS, r
    slept = REGIONS * SLEEP_MS / 1000
    # the thread that slept arrives last: it hardly waits; the others wait for it
    assert float(waits["omp thread 3"]["wait_s"]) < 0.25 * slept
    for name in ("main", "omp thread 1", "omp thread 2"):
        assert float(waits[name]["wait_s"]) > 0.5 * slept, waits[name]


def test_critical_and_lock_acquisitions_exact(known_exp):
    _, exp = known_exp
    rows = [r for r in report_csv(exp, "--sync") if r["process"] != "all"]
    critical = "omp-critical known.c:%d " % line_of("omp critical(tally)")
    lock = "omp-lock known.c:%d " % line_of("omp_init_lock(&lk)")
    for label, count in ((critical, 5), (lock, 2)):
        got = {r["thread_name"]: (int(r["acquisitions"]), int(r["releases"]))
               for r in rows if r["object"].startswith(label)}
        assert got == {n: (count * REGIONS,) * 2
                       for n in ("main", "omp thread 1", "omp thread 2", "omp thread 3")}, label


def test_critical_path_goes_through_the_sleeping_thread(tmp_path, known_exp):
    runtime, _ = known_exp
    env = {"PLX_CC": "clang"} if runtime == "clang" else None
    exe = build(KNOWN, tmp_path / "known", "-fopenmp", "-O1", env=env)
    exp = tmp_path / "exp"
    run(exp, exe, "2", "60", opts=("--trace",))
    cp = plx("critical-path", exp, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(cp.stdout)))
    # a barrier is a collective: the last arrival's sleeps (2 x 60 ms) are on the path, on the
    # thread that slept, and the threads that waited for it are not
    nap = [r for r in rows if r["level"] == "procedure" and r["name"] == "nap"]
    assert len(nap) == 1 and nap[0]["location"].endswith(".%d]" % slept_index(exp)), cp.stdout
    assert float(nap[0]["time_s"]) > 0.115, nap[0]
    procedures = [r for r in rows if r["level"] == "procedure" and r["kind"] != "total"]
    assert max(procedures, key=lambda r: float(r["time_s"]))["name"] == "nap"
    # Chrome tracks: one per thread, each with the 2 parallel regions, named by OpenMP thread
    out = tmp_path / "trace.json"
    plx("export", exp, "--format", "chrome", "-o", out)
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    region = "parallel@known.c:%d" % parallel_line()
    per_track = {}
    for e in events:
        if e.get("ph") in ("X", "B") and e.get("name") == region:
            per_track[e["tid"]] = per_track.get(e["tid"], 0) + 1
    assert sorted(per_track.values()) == [2, 2, 2, 2]
    # thread tracks (measurement tracks, tid 2**32 + thread, hold the runtime's own work)
    names = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["tid"] < 1 << 32}
    assert {n.split(" ", 2)[2] for n in names} == {"main", "omp thread 1", "omp thread 2",
                                                    "omp thread 3"}


def slept_index(exp):
    rows = report_csv(exp)
    return int({r["thread_name"]: r["thread"] for r in rows if r["process"] != "all"}["omp thread 3"])


# ---- MPI + OpenMP -----------------------------------------------------------------------------


def test_hybrid_mpi_openmp(tmp_path, open_mpi):
    exe = tmp_path / "hybrid"
    cp = subprocess.run(["mpicc", "-fopenmp", "-g", "-O1", "-finstrument-functions", str(HYBRID),
                         "-o", str(exe)], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = tmp_path / "exp"
    cmd = ["mpirun", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", "2", str(ROOT / "build" / "bin" / "plx"), "run", "-o", str(exp), "--",
            str(exe), "3"]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    assert "work calls 48 (expected 48)" in cp.stdout
    rows = [r for r in report_csv(exp, "--callpath") if r["process"] != "all"]
    locations = {(r["process"], r["thread_name"]) for r in rows}
    processes = {p for p, _ in locations}
    assert len(processes) == 2
    # ranks x threads: every rank has its master and one worker of the team
    assert locations == {(p, n) for p in processes for n in ("main", "omp thread 1")}
    for p in processes:
        for name in ("main", "omp thread 1"):
            work = [r for r in rows if (r["process"], r["thread_name"]) == (p, name)
                    and r["function"] == "work"]
            assert sum(int(r["calls"]) for r in work) == 3 * 4, (p, name)
            region = {path_of(r)[-2] for r in work}
            assert len(region) == 1 and re.match(r"parallel@hybrid\.c:\d+$", region.pop())
            regions = [r for r in rows if (r["process"], r["thread_name"]) == (p, name)
                       and r["function"].startswith("parallel@hybrid.c:")]
            assert sum(int(r["calls"]) for r in regions) == 3
    mpi = [r for r in rows if r["function"] == "MPI_Allreduce"]
    assert sorted((r["thread_name"], int(r["calls"])) for r in mpi) == [("main", 1), ("main", 1)]


def test_query_openmp_focus(known_exp):
    """plx query: the parallel region in the Code hierarchy (under its module and file), the
    OpenMP objects in the Sync hierarchy."""
    _, exp = known_exp
    region = "parallel@known.c:%d" % parallel_line()
    cp = plx("query", exp, "--metric", "calls", "--focus", "code=/known/known.c/" + region)
    assert re.search(r"^total\s+%d \(from the profile\)$" % (REGIONS * THREADS), cp.stdout, re.M), cp.stdout
    cp = plx("hierarchy", exp)
    barrier = "known.c:%d " % line_of("#pragma omp barrier")
    lines = cp.stdout.splitlines()
    i = lines.index("  OmpBarrier")
    objs = [line.strip() for line in lines[i + 1:i + 4] if line.startswith("    " + barrier)]
    assert len(objs) == 1, cp.stdout
    cp = plx("query", exp, "--metric", "wait_time", "--focus", "sync=/OmpBarrier/" + objs[0])
    m = re.search(r"^total\s+([\d.]+) (ms|s) \(from the profile\)$", cp.stdout, re.M)
    assert m, cp.stdout
    seconds = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    # three threads wait for the fourth's sleep
    assert seconds > 3 * 0.5 * REGIONS * SLEEP_MS / 1000, cp.stdout


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_nested_teams(tmp_path, compiler):
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    src = ROOT / "examples" / "openmp" / "nested.c"
    lines = src.read_text().splitlines()
    outer = "parallel@nested.c:%d" % (1 + next(i for i, x in enumerate(lines) if "OUTER" in x))
    inner = "parallel@nested.c:%d" % (1 + next(i for i, x in enumerate(lines) if "INNER" in x))
    exe = build(src, tmp_path / "nested", "-fopenmp", "-O1", env=env)
    run(tmp_path / "exp", exe)
    rows = [r for r in report_csv(tmp_path / "exp", "--callpath") if r["process"] != "all"]
    leaf = {}
    for r in rows:
        if r["function"] == "leaf":
            leaf[path_of(r)] = leaf.get(path_of(r), 0) + int(r["calls"])
    # the master runs both levels; the outer team's worker starts its own inner team; the inner
    # teams' workers start at the inner region (one thread may serve both inner teams in turn)
    assert leaf == {("main", outer, inner, "leaf"): 1, (outer, inner, "leaf"): 1,
                    (inner, "leaf"): 2}
    # plx info: each thread's teams (record OmpTeams): level 1 has thread numbers 0 and 1, each
    # of the two inner teams (level 2) too
    text = plx("info", tmp_path / "exp").stdout
    block = text.split("  OpenMP teams\n", 1)[1]
    rows = re.findall(r"^\s+\d+\s+parallel\S*\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", block, re.M)
    teams = {}
    for level, num, size, times in (tuple(int(x) for x in row) for row in rows):
        assert size == 2
        teams[(level, num)] = teams.get((level, num), 0) + times
    # a libgomp thread of an inner team may end while the process exits: its OmpTeams are then
    # not written (its profile is recovered from its live file), so level 2 is checked as at most
    assert {k: v for k, v in teams.items() if k[0] == 1} == {(1, 0): 1, (1, 1): 1}, text
    assert teams.get((2, 0), 0) == 2 and 1 <= teams.get((2, 1), 0) <= 2, text
