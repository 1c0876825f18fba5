"""The package's build backend: maturin's (PEP 517), after staging the plx command that the
wheel carries (``scripts/plx``, installed on PATH with the package).

``make python`` stages plx itself (build/python-data/scripts/plx); ``pip install ./python``
without it builds plx here first with ``make engine`` in the repository (cargo, and npm for the
viewer embedded in plx), or stops with a message saying what is missing."""

import os
import shutil
import subprocess
from pathlib import Path

import maturin
from maturin import (  # noqa: F401 (the hooks this backend does not change)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[2]
STAGED = ROOT / "build" / "python-data" / "scripts" / "plx"


def check_tree():
    """Stops with a message unless python/ is inside the repository (the engine's crates)."""
    if not (ROOT / "engine" / "crates" / "plx-python" / "Cargo.toml").exists():
        raise RuntimeError(
            f"parallax-hpc: the package is built from the Parallax repository (its engine "
            f"crates): no {ROOT / 'engine' / 'crates' / 'plx-python'} beside "
            f"{ROOT / 'python'}; build from a checkout of the repository, or install a wheel")


def stage_plx():
    """Puts a stripped plx at STAGED, built by `make engine` when it is not there."""
    check_tree()
    if STAGED.exists():
        return
    built = ROOT / "build" / "bin" / "plx"
    if not built.exists():
        if not (ROOT / "Makefile").exists() or shutil.which("make") is None:
            raise RuntimeError(
                "parallax-hpc: the wheel carries the plx command, built from the repository "
                f"around {ROOT / 'python'} with `make engine` (make, cargo, npm): no Makefile "
                "or no make here; build from a checkout of the repository, or run `make python` "
                "and install build/wheels/parallax_hpc-*.whl")
        cp = subprocess.run(["make", "-C", str(ROOT), "engine"], capture_output=True, text=True)
        if cp.returncode != 0 or not built.exists():
            raise RuntimeError(
                f"parallax-hpc: `make -C {ROOT} engine` (building the plx command the wheel "
                f"carries) failed with status {cp.returncode}; it needs cargo (rustup.rs) and "
                f"npm (the viewer embedded in plx):\n{cp.stdout[-2000:]}{cp.stderr[-3000:]}")
    STAGED.parent.mkdir(parents=True, exist_ok=True)
    tmp = STAGED.with_suffix(".new")
    if shutil.which("strip"):
        subprocess.run(["strip", "-o", str(tmp), str(built)], check=True)
    else:
        shutil.copy2(built, tmp)
    os.chmod(tmp, 0o755)
    tmp.replace(STAGED)


def check_tree_and_data():
    """check_tree(), and the data directory the wheel takes (maturin wants it there already
    for the metadata; plx is staged into it by the wheel's build)."""
    check_tree()
    STAGED.parent.mkdir(parents=True, exist_ok=True)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    check_tree_and_data()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    check_tree_and_data()
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    stage_plx()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    stage_plx()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
