"""Limits of the runtime (PLX_MAX_DEPTH, PLX_MAX_NODES): what is past them is counted and
reported, never silently dropped; and the runtime's variables used without plx run."""

import re
import subprocess

import pytest

from conftest import (LIBPLX, calls, callpath_rows, clean_env, info, info_thread_lines, plx,
                      report_csv, run)

DEPTH = 100  # deep.c: main, then down(99) .. down(0), leaf() at the bottom, leaf() again from main


@pytest.fixture(scope="module")
def deep_bin(programs):
    return programs.get("deep.c", "-O0")


@pytest.mark.parametrize("opts", [(), ("--trace",)], ids=["profile", "trace"])
def test_max_depth_lost_events(deep_bin, tmp_path, opts):
    out = tmp_path / "deep"
    run(out, deep_bin, opts=opts, env={"PLX_MAX_DEPTH": "16"})
    cp = plx("report", out, "--format", "csv")
    # without a trace the runtime lost calls, not trace events
    what = "trace events lost" if opts else "calls not measured"
    assert re.search(r"plx: warning: .*process\.plx: thread 0: \d+ %s \(beyond the depth limit "
                     r"PLX_MAX_DEPTH" % what, cp.stderr), cp.stderr
    rows = report_csv(out)
    # 16 frames are measured: main and 15 levels of down; the frames below are lost, and the
    # stack is right again after them: main's own call of leaf() is counted
    assert calls(rows, "main") == 1
    assert calls(rows, "down") == 15
    assert calls(rows, "leaf") == 1
    paths = callpath_rows(report_csv(out, "--callpath"))
    assert int(paths[("main", "leaf")]["calls"]) == 1
    assert max(len(p) for p in paths) <= 16 + 1  # + a runtime region under the deepest frame
    text = info(out).stdout
    (line,) = info_thread_lines(text)
    # the 85 calls of down and the leaf call below depth 16: calls without a trace, their entry
    # and exit events with one (a trace counted each lost call once, 86 events for 172)
    lost_calls = DEPTH - 15 + 1
    assert line["lost"] == (2 * lost_calls if opts else lost_calls), text
    warnings = text.split("warnings:", 1)[1]
    assert re.search(r"process\.plx: thread 0: %d %s" % (line["lost"], what), warnings)


def test_default_depth_loses_nothing(deep_bin, tmp_path):
    out = tmp_path / "deep"
    run(out, deep_bin)
    rows = report_csv(out)
    assert calls(rows, "down") == DEPTH
    assert calls(rows, "leaf") == 2
    (line,) = info_thread_lines(info(out).stdout)
    assert line["lost"] == 0
    assert "warnings: none" in info(out).stdout


def test_max_nodes(fib_bin, tmp_path):
    out = tmp_path / "nodes"
    run(out, fib_bin, env={"PLX_MAX_NODES": "16"})
    cp = plx("report", out, "--format", "csv", "--callpath")
    assert "beyond the profile's capacity" in cp.stderr, cp.stderr
    rows = report_csv(out, "--callpath")
    paths = callpath_rows(rows)
    assert len(paths) <= 16
    fib = calls(report_csv(out), "fib")
    assert 0 < fib < 21891
    # the time of what was not recorded is kept in the parents: main's inclusive time is
    # still the sum of the exclusive times below it
    main_inclusive = float(paths[("main",)]["inclusive_s"])
    below = sum(float(r["exclusive_s"]) for p, r in paths.items() if p[0] == "main")
    assert abs(main_inclusive - below) <= 1e-6
    text = info(out).stdout
    m = re.search(r"thread 0: (\d+) callpaths beyond the profile's capacity", text)
    assert m and int(m.group(1)) > 0, text


@pytest.mark.parametrize("var,value", [("PLX_MAX_DEPTH", "abc"), ("PLX_MAX_NODES", "3")])
def test_bad_limit_values_fall_back(deep_bin, tmp_path, var, value):
    out = tmp_path / "bad"
    cp = run(out, deep_bin, env={var: value})
    assert var in cp.stderr
    assert calls(report_csv(out), "down") == DEPTH


@pytest.mark.parametrize("var,value,default", [("PLX_MAX_DEPTH", "4", "4096"),
                                               ("PLX_MAX_NODES", "15", "1048576")])
def test_limits_below_16_are_said_once_with_the_value_used(deep_bin, tmp_path, var, value,
                                                            default):
    """A limit under the table's minimum (16) is never raised silently: one warning naming the
    variable, its bounds and the value used."""
    out = tmp_path / "low"
    cp = run(out, deep_bin, env={var: value})
    lines = [l for l in cp.stderr.splitlines() if var in l]
    assert lines == ["plx: %s=%s: expected a whole number from 16 to %s; using the default, %s"
                     % (var, value, "1048576" if var == "PLX_MAX_DEPTH" else "268435456",
                        default)], cp.stderr
    assert calls(report_csv(out), "down") == DEPTH


def test_runtime_variables_without_plx_run(fib_bin, tmp_path):
    """PLX_OUTPUT, PLX_TRACE and PLX_BUFFER set by hand do what plx run's options do."""
    out = tmp_path / "by-hand"
    cp = subprocess.run(
        [str(fib_bin)],
        capture_output=True, text=True, cwd=tmp_path,
        env=clean_env({"PLX_OUTPUT": out, "PLX_TRACE": "1", "PLX_BUFFER": "4K"}),
    )
    assert cp.returncode == 0, cp.stderr
    assert len(list(out.glob("*/trace.plx"))) == 1
    rows = report_csv(out)
    assert calls(rows, "fib") == 21891
    assert calls(rows, "plx_flush") > 40  # a 4 KiB buffer flushed many times


def test_relative_output_by_hand_survives_the_program_changing_directory(programs, tmp_path):
    """PLX_OUTPUT=exp (relative, set by hand) and a program that changes its working directory
    before starting 2 threads: their live files were looked for under the new directory ("no
    room for the live file (No such file or directory)"), and the main thread's live file and
    .plx-reserve were left in the experiment. Now the directory is the one PLX_OUTPUT named at
    the start: nothing under the new working directory, no warning, only process.plx and
    trace.plx left, the 2,000 calls of work() counted."""
    prog = programs.get("chdir_threads.c", "-O0", "-pthread")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cp = subprocess.run(
        [str(prog), str(elsewhere)], capture_output=True, text=True, cwd=tmp_path,
        env=clean_env({"PLX_OUTPUT": "exp", "PLX_TRACE": "1", "LD_PRELOAD": str(LIBPLX)}),
    )
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "chdir_threads: 2000\n"
    assert cp.stderr == ""
    assert list(elsewhere.iterdir()) == []
    out = tmp_path / "exp"
    (pdir,) = [d for d in out.iterdir() if d.is_dir()]
    assert sorted(f.name for f in pdir.iterdir()) == ["process.plx", "trace.plx"]
    assert calls(report_csv(out), "work") == 2000
