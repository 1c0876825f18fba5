#!/usr/bin/env bash
# Counters: PAPI (libpapi-dev, for PAPI event names in counter sets; papi-tools for
# papi_native_avail, which the tests ask what PAPI has) and perf (linux-perf, the reference the
# whole-thread totals are checked against).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
apt_install libpapi-dev papi-tools linux-perf
