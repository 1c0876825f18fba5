"""plx view's call-stack samples in a real headless Chromium (tests/view/samples.mjs, real mouse):
programs/sample_spin.c (built plain, -O2 -g, no frame pointers; alpha inside the API region
"solve", beta after it, gamma_ on a worker thread) under `plx run --trace --sample`; over the whole
run the samples per call path are plx report --callpath's; a shift-drag over the run shows the
sampled flame graph of the threads' samples taken in the selection, exactly those
sample_times.parquet has there (and a window asked of the server, the run's middle third, too),
and a hover on a sampled frame gives its call path, samples and
estimated time; each track's strip holds each stamped sample at its time, exactly the samples
sample_times.parquet has in the window, and its tooltip names the sampled frame. Screenshots are left in
tests/e2e/artifacts/view-samples/."""

import json
import math
import os
import subprocess

import pytest

from components import require, require_tools
from conftest import PLX, ROOT, _fail_message, clean_env, plx, report_csv, run, total_rows
from test_sampling import compile_plain
from test_view import CHROMIUM

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts" / "view-samples"
DRIVER = ROOT / "tests" / "view" / "samples.mjs"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("view-samples")
    prog = compile_plain(tmp / "spin_region", "gcc", "-DREGION")
    exp = tmp / "exp"
    run(exp, prog, opts=("--trace", "--sample=1000"))
    return exp


