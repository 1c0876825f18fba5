#!/usr/bin/env bash
# Call-stack sampling (`plx run --sample`): libunwind unwinds each sample in the process from
# .eh_frame (libunwind-dev: its header; libplx loads libunwind.so.8 with dlopen, RTLD_LOCAL, so
# its _Unwind_* never replace the program's). linux-perf and uftrace are the references the
# sampling benchmark compares with (perf record --call-graph dwarf|fp; uftrace record -P ., which
# traces every call of the unmodified binary by patching it: uftrace does not sample).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install libunwind-dev linux-perf uftrace
