"""The package as it is installed elsewhere: the manylinux wheel (auditwheel repair of `make
python`'s wheel, as `make python-manylinux` makes it) in a fresh virtual environment, its plx
and its native module run with the system's OTF2 library hidden; and `make install PREFIX`,
which puts the package into PREFIX's site-packages beside the plx command."""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from components import require, require_module

from conftest import ROOT, no_plx_env, run, wheel

OTF2 = "/lib/x86_64-linux-gnu/libopen-trace-format2.so.10"


def site_packages(prefix):
    return Path(sysconfig.get_path("purelib", vars={"base": str(prefix),
                                                     "platbase": str(prefix)}))


def parquet_events(exp, tmp_path):
    """The rows of plx export --format parquet's events table (the tree's plx)."""
    run([ROOT / "build" / "bin" / "plx", "export", exp, "--format", "parquet", "-o",
         tmp_path / "pq"])
    import pyarrow.parquet as pq
    return pq.read_metadata(tmp_path / "pq" / "events.parquet").num_rows


def test_manylinux_wheel_runs_without_the_system_otf2(experiments, tmp_path):
    """The repaired wheel carries libotf2 (tagged manylinux_2_N), plx and the native module
    load it from the wheel: with the system's copy made unreadable (a private mount of
    /dev/null over it, no LD_LIBRARY_PATH) plx --version answers and parallax reads the events
    that plx export counts, where the tree's own plx cannot start."""
    require_module("auditwheel", "auditwheel (scripts/deps: pip install auditwheel)")
    require(os.geteuid() == 0 and shutil.which("unshare") and os.path.exists(OTF2),
            "root, unshare and the system's OTF2 library (to hide it)")
    out = tmp_path / "wheels"
    run([sys.executable, "-m", "auditwheel", "repair", "-w", out, wheel()], timeout=300)
    [repaired] = glob.glob(str(out / "parallax_hpc-*-manylinux_2_*.whl"))
    env = tmp_path / "env"
    run([sys.executable, "-m", "venv", "--system-site-packages", env])
    run([env / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         repaired], env=no_plx_env(), timeout=300)
    site = site_packages(env)
    assert glob.glob(str(site / "parallax_hpc.libs" / "libopen-trace-format2-*.so*"))
    exp = experiments["t_mpi"]
    script = f"""
mount --bind /dev/null {os.path.realpath(OTF2)}
{ROOT / 'build' / 'bin' / 'plx'} --version >/dev/null 2>&1 && echo tree-plx-runs
{env / 'bin' / 'plx'} --version
cd / && {env / 'bin' / 'python'} -c 'import parallax, sys; print(len(parallax.open(sys.argv[1]).events))' {exp}
"""
    e = {k: v for k, v in no_plx_env().items() if k != "LD_LIBRARY_PATH"}
    cp = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
                        capture_output=True, text=True, env=e, timeout=300)
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.split("\n")
    assert lines[0] == "plx 0.1.0", cp.stdout  # and not "tree-plx-runs": the library is hidden
    assert int(lines[1]) == parquet_events(exp, tmp_path)


def test_make_install_puts_the_package_beside_plx(experiments, tmp_path):
    """make install PREFIX=P: P/bin/plx, and the package in P's site-packages (the path it
    prints), importable from there with no plx on PATH, reading an experiment."""
    wheel()
    prefix = tmp_path / "prefix"
    cp = run(["make", "-C", ROOT, "install", "PREFIX=%s" % prefix, "PYTHON=%s" % sys.executable],
             timeout=600)
    site = site_packages(prefix)
    assert "the parallax package is in %s" % site in cp.stdout
    assert (prefix / "bin" / "plx").exists() and (site / "parallax" / "__init__.py").exists()
    env = {**no_plx_env(), "PYTHONPATH": str(site)}
    out = run([sys.executable, "-c", "import parallax, sys; e = parallax.open(sys.argv[1]); "
               "print(parallax.__file__); print(len(e.events))", experiments["t_mpi"]],
              env=env, cwd=tmp_path).stdout.split()
    assert out[0] == str(site / "parallax" / "__init__.py")
    assert int(out[1]) == parquet_events(experiments["t_mpi"], tmp_path)
    assert run([prefix / "bin" / "plx", "--version"]).stdout.strip() == "plx 0.1.0"
