"""Call counts of plx against valgrind's callgrind on the same program, built without
instrumentation."""

import re
import subprocess
from collections import Counter
from types import SimpleNamespace

import pytest

from components import require_tools
from conftest import PROGRAMS, clean_env, report_csv, report_json, run, total_rows

USER_FUNCTIONS = {"main", "leaf", "a", "b", "c", "ack", "collatz_steps"}
FLAGS = ("-O0", "-fno-inline")



@pytest.fixture(autouse=True)
def _valgrind():
    require_tools("valgrind", what="valgrind (callgrind is the reference for call counts)")


def callgrind_calls(path):
    """{function: calls} summed over every `calls=` line, by the `cfn=` target before it."""
    totals = Counter()
    for (_caller, callee), n in callgrind_edges(path).items():
        totals[callee] += n
    return dict(totals)


def callgrind_edges(path):
    """{(caller, callee): calls} from a callgrind out file. Handles name compression
    (`(id) name` defines, `(id)` refers) and the `'N` suffixes of separated recursion levels."""
    names = {}
    edges = Counter()
    caller = target = None

    def resolve(spec):
        m = re.fullmatch(r"\((\d+)\)(?: (.*))?", spec.strip())
        if not m:
            return spec.strip()
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    for line in path.read_text().splitlines():
        if line.startswith(("fn=", "cfn=", "cfi=", "cfl=", "fi=", "fe=", "fl=", "ob=", "cob=")):
            key, _, spec = line.partition("=")
            if key in ("fn", "cfn"):
                name = re.sub(r"'\d+$", "", resolve(spec))
                if key == "cfn":
                    target = name
                else:
                    caller = name
            continue
        if line.startswith("calls="):
            count = int(line[len("calls="):].split()[0])
            assert caller is not None and target is not None, line
            edges[(caller, target)] += count
    return dict(edges)


@pytest.fixture(scope="module")
def comparison(tmp_path_factory, programs):
    tmp = tmp_path_factory.mktemp("callgrind")
    plain = tmp / "plain"
    cp = subprocess.run(
        ["cc", "-g", *FLAGS, str(PROGRAMS / "callgrind.c"), "-o", str(plain)],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, cp.stderr
    out_file = tmp / "callgrind.out"
    cp = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out_file, str(plain)],
        capture_output=True, text=True, env=clean_env(), timeout=300,
    )
    assert cp.returncode == 0, cp.stderr[-3000:]
    grind = callgrind_calls(out_file)
    grind_edges = callgrind_edges(out_file)
    plain_stdout = cp.stdout

    instrumented = programs.get("callgrind.c", *FLAGS)
    exp = tmp / "exp"
    rp = run(exp, instrumented)
    measured = {r["function"]: int(r["calls"]) for r in total_rows(report_csv(exp))}
    return SimpleNamespace(
        grind=grind,
        grind_edges=grind_edges,
        measured=measured,
        gprof=report_json(exp, "--gprof"),
        plain_stdout=plain_stdout,
        measured_stdout=rp.stdout,
    )


def test_same_output(comparison):
    assert comparison.plain_stdout == comparison.measured_stdout


def test_parser_sees_every_function(comparison):
    assert USER_FUNCTIONS <= set(comparison.grind), sorted(comparison.grind)
    assert comparison.grind["main"] == 1


@pytest.mark.parametrize("function", sorted(USER_FUNCTIONS))
def test_calls_equal_callgrind(comparison, function):
    assert comparison.measured.get(function) == comparison.grind[function]


def test_call_graph_edges_equal_callgrind(comparison):
    """Every caller -> callee edge between user functions has callgrind's count in plx's
    gprof call graph (a function's calls of itself are its recursive calls)."""
    grind_edges = comparison.grind_edges
    (proc,) = comparison.gprof["processes"]
    (thread,) = proc["threads"]
    graph = {e["function"]: e for e in thread["call_graph"]}
    want = {
        (a, b): n for (a, b), n in grind_edges.items() if a in USER_FUNCTIONS and b in USER_FUNCTIONS
    }
    assert len(want) >= 7
    got = {}
    for name, entry in graph.items():
        if name not in USER_FUNCTIONS:
            continue
        if entry["recursive_calls"]:
            got[(name, name)] = entry["recursive_calls"]
        for child in entry["children"]:
            if child["function"] in USER_FUNCTIONS and child["function"] != name:
                got[(name, child["function"])] = got.get((name, child["function"]), 0) + child["calls"]
    assert got == want


def test_nothing_else_measured(comparison):
    assert set(comparison.measured) - {"plx_symbols", "plx_flush"} == USER_FUNCTIONS
