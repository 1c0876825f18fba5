"""Call counts and the callpath tree of fib(20), in profile mode and rebuilt from a trace."""

import re
from collections import Counter

import pytest

from conftest import (
    EPS,
    RUNTIME_REGIONS,
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
    total_rows,
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


def test_fib_flat_counts(fib_exp):
    rows = report_csv(fib_exp)
    fib = total(rows, "fib")
    assert int(fib["calls"]) == FIB_CALLS
    assert int(fib["child_calls"]) == FIB_CALLS - 1
    main = total(rows, "main")
    assert int(main["calls"]) == 1
    # one location, the main thread: its rows are the total's
    locs = location_rows(rows)
    assert len(locs) == 1
    (loc_rows,) = locs.values()
    assert {(r["function"], r["calls"], r["child_calls"]) for r in loc_rows} == {
        (r["function"], r["calls"], r["child_calls"]) for r in total_rows(rows)
    }
    assert all(r["thread_name"] == "main" for r in loc_rows)


def test_main_calls_fib_once(fib_exp):
    """main makes exactly one call to a program function (fib); anything else among its
    children is the runtime's own work (plx_symbols, plx_flush), never counted among main's
    child calls."""
    rows = report_csv(fib_exp, "--callpath")
    paths = callpath_rows(rows)
    main = paths[("main",)]
    assert int(main["calls"]) == 1
    children = {p[1]: r for p, r in paths.items() if len(p) == 2 and p[0] == "main"}
    assert set(children) - RUNTIME_REGIONS == {"fib"}
    assert int(children["fib"]["calls"]) == 1
    assert int(main["child_calls"]) == 1
    flat_main = total(report_csv(fib_exp), "main")
    assert int(flat_main["child_calls"]) == int(main["child_calls"])


def test_fib_callpaths_by_depth(fib_exp):
    rows = report_csv(fib_exp, "--callpath")
    paths = callpath_rows(rows)
    fib_paths = {p: r for p, r in paths.items() if p[-1] == "fib"}
    expected = fib_calls_by_depth(FIB_N)
    got = {}
    for p, r in fib_paths.items():
        assert p[0] == "main" and set(p[1:]) == {"fib"}, p
        got[len(p) - 1] = int(r["calls"])
    assert got == expected
    # the named examples of the tree
    assert int(paths[("main", "fib")]["calls"]) == 1
    assert int(paths[("main", "fib", "fib")]["calls"]) == 2
    # child calls at depth k are the calls at depth k + 1 (the runtime's own work is not a call)
    for depth, n in expected.items():
        p = ("main",) + ("fib",) * depth
        assert int(paths[p]["child_calls"]) == expected.get(depth + 1, 0), p
    # every row's leaf is its function
    for r in rows:
        assert path_of(r)[-1] == r["function"]


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


def test_trace_and_profile_agree(fib_exps):
    """The profile rebuilt from the trace has the same calls and child calls as the recorded one."""
    counts = {}
    for mode, exp in fib_exps.items():
        flat = {
            r["function"]: (r["calls"], r["child_calls"])
            for r in total_rows(report_csv(exp))
            if r["function"] not in RUNTIME_REGIONS
        }
        paths = {
            r["callpath"]: (r["calls"], r["child_calls"])
            for r in total_rows(report_csv(exp, "--callpath"))
            if r["function"] not in RUNTIME_REGIONS
        }
        counts[mode] = (flat, paths)
    assert counts["profile"] == counts["trace"]
    assert counts["profile"][0]["fib"] == (str(FIB_CALLS), str(FIB_CALLS - 1))


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
