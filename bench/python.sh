#!/usr/bin/env bash
# The parallax package: the events of a traced run into a pandas DataFrame through the engine
# inside the package (parallax._native, Arrow without copies), against the subprocess path (plx export
# --format parquet in a subprocess, then pandas.read_parquet) on the same experiment in the same
# run. The package is the wheel of `make python`, in a virtual environment of build/bench.
# Prints a markdown section; also in build/bench/python.md.
#   PLX_BENCH_PY_EVENTS (10 M: events of the trace), PLX_BENCH_THREADS (16), PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
lib=$PWD/build/lib
out=$PWD/build/bench
mkdir -p "$out"
events=${PLX_BENCH_PY_EVENTS:-10000000}
threads=${PLX_BENCH_THREADS:-16}
py=${PYTHON:-python3}

wheel=$(ls build/wheels/parallax_hpc-*.whl)
rm -rf "$out/pyenv"
"$py" -m venv --system-site-packages "$out/pyenv"
"$out/pyenv/bin/python" -m pip install -q --no-deps --no-index "$wheel"

cc -O2 -g -finstrument-functions -pthread bench/threads.c -o "$out/threads-inst"
exp=$out/exp-python
rm -rf "$exp"
PLX_OUTPUT="$exp" PLX_TRACE=1 LD_PRELOAD="$lib/libplx.so" \
  "$out/threads-inst" "$threads" $(( events / threads / 2 )) >/dev/null

# each path in its own interpreter, the page cache warm for both; the best of 3 of each
cat "$exp"/*/trace.plx > /dev/null
run() { "$out/pyenv/bin/python" bench/python_tables.py "$1" "$exp" "$bin/plx"; }
best() {
  local b="" line
  for _ in 1 2 3; do
    line=$(run "$1")
    if [ -z "$b" ] || awk -v a="$(echo "$b" | cut -d' ' -f3)" -v c="$(echo "$line" | cut -d' ' -f3)" 'BEGIN { exit !(c < a) }'; then
      b=$line
    fi
  done
  echo "$b"
}
new=$(best native)
old=$(best subprocess)
read -r _ rows t_new c_new arrow before_new peak_new <<<"$new"
read -r _ rows_old t_old c_old _ before_old peak_old <<<"$old"
[ "$rows" = "$rows_old" ] || { echo "python.sh: $rows rows natively, $rows_old by the subprocess path" >&2; exit 1; }

{
  echo "## Python: events into a DataFrame"
  echo
  echo "| path | rows | time | rate | per CPU second | memory (peak RSS over the imported modules) | × Arrow size |"
  echo "|---|---|---|---|---|---|---|"
  awk -v r="$rows" -v t="$t_new" -v c="$c_new" -v a="$arrow" -v b="$before_new" -v p="$peak_new" 'BEGIN {
    m = p - b; printf "| `parallax.open(d).events` (engine inside, Arrow-backed pandas) | %d | %.2f s | **%.1f M rows/s** | %.1f M rows/s | %.0f MiB | **%.2f×** (Arrow %.0f MiB) |\n", r, t, r / t / 1e6, r / c / 1e6, m, m * 1048576 / a, a / 1048576 }'
  awk -v r="$rows" -v t="$t_old" -v c="$c_old" -v a="$arrow" -v b="$before_old" -v p="$peak_old" -v tn="$t_new" 'BEGIN {
    m = p - b; printf "| subprocess: `plx export --format parquet` subprocess + `pandas.read_parquet` | %d | %.2f s | %.1f M rows/s (%.1f× slower) | %.1f M rows/s | %.0f MiB | %.2f× |\n", r, t, r / t / 1e6, t / tn, r / c / 1e6, m, m * 1048576 / a }'
  echo
  echo "$rows events of bench/threads.c ($threads threads), the best of 3 runs of each path;"
  echo "targets: ≥ 20 M rows/s, ≤ 2× the Arrow size. \`bench/python.sh\` (PLX_BENCH_PY_EVENTS)."
} | tee "$out/python.md"
