#!/usr/bin/env bash
# What a traced run costs and what plx view then costs, on a real MPI program: the Life example
# (examples/mpi/life.c) on 4 ranks of 3 threads. The run under `mpirun -np 4 plx run --trace`
# against the same program with the runtime preloaded by hand (LD_PRELOAD=libplx.so and Open
# MPI's wrappers libplx-mpi.so, as plx run preloads them; PLX_TRACE=1, PLX_OUTPUT: the runtime's
# own work, nothing of plx run's before or after), the two alternated PLX_BENCH_VIEW_RUN_REPS
# times (default 5), the best and the median wall time of each; then plx view's first open of
# the experiment (nothing prepared) and a later one, each with the CPU time plx view had used when
# it served (all threads, /proc/PID/stat), and the experiment's bytes on disk per event, any index
# included; then plx-view's benchmark on the same experiment (benches/view.rs `real_trace`: its
# opens, 100 zooms and 100 pans with their p50/p95/p99). Two lines on stdout: "view-run: ...",
# "view-bench: ...".
# PLX_BENCH_VIEW_RUN_ARGS: life's steps, size and worker threads (default 100 512 2: about 52 M
# events).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
lib=$PWD/build/lib/libplx.so:$PWD/build/lib/libplx-mpi.so
out=$PWD/build/bench/view-run
reps=${PLX_BENCH_VIEW_RUN_REPS:-5}
read -r -a args <<< "${PLX_BENCH_VIEW_RUN_ARGS:-100 512 2}"
mkdir -p "$out"
mpicc -O1 -finstrument-functions examples/mpi/life.c -o "$out/life" -pthread
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

elapsed() { # T0 T1
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'
}
wall_plx_run() { # DIR: seconds of one traced run into DIR under plx run
  rm -rf "$1"
  local t0 t1
  t0=$(date +%s.%N)
  mpirun "${root[@]}" --oversubscribe -np 4 "$bin/plx" run --trace -o "$1" -- \
    "$out/life" "${args[@]}" > /dev/null 2>&1
  t1=$(date +%s.%N)
  elapsed "$t0" "$t1"
}
wall_preloaded() { # DIR: seconds of the same run with the runtime preloaded by hand
  rm -rf "$1"
  mkdir -p "$1"
  local t0 t1
  t0=$(date +%s.%N)
  mpirun "${root[@]}" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x PLX_TRACE=1 \
    -x PLX_OUTPUT="$1" "$out/life" "${args[@]}" > /dev/null 2>&1
  t1=$(date +%s.%N)
  elapsed "$t0" "$t1"
}
summary() { # SECONDS...: "best B s, median M s"
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "best %.2f s, median %.2f s", v[1], v[int((NR + 1) / 2)] }'
}
open_line() { # DIR: what plx view says about its open (the server is stopped then)
  local log="$out/view.log" pid line=""
  "$bin/plx" view "$1" > /dev/null 2> "$log" &
  pid=$!
  for _ in $(seq 6000); do
    line=$(grep -m1 'opened in' "$log" || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  # utime and stime, in clock ticks, are the 12th and 13th fields after the command's name
  local cpu
  cpu=$(sed -E 's/.*\) //' "/proc/$pid/stat" | awk -v hz="$(getconf CLK_TCK)" \
    '{ printf "%.2f", ($12 + $13) / hz }')
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$line [cpu $cpu]"
}

exp=$out/exp
runs=() preloads=()
for _ in $(seq "$reps"); do
  preloads+=("$(wall_preloaded "$out/exp-preloaded")")
  runs+=("$(wall_plx_run "$exp")")
done
first=$(open_line "$exp")
later=$(open_line "$exp")
events=$(echo "$first" | sed -E 's/.*: ([0-9]+) events on.*/\1/')
bytes=$(du -sb "$exp" | cut -f1)
index=0
[ -d "$exp/.plx-view" ] && index=$(du -sb "$exp/.plx-view" | cut -f1)
secs() { echo "$1" | sed -E 's/.*opened in ([0-9.]+) s.*\[cpu ([0-9.]+)\].*/\1 s (\2 s of CPU)/'; }
echo "view-run: life ${args[*]} on 4 ranks, $events events, $reps runs of each alternated:" \
  "mpirun -np 4 plx run --trace $(summary "${runs[@]}"); the runtime preloaded by hand" \
  "$(summary "${preloads[@]}"); plx view's first open $(secs "$first"), a later one" \
  "$(secs "$later") ($(echo "$first" | sed -E 's/.*\((index[^)]*)\).*/\1/')); experiment" \
  "$bytes bytes ($(awk -v a="$bytes" -v b="$events" 'BEGIN { printf "%.2f", a / b }')" \
  "bytes/event), index kept $index bytes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# the zooms and pans of plx-view's benchmark, on this real trace (its first line: its own open)
(cd engine && PLX_VIEW_BENCH_REAL="$exp" cargo bench -q -p plx-view --bench view -- real_trace) \
  2>&1 | grep '^view-bench:' || echo "view-bench: real_trace failed"
rm -rf "$out"
