#!/usr/bin/env bash
# What plx run's end-of-run indexing for plx view costs on a real MPI program, and what it saves
# plx view's first open: the Life example (examples/mpi/life.c) on 4 ranks of 3 threads under
# `mpirun -np 4 plx run --trace`, with PLX_VIEW_INDEX=0 (no indexing: plx view builds the parts
# at its first open) and with the default (each rank's plx run indexes its process once it has
# ended), the best of PLX_BENCH_VIEW_RUN_REPS (default 3) wall times of each, then plx view's
# first open of each experiment. One line on stdout: "view-run: ...".
# PLX_BENCH_VIEW_RUN_ARGS: life's steps, size and worker threads (default 100 512 2: about 52 M
# events).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench/view-run
reps=${PLX_BENCH_VIEW_RUN_REPS:-3}
read -r -a args <<< "${PLX_BENCH_VIEW_RUN_ARGS:-100 512 2}"
mkdir -p "$out"
mpicc -O1 -finstrument-functions examples/mpi/life.c -o "$out/life" -pthread
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

wall() { # DIR INDEX: seconds of one traced run into DIR with PLX_VIEW_INDEX=INDEX
  rm -rf "$1"
  local t0 t1
  t0=$(date +%s.%N)
  PLX_VIEW_INDEX=$2 mpirun "${root[@]}" --oversubscribe -np 4 "$bin/plx" run --trace -o "$1" -- \
    "$out/life" "${args[@]}" > /dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
best_wall() { # DIR INDEX
  local b="" v
  for _ in $(seq "$reps"); do
    v=$(wall "$1" "$2")
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
first_open() { # DIR: what plx view says about its open (the server is stopped then)
  local log="$out/view.log" pid line=""
  "$bin/plx" view "$1" > /dev/null 2> "$log" &
  pid=$!
  for _ in $(seq 6000); do
    line=$(grep -m1 'opened in' "$log" || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$line" | sed -E 's/.*: ([0-9]+ events on [0-9]+ tracks opened in [0-9.]+ s \([^)]*\)).*/\1/'
}

plain=$(best_wall "$out/exp-plain" 0)
indexed=$(best_wall "$out/exp-indexed" 1)
open_plain=$(first_open "$out/exp-plain")
open_indexed=$(first_open "$out/exp-indexed")
echo "view-run: life ${args[*]} on 4 ranks (mpirun -np 4 plx run --trace, best of $reps): run" \
  "${plain} s without indexing, ${indexed} s with each rank's plx run indexing its process;" \
  "plx view's first open then: ${open_plain} without, ${open_indexed} with; load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$out"
