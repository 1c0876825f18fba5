#!/usr/bin/env bash
# bench/hook_ab.sh REV: the compiler hook's cost per call (bench/overhead.c) of the runtime at git
# revision REV against this tree's build/lib/libplx.so, in alternating runs (CALLS calls each,
# REPS rounds): a change to the hot path is measured against what it changes, in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench/hook_ab.sh REV}
calls=${CALLS:-20000000}
out=$(mktemp -d)
trap 'git worktree remove --force "$out/src" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
git worktree add -q --detach "$out/src" "$rev"
cmake -S "$out/src/runtime" -B "$out/rt" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$out/rt" --quiet libplx.so
cc -O2 -g bench/overhead.c -o "$out/plain"
cc -O2 -g -finstrument-functions bench/overhead.c -o "$out/inst"
ns() { awk '/ns\/call/ {print $1}'; }
measured() { # LIB [VAR=VALUE]: ns per call of the instrumented program measured with LIB
  rm -rf "$out/e"
  env PLX_OUTPUT="$out/e" LD_PRELOAD="$1" "${@:2}" "$out/inst" "$calls" 2>/dev/null | ns
}
echo "round plain stub ${rev}_profile new_profile ${rev}_trace new_trace (ns per call)"
for i in $(seq "${REPS:-7}"); do
  echo "$i $("$out/plain" "$calls" | ns) $("$out/inst" "$calls" | ns)" \
    "$(measured "$out/rt/libplx.so") $(measured build/lib/libplx.so)" \
    "$(measured "$out/rt/libplx.so" PLX_TRACE=1) $(measured build/lib/libplx.so PLX_TRACE=1)"
done
