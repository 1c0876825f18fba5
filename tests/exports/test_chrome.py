"""The Chrome export of real Open MPI runs, checked by Perfetto's documented JSON rules: pids and
tids are read as 32-bit numbers (a larger tid lands on the track tid = pid), a flow event `s`,
and an `f` with `bp: "e"`, binds to the slice enclosing it on its own track, and `B`/`E` nest
per track. life.c (4 ranks x 3 threads: MPI_Isend/MPI_Irecv/MPI_Waitall) and pingpong.c (80
messages of MPI_Send/MPI_Recv between ranks 0 and 1). Perfetto's own reader (the PyPI package
`perfetto`) downloads its trace_processor_shell on first use, which an offline machine cannot:
the rules are checked here instead."""

import json
from collections import Counter, defaultdict

from conftest import plx


def chrome(exp, tmp_path):
    out = tmp_path / "trace.json"
    plx("export", exp, "--format", "chrome", "-o", out)
    return json.loads(out.read_text())


def bound_flows(doc):
    """Per (slice name, flow phase), the flows bound to a B/E slice of a thread's own track, with
    Perfetto's rule: the innermost slice open on the flow's track at its time, which must hold
    it strictly inside. Events are taken in time order per track (file order, checked)."""
    events = doc["traceEvents"]
    stacks = defaultdict(list)  # (pid, tid) -> [(name, start, [flows])]
    last = {}
    bound = Counter()
    for e in events:
        key = (e["pid"], e["tid"])
        assert 0 <= key[0] < 2**31 and 0 <= key[1] < 2**31, e
        if e["ph"] == "M":
            continue
        assert e["ts"] >= last.get(key, float("-inf")), e
        last[key] = e["ts"]
        if e["ph"] == "B":
            stacks[key].append((e["name"], e["ts"], []))
        elif e["ph"] == "E":
            name, start, flows = stacks[key].pop()
            assert name == e["name"], e
            for ph, ts in flows:
                assert start < ts < e["ts"], (name, ph, ts)
                bound[(name, ph)] += 1
        elif e["ph"] in ("s", "f"):
            assert e["cat"] == "mpi-message"
            if e["ph"] == "f":
                assert e["bp"] == "e"
            if key[1] < 1_000_000:  # a thread's own track
                assert stacks[key], e
                stacks[key][-1][2].append((e["ph"], e["ts"]))
    return bound


def test_pingpong_flows_bind_to_the_mpi_calls_slices(experiments, tmp_path):
    doc = chrome(experiments["pingpong"], tmp_path)
    assert bound_flows(doc) == {("MPI_Send", "s"): 80, ("MPI_Recv", "f"): 80}
    flows = [e for e in doc["traceEvents"] if e["ph"] in ("s", "f")]
    assert len(flows) == 160
    assert {(e["pid"], e["tid"]) for e in flows} == {(0, 0), (1, 0)}
    assert doc["otherData"]["flows_on_thread_slices"] == 160
    assert doc["otherData"]["messages_without_flow"] == 0


def test_life_flows_bind_to_isend_and_waitall_and_tids_fit_32_bits(experiments, tmp_path):
    doc = chrome(experiments["life"], tmp_path)
    bound = bound_flows(doc)
    n = sum(1 for e in doc["traceEvents"] if e["ph"] == "s")
    # every message of plx comm, each an s in its MPI_Isend and an f in the MPI_Waitall that
    # completed its receive
    comm = json.loads(plx("comm", experiments["life"], "--format", "json").stdout)
    assert n == sum(c["messages"] for c in comm["communicators"]) == 4 * 2 * 20
    assert bound == {("MPI_Isend", "s"): n, ("MPI_Waitall", "f"): n}
    tids = {e["tid"] for e in doc["traceEvents"]}
    assert all(t < 1_000_000 or 1_000_000 <= t < 2_000_000_000 + 1_000_000 for t in tids)
    measure = {e["tid"] for e in doc["traceEvents"]
               if e["ph"] == "M" and e["args"].get("name", "").endswith(" measurement")}
    assert measure and all(2_000_000_000 <= t < 2_000_000_003 for t in measure)
