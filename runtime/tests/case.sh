#!/bin/sh
# case.sh OUT EXPECTED_FILE -- RUNNER ARGS...
# One blessed case (Perfetto's diff tests): RUNNER (run_case.sh or run_mpi_case.sh) runs a
# program measured and prints the experiment's counts, one "KEY VALUE" a line; they are compared
# with EXPECTED_FILE and a difference fails with the diff. In EXPECTED_FILE a value may instead
# be ">=N" or "<=N" (a count that varies from run to run within a bound) or "*" (any value:
# the line must be there). PLX_BLESS=1 writes EXPECTED_FILE from the counts instead, keeping the
# bounds that still hold (after a deliberate change; review it with git diff).
# PLX_CASE_SKIP: an extended regular expression of lines not compared (neither written when
# blessing); PLX_CASE_SANITIZED: a sanitizer's build, where nothing is blessed.
out=$1 expected=$2
shift 2
[ "$1" = "--" ] && shift
"$@" >"$out.counts" || exit 1
skip=${PLX_CASE_SKIP:-'^$'}
bounds=$expected
[ -f "$expected" ] || bounds=/dev/null
# the counts, each line whose value meets EXPECTED_FILE's bound for its key written as that bound
awk -v skip="$skip" '
  function key(l) { sub(/ [^ ]*$/, "", l); return l }
  function val(l) { return substr(l, length(key(l)) + 2) }
  function meets(v, b) {
    if (b == "*") return 1
    if (b ~ /^>=/) return v ~ /^[0-9]+$/ && v + 0 >= substr(b, 3) + 0
    if (b ~ /^<=/) return v ~ /^[0-9]+$/ && v + 0 <= substr(b, 3) + 0
    return 0
  }
  FILENAME == ARGV[1] { bound[key($0)] = val($0); next }
  $0 ~ skip { next }
  { k = key($0); print (k in bound && meets(val($0), bound[k])) ? k " " bound[k] : $0 }
' "$bounds" "$out.counts" >"$out.seen" || exit 1
if [ -n "$PLX_BLESS" ]; then
  [ -n "$PLX_CASE_SANITIZED" ] && { echo "case: bless in a build without a sanitizer" >&2; exit 1; }
  cp "$out.seen" "$expected" && echo "case: blessed $expected"
  exit 0
fi
grep -Ev "$skip" "$bounds" >"$out.expected"
if ! diff -u "$out.expected" "$out.seen"; then
  echo "case: $out differs from $expected (PLX_BLESS=1 rewrites it after a deliberate change)" >&2
  exit 1
fi
