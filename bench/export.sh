#!/usr/bin/env bash
# The engine's merged-trace throughput on a trace of >= 50 M events over >= 16 locations; the OTF2
# export (the engine through the OTF2 C library) against its former path (the Parquet tables,
# then the OTF2 library's Python writer, bench/otf2_python_writer.py) and the OTF2 Python reader,
# on the same trace in the same run (bench/run.sh calls this; it runs alone too). Prints a
# markdown section; also in build/bench/export.md.
#   PLX_BENCH_THREADS (16), PLX_BENCH_EXPORT_EVENTS (52 M: events of the big trace),
#   PLX_BENCH_OTF2_EVENTS (2 M: events of the trace both OTF2 paths export, the Python writer
#   being slow), PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
lib=$PWD/build/lib
out=$PWD/build/bench
mkdir -p "$out"
threads=${PLX_BENCH_THREADS:-16}
big=${PLX_BENCH_EXPORT_EVENTS:-52000000}
small=${PLX_BENCH_OTF2_EVENTS:-2000000}
py=${PYTHON:-python3}

cc -O2 -g -finstrument-functions -pthread bench/threads.c -o "$out/threads-inst"

trace() { # EVENTS DIR: the threads program traced into DIR, EVENTS events in all
  local per=$(( $1 / threads / 2 ))   # calls per thread (2 events per call)
  rm -rf "$2"
  PLX_OUTPUT="$2" PLX_TRACE=1 LD_PRELOAD="$lib/libplx.so" \
    "$out/threads-inst" "$threads" "$per" >/dev/null
}
# seconds and peak RSS (MiB) of a command: "S MIB"
measure() {
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$out/export.rss" "$@" >/dev/null 2>"$out/export.err" \
    || { cat "$out/export.err" >&2; return 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v r="$(tail -1 "$out/export.rss")" 'BEGIN { printf "%.3f %.0f\n", b - a, r / 1024 }'
}
events_of() { # the event count of an experiment (the text export's last line)
  "$bin/plx" export "$1" --format text -o - 2>/dev/null | tail -1 | awk '{print $2}'
}
rate() { awk -v e="$1" -v s="$2" 'BEGIN { printf "%.2f", e / s / 1e6 }'; }

# the big trace: plx's merge (every event in global order; the text export to /dev/null), and
# the callpath profiles rebuilt from it (plx report)
trace "$big" "$out/exp-export"
cat "$out"/exp-export/*/trace.plx > /dev/null
n_big=$(events_of "$out/exp-export")
locs=$("$bin/plx" export "$out/exp-export" --format text -o - 2>/dev/null | grep -c '^#   [0-9]' || true)
size_big=$(du -sm "$out/exp-export" | awk '{print $1}')
read -r s_text rss_text < <(measure "$bin/plx" export "$out/exp-export" --format text -o /dev/null)
read -r s_pq rss_pq < <(measure "$bin/plx" export "$out/exp-export" --format parquet -o "$out/export-parquet")
pq_mb=$(du -sm "$out/export-parquet" | awk '{print $1}')
rm -rf "$out/export-parquet" "$out/export-otf2-big"
read -r s_otf2_big rss_otf2_big < <(measure "$bin/plx" export "$out/exp-export" --format otf2 -o "$out/export-otf2-big")
otf2_mb=$(du -sm "$out/export-otf2-big" | awk '{print $1}')
rm -rf "$out/export-otf2-big" "$out/exp-export"

# the small trace: plx's merge, the OTF2 export by the engine and by the former path (Parquet,
# then the Python writer), and the OTF2 Python reader reading the engine's archive back
trace "$small" "$out/exp-otf2"
n_small=$(events_of "$out/exp-otf2")
read -r s_text_small rss_text_small < <(measure "$bin/plx" export "$out/exp-otf2" --format text -o /dev/null)
rm -rf "$out/export-otf2" "$out/export-otf2-py" "$out/otf2-tables"
read -r s_otf2w rss_otf2w < <(measure "$bin/plx" export "$out/exp-otf2" --format otf2 -o "$out/export-otf2")
# the former otf2 export: the parquet tables, then the Python writer (times added, peak the larger)
read -r s_old1 rss_old1 < <(measure "$bin/plx" export "$out/exp-otf2" --format parquet -o "$out/otf2-tables")
read -r s_old2 rss_old2 < <(measure "$py" bench/otf2_python_writer.py --quiet "$out/otf2-tables" "$out/export-otf2-py")
s_otf2old=$(awk -v a="$s_old1" -v b="$s_old2" 'BEGIN { printf "%.3f", a + b }')
rss_otf2old=$(( rss_old1 > rss_old2 ? rss_old1 : rss_old2 ))
rm -rf "$out/export-otf2-py" "$out/otf2-tables"
cat > "$out/otf2_read.py" <<'PY'
import sys, otf2
n = 0
with otf2.reader.open(sys.argv[1]) as tr:
    for _loc, _ev in tr.events:
        n += 1
open(sys.argv[2], "w").write(str(n))
PY
read -r s_otf2r rss_otf2r < <(measure "$py" "$out/otf2_read.py" "$out/export-otf2/traces.otf2" "$out/otf2.count")
n_otf2=$(cat "$out/otf2.count")
rm -rf "$out/exp-otf2"

{
  echo "### Merged-trace exports ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  echo "\`bench/export.sh\`: bench/threads.c, $threads threads calling tiny instrumented functions,"
  echo "traced with \`PLX_TRACE=1\`. Times are wall clock from the page cache; memory is peak RSS."
  echo
  echo "| what | trace | time | events/s | peak RSS |"
  echo "|---|---|---|---|---|"
  echo "| \`plx export --format text -o /dev/null\` (merge in global order, clock condition, message matching, formatting) | $n_big events, $locs locations, $size_big MiB | $s_text s | **$(rate "$n_big" "$s_text") M** | $rss_text MiB |"
  echo "| \`plx export --format parquet\` (same merge, 5 tables, $pq_mb MiB) | same | $s_pq s | $(rate "$n_big" "$s_pq") M | $rss_pq MiB |"
  echo "| \`plx export --format text -o /dev/null\` | $n_small events, $locs locations | $s_text_small s | $(rate "$n_small" "$s_text_small") M | $rss_text_small MiB |"
  echo "| \`plx export --format otf2\` (the OTF2 C library) | $n_big events, $locs locations, $otf2_mb MiB archive | $s_otf2_big s | **$(rate "$n_big" "$s_otf2_big") M** | $rss_otf2_big MiB |"
  echo "| \`plx export --format otf2\` (the OTF2 C library) | $n_small events, $locs locations | $s_otf2w s | **$(rate "$n_small" "$s_otf2w") M** | $rss_otf2w MiB |"
  echo "| former OTF2 path: \`--format parquet\`, then the OTF2 library's Python writer (bench/otf2_python_writer.py) — the baseline | same | $s_otf2old s | $(rate "$n_small" "$s_otf2old") M | $rss_otf2old MiB |"
  echo "| OTF2 Python reader (\`otf2.reader\`, every event of that archive: $n_otf2 records) | same, as OTF2 | $s_otf2r s | $(rate "$n_otf2" "$s_otf2r") M | $rss_otf2r MiB |"
  echo
  echo "The OTF2 export runs $(awk -v a="$s_otf2old" -v b="$s_otf2w" 'BEGIN { printf "%.0f", a / b }')x faster than its former path on the same $n_small events."
  echo "The baseline and reader rows use a smaller trace of the same program: the Python writer"
  echo "and reader handle each event in Python, and a $n_big-event archive would take too long."
} | tee "$out/export.md"
