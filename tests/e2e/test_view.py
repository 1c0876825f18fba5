"""plx view in a real headless Chromium: the Life experiment (examples/mpi/life.c, 4 ranks x (main
+ 2 workers), traced under mpirun) opened by `plx view`, the page driven by playwright-core with
Debian's chromium (tests/view/drive.mjs). What the page shows is checked against plx comm and
plx report. The run counts task-clock and page-faults per thread and in two functions, shown as
the profile's counter columns and in the region details (checked against plx report --counters).
Screenshots are left in tests/e2e/artifacts/view/."""

import contextlib
import csv
import io
import json
import os
import re
import select
import shutil
import socket
import stat
import subprocess
import threading
import time

import pytest

from components import require, require_tools
from conftest import (PLX, ROOT, _fail_message, clean_env, plx, process_dirs, report_json,
                      run)
from test_mpi import MPIRUN_TIMEOUT, comm_matrix, mpirun, mpirun_cmd

pytestmark = pytest.mark.usefixtures("open_mpi")

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts" / "view"
DRIVER = ROOT / "tests" / "view" / "drive.mjs"
CHROMIUM = "/usr/bin/chromium"
STEPS, SIZE, THREADS, RANKS = 10, 64, 2, 4
COUNTERS = ["task-clock", "page-faults"]
# per-function counts: population on the main thread, update_rows on the workers
FILTER = "counters population task-clock,page-faults\ncounters update_rows page-faults\n"


