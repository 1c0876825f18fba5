"""Fortran MPI under plx run: programs/waits_f.F90 (4 ranks) built with `use mpi` and with
`use mpi_f08`, under Open MPI and MPICH. The MPI library's own Fortran layer calls the C routines
(by their PMPI_ name in Open MPI's, and in MPICH's for the mpi_f08 routines without a buffer):
every routine the program calls is measured all the same, what MPI hands back to the program is
what it gets without Parallax, and the wait states of its injected delays are found and caused
as in C."""

import subprocess

import pytest

from conftest import PLX, PROGRAMS, _fail_message, clean_env, plx
from components import require_tools
from mpi_impls import IMPLS
from test_mpi import calls_by_rank, mpi_calls
from test_waits import caused, injected, rows, waits_at

D = 0.2
NP = 4
BINDINGS = {"use-mpi": [], "use-mpi-f08": ["-DF08"]}


def answers(stdout):
    """{rank: the program's line of what MPI gave back}, the polling count (timing) left out."""
    out = {}
    for line in stdout.splitlines():
        words = line.split()
        if words[:1] != ["rank"]:
            continue
        fields = dict(zip(words[::2], words[1::2]))
        out[int(fields.pop("rank"))] = fields
    assert sorted(out) == list(range(NP)), stdout
    return out


@pytest.fixture(scope="module", params=[(i, b) for i in sorted(IMPLS) for b in BINDINGS],
                ids="-".join)
def fortran_run(request, tmp_path_factory):
    """(the program's answers without Parallax, with it, the experiment) of one MPI and one
    binding."""
    impl_name, binding = request.param
    impl = IMPLS[impl_name]
    impl.require()
    require_tools(impl.mpifort, what="%s's Fortran compiler wrapper %s" % (impl.name, impl.mpifort))
    tmp = tmp_path_factory.mktemp("fortran-%s-%s" % request.param)
    exe = tmp / "waits_f"
    cp = subprocess.run([impl.mpifort, "-O0", "-g", "-finstrument-functions",
                         *BINDINGS[binding], str(PROGRAMS / "waits_f.F90"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    plain = subprocess.run(impl.mpirun_cmd(NP, exe, D), capture_output=True, text=True,
                           env=clean_env(), timeout=300)
    assert plain.returncode == 0, _fail_message(plain)
    exp = tmp / "exp"
    cp = subprocess.run(impl.mpirun_cmd(NP, PLX, "run", "--trace", "-o", exp, "--", exe, D),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    return answers(plain.stdout), answers(cp.stdout), exp


def test_mpi_hands_the_program_what_it_hands_it_without_parallax(fortran_run):
    plain, measured, _ = fortran_run
    for rank in range(NP):
        a, b = dict(plain[rank]), dict(measured[rank])
        assert int(b.pop("tests")) >= (1 if rank == 2 else 0), measured
        a.pop("tests")
        assert a == b, (rank, plain, measured)
    # the values themselves (the Waitany index is the library's: MPICH 4.0's mpi_f08 gives 0)
    assert measured[0]["source"] == "1" and measured[0]["index"] in ("0", "1")
    assert {r["total"] for r in measured.values()} == {"6"}
    assert measured[0]["gather"] == "3210" and measured[2]["row"] == "5"


def test_every_routine_the_program_calls_is_measured_on_every_rank(fortran_run):
    _, measured, exp = fortran_run
    every = {"MPI_Init": 1, "MPI_Barrier": 7, "MPI_Iallreduce": 1, "MPI_Wait": 1,
             "MPI_Comm_split": 1, "MPI_Comm_free": 3, "MPI_Bcast": 1, "MPI_Gather": 1,
             "MPI_Alltoall": 1, "MPI_Cart_create": 1, "MPI_Cart_sub": 1, "MPI_Allreduce": 1,
             "MPI_Sendrecv": 1, "MPI_Iprobe": 1, "MPI_Finalize": 1}
    own = {0: {"MPI_Irecv": 1, "MPI_Waitany": 1, "MPI_Probe": 1, "MPI_Recv": 1},
           1: {"MPI_Send": 2},
           2: {"MPI_Irecv": 1, "MPI_Test": int(measured[2]["tests"])},
           3: {"MPI_Isend": 1, "MPI_Waitall": 1}}
    got = calls_by_rank(exp)
    for rank in range(NP):
        assert mpi_calls(got[rank]) == {**every, **own[rank]}, (rank, mpi_calls(got[rank]))


def test_messages_per_rank_pair_are_the_programs(fortran_run):
    _, _, exp = fortran_run
    out = plx("comm", exp, "--format", "csv").stdout.splitlines()
    assert out[0] == "sender,receiver,messages,bytes"
    # 1 -> 0: the late send (100 integers) and the probed one (20); 3 -> 2: 50 integers; the
    # ring's Sendrecv: one integer to the next rank
    assert sorted(out[1:]) == ["0,1,1,4", "1,0,2,480", "1,2,1,4", "2,3,1,4", "3,0,1,4",
                               "3,2,1,200"], out


def test_waits_of_the_injected_delays_and_their_causes(fortran_run):
    _, _, exp = fortran_run
    table = rows(exp)
    top = "main => MAIN__ => "
    late = waits_at(table, "late_sender", top + "late_sender_any_ => MPI_Waitany")
    assert list(late) == [0] and injected(late[0], D), late
    nxn = waits_at(table, "wait_at_nxn", top + "iallreduce_ => MPI_Wait")
    assert sorted(nxn) == [0, 1, 2] and all(injected(w, D) for w in nxn.values()), nxn
    bar = waits_at(table, "wait_at_barrier", top + "split_barrier_ => MPI_Barrier")
    assert injected(bar[2], D), bar
    assert all(w < D / 4 for r, w in bar.items() if r != 2), bar
    bcast = waits_at(table, "late_broadcast", top + "late_bcast_ => MPI_Bcast")
    assert sorted(bcast) == [0, 2, 3] and all(injected(w, D) for w in bcast.values()), bcast
    causes = rows(exp, "--causes")
    for pattern, delay, waiting, late_rank in (("late_sender", "delay_send_", [0], 1),
                                               ("wait_at_nxn", "delay_iallreduce_", [0, 1, 2], 3),
                                               ("late_broadcast", "delay_bcast_", [0, 2, 3], 1)):
        c = caused(causes, pattern, delay)
        for w in waiting:
            assert injected(c.get((w, late_rank, "direct"), 0.0), D), (pattern, w, c)
    # the subcommunicator's barrier: rank 2 waited for rank 3 alone
    c = caused(causes, "wait_at_barrier", "delay_split_")
    assert injected(c.get((2, 3, "direct"), 0.0), D), c
