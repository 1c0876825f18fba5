"""plx run when the user errs or names things oddly: a program or argument that is not UTF-8 is
measured and passed on byte for byte; a command that does not start leaves nothing behind and
--force replaces an experiment; an unknown --counters event or a --probe glob matching nothing
stops plx run before the program runs, with what is near."""

import os
import re
import subprocess
import time

import pytest

from conftest import PLX, PLX_CC, clean_env, plx, report_csv, calls

ARGS_C = r"""
#include <stdio.h>
int work(int n) { return n + 1; }
int main(int argc, char **argv)
{
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += work(i);
    for (int i = 0; i < argc; i++) {
        for (const char *p = argv[i]; *p; p++)
            printf("%02x", (unsigned char)*p);
        printf("\n");
    }
    return s == 6 ? 0 : 1;
}
"""

SOLVE_C = r"""
#include <stdio.h>
__attribute__((noinline)) int solve(int n) { int s = 0; for (int i = 0; i < n; i++) s += i ^ n; return s; }
int main(void) { int s = 0; for (int i = 0; i < 5; i++) s += solve(100 + i); printf("ran %d\n", s); return 0; }
"""


def compile_c(tmp_path, text, out, cc):
    src = tmp_path / "src.c"
    src.write_text(text)
    cp = subprocess.run([str(cc), "-O1", str(src), "-o", out], capture_output=True, env=clean_env())
    assert cp.returncode == 0, cp.stderr
    return out


def plx_bytes(*args, cwd):
    return subprocess.run([bytes(PLX), *args], capture_output=True, env=clean_env(), cwd=cwd,
                          timeout=120)


def test_non_utf8_program_and_arguments_are_measured(tmp_path):
    name = b"prog\xff\xfe"
    compile_c(tmp_path, ARGS_C, os.fsencode(tmp_path) + b"/" + name, PLX_CC)
    arg = b"caf\xe9 \xc3("
    cp = plx_bytes(b"run", b"-o", b"e", b"--", b"./" + name, arg, b"plain", cwd=tmp_path)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.decode().split() == [(b"./" + name).hex(), arg.hex(), b"plain".hex()]
    assert cp.stderr == b"plx: experiment written to e\n"
    rows = report_csv(tmp_path / "e")
    assert calls(rows, "work") == 3 and calls(rows, "main") == 1
    # the default directory keeps the name's bytes
    cp = plx_bytes(b"run", b"--", b"./" + name, cwd=tmp_path)
    assert cp.returncode == 0, cp.stderr
    made = [n for n in os.listdir(os.fsencode(tmp_path)) if n.startswith(b"plx-" + name + b"-")]
    assert len(made) == 1 and len(made[0]) == len(b"plx-" + name + b"-YYYYMMDD-HHMMSS")


def test_unstarted_run_leaves_nothing_and_the_rerun_works(tmp_path):
    exe = compile_c(tmp_path, ARGS_C, tmp_path / "app", PLX_CC)
    filt = tmp_path / "f.txt"
    filt.write_text("include file *src.c\n")   # a file rule: plx run writes source-files
    cp = plx("run", "-o", "a/b/e", "--filter", filt, "--monitor", "cpu", "--", "./apq",
             check=False, cwd=tmp_path)
    assert cp.returncode == 127
    assert cp.stderr == "plx: ./apq: No such file or directory (os error 2)\n"
    assert not (tmp_path / "a").exists()
    # a directory that was there is kept, empty or with what it held
    (tmp_path / "e").mkdir()
    cp = plx("run", "-o", "e", "--", "./apq", check=False, cwd=tmp_path)
    assert cp.returncode == 127
    assert os.listdir(tmp_path / "e") == []
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "notes").write_text("mine")
    cp = plx("run", "-o", "n", "--append", "--", "./apq", check=False, cwd=tmp_path)
    assert cp.returncode == 127
    assert os.listdir(tmp_path / "n") == ["notes"]
    cp = plx("run", "-o", "e", "--", exe, cwd=tmp_path)
    assert cp.stderr == "plx: experiment written to e\n"
    # in a session: the application it listed is taken out again (every reader of the session
    # failed on its missing directory), the session's other applications kept
    cp = plx("run", "--session", "s", "--", "./apq", check=False, cwd=tmp_path)
    assert cp.returncode == 127 and not (tmp_path / "s").exists()
    plx("run", "--session", "s", "--", exe, cwd=tmp_path)
    cp = plx("run", "--session", "s", "--", "./apq", check=False, cwd=tmp_path)
    assert cp.returncode == 127
    assert (tmp_path / "s" / "session.txt").read_text().splitlines()[1:] == ["app app app live"]
    plx("info", tmp_path / "s")
    # not executable: 126, and nothing left either
    cp = plx("run", "-o", "x", "--", filt, check=False, cwd=tmp_path)
    assert cp.returncode == 126 and not (tmp_path / "x").exists()


