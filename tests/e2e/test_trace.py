"""Event traces (--trace): the raw trace.plx against the report, small buffers, clocks."""

import re
import struct
from collections import Counter
from pathlib import Path

import pytest

import plx_codec
from plx_codec import FILE_KINDS, decode, events, read_file
from plx_schema import RECORD_IDS, RECORDS, SUBTYPES

from conftest import (
    EPS,
    RUNTIME_REGIONS,
    all_threads,
    calls,
    info,
    info_thread_lines,
    plx,
    process_dirs,
    report_csv,
    report_json,
    run,
    total_rows,
)

FIB_CALLS = 21891


def region_names(process_file):
    kind, records = read_file(process_file)
    assert kind == FILE_KINDS["process"]
    names = {}
    for rtype, p in records:
        if rtype == RECORD_IDS["RegionDef"]:
            r = decode(rtype, p)
            names[r["region_id"]] = r["name"]
    return names


def decode_trace(trace_file):
    """{thread: Counter(region id -> enters)}, chunks per thread, event words per thread;
    checks that every exit matches the latest unmatched enter of its thread."""
    kind, records = read_file(trace_file)
    assert kind == FILE_KINDS["trace"]
    enters, chunks, words_per_thread, stacks = {}, Counter(), Counter(), {}
    for rtype, p in records:
        if rtype != RECORD_IDS["TraceChunk"]:
            continue
        h = decode(rtype, p)
        thread, count = h["thread"], h["event_count"]
        words = struct.unpack_from("<%dQ" % count, p, h["events"])
        chunks[thread] += 1
        words_per_thread[thread] += count
        stack = stacks.setdefault(thread, [])
        c = enters.setdefault(thread, Counter())
        for name, _ticks, ev in events(words, h["base_ticks"]):
            if name == "enter":
                stack.append(ev["region"])
                c[ev["region"]] += 1
            elif name == "exit":
                assert stack and stack[-1] == ev["region"], "exit of %d does not match" % ev["region"]
                stack.pop()
            else:
                assert name != "unknown", "an event no reader knows in %s" % trace_file
    return enters, chunks, words_per_thread, stacks


@pytest.fixture(scope="module")
def small_buffer_exp(fib_bin, exp_root):
    out = exp_root / "trace-4k"
    run(out, fib_bin, opts=("--trace", "--buffer", "4K"))
    return out


def test_raw_trace_matches_report(small_buffer_exp):
    (pdir,) = process_dirs(small_buffer_exp)
    names = region_names(pdir / "process.plx")
    assert names[0] == "plx_flush" and names[1] == "plx_symbols"
    enters, chunks, words, stacks = decode_trace(pdir / "trace.plx")
    assert list(enters) == [0]
    by_name = {names[r]: n for r, n in enters[0].items()}
    assert by_name["fib"] == FIB_CALLS
    assert by_name["main"] == 1
    assert stacks[0] == []  # the program returned from main: everything closed
    rows = report_csv(small_buffer_exp)
    for name, n in by_name.items():
        assert calls(rows, name) == n, name
    # a flush of a full buffer shows as one plx_flush at the start of the next chunk
    assert chunks[0] > 40
    assert by_name["plx_flush"] == chunks[0] - 1
    # plx info counts the event words written
    (line,) = info_thread_lines(info(small_buffer_exp).stdout)
    assert line["trace_events"] == words[0]
    assert line["lost"] == 0


def test_small_buffer_counts_exact(small_buffer_exp):
    rows = report_csv(small_buffer_exp)
    assert calls(rows, "fib") == FIB_CALLS
    assert calls(rows, "main") == 1
    fib = [r for r in rows if r["process"] == "all" and r["function"] == "fib"][0]
    # fib's children: fib itself, and the flushes that happened while it ran
    flushes = calls(rows, "plx_flush")
    assert int(fib["child_calls"]) <= FIB_CALLS - 1 + flushes
    assert int(fib["child_calls"]) >= FIB_CALLS - 1


