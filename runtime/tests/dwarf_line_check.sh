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
# discriminators dropped, "??" for uncovered). Where they differ and gdb is installed, gdb's
# "info line *ADDR" decides: binutils 2.40's addr2line maps DWARF 5 file indexes wrongly when
# file 1 is not a copy of file 0 (GCC 12 does that when a header's code comes first), gdb and
# readelf -wL do not. If the binary's symbols include plx_sample template instantiations, they
# must resolve to dwarf_sample/tmpl.h. Exits 1 on any mismatch.
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

# Addresses of defined functions (both symbol tables), unique, in hex without 0x.
readelf -sW "$bin" 2>/dev/null |
    awk '$4 == "FUNC" && $7 != "UND" && $2 !~ /^0+$/ { sub(/^0+/, "", $2); print $2 }' |
    sort -u >"$tmp/addrs"
n=$(wc -l <"$tmp/addrs")
if [ "$n" -eq 0 ]; then
    echo "$bin: no function symbols" >&2
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
    if command -v gdb >/dev/null 2>&1; then
        awk '{ print "info line *0x" $1 }' "$tmp/diff" >"$tmp/gdbcmds"
        gdb -nx -batch -x "$tmp/gdbcmds" "$bin" 2>/dev/null |
            awk '/^Line [0-9]+ of "/ { split($0, q, "\""); print q[2] ":" $2; next }
                 /^No line number information/ { print "??:0"; next }
                 /^Line / { print "?:?"; next }' >"$tmp/gdb"
        if [ "$(wc -l <"$tmp/gdb")" -ne "$ndiff" ]; then
            echo "gdb answered $(wc -l <"$tmp/gdb") of $ndiff queries; cannot arbitrate" >&2
            : >"$tmp/gdb"
        fi
    else
        : >"$tmp/gdb"
    fi
    paste -d ' ' "$tmp/diff" "$tmp/gdb" >"$tmp/diff3"
    while read -r addr ours a2l gdbsays; do
        ok=0
        if [ -n "${gdbsays:-}" ]; then
            gfile=${gdbsays%:*}
            gline=${gdbsays##*:}
            # gdb prints the name as the line table spells it: compare what follows ./ and ../
            while :; do
                case "$gfile" in
                ./*) gfile=${gfile#./} ;;
                ../*) gfile=${gfile#../} ;;
                *) break ;;
                esac
            done
            ofile=${ours%:*}
            oline=${ours##*:}
            if [ "$gdbsays" = "??:0" ] && [ "$ours" = "??:0" ]; then
                ok=1
            elif [ "$oline" = "$gline" ] && [ "$gfile" != "?" ]; then
                case "$ofile" in
                "$gfile" | */"$gfile") ok=1 ;;
                esac
            fi
        fi
        if [ $ok -eq 1 ]; then
            confirmed=$((confirmed + 1))
        else
            fail=$((fail + 1))
            echo "MISMATCH 0x$addr: ours $ours, addr2line $a2l${gdbsays:+, gdb $gdbsays}"
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

echo "$bin: $n function addresses, $nours covered by the line table; $((n - ndiff)) equal to addr2line," \
    "$confirmed differ from addr2line but agree with gdb; $tmpl plx_sample functions checked; $fail failures"
[ $fail -eq 0 ]
