#!/usr/bin/env bash
# Call-stack sampling (`plx run --sample`): libunwind unwinds each sample in the process from
# .eh_frame (libunwind-dev: its header; libplx loads libunwind.so.8 with dlopen, RTLD_LOCAL, so
# its _Unwind_* never replace the program's). linux-perf and uftrace are the references the
# sampling benchmark compares with (perf record --call-graph dwarf|fp; uftrace record -P ., which
# traces every call of the unmodified binary by patching it: uftrace does not sample). A Go
# compiler (golang-go) builds the Go program whose runtime takes every signal by the raw
# rt_sigaction system call (tests/e2e/test_sampling.py); a `go` already on PATH is kept.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install libunwind-dev linux-perf uftrace
command -v go >/dev/null 2>&1 || apt_install golang-go
