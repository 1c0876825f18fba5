"""Damaged and missing experiment files: what is intact is still reported, with a warning."""

import os
import re
import shutil
import struct

import pytest

from conftest import calls, plx, process_dirs, report_csv, report_json, run

FIB_CALLS = 21891


def records(path):
    """[(offset, type, payload length)] of a Parallax file (16-byte header, 8-byte record headers)."""
    data = path.read_bytes()
    assert data[:4] == b"PLX1"
    out, off = [], 16
    while off + 8 <= len(data):
        rtype, _flags, length = struct.unpack_from("<HHI", data, off)
        out.append((off, rtype, length))
        off += 8 + length
    assert off == len(data), "the good experiment is itself damaged"
    return out


def profile_words(pdir):
    """The trace event words thread 0's ThreadProfile says were written (its trace_events)."""
    prof = [r for r in records(pdir / "process.plx") if r[1] == 8][0]
    data = (pdir / "process.plx").read_bytes()
    return struct.unpack_from("<Q", data, prof[0] + 8 + 4 + 8 + 8)[0]


@pytest.fixture(scope="module")
def good_exp(fib_bin, exp_root):
    """A fib experiment with a trace of many chunks (4 KiB buffers)."""
    out = exp_root / "damage-good"
    run(out, fib_bin, opts=("--trace", "--buffer", "4K"))
    return out


@pytest.fixture
def damaged(good_exp, tmp_path):
    copy = tmp_path / "exp"
    shutil.copytree(good_exp, copy)
    (pdir,) = process_dirs(copy)
    return copy, pdir


def test_good_experiment(good_exp):
    cp = plx("report", good_exp, "--format", "csv")
    assert cp.stderr.strip() == ""
    assert calls(report_csv(good_exp), "fib") == FIB_CALLS
    (pdir,) = process_dirs(good_exp)
    chunks = [r for r in records(pdir / "trace.plx") if r[1] == 32]
    assert len(chunks) > 10