def test_flush_set_apart_from_the_program(small_buffer_exp):
    """The runtime's buffer flushes are its own rows, children of the thread's root, and their
    time is in no function of the program, inclusive or exclusive (as in a profile)."""
    (pdir,) = process_dirs(small_buffer_exp)
    _, chunks, _, _ = decode_trace(pdir / "trace.plx")
    flat = {r["function"]: r for r in total_rows(report_csv(small_buffer_exp))}
    flush, fib, main = flat["plx_flush"], flat["fib"], flat["main"]
    assert int(flush["calls"]) == chunks[0] - 1
    assert float(flush["inclusive_s"]) > 0
    # fib calls only fib: its inclusive time is its exclusive time, no flush in either
    assert float(fib["inclusive_s"]) == pytest.approx(float(fib["exclusive_s"]), abs=EPS)
    assert float(main["inclusive_s"]) == pytest.approx(
        float(main["exclusive_s"]) + float(fib["inclusive_s"]), abs=EPS
    )
    assert int(fib["child_calls"]) == FIB_CALLS - 1
    assert int(main["child_calls"]) == 1
    paths = [r for r in report_csv(small_buffer_exp, "--callpath") if r["process"] != "all"]
    flushes = [r for r in paths if r["function"] == "plx_flush"]
    assert [r["callpath"] for r in flushes] == ["plx_flush"]
    assert int(flushes[0]["calls"]) == chunks[0] - 1
    assert not any("=> plx_" in r["callpath"] for r in paths)
    # gprof: the flush is called by no function of the program
    text = plx("report", small_buffer_exp, "--gprof").stdout
    entry = text.split("plx_flush [")[0].rsplit("---", 1)[-1]
    assert "<spontaneous>" in entry and "fib" not in entry, text
    # the critical path counts it apart from fib too
    cp = plx("critical-path", small_buffer_exp).stdout
    rows = {line.split()[-3]: float(line.split()[-2]) for line in cp.splitlines()[3:] if line.split()}
    assert rows["plx_flush"] == pytest.approx(float(flush["exclusive_s"]), abs=2e-6), cp
    assert rows["fib"] == pytest.approx(float(fib["exclusive_s"]), abs=2e-6), cp


def test_monotonic_clock(fib_bin, tmp_path):
    out = tmp_path / "mono"
    run(out, fib_bin, opts=("--trace",), env={"PLX_CLOCK": "monotonic"})
    text = info(out).stdout
    # ticks are nanoseconds; the calibration pairs may bend the rate by a few ppm
    m = re.search(r"^\s*clock\s+monotonic, ([\d.]+) MHz", text, re.M)
    assert m, text
    assert 500 < float(m.group(1)) < 2000
    rows = report_csv(out)
    assert calls(rows, "fib") == FIB_CALLS
    for r in rows:
        assert 0 <= float(r["exclusive_s"]) <= float(r["inclusive_s"]) + 1e-9


def test_tsc_clock_calibrated(fib_bin, tmp_path):
    out = tmp_path / "tsc"
    run(out, fib_bin)
    text = info(out).stdout
    m = re.search(r"^\s*clock\s+(tsc|monotonic), ([\d.]+) MHz \((calibrated|rate measured at start|nanoseconds)\)", text, re.M)
    assert m, text
    assert float(m.group(2)) > 1.0


def test_user_events_from_trace(programs, tmp_path):
    prog = programs.get("api.c", "-O0", "-pthread")
    out = tmp_path / "api-trace"
    run(out, prog, opts=("--trace",))
    doc = report_json(out)
    threads = {t["name"]: t for _, t in all_threads(doc)}
    (ev,) = threads["coordinator"]["user_events"]
    assert (ev["name"], ev["count"], ev["min"], ev["max"]) == ("bytes", 3, 100.0, 300.0)
    assert ev["mean"] == pytest.approx(200.0)
    fns = {f["function"]: f["calls"] for f in doc["total"]["functions"]}
    assert fns["load"] == 3 and fns["iterate"] == 5 and fns["solve"] == 1
    assert all(t["profile_source"] == "rebuilt" for t in threads.values())


