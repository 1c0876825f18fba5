"""Shared helpers of the Parallax end-to-end tests.

Tiny programs under programs/ are built once per session with build/bin/plx-cc or plx-c++,
run under `plx run`, and their reports (CSV or JSON) compared with exact expectations.
"""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from components import require_tools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "bin"
PLX = BIN / "plx"
PLX_CC = BIN / "plx-cc"
PLX_CXX = BIN / "plx-c++"
LIBPLX = ROOT / "build" / "lib" / "libplx.so"
PROGRAMS = Path(__file__).resolve().parent / "programs"
DOCS = ROOT / "docs"

# Regions of the runtime's own work (kind "runtime"): plx_flush (region 0), plx_symbols (1).
RUNTIME_REGIONS = {"plx_flush", "plx_symbols"}

# Every export as a reading command with its arguments (OUT: the output path), for the tests
# that run every reader of an experiment.
EXPORTS = [("export", "--format", f, "-o", "OUT")
           for f in ("chrome", "otf2", "tau", "sddf", "parquet", "text")]

# Time values are printed with 9 decimals in CSV: allow the rounding of a few dozen of them.
EPS = 1e-6


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: a test that takes seconds (e.g. 64 oversubscribed MPI ranks); `-m slow` selects them"
    )


def pytest_sessionstart(session):
    missing = [p for p in (PLX, PLX_CC, PLX_CXX, LIBPLX) if not p.exists()]
    if missing:
        pytest.exit(
            "Parallax is not built (missing %s): run `make all` in %s first"
            % (", ".join(str(m) for m in missing), ROOT),
            returncode=2,
        )


def clean_env(extra=None):
    """The environment of the tests' commands: no PLX_* or LD_PRELOAD inherited from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLX_") and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def _fail_message(cp):
    args = cp.args if isinstance(cp.args, str) else " ".join(str(a) for a in cp.args)
    return "command %s exited %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
        args,
        cp.returncode,
        (cp.stdout or "")[-4000:],
        (cp.stderr or "")[-4000:],
    )


def build(src, out, *flags, cxx=False, env=None):
    """Compiles programs/<src> (a name or a list of names) with plx-cc / plx-c++ into out."""
    sources = [src] if isinstance(src, (str, Path)) else list(src)
    paths = [str(PROGRAMS / s) for s in sources]
    compiler = PLX_CXX if cxx else PLX_CC
    cmd = [str(compiler), *flags, *paths, "-o", str(out)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(env))
    assert cp.returncode == 0, _fail_message(cp)
    return Path(out)


def plx(*args, check=True, env=None, cwd=None, timeout=300):
    """Runs build/bin/plx ARGS; returns the CompletedProcess (text). check: exit status 0."""
    cmd = [str(PLX), *(str(a) for a in args)]
    cp = subprocess.run(
        cmd, capture_output=True, text=True, env=clean_env(env), cwd=cwd, timeout=timeout
    )
    if check:
        assert cp.returncode == 0, _fail_message(cp)
    return cp


def run(out, *command, opts=(), env=None, status=0, cwd=None):
    """`plx run -o OUT OPTS -- COMMAND...`, asserting plx run's exit status."""
    cp = plx("run", "-o", out, *opts, "--", *command, check=False, env=env, cwd=cwd)
    assert cp.returncode == status, _fail_message(cp)
    return cp


def process_dirs(directory):
    """The process directories of experiment `directory` (`<host>.<pid>/`), sorted: not the
    hidden ones beside them (`.plx-view/`, where plx view keeps the merge pass's index)."""
    return sorted(d for d in Path(directory).iterdir() if d.is_dir() and not d.name.startswith("."))


def report_csv(directory, *extra, env=None):
    """`plx report DIR --format csv EXTRA...` as a list of dict rows."""
    cp = plx("report", directory, "--format", "csv", *extra, env=env)
    return list(csv.DictReader(io.StringIO(cp.stdout)))


def report_json(directory, *extra, env=None):
    """`plx report DIR --format json EXTRA...` as a dict."""
    cp = plx("report", directory, "--format", "json", *extra, env=env)
    return json.loads(cp.stdout)


def info(directory, check=True):
    return plx("info", directory, check=check)


def total_rows(rows):
    return [r for r in rows if r["process"] == "all" and r["thread"] == "all"]


def total(rows, function):
    """The total row (process all, thread all) of FUNCTION in a flat CSV report."""
    found = [r for r in total_rows(rows) if r["function"] == function]
    assert len(found) == 1, "expected one total row of %r, found %d" % (function, len(found))
    return found[0]


