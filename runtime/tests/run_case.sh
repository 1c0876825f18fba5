#!/bin/sh
# run_case.sh CHECKER OUTDIR EXPECTED_STATUS ENV -- PROGRAM ARGS...
# Runs PROGRAM measured into OUTDIR (fresh), checks its exit status, then prints the
# experiment's counts (CHECKER OUTDIR, run with ENV too: the CPU sampler's period is read there).
checker=$1 out=$2 want=$3 envs=$4
shift 4
[ "$1" = "--" ] && shift
prog=""
for a in "$@"; do prog="$prog '$a'"; done
rm -rf "$out"
mkdir -p "$(dirname "$out")"
eval "env PLX_OUTPUT='$out' $envs $prog" >/dev/null 2>"$out.stderr"
status=$?
if [ "$status" != "$want" ]; then
  echo "run_case: exit status $status, expected $want" >&2
  cat "$out.stderr" >&2
  exit 1
fi
eval "exec env $envs '$checker' '$out'"
