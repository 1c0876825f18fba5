"""MPI under Open MPI's mpirun: both launch forms of plx run, plx comm (rank and thread matrices,
latency/bandwidth fit), the MPI sections of plx report, plx info on MPI runs, the LD_PRELOAD
given to MPI and non-MPI programs, MPI_Abort, and 64 oversubscribed ranks; the most telling of
these (matrix, matching, MPI calls, critical path, MPI_Abort) on MPICH too (tests/e2e/mpi_impls.py).

The MPI programs are the project's own (examples/mpi/life.c and pingpong.c, runtime/tests/t_mpi.c,
whose header comment lists its messages, and t_mpi_abort.c) and programs/mpi_preload.c, built once
per session with `mpicc -g -O1 -finstrument-functions ... -pthread`."""

import csv
import io
import json
import math
import os
import re
import subprocess

import pytest

from conftest import (
    DOCS,
    LIBPLX,
    PLX,
    PROGRAMS,
    ROOT,
    RUNTIME_REGIONS,
    _fail_message,
    clean_env,
    functions_of,
    have,
    info,
    plx,
    process_dirs,
    report_csv,
    report_json,
    run,
)
from components import require
from mpi_impls import IMPLS
import twohosts
import plx_codec
from plx_schema import RECORD_IDS

pytestmark = pytest.mark.usefixtures("open_mpi")

LIBPLX_REAL = str(LIBPLX.resolve())
LIBPLX_MPI_REAL = str(LIBPLX.with_name("libplx-mpi.so").resolve())

MPI_SOURCES = {
    "life": ROOT / "examples" / "mpi" / "life.c",
    "pingpong": ROOT / "examples" / "mpi" / "pingpong.c",
    "t_mpi": ROOT / "runtime" / "tests" / "t_mpi.c",
    "t_mpi_abort": ROOT / "runtime" / "tests" / "t_mpi_abort.c",
    "mpi_preload": PROGRAMS / "mpi_preload.c",
    "killed_rank": PROGRAMS / "killed_rank.c",
}

# Seconds an mpirun may take before the test is failed rather than left hanging.
MPIRUN_TIMEOUT = 300


# ---------------------------------------------------------------------------------------------
# helpers


class MpiPrograms:
    """Builds each MPI program once per session with mpicc into a temporary directory."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def get(self, name):
        if name not in self.cache:
            out = self.root / name
            cmd = ["mpicc", "-g", "-O1", "-finstrument-functions", str(MPI_SOURCES[name]),
                   "-o", str(out), "-pthread"]
            cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
            assert cp.returncode == 0, _fail_message(cp)
            self.cache[name] = out
        return self.cache[name]


@pytest.fixture(scope="session")
def mpi_programs(tmp_path_factory):
    return MpiPrograms(tmp_path_factory.mktemp("mpi-bin"))


def mpirun_cmd(np, *command, mca=()):
    """`mpirun --oversubscribe [--allow-run-as-root] [--mca K V]... -np NP COMMAND...`"""
    cmd = ["mpirun", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for key, value in mca:
        cmd += ["--mca", key, str(value)]
    return cmd + ["-np", str(np), *(str(c) for c in command)]


def mpirun(np, *command, mca=(), status=0):
    cp = subprocess.run(
        mpirun_cmd(np, *command, mca=mca),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=MPIRUN_TIMEOUT,
    )
    if status is not None:
        assert cp.returncode == status, _fail_message(cp)
    return cp


def plx_under_mpirun(np, out, *command, opts=(), mca=(), status=0):
    """`mpirun -np NP plx run -o OUT OPTS -- COMMAND...`: one plx run per rank."""
    return mpirun(np, PLX, "run", "-o", out, *opts, "--", *command, mca=mca, status=status)


def plx_around_mpirun(np, out, *command, opts=()):
    """`plx run -o OUT OPTS -- mpirun -np NP COMMAND...`: plx run measures the launcher."""
    return run(out, *mpirun_cmd(np, *command), opts=opts)


def comm_rows(directory, *extra, check=True):
    """`plx comm DIR --format csv EXTRA...`: (CSV header, rows, CompletedProcess)."""
    cp = plx("comm", directory, "--format", "csv", *extra, check=check)
    lines = cp.stdout.splitlines()
    header = lines[0] if lines else ""
    return header, list(csv.DictReader(io.StringIO(cp.stdout))), cp


def _location_key(text):
    return tuple(int(x) for x in text.split("."))


def comm_matrix(directory, *extra):
    """{(sender, receiver): (messages, bytes)} of `plx comm DIR --format csv`; ranks as ints
    (or "rank.thread" strings with --by thread). Checks the header and the row order."""
    header, rows, _ = comm_rows(directory, *extra)
    assert header == "sender,receiver,messages,bytes"
    keys = [(r["sender"], r["receiver"]) for r in rows]
    order = [(_location_key(s), _location_key(r)) for s, r in keys]
    assert order == sorted(order), "rows not by sender then receiver: %r" % keys
    assert len(set(keys)) == len(keys), "a pair twice: %r" % keys
    by_thread = "thread" in extra
    out = {}
    for r in rows:
        s, d = (r["sender"], r["receiver"]) if by_thread else (int(r["sender"]), int(r["receiver"]))
        out[(s, d)] = (int(r["messages"]), int(r["bytes"]))
        assert out[(s, d)][0] > 0, r
    return out


def ring(nranks, messages, size):
    """The life halo exchange: each rank sends MESSAGES rows of SIZE bytes to r+1 and r-1."""
    out = {}
    for r in range(nranks):
        for peer in ((r + 1) % nranks, (r - 1) % nranks):
            out[(r, peer)] = (messages, messages * size)
    return out


def csv_name(proc):
    """The CSV `process` of a JSON process: the pid, `pid.N` for the image after an exec()."""
    return str(proc["pid"]) if proc["image"] == 0 else "%d.%d" % (proc["pid"], proc["image"])


def ranks_of(doc):
    """{rank: process} of a JSON report; every reported process must be a rank."""
    out = {}
    for p in doc["processes"]:
        assert p["rank"] is not None, "process %s (%s) is not a rank" % (p["pid"], p["argv"])
        assert p["rank"] not in out, "rank %d twice" % p["rank"]
        out[p["rank"]] = p
    return out


def calls_by_rank(directory):
    """{rank: {function: calls}} from `plx report DIR --by process --format csv`."""
    doc = report_json(directory)
    rank_of = {csv_name(p): p["rank"] for p in doc["processes"]}
    out = {}
    for r in report_csv(directory, "--by", "process"):
        if r["process"] == "all":
            continue
        assert r["thread"] == "all"
        fns = out.setdefault(rank_of[r["process"]], {})
        assert r["function"] not in fns, r
        fns[r["function"]] = int(r["calls"])
    return out


def mpi_calls(fns):
    return {f: n for f, n in fns.items() if f.startswith("MPI_")}


def info_sections(text):
    """plx info output as (header, {rank: block}, [not measured blocks], warnings text)."""
    body, sep, warnings = text.partition("\nwarnings:")
    assert sep, "no warnings section in plx info:\n" + text[-2000:]
    parts = re.split(r"(?m)^(?=process \S+ \()", body)
    header, ranks, unmeasured = parts[0], {}, []
    for block in parts[1:]:
        m = re.search(r"(?m)^\s+rank\s+(\d+) of \d+", block)
        if m:
            assert int(m.group(1)) not in ranks
            ranks[int(m.group(1))] = block
        elif "not measured (no instrumented code)" in block.splitlines()[0]:
            unmeasured.append(block)
        else:
            raise AssertionError("process block neither a rank nor not measured:\n" + block)
    return header, ranks, unmeasured, warnings


def ended(block):
    m = re.search(r"(?m)^\s+ended\s+(.*?)\s*$", block)
    assert m, block
    return m.group(1)


def no_trace_message(directory):
    return "plx: %s: no trace: this needs the MPI ranks' traces; rerun with `plx run --trace`" % directory


# ---------------------------------------------------------------------------------------------
# 1. Game of Life on 4 ranks x (main + 2 workers), both launch forms

LIFE_STEPS, LIFE_SIZE, LIFE_THREADS, LIFE_RANKS = 10, 64, 2, 4


@pytest.fixture(scope="module")
def life_exps(mpi_programs, exp_root):
    life = mpi_programs.get("life")
    args = (life, LIFE_STEPS, LIFE_SIZE, LIFE_THREADS)
    inner = exp_root / "life-mpirun-plx"
    cp = plx_under_mpirun(LIFE_RANKS, inner, *args)
    assert "population" in cp.stdout
    outer = exp_root / "life-plx-mpirun"
    cp = plx_around_mpirun(LIFE_RANKS, outer, *args)
    assert "population" in cp.stdout
    return {"mpirun-plx": inner, "plx-mpirun": outer}


@pytest.fixture(params=["mpirun-plx", "plx-mpirun"])
def life_exp(request, life_exps):
    return life_exps[request.param]


def test_life_report_ranks_and_threads(life_exp):
    doc = report_json(life_exp)
    assert doc["warnings"] == []
    ranks = ranks_of(doc)
    assert sorted(ranks) == list(range(LIFE_RANKS))
    assert [p["rank"] for p in doc["processes"]] == list(range(LIFE_RANKS))  # ranks first, by rank
    for rank, p in ranks.items():
        assert p["finished"] is True
        assert p["executable"].endswith("/life")
        assert p["mpi"]["rank"] == rank and p["mpi"]["size"] == LIFE_RANKS
        assert p["mpi"]["thread_level"] == "funneled"
        threads = p["threads"]
        assert sorted(t["name"] for t in threads) == ["life_worker"] * LIFE_THREADS + ["main"]
        assert sorted(t["thread"] for t in threads) == list(range(LIFE_THREADS + 1))
        for t in threads:
            fns = functions_of(t)
            if t["name"] == "main":
                assert fns["MPI_Isend"]["calls"] == 2 * LIFE_STEPS
                assert fns["MPI_Irecv"]["calls"] == 2 * LIFE_STEPS
                assert fns["MPI_Waitall"]["calls"] == LIFE_STEPS
                assert fns["MPI_Allreduce"]["calls"] == LIFE_STEPS
                assert fns["MPI_Init_thread"]["calls"] == 1
                assert fns["MPI_Finalize"]["calls"] == 1
                assert fns["exchange_halos"]["calls"] == LIFE_STEPS
                assert fns["MPI_Isend"]["kind"] == "mpi"
            else:
                assert fns["life_worker"]["calls"] == 1
                assert fns["update_rows"]["calls"] == LIFE_STEPS
                assert not [f for f in fns if f.startswith("MPI_")]
    total = functions_of(doc["total"])
    assert total["MPI_Isend"]["calls"] == 2 * LIFE_STEPS * LIFE_RANKS
    assert doc["mpi"]["ranks"] == LIFE_RANKS
    routines = {r["routine"]: r["calls"] for r in doc["mpi"]["routines"]}
    assert routines["MPI_Isend"] == routines["MPI_Irecv"] == 2 * LIFE_STEPS * LIFE_RANKS
    messages = {(m["sender"], m["receiver"]): (m["messages"], m["bytes"]) for m in doc["mpi"]["messages"]}
    assert messages == ring(LIFE_RANKS, LIFE_STEPS, LIFE_SIZE)


def test_life_world_lists_no_ranks(life_exp):
    """Each rank's file defines MPI_COMM_WORLD without listing its ranks (format version 3: a
    process's file does not grow with the job) and MPI_COMM_SELF with its own rank; the model
    lists the world's members, as plx comm --format json shows."""
    seen = 0
    # each exec image has its file (process.N.plx: the rank that orted or hydra exec'ed)
    for f in sorted(f for d in process_dirs(life_exp) for f in d.glob("process*.plx")):
        _, records = plx_codec.read_file(f)
        decoded = [plx_codec.decode(t, p) for t, p in records]
        ranks = [r["rank"] for t, r in zip(records, decoded) if t[0] == RECORD_IDS["MpiInit"]]
        if not ranks:  # mpirun, or a process before its exec
            continue
        rank = ranks[0]
        comms = {r["comm"]: r for t, r in zip(records, decoded) if t[0] == RECORD_IDS["CommDef"]}
        assert (comms[0]["size"], comms[0]["ranks"]) == (0, [])
        if 1 in comms:
            assert comms[1]["ranks"] == [rank]
        seen += 1
    assert seen == LIFE_RANKS
    doc = json.loads(plx("comm", life_exp, "--format", "json").stdout)
    world = [c for c in doc["communicators"] if c["name"] == "MPI_COMM_WORLD"]
    assert [c["members"] for c in world] == [list(range(LIFE_RANKS))]


