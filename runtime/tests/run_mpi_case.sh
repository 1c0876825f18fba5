#!/bin/sh
# run_mpi_case.sh CHECKER LAUNCHER PRELOAD OUTDIR RANKS EXPECTED_STATUS ENV -- PROGRAM ARGS...
# Runs PROGRAM on RANKS ranks with LAUNCHER (e.g. "mpirun --oversubscribe") and PRELOAD (the
# runtime and the MPI wrappers) preloaded, checks the launcher's exit status, then prints the
# experiment's counts (CHECKER OUTDIR).
checker=$1 launcher=$2 preload=$3 out=$4 np=$5 want=$6 envs=$7
shift 7
[ "$1" = "--" ] && shift
prog=""
for a in "$@"; do prog="$prog '$a'"; done
rm -rf "$out"
mkdir -p "$(dirname "$out")"
eval "timeout 300 $launcher -np $np env PLX_OUTPUT='$out' LD_PRELOAD='$preload' $envs $prog" \
  >/dev/null 2>"$out.stderr"
status=$?
if [ "$status" != "$want" ]; then
  echo "run_mpi_case: exit status $status, expected $want" >&2
  cat "$out.stderr" >&2
  exit 1
fi
eval "exec env $envs '$checker' '$out'"
