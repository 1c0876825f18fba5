#!/usr/bin/env bash
# Call-stack sampling: the slowdown of a compute-bound program (bench/sampling.c, gcc -O2 -g
# without frame pointers) under `plx run --sample` at 100 Hz, 1 kHz and 10 kHz (its samples
# delivered as SIGTRAP, the default, and as SIGRTMIN+6: PLX_SAMPLE_SIGNAL=rt), against perf
# record (-e cpu-clock, --call-graph dwarf on the same binary, --call-graph fp on one built with
# frame pointers) in the same run; each figure the best (least CPU time) of $reps runs.
# Measured: the program's own CPU time (user + system: the timer interrupts and signals are
# charged to it), ns per sample = (CPU time sampled - CPU time unsampled) / samples, and the
# bytes written per sample; and the kernel's share alone: the program signalled the same ways
# into an empty handler (bench/sampling.c ROUNDS HZ [rt]). uftrace (which does not sample) traces every
# call of the same binary, patched at run time, keeping only calls of 1 ms or more (-t 1ms, so
# that the data stays small): the cost of tracing instead of sampling. Writes
# build/bench/sampling.md; bench/run.sh appends it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
reps=${PLX_BENCH_REPS:-5}
rounds=${PLX_BENCH_SAMPLING_ROUNDS:-30000}

gcc -O2 -g -fomit-frame-pointer bench/sampling.c -o "$out/sampling-nofp"
gcc -O2 -g -fno-omit-frame-pointer bench/sampling.c -o "$out/sampling-fp"

best() { # COMMAND...: the least CPU time (s) the program printed in $reps runs
  local b=""
  for _ in $(seq "$reps"); do
    v=$("$@" 2>/dev/null | awk '/cpu_s/ {print $1}')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
plx_run() { # HZ [trap|rt]: the program under plx run (--sample=HZ when HZ > 0)
  local hz=$1 opt=()
  [ "$hz" -gt 0 ] && opt=(--sample="$hz")
  rm -rf "$out/exp-sampling"
  PLX_SAMPLE_SIGNAL=${2:-trap} "$bin/plx" run -o "$out/exp-sampling" "${opt[@]}" -- \
    "$out/sampling-nofp" "$rounds" 2>/dev/null
}
perf_run() { # MODE HZ EXE
  perf record -q -o "$out/sampling.perf" -e cpu-clock -F "$2" --call-graph "$1" -- "$3" "$rounds"
}
uftrace_run() {
  rm -rf "$out/uftrace.data"
  uftrace record -d "$out/uftrace.data" -P . -t 1ms -- "$out/sampling-nofp" "$rounds"
}
plx_samples() { "$bin/plx" info "$out/exp-sampling" | awk '/thread 0: .* samples/ {print $3}'; }
perf_samples() { perf report -i "$out/sampling.perf" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}'; }

plain=$(best "$out/sampling-nofp" "$rounds")
plain_fp=$(best "$out/sampling-fp" "$rounds")
unsampled=$(best plx_run 0)
perf_ok=""
perf record -q -o "$out/sampling.perf" -e cpu-clock -- true >/dev/null 2>&1 && perf_ok=1

rows=""
row() { # WHAT HZ CPU BASE SAMPLES BYTES
  rows+=$(awk -v w="$1" -v hz="$2" -v c="$3" -v b="$4" -v n="$5" -v by="$6" 'BEGIN {
    printf "| %s | %d | %.3f | %.3f | %+.1f %% | %d | %.0f | %.0f |\n", w, hz, c, b, 100 * (c / b - 1), n,
      (n > 0 ? 1e9 * (c - b) / n : 0), (n > 0 ? by / n : 0) }')$'\n'
}
signal_samples() { "$out/sampling-nofp" "$rounds" "$@" | awk '/cpu_s/ {print $3}'; }
rm -rf "$out/exp-nosample" && "$bin/plx" run -o "$out/exp-nosample" -- "$out/sampling-nofp" 1 >/dev/null 2>&1
base_bytes=$(stat -c %s "$out"/exp-nosample/*/process.plx)
for hz in 100 1000 10000; do
  for how in trap rt; do
    sig="SIGTRAP from the event"
    [ "$how" = rt ] && sig="SIGRTMIN+6 through its file"
    args=("$hz")
    [ "$how" = rt ] && args+=(rt)
    c=$(best "$out/sampling-nofp" "$rounds" "${args[@]}")
    row "kernel timer + $sig, empty handler" "$hz" "$c" "$plain" "$(signal_samples "${args[@]}")" 0
    c=$(best plx_run "$hz" "$how")
    n=$(plx_samples)
    bytes=$(( $(stat -c %s "$out"/exp-sampling/*/process.plx) ))
    row "plx run --sample ($how)" "$hz" "$c" "$unsampled" "$n" $((bytes - base_bytes))
  done
  if [ -n "$perf_ok" ]; then
    c=$(best perf_run dwarf "$hz" "$out/sampling-nofp")
    row "perf record --call-graph dwarf" "$hz" "$c" "$plain" "$(perf_samples)" "$(stat -c %s "$out/sampling.perf")"
    c=$(best perf_run fp "$hz" "$out/sampling-fp")
    row "perf record --call-graph fp" "$hz" "$c" "$plain_fp" "$(perf_samples)" "$(stat -c %s "$out/sampling.perf")"
  fi
done

if uftrace record -d "$out/uftrace.data" -P . -t 1ms -- "$out/sampling-nofp" 1 >/dev/null 2>&1; then
  c=$(best uftrace_run)
  rows+=$(awk -v c="$c" -v b="$plain" -v by="$(du -sb "$out/uftrace.data" | cut -f1)" 'BEGIN {
    printf "| uftrace record -P . -t 1ms (every call traced) | - | %.3f | %.3f | %+.1f %% | - | - | %d in all |\n",
      c, b, 100 * (c / b - 1), by }')$'\n'
else
  rows+="| uftrace record -P . -t 1ms | - | could not run here | | | | | |"$'\n'
fi

{
  echo "Call-stack sampling (bench/sampling.sh): bench/sampling.c, $rounds rounds of a call tree 10"
  echo "frames deep, CPU time of the program (best of $reps runs). Unsampled: plain $plain s (frame"
  echo "pointers: $plain_fp s), under plx run without --sample $unsampled s."
  [ -n "$perf_ok" ] || echo "perf record could not run here: its rows are missing."
  echo
  echo "| sampler | Hz | CPU s | unsampled CPU s | slowdown | samples | ns/sample | bytes/sample |"
  echo "|---|---|---|---|---|---|---|---|"
  printf "%s" "$rows"
} | tee "$out/sampling.md"
