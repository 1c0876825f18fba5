#!/bin/sh
# run_mpi_case.sh CHECKER LIBDIR OUTDIR RANKS EXPECTED_STATUS ENV -- PROGRAM ARGS... -- CHECK-ARGS...
# Runs PROGRAM on RANKS ranks under mpirun with the runtime and the MPI wrappers preloaded,
# checks mpirun's exit status, then the experiment.
checker=$1 libdir=$2 out=$3 np=$4 want=$5 envs=$6
shift 6
[ "$1" = "--" ] && shift
prog=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do prog="$prog '$1'"; shift; done
[ "$1" = "--" ] && shift
rm -rf "$out"
mkdir -p "$(dirname "$out")"
eval "timeout 300 mpirun --allow-run-as-root --oversubscribe -np $np env PLX_OUTPUT='$out' \
  LD_PRELOAD='$libdir/libplx.so:$libdir/libplx-mpi.so' $envs $prog" >/dev/null 2>"$out.stderr"
status=$?
if [ "$status" != "$want" ]; then
  echo "run_mpi_case: exit status $status, expected $want" >&2
  cat "$out.stderr" >&2
  exit 1
fi
exec "$checker" "$out" "$@"
