#!/usr/bin/env bash
# Two hosts on one machine (tests/e2e/twohosts.py): iproute2's `ip netns` and veth pairs for
# the network namespaces; util-linux (unshare, for people) for UTS and time namespaces. The test
# itself needs root and Linux 5.6 or later (time namespaces).
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
apt_install iproute2 util-linux
