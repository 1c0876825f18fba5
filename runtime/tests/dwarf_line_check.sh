#!/bin/sh
# Compares runtime/src/core/dwarf_line.c with addr2line for every function symbol of a binary.
#
#   dwarf_line_check.sh BINARY [T_DWARF_LINE]
#
# BINARY: an ELF executable or shared library, e.g. built from t_dwarf_sample.cpp:
#   g++ -g -O0 runtime/tests/t_dwarf_sample.cpp -o sample5              (DWARF 5)
#   g++ -g -O0 -gdwarf-4 runtime/tests/t_dwarf_sample.cpp -o sample4
# T_DWARF_LINE: the t_dwarf_line test program; built from the sources into a temporary
# directory with ${CC:-cc} when not given.
#
# For each address the index's "FILE:LINE" must equal addr2line's (paths normalized lexically,
# discriminators dropped, "??" for uncovered). Where they differ, readelf's decoding of the line
# table (readelf -wL, file base names) decides, looked up with the same rule: addr2line 2.40 gets
# some DWARF 5 tables wrong (file indexes when file 1 is not a copy of file 0, as GCC 12 emits
# when a header's code comes first; comp dir joined twice when it is relative; DWARF64 tables)
# and finds nothing for code whose CU it cannot place. If the binary's symbols include
# plx_sample functions, they must resolve to dwarf_sample/tmpl.h. Exits 1 on any mismatch.
set -eu

bin=${1:?usage: dwarf_line_check.sh BINARY [T_DWARF_LINE]}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tool=${2:-}
if [ -z "$tool" ]; then
    tool=$tmp/t_dwarf_line
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g "$here/t_dwarf_line.c" "$here/../src/core/dwarf_line.c" -o "$tool"
fi

# Addresses of defined functions (both symbol tables), unique, in hex without 0x; with
# DWARF_LINE_CHECK_INSNS=1 every instruction objdump -d finds instead.
if [ "${DWARF_LINE_CHECK_INSNS:-0}" = 1 ]; then
    what="instruction addresses"
    objdump -d "$bin" | awk '/^ *[0-9a-f]+:\t/ { a = $1; sub(/:$/, "", a); sub(/^0+/, "", a); print a }' |
        sort -u >"$tmp/addrs"
else
    what="function addresses"
    readelf -sW "$bin" 2>/dev/null |
        awk '$4 == "FUNC" && $7 != "UND" && $2 !~ /^0+$/ { sub(/^0+/, "", $2); print $2 }' |
        sort -u >"$tmp/addrs"
fi
n=$(wc -l <"$tmp/addrs")
if [ "$n" -eq 0 ]; then
    echo "$bin: no $what" >&2
    exit 1
fi

# normalize(path): the same lexical normalization as dwarf_line.c
norm='
function normalize(p,    abs, n, parts, out, k, i, c) {
    abs = substr(p, 1, 1) == "/"
    n = split(p, parts, "/")
    k = 0
    for (i = 1; i <= n; i++) {
        c = parts[i]
        if (c == "" || c == ".") continue
        if (c == ".." && k > 0 && out[k] != "..") { k--; continue }
        if (c == ".." && k == 0 && abs) continue
        out[++k] = c
    }
    p = abs ? "/" : ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    if (p == "") p = "."
    return p
}'

"$tool" "$bin" --query <"$tmp/addrs" >"$tmp/ours"
addr2line -e "$bin" <"$tmp/addrs" |
    awk "$norm"'
    {
        sub(/ \(discriminator [0-9]+\)$/, "")
        i = match($0, /:[^:]*$/)
        file = substr($0, 1, i - 1); line = substr($0, i + 1)
        # "FILE:?" comes from an STT_FILE symbol, not from a line table row
        if (file == "??" || line == "?") { print "??:0"; next }
        print normalize(file) ":" line
    }' >"$tmp/a2l"

paste -d ' ' "$tmp/addrs" "$tmp/ours" "$tmp/a2l" >"$tmp/all"
awk '$2 != $3' "$tmp/all" >"$tmp/diff"
ndiff=$(wc -l <"$tmp/diff")
nours=$(awk '$2 != "??:0"' "$tmp/all" | wc -l)

fail=0
confirmed=0
if [ "$ndiff" -gt 0 ]; then
    # Arbiter: readelf's own decoding of the line table (-wL), with the same lookup rule (the
    # last row at the greatest address <= the query within a sequence; "-" ends a sequence),
    # done by a merge of rows and queries sorted by zero-padded address. It gives base names.
    readelf -wL -W "$bin" 2>/dev/null |
        awk '$3 ~ /^0x[0-9a-f]+$/ && ($2 ~ /^[0-9]+$/ || $2 == "-") {
                 a = substr($3, 3); while (length(a) < 16) a = "0" a
                 print a, 0, ($2 == "-" ? 0 : 1), NR, $1, $2 }' >"$tmp/rows"
    awk '{ a = $1; while (length(a) < 16) a = "0" a; print a, 1, 0, NR, "?", "?", $0 }' "$tmp/diff" >>"$tmp/rows"
    LC_ALL=C sort -k1,1 -k2,2n -k3,3n -k4,4n "$tmp/rows" |
        awk '$2 == 0 { cur = ($3 == 0 ? "??:0" : $5 ":" $6); next }
             { print $7, $8, $9, (cur == "" ? "??:0" : cur) }' >"$tmp/diff3"
    while read -r addr ours a2l rdl; do
        ok=0
        if [ "$ours" = "$rdl" ]; then
            ok=1 # both uncovered
        elif [ "$rdl" != "??:0" ] && [ "${ours##*:}" = "${rdl##*:}" ]; then
            case "${ours%:*}" in
            "${rdl%:*}" | */"${rdl%:*}") ok=1 ;;
            esac
        fi
        if [ $ok -eq 1 ]; then
            confirmed=$((confirmed + 1))
        else
            fail=$((fail + 1))
            echo "MISMATCH 0x$addr: ours $ours, addr2line $a2l, readelf -wL $rdl"
        fi
    done <"$tmp/diff3"
fi

# Template instantiations from the sample header resolve to the header.
tmpl=0
nm -C "$bin" 2>/dev/null | awk '$2 ~ /^[tTwW]$/ && /plx_sample::/ { print $1 }' | sed 's/^0*//' | sort -u >"$tmp/tmpl"
while read -r addr; do
    [ -n "$addr" ] || continue
    tmpl=$((tmpl + 1))
    got=$(echo "$addr" | "$tool" "$bin" --query)
    case "$got" in
    */dwarf_sample/tmpl.h:*) ;;
    *)
        fail=$((fail + 1))
        echo "MISMATCH 0x$addr: plx_sample:: function resolves to $got, not dwarf_sample/tmpl.h"
        ;;
    esac
done <"$tmp/tmpl"

echo "$bin: $n $what, $nours covered by the line table; $((n - ndiff)) equal to addr2line," \
    "$confirmed differ from addr2line but agree with readelf -wL; $tmpl plx_sample functions checked; $fail failures"
[ $fail -eq 0 ]
