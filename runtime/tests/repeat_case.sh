#!/bin/sh
# repeat_case.sh OUTDIR TIMES SECONDS ENV -- PROGRAM ARGS...
# Runs PROGRAM measured into OUTDIR (fresh each time) TIMES times; fails on the first run that
# exits non-zero or does not end within SECONDS (a hang that shows in some runs only).
out=$1 times=$2 secs=$3 envs=$4
shift 4
[ "$1" = "--" ] && shift
i=1
while [ "$i" -le "$times" ]; do
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  env PLX_OUTPUT="$out" $envs timeout -s KILL "$secs" "$@" >/dev/null 2>"$out.stderr"
  status=$?
  if [ "$status" = 137 ]; then
    echo "repeat_case: run $i of $times did not end within $secs s" >&2
    exit 1
  fi
  if [ "$status" != 0 ]; then
    echo "repeat_case: run $i of $times: exit status $status" >&2
    cat "$out.stderr" >&2
    exit 1
  fi
  i=$((i + 1))
done
