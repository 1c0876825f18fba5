"""Hostile experiments: files that are not regular files, a session of one endless line, a region
name longer than a format width allows, a trace cut in the middle. Every reading command answers
at once, names the file and what is wrong, never hangs or panics, and says what it could not
read (spec/format.md, "Reading untrusted experiments")."""

import csv
import json
import os
import re
import queue
import shutil
import socket
import struct
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest
from components import require_module, require_tools

from conftest import EXPORTS, PLX, ROOT, calls, clean_env, plx, process_dirs, report_csv, run

sys.path.insert(0, str(ROOT / "python"))

# generous: a refusal is immediate, a hang is what these tests catch
TIMEOUT = 60

# every command that reads an experiment, with the arguments it needs (OUT: an output path)
READERS = [
    ("info",),
    ("report",),
    ("report", "--callpath"),
    ("comm",),
    ("critical-path",),
    ("hierarchy",),
    ("query", "--metric", "calls"),
    ("histogram", "--metric", "cpu"),
    *EXPORTS,
    ("view", "--port", "0"),
    ("import", "--csv", "CSV", "--time-column", "t"),
    ("compare", "SELF"),
]


def reader_id(r):
    return "-".join(a for a in r if a not in ("OUT", "--format", "--metric", "-o", "--port", "0",
                                              "--csv", "CSV", "--time-column", "t", "SELF"))


def read_with(command, exp, tmp_path):
    """`plx COMMAND EXP ARGS...` under a timeout: a hang fails the test."""
    csv = tmp_path / "m.csv"
    csv.write_text("t,watts\n0,1\n1,2\n")
    places = {"OUT": tmp_path / "out", "CSV": csv, "SELF": exp}
    args = [places.get(a, a) for a in command[1:]]
    return plx(command[0], exp, *args, check=False, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def small_exp(programs, exp_root):
    """threads.c traced with 4 KiB buffers: 9 threads, a trace of several chunks."""
    out = exp_root / "hostile-small"
    run(out, programs.get("threads.c", "-O0", "-pthread"), opts=("--trace", "--buffer", "4K"))
    return out


@pytest.fixture
def copy(small_exp, tmp_path):
    dest = tmp_path / "exp"
    shutil.copytree(small_exp, dest)
    return dest


def run_of(command, exp):
    """plx compare names the run an error is of first."""
    return "%s: " % exp if command[0] == "compare" else ""


@pytest.mark.parametrize("command", READERS, ids=reader_id)
def test_fifo_as_session_file_is_refused_at_once(copy, tmp_path, command):
    os.mkfifo(copy / "session.txt")
    cp = read_with(command, copy, tmp_path)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr == "plx: %s%s/session.txt: not a regular file (a FIFO)\n" % (
        run_of(command, copy), copy)


@pytest.mark.parametrize("command", READERS, ids=reader_id)
def test_session_file_of_one_endless_line_is_refused(copy, tmp_path, command):
    # 2 MiB without a line break: more than a session file may hold (1 MiB)
    (copy / "session.txt").write_bytes(b"a" * (2 << 20))
    cp = read_with(command, copy, tmp_path)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr == ("plx: %s%s/session.txt: 2097152 bytes, more than the 1048576 such a "
                         "file may hold\n" % (run_of(command, copy), copy))


def test_session_file_linking_to_dev_zero_is_refused(copy, tmp_path):
    os.symlink("/dev/zero", copy / "session.txt")
    cp = plx("report", copy, check=False, timeout=TIMEOUT)
    assert cp.returncode == 2
    assert cp.stderr == "plx: %s/session.txt: not a regular file (a device)\n" % copy


@pytest.mark.parametrize("command", [("info",), ("report",)], ids=reader_id)
def test_fifo_as_end_file_is_warned_and_the_rest_read(copy, tmp_path, command):
    """end.plx, where the runtime writes the last records process.plx had no room for, is read
    only when it is a regular file: a FIFO there is a warning naming it, never waited on."""
    (pdir,) = [d for d in copy.iterdir() if (d / "process.plx").is_file()]
    os.mkfifo(pdir / "end.plx")
    cp = read_with(command, copy, tmp_path)
    assert cp.returncode == 0, cp.stderr
    assert "%s/end.plx: cannot read: not a regular file (a FIFO)" % pdir in cp.stdout + cp.stderr


@pytest.mark.parametrize("fmt", ["chrome", "otf2"])
def test_fifo_as_metrics_file_is_warned_and_the_export_written(copy, tmp_path, fmt):
    os.mkfifo(copy / "metrics.temp.plx")
    out = tmp_path / ("out." + fmt)
    cp = plx("export", copy, "--format", fmt, "-o", out, timeout=TIMEOUT)
    assert cp.stderr.splitlines()[0] == (
        "plx: warning: %s/metrics.temp.plx: cannot read: not a regular file (a FIFO)" % copy)
    assert re.fullmatch(r"plx: exported \d+ events as %s to \S+" % fmt, cp.stderr.splitlines()[1])
    assert out.exists()


def test_fifo_as_metrics_file_leaves_import_working(copy, tmp_path):
    os.mkfifo(copy / "metrics.temp.plx")
    csv = tmp_path / "m.csv"
    csv.write_text("t,watts\n0,1\n1,2\n2,3\n")
    cp = plx("import", copy, "--csv", csv, "--time-column", "t", timeout=TIMEOUT)
    assert cp.stderr == ("plx: imported 3 sample(s) of 1 metric(s) (watts) from %s into "
                         "%s/metrics.csv-m.plx\n" % (csv, copy))


def view_until_serving(exp):
    """Starts `plx view EXP`; returns (process, its output lines up to the serving line)."""
    p = subprocess.Popen([str(PLX), "view", str(exp), "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=clean_env())
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.rstrip("\n")) for x in p.stdout],
                     daemon=True).start()
    got = []
    try:
        while True:
            got.append(lines.get(timeout=TIMEOUT))
            if "Ctrl-C stops the server" in got[-1]:
                return p, got
    except queue.Empty:
        p.kill()
        p.wait()
        pytest.fail("plx view did not serve within %d s: %s" % (TIMEOUT, got))


