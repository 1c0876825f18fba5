"""plx view's call-stack samples in a real headless Chromium (tests/view/samples.mjs, real mouse):
programs/sample_spin.c (built plain, -O2 -g, no frame pointers; alpha inside the API region
"solve", beta after it, gamma_ on a worker thread) under `plx run --trace --sample`; a shift-drag
over the whole run shows the sampled flame graph of the threads, whose call paths and samples are
plx report --callpath's, and a hover on a sampled frame gives its call path, samples and
estimated time; each track's strip of estimated samples holds exactly the samples taken under
its instrumented calls, and its tooltip names the call path. Screenshots are left in
tests/e2e/artifacts/view-samples/."""

import json
import os
import subprocess

import pytest

from components import require, require_tools
from conftest import (PLX, ROOT, _fail_message, clean_env, location_rows, report_csv, run,
                      total_rows)
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


def test_the_sampled_flame_graph_is_plx_reports_samples(page, sampled):
    assert page["errors"] == []
    want = {r["callpath"]: int(r["samples"]) for r in total_rows(report_csv(sampled, "--callpath"))
            if int(r["samples"] or 0) > 0}
    shown = page["shown"]
    got = {n["path"]: n["samples"] for n in shown["nodes"]}
    assert got == want
    assert shown["samples"] == page["api"]["samples"] > 0
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


def test_the_tracks_strips_hold_the_samples_under_instrumented_calls(page, sampled):
    """A thread's samples carry no time: the strip shares those taken under an instrumented
    call (here the API region solve, on main) among its instances; the rest (under no call)
    are not placed. Over the whole run the strip adds up to them."""
    rows = report_csv(sampled, "--callpath")
    api = page["lane_api"]
    assert api["tracks"], api
    under = {}
    for (_, thread), loc in location_rows(rows).items():
        under[int(thread)] = sum(int(r["samples"] or 0) for r in loc
                                 if " => " not in r["callpath"] and int(r["calls"]) > 0)
    drawn = 0.0
    for t in api["tracks"]:
        want = under[t["track"]] if t["track"] in under else 0
        assert t["placed"] == want, (t["track"], t["placed"], want)
        total = sum(c[1] for c in t["columns"])
        assert abs(total - want) <= 1e-3 * max(want, 1), (total, want)
        drawn += total
    assert sum(under.values()) > 0
    assert abs(float(page["lane_page"]["sampleSum"]) - drawn) <= 1e-2 * max(drawn, 1)
    tip = page["lane_tip"]
    assert tip["kind"] == "samples" and tip["value"] > 0
    assert "mostly in solve" in tip["text"] and "samples (estimated)" in tip["text"]
    # closer in, the strip holds the window's part of solve's samples, spread evenly over its
    # one call: a tenth and a thousandth of the run, both inside it
    (main,) = [t for t in api["tracks"] if t["track"] == 0]
    (inst,) = page["solve"]["instances"]
    s, e = inst[3], inst[4]
    for z in page["lane_zooms"]:
        t0, t1 = float(z["t0"]), float(z["t1"])
        assert s <= t0 < t1 <= e, (s, e, t0, t1)
        want = main["placed"] * (t1 - t0) / (e - s)
        assert abs(float(z["sampleSum"]) - want) <= 1e-3 * want + 1e-3, (z["sampleSum"], want)
    for name in ("samples-lane-zoomed.png", "samples-lane-close.png"):
        assert (ARTIFACTS / name).stat().st_size > 5_000