def test_life_launch_forms_agree(life_exps):
    inner, outer = life_exps["mpirun-plx"], life_exps["plx-mpirun"]
    assert plx("comm", inner, "--format", "csv").stdout == plx("comm", outer, "--format", "csv").stdout

    def profile(directory):
        out = {}
        for rank, p in ranks_of(report_json(directory)).items():
            out[rank] = sorted(
                (t["name"], sorted((f["function"], f["calls"]) for f in t["functions"]
                                   if f["function"] not in RUNTIME_REGIONS))
                for t in p["threads"]
            )
        return out

    assert profile(inner) == profile(outer)
    assert {r: mpi_calls(f) for r, f in calls_by_rank(inner).items()} == {
        r: mpi_calls(f) for r, f in calls_by_rank(outer).items()
    }


def test_life_launcher_not_reported(life_exps):
    """Under `plx run -- mpirun`, mpirun is measured but has no instrumented code: it is not in
    the report's processes, rows or MPI sections; plx info names it as not measured."""
    outer = life_exps["plx-mpirun"]
    doc = report_json(outer)
    ranks = ranks_of(doc)  # every reported process is a rank
    assert len(ranks) == LIFE_RANKS
    assert all(p["executable"].endswith("/life") for p in ranks.values())
    launchers = [p for p in doc["not_measured"] if os.path.basename(p["argv"][0]) == "mpirun"]
    assert launchers, doc["not_measured"]
    reported = {csv_name(p) for p in ranks.values()}
    assert {r["process"] for r in report_csv(outer)} == reported | {"all"}
    cp = plx("report", outer)
    assert "mpirun" not in cp.stderr
    # each table is headed by its location, pid included: only the ranks' pids
    heads = re.findall(r'(?m)^\S+(?: "[^"]*")? \(pid (\d+)(?::\d+)? on \S+\)$', cp.stdout)
    assert heads and {int(p) for p in heads} <= {p["pid"] for p in ranks.values()}, heads
    # mpirun and the helpers it forks (same command line): one line listing their pids
    lines = [line for line in cp.stdout.splitlines() if line.startswith("not measured")]
    assert len(lines) == 1, lines
    pids = ", ".join(str(p["pid"]) for p in launchers)
    assert re.match(r"not measured \(no instrumented code\): process(es)? %s \(\S+\) mpirun "
                    % pids, lines[0]), (lines, pids)
    text = info(outer).stdout
    header, info_ranks, unmeasured, _ = info_sections(text)
    assert sorted(info_ranks) == list(range(LIFE_RANKS))
    assert re.search(r"(?m)^\d+ process\(es\) not measured \(no instrumented code\)$", header)
    assert any(
        block.startswith("process %d (pid %d on " % (launchers[0]["pid"], launchers[0]["pid"]))
        and re.search(r"(?m)^\s+argv\s+mpirun ", block)
        for block in unmeasured
    ), unmeasured
    # the form with mpirun outside plx run has no such process
    inner = life_exps["mpirun-plx"]
    assert report_json(inner)["not_measured"] == []
    header, _, unmeasured, warnings = info_sections(info(inner).stdout)
    assert unmeasured == [] and "not measured" not in header
    assert warnings.strip() == "none"


# ---------------------------------------------------------------------------------------------
# 2. t_mpi: wildcards, persistent and nonblocking requests, split communicators, threads,
#    collectives, on 4 ranks


def t_mpi_header():
    """The message totals per rank pair and the collectives per rank of t_mpi.c's header comment."""
    text = MPI_SOURCES["t_mpi"].read_text()
    comment = text[text.index("/*"):text.index("*/")]
    totals = re.search(r"Totals:(.*?)\.", comment, re.S).group(1)
    pairs = {(int(a), int(b)): int(n) for a, b, n in re.findall(r"(\d+)->(\d+) (\d+)", totals)}
    colls = re.search(r"Collectives per rank:(.*?)\.", comment, re.S).group(1)
    collectives = {"MPI_" + name: int(n) for name, n in re.findall(r"(\w+) (\d+)", colls)}
    assert len(pairs) == 9 and sum(pairs.values()) == 55, pairs
    assert collectives == {"MPI_Barrier": 3, "MPI_Bcast": 3, "MPI_Allreduce": 4, "MPI_Gather": 1,
                           "MPI_Alltoall": 1}, collectives
    return pairs, collectives


# Bytes of each pair, from t_mpi.c: wildcard 5 x 4 ints (16 B) to rank 0; persistent 7 x 8
# doubles (64 B) each way 0 <-> 1; split 3 x 1 int 0 -> 2 and 1 -> 3; Isend 4 x 1 long (8 B)
# 2 -> 3; threads 12 x 1 int 3 -> 2; ring 1 int r -> r+1.
T_MPI_BYTES = {
    (0, 1): 7 * 64 + 4,
    (1, 0): 5 * 16 + 7 * 64,
    (1, 2): 4,
    (2, 0): 5 * 16,
    (2, 3): 4 * 8 + 4,
    (3, 0): 5 * 16 + 4,
    (0, 2): 3 * 4,
    (1, 3): 3 * 4,
    (3, 2): 12 * 4,
}

# Point-to-point and request routines each rank calls, from t_mpi.c (MPI_Testsome on rank 3
# is called until the last Irecv completes: at least once, how often depends on timing).
T_MPI_P2P_CALLS = {
    0: {"MPI_Recv": 15, "MPI_Send": 3, "MPI_Send_init": 1, "MPI_Recv_init": 1, "MPI_Startall": 7,
        "MPI_Waitall": 7, "MPI_Request_free": 2, "MPI_Sendrecv": 1},
    1: {"MPI_Send": 5 + 3, "MPI_Send_init": 1, "MPI_Recv_init": 1, "MPI_Startall": 7,
        "MPI_Waitall": 7, "MPI_Request_free": 2, "MPI_Sendrecv": 1},
    2: {"MPI_Send": 5, "MPI_Recv": 3 + 12, "MPI_Isend": 4, "MPI_Waitall": 1, "MPI_Sendrecv": 1},
    3: {"MPI_Send": 5 + 12, "MPI_Recv": 3, "MPI_Irecv": 4, "MPI_Waitany": 1, "MPI_Sendrecv": 1},
}
T_MPI_EVERY_RANK = {"MPI_Init_thread": 1, "MPI_Finalize": 1, "MPI_Comm_split": 1, "MPI_Comm_free": 1}


@pytest.fixture(scope="module")
def t_mpi_exps(mpi_programs, exp_root):
    prog = mpi_programs.get("t_mpi")
    exps = {}
    for mode, opts in {"profile": (), "trace": ("--trace",)}.items():
        out = exp_root / ("t_mpi-" + mode)
        plx_under_mpirun(4, out, prog, opts=opts)
        exps[mode] = out
    return exps


@pytest.fixture(params=["profile", "trace"])
def t_mpi_exp(request, t_mpi_exps):
    return t_mpi_exps[request.param]


# The placeholders of the location forms the docs write (`N.T "NAME" (pid P on HOST)`).
DOC_PLACEHOLDERS = {"N": r"\d+", "T": r"\d+", "NAME": r'[^"]*', "HOST": r"\S+"}


def location_form_regex(form):
    """A documented location heading as a regex: its placeholders (DOC_PLACEHOLDERS) for
    what they stand for, and its pid and host, given or not, for any pid (`P`, `P:I`) and
    host: `0.0 "main" (pid 14376:1 on vm)` matches `0.0 "main" (pid 812 on node1)`."""
    head, pid = form.split(" (pid ", 1)
    assert re.fullmatch(r"[\w:]+ on \w+\)", pid), form
    words = [DOC_PLACEHOLDERS.get(w, re.escape(w)) for w in re.split(r"([A-Z]+)", head)]
    return "".join(words) + r" \(pid \d+(?::\d+)? on \S+\)"


def documented_location_forms():
    """The location headings docs/mpi.md and docs/commands/plx-report.md show: the forms in
    backquotes, and the heading lines of docs/mpi.md's example."""
    forms = set()
    for page in (DOCS / "mpi.md", DOCS / "commands" / "plx-report.md"):
        text = page.read_text().replace("\n", " ")
        forms |= set(re.findall(r"`([^`]*? \(pid [^`]*\))`", text))
    example = (DOCS / "mpi.md").read_text()
    forms |= set(re.findall(r'(?m)^(\S+(?: "[^"]*")? \(pid \S+ on \S+\))$', example))
    return forms


def test_documented_location_names_are_what_plx_prints(t_mpi_exps):
    """Each rank's heading as docs/mpi.md and docs/commands/plx-report.md show it (a thread
    `0.0 "main" (pid P on HOST)`, a process `0 (pid P on HOST)`, `process 0 (...)` in plx info)
    is a line plx report, plx report --by process or plx info prints for t_mpi's 4 ranks."""
    exp = t_mpi_exps["trace"]
    printed = "".join(plx(*args).stdout for args in
                      (("report", exp), ("report", exp, "--by", "process"), ("info", exp)))
    lines = {line.strip() for line in printed.splitlines()}
    forms = documented_location_forms()
    for form in sorted(forms):
        regex = location_form_regex(form)
        assert any(re.fullmatch(regex, line) for line in lines), (form, regex, printed)
    assert {'N.T "NAME" (pid P on HOST)', "N (pid P on HOST)", "process N (pid P on HOST)",
            "N (pid PID on HOST)"} <= forms, forms