def test_fifo_in_viewer_index_is_rebuilt_not_waited_on(copy):
    # a FIFO where the merge pass's index is read from: plx view used to wait for a writer
    index = copy / ".plx-view" / "index.bin"
    index.parent.mkdir(exist_ok=True)
    os.mkfifo(index)
    p, lines = view_until_serving(copy)
    try:
        assert "(index built from 9 threads of 1 process)" in lines[-1], lines
        assert stat.S_ISFIFO(index.lstat().st_mode)
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=TIMEOUT)


def test_region_name_longer_than_65535_bytes_in_critical_path(tmp_path):
    # "Formatting argument out of range": a padded column wider than 65,535 panicked
    name = "f" * 70000
    src = tmp_path / "longname.c"
    src.write_text("static volatile int s;\nvoid %s(void) { s++; }\n"
                   "int main(void) { %s(); return 0; }\n" % (name, name))
    exe = tmp_path / "longname"
    cc = subprocess.run([str(ROOT / "build/bin/plx-cc"), "-O0", str(src), "-o", str(exe)],
                        capture_output=True, text=True, env=clean_env())
    assert cc.returncode == 0, cc.stderr
    out = tmp_path / "exp"
    run(out, exe, opts=("--trace",))
    cp = plx("critical-path", out, timeout=TIMEOUT)
    lines = cp.stdout.splitlines()
    assert lines[0] == "Procedure-level Global Critical Path"
    # the function column is at most 60 wide (the name elided in its middle) + 2 + the
    # 12-wide time column; JSON keeps the whole name
    assert lines[1].index("time s") == lines[1].index("function") + 60 + 2 + 6
    (row,) = [line for line in lines if "f" * 29 + "..." in line]
    assert row.split()[1] == "f" * 29 + "..." + "f" * 28
    assert len(row) == len(lines[1])
    doc = json.loads(plx("critical-path", out, "--format", "json", timeout=TIMEOUT).stdout)
    assert [i["name"] for i in doc["items"] if i["name"].startswith("fff")] == [name]