@pytest.fixture(scope="module")
def life_bin(tmp_path_factory):
    """examples/mpi/life.c built with Open MPI's mpicc and compiler hooks, once per module."""
    require_tools("mpicc", "mpirun", what="Open MPI (mpicc, mpirun)")
    exe = tmp_path_factory.mktemp("view-bin") / "life"
    cp = subprocess.run(["mpicc", "-g", "-O1", "-finstrument-functions",
                         str(ROOT / "examples" / "mpi" / "life.c"), "-o", str(exe), "-pthread"],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return exe


@pytest.fixture(scope="module")
def life_trace(tmp_path_factory, life_bin):
    d = tmp_path_factory.mktemp("view")
    exe = life_bin
    exp = d / "life-exp"
    filt = d / "life.filter"
    filt.write_text(FILTER)
    mpirun(RANKS, PLX, "run", "--trace", "-o", exp, "--counters", ",".join(COUNTERS),
           "--filter", filt, "--", exe, STEPS, SIZE, THREADS)
    return exp


@pytest.fixture(scope="module")
def viewed(life_trace):
    """Runs plx view on the experiment and the driver against it: (what the page showed, URL)."""
    require_tools("node", what="Node.js")
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)", "make deps")
    require((ROOT / "viewer" / "node_modules" / "playwright-core").is_dir(),
            "playwright-core (viewer/node_modules)", "make viewer")
    server = subprocess.Popen([str(PLX), "view", str(life_trace)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, url
        shutil.rmtree(ARTIFACTS, ignore_errors=True)
        ARTIFACTS.mkdir(parents=True)
        cp = subprocess.run(["node", str(DRIVER), url, CHROMIUM, str(ARTIFACTS)],
                            capture_output=True, text=True, timeout=240, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)
        yield json.loads(cp.stdout.strip().splitlines()[-1]), url
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_tracks_are_ranks_times_threads(viewed, life_trace):
    page, _ = viewed
    threads = sum(len(p["threads"]) for p in report_json(life_trace)["processes"])
    assert threads == RANKS * (1 + THREADS)
    assert page["full"]["tracks"] == threads
    assert page["errors"] == []


def test_message_lines_of_the_whole_run_are_plx_comms(viewed, life_trace):
    page, _ = viewed
    matrix = comm_matrix(life_trace)
    assert page["full"]["lines"] == sum(n for n, _ in matrix.values()) == 2 * RANKS * STEPS


def test_clicking_a_region_shows_its_name_and_duration(viewed):
    page, _ = viewed
    c = page["clicked"]
    assert c["name"] == page["expected_click"]["name"] and c["name"]
    assert c["duration"] == page["expected_click"]["duration"] > 0
    assert c["path"].endswith(c["name"]) and "main" in c["path"]


def test_zooming_narrows_the_time_axis(viewed):
    page, _ = viewed
    full = page["full"]["t1"] - page["full"]["t0"]
    zoomed = page["zoomed"]["t1"] - page["zoomed"]["t0"]
    # three W presses: 0.7 of the window each
    assert zoomed == pytest.approx(full * 0.7 ** 3, abs=3)
    assert page["zoomed"]["tracks"] == page["full"]["tracks"]


def test_profile_top_row_is_plx_reports(viewed, life_trace):
    page, _ = viewed
    doc = report_json(life_trace)
    for shown, table in ((page["profile_total"], doc["total"]),
                         (page["profile_first"], doc["processes"][0]["threads"][0])):
        top = table["functions"][0]
        assert shown["name"] == top["function"]
        assert shown["calls"] == top["calls"]
        assert shown["exclusive"] == pytest.approx(top["exclusive_s"], abs=1e-9)


def test_matrix_cells_are_plx_comms(viewed, life_trace):
    page, _ = viewed
    matrix = comm_matrix(life_trace)
    shown = {(f, t): (n, b) for f, t, n, b in page["matrix"] if n}
    assert shown == matrix
    assert len(page["matrix"]) == RANKS * RANKS


def test_a_request_without_the_token_is_refused(viewed):
    import urllib.error
    import urllib.request

    page, url = viewed
    assert page["no_token"] == 403
    base = url.split("?")[0]
    for path in ("", "api/meta", "viewer.js", "api/window?t0=0&t1=10", "etc/passwd"):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + path, timeout=10)
        assert e.value.code == 403, path
    with urllib.request.urlopen(url, timeout=10) as ok:
        assert ok.status == 200


def test_screenshots_are_saved(viewed):
    for name in ("timeline.png", "timeline-critical-path.png", "timeline-zoomed.png",
                 "profiles.png", "communication.png", "displays.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000, name


def test_critical_path_is_drawn_on_demand(viewed):
    page, _ = viewed
    # the button draws the global path's segments (compute, transfers, hand-offs) on the tracks
    assert page["critical_segments"] > 0


def counter_csv(exp):
    """plx report --counters --format csv: {(pid, thread, function): {event: inclusive}}, the
    rows of one function summed over its sets."""
    text = plx("report", exp, "--counters", "--format", "csv").stdout
    out = {}
    for r in csv.DictReader(io.StringIO(text)):
        key = (int(r["process"]), int(r["thread"]), r["function"])
        row = out.setdefault(key, {})
        for e in COUNTERS:
            if r[e] != "":
                row[e] = row.get(e, 0) + int(r[e])
    return out


def test_profile_counter_columns_are_plx_reports(viewed, life_trace):
    page, _ = viewed
    shown = page["profile_counters"]
    assert shown["heads"] == ["function", "calls", "exclusive", "inclusive", "cpu", *COUNTERS]
    first = report_json(life_trace)["processes"][0]
    assert shown["label"] == f"rank {first['rank']} thread 0"
    want = counter_csv(life_trace)
    pid = int(first["pid"])
    assert shown["thread"] == want[(pid, 0, "(thread)")]
    assert shown["thread"]["task-clock"] > 0
    functions = {f: v for (p, t, f), v in want.items() if (p, t) == (pid, 0) and f != "(thread)"}
    assert set(functions) == {"population"}
    assert shown["functions"] == functions
    # the workers' update_rows is counted too (in their own tables)
    assert sum(1 for (_, _, f) in want if f == "update_rows") == RANKS * THREADS


def test_region_details_show_the_threads_counters(viewed, life_trace):
    page, _ = viewed
    c = page["clicked"]
    track = c["track"]
    want = counter_csv(life_trace)
    totals = want[(track["pid"], track["thread"], "(thread)")]
    function = want.get((track["pid"], track["thread"], c["name"]))
    assert c["counters"] == [[e, function[e] if function else None, totals[e]] for e in COUNTERS]


def hierarchy_tree(node):
    """plx hierarchy's tree as the viewer names it: a thread (a leaf) by its NAME#T alias."""
    return [{"name": n["name"] if n["children"] or not n.get("aliases") else
             next(a for a in n["aliases"] if "#" in a), "children": hierarchy_tree(n)}
            for n in node["children"]]


def test_logical_and_physical_views_group_as_plx_hierarchy_says(viewed, life_trace):
    page, _ = viewed
    doc = json.loads(plx("hierarchy", life_trace, "--format", "json").stdout)
    machine = hierarchy_tree(doc["machine"])
    # physical: host -> process -> thread, exactly plx hierarchy's Machine tree
    assert page["physical"]["mode"] == "physical" and page["physical"]["url_view"] is None
    assert page["physical"]["tree"] == machine
    assert len(machine[0]["children"]) == RANKS
    # logical: the application (the executable, outside a session) -> ranks -> their threads
    processes = [p for host in machine for p in host["children"]]
    assert [p["name"] for p in processes] == [str(r) for r in range(RANKS)]
    logical = page["logical"]
    assert logical["mode"] == "logical" and logical["url_view"] == "logical"
    assert logical["tree"] == [{"name": "life", "children": processes}]
    assert logical["tracks"] == page["physical"]["tracks"] == RANKS * (1 + THREADS)
    assert page["physical_again"]["tree"] == machine
    assert page["physical_again"]["url_view"] is None
    from_url = page["logical_from_url"]
    assert from_url["mode"] == from_url["selected"] == "logical"
    assert from_url["tree"] == logical["tree"]


def first_line_of_plx_view(exp):
    """What plx view says about its open (its first line on standard error)."""
    server = subprocess.Popen([str(PLX), "view", str(exp)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    return err.splitlines()


def test_a_traced_run_leaves_no_index_and_plx_view_decodes_each_thread(life_trace):
    # each rank's plx run used to index its process once its program had ended (seconds per
    # run, 1.8 times the trace's size on disk): the run now leaves the trace alone
    assert len(process_dirs(life_trace)) == RANKS
    assert not (life_trace / ".plx-view").exists()
    # plx view decodes each thread (RANKS ranks of a main thread and THREADS workers) and
    # writes nothing
    lines = first_line_of_plx_view(life_trace)
    tracks = RANKS * (1 + THREADS)
    assert f"events on {tracks} tracks opened in" in lines[-1], lines
    assert f"(index built from {tracks} threads of {RANKS} processes)" in lines[-1], lines
    assert not (life_trace / ".plx-view").exists()


def test_plx_run_around_mpirun_leaves_no_index(tmp_path, life_bin):
    # plx run -- mpirun: the launcher (measured, without tracks) and its 2 ranks
    exe = life_bin
    exp = tmp_path / "exp"
    plx("run", "--trace", "-o", exp, "--", *mpirun_cmd(2, exe, 2, 32, 1))
    assert not (exp / ".plx-view").exists()
    lines = first_line_of_plx_view(exp)
    assert "(index built from 4 threads of 2 processes)" in lines[-1], lines


# --- the server against other local users, other sites and hostile clients ---------------------
# A traced fib(20) (one process, one thread, 21,891 calls of fib) served by plx view; raw HTTP
# over sockets so that every header is the test's own.

FIB_CALLS = 21891
ONE_TRACK = [(0, "main#0")]


@pytest.fixture(scope="module")
def fib_trace(tmp_path_factory, fib_bin):
    exp = tmp_path_factory.mktemp("view-fib") / "fib-exp"
    run(exp, fib_bin, opts=("--trace",))
    return exp


def readline_within(proc, seconds):
    """The first line proc writes to standard output; fails if none comes within `seconds`."""
    line = []
    t = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(seconds)
    if not line:
        proc.kill()
        pytest.fail(f"plx view printed no URL within {seconds} s: {proc.stderr.read()}")
    return line[0].strip()


@contextlib.contextmanager
def serving(exp, *args, env=None):
    """plx view EXP ARGS running: yields (process, port, token); on leaving, asserts it is still
    alive, then stops it."""
    proc = subprocess.Popen([str(PLX), "view", str(exp), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env(env))
    try:
        url = readline_within(proc, 120)
        m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})", url)
        assert m, url
        yield proc, int(m.group(1)), m.group(2)
        assert proc.poll() is None, f"plx view ended ({proc.returncode}): {proc.stderr.read()}"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def http(port, target, headers=None, timeout=30):
    """GET target with exactly `headers` (default: Host 127.0.0.1:PORT), the connection closed
    after: (status, {lower-case header: value}, body bytes)."""
    if headers is None:
        headers = {"Host": f"127.0.0.1:{port}"}
    head = f"GET {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall((head + "Connection: close\r\n\r\n").encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


def tracks_of(body):
    """/api/meta's tracks as (thread index, thread name)."""
    return [(t["thread"], t["thread_name"]) for t in json.loads(body)["tracks"]]


def test_plx_view_open_gives_the_browser_no_token_but_a_one_time_address(tmp_path, fib_trace):
    argv_file = tmp_path / "argv"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {argv_file}.tmp\n"
                       f"mv {argv_file}.tmp {argv_file}\n")
    browser.chmod(0o755)
    with serving(fib_trace, "--open", env={"BROWSER": browser}) as (_, port, token):
        deadline = time.monotonic() + 60
        while not argv_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        argv = argv_file.read_text().splitlines()
        # the browser's command line, readable by every local user, has no token
        assert len(argv) == 1, argv
        assert token not in argv[0]
        m = re.fullmatch(rf"http://127\.0\.0\.1:{port}/open\?once=([0-9a-f]{{32}})", argv[0])
        assert m, argv
        once = argv[0].split(str(port), 1)[1]
        # the first use sets the token as a cookie and sends the browser to the page
        status, fields, _ = http(port, once)
        assert status == 303
        assert fields["location"] == "/"
        assert fields["set-cookie"] == \
            f"plx_view_{port}={token}; HttpOnly; SameSite=Strict; Path=/"
        # the second is refused
        assert http(port, once)[0] == 403
        # the cookie alone opens the page (which then holds no token) and the API
        cookie = {"Host": f"127.0.0.1:{port}", "Cookie": f"plx_view_{port}={token}"}
        status, _, page = http(port, "/", cookie)
        assert status == 200 and b"<script" in page and token.encode() not in page
        status, _, meta = http(port, "/api/meta", cookie)
        assert status == 200 and tracks_of(meta) == ONE_TRACK
        wrong = {"Host": f"127.0.0.1:{port}", "Cookie": f"plx_view_{port}={'0' * 32}"}
        assert http(port, "/api/meta", wrong)[0] == 403
        assert http(port, "/api/meta")[0] == 403


def test_plx_view_open_shows_the_page_in_chromium_through_the_cookie(tmp_path, fib_trace):
    # a real browser: the one-time address, its 303 and SameSite=Strict cookie, then the page
    # and its API requests with the cookie alone (the page's URL has no token)
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)", "make deps")
    dom = tmp_path / "dom.html"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\n{CHROMIUM} --headless --no-sandbox --disable-gpu "
                       f"--virtual-time-budget=20000 --dump-dom \"$1\" > {dom}.tmp 2>/dev/null "
                       f"&& mv {dom}.tmp {dom}\n")
    browser.chmod(0o755)
    with serving(fib_trace, "--open", env={"BROWSER": browser}) as _:
        deadline = time.monotonic() + 120
        while not dom.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        page = dom.read_text()
    # the timeline drew the one track from /api/meta and /api/window, its loading done
    canvas = re.search(r'<canvas id="timeline"[^>]*>', page).group(0)
    assert 'data-tracks="1"' in canvas and 'data-loading="0"' in canvas, canvas
    assert '<script src="viewer.js?token="></script>' in page


