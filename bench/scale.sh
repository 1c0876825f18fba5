#!/usr/bin/env bash
# The engine on synthetic traced MPI rings of 512 to 4,096 ranks (each rank ~965 events: 160
# messages of 1 KiB to the next rank and an MPI_Allreduce; engine/crates/plx-format/examples/
# synth_ring.rs): wall time and peak RSS of plx report, plx comm, plx critical-path and the
# merged-trace export. Prints a markdown section; also in build/bench/scale.md.
#   PLX_BENCH_SCALE_RANKS ("512 1024 2048 4096"), PLX_BENCH_SCALE_MESSAGES (160)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
ranks=${PLX_BENCH_SCALE_RANKS:-512 1024 2048 4096}
msgs=${PLX_BENCH_SCALE_MESSAGES:-160}
(cd engine && cargo build --release --quiet --example synth_ring -p plx-format)
gen=$PWD/engine/target/release/examples/synth_ring

measure() { # wall seconds (CPU seconds) and peak RSS (MiB) of a command: "S(C) MIB"
  /usr/bin/time -f "%e %U %S %M" -o "$out/scale.time" "$@" >/dev/null 2>"$out/scale.err" \
    || { cat "$out/scale.err" >&2; return 1; }
  awk '{ printf "%.2f(%.2f) %.0f\n", $1, $2 + $3, $4 / 1024 }' "$out/scale.time"
}

{
  echo "### Ranks ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  echo "\`bench/scale.sh\`: synthetic traced rings, $msgs messages of 1 KiB per rank to the next rank"
  echo "and an MPI_Allreduce (~965 events per rank). Wall time (CPU time: user + system) and peak RSS"
  echo "of each command."
  echo
  echo "| ranks | events | report | comm | critical-path | export text | peak RSS (report / comm / critical-path / export) | RSS per rank |"
  echo "|---|---|---|---|---|---|---|---|"
  for n in $ranks; do
    d=$out/ring-$n
    rm -rf "$d"
    "$gen" "$d" "$n" "$msgs" 2>/dev/null
    events=$("$bin/plx" export "$d" --format text -o - 2>/dev/null | tail -1 | awk '{print $2}')
    read -r s1 m1 < <(measure "$bin/plx" report "$d")
    read -r s2 m2 < <(measure "$bin/plx" comm "$d")
    read -r s3 m3 < <(measure "$bin/plx" critical-path "$d")
    read -r s4 m4 < <(measure "$bin/plx" export "$d" --format text -o /dev/null)
    per=$(awk -v m="$m4" -v n="$n" 'BEGIN { printf "%.0f", m * 1024 / n }')
    echo "| $n | $events | $s1 s | $s2 s | $s3 s | $s4 s | $m1 / $m2 / $m3 / $m4 MiB | $per KiB (export) |"
    rm -rf "$d"
  done
} | tee "$out/scale.md"
