"""Synchronization objects, CPU time of `cputime` functions, resource hierarchies and
metric x focus queries, against real runs of the runtime's t_sync test and the threads examples."""

import csv
import io
import json
import re

import pytest

from conftest import ROOT, build, plx, run

T_SYNC = ROOT / "runtime" / "tests" / "t_sync.c"
QUEUE = ROOT / "examples" / "threads" / "queue.c"
MATMUL = ROOT / "examples" / "threads" / "matmul.c"

# matmul's size in these tests: 4 threads, N = 40, 2 repeats (8 worker threads in all)
THREADS, N, REPEATS = 4, 40, 2


def sync_csv(directory, *extra):
    cp = plx("report", directory, "--sync", "--format", "csv", *extra)
    return list(csv.DictReader(io.StringIO(cp.stdout)))


def totals(rows):
    return [r for r in rows if r["process"] == "all" and r["thread"] == "all"]


def by_kind(rows, field):
    out = {}
    for r in totals(rows):
        out[r["kind"]] = out.get(r["kind"], 0) + int(r[field])
    return out


@pytest.fixture(scope="module")
def t_sync(tmp_path_factory):
    d = tmp_path_factory.mktemp("sync")
    exe = build(T_SYNC, d / "t_sync", "-O1", "-lpthread")
    run(d / "exp", exe)
    return d / "exp"


def test_sync_totals_per_kind_are_exact(t_sync):
    rows = sync_csv(t_sync)
    assert {"object", "kind", "acquisitions", "contended", "wait_s", "hold_s", "process", "thread",
            "releases", "site"} <= set(rows[0].keys())
    acq = by_kind(rows, "acquisitions")
    rel = by_kind(rows, "releases")
    assert acq["mutex"] == 40001 + 100 + 2003
    assert acq["rwlock"] == 120
    assert acq["barrier"] == 30
    assert acq["sem"] == 25 and rel["sem"] == 25
    assert acq["spin"] == 1000
    assert rel["cond"] == 1001


def test_hot_lock_waits_and_cold_lock_does_not(t_sync):
    mutexes = {int(r["acquisitions"]): r for r in totals(sync_csv(t_sync)) if r["kind"] == "mutex"}
    hot, cold, queue = mutexes[40001], mutexes[100], mutexes[2003]
    assert int(hot["contended"]) > 0 and float(hot["wait_s"]) > 0
    assert int(cold["contended"]) == 0 and float(cold["wait_s"]) == 0
    # statically initialised: named by first use; the queue lock by its init call's line
    assert hot["site"].startswith("first used at t_sync.c:")
    assert cold["site"].startswith("first used at t_sync.c:")
    init_line = next(i for i, l in enumerate(T_SYNC.read_text().splitlines(), 1)
                     if "pthread_mutex_init(&qlock" in l)
    assert queue["site"] == "init at t_sync.c:%d (main)" % init_line
    assert queue["object"] == "mutex t_sync.c:%d (main)" % init_line
    # sorted by wait time: the hot lock's row comes before the cold one's
    names = [r["object"] for r in totals(sync_csv(t_sync))]
    assert names.index(hot["object"]) < names.index(cold["object"])


def test_per_thread_rows_add_up_to_the_totals(t_sync):
    rows = sync_csv(t_sync)
    per = {}
    for r in rows:
        if r["process"] != "all":
            assert r["thread"] != "all"
            per[r["object"]] = per.get(r["object"], 0) + int(r["acquisitions"])
    for r in totals(rows):
        assert per[r["object"]] == int(r["acquisitions"]), r
    by_process = sync_csv(t_sync, "--by", "process")
    assert {r["thread"] for r in by_process} == {"all"}


def test_sync_json_and_text(t_sync):
    doc = json.loads(plx("report", t_sync, "--sync", "--format", "json").stdout)
    kinds = {r["kind"] for r in doc["total"]}
    assert {"mutex", "rwlock", "cond", "barrier", "sem", "spin"} <= kinds
    waits = [r["wait_s"] for r in doc["total"]]
    assert waits == sorted(waits, reverse=True)
    text = plx("report", t_sync, "--sync").stdout
    assert "total (all processes, all threads)" in text


def test_hierarchy_of_t_sync(t_sync):
    doc = json.loads(plx("hierarchy", t_sync, "--format", "json").stdout)
    code_files = {f["name"] for m in doc["code"]["children"] for f in m["children"]}
    assert "t_sync.c" in code_files
    functions = {fn["name"] for m in doc["code"]["children"] for f in m["children"]
                 for fn in f["children"]}
    assert {"main", "hammer", "producer", "consumer"} <= functions
    hosts = doc["machine"]["children"]
    # a thread node is named RANK.THREAD (here PID.THREAD) and answers to NAME#THREAD too
    threads = [a for h in hosts for p in h["children"] for t in p["children"] for a in t["aliases"]]
    assert "main#0" in threads and sum(t.startswith("hammer#") for t in threads) == 4
    cats = {c["name"]: c for c in doc["sync"]["children"]}
    assert {"Mutex", "CondVar", "RwLock", "Barrier", "Semaphore", "Spin"} <= set(cats)
    assert len(cats["Mutex"]["children"]) == 3
    text = plx("hierarchy", t_sync).stdout
    for root in ("Code", "Machine", "Sync"):
        assert "\n%s\n" % root in "\n" + text