def test_t_mpi_comm_matrix(t_mpi_exp):
    pairs, _ = t_mpi_header()
    expected = {pair: (n, T_MPI_BYTES[pair]) for pair, n in pairs.items()}
    assert comm_matrix(t_mpi_exp) == expected
    doc = json.loads(plx("comm", t_mpi_exp, "--format", "json").stdout)
    assert doc["total"] == {"messages": 55, "bytes": sum(T_MPI_BYTES.values())}
    assert doc["warnings"] == []
    assert doc["locations"] == [0, 1, 2, 3]


def test_t_mpi_comm_by_thread(t_mpi_exps):
    exp = t_mpi_exps["trace"]
    pairs, _ = t_mpi_header()
    by_thread = comm_matrix(exp, "--by", "thread")
    # summed over threads: the rank matrix
    summed = {}
    for (s, d), (n, b) in by_thread.items():
        key = (int(s.split(".")[0]), int(d.split(".")[0]))
        m0, b0 = summed.get(key, (0, 0))
        summed[key] = (m0 + n, b0 + b)
    assert summed == {pair: (n, T_MPI_BYTES[pair]) for pair, n in pairs.items()}
    # rank 3's two sender threads send 6 ints each to rank 2; every receive is in a main thread
    rank3 = ranks_of(report_json(exp))[3]
    senders = sorted(t["thread"] for t in rank3["threads"] if t["name"] == "sender")
    assert len(senders) == 2 and 0 not in senders
    for t in senders:
        assert by_thread[("3.%d" % t, "2.0")] == (6, 24)
    assert ("3.0", "2.0") not in by_thread
    assert by_thread[("3.0", "0.0")] == (6, 84)
    assert {d for _, d in by_thread} == {"0.0", "1.0", "2.0", "3.0"}
    assert {s for s, _ in by_thread} == {"0.0", "1.0", "2.0", "3.0"} | {"3.%d" % t for t in senders}
    doc = json.loads(plx("comm", exp, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace"
    assert doc["matched"] == 55
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}


def test_t_mpi_by_thread_needs_trace(t_mpi_exps):
    exp = t_mpi_exps["profile"]
    for extra in (("--by", "thread"), ("--fit",)):
        cp = plx("comm", exp, *extra, check=False)
        assert cp.returncode == 2, _fail_message(cp)
        assert no_trace_message(exp) in cp.stderr.splitlines(), cp.stderr


def test_t_mpi_info(t_mpi_exp):
    traced = t_mpi_exp.name.endswith("trace")
    text = info(t_mpi_exp).stdout
    header, ranks, unmeasured, warnings = info_sections(text)
    # communicators: MPI_COMM_WORLD, each rank's MPI_COMM_SELF, the two parity halves
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, 7 communicator\(s\), %d rank\(s\) traced$"
                     % (4 if traced else 0), header), header
    if traced:
        assert re.search(r"(?m)^messages in the traces: 55 matched, 0 sends never received, "
                         r"0 receives without a send, 48 collective events$", header), header
    else:
        assert "messages in the traces" not in header
    assert sorted(ranks) == [0, 1, 2, 3] and unmeasured == []
    for rank, block in ranks.items():
        assert re.search(r"(?m)^\s+rank\s+%d of 4 \(thread level multiple\)$" % rank, block)
        assert ended(block) == "exited with status 0"
        # WORLD, SELF, and the rank's parity half
        assert re.search(r"(?m)^\s+communicators\s+3$", block), block
    assert warnings.strip() == "none"
    assert "unmatched" not in text


def test_t_mpi_calls_per_rank(t_mpi_exp):
    _, collectives = t_mpi_header()
    by_rank = calls_by_rank(t_mpi_exp)
    assert sorted(by_rank) == [0, 1, 2, 3]
    for rank, fns in by_rank.items():
        got = mpi_calls(fns)
        if rank == 3:
            assert got.pop("MPI_Testsome", 0) >= 1
        assert got == {**T_MPI_P2P_CALLS[rank], **T_MPI_EVERY_RANK, **collectives}, rank
    # collectives are not point-to-point messages, but each rank counts its calls of each
    doc = report_json(t_mpi_exp, "--by", "process")
    for rank, p in ranks_of(doc).items():
        coll = {}
        for m in p["mpi"]["messages"]:
            if m["peer"] is None:
                coll[(m["routine"], m["direction"])] = m["count"]
        assert coll == {(r, d): n for r, n in collectives.items() for d in ("sent", "received")}, rank
    # rank 3's sender threads: 6 MPI_Send each
    rank3 = ranks_of(report_json(t_mpi_exp))[3]
    sends = sorted(functions_of(t)["MPI_Send"]["calls"] for t in rank3["threads"] if t["name"] == "sender")
    assert sends == [6, 6]


# ---------------------------------------------------------------------------------------------
# 3 and 4. Ping-pong on 2 ranks: latency/bandwidth fit, MPI sections of plx report

PP_ITERATIONS = 50
PP_SIZES = (8, 1024, 65536, 1048576)
PP_MESSAGES = PP_ITERATIONS * len(PP_SIZES)  # each way
PP_BYTES = PP_ITERATIONS * sum(PP_SIZES)


@pytest.fixture(scope="module")
def pingpong_exps(mpi_programs, exp_root):
    prog = mpi_programs.get("pingpong")
    exps = {}
    for mode, opts in {"profile": (), "trace": ("--trace",)}.items():
        out = exp_root / ("pingpong-" + mode)
        cp = plx_under_mpirun(2, out, prog, PP_ITERATIONS, *PP_SIZES, opts=opts)
        assert cp.stdout.count("per round trip") == len(PP_SIZES), cp.stdout
        exps[mode] = out
    return exps


@pytest.fixture(params=["profile", "trace"])
def pingpong_exp(request, pingpong_exps):
    return pingpong_exps[request.param]


def test_pingpong_fit(pingpong_exps):
    exp = pingpong_exps["trace"]
    header, rows, cp = comm_rows(exp, "--fit")
    assert header == "sender,receiver,messages,latency_us,bandwidth_MBps,time_per_byte_us,r2,note"
    assert [(r["sender"], r["receiver"]) for r in rows] == [("0", "1"), ("1", "0")]
    for r in rows:
        assert int(r["messages"]) == PP_MESSAGES
        # timings on a shared VM: sanity only. The latency is the fit's intercept, which noise in
        # the 1 MB transfers can push below zero: it must be a number, its sign is not checked.
        latency = float(r["latency_us"])
        assert math.isfinite(latency)
        assert float(r["bandwidth_MBps"]) > 0
        assert float(r["time_per_byte_us"]) > 0
        assert 0 <= float(r["r2"]) <= 1
        assert re.fullmatch(r"-?\d+\.\d{3}", r["latency_us"]) and re.fullmatch(r"\d+\.\d{3}", r["bandwidth_MBps"])
        assert re.fullmatch(r"\d+\.\d{6}", r["time_per_byte_us"]) and re.fullmatch(r"\d+\.\d{6}", r["r2"])
    doc = json.loads(plx("comm", exp, "--fit", "--format", "json").stdout)
    assert doc["matched"] == 2 * PP_MESSAGES
    assert doc["unmatched"]["sends"] == 0 and doc["unmatched"]["receives"] == 0
    assert [(f["sender"], f["receiver"], f["messages"]) for f in doc["fit"]] == [
        (0, 1, PP_MESSAGES), (1, 0, PP_MESSAGES)]
    assert all(f["mean_transfer_us"] > 0 for f in doc["fit"])
    # a fit a real run gives is flagged exactly when its numbers say so (a negative intercept
    # from noise in the 1 MB transfers, a latency above twice the 8-byte messages' own times)
    for f, r in zip(doc["fit"], rows):
        expected = [code for code, holds in (
            ("low_r2", f["r2"] < 0.5),
            ("negative_latency", f["latency_us"] < 0),
            ("negative_bandwidth", f["bandwidth_MBps"] is None),
            ("latency_above_smallest", f["latency_us"] > 2 * f["smallest_median_us"]),
        ) if holds]
        assert f["notes"] == expected, f
        assert r["note"] == ";".join(expected), (r, f)
        assert f["meaningful"] == (not expected)
        assert f["smallest_bytes"] == min(PP_SIZES), f
    text = info(exp).stdout
    assert re.search(r"(?m)^messages in the traces: %d matched, 0 sends never received, "
                     r"0 receives without a send, \d+ collective events$" % (2 * PP_MESSAGES), text)


def test_fit_without_trace(pingpong_exps):
    exp = pingpong_exps["profile"]
    for fmt in ("text", "csv", "json"):
        cp = plx("comm", exp, "--fit", "--format", fmt, check=False)
        assert cp.returncode == 2, _fail_message(cp)
        assert no_trace_message(exp) in cp.stderr.splitlines(), cp.stderr
        assert cp.stdout == ""


PP_ROUTINES = {"MPI_Init": 1, "MPI_Finalize": 1, "MPI_Barrier": len(PP_SIZES),
               "MPI_Send": PP_MESSAGES, "MPI_Recv": PP_MESSAGES}


def test_pingpong_report_csv(pingpong_exp):
    by_rank = calls_by_rank(pingpong_exp)
    assert sorted(by_rank) == [0, 1]
    for rank, fns in by_rank.items():
        assert mpi_calls(fns) == PP_ROUTINES, rank
        assert fns["exchange"] == len(PP_SIZES)
    rows = report_csv(pingpong_exp)
    totals = {r["function"]: int(r["calls"]) for r in rows if r["process"] == "all"}
    assert mpi_calls(totals) == {f: 2 * n for f, n in PP_ROUTINES.items()}
    assert list(rows[0]) == ["process", "thread", "function", "calls", "child_calls", "exclusive_s",
                             "inclusive_s", "thread_name", "host", "cpu_s"]
    kinds = {f["function"]: f["kind"] for f in report_json(pingpong_exp)["total"]["functions"]}
    assert {f for f, k in kinds.items() if k == "mpi"} == set(PP_ROUTINES)


ROUTINE_LINE = re.compile(r"^\s+(MPI_\w+)\s+(\d+)\s+[\d.]+ [mun]?s\s+[\d.]+\s*$")
MESSAGE_LINE = re.compile(r"^\s+(\S+)\s+(\d+)\s+(\d+)\s+([\d.]+ (?:[KMG]i)?B)\s+(\d+)\s+([\d.]+)\s+(\d+)\s*$")


