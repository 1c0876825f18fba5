"""Call-stack samples in the trace exports. A plain program (tests/e2e/programs/sample_spin.c,
gcc -O2 -g -fomit-frame-pointer, -DREGION: `alpha` inside the API region `solve`) spins known
CPU times on two threads under `plx run --trace --sample`. Each export, read back by a real
reader — pandas/pyarrow for Parquet, the OTF2 library's otf2-print and Python reader, json for
Chrome's trace-event format — holds exactly the samples `plx report --callpath` counts, under
the same callpaths, on the same threads; per thread they add up to what `plx info` says was
taken."""

import csv
import json
import os
import re
from collections import Counter, defaultdict

import pytest
from components import require_module, require_tools

from conftest import MPI_TIMEOUT, PLX, ROOT, plx, run

SRC = ROOT / "tests" / "e2e" / "programs" / "sample_spin.c"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """(experiment, {thread: {callpath tuple: (samples, estimated)}}, {thread: taken})."""
    root = tmp_path_factory.mktemp("samples")
    exe = root / "spin"
    run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-DREGION", SRC, "-o", exe, "-pthread", "-lm"])
    exp = root / "exp"
    plx("run", "-o", exp, "--trace", "--sample", "--", exe)
    rows = plx("report", exp, "--callpath", "--format", "csv").stdout.splitlines()
    expected = defaultdict(dict)
    for r in csv.DictReader(rows):
        if r["process"] != "all" and int(r["samples"]) > 0:
            path = tuple(r["callpath"].split(" => "))
            expected[int(r["thread"])][path] = (int(r["samples"]), r["estimated"] == "1")
    info = json.loads(plx("info", exp, "--format", "json").stdout)
    taken = {t["thread"]: t["samples"]["taken"] for p in info["processes"] for t in p["threads"]}
    return exp, dict(expected), taken


def own_samples(paths):
    """{callpath: samples whose innermost frame it is}: its samples less its children's."""
    own = {p: s for p, (s, _) in paths.items()}
    for p, (s, _) in paths.items():
        if len(p) > 1 and p[:-1] in own:
            own[p[:-1]] -= s
    return {p: s for p, s in own.items() if s > 0}


def test_the_report_has_the_spinning_functions(sampled):
    _, expected, taken = sampled
    assert sorted(expected) == [0, 1] and sorted(taken) == [0, 1]
    main, worker = expected[0], expected[1]
    # alpha hangs under the region solve (measured, one call), beta under main; gamma_ on the worker
    assert main[("solve",)][1] is False and main[("solve", "alpha", "spin")][1] is True
    assert any(p[-3:] == ("work", "beta", "spin") for p in main)
    assert any(p[-3:] == ("worker", "gamma_", "spin") for p in worker)
    for t in (0, 1):
        assert sum(own_samples(expected[t]).values()) == taken[t] > 100


def test_parquet_samples_table(sampled, tmp_path):
    pd = require_module("pandas")
    exp, expected, taken = sampled
    out = tmp_path / "pq"
    cp = plx("export", exp, "--format", "parquet", "-o", out)
    assert re.search(r"exported \d+ events and %d call-stack samples as parquet" % sum(taken.values()),
                     cp.stderr), cp.stderr
    whole = pd.read_parquet(out / "samples.parquet")
    assert list(whole.columns) == [
        "location", "process", "rank", "thread", "node", "parent", "depth", "region",
        "region_name", "callpath", "estimated", "samples", "self_samples", "period_ns",
        "estimated_s", "estimated_self_s"]
    t = whole
    # the stamped samples, a row each, in a file of their own: no sum counts one twice
    stamped = pd.read_parquet(out / "sample_times.parquet")
    assert list(stamped.columns) == [
        "location", "process", "rank", "thread", "time_ns", "node", "callpath"]
    assert len(stamped) == sum(taken.values()) == t.self_samples.sum()
    locs = pd.read_parquet(out / "locations.parquet")
    thread_of = dict(zip(locs["location"], locs["thread"]))
    got = defaultdict(dict)
    for r in t.itertuples():
        path = tuple(r.callpath.split(" => "))
        assert thread_of[r.location] == r.thread and r.depth == len(path)
        assert r.region_name == path[-1] and pd.isna(r.rank)
        assert r.period_ns == 1_000_000
        assert r.estimated_s == pytest.approx(r.samples * 1e-3)
        assert r.estimated_self_s == pytest.approx(r.self_samples * 1e-3)
        got[r.thread][path] = (r.samples, bool(r.estimated))
        # the parent row is the callpath one frame shorter
        if len(path) > 1:
            parent = t[(t.location == r.location) & (t.node == r.parent)]
            assert list(parent.callpath) == [" => ".join(path[:-1])]
    assert dict(got) == expected
    for th, paths in expected.items():
        rows = t[t.thread == th]
        own = {tuple(c.split(" => ")): s for c, s in zip(rows.callpath, rows.self_samples) if s}
        assert own == own_samples(paths)
        assert rows.self_samples.sum() == taken[th]
    # the regions table names every sampled frame's region
    regions = pd.read_parquet(out / "regions.parquet")
    names = dict(zip(regions["region"], regions["name"]))
    assert all(names[r] == n for r, n in zip(t.region, t.region_name))


