#!/usr/bin/env bash
# OpenMP: GCC's libgomp comes with gcc; LLVM's runtime (libomp, with its OMPT interface) and
# clang to build for it.
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
apt_install libomp-dev clang