@pytest.mark.parametrize("by", ["thread", "process"])
def test_pingpong_report_text_mpi_sections(pingpong_exp, by):
    text = plx("report", pingpong_exp, "--by", by).stdout
    total_at = text.index("\ntotal (all processes, all threads)\n")
    mpi_at = text.index("\ntime in MPI\n")
    msg_at = text.index("\nmessages (point-to-point, as counted by the senders; sizes in bytes)\n")
    assert total_at < mpi_at < msg_at
    mpi_section = text[mpi_at:msg_at].splitlines()
    loc_lines = [line.strip() for line in mpi_section if re.match(r"^\s+(\d\S* (\"main\" )?\(pid|all\s)", line)]
    name = r'%d.0 "main"' if by == "thread" else "%d"
    assert len(loc_lines) == 3, mpi_section
    for rank, line in enumerate(loc_lines[:2]):
        assert re.match(r'^%s \(pid \d+ on \S+\)\s+[\d.]+ [mun]?s\s+[\d.]+$' % (name % rank), line), line
    assert re.match(r"^all\s+[\d.]+ [mun]?s\s+[\d.]+$", loc_lines[2]), loc_lines[2]
    routines = {}
    for line in mpi_section:
        m = ROUTINE_LINE.match(line)
        if m:
            routines[m.group(1)] = int(m.group(2))
    assert routines == {f: 2 * n for f, n in PP_ROUTINES.items()}
    messages = [MESSAGE_LINE.match(line).groups() for line in text[msg_at + 1:].splitlines()[2:] if line.strip()]
    sender = "%d.0" if by == "thread" else "%d"
    mean = "%.1f" % (PP_BYTES / PP_MESSAGES)
    assert messages == [
        # sizes in powers of 1024, as plx run reads them: PP_BYTES / 2**20
        (sender % 0, "1", str(PP_MESSAGES), "%.1f MiB" % (PP_BYTES / 2**20), "8", mean, "1048576"),
        (sender % 1, "0", str(PP_MESSAGES), "%.1f MiB" % (PP_BYTES / 2**20), "8", mean, "1048576"),
    ]


# ---------------------------------------------------------------------------------------------
# 5. The LD_PRELOAD a program is given


def preload_entries(value):
    entries = value.split(":")
    assert all(os.path.isabs(e) for e in entries), value
    return entries


def test_non_mpi_program_preload(programs, tmp_path):
    prog = programs.get("print_preload.c", "-O0")
    out = tmp_path / "preload"
    cp = run(out, prog)
    (line,) = [l for l in cp.stdout.splitlines() if l.startswith("LD_PRELOAD=")]
    entries = preload_entries(line[len("LD_PRELOAD="):])
    assert entries == [LIBPLX_REAL]
    assert not any(os.path.basename(e) == "libplx-mpi.so" for e in entries)
    # and nothing MPI in its experiment
    doc = report_json(out)
    (proc,) = doc["processes"]
    assert proc["rank"] is None and "mpi" not in doc
    assert "MPI:" not in info(out).stdout
    assert "time in MPI" not in plx("report", out).stdout


def _rank_preloads(stdout, nranks):
    found = dict(re.findall(r"(?m)^rank (\d+) LD_PRELOAD=(.*)$", stdout))
    assert sorted(found) == [str(r) for r in range(nranks)], stdout
    return [preload_entries(found[str(r)]) for r in range(nranks)]


@pytest.mark.parametrize("form", ["mpirun-plx", "plx-mpirun"])
def test_mpi_program_preload(mpi_programs, tmp_path, form):
    prog = mpi_programs.get("mpi_preload")
    out = tmp_path / form
    if form == "mpirun-plx":
        cp = plx_under_mpirun(2, out, prog)
    else:
        cp = plx_around_mpirun(2, out, prog)
    for entries in _rank_preloads(cp.stdout, 2):
        assert entries[0] == LIBPLX_REAL  # plx run's runtime first (plx-run.md)
        assert sorted(entries) == sorted([LIBPLX_REAL, LIBPLX_MPI_REAL])
    # the wrappers measured the ranks
    assert comm_matrix(out) == {(0, 1): (1, 4)}
    assert sorted(ranks_of(report_json(out))) == [0, 1]


# ---------------------------------------------------------------------------------------------
# 6. MPI_Abort: rank 2 aborts with code 7 after every rank sent 2 messages to the next one

ABORT_RING = {(r, (r + 1) % 4): (2, 8) for r in range(4)}


def live_files(directory):
    return sorted(p for p in directory.glob("*/live.*"))


@pytest.fixture(scope="module")
def abort_exp(mpi_programs, exp_root):
    """`mpirun -np 4 plx run -o DIR -- ./t_mpi_abort`, mpirun's defaults: the other ranks get
    SIGTERM, then SIGKILL soon after; some may be killed before they wrote their data."""
    out = exp_root / "abort"
    cp = plx_under_mpirun(4, out, mpi_programs.get("t_mpi_abort"), status=None)
    return out, cp


@pytest.fixture(scope="module")
def abort_killed_exp(mpi_programs, exp_root):
    """SIGKILL right after SIGTERM (odls_base_sigkill_timeout 0): at least one rank is killed
    before it writes its profile or message statistics, which remain in its live files.
    Retried (at most 3 runs) until some rank did leave live files."""
    for attempt in range(3):
        out = exp_root / ("abort-killed-%d" % attempt)
        cp = plx_under_mpirun(4, out, mpi_programs.get("t_mpi_abort"),
                              mca=[("odls_base_sigkill_timeout", 0)], status=None)
        if live_files(out):
            break
    assert live_files(out), "no rank was killed before writing its data in 3 runs"
    return out, cp


def rank_dirs(directory):
    """{rank: process directory} from the JSON report."""
    return {rank: directory / ("%s.%d" % (p["host"], p["pid"]))
            for rank, p in ranks_of(report_json(directory)).items()}


def test_abort_exit_status(abort_exp):
    _, cp = abort_exp
    assert cp.returncode != 0, _fail_message(cp)
    # (mpirun's "MPI_ABORT was invoked on rank 2" help text is not checked: Open MPI 4.1
    # sometimes loses it, "ORTE_ERROR_LOG: Data unpack would read past end of buffer")


def test_abort_written_ranks_readable(abort_exp):
    """Every rank that wrote its message statistics and profile before mpirun killed it (all of
    them, unless SIGKILL came first: then test_abort_killed_ranks_recovered applies) is read in
    full; rank 2 wrote everything before it aborted."""
    out, _ = abort_exp
    dirs = rank_dirs(out)
    assert sorted(dirs) == [0, 1, 2, 3]
    assert not list(dirs[2].glob("live.*"))
    matrix = comm_matrix(out)
    for (s, d), value in matrix.items():
        assert ABORT_RING.get((s, d)) == value, (s, d, value)
    by_rank = calls_by_rank(out)
    for rank, pdir in dirs.items():
        if not list(pdir.glob("live.*.mpi")):
            assert matrix[(rank, (rank + 1) % 4)] == (2, 8), rank
        if not list(pdir.glob("live.*.nodes")):
            assert by_rank[rank]["MPI_Sendrecv"] == 2 and by_rank[rank]["MPI_Barrier"] == 1, rank
    if not live_files(out):
        assert matrix == ABORT_RING


def _check_abort_info(out):
    header, ranks, _, warnings = info_sections(info(out).stdout)
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, ", header)
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, block in ranks.items():
        how = ended(block)
        if rank == 2:
            assert "did not finish" not in how and re.search(r"\b7\b", how), how
        else:
            assert how in ("killed by signal 15 (SIGTERM)", "killed by signal 9 (SIGKILL)") or \
                how.startswith("did not finish"), how
        if how.startswith("did not finish"):
            assert re.search(r"(?m)/process\.plx: rank %d: no ProcessEnd record: the process did not "
                             r"finish writing$" % rank, warnings), warnings
    return ranks, warnings


def test_abort_info(abort_exp):
    out, _ = abort_exp
    ranks, warnings = _check_abort_info(out)
    if all(not ended(b).startswith("did not finish") for b in ranks.values()):
        # the ranks MPI_Abort ended were inside main and an MPI call: only those cuts are said
        # (more than 3 ranks' in one line, plx_format::summary_lines)
        cut = (r"thread 0: \d+ calls still open when the process ended, closed at its end "
               r"\(truncated\)")
        lines = [w.strip() for w in warnings.strip().splitlines()]
        assert lines and all(
            re.search(cut + "$", w) or re.fullmatch(
                r"4 open-at-end warnings in 4 files, the first 3: .*" + cut
                + r" \(`plx info --format json` lists each\)", w) for w in lines
        ), warnings


def test_abort_info_names_mpi_abort(abort_exp):
    out, _ = abort_exp
    _, ranks, _, _ = info_sections(info(out).stdout)
    how = ended(ranks[2])
    assert "MPI_Abort" in how and re.search(r"\b7\b", how) and "reason 3" not in how, how


def test_abort_killed_info_warns(abort_killed_exp):
    out, _ = abort_killed_exp
    ranks, _ = _check_abort_info(out)
    assert any(ended(b).startswith("did not finish") for b in ranks.values())


def test_abort_killed_ranks_recovered(abort_killed_exp):
    """The ranks SIGKILLed before writing left their message statistics and callpath trees in
    live files (spec/format.md, Live files): the reader must recover them."""
    out, _ = abort_killed_exp
    assert comm_matrix(out) == ABORT_RING
    by_rank = calls_by_rank(out)
    assert sorted(by_rank) == [0, 1, 2, 3]
    for rank, fns in by_rank.items():
        assert fns.get("MPI_Sendrecv") == 2, rank


# ---------------------------------------------------------------------------------------------
# 7. 64 ranks on a small machine (the slowest MPI test: a few seconds)

@pytest.mark.slow
def test_life_64_ranks_oversubscribed(mpi_programs, tmp_path):
    out = tmp_path / "life64"
    plx_under_mpirun(64, out, mpi_programs.get("life"), 3, 128, 1)
    pairs = comm_matrix(out)
    assert pairs[(0, 1)] == pairs[(0, 63)] == pairs[(63, 0)] == (3, 3 * 128)
    assert pairs == ring(64, 3, 128)
    header, ranks, _, warnings = info_sections(info(out).stdout)
    assert re.search(r"(?m)^MPI: 64 rank\(s\) of a world of 64, ", header)
    assert sorted(ranks) == list(range(64))
    assert warnings.strip() == "none"
    doc = report_json(out)
    procs = ranks_of(doc)
    assert sorted(procs) == list(range(64))
    for p in procs.values():
        assert sorted(t["name"] for t in p["threads"]) == ["life_worker", "main"]
    assert functions_of(doc["total"])["MPI_Isend"]["calls"] == 64 * 2 * 3


