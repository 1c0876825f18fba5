"""Call-stack sampling (`plx run --sample`): a program nobody recompiled (gcc/clang -O2 -g,
no frame pointers, no instrumentation) spins known CPU times in named functions on two threads;
each function's estimated time must be within 10 % of the CPU time its thread's clock measured,
under the right callers and thread; inside an API region the sampled frames hang under the
region; under mpirun every rank is sampled; samples that find no room are counted; a SIGKILLed program
keeps its samples."""

import csv
import io
import json
import os
import re
import signal
import subprocess
from collections import Counter

import pytest

from components import require_tools
from conftest import (PLX, PROGRAMS, _fail_message, clean_env, info, location_rows, plx, report_csv,
                      report_json, run)
from mpi_impls import IMPLS

SRC = PROGRAMS / "sample_spin.c"


def compile_plain(out, compiler="gcc", *defines, cc=None):
    cmd = [cc or compiler, "-O2", "-g", "-fomit-frame-pointer", *defines, str(SRC), "-o", str(out),
           "-pthread", "-lm"]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    return out


def truths(stdout):
    """{(thread name, function): CPU seconds} printed by the program."""
    found = re.findall(r"^truth (\S+) (\S+) ([0-9.]+)$", stdout, re.M)
    return [((t, f), float(s)) for t, f, s in found]


def sampled_rows(out):
    """[(thread name, callpath tuple, row)] of every thread's callpath rows."""
    rows = report_csv(out, "--callpath")
    return [(r["thread_name"], tuple(r["callpath"].split(" => ")), r)
            for loc in location_rows(rows).values() for r in loc]


def estimate(rows, thread, tail, process=None):
    """The one row of `thread` whose callpath ends with `tail`."""
    found = [(p, r) for t, p, r in rows
             if t == thread and p[-len(tail):] == tail and (process is None or r["process"] == process)]
    assert len(found) == 1, "expected one callpath of %s ending %r, found %r" % (
        thread, tail, [p for p, _ in found])
    return found[0]


def assert_within(estimated, truth, what):
    assert abs(estimated - truth) <= 0.10 * truth, "%s: estimated %.4f s, truth %.4f s" % (
        what, estimated, truth)


@pytest.mark.parametrize("compiler,how", [("gcc", "trap"), ("clang", "trap"), ("gcc", "rt")])
def test_sampled_functions_match_their_thread_cpu_time(tmp_path, compiler, how):
    # PLX_SAMPLE_SIGNAL: SIGTRAP from the perf event (the default) or SIGRTMIN+6 through its file
    require_tools(compiler)
    prog = compile_plain(tmp_path / "spin", compiler)
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample",), env={"PLX_SAMPLE_SIGNAL": how})
    truth = truths(cp.stdout)
    assert [k for k, _ in truth] == [("main", "alpha"), ("worker", "gamma_"), ("main", "beta")] or \
        sorted(k for k, _ in truth) == [("main", "alpha"), ("main", "beta"), ("worker", "gamma_")]
    rows = sampled_rows(out)
    callers = {"alpha": ("main", "work", "alpha"), "beta": ("main", "work", "beta"),
               "gamma_": ("worker", "gamma_")}
    for (thread, function), seconds in truth:
        path, row = estimate(rows, thread, callers[function])
        assert row["estimated"] == "1" and row["calls"] == "0", row
        assert int(row["samples"]) > 0
        assert_within(float(row["inclusive_s"]), seconds, "%s on %s (%s)" % (function, thread, path))
        # 1 kHz: a sample per ms of CPU time
        assert int(row["samples"]) == round(float(row["inclusive_s"]) * 1000)
    # the flat profile has them too
    flat = [r for r in report_csv(out) if r["process"] == "all" and r["function"] == "alpha"]
    assert len(flat) == 1 and flat[0]["estimated"] == "1"
    assert_within(float(flat[0]["inclusive_s"]), dict(truth)[("main", "alpha")], "flat alpha")
    text = info(out).stdout
    assert "samples     every 1.000 ms of CPU time per thread" in text
    assert re.search(r"thread 0: \d+ samples, 0 lost", text), text
    assert re.search(r"thread 1: \d+ samples, 0 lost", text), text


def test_stripped_binary_named_from_its_debuglink_file(tmp_path):
    # the program as shipped: stripped, its debug information in spin.debug beside it
    prog = compile_plain(tmp_path / "spin", "gcc")
    debug = tmp_path / "spin.debug"
    for cmd in (["objcopy", "--only-keep-debug", prog, debug], ["strip", "--strip-all", prog],
                ["objcopy", "--add-gnu-debuglink=%s" % debug, prog]):
        cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=tmp_path)
        assert cp.returncode == 0, _fail_message(cp)
    nm = subprocess.run(["nm", str(prog)], capture_output=True, text=True)
    assert "no symbols" in nm.stderr, nm.stdout
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample",))
    truth = truths(cp.stdout)
    rows = sampled_rows(out)
    callers = {"alpha": ("main", "work", "alpha"), "beta": ("main", "work", "beta"),
               "gamma_": ("worker", "gamma_")}
    # the runtime names threads from the ELF symbol table, which the stripped file lacks
    names = {"main": "main", "worker": "thread-1"}
    for (thread, function), seconds in truth:
        _, row = estimate(rows, names[thread], callers[function])
        assert_within(float(row["inclusive_s"]), seconds, "%s (stripped)" % function)