def context_path(cc):
    path = []
    while cc is not None:
        path.append(cc.region.name)
        cc = cc.parent
    return tuple(reversed(path))


def test_otf2_calling_context_samples(sampled, tmp_path):
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    otf2 = require_module("otf2", what="the OTF2 Python reader (pip install otf2)")
    exp, expected, taken = sampled
    out = tmp_path / "o2"
    cp = plx("export", exp, "--format", "otf2", "-o", out)
    assert re.search(r"exported \d+ events and %d call-stack samples as otf2" % sum(taken.values()),
                     cp.stderr), cp.stderr
    got = defaultdict(Counter)
    last_event, sample_times = {}, defaultdict(list)
    with otf2.reader.open(str(out / "traces.otf2")) as tr:
        generators = list(tr.definitions.interrupt_generators)
        assert len(generators) == 1
        g = generators[0]
        assert (g.name, str(g.interrupt_generator_mode), g.base, g.exponent, g.period) == (
            "cpu-clock", "InterruptGeneratorMode.TIME", otf2.Base.DECIMAL, -9, 1_000_000)
        thread = {l.name: int(re.search(r"(\d+)$", l.name).group(1)) for l in tr.definitions.locations}
        for loc, ev in tr.events:
            if type(ev).__name__ == "CallingContextSample":
                path = context_path(ev.calling_context)
                assert ev.unwind_distance == len(path) and ev.interrupt_generator == g
                # at its time (stamped with a trace), among the location's events
                assert ev.time >= last_event.get(loc.name, 0)
                sample_times[loc.name].append(ev.time)
                got[thread[loc.name]][path] += 1
            else:
                last_event[loc.name] = ev.time
    assert {t: dict(c) for t, c in got.items()} == {t: own_samples(p) for t, p in expected.items()}
    # in time order, among the location's events: but for one, taken in the thread's end after
    # its last event (under load its stamp can be any time later)
    for name, times in sample_times.items():
        assert times == sorted(times) and len([t for t in times if t > last_event[name]]) <= 1
    # otf2-print sees as many, and every location's event count includes them
    printed = run(["otf2-print", out / "traces.otf2"]).stdout
    assert printed.count("CALLING_CONTEXT_SAMPLE ") == sum(taken.values())


def test_chrome_stack_frames_and_samples(sampled, tmp_path):
    exp, expected, taken = sampled
    out = tmp_path / "trace.json"
    cp = plx("export", exp, "--format", "chrome", "-o", out)
    assert re.search(r"exported \d+ events and %d call-stack samples as chrome" % sum(taken.values()),
                     cp.stderr), cp.stderr
    doc = json.loads(out.read_text())
    frames = doc["stackFrames"]
    for f in frames.values():
        assert "parent" not in f or f["parent"] in frames
    first, last = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] != "M" and e["tid"] < 1_000_000:
            k = e["pid"]
            last[k] = max(e["ts"] + e.get("dur", 0), last.get(k, 0))
            first[k] = min(e["ts"], first.get(k, e["ts"]))

    def path(sf):
        p = []
        while sf is not None:
            p.append(frames[sf]["name"])
            sf = frames[sf].get("parent")
        return tuple(reversed(p))

    got = defaultdict(Counter)
    late = Counter()
    for s in doc["samples"]:
        assert s["name"] == "cpu-clock" and s["args"]["period_ns"] == 1_000_000
        # each stamped sample at its own time, within its process's events: but for at most one
        # a thread, taken in its end after the process's last event
        assert s["weight"] == 1 and first[s["pid"]] <= s["ts"]
        late[s["tid"]] += s["ts"] > last[s["pid"]]
        got[s["tid"]][path(s["sf"])] += s["weight"]
    assert all(n <= 1 for n in late.values()), late
    assert {t: dict(c) for t, c in got.items()} == {t: own_samples(p) for t, p in expected.items()}
    assert sum(s["weight"] for s in doc["samples"]) == sum(taken.values())
    # a frame's category: the region's kind where it was measured, `sampled` where only sampled
    by_name = {f["name"]: f["category"] for f in frames.values()}
    assert by_name["solve"] != "sampled" and by_name["spin"] == "sampled"


