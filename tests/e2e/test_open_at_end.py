"""Calls still open when the process ends (programs/blocked_exit.c): a thread blocked two frames
down in a read while the main thread waits 60 ms and calls exit() two frames down, or is killed
with SIGKILL. Every open call ends at the process's end (the wait lasts >= 60 ms, in profile and
trace mode), and report, info and the exports say that those calls were cut there."""

import json
import os
import signal
import subprocess

import pytest
from components import require_module

from conftest import (
    PLX,
    TOOLCHAINS,
    clean_env,
    info,
    paths_of,
    plx,
    run,
)
from test_view import http, serving

MODES = {"profile": (), "trace": ("--trace",)}
WAIT_S = 0.060
WAITER = ("waiter", "wait_outer", "wait_inner")


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
        ("main", "finish", "nanosleep"): 1,  # finish's nap: a wait region (adapters/wait.c)
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


def killed_run(programs, out):
    """blocked_exit.c kill under plx run --trace, SIGKILLed after the main thread's marker()
    (60 ms into the waiter's blocked read): the experiment `out`."""
    prog = programs.get("blocked_exit.c", "-O0", "-pthread", toolchain="gcc")
    p = subprocess.Popen([str(PLX), "run", "--trace", "-o", str(out), "--", str(prog), "kill"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env())
    line = p.stdout.readline()
    assert line.startswith("ready "), line + p.stderr.read()
    os.kill(int(line.split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    return out


@pytest.fixture(scope="module")
def killed(programs, tmp_path_factory):
    return killed_run(programs, tmp_path_factory.mktemp("open_at_end") / "killed")


def test_thread_blocked_at_sigkill_ends_at_the_last_event(killed):
    """Trace mode, SIGKILL: the waiter's open calls end at the process's last event (the main
    thread's marker() 60 ms after the wait began), not at the waiter's own last event (0 s)."""
    out = killed
    paths = paths_of(out)
    assert {p: c for p, (c, _) in paths.items()} == {
        ("main",): 1,
        ("main", "finish"): 1,
        ("main", "finish", "nanosleep"): 1,
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


def test_chrome_export_of_a_killed_process_ends_open_calls_at_its_last_event(killed, tmp_path):
    """The Chrome export: the waiter's three slices (and main's two) end at the process's
    latest event, >= 55 ms after the wait began, their ends marked {"truncated": true}; every
    other slice end carries no such mark."""
    path = tmp_path / "killed.json"
    cp = plx("export", killed, "--format", "chrome", "-o", path)
    assert ("thread 1: 3 calls still open when the process was killed, closed at its last "
            "event (truncated)") in cp.stderr, cp.stderr
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") in ("B", "E") and e["name"] in
              WAITER + ("main", "finish", "marker")]
    latest = max(e["ts"] for e in events if "ts" in e)
    begin = {e["name"]: e for e in slices if e["ph"] == "B"}
    end = {e["name"]: e for e in slices if e["ph"] == "E"}
    assert sorted(begin) == sorted(end) == sorted(WAITER + ("main", "finish", "marker"))
    for name in WAITER + ("main", "finish"):
        assert end[name]["ts"] == latest, (name, end[name], latest)
        assert end[name].get("args") == {"truncated": True}, end[name]
    for name in WAITER:
        assert end[name]["ts"] - begin[name]["ts"] >= 55_000, (begin[name], end[name])
    assert "args" not in end["marker"], end["marker"]


def test_otf2_export_of_a_killed_process_leaves_open_calls_at_its_last_event(killed, tmp_path):
    """The OTF2 archive, read by the otf2 Python package: the waiter's three regions (and
    main's two) are left at the process's latest time, >= 55 ms after the wait's enter."""
    otf2 = require_module("otf2", what="the OTF2 Python reader (pip install otf2)")
    out = tmp_path / "otf2"
    cp = plx("export", killed, "--format", "otf2", "-o", out)
    assert ("thread 1: 3 calls still open when the process was killed, closed at its last "
            "event (truncated)") in cp.stderr, cp.stderr
    enters, leaves, times = {}, {}, []
    with otf2.reader.open(str(out / "traces.otf2")) as tr:
        per_s = tr.definitions.clock_properties.timer_resolution
        for _, ev in tr.events:
            times.append(ev.time)
            kind = type(ev).__name__
            if kind in ("Enter", "Leave"):
                (enters if kind == "Enter" else leaves).setdefault(ev.region.name, []).append(
                    ev.time)
    names = WAITER + ("main", "finish", "marker")
    assert {n: len(enters.get(n, [])) for n in names} == {n: 1 for n in names}
    assert {n: len(leaves.get(n, [])) for n in names} == {n: 1 for n in names}
    latest = max(times)
    for name in WAITER + ("main", "finish"):
        assert leaves[name] == [latest], (name, leaves[name], latest)
    for name in WAITER:
        assert (leaves[name][0] - enters[name][0]) / per_s >= 0.055, (name, enters, leaves)


def test_text_export_of_a_killed_process_says_where_open_calls_end(killed, tmp_path):
    """The text export lists each thread's calls still open and where the other exports end
    them: the process's latest event, the last line's time."""
    path = tmp_path / "killed.txt"
    cp = plx("export", killed, "--format", "text", "-o", path)
    assert ("thread 1: 3 calls still open when the process was killed, closed at its last "
            "event (truncated)") in cp.stderr, cp.stderr
    lines = path.read_text().splitlines()
    latest = max(int(line.split()[0]) for line in lines if not line.startswith("#"))
    cut = [line.split(": ", 1)[1] for line in lines if "calls still open" in line]
    assert cut == [
        f"2 calls still open (finish < main), ended at {latest}, the process's latest event: "
        "it was killed (truncated)",
        f"3 calls still open (wait_inner < wait_outer < waiter), ended at {latest}, the "
        "process's latest event: it was killed (truncated)",
    ], lines


def test_plx_view_of_a_killed_process_ends_open_calls_at_its_last_event(killed, tmp_path):
    """plx view's /api/region: the waiter's three regions last as long as the Chrome export's
    slices (they end at the process's latest event), >= 55 ms."""
    chrome = tmp_path / "killed.json"
    plx("export", killed, "--format", "chrome", "-o", chrome)
    events = json.loads(chrome.read_text())["traceEvents"]
    slice_us = {}
    for e in events:
        if e.get("ph") in ("B", "E") and e["name"] in WAITER:
            slice_us[e["name"]] = e["ts"] - slice_us.get(e["name"], 0)
    with serving(killed) as (_, port, token):
        status, _, body = http(port, f"/api/meta?token={token}")
        assert status == 200, body
        ntracks = len(json.loads(body)["tracks"])
        found = {}
        for track in range(ntracks):
            for depth in range(len(WAITER) + 1):
                for index in range(4):
                    status, _, body = http(port, f"/api/region?token={token}&track={track}"
                                                 f"&depth={depth}&index={index}")
                    if status != 200:
                        break
                    r = json.loads(body)
                    if r["name"] in WAITER:
                        found[r["name"]] = r["duration"]
    assert sorted(found) == sorted(WAITER), found
    for name in WAITER:
        assert found[name] >= 55_000_000, found
        # the same end as the Chrome export's slice (its times are in microseconds, rounded)
        assert abs(found[name] / 1000 - slice_us[name]) <= 1, (name, found, slice_us)
