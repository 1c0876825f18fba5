"""--phase has one meaning in every command (docs/phases.md): the phase's span of time, what
every thread did meanwhile — the threads started inside the phase included."""

import csv
import io
import re

import pytest

from conftest import plx, report_csv, run, total_rows


@pytest.fixture(scope="module")
def phased(programs, exp_root):
    prog = programs.get("phase_threads.c", "-O0", "-pthread")
    out = exp_root / "phase-threads"
    run(out, prog, opts=("--trace",))
    return out


def by_thread(rows):
    """{thread_name: {function: calls}} of the per-thread rows."""
    out = {}
    for r in rows:
        if r["process"] != "all":
            out.setdefault(r["thread_name"], {})[r["function"]] = int(r["calls"])
    return out


def test_thread_started_inside_the_phase_is_in_it(phased):
    whole = {r["function"]: int(r["calls"]) for r in total_rows(report_csv(phased))}
    assert whole["leaf"] == 1 + 7 + 3 + 2
    rows = report_csv(phased, "--phase", "work")
    threads = by_thread(rows)
    assert threads["worker"]["worker"] == 1
    assert threads["worker"]["leaf"] == 7
    # main began before the phase: its time is there, no call of it
    assert threads["main"]["leaf"] == 3 and threads["main"]["main"] == 0
    assert threads["main"]["work"] == 1
    total = {r["function"]: int(r["calls"]) for r in total_rows(rows)}
    assert (total["leaf"], total["worker"], total["work"]) == (10, 1, 1)
    paths = [r["callpath"] for r in report_csv(phased, "--phase", "work", "--callpath")
             if r["process"] != "all" and r["thread_name"] == "worker"]
    assert "worker => leaf" in paths


def test_compare_and_report_give_the_same_numbers(phased):
    out = plx("compare", phased, "--phase", "work", "--format", "csv", "--top", "10").stdout
    calls = {row[0][len("Calls: "):]: float(row[2]) for row in csv.reader(io.StringIO(out))
             if row and row[0].startswith("Calls: ")}
    report = {r["function"]: int(r["calls"])
              for r in total_rows(report_csv(phased, "--phase", "work"))}
    assert calls["leaf"] == 10 and calls["worker"] == 1
    assert calls["work (phase)"] == 1  # the phase, apart from any function named work
    for f, n in calls.items():
        assert report.get(f.removesuffix(" (phase)"), 0) == n, f
    # and the time of the thread started inside: compare's per-function table vs report
    funcs = list(csv.DictReader(io.StringIO(
        plx("compare", phased, "--phase", "work", "--format", "csv", "--functions").stdout)))
    assert funcs, out
    worker = next(r for r in total_rows(report_csv(phased, "--phase", "work"))
                  if r["function"] == "worker")
    (row,) = [r for r in funcs if r["function"] == "worker"]
    assert float(worker["inclusive_s"]) > 0
    assert any(v == worker["inclusive_s"] for v in row.values()), (row, worker)


def test_phase_needs_a_trace(programs, tmp_path):
    prog = programs.get("phase_threads.c", "-O0", "-pthread")
    run(tmp_path / "p", prog)
    for cmd in (("report",), ("compare",)):
        cp = plx(*cmd, tmp_path / "p", "--phase", "work", check=False)
        assert cp.returncode == 2, cp.stderr
        assert "rerun with `plx run --trace`" in cp.stderr, cp.stderr


def test_a_window_after_the_run_is_an_error_naming_its_end(phased):
    """Every command of --phase/--window says a window past the traced processes' end holds
    nothing (was: empty tables, `No MPI messages`, 0 events exported, no word); one just inside
    is taken."""
    for cmd in (("report",), ("waits",), ("critical-path",), ("compare",), ("query", "--metric", "calls"),
                ("export", "--format", "text", "-o", str(phased.parent / "w.txt"))):
        for sel in (("--phase", "100:200"), ("--window", "100:")):
            cp = plx(*cmd, phased, *sel, check=False)
            assert cp.returncode == 2, (cmd, sel, cp.stderr)
            m = re.search(r"no traced event is in the window: it begins 100 s after the trace's "
                          r"first event, and the traced processes ended ([0-9.]+) s after it",
                          cp.stderr)
            assert m and 0 < float(m.group(1)) < 100, (cmd, cp.stderr)
    cp = plx("report", phased, "--window", "0:", "--format", "csv")
    assert total_rows(list(csv.DictReader(io.StringIO(cp.stdout))))
