#!/usr/bin/env bash
# `pip install ./python` as a user does it: a fresh `git clone` of this checkout (its committed
# tree: no build/, no engine/target, no viewer/node_modules) into a temporary directory, a fresh
# virtual environment, no plx on PATH and no $PLX; then `import parallax` in that environment
# reads an experiment of a small threaded run and its `plx` command runs. It compiles the whole
# engine (about 20 minutes on a loaded 2-core machine): too long for `make test`.
#   PYTHON (python3), KEEP=1 keeps the clone and the environment (printed).
# Needs what docs/python.md's Install section lists (cargo, cc, make, npm, libotf2, network for
# crates.io, npm and PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
tmp=$(mktemp -d /tmp/plx-pip-install.XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
git clone -q "$PWD" "$tmp/src"
"$py" -m venv "$tmp/venv"
# PATH without any directory that holds a plx
path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/plx" ] || printf '%s:' "$d"; done)
start=$(date +%s)
env -u PLX PATH="${path%:}" "$tmp/venv/bin/pip" install -q "$tmp/src/python"
echo "pip install ./python: $(( $(date +%s) - start )) s"
# the package (no plx on PATH but the environment's) against the plx it installed, on an
# experiment of the tree (spec/golden/all-trace: one process, 264 events)
env -u PLX PATH="$tmp/venv/bin:/usr/bin:/bin" "$tmp/venv/bin/python" - "$tmp" spec/golden/all-trace <<'PY'
import os, shutil, subprocess, sys
import pyarrow.parquet as pq
import parallax
tmp, exp = sys.argv[1:3]
plx = shutil.which("plx")
assert plx == f"{tmp}/venv/bin/plx", plx
assert parallax.__file__.startswith(f"{tmp}/venv/"), parallax.__file__
subprocess.run([plx, "export", exp, "--format", "parquet", "-o", f"{tmp}/pq"], check=True,
               capture_output=True)
want = pq.read_table(f"{tmp}/pq/events.parquet")
got = parallax.open(exp).table("events", backend="arrow")
assert got.num_rows == want.num_rows == 264, (got.num_rows, want.num_rows)
assert got.column("time_ns").to_pylist() == want.column("time_ns").to_pylist()
print(f"import parallax: {parallax.__file__}; {got.num_rows} events, as plx export's")
PY
if [ "${KEEP:-}" = 1 ]; then echo "kept: $tmp"; fi
echo "python_install.sh: ok"
