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
from components import require, require_module, require_tools

KNOWN = ROOT / "examples" / "openmp" / "known.c"
HYBRID = ROOT / "examples" / "openmp" / "hybrid.c"
PARENTS = ROOT / "examples" / "openmp" / "parents.c"
TASKLOOP = ROOT / "examples" / "openmp" / "taskloop.c"
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
    expected = ("main", "region", region)
    for name, trs in threads.items():
        paths = {path_of(r): r for r in trs}
        # every thread's paths start with the master's at the fork; a worker made no call of
        # main or region: they are its path, with 0 calls and the region's time
        assert int(paths[expected]["calls"]) == REGIONS, (name, expected)
        outer = (0, 0) if name != "main" else (1, 3)
        assert (int(paths[("main",)]["calls"]), int(paths[("main", "region")]["calls"])) == outer
        assert int(paths[("main", "region")]["child_calls"]) == REGIONS, name
        assert float(paths[("main", "region")]["inclusive_s"]) >= float(paths[expected]["inclusive_s"])
        # the outlined body is the region: no main._omp_fn.N or .omp_outlined. of its own
        assert not [p for p in paths if any("_omp_fn" in f or f.startswith(".omp") for f in p)]
        # schedule(static): 32 iterations over 4 threads, each calls work() once, inside the
        # loop's region (libgomp: found by the compiler's thread-number reads, named by the
        # for line; libomp: reported, named by the pragma's), entered once per region
        work = [r for p, r in paths.items() if p[-1] == "work"]
        loops = {p[len(expected)] for p in paths if p[-1] == "work"}
        assert loops <= {"loop@known.c:%d" % line_of("omp for schedule(static)"),
                         "loop@known.c:%d" % (line_of("omp for schedule(static)") + 1)}, loops
        assert len(loops) == 1, (name, loops)
        assert [path_of(r) for r in work] == [expected + (loops.pop(), "work")], name
        assert int(paths[path_of(work[0])[:-1]]["calls"]) == REGIONS, name
        assert sum(int(r["calls"]) for r in work) == REGIONS * ITERATIONS // THREADS, name
    # one single per region, run by one thread of the team
    total_single = sum(int(r["calls"]) for r in rows
                       if r["process"] != "all" and r["function"].startswith("single@known.c:"))
    assert total_single == REGIONS
    nap = [r for r in rows if r["process"] != "all" and r["function"] == "nap"]
    assert [(r["thread_name"], path_of(r), int(r["calls"])) for r in nap] == [
        ("omp thread 3", ("main", "region", region, "nap"), REGIONS)
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
    # a barrier is a collective: the last arrival's sleeps (2 x 60 ms, in nanosleep: waiting,
    # adapters/wait.c) are on the path, on the thread that slept, and the threads that waited
    # for it are not
    nap = [r for r in rows if r["level"] == "procedure" and r["name"] == "Wait: nanosleep"]
    assert len(nap) == 1 and nap[0]["location"].endswith(".%d" % slept_index(exp)), cp.stdout
    assert nap[0]["kind"] == "wait" and float(nap[0]["time_s"]) > 0.115, nap[0]
    procedures = [r for r in rows if r["level"] == "procedure" and r["kind"] != "total"]
    assert max(procedures, key=lambda r: float(r["time_s"]))["name"] == "Wait: nanosleep"
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
    # thread tracks, tid below 1,000,000 (message lanes and measurement tracks, tid
    # 2,000,000,000 + thread, which holds the runtime's own work, are above)
    names = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["tid"] < 1_000_000}
    # named LOCATION "THREAD NAME"
    assert {n.split(" ", 1)[1] for n in names} == {'"main"', '"omp thread 1"', '"omp thread 2"',
                                                    '"omp thread 3"'}


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
            # work() inside the static loop's region, inside the parallel region
            region = {path_of(r)[-3:-1] for r in work}
            assert len(region) == 1, region
            parallel, loop = region.pop()
            assert re.match(r"parallel@hybrid\.c:\d+$", parallel), parallel
            assert re.match(r"loop@hybrid\.c:\d+$", loop), loop
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
    # the master runs both levels; the outer team's worker starts its own inner team; every
    # worker's path starts with its team's master's (one thread may serve both inner teams)
    assert leaf == {("main", outer, inner, "leaf"): 4}
    # the inner teams' workers made no call of the outer region: it is their path's
    outer_calls = sorted(int(r["calls"]) for r in rows if path_of(r) == ("main", outer))
    assert sum(outer_calls) == 2 and outer_calls.count(1) == 2, outer_calls
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
    assert "loop@ regions count a thread's entries, not its iterations" in text
    assert teams.get((2, 0), 0) == 2 and 1 <= teams.get((2, 1), 0) <= 2, text


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_worker_paths_follow_the_fork(tmp_path, compiler, mode):
    """One region started from two call paths (a() twice, b() once) by a pool of 3 threads: each
    thread's work() calls sit under the path of the fork that ran them, on every thread."""
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    lines = PARENTS.read_text().splitlines()
    region = "parallel@parents.c:%d" % (1 + next(i for i, x in enumerate(lines) if "TEAM" in x))
    exe = build(PARENTS, tmp_path / "parents", "-fopenmp", "-O1", env=env)
    cp = run(tmp_path / "exp", exe, opts=("--trace",) if mode == "trace" else ())
    assert "work calls 9 (expected 9)" in cp.stdout
    rows = [r for r in report_csv(tmp_path / "exp", "--callpath") if r["process"] != "all"]
    threads = by_thread_name(rows)
    assert sorted(threads) == ["main", "omp thread 1", "omp thread 2"]
    for name, trs in threads.items():
        got = {path_of(r): int(r["calls"]) for r in trs if not r["function"].startswith("plx_")}
        master = name == "main"
        assert got == {
            ("main",): 1 if master else 0,
            ("main", "a"): 2 if master else 0,
            ("main", "b"): 1 if master else 0,
            ("main", "a", "team"): 2 if master else 0,
            ("main", "b", "team"): 1 if master else 0,
            ("main", "a", "team", region): 2,
            ("main", "b", "team", region): 1,
            ("main", "a", "team", region, "work"): 2,
            ("main", "b", "team", region, "work"): 1,
        }, (name, got)
    # the total merges the threads' paths: main called once, the region entered 9 times
    total = {path_of(r): int(r["calls"]) for r in report_csv(tmp_path / "exp", "--callpath")
             if r["process"] == "all"}
    assert total[("main",)] == 1 and total[("main", "a", "team", region)] == 6
    assert total[("main", "b", "team", region, "work")] == 3


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_taskloop_tasks_and_iterations(tmp_path, compiler):
    """taskloop.c: 100 iterations in 5 tasks, then 30 in 3 (grainsize 10, counting down): the
    creating thread's taskloop regions, the tasks run on whichever thread of the team, and with
    libgomp each task's iterations (user event "omp taskloop iterations")."""
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    exe = build(TASKLOOP, tmp_path / "taskloop", "-fopenmp", "-O1", env=env)
    cp = run(tmp_path / "exp", exe)
    assert "body calls 130 (expected 130)" in cp.stdout
    rows = [r for r in report_csv(tmp_path / "exp", "--callpath") if r["process"] != "all"]
    calls = {}
    for r in rows:
        key = (r["function"].split("@")[0], r["function"])
        calls[key] = calls.get(key, 0) + int(r["calls"])
    tasks = {f: n for (k, f), n in calls.items() if k == "task"}
    loops = {f: n for (k, f), n in calls.items() if k == "taskloop"}
    body = sum(n for (k, _), n in calls.items() if k == "body")
    assert body == 130
    assert sum(tasks.values()) == 8 and sum(loops.values()) == 2, calls
    # every body call is inside a task
    assert all("task" in {f.split("@")[0] for f in path_of(r)[:-1]}
               for r in rows if r["function"] == "body")
    if compiler == "gcc":
        lines = TASKLOOP.read_text().splitlines()
        up, down = (1 + next(i for i, x in enumerate(lines) if m in x) for m in ("UP", "DOWN"))
        assert tasks == {"task@taskloop.c:%d" % up: 5, "task@taskloop.c:%d" % down: 3}
        assert loops == {"taskloop@taskloop.c:%d" % up: 1, "taskloop@taskloop.c:%d" % down: 1}
        text = plx("report", tmp_path / "exp").stdout
        # per thread: count = tasks it ran, sum = their iterations; over the threads 8 and 130
        ran = [(int(m.group(1)), float(m.group(2)) * int(m.group(1))) for m in re.finditer(
            r"^\s+omp taskloop iterations\s+(\d+)\s+\S+\s+\S+\s+([\d.]+)", text, re.M)]
        per_thread = ran[:-1] if len(ran) > 1 else ran  # the last table is the total's
        assert sum(c for c, _ in per_thread) == 8, text
        assert round(sum(s for _, s in per_thread)) == 130, text


