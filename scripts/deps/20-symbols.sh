#!/usr/bin/env bash
# The resolver's tests (engine/crates/plx-analysis/tests/debug_info.rs) build small programs with
# every form of debug information: binutils (nm, objcopy, strip; ld with zstd-compressed
# sections) and llvm-dwp (.dwp packages).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install binutils llvm