def test_frames_in_a_shared_library_and_an_execed_program(tmp_path):
    # spin() calls libm's cos; the program is exec'd by a shell that plx run started
    prog = compile_plain(tmp_path / "spin_libm", "gcc", "-DLIBM")
    out = tmp_path / "exp"
    cp = run(out, "/bin/sh", "-c", "exec %s" % prog, opts=("--sample",))
    truth = dict(truths(cp.stdout))
    rows = sampled_rows(out)
    _, row = estimate(rows, "main", ("main", "work", "alpha"))
    assert_within(float(row["inclusive_s"]), truth[("main", "alpha")], "alpha after exec")
    in_libm = [(p, r) for t, p, r in rows if t == "main" and p[-3:-1] == ("alpha", "spin")
               and "cos" in p[-1] and int(r["samples"]) > 0]
    assert in_libm, [p for t, p, r in rows if t == "main" and "spin" in p]


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_samples_hang_under_the_api_region_open(tmp_path, mode):
    # with a trace the runtime keeps no tree: the regions open are recorded with each sample
    prog = compile_plain(tmp_path / "spin_region", "gcc", "-DREGION")
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample=1000",) + (("--trace",) if mode == "trace" else ()))
    truth = dict(truths(cp.stdout))
    rows = sampled_rows(out)
    # alpha ran inside "solve": its frames start below the region, nothing of main above them
    path, row = estimate(rows, "main", ("solve", "alpha"))
    assert path == ("solve", "alpha"), path
    assert_within(float(row["inclusive_s"]), truth[("main", "alpha")], "alpha under solve")
    region = [r for t, p, r in rows if t == "main" and p == ("solve",)]
    assert len(region) == 1 and region[0]["calls"] == "1" and region[0]["estimated"] == "0"
    assert int(region[0]["samples"]) >= int(row["samples"])
    # beta ran after the region's end: under the thread's root
    path, row = estimate(rows, "main", ("main", "work", "beta"))
    assert "solve" not in path
    assert_within(float(row["inclusive_s"]), truth[("main", "beta")], "beta")
    assert not [p for t, p, r in rows if t == "main" and "solve" in p and "beta" in p]


@pytest.mark.parametrize("entries", ["entries", "spin-only"])
@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_samples_in_a_library_loaded_where_another_was_unloaded(programs, tmp_path, mode, entries):
    """Plugin A, B, then A again at one address (dlclose between), each spinning in a function
    the compiler hooks do not see: the samples at that address are A's, B's, then A's. With
    spin-only no instrumented function of a plugin runs (nothing lists it before its samples):
    the dlclose names them; so are the samples in plugin_entry before its hook listed it."""
    a = programs.get("reload_a.c", "-O0", "-shared", "-fPIC", name="libreload_a")
    b = programs.get("reload_b.c", "-O0", "-shared", "-fPIC", name="libreload_b")
    main = programs.get("reload_main.c", "-O0", "-ldl")
    out = tmp_path / "exp"
    cp = run(out, main, a, b, "100000000", entries,
             opts=("--sample=1000",) + (("--trace",) if mode == "trace" else ()))
    assert "same address" in cp.stdout
    truth = dict(truths(cp.stdout))
    rows = sampled_rows(out)
    for function, source in (("alpha_spin", "reload_a.c"), ("beta_spin", "reload_b.c")):
        path, row = estimate(rows, "main", (function,))
        assert path == ("main", function)
        assert row["file"] == str(PROGRAMS / source)
        assert_within(float(row["inclusive_s"]), truth[("main", function)], function)
    assert not [p for t, p, r in rows if "[unknown]" in p]


def test_samples_lost_when_the_tree_is_full_are_counted(tmp_path):
    # 80 calls deep: every stack has more frames than a tree of 64 holds
    prog = compile_plain(tmp_path / "deep", "gcc", "-DDEEP")
    out = tmp_path / "exp"
    run(out, prog, opts=("--sample",), env={"PLX_SAMPLE_NODES": "64"})
    text = info(out).stdout
    m = re.search(r"thread 0: (\d+) samples, (\d+) lost \((\d+) with the sample tree full, 0 in "
                  r"the dynamic loader\)", text)
    assert m, text
    taken, lost, full = map(int, m.groups())
    assert taken == 0 and lost == full and full >= 500, text
    assert_data_has_the_text_samples(out)