def calls(rows, function):
    """Total calls of FUNCTION in a flat CSV report, 0 when it has no row."""
    found = [r for r in total_rows(rows) if r["function"] == function]
    assert len(found) <= 1, "several total rows of %r" % function
    return int(found[0]["calls"]) if found else 0


def path_of(row):
    return tuple(row["callpath"].split(" => "))


def callpath_rows(rows, where=None):
    """{callpath tuple: row} of the rows of one location (default: the total rows)."""
    sel = total_rows(rows) if where is None else [r for r in rows if where(r)]
    out = {}
    for r in sel:
        p = path_of(r)
        assert p not in out, "callpath %r twice in one location" % (p,)
        out[p] = r
    return out


def paths_of(out):
    """{callpath: (calls, inclusive seconds)} over every thread, runtime regions left out."""
    rows = callpath_rows(report_csv(out, "--callpath"))
    return {
        p: (int(r["calls"]), float(r["inclusive_s"]))
        for p, r in rows.items()
        if not set(p) & RUNTIME_REGIONS
    }


def location_rows(rows):
    """{(process, thread): [rows]} of the per-location rows (totals left out)."""
    out = {}
    for r in rows:
        if r["process"] == "all":
            continue
        out.setdefault((r["process"], r["thread"]), []).append(r)
    return out


def all_threads(doc):
    """[(process, thread)] of a JSON report."""
    return [(p, t) for p in doc["processes"] for t in p["threads"]]


def functions_of(entry):
    """{function name: entry} of a JSON functions list (thread, process or total)."""
    out = {}
    for f in entry["functions"]:
        assert f["function"] not in out, "function %r twice" % f["function"]
        out[f["function"]] = f
    return out


def user_functions(rows_or_names):
    names = {r["function"] if isinstance(r, dict) else r for r in rows_or_names}
    return names - RUNTIME_REGIONS


def assert_time_relations(rows):
    """inclusive >= exclusive >= 0 on every row."""
    for r in rows:
        exc, inc = float(r["exclusive_s"]), float(r["inclusive_s"])
        assert exc >= 0, r
        assert inc + 1e-9 >= exc, r


def info_thread_lines(text):
    """The thread table rows of `plx info`: list of dicts with index, tid, name, trace, lost,
    profile (the name must not contain spaces)."""
    out = []
    pat = re.compile(
        r"^\s+(\d+)\s+(\d+)\s+(\S+)\s+(-|[\d.]+ \S+)\s+([\d.]+ \S+)\s+(\d+)\s+(\d+)\s+(.+?)\s*$"
    )
    for line in text.splitlines():
        m = pat.match(line)
        if m:
            out.append(
                {
                    "thread": int(m.group(1)),
                    "tid": int(m.group(2)),
                    "name": m.group(3),
                    "trace_events": int(m.group(6)),
                    "lost": int(m.group(7)),
                    "profile": m.group(8),
                }
            )
    return out


# The compilers behind plx-cc / plx-c++ that every compiler-hook test runs under: GCC calls the
# exit hooks of frames an exception unwinds, Clang does not (the runtime closes them itself).
TOOLCHAINS = {
    "gcc": {"PLX_CC": "gcc", "PLX_CXX": "g++"},
    "clang": {"PLX_CC": "clang", "PLX_CXX": "clang++"},
}


class Programs:
    """Builds each (sources, flags, toolchain) once per session into a temporary directory."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def get(self, src, *flags, cxx=False, name=None, toolchain=None):
        """toolchain: a TOOLCHAINS name (plx-cc's default compiler when None)."""
        key = (src if isinstance(src, str) else tuple(src), flags, cxx, toolchain)
        if key not in self.cache:
            first = src if isinstance(src, str) else src[0]
            stem = name or Path(first).stem
            if toolchain:
                require_tools(*TOOLCHAINS[toolchain].values(), what=toolchain)
                stem += "-" + toolchain
            out = self.root / ("%s-%d" % (stem, len(self.cache)))
            env = TOOLCHAINS[toolchain] if toolchain else None
            self.cache[key] = build(src, out, *flags, cxx=cxx, env=env)
        return self.cache[key]


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    return Programs(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="session")
def exp_root(tmp_path_factory):
    """A directory for experiments shared by module-scoped fixtures."""
    return tmp_path_factory.mktemp("exp")


@pytest.fixture(scope="session")
def fib_bin(programs):
    return programs.get("fib.c", "-O0")


def have(tool):
    return shutil.which(tool) is not None


@pytest.fixture
def open_mpi():
    """Open MPI's mpicc and mpirun (a test using this fixture fails under CI without them)."""
    require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")
