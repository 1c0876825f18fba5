"""plx waits on runs with injected delays of known size: programs/waits_mpi.c (4 ranks, Open MPI
and MPICH; a named delay_* function sleeps D seconds on chosen ranks before a send, a receive, a
barrier, an allreduce, a bcast, a reduce, at the head of a chain of messages and of a relay;
then a balanced part), programs/waits_threads.c (a mutex held for D, a join of a thread that sleeps
D, a condition signalled after D, a pthread barrier one thread reaches D late, a semaphore
posted after D) and programs/waits_omp.c (libgomp: a thread late at a
parallel region's barrier, a critical section held for D) and programs/waits_stream.c (a
TCP read waiting for a write made D late).

The delays are sleeps, so they hold on a loaded 2-core VM; each pattern's wait at each location
is what the trace's own routine entries give (the Chrome export), most of it the
injected D, and each cause names the rank (thread) and the delay_* function."""

import csv
import io
import json
import re
import shutil
import struct
import subprocess

import pytest
from plx_codec import FILE_KINDS, decode, events, read_file
from plx_schema import RECORD_IDS

from conftest import PLX, _fail_message, build, clean_env, plx, process_dirs, run
from conftest import PROGRAMS
from test_openmp import llvm_openmp
from components import require_tools
from mpi_impls import IMPLS

D = 0.2
NP = 4


def injected(x, want=D):
    """A wait made by an injected sleep of `want` s, as the trace shows it: the sleep is most of
    it, though on a loaded machine the sleeper may wake late (a longer wait) and the waiting rank
    may leave the barrier before the scenario late (a shorter one); the exact value is checked
    against the trace's entries (`same`)."""
    return want * 0.5 <= x <= want * 2


def same(x, y):
    """The analysis's seconds (6 decimals) against the trace's own (exported in ns)."""
    return abs(x - y) <= 2e-6


