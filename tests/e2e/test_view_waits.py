"""plx view's wait states in a real headless Chromium (tests/view/waits.mjs, playwright-core with
Debian's chromium, real clicks and keys), on programs/waits_mpi.c under Open MPI (4 ranks, a
delay_* function sleeping D before a send, a receive, collectives, a chain of messages): the
waits drawn are plx waits' (count per pattern), a late-sender wait clicked shows the rank it
waited for and its root cause in delay_send with plx waits --causes' delay, and the overlay's key
switches it off in the URL. Screenshots at three zoom levels are left in
tests/e2e/artifacts/view-waits/."""

import json
import os
import subprocess
from collections import Counter

import pytest

from components import require, require_tools
from conftest import PLX, PROGRAMS, ROOT, _fail_message, clean_env, plx
from mpi_impls import OPEN_MPI
from test_view import CHROMIUM

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts" / "view-waits"
DRIVER = ROOT / "tests" / "view" / "waits.mjs"
D = 0.2
NP = 4
LS_PATH = "main => late_sender => MPI_Recv"


@pytest.fixture(scope="module")
def waits_exp(tmp_path_factory):
    OPEN_MPI.require()
    tmp = tmp_path_factory.mktemp("view-waits")
    exe = tmp / "waits_mpi"
    cp = subprocess.run([OPEN_MPI.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(PROGRAMS / "waits_mpi.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = tmp / "exp"
    cp = subprocess.run(OPEN_MPI.mpirun_cmd(NP, PLX, "run", "--trace", "-o", exp, "--", exe, D),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return exp


def waits_json(exp):
    return json.loads(plx("waits", exp, "--causes", "--format", "json").stdout)


@pytest.fixture(scope="module")
def page(waits_exp):
    require_tools("node", what="Node.js")
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)", "make deps")
    require((ROOT / "viewer" / "node_modules" / "playwright-core").is_dir(),
            "playwright-core (viewer/node_modules)", "make viewer")
    server = subprocess.Popen([str(PLX), "view", str(waits_exp)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, url
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        # rank 0 waits for rank 1's delayed send
        cp = subprocess.run(["node", str(DRIVER), url, CHROMIUM, str(ARTIFACTS), "0"],
                            capture_output=True, text=True, timeout=600, env=clean_env())
        assert cp.returncode == 0, _fail_message(cp)
        return json.loads(cp.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_waits_drawn_are_plx_waits_per_pattern(page, waits_exp):
    want = waits_json(waits_exp)
    total = sum(r["count"] for r in want["rows"])
    per = Counter()
    for r in want["rows"]:
        per[r["pattern"]] += r["count"]
    assert page["errors"] == []
    api = page["api"]
    assert api["total"] == api["count"] == total == int(page["whole"]["page"]["waitsTotal"])
    got = Counter(api["patterns"][w[2]] for w in api["waits"])
    assert got == per
    # every one of them drawn at the whole run, each on its own rank's track (one per rank)
    drawn = page["whole"]["drawn"]
    assert int(page["whole"]["page"]["waits"]) == len(drawn) == total
    assert Counter(d["pattern"] for d in drawn) == per
    assert per["late_sender"] >= 2 + 3 and per["wait_at_barrier"] >= 3


def test_a_clicked_late_sender_shows_its_cause(page, waits_exp):
    want = waits_json(waits_exp)
    (row,) = [r for r in want["rows"]
              if r["pattern"] == "late_sender" and r["location"].split(".")[0] == "0"
              and r["callpath"] == LS_PATH]
    assert row["count"] == 1
    d = page["detail"]
    assert d["pattern"] == "late_sender"
    assert abs(d["ns"] / 1e9 - row["wait_s"]) <= 1e-6
    assert d["ns"] == page["target"][4] - page["target"][3] == page["wait_api"]["wait_ns"]
    assert d["where"].endswith(f"in {LS_PATH}, from "
                               + d["where"].split(", from ")[1])
    assert d["late"]["location"].split(".")[0] == "1"
    assert d["late"]["callpath"] == "main => late_sender => MPI_Send"
    # the causes shown are the server's for that wait; the largest rank 1's delay_send, direct
    server = page["wait_api"]["causes"]
    assert [(c["location"], c["callpath"], c["kind"], c["ns"]) for c in d["causes"]] == \
        [(c["location"], c["callpath"], c["kind"], c["delay_ns"]) for c in server]
    top = d["causes"][0]
    assert top["location"].split(".")[0] == "1" and top["kind"] == "direct"
    assert "delay_send" in top["callpath"].split(" => ")
    assert abs(sum(c["ns"] for c in d["causes"]) - d["ns"]) <= 1
    assert page["tip"]["kind"] == "wait" and page["tip"]["text"].startswith("late_sender")


def test_each_waits_causes_add_up_to_plx_waits_causes(page, waits_exp):
    """Every wait's causes, summed by pattern, waiting location, cause location, call path and
    kind, are plx waits --causes' rows; every wait's length, summed by pattern, location and
    call path, its rows' wait_s."""
    want = waits_json(waits_exp)
    got_causes, got_waits = Counter(), Counter()
    for w in page["all"]:
        got_waits[(w["pattern"], w["location"], w["callpath"])] += w["wait_ns"] / 1e9
        for c in w["causes"]:
            got_causes[(w["pattern"], w["location"], c["location"], c["callpath"], c["kind"])] += \
                c["delay_ns"] / 1e9
    # a wait with no partner (a sleep) has no cause: `none` in plx waits, none in the viewer
    want_causes = {(c["pattern"], c["waiting_location"], c["cause_location"], c["cause_callpath"],
                    c["kind"]): c["delay_s"] for c in want["causes"] if c["kind"] != "none"}
    want_waits = {(r["pattern"], r["location"], r["callpath"]): r["wait_s"] for r in want["rows"]}
    assert sorted(got_causes) == sorted(want_causes)
    for k, v in want_causes.items():
        assert abs(got_causes[k] - v) <= 1e-9, (k, got_causes[k], v)
    assert sorted(got_waits) == sorted(want_waits)
    for k, v in want_waits.items():
        assert abs(got_waits[k] - v) <= 1e-9, (k, got_waits[k], v)


def test_zoom_levels_keep_the_wait_and_the_key_switches_waits_off(page):
    tid = page["target"][0]
    assert any(w["id"] == tid for w in page["zoomed"]["drawn"])
    assert any(w["id"] == tid for w in page["close"]["drawn"])
    # closer in, fewer waits overlap the window
    assert int(page["close"]["page"]["waitsInWindow"]) <= int(page["zoomed"]["page"]["waitsInWindow"]) \
        <= int(page["whole"]["page"]["waitsInWindow"])
    off = page["off"]
    assert off["waits"] == "0" and "waits=0" in off["url"]
    for name in ("waits-whole.png", "waits-zoomed.png", "waits-close.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000
