#!/usr/bin/env bash
# Installs what building and testing Parallax needs and is missing: Debian packages, the Rust
# toolchain's components, Python packages, then each component of scripts/deps/ (one script a
# component: MPI libraries, JVM pieces, browser, ...). Safe to run again; does nothing when all
# is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/deps/lib.sh"

apt_install cmake ninja-build gcc g++ gfortran make binutils valgrind python3 python3-pip pkg-config uftrace \
            openmpi-bin libopenmpi-dev

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || { echo "install-deps: Rust (cargo) is required: https://rustup.rs" >&2; exit 1; }
fi
export PATH="$HOME/.cargo/bin:$PATH"
if command -v rustup >/dev/null 2>&1; then
  for c in clippy rustfmt; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" >/dev/null 2>&1 || true
  done
fi

# the tests read our exports with the real readers: Hatchet (TAU profiles), the official OTF2
# library, pandas/Polars/DuckDB (Parquet)
pip_install pytest:pytest pytest_rerunfailures:pytest-rerunfailures hatchet:llnl-hatchet otf2:otf2 pyarrow:pyarrow pandas:pandas polars:polars \
            duckdb:duckdb

for component in "$here"/deps/[0-9]*.sh; do
  [ -e "$component" ] || continue
  bash "$component"
done
