#!/usr/bin/env bash
# The engine on synthetic traced MPI rings of 512 to 4,096 ranks (each rank ~965 events: 160
# messages of 1 KiB to the next rank and an MPI_Allreduce; engine/crates/plx-format/examples/
# synth_ring.rs): wall time, CPU time and peak RSS of plx report, plx comm (CSV: the pairs),
# plx critical-path and the merged-trace export, with one engine thread (-j 1) and with
# PLX_BENCH_SCALE_JOBS threads in the same run (with 2 or more the merge reads ahead on a second
# thread and the export and critical path consume it on a third). Prints a markdown section; also in
# build/bench/scale.md. `make bench` runs a short version (256 and 512 ranks).
# Each figure is the least of PLX_BENCH_SCALE_REPEAT runs; the last lines give how CPU time grew
# from the fewest ranks to the most against how the events grew (linear: the same factor).
#   PLX_BENCH_SCALE_RANKS ("512 1024 2048 4096"), PLX_BENCH_SCALE_MESSAGES (160),
#   PLX_BENCH_SCALE_JOBS (2), PLX_BENCH_SCALE_REPEAT (3)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
out=$PWD/build/bench
mkdir -p "$out"
ranks=${PLX_BENCH_SCALE_RANKS:-512 1024 2048 4096}
msgs=${PLX_BENCH_SCALE_MESSAGES:-160}
jobs=${PLX_BENCH_SCALE_JOBS:-2}
repeat=${PLX_BENCH_SCALE_REPEAT:-3}
(cd engine && cargo build --release --quiet --example synth_ring -p plx-format)
gen=$PWD/engine/target/release/examples/synth_ring

measure() { # wall seconds, CPU seconds (user + system), peak RSS (MiB) of a command: "W C MIB",
  # the least wall and CPU time of $repeat runs (others' work on a shared machine only adds)
  : > "$out/scale.times"
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e %U %S %M" -o "$out/scale.time" "$@" >/dev/null 2>"$out/scale.err" \
      || { cat "$out/scale.err" >&2; return 1; }
    cat "$out/scale.time" >> "$out/scale.times"
  done
  awk 'NR == 1 || $1 < w { w = $1 } NR == 1 || $2 + $3 < c { c = $2 + $3 } $4 > m { m = $4 }
       END { printf "%.2f %.2f %.0f\n", w, c, m / 1024 }' "$out/scale.times"
}
cell() { # "W C" with -j 1 and -j N: "W(C) / W(C) (×speedup)"
  awk -v w1="$1" -v c1="$2" -v wn="$3" -v cn="$4" \
    'BEGIN { printf "%.2f (%.2f) / %.2f (%.2f) ×%.2f", w1, c1, wn, cn, (wn > 0 ? w1 / wn : 0) }'
}

{
  echo "### Ranks ($(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "\`bench/scale.sh\`: synthetic traced rings, $msgs messages of 1 KiB per rank to the next rank"
  echo "and an MPI_Allreduce (~965 events per rank). Each cell: wall s (CPU s, user + system) with"
  echo "\`plx -j 1\` / with \`plx -j $jobs\`, and the wall-time speedup; peak RSS with \`-j 1\`. Times are"
  echo "the least of $repeat runs each."
  echo
  echo "| ranks | events | report | comm --format csv | critical-path | export text | peak RSS (report / comm / critical-path / export) | RSS per rank |"
  echo "|---|---|---|---|---|---|---|---|"
  declare -A first_cpu last_cpu
  first_events=""
  for n in $ranks; do
    d=$out/ring-$n
    rm -rf "$d"
    "$gen" "$d" "$n" "$msgs" 2>/dev/null
    events=$("$bin/plx" export "$d" --format text -o - 2>/dev/null | tail -1 | awk '{print $2}')
    [ -n "$first_events" ] || { first_events=$events; first_ranks=$n; }
    last_events=$events; last_ranks=$n
    row="| $n | $events"
    mems=""
    for cmd in "report $d" "comm $d --format csv" "critical-path $d" "export $d --format text -o /dev/null"; do
      # shellcheck disable=SC2086
      read -r w1 c1 m1 < <(measure "$bin/plx" -j 1 $cmd)
      # shellcheck disable=SC2086
      read -r wn cn _ < <(measure "$bin/plx" -j "$jobs" $cmd)
      row="$row | $(cell "$w1" "$c1" "$wn" "$cn")"
      # CPU with -j 1 per command, at the first size and at the last, for the growth line
      key=${cmd%% *}
      [ -n "${first_cpu[$key]:-}" ] || first_cpu[$key]=$c1
      last_cpu[$key]=$c1
      mems="$mems${mems:+ / }$m1"
      last=$m1
    done
    per=$(awk -v m="$last" -v n="$n" 'BEGIN { printf "%.0f", m * 1024 / n }')
    echo "$row | $mems MiB | $per KiB (export) |"
    rm -rf "$d"
  done
  echo
  if [ "$first_ranks" != "$last_ranks" ]; then
    growth=""
    for key in report comm critical-path export; do
      growth="$growth${growth:+, }$key $(awk -v a="${first_cpu[$key]}" -v b="${last_cpu[$key]}" \
        'BEGIN { printf (a > 0 ? "x%.1f" : "-"), (a > 0 ? b / a : 0) }')"
    done
    echo "From $first_ranks to $last_ranks ranks the events grew $(awk -v a="$first_events" -v b="$last_events" \
      'BEGIN { printf "x%.1f", b / a }') and the CPU time with \`-j 1\`: $growth."
    echo
  fi
  # the figures mean little on a loaded machine (CPU times vary by 1.5x, -j 2 finds no free
  # core): the load at the end, next to the one in the title
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$out/scale.md"
