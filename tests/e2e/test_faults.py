"""How a process ends: fatal signals, exit(), SIGKILL with a trace, fork and exec; and what the
disk and other users cannot do to it: a full file system, a file size limit, hostile inputs,
planted names."""

import contextlib
import csv
import io
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal as signals
import socket
import subprocess
import time
from pathlib import Path

import pytest

from components import require
from conftest import (
    LIBPLX,
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


# fault.c ends inside main (a signal, exit()): main's call is still open at the process's end
CUT_MAIN = "thread 0: 1 calls still open when the process ended, closed at its end (truncated)"


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
    # main was still running: its call is cut at the process's end, and said so
    assert CUT_MAIN in text
    doc = report_json(out)
    assert [(w["kind"], w["message"]) for w in doc["warnings"]] == [("open-at-end", CUT_MAIN)]
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
    assert CUT_MAIN in text
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


def test_a_daemon_still_running_is_said_so_not_killed(programs, tmp_path):
    """A double-forked daemon outlives its plx run: while it runs, plx info says it is still
    running (was: "did not finish (no ProcessEnd: killed or crashed while writing)"); once it
    ended, how it ended, with its own calls."""
    prog = programs.get("daemon.c", "-O0")
    out = tmp_path / "exp"
    go = tmp_path / "go"
    cp = run(out, prog, str(go))
    assert cp.stdout == "started\n"
    text = info(out).stdout
    assert text.count("ended       still running (no ProcessEnd yet: a process that outlived its "
                      "plx run, such as a daemon; what it writes is complete once it ends)") == 1, text
    assert "killed or crashed" not in text, text
    go.write_text("")
    # until the daemon has written its end (it may still be writing when it is no longer
    # seen running: a fresh-clone run under load)
    for _ in range(600):
        text = info(out).stdout
        if text.count("ended       exited with status 0") == 3:
            break
        time.sleep(0.05)
    assert text.count("ended       exited with status 0") == 3, text
    rows = report_csv(out)
    assert calls(rows, "leaf") == 7


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_fork(programs, tmp_path, mode):
    """A fork()ed child's profile holds what the child did: the frames it was in at the fork
    (main, 1 call in the parent) are no call of its own, in both modes (was, with --trace: the
    child's trace began with their enters, counted as calls)."""
    prog = programs.get("fork.c", "-O0")
    out = tmp_path / "fork"
    run(out, prog, opts=("--trace",) if mode == "trace" else ())
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
    assert calls(rows, "main") == 1
    locs = location_rows(rows)
    assert len(locs) == 2
    assert {p for p, _ in locs} == {str(parent["pid"]), str(child["pid"])}


def test_a_hundred_children_exiting_inside_main_give_one_warning_line(programs, tmp_path):
    """100 forked children each calling _exit inside main: each child's "1 calls still open"
    warning was a line of its own, 100 lines in plx info and plx report. They are one line with
    the count, the files and the first 3; plx info --format json keeps each."""
    prog = programs.get("fork_exit.c", "-O0")
    out = tmp_path / "exp"
    run(out, prog, "100")
    children = sorted(d for d in out.iterdir() if (d / "process.plx").exists())
    assert len(children) == 101
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    cut = [w for w in doc["warnings"] if w.endswith(": " + CUT_MAIN)]
    assert len(cut) == 100 and len(doc["warnings"]) == 100, doc["warnings"]
    line = "100 open-at-end warnings in 100 files, the first 3: %s (`plx info --format json` lists each)" % (
        "; ".join(cut[:3]))
    text = plx("info", out).stdout
    assert text.split("warnings:\n", 1)[1] == "  " + line + "\n", text
    assert plx("report", out).stderr == "plx: warning: " + line + "\n"


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


# ---- a full file system, a file size limit, hostile inputs and planted names ----------------
# (issue 30: the measured program is never harmed by the disk; nobody else's file is touched)


def test_a_traced_run_keeps_no_reserved_room_on_the_disk(fib_bin, tmp_path):
    """A traced process reserves 1 MiB beyond process.plx's end for its last records (a full
    disk cannot take it); at its end what was not written goes back: every file of the
    experiment holds no more blocks than its bytes need (was: 1 MiB a process kept, 1 GiB for
    1,000 ranks)."""
    out = tmp_path / "exp"
    run(out, fib_bin, "10", opts=("--trace",))
    files = [f for f in out.rglob("*") if f.is_file()]
    assert any(f.name == "process.plx" for f in files), files
    for f in files:
        st = f.stat()
        assert st.st_blocks * 512 <= -(-st.st_size // 4096) * 4096 + 4096, (f, st.st_size, st.st_blocks)


@pytest.fixture(scope="module")
def full_disk_bin(programs):
    return programs.get("full_disk.c", "-O0")


@contextlib.contextmanager
def small_tmpfs(path, size):
    """A real tmpfs of `size` mounted at `path` (root only), unmounted afterwards."""
    require(os.geteuid() == 0, "root (to mount a small tmpfs)", install="run the tests as root")
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


# profile: DEPTH call paths a thread (48 bytes each in its live file, about 40 in its
# ThreadProfile); trace: 2 x DEPTH x ROUNDS events a thread
FULL_ARGS = {"profile": (3000, 1), "trace": (300, 300)}
FULL_FILE = {"profile": "process.plx", "trace": "trace.plx"}


def full_run(cmd, status_of_program, mode, env=None):
    """Runs `cmd` (a plx run of full_disk); asserts the program's own output."""
    cp = subprocess.run(cmd, capture_output=True, text=True, env=env or clean_env(), timeout=300)
    depth, rounds = FULL_ARGS[mode]
    assert cp.stdout == "full_disk: %d %d\n" % (depth * rounds, depth * rounds), cp.stderr
    return cp


def assert_loss_reported(cp, out, mode, error):
    """plx run's line, the runtime's and plx info's warning name the same file and loss."""
    (pdir,) = process_dirs(out)
    name = FULL_FILE[mode]
    m = re.search(r"plx: experiment written to %s, incomplete: %s/%s: (\d+) writes \((\d+) "
                  r"bytes\) failed \(%s\); see plx info"
                  % (re.escape(str(out)), pdir.name, name, error), cp.stderr)
    assert m, cp.stderr
    writes, lost = int(m.group(1)), int(m.group(2))
    assert writes > 0 and lost > 0
    assert "plx: %s/%s: %d writes (%d bytes) failed: %s" % (pdir, name, writes, lost, error) \
        in cp.stderr
    text = info(out).stdout
    assert ("%s/%s: the runtime could not complete %d writes (%d bytes of whole records): %s; "
            "what they held is lost, the rest of the file is kept"
            % (pdir, name, writes, lost, error)) in text, text
    return text


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_full_tmpfs_does_not_kill_threads_with_sigbus(full_disk_bin, tmp_path, mode):
    """Two threads on a full 256 KiB tmpfs: their live files (the profile's nodes, the trace
    buffers) were sparse mappings, and a page the file system could not back killed the
    program with SIGBUS (plx run: 135). Now room is reserved before it is mapped, the rest is
    memory: the program prints its line and exits with its own status, the lost writes are
    counted, plx run exits 3."""
    opts = ["--trace"] if mode == "trace" else []
    with small_tmpfs(tmp_path / "mnt", "256k") as mnt:
        out = mnt / "exp"
        cp = full_run([str(PLX), "run", "-o", str(out), *opts, "--", str(full_disk_bin),
                       *map(str, FULL_ARGS[mode]), "0"], 0, mode)
        assert cp.returncode == 3, cp.stderr
        assert "no room for the live file (No space left on device)" in cp.stderr
        text = assert_loss_reported(cp, out, mode, "No space left on device")
        if mode == "trace":
            depth, rounds = FULL_ARGS[mode]
            for line in info_thread_lines(text):
                assert line["trace_events"] + line["lost"] >= 2 * depth * rounds
                assert line["lost"] > 0
        # a program's own failure status is its own, disk full or not
        out2 = mnt / "exp2"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        cp = full_run([str(PLX), "run", "-o", str(out2), *opts, "--", str(full_disk_bin),
                       *map(str, FULL_ARGS[mode]), "5"], 5, mode)
        assert cp.returncode == 5, cp.stderr
        assert "incomplete: " in cp.stderr


def test_sigkill_recovers_a_tree_grown_past_its_first_reservation(full_disk_bin, tmp_path):
    """A callpath tree's live file is reserved 1024 nodes at first and doubled as the tree
    grows (2 x 3000 paths here: three growths a thread); killed, every node is read back."""
    out = tmp_path / "exp"
    cp = run(out, full_disk_bin, "3000", "1", "kill", status=137)
    assert cp.stdout == "full_disk: 3000 3000\n"
    assert calls(report_csv(out), "rec") == 2 * 3000
    (pdir,) = process_dirs(out)
    text = info(out).stdout
    assert "thread 0: profile recovered from live.0.nodes" in text, text
    # 64-byte header and 48-byte nodes, page-rounded: 1,024 nodes asked -> 53,248 bytes (1,108
    # nodes), twice that -> 106,496 (2,217), twice that -> 212,992 (4,436 >= the 3,003 used)
    assert (pdir / "live.0.nodes").stat().st_size == 212992


def test_full_tmpfs_keeps_room_for_the_loss_record(programs, tmp_path):
    """10,000 short threads on a 128 KiB tmpfs: their profiles fill it, and the last records
    (WriteFailures, ProcessEnd) found no room either, so plx run said "experiment written"
    and exited 0 with every failed write unreported. The runtime keeps 16 KiB for them
    (`.plx-reserve`, freed at the end): the loss is reported, plx run exits 3."""
    prog = programs.get("short_threads.c", "-O0")
    with small_tmpfs(tmp_path / "mnt", "128k") as mnt:
        out = mnt / "exp"
        cp = plx("run", "-o", out, "--", prog, check=False)
        assert cp.stdout == "10000\n"
        assert cp.returncode == 3, cp.stderr
        (pdir,) = process_dirs(out)
        m = re.search(r"incomplete: %s/process.plx: (\d+) writes \((\d+) bytes\) failed \(No "
                      r"space left on device\)" % pdir.name, cp.stderr)
        assert m, cp.stderr
        text = info(out).stdout
        assert ("%s/process.plx: the runtime could not complete %s writes (%s bytes of whole "
                "records): No space left on device" % (pdir, m.group(1), m.group(2))) in text
        assert re.search(r"^\s*ended\s+exited with status 0\s*$", text, re.M), text
        assert not (pdir / ".plx-reserve").exists()


def test_room_kept_for_the_last_records_cannot_be_taken_by_another_process(programs, tmp_path):
    """The room kept for a process's last records was freed before they were written: on a disk
    shared with another process that takes every block freed (here a library preloaded after
    libplx fills the tmpfs the moment `.plx-reserve` is removed or renamed), they were lost and
    `plx info` said the process did not finish. The records are written into the kept room
    itself, which becomes `end.plx`: the process ended with status 0 and its loss is named."""
    prog = programs.get("short_threads.c", "-O0")
    shim = tmp_path / "take_freed_room.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(shim),
                    str(Path(__file__).resolve().parent / "programs" / "take_freed_room.c"), "-ldl"],
                   check=True)
    with small_tmpfs(tmp_path / "mnt", "128k") as mnt:
        out = mnt / "exp"
        env = dict(clean_env(), LD_PRELOAD=str(shim), FILL_PATH=str(mnt / "other"))
        cp = subprocess.run([str(PLX), "run", "-o", str(out), "--", str(prog)],
                            capture_output=True, text=True, env=env, timeout=120)
        assert cp.stdout == "10000\n"
        assert cp.returncode == 3, cp.stderr
        (pdir,) = process_dirs(out)
        assert (mnt / "other").stat().st_size > 0  # the freed room was taken
        assert (pdir / "end.plx").is_file() and not (pdir / ".plx-reserve").exists()
        m = re.search(r"incomplete: %s/process.plx: (\d+) writes \((\d+) bytes\) failed \(No "
                      r"space left on device\)" % pdir.name, cp.stderr)
        assert m, cp.stderr
        text = info(out).stdout
        assert re.search(r"^\s*ended\s+exited with status 0\s*$", text, re.M), text
        assert ("%s/process.plx: the runtime could not complete %s writes (%s bytes of whole "
                "records): No space left on device" % (pdir, m.group(1), m.group(2))) in text
        assert "did not finish" not in text


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_file_size_limit_does_not_kill_with_sigxfsz(full_disk_bin, tmp_path, mode):
    """Under a shell's `ulimit -f 64` (64 KiB, SIGXFSZ at its default: kill) the live file's
    ftruncate and the runtime's writes raised SIGXFSZ and killed the program (plx run: 153).
    Now they fail with EFBIG, counted; plx run too outlives the limit and exits 3."""
    opts = " --trace" if mode == "trace" else ""
    out = tmp_path / "exp"
    script = "ulimit -f 64; exec %s run -o %s%s -- %s %d %d 0" % (
        PLX, out, opts, full_disk_bin, *FULL_ARGS[mode])
    cp = full_run(["bash", "-c", script], 0, mode)
    assert cp.returncode == 3, cp.stderr
    assert "killed by signal" not in cp.stderr
    assert_loss_reported(cp, out, mode, "File too large")
    (pdir,) = process_dirs(out)
    assert (pdir / FULL_FILE[mode]).stat().st_size <= 64 * 1024