def test_ranks_of_one_job_share_a_directory_another_job_is_refused(mpi_programs, tmp_path):
    """`mpirun -np 4 plx run -o DIR`: four plx run processes of one job, one experiment and one
    "experiment written" line; a second mpirun into DIR is another job, refused."""
    prog = mpi_programs.get("t_mpi")
    out = tmp_path / "exp"
    cp = plx_under_mpirun(4, out, prog)
    assert cp.stderr.count("plx: experiment written to %s" % out) == 1, cp.stderr
    assert len(process_dirs(out)) == 4
    cp = plx_under_mpirun(4, out, prog, status=None)
    assert cp.returncode != 0
    # every rank refuses (mpirun may end the others once one has failed: at least one says so)
    assert cp.stderr.count("holds the run of another job (pmix ") >= 1, cp.stderr
    assert len(process_dirs(out)) == 4


# ---------------------------------------------------------------------------------------------
# 8. The same programs on both implementations (Open MPI, MPICH): the communication matrix, the
#    message matching of the traces, the profile's MPI calls, the critical path, MPI_Abort


@pytest.fixture(scope="module", params=sorted(IMPLS))
def impl_exps(request, tmp_path_factory):
    """{name: experiment} of life traced and t_mpi_abort, built with the implementation's mpicc
    and run under its launcher, 4 ranks (t_mpi on both: the cases tests/e2e/cases/t-mpi*)."""
    impl = IMPLS[request.param]
    impl.require()
    root = tmp_path_factory.mktemp("impl-" + request.param)
    exps = {"impl": impl}
    for name, opts, args in (("life", ("--trace",), (LIFE_STEPS, LIFE_SIZE, LIFE_THREADS)),
                             ("t_mpi_abort", (), ())):
        exe = root / name
        cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                             str(MPI_SOURCES[name]), "-o", str(exe), "-pthread"],
                            capture_output=True, text=True, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)
        out = root / (name + ".exp")
        cp = subprocess.run(impl.mpirun_cmd(4, PLX, "run", "-o", out, *opts, "--", exe, *args),
                            capture_output=True, text=True, env=clean_env(), timeout=MPIRUN_TIMEOUT)
        if name == "t_mpi_abort":
            assert cp.returncode != 0, _fail_message(cp)
        else:
            assert cp.returncode == 0, _fail_message(cp)
        exps[name] = out
    return exps


def test_impl_life(impl_exps):
    impl, exp = impl_exps["impl"], impl_exps["life"]
    assert comm_matrix(exp) == ring(LIFE_RANKS, LIFE_STEPS, LIFE_SIZE)
    doc = report_json(exp)
    ranks = ranks_of(doc)
    assert sorted(ranks) == list(range(LIFE_RANKS))
    for rank, p in ranks.items():
        assert p["mpi"]["library"].startswith(impl.library), p["mpi"]["library"]
        assert p["mpi"]["rank"] == rank and p["mpi"]["size"] == LIFE_RANKS
        main = functions_of(next(t for t in p["threads"] if t["name"] == "main"))
        assert main["MPI_Isend"]["calls"] == main["MPI_Irecv"]["calls"] == 2 * LIFE_STEPS
        assert main["MPI_Allreduce"]["calls"] == main["MPI_Waitall"]["calls"] == LIFE_STEPS
    # plx info: the library's version on one line, its whitespace (MPICH's tab) as single spaces
    libs = re.findall(r"(?m)^  MPI library (.*)$", info(exp).stdout)
    assert len(libs) == LIFE_RANKS and all(
        lib.startswith(impl.library) and "\t" not in lib and "  " not in lib for lib in libs), libs
    # the traces: every message matched, one collective per rank and step (MPI_Allreduce) plus
    # MPI_Init_thread's and MPI_Finalize's
    header = info_sections(info(exp).stdout)[0]
    assert re.search(r"(?m)^messages in the traces: %d matched, 0 sends never received, "
                     r"0 receives without a send, " % (2 * LIFE_STEPS * LIFE_RANKS), header), header
    # the critical path: no longer than the run, its procedure rows adding up to it, the
    # collectives on it named on MPI_COMM_WORLD
    cp = json.loads(plx("critical-path", exp, "--format", "json").stdout)
    assert 0 < cp["total_length_s"] <= cp["elapsed_s"]
    assert sum(i["time_s"] for i in cp["items"]) == pytest.approx(cp["total_length_s"], abs=1e-6)
    assert "Sync: MPI_Init_thread on MPI_COMM_WORLD" in {i["name"] for i in cp["items"]}


def test_impl_abort(impl_exps):
    """Rank 2 calls MPI_Abort(7) after every rank sent 2 messages of 4 bytes to the next: plx info
    says so, and rank 2's messages are all there (the others' too, when they wrote them or left
    live files)."""
    exp = impl_exps["t_mpi_abort"]
    _, ranks, _, _ = info_sections(info(exp).stdout)
    assert sorted(ranks) == [0, 1, 2, 3]
    how = ended(ranks[2])
    assert "MPI_Abort" in how and re.search(r"\b7\b", how), how
    matrix = comm_matrix(exp)
    assert matrix[(2, 3)] == (2, 8)
    for pair, value in matrix.items():
        assert ABORT_RING.get(pair) == value, (pair, value)


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_partly_measured_job_does_not_hang(name, tmp_path):
    """Ranks 0 and 2 of t_mpi's 4 run under plx run, ranks 1 and 3 not (the launcher starts a
    shell that picks): the measured ranks used to wait forever in MPI_Init's clock exchange, a
    collective the others never join. Now the job runs to its end (t_mpi aborts with 3 on a wrong
    message count), the measured ranks skip the exchange, and plx info says why. A fully measured
    run of the same program still measures every rank's offset. Neither run leaves a marker of
    DIR/.plx-mpi/JOB/ (nor the directories) behind."""
    impl = IMPLS[name]
    impl.require()
    exe = tmp_path / "t_mpi"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(MPI_SOURCES["t_mpi"]), "-o", str(exe), "-pthread"],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "partial"
    pick = ('r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; case $r in 0|2) exec "$0" run -o "$1" -- "$2";; '
            '*) exec "$2";; esac')
    cp = subprocess.run(impl.mpirun_cmd(4, "sh", "-c", pick, PLX, out, exe),
                        capture_output=True, text=True, env=clean_env(), timeout=MPIRUN_TIMEOUT)
    assert cp.returncode == 0, _fail_message(cp)
    text = info(out).stdout
    _, ranks, _, _ = info_sections(text)
    assert sorted(ranks) == [0, 2]
    for rank in (0, 2):
        assert re.search(r"(?m)^  clock offset to rank 0: not measured \(2 of 4 ranks measured\)$",
                         ranks[rank]), ranks[rank]
    warned = re.findall(r"(?m)^  .*: no clock offset to rank 0 measured: 2 of its 4 ranks are "
                        r"measured, and the exchange needs every rank; this rank's times stay on "
                        r"its host's clock$", text)
    assert len(warned) == 2, text
    # --format json: the same "2 of 4 ranks measured" (processes in the text's order)
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    skipped = {p["rank"]: p["clock_sync_skipped"] for p in doc["processes"]}
    assert skipped == {0: {"measured_ranks": 2, "ranks": 4}, 2: {"measured_ranks": 2, "ranks": 4}}
    # the skipped exchange leaves no marker and no directory (every marker stayed before)
    assert not (out / ".plx-mpi").exists(), list((out / ".plx-mpi").rglob("*"))
    full = tmp_path / "full"
    cp = subprocess.run(impl.mpirun_cmd(4, PLX, "run", "-o", full, "--", exe),
                        capture_output=True, text=True, env=clean_env(), timeout=MPIRUN_TIMEOUT)
    assert cp.returncode == 0, _fail_message(cp)
    _, ranks, _, _ = info_sections(info(full).stdout)
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, block in ranks.items():
        assert re.search(r"(?m)^  clock offset to rank 0: \+0\.000 us at init \(rtt 0\.000 us\), "
                         r"\+0\.000 us at finalize \(rtt 0\.000 us\)$", block), block
    doc = json.loads(plx("info", full, "--format", "json").stdout)
    assert [p["clock_sync_skipped"] for p in doc["processes"]] == [None] * 4
    # every rank removed its marker once all had counted them, and the last one the directories
    assert not (full / ".plx-mpi").exists(), list((full / ".plx-mpi").rglob("*"))


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_sigkilled_rank_leaves_no_marker(name, tmp_path):
    """programs/killed_rank.c under `mpirun -np 2 plx run`: rank 1 is killed by SIGKILL inside
    MPI_Init, after it made its marker in DIR/.plx-mpi/JOB/, and never removes it (before, the
    marker and the directories stayed for good). Its plx run removes the marker of its dead
    program (HOST.PID-START: the process no longer runs), so nothing is left."""
    impl = IMPLS[name]
    impl.require()
    exe = tmp_path / "killed_rank"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", str(MPI_SOURCES["killed_rank"]), "-o", str(exe),
                         "-pthread"], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    cp = subprocess.run(impl.mpirun_cmd(2, PLX, "run", "-o", out, "--", exe),
                        capture_output=True, text=True, env=clean_env(), timeout=MPIRUN_TIMEOUT)
    assert cp.returncode != 0, _fail_message(cp)
    assert "killed by signal 9 (SIGKILL)" in cp.stderr, _fail_message(cp)
    assert not (out / ".plx-mpi").exists(), list((out / ".plx-mpi").rglob("*"))


# ---------------------------------------------------------------------------------------------
# 9. Intercommunicators (programs/intercomm.c, whose header lists its messages; all with tag 1)
#    on both implementations: both sides name one communicator, never an intracommunicator of
#    the same members, so every message is matched

HALF_ROUNDS, INTER_ROUNDS, REPLIES, MERGED = 4, 5, 3, 2
INTERCOMM_PAIRS = {
    (0, 2): (HALF_ROUNDS, HALF_ROUNDS * 16), (1, 3): (HALF_ROUNDS, HALF_ROUNDS * 16),
    (0, 1): (INTER_ROUNDS, INTER_ROUNDS * 64), (2, 3): (INTER_ROUNDS, INTER_ROUNDS * 64),
    (1, 2): (REPLIES, REPLIES * 64), (3, 0): (REPLIES, REPLIES * 64),
    (2, 1): (1, 12), (0, 3): (MERGED, MERGED * 4),
}
INTERCOMM_COMMS = {
    "comm of 2 ranks [0 2] #0": (HALF_ROUNDS, HALF_ROUNDS * 16),
    "comm of 2 ranks [1 3] #0": (HALF_ROUNDS, HALF_ROUNDS * 16),
    "intercomm of [0 2] and [1 3] #0": (2 * INTER_ROUNDS + 2 * REPLIES,
                                        2 * INTER_ROUNDS * 64 + 2 * REPLIES * 64),
    # MPI_Comm_dup of the intercommunicator: the second between the same groups
    "intercomm of [0 2] and [1 3] #1": (1, 12),
    # MPI_Intercomm_merge's result is an intracommunicator, the odd half high
    "comm of 4 ranks [0 2 1 3] #0": (MERGED, MERGED * 4),
}


