"""Sessions of several applications (IPS-2's multi-application support): plx run --session
--app, the session file, plx session list/add (comparison mode and its time shift), --app on
the reports (logical view) and the physical view of every application, ranks of several MPI
applications kept apart."""

import json
import re
import subprocess
import time

import pytest

from conftest import ROOT, _fail_message, clean_env, info, plx, run
import test_mpi as mpi
from test_mpi import mpi_programs  # noqa: F401 (the fixture)

HEAT = ROOT / "examples" / "threads" / "heat.c"


@pytest.fixture(scope="module")
def heat(tmp_path_factory):
    out = tmp_path_factory.mktemp("session-bin") / "heat"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-cc"), "-O1", "-pthread", str(HEAT), "-o", str(out)],
        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return out


def session_run(session, app, *command, opts=()):
    cp = plx("run", "--session", session, "--app", app, *opts, "--", *command, check=False)
    assert cp.returncode == 0, _fail_message(cp)
    return cp


def session_lines(session):
    text = (session / "session.txt").read_text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def list_rows(session):
    """`plx session list` as {app: (mode, processes, ranks, shift_s)}."""
    lines = plx("session", "list", session).stdout.splitlines()
    assert lines[0].split() == ["application", "mode", "processes", "ranks", "shift_s", "directory"]
    out = {}
    for line in lines[1:]:
        name, mode, procs, ranks, shift, _ = line.split(None, 5)
        out[name] = (mode, int(procs), int(ranks), float(shift))
    return out


def test_two_applications_one_session(tmp_path, heat):
    s = tmp_path / "S"
    session_run(s, "left", heat, "2")
    session_run(s, "right", heat, "3")
    # the same application again (a second process of it, started apart) joins its directory
    session_run(s, "left", heat, "2")
    assert session_lines(s) == ["app left left live", "app right right live"]
    assert len(list((s / "left").glob("*.*/process.plx"))) == 2
    assert list_rows(s) == {"left": ("live", 2, 0, 0.0), "right": ("live", 1, 0, 0.0)}
    # the directory alone, as every command takes it, lists the session (was clap's
    # "unrecognized subcommand")
    assert plx("session", s).stdout == plx("session", "list", s).stdout
    text = info(s).stdout
    assert "session of 2 application(s): left, right" in text
    assert text.count("  application left") == 2 and text.count("  application right") == 1
    # the logical view of one application
    only = plx("info", s, "--app", "right").stdout
    assert "1 process image(s)" in only and "application left" not in only
    # heat N: main + N workers
    assert re.search(r"1 process image\(s\), 4 thread\(s\)", only), only


def test_unknown_application_and_bad_session_file(tmp_path, heat):
    s = tmp_path / "S"
    session_run(s, "a", heat, "2")
    cp = plx("info", s, "--app", "nope", check=False)
    assert cp.returncode == 2
    assert 'no application named "nope": the session has a' in cp.stderr
    cp = plx("info", tmp_path / "S" / "a", "--app", "a", check=False)
    assert cp.returncode == 2 and "this is one experiment, not a session" in cp.stderr
    (s / "session.txt").write_text("app a a live\napp b\n")
    cp = plx("info", s, check=False)
    assert cp.returncode == 2
    assert "%s: line 2: expected 'app NAME DIR [live|compare]', found 'app b'" % (s / "session.txt") \
        in cp.stderr
    (s / "session.txt").write_text("app a a live\napp gone nowhere live\n")
    cp = plx("info", s, check=False)
    assert cp.returncode == 2
    assert "%s: application 'gone': %s: No such file or directory" % (s / "session.txt", s / "nowhere") \
        in cp.stderr, cp.stderr
    (s / "session.txt").write_text("app a a live\napp b a live\n")
    cp = plx("info", s, check=False)
    assert cp.returncode == 2
    assert "applications 'a' and 'b' are the same directory" in cp.stderr, cp.stderr
    (s / "session.txt").write_text("app a/b a live\n")
    cp = plx("info", s, check=False)
    assert "line 1: application name 'a/b': use letters, digits" in cp.stderr, cp.stderr
    (s / "session.txt").write_text("app a a sometimes\n")
    cp = plx("info", s, check=False)
    assert "line 1: unknown mode 'sometimes' (live or compare)" in cp.stderr


def test_run_options_checked(tmp_path, heat):
    cp = plx("run", "--app", "x", "--", heat, check=False)
    assert cp.returncode == 2 and "--session" in cp.stderr
    cp = plx("run", "--session", tmp_path / "S", "--app", "a/b", "--", heat, check=False)
    assert cp.returncode == 2
    assert "application name 'a/b': use letters, digits" in cp.stderr
    assert not (tmp_path / "S" / "a").exists()
    cp = plx("run", "--session", tmp_path / "S", "-o", tmp_path / "o", "--", heat, check=False)
    assert cp.returncode == 2 and "cannot be used with" in cp.stderr