def otf2_team_records(tmp_path, exp):
    """otf2-print's ThreadFork/Join and ThreadTeamBegin/End records: {(record, location): n}
    and the definitions' text."""
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    out = tmp_path / "otf2"
    plx("export", exp, "--format", "otf2", "-o", out)
    text = subprocess.run(["otf2-print", str(out / "traces.otf2")], capture_output=True,
                          text=True, check=True).stdout
    counts = {}
    for m in re.finditer(r"^(THREAD_FORK|THREAD_JOIN|THREAD_TEAM_BEGIN|THREAD_TEAM_END)\s+(\d+)",
                         text, re.M):
        key = (m.group(1), int(m.group(2)))
        counts[key] = counts.get(key, 0) + 1
    defs = subprocess.run(["otf2-print", "-G", str(out / "traces.otf2")], capture_output=True,
                          text=True, check=True).stdout
    return counts, defs


def known_traced(tmp_path, compiler):
    """known.c (2 regions of 4 threads, 5 rounds) built with `compiler` and traced: its
    experiment directory."""
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    exe = build(KNOWN, tmp_path / "known", "-fopenmp", "-O1", env=env)
    exp = tmp_path / "exp"
    run(exp, exe, "2", "5", opts=("--trace",))
    return exp


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_otf2_thread_teams(tmp_path, compiler):
    """OTF2 export of known.c (2 regions of 4 threads): every location begins and ends 2 teams,
    the master forks and joins 2; the team is an OpenMP communicator of the 4 locations."""
    exp = known_traced(tmp_path, compiler)
    counts, defs = otf2_team_records(tmp_path, exp)
    # location 0 is the main thread: the one that forks
    expected = {("THREAD_FORK", 0): 2, ("THREAD_JOIN", 0): 2}
    for loc in range(THREADS):
        expected[("THREAD_TEAM_BEGIN", loc)] = 2
        expected[("THREAD_TEAM_END", loc)] = 2
    assert counts == expected, counts
    region = "parallel@known.c:%d" % parallel_line()
    comm = re.search(r'^GROUP\s+\d+\s+Name: "OpenMP teams of %s \(level 1\)[^"]*".*Type: COMM_GROUP, '
                     r'Paradigm: OPENMP, Flags: NONE, (\d+) Members' % re.escape(region), defs, re.M)
    assert comm and int(comm.group(1)) == THREADS, defs
    # the text export: a team line per join, 2 per location
    plx("export", exp, "--format", "text", "-o", tmp_path / "trace.txt")
    text = (tmp_path / "trace.txt").read_text()
    teams = re.findall(r"^\s+\d+ (\S+)\s+team\s+%s  level=1 size=4 num=(\d)$" % re.escape(region),
                       text, re.M)
    per_location = {}
    for loc, num in teams:
        per_location.setdefault(loc, set()).add(int(num))
    assert len(teams) == 2 * THREADS and sorted(per_location.values(), key=min) == [
        {0}, {1}, {2}, {3}], teams


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_otf2_nested_thread_teams(tmp_path, compiler):
    """nested.c: 1 outer team of 2 and 2 inner teams of 2: 3 forks and joins (the master's 2,
    the outer worker's 1), 6 team begins and ends over the locations."""
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    exe = build(ROOT / "examples" / "openmp" / "nested.c", tmp_path / "nested", "-fopenmp", "-O1",
                env=env)
    run(tmp_path / "exp", exe, opts=("--trace",))
    counts, defs = otf2_team_records(tmp_path, tmp_path / "exp")
    total = {}
    for (rec, loc), n in counts.items():
        total[rec] = total.get(rec, 0) + n
    assert total == {"THREAD_FORK": 3, "THREAD_JOIN": 3, "THREAD_TEAM_BEGIN": 6,
                     "THREAD_TEAM_END": 6}, counts
    assert counts[("THREAD_FORK", 0)] == 2 and counts[("THREAD_TEAM_BEGIN", 0)] == 2
    # every location ends what it begins
    for (rec, loc), n in counts.items():
        if rec == "THREAD_TEAM_BEGIN":
            assert counts[("THREAD_TEAM_END", loc)] == n
    assert len(re.findall(r'^COMM\s+\d+\s+Name: "OpenMP teams of', defs, re.M)) == 2, defs