@pytest.fixture(scope="module", params=sorted(IMPLS))
def intercomm_exp(request, tmp_path_factory):
    """programs/intercomm.c built with the implementation's mpicc, traced on 4 ranks."""
    impl = IMPLS[request.param]
    impl.require()
    root = tmp_path_factory.mktemp("intercomm-" + request.param)
    exe = root / "intercomm"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", str(PROGRAMS / "intercomm.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = root / "exp"
    cp = subprocess.run(impl.mpirun_cmd(4, PLX, "run", "-o", out, "--trace", "--", exe),
                        capture_output=True, text=True, env=clean_env(), timeout=MPIRUN_TIMEOUT)
    assert cp.returncode == 0 and "intercomm ok" in cp.stdout, _fail_message(cp)
    return out


def text_sends_per_comm(text):
    """{communicator description: (messages, bytes)} of the text export's send events, and
    whether every send and receive event is matched (has a msg= id)."""
    comms = dict(re.findall(r"^#\s+(c\d+)\s+(.+?)\s*$", text, re.M))
    events = re.findall(r"^\s*\d+ \d+\.\d+ (send|recv)\s+.*? bytes=(\d+) comm=(\S+)( msg=\d+)?$",
                        text, re.M)
    got = {}
    for kind, b, c, _ in events:
        if kind == "send":
            n0, b0 = got.get(comms[c], (0, 0))
            got[comms[c]] = (n0 + 1, b0 + int(b))
    return got, len(events), all(m for _, _, _, m in events)


def test_intercomm_messages_matched(intercomm_exp):
    exp = intercomm_exp
    total = sum(n for n, _ in INTERCOMM_PAIRS.values())
    assert total == 27
    assert comm_matrix(exp) == INTERCOMM_PAIRS
    doc = json.loads(plx("comm", exp, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace" and doc["matched"] == total
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    # per communicator from the senders' message statistics
    assert {c["name"]: (c["messages"], c["bytes"]) for c in doc["communicators"]} == \
        INTERCOMM_COMMS
    assert {c["name"]: (c["intercommunicator"], c["members"]) for c in doc["communicators"]} == {
        "comm of 2 ranks [0 2] #0": (False, [0, 2]), "comm of 2 ranks [1 3] #0": (False, [1, 3]),
        "intercomm of [0 2] and [1 3] #0": (True, [0, 2, 1, 3]),
        "intercomm of [0 2] and [1 3] #1": (True, [0, 2, 1, 3]),
        "comm of 4 ranks [0 2 1 3] #0": (False, [0, 2, 1, 3]),
    }
    header = info_sections(info(exp).stdout)[0]
    assert re.search(r"(?m)^messages in the traces: 27 matched, 0 sends never received, "
                     r"0 receives without a send, ", header), header
    # MPI_COMM_WORLD, 4 x MPI_COMM_SELF, the two halves, two intercommunicators, the merged one
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, 10 communicator\(s\), 4 rank\(s\) "
                     r"traced$", header), header
    assert re.search(r"(?m)^intercommunicators: intercomm of \[0 2\] and \[1 3\] #0, "
                     r"intercomm of \[0 2\] and \[1 3\] #1$", header), header
    text = plx("export", exp, "--format", "text", "-o", "-").stdout
    per_comm, events, all_matched = text_sends_per_comm(text)
    assert per_comm == INTERCOMM_COMMS
    assert events == 2 * total and all_matched


def test_intercomm_critical_path(intercomm_exp):
    """The messages on the intercommunicators are arcs of the activity graph: the critical path
    is built with no unmatched message (an unmatched one is warned about per pair of ranks) and
    is no longer than the run."""
    cp = plx("critical-path", intercomm_exp, "--format", "json")
    assert "unmatched" not in cp.stderr, cp.stderr
    doc = json.loads(cp.stdout)
    assert 0 < doc["total_length_s"] <= doc["elapsed_s"]


def test_intercomm_otf2_export(intercomm_exp, tmp_path):
    """The OTF2 export read back by the OTF2 Python reader: each send names its receiver as a
    rank of its communicator (an intercommunicator's group holds both of its groups,
    docs/exports/otf2.md), resolving to the location of the world rank it was sent to."""
    from components import require_module

    otf2 = require_module("otf2", what="the OTF2 Python reader (pip install otf2)")
    out = tmp_path / "otf2"
    plx("export", intercomm_exp, "--format", "otf2", "-o", out)
    got = {}
    with otf2.reader.open(str(out / "traces.otf2")) as r:
        for location, ev in r.events:
            if isinstance(ev, otf2.events.MpiSend):
                receiver = ev.communicator.group.members[ev.receiver]
                key = (ev.communicator.name, location.name, receiver.name)
                got[key] = got.get(key, 0) + 1
    inter0, inter1 = "intercomm of [0 2] and [1 3] #0", "intercomm of [0 2] and [1 3] #1"
    assert got == {
        ("comm of 2 ranks [0 2] #0", "0.0", "2.0"): HALF_ROUNDS,
        ("comm of 2 ranks [1 3] #0", "1.0", "3.0"): HALF_ROUNDS,
        (inter0, "0.0", "1.0"): INTER_ROUNDS, (inter0, "2.0", "3.0"): INTER_ROUNDS,
        (inter0, "1.0", "2.0"): REPLIES, (inter0, "3.0", "0.0"): REPLIES,
        (inter1, "2.0", "1.0"): 1,
        ("comm of 4 ranks [0 2 1 3] #0", "0.0", "3.0"): MERGED,
    }


def test_intercomm_parquet_and_sddf_list_both_groups(intercomm_exp, tmp_path):
    """The Parquet and SDDF exports' communicator tables give an intercommunicator both of its
    groups as its ranks (docs/exports/parquet.md, sddf.md), as plx comm's JSON does."""
    from components import require_module

    require_module("pyarrow", what="pyarrow (pip install pyarrow)")
    import pyarrow.parquet as pq

    out = tmp_path / "pq"
    plx("export", intercomm_exp, "--format", "parquet", "-o", out)
    rows = pq.read_table(out / "comms.parquet").to_pylist()
    got = {r["name"]: (r["size"], r["ranks"]) for r in rows if "intercomm" in r["name"]}
    assert got == {"intercomm of [0 2] and [1 3] #0": (4, "0 2 1 3"),
                   "intercomm of [0 2] and [1 3] #1": (4, "0 2 1 3")}
    sddf = tmp_path / "t.sddf"
    plx("export", intercomm_exp, "--format", "sddf", "-o", sddf)
    records = re.findall(r'"Communicator" \{ \d+, \[\d+\] \{ "(intercomm[^"]*)" \}, '
                         r'\[(\d+)\] \{ ([^}]*) \} \};;',
                         sddf.read_text())
    assert sorted(records) == [("intercomm of [0 2] and [1 3] #0", "4", "0, 2, 1, 3"),
                               ("intercomm of [0 2] and [1 3] #1", "4", "0, 2, 1, 3")]


# ---------------------------------------------------------------------------------------------
# 10. Both launcher positions on both implementations: `IMPL-LAUNCHER -np 4 plx run -- t_mpi`
#     and `plx run -- IMPL-LAUNCHER -np 4 t_mpi`, traced. Under plx run the launcher and the
#     processes it forks (Open MPI's orted children, MPICH's Hydra proxy) run the runtime's fork
#     handler; a library hooking munmap (UCX, which MPICH loads into its launcher) must never
#     reach an interposed function of a half-reset thread from there: the job lives, every
#     message and call is counted exactly.

LAUNCH_FORMS = ("mpirun-plx", "plx-mpirun")
# ... and `plx run -- ./launch.sh`, a shell script that runs `mpirun -np 4 ./app` (not by exec):
# the launcher started by a program plx run does not know for one
LOCAL_LAUNCH_FORMS = LAUNCH_FORMS + ("plx-script",)

# The unmeasured processes of `plx run -- LAUNCHER -np 4`: Open MPI's mpirun forks each rank
# (the fork's image is replaced by the rank's exec); MPICH's mpirun forks and execs Hydra's
# proxy, which forks each rank.
LAUNCHER_PROCESSES = {
    "Open MPI": {("mpirun", "exited with status 0"): 1, ("mpirun", "replaced by exec()"): 4},
    "MPICH": {("mpirun.mpich", "exited with status 0"): 1,
              ("mpirun.mpich", "replaced by exec()"): 1,
              ("hydra_pmi_proxy", "exited with status 0"): 1,
              ("hydra_pmi_proxy", "replaced by exec()"): 4},
}


_LAUNCH_RUNS = {}


def launch_run(tmp_path_factory, name, form):
    """(impl, form, experiment, CompletedProcess) of t_mpi traced on 4 ranks under
    implementation NAME in launch FORM; run once per session."""
    key = (name, form)
    if key in _LAUNCH_RUNS:
        return _LAUNCH_RUNS[key]
    impl = IMPLS[name]
    impl.require()
    root = tmp_path_factory.mktemp("launch-%s-%s" % key)
    exe = root / "t_mpi"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(MPI_SOURCES["t_mpi"]), "-o", str(exe), "-pthread"],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = root / "exp"
    if form == "mpirun-plx":
        cmd = impl.mpirun_cmd(4, PLX, "run", "-o", out, "--trace", "--", exe)
    elif form == "plx-script":
        script = root / "launch.sh"
        script.write_text("#!/bin/sh\n%s\n" % " ".join(impl.mpirun_cmd(4, exe)))
        script.chmod(0o755)
        cmd = [str(PLX), "run", "-o", str(out), "--trace", "--", str(script)]
    else:
        cmd = [str(PLX), "run", "-o", str(out), "--trace", "--", *impl.mpirun_cmd(4, exe)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(),
                        timeout=MPIRUN_TIMEOUT)
    _LAUNCH_RUNS[key] = (impl, form, out, cp)
    return _LAUNCH_RUNS[key]


@pytest.fixture(params=[(impl, form) for impl in sorted(IMPLS) for form in LOCAL_LAUNCH_FORMS],
                ids=lambda p: "%s-%s" % p)
def launch_exp(request, tmp_path_factory):
    return launch_run(tmp_path_factory, *request.param)


