#!/usr/bin/env bash
# The web viewer (plx view): Node.js and npm build its bundle (npm ci from viewer/package-lock.json,
# then esbuild); Debian's Chromium (and its driver) runs the browser tests, driven by
# playwright-core from the same lock file, never with a browser of its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

apt_install nodejs npm chromium chromium-driver