def warning_lines(text):
    return [line for line in text.splitlines() if line.startswith("plx: warning: ")]


@pytest.fixture
def cut_trace(copy):
    """The small experiment with its trace cut in the middle."""
    (pdir,) = process_dirs(copy)
    trace = pdir / "trace.plx"
    os.truncate(trace, trace.stat().st_size // 2)
    return copy, trace


def test_cut_trace_is_warned_by_query_and_hierarchy_as_by_report(cut_trace):
    exp, trace = cut_trace
    want = warning_lines(plx("report", exp).stderr)
    # the cut record, and each thread whose events are gone
    assert re.fullmatch(r"plx: warning: %s: offset \d+: truncated record \(type 32, \d+ byte "
                        r"payload\): \d+ bytes missing" % re.escape(str(trace)), want[0])
    lost = [w for w in want if "trace event words its profile says were written are not in "
            "the file" in w]
    assert len(lost) >= 1 and len(want) == 1 + len(lost), want
    for args in (("query", "--metric", "calls"), ("query", "--metric", "calls", "--focus",
                                                  "code=/work"), ("hierarchy",)):
        cp = plx(args[0], exp, *args[1:])
        assert warning_lines(cp.stderr) == want, args


def test_cut_trace_is_warned_by_the_python_package(cut_trace):
    require_module("pandas")
    require_module("pyarrow")
    import parallax

    exp, _ = cut_trace
    want = [w[len("plx: warning: "):] for w in warning_lines(plx("report", exp).stderr)]
    e = parallax.open(exp, plx=str(PLX))
    with pytest.warns(parallax.PlxWarning) as got:
        prof = e.profiles
        e.sync_objects  # noqa: B018 (hierarchy and query: the same warnings, said once)
    assert [str(w.message) for w in got] == want
    assert len(prof) > 0


TIME = "/usr/bin/time"
CHAIN = 10000  # a call chain this deep: its callpaths name 50 million frames in all


@pytest.fixture(scope="module")
def deep_chain(programs, exp_root):
    out = exp_root / "hostile-deep"
    run(out, programs.get("deep_chain.c", "-O0"), str(CHAIN), env={"PLX_MAX_DEPTH": "1048576"})
    return out


def peak_rss_kib(args, tmp_path):
    """Runs plx ARGS (output discarded) under GNU time; returns (exit status, its peak RSS in
    KiB). Not wait4 from here: a child's maxrss starts at the forking Python's own RSS."""
    require_tools(TIME, what="GNU time (scripts/deps/14-time.sh)")
    report = tmp_path / "rss"
    with open(os.devnull, "wb") as null:
        cp = subprocess.run([TIME, "-f", "%M", "-o", str(report), str(PLX), *map(str, args)],
                            stdout=null, stderr=null, env=clean_env(), timeout=600)
    return cp.returncode, int(report.read_text().split()[-1])


@pytest.mark.parametrize("args", [("report", "--callpath"),
                                  ("report", "--callpath", "--format", "csv"),
                                  ("report", "--callpath", "--format", "json"),
                                  ("export", "--format", "tau", "-o", "OUT")],
                         ids=["report-callpath", "report-callpath-csv", "report-callpath-json",
                              "export-tau"])
def test_memory_linear_in_call_depth(deep_chain, tmp_path, args):
    rows = report_csv(deep_chain)
    # the whole chain was measured: one callpath node per call
    assert (calls(rows, "main"), calls(rows, "down"), calls(rows, "leaf")) == (1, CHAIN + 1, 1)
    size = sum(f.stat().st_size for f in deep_chain.rglob("*") if f.is_file())
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    status, rss = peak_rss_kib([args[0], deep_chain, *args[1:]], tmp_path)
    assert status == 0
    # a path held per node was quadratic: 474, 297, 12,260 and 1,064 MB here; now ~13 MB (the
    # JSON names every path whole, 2.1 GB for this chain: written as it is made)
    bound = 32 * 1024 + 64 * size // 1024
    assert rss < bound, "peak RSS %d KiB for %d bytes of input (bound %d KiB)" % (rss, size,
                                                                                  bound)



def chain_rows(path):
    """The rows of `plx report --callpath --tree --format csv` at `path`, by table: {(process,
    thread): {id: row}}."""
    tables = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            tables.setdefault((r["process"], r["thread"]), {})[int(r["id"])] = r
    return tables


def path_from_tree(rows, node):
    """The frames of node `node`, followed up its parents."""
    frames = []
    while node is not None:
        r = rows[node]
        frames.append(r["function"])
        node = int(r["parent"]) if r["parent"] else None
    return frames[::-1]


@pytest.mark.parametrize("fmt", ["csv", "json", "text"])
def test_callpath_tree_report_linear_in_call_depth(deep_chain, tmp_path, fmt):
    """plx report --callpath names each callpath whole: 2.1 GB of JSON for the 10,000-deep
    chain. --tree names a row by its node's id and its parent's: a bounded number of bytes per
    row, and the chain's path rebuilt from the parents."""
    out = tmp_path / ("report." + fmt)
    with open(out, "wb") as f:
        cp = subprocess.run([str(PLX), "report", str(deep_chain), "--callpath", "--tree",
                             "--format", fmt], stdout=f, stderr=subprocess.PIPE,
                            env=clean_env(), timeout=600)
    assert cp.returncode == 0, cp.stderr
    size = out.stat().st_size
    if fmt == "csv":
        tables = chain_rows(out)
        # one thread, then the total: the same tree twice
        assert sorted(t for _, t in tables) == ["0", "all"]
        rows = [r for (p, _), t in tables.items() for r in t.values()]
        for (_, thread), t in tables.items():
            (leaf,) = [i for i, r in t.items() if r["function"] == "leaf"]
            frames = path_from_tree(t, leaf)
            assert frames == ["main"] + ["down"] * (CHAIN + 1) + ["leaf"], thread
            chain = [r for r in t.values() if r["function"] in ("main", "down", "leaf")]
            assert len(chain) == CHAIN + 3 and {r["calls"] for r in chain} == {"1"}
    elif fmt == "json":
        doc = json.loads(out.read_text())
        (proc,) = doc["processes"]
        (thread,) = proc["threads"]
        rows = thread["callpaths"] + doc["total"]["callpaths"]
        by_id = {c["id"]: c for c in thread["callpaths"]}
        (leaf,) = [c for c in thread["callpaths"] if c["function"] == "leaf"]
        depth, c = 0, leaf
        while c["parent"] is not None:
            assert c["parent"] < c["id"]
            c, depth = by_id[c["parent"]], depth + 1
        assert (c["function"], depth) == ("main", CHAIN + 2)
        assert all("callpath" not in c for c in rows)
    else:
        text = out.read_text()
        rows = [line for line in text.splitlines() if line.endswith(("  down", "  leaf",
                                                                      "  main"))]
    assert len(rows) >= 2 * (CHAIN + 3)
    # a few numbers, a name and its source file per row: bounded whatever the depth (the whole
    # paths: 210 KB a row here)
    per_row = size / len(rows)
    assert per_row < 500, "%.0f bytes per row" % per_row


PROFILE_MEMORY = """
import json, resource, sys, tracemalloc
# the old profiles read 2.1 GB of JSON for this chain: fail fast rather than fill the machine
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
sys.path.insert(0, sys.argv[1])
import parallax
tracemalloc.start()
prof = parallax.open(sys.argv[2], plx=sys.argv[3]).profiles
_, peak = tracemalloc.get_traced_memory()
leaf = prof[prof["function"] == "leaf"].index[0]
print(json.dumps({"peak": peak, "rows": len(prof), "depth": int(prof["depth"].max()),
                  "leaf": prof["callpath"].iloc[leaf].split(" => "),
                  "down_calls": int(prof[prof["function"] == "down"]["calls"].sum()),
                  "unique": int(prof["callpath"].nunique())}))
"""


def test_python_profiles_linear_in_call_depth(deep_chain, tmp_path):
    """parallax's profiles parsed plx report's JSON, whose rows name their whole path (2.1 GB
    for the 10,000-deep chain) and held every path: read from --tree's rows, their peak memory
    is proportional to the depth."""
    require_module("pandas")
    require_module("pyarrow")
    script = tmp_path / "profile_memory.py"
    script.write_text(PROFILE_MEMORY)
    cp = subprocess.run([sys.executable, str(script), str(ROOT / "python"), str(deep_chain),
                         str(PLX)], capture_output=True, text=True, env=clean_env(),
                        timeout=600)
    assert cp.returncode == 0, cp.stderr[-2000:]
    got = json.loads(cp.stdout)
    # main, down 10,001 deep, leaf (and the runtime's own rows)
    assert got["depth"] == CHAIN + 2
    assert got["leaf"] == ["main"] + ["down"] * (CHAIN + 1) + ["leaf"]
    assert got["down_calls"] == CHAIN + 1
    assert got["unique"] == got["rows"] >= CHAIN + 3
    # a few KiB per callpath node (the whole paths: 400 MB of text)
    bound = 4096 * CHAIN
    assert got["peak"] < bound, "peak %d bytes for a chain %d deep (bound %d)" % (
        got["peak"], CHAIN, bound)


SMALL_CHAIN = 40


@pytest.fixture(scope="module")
def small_chain(programs, exp_root):
    out = exp_root / "hostile-small-chain"
    run(out, programs.get("deep_chain.c", "-O0"), str(SMALL_CHAIN))
    return out


def test_callpath_tree_is_the_callpath_report(small_chain, tmp_path):
    """--tree's rows are --callpath's rows, in the same order, with the same numbers: each
    path rebuilt from the parents is the one the row names whole."""
    whole = report_csv(small_chain, "--callpath")
    out = tmp_path / "tree.csv"
    out.write_text(plx("report", small_chain, "--callpath", "--tree", "--format", "csv").stdout)
    tables = chain_rows(out)
    with open(out, newline="") as f:
        tree = list(csv.DictReader(f))
    assert len(tree) == len(whole) >= SMALL_CHAIN + 3
    cols = ("process", "thread", "function", "calls", "child_calls", "exclusive_s",
            "inclusive_s", "thread_name", "host", "cpu_s")
    for w, t in zip(whole, tree):
        assert tuple(w[k] for k in cols) == tuple(t[k] for k in cols)
        rows = tables[(t["process"], t["thread"])]
        assert " => ".join(path_from_tree(rows, int(t["id"]))) == w["callpath"]


def test_python_profiles_are_the_callpath_report(small_chain):
    """parallax's profiles (read from --tree) hold plx report --callpath's rows exactly: the
    same paths, functions, depths, calls and times to the nanosecond."""
    require_module("pandas")
    require_module("pyarrow")
    import parallax

    whole = [r for r in report_csv(small_chain, "--callpath") if r["process"] != "all"]
    prof = parallax.open(small_chain, plx=str(PLX)).profiles
    assert len(prof) == len(whole) >= SMALL_CHAIN + 3
    got = [(str(r.pid), str(r.thread), r.callpath, r.function, r.depth, str(r.calls),
            str(r.child_calls), "%.9f" % r.exclusive_s, "%.9f" % r.inclusive_s)
           for r in prof.itertuples()]
    want = [(w["process"], w["thread"], w["callpath"], w["function"],
             w["callpath"].count(" => "), w["calls"], w["child_calls"], w["exclusive_s"],
             w["inclusive_s"]) for w in whole]
    assert got == want
    deepest = "main => " + "down => " * (SMALL_CHAIN + 1) + "leaf"
    assert list(prof[prof["callpath"] == deepest]["calls"]) == [1]
    assert prof["callpath"].nunique() == len(prof)
    # what an object column of the texts did: .str methods, groupby, value_counts, isin
    assert prof["callpath"].str.count(" => ").tolist() == prof["depth"].tolist()
    by_path = prof.groupby("callpath")["calls"].sum()
    assert by_path.to_dict() == {w["callpath"]: int(w["calls"]) for w in whole}
    assert prof["callpath"].value_counts().to_dict() == {w["callpath"]: 1 for w in whole}
    assert prof["callpath"].isin([deepest, "main"]).sum() == 2


def test_forged_calibration_is_warned(fib_bin, tmp_path):
    """Calibration pairs saying 1,000 ticks are 200 s: plx info and plx report warn, naming the
    rate measured at start and the time the file itself says the run took."""
    out = tmp_path / "exp"
    run(out, fib_bin)
    (pdir,) = process_dirs(out)
    path = pdir / "process.plx"
    data = bytearray(path.read_bytes())
    off, pairs, rate = 16, [], None
    while off + 8 <= len(data):
        rtype, _flags, length = struct.unpack_from("<HHI", data, off)
        if rtype == 2:  # Calibration: ticks u64, monotonic_ns u64
            pairs.append(off + 8)
        elif rtype == 3:  # ClockRate: ticks per second, f64
            (rate,) = struct.unpack_from("<d", data, off + 8)
        off += 8 + length
    assert len(pairs) == 2 and rate
    (t0, ns0), (t1, _) = (struct.unpack_from("<QQ", data, p) for p in pairs)
    struct.pack_into("<Q", data, pairs[1] + 8, ns0 + (t1 - t0) * 200_000_000)
    mtime = path.stat().st_mtime_ns
    path.write_bytes(bytes(data))
    os.utime(path, ns=(mtime, mtime))  # the file's own time is the run's
    rate_line = ("plx: warning: %s: the calibration records give 0.000005 MHz but the clock "
                 "rate measured at start is %.6f MHz: times may be wrong" % (path, rate / 1e6))
    cp = plx("report", out)
    # at 0.2 s a tick the runtime's own regions take seconds too: its cost is warned as well
    got = [w for w in warning_lines(cp.stderr) if "remedy: a larger trace buffer" not in w]
    assert len(got) == 2, got
    assert got[0] == rate_line
    m = re.fullmatch(r"plx: warning: %s: by its calibration records the process ran "
                     r"(\d+\.\d{3}) s, but it ended (\d+\.\d{3}) s after "
                     r"it started: times may be wrong" % re.escape(str(path)), got[1])
    assert m, got[1]
    # from the first pair to the process's end (after the last pair) at 0.2 s a tick
    assert float(m.group(1)) >= (t1 - t0) * 0.2 and float(m.group(2)) < 60
    text = plx("info", out).stdout
    assert rate_line[len("plx: warning: "):] in text


def test_calibration_is_checked_against_the_runs_end_not_the_files_time(fib_bin, tmp_path):
    """The calibration was checked against the process file's modification time, which a copy
    changes: an honest experiment whose start-up rate was mismeasured (as 64 ranks on 2 cores
    measure it, 20 times too high), copied with cp a day later, was warned as "times may be
    wrong". The run's own end record (CLOCK_REALTIME at the end) is the reference now: no
    warning, while forged pairs in the same copy are still found."""
    out = tmp_path / "exp"
    run(out, fib_bin)
    (pdir,) = process_dirs(out)
    data = bytearray((pdir / "process.plx").read_bytes())
    off, pairs = 16, []
    while off + 8 <= len(data):
        rtype, _flags, length = struct.unpack_from("<HHI", data, off)
        if rtype == 3:  # ClockRate: ticks per second, f64
            (rate,) = struct.unpack_from("<d", data, off + 8)
            struct.pack_into("<d", data, off + 8, rate * 20)
        elif rtype == 2:
            pairs.append(off + 8)
        off += 8 + length
    (pdir / "process.plx").write_bytes(bytes(data))
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(out), str(copy)], check=True)
    (cpdir,) = process_dirs(copy)
    later = time.time() + 86400
    os.utime(cpdir / "process.plx", (later, later))  # the copy made a day later
    cp = plx("report", copy)
    assert warning_lines(cp.stderr) == [], cp.stderr
    assert "warnings: none" in plx("info", copy).stdout
    # forged pairs (1,000 ticks as 200 s) in the copy: found against the end record, not the copy's time
    (t0, ns0), (t1, _) = (struct.unpack_from("<QQ", data, p) for p in pairs)
    struct.pack_into("<Q", data, pairs[1] + 8, ns0 + (t1 - t0) * 200_000_000)
    (cpdir / "process.plx").write_bytes(bytes(data))
    os.utime(cpdir / "process.plx", (later, later))
    got = [w for w in warning_lines(plx("report", copy).stderr) if "but it ended" in w]
    assert len(got) == 1, got