# MPICH's launcher under plx run (plx run -- mpirun.mpich) is issue 30's Hydra crash, not a disk's
@pytest.mark.parametrize("impl,where", [("open-mpi", "mpirun-plx"), ("open-mpi", "plx-mpirun"),
                                        ("mpich", "mpirun-plx")])
def test_full_tmpfs_under_mpirun_keeps_the_job(tmp_path, impl, where):
    """Two ranks of two threads each, traced onto a full 512 KiB tmpfs, under Open MPI's and
    MPICH's launchers: every rank prints its line and the job ends with status 3 (0 with plx run
    in the rank position, where a rank's 3 aborted the job); every rank's lost writes are
    named (was: the ranks died of SIGBUS and the launcher aborted the job)."""
    from mpi_impls import IMPLS

    mpi = IMPLS[impl]
    mpi.require()
    prog = tmp_path / "full_disk_mpi"
    src = Path(__file__).resolve().parent / "programs" / "full_disk.c"
    cp = subprocess.run([mpi.mpicc, "-O0", "-g", "-finstrument-functions", "-DWITH_MPI",
                         str(src), "-o", str(prog), "-pthread"], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    depth, rounds = FULL_ARGS["trace"]
    with small_tmpfs(tmp_path / "mnt", "512k") as mnt:
        out = mnt / "exp"
        run_plx = [str(PLX), "run", "-o", str(out), "--trace", "--"]
        if where == "mpirun-plx":
            cmd = mpi.mpirun_cmd(2, *run_plx, prog, depth, rounds, 0)
        else:
            cmd = run_plx + mpi.mpirun_cmd(2, prog, depth, rounds, 0)
        cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=300)
        assert sorted(cp.stdout.splitlines()) == [
            "full_disk: rank %d: %d %d" % (r, depth * rounds, depth * rounds) for r in (0, 1)]
        assert "killed by signal" not in cp.stderr and "SIGBUS" not in cp.stderr
        assert "Bus error" not in cp.stderr
        # each rank's plx run keeps its program's 0 (a rank exiting 3 made the launcher abort
        # the job and SIGTERM the other ranks' programs while they still wrote); around
        # mpirun, plx run reports for every rank and exits 3 for the job
        assert cp.returncode == (0 if where == "mpirun-plx" else 3), cp.stderr
        # every rank's trace.plx is named with its loss (a 1 MiB chunk never fits), even where
        # another rank took every block freed (the ranks share the full tmpfs: a rank whose
        # last records lost their freed room was "not finished", a fresh-clone run)
        text = info(out).stdout
        named = set(re.findall(r"(\S+)/trace(?:\.\d+)?\.plx: the runtime could not complete \d+ writes "
                               r"\(\d+ bytes of whole records\): No space left on device", text))
        assert len(named) == 2 and "did not finish" not in text, text
        # one "incomplete" line per plx run, naming only the directories of the processes it
        # started (was: each rank's plx run named every rank's directory, the ones it found
        # written when its own rank ended)
        lines = re.findall(r"(?m)^plx: experiment written to %s, incomplete: (.*); see plx info$"
                           % re.escape(str(out)), cp.stderr)
        named_by = [sorted(set(re.findall(r"(?:^|; )([^/; ]+)/", line))) for line in lines]
        ranks = sorted(Path(re.search(r"(?m)^  file +(\S+)$", b).group(1)).parent.name
                       for b in re.split(r"(?m)^(?=process \S+ \()", text)
                       if re.search(r"(?m)^  rank +\d+ of 2 ", b))
        assert len(ranks) == 2, text
        if where == "mpirun-plx":
            # each rank's line, naming its own rank only (was: cut by the launcher's abort)
            assert sorted(n[0] for n in named_by if len(n) == 1) == ranks, cp.stderr
            assert len(named_by) == 2, cp.stderr
        else:
            assert len(named_by) == 1 and set(ranks) <= set(named_by[0]), cp.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_filter_naming_a_fifo_or_device_does_not_hang_the_program(full_disk_bin, tmp_path, kind):
    """PLX_FILTER set by hand (no plx run to check it) to a FIFO nobody writes blocked the
    program in libplx's constructor forever; /dev/zero was read until memory ran out. Only a
    regular file is read: the program runs measured, unfiltered, with a warning."""
    if kind == "fifo":
        path = tmp_path / "filter"
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    out = tmp_path / "exp"
    env = clean_env({"LD_PRELOAD": LIBPLX, "PLX_OUTPUT": out, "PLX_FILTER": path})
    cp = subprocess.run([str(full_disk_bin), "10", "1", "0"], capture_output=True, text=True,
                        env=env, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "full_disk: 10 10\n"
    assert cp.stderr == ("plx: %s: cannot read filter file: not a regular file (a FIFO, a "
                         "device or a directory is not read); nothing is filtered\n" % path)
    assert calls(report_csv(out), "rec") == 2 * 10


VICTIM = b"root's file: not to be touched\n" * 100


def test_planted_live_file_symlink_is_refused_victim_untouched(full_disk_bin, tmp_path):
    """Someone who can write the experiment plants HOST.PID/live.1.nodes (the worker thread's
    live file) as a symlink to a victim before the process makes it: libplx opened it with
    O_TRUNC through the link, truncating the victim and filling it with nodes. Now the file is
    created O_EXCL | O_NOFOLLOW: the name is refused, said on stderr, the victim is byte for
    byte the same, and the worker is measured in memory all the same."""
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    out = tmp_path / "exp"
    # bash (measured, unmodified) made HOST.PID; the program exec'd in its place uses it
    script = 'ln -s %s "$PLX_OUTPUT/%s.$$/live.1.nodes" && exec %s 10 1 0' % (
        victim, socket.gethostname(), full_disk_bin)
    cp = plx("run", "--append", "-o", out, "--", "bash", "-c", script, check=False)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "full_disk: 10 10\n"
    assert victim.read_bytes() == VICTIM
    assert re.search(r"^plx: %s/[^/]+/live\.1\.nodes: exists and is not this process's file "
                     r"\(a symlink or a file someone else made\): left untouched; the data it "
                     r"would hold stays in memory and is lost if the process is killed$"
                     % re.escape(str(out)), cp.stderr, re.M), cp.stderr
    rows = report_csv(out)
    assert calls(rows, "rec") == 2 * 10
    assert calls(rows, "worker") == 2


@pytest.mark.parametrize("planted", ["symlink", "other-user"])
def test_planted_process_directory_is_refused_victim_untouched(full_disk_bin, tmp_path, planted):
    """PLX_OUTPUT set by hand, its HOST.PID planted beforehand: as a symlink to a victim
    directory (libplx wrote process.plx and its live files into the victim's directory), or as
    a directory of another user holding a symlink to a victim file. libplx now uses only a
    process directory of its own user that nobody else can write: the program runs unmeasured,
    with a clear message, and nothing of the victim's changes."""
    out = tmp_path / "exp"
    out.mkdir()
    victim_dir = tmp_path / "victim-dir"
    victim_dir.mkdir()
    (victim_dir / "keep").write_bytes(VICTIM)
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    pdir = '"%s/%s.$$"' % (out, socket.gethostname())
    if planted == "symlink":
        plant = "ln -s %s %s" % (victim_dir, pdir)
    else:
        plant = "mkdir -m 777 %s && ln -s %s %s/live.0.nodes && chown -R 65534 %s" % (
            pdir, victim, pdir, pdir)
    script = "%s && export LD_PRELOAD=%s PLX_OUTPUT=%s && exec %s 10 1 0" % (
        plant, LIBPLX, out, full_disk_bin)
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                        env=clean_env(), timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "full_disk: 10 10\n"
    assert re.fullmatch(r"plx: cannot create %s/[^/]+\.\d+: it exists and is not a directory of "
                        r"this user that only this user can write \(a symlink or another "
                        r"user's\); nothing is measured\n" % re.escape(str(out)), cp.stderr), \
        cp.stderr
    assert sorted(p.name for p in victim_dir.iterdir()) == ["keep"]
    assert (victim_dir / "keep").read_bytes() == VICTIM
    assert victim.read_bytes() == VICTIM


def test_planted_names_plx_run_writes_are_refused_victims_untouched(full_disk_bin, tmp_path):
    """plx run --append writes its job marker through a temporary `.plx-run.PID` and the
    source-file list as `source-files` in the experiment: both names planted as symlinks to
    victims were followed (File::create, fs::write), truncating and overwriting the victims.
    Now a planted name is replaced, never written through."""
    out = tmp_path / "exp"
    out.mkdir()
    victims = [tmp_path / "victim1", tmp_path / "victim2"]
    for v in victims:
        v.write_bytes(VICTIM)
    os.symlink(victims[0], out / "source-files")
    filt = tmp_path / "files.filter"
    filt.write_text("include file *full_disk.c\n")
    # plx run is exec'd in bash's place: its pid, and so its marker's temporary name, is $$
    script = 'ln -s %s "%s/.plx-run.$$" && exec %s run --append -o %s --filter %s -- %s 10 1 0' % (
        victims[1], out, PLX, out, filt, full_disk_bin)
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                        env=clean_env(), timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == "full_disk: 10 10\n"
    for v in victims:
        assert v.read_bytes() == VICTIM
    assert not (out / "source-files").is_symlink()
    assert (out / "source-files").read_text().startswith("plx-source-files 1\n")
    assert calls(report_csv(out), "rec") == 2 * 10


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_planted_session_file_is_refused(full_disk_bin, tmp_path, planted):
    """`plx run --session S` appends its application to S/session.txt: a symlink planted
    under that name to a victim that reads as a session file had the line appended to the
    victim; a FIFO gave "Illegal seek". Now the name is opened O_NOFOLLOW | O_NONBLOCK and
    must be a regular file: plx run stops with exit status 2 and the reason, the victim
    unchanged."""
    session = tmp_path / "session"
    session.mkdir()
    victim = tmp_path / "victim"
    victim_text = b"app other /somewhere live\n"
    victim.write_bytes(victim_text)
    if planted == "symlink":
        os.symlink(victim, session / "session.txt")
        why = "Too many levels of symbolic links (os error 40)"
    else:
        os.mkfifo(session / "session.txt")
        why = "not a regular file"
    cp = plx("run", "--session", session, "--app", "a", "--", full_disk_bin, "10", "1", "0",
             check=False, timeout=120)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr == "plx: %s/session.txt: %s\n" % (session, why)
    assert cp.stdout == ""
    assert victim.read_bytes() == victim_text


def test_plx_run_outlives_a_file_size_limit(tmp_path):
    """Under `ulimit -f 4` (4 KiB) plx run's system monitor wrote past the limit and SIGXFSZ
    killed plx run (exit 153) while the program ran on without it, its status unreported. plx
    run now ignores SIGXFSZ for itself, the program keeps the disposition plx was started with
    (default: SIGXFSZ not ignored), and the monitor's lost samples make the run incomplete."""
    out = tmp_path / "exp"
    # the program runs until the monitor's file has met the limit (its writes come in blocks
    # of the writer's buffer: the file stays empty until one fails at 4 KiB), whatever the
    # number of samples the monitor took meanwhile (fewer on a loaded machine)
    metrics = out / ("metrics.monitor.%s.plx" % socket.gethostname())
    program = ("for i in $(seq 1200); do [ $(stat -c %%s %s) -ge 4096 ] && break; sleep 0.05; "
               "done; grep SigIgn /proc/self/status" % shlex.quote(str(metrics)))
    script = "ulimit -f 4; exec %s run --monitor cpu --monitor-period 5 -o %s -- bash -c %s" % (
        PLX, out, shlex.quote(program))
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                        env=clean_env(), timeout=120)
    assert cp.returncode == 3, cp.stderr
    (ignored,) = re.findall(r"^SigIgn:\s+([0-9a-f]+)$", cp.stdout, re.M)
    assert int(ignored, 16) & (1 << (signals.SIGXFSZ - 1)) == 0
    lost = "metrics.monitor.%s.plx: the samples from then on are lost: File too large " \
           "(os error 27)" % socket.gethostname()
    assert "plx: %s\n" % lost in cp.stderr
    assert "plx: experiment written to %s, incomplete: %s; see plx info\n" % (out, lost) \
        in cp.stderr
    assert (out / ("metrics.monitor.%s.plx" % socket.gethostname())).stat().st_size <= 4096


