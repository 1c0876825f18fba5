#!/usr/bin/env bash
# The web viewer (plx view): Node.js and npm build its bundle (npm ci from viewer/package-lock.json,
# then esbuild); Debian's Chromium (and its driver) runs the browser tests, driven by
# playwright-core from the same lock file, never with a browser of its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# A Node.js that brings its own npm (as the machine's may) is kept: Debian's npm package would
# conflict with it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
apt_install chromium chromium-driver
