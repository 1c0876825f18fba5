"""Probes: functions of a program built with plain `gcc -O2` measured by `plx run --probe`.

programs/probe_calls.c: main calls update_b N times and update_a 3 times; four workers call
update_a 200, 201, 202 and 203 times; update_a and update_b call solve; tiny (3 bytes) is too
short to probe. Counts come from the program's own structure, exactly.
"""

import subprocess

from conftest import PROGRAMS, calls, callpath_rows, clean_env, location_rows, plx, report_csv, run


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
