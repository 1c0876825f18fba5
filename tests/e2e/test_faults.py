"""How a process ends: fatal signals, exit(), SIGKILL with a trace, fork and exec."""

import csv
import io
import os
import re
import signal as signals
import subprocess

import pytest

from conftest import (
    PLX,
    RUNTIME_REGIONS,
    clean_env,
    all_threads,
    calls,
    functions_of,
    info,
    info_thread_lines,
    location_rows,
    plx,
    process_dirs,
    report_csv,
    report_json,
    run,
)

KILL_CALLS = 10000
KILL_BUFFER = 4096  # --buffer 4K


@pytest.fixture(scope="module")
def fault_bin(programs):
    return programs.get("fault.c", "-O0")


@pytest.mark.parametrize(
    "how,status,signal,name",
    [("segv", 139, 11, "SIGSEGV"), ("abort", 134, 6, "SIGABRT")],
)
def test_fatal_signal(fault_bin, tmp_path, how, status, signal, name):
    out = tmp_path / how
    cp = run(out, fault_bin, how, status=status)
    assert "killed by signal %d (%s)" % (signal, name) in cp.stderr
    rows = report_csv(out)
    assert calls(rows, "work") == 5
    assert calls(rows, "main") == 1
    text = info(out).stdout
    assert re.search(r"^\s*ended\s+killed by signal %d \(%s\)\s*$" % (signal, name), text, re.M), text
    assert "warnings: none" in text
    doc = report_json(out)
    assert doc["warnings"] == []
    (proc,) = doc["processes"]
    assert proc["finished"] is True


def test_exit_status(fault_bin, tmp_path):
    out = tmp_path / "exit"
    cp = run(out, fault_bin, "exit", status=3)
    assert "killed by signal" not in cp.stderr
    rows = report_csv(out)
    assert calls(rows, "work") == 5
    assert calls(rows, "main") == 1
    text = info(out).stdout
    assert re.search(r"^\s*ended\s+exited with status 3\s*$", text, re.M), text
    assert "warnings: none" in text
    (line,) = info_thread_lines(text)
    assert line["profile"] == "recorded"


@pytest.fixture(scope="module")
def killed_exp(fault_bin, exp_root):
    out = exp_root / "killed"
    cp = run(out, fault_bin, "kill", opts=("--trace", "--buffer", "4K"), status=137)
    assert "killed by signal 9 (SIGKILL)" in cp.stderr
    return out


def test_sigkill_with_trace(killed_exp):
    cp = plx("report", killed_exp, "--format", "csv")
    assert cp.returncode == 0
    assert "did not finish" in cp.stderr
    rows = report_csv(killed_exp)
    work = calls(rows, "work")
    # every complete chunk was written; at most one buffer of events is lost
    # (a buffer of 4096 bytes holds fewer than 4096 / 8 event words, two per call)
    lower = KILL_CALLS - KILL_BUFFER // 8 // 2
    assert lower <= work <= KILL_CALLS, work
    # the profile is rebuilt from the trace: main still open at the last event
    assert calls(rows, "main") == 1
    doc = report_json(killed_exp)
    (proc,) = doc["processes"]
    assert proc["finished"] is False
    (thread,) = proc["threads"]
    assert thread["profile_source"] == "rebuilt"
    assert any("no ProcessEnd" in w["message"] for w in doc["warnings"])