def test_query_wait_time_of_objects(t_sync):
    hot = next(r for r in totals(sync_csv(t_sync)) if r["acquisitions"] == "40001")
    name = hot["object"].split(" ", 1)[1]
    q = json.loads(plx("query", t_sync, "--metric", "wait_time", "--focus",
                       "sync=/Mutex/" + name, "--format", "json").stdout)
    assert q["total"] == pytest.approx(float(hot["wait_s"]), abs=1e-6)
    whole = json.loads(plx("query", t_sync, "--metric", "wait_time", "--format", "json").stdout)
    assert whole["total"] >= q["total"]


def test_query_sync_focus_globs(t_sync):
    """Sync focus components take the filter's glob grammar (fnmatch): `?`, `*`, `[...]`."""
    mutexes = [r for r in totals(sync_csv(t_sync)) if r["kind"] == "mutex"]
    hot = next(r for r in mutexes if r["acquisitions"] == "40001")
    name = hot["object"].split(" ", 1)[1]
    assert not any(c in name for c in "*?[\\")

    def wait(focus):
        return json.loads(plx("query", t_sync, "--metric", "wait_time", "--focus", focus,
                              "--format", "json").stdout)["total"]

    one = name[:-1] + "?"  # the last character left open
    assert sum(r["object"].split(" ", 1)[1].startswith(name[:-1]) for r in mutexes) == 1
    assert wait("sync=/Mutex/" + one) == pytest.approx(float(hot["wait_s"]), abs=1e-6)
    assert wait("sync=/M[u]t*/" + one) == pytest.approx(float(hot["wait_s"]), abs=1e-6)
    everything = sum(float(r["wait_s"]) for r in mutexes)
    assert wait("sync=/Mutex/*") == pytest.approx(everything, abs=1e-6)
    assert wait("sync=/Mutex/*" + name[-3:]) >= float(hot["wait_s"]) - 1e-6
    cp = plx("query", t_sync, "--metric", "wait_time", "--focus", "sync=/Mutex/nothing*",
             check=False)
    assert cp.returncode == 2 and 'nothing named "nothing*"' in cp.stderr, cp.stderr


def test_queue_example_lock_count(tmp_path):
    exe = build(QUEUE, tmp_path / "queue", "-O1", "-lpthread")
    run(tmp_path / "exp", exe)
    rows = totals(sync_csv(tmp_path / "exp"))
    mutexes = sorted(int(r["acquisitions"]) for r in rows if r["kind"] == "mutex")
    assert 80004 in mutexes
    queue_lock = next(r for r in rows if r["acquisitions"] == "80004")
    assert queue_lock["site"].startswith("init at queue.c:")
    assert queue_lock["object"].endswith("(main)")


