"""The bytes of MPI collectives (one rule in the runtime, plx_ext_coll_bytes, shared by the PMPI
wrappers and MPJ Express): programs/coll_bytes.c on 4 ranks, on Open MPI and on MPICH, each
rank's bytes sent and received per collective call from the text export, against the figures
MPI's semantics give for the program's arguments (ints of 4 bytes)."""

import re
import subprocess

import pytest

from conftest import PLX, PROGRAMS, _fail_message, clean_env, plx
from mpi_impls import IMPLS

RANKS = 4


def expected():
    """{rank: [(routine, root, sent, received)] in call order}."""
    want = {}
    for r in range(RANKS):
        part = 4 * (r + 1)  # the v forms: rank r contributes r + 1 ints, counts 1 2 3 4 (40 B)
        want[r] = [
            ("MPI_Barrier", "-", 0, 0),
            ("MPI_Bcast", "1", 16 if r == 1 else 0, 0 if r == 1 else 16),
            ("MPI_Reduce", "2", 8, 8 if r == 2 else 0),
            ("MPI_Allreduce", "-", 12, 12),
            ("MPI_Scan", "-", 4, 4),
            ("MPI_Exscan", "-", 20, 20),
            ("MPI_Gather", "0", 8, 32 if r == 0 else 0),
            ("MPI_Gather", "3", 0 if r == 3 else 8, 32 if r == 3 else 0),  # in place at the root
            ("MPI_Gatherv", "0", part, 40 if r == 0 else 0),
            ("MPI_Scatter", "3", 48 if r == 3 else 0, 12),
            ("MPI_Scatterv", "1", 40 if r == 1 else 0, part),
            ("MPI_Allgather", "-", 8, 32),
            ("MPI_Allgather", "-", 0, 32),  # in place
            ("MPI_Allgatherv", "-", part, 40),
            ("MPI_Alltoall", "-", 16, 16),
            ("MPI_Alltoallv", "-", 40, 4 * part),
            ("MPI_Reduce_scatter", "-", 40, part),
            ("MPI_Reduce_scatter_block", "-", 32, 8),
            ("MPI_Iallreduce", "-", 8, 8),
        ]
    return want


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_collective_bytes_per_rank(name, tmp_path):
    impl = IMPLS[name]
    impl.require()
    exe = tmp_path / "coll_bytes"
    cp = subprocess.run([impl.mpicc, "-g", "-O1", str(PROGRAMS / "coll_bytes.c"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    cp = subprocess.run(impl.mpirun_cmd(RANKS, PLX, "run", "-o", out, "--trace", "--", exe),
                        capture_output=True, text=True, env=clean_env(), timeout=300)
    assert cp.returncode == 0, _fail_message(cp)
    assert "collectives ok" in cp.stdout
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    got = {}
    for m in re.finditer(r"^\s*\d+ (\d+)\.\d+ collective (MPI_\w+)\s+comm=\S+ root=(\S+) sent=(\d+) "
                         r"received=(\d+)$", text, re.M):
        if m.group(2) in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize"):
            continue
        got.setdefault(int(m.group(1)), []).append((m.group(2), m.group(3), int(m.group(4)),
                                                    int(m.group(5))))
    assert got == expected(), got
