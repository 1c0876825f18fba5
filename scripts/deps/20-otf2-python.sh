#!/usr/bin/env bash
# OTF2 and the Python package: the OTF2 C library the engine links (libotf2-trace-dev) and its
# tools (otf2-print, which the export tests read archives with); MPICH beside Open MPI (the MPI
# tests run on both); the Python readers the tests and the parallax package use.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"

apt_install libotf2-trace-dev otf2-tools mpich libmpich-dev
pip_install otf2:otf2 pyarrow:pyarrow pandas:pandas polars:polars hatchet:llnl-hatchet
pip_install thicket:llnl-thicket
# maturin builds the parallax package's native module (engine/crates/plx-python) and its wheel;
# auditwheel (with patchelf) makes it a manylinux wheel (make python-manylinux)
pip_install maturin:maturin matplotlib:matplotlib auditwheel:auditwheel
command -v patchelf >/dev/null || apt_install patchelf
# the parallax package of this tree is not installed here: `make python` builds its wheel (and
# its native module into python/parallax/), tests/python installs the wheel into a fresh venv
