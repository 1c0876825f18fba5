"""plx export --format otf2: the archive, read back by the OTF2 library's own tools — otf2-print
and the Python reader (otf2.reader) — holds the text export's events, location by location, in
order, at the same times, under the same names."""

import os
import re
from collections import defaultdict
from pathlib import Path

import pytest
from components import require, require_module, require_tools

from conftest import MPI_TIMEOUT, PLX, PLX_MPICC, ROOT, plx, run

DETAIL = re.compile(r"(\w+)=(\S+)")
LOCKS = ("mutex", "rwlock", "spin")


@pytest.fixture(scope="module")
def otf2():
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    return require_module("otf2", what="the OTF2 Python reader (pip install otf2)")


@pytest.fixture(scope="module")
def archives(otf2, experiments, queue_experiment, tmp_path_factory):
    """{name: (archive directory, text export path)} of every experiment."""
    root = tmp_path_factory.mktemp("otf2")
    out = {}
    for name, exp in {**experiments, "queue": queue_experiment}.items():
        d = root / name
        cp = plx("export", exp, "--format", "otf2", "-o", d)
        assert re.search(r"exported \d+ events as otf2", cp.stderr), cp.stderr
        # the layout Score-P writes: anchor file, global definitions, a directory of locations
        assert (d / "traces.otf2").is_file() and (d / "traces.def").is_file()
        assert (d / "traces").is_dir()
        text = root / (name + ".txt")
        plx("export", exp, "--format", "text", "-o", text)
        out[name] = (d, text)
    return out


