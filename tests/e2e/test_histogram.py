"""plx histogram and plx display on real MPI runs traced under Open MPI's mpirun: the messages
histogram adds up to the messages plx comm counts, the SVGs parse with xml.etree and hold one
polyline per series (one rect per Gantt interval, one line per message), the Gantt CSV covers
each location from the start to the end without overlaps, the message queue is empty at the end,
the concurrency profile covers the run and the NPT profile adds up to the time something computes.

The programs are examples/mpi/pingpong.c (2 ranks) and life.c (4 ranks x main + 2 workers, its
per-cell helper filtered out), built by test_mpi's MpiPrograms."""

import csv
import io
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import EPS, ROOT, have, plx
from test_cli import doc_options
from test_mpi import MpiPrograms, plx_under_mpirun

pytestmark = pytest.mark.usefixtures("open_mpi")

SVG_NS = "{http://www.w3.org/2000/svg}"
PP_ITERATIONS, PP_SIZES = 20, (8, 4096)
LIFE_STEPS, LIFE_SIZE, LIFE_THREADS, LIFE_RANKS = 10, 64, 2, 4


@pytest.fixture(scope="module")
def hist_programs(tmp_path_factory):
    return MpiPrograms(tmp_path_factory.mktemp("hist-mpi-bin"))


@pytest.fixture(scope="module")
def traced(hist_programs, tmp_path_factory):
    root = tmp_path_factory.mktemp("hist-exp")
    pingpong = root / "pingpong"
    plx_under_mpirun(2, pingpong, hist_programs.get("pingpong"), PP_ITERATIONS, *PP_SIZES,
                     opts=("--trace",))
    life = root / "life"
    cp = plx_under_mpirun(
        LIFE_RANKS, life, hist_programs.get("life"), LIFE_STEPS, LIFE_SIZE, LIFE_THREADS,
        opts=("--trace", "--filter", str(ROOT / "examples" / "mpi" / "life.filter")),
    )
    assert "population" in cp.stdout
    return {"pingpong": pingpong, "life": life}


@pytest.fixture(params=["pingpong", "life"])
def exp(request, traced):
    return traced[request.param]


def rows(*args):
    cp = plx(*args)
    return list(csv.DictReader(io.StringIO(cp.stdout)))


def comm_totals(directory):
    """(messages, bytes) sent point to point, as plx comm counts them."""
    r = rows("comm", directory, "--format", "csv")
    return sum(int(x["messages"]) for x in r), sum(int(x["bytes"]) for x in r)


def test_messages_histogram_adds_up_to_plx_comm(exp):
    messages, nbytes = comm_totals(exp)
    assert messages > 0
    h = rows("histogram", exp, "--metric", "messages", "--bins", "7", "--format", "csv")
    assert len(h) == 7 and {r["location"] for r in h} == {"total"}
    assert sum(int(r["value"]) for r in h) == messages
    h = rows("histogram", exp, "--metric", "bytes", "--bins", "7", "--by", "location",
             "--format", "csv")
    assert sum(int(r["value"]) for r in h) == nbytes
    # bins are contiguous and cover the run from 0
    starts = sorted({float(r["start_s"]) for r in h})
    assert starts[0] == 0.0 and len(starts) == 7


def test_svg_parses_with_one_polyline_per_series(exp, tmp_path):
    h = rows("histogram", exp, "--metric", "cpu", "--by", "location", "--bins", "10",
             "--format", "csv")
    series = {(r["series"], r["location"]) for r in h}
    out = tmp_path / "cpu.svg"
    plx("histogram", exp, "--metric", "cpu", "--by", "location", "--bins", "10",
        "--format", "svg", "-o", out)
    root = ET.parse(out).getroot()
    assert root.tag == SVG_NS + "svg"
    assert len(root.findall(".//%spolyline" % SVG_NS)) == len(series) > 1
    # utilization of the busy processors: never more than all locations at once
    for r in h:
        assert -EPS <= float(r["value"]) <= 1 + EPS, r


