"""A program built without instrumentation (plain cc, no plx-cc) measured by LD_PRELOAD alone:
its threads, its pthread synchronization objects, joins and TCP traffic (docs/threads.md), and its
blocking waits (docs/sockets.md). programs/plain_threads.c: 4 threads x 1000 acquisitions of one
mutex, joined; then (unless given `locks`) a server thread reading 10 writes of 100 bytes over
127.0.0.1. programs/sleep_wait.c: 5 waits of 0.1 s (usleep, nanosleep, poll, select, epoll_wait)
between two computations."""

import csv
import io
import json
import subprocess

import pytest

from conftest import (PROGRAMS, _fail_message, clean_env, info, info_thread_lines, plx,
                      report_csv, run)
from components import require_tools

THREADS, LOCKS, WRITES, BYTES = 4, 1000, 10, 100


def plain_cc(tmp_path_factory, source):
    """programs/SOURCE built by plain cc (no instrumentation)."""
    require_tools("cc", what="a C compiler (cc)")
    out = tmp_path_factory.mktemp("plain") / source.removesuffix(".c")
    cp = subprocess.run(["cc", "-O1", "-pthread", str(PROGRAMS / source), "-o", str(out)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return out


@pytest.fixture(scope="module")
def plain_bin(tmp_path_factory):
    return plain_cc(tmp_path_factory, "plain_threads.c")


def test_threads_and_locks_of_an_uninstrumented_program(plain_bin, tmp_path):
    out = tmp_path / "locks"
    cp = run(out, plain_bin, "locks")
    assert cp.stdout == "counter %d\n" % (THREADS * LOCKS)  # the program's own output, unchanged
    text = info(out).stdout
    assert "not measured" not in text, text
    rows = report_csv(out, "--sync")
    mutex = [r for r in rows if r["kind"] == "mutex"]
    per_thread = sorted((r["thread_name"], int(r["acquisitions"]), int(r["releases"]))
                        for r in mutex if r["thread"] != "all")
    assert per_thread == [("worker", LOCKS, LOCKS)] * THREADS
    totals = [r for r in mutex if r["thread"] == "all"]
    assert [(int(r["acquisitions"]), int(r["releases"])) for r in totals] == [(THREADS * LOCKS,
                                                                               THREADS * LOCKS)]
    # the joins: main acquires each worker's thread object once, waiting for it
    joins = [r for r in rows if r["kind"] == "thread" and r["thread"] != "all"]
    assert {r["thread_name"] for r in joins} == {"main"}
    assert sum(int(r["acquisitions"]) for r in joins) == THREADS
    # the threads, named after their start routine
    names = sorted(r["thread_name"] for r in mutex if r["thread"] != "all")
    assert names == ["worker"] * THREADS
    assert "%d thread(s)" % (THREADS + 1) in text.splitlines()[1], text


def test_socket_traffic_of_an_uninstrumented_program(plain_bin, tmp_path):
    out = tmp_path / "socket"
    cp = run(out, plain_bin, opts=("--trace",))
    assert cp.stdout == "counter %d received %d\n" % (THREADS * LOCKS, WRITES * BYTES)
    rows = {(r["thread_name"], r["function"]): int(r["calls"])
            for r in report_csv(out) if r["process"] != "all"}
    # + end of file; the server's accept is a region too (its wait for the client), and so is
    # the client's connect, though no measured call is open around it (only a launcher's
    # connects are left out: core/launchers.c)
    assert rows == {("main", "write"): WRITES, ("server", "read"): WRITES + 1,
                    ("server", "accept"): 1, ("main", "connect"): 1}
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    sent = [int(w[6:]) for line in text.splitlines() if " ssend " in line
            for w in line.split() if w.startswith("bytes=")]
    received = [int(w[6:]) for line in text.splitlines() if " srecv " in line
                for w in line.split() if w.startswith("bytes=")]
    assert sum(sent) == WRITES * BYTES and sum(received) == WRITES * BYTES
    # each write's bytes and the connect's event of 0 bytes; the accept's 0 bytes, its partner
    assert len(sent) == WRITES + 1 and sent.count(0) == 1
    assert received.count(0) == 1
    opens = sorted(f[3] for f in map(str.split, text.splitlines())
                   if len(f) > 6 and f[2] in ("ssend", "srecv") and f[6] == "bytes=0")
    assert opens == ["accept", "connect"], opens


WAIT_S = 0.1
WAIT_CALLS = ("usleep", "nanosleep", "poll", "select", "epoll_wait")


def test_waits_of_an_uninstrumented_program_are_waiting(tmp_path_factory, tmp_path):
    """An uninstrumented program's sleeps and polls, made outside any measured call, are wait
    regions at the top of its thread: the report counts each once with its 0.1 s, and the
    critical path has each as `Wait: NAME`, none of the 0.5 s as CPU. Before, a wait was
    recorded only inside a measured call: this program's process was "not measured", and with
    --sample its 0.5 s were nobody's."""
    exe = plain_cc(tmp_path_factory, "sleep_wait.c")
    out = tmp_path / "profile"
    cp = run(out, exe)
    assert cp.stdout == "waited 5 times, 0 events\n"  # the program's own output, unchanged
    assert "not measured" not in info(out).stdout
    rows = [r for r in report_csv(out) if r["process"] != "all"]
    assert {(r["thread_name"], r["function"]): int(r["calls"]) for r in rows} == {
        ("main", name): 1 for name in WAIT_CALLS}
    for r in rows:
        assert float(r["inclusive_s"]) >= WAIT_S, r
    # traced and sampled: the samples find the computation, the trace the waits
    out = tmp_path / "trace"
    run(out, exe, opts=("--trace", "--sample"))
    threads = info_thread_lines(info(out).stdout)
    assert [(t["name"], t["trace_events"]) for t in threads] == [("main", 2 * len(WAIT_CALLS))], threads
    doc = json.loads(plx("critical-path", out, "--format", "json").stdout)
    waits = {i["name"]: i["time_s"] for i in doc["items"] if i["kind"] == "wait"}
    assert sorted(waits) == sorted("Wait: " + name for name in WAIT_CALLS), doc["items"]
    assert min(waits.values()) >= WAIT_S, waits
    # the path runs from the first wait's entry to the last one's exit: between them the
    # program only returns from one call and makes the next
    cpu = sum(i["time_s"] for i in doc["items"] if i["kind"] == "cpu")
    assert cpu < 0.01, doc["items"]
    assert doc["total_length_s"] >= len(WAIT_CALLS) * WAIT_S
    work = [r for r in report_csv(out) if r["process"] == "all" and r["function"] == "work"]
    assert len(work) == 1 and int(work[0]["samples"]) > 0, work


def test_waits_lists_the_sleeps_and_polls_with_no_partner(tmp_path_factory, tmp_path):
    """plx waits listed nothing for an uninstrumented program's 5 waits of 0.1 s (usleep,
    nanosleep, poll, select, epoll_wait), though the critical path counts them as waiting: each
    is a `sleep` or an `io_wait` at its call path, with its duration, in CSV, JSON and the
    metric tree, and with --causes its cause is `none` (no location made it wait)."""
    exe = plain_cc(tmp_path_factory, "sleep_wait.c")
    out = tmp_path / "trace"
    run(out, exe, opts=("--trace",))
    rows = list(csv.DictReader(io.StringIO(plx("waits", out, "--format", "csv").stdout)))
    (location,) = {r["location"] for r in rows}
    assert [(r["pattern"], r["callpath"]) for r in rows] == [
        ("sleep", "usleep"), ("sleep", "nanosleep"), ("io_wait", "poll"), ("io_wait", "select"),
        ("io_wait", "epoll_wait")], rows
    for r in rows:
        assert WAIT_S <= float(r["wait_s"]) < WAIT_S + 0.1, r
    doc = json.loads(plx("waits", out, "--format", "json", "--causes").stdout)
    assert [(r["pattern"], r["callpath"], r["count"]) for r in doc["rows"]] == [
        (r["pattern"], r["callpath"], 1) for r in rows]
    sleep = sum(float(r["wait_s"]) for r in rows if r["pattern"] == "sleep")
    io_wait = sum(float(r["wait_s"]) for r in rows if r["pattern"] == "io_wait")
    assert abs(doc["totals"]["sleep"] - sleep) < 2e-6 and abs(doc["totals"]["io_wait"] - io_wait) < 4e-6
    assert [(c["pattern"], c["waiting_location"], c["cause_location"], c["kind"])
            for c in doc["causes"]] == [(r["pattern"], location, None, "none") for r in rows]
    causes = list(csv.DictReader(io.StringIO(
        plx("waits", out, "--format", "csv", "--causes").stdout)))
    assert [(c["pattern"], c["cause_location"], c["cause_callpath"], c["delay_s"], c["kind"])
            for c in causes] == [(r["pattern"], "", "", r["wait_s"], "none") for r in rows]
    text = plx("waits", out, "--causes").stdout
    assert "\n  system " in text and "\n    no partner " in text, text
    assert "\n      sleep " in text and "\n      io_wait " in text, text
    assert "(a wait with no partner: no location caused it)" in text, text
    assert "unknown" not in text, text