def assert_data_has_the_text_samples(out):
    """`plx info --format json|csv` carry each sampled thread's samples taken and lost, the same
    numbers as the text's `thread N: T samples, L lost (F with the sample tree full, D in the
    dynamic loader)` lines and its `every 1.000 ms` period. Returns the text's {thread: taken}."""
    text = info(out).stdout
    lines = re.findall(r"(?m)^    thread (\d+): (\d+) samples, (?:(\d+) stamped, )?(\d+) lost(?: \((\d+) "
                       r"with the sample tree full, (\d+) in the dynamic loader\))?$", text)
    assert lines, text
    assert "samples     every 1.000 ms of CPU time per thread" in text
    want = {int(t): {"period_ns": 1000000, "taken": int(n),
                     "stamped": int(stamped) if stamped else None, "lost": int(lost),
                     "lost_tree_full": int(full or 0), "lost_in_loader": int(loader or 0),
                     "lost_not_kept": 0, "recovered": False}
            for t, n, stamped, lost, full, loader in lines}
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    [proc] = doc["processes"]
    assert {t["thread"]: t["samples"] for t in proc["threads"]} == want
    assert proc["clock_sync_skipped"] is None
    rows = list(csv.DictReader(io.StringIO(plx("info", out, "--format", "csv").stdout)))
    assert {int(r["thread"]): (r["samples"], r["samples_stamped"], r["samples_lost"])
            for r in rows} == \
        {t: (str(w["taken"]), "" if w["stamped"] is None else str(w["stamped"]), str(w["lost"]))
         for t, w in want.items()}
    return {t: w["taken"] for t, w in want.items()}


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_info_json_and_csv_have_the_samples_of_the_text(tmp_path, mode):
    prog = compile_plain(tmp_path / "spin", "gcc")
    out = tmp_path / "exp"
    run(out, prog, opts=("--sample",) + (("--trace",) if mode == "trace" else ()))
    taken = assert_data_has_the_text_samples(out)
    # both threads spin for tens of ms of CPU time: a sample per ms
    assert sorted(taken) == [0, 1] and min(taken.values()) >= 10, taken
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    stamped = {t["thread"]: t["samples"]["stamped"] for t in doc["processes"][0]["threads"]}
    if mode == "profile":
        # no trace, no stamps: the text has no `stamped` count, the data null
        assert stamped == {0: None, 1: None}
        return
    # with a trace every sample taken is stamped, and each stamp is a row of sample_times.parquet
    pd = pytest.importorskip("pandas")
    plx("export", out, "--format", "parquet", "-o", tmp_path / "pq")
    rows = pd.read_parquet(tmp_path / "pq" / "sample_times.parquet")
    assert stamped == taken == {int(t): len(g) for t, g in rows.groupby("thread")}, (stamped, taken)
    text = info(out).stdout
    for t, n in taken.items():
        assert "    thread %d: %d samples, %d stamped, 0 lost" % (t, n, n) in text, text


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_every_mpi_rank_is_sampled(tmp_path, impl):
    mpi = IMPLS[impl]
    mpi.require()
    prog = compile_plain(tmp_path / "spin_mpi", "-DMPI", cc=mpi.mpicc)
    out = tmp_path / "exp"
    cp = run(out, *mpi.mpirun_cmd(4, prog), opts=("--sample",))
    found = truths(cp.stdout)
    assert len(found) == 12, cp.stdout
    rows = sampled_rows(out)
    # the launcher's own processes are sampled too: the ranks are those that ran work()
    processes = sorted({r["process"] for _, p, r in rows if "work" in p})
    assert len(processes) == 4, processes
    for p in processes:
        for thread, tail in (("main", ("work", "alpha")), ("main", ("work", "beta")),
                             ("worker", ("worker", "gamma_"))):
            _, row = estimate(rows, thread, tail, process=p)
            assert row["estimated"] == "1"
            # the ranks' truths differ by a few ms: each estimate is within 10 % of the mean
            want = [s for (t, f), s in found if t == thread and f == tail[-1]]
            assert len(want) == 4
            assert_within(float(row["inclusive_s"]), sum(want) / 4, "%s rank %s" % (tail[-1], p))


def own_samples(rows, thread):
    """{callpath: samples whose innermost frame it is} of thread `thread`'s report rows."""
    paths = {p: int(r["samples"]) for t, p, r in rows
             if r["thread"] == str(thread) and int(r["samples"]) > 0}
    own = dict(paths)
    for p, s in paths.items():
        if len(p) > 1 and p[:-1] in own:
            own[p[:-1]] -= s
    return {p: s for p, s in own.items() if s > 0}


