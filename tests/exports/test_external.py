"""External data: plx run --monitor samples the system into the experiment, plx import adds a CSV
file's columns; both are metrics of plx query and appear in the Chrome and OTF2 exports."""

import json
import os
import re

import pytest

from components import require_tools

from conftest import PLX, ROOT, plx, run


@pytest.fixture(scope="module")
def monitored(tmp_path_factory):
    """examples/threads/queue.c traced with the system monitor every 10 ms."""
    root = tmp_path_factory.mktemp("monitor")
    exe = root / "queue"
    run([ROOT / "build" / "bin" / "plx-cc", "-O1", "-g", "-pthread",
         ROOT / "examples" / "threads" / "queue.c", "-o", exe])
    exp = root / "queue.exp"
    plx("run", "--trace", "--monitor", "cpu,mem,net,disk", "--monitor-period", "10", "-o", exp,
        "--", exe, "2", "2", "20000")
    return exp


def query(exp, metric, *extra):
    return json.loads(plx("query", exp, "--metric", metric, "--format", "json", *extra).stdout)


def test_monitor_metrics(monitored):
    files = [f.name for f in monitored.iterdir() if f.name.startswith("metrics.")]
    assert files == ["metrics.monitor.%s.plx" % os.uname().nodename]
    cores = os.cpu_count()
    for name in ["cpu.util"] + ["cpu%d.util" % i for i in range(cores)]:
        q = query(monitored, name, "--bins", "4")
        assert q["unit"] == "%" and q["mode"] == "time-weighted mean"
        assert q["total"] is not None and 0 <= q["total"] <= 100
        assert all(b["value"] is None or 0 <= b["value"] <= 100 for b in q["series"])
    mem = query(monitored, "mem.used")
    assert mem["unit"] == "bytes" and 0 < mem["total"] < 1 << 50
    for name in ("net.rx", "net.tx", "disk.read", "disk.write"):
        q = query(monitored, name, "--bins", "3")
        assert q["mode"] == "increase" and q["total"] >= 0
        assert sum(b["value"] for b in q["series"]) == pytest.approx(q["total"])
    # a focus makes no sense for the whole machine's metrics
    cp = plx("query", monitored, "--metric", "mem.used", "--focus", "machine=/", check=False)
    assert cp.returncode == 2 and "takes no --focus" in cp.stderr


def test_monitor_refuses_unknown_sources(tmp_path):
    cp = run([PLX, "run", "--monitor", "cpu,gpu", "-o", tmp_path / "x", "--", "true"], check=False)
    assert cp.returncode == 2
    assert 'unknown source "gpu" (sources: cpu, mem, net, disk)' in cp.stderr


@pytest.fixture(scope="module")
def imported(monitored, tmp_path_factory):
    """power: 10 W over the first 0.5 s after the first event, then 30 W until 1.5 s (the last
    line's value holds for one more interval); fan: 1000 until 1 s (its empty field repeats it),
    then 1200."""
    csv = tmp_path_factory.mktemp("csv") / "power.csv"
    csv.write_text("t,power,fan\n0,10,1000\n0.5,30,\n1.0,30,1200\n")
    cp = plx("import", monitored, "--csv", csv, "--time-column", "t")
    assert "imported 3 sample(s) of 2 metric(s) (power, fan)" in cp.stderr
    return monitored


def test_import_aligned_to_the_first_event(imported):
    q = query(imported, "power", "--bins", "3")
    assert q["total"] == pytest.approx(70 / 3)
    assert [(b["start_s"], b["end_s"], b["value"]) for b in q["series"]] == \
        [(0.0, 0.5, 10.0), (0.5, 1.0, 30.0), (1.0, 1.5, 30.0)]
    # fan has no value at 0.5 s: 1000 holds until 1.0 s
    fan = query(imported, "fan", "--bins", "3")
    assert [b["value"] for b in fan["series"]] == [1000.0, 1000.0, 1200.0]
    cp = plx("query", imported, "--metric", "nope", check=False)
    assert cp.returncode == 2 and "or an external metric: " in cp.stderr and "power" in cp.stderr


