"""Probes: functions of a program built with plain `gcc -O2` measured by `plx run --probe`.

programs/probe_calls.c: main calls update_b N times and update_a 3 times; four workers call
update_a 200, 201, 202 and 203 times; update_a and update_b call solve; tiny (3 bytes) is too
short to probe. Counts come from the program's own structure, exactly.
"""

import csv
import io
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from components import require_tools
from conftest import LIBPLX, PLX, PROGRAMS, calls, callpath_rows, clean_env, location_rows, plx, report_csv, run


def build_plain(tmp_path, name="probe_calls"):
    exe = tmp_path / name
    cp = subprocess.run(
        ["cc", "-O2", "-g", str(PROGRAMS / ("%s.c" % name)), "-o", str(exe), "-lm", "-pthread"],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, cp.stderr
    return exe


def test_libplx_static_tls_fits_the_dlopen_of_plx_attach():
    """plx attach dlopens libplx.so into a running process: glibc takes an initial-exec
    library's thread-local block from a surplus of about 1.6 KiB (it refused 2,288 bytes: MPJ's
    per-thread arrays had moved into TLS, and every attach test failed with "dlopen ... failed").
    Arrays belong in per-thread memory; libplx's TLS stays under 1 KiB."""
    require_tools("readelf")
    out = subprocess.run(["readelf", "-lW", str(LIBPLX)], capture_output=True, text=True,
                         check=True).stdout
    (tls,) = [line.split() for line in out.splitlines() if line.split()[:1] == ["TLS"]]
    memsz = int(tls[5], 16)
    assert 0 < memsz <= 1024, "libplx.so's TLS block is %d bytes" % memsz


def test_exact_counts_of_probed_functions_in_every_thread(tmp_path):
    exe = build_plain(tmp_path)
    out = tmp_path / "exp"
    run(out, exe, "1000", opts=("--probe", "solve,update_*,tiny"))
    rows = report_csv(out)
    assert calls(rows, "update_b") == 1000
    assert calls(rows, "update_a") == 3 + 200 + 201 + 202 + 203
    assert calls(rows, "solve") == 1000 + 809
    assert calls(rows, "tiny") == 0  # too short: skipped, never patched
    text = plx("info", out).stdout
    assert "probes      3 probed, 1 skipped" in text, text
    assert re.search(r"tiny\s+skipped: too short: 3 bytes, the jump needs 5", text), text
    assert re.search(r"update_b\s+measured [\d.]+ \S+–end", text), text
    per_thread = {}
    for (proc, thread), rs in location_rows(rows).items():
        per_thread[thread] = {r["function"]: int(r["calls"]) for r in rs}
    workers = sorted(c.get("update_a", 0) for t, c in per_thread.items() if t != "0")
    assert workers == [200, 201, 202, 203]


def test_probes_build_call_paths_like_compiler_hooks(tmp_path):
    exe = build_plain(tmp_path)
    out = tmp_path / "exp"
    run(out, exe, "50", opts=("--probe", "main,solve,update_*", "--trace"))
    paths = callpath_rows(report_csv(out, "--callpath"))
    assert int(paths[("main", "update_b", "solve")]["calls"]) == 50
    assert int(paths[("main", "update_a", "solve")]["calls"]) == 3
    assert int(paths[("update_a", "solve")]["calls"]) == 806


def test_library_function_probed_by_library_prefix(tmp_path):
    src = tmp_path / "libcall.c"
    src.write_text(
        "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "int main(int c, char **v) { volatile double s = 0; int n = atoi(v[1]);\n"
        "  for (int i = 0; i < n; i++) s += exp((double)i / n); printf(\"%f\\n\", s); return 0; }\n"
    )
    exe = tmp_path / "libcall"
    subprocess.run(["cc", "-O2", str(src), "-o", str(exe), "-lm"], check=True, env=clean_env())
    out = tmp_path / "exp"
    run(out, exe, "777", opts=("--probe", "libm.so:exp"))
    rows = [r for r in report_csv(out) if r["process"] == "all" and r["thread"] == "all"]
    counted = {r["function"]: int(r["calls"]) for r in rows}
    # exp and its aliases (expf64, exp@GLIBC_2.29) share one address: one region
    assert sum(v for k, v in counted.items() if k.startswith("exp")) == 777, counted


def test_program_output_unchanged_by_probes(tmp_path):
    exe = build_plain(tmp_path)
    plain = subprocess.run([str(exe), "300"], capture_output=True, text=True, check=True).stdout
    cp = run(tmp_path / "exp", exe, "300", opts=("--probe", "*"))
    assert cp.stdout == plain


@pytest.mark.parametrize("mode", [(), ("--trace", "--buffer", "4K")], ids=["profile", "trace"])
def test_callers_registers_survive_probed_calls_on_every_slow_path(tmp_path, mode):
    """programs/probe_vectors.c: callers hold values in every vector register (ymm in full when
    the processor has AVX) and in the caller-saved general ones across calls of step, and
    GCC's IPA keeps blend's doubles in xmm registers across calls of count. The probed calls
    take the slow paths: each thread's first probe, first sight of each function, and in trace
    mode a 4 KiB buffer flushed about every 250 calls."""
    exe = build_plain(tmp_path, "probe_vectors")
    args = ("3000", "500")  # calls of each function in main, then in a new thread
    plain = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True).stdout
    assert "mismatches 0 0" in plain, plain
    out = tmp_path / "exp"
    cp = run(out, exe, *args, opts=("--probe", "step,count", *mode))
    assert cp.stdout == plain  # every register as the caller left it: same mismatches, same doubles
    rows = report_csv(out)
    assert calls(rows, "step") == 3500
    assert calls(rows, "count") == 3500
    per_thread = {}
    for (proc, thread), rs in location_rows(rows).items():
        per_thread[thread] = {r["function"]: int(r["calls"]) for r in rs}
    assert sorted(c["step"] for c in per_thread.values()) == [500, 3000]
    if mode:
        flushes = sorted(c.get("plx_flush", 0) for c in per_thread.values())
        assert flushes[0] >= 3 and flushes[1] >= 20, per_thread


def wait_for(path, timeout=30):
    deadline = time.time() + timeout
    while not path.exists():
        assert time.time() < deadline, "%s never appeared" % path
        time.sleep(0.01)


def start_attach(pid, out, *opts):
    """`plx attach PID -o OUT OPTS` in the background, once it says it is attached."""
    p = subprocess.Popen(
        [str(PLX), "attach", str(pid), "-o", str(out), *opts],
        stderr=subprocess.PIPE, text=True, env=clean_env(),
    )
    line = p.stderr.readline()
    assert "attached to process %d" % pid in line, line + p.stderr.read()
    return p


def test_attach_counts_exactly_the_window_and_the_program_goes_on(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    (plain_dir / "go").touch()
    (plain_dir / "quit").touch()
    expected = subprocess.run([str(exe), "3", "2500", str(plain_dir)], capture_output=True,
                              text=True, check=True, timeout=60).stdout
    d = tmp_path / "run"
    d.mkdir()
    prog = subprocess.Popen([str(exe), "3", "2500", str(d)], stdout=subprocess.PIPE, text=True)
    try:
        out = tmp_path / "exp"
        att = start_attach(prog.pid, out, "--probe", "work")
        (d / "go").touch()
        wait_for(d / "done")
        plx("detach", str(prog.pid))
        assert att.wait(timeout=60) == 0, att.stderr.read()
        (d / "quit").touch()
        assert prog.wait(timeout=60) == 0
        assert prog.stdout.read() == expected  # the program's results are unchanged
    finally:
        prog.kill()
    rows = report_csv(out)
    assert calls(rows, "work") == 3 * 2500
    per_thread = sorted(int(r["calls"]) for r in rows
                        if r["function"] == "work" and r["process"] != "all")
    assert per_thread == [2500, 2500, 2500]
    text = plx("info", out).stdout
    assert "detached" in text and "warnings: none" in text, text


def test_attach_detach_fifty_times_to_eight_threads(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")
    prog = subprocess.Popen([str(exe), "8", "0", "-"])
    try:
        time.sleep(0.2)
        counted = []
        for i in range(50):
            out = tmp_path / ("exp%d" % i)
            plx("attach", str(prog.pid), "-o", out, "--probe", "work", "--duration", "0.05")
            assert prog.poll() is None, "the program died at attach %d" % i
            counted.append(calls(report_csv(out), "work"))
        assert all(c > 0 for c in counted), counted
    finally:
        prog.kill()
        prog.wait()


def attach_window(tmp_path, exe, before_go, attach_opts=()):
    """attach_loop 3 x 2500 under plx attach; before_go(pid) runs between the attach and the
    workers' start. Returns the experiment directory and the program's output."""
    d = tmp_path / "run"
    d.mkdir()
    prog = subprocess.Popen([str(exe), "3", "2500", str(d)], stdout=subprocess.PIPE, text=True)
    try:
        out = tmp_path / "exp"
        att = start_attach(prog.pid, out, *attach_opts)
        before_go(prog.pid)
        (d / "go").touch()
        wait_for(d / "done")
        plx("detach", str(prog.pid))
        assert att.wait(timeout=60) == 0, att.stderr.read()
        (d / "quit").touch()
        assert prog.wait(timeout=60) == 0
        return out, prog.stdout.read()
    finally:
        prog.kill()


def test_ctl_insert_while_running_measures_from_then_on(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")

    def insert(pid):
        assert plx("ctl", str(pid), "list").stdout == ""
        assert plx("ctl", str(pid), "insert", "work").stdout == "inserted 1\n"
        listed = plx("ctl", str(pid), "list").stdout.split()
        assert listed[0] == "work", listed

    out, _ = attach_window(tmp_path, exe, insert)
    assert calls(report_csv(out), "work") == 3 * 2500


def test_ctl_remove_while_running_stops_measuring(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")

    def remove(pid):
        assert plx("ctl", str(pid), "remove", "wo*").stdout == "removed 1\n"
        assert plx("ctl", str(pid), "list").stdout == ""

    out, output = attach_window(tmp_path, exe, remove, ("--probe", "work"))
    assert calls(report_csv(out), "work") == 0
    assert output.startswith("checksum ")


def test_ctl_of_a_process_not_measured_says_so(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")
    prog = subprocess.Popen([str(exe), "1", "0", "-"])
    try:
        cp = plx("ctl", str(prog.pid), "list", check=False)
        assert cp.returncode == 2 and "not measured by Parallax" in cp.stderr, cp.stderr
        assert prog.poll() is None
    finally:
        prog.kill()
        prog.wait()


def start_phases(tmp_path, out, n=1000, opts=("--probe", "phase_marker")):
    """ctl_phases DIR N under `plx run OPTS`; returns (Popen, DIR, pid)."""
    exe = build_plain(tmp_path, "ctl_phases")
    d = tmp_path / "run"
    d.mkdir()
    prog = subprocess.Popen(
        [str(PLX), "run", "-o", str(out), *opts, "--", str(exe), str(d), str(n)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
    )
    wait_for(d / "pid")
    pid = int((d / "pid").read_text())
    deadline = time.time() + 30
    while plx("ctl", str(pid), "list", check=False).returncode != 0:
        if time.time() > deadline or prog.poll() is not None:
            kill_quietly(pid)
            prog.kill()
            raise AssertionError(prog.stderr.read())
        time.sleep(0.01)
    return prog, d, pid


def kill_quietly(pid):
    """The program under plx run: killing plx run alone would leave it running."""
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def phase(d, p):
    (d / ("go%d" % p)).touch()
    wait_for(d / ("done%d" % p))


def test_ctl_over_the_socket_counts_exactly_the_probed_phase_and_sleeps_are_not_cut(tmp_path):
    out = tmp_path / "exp"
    prog, d, pid = start_phases(tmp_path, out)
    try:
        sock = next(out.glob("*.%d/ctl.sock" % pid))
        mode = os.stat(sock).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600, oct(mode)
        assert plx("ctl", str(pid), "list").stdout.split()[0] == "phase_marker"
        phase(d, 1)  # 2 x 1000 calls, work not probed
        assert plx("ctl", str(pid), "insert", "work").stdout == "inserted 1\n"
        phase(d, 2)  # 2 x 2000 calls, measured
        assert plx("ctl", str(pid), "remove", "work").stdout == "removed 1\n"
        phase(d, 3)  # 2 x 3000 calls, not measured
        (d / "quit").touch()
        stdout, stderr = prog.communicate(timeout=60)
        assert prog.returncode == 0, stderr
    finally:
        kill_quietly(pid)
        prog.kill()
    # the sleeping thread was stopped at each insert and remove: never woken early, never short
    assert stdout.splitlines()[1] == "sleeps some eintr 0 short 0", stdout
    rows = report_csv(out)
    assert calls(rows, "work") == 2 * 2000
    assert calls(rows, "phase_marker") == 3
    assert not sock.exists()  # removed at the process's end
    text = plx("info", out).stdout
    assert "warnings: none" in text, text


PYTHON = "/usr/bin/python3"  # the system's, which another user may run


def test_ctl_socket_refuses_another_user(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    base = Path(tempfile.mkdtemp(prefix="plx-ctl-"))
    try:
        base.chmod(0o755)  # only the socket's own mode stands between another user and it
        out = base / "exp"
        prog, d, pid = start_phases(tmp_path, out)
        try:
            sock = next(out.glob("*.%d/ctl.sock" % pid))

            def as_nobody():
                os.setgid(65534)
                os.setuid(65534)

            probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
                     "s.sendall(b'list\\n'); s.shutdown(socket.SHUT_WR)\n"
                     "print(s.recv(4096).decode(), end='')")
            cp = subprocess.run([PYTHON, "-c", probe, str(sock)], preexec_fn=as_nobody,
                                capture_output=True, text=True)
            assert cp.returncode != 0 and "PermissionError" in cp.stderr, cp.stderr
            # the file's mode aside, the runtime serves only its own user (SO_PEERCRED)
            sock.chmod(0o666)
            cp = subprocess.run([PYTHON, "-c", probe, str(sock)], preexec_fn=as_nobody,
                                capture_output=True, text=True)
            assert cp.stdout == "error: permission denied\n", cp.stdout + cp.stderr
            cp = subprocess.run([str(PLX), "ctl", str(pid), "list"], preexec_fn=as_nobody,
                                capture_output=True, text=True, env=clean_env())
            assert cp.returncode == 2, cp.stderr
            for p in (1, 2, 3):
                phase(d, p)
            (d / "quit").touch()
            assert prog.wait(timeout=60) == 0
        finally:
            kill_quietly(pid)
            prog.kill()
    finally:
        shutil.rmtree(base)


def test_stale_socket_of_a_dead_image_is_replaced_and_a_killed_process_named(tmp_path):
    exe = build_plain(tmp_path, "attach_loop")
    out = tmp_path / "exp"
    # the shell's runtime binds ctl.sock; exec keeps the pid but not the listener: the name is
    # stale when attach_loop's runtime starts, and replaced
    prog = subprocess.Popen(
        [str(PLX), "run", "-o", str(out), "--probe", "work", "--", "sh", "-c",
         "exec %s 1 0 -" % exe],
        stderr=subprocess.DEVNULL, env=clean_env(),
    )
    pid = None
    try:
        deadline = time.time() + 30
        while pid is None:
            assert time.time() < deadline
            for c in subprocess.run(["pgrep", "-f", str(exe)], capture_output=True,
                                    text=True).stdout.split():
                if open("/proc/%s/comm" % c).read().strip() == "attach_loop":
                    pid = int(c)
            time.sleep(0.01)
        while True:
            cp = plx("ctl", str(pid), "list", check=False)
            if cp.returncode == 0 and cp.stdout.startswith("work "):
                break
            assert time.time() < deadline, cp.stderr
            time.sleep(0.01)
        sock = next(out.glob("*.%d/ctl.sock" % pid))
        os.kill(pid, signal.SIGKILL)  # a crash: nothing removes the name
        prog.wait(timeout=30)
        assert sock.exists()
        cp = plx("ctl", str(pid), "list", check=False)
        assert cp.returncode == 2 and "no process %d" % pid in cp.stderr, cp.stderr
        plx("info", out)  # the left socket is no part of the experiment's files
    finally:
        kill_quietly(pid)
        prog.kill()
        prog.wait()


def attach_to_rank0(tmp_path, mpi, exe, n, *opts):
    """`mpirun -np 2 EXE DIR N` (mpi_attach_loop.c's protocol); plx attach to rank 0 with OPTS
    before its loop, detach after it: the experiment and rank 0's output."""
    d = tmp_path / "run"
    d.mkdir()
    job = subprocess.Popen(mpi.mpirun_cmd(2, exe, d, n), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        deadline = time.time() + 90  # mpirun's start on a loaded machine
        while not (d / "pid").exists():
            if time.time() > deadline or job.poll() is not None:
                job.terminate()
                raise AssertionError("rank 0 never started:\n%s" % (job.communicate(timeout=30),))
            time.sleep(0.01)
        pid = int((d / "pid").read_text())
        out = tmp_path / "exp"
        att = start_attach(pid, out, *opts)
        (d / "go").touch()
        wait_for(d / "done0")
        plx("detach", str(pid))
        assert att.wait(timeout=60) == 0, att.stderr.read()
        (d / "quit").touch()
        stdout, stderr = job.communicate(timeout=60)
        assert job.returncode == 0, stderr
    finally:
        if job.poll() is None:  # mpirun passes SIGTERM on to its ranks; SIGKILL would not
            job.terminate()
            try:
                job.wait(timeout=10)
            except subprocess.TimeoutExpired:
                job.kill()
    return out, stdout


@pytest.mark.parametrize("impl", ["open-mpi", "mpich"])
def test_attach_to_one_mpi_rank_measures_its_messages_over_the_window(tmp_path, impl):
    """mpi_attach_loop (plain mpicc) under mpirun -np 2; plx attach to rank 0 before the loop,
    detach after: the rank is known, and its probed function, MPI calls and messages (partner,
    tag, bytes) are exactly the program's own counts over the window."""
    from mpi_impls import IMPLS

    mpi = IMPLS[impl]
    mpi.require()
    exe = tmp_path / "mpi_attach_loop"
    subprocess.run([mpi.mpicc, "-O2", "-g", str(PROGRAMS / "mpi_attach_loop.c"), "-o", str(exe)],
                   check=True, env=clean_env())
    n = 300
    out, stdout = attach_to_rank0(tmp_path, mpi, exe, n, "--probe", "compute", "--trace")
    assert stdout == "sent %d received %d computed %d\n" % (n, n, n)
    rows = report_csv(out)
    assert calls(rows, "compute") == n
    assert calls(rows, "MPI_Send") == n
    assert calls(rows, "MPI_Recv") == n
    info = plx("info", out).stdout
    assert re.search(r"rank\s+0 of 2", info), info
    events = plx("export", out, "--format", "text", "-o", "-").stdout.splitlines()
    sends = [e.split(None, 3)[3] for e in events if " send " in e]
    recvs = [e.split(None, 3)[3] for e in events if " recv " in e]
    assert sends == ["MPI_Send  to=1 tag=7 bytes=400 comm=c0"] * n, sends[:3]
    assert recvs == ["MPI_Recv  from=1 tag=8 bytes=40 comm=c0"] * n, recvs[:3]


@pytest.mark.parametrize("impl", ["open-mpi", "mpich"])
def test_attach_to_a_fortran_mpi_rank_measures_its_mpif_calls(tmp_path, impl):
    """mpi_attach_loop.f90 (plain mpifort, mpif.h): its calls go through the implementation's
    Fortran bindings (mpi_send_), which call the C routine's entry (Open MPI's PMPI_Send shares
    MPI_Send's address; MPICH's binding calls MPI_Send), so the redirected entries measure them:
    exact calls, messages and barriers over the window."""
    from mpi_impls import IMPLS

    mpi = IMPLS[impl]
    mpi.require()
    fc = mpi.mpifort
    require_tools(fc, what="%s's Fortran compiler wrapper %s" % (mpi.name, fc))
    exe = tmp_path / "mpi_attach_loop_f"
    subprocess.run([fc, "-O2", "-g", str(PROGRAMS / "mpi_attach_loop.f90"), "-o", str(exe)],
                   check=True, env=clean_env())
    n = 200
    out, stdout = attach_to_rank0(tmp_path, mpi, exe, n, "--trace")
    assert stdout.split() == ["sent", str(n), "received", str(n), "barriers", str(n // 10)]
    rows = report_csv(out)
    assert calls(rows, "MPI_Send") == n
    assert calls(rows, "MPI_Recv") == n
    assert calls(rows, "MPI_Barrier") == n // 10
    events = plx("export", out, "--format", "text", "-o", "-").stdout.splitlines()
    sends = [e.split(None, 3)[3] for e in events if " send " in e]
    recvs = [e.split(None, 3)[3] for e in events if " recv " in e]
    assert sends == ["MPI_Send  to=1 tag=7 bytes=400 comm=c0"] * n, sends[:3]
    assert recvs == ["MPI_Recv  from=1 tag=8 bytes=40 comm=c0"] * n, recvs[:3]


def test_ctl_insert_skips_a_function_a_thread_waits_in(tmp_path):
    """raw_nanosleep begins with its system call: the sleeping thread's program counter is
    inside the bytes a probe would displace, where it cannot be stepped out of."""
    exe = build_plain(tmp_path, "raw_sleep")
    out = tmp_path / "exp"
    prog = subprocess.Popen([str(PLX), "run", "-o", str(out), "--probe", "main", "--", str(exe)],
                            stdout=subprocess.PIPE, text=True, env=clean_env())
    pid = None
    try:
        pid = int(prog.stdout.readline())
        deadline = time.time() + 30
        while open("/proc/%d/task/%d/syscall" % (pid, max(tasks(pid)))).read().split()[0] != "35":
            assert time.time() < deadline
            time.sleep(0.01)
        assert plx("ctl", str(pid), "insert", "raw_nanosleep").stdout == "inserted 0\n"
        plx("detach", str(pid))
    finally:
        kill_quietly(pid)
        prog.wait()
    text = plx("info", out).stdout
    assert re.search(r"raw_nanosleep\s+skipped: a thread was waiting in a system call inside its "
                     r"first 5 bytes", text), text


def tasks(pid):
    return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))


def test_ctl_insert_remove_cycles_under_busy_threads_change_no_result(tmp_path):
    """Two threads call work() back to back while its entry is inserted and removed over and
    over (threads stopped inside the entry are stepped out): the program's results are those
    of a run without Parallax."""
    exe = build_plain(tmp_path, "ctl_phases")
    plain = tmp_path / "plain"
    plain.mkdir()
    for f in ("go1", "go2", "go3", "quit"):
        (plain / f).touch()
    n = 1500000
    expected = subprocess.run([str(exe), str(plain), str(n)], capture_output=True, text=True,
                              check=True, timeout=120).stdout
    out = tmp_path / "exp"
    prog, d, pid = start_phases(tmp_path, out, n)
    try:
        (d / "go1").touch()
        cycles = 0
        while not (d / "done1").exists() or cycles < 5:
            assert plx("ctl", str(pid), "insert", "work").stdout == "inserted 1\n"
            assert plx("ctl", str(pid), "remove", "work").stdout == "removed 1\n"
            cycles += 1
        for p in (2, 3):
            phase(d, p)
        (d / "quit").touch()
        stdout, stderr = prog.communicate(timeout=120)
        assert prog.returncode == 0, stderr
    finally:
        kill_quietly(pid)
        prog.kill()
    assert stdout == expected
    text = plx("info", out).stdout
    assert "warnings: none" in text, text
    # one line per function however often it was inserted, with each interval it was measured
    assert "probes      2 probed, 0 skipped" in text, text
    spans = re.search(r"work\s+measured (.*)", text).group(1).split(", ")
    assert len(spans) == cycles, (len(spans), cycles)


def test_ctl_reload_over_the_socket_switches_counters_at_the_next_call(tmp_path):
    """A probed process re-reads its filter file's counters rules when asked on its socket (no
    signal): work's calls of phase 1 count the first events, those of phase 2 the new ones."""
    filt = tmp_path / "f.filter"
    filt.write_text("counters work task-clock\n")
    out = tmp_path / "exp"
    prog, d, pid = start_phases(tmp_path, out, opts=("--probe", "work", "--filter", str(filt),
                                                     "--reload-signal", "none"))
    try:
        phase(d, 1)
        filt.write_text("counters work page-faults\n")
        assert plx("ctl", str(pid), "reload").stdout == "process %d: %s re-read\n" % (pid, filt)
        phase(d, 2)
        assert plx("ctl", str(pid), "remove", "work").stdout == "removed 1\n"
        phase(d, 3)
        (d / "quit").touch()
        assert prog.wait(timeout=60) == 0
    finally:
        kill_quietly(pid)
        prog.kill()
    text = plx("report", out, "--counters", "--format", "csv").stdout
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["function"] == "work"]
    # one row per worker thread and epoch: each thread's 1000 calls of phase 1, 2000 of phase 2
    got = sorted((r["epoch"], int(r["calls"]), bool(r["task-clock"]), bool(r["page-faults"]))
                 for r in rows)
    assert got == [("0", 1000, True, False)] * 2 + [("1", 2000, False, True)] * 2, got


def test_attach_retries_a_function_a_stopped_thread_was_inside(tmp_path):
    """At attach, raw_sleep's thread is stopped inside raw_nanosleep's first bytes: attach skips
    it, then the runtime tries again once plx attach has let the threads go (stepping a thread
    out where it can); this one waits in its system call there, which is the final reason."""
    exe = build_plain(tmp_path, "raw_sleep")
    prog = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(prog.stdout.readline())
        deadline = time.time() + 30
        while open("/proc/%d/task/%d/syscall" % (pid, max(tasks(pid)))).read().split()[0] != "35":
            assert time.time() < deadline
            time.sleep(0.01)
        out = tmp_path / "exp"
        plx("attach", str(pid), "-o", out, "--probe", "raw_nanosleep", "--duration", "0.3")
        assert prog.poll() is None
    finally:
        prog.kill()
        prog.wait()
    text = plx("info", out).stdout
    assert "probes      0 probed, 1 skipped" in text, text
    assert re.search(r"raw_nanosleep\s+skipped: a thread was waiting in a system call inside its "
                     r"first 5 bytes", text), text


def test_attach_keeps_the_names_threads_were_given_before_it(tmp_path):
    """Threads named before plx attach (pthread_setname_np, which no wrapper saw) were
    reported as thread-N: each keeps its name."""
    exe = build_plain(tmp_path, "attach_names")
    d = tmp_path / "run"
    d.mkdir()
    prog = subprocess.Popen([str(exe), str(d)])
    try:
        wait_for(d / "ready")
        out = tmp_path / "exp"
        att = start_attach(prog.pid, out, "--probe", "work")
        (d / "go").touch()
        wait_for(d / "done")
        plx("detach", str(prog.pid))
        assert att.wait(timeout=60) == 0, att.stderr.read()
        (d / "quit").touch()
        assert prog.wait(timeout=60) == 0
    finally:
        prog.kill()
    rows = report_csv(out)
    names = sorted(r["thread_name"] for r in rows
                   if r["function"] == "work" and r["process"] != "all")
    assert names == ["named-0", "named-1", "named-2"]
    assert calls(rows, "work") == 30


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_probe_globs_match_qualified_cxx_names(tmp_path, cxx):
    """programs/probe_cxx.cpp built with a plain -O2: `--probe 'ns::Solver::step*,twice*'`
    selects ns::Solver::step and both instances of the template twice, by the names filters
    match (demangled, without the return type). The globs matched only the mangled symbols
    (_ZN2ns6Solver4stepEi): plx run refused them before the program ran (exit 2), and with
    PLX_PROBE set by hand the runtime probed nothing."""
    require_tools(cxx)
    exe = tmp_path / "probe_cxx"
    cp = subprocess.run([cxx, "-O2", str(PROGRAMS / "probe_cxx.cpp"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, cp.stderr
    out = tmp_path / "exp"
    cp = run(out, exe, "100", opts=("--probe", "ns::Solver::step*,twice*"))
    assert cp.stdout == "9900 10100\n"
    counted = {r["function"]: int(r["calls"]) for r in report_csv(out)
               if r["process"] == "all" and r["thread"] == "all"}
    assert {k: v for k, v in counted.items() if "step" in k or "twice" in k} == {
        "ns::Solver::step(int)": 100, "int twice<int>(int)": 200, "long twice<long>(long)": 100}
    # the runtime alone (PLX_PROBE, never checked by plx run) matches the same
    env = clean_env({"LD_PRELOAD": LIBPLX, "PLX_OUTPUT": tmp_path / "env",
                     "PLX_PROBE": "ns::Solver::*"})
    cp = subprocess.run([str(exe), "7"], capture_output=True, text=True, env=env)
    assert cp.returncode == 0 and cp.stdout == "42 56\n", cp.stderr
    assert calls(report_csv(tmp_path / "env"), "ns::Solver::step(int)") == 7


def test_probe_of_a_library_loaded_with_dlopen_is_said_unchecked(tmp_path):
    """`LIB:GLOB` naming no library the program needs (one it would dlopen) cannot be checked
    before the program runs: plx run says so, and that it is not probed at start-up."""
    exe = build_plain(tmp_path)
    cp = run(tmp_path / "exp", exe, "10", opts=("--probe", "solve,libdl_only:entry*"))
    assert ("plx: --probe 'libdl_only:entry*': no library the program needs is named "
            "libdl_only*: not checked; a library loaded later with dlopen is not probed at "
            "start-up (plx ctl PID insert 'libdl_only:entry*' once it is loaded)\n") in cp.stderr
    assert calls(report_csv(tmp_path / "exp"), "solve") == 10 + 3 + 200 + 201 + 202 + 203


def probe_throw_paths(n=30):
    """programs/probe_throw.cpp's call paths and counts for n rounds (step throws for i % 3 == 0:
    directly under solve_inner n/3 times, under the 5 deep frames for (i + 1) % 3 == 0)."""
    top = ("main", "solve_outer(int)")
    inner = top + ("solve_inner(int)",)
    thrown = n // 3
    want = {("main",): 1, top: n, top + ("after(int)",): n + 2 * thrown, inner: n,
            inner + ("step(int)",): n}
    d = inner
    for _ in range(5):
        d += ("deep(int, int)",)
        want[d] = n - thrown
    want[d + ("step(int)",)] = n - thrown
    return want


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_exceptions_through_probed_functions(tmp_path, cxx, opt, mode):
    """programs/probe_throw.cpp built plain: every function probed, exceptions thrown through
    probed frames (1 and 6 deep) and caught by a probed function whose first instructions hold
    a call. The program runs as without plx and every path is exact after each catch (was: the
    unwinder met the exit trampoline as a return address, or the relocated call's return
    address in the stub, found no frame and called std::terminate: SIGABRT)."""
    from conftest import paths_of

    require_tools(cxx)
    exe = tmp_path / "probe_throw"
    cp = subprocess.run([cxx, opt, "-g", str(PROGRAMS / "probe_throw.cpp"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, cp.stderr
    out = tmp_path / "exp"
    opts = ("--probe", "main,solve*,step*,deep*,after*") + (("--trace",) if mode == "trace" else ())
    cp = run(out, exe, opts=opts)
    assert cp.stdout == "solve 30 step 50 deep 100 caught 20\n", cp.stderr
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    assert calls == probe_throw_paths()


def test_cold_parts_of_functions_are_not_probed(tmp_path):
    """GCC's `f.cold` holds f's unlikely blocks, entered by a jump from f: the word at its stack
    pointer is no return address. `--probe 'step*'` on a -O2 build whose step has a cold part
    (its throw) probes step only, and says why the cold part is skipped (was: its "return
    address", a word of f's frame, replaced: a call counted that never was, and a crash when
    the word mattered)."""
    exe = tmp_path / "probe_throw"
    cp = subprocess.run(["g++", "-O2", "-g", str(PROGRAMS / "probe_throw.cpp"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, cp.stderr
    syms = subprocess.run(["nm", str(exe)], capture_output=True, text=True).stdout
    assert re.search(r" _Z4stepi\.cold\b", syms), syms
    out = tmp_path / "exp"
    cp = run(out, exe, opts=("--probe", "step*,solve*"))
    assert cp.stdout == "solve 30 step 50 deep 100 caught 20\n", cp.stderr
    counted = {r["function"]: int(r["calls"]) for r in report_csv(out)
               if r["process"] == "all" and r["thread"] == "all" and r["function"] != "plx_symbols"}
    assert counted == {"step(int)": 50, "solve_outer(int)": 30, "solve_inner(int)": 30}, counted
    text = plx("info", out).stdout
    assert re.search(r"(?m)^ +_Z4stepi\.cold +skipped: a cold part of a function \(reached by a "
                     r"jump, not a call\): it has no return address of its own$", text), text


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_exceptions_through_probed_functions_under_attach(tmp_path, cxx):
    """plx attach to a running C++ program (plain -O2 build) whose throws pass probed frames:
    the program bound its unwinder and C++ runtime before libplx came, so libplx's own entries
    were never called and the first throw met the exit trampoline as a return address and
    ended in std::terminate (SIGABRT). The unwinder's entries are redirected to libplx's: the
    program runs as without plx and every path of the window is exact."""
    from conftest import paths_of

    require_tools(cxx)
    exe = tmp_path / "probe_throw"
    cp = subprocess.run([cxx, "-O2", "-g", str(PROGRAMS / "probe_throw.cpp"), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, cp.stderr
    n = 300
    d = tmp_path / "run"
    d.mkdir()
    prog = subprocess.Popen([str(exe), str(n), str(d)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out = tmp_path / "exp"
        att = start_attach(prog.pid, out, "--probe", "solve*,step*,deep*,after*")
        (d / "go").touch()
        wait_for(d / "done")
        plx("detach", str(prog.pid))
        assert att.wait(timeout=60) == 0, att.stderr.read()
        (d / "quit").touch()
        status = prog.wait(timeout=60)
        stdout, stderr = prog.communicate()
        assert status == 0, stderr
        assert stdout == "solve %d step %d deep %d caught %d\n" % (n, n + 2 * n // 3, 10 * n // 3,
                                                                  2 * n // 3), stderr
    finally:
        prog.kill()
    # main was running when the probes came: the paths begin at solve_outer
    want = {p[1:]: c for p, c in probe_throw_paths(n).items() if len(p) > 1}
    assert {p: c for p, (c, _) in paths_of(out).items()} == want
    text = plx("info", out).stdout
    assert "_Unwind" not in text and "__cxa" not in text, text
