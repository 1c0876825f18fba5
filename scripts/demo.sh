#!/usr/bin/env bash
# make demo: measure the bundled examples and show where their time went — a multi-threaded
# program, then an MPI + threads Game of Life on 4 ranks with its communication matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
out=build/demo
mkdir -p "$out"
rm -rf "$out/threads" "$out/mpi"

"$bin/plx-cc" -O2 examples/threads/heat.c -o "$out/heat" -pthread
echo "== plx run -o $out/threads -- $out/heat 4"
"$bin/plx" run -o "$out/threads" -- "$out/heat" 4
echo
echo "== plx report $out/threads --by process"
"$bin/plx" report "$out/threads" --by process
echo

if command -v mpirun >/dev/null && [ -f build/lib/libplx-mpi.so ]; then
  mpirun_flags=(--oversubscribe)
  [ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
  "$bin/plx-mpicc" -O2 examples/mpi/life.c -o "$out/life" -pthread
  echo "== mpirun -np 4 plx run --trace --filter examples/mpi/life.filter -o $out/mpi -- $out/life 100 256 2"
  mpirun "${mpirun_flags[@]}" -np 4 "$bin/plx" run --trace --filter examples/mpi/life.filter \
    -o "$out/mpi" -- "$out/life" 100 256 2
  echo
  echo "== plx report $out/mpi --by process"
  "$bin/plx" report "$out/mpi" --by process
  echo
  echo "== plx comm $out/mpi"
  "$bin/plx" comm "$out/mpi"
  echo
  echo "== plx comm $out/mpi --by thread"
  "$bin/plx" comm "$out/mpi" --by thread
  echo
  echo "== plx critical-path $out/mpi --level process"
  "$bin/plx" critical-path "$out/mpi" --level process
  echo
  echo "== plx display $out/mpi --kind utilization"
  "$bin/plx" display "$out/mpi" --kind utilization
  echo
  echo "== plx export $out/mpi --format chrome -o $out/mpi.json"
  "$bin/plx" export "$out/mpi" --format chrome -o "$out/mpi.json"
  echo "(open $out/mpi.json in https://ui.perfetto.dev: a track per rank and thread, message lines between them)"
else
  echo "(no MPI found: the MPI part of the demo is skipped; make deps installs Open MPI)"
fi
