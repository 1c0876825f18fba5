"""The user API of plx.h: regions, phases, user events, thread names, C++ scope guards."""

import subprocess

import pytest

from conftest import (
    RUNTIME_REGIONS,
    all_threads,
    callpath_rows,
    clean_env,
    functions_of,
    info,
    info_thread_lines,
    plx,
    report_csv,
    report_json,
    run,
    total_rows,
)


@pytest.fixture(scope="module")
def api_exp(programs, exp_root):
    prog = programs.get("api.c", "-O0", "-pthread")
    out = exp_root / "api"
    run(out, prog)
    return out


def test_regions_and_phases(api_exp):
    doc = report_json(api_exp)
    fns = functions_of(doc["total"])
    assert (fns["load"]["calls"], fns["load"]["kind"]) == (3, "user")
    assert (fns["iterate"]["calls"], fns["iterate"]["kind"]) == (5, "user")
    assert (fns["setup"]["calls"], fns["setup"]["kind"]) == (1, "phase")
    assert (fns["solve"]["calls"], fns["solve"]["kind"]) == (1, "phase")
    assert fns["read_input"]["calls"] == 4  # 3 in load, 1 in the io thread
    assert fns["step"]["calls"] == 6  # 5 in iterate, 1 in the helper thread


def test_regions_nest_with_functions(api_exp):
    paths = callpath_rows(report_csv(api_exp, "--callpath"))
    assert int(paths[("main", "setup")]["calls"]) == 1
    assert int(paths[("main", "setup", "load")]["calls"]) == 3
    assert int(paths[("main", "setup", "load", "read_input")]["calls"]) == 3
    assert int(paths[("main", "solve")]["calls"]) == 1
    assert int(paths[("main", "solve", "iterate")]["calls"]) == 5
    assert int(paths[("main", "solve", "iterate", "step")]["calls"]) == 5
    assert int(paths[("main", "report_only")]["calls"]) == 1
    # an end that does not match the innermost region is ignored: outer still closes right
    assert int(paths[("main", "outer")]["calls"]) == 1
    assert not [p for p in paths if "not-open" in p]


def test_mismatched_end_is_a_lost_event(api_exp):
    lines = {line["name"]: line for line in info_thread_lines(info(api_exp).stdout)}
    assert lines["coordinator"]["lost"] == 1
    assert lines["io-thread"]["lost"] == 0


def test_user_event(api_exp):
    doc = report_json(api_exp)
    threads = {t["name"]: t for _, t in all_threads(doc)}
    (ev,) = threads["coordinator"]["user_events"]
    assert ev["name"] == "bytes"
    assert ev["count"] == 3
    assert ev["min"] == 100.0
    assert ev["max"] == 300.0
    assert ev["mean"] == pytest.approx(200.0, abs=1e-9)
    assert ev["std_dev"] == pytest.approx((20000 / 3) ** 0.5, rel=1e-9)  # population std dev
    assert threads["io-thread"]["user_events"] == []
    (tot,) = doc["total"]["user_events"]
    assert (tot["name"], tot["count"], tot["min"], tot["max"]) == ("bytes", 3, 100.0, 300.0)
    text = plx("report", api_exp).stdout
    assert any(line.split()[:2] == ["bytes", "3"] for line in text.splitlines()), text


def test_phase_report(programs, tmp_path):
    """A phase is its span of time (docs/phases.md): rebuilt from the trace, calls begun inside."""
    prog = programs.get("api.c", "-O0", "-pthread")
    exp = tmp_path / "api-trace"
    run(exp, prog, opts=("--trace",))
    rows = report_csv(exp, "--phase", "solve", "--callpath")
    paths = callpath_rows(rows)
    assert set(p[-1] for p in paths) - RUNTIME_REGIONS == {"main", "solve", "iterate", "step"}
    assert all(p[0] == "main" for p in paths if p[-1] not in RUNTIME_REGIONS)
    assert int(paths[("main",)]["calls"]) == 0  # begun before the phase
    assert int(paths[("main", "solve")]["calls"]) == 1
    assert int(paths[("main", "solve", "iterate")]["calls"]) == 5
    assert int(paths[("main", "solve", "iterate", "step")]["calls"]) == 5
    flat = {r["function"]: int(r["calls"]) for r in total_rows(report_csv(exp, "--phase", "solve"))}
    assert {k: v for k, v in flat.items() if k not in RUNTIME_REGIONS} == {
        "main": 0,
        "solve": 1,
        "iterate": 5,
        "step": 5,
    }
    doc = report_json(exp, "--phase", "setup")
    assert doc["phase"] == "setup"
    names = {f["function"] for f in doc["total"]["functions"]} - RUNTIME_REGIONS
    assert names == {"main", "setup", "load", "read_input"}
    assert functions_of(doc["total"])["read_input"]["calls"] == 3


def test_phase_of_a_profile_needs_the_trace(api_exp):
    cp = plx("report", api_exp, "--phase", "solve", check=False)
    assert cp.returncode == 2
    assert "rerun with `plx run --trace`" in cp.stderr, cp.stderr


def test_unknown_phase(api_exp):
    cp = plx("report", api_exp, "--phase", "nope", check=False)
    assert cp.returncode == 2
    assert 'no phase region named "nope"' in cp.stderr


def test_thread_names(api_exp):
    doc = report_json(api_exp)
    threads = sorted((t["thread"], t["name"]) for _, t in all_threads(doc))
    # plx_thread_name on main, pthread_setname_np and plx_thread_name in two threads
    assert threads == [(0, "coordinator"), (1, "io-thread"), (2, "helper-renamed")]
    rows = report_csv(api_exp)
    names = {(r["thread"], r["thread_name"]) for r in rows if r["process"] != "all"}
    assert names == {("0", "coordinator"), ("1", "io-thread"), ("2", "helper-renamed")}
    lines = info_thread_lines(info(api_exp).stdout)
    assert [line["name"] for line in lines] == ["coordinator", "io-thread", "helper-renamed"]


def test_api_without_plx_run(programs, tmp_path):
    """Linked with the runtime but run without plx run: runs normally, measures nothing."""
    prog = programs.get("api.c", "-O0", "-pthread")
    cp = subprocess.run([str(prog)], capture_output=True, text=True, env=clean_env(), cwd=tmp_path)
    assert cp.returncode == 0, cp.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def guards_exp(programs, exp_root):
    prog = programs.get("api_cxx.cpp", "-O0", cxx=True)
    out = exp_root / "api-cxx"
    run(out, prog)
    return out


def test_cxx_scope_guards(guards_exp):
    paths = callpath_rows(report_csv(guards_exp, "--callpath"))
    flat = {r["function"]: int(r["calls"]) for r in total_rows(report_csv(guards_exp))}
    assert flat["guarded"] == 6
    assert flat["work"] == 1
    assert flat["inner(int)"] == 6
    # after() is called by main after the phase ended: a direct child of main
    assert ("main", "after()") in paths
    for p in paths:
        assert p.count("guarded") <= 1 and p.count("guarded(int)") <= 1, p
        if p[-1] == "inner(int)":
            assert "guarded" in p and "work" in p, p
    (line,) = info_thread_lines(info(guards_exp).stdout)
    assert line["lost"] == 0
