"""Threads: names and ids, and 10,000 short-lived threads (the calls per thread are the case
tests/e2e/cases/threads)."""

import re
import subprocess

import pytest

from conftest import (
    PROGRAMS,
    all_threads,
    build,
    calls,
    functions_of,
    info,
    info_thread_lines,
    report_csv,
    report_json,
    run,
    total,
)

WORKERS = 8
SHORT_THREADS = 10000


@pytest.fixture(scope="module")
def threads_exps(programs, exp_root):
    prog = programs.get("threads.c", "-O0", "-pthread")
    exps = {}
    for mode, opts in {"profile": (), "trace": ("--trace", "--buffer", "8K")}.items():
        out = exp_root / ("threads-" + mode)
        run(out, prog, opts=opts)
        exps[mode] = out
    return exps


@pytest.fixture(params=["profile", "trace"])
def threads_exp(request, threads_exps):
    return threads_exps[request.param]


def test_nine_threads_named(threads_exp):
    doc = report_json(threads_exp)
    assert len(doc["processes"]) == 1
    threads = [t for _, t in all_threads(doc)]
    assert len(threads) == WORKERS + 1
    assert sorted(t["thread"] for t in threads) == list(range(WORKERS + 1))
    names = sorted(t["name"] for t in threads)
    assert names == ["main"] + ["worker"] * WORKERS
    (main,) = [t for t in threads if t["thread"] == 0]
    assert main["name"] == "main"
    assert len({t["tid"] for t in threads}) == WORKERS + 1


@pytest.fixture(scope="module")
def short_exp(programs, exp_root):
    prog = programs.get("short_threads.c", "-O0", "-pthread")
    out = exp_root / "short-threads"
    run(out, prog)
    return out


def test_ten_thousand_threads(short_exp):
    doc = report_json(short_exp)
    assert len(doc["processes"]) == 1
    threads = [t for _, t in all_threads(doc)]
    assert len({t["thread"] for t in threads}) == SHORT_THREADS + 1
    assert len(threads) == SHORT_THREADS + 1
    ticks = 0
    for t in threads:
        fns = functions_of(t)
        if t["thread"] == 0:
            assert t["name"] == "main"
            assert "tick" not in fns
        else:
            assert t["name"] == "brief"
            assert fns["tick"]["calls"] == 1
            assert fns["brief"]["calls"] == 1
            ticks += fns["tick"]["calls"]
    assert ticks == SHORT_THREADS
    assert functions_of(doc["total"])["tick"]["calls"] == SHORT_THREADS
    rows = report_csv(short_exp)
    assert calls(rows, "tick") == SHORT_THREADS
    assert calls(rows, "brief") == SHORT_THREADS


def test_ten_thousand_threads_info(short_exp):
    text = info(short_exp).stdout
    assert re.search(r"\b1 process image\(s\), %d thread\(s\)" % (SHORT_THREADS + 1), text), text[:500]
    assert re.search(r"^\s*threads\s+%d\s*$" % (SHORT_THREADS + 1), text, re.M)
    lines = info_thread_lines(text)
    assert len(lines) == SHORT_THREADS + 1
    assert sorted(line["thread"] for line in lines) == list(range(SHORT_THREADS + 1))
    assert all(line["profile"] == "recorded" for line in lines)
    assert "warnings: none" in text


@pytest.mark.parametrize("mode", ["profile", "trace", "probe"])
def test_thread_names_given_outside_the_wrapper_and_wall_time_from_creation(tmp_path, mode):
    """thread_names.c: a name set before the thread's first event ("first-name"), one set by
    main through the thread's handle ("from-main"), one set with prctl ("with-prctl") were lost
    (the threads were named after their start routines); and the thread that sleeps 300 ms
    before its first event had a wall time from that event. Under --probe (plain cc, work()
    probed) the same."""
    if mode == "probe":
        exe = tmp_path / "thread_names"
        subprocess.run(["cc", "-O1", "-g", "-pthread", str(PROGRAMS / "thread_names.c"), "-o",
                        str(exe)], check=True)
        opts = ["--probe", "work"]
    else:
        exe = build("thread_names.c", tmp_path / "thread_names", "-O1", "-pthread")
        opts = ["--trace"] if mode == "trace" else []
    cp = run(tmp_path / "exp", exe, opts=opts)
    assert "4 threads" in cp.stdout
    [proc] = report_json(tmp_path / "exp")["processes"]
    threads = {t["name"]: t for t in proc["threads"]}
    assert sorted(threads) == ["first-name", "from-main", "late_start", "main", "with-prctl"]
    assert threads["late_start"]["wall_s"] >= 0.3
    # the CSV report's rows of work(), one per thread but main
    names = sorted(r["thread_name"] for r in report_csv(tmp_path / "exp")
                   if r["function"] == "work" and r["thread"] != "all")
    assert names == ["first-name", "from-main", "late_start", "with-prctl"]
