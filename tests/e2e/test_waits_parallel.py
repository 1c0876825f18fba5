"""plx waits --parallel: the wait-state analysis as an MPI job (`mpirun -np N plx waits
--parallel DIR`), on a measured job of 64 ranks (programs/waits_scale.c, oversubscribed on the
machine's cores) with a sleep of D s in a named delay_* function on chosen ranks before a send,
a receive, a barrier, an allreduce and a bcast; under Open MPI and MPICH, each analysing its own
run with 4 analysis processes (each a block of 16 measured ranks: every partner pair of the
point-to-point scenario crosses blocks).

Checked: the parallel output is the serial output byte for byte (text, CSV, JSON, --causes and
--app), the injected waits are on exactly the ranks and call paths the program makes them,
each about D; and without mpirun --parallel is a clear error."""

import csv
import io
import subprocess

import pytest

from conftest import PLX, _fail_message, clean_env, plx
from conftest import PROGRAMS
from mpi_impls import IMPLS

D = 0.3
NP = 64
ANALYSIS_NP = 4


def injected(x):
    """A wait made by the sleep of D s: most of it (the sleeper may wake late on 2 cores shared
    by 64 ranks, a waiter may arrive late)."""
    return D * 0.5 <= x <= D * 2


@pytest.fixture(scope="module", params=sorted(IMPLS))
def job(request, tmp_path_factory):
    """(implementation, experiment) of waits_scale.c at 64 ranks."""
    impl = IMPLS[request.param]
    impl.require()
    tmp = tmp_path_factory.mktemp("waits-par")
    exe = tmp / "waits_scale"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", "-finstrument-functions",
                         str(PROGRAMS / "waits_scale.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    exp = tmp / "exp"
    cp = subprocess.run(impl.mpirun_cmd(NP, PLX, "run", "--trace", "-o", exp, "--", exe, D),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return impl, exp


def parallel(impl, exp, *args, np=ANALYSIS_NP):
    cp = subprocess.run(impl.mpirun_cmd(np, PLX, "waits", "--parallel", exp, *args),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return cp.stdout


def waits_at(out, pattern, callpath):
    """{rank: wait_s} of one pattern and call path in CSV output."""
    got = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["pattern"] == pattern and r["callpath"] == callpath:
            got[int(r["location"].split(".")[0])] = float(r["wait_s"])
    return got


def test_parallel_output_is_the_serial_output(job):
    impl, exp = job
    for args in (["--format", "csv"], [], ["--format", "json"]):
        assert parallel(impl, exp, *args) == plx("waits", exp, *args).stdout, args


def test_parallel_finds_the_injected_waits_at_64_ranks(job):
    impl, exp = job
    out = parallel(impl, exp, "--format", "csv")
    everyone = set(range(NP))
    want = [
        ("late_sender", "main => scenario_p2p => MPI_Recv", {40}),
        ("late_receiver", "main => scenario_p2p => MPI_Ssend", {20}),
        ("wait_at_barrier", "main => scenario_barrier => MPI_Barrier", everyone - {63}),
        ("wait_at_nxn", "main => scenario_allreduce => MPI_Allreduce", everyone - {17}),
        ("late_broadcast", "main => scenario_bcast => MPI_Bcast", everyone - {33}),
    ]
    for pattern, callpath, ranks in want:
        got = waits_at(out, pattern, callpath)
        # the late rank itself never waits there; every other one waited about D
        assert {r for r, x in got.items() if injected(x)} == ranks, (pattern, got)
    # nothing else of the scenarios waited
    for r in csv.DictReader(io.StringIO(out)):
        if "scenario_" in r["callpath"]:
            assert (r["pattern"], r["callpath"]) in {(p, c) for p, c, _ in want}, r


def test_parallel_causes_and_one_application_are_the_serial_ones(job):
    impl, exp = job
    assert parallel(impl, exp, "--causes", "--format", "csv") == \
        plx("waits", exp, "--causes", "--format", "csv").stdout
    # more analysis processes than fit evenly: blocks of 21, 21 and 22 ranks
    assert parallel(impl, exp, "--format", "csv", np=3) == \
        plx("waits", exp, "--format", "csv").stdout


def test_parallel_without_mpirun_is_an_error(job):
    _, exp = job
    cp = plx("waits", "--parallel", exp, check=False)
    assert cp.returncode == 2, _fail_message(cp)
    assert "mpirun" in cp.stderr and cp.stdout == ""
