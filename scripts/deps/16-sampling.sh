#!/usr/bin/env bash
# Call-stack sampling (`plx run --sample`): libunwind unwinds each sample in the process from
# .eh_frame (libunwind-dev: its header; libplx loads libunwind.so.8 with dlopen, RTLD_LOCAL, so
# its _Unwind_* never replace the program's). linux-perf is the reference the sampling benchmark
# compares with (perf record --call-graph dwarf|fp).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install libunwind-dev linux-perf
