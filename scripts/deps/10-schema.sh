#!/usr/bin/env bash
# The format schema: scripts/gen-format.py (run by the format_generated ctest and by
# `cargo test -p plx-format --test schema`) reads spec/records.toml with Python's tomllib (3.11+).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
apt_install python3
python3 -c 'import sys, tomllib; assert sys.version_info >= (3, 11)' 2>/dev/null || {
  echo "install-deps: scripts/gen-format.py needs Python 3.11 or later (tomllib); python3 is $(python3 --version 2>&1)" >&2
  exit 1
}
