"""plx critical-path on real MPI runs (Open MPI, 4 oversubscribed ranks, traced with
`plx run --trace`): examples/critpath/chain.c (a token passed rank to rank, each rank computing
(r + 1) x 0.1 s first), barrier.c (one rank computing 1 s, the others 0.1 s, then a barrier),
rendezvous.c and ssend.c (sends waiting for a late receive) and probe.c (a blocking probe waiting
for a late send).

The compute functions busy-wait on the wall clock, so their durations hold on a loaded 2-core VM;
the tolerances below leave room for descheduling (a function may run long, never short)."""

import csv
import io
import json
import subprocess

import pytest

from conftest import PLX, ROOT, _fail_message, clean_env, have, plx
from mpi_impls import IMPLS, OPEN_MPI

pytestmark = pytest.mark.usefixtures("open_mpi")

EXAMPLES = ROOT / "examples" / "critpath"
NP = 4
UNIT = 0.1  # chain: rank r computes (r + 1) * UNIT s
SLOW, FAST = 1.0, 0.1  # barrier


def traced_run(tmp, name, *args, impl=OPEN_MPI):
    """Builds examples/critpath/NAME.c with the implementation's mpicc and runs it under its
    launcher and plx run --trace; the experiment."""
    exe = tmp / name
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(EXAMPLES / (name + ".c")), "-o", str(exe), "-pthread"],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = tmp / ("exp-" + name)
    cp = subprocess.run(impl.mpirun_cmd(NP, PLX, "run", "--trace", "-o", exp, "--", exe, *args),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return exp


def profile(exp, *extra):
    """(JSON document, {name: item}) of `plx critical-path EXP --format json EXTRA...`."""
    doc = json.loads(plx("critical-path", exp, "--format", "json", *extra).stdout)
    items = {}
    for i in doc["items"]:
        assert i["name"] not in items, i
        items[i["name"]] = i
    return doc, items


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return traced_run(tmp_path_factory.mktemp("cp-chain"), "chain", UNIT)


@pytest.fixture(scope="module", params=sorted(IMPLS))
def barrier(request, tmp_path_factory):
    """The barrier example under each MPI implementation (Open MPI, MPICH)."""
    impl = IMPLS[request.param]
    impl.require()
    return traced_run(tmp_path_factory.mktemp("cp-barrier"), "barrier", SLOW, FAST, impl=impl)


def assert_compute(item, seconds):
    assert item is not None, "compute function not on the critical path"
    assert 0.95 * seconds <= item["time_s"] <= 1.5 * seconds + 0.1, item


def test_chain_puts_every_ranks_compute_on_the_path(chain):
    doc, items = profile(chain, "--phase", "work")
    assert doc["mode"] == "global" and doc["level"] == "procedure"
    for r in range(NP):
        item = items.get("compute_rank%d" % r)
        assert_compute(item, (r + 1) * UNIT)
        assert item["location"] == "%d.0" % r, item
    # no waits on the path: it is the phase's elapsed time
    total, elapsed = doc["total_length_s"], doc["elapsed_s"]
    assert 0.8 * elapsed <= total <= 1.05 * elapsed, (total, elapsed)
    computes = sum(items["compute_rank%d" % r]["time_s"] for r in range(NP))
    assert computes >= 0.8 * total, (computes, total)
    # the items add up to the length
    assert abs(sum(i["time_s"] for i in doc["items"]) - total) < 1e-6


def test_chain_messages_and_whole_run(chain):
    doc, items = profile(chain, "--level", "thread")
    threads = {n: i for n, i in items.items() if n.startswith("CPU: ")}
    assert len(threads) >= NP
    total, elapsed = doc["total_length_s"], doc["elapsed_s"]
    assert 0.5 * elapsed <= total <= 1.05 * elapsed, (total, elapsed)
    # the token's hops: a message between consecutive ranks at the process level (when the
    # transfer took a measurable time), never a message backwards
    doc, items = profile(chain, "--level", "process", "--phase", "work", "--path")
    msgs = [n for n in items if n.startswith("Msg: ")]
    for m in msgs:
        a, b = m[len("Msg: "):].split("->")
        assert int(b) == int(a) + 1, m
    kinds = [s["kind"] for s in doc["path"]]
    assert kinds.count("msg") == NP - 1, doc["path"]


def test_slow_rank_before_a_barrier_is_the_path(barrier):
    doc, items = profile(barrier, "--phase", "work")
    total, elapsed = doc["total_length_s"], doc["elapsed_s"]
    assert 0.8 * elapsed <= total <= 1.05 * elapsed, (total, elapsed)
    slow = items.get("compute_slow")
    assert_compute(slow, SLOW)
    assert slow["location"] == "%d.0" % (NP // 2), slow
    assert slow["time_s"] >= 0.8 * total, (slow, total)
    assert "compute_fast" not in items, items["compute_fast"]
    # the whole run too: the fast ranks' compute is never on it
    doc, items = profile(barrier)
    assert_compute(items.get("compute_slow"), SLOW)
    assert "compute_fast" not in items
    assert doc["total_length_s"] <= 1.05 * doc["elapsed_s"]


def test_text_and_csv_outputs(barrier):
    out = plx("critical-path", barrier, "--phase", "work", "--level", "thread", "--path").stdout
    lines = out.splitlines()
    assert lines[0] == "Thread-level Global Critical Path"
    assert lines[2].startswith("TOTAL LENGTH")
    assert lines[3].startswith("CPU: ") and lines[3].split()[1] == "%d.0" % (NP // 2)
    assert any(l.startswith("path (") for l in lines)
    cp = plx("critical-path", barrier, "--phase", "work", "--format", "csv", "--top", "1")
    rows = list(csv.DictReader(io.StringIO(cp.stdout)))
    assert cp.stdout.splitlines()[0] == "level,kind,name,location,time_s,percent"
    assert [r["kind"] for r in rows] == ["total", "cpu"]
    assert rows[1]["name"] == "compute_slow" and float(rows[1]["percent"]) >= 80


def test_imbalance_names_the_slow_ranks_compute(barrier):
    """--imbalance in the phase: compute_slow is on the path for its whole SLOW s and ran on
    one rank of NP, so its mean per thread is a quarter of it and its imbalance the rest;
    compute_fast, off the path, has none; the rows are the largest first."""
    cp = plx("critical-path", barrier, "--phase", "work", "--imbalance", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(cp.stdout)))
    assert cp.stdout.splitlines()[0] == "function,path_s,mean_s,imbalance_s"
    by = {r["function"]: {k: float(v) for k, v in r.items() if k != "function"} for r in rows}
    slow = by["compute_slow"]
    assert rows[0]["function"] == "compute_slow", rows
    assert SLOW <= slow["path_s"] <= 1.3 * SLOW, slow
    assert abs(slow["mean_s"] - slow["path_s"] / NP) <= 0.01 * slow["path_s"], slow
    assert abs(slow["imbalance_s"] - (slow["path_s"] - slow["mean_s"])) <= 2e-9, slow
    assert "compute_fast" not in by, by
    imb = [r["imbalance_s"] for r in by.values()]
    assert [float(r["imbalance_s"]) for r in rows] == sorted(imb, reverse=True)
    # the text and JSON forms hold the same
    doc = json.loads(plx("critical-path", barrier, "--phase", "work", "--imbalance",
                         "--format", "json").stdout)
    assert doc["imbalance"][0]["function"] == "compute_slow"
    assert abs(doc["imbalance"][0]["imbalance_s"] - slow["imbalance_s"]) <= 1e-9
    text = plx("critical-path", barrier, "--phase", "work", "--imbalance").stdout.splitlines()
    assert text[0].startswith("Critical-Path Imbalance") and text[2].split()[0] == "compute_slow"
    cp = plx("critical-path", barrier, "--imbalance", "--level", "thread", check=False)
    assert cp.returncode == 2 and "cannot be used with" in cp.stderr, cp


RV_SLOW, RV_FAST = 0.5, 0.1  # rendezvous


@pytest.fixture(scope="module", params=sorted(IMPLS))
def rendezvous(request, tmp_path_factory):
    """The rendezvous example under each MPI implementation (Open MPI, MPICH)."""
    impl = IMPLS[request.param]
    impl.require()
    return traced_run(tmp_path_factory.mktemp("cp-rendezvous"), "rendezvous", RV_SLOW, RV_FAST,
                      impl=impl)


def test_the_path_runs_from_a_late_receive_into_the_senders_wait(rendezvous):
    doc, items = profile(rendezvous, "--phase", "work")
    total, elapsed = doc["total_length_s"], doc["elapsed_s"]
    assert 0.8 * elapsed <= total <= 1.05 * elapsed, (total, elapsed)
    # rank 1's late compute, then (the Issend completing when the Irecv is posted) rank 0's
    # compute after its MPI_Wait
    late = items.get("compute_late")
    assert_compute(late, RV_SLOW)
    assert late["location"] == "1.0", late
    after = items.get("compute_after")
    assert_compute(after, RV_FAST)
    assert after["location"] == "0.0", after
    # rank 0's MPI_Wait waited for rank 1: not on the path as its own time
    wait = items.get("MPI_Wait", {"time_s": 0.0})
    assert wait["time_s"] < 0.05 * RV_SLOW, wait
    assert "compute_other" not in items, items["compute_other"]


@pytest.fixture(scope="module", params=sorted(IMPLS))
def blocking_sends(request, tmp_path_factory):
    """examples/critpath/ssend.c under each MPI implementation: phase "ssend" (an MPI_Ssend to
    a late MPI_Recv) and phase "send" (an MPI_Send of 4 MiB, rendezvous, to a late
    MPI_Irecv + MPI_Wait)."""
    impl = IMPLS[request.param]
    impl.require()
    return traced_run(tmp_path_factory.mktemp("cp-ssend"), "ssend", RV_SLOW, RV_FAST, impl=impl)


def late_rank_1_then_rank_0(run, phase, routine):
    """The path of `phase`: rank 1's late compute, then rank 0's compute after `routine`, which
    waited for rank 1 and is not on the path as its own time. Returns the path's document."""
    doc, items = profile(run, "--phase", phase, "--path")
    total, elapsed = doc["total_length_s"], doc["elapsed_s"]
    assert 0.8 * elapsed <= total <= 1.05 * elapsed, (total, elapsed)
    late = items.get("compute_late_" + phase)
    assert_compute(late, RV_SLOW)
    assert late["location"] == "1.0", late
    after = items.get("compute_after_" + phase)
    assert_compute(after, RV_FAST)
    assert after["location"] == "0.0", after
    waited = items.get(routine, {"time_s": 0.0})
    assert waited["time_s"] < 0.05 * RV_SLOW, waited
    assert "compute_other" not in items, items["compute_other"]
    return doc


@pytest.mark.parametrize("phase,routine", [("ssend", "MPI_Ssend"), ("send", "MPI_Send")])
def test_the_path_runs_from_a_late_receive_into_a_blocking_send(blocking_sends, phase, routine):
    # rank 0's blocking send waited for rank 1's receive
    doc = late_rank_1_then_rank_0(blocking_sends, phase, routine)
    # the path: rank 1's compute, the rendezvous from its receive's post into the end of rank
    # 0's send, rank 0's compute after it
    arcs = [(s["kind"], s["location"], s.get("from"), s["what"]) for s in doc["path"]
            if s["kind"] == "msg"]
    assert ("msg", "0.0", "1.0", "rendezvous") in arcs, doc["path"]


@pytest.fixture(scope="module", params=sorted(IMPLS))
def probes(request, tmp_path_factory):
    """examples/critpath/probe.c under each MPI implementation: phase "mprobe" (MPI_Mprobe +
    MPI_Mrecv of a late MPI_Send) and phase "probe" (MPI_Probe + MPI_Recv)."""
    impl = IMPLS[request.param]
    impl.require()
    return traced_run(tmp_path_factory.mktemp("cp-probe"), "probe", RV_SLOW, RV_FAST, impl=impl)


@pytest.mark.parametrize("phase,routine", [("mprobe", "MPI_Mprobe"), ("probe", "MPI_Probe")])
def test_the_path_runs_from_a_late_send_into_a_blocking_probe(probes, phase, routine):
    # rank 0's probe waited for rank 1's send
    doc = late_rank_1_then_rank_0(probes, phase, routine)
    arcs = [(s["kind"], s["location"], s.get("from")) for s in doc["path"] if s["kind"] == "msg"]
    assert ("msg", "0.0", "1.0") in arcs, doc["path"]