def test_launcher_position_keeps_the_job_alive(launch_exp):
    """The job ends with status 0, nothing crashes (before the fork handler held the thread's
    guard, MPICH's Hydra proxy under plx run died of SIGSEGV in the pthread_rwlock_unlock
    wrapper, called from UCX's munmap hook, and the job failed), each rank exited 0. Started by
    a script, the shell is one more process not measured, and the header counts the ranks'
    threads only (before, a launcher started by a script got no MPI wrappers: no rank, no
    MPI line, and the shell's thread was counted)."""
    impl, form, out, cp = launch_exp
    assert cp.returncode == 0, _fail_message(cp)
    for crash in ("Caught signal", "Segmentation fault", "backtrace", "assert"):
        assert crash not in cp.stderr, _fail_message(cp)
    assert cp.stderr.count("plx: experiment written to %s" % out) == 1, cp.stderr
    header, ranks, unmeasured, warnings = info_sections(info(out).stdout)
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, block in ranks.items():
        assert ended(block) == "exited with status 0", (rank, block)
        assert re.search(r"(?m)^\s+rank\s+%d of 4 \(thread level multiple\)$" % rank, block)
    threads = sum(int(re.search(r"(?m)^\s+threads\s+(\d+)$", b).group(1)) for b in ranks.values())
    images = len(ranks) + len(unmeasured)
    assert re.search(r"(?m)^%d process image\(s\), %d thread\(s\), " % (images, threads),
                     header), header
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, \d+ communicator\(s\), 4 rank\(s\) "
                     r"traced$", header), header
    if form == "mpirun-plx":
        assert unmeasured == [] and warnings.strip() == "none", warnings
        assert "not measured" not in header, header
    else:
        assert "\n%d process(es) not measured (no instrumented code)\n" % len(unmeasured) in header
        # the launcher's processes (and the script's shell), each ended normally (none of a
        # signal): (program, how it ended) -> how many
        got = {}
        for block in unmeasured:
            argv0 = re.search(r"(?m)^\s+argv\s+(\S+)", block).group(1)
            key = (os.path.basename(argv0), ended(block))
            got[key] = got.get(key, 0) + 1
        expected = dict(LAUNCHER_PROCESSES[impl.name])
        if form == "plx-script":
            expected[("sh", "exited with status 0")] = 1
        assert got == expected, unmeasured


def test_mpich_launcher_under_plx_run_keeps_the_job_alive(tmp_path_factory):
    """`plx run -- mpirun.mpich -np 4 ./app` (the documented usage) by name: the job ends with
    status 0 and the exact matrix of its four ranks."""
    _, _, out, cp = launch_run(tmp_path_factory, "mpich", "plx-mpirun")
    assert cp.returncode == 0, _fail_message(cp)
    pairs, _ = t_mpi_header()
    assert comm_matrix(out) == {pair: (n, T_MPI_BYTES[pair]) for pair, n in pairs.items()}