def test_threads_trace_chunks_per_thread(programs, tmp_path):
    prog = programs.get("threads.c", "-O0", "-pthread")
    out = tmp_path / "threads-trace"
    run(out, prog, opts=("--trace", "--buffer", "4K"))
    (pdir,) = process_dirs(out)
    names = region_names(pdir / "process.plx")
    enters, _, _, stacks = decode_trace(pdir / "trace.plx")
    assert len(enters) == 9
    work = [r for r, n in names.items() if n == "work"]
    assert len(work) == 1
    per_thread = sorted(c[work[0]] for c in enters.values())
    assert per_thread == [10] + [100] * 8
    assert all(s == [] for s in stacks.values())
    assert {n for c in enters.values() for n in (names[r] for r in c)} - RUNTIME_REGIONS == {
        "main",
        "work",
        "worker",
    }


GOLDEN = Path(__file__).resolve().parents[2] / "spec" / "golden"


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.expected")))
def test_golden_experiment_decodes_as_the_other_readers(name):
    # the Python codec (the schema's table) prints the dump the Rust reader and plx_check are
    # compared with: three readers of one schema agree on every golden experiment
    assert plx_codec.dump(GOLDEN / name) == (GOLDEN / (name + ".expected")).read_text()


def test_goldens_hold_every_record_and_subtype():
    text = "".join(p.read_text() for p in GOLDEN.glob("*.expected"))
    first = {line.split()[0] for line in text.splitlines() if line.strip()}
    assert {name for name, _ in RECORDS.values()} - {"TraceChunk"} <= first and "chunk" in first
    assert {name for name, _, _ in SUBTYPES.values()} <= first


RUNTIME_COST_REMEDY = (
    "remedy: a larger trace buffer (plx run --buffer SIZE or PLX_BUFFER), exclude the tiny "
    "function called most (tiny, 2000000 calls: `exclude tiny` in a filter file, plx run "
    "--filter FILE), or throttle them (`throttle CALLS USEC` in the filter file)"
)


def test_runtime_cost_on_the_critical_path_is_flagged(programs, tmp_path):
    """2,000,000 calls of a tiny function traced into a 4 KiB buffer: plx_flush (about 8,000
    flushes) is a large share of the thread's time and of its critical path. plx info, plx
    report and plx critical-path say so and name the remedy; the same program profiled (no
    trace, no flushes) has no such warning."""
    prog = programs.get("hot_tiny.c", "-O1")
    out = tmp_path / "small-buffer"
    run(out, prog, "2000000", opts=("--trace", "--buffer", "4K"))
    thread = r"is \d+\.\d % of \d+\.0's time: it lies inside the measured times of " \
             r"the functions it interrupted; "
    lines = [l for l in info(out).stdout.splitlines() if "the runtime's own work (plx_flush " in l]
    assert len(lines) == 1, info(out).stdout
    assert re.search(thread + re.escape(RUNTIME_COST_REMEDY) + "$", lines[0]), lines[0]
    rep = plx("report", out)
    assert re.search(r"^plx: warning: .*the runtime's own work \(plx_flush .*" + thread
                     + re.escape(RUNTIME_COST_REMEDY) + "$", rep.stderr, re.M), rep.stderr
    cp = plx("critical-path", out)
    assert re.search(r"^plx: warning: the runtime's own work \(plx_flush \d+\.\d+ s.*\) is \d+\.\d % "
                     r"of the critical path: the path runs through the measurement itself; "
                     r"remedy: a larger trace buffer \(plx run --buffer SIZE or PLX_BUFFER\)",
                     cp.stderr, re.M), cp.stderr
    normal = tmp_path / "profile"
    run(normal, prog, "2000000")
    assert "warnings: none" in info(normal).stdout
    assert "runtime's own work" not in plx("report", normal).stderr
