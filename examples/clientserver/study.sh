#!/usr/bin/env bash
# The IPS-2 paper's client/server study, small: a multi-threaded object server, a producer
# client that puts objects and a consumer client that gets them, measured as three
# applications of one session; then the server's intra-application critical path and the
# clients' inter-application critical paths (which cross into the server, and from the
# consumer through the server into the producer).
#
#   examples/clientserver/study.sh [OUT]        default OUT: build/studies/clientserver
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/build/bin"
out="${1:-$root/build/studies/clientserver}"
objects="${CS_OBJECTS:-40}"
rm -rf "$out" && mkdir -p "$out"
"$bin/plx-cc" -O2 -pthread "$root/examples/clientserver/server.c" -o "$out/server"
"$bin/plx-cc" -O2 "$root/examples/clientserver/client.c" -o "$out/client"
S="$out/session"
run() { local app="$1"; shift; "$bin/plx" run --session "$S" --app "$app" --trace -- "$@"; }

run server "$out/server" "$out/port" 2 3 & server=$!
# the producer works 4 times longer per object than the consumer: the consumer waits for it
run producer "$out/client" "$out/port" put "$objects" 4096 20000 & producer=$!
run consumer "$out/client" "$out/port" get "$objects" 4096 5000
wait "$producer" "$server"

for args in "--app server --mode intra --level thread" \
            "--app producer --mode inter --level thread" \
            "--app consumer --mode inter --level thread" \
            "--app consumer --mode inter --level procedure"; do
  echo
  echo "== plx critical-path $S $args"
  # shellcheck disable=SC2086
  "$bin/plx" critical-path "$S" $args --top 12
done