@pytest.mark.parametrize("planted", ["fifo", "symlink"])
def test_planted_job_marker_is_refused_at_once(full_disk_bin, tmp_path, planted):
    """plx run reads the experiment's `.plx-run` (which job holds it): a FIFO planted under
    that name blocked plx run forever before the program started; a symlink was followed.
    Now the marker is read only as a regular file, never through a symlink: plx run stops at
    once with exit status 2 and the reason."""
    out = tmp_path / "exp"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    if planted == "fifo":
        os.mkfifo(out / ".plx-run")
        why = "not a regular file"
    else:
        os.symlink(victim, out / ".plx-run")
        why = "Too many levels of symbolic links (os error 40)"
    cp = plx("run", "-o", out, "--", full_disk_bin, "10", "1", "0", check=False, timeout=120)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr == "plx: %s/.plx-run: %s\n" % (out, why)
    assert cp.stdout == ""
    assert victim.read_bytes() == VICTIM


def test_disk_full_before_the_start_is_no_silent_success(programs, tmp_path):
    """A tmpfs with 4 KiB left before plx run starts: the runtime could write nothing, not even
    the record of its failed writes, and plx run said "experiment written" and exited 0 over an
    empty process.plx. Now the run is incomplete (exit 3) and names the empty file; the program
    still ran to its end with its own output."""
    prog = programs.get("threads.c", "-O0", "-pthread")
    with small_tmpfs(tmp_path / "mnt", "256k") as mnt:
        fill = mnt / "fill"
        with open(fill, "wb") as f:
            f.write(b"\0" * (252 * 1024))
        out = mnt / "exp"
        cp = plx("run", "-o", out, "--", prog, check=False)
        assert cp.returncode == 3, cp.stderr
        (pdir,) = process_dirs(out)
        assert (pdir / "process.plx").stat().st_size == 0
        assert ("incomplete: %s/process.plx: empty: nothing of the process could be written "
                "(a full disk or a file size limit)" % pdir.name) in cp.stderr, cp.stderr


