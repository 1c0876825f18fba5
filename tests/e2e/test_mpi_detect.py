"""plx run preloads the MPI wrappers for a program that links MPI only through another library
(app -> libexchange.so -> libmpi): MPI detection follows the needed-library closure."""

import subprocess

from conftest import PROGRAMS, _fail_message, clean_env, build, report_json, run
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


def _env_list_of_launcher(tmp_path, name, extra_env):
    """OMPI_MCA_mca_base_env_list as a launcher called NAME sees it under plx run --trace
    (a script of that name on PATH, printing it)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / name
    script.write_text("#!/bin/sh\nprintf '%s\\n' \"${OMPI_MCA_mca_base_env_list-unset}\"\n")
    script.chmod(0o755)
    env = {"PATH": "%s:%s" % (bindir, clean_env()["PATH"]), **extra_env}
    cp = run(tmp_path / ("exp-" + name), name, opts=("--trace",), env=env)
    return cp.stdout.strip()


def test_open_mpi_launcher_carries_plx_variables_to_every_host(tmp_path):
    """plx run -- mpirun: Open MPI's launcher is told to give plx run's variables to the ranks
    of every host (ssh starts the remote daemons with a fresh environment), after the user's;
    MPICH's Hydra passes the whole environment itself, and a program that is no launcher gets
    nothing. JAVA_TOOL_OPTIONS (the agent, given to every command: docs/java.md) is one of them,
    and PLX_JOB (the job's name, by which the ranks know whether all of them are measured)."""
    names = "JAVA_TOOL_OPTIONS;LD_PRELOAD;PLX_JOB;PLX_OUTPUT;PLX_TRACE"
    assert _env_list_of_launcher(tmp_path, "mpirun", {}) == names
    assert _env_list_of_launcher(tmp_path, "orterun", {"OMPI_MCA_mca_base_env_list": "FOO;BAR"}) \
        == "FOO;BAR;" + names
    assert _env_list_of_launcher(tmp_path, "mpiexec.openmpi", {
        "OMPI_MCA_mca_base_env_list_delimiter": ",", "OMPI_MCA_mca_base_env_list": "FOO"}) \
        == "FOO," + names.replace(";", ",")
    assert _env_list_of_launcher(tmp_path, "mpirun.mpich", {}) == "unset"
    assert _env_list_of_launcher(tmp_path, "not-a-launcher", {}) == "unset"


def test_open_mpi_launcher_with_x_gets_x_not_the_env_list(tmp_path):
    """mpirun -x NAME under plx run: Open MPI refuses -x mixed with mca_base_env_list ("Open MPI
    does not support mixing these two methods"), so plx run's variables go as more -x arguments,
    before the user's, and the list is left alone."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "mpirun"
    script.write_text("#!/bin/sh\nprintf '%s|%s\\n' \"${OMPI_MCA_mca_base_env_list-unset}\" \"$*\"\n")
    script.chmod(0o755)
    env = {"PATH": "%s:%s" % (bindir, clean_env()["PATH"])}
    cp = run(tmp_path / "exp", "mpirun", "-x", "FOO", "-np", "2", "./app", opts=("--trace",),
             env=env)
    assert cp.stdout.strip() == ("unset|-x JAVA_TOOL_OPTIONS -x LD_PRELOAD -x PLX_JOB -x PLX_OUTPUT "
                                 "-x PLX_TRACE -x FOO -np 2 ./app")