def test_default_application_name(tmp_path, heat):
    s = tmp_path / "S"
    cp = plx("run", "--session", s, "--", heat, "2")
    assert "experiment written to %s" % (s / "heat") in cp.stderr
    assert session_lines(s) == ["app heat heat live"]


def test_comparison_mode_shift(tmp_path, heat):
    old = tmp_path / "old"
    run(old, heat, "2")
    time.sleep(1.2)
    s = tmp_path / "S"
    session_run(s, "new", heat, "2")
    cp = plx("session", "add", s, old, "--app", "old")
    assert "old added (compare)" in cp.stdout
    assert session_lines(s)[1] == "app old %s compare" % old.resolve()
    rows = list_rows(s)
    assert rows["new"] == ("live", 1, 0, 0.0)
    mode, procs, _, shift = rows["old"]
    assert mode == "compare" and procs == 1
    # the old run started at least 1.2 s before the new one: shifted forward onto its start
    assert 1.2 <= shift < 120, shift
    assert re.search(r"session of 2 application\(s\): new, old \(compare, shifted \+\d+\.\d{6} s\)",
                     info(s).stdout)
    cp = plx("session", "add", s, old, "--app", "old")
    assert "old is in the session already (compare)" in cp.stdout
    assert len(session_lines(s)) == 2
    # the same name twice, a session as the experiment, a directory that is no experiment
    cp = plx("session", "add", s, old, "--app", "new", check=False)
    assert cp.returncode == 2 and "application 'new' is already in the session" in cp.stderr
    cp = plx("session", "add", tmp_path / "T", s, "--app", "x", check=False)
    assert cp.returncode == 2 and "is a session; add its applications' directories" in cp.stderr
    (tmp_path / "empty").mkdir()
    cp = plx("session", "add", s, tmp_path / "empty", "--app", "e", check=False)
    assert cp.returncode == 2 and "not a Parallax experiment" in cp.stderr
    cp = plx("session", "list", old, check=False)
    assert cp.returncode == 2 and "not a session" in cp.stderr


@pytest.mark.usefixtures("open_mpi")
def test_two_mpi_applications_keep_their_ranks_apart(tmp_path, mpi_programs):
    pingpong = mpi_programs.get("pingpong")
    s = tmp_path / "S"
    for app, iterations in (("pp1", 20), ("pp2", 30)):
        mpi.mpirun(2, mpi.PLX, "run", "--session", s, "--app", app, "--trace", "--",
                   pingpong, iterations, 64)
    rows = list_rows(s)
    assert rows == {"pp1": ("live", 2, 2, 0.0), "pp2": ("live", 2, 2, 0.0)}
    # physical view: the second application's ranks follow the first's
    both = mpi.comm_matrix(s)
    assert both == {(0, 1): (20, 20 * 64), (1, 0): (20, 20 * 64),
                    (2, 3): (30, 30 * 64), (3, 2): (30, 30 * 64)}
    assert mpi.comm_matrix(s, "--by", "thread") == {
        ("0.0", "1.0"): (20, 20 * 64), ("1.0", "0.0"): (20, 20 * 64),
        ("2.0", "3.0"): (30, 30 * 64), ("3.0", "2.0"): (30, 30 * 64)}
    # logical view: one application's ranks only
    assert mpi.comm_matrix(s, "--app", "pp2") == {(0, 1): (30, 30 * 64), (1, 0): (30, 30 * 64)}
    text = info(s).stdout
    assert "messages in the traces: 100 matched, 0 sends never received" in text
    # the logical trees (Program) beside the physical one (Machine)
    text = plx("hierarchy", s).stdout
    program = text[text.index("Program\n"):text.index("Machine\n")]
    assert re.fullmatch(r"Program\n  pp1\n    (\S+)\n      0\n        pp1:0.0\n      1\n"
                        r"        pp1:1.0\n  pp2\n    \1\n      0\n        pp2:0.0\n      1\n"
                        r"        pp2:1.0\n\n", program), program
    machine = text[text.index("Machine\n"):text.index("Sync\n")]
    # processes named APP:RANK, as every command names them
    assert [l.strip() for l in machine.splitlines() if re.fullmatch(r"\s+pp\d:\d", l)] == [
        "pp1:0", "pp1:1", "pp2:0", "pp2:1"]

    # the applications' worlds told apart in the physical view, only its own in the logical one
    assert "    pp1:MPI_COMM_WORLD\n" in text and "    pp2:MPI_COMM_WORLD\n" in text, text
    assert "MPI: 2 rank(s) of a world of 2, 3 communicator(s)" in plx("info", s, "--app", "pp2").stdout

    def total(focus):
        out = plx("query", s, "--metric", "messages", "--focus", focus).stdout
        return int(re.search(r"(?m)^total\s+(\d+)", out).group(1))

    assert total("program=/pp1") + total("program=/pp2") == total("machine=/")
    assert total("program=/pp1") > 0 and total("program=/pp2") > total("program=/pp1")
    # exports of one application
    text = plx("export", s, "--app", "pp2", "--format", "text", "-o", "-").stdout
    locations = re.findall(r"(?m)^#   (\S+) \"[^\"]*\" \(pid \d+ on ", text)
    assert locations == ["pp2:0.0", "pp2:1.0"]
    assert len(re.findall(r"(?m) send ", text)) == 60


