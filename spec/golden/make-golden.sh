#!/usr/bin/env bash
# Regenerates the golden experiments from the C runtime (run from the repository root after
# `make`), then the reader's expected dumps: PLX_BLESS=1 cargo test -p plx-format --test golden.
# Golden files are kept as they are once checked in: old formats must keep decoding.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/golden.c" <<'C'
#include <pthread.h>
#include <plx.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
void *worker(void *a) { fib(4); return a; }
int main(void)
{
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    plx_phase_begin("compute");
    plx_event("size", 5);
    fib(5);
    plx_phase_end("compute");
    pthread_join(t, 0);
    return 0;
}
C
../../build/bin/plx-cc -O0 "$tmp/golden.c" -o "$tmp/golden" -pthread
for mode in profile trace; do
  rm -rf "$mode"
  flags=""
  [ "$mode" = trace ] && flags="--trace"
  ../../build/bin/plx run -o "$tmp/$mode" $flags -- "$tmp/golden"
  mkdir -p "$mode"
  cp -r "$tmp/$mode"/* "$mode/"
  # the directory name holds the host and pid of the run that made it; keep it fixed
  mv "$mode"/* "$mode/golden.1000"
done