@pytest.fixture(scope="module")
def page(sampled):
    require_tools("node", what="Node.js")
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)", "make deps")
    require((ROOT / "viewer" / "node_modules" / "playwright-core").is_dir(),
            "playwright-core (viewer/node_modules)", "make viewer")
    server = subprocess.Popen([str(PLX), "view", str(sampled)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, url
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cp = subprocess.run(["node", str(DRIVER), url, CHROMIUM, str(ARTIFACTS)],
                            capture_output=True, text=True, timeout=300, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)
        return json.loads(cp.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=10)


def api_paths(answer):
    """{call path: samples} of an /api/samples answer's nodes."""
    nodes = answer["nodes"]

    def path(k):
        p = []
        while k >= 0:
            p.insert(0, nodes[k][1])
            k = nodes[k][0]
        return " => ".join(p)
    return {path(k): n[2] for k, n in enumerate(nodes)}


def stamped_paths(sampled, tmp, t0, t1, span):
    """{call path: samples inside it} of the samples sample_times.parquet has in [t0, t1), each
    at its time on the timeline: one taken before the trace's first event or after its last is
    drawn at the run's edge (0 or span - 1)."""
    pd = pytest.importorskip("pandas")
    out = tmp / "pq-paths"
    if not out.exists():
        plx("export", sampled, "--format", "parquet", "-o", out)
    t = pd.read_parquet(out / "sample_times.parquet")
    want = {}
    at = [min(max(int(x), 0), span - 1) for x in t.time_ns]
    for x, path in zip(at, t.callpath):
        if t0 <= x < t1 and path:
            frames = path.split(" => ")
            for d in range(1, len(frames) + 1):
                p = " => ".join(frames[:d])
                want[p] = want.get(p, 0) + 1
    return want, sum(1 for x in at if t0 <= x < t1)


def test_the_sampled_flame_graph_is_plx_reports_samples(page, sampled, tmp_path):
    """Over the whole run the samples per call path are plx report --callpath's; a selection's
    graph (a trace: each sample stamped with its time) holds exactly the samples taken in the
    selected interval, and so does a window asked of the server (the run's middle third)."""
    assert page["errors"] == []
    want = {r["callpath"]: int(r["samples"]) for r in total_rows(report_csv(sampled, "--callpath"))
            if int(r["samples"] or 0) > 0}
    assert api_paths(page["api"]) == want
    assert page["api"]["untimed"] == []
    shown = page["shown"]
    got = {n["path"]: n["samples"] for n in shown["nodes"]}
    # the selection as the page asks for it: from 0 at the earliest, rounded as JavaScript does
    s0, s1 = page["selection"]
    t0, t1 = math.floor(max(0, s0) + 0.5), math.floor(s1 + 0.5)
    span = int(page["lane_page"]["t1"])
    in_selection, n = stamped_paths(sampled, tmp_path, t0, t1, span)
    assert got == in_selection and shown["samples"] == n > 0, (t0, t1)
    assert shown["title"].endswith("in the selection"), shown["title"]
    third = page["api_third"]
    mid, n_mid = stamped_paths(sampled, tmp_path, third["t0"], third["t1"], span)
    assert api_paths(third["answer"]) == mid and third["answer"]["samples"] == n_mid > 0
    assert n_mid < page["api"]["samples"]
    # the sampled functions, under the region or the thread's root, are frames known from samples
    sampled_paths = {n["path"] for n in shown["nodes"] if n["sampled"]}
    assert any(p.split(" => ")[-2:] == ["solve", "alpha"] for p in sampled_paths)
    assert any(p.endswith("beta") and "solve" not in p.split(" => ") for p in sampled_paths)
    assert shown["boxes"] > 0


def test_a_hover_on_a_sampled_frame_gives_its_samples_and_estimate(page):
    tip = page["tip"]
    node = page["shown"]["nodes"][tip["node"]]
    assert tip["shown"] == "block"
    assert tip["count"] == node["samples"] > 0 and tip["ns"] == node["ns"]
    period = {ns for _, ns in page["api"]["period_ns"]}
    assert len(period) == 1 and node["ns"] == node["samples"] * period.pop()
    assert tip["text"].startswith(node["path"].replace(" => ", " → "))
    assert f"· {node['samples']} samples · ~" in tip["text"] and "(sampled frame)" in tip["text"]
    assert (ARTIFACTS / "samples-selection.png").stat().st_size > 10_000


def stamped_times(sampled, tmp):
    """{location: sorted sample times, ns since the trace's origin} of sample_times.parquet: the
    samples the runtime stamped, read back by pandas."""
    pd = pytest.importorskip("pandas")
    out = tmp / "pq"
    plx("export", sampled, "--format", "parquet", "-o", out)
    t = pd.read_parquet(out / "sample_times.parquet")
    return {int(loc): sorted(int(x) for x in g.time_ns) for loc, g in t.groupby("location")}


def test_the_tracks_strips_hold_each_stamped_sample_at_its_time(page, sampled, tmp_path):
    """With a trace the runtime stamps each sample: a track's strip draws each of its thread's
    stamped samples in the pixel column of its time, no estimate. Over the whole run and in two
    closer windows the strip holds exactly the samples sample_times.parquet has in the window,
    and plx info's stamped count; a hover on a column names the sampled frame."""
    times = stamped_times(sampled, tmp_path)
    doc = json.loads(plx("info", sampled, "--format", "json").stdout)
    [proc] = doc["processes"]
    stamped = {t["thread"]: t["samples"]["stamped"] for t in proc["threads"]}
    api = page["lane_api"]
    assert sorted(t["track"] for t in api["tracks"]) == sorted(times) == [0, 1], (api, list(times))
    for t in api["tracks"]:
        n = len(times[t["track"]])
        assert t["stamped"] == t["in_window"] == n == stamped[t["track"]] > 0, (t["track"], n)
        assert t["taken"] == n  # nothing lost: every sample taken has its stamp
        assert sum(c[1] for c in t["columns"]) == n
        assert "placed" not in t
    whole = sum(len(v) for v in times.values())
    assert int(page["lane_page"]["sampleStamped"]) == whole
    assert float(page["lane_page"]["sampleSum"]) == whole
    # closer in: exactly the stamped samples in each window [t0, t1)
    for z in page["lane_zooms"]:
        a, b = z["lane_t0"], z["lane_t1"]
        want = {loc: sum(1 for x in v if a <= x < b) for loc, v in times.items()}
        assert {k: v for k, v in z["in_window"]} == want, (z["in_window"], want)
        assert int(z["sampleStamped"]) == sum(want.values()), (z["sampleStamped"], want)
    # the hover names the sampled frame and its call path under the region solve
    tip = page["lane_tip"]
    near = page["lane_spot"]["columns"]
    assert tip["kind"] == "samples" and tip["value"] in [c[1] for c in near], (tip, near)
    (col,) = [c for c in near if c[1] == tip["value"]][:1]
    assert tip["text"].startswith("1 sample at " if col[1] == 1 else "%d samples at " % col[1])
    top = col[2][0][1]
    assert (" · in spin%s (solve => alpha => spin)" % ("" if col[1] == 1 else " ×%d" % top)) \
        in tip["text"], (tip["text"], col)
    assert "estimated" not in tip["text"]
    for name in ("samples-lane-zoomed.png", "samples-lane-close.png"):
        assert (ARTIFACTS / name).stat().st_size > 5_000