def tau_entries(path):
    """{name: calls} of a TAU profile file's entries (flat and callpath, without the root)."""
    out = {}
    for m in re.finditer(r'^"([^"]*)" (\d+) ', path.read_text(), re.M):
        if m.group(1) != ".TAU application":
            out[m.group(1)] = int(m.group(2))
    return out


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_tau_export_keeps_each_parallel_region_apart(tmp_path, compiler):
    """omp_regions.c: three parallel regions of 3 threads on lines of their own, entered 2, 1
    and 1 times. Every thread's TAU profile names them as plx report does (parallel@FILE:LINE,
    loop@..., single@..., task@...), with plx report's calls per region and per callpath, and
    Hatchet reads the three regions apart with plx report's inclusive times."""
    env = None
    if compiler == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang"}
    exe = build("omp_regions.c", tmp_path / "omp_regions", "-fopenmp", "-O1", env=env)
    exp = tmp_path / "exp"
    run(exp, exe)
    out = tmp_path / "tau"
    plx("export", exp, "--format", "tau", "-o", out)
    flat = [r for r in report_csv(exp) if r["process"] != "all"]
    paths = [r for r in report_csv(exp, "--callpath") if r["process"] != "all"]
    threads = sorted({int(r["thread"]) for r in flat})
    assert threads == [0, 1, 2], threads
    files = sorted(p.name for p in (out / "MULTI__TIME").iterdir())
    assert files == ["profile.0.0.%d" % t for t in threads], files
    for t in threads:
        got = tau_entries(out / "MULTI__TIME" / ("profile.0.0.%d" % t))
        want = {r["function"]: int(r["calls"]) for r in flat if int(r["thread"]) == t}
        want.update({".TAU application => " + r["callpath"]: int(r["calls"])
                     for r in paths if int(r["thread"]) == t})
        assert got == want, (t, got, want)
        regions = sorted(c for n, c in got.items() if n.startswith("parallel@omp_regions.c:"))
        assert regions == [1, 1, 2], got
    ht = require_module("hatchet", "Python package llnl-hatchet")
    df = ht.GraphFrame.from_tau(str(out)).dataframe.reset_index()
    par = df[df["name"].str.startswith("parallel@omp_regions.c:")]
    got = {(n, int(t)): round(v, 3) for n, t, v in zip(par["name"], par["thread"], par["time (inc)"])}
    want = {(r["function"], int(r["thread"])): round(float(r["inclusive_s"]) * 1e6, 3)
            for r in paths if r["function"].startswith("parallel@")}
    assert len(want) == 9 and got == pytest.approx(want, abs=0.0011), (got, want)


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_otf2_openmp_locks_and_critical_sections(tmp_path, compiler):
    """known.c, 2 regions of 4 threads, each thread entering the critical section 5 times and
    taking the lock 2 times per region: otf2-print shows, per location, 14 ThreadAcquireLock and
    14 ThreadReleaseLock of paradigm OpenMP, on two lock ids: the critical section's with
    acquisition orders 1..40, the lock's 1..16, each release with its acquisition's order
    (libomp's internal pthread mutexes have records of paradigm pthread besides)."""
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    exp = known_traced(tmp_path, compiler)
    plx("export", exp, "--format", "otf2", "-o", tmp_path / "otf2")
    text = subprocess.run(["otf2-print", str(tmp_path / "otf2" / "traces.otf2")],
                          capture_output=True, text=True, check=True).stdout
    recs = re.findall(r"^THREAD_(ACQUIRE|RELEASE)_LOCK\s+(\d+)\s+\d+\s+Model: (\w+), "
                      r"Lock: (\d+), Acquisition Order: (\d+)$", text, re.M)
    # libomp's own pthread mutexes are the PTHREAD records beside them
    recs = [r for r in recs if r[2] == "OPENMP"]
    per_location = {}
    for what, loc, model, _, _ in recs:
        key = (what, int(loc), model)
        per_location[key] = per_location.get(key, 0) + 1
    assert per_location == {(w, loc, "OPENMP"): 14
                            for w in ("ACQUIRE", "RELEASE") for loc in range(THREADS)}, per_location
    orders = {}
    for what, _, _, lock, order in recs:
        orders.setdefault((what, int(lock)), []).append(int(order))
    locks = sorted({lock for _, lock in orders})
    assert len(locks) == 2, orders
    by_count = sorted(locks, key=lambda l: len(orders[("ACQUIRE", l)]))
    for lock, n in zip(by_count, (16, 40)):
        for what in ("ACQUIRE", "RELEASE"):
            assert sorted(orders[(what, lock)]) == list(range(1, n + 1)), (what, lock, orders)
