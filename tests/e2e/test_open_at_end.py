"""Calls still open when the process ends (programs/blocked_exit.c): a thread blocked two frames
down in a read while the main thread waits 60 ms and calls exit() two frames down, or is killed
with SIGKILL. Every open call ends at the process's end (the wait lasts >= 60 ms, in profile and
trace mode), and report, info and the exports say that those calls were cut there."""

import os
import signal
import subprocess

import pytest

from conftest import (
    PLX,
    RUNTIME_REGIONS,
    TOOLCHAINS,
    callpath_rows,
    clean_env,
    info,
    plx,
    report_csv,
    run,
)

MODES = {"profile": (), "trace": ("--trace",)}
WAIT_S = 0.060
WAITER = ("waiter", "wait_outer", "wait_inner")


def paths_of(out):
    rows = callpath_rows(report_csv(out, "--callpath"))
    return {
        p: (int(r["calls"]), float(r["inclusive_s"]))
        for p, r in rows.items()
        if not set(p) & RUNTIME_REGIONS
    }


@pytest.mark.parametrize("toolchain", sorted(TOOLCHAINS))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_thread_blocked_at_exit_ends_at_the_process_end(programs, toolchain, mode, tmp_path):
    prog = programs.get("blocked_exit.c", "-O0", "-pthread", toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, opts=MODES[mode])
    paths = paths_of(out)
    assert {p: c for p, (c, _) in paths.items()} == {
        ("main",): 1,
        ("main", "finish"): 1,
        WAITER[:1]: 1,
        WAITER[:2]: 1,
        WAITER: 1,
    }
    for k in range(1, 4):
        assert paths[WAITER[:k]][1] >= WAIT_S - 0.001, (WAITER[:k], paths[WAITER[:k]])
    assert paths[("main", "finish")][1] >= WAIT_S - 0.001
    # said by every reader: report (stderr), info (its warnings), an export (stderr)
    said = [
        "thread 1: 3 calls still open when the process ended, closed at its end (truncated)",
        "thread 0: 2 calls still open when the process ended, closed at its end (truncated)",
    ]
    report = plx("report", out)
    fmt = "chrome" if mode == "trace" else "tau"
    export = plx("export", out, "--format", fmt, "-o", tmp_path / ("export." + fmt))
    text = info(out).stdout
    for line in said:
        assert line in report.stderr, report.stderr
        assert line in export.stderr, export.stderr
        assert line in text, text


def test_thread_blocked_at_sigkill_ends_at_the_last_event(programs, tmp_path):
    """Trace mode, SIGKILL: the waiter's open calls end at the process's last event (the main
    thread's marker() 60 ms after the wait began), not at the waiter's own last event (0 s)."""
    prog = programs.get("blocked_exit.c", "-O0", "-pthread", toolchain="gcc")
    out = tmp_path / "killed"
    p = subprocess.Popen([str(PLX), "run", "--trace", "-o", str(out), "--", str(prog), "kill"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env())
    line = p.stdout.readline()
    assert line.startswith("ready "), line + p.stderr.read()
    os.kill(int(line.split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    paths = paths_of(out)
    assert {p: c for p, (c, _) in paths.items()} == {
        ("main",): 1,
        ("main", "finish"): 1,
        ("main", "finish", "marker"): 1,
        WAITER[:1]: 1,
        WAITER[:2]: 1,
        WAITER: 1,
    }
    for k in range(1, 4):
        assert paths[WAITER[:k]][1] >= WAIT_S - 0.001, (WAITER[:k], paths[WAITER[:k]])
    report = plx("report", out)
    assert ("thread 1: 3 calls still open when the process was killed, closed at its last "
            "event (truncated)") in report.stderr, report.stderr
    assert ("thread 0: 2 calls still open when the process was killed, closed at its last "
            "event (truncated)") in report.stderr, report.stderr
    assert "calls still open when the process was killed" in info(out, check=False).stdout