def test_critical_path_says_what_the_samples_ran_in_each_function(tmp_path):
    # alpha spins inside the API region solve, beta and the worker's gamma_ with no measured
    # call open
    prog = compile_plain(tmp_path / "spin", "gcc", "-DREGION")
    out = tmp_path / "exp"
    run(out, prog, opts=("--trace", "--sample"))
    rows = sampled_rows(out)
    doc = json.loads(plx("critical-path", out, "--samples=50", "--path", "--format",
                         "json").stdout)
    # the threads with CPU time on the path (main's, and the worker's if it ended last)
    on_path = {int(s["location"].split(".")[1]) for s in doc["path"] if s["kind"] == "cpu"}
    assert 0 in on_path
    items = {i["name"]: i for i in doc["items"] if i["kind"] == "cpu"}
    assert set(items) == {"solve", "(no function)"}
    def threads(item):
        """The threads of an item: its location's, or with ALL every one on the path."""
        loc = item["location"]
        return on_path if loc == "ALL" else {int(loc.split(".")[1])}

    want = {"solve": Counter(), "(no function)": Counter()}
    for name, item in items.items():
        for th in threads(item):
            for p, s in own_samples(rows, th).items():
                if name == "solve" and p[0] == "solve":
                    want[name][p[1:]] += s
                elif name == "(no function)" and p[0] != "solve":
                    want[name][p] += s
    assert want["solve"][("alpha", "spin")] > 400
    assert any(p[-2:] == ("beta", "spin") for p in want["(no function)"])
    for name, paths in want.items():
        s = items[name]["samples"]
        # stamped samples: only those taken during the path's CPU segments of the thread count
        # (here nearly all of each thread's: its CPU time is on the path but for its edges)
        assert s["timed"] is True
        got = {tuple(p["frames"]): p["samples"] for p in s["paths"]}
        assert all(got[p] <= paths[p] for p in got), name
        assert 0.95 * sum(paths.values()) <= s["total"] <= sum(paths.values())
        # the item's time on the path shared out by samples
        est = sum(p["estimated_s"] for p in s["paths"])
        assert abs(est - items[name]["time_s"]) < 1e-6 * len(s["paths"])
    first = items["solve"]["samples"]["paths"][0]
    assert first["frames"] == ["alpha", "spin"]
    assert first["samples"] >= 0.95 * want["solve"][("alpha", "spin")]
    # text and CSV: the three largest under each function by default
    text = plx("critical-path", out, "--samples").stdout
    assert re.search(r"^\s+~[0-9.]+\s+[0-9.]+  %d of %d samples: alpha => spin$" % (
        first["samples"], items["solve"]["samples"]["total"]), text, re.M), text
    lines = plx("critical-path", out, "--samples", "--format", "csv").stdout.splitlines()
    sampled = [l.split(",") for l in lines if ",sampled," in l]
    # (the item's own paths: a sample the thread took off the path, in its exit handlers, is in
    # `want` but not the item's)
    assert len(sampled) == sum(min(3, len(items[n]["samples"]["paths"])) for n in want)
    # solve's rows begin with its largest path (the items' order is their time on the path:
    # under load beta's share may come first)
    assert [r[2] for r in sampled if r[2].startswith("solve => ")][0] == "solve => alpha => spin"


def test_critical_path_samples_refused_without_samples_or_at_another_level(tmp_path):
    prog = compile_plain(tmp_path / "spin", "gcc", "-DREGION")
    out = tmp_path / "exp"
    run(out, prog, opts=("--trace",))
    cp = plx("critical-path", out, "--samples", check=False)
    assert cp.returncode == 2
    assert "--samples: the run has no call-stack samples (rerun it with plx run --trace --sample)" \
        in cp.stderr
    cp = plx("critical-path", out, "--samples", "--level", "thread", check=False)
    assert cp.returncode == 2 and "it needs --level procedure" in cp.stderr


def test_gprof_has_the_sampled_functions_marked_estimated(tmp_path):
    # alpha (sampled) is called by the region solve (measured), beta by work (sampled); both
    # call spin
    prog = compile_plain(tmp_path / "spin", "gcc", "-DREGION")
    out = tmp_path / "exp"
    run(out, prog, opts=("--sample",))
    rows = sampled_rows(out)
    samples = {p: int(r["samples"]) for t, p, r in rows if t == "main"}
    doc = report_json(out, "--gprof")
    (proc,) = doc["processes"]
    thread = [t for t in proc["threads"] if t["name"] == "main"][0]
    graph = {e["function"]: e for e in thread["call_graph"]}
    solve, alpha, spin = graph["solve"], graph["alpha"], graph["spin"]
    assert (solve["calls"], solve["estimated"], solve["samples"]) == (1, False, samples[("solve",)])
    assert (alpha["calls"], alpha["estimated"]) == (0, True)
    assert alpha["samples"] == samples[("solve", "alpha")]
    # alpha's caller is the region; the arc is sampled only: no count, its samples
    (parent,) = alpha["parents"]
    assert (parent["function"], parent["calls"], parent["estimated"]) == ("solve", 0, True)
    assert parent["samples"] == samples[("solve", "alpha")]
    # spin's callers: alpha and beta, each with the samples of its callpath
    beta_path = [p for p in samples if p[-2:] == ("beta", "spin")]
    assert len(beta_path) == 1
    got = {p["function"]: p["samples"] for p in spin["parents"]}
    assert got == {"alpha": samples[("solve", "alpha", "spin")], "beta": samples[beta_path[0]]}
    assert spin["samples"] == sum(got.values()) and spin["estimated"] is True
    # spin's time: its samples x 1 ms, its own and that of cpu_now, inlined into it (a frame
    # of its own, as addr2line -i names it: was spin's self time, the inlined code lost)
    assert abs(spin["self_s"] + spin["children_s"] - spin["samples"] * 1e-3) < 1e-9
    assert {c["function"] for c in spin["children"]} <= {"cpu_now"}
    # text: a samples column, estimated times marked ~ and no count for sampled calls
    text = plx("report", out, "--gprof").stdout
    assert re.search(r"^index\s+%time\s+self\s+children\s+called\s+samples\s+name$", text, re.M)
    line = re.search(r"^\[\d+\]\s+[0-9.]+\s+(~\S+ \S+)\s+(~\S+(?: \S+)?)\s+-\s+(\d+)  spin \[\d+\]$",
                     text, re.M)
    assert line and int(line.group(3)) == spin["samples"], text
    assert re.search(r"^\[\d+\]\s+[0-9.]+\s+\d\S* \S+\s+\S+ \S+\s+1\s+%d  solve \[\d+\]$"
                     % samples[("solve",)], text, re.M), text


