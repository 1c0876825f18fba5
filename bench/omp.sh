#!/usr/bin/env bash
# OpenMP: cost of an empty parallel region and of a barrier (bench/omp.c, 1 and 2 threads), unmeasured
# and measured (libplx.so preloaded, profile mode) in one run, under GCC's libgomp and LLVM's
# libomp (when clang is installed). Writes build/bench/omp.md; bench/run.sh appends it.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$PWD/build/lib
out=$PWD/build/bench
mkdir -p "$out"
reps=${PLX_BENCH_REPS:-5}
regions=${PLX_BENCH_OMP_REGIONS:-20000}

best() { # COMMAND...: the least ns/call of $reps runs
  local b=""
  for _ in $(seq "$reps"); do
    v=$("$@" 2>/dev/null | awk '/ns\/call/ {print $1}')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
measured() {
  rm -rf "$out/exp-omp"
  env PLX_OUTPUT="$out/exp-omp" LD_PRELOAD="$lib/libplx.so" "$@"
}

rows=""
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  exe="$out/omp-$cc"
  "$cc" -O2 -fopenmp bench/omp.c -o "$exe"
  runtime=$([ "$cc" = gcc ] && echo "libgomp (GOMP_* interposed)" || echo "libomp (OMPT)")
  for threads in 1 2; do
    for what in parallel barrier; do
      n=$regions
      [ "$what" = barrier ] && n=$((regions * 5))
      plain=$(OMP_NUM_THREADS=$threads best "$exe" "$what" "$n")
      meas=$(OMP_NUM_THREADS=$threads best measured "$exe" "$what" "$n")
      rows="$rows| $runtime | $threads | $what | $plain | $meas | $(awk -v a="$meas" -v b="$plain" 'BEGIN { printf "%+.0f", a - b }') |"$'\n'
    done
  done
done
{
  echo "OpenMP constructs (bench/omp.c, best of $reps runs), ns per empty parallel region or per"
  echo "barrier; one thread shows the measurement's own cost, two threads also the machine's load"
  echo "(load average $(cut -d' ' -f1 /proc/loadavg) when this ran):"
  echo
  echo "| runtime | threads | construct | unmeasured | measured (profile) | added |"
  echo "|---|---|---|---|---|---|"
  printf "%s" "$rows"
} > "$out/omp.md"
cat "$out/omp.md"
