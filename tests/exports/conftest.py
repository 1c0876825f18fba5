"""Shared fixtures of the export tests: real MPI experiments traced with `plx run --trace`.

examples/mpi/life.c (4 ranks with worker threads: halo exchange and MPI_Allreduce),
runtime/tests/t_mpi.c (blocking and nonblocking point-to-point, wildcard receives, collectives
with roots, a split communicator) and examples/mpi/pingpong.c (20 round trips of 8 and 4096
bytes between ranks 0 and 1) are built with build/bin/plx-mpicc once per session and run
under `mpirun -np 4 plx run --trace`.
"""

import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from components import require_tools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "bin"
PLX = BIN / "plx"
PLX_MPICC = BIN / "plx-mpicc"
MPI_TIMEOUT = 120


def pytest_sessionstart(session):
    if not PLX.exists():
        pytest.exit("Parallax is not built (missing %s): run `make all` first" % PLX, returncode=2)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLX_") and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def run(cmd, check=True, **kw):
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                        env=kw.pop("env", clean_env()), timeout=kw.pop("timeout", 600), **kw)
    if check and cp.returncode != 0:
        raise AssertionError("%s exited %d\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            " ".join(str(c) for c in cmd), cp.returncode, cp.stdout[-3000:], cp.stderr[-3000:]))
    return cp


def plx(*args, **kw):
    return run([PLX, *args], **kw)


@pytest.fixture
def open_mpi():
    require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")


needs_mpi = pytest.mark.usefixtures("open_mpi")

PROGRAMS = {
    "life": (ROOT / "examples" / "mpi" / "life.c", ["20", "64", "2"]),
    "t_mpi": (ROOT / "runtime" / "tests" / "t_mpi.c", []),
    "pingpong": (ROOT / "examples" / "mpi" / "pingpong.c", ["20", "8", "4096"]),
}


@pytest.fixture(scope="session")
def experiments(tmp_path_factory):
    """{name: experiment directory} of the traced MPI runs."""
    require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")
    root = tmp_path_factory.mktemp("exports")
    out = {}
    for name, (src, args) in PROGRAMS.items():
        exe = root / name
        run([PLX_MPICC, "-O1", "-g", src, "-o", exe, "-lm"])
        exp = root / (name + ".exp")
        mpirun = ["mpirun", "--oversubscribe", "-np", "4"]
        if os.geteuid() == 0:
            mpirun.insert(1, "--allow-run-as-root")
        run([*mpirun, PLX, "run", "--trace", "-o", exp, "--", exe, *args], cwd=root,
            timeout=MPI_TIMEOUT)
        out[name] = exp
    return out


@pytest.fixture(scope="session")
def queue_experiment(tmp_path_factory):
    """examples/threads/queue.c traced (2 producers, 2 consumers, 300 items each): mutexes,
    condition variables, joined threads."""
    root = tmp_path_factory.mktemp("queue")
    exe = root / "queue"
    run([BIN / "plx-cc", "-O1", "-g", "-pthread", ROOT / "examples" / "threads" / "queue.c",
         "-o", exe])
    exp = root / "queue.exp"
    plx("run", "--trace", "-o", exp, "--", exe, "2", "2", "300")
    return exp


LINE = re.compile(r"^\s*(-?\d+) (\S+)\s+(enter|exit|user|send|recv|collective|acquire|release|ssend|srecv)\s+(.*)$")
# events the text export shows that OTF2 and SDDF leave out (the Parquet tables hold the
# synchronization events too: `with_sync`)
SYNC = ("acquire", "release")
SYNC_AND_STREAM = (*SYNC, "ssend", "srecv")


class TextExport:
    """`plx export --format text`, parsed: per location label, its events as (kind, region)."""

    def __init__(self, path):
        self.events = defaultdict(list)
        self.with_sync = defaultdict(list)  # the events and the acquires and releases
        self.sync = 0
        self.total = None
        self.locations = {}  # label -> (who, thread name)
        self.skipped = 0  # synchronization and stream events (only the text export has them)
        for line in Path(path).read_text().splitlines():
            if line.startswith("#"):
                # LABEL "NAME" (pid PID on HOST): the long location name
                m = re.match(r"^#\s+(\S+) \"(.*)\" (\(pid .* on .*\))$", line)
                if m and not line.startswith("# time"):
                    self.locations[m.group(1)] = (m.group(3), m.group(2))
                m = re.match(r"^# (\d+) events$", line)
                if m:
                    self.total = int(m.group(1))
                continue
            m = LINE.match(line)
            assert m, line
            _, label, kind, rest = m.groups()
            # enter/exit: the region is the rest; others: the region then two spaces and details
            region = rest if kind in ("enter", "exit") else rest.split("  ")[0]
            if kind in SYNC_AND_STREAM:
                self.skipped += 1
                if kind in SYNC:
                    self.sync += 1
                    self.with_sync[label].append((kind, region))
                continue
            self.events[label].append((kind, region))
            self.with_sync[label].append((kind, region))
        if self.total is not None:
            self.total -= self.skipped  # the count the other formats hold

    def counts(self):
        return {loc: Counter(k for k, _ in evs) for loc, evs in self.events.items()}


@pytest.fixture(scope="session")
def text_exports(experiments, tmp_path_factory):
    root = tmp_path_factory.mktemp("text")
    out = {}
    for name, exp in experiments.items():
        path = root / (name + ".txt")
        plx("export", exp, "--format", "text", "-o", path)
        out[name] = TextExport(path)
    return out