def test_sigkill_info_warns(killed_exp):
    text = info(killed_exp).stdout
    assert re.search(r"^\s*ended\s+did not finish\b", text, re.M), text
    warnings = text.split("warnings:", 1)[1]
    assert re.search(r"process\.plx: no ProcessEnd record: the process did not finish", warnings)
    assert re.search(r"thread 0 has no ThreadProfile: profile rebuilt from its trace", warnings)
    (line,) = info_thread_lines(text)
    assert line["profile"] == "rebuilt from trace"
    assert line["trace_events"] >= 2 * (KILL_CALLS - KILL_BUFFER // 16)


@pytest.mark.parametrize("buffer", ["1M", "4K"])
def test_sigkill_keeps_every_traced_event(programs, tmp_path, buffer):
    """trace_kill.c: main and two threads call work() 1000 times each, then block; SIGKILL.
    Each thread's trace buffer is a file mapping the kernel keeps, so the trace holds every
    event written before the kill: the chunks written (with a 4 KiB buffer) and the rest."""
    prog = programs.get("trace_kill.c", "-O0", "-pthread")
    out = tmp_path / "killed"
    p = subprocess.Popen([str(PLX), "run", "--trace", "--buffer", buffer, "-o", str(out), "--",
                          str(prog)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env())
    line = p.stdout.readline()
    assert line.startswith("ready "), line + p.stderr.read()
    os.kill(int(line.split()[1]), signals.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    rows = report_csv(out)
    work = sorted((r["thread_name"], int(r["calls"])) for r in rows
                  if r["function"] == "work" and r["process"] != "all")
    assert work == [("main", 1000), ("worker", 1000), ("worker", 1000)]
    text = info(out).stdout
    recovered = re.findall(r"thread (\d): (\d+) trace event words recovered from live\.\d\.trace",
                           text)
    assert sorted(int(t) for t, _ in recovered) == [0, 1, 2], text
    assert all(int(n) > 0 for _, n in recovered)
    for line in info_thread_lines(text):
        assert line["profile"] == "rebuilt from trace"


def test_sigkill_without_trace(fault_bin, tmp_path):
    """Without a trace a SIGKILL still leaves the callpath tree: it lives in a file mapping
    (live.0.nodes) that the kernel keeps, and the reader recovers every call from it."""
    out = tmp_path / "killed-profile"
    run(out, fault_bin, "kill", status=137)
    cp = plx("report", out, "--format", "csv")
    assert "did not finish" in cp.stderr
    rows = report_csv(out)
    assert calls(rows, "work") == KILL_CALLS
    text = info(out).stdout
    assert re.search(r"^\s*ended\s+did not finish\b", text, re.M), text
    assert "profile recovered from live.0.nodes" in text, text


def test_fork(programs, tmp_path):
    prog = programs.get("fork.c", "-O0")
    out = tmp_path / "fork"
    run(out, prog)
    doc = report_json(out)
    procs = doc["processes"]
    assert len(procs) == 2
    assert len({p["pid"] for p in procs}) == 2
    by_pid = {p["pid"]: p for p in procs}
    (child,) = [p for p in procs if p["ppid"] in by_pid]
    (parent,) = [p for p in procs if p is not child]
    assert child["ppid"] == parent["pid"]
    assert all(p["finished"] for p in procs)
    for proc, mine, other, n in ((parent, "parent_work", "child_work", 2), (child, "child_work", "parent_work", 3)):
        (thread,) = proc["threads"]
        fns = functions_of(thread)
        assert fns[mine]["calls"] == n
        assert other not in fns
    # each process has its own directory
    assert len([d for d in out.iterdir() if (d / "process.plx").exists()]) == 2
    rows = report_csv(out)
    assert calls(rows, "parent_work") == 2
    assert calls(rows, "child_work") == 3
    locs = location_rows(rows)
    assert len(locs) == 2
    assert {p for p, _ in locs} == {str(parent["pid"]), str(child["pid"])}


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_forked_child_counts_its_own_locks(programs, tmp_path, mode):
    """A forked child's synchronization counts are its own: the parent's live file is not
    written by the child (5 locks before fork + 11 after for the parent, 7 for the child)."""
    prog = programs.get("fork_sync.c", "-O0")
    out = tmp_path / mode
    run(out, prog, opts=["--trace"] if mode == "trace" else [])
    by_pid = {p["pid"]: p for p in report_json(out)["processes"]}
    (child,) = [p for p in by_pid.values() if p["ppid"] in by_pid]
    cp = plx("report", out, "--sync", "--format", "csv")
    rows = [r for r in csv.DictReader(io.StringIO(cp.stdout))
            if r["kind"] == "mutex" and r["process"] != "all"]
    got = {int(r["process"]) == child["pid"]: (int(r["acquisitions"]), int(r["releases"])) for r in rows}
    assert len(rows) == 2, cp.stdout
    assert got == {False: (16, 16), True: (7, 7)}, cp.stdout


def test_exec_same_pid(programs, tmp_path):
    prog = programs.get("exec.c", "-O0")
    out = tmp_path / "exec"
    run(out, prog)
    (pdir,) = process_dirs(out)
    assert (pdir / "process.plx").exists() and (pdir / "process.1.plx").exists()
    doc = report_json(out)
    procs = doc["processes"]
    assert len(procs) == 2
    assert procs[0]["pid"] == procs[1]["pid"]
    images = {p["image"]: p for p in procs}
    assert set(images) == {0, 1}
    first = {k: v["calls"] for k, v in functions_of(images[0]["threads"][0]).items()}
    second = {k: v["calls"] for k, v in functions_of(images[1]["threads"][0]).items()}
    assert first.get("before_exec") == 2 and "after_exec" not in first
    assert second.get("after_exec") == 3 and "before_exec" not in second
    assert images[1]["argv"][1:] == ["second"]
    rows = report_csv(out)
    assert {r["process"] for r in rows} == {
        str(procs[0]["pid"]),
        "%d.1" % procs[0]["pid"],
        "all",
    }
    text = info(out).stdout
    assert re.search(r"^\s*ended\s+replaced by exec\(\)\s*$", text, re.M), text
    assert re.search(r"^\s*ended\s+exited with status 0\s*$", text, re.M), text
    assert len([t for _, t in all_threads(doc)]) == 2
    assert not (set(first) | set(second)) - RUNTIME_REGIONS - {"main", "before_exec", "after_exec"}


FIB_CALLS = 21891


def test_second_run_into_a_directory_is_refused(fib_bin, tmp_path):
    """Two unrelated runs in one directory would read as one experiment (2 × the calls)."""
    out = tmp_path / "exp"
    run(out, fib_bin)
    cp = plx("run", "-o", out, "--", fib_bin, check=False)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr.strip() == (
        "plx: %s: holds the run of another job (run %s); a second run there would mix both "
        "in one experiment: give another -o, replace it with --force, or add this run to it "
        "with --append"
        % (out, (out / ".plx-run").read_text().strip()[len("run "):])
    )
    assert len(process_dirs(out)) == 1
    assert calls(report_csv(out), "fib") == FIB_CALLS
    cp = run(out, fib_bin, opts=("--append",))
    assert "experiment written to %s" % out in cp.stderr
    assert len(process_dirs(out)) == 2
    assert calls(report_csv(out), "fib") == 2 * FIB_CALLS
    # a directory of an earlier run without the marker (written by hand, or by an older plx)
    (out / ".plx-run").unlink()
    cp = plx("run", "-o", out, "--", fib_bin, check=False)
    assert cp.returncode == 2 and "holds an earlier run;" in cp.stderr, cp.stderr


FULL_LIMIT = 64 * 1024


def test_disk_full_during_trace_is_counted_and_reported(fib_bin, tmp_path):
    """Writes failing (here a 64 KiB file size limit, as a full disk: write fails) lose the
    chunks they held: counted per thread as lost, reported by plx run (exit status 3) and by
    plx info, and the trace keeps every chunk written (was: 96 % lost, exit 0, lost 0)."""
    import resource
    import signal
    import subprocess

    from conftest import PLX, clean_env

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FULL_LIMIT, FULL_LIMIT))

    out = tmp_path / "exp"
    cp = subprocess.run([str(PLX), "run", "-o", str(out), "--trace", "--buffer", "4K", "--",
                         str(fib_bin)], capture_output=True, text=True, env=clean_env(),
                        preexec_fn=limit, timeout=120)
    assert cp.returncode == 3, cp.stderr
    (pdir,) = process_dirs(out)
    trace = pdir / "trace.plx"
    assert re.search(r"experiment written to %s, incomplete: %s/trace.plx: \d+ writes "
                     r"\(\d+ bytes\) failed \(File too large\); see plx info"
                     % (re.escape(str(out)), pdir.name), cp.stderr), cp.stderr
    text = info(out).stdout
    m = re.search(r"trace.plx: the runtime could not complete (\d+) writes \((\d+) bytes of "
                  r"whole records\): "
                  r"File too large; what they held is lost, the rest of the file is kept", text)
    assert m, text
    failed, failed_bytes = int(m.group(1)), int(m.group(2))
    (line,) = info_thread_lines(text)
    # every word is either in the file or counted lost; the lost ones are the failed chunks'
    # (one TraceChunk a write: an 8-byte header, 32 bytes of fixed fields, then the words)
    assert line["lost"] == (failed_bytes - failed * (8 + 32)) // 8
    assert line["trace_events"] + line["lost"] >= 2 * FIB_CALLS + 2
    assert trace.stat().st_size <= FULL_LIMIT
    # what was written is intact: fib's calls up to the limit, no warning about the file's form
    n = calls(report_csv(out), "fib")
    assert 0 < n <= line["trace_events"] // 2
    assert "truncated" not in text and "garbage" not in text


def test_vfork_exec_leaves_the_parent_measured(programs, tmp_path):
    """A vfork()ed child shares its parent's memory: its exec() must not end the parent's
    measurement (was: parent "replaced by exec()", CPU 0 s, its 4 later calls missing)."""
    prog = programs.get("vfork_exec.c", "-O0")
    out = tmp_path / "vfork"
    run(out, prog)
    doc = report_json(out)
    # the child's /bin/true is not measured: only the parent is in the report
    (parent,) = doc["processes"]
    assert functions_of(parent["threads"][0])["work"]["calls"] == 7
    text = info(out).stdout
    assert re.search(r"^\s*ended\s+exited with status 0\s*$", text, re.M), text
    assert "replaced by exec()" not in text