def test_truncated_trace(damaged):
    exp, pdir = damaged
    trace = pdir / "trace.plx"
    last_off, rtype, length = records(trace)[-1]
    assert rtype == 32
    cut = last_off + 8 + length // 2
    os.truncate(trace, cut)
    cp = plx("report", exp, "--format", "csv", check=False)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("process,thread,function,")
    warnings = [line for line in cp.stderr.splitlines() if line.startswith("plx: warning:")]
    # the cut record, and the event words the thread's profile counts that are not in the file
    assert len(warnings) == 2, cp.stderr
    assert warnings[1].endswith(
        "trace.plx: thread 0: %d of the %d trace event words its profile says were written are "
        "not in the file" % ((length - 32) // 8, profile_words(pdir))), warnings[1]
    assert "trace.plx" in warnings[0] and "truncated" in warnings[0]
    assert "offset %d" % last_off in warnings[0]
    assert "%d bytes missing" % (last_off + 8 + length - cut) in warnings[0]
    n = calls(report_csv(exp), "fib")
    # the last chunk's events are lost, the earlier chunks are intact
    assert FIB_CALLS - 4096 // 16 <= n < FIB_CALLS
    doc = report_json(exp)
    (w, _) = doc["warnings"]
    assert w["file"].endswith("trace.plx") and w["offset"] == last_off
    text = plx("report", exp).stdout
    assert "fib" in text


def test_garbage_after_process_file(damaged):
    exp, pdir = damaged
    proc = pdir / "process.plx"
    size = proc.stat().st_size
    with open(proc, "ab") as f:
        f.write(b"\xde\xad\xbe\xef" * 3 + b"\x01")  # 13 bytes
    cp = plx("report", exp, "--format", "csv", check=False)
    assert cp.returncode == 0, cp.stderr
    warnings = [line for line in cp.stderr.splitlines() if line.startswith("plx: warning:")]
    assert len(warnings) == 1, cp.stderr
    assert "process.plx" in warnings[0]
    assert "offset %d" % size in warnings[0]
    assert "13 bytes" in warnings[0]
    assert calls(report_csv(exp), "fib") == FIB_CALLS
    info = plx("info", exp).stdout
    assert "process.plx: offset %d" % size in info


def test_truncated_process_file(damaged):
    """Cutting process.plx inside its last record (ProcessEnd) loses only that record."""
    exp, pdir = damaged
    proc = pdir / "process.plx"
    last_off, rtype, length = records(proc)[-1]
    assert rtype == 12  # ProcessEnd
    os.truncate(proc, last_off + 8 + 4)
    cp = plx("report", exp, "--format", "csv", check=False)
    assert cp.returncode == 0, cp.stderr
    assert "process.plx" in cp.stderr and "truncated" in cp.stderr
    assert calls(report_csv(exp), "fib") == FIB_CALLS
    info = plx("info", exp).stdout
    assert "did not finish" in info


def test_process_file_cut_inside_its_thread_record(damaged):
    """Cut inside ThreadInfo (the region names after it are lost): the profile is rebuilt from
    the intact trace, and report and info say the same (was: info "rebuilt from trace", report
    "not measured (no instrumented code)")."""
    exp, pdir = damaged
    proc = pdir / "process.plx"
    (off, _, _) = [r for r in records(proc) if r[1] == 6][0]  # ThreadInfo
    os.truncate(proc, off + 8 + 5)
    cp = plx("report", exp, "--format", "csv", check=False)
    assert cp.returncode == 0, cp.stderr
    assert "not measured" not in plx("report", exp).stdout
    rows = report_csv(exp)
    # fib lost its name with the RegionDefs cut off, not its calls
    most = max((r for r in rows if r["process"] != "all"), key=lambda r: int(r["calls"]))
    assert most["function"].startswith("region ") and int(most["calls"]) == FIB_CALLS
    assert re.search(r"(?m)^\s+0\s+-\s+.*rebuilt from trace$", plx("info", exp).stdout)


def test_trace_cut_to_its_header_is_warned(damaged):
    """The profile counts the event words written to the trace: a trace holding fewer says so."""
    exp, pdir = damaged
    trace = pdir / "trace.plx"
    os.truncate(trace, 16)
    cp = plx("report", exp, check=False)
    assert cp.returncode == 0, cp.stderr
    words = profile_words(pdir)
    warning = ("plx: warning: %s: thread 0: %d of the %d trace event words its profile says were "
               "written are not in the file" % (trace, words, words))
    assert warning in cp.stderr.splitlines(), cp.stderr
    assert warning[len("plx: warning: "):] in plx("info", exp).stdout


def test_missing_process_file(damaged):
    exp, pdir = damaged
    (pdir / "process.plx").unlink()
    # without its process.plx the directory holds no process image: exit 2, naming the file
    for command in ("report", "info"):
        cp = plx(command, exp, check=False)
        assert cp.returncode == 2, cp.stderr
        assert "process.plx" in cp.stderr
        assert str(exp) in cp.stderr


def test_missing_trace_file(damaged):
    exp, pdir = damaged
    (pdir / "trace.plx").unlink()
    cp = plx("report", exp, "--format", "csv", check=False)
    assert cp.returncode == 0, cp.stderr
    assert "trace.plx" in cp.stderr and "missing" in cp.stderr
    info = plx("info", exp).stdout
    assert "trace.plx: missing" in info


@pytest.mark.parametrize("kind", ["empty", "random"])
@pytest.mark.parametrize("command", ["report", "info"])
def test_not_an_experiment(tmp_path, kind, command):
    d = tmp_path / kind
    d.mkdir()
    if kind == "random":
        (d / "notes.txt").write_text("hello\n")
        (d / "host.123").mkdir()
        (d / "host.123" / "other.plx").write_bytes(b"PLX1" + bytes(12))
    cp = plx(command, d, check=False)
    assert cp.returncode == 2
    assert "not a Parallax experiment" in cp.stderr
    assert str(d) in cp.stderr
    assert cp.stdout == ""


@pytest.mark.parametrize("command", ["report", "info"])
def test_nonexistent_path(tmp_path, command):
    d = tmp_path / "does-not-exist"
    cp = plx(command, d, check=False)
    assert cp.returncode == 2
    assert str(d) in cp.stderr
    assert "No such file or directory" in cp.stderr or "not a Parallax experiment" in cp.stderr


def test_not_a_directory(tmp_path):
    f = tmp_path / "file.plx"
    f.write_bytes(b"PLX1" + bytes(12))
    cp = plx("report", f, check=False)
    assert cp.returncode == 2
    assert str(f) in cp.stderr