def test_histogram_of_an_external_metric(imported):
    rows = plx("histogram", imported, "--metric", "power", "--bins", "6", "--format",
               "csv").stdout.splitlines()
    assert rows[0] == "series,location,bin,start_s,end_s,value"
    got = [(float(r.split(",")[3]), float(r.split(",")[5])) for r in rows[1:]]
    assert got == [(0.0, 10.0), (0.25, 10.0), (0.5, 30.0), (0.75, 30.0), (1.0, 30.0),
                   (1.25, 30.0)]
    text = plx("histogram", imported, "--metric", "power", "--bins", "3").stdout
    assert text.splitlines()[0].startswith("power: external metric (time-weighted mean; csv ")
    assert re.search(r"(?m): mean 23\.33", text), text
    svg = plx("histogram", imported, "--metric", "net.rx", "--format", "svg").stdout
    assert svg.startswith("<?xml") and "net.rx: external metric (bytes, increase per bin)" in svg


def test_histogram_of_an_external_metric_writes_its_o_file(imported, tmp_path):
    """`-o FILE` of an external metric's histogram: the file was written under a temporary
    name and never renamed, so plx exited 0 and left no FILE."""
    out = tmp_path / "power.csv"
    cp = plx("histogram", imported, "--metric", "power", "--bins", "6", "--format", "csv",
             "-o", out)
    assert cp.returncode == 0 and cp.stdout == ""
    want = plx("histogram", imported, "--metric", "power", "--bins", "6", "--format",
               "csv").stdout
    assert out.read_text() == want
    assert len(want.splitlines()) == 7
    assert [p.name for p in tmp_path.iterdir()] == ["power.csv"]


def test_bad_csv_names_file_and_line(monitored, tmp_path):
    cases = {
        "t,a\n0,1\n1,2,3\n": ":3: 3 field(s), the header has 2",
        "t,a\n0,1\n0.5,x\n": ':3: column "a": "x" is not a number',
        "time,a\n0,1\n": ':1: no column "t" (columns: time, a)',
        "t,a\n2,1\n1,1\n": ":3: time 1 before the previous line's",
    }
    for i, (text, msg) in enumerate(cases.items()):
        f = tmp_path / ("bad%d.csv" % i)
        f.write_text(text)
        cp = plx("import", monitored, "--csv", f, "--time-column", "t", check=False)
        assert cp.returncode == 2
        assert cp.stderr.strip() == "plx: %s%s" % (f, msg)
        assert not (monitored / ("metrics.csv-bad%d.plx" % i)).exists()


def test_exports_carry_the_metrics(imported, tmp_path):
    doc = json.loads(plx("export", imported, "--format", "chrome", "-o", "-").stdout)
    power = [(e["ts"], e["args"]["value"]) for e in doc["traceEvents"]
             if e.get("ph") == "C" and e.get("name") == "power"]
    assert power == [(0.0, 10.0), (500000.0, 30.0), (1000000.0, 30.0)]
    mem = [e for e in doc["traceEvents"] if e.get("name") == "mem.used (bytes)"]
    assert mem and all(e["pid"] == mem[0]["pid"] for e in mem)
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    out = tmp_path / "otf2"
    plx("export", imported, "--format", "otf2", "-o", out)
    defs = run(["otf2-print", "-G", out / "traces.otf2"]).stdout
    loc = re.search(r'(?m)^LOCATION\s+(\d+)\s+Name: "external metrics" <\d+>, Type: METRIC', defs)
    assert loc, defs
    events = run(["otf2-print", out / "traces.otf2"]).stdout
    origin = int(re.search(r"Global Offset: (\d+)", defs).group(1))
    got = [(int(t) - origin, float(v)) for t, v in re.findall(
        r'(?m)^METRIC\s+%s\s+(\d+)\s+Metric: \d+, 1 Value: \("power" <\d+>; DOUBLE; ([\d.e+]+)\)'
        % loc.group(1), events)]
    assert got == [(0, 10.0), (500000000, 30.0), (1000000000, 30.0)]
