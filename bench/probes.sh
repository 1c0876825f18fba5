#!/usr/bin/env bash
# make bench (called by bench/run.sh): a probed call (plx run --probe, entry rewritten) against
# the compiler hook (-finstrument-functions) and the plain call, best of N runs each, in one run.
# Writes build/bench/probes.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
calls=${PLX_BENCH_CALLS:-20000000}
reps=${PLX_BENCH_REPS:-5}
cc -O2 -g bench/probe.c -o "$out/probe-plain"
cc -O2 -g -finstrument-functions bench/probe.c -o "$out/probe-inst"

best() {
  local b=""
  for _ in $(seq "$reps"); do
    v=$("$@" 2>/dev/null | awk '/ns\/call/ {print $1}')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
run() { rm -rf "$out/exp-probe"; "$bin/plx" run -o "$out/exp-probe" "$@"; }

plain=$(best "$out/probe-plain" "$calls")
hook=$(best run -- "$out/probe-inst" "$calls")
probe=$(best run --probe leaf -- "$out/probe-plain" "$calls")
hook_trace=$(best run --trace --cpu-sample 0 -- "$out/probe-inst" "$calls")
probe_trace=$(best run --trace --cpu-sample 0 --probe leaf -- "$out/probe-plain" "$calls")
ratio() { awk -v a="$1" -v b="$2" -v p="$plain" 'BEGIN { printf "%.2fx", (a - p) / (b - p) }'; }
{
  echo "Probes (bench/probe.c, $calls calls, best of $reps; ns per call, cost = over the plain call):"
  echo
  echo "| mode | plain | compiler hook | probe | probe cost / hook cost |"
  echo "|---|---|---|---|---|"
  echo "| profile | $plain | $hook | $probe | $(ratio "$probe" "$hook") |"
  echo "| trace | $plain | $hook_trace | $probe_trace | $(ratio "$probe_trace" "$hook_trace") |"
} | tee "$out/probes.md"
