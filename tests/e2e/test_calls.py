"""Call counts and the callpath tree of fib(20), in profile mode and rebuilt from a trace: times,
JSON and text forms (the exact counts per call path are the case tests/e2e/cases/fib-callpaths)."""

import re
from collections import Counter

import pytest

from conftest import (
    EPS,
    TOOLCHAINS,
    all_threads,
    assert_time_relations,
    callpath_rows,
    info,
    info_thread_lines,
    location_rows,
    path_of,
    plx,
    report_csv,
    report_json,
    run,
    total,
)

FIB_N = 20
FIB_CALLS = 21891  # calls of fib made by fib(20), the first one included


def fib_calls_by_depth(n):
    """Simulates fib(n)'s call tree: {depth: calls}, depth 1 being the call from main."""
    counts = Counter()

    def go(k, depth):
        counts[depth] += 1
        if k >= 2:
            go(k - 1, depth + 1)
            go(k - 2, depth + 1)

    go(n, 1)
    return dict(counts)


MODES = {"profile": (), "trace": ("--trace",)}


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def fib_bin(request, programs):
    """fib.c under each compiler (this module's, in place of conftest's)."""
    return programs.get("fib.c", "-O0", toolchain=request.param)


@pytest.fixture(scope="module")
def fib_exps(fib_bin, exp_root):
    exps = {}
    for mode, opts in MODES.items():
        out = exp_root / ("%s-%s" % (fib_bin.name, mode))
        run(out, fib_bin, opts=opts)
        exps[mode] = out
    return exps


@pytest.fixture(params=sorted(MODES))
def fib_exp(request, fib_exps):
    return fib_exps[request.param]


def test_simulation_is_sound():
    by_depth = fib_calls_by_depth(FIB_N)
    assert sum(by_depth.values()) == FIB_CALLS
    assert max(by_depth) == FIB_N
    assert by_depth[1] == 1 and by_depth[2] == 2


def test_times_are_consistent(fib_exp):
    flat = report_csv(fib_exp)
    rows = report_csv(fib_exp, "--callpath")
    assert_time_relations(flat)
    assert_time_relations(rows)
    for loc, loc_rows in location_rows(rows).items():
        main = [r for r in loc_rows if path_of(r) == ("main",)]
        assert len(main) == 1, loc
        under_main = [r for r in loc_rows if path_of(r)[0] == "main"]
        exclusive = sum(float(r["exclusive_s"]) for r in under_main)
        inclusive = float(main[0]["inclusive_s"])
        # the subtree's exclusive times add up to main's inclusive time
        assert exclusive <= inclusive + EPS
        assert exclusive >= inclusive - EPS
    paths = callpath_rows(rows)
    # flat inclusive of a recursive function counts only the outermost nodes
    fib = total(flat, "fib")
    assert abs(float(fib["inclusive_s"]) - float(paths[("main", "fib")]["inclusive_s"])) <= 1e-8
    fib_exclusive = sum(float(r["exclusive_s"]) for p, r in paths.items() if p[-1] == "fib")
    assert abs(float(fib["exclusive_s"]) - fib_exclusive) <= EPS
    for p, r in paths.items():
        if len(p) > 1 and p[:-1] in paths:
            assert float(r["inclusive_s"]) <= float(paths[p[:-1]]["inclusive_s"]) + 1e-8, p


def test_profile_sources(fib_exps):
    for mode, source, info_source in (
        ("profile", "recorded", "recorded"),
        ("trace", "rebuilt", "rebuilt from trace"),
    ):
        doc = report_json(fib_exps[mode])
        threads = all_threads(doc)
        assert len(threads) == 1
        assert threads[0][1]["profile_source"] == source
        assert threads[0][1]["name"] == "main"
        (line,) = info_thread_lines(info(fib_exps[mode]).stdout)
        assert line["profile"] == info_source
        assert line["name"] == "main"
        if mode == "trace":
            # an enter and an exit event per call of fib, at least
            assert line["trace_events"] >= 2 * FIB_CALLS
        else:
            assert line["trace_events"] == 0


def test_json_matches_csv(fib_exps, fib_bin):
    doc = report_json(fib_exps["profile"])
    assert doc["phase"] is None
    assert doc["warnings"] == []
    (proc,) = doc["processes"]
    assert proc["finished"] is True
    assert proc["argv"] == [str(fib_bin)]
    assert proc["executable"] == str(fib_bin)
    fns = {f["function"]: f for f in doc["total"]["functions"]}
    assert fns["fib"]["calls"] == FIB_CALLS
    assert fns["fib"]["child_calls"] == FIB_CALLS - 1
    assert fns["fib"]["kind"] == "function"
    assert fns["plx_symbols"]["kind"] == "runtime"
    paths = {tuple(c["callpath"]): c for c in doc["total"]["callpaths"]}
    assert {len(p) - 1: c["calls"] for p, c in paths.items() if p[-1] == "fib"} == (
        fib_calls_by_depth(FIB_N)
    )


def test_by_process(fib_exps):
    rows = report_csv(fib_exps["profile"], "--by", "process")
    locs = [r for r in rows if r["process"] != "all"]
    assert locs and all(r["thread"] == "all" for r in locs)
    fib = [r for r in locs if r["function"] == "fib"]
    assert len(fib) == 1 and int(fib[0]["calls"]) == FIB_CALLS


def test_gprof_recursion(fib_exps):
    doc = report_json(fib_exps["profile"], "--gprof")
    (proc,) = doc["processes"]
    (thread,) = proc["threads"]
    graph = {e["function"]: e for e in thread["call_graph"]}
    assert graph["fib"]["calls"] == 1
    assert graph["fib"]["recursive_calls"] == FIB_CALLS - 1
    assert [p["function"] for p in graph["fib"]["parents"]] == ["main"]
    assert graph["main"]["parents"][0]["function"] == "<spontaneous>"
    text = plx("report", fib_exps["profile"], "--gprof").stdout
    assert "1+%d" % (FIB_CALLS - 1) in text


def test_text_report(fib_exps):
    text = plx("report", fib_exps["profile"]).stdout
    assert re.search(r'(?m)^\d+\.0 "main" \(pid \d+ on \S+\)$', text), text
    assert "total (all processes, all threads)" in text
    fib_lines = [line for line in text.splitlines() if line.split()[-1:] == ["fib"]]
    # one in the thread's table, one in the total
    assert len(fib_lines) == 2
    for line in fib_lines:
        fields = line.split()
        assert str(FIB_CALLS) in fields and str(FIB_CALLS - 1) in fields
