#!/usr/bin/env bash
# The IPS-2 paper's workload study, small: psim alone, two copies competing for the same cores,
# and two copies under the co-scheduler, in one session; then the multi-application metric
# table and the CPU utilization histogram of the runs overlaid.
#
#   examples/psim/study.sh [OUT]        default OUT: build/studies/psim
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/build/bin"
out="${1:-$root/build/studies/psim}"
cycles="${PSIM_CYCLES:-300}"
work="${PSIM_WORK:-200000}"
rm -rf "$out" && mkdir -p "$out"
"$bin/plx-mpicc" -O2 "$root/examples/psim/psim.c" -o "$out/psim"
cc -O2 "$root/examples/psim/cosched.c" -o "$out/cosched"

# Open MPI's barrier polls; with yield_when_idle 0 it never gives the core away: an
# always-spin barrier, as in the paper.
mpirun=(mpirun --oversubscribe --mca mpi_yield_when_idle 0 -np 2)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
S="$out/session"
psim() { # APP [ENV...]: psim measured into the session as application APP
  local app="$1"; shift
  env "$@" "$bin/plx" run --session "$S" --app "$app" --trace -- \
    "${mpirun[@]}" -x PSIM_COSCHED -x PSIM_APP "$out/psim" "$cycles" "$work"
}

echo "== two copies at once, no co-scheduling"
psim nogang1 PSIM_APP= PSIM_COSCHED= & first=$!
psim nogang2 PSIM_APP= PSIM_COSCHED=
wait "$first"

echo "== one copy alone (added to the session in comparison mode)"
"$bin/plx" run -o "$out/original" --trace -- "${mpirun[@]}" "$out/psim" "$cycles" "$work"
"$bin/plx" session add "$S" "$out/original" --app original

echo "== two copies, co-scheduled (added in comparison mode)"
"$out/cosched" "$out/cosched.sock" 50 2 & cosched=$!
sleep 0.2
G="$out/gang"
S="$G" psim gang1 PSIM_APP=gang1 PSIM_COSCHED="$out/cosched.sock" & first=$!
S="$G" psim gang2 PSIM_APP=gang2 PSIM_COSCHED="$out/cosched.sock"
wait "$first"
wait "$cosched"
"$bin/plx" session add "$S" "$G/gang1" --app gang1
"$bin/plx" session add "$S" "$G/gang2" --app gang2

echo
echo "== plx compare $S"
"$bin/plx" compare "$S"
echo
echo "== plx histogram $S --metric cpu --bins 15   (and as SVG: $out/cpu.svg)"
"$bin/plx" histogram "$S" --metric cpu --bins 30 --format svg -o "$out/cpu.svg"
"$bin/plx" histogram "$S" --metric cpu --bins 15
