#!/usr/bin/env bash
# The resolver's tests (engine/crates/plx-analysis/tests/debug_info.rs) build small programs with
# every form of debug information: binutils (nm, objcopy, strip; ld with zstd-compressed
# sections) and llvm-dwp (.dwp packages). libdw-dev: the header libplx is built with to read the
# functions inlined around a C++ catch handler (runtime/src/core/inline_scopes.c; libdw.so.1 is
# loaded with dlopen at a program's first such catch).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install binutils llvm libdw-dev
