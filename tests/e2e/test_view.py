"""plx view in a real headless Chromium: the Life experiment (examples/mpi/life.c, 4 ranks x (main
+ 2 workers), traced under mpirun) opened by `plx view`, the page driven by playwright-core with
Debian's chromium (tests/view/drive.mjs). What the page shows is checked against plx comm and
plx report. The run counts task-clock and page-faults per thread and in two functions, shown as
the profile's counter columns and in the region details (checked against plx report --counters).
Screenshots are left in tests/e2e/artifacts/view/."""

import csv
import io
import json
import os
import shutil
import subprocess

import pytest

from components import require, require_tools
from conftest import PLX, ROOT, _fail_message, clean_env, plx, process_dirs, report_json
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
    return [{"name": n["name"], "children": hierarchy_tree(n)} for n in node["children"]]


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
    assert [p["name"] for p in processes] == [f"rank {r}" for r in range(RANKS)]
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


def test_each_ranks_plx_run_indexed_its_own_process(life_trace):
    # one part per rank, written by that rank's plx run when its program had ended
    processes = [p.name for p in process_dirs(life_trace)]
    parts = sorted(p.name for p in (life_trace / ".plx-view" / "parts").iterdir())
    assert len(processes) == RANKS
    assert parts == [f"{p}.0.bin" for p in processes]
    # plx view reads them: no merge pass, no part built, no index file
    lines = first_line_of_plx_view(life_trace)
    assert f"index combined from {RANKS} process parts read" in lines[-1], lines
    assert not (life_trace / ".plx-view" / "index.bin").exists()


def test_a_run_without_indexing_is_indexed_by_plx_view(tmp_path, life_bin):
    exe = life_bin
    exp = tmp_path / "exp"
    cp = subprocess.run(mpirun_cmd(2, PLX, "run", "--trace", "-o", exp, "--", exe, 2, 32, 1),
                        capture_output=True, text=True, timeout=MPIRUN_TIMEOUT,
                        env=dict(clean_env(), PLX_VIEW_INDEX="0"))
    assert cp.returncode == 0, _fail_message(cp)
    assert len(process_dirs(exp)) == 2
    assert not (exp / ".plx-view").exists()
    lines = first_line_of_plx_view(exp)
    assert "index combined from 2 process parts built" in lines[-1], lines
    assert len(list((exp / ".plx-view" / "parts").iterdir())) == 2
    lines = first_line_of_plx_view(exp)
    assert "index combined from 2 process parts read" in lines[-1], lines


def test_plx_run_around_mpirun_indexes_the_ranks_it_launched(tmp_path, life_bin):
    # plx run -- mpirun: the ranks descend from the launcher plx run started (by parent pid)
    exe = life_bin
    exp = tmp_path / "exp"
    plx("run", "--trace", "-o", exp, "--", *mpirun_cmd(2, exe, 2, 32, 1))
    # one part per rank (the launcher, measured but without tracks, has none)
    parts = list((exp / ".plx-view" / "parts").iterdir())
    assert len(parts) == 2, parts
    lines = first_line_of_plx_view(exp)
    assert "index combined from 2 process parts read" in lines[-1], lines
