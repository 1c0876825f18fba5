"""CPU sampling (plx run --cpu-sample, on by default with --trace): `plx histogram --metric cpu`
shows when a thread was really on a CPU, `--metric compute` what the trace's states say.

The program spins 300 ms, sleeps 300 ms in the nanosleep system call made directly (a wait no
wrapper of the runtime sees; nanosleep() itself is a wait region: test_clientserver.py), spins
300 ms: with 9 bins, bins 0-2 and 6-8 spin and 3-5 sleep. On a loaded machine a spinning
thread is on a CPU only part of its spin: the spinning bins are held to the share of its spin the
process was on a CPU by its own CPU-time clock (plx info), a sleeping bin to at most 0.15."""

import csv
import io
import json

import pytest

from conftest import plx, run

SPIN_BINS = (0, 1, 2, 6, 7, 8)
SLEEP_BINS = (3, 4, 5)


@pytest.fixture(scope="module")
def cpu_exps(programs, exp_root):
    prog = programs.get("cpu_phases.c", "-O1")
    exps = {}
    for name, opts in {"default": ("--trace",), "off": ("--trace", "--cpu-sample", "0")}.items():
        out = exp_root / ("cpu-sample-" + name)
        run(out, prog, opts=opts)
        exps[name] = out
    return exps


def histogram(exp, metric, *extra):
    cp = plx("histogram", exp, "--metric", metric, "--bins", "9", "--format", "csv", *extra)
    return list(csv.DictReader(io.StringIO(cp.stdout)))


def spin_share(exp):
    """The share of its spinning wall time the program's thread was on a CPU, by the thread's
    CPU-time clock: its CPU time over its wall time less the 300 ms asleep. 1 on an idle
    machine; on a 2-core machine at load 10-15 it was 0.5 (302 ms of CPU in 903 ms). Half of it
    is the floor for a spinning bin: the samples must find the CPU time the kernel counted,
    however much of it a loaded machine gave."""
    [proc] = json.loads(plx("info", exp, "--format", "json").stdout)["processes"]
    main = proc["threads"][0]
    return min(1.0, main["cpu_s"] / (main["wall_s"] - 0.3))


def values(rows):
    return [float(r["value"]) for r in sorted(rows, key=lambda r: int(r["bin"]))]


def test_cpu_follows_the_samples(cpu_exps):
    rows = histogram(cpu_exps["default"], "cpu")
    assert len(rows) == 9 and {r["location"] for r in rows} == {"total"}
    assert {r["source"] for r in rows} == {"samples"}
    v = values(rows)
    on_cpu = spin_share(cpu_exps["default"])
    for b in SPIN_BINS:
        assert v[b] >= 0.5 * on_cpu, (b, v, on_cpu)
    for b in SLEEP_BINS:
        assert v[b] <= 0.15, (b, v)
    assert min(v[b] for b in SPIN_BINS) > max(v[b] for b in SLEEP_BINS), v
    # one location: the sampler thread is not one
    by_loc = histogram(cpu_exps["default"], "cpu", "--by", "location")
    assert len({r["location"] for r in by_loc}) == 1


def test_compute_counts_the_sleep_as_computing(cpu_exps):
    rows = histogram(cpu_exps["default"], "compute")
    assert "source" not in rows[0]
    v = values(rows)
    for b in SPIN_BINS + SLEEP_BINS:
        assert v[b] >= 0.9, (b, v)


def test_without_samples_cpu_is_compute_and_says_so(cpu_exps):
    rows = histogram(cpu_exps["off"], "cpu")
    assert {r["source"] for r in rows} == {"states"}
    assert values(rows) == values(histogram(cpu_exps["off"], "compute"))
    text = plx("histogram", cpu_exps["off"], "--metric", "cpu", "--bins", "9").stdout
    assert "source: trace states" in text
    text = plx("histogram", cpu_exps["default"], "--metric", "cpu", "--bins", "9").stdout
    assert "source: CPU samples" in text.splitlines()[1]


def test_cpu_sample_option_is_checked(cpu_exps, tmp_path):
    cp = plx("run", "-o", tmp_path / "x", "--cpu-sample", "-1", "--", "true", check=False)
    assert cp.returncode == 2