# read(2)'s number in /proc/PID/syscall
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}


def wait_reading_stdin(out):
    """The process directory under `out` once its program (the pid its name ends with) waits in
    read(0, ...) for its standard input: past the runtime's start and its first writes."""
    nr = READ_SYSCALL[platform.machine()]
    for _ in range(12000):
        for d in out.glob("*.*"):
            try:
                fields = Path("/proc/%s/syscall" % d.name.rsplit(".", 1)[1]).read_text().split()
            except OSError:
                continue
            if fields[:2] == [nr, "0x0"]:
                return d
        time.sleep(0.01)
    raise AssertionError("no program of %s waits on its standard input after 120 s" % out)


@pytest.mark.parametrize("mode, left_kib", [("profile", 4), ("trace", 8)])
def test_header_lost_to_a_full_disk_is_written_before_the_first_record(programs, tmp_path, mode,
                                                                       left_kib):
    """A tmpfs too full for the header of process.plx (profile) or trace.plx (trace) at the
    start, with room again once the program runs (another job freed it): the records written
    then went into a file without its header, which every reader refused ("bad magic": the 1,000
    calls of work() lost), and plx run said "experiment written" and exited 0. Now the header goes
    before the file's first record that finds room: the 1,000 calls are read back; what was lost
    before (the profile's first records) is counted and makes the run incomplete (exit 3)."""
    prog = programs.get("room_later.c", "-O0")
    with small_tmpfs(tmp_path / "mnt", "256k") as mnt:
        fill = mnt / "fill"
        fill.write_bytes(b"\0" * ((256 - left_kib) * 1024))
        out = mnt / "exp"
        args = [PLX, "run", "-o", str(out)] + (["--trace"] if mode == "trace" else []) + \
            ["--", str(prog), "1000"]
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=clean_env())
        # room again once the runtime's start (its writes to the full disk) is over
        wait_reading_stdin(out)
        fill.unlink()
        stdout, stderr = p.communicate("x", timeout=120)
        assert stdout == "room_later: 1000\n", stderr
        (pdir,) = process_dirs(out)
        name = FULL_FILE[mode]
        assert (pdir / name).read_bytes()[:4] == b"PLX1"
        text = info(out).stdout
        assert "bad magic" not in text, text
        assert "header truncated" not in text, text
        assert calls(report_csv(out), "work") == 1000
        if mode == "profile":
            # the disk was full at the start: the first records were lost, and said so
            assert "%s/process.plx: no ProcessInfo record" % pdir in text, text
            assert p.returncode == 3, stderr
            assert re.search(r"incomplete: %s/process.plx: \d+ writes \(\d+ bytes\) failed "
                             r"\(No space left on device\)" % pdir.name, stderr), stderr
        else:
            (thread,) = info_thread_lines(text)
            # work's and main's entries and exits, and the runtime's 2 symbol lookups
            assert thread["trace_events"] == 2 * 1000 + 2 + 2 * 2, text
            assert p.returncode == 0, stderr


