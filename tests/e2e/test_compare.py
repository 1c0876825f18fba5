"""plx compare on real MPI runs and plx report --phase START:END on a real traced run.

Two runs of examples/mpi/pingpong under `mpirun -np 2 plx run` with different iteration counts
and sizes: the metric table's Messages and Bytes rows equal `plx comm`'s totals of each run (and
the counts the program makes), MPI rows are measured, synchronization rows are '-' when no
object was seen. A traced run limited to a window: every rank's main thread has its whole
window inside `main`, so its callpath roots add up to the window's length."""

import csv
import io
import json
import os
import re
import subprocess

import pytest

from conftest import PLX, ROOT, _fail_message, clean_env, have, plx

pytestmark = pytest.mark.usefixtures("open_mpi")

PINGPONG = ROOT / "examples" / "mpi" / "pingpong.c"


def mpirun_plx(np, out, *command, opts=()):
    cmd = ["mpirun", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", str(np), str(PLX), "run", "-o", str(out), *opts, "--", *map(str, command)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)


@pytest.fixture(scope="module")
def pingpong(tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    exe = d / "pingpong"
    cp = subprocess.run(
        ["mpicc", "-g", "-O1", "-finstrument-functions", str(PINGPONG), "-o", str(exe), "-pthread"],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, _fail_message(cp)
    return d, exe


@pytest.fixture(scope="module")
def two_runs(pingpong):
    d, exe = pingpong
    small, big = d / "small", d / "big"
    mpirun_plx(2, small, exe, 10, 8)
    mpirun_plx(2, big, exe, 25, 1000, 4096)
    return small, big


def table(*args):
    cp = plx("compare", *args, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(cp.stdout)))
    out = {}
    for r in rows:
        out.setdefault(r["metric"], {})[r["run"]] = r["value"]
    return out


def comm_total(directory):
    doc = json.loads(plx("comm", directory, "--format", "json").stdout)
    return doc["total"]["messages"], doc["total"]["bytes"]


def test_messages_and_bytes_equal_plx_comm(two_runs):
    small, big = two_runs
    t = table(small, big, "--top", "20")
    for run, exp in (("small", small), ("big", big)):
        messages, nbytes = comm_total(exp)
        assert int(t["Messages"][run]) == messages
        assert int(t["Bytes"][run]) == nbytes
    # 10 round trips of 8 bytes; 25 round trips each of 1000 and 4096 bytes
    assert int(t["Messages"]["small"]) == 20 and int(t["Bytes"]["small"]) == 160
    assert int(t["Messages"]["big"]) == 100 and int(t["Bytes"]["big"]) == 50 * 5096
    assert t["Calls: MPI_Send"] == {"small": "20", "big": "100"}
    for run, sizes in (("small", 1), ("big", 2)):
        assert int(t["Processes"][run]) == 2
        assert float(t["MPI Time"][run]) > 0
        assert float(t["Elapsed Time"][run]) > 0
        assert float(t["CPU Time"][run]) > 0
        # an MPI_Barrier per message size in every rank
        assert float(t["Barriers"][run]) == sizes
        assert t["Time Per Barrier"][run] != ""


def test_text_and_function_differences(two_runs):
    small, big = two_runs
    text = plx("compare", small, big).stdout
    assert text.splitlines()[0].split() == ["metric", "small", "big"]
    doc = json.loads(plx("compare", small, big, "--format", "json").stdout)
    fns = {f["function"]: f for f in doc["functions"]}
    send = fns["MPI_Send"]
    assert [r["calls"] for r in send["runs"]] == [20, 100]
    diffs = [abs(f["inclusive_diff_s"]) for f in doc["functions"]]
    assert diffs == sorted(diffs, reverse=True)
    for f in doc["functions"]:
        first, last = f["runs"][0], f["runs"][-1]
        d = (last["inclusive_s"] if last else 0) - (first["inclusive_s"] if first else 0)
        assert f["inclusive_diff_s"] == pytest.approx(d, abs=1e-9)


def test_report_window_on_a_traced_run(pingpong):
    d, exe = pingpong
    exp = d / "traced"
    mpirun_plx(2, exp, exe, 1500, 1048576, opts=("--trace",))
    # a window inside the exchange: after the slowest rank's MPI_Init (main begins the trace)
    whole = json.loads(plx("report", exp, "--format", "json").stdout)
    fns = [{f["function"]: f for f in t["functions"]}
           for p in whole["processes"] for t in p["threads"] if t["name"] == "main"]
    init = max(f["MPI_Init"]["inclusive_s"] for f in fns)
    exchange = min(f["exchange"]["inclusive_s"] for f in fns)
    assert exchange > 0.1, "the exchange is too short for a window: %s s" % exchange
    start, end = init + 0.02, init + 0.02 + exchange / 2
    window = end - start
    doc = json.loads(
        plx("report", exp, "--phase", "%.6f:%.6f" % (start, end), "--format", "json").stdout
    )
    assert doc["phase"] == "%s:%s" % (float("%.6f" % start), float("%.6f" % end))
    mains = [t for p in doc["processes"] for t in p["threads"] if t["name"] == "main"]
    assert len(mains) == 2
    for t in mains:
        roots = sum(c["inclusive_s"] for c in t["callpaths"] if len(c["callpath"]) == 1)
        # rank start times differ by milliseconds at most; the window lies inside main
        assert roots == pytest.approx(window, rel=0.02), t["callpaths"]
        assert t["cpu_s"] is None
        fns = {f["function"]: f for f in t["functions"]}
        assert fns["main"]["calls"] == 0  # main began before the window
        assert fns["MPI_Send"]["calls"] > 0
    # the window's messages are a part of the run's
    t = table(exp, "--phase", "%.6f:%.6f" % (start, end))
    messages, _ = comm_total(exp)
    assert 0 < int(t["Messages"]["traced"]) < messages


def test_help_mentions_documented_options():
    from test_cli import doc_options

    opts, values = doc_options("plx-compare.md")
    assert {"--app", "--phase", "--top", "--format", "--functions"} <= opts
    assert {"text", "csv", "json"} <= values
    out = plx("compare", "--help").stdout
    for opt in sorted(opts | values):
        assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), out), (opt, out)