@pytest.fixture(scope="module", params=["profile", "trace"])
def matmul(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("matmul-" + request.param)
    exe = build(MATMUL, d / "matmul", "-O1", "-lpthread")
    (d / "cpu.filter").write_text("cputime innerp\n")
    opts = ["--filter", d / "cpu.filter"] + (["--trace"] if request.param == "trace" else [])
    run(d / "exp", exe, str(THREADS), str(N), str(REPEATS), opts=opts)
    return d / "exp"


def query(directory, metric, focus=None, bins=None):
    args = ["query", directory, "--metric", metric, "--format", "json"]
    if focus:
        args += ["--focus", focus]
    if bins:
        args += ["--bins", str(bins)]
    return json.loads(plx(*args).stdout)


def worker_threads(directory):
    doc = json.loads(plx("hierarchy", directory, "--format", "json").stdout)
    return [t["name"] for h in doc["machine"]["children"] for p in h["children"]
            for t in p["children"] if any(a.startswith("multiply_rows#") for a in t["aliases"])]


def test_cpu_time_of_innerp_per_thread_sums_to_the_total(matmul):
    workers = worker_threads(matmul)
    assert len(workers) == THREADS * REPEATS
    whole = query(matmul, "cpu_time", "code=/innerp")["total"]
    assert whole > 0
    parts = []
    for w in workers:
        v = query(matmul, "cpu_time", "code=/innerp,machine=/*/*/" + w)["total"]
        assert v > 0, w
        parts.append(v)
    assert sum(parts) == pytest.approx(whole, rel=1e-9, abs=1e-9)
    # with the module and file in the path, the same
    full = query(matmul, "cpu_time", "code=/matmul/matmul.c/innerp")["total"]
    assert full == pytest.approx(whole)


def test_calls_of_innerp_per_thread(matmul):
    total = 0
    for w in worker_threads(matmul):
        total += query(matmul, "calls", "code=/innerp,machine=/*/*/" + w)["total"]
    assert total == N * N * REPEATS
    assert query(matmul, "calls", "code=/innerp")["total"] == N * N * REPEATS


def test_cpu_column_in_reports(matmul):
    rows = list(csv.DictReader(io.StringIO(plx("report", matmul, "--format", "csv").stdout)))
    innerp = [r for r in rows if r["function"] == "innerp"]
    assert innerp and all(r["cpu_s"] != "" and float(r["cpu_s"]) > 0 for r in innerp)
    assert all(r["cpu_s"] == "" for r in rows if r["function"] == "multiply_rows")
    doc = json.loads(plx("report", matmul, "--format", "json").stdout)
    f = {x["function"]: x for x in doc["total"]["functions"]}
    assert f["innerp"]["cpu_s"] > 0 and f["main"]["cpu_s"] is None
    assert " cpu " in plx("report", matmul).stdout


def test_series_with_a_trace(matmul):
    q = query(matmul, "calls", "code=/innerp", bins=7)
    if "trace" not in str(matmul):
        assert q["series"] is None
        return
    assert len(q["series"]) == 7
    assert sum(b["value"] for b in q["series"]) == N * N * REPEATS
    c = query(matmul, "cpu_time", "code=/innerp", bins=5)
    assert sum(b["value"] for b in c["series"]) == pytest.approx(c["total"], rel=1e-6)


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_threads_joined_one_after_another_are_one_object_each(tmp_path, mode):
    """100 threads created and joined one after another (glibc reuses the handle): 100 thread
    objects, each joined once — they were one object with all 100 joins."""
    exe = build("serial_joins.c", tmp_path / "serial_joins", "-O1", "-pthread")
    cp = run(tmp_path / "exp", exe, "100", opts=["--trace"] if mode == "trace" else [])
    assert "100 threads" in cp.stdout
    threads = [r for r in totals(sync_csv(tmp_path / "exp")) if r["kind"] == "thread"]
    assert len(threads) == 100
    assert sorted(int(r["acquisitions"]) for r in threads) == [1] * 100
    # each named after the pthread_create call (it was the join or the thread's end, whichever
    # came first)
    src = (ROOT / "tests" / "e2e" / "programs" / "serial_joins.c").read_text().splitlines()
    line = next(i for i, text in enumerate(src, 1) if "pthread_create(" in text)
    assert {r["site"] for r in threads} == {"init at serial_joins.c:%d (main)" % line}
    tree = json.loads(plx("hierarchy", tmp_path / "exp", "--format", "json").stdout)["sync"]
    cats = {c["name"]: c["children"] for c in tree["children"]}
    assert len(cats["Thread"]) == 100


def test_joined_threads_objects_survive_a_sigkill(tmp_path):
    """The joins' statistics are written at each join; the joiner's live sync file, read after
    a SIGKILL, replaces only the objects it holds (it replaced every record)."""
    exe = build("serial_joins.c", tmp_path / "serial_joins", "-O1", "-pthread")
    cp = run(tmp_path / "exp", exe, "100", "kill", status=137)
    assert "killed by signal 9 (SIGKILL)" in cp.stderr
    threads = [r for r in totals(sync_csv(tmp_path / "exp")) if r["kind"] == "thread"]
    assert sorted(int(r["acquisitions"]) for r in threads) == [1] * 100


@pytest.mark.parametrize("how", ["attr", "self"])
def test_detached_thread_handle_reused_is_another_object(tmp_path, how):
    """10 rounds of a detached thread (created detached, or detaching itself) that ends, then a
    joinable thread, joined, which glibc gives the same handle: each joined thread is its own
    object, named after its own pthread_create, joined once. The detached thread's handle was
    never retired, so the joinable one took its object (named after the detached thread's
    create). A thread created detached has no object; one that detaches itself has its own,
    never joined."""
    exe = build("detached_reuse.c", tmp_path / "detached_reuse", "-O1", "-pthread")
    cp = run(tmp_path / "exp", exe, "10", how)
    assert cp.stdout == "20 threads, 10 joinable with the detached one's handle\n"
    src = (ROOT / "tests" / "e2e" / "programs" / "detached_reuse.c").read_text().splitlines()
    joinable, detached = (next(i for i, text in enumerate(src, 1) if "pthread_create(&%s" % v in text)
                          for v in "jd")
    threads = [r for r in totals(sync_csv(tmp_path / "exp")) if r["kind"] == "thread"]
    joined = sorted((r["site"], int(r["acquisitions"])) for r in threads
                    if int(r["acquisitions"]))
    assert joined == [("init at detached_reuse.c:%d (main)" % joinable, 1)] * 10, threads
    assert len(threads) == 10, threads
    tree = json.loads(plx("hierarchy", tmp_path / "exp", "--format", "json").stdout)["sync"]
    cats = {c["name"]: c["children"] for c in tree["children"]}
    names = sorted(re.sub(r" \(object \d+\)$", "", c["name"]) for c in cats["Thread"])
    assert names == sorted(["detached_reuse.c:%d (main)" % joinable] * 10 + (
        [] if how == "attr" else ["detached_reuse.c:%d (main)" % detached] * 10)), names
