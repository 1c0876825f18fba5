"""The IPS-2 studies at small scale, as the examples run them: psim copies under the
co-scheduler in one session (examples/psim), and one program measured with the fine and the
coarse clock compared (examples/threads/join.c)."""

import csv
import io
import json
import re
import subprocess
import time

import pytest

from conftest import PLX, ROOT, _fail_message, clean_env, info, plx
import test_mpi as mpi

CYCLES = 60


def build(cmd):
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)


def compare_table(target, *extra):
    """`plx compare --format csv` as {metric: {run: value}}."""
    out = plx("compare", target, "--format", "csv", *extra).stdout
    table = {}
    for r in csv.DictReader(io.StringIO(out)):
        table.setdefault(r["metric"], {})[r["run"]] = r["value"]
    return table


@pytest.mark.usefixtures("open_mpi")
def test_psim_copies_under_the_coscheduler(tmp_path):
    psim, cosched = tmp_path / "psim", tmp_path / "cosched"
    build([ROOT / "build" / "bin" / "plx-mpicc", "-O1", ROOT / "examples" / "psim" / "psim.c", "-o", psim])
    build(["cc", "-O1", ROOT / "examples" / "psim" / "cosched.c", "-o", cosched])
    sock = tmp_path / "cs.sock"
    sched = subprocess.Popen([str(cosched), str(sock), "20", "2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if sock.exists():
            break
        time.sleep(0.05)
    s = tmp_path / "S"
    runs = []
    for app in ("gang1", "gang2"):
        env = clean_env({"PSIM_COSCHED": sock, "PSIM_APP": app})
        cmd = [PLX, "run", "--session", s, "--app", app, "--trace", "--",
               *mpi.mpirun_cmd(2, "-x", "PSIM_COSCHED", "-x", "PSIM_APP", psim, CYCLES, 20000)]
        runs.append(subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env))
    for r in runs:
        out, err = r.communicate(timeout=300)
        assert r.returncode == 0, out + err
    out, err = sched.communicate(timeout=60)
    assert sched.returncode == 0, err
    m = re.search(r"cosched: 2 application\(s\), 4 process\(es\), (\d+) switches", out)
    assert m, out
    t = compare_table(s, "--top", "50")
    runs = ["S:gang1", "S:gang2"]
    for run in runs:
        # one barrier per cycle and one before the loop, in each of the 2 ranks
        assert t["Barriers"][run] == str(CYCLES + 1)
        assert t["Processes"][run] == "2"
        assert t["Calls: simulate_cycle"][run] == str(2 * CYCLES)
        assert float(t["Barrier Wait Time"][run]) > 0
    # both copies in one physical view: four ranks, each copy's own in its logical view
    assert "MPI: 4 rank(s) of a world of 4" in info(s).stdout
    doc = json.loads(plx("critical-path", s, "--app", "gang2", "--level", "process",
                         "--format", "json").stdout)
    assert doc["total_length_s"] <= doc["elapsed_s"] * 1.0001
    cpu = [i["name"] for i in doc["items"] if i["kind"] == "cpu"]
    assert cpu and all("gang2:" in n for n in cpu), cpu


def test_fine_and_coarse_clock_compared(tmp_path):
    join = tmp_path / "join"
    build([ROOT / "build" / "bin" / "plx-cc", "-O1", "-pthread", ROOT / "examples" / "threads" / "join.c",
           "-o", join])
    s = tmp_path / "S"
    plx("run", "--session", s, "--app", "fine", "--clock", "tsc", "--trace", "--", join, 2, 200000)
    plx("run", "-o", tmp_path / "coarse", "--clock", "coarse", "--trace", "--", join, 2, 200000)
    plx("session", "add", s, tmp_path / "coarse", "--app", "coarse")
    text = info(s).stdout
    assert "clock       coarse (CLOCK_MONOTONIC_COARSE)" in text
    assert re.search(r"session of 2 application\(s\): fine, coarse \(compare, shifted [+-]\d", text)
    t = compare_table(s, "--top", "50")
    # the same program: the same calls, whatever the clock
    for metric in ("Calls: effect_join", "Calls: partition", "Barriers"):
        assert t[metric]["S:fine"] == t[metric]["S:coarse"], metric
    # every time the coarse run measured is a whole number of its clock's ticks
    tick = time.clock_getres(6)  # CLOCK_MONOTONIC_COARSE
    doc = json.loads(plx("critical-path", s, "--app", "coarse", "--level", "thread",
                         "--format", "json").stdout)
    assert doc["total_length_s"] > 0
    assert tick >= 1e-4
    for i in doc["items"]:
        if i["kind"] == "cpu":
            ticks = i["time_s"] / tick
            assert abs(ticks - round(ticks)) < 1e-3, (i, tick)
