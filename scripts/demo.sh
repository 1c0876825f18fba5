#!/usr/bin/env bash
# make demo: measure the bundled multi-threaded example and show where its time went.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=build/demo
mkdir -p "$out"
"$bin/plx-cc" -O2 examples/threads/heat.c -o "$out/heat" -pthread
rm -rf "$out/experiment"
echo "== plx run -o $out/experiment -- $out/heat 4"
"$bin/plx" run -o "$out/experiment" -- "$out/heat" 4
echo
echo "== plx report $out/experiment"
"$bin/plx" report "$out/experiment"
echo
echo "== plx report $out/experiment --callpath --by process"
"$bin/plx" report "$out/experiment" --callpath --by process
