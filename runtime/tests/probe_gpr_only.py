#!/usr/bin/env python3
"""probe_gpr_only.py LIBPLX: the probes' fast path touches general registers only.

The trampolines of probe_entry.S save no vector register (their header states why that is
enough): every function reachable from them by direct calls and jumps must use no xmm, ymm, zmm,
opmask, mm or x87 register, make no indirect call, and call nothing outside libplx.so; the
walk stops at the thunks plx_probe_v_* (each a jump to plx_probe_vcall, which saves the vector
state). Exit status 1 with every violation listed. The checker is tried on the slow half too,
which calls libc: it must find that (else it could not fail).
"""
import re
import subprocess
import sys

ROOTS = ("plx_probe_entry_common", "plx_probe_exit_common")
THUNK = "plx_probe_v_"
VECTOR = re.compile(r"%(x|y|z)mm\d|%k[0-7]\b|%mm\d|%st\b|%st\(")
# x87 (fld, fstp, ...: no other mnemonic starts with f), VEX/EVEX, MXCSR, state saves, emms
MNEMONIC = re.compile(r"^(f[a-z0-9]+|v[a-z0-9]+|[ls]dmxcsr|xsave\w*|xrstor\w*|emms)\b")
BRANCH = re.compile(r"^(?:bnd |notrack )?(call|j[a-z]+)\s+(\S+)(?:\s+<([^>]+)>)?")


def functions(lib):
    """{start address: (name, [instructions])}, and {name: [start addresses]}; local functions
    of several files may share a name (inline copies in a -O0 build)."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "-M", "att", lib],
        check=True, capture_output=True, text=True,
    ).stdout
    funcs, by_name, cur = {}, {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            cur = int(m.group(1), 16)
            funcs[cur] = (m.group(2), [])
            by_name.setdefault(m.group(2), []).append(cur)
        elif cur is not None and re.match(r"^\s+[0-9a-f]+:\t", line):
            funcs[cur][1].append(line.split("\t", 1)[1].strip())
    return funcs, by_name


def walk(funcs, by_name, roots):
    """Violations of the functions reachable from roots, and the names of those walked."""
    bad, seen, todo = [], set(), []
    for r in roots:
        if r not in by_name:
            bad.append("%s: not found in the library's symbols" % r)
        todo += by_name.get(r, [])
    while todo:
        start = todo.pop()
        if start in seen:
            continue
        seen.add(start)
        name, body = funcs[start]
        if name.startswith(THUNK):
            if len(body) < 2 or not body[0].startswith("lea") or "<plx_probe_vcall>" not in body[1]:
                bad.append("%s: not a jump to plx_probe_vcall: %s" % (name, body))
            continue
        for insn in body:
            if VECTOR.search(insn) or MNEMONIC.match(insn):
                bad.append("%s: %s" % (name, insn))
            m = BRANCH.match(insn)
            if not m:
                continue
            if m.group(2).startswith("*"):
                if not (name == "plx_probe_exit_common" and m.group(1) == "jmp"):
                    bad.append("%s: indirect %s" % (name, insn))  # else: to the return address
                continue
            target = m.group(3)
            if target is None or "@" in target:
                bad.append("%s: calls outside libplx: %s" % (name, insn))
                continue
            off = int(target.split("+", 1)[1], 16) if "+" in target else 0
            to = int(m.group(2), 16) - off
            if to not in funcs:
                bad.append("%s: %s goes to no function's start" % (name, insn))
            elif to != start:
                todo.append(to)
    return bad, {funcs[a][0] for a in seen}


def main():
    funcs, by_name = functions(sys.argv[1])
    bad, seen = walk(funcs, by_name, ROOTS)
    for required in ("plx_probe_enter", "plx_probe_exit", "plx_probe_v_probe_enter_slow"):
        if required not in seen:
            bad.append("%s is not reached from the trampolines" % required)
    control, _ = walk(funcs, by_name, ("plx_probe_enter_slow",))
    if not control:
        bad.append("the check finds nothing in plx_probe_enter_slow, which calls libc")
    for b in bad:
        print(b)
    print("%d functions of the fast path walked: %s" % (len(seen), " ".join(sorted(seen))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
