#!/usr/bin/env bash
# The IPS-2 paper's clock-precision study, small: one parallel join measured twice, with the
# fine clock (the TSC) and with the kernel's coarse clock (CLOCK_MONOTONIC_COARSE, one tick per
# few ms), the second run added to the session in comparison mode; then the two runs' metric
# table, their time histograms overlaid and their procedure-level critical paths side by side.
#
#   examples/threads/clock-study.sh [OUT]        default OUT: build/studies/clock
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/build/bin"
out="${1:-$root/build/studies/clock}"
rm -rf "$out" && mkdir -p "$out"
"$bin/plx-cc" -O2 -pthread "$root/examples/threads/join.c" -o "$out/join"
S="$out/session"
"$bin/plx" run --session "$S" --app fine --clock tsc --trace -- "$out/join" 4
"$bin/plx" run -o "$out/coarse" --clock coarse --trace -- "$out/join" 4
"$bin/plx" session add "$S" "$out/coarse" --app coarse

echo
echo "== plx compare $S"
"$bin/plx" compare "$S" --top 8
echo
echo "== plx histogram $S --metric cpu --bins 20"
"$bin/plx" histogram "$S" --metric cpu --bins 20
"$bin/plx" histogram "$S" --metric cpu --bins 40 --format svg -o "$out/cpu.svg"
for app in fine coarse; do
  echo
  echo "== plx critical-path $S --app $app --level procedure"
  "$bin/plx" critical-path "$S" --app "$app" --level procedure --top 10
done
