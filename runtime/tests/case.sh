#!/bin/sh
# case.sh CHECKER OUTDIR EXPECTED_STATUS ENV EXPECTED_FILE -- PROGRAM ARGS...
# One blessed e2e case: runs PROGRAM measured into OUTDIR (fresh), checks its exit status, and
# compares `CHECKER --counts OUTDIR` (the experiment's counts as stable text) with
# EXPECTED_FILE: a difference fails with the diff. PLX_BLESS=1 writes EXPECTED_FILE instead
# (after a deliberate change; review it with git diff).
checker=$1 out=$2 want=$3 envs=$4 expected=$5
shift 5
[ "$1" = "--" ] && shift
"$(dirname "$0")/run_case.sh" "$checker" "$out" "$want" "$envs" -- "$@" -- --counts >"$out.counts" || exit 1
# under a sanitizer threads are named after its start routine: names are not compared
if [ -n "$PLX_CASE_SKIP_NAMES" ]; then
  grep -v '^thread name ' "$out.counts" >"$out.counts.tmp"; mv "$out.counts.tmp" "$out.counts"
  grep -v '^thread name ' "$expected" >"$out.expected"; expected_cmp=$out.expected
else
  expected_cmp=$expected
fi
if [ -n "$PLX_BLESS" ]; then
  [ -n "$PLX_CASE_SKIP_NAMES" ] && { echo "case: bless in a build without a sanitizer" >&2; exit 1; }
  cp "$out.counts" "$expected" && echo "case: blessed $expected"
  exit 0
fi
if ! diff -u "$expected_cmp" "$out.counts"; then
  echo "case: $out differs from $expected (PLX_BLESS=1 rewrites it after a deliberate change)" >&2
  exit 1
fi
