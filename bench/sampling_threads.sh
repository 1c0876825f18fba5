#!/usr/bin/env bash
# Call-stack sampling of short threads: what each new thread's sampling costs (its event, its
# live file, libunwind's per-thread cache, its first samples, its tree written at its end).
# bench/sampling_threads.c starts $threads threads two at a time, each spinning 2 ms of its CPU
# time, run plain, under `plx run` unsampled and under `plx run --sample=1000`, the runs
# alternating ($reps rounds) so that the machine's load falls on each alike. Medians of the
# process's CPU time; µs per thread = (sampled - unsampled) / threads, which holds the samples
# each thread takes as well (about 1.6: a thread's 2 ms count its sampling's set-up). Writes
# build/bench/sampling-threads.md and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
reps=${PLX_BENCH_REPS:-5}
threads=${PLX_BENCH_THREADS:-400}
gcc -O2 -g -fomit-frame-pointer -pthread bench/sampling_threads.c -o "$out/sampling-threads"

one() { # CONFIG: prints "CONFIG CPU_S SAMPLES"
  local cfg=$1 text opt=() samples=0
  rm -rf "$out/exp-threads"
  if [ "$cfg" = plain ]; then
    text=$("$out/sampling-threads" "$threads" 2000 2)
  else
    [ "$cfg" = sampled ] && opt=(--sample=1000)
    text=$("$bin/plx" run -o "$out/exp-threads" "${opt[@]}" -- "$out/sampling-threads" "$threads" 2000 2 2>/dev/null)
    [ "$cfg" = sampled ] && samples=$("$bin/plx" info "$out/exp-threads" |
      awk '/thread [0-9]+: [0-9]+ samples/ {n += $3} END {print n + 0}')
  fi
  echo "$cfg $(awk '/cpu_s/ {print $1}' <<<"$text") $samples"
}

load0=$(cut -d' ' -f1 /proc/loadavg)
: > "$out/sampling-threads.runs"
for _ in $(seq "$reps"); do
  for c in plain unsampled sampled; do
    one "$c" >> "$out/sampling-threads.runs"
  done
done
load1=$(cut -d' ' -f1 /proc/loadavg)
rm -rf "$out/exp-threads"

python3 - "$out/sampling-threads.runs" "$reps" "$threads" "$load0" "$load1" <<'PY' | tee "$out/sampling-threads.md"
import statistics as st
import sys

path, reps, threads, load0, load1 = sys.argv[1:]
threads = int(threads)
by = {}
for line in open(path):
    c, cpu, n = line.split()
    by.setdefault(c, []).append((float(cpu), int(n)))
cpu = {c: st.median(r[0] for r in rows) for c, rows in by.items()}
print("Short threads sampled (bench/sampling_threads.sh): %d threads of 2 ms of CPU time each, "
      "%s alternating rounds, medians; load average %s at the start, %s at the end." %
      (threads, reps, load0, load1))
print()
print("| configuration | CPU s | samples | µs per thread against unsampled |")
print("|---|---|---|---|")
print("| plain | %.3f | - | - |" % cpu["plain"])
print("| plx run, no sampling | %.3f | - | - |" % cpu["unsampled"])
print("| plx run --sample=1000 | %.3f | %d | %.0f |" % (
    cpu["sampled"], st.median(r[1] for r in by["sampled"]),
    1e6 * (cpu["sampled"] - cpu["unsampled"]) / threads))
PY