def test_sigkill_after_a_thread_ended_finds_each_tree_once(tmp_path):
    """A thread's end gives its samples file back to the next thread: a thread spins 0.2 s and
    ends (its tree written as a record), the worker started after it takes its file
    (live.1.samples), spins 0.6 s and is SIGKILLed with main: no third file is made, the
    worker's samples are recovered from the file it took, the ended thread's come from its
    record alone."""
    prog = compile_plain(tmp_path / "spin_reuse", "gcc", "-DKILL", "-DREUSE")
    out = tmp_path / "exp"
    p = subprocess.Popen([str(PLX), "run", "--sample", "-o", str(out), "--", str(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    printed = []
    while not printed or not printed[-1].startswith("ready "):
        line = p.stdout.readline()
        assert line, "".join(printed) + p.stderr.read()
        printed.append(line)
    os.kill(int(printed[-1].split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 137, err
    assert sorted(f.name for f in out.glob("*/live.*.samples")) == ["live.0.samples",
                                                                    "live.1.samples"]
    truth = dict(truths("".join(printed)))
    text = info(out).stdout
    taken = {}
    for thread in (0, 1, 2):
        m = re.search(r"^ *thread %d: (\d+) samples, (\d+) lost.*$" % thread, text, re.M)
        assert m, text
        taken[thread] = (int(m.group(1)), "recovered" in m.group(0))
    assert "thread 2: call-stack samples recovered from live.1.samples (the process was " \
           "killed before writing them)" in text, text
    assert "recovered from live.2.samples" not in text and taken[1][1] is False, text
    assert taken[0][1] is True and taken[2][1] is True, text
    for thread, seconds in ((1, truth[("early", "delta")]), (2, truth[("worker", "gamma_")])):
        assert 0.9 * seconds * 1000 <= taken[thread][0] <= 1.1 * seconds * 1000 + 20, (taken, truth)


def test_sigkill_keeps_the_samples(tmp_path):
    """Each thread's sample tree lives in a file mapping (live.<thread>.samples) the kernel keeps:
    the program is SIGKILLed while both threads block after spinning, and the reader recovers
    every sample from the files, under the right functions and threads."""
    prog = compile_plain(tmp_path / "spin_kill", "gcc", "-DKILL")
    out = tmp_path / "exp"
    p = subprocess.Popen([str(PLX), "run", "--sample", "-o", str(out), "--", str(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    printed = []
    while not printed or not printed[-1].startswith("ready "):
        line = p.stdout.readline()
        assert line, "".join(printed) + p.stderr.read()
        printed.append(line)
    os.kill(int(printed[-1].split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 137, err
    assert sorted(f.name for f in out.glob("*/live.*.samples")) == ["live.0.samples",
                                                                    "live.1.samples"]
    truth = truths("".join(printed))
    assert sorted(k for k, _ in truth) == [("main", "alpha"), ("main", "beta"), ("worker", "gamma_")]
    rows = sampled_rows(out)
    callers = {"alpha": ("main", "work", "alpha"), "beta": ("main", "work", "beta"),
               "gamma_": ("worker", "gamma_")}
    for (thread, function), seconds in truth:
        _, row = estimate(rows, thread, callers[function])
        assert row["estimated"] == "1" and row["calls"] == "0", row
        assert_within(float(row["inclusive_s"]), seconds, "%s on %s after SIGKILL" % (function, thread))
        assert int(row["samples"]) == round(float(row["inclusive_s"]) * 1000)
    text = info(out).stdout
    taken = {}
    for thread in (0, 1):
        # a sample may find the thread in the dynamic loader (lazy binding): lost, counted
        m = re.search(r"thread %d: (\d+) samples, (\d+) lost(?: \(0 with the sample tree full, "
                      r"(\d+) in the dynamic loader, 0 not kept on the disk\))?; recovered from "
                      r"its live file \(the process was killed before writing them\)" % thread, text)
        assert m, text
        taken[thread] = int(m.group(1))
        assert int(m.group(2)) == int(m.group(3) or 0) <= 5, text
        assert "thread %d: call-stack samples recovered from live.%d.samples (the process was " \
               "killed before writing them)" % (thread, thread) in text
    # every sample of the spins, and at most a few more (startup, the blocking calls)
    spun = {0: sum(s for (t, _), s in truth if t == "main"), 1: dict(truth)[("worker", "gamma_")]}
    for thread, seconds in spun.items():
        assert 0.9 * seconds * 1000 <= taken[thread] <= 1.1 * seconds * 1000 + 20, (taken, spun)
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    [proc] = doc["processes"]
    for t in proc["threads"]:
        assert t["samples"]["recovered"] is True, t
        assert t["samples"]["lost_not_kept"] == t["samples"]["lost_tree_full"] == 0, t


TRAPPING = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static volatile double sink;
static volatile int traps;
static void on_trap(int sig) { (void)sig; traps++; }
static __attribute__((noinline)) void spin(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            sink += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < 1e8);
}
__attribute__((noinline)) void before_handler(void) { spin(); __asm__ volatile(""); }
__attribute__((noinline)) void after_handler(void) { spin(); __asm__ volatile(""); }
int main(int argc, char **argv)
{
    before_handler();
    printf("spun\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "ignored") == 0)
        signal(SIGTRAP, SIG_IGN);
    if (argc > 1 && strcmp(argv[1], "handled") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_trap;
        sigaction(SIGTRAP, &sa, NULL);
        after_handler();
    }
    raise(SIGTRAP);
    printf("after the trap: %d\n", traps);
    return 0;
}
"""


@pytest.mark.parametrize("disposition", ["default", "ignored", "handled"])
def test_sampling_traps_leave_the_programs_own_sigtrap_alone(tmp_path, disposition):
    # samples come as SIGTRAP: a SIGTRAP the program raises itself still has its own disposition,
    # and a handler it installs gets its one trap, none of the samples taken after
    src = tmp_path / "trapping.c"
    src.write_text(TRAPPING)
    prog = tmp_path / "trapping"
    cp = subprocess.run(["gcc", "-O2", "-g", str(src), "-o", str(prog)], capture_output=True,
                        text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    args = [str(prog)] + ([disposition] if disposition != "default" else [])
    bare = subprocess.run(args, capture_output=True, text=True, env=clean_env())
    out = tmp_path / "exp"
    p = subprocess.run([str(PLX), "run", "--sample", "-o", str(out), "--"] + args,
                       capture_output=True, text=True, env=clean_env(), timeout=120)
    if disposition == "default":
        assert bare.returncode == -signal.SIGTRAP and bare.stdout == "spun\n"
        assert p.returncode == 128 + signal.SIGTRAP, p.stderr
        assert p.stdout == "spun\n"
    else:
        want = "spun\nafter the trap: %d\n" % (disposition == "handled")
        assert bare.returncode == 0 and bare.stdout == want
        assert p.returncode == 0, p.stderr
        assert p.stdout == want
    # the samples go on through the program's own disposition: each 0.1 s spin, before the
    # program's signal()/sigaction and after it, has its samples. The rate itself is checked
    # above (0.9 to 1.1 of the CPU time); here the floor is a tenth of it, as a fresh-clone run
    # under load gave one spin of 100.4 ms CPU in 100.7 ms wall 22 samples, none lost (timer
    # interrupts delivered late to the virtual machine: the kernel drops a late timer's
    # missed periods)
    rows = sampled_rows(out)
    for spinner in ["before_handler"] + (["after_handler"] if disposition == "handled" else []):
        _, row = estimate(rows, "main", (spinner, "spin"))
        assert int(row["samples"]) >= 10, (spinner, row)


def many_functions_source(n):
    """A program calling n functions that each spin 0.8 ms of CPU time (n distinct frames and
    more), then printing "ready PID" and blocking for a SIGKILL."""
    lines = ["#include <stdio.h>", "#include <time.h>", "#include <unistd.h>",
             "static volatile double sink;",
             "static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);"
             " return t.tv_sec + t.tv_nsec * 1e-9; }"]
    lines += ["__attribute__((noinline)) void f%d(void) { double t0 = cpu(); while (cpu() - t0 < "
              "0.0008) for (int i = 0; i < 200; i++) sink += i * 0.5; }" % k for k in range(n)]
    lines.append("typedef void (*fn)(void);")
    lines.append("static fn all[] = {%s};" % ", ".join("f%d" % k for k in range(n)))
    lines.append('int main(void) { for (int k = 0; k < %d; k++) all[k](); printf("ready %%d\\n", '
                 '(int)getpid()); fflush(stdout); for (;;) pause(); }' % n)
    return "\n".join(lines) + "\n"


def test_sigkill_counts_the_samples_the_disk_had_no_room_for(tmp_path):
    """Under a real 40 KiB file size limit the live samples file keeps its first 1024 frames
    (36 KiB) and cannot grow: after a SIGKILL the samples in the frames past it are lost, and
    plx info counts them (the head's total against the frames' sum)."""
    import resource

    src = tmp_path / "many.c"
    src.write_text(many_functions_source(1500))
    prog = tmp_path / "many"
    cp = subprocess.run(["gcc", "-O2", "-g", str(src), "-o", str(prog)], capture_output=True,
                        text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (40 * 1024, 40 * 1024))

    p = subprocess.Popen([str(PLX), "run", "--sample=2000", "-o", str(out), "--", str(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env(), preexec_fn=limit)
    line = p.stdout.readline()
    assert line.startswith("ready "), line + p.stderr.read()
    os.kill(int(line.split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 137, err
    [live] = out.glob("*/live.0.samples")
    assert live.stat().st_size == 36864  # the header and 1025 items, page-rounded: never grown
    text = info(out).stdout
    m = re.search(r"thread 0: (\d+) samples, (\d+) lost \(0 with the sample tree full, (\d+) in the "
                  r"dynamic loader, (\d+) not kept on the disk\); recovered from its live file", text)
    assert m, text
    taken, lost, loader, not_kept = map(int, m.groups())
    assert lost == loader + not_kept and not_kept > 0 and loader <= 5, text
    # 1500 × 0.8 ms of CPU at 2 kHz: every sample is either in the file or counted as lost
    assert 0.9 * 2400 <= taken + not_kept <= 1.1 * 2400 + 20, text
    assert ("thread 0: call-stack samples recovered from live.0.samples (the process was killed "
            "before writing them); %d samples the runtime kept in memory only (no room on the "
            "disk to grow the file) were lost" % not_kept) in text
    doc = json.loads(plx("info", out, "--format", "json").stdout)
    [t] = doc["processes"][0]["threads"]
    assert t["samples"]["lost_not_kept"] == not_kept and t["samples"]["taken"] == taken


def test_critical_path_samples_are_those_of_the_path_segments(tmp_path):
    # the worker spins 0.6 s (0.3 s, then phase_g 0.3 s) while main spins phase_f 0.3 s and
    # then joins it: the path runs through the worker; main is on it only before the fork and
    # after the join, so its phase_f samples (stamped during its time off the path) are not
    # what ran on the path
    exe = tmp_path / "phases"
    cp = subprocess.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", str(PROGRAMS / "sample_phases.c"),
                         "-o", str(exe), "-pthread"], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    run(out, exe, "overlap", opts=("--trace", "--sample"))
    own_main = own_samples(sampled_rows(out), 0)
    assert sum(s for p, s in own_main.items() if "phase_f" in p) > 150
    doc = json.loads(plx("critical-path", out, "--samples=50", "--format", "json").stdout)
    frames = [(i["location"], tuple(p["frames"]), p["samples"])
              for i in doc["items"] if i["kind"] == "cpu" and "samples" in i
              for p in i["samples"]["paths"]]
    assert all(i["samples"]["timed"] for i in doc["items"] if "samples" in i)
    on_g = sum(n for _, f, n in frames if "phase_g" in f)
    on_f = sum(n for _, f, n in frames if "phase_f" in f)
    assert on_g > 150 and on_f == 0, frames


def test_program_taking_sigtrap_by_the_raw_system_call_keeps_it_and_is_sampled(tmp_path):
    # raw_sigtrap.c installs its SIGTRAP handler by syscall(SYS_rt_sigaction), past the
    # runtime's sigaction(): the worker thread's start finds it and moves the samples to the
    # real-time signal; the program's handler gets its own raise(SIGTRAP) and no sample
    prog = tmp_path / "raw_sigtrap"
    cp = subprocess.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", str(PROGRAMS / "raw_sigtrap.c"),
                         "-o", str(prog), "-pthread"], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample",), status=7)
    # its own trap reached it; of the samples, at most one taken in main's few µs of CPU between
    # its system call and its pthread_create (the check is the worker's start); without the
    # check every sample (~800) reaches the program's handler and none is taken
    assert re.search(r"^own 1 perf [01]$", cp.stdout, re.M), cp.stdout
    rows = sampled_rows(out)
    callers = {"worker_spin": ("worker", "worker_spin"), "main_spin": ("main", "main_spin")}
    truth = truths(cp.stdout)
    assert sorted(k for k, _ in truth) == [("main", "main_spin"), ("worker", "worker_spin")]
    for (thread, function), seconds in truth:
        _, row = estimate(rows, thread, callers[function])
        assert_within(float(row["inclusive_s"]), seconds, "%s on %s" % (function, thread))
    text = info(out).stdout
    assert "sampling signal: the program replaced the handler of signal 5 by the raw " \
        "rt_sigaction system call; samples came by signal %d after" % (signal.SIGRTMIN + 6) in text, text
    data = json.loads(plx("info", out, "--format", "json").stdout)
    assert [p["sample_signals"] for p in data["processes"]] == [
        [{"reason": "handler replaced", "replaced": 5, "signal": signal.SIGRTMIN + 6}]]


def test_go_program_runs_to_its_end_and_is_sampled(tmp_path):
    # the Go runtime installs its handlers (SIGTRAP and SIGRTMIN+6 among them) by the raw
    # system call: the sampler takes the real-time signal for a Go executable, and puts its
    # handler back in front of Go's at the first thread start after
    require_tools("go", what="a Go compiler (golang-go)")
    prog = tmp_path / "gosignals"
    env = dict(clean_env(), GOCACHE=str(tmp_path / "gocache"), GOPATH=str(tmp_path / "gopath"),
               GOFLAGS="-mod=mod", CGO_ENABLED="1")
    cp = subprocess.run(["go", "build", "-o", str(prog), "."], cwd=PROGRAMS / "go_signals",
                        capture_output=True, text=True, env=env)
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample",), status=5)
    assert "go done" in cp.stdout
    truth = truths(cp.stdout)
    assert sorted(k for k, _ in truth) == [("go0", "spinGo"), ("go1", "spinGo")], cp.stdout
    # goroutine threads are named by the runtime, not by Go: the two spins are summed
    rows = sampled_rows(out)
    own = [r for _, p, r in rows if p[-1] == "main.spinGo"]
    assert own and all(r["estimated"] == "1" for r in own)
    assert_within(sum(float(r["exclusive_s"]) for r in own), sum(s for _, s in truth), "spinGo")
    text = info(out).stdout
    assert "sampling signal: the program is a Go program; samples came by signal %d after" % (
        signal.SIGRTMIN + 6) in text, text


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_samples_in_inlined_code_stay_under_the_function_they_are_in(tmp_path, compiler):
    """programs/sample_inline.c: work spends its 0.3 s of CPU in now(), inlined into it. Each
    sample names the function its code is in, then the functions inlined there (was: only the
    innermost inlined one, so the path read main => now and work kept 1-2 ms of 300)."""
    require_tools(compiler)
    prog = tmp_path / "inline"
    cp = subprocess.run([compiler, "-O2", "-g", str(PROGRAMS / "sample_inline.c"), "-o",
                         str(prog)], capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 0, _fail_message(cp)
    out = tmp_path / "exp"
    cp = run(out, prog, opts=("--sample",))
    (truth,) = [s for (_, f), s in truths(cp.stdout) if f == "work"]
    rows = sampled_rows(out)
    _, work = estimate(rows, "main", ("main", "work"))
    assert abs(float(work["inclusive_s"]) - truth) < 0.1 * truth, (work, truth)
    # every sample of now's code is under work
    inlined = [p for t, p, _ in rows if t == "main" and "now" in p]
    assert inlined and all(p[p.index("now") - 1] == "work" for p in inlined), inlined



def test_an_exported_window_has_the_samples_stamped_inside_it(tmp_path):
    """plx export --window: the Chrome, OTF2 and Parquet exports carry the call-stack samples
    stamped inside the window, each at its time (were: every sample of the run, 621 for 234)."""
    prog = compile_plain(tmp_path / "spin", "gcc")
    out = tmp_path / "exp"
    run(out, prog, opts=("--trace", "--sample"))
    whole = json.loads((plx("export", out, "--format", "chrome", "-o", "-").stdout))
    ts = [s["ts"] for s in whole["samples"]]
    assert len(ts) > 400, len(ts)
    # the middle half of the samples' span after the trace's first event (the export's own
    # origin, as the window's; samples before it are at negative times)
    lo, hi = max(0, min(ts)), max(ts)
    a, b = lo + (hi - lo) / 4, lo + 3 * (hi - lo) / 4
    inside = [t for t in ts if a * 1e-6 <= t * 1e-6 < b * 1e-6]
    assert 0 < len(inside) < len(ts)
    window = "%.6f:%.6f" % (a * 1e-6, b * 1e-6)
    cp = plx("export", out, "--format", "chrome", "--window", window, "-o", tmp_path / "w.json")
    part = json.loads((tmp_path / "w.json").read_text())
    got = sorted(s["ts"] for s in part["samples"])
    # (the window's ends rounded to the microsecond: a sample on an edge may fall either way)
    assert abs(len(got) - len(inside)) <= 2, (len(got), len(inside))
    assert got and a - 1 <= got[0] and got[-1] < b + 1, (got[:1], got[-1:], a, b)
    assert "and %d call-stack samples" % len(got) in cp.stderr, cp.stderr
    for fmt in ("otf2", "parquet"):
        cp = plx("export", out, "--format", fmt, "--window", window, "-o", tmp_path / fmt)
        assert "and %d call-stack samples" % len(got) in cp.stderr, (fmt, cp.stderr)
    import pyarrow.parquet as pq
    assert pq.read_table(tmp_path / "parquet" / "sample_times.parquet").num_rows == len(got)
