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
# maturin builds the parallax package's native module (engine/crates/plx-python) and its wheel
pip_install maturin:maturin matplotlib:matplotlib
# the parallax package of this tree, editable (python/)
python3 -c "import parallax, sys; sys.exit(0 if hasattr(parallax, 'open') else 1)" 2>/dev/null || {
  echo "install-deps: pip installing ./python (parallax)"
  python3 -m pip install -q -e "$here/../../python" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages -e "$here/../../python"
}
