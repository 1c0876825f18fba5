"""Probes: functions of a program built with plain `gcc -O2` measured by `plx run --probe`.

programs/probe_calls.c: main calls update_b N times and update_a 3 times; four workers call
update_a 200, 201, 202 and 203 times; update_a and update_b call solve; tiny (3 bytes) is too
short to probe. Counts come from the program's own structure, exactly.
"""

import re
import subprocess
import time

from conftest import PLX, PROGRAMS, calls, callpath_rows, clean_env, location_rows, plx, report_csv, run


def build_plain(tmp_path, name="probe_calls"):
    exe = tmp_path / name
    cp = subprocess.run(
        ["cc", "-O2", "-g", str(PROGRAMS / ("%s.c" % name)), "-o", str(exe), "-lm", "-pthread"],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, cp.stderr
    return exe


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
