#!/usr/bin/env bash
# Java call-stack sampling (make bench, called by bench/run.sh): the slowdown of a compute-bound
# Java program (bench/java/JavaSampling.java: a hot method the JIT compiles, on a thread "spin")
# run plain (no agent), under `plx run` without sampling, and under `plx run --sample` at 100 Hz,
# 1 kHz and 10 kHz. The class is excluded by the filter (not rewritten): what is measured is the
# sampling alone. The runs alternate (plain, unsampled, 100, 1k, 10k, plain, ...; $reps rounds),
# so that the machine's load falls on every configuration alike; each ratio is the median of a
# round's CPU time against the same round's plain run, ns per sample the median of a round's
# (CPU sampled - CPU unsampled) / samples of the timed part. CPU time: the spin thread's own
# (ThreadMXBean), over the timed rounds after the warm-up; the samples of the timed part are the
# thread's samples (plx info) scaled by its timed share of the thread's CPU time.
# Writes build/bench/java-sampling.md (bench/run.sh appends it) and prints it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/bin
lib=$PWD/build/lib
out=$PWD/build/bench/java-sampling
reps=${PLX_BENCH_REPS:-5}
rounds=${PLX_BENCH_JAVA_SAMPLING_ROUNDS:-10000}
rm -f "$out/../java-sampling.md"
command -v javac >/dev/null && [ -f "$lib/plx-agent.jar" ] || {
  echo "java sampling bench: no JDK or agent jar; skipped"; exit 0; }
mkdir -p "$out"
javac -d "$out" bench/java/JavaSampling.java
echo "exclude class JavaSampling" > "$out/filter"

one() { # CONFIG: one run; prints "CONFIG CPU_S WALL_S SAMPLES THREAD_CPU_S"
  local cfg=$1 text opt=()
  rm -rf "$out/exp"
  if [ "$cfg" = plain ]; then
    text=$(java -cp "$out" JavaSampling "$rounds" 2>/dev/null)
  else
    [ "$cfg" != unsampled ] && opt=(--sample="$cfg")
    text=$("$bin/plx" run -o "$out/exp" "${opt[@]}" --filter "$out/filter" -- \
      java -cp "$out" JavaSampling "$rounds" 2>/dev/null)
  fi
  local cpu wall samples=0 thread_cpu=0
  cpu=$(awk '/cpu_s/ {print $1}' <<<"$text")
  wall=$(awk '/wall_s/ {print $1}' <<<"$text")
  if [ "$cfg" != plain ] && [ "$cfg" != unsampled ]; then
    read -r samples thread_cpu < <("$bin/plx" info "$out/exp" --format json | python3 -c '
import json, sys
t = [t for p in json.load(sys.stdin)["processes"] for t in p["threads"] if t["name"] == "spin"][0]
print((t["samples"] or {}).get("taken", 0), t["cpu_s"])')
  fi
  echo "$cfg $cpu $wall $samples $thread_cpu"
}

configs=(plain unsampled 100 1000 10000)
load0=$(cut -d' ' -f1 /proc/loadavg)
: > "$out/runs"
for _ in $(seq "$reps"); do
  for c in "${configs[@]}"; do
    one "$c" >> "$out/runs"
  done
done
load1=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$out/runs" "$reps" "$rounds" "$load0" "$load1" <<'PY' | tee "$out/../java-sampling.md"
import statistics as st
import sys

path, reps, rounds, load0, load1 = sys.argv[1:]
reps = int(reps)
runs = [line.split() for line in open(path)]
configs = ["plain", "unsampled", "100", "1000", "10000"]
by = {c: [] for c in configs}
for r in runs:
    by[r[0]].append([float(v) for v in r[1:]])
plain = by["plain"]
unsampled = by["unsampled"]
print("Java call-stack sampling (bench/java/sampling.sh): bench/java/JavaSampling.java, %s rounds "
      "of a JIT-compiled loop on one thread, its CPU time (ThreadMXBean); %d alternating rounds "
      "of all configurations, medians; load average %s at the start, %s at the end." %
      (rounds, reps, load0, load1))
print()
print("| configuration | CPU s | wall s | against plain | samples | ns/sample |")
print("|---|---|---|---|---|---|")
for c in configs:
    rows = by[c]
    cpu = st.median(r[0] for r in rows)
    wall = st.median(r[1] for r in rows)
    ratio = st.median(r[0] / p[0] for r, p in zip(rows, plain))
    name = {"plain": "java, no agent", "unsampled": "plx run, no sampling"}.get(
        c, "plx run --sample=%s" % c)
    samples = ns = "-"
    if c not in ("plain", "unsampled"):
        # the timed part's samples: the thread's, scaled by its timed share of its CPU time
        timed = [r[2] * min(1.0, r[0] / r[3]) if r[3] > 0 else 0 for r in rows]
        samples = "%.0f" % st.median(timed)
        per = [1e9 * (r[0] - u[0]) / n for r, u, n in zip(rows, unsampled, timed) if n > 0]
        ns = "%.0f" % st.median(per) if per else "-"
    print("| %s | %.3f | %.3f | %+.1f %% | %s | %s |" % (name, cpu, wall, 100 * (ratio - 1), samples, ns))
PY
