"""plx view's timeline in a real headless Chromium (tests/view/timeline.mjs, playwright-core with
Debian's chromium, real clicks and keys): the overlays' level of detail, the toggles and state
kept in the URL, the overview, collapse and the track filter, the keyboard help, tooltips,
search (instances against plx report's calls), double-click zoom, the selection's flame graph
(against the interval's profile), the measurement lane and a communication matrix cell, on the
Life example (4 ranks x 3 threads under mpirun) and on 400 threads (bench/threads.c).
Screenshots at three zoom levels are left in tests/e2e/artifacts/view-timeline/."""

import json
import math
import os
import re
import shutil
import subprocess

import pytest

from components import require, require_tools
from conftest import PLX, ROOT, _fail_message, clean_env, plx, report_json
from test_mpi import comm_matrix
from test_view import CHROMIUM, RANKS, THREADS, life_bin, life_trace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.usefixtures("open_mpi")

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts" / "view-timeline"
DRIVER = ROOT / "tests" / "view" / "timeline.mjs"
MANY = 400


@pytest.fixture(scope="module")
def many_trace(tmp_path_factory):
    """bench/threads.c on 400 threads (each joined by main: 400 hand-offs), traced."""
    require_tools("clang", what="clang")
    d = tmp_path_factory.mktemp("view-many")
    exe = d / "threads"
    cp = subprocess.run(["clang", "-g", "-O1", "-finstrument-functions", "-pthread",
                         str(ROOT / "bench" / "threads.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = d / "many-exp"
    plx("run", "--trace", "-o", exp, "--", exe, MANY, 300)
    return exp


def drive(exp, mode):
    require_tools("node", what="Node.js")
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)", "make deps")
    require((ROOT / "viewer" / "node_modules" / "playwright-core").is_dir(),
            "playwright-core (viewer/node_modules)", "make viewer")
    server = subprocess.Popen([str(PLX), "view", str(exp)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, url
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cp = subprocess.run(["node", str(DRIVER), url, CHROMIUM, str(ARTIFACTS), mode],
                            capture_output=True, text=True, timeout=300, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)
        return json.loads(cp.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def life(life_trace):  # noqa: F811
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    return drive(life_trace, "life")


@pytest.fixture(scope="module")
def many(many_trace):
    return drive(many_trace, "many")


def calls(exp):
    return {f["function"]: f["calls"] for f in report_json(exp)["total"]["functions"]}


def n(page, key):
    return int(page[key])


def cells(lines, limit):
    """How many bundles the viewer's level of detail makes of the lines (canvas px of their
    ends): those of the finest cells, [x px, y px (0: each row apart)], that leave at most
    `limit` (viewer/src/lod.ts)."""
    for cx, cy in ((6, 0), (24, 32), (96, 128), (384, 512), (1e9, 1e9)):
        def q(y):
            return math.floor(y / cy) if cy else y
        n = len({(math.floor(x0 / cx), q(y0), math.floor(x1 / cx), q(y1))
                 for x0, y0, x1, y1 in lines})
        if n <= limit:
            return n
    raise AssertionError("no level of detail leaves %d bundles" % limit)


def check_levels(levels, overlay):
    """At each zoom level the bundles drawn add up to what the server says the window holds."""
    assert [lv["name"] for lv in levels] == ["whole", "mid", "deep"]
    for lv in levels:
        page, api, b = lv["page"], lv["api"], lv["bundles"]
        assert n(page, "lines") == api["messages"]["total"]
        assert n(page, "messagesDrawn") == n(page, "lines") == sum(x["count"] for x in b["messages"])
        assert n(page, "messageBundles") == len(b["messages"]) <= max(n(page, "lines"), 0)
        assert n(page, "handoffs") == api["handoffs_total"] == len(api["handoffs"])
        assert n(page, "handoffsDrawn") == api["handoffs_total"] == sum(x["count"] for x in b["handoffs"])
        # dense: at most one bundle per 8 pixels of the plot
        assert n(page, "bundleLimit") == (page["width"] - 170) // 8
        assert len(b[overlay]) <= n(page, "bundleLimit")
        # the lines whose ends share a cell (6 px wide, each row apart, or coarser until at most
        # the limit are left) drawn as one bundle with their count
        for kind in ("messages", "handoffs"):
            lines = b["lines"][kind]
            want = cells(lines, n(page, "bundleLimit"))
            assert len(b[kind]) == want and sum(x["count"] for x in b[kind]) == len(lines), (
                lv["name"], kind, b[kind])
            assert (max((x["count"] for x in b[kind]), default=0) > 1) == (want < len(lines)), (
                lv["name"], kind)
        # the density strip counts the sends inside the window
        t0, t1 = int(page["t0"]), int(page["t1"])
        sends = sum(1 for line in api["messages"]["lines"] if t0 <= line[0] < t1)
        assert n(page, "density") == sends + sum(x[3] for x in api["messages"]["bundles"])


def test_life_overlays_bundle_the_lines_sharing_a_cell_and_add_up_at_every_zoom(life, life_trace):
    check_levels(life["levels"], "messages")
    whole, mid, deep = life["levels"]
    total = sum(m for m, _ in comm_matrix(life_trace).values())
    assert n(whole["page"], "lines") == total == 2 * RANKS * 10
    assert n(whole["page"], "density") == total
    # the whole run's messages and hand-offs are bundled (check_levels: exactly as their ends
    # share cells, which depends on how close in time the run's steps came) and zoomed in
    # the window holds fewer
    assert n(whole["page"], "messagesDrawn") == total
    assert n(deep["page"], "lines") < total
    assert life["errors"] == []


def test_many_threads_handoffs_are_bundled(many, many_trace):
    check_levels(many["levels"], "handoffs")
    whole = many["levels"][0]["page"]
    assert many["meta_tracks"] == n(whole, "tracks") == MANY + 1
    # each thread's join by main is a hand-off: 400 arcs in at most one bundle per 8 pixels
    assert n(whole, "handoffs") == n(whole, "handoffsDrawn") == MANY
    assert n(whole, "handoffBundles") <= n(whole, "bundleLimit") < MANY
    assert many["errors"] == []


def test_a_bundles_tooltip_gives_its_count(life):
    tip = life["bundle_tip"]
    assert tip["shown"] == "block", tip
    assert tip["kind"] in ("messages", "hand-offs"), tip
    assert int(tip["count"]) == tip["expected"] >= 1, tip


def test_critical_path_is_bands_per_track_and_bundled_transfers(life):
    page, segs = life["crit"]["page"], life["crit"]["api"]["segments"]
    on_tracks = [s for s in segs if s[1] is not None]
    transfers = [s for s in on_tracks if s[0] in ("msg", "sync", "fork") and s[2] is not None]
    stretches = [s for s in on_tracks if s not in transfers]
    assert n(page, "critical") == len(segs)
    assert n(page, "critInWindow") == len(on_tracks)
    assert n(page, "critDrawn") == len(transfers) > 0
    assert 0 < n(page, "critTransfers") <= len(transfers)
    assert 0 < n(page, "critBands") <= len(stretches)
    assert "crit=1" in page["url"]


def test_overlays_switched_off_stay_off_in_the_url(life):
    for page in (life["off"], life["off_reloaded"]):
        assert n(page, "messageBundles") == n(page, "handoffBundles") == 0
        assert n(page, "lines") == 2 * RANKS * 10, "still counted"
        assert "msg=0" in page["url"] and "arcs=0" in page["url"]
        assert page["overlays"] == "waits"
    assert life["off_reloaded"]["messages_on"] is False
    assert life["off_reloaded"]["handoffs_on"] is False


def test_the_overview_shows_the_window_and_a_click_moves_it(life):
    span = life["span"]
    z = life["overview_zoomed"]
    w = z["ov_width"]
    assert z["ov_x0"] == pytest.approx(int(z["t0"]) / span * w, abs=0.1)
    assert z["ov_x1"] == pytest.approx(int(z["t1"]) / span * w, abs=0.1)
    c = life["overview_clicked"]
    # centred where the strip was clicked (a quarter of the way), the window's width kept
    assert (int(c["t0"]) + int(c["t1"])) / 2 == pytest.approx(span / 4, abs=span / w)
    assert int(c["t1"]) - int(c["t0"]) == pytest.approx(int(z["t1"]) - int(z["t0"]), abs=2)


def test_collapsing_a_process_and_the_host(life):
    target = life["collapsed"]["target"]
    assert target["key"].startswith("p:") and target["tracks"] == 1 + THREADS
    for page in (life["collapsed"]["page"], life["collapsed_reloaded"]):
        assert n(page, "tracks") == RANKS * (1 + THREADS) - (1 + THREADS)
        assert "collapse=" + target["key"].replace(":", "%3A") in page["url"]
    # its messages still drawn, to the header
    assert n(life["collapsed"]["page"], "messagesDrawn") == 2 * RANKS * 10
    assert n(life["expanded"], "tracks") == RANKS * (1 + THREADS)
    host = life["host_collapsed"]["page"]
    assert n(host, "tracks") == 0
    assert n(host, "messagesDrawn") == 2 * RANKS * 10


def test_collapsing_a_thread_group_of_400(many):
    target = many["collapsed"]["target"]
    assert target["key"].startswith("g:") and target["tracks"] == MANY
    assert target["text"] == f"work × {MANY}"
    page = many["collapsed"]["page"]
    assert n(page, "tracks") == 1
    assert n(page, "handoffsDrawn") == MANY
    assert n(page, "handoffBundles") <= n(page, "bundleLimit")
    assert n(many["collapsed_reloaded"], "tracks") == 1


def test_the_track_filter(life, many):
    f = life["filter"]
    assert n(f["page"], "tracks") == RANKS * THREADS
    assert "filter=life_worker" in f["page"]["url"]
    assert [len(p["children"]) for h in f["tree"] for p in h["children"]] == [THREADS] * RANKS
    f = many["filter"]
    want = [t for t in many["thread_names"] if "work#1" in t]
    assert len(want) == 1 + 10 + 100  # work#1, work#10..19, work#100..199
    assert n(f["page"], "tracks") == len(want)


def test_keyboard_help(life):
    assert life["help"] == {"shown": "1", "visible": True, "rows": 11}
    assert life["help_closed"] is False


def test_a_regions_tooltip_and_double_click_zoom(life):
    t = life["tooltip"]
    r = t["region"]
    assert t["shown"] == "block" and t["kind"] == "region"
    assert t["ns"] == r["end"] - r["start"] > 0
    assert t["text"].startswith(t["name"] + " (")
    pad = max((r["end"] - r["start"]) * 0.05, 5)
    assert int(life["dblclick"]["t0"]) == pytest.approx(r["start"] - pad, abs=1)
    assert int(life["dblclick"]["t1"]) == pytest.approx(r["end"] + pad, abs=1)


def check_search(found, want):
    for s in found:
        assert s["found"] == s["api"]["count"] == want[s["name"]] > 0, s["name"]
        assert s["label"] == f"1 / {s['found']}" and s["current"] == 0
        assert s["next"]["label"] == f"2 / {s['found']}" and s["next"]["current"] == 1
        second = sorted(s["api"]["instances"], key=lambda i: (i[3], i[0]))[1]
        page = s["next"]["page"]
        assert int(page["t0"]) <= second[3] and second[4] <= int(page["t1"])
        assert f"find={s['name']}" in page["url"]
        # the current instance outlined where it is drawn: the runtime's on the measurement
        # lane, the program's at its depth
        o = s["current_outline"]
        lane = o["row"]["depth"] if s["name"].startswith("plx_") else o["depth"]
        assert o["y"] == o["row"]["y"] + 2 + lane * o["row"]["laneH"], s["name"]


def test_search_finds_plx_reports_calls(life, life_trace, many, many_trace):
    check_search(life["search"], calls(life_trace))
    check_search(many["search"], calls(many_trace))
    assert [s["found"] for s in many["search"] if s["name"] == "work"] == [MANY]


def test_runtime_work_is_on_the_measurement_lane(life, many):
    for run in (life, many):
        s = next(x for x in run["search"] if x["name"] == "plx_symbols")
        drawn = s["runtime_drawn"]
        assert drawn, "the instance stepped to is drawn"
        for d in drawn:
            assert d["measure"] is True
            # on the measurement lane, below every region lane of its track, not at its depth's
            row = d["row"]
            assert row["measure"] == 1
            assert d["y"] == row["y"] + 2 + row["depth"] * row["laneH"]
            lanes = [y for k, y in s["track_rows"].items() if int(k.split(":")[0]) == d["track"]]
            assert all(y < d["y"] for y in lanes)


def test_the_selections_flame_graph_is_its_profile(life):
    sel = life["selection"]
    names = life["regions"]
    flame = {}
    for _, region, incl, ncalls in sel["flame"]["nodes"]:
        c, i = flame.get(names[region], (0, 0))
        flame[names[region]] = (c + ncalls, i + incl)
    stats = {name: (c, inc) for name, c, inc, _ in sel["stats"]["profile"]}
    assert flame == stats
    assert len(flame) > 3
    click = life["flame_click"]
    assert click["focus"] == click["node"]["node"] >= 0
    assert "sel=" in life["selection_reloaded"]["url"]


def test_a_matrix_cell_shows_its_messages_on_the_timeline(life, life_trace):
    c = life["cell"]
    assert c["view"] == "Timeline"
    want = comm_matrix(life_trace)[(c["cell"]["from"], c["cell"]["to"])][0]
    assert n(c["page"], "messagesDrawn") == c["cell"]["messages"] == want == 10
    assert n(c["page"], "lines") == 2 * RANKS * 10
    assert f"pair={c['cell']['from']}%2C{c['cell']['to']}" in c["page"]["url"]


def test_screenshots_at_three_zoom_levels(life, many, series):
    for mode in ("life", "many"):
        for level in ("whole", "mid", "deep", "critical-path", "collapsed", "search", "selection"):
            assert (ARTIFACTS / f"{mode}-{level}.png").stat().st_size > 10_000, (mode, level)
    for name in ("series-whole", "series-zoomed"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 10_000, name


POWER_CSV = "t,power,fan\n0,10,1000\n200,30,\n400,50,1200\n600,20,900\n"
# the value each column holds from each sample time (µs) on: an empty field repeats the last
POWER = {"power": {0: 10, 200: 30, 400: 50, 600: 20}, "fan": {0: 1000, 200: 1000, 400: 1200, 600: 900}}


@pytest.fixture(scope="module")
def series(many_trace, tmp_path_factory):
    """8 threads of bench/threads.c traced with the system monitor, and a CSV file imported:
    what the page shows of the series."""
    d = tmp_path_factory.mktemp("view-series")
    exp = d / "series-exp"
    plx("run", "--trace", "--monitor", "cpu,mem", "--monitor-period", "2", "-o", exp, "--",
        many_trace.parent / "threads", 8, 100000)
    csv = d / "power.csv"
    csv.write_text(POWER_CSV)
    plx("import", exp, "--csv", csv, "--time-column", "t", "--time-unit", "us")
    return drive(exp, "series")


def test_external_series_are_step_tracks_under_their_host(series):
    rows = series["series_rows"]
    api = series["series_api"]["series"]
    names = [r["name"] for r in rows]
    assert names == [s["name"] for s in api]
    assert names[:2] == ["power", "fan"]
    monitor = [r for r in rows if r["source"].startswith("monitor")]
    assert {"cpu.util", "mem.used"} <= {r["name"] for r in monitor}
    assert int(series["page"]["seriesRows"]) == len(rows) == int(series["page"]["series"])
    # under the host's header, before its first process
    host = next(h for h in series["headers"] if h["key"].startswith("h:"))
    first_process = next(h for h in series["headers"] if h["key"].startswith("p:"))
    assert all(host["y"] < r["y"] < first_process["y"] for r in rows)
    # a process named as every command names it: PROCESS (pid PID on HOST), then its threads
    assert re.fullmatch(r"(\d+) \(pid \1 on %s\) · %d threads" % (re.escape(host["key"][2:]), first_process["tracks"]),
                        first_process["text"]), first_process["text"]
    assert all(r["host"] == host["key"][2:] for r in rows)
    assert series["errors"] == []


def test_a_series_tooltip_gives_the_imported_value(series):
    shown = {(h["name"], h["t"] // 1000): h["value"] for h in series["hovers"]}
    want = {(name, t): v for name, values in POWER.items() for t, v in values.items()}
    assert shown == want
    assert all(h["kind"] == "series" for h in series["hovers"])


def test_counter_tracks_are_plx_reports_counts(life, life_trace):
    from test_view import COUNTERS, counter_csv

    c = life["counters"]
    want = counter_csv(life_trace)
    calls_of = {(int(p["pid"]), th["thread"], f["function"]): f["calls"]
                for p in report_json(life_trace)["processes"] for th in p["threads"]
                for f in th["functions"]}
    rows = c["rows"]
    # a row per traced thread and event of its counted calls: task-clock and page-faults on
    # each main thread (population), page-faults on each worker (update_rows)
    assert int(c["page"]["counterRows"]) == len(rows) == RANKS * 2 + RANKS * THREADS
    assert {r["event"] for r in rows} == set(COUNTERS)
    for r in rows:
        t = life["tracks"][r["track"]]
        expected = {f: v[r["event"]] for (pid, th, f), v in want.items()
                    if (pid, th) == (t["pid"], t["thread"]) and f != "(thread)" and r["event"] in v}
        assert r["sums"] == expected, r
        # one value per call of the counted functions on that thread
        assert r["calls"] == sum(calls_of[(t["pid"], t["thread"], f)] for f in expected) > 0
    tip = life["counter_tip"]
    assert tip["kind"] == "counter"
    assert tip["value"] == tip["call"][3][tip["e"]]
    assert (ARTIFACTS / "life-counters.png").stat().st_size > 10_000


def test_shift_wheel_scrolls_the_tracks_under_a_fixed_axis(life, many):
    for run in (life, many):
        before, after = run["scroll"]["before"], run["scroll"]["after"]
        assert before["top"] == 0 and after["top"] == 120
        # the rows moved up by as much; the canvas (axis, labels) stayed where it was
        assert after["header"] == before["header"] - 120
        assert after["box"] == before["box"]
        assert (after["t0"], after["t1"]) == (before["t0"], before["t1"])
