#!/bin/sh
# The long form of the mutation fuzzer of the reading commands (tests/e2e/test_fuzz.py):
# PLX_FUZZ_CASES cases (default 20000) from seed PLX_FUZZ_SEED (default: the clock, printed).
# A failing case prints its seed and number; PLX_FUZZ_SEED=S PLX_FUZZ_ONLY=N reruns it alone.
set -eu
cd "$(dirname "$0")/.."
: "${PLX_FUZZ_CASES:=20000}"
: "${PLX_FUZZ_SEED:=$(date +%s)}"
export PLX_FUZZ_CASES PLX_FUZZ_SEED
echo "fuzz: $PLX_FUZZ_CASES cases, seed $PLX_FUZZ_SEED"
exec python3 -m pytest -q tests/e2e/test_fuzz.py