def test_force_replaces_an_experiment_of_plx_run_only(tmp_path):
    exe = compile_c(tmp_path, ARGS_C, tmp_path / "app", PLX_CC)
    plx("run", "-o", "e", "--", exe, cwd=tmp_path)
    first = sorted(p for p in os.listdir(tmp_path / "e") if not p.startswith("."))
    cp = plx("run", "-o", "e", "--", exe, check=False, cwd=tmp_path)
    assert cp.returncode == 2
    assert "give another -o, replace it with --force, or add this run to it with --append" \
        in cp.stderr
    cp = plx("run", "-o", "e", "--force", "--", exe, cwd=tmp_path)
    assert cp.stderr == "plx: experiment written to e\n"
    now = sorted(p for p in os.listdir(tmp_path / "e") if not p.startswith("."))
    assert len(now) == 1 and now != first
    assert calls(report_csv(tmp_path / "e"), "work") == 3
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    cp = plx("run", "-o", "mine", "--force", "--", exe, check=False, cwd=tmp_path)
    assert cp.returncode == 2
    assert cp.stderr == ("plx: mine: not an experiment directory of plx run (no .plx-run in "
                         "it): --force replaces only those; give another -o or remove it "
                         "yourself\n")
    assert os.listdir(tmp_path / "mine") == ["thesis.tex"]
    cp = plx("run", "-o", "e", "--force", "--append", "--", exe, check=False, cwd=tmp_path)
    assert cp.returncode == 2 and "cannot be used with" in cp.stderr


@pytest.fixture
def solver(tmp_path):
    """A program built with plain gcc (no hooks) that prints once it has run."""
    return compile_c(tmp_path, SOLVE_C, tmp_path / "solver", "gcc")


def refused_before_running(tmp_path, *opts):
    cp = plx("run", "-o", "e", *opts, "--", "./solver", check=False, cwd=tmp_path)
    assert cp.returncode == 2
    assert cp.stdout == ""                       # the program did not run
    assert not (tmp_path / "e").exists()
    return cp.stderr


def test_unknown_counter_is_refused_before_the_program_runs(solver, tmp_path):
    assert refused_before_running(tmp_path, "--counters", "task-clock,cycels") == (
        "plx: --counters: unknown counter 'cycels' (did you mean cycles?; "
        "docs/formats/counters.md lists the names)\n")
    assert refused_before_running(tmp_path, "--counters", "flops") == (
        "plx: --counters: unknown counter 'flops' (docs/formats/counters.md lists the names)\n")


def test_probe_glob_matching_nothing_is_refused_before_the_program_runs(solver, tmp_path):
    assert refused_before_running(tmp_path, "--probe", "solv") == (
        "plx: --probe 'solv': no function of solver matches it (did you mean solve?)\n")
    assert refused_before_running(tmp_path, "--probe", "solve,libc.so:mallocc") == (
        "plx: --probe 'libc.so:mallocc': no function of libc.so.6 matches it "
        "(did you mean malloc?)\n")
    assert refused_before_running(tmp_path, "--probe", "zzz*") == (
        "plx: --probe 'zzz*': no function of solver matches it\n")
    cp = plx("run", "-o", "e", "--probe", "solv*", "--", "./solver", cwd=tmp_path)
    assert cp.stdout.startswith("ran ")
    assert calls(report_csv(tmp_path / "e"), "solve") == 5


def test_mistyped_function_gets_did_you_mean(solver, tmp_path):
    plx("run", "-o", "e", "--trace", "--probe", "solve", "--", "./solver", cwd=tmp_path)
    cp = plx("histogram", tmp_path / "e", "--metric", "calls:sovle", check=False)
    assert cp.returncode == 2
    assert cp.stderr == "plx: %s: no function named \"sovle\" (did you mean solve?)\n" % (
        tmp_path / "e")


def test_mistyped_function_in_a_focus_gets_did_you_mean(tmp_path):
    exe = compile_c(tmp_path, ARGS_C, tmp_path / "app", PLX_CC)
    plx("run", "-o", "e", "--", exe, cwd=tmp_path)
    for focus, under, valid in (("code=/wrok", "code=/", "app"),
                                ("code=/app/wrok", "code=/app/", "src.c")):
        cp = plx("query", tmp_path / "e", "--metric", "calls", "--focus", focus, check=False)
        assert cp.returncode == 2
        assert cp.stderr == ('plx: focus %s: nothing named "wrok" under %s (did you mean '
                             'work?): valid are %s\n' % (focus, under, valid))


def test_force_refuses_a_directory_whose_run_is_still_going(programs, tmp_path):
    """plx run --force -o DIR while another job's program still ran into DIR: the running
    job's process directory was removed under it (its plx run then said "experiment written"
    and exited 0 over nothing), or, caught before its program had started, both runs were mixed
    in one experiment. Now --force refuses (exit 2) while that run goes on; the first run's 10
    calls of work() are kept; once it has ended, --force replaces it."""
    prog = programs.get("room_later.c", "-O0")
    out = tmp_path / "exp"
    first = subprocess.Popen([PLX, "run", "-o", str(out), "--", str(prog), "10"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=clean_env())
    for _ in range(3000):
        if any(d.is_dir() for d in out.glob("*.*")):
            break
        time.sleep(0.01)
    def forced():
        return subprocess.run([PLX, "run", "--force", "-o", str(out), "--", str(prog), "20"],
                              input="x", capture_output=True, text=True, env=clean_env(),
                              timeout=120)

    second = forced()
    assert second.returncode == 2, second.stderr
    assert second.stdout == ""
    assert re.fullmatch(r"plx: %s: the run it holds is still going \(process \d+\): --force "
                        r"replaces only a run that has ended; give another -o, or wait for it "
                        r"to end\n" % re.escape(str(out)), second.stderr), second.stderr
    stdout, stderr = first.communicate("x", timeout=120)
    assert first.returncode == 0, stderr
    assert stdout == "room_later: 10\n"
    assert stderr == "plx: experiment written to %s\n" % out
    assert calls(report_csv(out), "work") == 10
    third = forced()
    assert third.returncode == 0, third.stderr
    assert calls(report_csv(out), "work") == 20
