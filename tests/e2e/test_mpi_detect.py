"""plx run preloads the MPI wrappers for a program that links MPI only through another library
(app -> libexchange.so -> libmpi): MPI detection follows the needed-library closure."""

import subprocess

from conftest import PROGRAMS, _fail_message, clean_env, build, report_json
from test_mpi import comm_matrix, plx_under_mpirun


def test_mpi_through_a_library(open_mpi, tmp_path):
    lib = tmp_path / "libexchange.so"
    cp = subprocess.run(
        ["mpicc", "-g", "-fPIC", "-shared", str(PROGRAMS / "mpi_through_lib.c"), "-o", str(lib)],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, _fail_message(cp)
    app = build(["mpi_through_lib_main.c"], tmp_path / "app", "-O0", "-Wl,--no-as-needed",
                "-L%s" % tmp_path, "-lexchange", "-Wl,-rpath,%s" % tmp_path)
    needed = subprocess.run(["readelf", "-d", str(app)], capture_output=True, text=True).stdout
    assert "libmpi" not in needed and "libexchange.so" in needed
    out = tmp_path / "exp"
    plx_under_mpirun(2, out, app)
    # the wrappers were there: the one message of 4 bytes, both ranks known
    assert comm_matrix(out) == {(0, 1): (1, 4)}
    assert sorted(p["rank"] for p in report_json(out)["processes"]) == [0, 1]