@pytest.fixture(scope="module")
def deep_chain_trace(programs, exp_root):
    out = exp_root / "hostile-deep-trace"
    run(out, programs.get("deep_chain.c", "-O0"), str(CHAIN), opts=("--trace",),
        env={"PLX_MAX_DEPTH": "1048576"})
    return out


def test_memory_linear_in_call_depth_viewer_callpaths(deep_chain_trace):
    """plx view's /api/profile names every callpath of the chain whole (350 MB): it is written
    to the connection as it is made, never held."""
    size = sum(f.stat().st_size for f in deep_chain_trace.rglob("*") if f.is_file())
    proc = subprocess.Popen([str(PLX), "view", str(deep_chain_trace)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    timer = threading.Timer(600, proc.kill)  # a hang fails, never blocks the suite
    timer.start()
    try:
        url = proc.stdout.readline().strip()
        m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})", url)
        assert m, url
        port, token = int(m.group(1)), m.group(2)
        with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
            s.sendall(f"GET /api/profile?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      "Connection: close\r\n\r\n".encode())
            head, body, got, last = None, b"", 0, b""
            while chunk := s.recv(1 << 20):
                if head is None:
                    body += chunk
                    if b"\r\n\r\n" in body:
                        head, _, body = body.partition(b"\r\n\r\n")
                        got = len(body)
                else:
                    got += len(chunk)
                    body = body if len(body) >= 64 else body + chunk[:64]
                last = (last + chunk)[-64:]
        lines = head.decode().split("\r\n")
        assert lines[0] == "HTTP/1.1 200 OK"
        length = int(dict(x.split(": ", 1) for x in lines[1:])["Content-Length"])
        # the whole answer came, as long as it said: every path of the chain, named whole
        assert got == length and length > CHAIN * CHAIN // 2 * len('"down",')
        assert body.startswith(b'{"callpaths":[[["') and last.endswith(b"]}")
        with open(f"/proc/{proc.pid}/status") as f:
            peak = int(next(x for x in f if x.startswith("VmHWM:")).split()[1])
        # the answer built whole was quadratic: 6.6 GB here; now ~19 MB
        bound = 32 * 1024 + 64 * size // 1024
        assert peak < bound, "peak RSS %d KiB for %d bytes of input (bound %d KiB)" % (
            peak, size, bound)
        assert proc.poll() is None
    finally:
        timer.cancel()
        proc.kill()
        proc.wait(timeout=10)


def test_a_poor_start_rate_beside_a_sound_calibration_is_not_warned(fib_bin, tmp_path):
    """64 ranks on 2 cores measured a 51,382 MHz clock at start for a 2,596 MHz one (the start's
    measurement is short); the calibration pairs, which span the run and agree with its wall
    time, are right, and warning "times may be wrong" over them was a false alarm."""
    out = tmp_path / "exp"
    run(out, fib_bin)
    (pdir,) = process_dirs(out)
    path = pdir / "process.plx"
    data = bytearray(path.read_bytes())
    off = 16
    while off + 8 <= len(data):
        rtype, _flags, length = struct.unpack_from("<HHI", data, off)
        if rtype == 3:  # ClockRate: ticks per second, f64
            (rate,) = struct.unpack_from("<d", data, off + 8)
            struct.pack_into("<d", data, off + 8, rate * 20)
        off += 8 + length
    mtime = path.stat().st_mtime_ns
    path.write_bytes(bytes(data))
    os.utime(path, ns=(mtime, mtime))
    assert [w for w in warning_lines(plx("report", out).stderr) if "calibration" in w] == []
