#!/usr/bin/env bash
# Probes (plx run --probe, plx attach, plx ctl): capstone decodes and relocates the instructions
# a probe displaces. libplx.so is built with its header and loads the library with dlopen only
# when a probe is asked for.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install libcapstone-dev
