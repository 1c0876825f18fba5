"""The parallax Python package (python/): its DataFrames hold the engine's numbers — plx report
--callpath, the text export, plx query — for real runs (its Hatchet GraphFrames and Thickets:
tests/python/test_hatchet.py)."""

import csv
import io
import json
import sys
from collections import Counter

import pytest
from components import require_module

from conftest import BIN, PLX, ROOT, plx, run

sys.path.insert(0, str(ROOT / "python"))  # this tree's package, whether or not it is installed


@pytest.fixture(scope="module")
def parallax():
    require_module("pandas")
    require_module("pyarrow")
    import parallax as p
    return p


def opened(parallax, exp):
    return parallax.open(exp, plx=str(PLX))


def test_profiles_are_plx_report(parallax, experiments):
    exp = opened(parallax, experiments["life"])
    prof = exp.profiles
    rows = list(csv.DictReader(io.StringIO(
        plx("report", experiments["life"], "--callpath", "--format", "csv").stdout)))
    want = {(int(r["process"]), int(r["thread"]), r["callpath"]):
            (int(r["calls"]), float(r["exclusive_s"]), float(r["inclusive_s"]))
            for r in rows if r["process"] != "all"}  # "all": the total table
    got = {(r.pid, r.thread, r.callpath): (r.calls, r.exclusive_s, r.inclusive_s)
           for r in prof.itertuples()}
    assert got.keys() == want.keys()
    for k, (calls, exc, inc) in want.items():
        assert got[k][0] == calls
        assert got[k][1] == pytest.approx(exc, abs=1e-9)
        assert got[k][2] == pytest.approx(inc, abs=1e-9)
    # node = MPI rank, 3 threads per rank (main and 2 workers), 20 steps: 20 exchange_halos
    assert sorted(prof["node"].unique()) == [0, 1, 2, 3]
    assert sorted(prof["thread"].unique()) == [0, 1, 2]
    halos = prof[prof["callpath"] == "main => exchange_halos"]
    assert list(halos["calls"]) == [20, 20, 20, 20]


def test_events_and_messages_are_the_merged_trace(parallax, experiments, text_exports):
    require_module("polars", "Polars (pip install polars)")
    exp = opened(parallax, experiments["pingpong"])
    text = text_exports["pingpong"]
    ev = exp.events
    assert len(ev) == text.total + text.sync
    got = Counter(zip(ev["kind"], ev["rank"].astype(int), ev["thread"].astype(int)))
    want = Counter()
    for label, evs in text.with_sync.items():
        r, t = (int(x) for x in label.split("."))
        for k, _ in evs:
            want[(k, r, t)] += 1
    assert got == want
    # 20 round trips of 8 and of 4096 bytes: 80 messages, 40 each way
    msg = exp.messages
    assert len(msg) == 80
    assert Counter(zip(msg["sender_rank"], msg["receiver_rank"])) == {(0, 1): 40, (1, 0): 40}
    assert sorted(Counter(msg["bytes"]).items()) == [(8, 40), (4096, 40)]
    assert (msg["recv_ns"] >= msg["send_ns"]).all()
    # the same tables in Polars
    pl_ev = exp.table("events", backend="polars")
    assert pl_ev.shape == ev.shape and pl_ev["time_ns"].to_list() == ev["time_ns"].to_list()
    assert exp.table("profiles", backend="polars").height == len(exp.profiles)


def test_sync_objects(parallax, queue_experiment):
    exp = opened(parallax, queue_experiment)
    so = exp.sync_objects
    cats = Counter(so["category"])
    # 2 mutexes, 2 condition variables, 4 threads (queue.c)
    assert cats == {"Mutex": 2, "CondVar": 2, "Thread": 4}
    hot = so[(so["category"] == "Mutex") & so["name"].str.startswith("queue.c:86")]
    assert len(hot) == 1
    q = json.loads(plx("query", queue_experiment, "--metric", "hold_time", "--focus",
                       "sync=/Mutex/%d" % hot["object"].iloc[0], "--format", "json").stdout)
    assert hot["hold_s"].iloc[0] == pytest.approx(q["total"]) and q["total"] > 0


def test_sync_objects_of_an_mpi_experiment(parallax, experiments):
    """exp.sync_objects raised on every MPI experiment (the Sync tree's Messages branch was
    taken for a category of objects): life.c's 2 barriers and its worker threads' objects, each
    with plx query's wait time."""
    exp = opened(parallax, experiments["life"])
    so = exp.sync_objects
    # one row per object of plx report --sync's totals (objects of the same kind and name in
    # several ranks are one)
    rows = list(csv.DictReader(io.StringIO(
        plx("report", experiments["life"], "--sync", "--format", "csv").stdout)))
    want = Counter(r["kind"] for r in rows if r["process"] == "all" and r["thread"] == "all")
    assert want["barrier"] == 2 and want["thread"] >= 2
    assert Counter(so["category"]) == {"Barrier": 2, "Thread": want["thread"]}
    assert sorted(so[so["category"] == "Barrier"]["name"]) == ["life.c:110 (main)",
                                                               "life.c:111 (main)"]
    for r in so.itertuples():
        q = json.loads(plx("query", experiments["life"], "--metric", "wait_time", "--focus",
                           "sync=/%s/%d" % (r.category, r.object), "--format", "json").stdout)
        assert r.wait_s == pytest.approx(q["total"], abs=1e-12)
    assert (so[so["category"] == "Barrier"]["wait_s"] > 0).all()


