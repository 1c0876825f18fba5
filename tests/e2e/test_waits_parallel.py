"""plx waits --parallel: the wait-state analysis as an MPI job (`mpirun -np N plx waits
--parallel DIR`), on a measured job of 64 ranks (programs/waits_scale.c, oversubscribed on the
machine's cores) with a sleep of D s in a named delay_* function on chosen ranks before a send,
a receive, a barrier, an allreduce and a bcast; under Open MPI and MPICH, each analysing its own
run with 4 analysis processes (each a block of 16 measured ranks: every partner pair of the
point-to-point scenario crosses blocks).

Checked: the parallel output is the serial output byte for byte (text, CSV, JSON, --phase,
--causes; 3 and 4 analysis processes), the injected waits are on exactly the ranks and call
paths the program makes them, each about D; with --causes every analysis process finds the
causes of its own block's waits (--stats: none computes them alone), the late ranks' accounts
sent point to point; and without mpirun --parallel is a clear error."""

import csv
import io
import subprocess

import pytest

from conftest import PLX, _fail_message, clean_env, plx
from conftest import PROGRAMS
from mpi_impls import IMPLS
from test_waits import entries, enter, same

D = 0.5
NP = 64
ANALYSIS_NP = 4


def injected(waits):
    """Waits made by the sleep of D s: 64 ranks share 2 cores (with MPICH's ranks polling), so
    the sleeper may wake up to ~0.3 s late and a waiter may arrive up to ~0.4 s after another:
    each wait is positive and below D + 0.5 s, and the longest (the earliest arrival's) is at
    least 0.9 D; a lone waiter (point to point) has no earlier arrival beside it, so it is at
    least D / 2. Each wait's exact value is checked against the trace's entries."""
    if len(waits) == 1:
        # one waiter (point to point): it too may arrive late, by up to ~0.4 s under MPICH
        return 0 < waits[0] <= D + 0.5 and waits[0] >= D * 0.5
    return all(0 < x <= D + 0.5 for x in waits) and D * 0.9 <= max(waits)


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
    # the blocks were analysed in parallel (not process 0 alone, as when the clock condition
    # needs the serial merge's repair)
    assert "alone" not in cp.stderr, cp.stderr
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
    for args in (["--format", "csv"], [], ["--format", "json"],
                 ["--phase", "0.5:2.0", "--format", "json"]):
        assert parallel(impl, exp, *args) == plx("waits", exp, *args).stdout, args


def test_parallel_finds_the_injected_waits_at_64_ranks(job):
    impl, exp = job
    out = parallel(impl, exp, "--format", "csv")
    everyone = set(range(NP))
    ent = entries(exp)
    # (pattern, call path, the late rank and its call path, the waiting ranks)
    p2p = "main => scenario_p2p => "
    want = [
        ("late_sender", p2p + "MPI_Recv", (5, p2p + "MPI_Send"), {40}),
        ("late_receiver", p2p + "MPI_Ssend", (50, p2p + "MPI_Recv"), {20}),
        ("wait_at_barrier", "main => scenario_barrier => MPI_Barrier", 63, everyone - {63}),
        ("wait_at_nxn", "main => scenario_allreduce => MPI_Allreduce", 17, everyone - {17}),
        ("late_broadcast", "main => scenario_bcast => MPI_Bcast", 33, everyone - {33}),
    ]
    for pattern, callpath, late, ranks in want:
        got = waits_at(out, pattern, callpath)
        # exactly the waiting ranks, each from its entry to the late rank's, about D
        assert sorted(got) == sorted(ranks), (pattern, got)
        late_rank, late_path = late if isinstance(late, tuple) else (late, callpath)
        for r, x in got.items():
            assert same(x, enter(ent, late_rank, late_path) - enter(ent, r, callpath)), \
                (pattern, r, x)
        assert injected(list(got.values())), (pattern, got)
    # nothing else of the scenarios waited, but each late rank's injected delay: a nanosleep in
    # nap(), a wait with no partner (`sleep`)
    naps = set()
    for r in csv.DictReader(io.StringIO(out)):
        if r["pattern"] == "sleep":
            assert r["callpath"].endswith(" => nap => nanosleep") and injected([float(r["wait_s"])]), r
            naps.add(int(r["location"].split(".")[0]))
        elif "scenario_" in r["callpath"]:
            assert (r["pattern"], r["callpath"]) in {(w[0], w[1]) for w in want}, r
    assert naps == {5, 50, 63, 17, 33}, naps


def stats(impl, exp, *args, np=ANALYSIS_NP):
    """(stdout, [per analysis process: (own events, cause rows, items sent)]) of --stats."""
    cp = subprocess.run(impl.mpirun_cmd(np, PLX, "waits", "--parallel", "--stats", exp, *args),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    assert "alone" not in cp.stderr, cp.stderr
    got = []
    for line in cp.stderr.splitlines():
        if line.startswith("plx: process "):
            w = line.split()
            got.append((int(w[3]), int(w[14]), int(w[-3])))
    assert len(got) == np, cp.stderr
    return cp.stdout, got


def test_parallel_causes_and_one_application_are_the_serial_ones(job):
    impl, exp = job
    for args in (["--format", "csv"], [], ["--format", "json"]):
        want = plx("waits", exp, "--causes", *args).stdout
        for np in (3, 4):
            out, st = stats(impl, exp, "--causes", *args, np=np)
            assert out == want, (args, np)
            # every block (of 21 or 22, or of 16 ranks) replayed its own events and found the
            # causes of its own ranks' waits (each rank waits at the barrier, the allreduce or
            # the bcast), the late ranks' accounts coming from their blocks as items
            assert all(e > 0 and c > 0 and i > 0 for e, c, i in st), (np, st)
    # more analysis processes than fit evenly: blocks of 21, 21 and 22 ranks
    assert parallel(impl, exp, "--format", "csv", np=3) == \
        plx("waits", exp, "--format", "csv").stdout


def test_parallel_without_mpirun_is_an_error(job):
    _, exp = job
    cp = plx("waits", "--parallel", exp, check=False)
    assert cp.returncode == 2, _fail_message(cp)
    assert "mpirun" in cp.stderr and cp.stdout == ""