def test_gantt_covers_every_location_without_overlaps(exp, tmp_path):
    g = rows("display", exp, "--kind", "gantt", "--format", "csv")
    util = rows("display", exp, "--kind", "utilization", "--format", "csv")
    locations = [u["location"] for u in util if u["location"] != "total"]
    assert sorted({r["location"] for r in g}) == sorted(locations)
    end = max(float(r["end_s"]) for r in g)
    for loc in locations:
        segs = [(float(r["start_s"]), float(r["end_s"]), r["state"]) for r in g
                if r["location"] == loc]
        assert segs[0][0] == 0.0, (loc, segs[:2])
        assert abs(segs[-1][1] - end) < EPS, (loc, segs[-1], end)
        for (a0, a1, sa), (b0, b1, sb) in zip(segs, segs[1:]):
            assert a0 < a1 and abs(a1 - b0) < EPS, (loc, (a0, a1), (b0, b1))
            assert sa != sb, "runs of one state are merged"
        assert {s for _, _, s in segs} <= {"computing", "mpi", "wait", "idle"}
        # the utilization summary is the Gantt chart's sums
        u = next(x for x in util if x["location"] == loc)
        for state in ("computing", "mpi", "wait", "idle"):
            total = sum(b - a for a, b, s in segs if s == state)
            assert abs(total - float(u[state + "_s"])) < 1e-5, (loc, state)
        pct = sum(float(u[k + "_pct"]) for k in ("computing", "mpi", "wait", "idle"))
        assert abs(pct - 100.0) < 0.01
    # every rank spends time in MPI
    assert all(float(u["mpi_s"]) > 0 for u in util if u["location"].endswith(".0"))
    out = tmp_path / "gantt.svg"
    plx("display", exp, "--kind", "gantt", "--format", "svg", "-o", out)
    rects = ET.parse(out).getroot().findall(".//%srect" % SVG_NS)
    assert len(rects) == len(g)


def test_queue_is_empty_at_the_end_and_space_time_lines_are_the_messages(exp, tmp_path):
    q = rows("display", exp, "--kind", "queue", "--format", "csv")
    lengths = [int(r["length"]) for r in q]
    assert lengths[0] == 0 and lengths[-1] == 0 and max(lengths) >= 1
    assert min(lengths) >= 0
    times = [float(r["time_s"]) for r in q]
    assert times == sorted(times)
    messages, _ = comm_totals(exp)
    st = rows("display", exp, "--kind", "spacetime", "--format", "csv")
    assert len(st) == messages
    assert all(float(r["recv_s"]) >= float(r["send_s"]) for r in st)
    out = tmp_path / "st.svg"
    plx("display", exp, "--kind", "spacetime", "--format", "svg", "-o", out)
    lines = ET.parse(out).getroot().findall(".//%sline" % SVG_NS)
    assert len(lines) == messages


def test_concurrency_and_npt_add_up(exp):
    c = rows("display", exp, "--kind", "concurrency", "--format", "csv")
    g = rows("display", exp, "--kind", "gantt", "--format", "csv")
    span = max(float(r["end_s"]) for r in g)
    assert abs(sum(float(r["seconds"]) for r in c) - span) < 1e-5
    busy = sum(float(r["seconds"]) for r in c if int(r["k"]) > 0)
    n = rows("display", exp, "--kind", "npt", "--format", "csv")
    assert abs(sum(float(r["npt_s"]) for r in n) - busy) < 1e-5
    # the processor time of the functions is the computing time of the Gantt chart
    computing = sum(float(r["end_s"]) - float(r["start_s"]) for r in g if r["state"] == "computing")
    assert abs(sum(float(r["processor_s"]) for r in n) - computing) < 1e-5
    assert "main" in {r["function"] for r in n}


def test_runs_overlaid(traced, tmp_path):
    a, b = traced["pingpong"], traced["life"]
    h = rows("histogram", a, b, "--metric", "mpi", "--bins", "5", "--format", "csv")
    assert [r["series"] for r in h] == ["pingpong"] * 5 + ["life"] * 5
    # bins as wide as the longest run's, each run from its own start
    w = [float(r["end_s"]) - float(r["start_s"]) for r in h]
    assert max(w) - min(w) < 1e-8, w
    out = tmp_path / "both.svg"
    plx("histogram", a, b, "--metric", "mpi", "--format", "svg", "-o", out)
    assert len(ET.parse(out).getroot().findall(".//%spolyline" % SVG_NS)) == 2


def test_life_calls_of_a_function(traced):
    life = traced["life"]
    h = rows("histogram", life, "--metric", "calls:life_worker", "--bins", "3", "--format", "csv")
    assert sum(int(r["value"]) for r in h) == LIFE_RANKS * LIFE_THREADS
    cp = plx("histogram", life, "--metric", "calls:no_such_function", check=False)
    assert cp.returncode == 2 and "no function named \"no_such_function\"" in cp.stderr


@pytest.mark.parametrize("page,command", [("plx-histogram.md", "histogram"),
                                          ("plx-display.md", "display")])
def test_help_mentions_documented_options(page, command):
    opts, values = doc_options(page)
    assert "--format" in opts and {"text", "csv", "svg"} <= values
    out = plx(command, "--help").stdout
    for opt in sorted((opts | values) - {"DIR", "DIR..."}):
        assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), out), (opt, out)