def test_a_foreign_host_or_origin_is_refused_even_with_the_token(fib_trace):
    with serving(fib_trace) as (_, port, token):
        api = f"/api/meta?token={token}"
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            status, _, body = http(port, api, {"Host": host})
            assert (status, tracks_of(body)) == (200, ONE_TRACK), host
            status, _, _ = http(port, api, {"Host": host, "Origin": f"http://{host}"})
            assert status == 200, host
        # DNS rebinding: a name the attacker's DNS pointed at 127.0.0.1, or another port
        for host in (f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", f"127.0.0.1:{port + 1}",
                     "127.0.0.1"):
            status, _, body = http(port, api, {"Host": host})
            assert status == 403, host
            assert f"Host {host!r}".replace("'", '"').encode() in body, body
        assert http(port, api, {})[0] == 403
        # a request from another site's page (CSRF)
        for origin in ("http://evil.example", "null", f"http://localhost:{port}"):
            status, _, body = http(port, api, {"Host": f"127.0.0.1:{port}", "Origin": origin})
            assert status == 403, origin
            assert b"another site" in body


def test_truncating_the_trace_while_plx_view_serves_changes_no_answer(fib_trace):
    # the index parts used to be mapped: a part cut while served killed plx view (SIGBUS); the
    # index is now built in memory from the trace, which is read once at the open
    (trace,) = (p / "trace.plx" for p in process_dirs(fib_trace))
    saved = trace.read_bytes()
    try:
        with serving(fib_trace) as (proc, port, token):
            windows = [f"/api/window?token={token}&t0=0&t1={t1}&width=800" for t1 in
                       (10**12, 10**6, 10**4)]
            before = [http(port, w) for w in windows]
            assert [s for s, _, _ in before] == [200, 200, 200]
            whole = json.loads(before[0][2])
            # main, every call of fib and the runtime's 2 plx_symbols, drawn or counted in a
            # column
            assert sum(sum(c[1] for c in depth["columns"]) + len(depth["full"])
                       for depth in whole["tracks"][0]) == 1 + FIB_CALLS + 2
            os.truncate(trace, 0)
            after = [http(port, w) for w in windows]
            assert [(s, b) for s, _, b in after] == [(s, b) for s, _, b in before]
            assert proc.poll() is None
    finally:
        trace.write_bytes(saved)


