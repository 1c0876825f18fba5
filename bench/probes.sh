#!/usr/bin/env bash
# make bench (called by bench/run.sh): a probed call (plx run --probe, entry rewritten) against
# the compiler hook (-finstrument-functions) and the plain call, best of N runs each, in one run
# (the variants in turn, N rounds).
# Writes build/bench/probes.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
calls=${PLX_BENCH_CALLS:-20000000}
reps=${PLX_BENCH_REPS:-5}
# PLX_BENCH_BASELINE=DIR: also the probe of another build (DIR/bin/plx, DIR/lib/libplx.so), in
# the same rounds, for a change's before and after
base=${PLX_BENCH_BASELINE:-}
load0=$(cut -d' ' -f1 /proc/loadavg)
cc -O2 -g bench/probe.c -o "$out/probe-plain"
cc -O2 -g -finstrument-functions bench/probe.c -o "$out/probe-inst"

once() { "$@" 2>/dev/null | awk '/ns\/call/ {print $1}'; }
min() { awk -v a="$1" -v c="$2" 'BEGIN { if (a == "" || c < a) print c; else print a }'; }
run() { rm -rf "$out/exp-probe"; "$bin/plx" run -o "$out/exp-probe" "$@"; }
run_base() { rm -rf "$out/exp-probe"; "$base/bin/plx" run -o "$out/exp-probe" "$@"; }

# round-robin, best of $reps each: a burst of load from other work falls on every variant alike
plain="" hook="" probe="" hook_trace="" probe_trace="" probe_base="" probe_trace_base=""
for _ in $(seq "$reps"); do
  plain=$(min "$plain" "$(once "$out/probe-plain" "$calls")")
  hook=$(min "$hook" "$(once run -- "$out/probe-inst" "$calls")")
  probe=$(min "$probe" "$(once run --probe leaf -- "$out/probe-plain" "$calls")")
  hook_trace=$(min "$hook_trace" "$(once run --trace --cpu-sample 0 -- "$out/probe-inst" "$calls")")
  probe_trace=$(min "$probe_trace" "$(once run --trace --cpu-sample 0 --probe leaf -- "$out/probe-plain" "$calls")")
  if [ -n "$base" ]; then
    probe_base=$(min "$probe_base" "$(once run_base --probe leaf -- "$out/probe-plain" "$calls")")
    probe_trace_base=$(min "$probe_trace_base" "$(once run_base --trace --cpu-sample 0 --probe leaf -- "$out/probe-plain" "$calls")")
  fi
done
# attach latency: from plx attach's start to the probes in place in a running 4-thread program
cc -O2 tests/e2e/programs/attach_loop.c -o "$out/attach_loop" -pthread
"$out/attach_loop" 4 0 - & target=$!
sleep 0.2
attach_ms=""
for _ in $(seq "$reps"); do
  rm -rf "$out/exp-attach"
  v=$("$bin/plx" attach "$target" -o "$out/exp-attach" --probe work --duration 0.05 2>&1 |
      sed -n 's/.* in \([0-9.]*\) ms;.*/\1/p')
  attach_ms=$(min "$attach_ms" "$v")
done
kill "$target"
# plx ctl insert and remove over the control socket, end to end (the plx command included): the
# runtime stops its other threads (world.c) while it rewrites the entry
rm -rf "$out/exp-ctl"
"$bin/plx" run -o "$out/exp-ctl" --probe main -- "$out/attach_loop" 4 0 - & ctl_run=$!
ctl_pid=""
for _ in $(seq 500); do
  ctl_pid=$(pgrep -P "$ctl_run" -x attach_loop || true)
  [ -n "$ctl_pid" ] && "$bin/plx" ctl "$ctl_pid" list >/dev/null 2>&1 && break
  sleep 0.01
done
ctl_ms=""
for _ in $(seq "$reps"); do
  t0=$(date +%s%N)
  "$bin/plx" ctl "$ctl_pid" insert work >/dev/null
  "$bin/plx" ctl "$ctl_pid" remove work >/dev/null
  v=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 2e6 }')
  ctl_ms=$(min "$ctl_ms" "$v")
done
kill "$ctl_pid"
wait "$ctl_run" || true
ratio() { awk -v a="$1" -v b="$2" -v p="$plain" 'BEGIN { printf "%.2fx", (a - p) / (b - p) }'; }
{
  echo "Probes (bench/probe.c, $calls calls, best of $reps rounds; ns per call, cost = over the plain call; load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end):"
  echo
  echo "| mode | plain | compiler hook | probe | probe cost / hook cost |"
  echo "|---|---|---|---|---|"
  echo "| profile | $plain | $hook | $probe | $(ratio "$probe" "$hook") |"
  echo "| trace | $plain | $hook_trace | $probe_trace | $(ratio "$probe_trace" "$hook_trace") |"
  if [ -n "$base" ]; then
    echo "| profile, baseline | $plain | $hook | $probe_base | $(ratio "$probe_base" "$hook") |"
    echo "| trace, baseline | $plain | $hook_trace | $probe_trace_base | $(ratio "$probe_trace_base" "$hook_trace") |"
    echo
    echo "baseline: the probe of $base."
  fi
  echo
  echo "plx attach to a running 4-thread program (tests/e2e/programs/attach_loop.c), from its start to"
  echo "the probes in place (threads stopped, runtime loaded and started, entries rewritten): **$attach_ms ms** (best of $reps)."
  echo
  echo "plx ctl insert or remove of one probe in that program (5 threads) over the control socket, end to end"
  echo "(plx started, request, threads stopped by the runtime, entry rewritten, reply): **$ctl_ms ms** (best of $reps, mean of insert and remove)."
} | tee "$out/probes.md"
