#!/usr/bin/env bash
# Installs what building and testing Parallax needs and is missing: Debian packages, the Rust
# toolchain's components, Python packages. Safe to run again; does nothing when all is there.
set -euo pipefail

apt_packages=(cmake ninja-build gcc g++ make binutils valgrind python3 python3-pip pkg-config uftrace
              openmpi-bin libopenmpi-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || { echo "install-deps: Rust (cargo) is required: https://rustup.rs" >&2; exit 1; }
fi
export PATH="$HOME/.cargo/bin:$PATH"
if command -v rustup >/dev/null 2>&1; then
  for c in clippy rustfmt; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" >/dev/null 2>&1 || true
  done
fi

py=python3
pip_missing=()
# import name:pip package — the tests read our exports with the real readers: Hatchet (TAU
# profiles), the official OTF2 library, pandas/Polars/DuckDB (Parquet)
for pair in pytest:pytest hatchet:llnl-hatchet otf2:otf2 pyarrow:pyarrow pandas:pandas polars:polars \
            duckdb:duckdb; do
  $py -c "import ${pair%%:*}" 2>/dev/null || pip_missing+=("${pair#*:}")
done
if [ ${#pip_missing[@]} -gt 0 ]; then
  echo "install-deps: pip installing ${pip_missing[*]}"
  $py -m pip install -q "${pip_missing[@]}" 2>/dev/null || $py -m pip install -q --break-system-packages "${pip_missing[@]}"
fi