def wait_for_main_live_file(out):
    """The process directory under `out` once the runtime has made its files and main's live
    file (live.0.trace): the program is then past the runtime's start, waiting on its standard
    input. A removal before that (the process directory seen, its files not yet made) is a
    removal during the runtime's start, which says so in messages of its own."""
    for _ in range(12000):
        found = [d for d in out.glob("*.*") if (d / "live.0.trace").exists()]
        if found:
            (pdir,) = found
            return pdir
        time.sleep(0.01)
    raise AssertionError("no live.0.trace under %s after 120 s" % out)


@pytest.mark.parametrize("how", ["removed", "replaced by another directory"])
def test_experiment_removed_while_the_program_runs_is_not_written(programs, tmp_path, how):
    """The experiment directory removed (rm -r, a cleanup of /tmp) while the program ran, or
    replaced by another of the same name: plx run said "plx: experiment written to DIR" and
    exited 0 over a directory that was gone. Now it says the experiment is lost and exits 3; the
    program ran to its end with its own output."""
    prog = programs.get("room_later.c", "-O0")
    out = tmp_path / "exp"
    p = subprocess.Popen([PLX, "run", "-o", str(out), "--trace", "--", str(prog), "1000"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=clean_env())
    wait_for_main_live_file(out)
    # the runtime may add a file while rmtree runs ("Directory not empty"): until it is gone
    for _ in range(100):
        shutil.rmtree(out, ignore_errors=True)
        if not out.exists():
            break
        time.sleep(0.01)
    assert not out.exists()
    if how != "removed":
        out.mkdir()
    stdout, stderr = p.communicate("x", timeout=120)
    assert stdout == "room_later: 1000\n", stderr
    assert p.returncode == 3, stderr
    assert stderr == ("plx: %s: %s while the program ran: the experiment written in it is lost\n"
                      % (out, how)), stderr


def test_live_file_in_a_removed_directory_is_not_called_a_full_disk(programs, tmp_path):
    """A thread started after the experiment directory was removed cannot make its live file
    (ENOENT): the runtime said "no room for the live file (No such file or directory)", a full
    disk that was not. It names the real cause, and the program runs to its end."""
    prog = programs.get("room_later.c", "-O0")
    out = tmp_path / "exp"
    p = subprocess.Popen([PLX, "run", "-o", str(out), "--trace", "--", str(prog), "1000",
                          "thread"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=clean_env())
    pdir = wait_for_main_live_file(out).name
    for _ in range(100):
        shutil.rmtree(out, ignore_errors=True)
        if not out.exists():
            break
        time.sleep(0.01)
    assert not out.exists()
    stdout, stderr = p.communicate("x", timeout=120)
    assert stdout == "room_later: 1000\n", stderr
    assert p.returncode == 3, stderr
    assert "no room" not in stderr, stderr
    # the thread's trace or sync file (main's was made before the removal)
    lines = stderr.splitlines()
    assert re.fullmatch(
        r"plx: %s/live\.[0-9]+\.[a-z]+: the live file cannot be made or grown \(No such file or "
        r"directory\): the data it would hold stays in memory and is lost if the process is "
        r"killed" % re.escape("%s/%s" % (out, pdir)), lines[0]), stderr
    assert lines[-1] == ("plx: %s: removed while the program ran: the experiment written in it "
                         "is lost" % out), stderr


@pytest.mark.parametrize("fmt", ["chrome", "parquet"])
def test_export_under_a_file_size_limit_is_an_error_not_sigxfsz(programs, tmp_path, fmt):
    """plx export under `ulimit -f 4` (4 KiB) of a traced run whose export is larger: the chrome
    and parquet exports died of SIGXFSZ (exit 153, no message) and left their partial
    .NAME.plx-tmp-PID file behind. Now the write fails with EFBIG: an error (exit 1, as any
    output that cannot be written), nothing left under the output's name or the temporary
    one."""
    exp = tmp_path / "exp"
    run(exp, programs.get("threads.c", "-O0", "-pthread"), opts=("--trace",))
    out = tmp_path / "out"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    cp = subprocess.run([PLX, "export", str(exp), "--format", fmt, "-o", str(out)],
                        capture_output=True, text=True, env=clean_env(), preexec_fn=limit,
                        timeout=120)
    assert cp.returncode == 1, (cp.returncode, cp.stderr)
    assert cp.stderr.startswith("plx: ") and \
        cp.stderr.endswith(": File too large (os error 27)\n"), cp.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]


def test_otf2_export_on_a_full_disk_names_the_full_file_system(programs, tmp_path):
    """The OTF2 export onto a full 64 KiB tmpfs: plx's own line said only "OTF2 library: local
    definitions: INTEGRITY_FAULT (The structural integrity is not given)", as if the experiment
    were damaged. Now it names the full file system; exit 1, nothing left on it."""
    exp = tmp_path / "exp"
    run(exp, programs.get("threads.c", "-O0", "-pthread"), opts=("--trace",))
    with small_tmpfs(tmp_path / "mnt", "64k") as mnt:
        cp = plx("export", exp, "--format", "otf2", "-o", mnt / "out.otf2", check=False)
        assert cp.returncode == 1, cp.stderr
        last = cp.stderr.splitlines()[-1]
        assert last.startswith("plx: %s/.out.otf2.plx-tmp-" % mnt), last
        assert last.endswith("; the file system holding %s is full" % mnt), last
        assert list(mnt.iterdir()) == []


def test_a_fifo_as_filter_file_is_named_not_missing(programs, tmp_path):
    """plx run --filter FIFO said "filter file not found" for a file that is there; now the
    check says what it is, at once, and the program does not run."""
    prog = programs.get("threads.c", "-O0", "-pthread")
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    cp = plx("run", "-o", tmp_path / "exp", "--filter", fifo, "--", prog, check=False, timeout=60)
    assert cp.returncode == 2
    assert cp.stderr == "plx: %s: cannot read filter file: not a regular file (a FIFO)\n" % fifo
    assert cp.stdout == ""


def test_a_profile_lost_with_its_trace_is_not_called_recorded(full_disk_bin, tmp_path):
    """--trace under `ulimit -f 64`: the workers' traces are not written, and with --trace the
    runtime keeps no call tree, so their profiles are lost with them. plx info called those
    profiles "recorded" and plx report printed a bare "(no profile)"; now info says "lost with
    the trace" and report how many events went with it."""
    out = tmp_path / "exp"
    script = "ulimit -f 64; exec %s run -o %s --trace -- %s %d %d 0" % (
        PLX, out, full_disk_bin, *FULL_ARGS["trace"])
    cp = full_run(["bash", "-c", script], 0, "trace")
    assert cp.returncode == 3, cp.stderr
    rows = info_thread_lines(info(out).stdout)
    lost = [r for r in rows if r["lost"] > 0 and r["trace_events"] == 0]
    assert lost, rows
    assert all(r["profile"] == "lost with the trace" for r in lost), rows
    report = plx("report", out).stdout
    for r in lost:
        assert ("  (no profile: %d trace events lost, the profile with them; see plx info)"
                % r["lost"]) in report, report
    assert "recorded" not in {r["profile"] for r in lost}


def test_disk_full_before_plx_run_still_runs_the_program(programs, tmp_path):
    """A tmpfs with no room at all: plx run could not make the experiment directory and stopped
    with exit status 2, so the program did not run. Now it runs unmeasured, with its own output,
    and plx run says why and exits 3 (the program's own status when that is not 0)."""
    prog = programs.get("threads.c", "-O0", "-pthread")
    with small_tmpfs(tmp_path / "mnt", "64k") as mnt:
        fd = os.open(mnt / "fill", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        plain = subprocess.run([str(prog)], capture_output=True, text=True)
        cp = plx("run", "-o", mnt / "exp", "--", prog, check=False)
        assert cp.returncode == 3, cp.stderr
        assert cp.stdout == plain.stdout
        assert cp.stderr == ("plx: %s: No space left on device (os error 28): the disk is full; "
                             "the program runs unmeasured\n" % (mnt / "exp"))
        assert not (mnt / "exp").exists()


def test_a_trace_lost_to_a_file_size_limit_is_named_by_the_commands_that_need_it(programs,
                                                                                 tmp_path):
    """Under `ulimit -f 100` (50 KiB) a traced run of 2,000,000 calls loses every trace chunk
    (plx run exits 3). The commands that need the trace say it was lost, with the events lost
    and where to look, not "rerun with `plx run --trace`", which is what the user did."""
    prog = programs.get("hot_tiny.c", "-O1")
    out = tmp_path / "exp"
    script = "ulimit -f 100; exec %s run --trace -o %s -- %s 2000000" % (PLX, out, prog)
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                        env=clean_env(), timeout=120)
    assert cp.returncode == 3, cp.stderr
    lost = int(re.search(r"(?m)^\s+0\s+\d+\s+\S+.*?\s(\d+)\s+lost with the trace$",
                         info(out).stdout).group(1))
    assert lost >= 2000000, info(out).stdout
    for command in (["waits"], ["critical-path"], ["export", "--format", "chrome", "-o",
                                                    str(tmp_path / "t.json")]):
        cp = plx(command[0], out, *command[1:], check=False)
        assert cp.returncode == 2, cp
        assert cp.stderr.strip() == (
            "plx: %s: no trace events: the run was traced, but its %d events were lost "
            "(`plx info` says why)" % (out, lost)), cp.stderr
