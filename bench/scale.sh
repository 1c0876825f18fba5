#!/usr/bin/env bash
# The engine on synthetic traced MPI rings of 512 to 4,096 ranks (each rank ~965 events: 160
# messages of 1 KiB to the next rank and an MPI_Allreduce; engine/crates/plx-format/examples/
# synth_ring.rs): wall time, CPU time and peak RSS of plx report, plx comm (CSV: the pairs),
# plx critical-path and the merged-trace export, with one engine thread (-j 1) and with
# PLX_BENCH_SCALE_JOBS threads in the same run (with 2 or more the merge reads ahead on a second
# thread and the export and critical path consume it on a third). Prints a markdown section; also in
# build/bench/scale.md. `make bench` runs a short version (256 and 512 ranks).
# Each figure is the least of PLX_BENCH_SCALE_REPEAT runs; the last lines give how CPU time grew
# from the fewest ranks to the most against how the events grew (linear: the same factor) and
# how events × log2(ranks) grew (the order of a k-way merge, which the critical path and the
# export are built on).
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

run() { # one timed run of plx with the engine threads and the command given, appended to
  # $out/scale.runs as "RANKS COMMAND THREADS WALL CPU RSS_KIB": times to the millisecond from
  # the shell (time(1) rounds to 10 ms, a fifth of a 512-rank plx report), peak RSS from time(1)
  local n=$1 key=$2 j=$3 t TIMEFORMAT='%3R %3U %3S'; shift 3
  t=$({ time /usr/bin/time -f %M -o "$out/scale.rss" "$bin/plx" -j "$j" "$@" >/dev/null \
    2>"$out/scale.err"; } 2>&1) || { cat "$out/scale.err" >&2; return 1; }
  echo "$n $key $j $t $(cat "$out/scale.rss")" | awk '{ print $1, $2, $3, $4, $5 + $6, $7 }' \
    >> "$out/scale.runs"
}
best() { # "W C MIB" of RANKS COMMAND THREADS: the least wall and CPU time of its runs (others'
  # work on a shared machine only adds), the largest peak RSS
  awk -v n="$1" -v k="$2" -v j="$3" '$1 == n && $2 == k && $3 == j {
      if (!s || $4 < w) w = $4; if (!s || $5 < c) c = $5; if ($6 > m) m = $6; s = 1 }
    END { printf "%.3f %.3f %.0f\n", w, c, m / 1024 }' "$out/scale.runs"
}
cell() { # "W C" with -j 1 and -j N: "W(C) / W(C) (×speedup)"
  awk -v w1="$1" -v c1="$2" -v wn="$3" -v cn="$4" \
    'BEGIN { printf "%.2f (%.2f) / %.2f (%.2f) ×%.2f", w1, c1, wn, cn, (wn > 0 ? w1 / wn : 0) }'
}
cmds=("report" "comm --format csv" "critical-path" "export --format text -o /dev/null")

# the traces first, then the runs round by round, every size and command in each round: a slow
# spell of the shared machine falls on all of them alike instead of on one size
declare -A events
for n in $ranks; do
  d=$out/ring-$n
  rm -rf "$d"
  "$gen" "$d" "$n" "$msgs" 2>/dev/null
  events[$n]=$("$bin/plx" export "$d" --format text -o - 2>/dev/null | tail -1 | awk '{print $2}')
done
: > "$out/scale.runs"
for _ in $(seq "$repeat"); do
  for n in $ranks; do
    for cmd in "${cmds[@]}"; do
      key=${cmd%% *}
      # shellcheck disable=SC2086
      set -- $cmd
      run "$n" "$key" 1 "$1" "$out/ring-$n" "${@:2}"
      run "$n" "$key" "$jobs" "$1" "$out/ring-$n" "${@:2}"
    done
  done
done

{
  echo "### Ranks ($(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "\`bench/scale.sh\`: synthetic traced rings, $msgs messages of 1 KiB per rank to the next rank"
  echo "and an MPI_Allreduce (~965 events per rank). Each cell: wall s (CPU s, user + system) with"
  echo "\`plx -j 1\` / with \`plx -j $jobs\`, and the wall-time speedup; peak RSS with \`-j 1\`. Times are"
  echo "the least of $repeat runs each, the runs of every size and command taken in turn."
  echo
  echo "| ranks | events | report | comm --format csv | critical-path | export text | peak RSS (report / comm / critical-path / export) | RSS per rank |"
  echo "|---|---|---|---|---|---|---|---|"
  declare -A first_cpu last_cpu
  first_ranks=""
  for n in $ranks; do
    [ -n "$first_ranks" ] || first_ranks=$n
    last_ranks=$n
    row="| $n | ${events[$n]}"
    mems=""
    for cmd in "${cmds[@]}"; do
      key=${cmd%% *}
      read -r w1 c1 m1 < <(best "$n" "$key" 1)
      read -r wn cn _ < <(best "$n" "$key" "$jobs")
      row="$row | $(cell "$w1" "$c1" "$wn" "$cn")"
      # CPU with -j 1 per command, at the first size and at the last, for the growth line
      [ -n "${first_cpu[$key]:-}" ] || first_cpu[$key]=$c1
      last_cpu[$key]=$c1
      mems="$mems${mems:+ / }$m1"
      last=$m1
    done
    per=$(awk -v m="$last" -v n="$n" 'BEGIN { printf "%.0f", m * 1024 / n }')
    echo "$row | $mems MiB | $per KiB (export) |"
    rm -rf "$out/ring-$n"
  done
  first_events=${events[$first_ranks]}
  last_events=${events[$last_ranks]}
  echo
  # linear in the events: the same cost per event at every size
  echo "CPU time per event with \`-j 1\`, µs:"
  echo
  echo "| ranks | report | comm | critical-path | export |"
  echo "|---|---|---|---|---|"
  for n in $ranks; do
    row="| $n"
    for cmd in "${cmds[@]}"; do
      read -r _ c1 _ < <(best "$n" "${cmd%% *}" 1)
      row="$row | $(awk -v c="$c1" -v e="${events[$n]}" 'BEGIN { printf "%.3f", c * 1e6 / e }')"
    done
    echo "$row |"
  done
  echo
  if [ "$first_ranks" != "$last_ranks" ]; then
    growth=""
    for key in report comm critical-path export; do
      growth="$growth${growth:+, }$key $(awk -v a="${first_cpu[$key]}" -v b="${last_cpu[$key]}" \
        'BEGIN { printf (a > 0 ? "x%.1f" : "-"), (a > 0 ? b / a : 0) }')"
    done
    # a k-way merge of k locations costs log2(k) comparisons per event: the order the
    # merge-based commands (critical path, export) can reach, beside linear
    echo "From $first_ranks to $last_ranks ranks the events grew $(awk -v a="$first_events" -v b="$last_events" \
      'BEGIN { printf "x%.1f", b / a }') (events × log2(ranks), the order of a k-way merge: $(awk \
      -v a="$first_events" -v b="$last_events" -v k0="$first_ranks" -v k1="$last_ranks" \
      'BEGIN { printf "x%.1f", b * log(k1) / (a * log(k0)) }')) and the CPU time with \`-j 1\`: $growth."
    echo
  fi
  # the figures mean little on a loaded machine (CPU times vary by 1.5x, -j 2 finds no free
  # core): the load at the end, next to the one in the title
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$out/scale.md"
