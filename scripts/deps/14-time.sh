#!/usr/bin/env bash
# GNU time (/usr/bin/time -f %M): the peak RSS of one command, for the engine's memory tests
# (tests/e2e/test_hostile.py): wait4 from pytest would count the forking Python's own RSS.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install time