def test_launcher_position_exact_matrix(launch_exp):
    impl, form, out, cp = launch_exp
    assert cp.returncode == 0, _fail_message(cp)
    pairs, _ = t_mpi_header()
    expected = {pair: (n, T_MPI_BYTES[pair]) for pair, n in pairs.items()}
    assert comm_matrix(out) == expected
    doc = json.loads(plx("comm", out, "--format", "json").stdout)
    assert doc["total"] == {"messages": 55, "bytes": sum(T_MPI_BYTES.values())}
    assert doc["locations"] == [0, 1, 2, 3]
    doc = json.loads(plx("comm", out, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace" and doc["matched"] == 55
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}


def test_launcher_position_exact_calls(launch_exp):
    impl, form, out, cp = launch_exp
    assert cp.returncode == 0, _fail_message(cp)
    _, collectives = t_mpi_header()
    by_rank = calls_by_rank(out)
    assert sorted(by_rank) == [0, 1, 2, 3]
    for rank, fns in by_rank.items():
        got = mpi_calls(fns)
        if rank == 3:
            assert got.pop("MPI_Testsome", 0) >= 1
        assert got == {**T_MPI_P2P_CALLS[rank], **T_MPI_EVERY_RANK, **collectives}, rank
    for p in ranks_of(report_json(out)).values():
        assert p["mpi"]["library"].startswith(impl.library), p["mpi"]["library"]


# ---------------------------------------------------------------------------------------------
# 11. Two hosts on one machine (twohosts.py): network namespaces joined by a veth pair, each
#     host with its own host name and its CLOCK_MONOTONIC 7 ms apart; t_mpi traced, 2 ranks a
#     host, Open MPI over TCP and MPICH (Hydra, UCX over TCP), in both launch forms. Rank 0's
#     host is a: ranks 2 and 3 measure their clock's offset (-7 ms) and the merged trace is on
#     rank 0's clock.

HOST_B_AHEAD_NS = 7_000_000
HOST_RANKS = {"plxhost-a": [0, 1], "plxhost-b": [2, 3]}
# the slack beyond rtt/2 a measured offset may be off by: the two hosts' tick-to-ns lines
OFFSET_SLACK_US = 50.0
# Seconds the job may take (about 3 s here) before it is failed as hung
TWO_HOSTS_TIMEOUT = 120
# The launchers' own processes, measured under plx run -- LAUNCHER (socket calls only)
LAUNCHER_EXECUTABLES = {"open-mpi": "orterun", "mpich": "mpiexec.hydra"}


@pytest.fixture(scope="module", params=[(n, f) for n in sorted(IMPLS) for f in LAUNCH_FORMS],
                ids=lambda p: "%s-%s" % p)
def two_hosts_exp(request, tmp_path_factory, exp_root):
    """(experiment, CompletedProcess, implementation name) of t_mpi traced on 2 + 2 ranks of
    hosts a and b."""
    missing = twohosts.available()
    require(missing is None, missing or "", install="scripts/deps/55-hosts.sh, as root")
    name, form = request.param
    impl = IMPLS[name]
    impl.require()
    prog = tmp_path_factory.mktemp("two-hosts-bin") / "t_mpi"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(MPI_SOURCES["t_mpi"]), "-o", str(prog), "-pthread"],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = exp_root / ("two-hosts-%s-%s" % (name, form))
    with twohosts.TwoHosts(offsets_ns=(0, HOST_B_AHEAD_NS), names=tuple(HOST_RANKS)) as hosts:
        if name == "open-mpi":
            launcher = ["mpirun", "--allow-run-as-root", "--hostfile", hosts.hostfile(2),
                        *hosts.open_mpi_options(), "-np", "4"]
        else:
            launcher = [*impl.launcher, *hosts.mpich_options(), "-np", "4"]
        if form == "mpirun-plx":
            cmd = [*launcher, PLX, "run", "-o", out, "--trace", "--", prog]
        else:
            cmd = [PLX, "run", "-o", out, "--trace", "--", *launcher, prog]
        cp = hosts.run("a", cmd, TWO_HOSTS_TIMEOUT, capture_output=True, text=True,
                       env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return out, cp, name


def two_hosts_ranks(out, name):
    """{rank: process} of plx report; the other processes can only be the launcher's (under
    plx run -- mpirun, mpirun's TCP connections to its daemon or proxy on host b are traced:
    socket calls only, in the launcher and its children before they exec'ed the ranks)."""
    doc = report_json(out)
    ranks = {p["rank"]: p for p in doc["processes"] if p["rank"] is not None}
    for p in doc["processes"]:
        if p["rank"] is None:
            assert os.path.basename(p["executable"]) == LAUNCHER_EXECUTABLES[name], p["executable"]
            assert {f["kind"] for t in p["threads"] for f in t["functions"]} <= {"socket"}, p
    return ranks


def test_two_hosts_exact_matrix_and_calls(two_hosts_exp):
    out, _, name = two_hosts_exp
    pairs, collectives = t_mpi_header()
    assert comm_matrix(out) == {pair: (n, T_MPI_BYTES[pair]) for pair, n in pairs.items()}
    doc = json.loads(plx("comm", out, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace" and doc["matched"] == 55
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    ranks = two_hosts_ranks(out, name)
    assert sorted(ranks) == [0, 1, 2, 3]
    by_rank = {}
    for rank, p in ranks.items():
        fns = {}
        for t in p["threads"]:
            for f in t["functions"]:
                fns[f["function"]] = fns.get(f["function"], 0) + f["calls"]
        by_rank[rank] = fns
    for rank, fns in by_rank.items():
        got = mpi_calls(fns)
        if rank == 3:
            assert got.pop("MPI_Testsome", 0) >= 1
        assert got == {**T_MPI_P2P_CALLS[rank], **T_MPI_EVERY_RANK, **collectives}, rank
    for p in ranks.values():
        assert p["mpi"]["library"].startswith(IMPLS[name].library), p["mpi"]["library"]


def test_two_hosts_names_in_every_view(two_hosts_exp):
    out, _, name = two_hosts_exp
    ranks = two_hosts_ranks(out, name)
    assert {h: sorted(r for r, p in ranks.items() if p["host"] == h) for h in HOST_RANKS} \
        == HOST_RANKS
    # plx report's tables
    text = plx("report", out, "--by", "process").stdout
    heads = re.findall(r"(?m)^(\d+) \(pid [\d:]+ on (\S+)\)$", text)
    assert sorted((int(r), h) for r, h in heads) == [
        (r, h) for h, rs in HOST_RANKS.items() for r in rs]
    # plx hierarchy: the machine tree, host by host
    machine = json.loads(plx("hierarchy", out, "--format", "json").stdout)["machine"]
    assert {h["name"]: [p["name"] for p in h["children"] if p["name"].isdigit()]
            for h in machine["children"] if h["name"] in HOST_RANKS} == {
        h: [str(r) for r in rs] for h, rs in HOST_RANKS.items()}
    # plx info: each rank's block names its host
    info_text = info(out).stdout
    blocks = info_rank_blocks(info_text)
    for host, rs in HOST_RANKS.items():
        for r in rs:
            assert re.match(r"process \S+ \(pid [\d:]+ on %s\)\n" % host, blocks[r]), blocks[r]
    # the text export's locations
    exported = plx("export", out, "--format", "text", "--output", "-").stdout
    for host, rs in HOST_RANKS.items():
        for r in rs:
            assert re.search(r'(?m)^#\s+%d\.0 "main" \(pid [\d:]+ on %s\)' % (r, host),
                             exported), exported[:2000]


def info_rank_blocks(info_text):
    """{rank: block} of plx info's process blocks (the launcher's, if measured, left out)."""
    body = info_text.partition("\nwarnings:")[0]
    out = {}
    for block in re.split(r"(?m)^(?=process \S+ \()", body)[1:]:
        m = re.search(r"(?m)^\s+rank\s+(\d+) of \d+", block)
        if m:
            assert int(m.group(1)) not in out
            out[int(m.group(1))] = block
    return out


def clock_offsets(info_text):
    """{rank: ([(offset us, rtt us) at init, at finalize], {0 or 1: offset us taken in place
    of the measured one})} of plx info."""
    blocks = info_rank_blocks(info_text)
    out = {}
    for rank, block in blocks.items():
        m = re.search(r"(?m)^\s+clock offset to rank 0: ([-+]\d+\.\d+) us at init \(rtt "
                      r"(\d+\.\d+) us\), ([-+]\d+\.\d+) us at finalize \(rtt (\d+\.\d+) us\)"
                      r"(?:; (init|finalize)'s taken as ([-+]\d+\.\d+) us \(within half its rtt, "
                      r"the nearest to (?:init|finalize)'s with at most 100 ppm drift\))?$", block)
        assert m, block
        v = [float(x) for x in m.groups()[:4]]
        moved = {} if m.group(5) is None else {("init", "finalize").index(m.group(5)):
                                               float(m.group(6))}
        out[rank] = ([(v[0], v[1]), (v[2], v[3])], moved)
    return out


def test_two_hosts_clock_offset_measured_and_corrected(two_hosts_exp):
    """Ranks of host b measure their offset to rank 0 at MPI_Init and MPI_Finalize: -7 ms within
    the measurement's own bound (half its round trip); rank 1 shares rank 0's clock (0, not
    measured). In the merged trace no receive comes before its send."""
    out, _, _ = two_hosts_exp
    text = info(out).stdout
    offsets = clock_offsets(text)
    exported = plx("export", out, "--format", "text", "--output", "-").stdout
    run_us = max(int(m) for m in re.findall(r"(?m)^\s*(\d+) ", exported)) / 1000
    for rank in HOST_RANKS["plxhost-a"]:
        assert offsets[rank] == ([(0.0, 0.0), (0.0, 0.0)], {}), (rank, offsets[rank])
    for rank in HOST_RANKS["plxhost-b"]:
        measured, moved = offsets[rank]
        for offset, rtt in measured:
            assert rtt > 0, (rank, offsets[rank])
            assert abs(offset + HOST_B_AHEAD_NS / 1000) <= rtt / 2 + OFFSET_SLACK_US, (
                rank, offsets[rank])
        # the offsets the merge takes: the one measured with the shorter round trip (`good`) as
        # measured, the other moved, within half its own round trip, to within half the good
        # one's round trip plus 100 ppm of drift over the run of the good offset. The bounds come
        # from the round trips measured in this run: on a loaded machine they grow, and so may
        # the moved offset's distance to the truth, up to the good one's whole round trip (half
        # from the good offset to the truth, half from the moved one to the good one)
        best = min(rtt for _, rtt in measured)
        good = [offset for offset, rtt in measured if rtt == best][-1]
        reach = best / 2 + 1e-4 * run_us + OFFSET_SLACK_US
        for which, (offset, rtt) in enumerate(measured):
            if abs(offset - good) > reach:  # a busy host's long round trip
                assert which in moved, (rank, offsets[rank], run_us)
        for which, offset in moved.items():
            taken, rtt = measured[which]
            assert rtt > best, (rank, offsets[rank])
            assert abs(offset - good) <= reach, (rank, offsets[rank], run_us)
            assert abs(offset - taken) <= rtt / 2 + OFFSET_SLACK_US, (rank, offsets[rank])
            assert abs(offset + HOST_B_AHEAD_NS / 1000) <= best + 1e-4 * run_us + OFFSET_SLACK_US, (
                rank, offsets[rank], run_us)
    assert re.search(r"(?m)^clock condition: \d+ of 55 matched message\(s\) received before sent "
                     r"\(after the ClockOffset correction\); .* 0 violation\(s\) left$", text), text
    # the merged trace on rank 0's clock: each message's receive at or after its send
    assert "ClockOffset-corrected" in exported.splitlines()[1]
    sends, recvs = {}, {}
    for line in exported.splitlines():
        m = re.match(r"^\s*(\d+) \S+\s+(send|recv)\s.* msg=(\d+)$", line)
        if m:
            (sends if m.group(2) == "send" else recvs)[int(m.group(3))] = int(m.group(1))
    assert len(sends) == len(recvs) == 55 and sends.keys() == recvs.keys()
    early = {m: (sends[m], recvs[m]) for m in sends if recvs[m] < sends[m]}
    assert early == {}


@pytest.mark.parametrize("form", ["mpirun-plx", "plx-mpirun"])
@pytest.mark.parametrize("name", sorted(IMPLS))
def test_lock_taken_inside_malloc_does_not_deadlock(name, form, tmp_path):
    """Life on a 1024 x 1024 grid allocates enough for malloc to grow the heap; UCX's sbrk hook
    (MPICH over UCX) then takes a rwlock with malloc's arena locked, and the runtime's first
    sight of that lock loaded the symbol table of its module (qsort, which mallocs): every
    rank deadlocked in its first calloc after MPI_Init. The lock's module is found without
    allocating; the job ends with the exact ring matrix."""
    impl = IMPLS[name]
    impl.require()
    exe = tmp_path / "life"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", str(MPI_SOURCES["life"]), "-o", str(exe),
                         "-pthread"], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    steps, size, ranks = 5, 1024, 4
    run = [PLX, "run", "-o", out, "--"]
    cmd = (impl.mpirun_cmd(ranks, *run, exe, steps, size, 1) if form == "mpirun-plx"
           else [*run, *impl.mpirun_cmd(ranks, exe, steps, size, 1)])
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=clean_env(),
                        timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert "population" in cp.stdout
    assert comm_matrix(out) == ring(ranks, steps, size)


# ---------------------------------------------------------------------------------------------
# programs/mpi_more.c: matched probes, MPI_Isendrecv, communicators some ranks never use


class MoreRuns:
    """programs/mpi_more.c built once with an implementation's mpicc; each mode traced on 3
    ranks under its launcher, once."""

    def __init__(self, impl, root):
        self.impl, self.root, self.exps = impl, root, {}
        self.exe = root / "mpi_more"
        cp = subprocess.run([impl.mpicc, "-g", "-O1", str(PROGRAMS / "mpi_more.c"), "-o",
                             str(self.exe)], capture_output=True, text=True, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)

    def exp(self, mode):
        if mode not in self.exps:
            out = self.root / mode
            cp = subprocess.run(self.impl.mpirun_cmd(3, PLX, "run", "-o", out, "--trace", "--",
                                                     self.exe, mode),
                                capture_output=True, text=True, env=clean_env(),
                                timeout=MPIRUN_TIMEOUT)
            assert cp.returncode == 0 and "mpi_more ok" in cp.stdout, _fail_message(cp)
            self.exps[mode] = out
        return self.exps[mode]


@pytest.fixture(scope="module", params=sorted(IMPLS))
def more_runs(request, tmp_path_factory):
    impl = IMPLS[request.param]
    impl.require()
    return MoreRuns(impl, tmp_path_factory.mktemp("more-" + request.param))


def check_more_messages(exp, pairs):
    """The rank and thread matrices are PAIRS ({(sender, receiver): (messages, bytes)}, every
    thread a main one), every message matched, no warning."""
    header, rows, cp = comm_rows(exp)
    assert "warning" not in cp.stderr, cp.stderr
    assert comm_matrix(exp) == pairs
    cp = plx("comm", exp, "--by", "thread", "--format", "csv")
    assert "warning" not in cp.stderr, cp.stderr
    assert comm_matrix(exp, "--by", "thread") == {
        ("%d.0" % s, "%d.0" % d): v for (s, d), v in pairs.items()}
    doc = json.loads(plx("comm", exp, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace" and doc["matched"] == sum(n for n, _ in pairs.values())
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    warnings = info(exp).stdout.partition("\nwarnings:")[2]
    assert warnings.strip() == "none", warnings


def test_matched_probes_received(more_runs):
    """MPI_Mprobe/MPI_Improbe + MPI_Mrecv/MPI_Imrecv: each message received where it was probed
    (its communicator a duplicate for one), MPI_MESSAGE_NO_PROC's receive no message, nor an
    MPI_Irecv or a persistent receive from MPI_PROC_NULL (MPICH's status of one says source
    0)."""
    exp = more_runs.exp("mprobe")
    check_more_messages(exp, {(1, 0): (2, 12 + 20), (2, 0): (1, 28)})
    calls = mpi_calls(calls_by_rank(exp)[0])
    assert calls["MPI_Improbe"] >= 1
    del calls["MPI_Improbe"]
    assert calls == {"MPI_Init": 1, "MPI_Comm_dup": 1, "MPI_Comm_free": 1, "MPI_Mprobe": 3,
                     "MPI_Mrecv": 3, "MPI_Imrecv": 1, "MPI_Irecv": 1, "MPI_Recv_init": 1,
                     "MPI_Start": 1, "MPI_Request_free": 1, "MPI_Wait": 3, "MPI_Finalize": 1}


@pytest.fixture(scope="module")
def mpich_more_runs(tmp_path_factory):
    """mpi_more.c's runs under MPICH alone (MPI 4.0 routines Open MPI 4.1 does not have)."""
    impl = IMPLS["mpich"]
    impl.require()
    return MoreRuns(impl, tmp_path_factory.mktemp("more-mpich-4"))


def test_isendrecv_recorded(mpich_more_runs):
    """MPI 4.0's MPI_Isendrecv and MPI_Isendrecv_replace (MPICH; Open MPI 4.1 has neither):
    the send at the post, the receive at the MPI_Wait."""
    exp = mpich_more_runs.exp("isendrecv")
    pairs = {}
    for r in range(3):
        pairs[(r, (r + 1) % 3)] = (4, 4 * 12)
        pairs[(r, (r - 1) % 3)] = (2, 2 * 8)
    check_more_messages(exp, pairs)
    for rank, fns in calls_by_rank(exp).items():
        assert mpi_calls(fns) == {"MPI_Init": 1, "MPI_Isendrecv": 4, "MPI_Isendrecv_replace": 2,
                                  "MPI_Wait": 6, "MPI_Finalize": 1}, rank


@pytest.mark.parametrize("mode", ["idup", "cart", "creategroup", "dupinfo", "splittype",
                                  "cartsub", "graph", "distgraph", "adjacent"])
def test_communicator_used_by_some_ranks(more_runs, mode):
    """A communicator made by MODE's routine is defined by every rank at its creation, used by
    two of three: the ring on a later duplicate is matched on every rank (the same ordinals)."""
    exp = more_runs.exp(mode)
    # world 0 -> 2: 3 ints on C2 and 3 on the ring; the ring (REV reversed): 2 -> 1, 1 -> 0
    check_more_messages(exp, {(0, 2): (2, 24), (1, 0): (1, 8), (2, 1): (1, 4)})
    # MPI_COMM_WORLD, MPI_COMM_SELF, REV, C2 (and cartsub's 2-D grid), the ring's: on each rank
    n = 6 if mode == "cartsub" else 5
    text = info(exp).stdout
    assert re.findall(r"(?m)^  communicators (\d+)$", text) == [str(n)] * 3, text
    assert re.search(r"(?m)^MPI: 3 rank\(s\) of a world of 3, %d communicator\(s\), " % (n + 2),
                     text), text