def test_regions_have_file_and_line(parallax, experiments):
    """exp.regions had an empty file and line 0 for every region: each function has the file
    and line plx report gives it (life.c's 7 functions), MPI routines none."""
    exp = opened(parallax, experiments["life"])
    reg = exp.regions
    funcs = json.loads(plx("report", experiments["life"], "--format", "json").stdout)[
        "total"]["functions"]
    want = {f["function"]: (f["file"], f["line"]) for f in funcs}
    got = {r.name: (r.file, r.line) for r in reg.itertuples() if r.name in want}
    assert got == want
    in_life = sorted(n for n, (f, _) in got.items() if f.endswith("examples/mpi/life.c"))
    assert in_life == ["exchange_halos", "life_worker", "main", "neighbours", "population",
                       "seed", "update_rows"]
    assert got["main"][1] > 0


def test_events_hold_acquires_and_releases(parallax, experiments):
    """The events table had no acquire or release: one acquire per acquisition of plx report
    --sync, per kind of object, and the objects' ids and kinds."""
    exp = opened(parallax, experiments["life"])
    ev = exp.events
    rows = list(csv.DictReader(io.StringIO(
        plx("report", experiments["life"], "--sync", "--format", "csv").stdout)))
    acq, rel = Counter(), Counter()
    for r in rows:
        if r["process"] == "all" and r["thread"] == "all":
            acq[r["kind"]] += int(r["acquisitions"])
            rel[r["kind"]] += int(r["releases"])
    sync = ev[ev["kind"].isin(["acquire", "release"])]
    got = Counter(zip(sync["kind"], sync["sync_kind"]))
    # 4 ranks x 2 worker threads: 8 joins, and 8 thread ends releasing their objects (a
    # release the statistics do not count)
    assert acq["thread"] == 8
    assert got == {("acquire", "barrier"): acq["barrier"], ("release", "barrier"): rel["barrier"],
                   ("acquire", "thread"): 8, ("release", "thread"): 8}
    assert sync["object"].notna().all()
    assert (sync[sync["kind"] == "acquire"]["wait_ns"] >= 0).all()


@pytest.fixture(scope="module")
def waits_experiment(tmp_path_factory):
    """tests/e2e/programs/waits_threads.c traced with D = 0.2 s: a mutex held for D while main
    blocks on it, a join, a condition wait, a pthread barrier and a semaphore, each of D."""
    root = tmp_path_factory.mktemp("waits")
    exe = root / "waits_threads"
    run([BIN / "plx-cc", "-O1", "-g", "-pthread",
         ROOT / "tests" / "e2e" / "programs" / "waits_threads.c", "-o", exe])
    exp = root / "waits.exp"
    plx("run", "--trace", "-o", exp, "--", exe, "0.2")
    return exp


def csv_rows(*args):
    return list(csv.DictReader(io.StringIO(plx(*args, "--format", "csv").stdout)))


def test_waits_are_plx_waits(parallax, waits_experiment):
    exp = opened(parallax, waits_experiment)
    w = exp.waits
    assert list(w.columns) == ["pattern", "location", "callpath", "wait_s", "count"]
    # every row of plx waits --format csv, in its order, the seconds to its 6 decimals
    want = csv_rows("waits", waits_experiment)
    got = [{"pattern": r.pattern, "location": r.location, "callpath": r.callpath,
            "wait_s": f"{r.wait_s:.6f}"} for r in w.itertuples()]
    assert got == want
    # each scenario's wait of 0.2 s, in main's thread (main's own joins of the other threads
    # may wait a little too: those rows are the CSV's as well, checked above)
    assert set(w["location"].str.split(".").str[-1]) == {"0"}
    for pattern, callpath in (("lock_contention", "main => take_lock"),
                              ("join_wait", "main => join_worker"),
                              ("condition_wait", "main => consume"),
                              ("thread_barrier", "main => meet"),
                              ("semaphore_wait", "main => take_token")):
        row = w[(w["pattern"] == pattern) & (w["callpath"] == callpath)]
        assert list(row["count"]) == [1], (pattern, w)
        assert 0.1 <= row["wait_s"].iloc[0] <= 0.4, (pattern, w)
    assert list(w[w["pattern"] == "lock_contention"]["callpath"]) == ["main => take_lock"]
    assert exp.table("waits") is w


def test_wait_causes_are_plx_waits_causes(parallax, waits_experiment):
    exp = opened(parallax, waits_experiment)
    c = exp.wait_causes
    assert list(c.columns) == ["pattern", "waiting_location", "cause_location",
                               "cause_callpath", "delay_s", "kind"]
    want = csv_rows("waits", waits_experiment, "--causes")
    got = [{"pattern": r.pattern, "waiting_location": r.waiting_location,
            "cause_location": r.cause_location, "cause_callpath": r.cause_callpath,
            "delay_s": f"{r.delay_s:.6f}", "kind": r.kind} for r in c.itertuples()]
    assert got == want
    # the lock's wait is the holder's time in hold_lock: direct, caused by thread 1
    lock = c[c["pattern"] == "lock_contention"]
    assert set(lock["kind"]) == {"direct"}
    assert set(lock["cause_location"].str.split(".").str[-1]) == {"1"}
    held = lock[lock["cause_callpath"].str.startswith("holder => hold_lock")]["delay_s"].sum()
    assert held >= 0.9 * exp.waits[exp.waits["pattern"] == "lock_contention"]["wait_s"].iloc[0]
