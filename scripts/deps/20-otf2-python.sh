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
pip_install maturin:maturin matplotlib:matplotlib
command -v patchelf >/dev/null || apt_install patchelf
# auditwheel 6.8 and later refuse Debian 12's patchelf (0.14.3; they want 0.14.5): 6.7
python3 -c 'import importlib.metadata as m, sys
v = tuple(int(x) for x in m.version("auditwheel").split(".")[:2])
sys.exit(0 if v < (6, 8) else 1)' 2>/dev/null || {
  echo "install-deps: pip installing auditwheel<6.8"
  python3 -m pip install -q "auditwheel<6.8" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "auditwheel<6.8"
}
# the parallax package of this tree is not installed here: `make python` builds its wheel (and
# its native module into python/parallax/), tests/python installs the wheel into a fresh venv