@pytest.mark.usefixtures("open_mpi")
def test_launcher_is_no_location_of_the_program(tmp_path, mpi_programs):
    """`plx run -- mpirun ...` measures the launcher too; with nothing instrumented in it (its
    trace holds at most its own lock events) it is no location of the trace analyses."""
    pingpong = mpi_programs.get("pingpong")
    exp = tmp_path / "exp"
    run(exp, *mpi.mpirun_cmd(2, pingpong, 20, 64), opts=("--trace",))
    assert "not measured (no instrumented code)" in info(exp).stdout
    rows = plx("display", exp, "--kind", "utilization", "--format", "csv").stdout.splitlines()
    assert [r.split(",")[0] for r in rows[1:] if not r.startswith("total")] == ["0.0", "1.0"]
    doc = json.loads(plx("critical-path", exp, "--level", "thread", "--format", "json").stdout)
    cpu = [i["name"] for i in doc["items"] if i["kind"] == "cpu"]
    assert cpu and all("mpirun" not in n and "orterun" not in n for n in cpu), cpu
    assert doc["total_length_s"] <= doc["elapsed_s"] * 1.0001
    # procedure level: the rows add up to the path, and the time inside MPI_Init after the last
    # rank arrived is the collective's (Sync), not CPU of whichever rank arrived last
    doc = json.loads(plx("critical-path", exp, "--format", "json").stdout)
    assert sum(i["time_s"] for i in doc["items"]) == pytest.approx(doc["total_length_s"], abs=2e-6)
    names = {i["name"]: i["kind"] for i in doc["items"]}
    assert "MPI_Init" not in names and "MPI_Finalize" not in names, names
    assert names.get("Sync: MPI_Init on MPI_COMM_WORLD") == "sync", names


@pytest.mark.usefixtures("open_mpi")
def test_comm_in_a_phase(tmp_path, mpi_programs):
    pingpong = mpi_programs.get("pingpong")
    exp = tmp_path / "exp"
    mpi.plx_under_mpirun(2, exp, pingpong, 50, 64, opts=("--trace",))
    whole = mpi.comm_matrix(exp)
    assert whole == {(0, 1): (50, 50 * 64), (1, 0): (50, 50 * 64)}
    # a window over everything holds every message; one before the exchange none
    assert mpi.comm_matrix(exp, "--phase", "0:") == whole
    cp = plx("comm", exp, "--phase", ":0.000000001")
    assert "no MPI message of %s was sent inside the window" % exp in cp.stdout
    # the first half and the second half of the run add up to the whole
    total = float(json.loads(plx("critical-path", exp, "--format", "json").stdout)["elapsed_s"])
    half = "%.9f" % (total / 2)
    first = mpi.comm_matrix(exp, "--phase", ":" + half)
    second = mpi.comm_matrix(exp, "--phase", half + ":")
    for pair in whole:
        a, b = first.get(pair, (0, 0)), second.get(pair, (0, 0))
        assert (a[0] + b[0], a[1] + b[1]) == whole[pair]
    # plx query in a window: the two halves add up to the whole run's count from the trace
    def query(phase):
        out = plx("query", exp, "--metric", "messages", "--phase", phase).stdout
        assert "(from the trace)" in out, out
        return int(float(re.search(r"(?m)^total\s+(\S+)", out).group(1)))

    assert query(":" + half) + query(half + ":") == query("0:") >= 100
    for cmd in (("histogram", exp, "--metric", "compute"), ("display", exp, "--kind", "queue")):
        cp = plx(*cmd, "--bins", "100001", check=False)
        assert cp.returncode == 2 and "--bins 100001: at most 100000 bins" in cp.stderr, cp.stderr
    cp = plx("comm", exp, "--phase", "nosuch", check=False)
    assert cp.returncode == 2 and 'no phase region named "nosuch"' in cp.stderr