def text_export(path):
    """(origin ns, {label: [(kind, region, {details}, t)]}, {cN: description}, header)."""
    out = defaultdict(list)
    header, comms = [], {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            header.append(line)
            m = re.match(r"^#\s+(c\d+)\s+(.*)$", line)
            if m:
                comms[m.group(1)] = m.group(2)
            continue
        t, label, kind, rest = line.split(None, 3)
        region = rest if kind in ("enter", "exit") else rest.split("  ")[0]
        out[label].append((kind, region, dict(DETAIL.findall(rest)), int(t)))
    origin = int(re.search(r"at (\d+) ns", "\n".join(header)).group(1))
    return origin, out, comms, header


def collective_routines(events):
    """The regions a collective event of the text export happens in (the MPI collectives)."""
    out = set()
    for evs in events.values():
        stack = []
        for kind, region, _, _ in evs:
            if kind == "enter":
                stack.append(region)
            elif kind == "exit":
                stack.pop()
            elif kind == "collective" and stack:
                out.add(stack[-1])
    return out


ISENDS = ("MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend")
STARTS = ("MPI_Start", "MPI_Startall")
WAITS = ("MPI_Wait", "MPI_Test")


def started_receives(evs):
    """{index of an MPI_Start(all) enter: receives it started}: in these programs, the receives
    completed in Wait/Test calls after a start and before the next start or MPI_Irecv."""
    out, stack, start = {}, [], None
    for i, (kind, region, _, _) in enumerate(evs):
        if kind == "enter":
            if region in STARTS:
                start = i
                out[i] = 0
            elif region == "MPI_Irecv":
                start = None
            stack.append(region)
        elif kind == "exit":
            if region in stack:
                del stack[len(stack) - 1 - stack[::-1].index(region):]
        elif kind == "recv" and start is not None and stack and stack[-1].startswith(WAITS):
            out[start] += 1
    return out


def expected_records(origin, events):
    """{label: [(RECORD, time, region or None)]}: the OTF2 records each text event becomes (but
    MPI_ISEND_COMPLETE, whose send_done the text does not show: see complete_records). A
    start of persistent requests is nonblocking too: its sends are MPI_ISENDs, and its enter
    has an MPI_IRECV_REQUEST per receive it started, completed by an MPI_IRECV. A
    collective begins at its routine's enter, as Score-P writes it (Scalasca's analyser takes
    MPI_COLLECTIVE_BEGIN for the time a rank arrived), and ends at its collective event."""
    colls = collective_routines(events)
    out = {}
    for label, evs in events.items():
        recs, stack, irecvs = [], [], 0
        starts = started_receives(evs)
        for i, (kind, region, d, t) in enumerate(evs):
            ts = origin + t
            if kind == "enter":
                recs.append(("ENTER", ts, region))
                if region in colls:
                    recs.append(("MPI_COLLECTIVE_BEGIN", ts, None))
                stack.append(region)
                posts = 1 if region == "MPI_Irecv" else starts.get(i, 0)
                recs.extend([("MPI_IRECV_REQUEST", ts, None)] * posts)
                irecvs += posts
            elif kind == "exit":
                recs.append(("LEAVE", ts, region))
                if region in stack:
                    del stack[len(stack) - 1 - stack[::-1].index(region):]
            elif kind == "send":
                isend = bool(stack) and stack[-1] in ISENDS + STARTS
                recs.append(("MPI_ISEND" if isend else "MPI_SEND", ts, None))
            elif kind == "recv":
                # a receive completed in a Wait/Test call while a posted one is open: its MPI_IRECV
                irecv = irecvs > 0 and bool(stack) and stack[-1].startswith(WAITS)
                irecvs -= irecv
                recs.append(("MPI_IRECV" if irecv else "MPI_RECV", ts, None))
            elif kind == "collective":
                recs.append(("MPI_COLLECTIVE_END", ts, None))
            elif kind == "user":
                recs.append(("METRIC", ts, None))
            elif kind in ("acquire", "release") and d["kind"] in LOCKS:
                recs.append(("THREAD_%s_LOCK" % kind.upper(), ts, None))
            elif kind == "acquire" and d["kind"] == "thread":
                recs.append(("THREAD_WAIT", ts, None))
            elif kind == "release" and d["kind"] == "thread":
                recs.append(("THREAD_END", ts, None))
            # condition variables, barriers, semaphores and stream sockets have no OTF2 record
        out[label] = recs
    return out


def snake(name):
    """MpiCollectiveBegin -> MPI_COLLECTIVE_BEGIN (the Python reader's class, otf2-print's name)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def read_python(otf2, path):
    """(definitions, {location name: [(RECORD, time, region or None, event)]}) by otf2.reader."""
    events = defaultdict(list)
    with otf2.reader.open(str(path / "traces.otf2")) as tr:
        d = tr.definitions
        defs = {
            "clock": d.clock_properties,
            "locations": {l.name: l.group.name for l in d.locations},
            "groups": {g.name: g.system_tree_parent.name for g in d.location_groups},
            "nodes": {n.name: (n.class_name, n.parent.name if n.parent else None)
                      for n in d.system_tree_nodes},
            "regions": {r.name: r for r in d.regions},
            "comms": {c.name for c in d.comms},
        }
        for loc, ev in tr.events:
            region = ev.region.name if hasattr(ev, "region") else None
            events[loc.name].append((snake(type(ev).__name__), ev.time, region, ev))
    return defs, events


def read_otf2_print(path):
    """{location name: [(RECORD, time, region or None)]} as otf2-print prints the events."""
    defs = run(["otf2-print", "-G", path / "traces.otf2"]).stdout
    names = {}
    for line in defs.splitlines():
        m = re.match(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)"', line)
        if m:
            names[m.group(1)] = m.group(2)
    out = defaultdict(list)
    cp = run(["otf2-print", path / "traces.otf2"])
    assert "warning" not in cp.stderr.lower() and "error" not in cp.stderr.lower(), cp.stderr
    for line in cp.stdout.splitlines():
        m = re.match(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$", line)
        if not m:
            continue
        rec, loc, t, attrs = m.groups()
        r = re.match(r'Region: "([^"]*)"', attrs)
        out[names[loc]].append((rec, int(t), r.group(1) if r else None))
    return out


@pytest.mark.parametrize("name", ["life", "pingpong", "t_mpi", "queue"])
def test_readers_agree_with_the_text_export(otf2, archives, name):
    path, text = archives[name]
    origin, events, _, _ = text_export(text)
    want = expected_records(origin, events)
    # otf2-print: every event of every location, record, time and region
    printed = read_otf2_print(path)
    assert set(printed) == set(want)
    for label in want:
        assert without_completes(printed[label]) == want[label], label
    # the Python reader: the same
    _, read = read_python(otf2, path)
    assert {k: without_completes([e[:3] for e in v]) for k, v in read.items()} == want
    assert sum(len(v) for v in want.values()) > 0


def without_completes(records):
    return [r for r in records if r[0] != "MPI_ISEND_COMPLETE"]


def test_nonblocking_records_with_their_requests(otf2, archives):
    """life.c on 4 ranks: each generation's MPI_Irecv x2, MPI_Isend x2 and MPI_Waitall were
    written as MPI_SEND and MPI_RECV records with no request. Each MPI_Isend's send is an
    MPI_ISEND, completed by an MPI_ISEND_COMPLETE of its request inside the MPI_Waitall; each
    MPI_Irecv is an MPI_IRECV_REQUEST, its receive in the MPI_Waitall the MPI_IRECV of that
    request: 20 generations, 40 of each record on every rank, no MPI_SEND or MPI_RECV left."""
    path, _ = archives["life"]
    _, read = read_python(otf2, path)
    ranks = sorted(l for l in read if l.endswith(".0"))
    assert ranks == ["0.0", "1.0", "2.0", "3.0"], sorted(read)
    for label in ranks:
        evs = read[label]
        kinds = [e[0] for e in evs]
        counts = {k: kinds.count(k) for k in ("MPI_ISEND", "MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST",
                                              "MPI_IRECV", "MPI_SEND", "MPI_RECV")}
        assert counts == {"MPI_ISEND": 40, "MPI_ISEND_COMPLETE": 40, "MPI_IRECV_REQUEST": 40,
                          "MPI_IRECV": 40, "MPI_SEND": 0, "MPI_RECV": 0}, (label, counts)
        # every request completed once, after it began, inside an MPI_Waitall
        stack, begun = [], {}
        for kind, _, region, ev in evs:
            if kind == "ENTER":
                stack.append(region)
            elif kind == "LEAVE":
                stack.pop()
            elif kind in ("MPI_ISEND", "MPI_IRECV_REQUEST"):
                assert ev.request_id not in begun
                begun[ev.request_id] = kind
            elif kind in ("MPI_ISEND_COMPLETE", "MPI_IRECV"):
                assert begun.pop(ev.request_id) == {"MPI_ISEND_COMPLETE": "MPI_ISEND",
                                                    "MPI_IRECV": "MPI_IRECV_REQUEST"}[kind]
                assert stack[-1] == "MPI_Waitall", (label, stack)
        assert begun == {}, (label, begun)
    # otf2-print reads the same records
    printed = read_otf2_print(path)
    for label in ranks:
        assert [r[0] for r in printed[label]] == [e[0] for e in read[label]]


RING = 5  # starts of each kind in persistent_ring.c


def traced_otf2(impl, root, src, *args):
    """tests/e2e/programs/`src` traced on 4 ranks with `args`, as OTF2 (the archive's path):
    under Open MPI (built with plx-mpicc) or MPICH (built with mpicc.mpich, measured through
    libplx-mpi-mpich.so)."""
    name = Path(src).stem
    exe, exp, out = root / name, root / (name + ".exp"), root / (name + ".otf2")
    src = ROOT / "tests" / "e2e" / "programs" / src
    if impl == "open-mpi":
        require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")
        run([PLX_MPICC, "-O1", "-g", src, "-o", exe])
        mpirun = ["mpirun", "--oversubscribe", "-np", "4"]
        if os.geteuid() == 0:
            mpirun.insert(1, "--allow-run-as-root")
    else:
        require_tools("mpicc.mpich", "mpirun.mpich", what="MPICH (mpicc.mpich, mpirun.mpich)")
        require((ROOT / "build" / "lib" / "libplx-mpi-mpich.so").exists(),
                "libplx-mpi-mpich.so (built by `make all` when mpicc.mpich is installed)")
        run(["mpicc.mpich", "-O1", "-g", src, "-o", exe])
        mpirun = ["mpirun.mpich", "-np", "4"]
    run([*mpirun, PLX, "run", "--trace", "-o", exp, "--", exe, *args], cwd=root,
        timeout=MPI_TIMEOUT)
    plx("export", exp, "--format", "otf2", "-o", out)
    return out


@pytest.fixture(scope="module", params=["open-mpi", "mpich"])
def persistent_ring(request, otf2, tmp_path_factory):
    """persistent_ring.c, RING starts of each kind."""
    return traced_otf2(request.param, tmp_path_factory.mktemp("ring"), "persistent_ring.c", RING)


def test_persistent_requests_are_nonblocking_records(otf2, persistent_ring):
    """persistent_ring.c (Open MPI, MPICH): each rank's MPI_Send_init and MPI_Recv_init requests
    in a ring, started 5 times by MPI_Startall (tag 7) and 5 times by MPI_Start each (tag 8).
    Their sends and receives were MPI_SEND and MPI_RECV records with no request. Each start
    begins a new request: its send an MPI_ISEND, its receive an MPI_IRECV_REQUEST, completed by
    an MPI_ISEND_COMPLETE and an MPI_IRECV of that request in the MPI_Waitall or MPI_Wait; and a
    reader that matches the i-th MPI_ISEND to a rank with the i-th MPI_IRECV from it on the same
    communicator and tag (as Scalasca's does) pairs every message with its own."""
    _, read = read_python(otf2, persistent_ring)
    ranks = sorted(l for l in read if l.endswith(".0"))
    assert ranks == ["0.0", "1.0", "2.0", "3.0"], sorted(read)
    sends, recvs = defaultdict(list), defaultdict(list)
    for label in ranks:
        rank = int(label.split(".")[0])
        evs = read[label]
        kinds = [e[0] for e in evs]
        counts = {k: kinds.count(k) for k in ("MPI_ISEND", "MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST",
                                              "MPI_IRECV", "MPI_SEND", "MPI_RECV")}
        assert counts == {"MPI_ISEND": 2 * RING, "MPI_ISEND_COMPLETE": 2 * RING,
                          "MPI_IRECV_REQUEST": 2 * RING, "MPI_IRECV": 2 * RING,
                          "MPI_SEND": 0, "MPI_RECV": 0}, (label, counts)
        stack, begun, ids, per_start = [], {}, set(), []
        for kind, t, region, ev in evs:
            if kind == "ENTER":
                stack.append(region)
                if region in STARTS:
                    per_start.append([region])
            elif kind == "LEAVE":
                stack.pop()
            elif kind in ("MPI_ISEND", "MPI_IRECV_REQUEST"):
                # begun in a start, a request id never used before on this rank
                assert stack[-1] in STARTS, (label, stack)
                assert ev.request_id not in ids
                ids.add(ev.request_id)
                begun[ev.request_id] = kind
                per_start[-1].append(kind)
                if kind == "MPI_ISEND":
                    assert ev.communicator.name == "MPI_COMM_WORLD"
                    sends[(rank, ev.receiver, ev.msg_tag)].append((ev.msg_length, t))
            elif kind in ("MPI_ISEND_COMPLETE", "MPI_IRECV"):
                assert begun.pop(ev.request_id) == {"MPI_ISEND_COMPLETE": "MPI_ISEND",
                                                    "MPI_IRECV": "MPI_IRECV_REQUEST"}[kind]
                assert stack[-1] in ("MPI_Waitall", "MPI_Wait"), (label, stack)
                if kind == "MPI_IRECV":
                    assert ev.communicator.name == "MPI_COMM_WORLD"
                    recvs[(ev.sender, rank, ev.msg_tag)].append((ev.msg_length, t))
        assert begun == {}, (label, begun)
        # Startall: a send and a receive each; then the receive's MPI_Start, the send's
        assert per_start == (
            [["MPI_Startall", "MPI_IRECV_REQUEST", "MPI_ISEND"]] * RING
            + [["MPI_Start", "MPI_IRECV_REQUEST"], ["MPI_Start", "MPI_ISEND"]] * RING), label
    # matched by communicator, tag and order: 16 doubles each, every receive after its send
    want = {(r, (r + 1) % 4, tag) for r in range(4) for tag in (7, 8)}
    assert set(sends) == want and set(recvs) == want
    for key in want:
        assert [b for b, _ in sends[key]] == [b for b, _ in recvs[key]] == [128] * RING, key
        assert all(ts <= tr for (_, ts), (_, tr) in zip(sends[key], recvs[key])), key
    # otf2-print reads the same records
    printed = read_otf2_print(persistent_ring)
    for label in ranks:
        assert [r[0] for r in printed[label]] == [e[0] for e in read[label]]


@pytest.fixture(scope="module", params=["open-mpi", "mpich"])
def icollectives(request, otf2, tmp_path_factory):
    """waits_mpi.c (its delays 20 ms), whose icoll_nxn and icoll_bcast post an MPI_Iallreduce
    and an MPI_Ibcast (root 2) on every rank and complete them in MPI_Wait and MPI_Waitall."""
    return traced_otf2(request.param, tmp_path_factory.mktemp("icoll"), "waits_mpi.c", 0.02)


def test_nonblocking_collectives_are_requests_completed_in_the_wait(otf2, icollectives):
    """Each rank's MPI_Iallreduce and MPI_Ibcast is a NON_BLOCKING_COLLECTIVE_REQUEST in the
    routine (no MPI_COLLECTIVE_BEGIN/END there: the post is no blocking collective, which a
    reader such as Scalasca's would take for one everybody waited in), completed by a
    NON_BLOCKING_COLLECTIVE_COMPLETE of its request in the MPI_Wait (MPI_Waitall) after it, with
    the operation, the communicator, the root and the bytes of the collective."""
    _, read = read_python(otf2, icollectives)
    ranks = sorted(l for l in read if l.endswith(".0"))
    assert ranks == ["0.0", "1.0", "2.0", "3.0"], sorted(read)
    for label in ranks:
        stack, begun, done = [], {}, []
        for kind, _, region, ev in read[label]:
            if kind == "ENTER":
                stack.append(region)
            elif kind == "LEAVE":
                stack.pop()
            elif kind == "NON_BLOCKING_COLLECTIVE_REQUEST":
                assert ev.request_id not in begun
                begun[ev.request_id] = stack[-1]
            elif kind == "NON_BLOCKING_COLLECTIVE_COMPLETE":
                done.append((begun.pop(ev.request_id), stack[-1], str(ev.collective_op),
                             ev.communicator.name, ev.root, ev.size_sent, ev.size_received))
            elif kind.startswith("MPI_COLLECTIVE"):
                assert not stack[-1].startswith(("MPI_Iallreduce", "MPI_Ibcast")), (label, stack)
        assert begun == {}, (label, begun)
        # an int each (as the blocking ones count): the allreduce sends and receives one, the
        # broadcast's root sends one, the others receive it
        none = 0xFFFFFFFF  # OTF2_COLLECTIVE_ROOT_NONE
        assert done == [
            ("MPI_Iallreduce", "MPI_Wait", "CollectiveOp.ALLREDUCE", "MPI_COMM_WORLD", none, 4, 4),
            ("MPI_Ibcast", "MPI_Waitall", "CollectiveOp.BCAST", "MPI_COMM_WORLD", 2,
             *((4, 0) if label == "2.0" else (0, 4))),
        ], (label, done)
    # otf2-print reads the same records
    printed = read_otf2_print(icollectives)
    for label in ranks:
        assert [r[0] for r in printed[label]] == [e[0] for e in read[label]]


def local(comm, world):
    """The rank in communicator `comm` (as the text export describes it) of world rank `world`:
    OTF2 names peers and roots by their rank in the event's communicator."""
    m = re.match(r"comm of \d+ ranks \[([\d ]+)\]", comm)
    if m:
        return [int(r) for r in m.group(1).split()].index(world)
    if comm.startswith("MPI_COMM_SELF"):
        return 0
    return world


@pytest.mark.parametrize("name", ["life", "pingpong", "t_mpi"])
def test_message_and_collective_details(otf2, archives, name):
    path, text = archives[name]
    _, events, comms, _ = text_export(text)
    _, read = read_python(otf2, path)
    n = 0
    for label, evs in events.items():
        mine = [e[3] for e in read[label]
                if e[0] in ("MPI_SEND", "MPI_ISEND", "MPI_RECV", "MPI_IRECV", "MPI_COLLECTIVE_END")]
        theirs = [e for e in evs if e[0] in ("send", "recv", "collective")]
        assert len(mine) == len(theirs)
        for ev, (k, region, d, _) in zip(mine, theirs):
            n += 1
            comm = comms[d["comm"]]
            assert ev.communicator.name == comm
            if k == "send":
                assert (ev.receiver, ev.msg_tag, ev.msg_length) == \
                    (local(comm, int(d["to"])), int(d["tag"]), int(d["bytes"]))
            elif k == "recv":
                sender = int(d["from"].split(".")[0])  # matched: rank.thread of the sender
                assert (ev.sender, ev.msg_tag, ev.msg_length) == \
                    (local(comm, sender), int(d["tag"]), int(d["bytes"]))
            else:
                assert (ev.size_sent, ev.size_received) == (int(d["sent"]), int(d["received"]))
                if d["root"] != "-":
                    assert ev.root == local(comm, int(d["root"]))
                base = region[4:].lstrip("I") if region.startswith("MPI_I") else region[4:]
                op = str(ev.collective_op).split(".")[-1]
                assert op.replace("_", "").lower() == base.replace("_", "").lower(), (op, region)
    assert n > 0
    if name == "pingpong":
        # 20 round trips of each of two sizes: 40 sends and 40 receives on each of ranks 0, 1
        for label in ("0.0", "1.0"):
            kinds = [e[0] for e in read[label]]
            assert kinds.count("MPI_SEND") == 40 and kinds.count("MPI_RECV") == 40
            sizes = sorted(e[3].msg_length for e in read[label] if e[0] == "MPI_SEND")
            assert sizes == [8] * 20 + [4096] * 20


def test_locks_and_threads(otf2, archives):
    """queue: each mutex acquisition and release is a lock record (lock id = the object, its
    acquisition order counted per lock); each join a ThreadWait matching the joined thread's
    ThreadEnd (same contingent and sequence count)."""
    path, text = archives["queue"]
    _, events, _, _ = text_export(text)
    _, read = read_python(otf2, path)
    orders = defaultdict(list)  # lock -> acquisition orders, over all locations
    ends, waits = {}, []
    for label, evs in events.items():
        mine = [e[3] for e in read[label] if e[0].startswith("THREAD_")]
        theirs = [e for e in evs if e[0] in ("acquire", "release")
                  and e[2]["kind"] in LOCKS + ("thread",)]
        assert len(mine) == len(theirs)
        held = {}
        for ev, (k, _, d, _) in zip(mine, theirs):
            if d["kind"] == "thread":
                key = (ev.thread_contingent.name, ev.sequence_count)
                if k == "release":
                    ends[key] = label
                else:
                    waits.append(key)
                assert ev.sequence_count == int(d["object"])
                continue
            assert ev.lock_id == int(d["object"])
            if k == "acquire":
                orders[ev.lock_id].append(ev.acquisition_order)
                held[ev.lock_id] = ev.acquisition_order
            else:  # a release names the acquisition it ends
                assert ev.acquisition_order == held.pop(ev.lock_id)
    # as many acquisitions per lock as the text export has, numbered 1..N in time order: the
    # queue lock at least once per push and pop (300 x 2 x 2) and per producer's and consumer's
    # end (4; a condition wait's return takes it again), the statistics lock once per thread
    text_acq = defaultdict(int)
    for evs in events.values():
        for k, _, d, _ in evs:
            if k == "acquire" and d["kind"] == "mutex":
                text_acq[int(d["object"])] += 1
    assert {k: len(v) for k, v in orders.items()} == text_acq
    assert min(text_acq.values()) == 4 and max(text_acq.values()) >= 1204
    for v in orders.values():
        assert sorted(v) == list(range(1, len(v) + 1))
    assert len(waits) == 4 and sorted(waits) == sorted(ends)


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_definitions(otf2, archives, name):
    path, text = archives[name]
    defs, _ = read_python(otf2, path)
    origin, events, _, header = text_export(text)
    # regions: every region an event names, under the same name; functions with file and line
    used = {r for evs in events.values() for k, r, _, _ in evs if k in ("enter", "exit")}
    assert used <= set(defs["regions"])
    main = defs["regions"]["main"]
    assert main.source_file.endswith((".c",)) and main.begin_line_number > 0
    assert str(main.paradigm).endswith("COMPILER")
    assert str(defs["regions"]["MPI_Init_thread"].paradigm).endswith("MPI")
    # MPI routines name the file "MPI", as Score-P's do: Scalasca's analyser and Cube know an
    # MPI region by it (without it Scalasca finds no wait state at all)
    mpi = [r for r in defs["regions"].values() if str(r.paradigm).endswith("MPI")]
    assert mpi and all(r.source_file == "MPI" for r in mpi), [r.source_file for r in mpi]
    assert str(defs["regions"]["MPI_Allreduce"].region_role).endswith("COLL_ALL2ALL")
    # system tree: machine > node per host > process (its long name) > locations
    assert any(c == "machine" and p is None for c, p in defs["nodes"].values())
    seen = 0
    for line in header:  # `#   0.1 "worker" (pid 1234 on node1)`: the locations' long names
        m = re.match(r'^#\s+((\d+)\.\d+) "[^"]*" \(pid (\d+) on (\S+)\)$', line)
        if not m:
            continue
        seen += 1
        label, rank, pid, host = m.groups()
        group = defs["locations"][label]  # the process's long name, then the executable
        assert re.fullmatch(rf"{rank} \(pid {pid} on {re.escape(host)}\) \S+", group), group
        assert defs["groups"][group] == host
        assert defs["nodes"][host] == ("node", "machine")
    assert seen == len(defs["locations"]) > 0
    assert "MPI_COMM_WORLD" in defs["comms"]
    # clock: ns, offset at the first event, length the span
    last = max(t for evs in events.values() for *_, t in evs)
    clock = defs["clock"]
    assert clock.timer_resolution == 1_000_000_000
    assert clock.global_offset == origin
    assert clock.trace_length == last


def test_writes_over_an_archive_and_refuses_stdout(archives, experiments, tmp_path):
    path, _ = archives["pingpong"]
    before = read_otf2_print(path)
    plx("export", experiments["pingpong"], "--format", "otf2", "-o", path)
    assert read_otf2_print(path) == before
    cp = run([PLX, "export", experiments["pingpong"], "--format", "otf2", "-o", "-"],
             check=False)
    assert cp.returncode == 2 and "writes a directory" in cp.stderr