def proc_status(pid):
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])


def send_until_answered(s, chunk, limit=64 << 20):
    """Sends `chunk` again and again until the server answers (or closes): the bytes sent."""
    sent = 0
    with contextlib.suppress(OSError):
        while sent < limit and not select.select([s], [], [], 0)[0]:
            s.sendall(chunk)
            sent += len(chunk)
    return sent


def closed_by_server(s):
    """Does the server close s (EOF, after an answer or not) within 30 s?"""
    s.settimeout(30)
    try:
        while s.recv(4096):
            pass
        return True
    except OSError:
        return False


def settled(pid, ok):
    """/proc/PID/status's (Threads, VmRSS KiB) once ok(threads) holds, or after 30 s."""
    deadline = time.monotonic() + 30
    while not ok(proc_status(pid)[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return proc_status(pid)


def test_idle_connections_and_an_endless_header_leave_plx_view_answering(fib_trace):
    with serving(fib_trace) as (proc, port, token):
        api = f"/api/meta?token={token}"
        assert http(port, api)[0] == 200
        threads0, rss0 = settled(proc.pid, lambda t: True)
        fds0 = len(os.listdir(f"/proc/{proc.pid}/fd"))
        # one header line that never ends: refused with 431 after 8 KiB, the connection closed
        head = f"GET {api} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        endless = socket.create_connection(("127.0.0.1", port), timeout=30)
        endless.sendall((head + "X-Endless: ").encode())
        assert send_until_answered(endless, b"a" * 4096) < 64 << 20
        assert endless.recv(100).startswith(b"HTTP/1.1 431 ")
        assert closed_by_server(endless)
        endless.close()
        # header lines without end: 431 after 64 KiB in all
        many = socket.create_connection(("127.0.0.1", port), timeout=30)
        many.sendall(head.encode())
        assert send_until_answered(many, b"X-More: 0123456789abcdef\r\n" * 100) < 64 << 20
        assert many.recv(100).startswith(b"HTTP/1.1 431 ")
        many.close()
        # 500 connections that send nothing
        idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(500)]
        # a request still answers
        status, _, body = http(port, api)
        assert (status, tracks_of(body)) == (200, ONE_TRACK)
        # at most 64 connections held, a thread and two descriptors each: for each new one the
        # one that has waited longest for its request was closed
        threads, rss = settled(proc.pid, lambda t: t <= threads0 + 64)
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert threads <= threads0 + 64, (threads0, threads)
        assert fds <= fds0 + 2 * 64, (fds0, fds)
        assert rss - rss0 < 64 * 1024, (rss0, rss)
        assert sum(closed_by_server(s) for s in idle[:400]) == 400
        for s in idle:
            s.close()
        assert http(port, api)[0] == 200


def test_a_fifo_under_plx_view_does_not_hang_plx_view(tmp_path, fib_bin):
    exp = tmp_path / "exp"
    run(exp, fib_bin, opts=("--trace",))
    # where a merge pass's index would be read from
    index = exp / ".plx-view" / "index.bin"
    index.parent.mkdir()
    os.mkfifo(index)
    with serving(exp) as (proc, port, token):
        status, _, body = http(port, f"/api/meta?token={token}")
        assert (status, tracks_of(body)) == (200, ONE_TRACK)
    assert stat.S_ISFIFO(index.lstat().st_mode)


