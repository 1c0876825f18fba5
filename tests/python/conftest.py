"""The parallax package as a user gets it: its wheel (``make python``, build/wheels/) installed
into a fresh virtual environment, imported with no ``plx`` on PATH and no ``$PLX``; every table
checked against the ``plx`` command of this tree (build/bin/plx, called by its path).

The experiments are those of tests/exports (its conftest's fixtures, loaded from there: the
two directories' conftests cannot share one pytest run).
"""

import glob
import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))

_spec = importlib.util.spec_from_file_location("exports_conftest",
                                               ROOT / "tests" / "exports" / "conftest.py")
exports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exports)

# the fixtures and helpers of tests/exports
experiments = exports.experiments
text_exports = exports.text_exports
queue_experiment = exports.queue_experiment
BIN, PLX, run, plx, clean_env = exports.BIN, exports.PLX, exports.run, exports.plx, exports.clean_env
WHEELS = ROOT / "build" / "wheels"


def pytest_sessionstart(session):
    if not PLX.exists():
        pytest.exit("Parallax is not built (missing %s): run `make all` first" % PLX, returncode=2)


def no_plx_env():
    """This process's environment without $PLX and without a plx on PATH."""
    env = clean_env()
    env.pop("PLX", None)
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and not os.path.exists(os.path.join(d, "plx")))
    return env


def wheel():
    """The wheel `make python` built (built here with maturin when there is none)."""
    found = sorted(glob.glob(str(WHEELS / "parallax_hpc-*.whl")))
    if not found:
        run(["make", "-C", ROOT, "python"], timeout=1200)
        found = sorted(glob.glob(str(WHEELS / "parallax_hpc-*.whl")))
    assert len(found) == 1, found
    return Path(found[0])


@pytest.fixture(scope="session")
def venv(tmp_path_factory):
    """A fresh virtual environment (pandas, pyarrow, Polars from the system's site packages)
    with the wheel installed, without its dependencies: its directory."""
    d = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", "--system-site-packages", d])
    run([d / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         wheel()], env=no_plx_env(), timeout=300)
    return d


@pytest.fixture(scope="session")
def parallax(venv):
    """The parallax module installed in `venv`, imported into this process (its
    site-packages first on sys.path), with $PLX and plx on PATH gone."""
    site = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    assert (Path(site) / "parallax" / "__init__.py").exists(), site
    for k in ("PLX",):
        os.environ.pop(k, None)
    os.environ["PATH"] = no_plx_env()["PATH"]
    sys.path.insert(0, site)
    for m in [m for m in sys.modules if m == "parallax" or m.startswith("parallax.")]:
        del sys.modules[m]
    import parallax as p
    assert Path(p.__file__).resolve().is_relative_to(Path(site).resolve()), p.__file__
    return p


def in_venv(venv, code, *args, **kw):
    """Runs Python `code` with the venv's interpreter, no plx on PATH, no $PLX."""
    return run([venv / "bin" / "python", "-c", code, *args], env=no_plx_env(), **kw)


@pytest.fixture(scope="session")
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


@pytest.fixture(scope="session")
def sampled_experiment(tmp_path_factory):
    """tests/e2e/programs/sample_spin.c (not instrumented: two threads spinning known CPU
    times) run with plx run --sample: profiles of samples only."""
    root = tmp_path_factory.mktemp("sampled")
    exe = root / "spin"
    run(["cc", "-O2", "-g", "-fomit-frame-pointer", "-pthread",
         ROOT / "tests" / "e2e" / "programs" / "sample_spin.c", "-o", exe])
    exp = root / "spin.exp"
    plx("run", "--sample", "-o", exp, "--", exe)
    return exp


@pytest.fixture(scope="session")
def counters_experiment(tmp_path_factory):
    """tests/e2e/programs/counters.c (threads faulting pages, napping, spinning), instrumented,
    run with plx run --counters page-faults,context-switches,task-clock (whole-thread totals)
    and the counters rules of docs/counters.md's example (counted functions, a multiplexed
    context, and `cycles`, refused where the machine has no PMU)."""
    root = tmp_path_factory.mktemp("counters")
    exe = root / "counters"
    run(["cc", "-O1", "-g", "-finstrument-functions", "-pthread",
         ROOT / "tests" / "e2e" / "programs" / "counters.c", "-o", exe])
    rules = root / "counters.filter"
    rules.write_text("counters touch_pages page-faults,minor-faults\n"
                     "counters nap context-switches,task-clock\n"
                     "counters spin task-clock,cycles\n"
                     "counters step task-clock | page-faults,context-switches every 10\n")
    exp = root / "counters.exp"
    plx("run", "--counters", "page-faults,context-switches,task-clock", "--filter", rules,
        "-o", exp, "--", exe, "500", "20", "5000000")
    return exp