def test_exports_of_an_unsampled_run_have_no_samples(tmp_path):
    pd = require_module("pandas")
    exe = tmp_path / "spin"
    run(["gcc", "-O2", "-g", "-DREGION", SRC, "-o", exe, "-pthread", "-lm"])
    exp = tmp_path / "exp"
    plx("run", "-o", exp, "--trace", "--", exe)
    cp = plx("export", exp, "--format", "parquet", "-o", tmp_path / "pq")
    assert "call-stack samples" not in cp.stderr
    assert len(pd.read_parquet(tmp_path / "pq" / "samples.parquet")) == 0
    plx("export", exp, "--format", "chrome", "-o", tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    assert "samples" not in doc and "stackFrames" not in doc
    plx("export", exp, "--format", "otf2", "-o", tmp_path / "o2")
    assert "CALLING_CONTEXT" not in run(["otf2-print", "-G", tmp_path / "o2" / "traces.otf2"]).stdout


def test_mpi_ranks_samples_in_every_export(tmp_path):
    """Two Open MPI ranks of the same program (-DMPI), each with two threads: every export
    puts each rank's samples on that rank's locations."""
    require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")
    pd = require_module("pandas")
    otf2 = require_module("otf2", what="the OTF2 Python reader (pip install otf2)")
    exe = tmp_path / "spin_mpi"
    run(["mpicc", "-O2", "-g", "-fomit-frame-pointer", "-DMPI", SRC, "-o", exe, "-pthread", "-lm"])
    exp = tmp_path / "exp"
    mpirun = ["mpirun", "--oversubscribe", "-np", "2"]
    if os.geteuid() == 0:
        mpirun.insert(1, "--allow-run-as-root")
    run([*mpirun, PLX, "run", "--trace", "--sample", "-o", exp, "--", exe], timeout=MPI_TIMEOUT)
    expected = defaultdict(dict)  # (pid, thread) -> {callpath: samples}
    for r in csv.DictReader(plx("report", exp, "--callpath", "--format", "csv").stdout.splitlines()):
        if r["process"] != "all" and int(r["samples"]) > 0:
            key = (int(r["process"]), int(r["thread"]))
            expected[key][tuple(r["callpath"].split(" => "))] = (int(r["samples"]), r["estimated"] == "1")
    assert len(expected) == 4, sorted(expected)
    own = {k: own_samples(v) for k, v in expected.items()}

    plx("export", exp, "--format", "parquet", "-o", tmp_path / "pq")
    locs = pd.read_parquet(tmp_path / "pq" / "locations.parquet")
    key_of = {l: (p, t) for l, p, t in zip(locs["location"], locs["pid"], locs["thread"])}
    pid_of_rank = {int(r): p for r, p in zip(locs["rank"], locs["pid"])}
    assert sorted(pid_of_rank) == [0, 1]
    t = pd.read_parquet(tmp_path / "pq" / "samples.parquet")
    got = defaultdict(dict)
    for r in t.itertuples():
        assert pid_of_rank[int(r.rank)] == key_of[r.location][0]
        got[key_of[r.location]][tuple(r.callpath.split(" => "))] = (r.samples, bool(r.estimated))
    assert dict(got) == dict(expected)

    plx("export", exp, "--format", "chrome", "-o", tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    frames = doc["stackFrames"]

    def path(sf):
        p = []
        while sf is not None:
            p.append(frames[sf]["name"])
            sf = frames[sf].get("parent")
        return tuple(reversed(p))

    got = defaultdict(Counter)
    for s in doc["samples"]:  # chrome's pid is the rank
        got[(pid_of_rank[s["pid"]], s["tid"])][path(s["sf"])] += s["weight"]
    assert {k: dict(c) for k, c in got.items()} == own

    plx("export", exp, "--format", "otf2", "-o", tmp_path / "o2")
    got = defaultdict(Counter)
    with otf2.reader.open(str(tmp_path / "o2" / "traces.otf2")) as tr:
        for loc, ev in tr.events:
            if type(ev).__name__ == "CallingContextSample":
                rank, thread = loc.name.split(".")  # rank.thread
                got[(pid_of_rank[int(rank)], int(thread))][context_path(ev.calling_context)] += 1
    assert {k: dict(c) for k, c in got.items()} == own
