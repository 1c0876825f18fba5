#!/usr/bin/env bash
# make bench: overhead of the runtime's hot path and the engine's throughput, each measured
# against a baseline in the same run. Results: build/bench/results.md (and on stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
lib=$PWD/build/lib
out=$PWD/build/bench
mkdir -p "$out"
calls=${PLX_BENCH_CALLS:-20000000}
reps=${PLX_BENCH_REPS:-5}

cc -O2 -g bench/overhead.c -o "$out/overhead-plain"
cc -O2 -g -finstrument-functions bench/overhead.c -o "$out/overhead-inst"
echo "exclude filtered_leaf" > "$out/exclude.filter"

# The best of $reps runs: the minimum is the least disturbed by the machine's other load.
best() {
  local b=""
  for _ in $(seq "$reps"); do
    v=$("$@" 2>/dev/null | awk '/ns\/(call|pair)/ {print $1}')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
measured() { # MODE [VAR=VALUE...] COMMAND...: runs COMMAND measured into exp-MODE
  local mode=$1; shift
  rm -rf "$out/exp-$mode"
  env PLX_OUTPUT="$out/exp-$mode" LD_PRELOAD="$lib/libplx.so" "$@"
}

plain=$(best "$out/overhead-plain" "$calls")
stub=$(best "$out/overhead-inst" "$calls")
profile=$(best measured profile "$out/overhead-inst" "$calls")
trace=$(best measured trace PLX_TRACE=1 "$out/overhead-inst" "$calls")
filtered=$(best measured filtered PLX_FILTER="$out/exclude.filter" "$out/overhead-inst" "$calls" f)
uftrace_ns=""
if command -v uftrace >/dev/null; then
  uftrace_calls=$((calls / 10))
  uftrace_ns=$(uftrace record -d "$out/uftrace.data" "$out/overhead-inst" "$uftrace_calls" 2>/dev/null | awk '/ns\/call/ {print $1}')
fi

# bytes per event: the trace file over the events it holds (2 per call)
trace_file=$(ls "$out"/exp-trace/*/trace.plx)
trace_bytes=$(stat -c %s "$trace_file")
bytes_per_event=$(awk -v b="$trace_bytes" -v c="$calls" 'BEGIN { printf "%.2f", b / (2 * c) }')

# engine: read + profile of a trace of >= 50 M events (25 M calls), against reading the file
engine_calls=${PLX_BENCH_ENGINE_CALLS:-25000000}
rm -rf "$out/exp-engine"
PLX_OUTPUT="$out/exp-engine" PLX_TRACE=1 LD_PRELOAD="$lib/libplx.so" "$out/overhead-inst" "$engine_calls" >/dev/null
engine_trace=$(ls "$out"/exp-engine/*/trace.plx)
cat "$engine_trace" > /dev/null
events=$((2 * engine_calls))
t0=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$out/engine.rss" "$bin/plx" report "$out/exp-engine" --format csv > "$out/engine.csv"
t1=$(date +%s.%N)
t2=$(date +%s.%N)
cat "$engine_trace" > /dev/null
t3=$(date +%s.%N)
engine_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
read_s=$(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.3f", b - a }')
engine_rate=$(awk -v e="$events" -v s="$engine_s" 'BEGIN { printf "%.1f", e / s / 1e6 }')
engine_rss=$(awk '{ printf "%.0f", $1 / 1024 }' "$out/engine.rss")

# exports: the merged trace of >= 50 M events over 17 locations (plx) against the OTF2 Python
# reader on the same program's OTF2 export (bench/export.sh; its section is appended below)
export_md=""
if [ "${PLX_BENCH_EXPORTS:-1}" != 0 ]; then
  bench/export.sh > /dev/null && export_md=$(cat "$out/export.md")
fi

# counters: a counted call (entry + exit, one group read of 3 software counters at each) against
# the same function measured uncounted, in the same run; and the cost of the read itself
counted_calls=${PLX_BENCH_COUNTED_CALLS:-500000}
echo "counters leaf task-clock,page-faults,context-switches" > "$out/counters.filter"
uncounted=$(best measured uncounted "$out/overhead-inst" "$counted_calls")
counted=$(best measured counted PLX_FILTER="$out/counters.filter" "$out/overhead-inst" "$counted_calls")
cc -O2 bench/counters.c -o "$out/counters-read"
read_line=$("$out/counters-read" 1000000 | head -1)
rdpmc_line=$("$out/counters-read" 1000000 | tail -1)
# probes: a call measured by a rewritten entry against the compiler hook (bench/probes.sh)
probes_md=$(bench/probes.sh | tail -n +1)
# OpenMP: an empty parallel region and a barrier, unmeasured and measured (bench/omp.sh)
omp_md=""
if [ "${PLX_BENCH_OMP:-1}" != 0 ]; then
  bench/omp.sh > /dev/null && omp_md=$(cat "$out/omp.md")
fi

# call-stack sampling at 100 Hz, 1 kHz, 10 kHz against perf record (bench/sampling.sh)
sampling_md=""
if [ "${PLX_BENCH_SAMPLING:-1}" != 0 ]; then
  bench/sampling.sh > /dev/null && sampling_md=$(cat "$out/sampling.md")
fi

# the Python package: events into a DataFrame, the engine inside against the former subprocess
# path (bench/python.sh; needs the wheel of `make python`)
python_md=""
if [ "${PLX_BENCH_PYTHON:-1}" != 0 ]; then
  { [ -n "$(ls build/wheels/parallax_hpc-*.whl 2>/dev/null)" ] || make -s python; } &&
    bench/python.sh > /dev/null && python_md=$(cat "$out/python.md")
fi

# synchronization wrappers: an uncontended mutex lock/unlock pair
cc -O2 bench/locks.c -o "$out/locks" -pthread
lock_plain=$(best "$out/locks" 10000000)
lock_profile=$(best measured locks "$out/locks" 10000000)
lock_trace=$(best measured locks PLX_TRACE=1 "$out/locks" 10000000)

# short-lived threads: 10,000 threads each making one measured call (tests/e2e/programs/short_threads.c),
# wall time of the whole program unmeasured, in profile mode and in trace mode
cc -O2 -finstrument-functions -pthread tests/e2e/programs/short_threads.c -o "$out/short_threads"
wall() { # best wall seconds of COMMAND over $reps runs
  local b=""
  for _ in $(seq "$reps"); do
    local t0 t1 v
    t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
    v=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
thr_plain=$(wall "$out/short_threads")
thr_profile=$(wall measured threads "$out/short_threads")
thr_trace=$(wall measured threads PLX_TRACE=1 "$out/short_threads")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }

# MPI wrapper: added latency of a ping-pong between 2 ranks, against the same program unmeasured
mpi_rows=""
if command -v mpicc >/dev/null && [ -f "$lib/libplx-mpi.so" ]; then
  mpicc -O2 examples/mpi/pingpong.c -o "$out/pingpong"
  rtt() { # SIZE ITERATIONS [measured]: best round trip in us
    local b=""
    for _ in $(seq "$reps"); do
      local pre=() v
      [ -n "${3:-}" ] && pre=(env PLX_OUTPUT="$out/exp-mpi" LD_PRELOAD="$lib/libplx.so:$lib/libplx-mpi.so")
      rm -rf "$out/exp-mpi"
      v=$(mpirun --allow-run-as-root --oversubscribe -np 2 "${pre[@]}" "$out/pingpong" "$2" "$1" 2>/dev/null | awk '/bytes:/ {print $3}')
      b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
    done
    echo "$b"
  }
  for spec in "8 20000" "1048576 300"; do
    set -- $spec
    base=$(rtt "$1" "$2")
    meas=$(rtt "$1" "$2" measured)
    pct=$(awk -v a="$meas" -v b="$base" 'BEGIN { printf "%.1f", (a - b) / b * 100 }')
    mpi_rows="$mpi_rows| $1 bytes | $base | $meas | $pct % |"$'\n'
  done
fi

# the engine's global path on ≥ 50 M events across 16 locations (8 ranks x 2 threads, messages
# between ranks): merge in time order + message matching + profile, one thread
merge_line=$(cd engine && PLX_MERGE_EVENTS=51200000 cargo bench -q -p plx-analysis --bench merge \
  2>&1 | grep '^merge+match+profile' || true)

# the critical path (graph + longest path + profile) against the merge alone, same trace, same
# run: 12.8 M events across 16 locations (8 ranks x 2 threads, messages and lock handoffs)
cp_line=$(cd engine && PLX_CP_EVENTS=${PLX_BENCH_CP_EVENTS:-12800000} cargo bench -q -p plx-analysis \
  --bench critpath 2>&1 | grep '^critical-path:' || true)

# plx view: the first open of a synthetic 8-rank trace as plx run --trace leaves it (nothing
# prepared: every thread decoded on all cores), later opens, the bytes on disk per event (any
# index included), the merge pass (the fallback) and the latency of the widest zoom, zooms and
# pans, at 20 M and 100 M events (PLX_BENCH_VIEW_EVENTS, comma-separated), and in the same run
# parsing the Chrome JSON export of a 2 M-event trace against plx view's open of it
view_lines=$(cd engine && PLX_VIEW_BENCH_EVENTS=${PLX_BENCH_VIEW_EVENTS:-20000000,100000000} cargo bench -q \
  -p plx-view --bench view -- open_and_query 2>&1 | grep '^view-bench:' || true)
# the same on a real MPI program: mpirun -np 4 plx run --trace of the Life example against the
# same run with the runtime preloaded by hand, and plx view's opens of it (bench/view_run.sh)
view_run_line=""
if [ "${PLX_BENCH_VIEW_RUN:-1}" != 0 ]; then
  view_run_line=$(bench/view_run.sh 2>/dev/null | grep '^view-\(run\|bench\):' || true)
fi

# the engine on many ranks (bench/scale.sh, short: 256 and 512 synthetic ranks), one engine
# thread against two in the same run; the full 512-4,096 sweep is bench/scale.sh alone
scale_md=""
if [ "${PLX_BENCH_SCALE:-1}" != 0 ]; then
  PLX_BENCH_SCALE_RANKS=${PLX_BENCH_SCALE_RANKS:-256 512} bench/scale.sh > /dev/null &&
    scale_md=$(cat "$out/scale.md")
fi

over() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
# the Java agent: ns per measured method call against the same JVM without it
java_md=$(bench/java/run.sh 2>/dev/null || true)
# Java call-stack sampling: a JIT-compiled loop at 100 Hz, 1 kHz, 10 kHz against the same JVM
# unsampled and without the agent, runs alternating (bench/java/sampling.sh)
java_sampling_md=""
if [ "${PLX_BENCH_SAMPLING:-1}" != 0 ]; then
  bench/java/sampling.sh > /dev/null 2>&1 && [ -f "$out/java-sampling.md" ] &&
    java_sampling_md=$(cat "$out/java-sampling.md")
fi
# call-stack sampling of 400 short threads: each new thread's cost (bench/sampling_threads.sh)
sampling_threads_md=""
if [ "${PLX_BENCH_SAMPLING:-1}" != 0 ]; then
  bench/sampling_threads.sh > /dev/null 2>&1 && [ -f "$out/sampling-threads.md" ] &&
    sampling_threads_md=$(cat "$out/sampling-threads.md")
fi

{
  echo "# Benchmark results ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r))"
  echo
  echo "Command: \`make bench\` (bench/run.sh), $calls calls per run, best of $reps runs."
  echo
  echo "| what | ns per call | over uninstrumented | target |"
  echo "|---|---|---|---|"
  echo "| uninstrumented build | $plain | — | |"
  echo "| instrumented, not measured (libc's empty hooks) | $stub | $(over "$stub" "$plain") | |"
  echo "| profile mode (callpath profile) | $profile | $(over "$profile" "$plain") | ≤ 40 |"
  echo "| trace mode (enter + exit events) | $trace | $(over "$trace" "$plain") | ≤ 30 |"
  echo "| filtered-out function | $filtered | $(over "$filtered" "$plain") | ≤ 5 |"
  [ -n "$uftrace_ns" ] && echo "| uftrace record (same binary, $uftrace_calls calls) | $uftrace_ns | $(over "$uftrace_ns" "$plain") | comparison |"
  echo
  echo "Trace size: $trace_bytes bytes for $((2 * calls)) events = **$bytes_per_event bytes/event** (target ≤ 8)."
  echo
  echo "Counters (bench/counters.c; a call of \`leaf\` counted by \`counters leaf task-clock,page-faults,context-switches\`, $counted_calls calls):"
  echo
  echo "| uncounted (profile) | counted | added per call | one group read |"
  echo "|---|---|---|---|"
  echo "| $uncounted ns | $counted ns | $(over "$counted" "$uncounted") ns | ${read_line%% (*} |"
  echo
  echo "rdpmc: ${rdpmc_line}"
  echo
  echo "Uncontended pthread mutex lock/unlock pair (bench/locks.c, 10,000,000 pairs), ns per pair:"
  echo
  echo "| unmeasured | measured (profile) | measured (trace) |"
  echo "|---|---|---|"
  echo "| $lock_plain | $lock_profile ($(awk -v a="$lock_profile" -v b="$lock_plain" 'BEGIN { printf "%.1fx", a / b }')) | $lock_trace ($(awk -v a="$lock_trace" -v b="$lock_plain" 'BEGIN { printf "%.1fx", a / b }')) |"
  echo
  echo "10,000 short-lived threads, one measured call each (tests/e2e/programs/short_threads.c), wall seconds:"
  echo
  echo "| unmeasured | profile mode | trace mode |"
  echo "|---|---|---|"
  echo "| $thr_plain | $thr_profile ($(ratio "$thr_profile" "$thr_plain")) | $thr_trace ($(ratio "$thr_trace" "$thr_plain")) |"
  echo
  if [ -n "$merge_line" ]; then
    echo "Engine, global merge (plx-analysis merge benchmark, synthetic MPI trace):"
    echo
    echo "    $merge_line"
    echo
  fi
  if [ -n "$cp_line" ]; then
    echo "Engine, critical path (plx-analysis benches/critpath.rs, synthetic MPI trace):"
    echo
    echo "    $cp_line"
    echo
  fi
  if [ -n "$view_lines" ]; then
    echo "plx view (plx-view benches/view.rs, synthetic MPI trace, 1600 pixel columns):"
    echo
    echo "$view_lines" | sed 's/^/    /'
    echo
  fi
  if [ -n "$view_run_line" ]; then
    echo "A traced run and plx view's opens, zooms and pans of it (bench/view_run.sh, examples/mpi/life.c under mpirun):"
    echo
    echo "$view_run_line" | sed 's/^/    /'
    echo
  fi
  if [ -n "$mpi_rows" ]; then
    echo "MPI ping-pong between 2 ranks (examples/mpi/pingpong.c, Open MPI, shared memory), round trip in µs:"
    echo
    echo "| message | unmeasured | measured (profile) | added | "
    echo "|---|---|---|---|"
    printf "%s" "$mpi_rows"
    echo
  fi
  echo "Engine: \`plx report --format csv\` on a trace of $events events (one thread): ${engine_s} s ="
  echo "**$engine_rate M events/s** (target ≥ 10), peak memory $engine_rss MiB; reading the same"
  echo "$(awk -v b="$(stat -c %s "$engine_trace")" 'BEGIN { printf "%.0f", b / 1048576 }') MiB file alone (cat, from the page cache) takes ${read_s} s."
  if [ -n "$export_md" ]; then
    echo
    echo "$export_md"
  fi
  if [ -n "$scale_md" ]; then
    echo
    echo "$scale_md"
  fi
  if [ -n "$java_md" ]; then
    echo
    echo "Java agent (bench/java/run.sh):"
    echo
    echo "$java_md"
  fi
  echo
  echo "$probes_md"
  if [ -n "$omp_md" ]; then
    echo
    echo "$omp_md"
  fi
  if [ -n "$sampling_md" ]; then
    echo
    echo "$sampling_md"
  fi
  if [ -n "$sampling_threads_md" ]; then
    echo
    echo "$sampling_threads_md"
  fi
  if [ -n "$java_sampling_md" ]; then
    echo
    echo "$java_sampling_md"
  fi
  if [ -n "$python_md" ]; then
    echo
    echo "$python_md"
  fi
} | tee "$out/results.md"