def entries(exp):
    """{(rank, call path): [entry time s, ...]} from the Chrome export of the merged trace (the
    oracle the waits are checked against: the routines' entries, independent of the replay)."""
    out = exp.parent / "trace.json"
    if not out.exists():
        plx("export", exp, "--format", "chrome", "-o", out)
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    stacks, found = {}, {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") == "B":
            st = stacks.setdefault(key, [])
            st.append(e["name"])
            found.setdefault((e["pid"], " => ".join(st)), []).append(e["ts"] / 1e6)
        elif e.get("ph") == "E":
            stacks[key].pop()
    return found


def enter(ent, rank, path):
    (t,) = ent[(rank, path)]
    return t


def rows(exp, *extra):
    return list(csv.DictReader(io.StringIO(
        plx("waits", exp, "--format", "csv", *extra).stdout)))


def waits_at(table, pattern, callpath):
    """{rank: wait_s} of one pattern and call path."""
    out = {}
    for r in table:
        if r["pattern"] == pattern and r["callpath"] == callpath:
            rank = int(r["location"].split(".")[0])
            out[rank] = out.get(rank, 0.0) + float(r["wait_s"])
    return out


def caused(causes, pattern, function):
    """{(waiting rank, cause rank, kind): delay_s} of the causes in call paths through
    `function`."""
    out = {}
    for c in causes:
        if c["pattern"] == pattern and function in c["cause_callpath"].split(" => "):
            key = (int(c["waiting_location"].split(".")[0]),
                   int(c["cause_location"].split(".")[0]), c["kind"])
            out[key] = out.get(key, 0.0) + float(c["delay_s"])
    return out


@pytest.fixture(scope="module", params=sorted(IMPLS))
def mpi_run(request, tmp_path_factory):
    """(waits rows, cause rows, experiment) of waits_mpi.c under each MPI implementation."""
    impl = IMPLS[request.param]
    impl.require()
    tmp = tmp_path_factory.mktemp("waits-mpi")
    exe = tmp / "waits_mpi"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(PROGRAMS / "waits_mpi.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = tmp / "exp"
    cp = subprocess.run(impl.mpirun_cmd(NP, PLX, "run", "--trace", "-o", exp, "--", exe, D),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return partnered(rows(exp)), partnered(rows(exp, "--causes")), entries(exp), exp


def partnered(table):
    """The rows of the patterns with a partner: the injected delays are naps (nanosleep),
    `sleep` waits of their own (test_the_naps_are_sleeps_with_no_cause)."""
    return [r for r in table if r["pattern"] not in ("sleep", "io_wait")]


def test_the_naps_are_sleeps_with_no_cause(mpi_run):
    """Every injected delay is a nanosleep in nap(): a `sleep` wait with no partner, its cause
    `none`; no other wait of the program is one."""
    _, _, _, exp = mpi_run
    sleeps = [r for r in rows(exp) if r["pattern"] in ("sleep", "io_wait")]
    assert sleeps and all(r["pattern"] == "sleep" and r["callpath"].endswith(" => nap => nanosleep")
                          for r in sleeps), sleeps
    causes = [c for c in rows(exp, "--causes") if c["pattern"] in ("sleep", "io_wait")]
    assert [(c["waiting_location"], c["cause_location"], c["delay_s"], c["kind"])
            for c in causes] == [(r["location"], "", r["wait_s"], "none") for r in sleeps]


def check(table, causes, pattern, callpath, want, function, cause_of, share=0.9):
    """The waits of `pattern` at `callpath` are `want` ({rank: s}, from the trace's entries)
    exactly, each an injected delay; the causes in `function` name `cause_of[rank]` (rank,
    kind) and make at least `share` of each wait (of the delay D when the wait is longer)."""
    got = waits_at(table, pattern, callpath)
    assert sorted(got) == sorted(want), (got, want)
    for r, x in got.items():
        assert same(x, want[r]) and injected(x), (r, got, want)
    c = caused(causes, pattern, function)
    for r, x in got.items():
        mine = {k: v for k, v in c.items() if k[0] == r}
        assert list(mine) == [(r, *cause_of[r])], (r, c)
        # the injected delay's part: the wait less a late exit of the synchronisation before
        # (the late rank's own time there, a cause of its own: 25 ms on a loaded machine)
        assert share * min(x, D) <= sum(mine.values()) <= x + 2e-6, (r, mine, x)


def test_late_sender_at_the_receivers_caused_by_the_senders_delay(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => late_sender => "
    want = {r: enter(ent, r + 1, cp + "MPI_Send") - enter(ent, r, cp + "MPI_Recv")
            for r in (0, 2)}
    check(table, causes, "late_sender", cp + "MPI_Recv", want, "delay_send",
          {0: (1, "direct"), 2: (3, "direct")})


def test_a_blocking_probe_before_the_send_is_a_late_sender(mpi_run):
    """The receive waits in MPI_Mprobe (rank 0, then MPI_Mrecv) and MPI_Probe (rank 2, then
    MPI_Recv) until rank 1's and rank 3's sends: a late sender at the probe's call path, none in
    the receive after it."""
    table, causes, ent, _ = mpi_run
    cp = "main => probe => "
    for r, probe, recv in ((0, "MPI_Mprobe", "MPI_Mrecv"), (2, "MPI_Probe", "MPI_Recv")):
        want = {r: enter(ent, r + 1, cp + "MPI_Send") - enter(ent, r, cp + probe)}
        check(table, causes, "late_sender", cp + probe, want, "delay_probed",
              {r: (r + 1, "direct")})
        assert waits_at(table, "late_sender", cp + recv) == {}


@pytest.mark.parametrize("mpi_run", ["mpich"], indirect=True)
def test_late_receiver_waits_for_the_post_of_a_late_isendrecv(mpi_run):
    """Rank 2's MPI_Ssend waits for rank 3's MPI_Isendrecv (MPICH only: Open MPI 4.1 has none),
    whose receive is posted at its entry: the cause is rank 3's sleep before it, not the one
    after."""
    table, causes, ent, _ = mpi_run
    cp = "main => isendrecv => "
    assert (3, cp + "MPI_Isendrecv") in ent, sorted(ent)[:20]
    want = {2: enter(ent, 3, cp + "MPI_Isendrecv") - enter(ent, 2, cp + "MPI_Ssend")}
    check(table, causes, "late_receiver", cp + "MPI_Ssend", want, "delay_isendrecv",
          {2: (3, "direct")})
    assert caused(causes, "late_receiver", "after_isendrecv") == {}


def test_late_receiver_at_the_synchronous_senders(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => late_receiver => "
    want = {r: enter(ent, r + 1, cp + "MPI_Recv") - enter(ent, r, cp + "MPI_Ssend")
            for r in (0, 2)}
    check(table, causes, "late_receiver", cp + "MPI_Ssend", want, "delay_recv",
          {0: (1, "direct"), 2: (3, "direct")})


def test_wrong_order_late_sender_and_late_receiver(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => wrong_order => "
    first, second = ent[(2, cp + "MPI_Recv")]
    # rank 2 waited in its first receive for rank 1's delayed message while rank 0's, sent
    # before it, was pending
    want = {2: enter(ent, 1, cp + "MPI_Send") - first}
    check(table, causes, "late_sender_wrong_order", cp + "MPI_Recv", want, "delay_wrong_order",
          {2: (1, "direct")})
    # rank 0's Ssend waited until rank 2 posted the receive, after taking rank 1's later message
    want = {0: second - enter(ent, 0, cp + "MPI_Ssend")}
    check(table, causes, "late_receiver_wrong_order", cp + "MPI_Ssend", want,
          "delay_wrong_order", {0: (1, "propagated")})
    assert waits_at(table, "late_sender", cp + "MPI_Recv") == {}
    assert waits_at(table, "late_receiver", cp + "MPI_Ssend") == {}


def test_late_receiver_in_the_wait_completing_an_issend(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => nonblocking => "
    want = {0: enter(ent, 1, cp + "MPI_Recv") - enter(ent, 0, cp + "MPI_Wait")}
    check(table, causes, "late_receiver", cp + "MPI_Wait", want, "delay_issend",
          {0: (1, "direct")})


def test_an_ibsend_never_waits_for_its_receiver(mpi_run):
    table, _, _, _ = mpi_run
    # rank 2's Ibsend completes once buffered, whatever rank 3's delay
    got = [r for r in table if r["callpath"].startswith("main => nonblocking")
           and int(r["location"].split(".")[0]) in (2, 3)]
    assert got == [], got


def counts(exp, scenario):
    """{(pattern, rank, call path): count} of the JSON rows in one scenario's call paths."""
    doc = json.loads(plx("waits", exp, "--format", "json").stdout)
    return {(r["pattern"], int(r["location"].split(".")[0]), r["callpath"]): r["count"]
            for r in partnered(doc["rows"]) if scenario in r["callpath"].split(" => ")}


def test_late_receiver_waits_for_the_post_of_a_late_irecv(mpi_run):
    table, causes, ent, exp = mpi_run
    cp = "main => irecv_late => "
    # rank 0's MPI_Ssend and rank 2's MPI_Wait (completing an MPI_Issend) until ranks 1 and 3
    # posted their receives with MPI_Irecv (completed later, in MPI_Wait)
    want = {0: enter(ent, 1, cp + "MPI_Irecv") - enter(ent, 0, cp + "MPI_Ssend")}
    check(table, causes, "late_receiver", cp + "MPI_Ssend", want, "delay_irecv",
          {0: (1, "direct")})
    want = {2: enter(ent, 3, cp + "MPI_Irecv") - enter(ent, 2, cp + "MPI_Wait")}
    check(table, causes, "late_receiver", cp + "MPI_Wait", want, "delay_irecv",
          {2: (3, "direct")})
    assert counts(exp, "irecv_late") == {
        ("late_receiver", 0, cp + "MPI_Ssend"): 1,
        ("late_receiver", 2, cp + "MPI_Wait"): 1,
    }


def test_a_rendezvous_send_waits_for_an_irecv_and_a_wait_for_a_late_send(mpi_run):
    table, causes, ent, exp = mpi_run
    cp = "main => irecv_rendezvous => "
    # a 4 MiB MPI_Send (above the eager limit) waited for rank 1's late MPI_Irecv
    want = {0: enter(ent, 1, cp + "MPI_Irecv") - enter(ent, 0, cp + "MPI_Send")}
    check(table, causes, "late_receiver", cp + "MPI_Send", want, "delay_rendezvous",
          {0: (1, "direct")})
    # rank 3's MPI_Wait, completing an MPI_Irecv posted early, waited for rank 2's late send
    want = {3: enter(ent, 2, cp + "MPI_Send") - enter(ent, 3, cp + "MPI_Wait")}
    check(table, causes, "late_sender", cp + "MPI_Wait", want, "delay_late_isend",
          {3: (2, "direct")})
    assert counts(exp, "irecv_rendezvous") == {
        ("late_receiver", 0, cp + "MPI_Send"): 1,
        ("late_sender", 3, cp + "MPI_Wait"): 1,
    }


def test_a_waitall_over_irecvs_waits_once_for_the_latest_send(mpi_run):
    table, causes, ent, exp = mpi_run
    cp = "main => irecv_waitall => "
    # ranks 1 and 2 sent after rank 0 posted its receives and before it entered MPI_Waitall
    # (D/2 after its posts), rank 3 D/2 after it: one wait, until rank 3's send
    want = {0: enter(ent, 3, cp + "MPI_Send") - enter(ent, 0, cp + "MPI_Waitall")}
    got = waits_at(table, "late_sender", cp + "MPI_Waitall")
    assert sorted(got) == [0], got
    assert same(got[0], want[0]) and injected(got[0], D / 2), (got, want)
    c = caused(causes, "late_sender", "delay_waitall")
    assert list(c) == [(0, 3, "direct")], c
    assert 0.9 * got[0] <= c[(0, 3, "direct")] <= got[0] + 2e-6, (c, got)
    assert counts(exp, "irecv_waitall") == {("late_sender", 0, cp + "MPI_Waitall"): 1}


def collective_entries(ent, path):
    return {r: enter(ent, r, path) for r in range(NP)}


def test_wait_at_barrier_for_the_late_rank(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => barrier => MPI_Barrier"
    e = collective_entries(ent, cp)
    want = {r: e[2] - e[r] for r in (0, 1, 3)}
    check(table, causes, "wait_at_barrier", cp, want, "delay_barrier",
          {r: (2, "direct") for r in want})


def test_wait_at_nxn_for_the_late_rank(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => nxn => MPI_Allreduce"
    e = collective_entries(ent, cp)
    want = {r: e[3] - e[r] for r in (0, 1, 2)}
    check(table, causes, "wait_at_nxn", cp, want, "delay_allreduce",
          {r: (3, "direct") for r in want})


def test_late_broadcast_waits_for_the_root(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => bcast => MPI_Bcast"
    e = collective_entries(ent, cp)
    want = {r: e[0] - e[r] for r in (1, 2, 3)}
    check(table, causes, "late_broadcast", cp, want, "delay_bcast",
          {r: (0, "direct") for r in want})


def test_early_reduce_is_the_root_waiting(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => reduce => MPI_Reduce"
    e = collective_entries(ent, cp)
    # the root waits for the latest of the three delayed ranks (Scalasca's Early Reduce)
    last = max((0, 2, 3), key=lambda r: e[r])
    check(table, causes, "early_reduce", cp, {1: e[last] - e[1]}, "delay_reduce",
          {1: (last, "direct")})


def test_a_nonblocking_collective_waits_in_the_call_that_completes_it(mpi_run):
    """icoll_nxn: rank 3 sleeps D, then posts MPI_Iallreduce; the others posted it at once and
    wait in MPI_Wait, from its entry to rank 3's post (wait_at_nxn). icoll_bcast: the root, rank
    2, sleeps D before MPI_Ibcast; the others wait in MPI_Waitall until its post
    (late_broadcast). The posts themselves wait for nobody; each wait is caused by the late
    rank's sleep, directly."""
    table, causes, ent, _ = mpi_run
    cp = "main => icoll_nxn => "
    post = collective_entries(ent, cp + "MPI_Iallreduce")
    want = {r: post[3] - enter(ent, r, cp + "MPI_Wait") for r in (0, 1, 2)}
    check(table, causes, "wait_at_nxn", cp + "MPI_Wait", want, "delay_iallreduce",
          {r: (3, "direct") for r in want})
    cp = "main => icoll_bcast => "
    post = collective_entries(ent, cp + "MPI_Ibcast")
    want = {r: post[2] - enter(ent, r, cp + "MPI_Waitall") for r in (0, 1, 3)}
    check(table, causes, "late_broadcast", cp + "MPI_Waitall", want, "delay_ibcast",
          {r: (2, "direct") for r in want})
    assert not [r for r in table if r["callpath"].endswith(("MPI_Iallreduce", "MPI_Ibcast"))], \
        table


def test_a_collective_on_a_subcommunicator_synchronises_only_its_members(mpi_run):
    """subcomm: rank 3 sleeps D before an MPI_Allreduce on {1, 3} (rank 1 waits there for it);
    ranks 0 and 2 meet in theirs on {0, 2} at once, then wait at main's barrier. Their waits
    are caused by rank 3's delay_subcomm (directly, or through rank 1's wait), since they last
    synchronised with ranks 1 and 3 at the barrier before (was: by rank 1's or 3's work after
    the allreduce on {1, 3}, as if it had synchronised them too)."""
    table, causes, ent, _ = mpi_run
    cp = "main => subcomm => MPI_Allreduce"
    e = collective_entries(ent, cp)
    nxn = waits_at(table, "wait_at_nxn", cp)
    assert same(nxn[1], e[3] - e[1]) and injected(nxn[1]), nxn
    assert all(v < D / 20 for r, v in nxn.items() if r != 1), nxn  # {0, 2}: a few µs
    # main's barrier after the scenario (the last: subcomm is the last scenario)
    bar = {r: ent[(r, "main => MPI_Barrier")] for r in range(NP)}
    k = len(bar[0]) - 1
    late = max(range(NP), key=lambda r: bar[r][k])
    assert late in (1, 3), bar
    for r in (0, 2):
        wait = bar[late][k] - bar[r][k]
        assert injected(wait), (r, wait)
        c = caused(causes, "wait_at_barrier", "delay_subcomm")
        mine = sum(v for key, v in c.items() if key[0] == r and key[1] == 3)
        rows = [x for x in causes if x["pattern"] == "wait_at_barrier"
                and x["waiting_location"].startswith(f"{r}.")
                and x["cause_callpath"].startswith("main => subcomm")]
        # most of it (a loaded machine's MPI_Comm_split and MPI_Comm_free take their share,
        # directly, on the rank that came last), and more than any other call path
        others = [float(x["delay_s"]) for x in rows if "delay_subcomm" not in x["cause_callpath"]]
        assert mine >= 0.5 * D and all(v < mine for v in others), (r, c, rows)


def test_a_barrier_waits_cause_begins_where_the_pair_last_synchronised(mpi_run):
    """pair_barrier: rank 1 sleeps D in delay_before_pair, sends to rank 0, sleeps D/2 in
    work_after_pair, then enters the barrier. Rank 0 received the message (the two synchronised
    there): its barrier wait is caused by work_after_pair alone. Ranks 2 and 3 last
    synchronised with rank 1 at the barrier before: their waits are divided between the two
    sleeps in proportion to their lengths in the trace."""
    table, causes, ent, exp = mpi_run
    cp = "main => pair_barrier => "
    e = collective_entries(ent, cp + "MPI_Barrier")
    want = {r: e[1] - e[r] for r in (0, 2, 3)}
    got = waits_at(table, "wait_at_barrier", cp + "MPI_Barrier")
    assert sorted(got) == [0, 2, 3] and all(same(got[r], want[r]) for r in want), (got, want)
    assert injected(want[0], D / 2) and injected(want[2], 1.5 * D), want
    before = caused(causes, "wait_at_barrier", "delay_before_pair")
    after = caused(causes, "wait_at_barrier", "work_after_pair")
    assert sorted(before) == [(2, 1, "direct"), (3, 1, "direct")], before
    assert sorted(after) == [(0, 1, "direct"), (2, 1, "direct"), (3, 1, "direct")], after
    assert 0.9 * want[0] <= after[(0, 1, "direct")] <= want[0] + 2e-6, (after, want)
    ex = exits(exp)
    length = {f: ex[(1, cp + f)][0] - enter(ent, 1, cp + f)
              for f in ("delay_before_pair", "work_after_pair")}
    ratio = length["delay_before_pair"] / length["work_after_pair"]
    for r in (2, 3):
        k = (r, 1, "direct")
        assert abs(before[k] / after[k] - ratio) <= 0.02 * ratio, (r, before, after, length)
        assert 0.9 * want[r] <= before[k] + after[k] <= want[r] + 2e-6, (r, before, after)


def test_a_barrier_after_an_eager_reduce_waits_for_the_roots_work(mpi_run):
    """reduce_root: the root sleeps D in delay_reduce_root before an MPI_Reduce the others left
    long before; their barrier waits are caused by delay_reduce_root, directly (was: the
    root's time in MPI_Reduce after they left it, as if the reduce had synchronised them)."""
    table, causes, ent, _ = mpi_run
    cp = "main => reduce_root => "
    e = collective_entries(ent, cp + "MPI_Barrier")
    want = {r: e[0] - e[r] for r in (1, 2, 3)}
    check(table, causes, "wait_at_barrier", cp + "MPI_Barrier", want, "delay_reduce_root",
          {r: (0, "direct") for r in want})
    assert not [c for c in causes if c["cause_callpath"] == cp + "MPI_Reduce"
                and float(c["delay_s"]) > 1e-3], causes


def test_a_barrier_after_a_waitall_that_waited_for_a_late_rank_waits_for_that_rank(mpi_run):
    """irecv_waitall, then main's barrier: rank 0's MPI_Waitall received ranks 1 and 2's early
    messages and waited D/2 more for rank 3's; ranks 1 and 2 then wait at the barrier for rank
    0 (or rank 3), caused by rank 3's delay_waitall (propagated through rank 0's wait, or
    direct) and rank 0's work_before_waitall, not by rank 0's time in MPI_Waitall (was: D/2 and
    more there; its own busy time in it, a few ms under MPICH's polling, remains)."""
    _, causes, _, _ = mpi_run
    waitall = "main => irecv_waitall => MPI_Waitall"
    assert not [c for c in causes if c["pattern"] == "wait_at_barrier"
                and c["cause_callpath"] == waitall and float(c["delay_s"]) > D / 10], causes
    late = caused(causes, "wait_at_barrier", "delay_waitall")
    for r in (1, 2):
        assert sum(v for k, v in late.items() if k[0] == r and k[1] == 3) >= 0.25 * D, late


def test_parallel_causes_with_one_rank_a_block_are_the_serial_ones(mpi_run, request):
    """`mpirun -np 4 plx waits --parallel --causes` on the 4-rank run: each rank is a block, so
    every collective's late member's accounts (since the last collective, and since each
    rank it exchanged a message with after it: pair_barrier) travel to the other blocks; the
    output is the serial one byte for byte."""
    impl = IMPLS[request.node.callspec.params["mpi_run"]]
    exp = mpi_run[3]
    cp = subprocess.run(impl.mpirun_cmd(NP, PLX, "waits", "--parallel", exp, "--causes",
                                        "--format", "csv"),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    serial = plx("waits", exp, "--causes", "--format", "csv").stdout
    assert "pair_barrier => work_after_pair" in serial
    assert cp.stdout == serial


def test_parallel_without_one_ranks_process_file_is_the_serial_analysis(mpi_run, request,
                                                                       tmp_path):
    """One rank's process.plx removed: the serial analysis warns and analyses the rest; so does
    `--parallel`, with the serial output (was: a panic, exit 101, on the other ranks' sends to
    it, which nothing matches)."""
    impl = IMPLS[request.node.callspec.params["mpi_run"]]
    exp = tmp_path / "exp"
    shutil.copytree(mpi_run[3], exp)
    (process_dirs(exp)[1] / "process.plx").unlink()
    serial = plx("waits", exp, "--causes", "--format", "csv").stdout
    cp = subprocess.run(impl.mpirun_cmd(2, PLX, "waits", "--parallel", exp, "--causes",
                                        "--format", "csv"),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    assert "late_sender" in serial and cp.stdout == serial


def test_a_chain_of_late_senders_is_propagated_to_its_root_cause(mpi_run):
    table, causes, ent, _ = mpi_run
    cp = "main => chain => "
    want = {r: enter(ent, r + 1, cp + "MPI_Send") - enter(ent, r, cp + "MPI_Recv")
            for r in (0, 1, 2)}
    # rank 2 waits for rank 3's delay itself; ranks 1 and 0 for rank 3's delay through the
    # waits of the ranks before them (the rest: a rank in between slow to send once it
    # received, descheduled on a loaded machine, a direct cause of its own)
    check(table, causes, "late_sender", cp + "MPI_Recv", want, "delay_chain",
          {0: (3, "propagated"), 1: (3, "propagated"), 2: (3, "direct")}, share=0.75)


def exits(exp):
    """{(rank, call path): [exit time s, ...]} from the Chrome export (as `entries`)."""
    entries(exp)
    doc = json.loads((exp.parent / "trace.json").read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    stacks, found = {}, {}
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") == "B":
            stacks.setdefault(key, []).append(e["name"])
        elif e.get("ph") == "E":
            st = stacks[key]
            found.setdefault((e["pid"], " => ".join(st)), []).append(e["ts"] / 1e6)
            st.pop()
    return found


def test_a_relayed_delay_splits_into_direct_and_propagated_to_the_ms(mpi_run):
    """relay: rank 0's delay_relay makes rank 1 wait; rank 1's wait and its relay_work make rank
    2 wait. Rank 1's wait is caused by delay_relay directly, as long as the delay lasted (less
    when rank 1 began the scenario late: its wait is shorter). Rank 2's wait is divided between
    delay_relay (propagated, through rank 1's wait) and relay_work (direct) in proportion to
    them, and the rest of it is rank 1's own lateness (leaving the barrier before, returning
    from its receive), so each share is exact to the ms: the delay times the wait over the wait
    plus rank 2's own lateness leaving that barrier (the trace's entries and exits)."""
    table, causes, ent, exp = mpi_run
    cp = "main => relay => "
    w1 = enter(ent, 0, cp + "MPI_Send") - enter(ent, 1, cp + "MPI_Recv")
    w2 = enter(ent, 1, cp + "MPI_Send") - enter(ent, 2, cp + "MPI_Recv")
    got = waits_at(table, "late_sender", cp + "MPI_Recv")
    assert sorted(got) == [1, 2] and same(got[1], w1) and same(got[2], w2), (got, w1, w2)
    head = enter(ent, 0, cp + "MPI_Send") - enter(ent, 0, cp + "delay_relay")
    work = enter(ent, 1, cp + "MPI_Send") - enter(ent, 1, cp + "relay_work")
    assert injected(head) and injected(work, D / 2), (head, work)
    c = caused(causes, "late_sender", "delay_relay")
    c.update(caused(causes, "late_sender", "relay_work"))
    assert sorted(c) == [(1, 0, "direct"), (2, 0, "propagated"), (2, 1, "direct")], c
    first = c[(1, 0, "direct")]
    assert abs(first - min(w1, head)) <= 1e-3, (c, w1, head)
    # the barrier before the scenario: rank 2 left it after rank 1 by `lag` (or not)
    ex = exits(exp)
    left = {r: max(t for t in ex[(r, "main => MPI_Barrier")] if t < enter(ent, r, "main => relay"))
            for r in (1, 2)}
    scale = w2 / (w2 + max(0.0, left[2] - left[1]))
    assert abs(c[(2, 0, "propagated")] - first * scale) <= 1e-3, (c, first, scale)
    assert abs(c[(2, 1, "direct")] - work * scale) <= 1e-3, (c, work, scale)


def test_a_balanced_program_has_no_false_waits(mpi_run):
    table, _, ent, _ = mpi_run
    cp = "main => balanced => "
    a = collective_entries(ent, cp + "MPI_Allreduce")
    s = collective_entries(ent, cp + "MPI_Sendrecv")
    want = {r: max(a.values()) - a[r] + max(0.0, s[(r - 1) % NP] - s[r]) for r in range(NP)}
    got = {}
    for r in table:
        if "balanced" in r["callpath"].split(" => "):
            rank = int(r["location"].split(".")[0])
            got[rank] = got.get(rank, 0.0) + float(r["wait_s"])
    for r in range(NP):
        # exactly what the trace shows of the machine's scheduling noise (a rank woken late
        # from its sleep: tens of ms on a loaded 2-core VM), never a delay injected elsewhere
        # (D or more)
        assert abs(got.get(r, 0.0) - want[r]) <= 4e-6 and want[r] < D / 2, (r, got, want)


def test_a_phase_holds_the_part_inside_it_of_each_wait_that_ends_in_it(mpi_run):
    table, _, ent, exp = mpi_run
    # the Chrome export's times are seconds from the trace's first event (its time_origin_ns),
    # the origin of `--phase START:END`
    # from the start to D/2 after rank 0 entered the late receiver's MPI_Ssend (its wait ends
    # about D after): the late senders of the first scenario end inside, nothing of the later
    # scenarios does
    ssend = "main => late_receiver => MPI_Ssend"
    end = enter(ent, 0, ssend) + D / 2
    inside = rows(exp, "--phase", "0:%.6f" % end)
    cp = "main => late_sender => MPI_Recv"
    whole = waits_at(table, "late_sender", cp)
    assert waits_at(inside, "late_sender", cp) == whole
    later = {r["callpath"].split(" => ")[1] for r in inside if r["callpath"].count(" => ") >= 2}
    assert later == {"late_sender"}, inside
    # from D/2 after rank 0 entered the late sender's MPI_Recv: the part of each late sender
    # after it (was: all of it, as it ended inside, where `plx report --phase` clips calls)
    start = enter(ent, 0, cp) + D / 2
    part = waits_at(rows(exp, "--phase", "%.6f:%.6f" % (start, end)),
                    "late_sender", cp)
    assert sorted(part) == sorted(whole) == [0, 2], (part, whole)
    # where the window began, from rank 0's part: where it was asked (to the 6 decimals of the
    # window given and of the waits printed)
    began = enter(ent, 0, cp) + whole[0] - part[0]
    assert abs(began - start) <= 3e-6, (began, start)
    want = whole[2] - max(0.0, began - enter(ent, 2, cp))
    assert abs(part[2] - want) <= 2e-6, (part, want)


def test_an_unknown_application_is_refused(mpi_run):
    _, _, _, exp = mpi_run
    cp = plx("waits", exp, "--app", "nosuch", check=False)
    assert cp.returncode != 0 and "nosuch" in cp.stderr, cp.stderr


def test_text_tree_and_json_totals_match_the_rows(mpi_run):
    table, _, _, exp = mpi_run
    sums = {}
    for r in table:
        sums[r["pattern"]] = sums.get(r["pattern"], 0.0) + float(r["wait_s"])
    doc = json.loads(plx("waits", exp, "--format", "json").stdout)
    assert len(partnered(doc["rows"])) == len(table)
    for p, s in sums.items():
        assert abs(doc["totals"][p] - s) < 1e-5, (p, doc["totals"][p], s)
    text = plx("waits", exp).stdout.splitlines()
    tree = []
    for ln in text[3:]:
        if not ln.strip():
            break
        tree.append(ln.split())
    names = [t[0] for t in tree]
    assert names[:8] == ["time", "mpi", "point-to-point", "late_sender",
                         "late_sender_wrong_order", "late_receiver",
                         "late_receiver_wrong_order", "collective"], names
    tot = {t[0]: float(t[-1]) for t in tree}
    p2p = ("late_sender", "late_sender_wrong_order", "late_receiver",
           "late_receiver_wrong_order")
    for p in p2p + ("wait_at_barrier", "wait_at_nxn", "late_broadcast", "early_reduce"):
        assert abs(tot[p] - sums[p]) < 2e-6 * len(table), (p, tot[p], sums[p])
    assert abs(tot["point-to-point"] - sum(sums[p] for p in p2p)) < 1e-4


@pytest.fixture(scope="module")
def threads_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("waits-threads")
    exe = build("waits_threads.c", tmp / "waits_threads", "-g", "-O1", "-lpthread")
    run(tmp / "exp", exe, D, opts=["--trace"])
    return rows(tmp / "exp"), rows(tmp / "exp", "--causes")


def thread_of(label):
    return int(label.split(".")[-1])


def test_lock_contention_names_the_holder(threads_run):
    table, causes = threads_run
    lock = [r for r in table if r["pattern"] == "lock_contention"]
    assert [(thread_of(r["location"]), r["callpath"]) for r in lock] == [(0, "main => take_lock")]
    assert injected(float(lock[0]["wait_s"])), lock
    # the holder's time while it held the mutex: in hold_lock (sleeping in nap)
    c = [r for r in causes if r["pattern"] == "lock_contention"]
    assert {(thread_of(r["cause_location"]), r["kind"]) for r in c} == {(1, "direct")}, c
    in_hold = sum(float(r["delay_s"]) for r in c
                  if r["cause_callpath"].startswith("holder => hold_lock"))
    assert in_hold >= 0.9 * float(lock[0]["wait_s"]), c


def test_a_reader_waits_for_the_writer_not_for_another_reader(tmp_path):
    """waits_rwlock.c: a writer thread holds a rwlock for D; main and a reader thread block
    reading it. The reader, let in with main, takes and releases it again and again until main
    has it: a reader's release comes between the writer's and main's acquire. Both readers'
    waits are caused by the writer's hold_write (was: main's by the reader's spin_reader, the
    last other thread to release the lock)."""
    exe = build("waits_rwlock.c", tmp_path / "waits_rwlock", "-g", "-O1", "-lpthread")
    run(tmp_path / "exp", exe, D, opts=["--trace"])
    # the trace says which acquires were for reading: the writer's not, the readers' (main,
    # the reader thread) all
    (proc,) = process_dirs(tmp_path / "exp")
    kind, records = read_file(proc / "trace.plx")
    assert kind == FILE_KINDS["trace"]
    shared = {}
    for rtype, p in records:
        if rtype == RECORD_IDS["TraceChunk"]:
            h = decode(rtype, p)
            words = struct.unpack_from("<%dQ" % h["event_count"], p, h["events"])
            for name, _, ev in events(words, h["base_ticks"]):
                if name == "acquire" and ev["kind"] == 1:  # rwlock
                    shared.setdefault(h["thread"], set()).add(ev["shared"])
    # (threads are numbered as they first enter the runtime: the writer or the reader first)
    (writer,) = [th for th, v in shared.items() if v == {0}]
    (reader,) = [th for th, v in shared.items() if v == {1} and th != 0]
    assert shared == {0: {1}, writer: {0}, reader: {1}}, shared
    table, causes = rows(tmp_path / "exp"), rows(tmp_path / "exp", "--causes")
    lock = {(thread_of(r["location"]), r["callpath"]): float(r["wait_s"])
            for r in table if r["pattern"] == "lock_contention"}
    main = lock[(0, "main => read_lock")]
    assert injected(main), lock
    assert injected(lock[(reader, "reader => spin_reader")]), lock
    for waiting in (0, reader):
        c = [r for r in causes if r["pattern"] == "lock_contention"
             and thread_of(r["waiting_location"]) == waiting]
        # the writer's time while it held the lock: in hold_write (sleeping in nap), beside
        # the runtime's own work on its thread meanwhile (a root of its own)
        assert {thread_of(r["cause_location"]) for r in c} == {writer}, c
        assert all(r["cause_callpath"].startswith(("writer => hold_write", "plx_"))
                   for r in c), c
        wait = main if waiting == 0 else lock[(reader, "reader => spin_reader")]
        held = sum(float(r["delay_s"]) for r in c
                   if r["cause_callpath"].startswith("writer => hold_write"))
        assert held >= 0.9 * wait, c


def test_join_waits_for_the_joined_threads_work(threads_run):
    table, causes = threads_run
    w = [r for r in table if r["pattern"] == "join_wait" and r["callpath"] == "main => join_worker"]
    assert len(w) == 1 and thread_of(w[0]["location"]) == 0 and injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "join_wait"
         and "slow_worker" in r["cause_callpath"].split(" => ")]
    assert {thread_of(r["cause_location"]) for r in c} == {2}, c
    assert injected(sum(float(r["delay_s"]) for r in c)), c


def test_condition_wait_names_the_signaller(threads_run):
    table, causes = threads_run
    w = [r for r in table if r["pattern"] == "condition_wait"]
    assert [(thread_of(r["location"]), r["callpath"]) for r in w] == [(0, "main => consume")]
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "condition_wait"]
    assert [(thread_of(r["cause_location"]), r["cause_callpath"]) for r in c] == [
        (3, "producer => produce")], c


def test_thread_barrier_waits_for_the_late_arrival(threads_run):
    table, causes = threads_run
    w = [r for r in table if r["pattern"] == "thread_barrier"]
    assert [(thread_of(r["location"]), r["callpath"]) for r in w] == [(0, "main => meet")], w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "thread_barrier"
         and "late_arrival" in r["cause_callpath"].split(" => ")]
    assert {(thread_of(r["cause_location"]), r["kind"]) for r in c} == {(4, "direct")}, c
    assert sum(float(r["delay_s"]) for r in c) >= 0.9 * float(w[0]["wait_s"]), c


def test_semaphore_wait_names_the_poster(threads_run):
    table, causes = threads_run
    w = [r for r in table if r["pattern"] == "semaphore_wait"]
    assert [(thread_of(r["location"]), r["callpath"]) for r in w] == [
        (0, "main => take_token")], w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "semaphore_wait"]
    assert [(thread_of(r["cause_location"]), r["cause_callpath"]) for r in c] == [
        (5, "poster => slow_post")], c


def test_output_is_the_same_for_any_number_of_engine_threads(mpi_run):
    _, _, _, exp = mpi_run
    outs = {plx("-j", j, "waits", exp, "--causes", "--format", "csv").stdout for j in (1, 2, 4)}
    assert len(outs) == 1 and len(next(iter(outs)).splitlines()) > 50


@pytest.fixture(scope="module", params=["gcc", "clang"])
def omp_run(request, tmp_path_factory):
    """(waits rows, cause rows) of waits_omp.c under libgomp (gcc) and LLVM's libomp (clang,
    OMPT). KMP_BLOCKTIME=0: libomp's waiting threads sleep on its own condition variables at
    once instead of spinning 200 ms first."""
    env = None
    if request.param == "clang":
        llvm_openmp()
        env = {"PLX_CC": "clang", "KMP_BLOCKTIME": "0"}
    tmp = tmp_path_factory.mktemp("waits-omp-" + request.param)
    exe = build("waits_omp.c", tmp / "waits_omp", "-g", "-O1", "-fopenmp", env=env)
    run(tmp / "exp", exe, D, opts=["--trace"], env=env)
    return rows(tmp / "exp"), rows(tmp / "exp", "--causes"), tmp / "exp"


def test_the_openmp_runtimes_own_pthread_calls_are_not_the_programs(omp_run):
    """The OpenMP runtime builds its barriers, critical sections and the joins of its workers on
    pthread calls (libomp: condition variables, mutexes, pthread_join at exit): they are the
    barrier and critical waits it reports, not waits or objects of the program's (was, under
    libomp: a condition_wait inside the omp_barrier wait, counted twice, a join_wait after
    main, and unnamed cond and mutex objects in `plx report --sync`)."""
    table, _, exp = omp_run
    assert {r["pattern"] for r in table} == {"omp_barrier", "omp_critical", "sleep"}, table
    text = plx("report", exp, "--sync").stdout
    row = re.compile(r"^\s+[\d.]+ \S*s\s+\d+\s+\d+\s+[\d.]+ \S*s\s+\d+\s+(\S+)")
    objects = [m.group(1) for m in map(row.match, text.splitlines()) if m]
    assert objects and set(objects) <= {"omp-barrier", "omp-critical"}, text


def test_omp_barrier_waits_for_the_late_thread(omp_run):
    table, causes, _ = omp_run
    w = [r for r in table if r["pattern"] == "omp_barrier"
         and r["callpath"].startswith("main => barrier => parallel@waits_omp.c")]
    assert [thread_of(r["location"]) for r in w] == [0], w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "omp_barrier"
         and "late_thread" in r["cause_callpath"].split(" => ")]
    assert {(thread_of(r["cause_location"]), r["kind"]) for r in c} == {(1, "direct")}, c
    assert sum(float(r["delay_s"]) for r in c) >= 0.9 * float(w[0]["wait_s"]), c


def test_omp_critical_waits_for_the_holder(omp_run):
    table, causes, _ = omp_run
    w = [r for r in table if r["pattern"] == "omp_critical" and float(r["wait_s"]) > 0.001]
    assert [thread_of(r["location"]) for r in w] == [1], w
    assert w[0]["callpath"].startswith("main => critical => parallel@waits_omp.c"), w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "omp_critical"
         and "hold_critical" in r["cause_callpath"].split(" => ")]
    assert {(thread_of(r["cause_location"]), r["kind"]) for r in c} == {(0, "direct")}, c
    assert sum(float(r["delay_s"]) for r in c) >= 0.9 * float(w[0]["wait_s"]), c


def test_a_profile_without_a_trace_is_refused(tmp_path):
    exe = build("waits_threads.c", tmp_path / "waits_threads", "-O1", "-lpthread")
    run(tmp_path / "exp", exe, 0.01)
    cp = plx("waits", tmp_path / "exp", check=False)
    assert cp.returncode == 2, cp
    assert cp.stdout == ""
    assert "no trace: this needs an event trace; rerun with `plx run --trace`" in cp.stderr


def test_a_stream_read_waits_for_its_writer(tmp_path):
    exe = build("waits_stream.c", tmp_path / "waits_stream", "-g", "-O1", "-lpthread")
    run(tmp_path / "exp", exe, D, opts=["--trace"])
    table, causes = rows(tmp_path / "exp"), rows(tmp_path / "exp", "--causes")
    w = [r for r in table if r["pattern"] == "stream_wait"]
    assert [(thread_of(r["location"]), r["callpath"]) for r in w] == [
        (0, "main => serve => read")], w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "stream_wait"
         and "slow_request" in r["cause_callpath"].split(" => ")]
    assert {(thread_of(r["cause_location"]), r["kind"]) for r in c} == {(1, "direct")}, c
    assert sum(float(r["delay_s"]) for r in c) >= 0.9 * float(w[0]["wait_s"]), c


def test_java_monitor_wait_names_the_holder_thread(tmp_path):
    """JWaits.java: main blocks D entering a monitor thread "holder" holds (monitor_wait, the
    cause the holder), then waits D in Object.wait until "producer" notifies it (condition_wait,
    once: the JVM's own pthread waits inside a Java wait are not counted again; the cause the
    producer where it called notifyAll)."""
    require_tools("java", "javac", what="a JDK (java, javac)")
    subprocess.run(["javac", "-d", str(tmp_path), str(PROGRAMS / "java" / "JWaits.java")],
                   check=True, env=clean_env())
    exp = tmp_path / "exp"
    run(exp, "java", "-cp", tmp_path, "JWaits", D, opts=["--trace"])
    names = {"%s.%s" % (r["process"], r["thread"]): r["thread_name"]
             for r in csv.DictReader(io.StringIO(plx("report", exp, "--format", "csv").stdout))}
    table, causes = rows(exp), rows(exp, "--causes")
    # the program's own monitor waits (the JVM's threads may contend for a monitor of its own
    # for a microsecond outside every Java method, at "(thread)", under load)
    w = [r for r in table if r["pattern"] == "monitor_wait" and "JWaits." in r["callpath"]]
    assert [(names[r["location"]], r["callpath"]) for r in w] == [
        ("main", "JWaits.main(String[]) => JWaits.takeLock()")], w
    assert injected(float(w[0]["wait_s"])), w
    c = [r for r in causes if r["pattern"] == "monitor_wait"
         and r["waiting_location"] == w[0]["location"]]
    assert [(names[r["cause_location"]], r["kind"]) for r in c] == [("holder", "direct")], c
    assert abs(float(c[0]["delay_s"]) - float(w[0]["wait_s"])) <= 2e-6, c
    cw = waits_at(table, "condition_wait", "JWaits.main(String[]) => JWaits.consume()")
    assert len(cw) == 1 and injected(sum(cw.values())) and sum(cw.values()) < 1.5 * D, cw
    # the notifier (the agent hooks each notify/notifyAll call site): thread "producer" where
    # it called notifyAll, the whole wait (the JVM's own waits of the run have causes of their
    # own, none in produce)
    c = [r for r in causes if r["pattern"] == "condition_wait"
         and r["cause_callpath"] == "JWaits.produce()"]
    assert [(names[r["cause_location"]], r["kind"]) for r in c] == [("producer", "direct")], c
    assert abs(float(c[0]["delay_s"]) - sum(cw.values())) <= 2e-6, c


def test_java_thread_sleep_is_a_sleep_not_a_condition_wait(tmp_path):
    """JSleep.java: thread "sleeper" sleeps D in nap. Thread.sleep was the JVM's timed condition
    wait, so plx waits gave a condition_wait under nap: it is a sleep (region Thread.sleep, no
    cause), of exactly the time the thread spent in it, and the JVM's own condition wait and
    locks inside it are not waits. Object.wait stays a condition wait: main waits in awaitSignal
    until thread "signaller" notifies it after sleeping D (its cause the signaller, where it
    notified)."""
    require_tools("java", "javac", what="a JDK (java, javac)")
    subprocess.run(["javac", "-d", str(tmp_path), str(PROGRAMS / "java" / "JSleep.java")],
                   check=True, env=clean_env())
    exp = tmp_path / "exp"
    run(exp, "java", "-cp", tmp_path, "JSleep", D, opts=["--trace"])
    names = {"%s.%s" % (r["process"], r["thread"]): r["thread_name"]
             for r in csv.DictReader(io.StringIO(plx("report", exp, "--format", "csv").stdout))}
    table, causes = rows(exp), rows(exp, "--causes")
    # in the two naps, nothing but the sleeps: no condition_wait (nor lock_contention) inside
    # them (the JVM's own waits of the threads outside every Java method, `(thread)`, are not
    # the program's)
    mine = [r for r in table if names.get(r["location"]) in ("sleeper", "signaller")
            and "JSleep.nap(long)" in r["callpath"].split(" => ")]
    assert sorted((names[r["location"]], r["pattern"], r["callpath"]) for r in mine) == [
        ("signaller", "sleep", "JSleep.signal() => JSleep.nap(long) => Thread.sleep"),
        ("sleeper", "sleep", "JSleep.sleeper() => JSleep.nap(long) => Thread.sleep")], mine
    # each the whole Thread.sleep call (its enter to its exit in the trace): D and a few ms
    text = plx("export", exp, "--format", "text", "-o", "-").stdout
    spans = {}
    for m in re.finditer(r"^\s*(\d+) (\S+)\s+(enter|exit)\s+Thread\.sleep$", text, re.M):
        t, loc, kind = int(m.group(1)), m.group(2), m.group(3)
        spans[loc] = spans.get(loc, 0) + (t if kind == "exit" else -t)
    for r in mine:
        w = float(r["wait_s"])
        assert abs(w - spans[r["location"]] / 1e9) <= 1e-6, (r, spans)
        assert D <= w <= D + 0.02, r
    # no cause: kind none, as a native sleep's (each sleep row of the threads a row of causes)
    got = [(names[r["waiting_location"]], r["cause_location"], r["delay_s"], r["kind"])
           for r in causes if r["pattern"] == "sleep"
           and names.get(r["waiting_location"]) in ("sleeper", "signaller")]
    sleeps = [r for r in table if r["pattern"] == "sleep"
              and names.get(r["location"]) in ("sleeper", "signaller")]
    assert sorted(got) == sorted((names[r["location"]], "", r["wait_s"], "none")
                                 for r in sleeps), got
    assert {("%.6f" % float(r["wait_s"]), "none") for r in mine} <= {g[2:] for g in got}, got
    # Object.wait: a condition wait at main, caused by the signaller where it notified
    cw = waits_at(table, "condition_wait", "JSleep.main(String[]) => JSleep.awaitSignal()")
    assert len(cw) == 1 and injected(sum(cw.values())), cw
    c = [r for r in causes if r["pattern"] == "condition_wait"
         and r["cause_callpath"] == "JSleep.signal()"]
    assert [(names[r["cause_location"]], r["kind"]) for r in c] == [("signaller", "direct")], c


def test_java_join_and_unseen_notify(tmp_path):
    """JJoin.java: main joins thread "worker", which sleeps D in slowWork (join_wait: the JVM
    wakes the joiner as the thread ends, no notify call site; the cause the worker, in
    slowWork); then main waits in Object.wait until thread "first" notifies it D later from a
    rewritten call site (condition_wait, the cause "first"); then on the same object until thread
    "second" notifies it through JJoin$Quiet, a class the filter excludes: that notify is not
    seen, so that wait has no cause (never "first", whose notify came before it began)."""
    require_tools("java", "javac", what="a JDK (java, javac)")
    subprocess.run(["javac", "-d", str(tmp_path), str(PROGRAMS / "java" / "JJoin.java")],
                   check=True, env=clean_env())
    flt = tmp_path / "filter"
    flt.write_text("exclude class JJoin$Quiet\n")
    exp = tmp_path / "exp"
    run(exp, "java", "-cp", tmp_path, "JJoin", D, opts=["--trace", "--filter", flt])
    names = {"%s.%s" % (r["process"], r["thread"]): r["thread_name"]
             for r in csv.DictReader(io.StringIO(plx("report", exp, "--format", "csv").stdout))}
    table, causes = rows(exp), rows(exp, "--causes")
    main = [r for r in table if names.get(r["location"]) == "main"]
    join = "JJoin.main(String[]) => JJoin.joinWorker(Thread)"
    first = "JJoin.main(String[]) => JJoin.awaitFirst() => JJoin.awaitRound(int)"
    second = "JJoin.main(String[]) => JJoin.awaitSecond() => JJoin.awaitRound(int)"
    got = {(r["pattern"], r["callpath"]): float(r["wait_s"]) for r in main
           if r["callpath"] in (join, first, second)}
    assert set(got) == {("join_wait", join), ("condition_wait", first),
                        ("condition_wait", second)}, got
    for k, w in got.items():
        assert injected(w) and w < 1.5 * D, (k, w)

    # the join's cause: the worker, its time in slowWork (the sleep there, a wait of its own:
    # propagated), the whole wait
    c = [r for r in causes
         if r["pattern"] == "join_wait" and names.get(r["waiting_location"]) == "main"]
    assert {names.get(r["cause_location"]) for r in c} == {"worker"}, c
    # (beside the worker's time outside every measured method: its start and end, < 1 ms)
    slow = [r for r in c if r["cause_callpath"].startswith("JJoin.slowWork()")]
    assert {r["cause_callpath"] for r in c if r not in slow} <= {"(thread)"}, c
    assert sum(float(r["delay_s"]) for r in c if r not in slow) < 1e-3, c
    # (each value printed to the µs: the sum of the rows is the wait's to half a µs a row)
    slack = 0.5e-6 * (len(c) + 1) + 1e-9
    assert abs(sum(float(r["delay_s"]) for r in c) - got[("join_wait", join)]) <= slack, c
    # the two Object.waits: only the first has a cause, "first" in signalFirst, its whole wait
    c = [r for r in causes if r["pattern"] == "condition_wait"
         and names.get(r["waiting_location"]) == "main"
         and names.get(r["cause_location"]) == "first"]
    assert [(names[r["cause_location"]], r["cause_callpath"], r["kind"]) for r in c] == [
        ("first", "JJoin.signalFirst()", "direct")], c
    assert abs(float(c[0]["delay_s"]) - got[("condition_wait", first)]) <= 2e-6, c
    # "second" only where the JVM saw its monitor's release outside every measured method
    # (in the excluded class: "(thread)"), as a fresh-clone run under load did once
    c2 = [r for r in causes if r["pattern"] == "condition_wait"
          and names.get(r["waiting_location"]) == "main"
          and names.get(r["cause_location"]) == "second"]
    assert all(r["cause_callpath"] == "(thread)" for r in c2), c2
    seconds = sum(float(r["delay_s"]) for r in c2)
    # the text view says how much waiting has no recorded cause: the second wait at least
    text = plx("waits", exp, "--causes").stdout
    block = text.split("\ncondition_wait: ")[1].split("\n\n")[0]
    unknown = re.findall(r"^\s+(\d+\.\d{6}) unknown\s+\(waits whose cause was not recorded\)$",
                         block, re.M)
    assert len(unknown) == 1, block
    assert float(unknown[0]) + seconds >= got[("condition_wait", second)] - 2e-6, block


@pytest.mark.parametrize("how", ["ssend", "isend"])
def test_mpj_late_receiver_against_an_irecv(tmp_path, how):
    """programs/java/MpjLate.java under MPJ Express (plx-mpj, 3 ranks): rank 1 sleeps D in
    delayRecv before it posts the receive with Irecv (completed by Request.Wait), so rank 0's
    send waits D for it: a late receiver measured against the Irecv's entry (its recv_posted),
    the cause rank 1 in delayRecv; the wait is exactly the Irecv's entry less the entry of the
    call that waited (the trace's own entries). With "ssend" rank 0 waits in its Ssend; with
    "isend" it sends 1 MiB with Isend (niodev's rendezvous protocol) and waits in the
    Request.Wait completing it (the Isend's send_done)."""
    from test_java import need_mpj
    cp_jars = need_mpj()
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp_jars,
                    str(PROGRAMS / "java" / "MpjLate.java")], check=True, env=clean_env())
    exp = tmp_path / "exp"
    cp = subprocess.run(
        [str(PLX.parent / "plx-mpj"), "-np", "3", "-o", str(exp), "--trace", "--", "java", "-cp",
         "%s:%s" % (cp_jars, tmp_path), "MpjLate", str(D), how],
        capture_output=True, text=True, env=clean_env(), timeout=180)
    assert cp.returncode == 0, _fail_message(cp)
    assert "late ok" in cp.stdout, _fail_message(cp)
    table, causes = rows(exp), rows(exp, "--causes")
    args = "(Object, int, int, Datatype, int, int)"
    waited = {"ssend": "MpjLate.main(String[]) => mpi.Comm.Ssend%s => MPI_Ssend" % args,
              "isend": "MpjLate.main(String[]) => MpjLate.waitSend(Request) => "
                       "mpi.Request.Wait() => MPI_Wait"}[how]
    irecv = "MpjLate.main(String[]) => mpi.Comm.Irecv%s => MPI_Irecv" % args
    p2p = [r for r in table if r["pattern"].startswith(("late_sender", "late_receiver"))]
    assert [(r["pattern"], r["location"], r["callpath"]) for r in p2p] == [
        ("late_receiver", "0.1", waited)], p2p
    w = float(p2p[0]["wait_s"])
    assert injected(w), w
    ent = entries(exp)
    assert same(w, enter(ent, 1, irecv) - enter(ent, 0, waited)), (w, ent.get((1, irecv)))
    c = [r for r in causes if r["pattern"] == "late_receiver"]
    assert {(r["waiting_location"], r["cause_location"]) for r in c} == {("0.1", "1.1")}, c
    # each printed value rounded to 1 µs: the rows' and the wait's errors, 0.5 µs each at most
    assert abs(sum(float(r["delay_s"]) for r in c) - w) <= 0.5e-6 * (len(c) + 1) + 1e-9, c
    delay = sum(float(r["delay_s"]) for r in c
                if "MpjLate.delayRecv(long)" in r["cause_callpath"].split(" => "))
    assert delay >= 0.9 * w, c
    # the message is counted once, as sent
    bytes_ = {"ssend": 4, "isend": 4 * 256 * 1024}[how]
    pairs = {(int(r["sender"]), int(r["receiver"])): (int(r["messages"]), int(r["bytes"]))
             for r in csv.DictReader(io.StringIO(plx("comm", exp, "--format", "csv").stdout))}
    assert {k: v for k, v in pairs.items() if v[0]} == {(0, 1): (1, bytes_)}, pairs


# --- what ran during a cause: call-stack samples (plx waits --samples) ----------------------

S = 0.4  # seconds of CPU each spin of programs/waits_sampled.c takes


def compile_plain(tmp, cc, *flags):
    """programs/waits_sampled.c built the usual way: -O2 -g, no instrumentation."""
    exe = tmp / "waits_sampled"
    cp = subprocess.run([cc, "-O2", "-g", *flags, str(PROGRAMS / "waits_sampled.c"), "-o",
                         str(exe), "-pthread"], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return exe


def sampled_cause(exp, pattern):
    """The one direct cause of `pattern` with samples, from `plx waits --samples 50` (JSON)."""
    doc = json.loads(plx("waits", exp, "--samples=50", "--format", "json").stdout)
    found = [c for c in doc["causes"] if c["pattern"] == pattern and "samples" in c]
    assert len(found) == 1, doc["causes"]
    return found[0]


def assert_heavy_alone(c, tail):
    """The cause's samples: the spin in `heavy` (S s of CPU at 1 kHz, ±10 %) taken in the
    interval that caused the wait, not `early`'s spin before it, at least 90 % of the delay
    (a spin both sides made, `common`, is no excess: a few samples at most), and estimates that
    share out the delay."""
    s = c["samples"]
    assert s["timed"] is True
    assert not any("early" in p["frames"] for p in s["paths"]), s["paths"]
    assert s["paths"][0]["frames"][-len(tail):] == tail, s["paths"][0]
    heavy = [p for p in s["paths"] if "heavy" in p["frames"]]
    assert 0.9 * S * 1000 <= sum(p["samples"] for p in heavy) <= 1.1 * S * 1000, s
    assert sum(p["estimated_s"] for p in heavy) >= 0.9 * c["delay_s"], s
    assert sum(p["samples"] for p in s["paths"]) == s["total"]
    assert abs(sum(p["estimated_s"] for p in s["paths"]) - c["delay_s"]) < 1e-5 * len(s["paths"])


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_lock_holders_sampled_work_is_what_ran_during_the_cause(tmp_path, cc):
    """waits_sampled lock: main waits for the mutex while the holder spins in `heavy` (it spun
    in `early` before taking it). Nothing is instrumented: the cause is the holder's time outside
    any measured call, `(thread)`, and its samples say `heavy`."""
    exe = compile_plain(tmp_path, cc)
    exp = tmp_path / "exp"
    run(exp, exe, "lock", S, opts=("--trace", "--sample"))
    c = sampled_cause(exp, "lock_contention")
    assert (c["waiting_location"].split(".")[1], c["cause_location"].split(".")[1],
            c["cause_callpath"], c["kind"]) == ("0", "1", "(thread)", "direct"), c
    assert_heavy_alone(c, ["holder", "heavy", "spin"])
    # text: the sampled rows under the cause, the largest first
    text = plx("waits", exp, "--samples").stdout
    assert re.search(r"^\s+~[0-9.]+ sampled\s+%d of %d samples: .*holder => heavy => spin$" % (
        c["samples"]["paths"][0]["samples"], c["samples"]["total"]), text, re.M), text


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_late_senders_sampled_work_is_what_ran_during_the_cause(tmp_path, impl):
    """waits_sampled mpi on 2 ranks, built with mpicc alone: after a barrier both spin S/2 in
    `common`, rank 1 S more in `heavy` before its send. The late sender's cause is rank 1 outside
    any measured call (MPI only is measured), and its samples are `heavy`'s: not `common`'s,
    which rank 0 ran as long, nor `early`'s before the barrier. The wait itself: rank 0's
    samples in MPI_Recv. CSV: a `sampled` row per path, named from the thread's start."""
    mpi = IMPLS[impl]
    mpi.require()
    exe = compile_plain(tmp_path, mpi.mpicc, "-DMPI")
    exp = tmp_path / "exp"
    cp = subprocess.run(mpi.mpirun_cmd(2, PLX, "run", "--trace", "--sample", "-o", exp, "--",
                                       exe, "mpi", str(S)),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    c = sampled_cause(exp, "late_sender")
    assert (c["waiting_location"], c["cause_location"], c["cause_callpath"], c["kind"]) == (
        "0.0", "1.0", "(thread)", "direct"), c
    assert_heavy_alone(c, ["main", "heavy", "spin"])
    doc = json.loads(plx("waits", exp, "--samples=50", "--format", "json").stdout)
    recv = [r for r in doc["rows"] if r["pattern"] == "late_sender"]
    assert [r["callpath"] for r in recv] == ["MPI_Recv"], recv
    # (a blocking MPI_Recv polls: its samples are below it, a share of its wait each)
    if "samples" in recv[0]:
        paths = recv[0]["samples"]["paths"]
        assert all("heavy" not in p["frames"] and "common" not in p["frames"] for p in paths)
        assert abs(sum(p["estimated_s"] for p in paths) - recv[0]["wait_s"]) < 1e-5 * len(paths)
    # --samples=1: the largest path, and what the others hold in one line
    one = json.loads(plx("waits", exp, "--samples=1", "--format", "json").stdout)
    s1 = [x for x in one["causes"] if x["pattern"] == "late_sender" and "samples" in x][0]
    s1 = s1["samples"]
    more = s1["more"]
    assert len(s1["paths"]) == 1 and more["paths"] >= 1, s1
    assert s1["paths"][0]["samples"] + more["samples"] == s1["total"], s1
    assert abs(s1["paths"][0]["estimated_s"] + more["estimated_s"] - c["delay_s"]) < 1e-5, s1
    text = plx("waits", exp, "--samples=1").stdout
    assert re.search(r"^\s+~[0-9.]+ sampled\s+%d more paths?: %d of %d samples" % (
        more["paths"], more["samples"], s1["total"]), text, re.M), text
    lines = plx("waits", exp, "--samples", "--format", "csv").stdout.splitlines()
    sampled = [l for l in lines if l.startswith("late_sender,") and l.endswith(",sampled")]
    assert 1 <= len(sampled) <= 3, lines
    assert re.match(r"late_sender,0\.0,1\.0,_start => .*main => heavy => spin,[0-9.]+,sampled$",
                    sampled[0]), sampled


def test_omp_barriers_cause_is_the_late_threads_work_in_the_region(tmp_path):
    """waits_sampled omp: in one parallel region thread 1 spins S in `heavy` while thread 0 waits
    at its closing barrier, in the next thread 0 spins and thread 1 waits. Each wait's cause is
    the other thread's time in the region with `heavy`'s samples: the waiter's wait there, in the
    same call path as the region's work, is no busy time of its own (it was counted as such:
    the cause was `(thread)` with no samples whenever the waiter entered the region first)."""
    exe = compile_plain(tmp_path, "gcc", "-fopenmp")
    exp = tmp_path / "exp"
    run(exp, exe, "omp", S, opts=("--trace", "--sample"))
    doc = json.loads(plx("waits", exp, "--samples=50", "--format", "json").stdout)
    waits = [r for r in doc["rows"] if r["pattern"] == "omp_barrier" and r["wait_s"] > S / 2]
    assert sorted(r["location"].split(".")[1] for r in waits) == ["0", "1"], doc["rows"]
    for w in waits:
        causes = [c for c in doc["causes"] if c["pattern"] == "omp_barrier"
                  and c["waiting_location"] == w["location"] and c["delay_s"] > S / 2]
        assert len(causes) == 1, doc["causes"]
        c = causes[0]
        assert c["cause_location"].split(".")[1] != w["location"].split(".")[1], c
        assert re.fullmatch(r"parallel@waits_sampled\.c:\d+", c["cause_callpath"]), c
        assert c["kind"] == "direct" and "samples" in c, c
        assert_heavy_alone(c, ["heavy", "spin"])


def test_waits_samples_refused_without_samples_or_in_parallel(tmp_path):
    exe = compile_plain(tmp_path, "gcc")
    exp = tmp_path / "exp"
    run(exp, exe, "lock", "0.01", opts=("--trace",))
    cp = plx("waits", exp, "--samples", check=False)
    assert cp.returncode == 2 and "the run has no call-stack samples" in cp.stderr, cp.stderr
    cp = plx("waits", exp, "--samples=0", check=False)
    assert cp.returncode == 2 and "1 or more" in cp.stderr, cp.stderr
    # (the optional N takes `=`: the directory after --samples is the directory)
    cp = plx("waits", "--samples", exp, check=False)
    assert cp.returncode == 2 and "the run has no call-stack samples" in cp.stderr, cp.stderr
    prof = tmp_path / "profile"
    run(prof, exe, "lock", "0.01", opts=("--sample",))
    cp = plx("waits", prof, "--samples", check=False)
    assert cp.returncode == 2 and "rerun with `plx run --trace --sample`" in cp.stderr, cp.stderr
    cp = plx("waits", exp, "--samples", "--parallel", check=False)
    assert cp.returncode == 2 and "cannot be used with" in cp.stderr, cp.stderr
