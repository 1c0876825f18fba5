"""The parallax package installed from its wheel (conftest.py: a fresh virtual environment, no
plx on PATH, no $PLX): every table holds the numbers of the plx command — plx report --callpath
and --sync, plx export (text and Parquet), plx waits — exactly, for real runs."""

import csv
import io
import json
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from components import require_module

from conftest import in_venv, no_plx_env, plx, run


def csv_rows(*args):
    return list(csv.DictReader(io.StringIO(plx(*args, "--format", "csv").stdout)))


@pytest.fixture(scope="module")
def parquet(experiments, tmp_path_factory):
    """{name: directory} of plx export --format parquet of each experiment."""
    root = tmp_path_factory.mktemp("parquet")
    out = {}
    for name, exp in experiments.items():
        out[name] = root / name
        plx("export", exp, "--format", "parquet", "-o", out[name])
    return out


def test_the_package_is_the_installed_wheel_without_plx(parallax, venv):
    """import parallax needs no plx: the engine is the native module of the wheel, and the
    wheel's plx command is installed beside it."""
    assert parallax._native.__file__.startswith(str(venv))
    # the venv activated: its bin/ first on PATH
    env = no_plx_env()
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    cp = run([venv / "bin" / "python", "-c", "import shutil; print(shutil.which('plx'))"],
             env=env)
    assert cp.stdout.strip() == str(venv / "bin" / "plx")
    cp = run(["plx", "--version"], env=env)
    assert cp.stdout == plx("--version").stdout
    assert cp.stdout.startswith("plx ")


def test_a_fresh_interpreter_reads_an_experiment_without_plx(venv, experiments):
    """A user's first session: no $PLX, no plx on PATH, the tables of pingpong.c."""
    code = ("import sys, parallax; e = parallax.open(sys.argv[1]); "
            "print(len(e.events), len(e.messages), len(e.intervals))")
    cp = in_venv(venv, code, str(experiments["pingpong"]))
    ev, msg, iv = (int(x) for x in cp.stdout.split())
    assert msg == 80
    assert ev > 2 * iv > 0


def report_rows(rep, samples):
    """profiles' rows as plx report --callpath --format csv writes them."""
    out = []
    for r in rep.itertuples():
        row = {"process": "all" if r.process is None else r.process,
               "thread": "all" if pd_na(r.thread) else str(int(r.thread)),
               "function": r.function, "calls": str(r.calls),
               "child_calls": str(r.child_calls), "exclusive_s": f"{r.exclusive_s:.9f}",
               "inclusive_s": f"{r.inclusive_s:.9f}", "thread_name": r.thread_name,
               "host": r.host, "callpath": r.callpath, "file": r.file, "line": str(r.line),
               "cpu_s": "" if pd_na(r.cpu_s) else f"{r.cpu_s:.9f}"}
        if samples:
            row["samples"] = str(r.samples)
            row["estimated"] = str(int(r.estimated))
        out.append(row)
    return out


def test_profiles_are_plx_report_callpath(parallax, experiments, sampled_experiment):
    """Every row of plx report --callpath --format csv, in its order: the threads' rows in
    profiles, all of them (the total's too) in report(); samples and estimated where the run
    sampled call stacks."""
    for d in (experiments["life"], experiments["pingpong"], sampled_experiment):
        exp = parallax.open(d)
        want = csv_rows("report", d, "--callpath")
        sampled = d == sampled_experiment
        assert ("samples" in want[0]) == sampled
        assert report_rows(exp.report(), sampled) == want
        prof = exp.profiles
        threads = [r for r in want if r["process"] != "all"]
        assert len(prof) == len(threads)
        assert list(prof["callpath"].astype(str)) == [r["callpath"] for r in threads]
        assert list(prof["calls"]) == [int(r["calls"]) for r in threads]
        assert ("samples" in prof.columns) == sampled
    # sample_spin.c: alpha and beta on main, gamma_ on the worker, estimated from samples
    prof = parallax.open(sampled_experiment).profiles
    spun = prof[prof["function"].isin(["alpha", "beta", "gamma_"])]
    assert sorted(spun["function"]) == ["alpha", "beta", "gamma_"]
    assert spun["estimated"].all() and (spun["samples"] > 0).all()
    # life: node = MPI rank, 3 threads per rank (main and 2 workers), 20 steps
    prof = parallax.open(experiments["life"]).profiles
    assert sorted(prof["node"].unique()) == [0, 1, 2, 3]
    assert sorted(prof["thread"].unique()) == [0, 1, 2]
    halos = prof[prof["callpath"] == "main => exchange_halos"]
    assert list(halos["calls"]) == [20, 20, 20, 20]
    assert list(halos["depth"]) == [1, 1, 1, 1]


def pd_na(v):
    return v is None or v != v


ARROW_TABLES = ("events", "messages", "locations", "regions", "comms")


def assert_tables_are_the_parquet_export(parallax, exp_dir, parquet_dir, name):
    """Each of ARROW_TABLES holds the Parquet export's rows and values, column by column, in
    its order (names as categoricals)."""
    exp = parallax.open(exp_dir)
    for table in ARROW_TABLES:
        want = pq.read_table(parquet_dir / (table + ".parquet"))
        got = exp.table(table, backend="arrow")
        assert got.column_names == want.column_names, (name, table)
        for col in want.column_names:
            g = got.column(col)
            if pa.types.is_dictionary(g.type):
                g = g.cast(pa.string())
            assert g.to_pylist() == want.column(col).to_pylist(), (name, table, col)


def test_trace_tables_are_the_parquet_export(parallax, experiments, parquet):
    """events, messages, locations, regions and comms hold the Parquet export's rows and
    values, column by column (names as categoricals)."""
    for name in ("life", "t_mpi", "pingpong"):
        assert_tables_are_the_parquet_export(parallax, experiments[name], parquet[name], name)


def test_the_events_of_a_threaded_run_are_the_parquet_export(parallax, queue_experiment,
                                                             tmp_path):
    """One process's threads (each decoded alone, then put in the merge's order): the same
    rows in the same order as the Parquet export's merged stream, the 5 threads' events
    interleaved by time."""
    out = tmp_path / "queue.parquet"
    plx("export", queue_experiment, "--format", "parquet", "-o", out)
    assert_tables_are_the_parquet_export(parallax, queue_experiment, out, "queue")
    ev = parallax.open(queue_experiment).events
    assert sorted(ev["thread"].unique()) == [0, 1, 2, 3, 4]
    assert ev["time_ns"].is_monotonic_increasing
    # the threads take turns: the 64-slot ring holds 64 of the 600 items, so the producers
    # wait for the consumers at least 9 times (not one thread's events after another's)
    assert (ev["thread"].diff().fillna(0) != 0).sum() >= 9


def merged_intervals(events_parquet):
    """The Parquet export's merged events matched enter to exit: one row per exit in the exits'
    order (location, region, callpath, depth, start_ns, end_ns), and the callpaths in the order
    the stream enters them first."""
    ev = pq.read_table(events_parquet).to_pydict()
    stacks, want, paths = {}, [], {}
    for loc, kind, region, name, t in zip(ev["location"], ev["kind"], ev["region"],
                                          ev["region_name"], ev["time_ns"]):
        stack = stacks.setdefault(loc, [])
        if kind == "enter":
            path = stack[-1][2] + " => " + name if stack else name
            paths.setdefault(path, len(paths))
            stack.append((region, t, path))
        elif kind == "exit":
            r, start, path = stack.pop()
            want.append((loc, r, path, len(stack), start, t))
    return want, list(paths)


def interval_rows(iv):
    return list(zip(*(iv.column(c).to_pylist() for c in
                      ("location", "region_id", "callpath", "depth", "start_ns", "end_ns"))))


def test_the_intervals_of_a_threaded_run_follow_the_merged_events(parallax, queue_experiment,
                                                                  tmp_path):
    """One process's threads (each thread's calls matched alone, then put in the merge's
    order): the intervals are the Parquet export's merged events matched enter to exit, one
    row per exit in the exits' order, and the callpaths numbered in the order the merged
    stream enters them first."""
    out = tmp_path / "queue.parquet"
    plx("export", queue_experiment, "--format", "parquet", "-o", out)
    want, paths = merged_intervals(out / "events.parquet")
    iv = parallax.open(queue_experiment).arrow("intervals")
    got = interval_rows(iv)
    assert len(got) == len(want)
    calls = Counter(p for _, _, p, *_ in got if "plx_symbols" not in p)
    # queue.c: 2 producers push 300 items each, 2 consumers pop them and an end mark each
    assert calls == {"main": 1, "producer": 2, "consumer": 2, "producer => push": 600,
                     "consumer => pop": 602}
    assert got == want
    assert iv.column("callpath").combine_chunks().dictionary.to_pylist() == paths
    assert sorted(set(iv.column("thread").to_pylist())) == [0, 1, 2, 3, 4]


def row_hashes(table):
    """A hash per row of an Arrow table (names as strings), in its order."""
    cols = [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c
            for c in table.columns]
    return [hash(r) for r in zip(*(c.to_pylist() for c in cols))]


def test_the_events_and_intervals_of_mpi_ranks_follow_the_merged_stream(parallax, experiments,
                                                                        parquet):
    """4 ranks of life.c with worker threads and messages (the merged stream split by
    location, then gathered in its order): the events are the Parquet export's rows in its
    order, row for row; the intervals its events matched enter to exit in the exits' order,
    the callpaths numbered in the order the stream enters them first."""
    exp_dir, out = experiments["life"], parquet["life"]
    exp = parallax.open(exp_dir)
    ev = exp.arrow("events")
    want_ev = pq.read_table(out / "events.parquet")
    assert ev.column_names == want_ev.column_names
    got_h, want_h = row_hashes(ev), row_hashes(want_ev)
    assert len(got_h) == len(want_h) > 10_000
    assert got_h == want_h
    # the ranks interleave: not one location's rows after another's
    assert len(set(ev.column("rank").to_pylist())) == 4
    locs = ev.column("location").to_numpy()
    assert (locs[1:] != locs[:-1]).sum() > 1_000
    want, paths = merged_intervals(out / "events.parquet")
    iv = exp.arrow("intervals")
    assert interval_rows(iv) == want
    assert iv.column("callpath").combine_chunks().dictionary.to_pylist() == paths


def test_region_name_shares_the_region_ids(parallax, experiments):
    """The events' region_name is a dictionary over the region column's own buffers (its ids
    and its validity), not a copy: the same addresses."""
    ev = parallax.open(experiments["life"]).arrow("events")
    assert ev.column("region").num_chunks == ev.column("region_name").num_chunks == 1
    region, name = ev.column("region").chunk(0), ev.column("region_name").chunk(0)
    assert pa.types.is_dictionary(name.type) and name.type.index_type == pa.int32()
    assert region.null_count > 0
    for i in (0, 1):  # validity, values
        assert name.indices.buffers()[i].address == region.buffers()[i].address
    names = dict(zip(*(parallax.open(experiments["life"]).arrow("regions").column(c).to_pylist()
                       for c in ("region", "name"))))
    assert name.cast(pa.string()).to_pylist() == [
        None if r is None else names[r] for r in region.to_pylist()]


def test_events_are_the_text_export(parallax, experiments, text_exports):
    require_module("polars", "Polars (pip install polars)")
    exp = parallax.open(experiments["pingpong"])
    text = text_exports["pingpong"]
    ev = exp.events
    assert len(ev) == text.total + text.sync
    got = Counter(zip(ev["kind"], ev["rank"].astype(int), ev["thread"].astype(int)))
    want = Counter()
    for label, evs in text.with_sync.items():
        r, t = (int(x) for x in label.split("."))
        for k, _ in evs:
            want[(k, r, t)] += 1
    assert got == want
    # 20 round trips of 8 and of 4096 bytes: 80 messages, 40 each way
    msg = exp.messages
    assert len(msg) == 80
    assert Counter(zip(msg["sender_rank"], msg["receiver_rank"])) == {(0, 1): 40, (1, 0): 40}
    assert sorted(Counter(msg["bytes"]).items()) == [(8, 40), (4096, 40)]
    assert (msg["recv_ns"] >= msg["send_ns"]).all()
    # the same tables in Polars
    pl_ev = exp.table("events", backend="polars")
    assert pl_ev.shape == ev.shape and pl_ev["time_ns"].to_list() == ev["time_ns"].to_list()
    assert exp.table("profiles", backend="polars").height == len(exp.profiles)
    assert exp.table("events") is ev


def test_intervals_are_the_matched_enters_and_exits(parallax, experiments):
    """One interval per call: its enter and its exit are rows of the events table at its
    start and end; per thread and callpath as many as plx report's calls."""
    exp = parallax.open(experiments["life"])
    iv, ev = exp.intervals, exp.events
    assert list(iv.columns[:4]) == ["location", "process", "rank", "thread"]
    enters = ev[ev["kind"] == "enter"]
    exits = ev[ev["kind"] == "exit"]
    assert len(iv) == len(enters) == len(exits)
    key = lambda df, t: Counter(zip(df["location"], df[t], df["region"].astype(int)))  # noqa: E731
    assert key(iv.assign(region=iv["region_id"]), "start_ns") == key(enters, "time_ns")
    assert key(iv.assign(region=iv["region_id"]), "end_ns") == key(exits, "time_ns")
    assert (iv["duration_s"] == (iv["end_ns"] - iv["start_ns"]) / 1e9).all()
    assert (iv["start_s"] == iv["start_ns"] / 1e9).all()
    want = Counter()  # (thread, callpath): calls, over the ranks
    for r in csv_rows("report", experiments["life"], "--callpath"):
        if r["process"] != "all":
            want[(int(r["thread"]), r["callpath"])] += int(r["calls"])
    got = Counter(zip(iv["thread"], iv["callpath"].astype(str)))
    # the runtime's own symbol lookups: where they happened in the trace, under the thread's
    # root in a profile (apart from the program's callpaths)
    runtime = lambda c: {k: n for k, n in c.items() if "plx_symbols" not in k[1]}  # noqa: E731
    assert runtime(got) == runtime(want)
    assert len(runtime(got)) == 16
    # callpath and depth agree: depth = frames above
    assert (iv["callpath"].astype(str).str.count(" => ") == iv["depth"]).all()
    assert {"main", "life_worker"} <= set(iv[iv["depth"] == 0]["region"].astype(str))


def test_tables_are_handed_over_without_a_copy(parallax, experiments):
    """pyarrow allocates nothing for the engine's tables: their buffers are the engine's."""
    exp = parallax.open(experiments["t_mpi"])
    before = pa.total_allocated_bytes()
    t = exp.arrow("events")
    assert t.num_rows > 0 and t.nbytes > 50_000
    assert pa.total_allocated_bytes() - before < 4096


def test_sync_objects_are_plx_report_sync(parallax, experiments, queue_experiment):
    """Every row of plx report --sync --format csv, in its order."""
    for d in (queue_experiment, experiments["life"]):
        so = parallax.open(d).sync_objects
        want = csv_rows("report", d, "--sync")
        got = [{"process": "all" if r.process is None else r.process,
                "thread": "all" if pd_na(r.thread) else str(int(r.thread)),
                "object": r.object, "kind": r.kind, "acquisitions": str(r.acquisitions),
                "contended": str(r.contended), "wait_s": f"{r.wait_s:.9f}",
                "hold_s": f"{r.hold_s:.9f}", "releases": str(r.releases), "site": r.site,
                "id": "" if pd_na(r.id) else str(int(r.id)), "thread_name": r.thread_name,
                "host": r.host} for r in so.itertuples()]
        assert got == want
    # queue.c: 2 mutexes, 2 condition variables, 4 joined threads in total
    so = parallax.open(queue_experiment).sync_objects
    total = so[so["process"].isna()]
    assert Counter(total["kind"]) == {"mutex": 2, "cond": 2, "thread": 4}


def test_regions_have_file_and_line(parallax, experiments):
    """Each function has the file and line plx report gives it (life.c's 7 functions)."""
    exp = parallax.open(experiments["life"])
    reg = exp.regions
    funcs = json.loads(plx("report", experiments["life"], "--format", "json").stdout)[
        "total"]["functions"]
    want = {f["function"]: (f["file"], f["line"]) for f in funcs}
    got = {r.name: (r.file, r.line) for r in reg.itertuples() if r.name in want}
    assert got == want
    in_life = sorted(n for n, (f, _) in got.items() if f.endswith("examples/mpi/life.c"))
    assert in_life == ["exchange_halos", "life_worker", "main", "neighbours", "population",
                       "seed", "update_rows"]


def test_a_directory_that_is_no_experiment_is_a_plx_error(parallax, tmp_path):
    """The engine's message, as plx prints it, in PlxError."""
    exp = parallax.open(tmp_path)
    with pytest.raises(parallax.PlxError) as e:
        exp.events
    msg = plx("export", tmp_path, "--format", "parquet", "-o", tmp_path / "out",
              check=False).stderr
    assert str(e.value) in msg
    with pytest.raises(FileNotFoundError):
        parallax.open(tmp_path / "missing")


def test_waits_are_plx_waits(parallax, waits_experiment):
    exp = parallax.open(waits_experiment)
    w = exp.waits
    assert list(w.columns) == ["pattern", "location", "callpath", "wait_s", "count"]
    # every row of plx waits --format csv, in its order, the seconds to its 6 decimals
    want = csv_rows("waits", waits_experiment)
    got = [{"pattern": r.pattern, "location": r.location, "callpath": r.callpath,
            "wait_s": f"{r.wait_s:.6f}"} for r in w.itertuples()]
    assert got == want
    # each scenario's wait of 0.2 s, in main's thread (main's own joins of the other threads
    # may wait a little too: those rows are the CSV's as well, checked above); the other
    # threads' sleeps are waits with no partner
    partnered = w[~w["pattern"].isin(["sleep", "io_wait"])]
    assert set(partnered["location"].str.split(".").str[-1]) == {"0"}
    for pattern, callpath in (("lock_contention", "main => take_lock"),
                              ("join_wait", "main => join_worker"),
                              ("condition_wait", "main => consume"),
                              ("thread_barrier", "main => meet"),
                              ("semaphore_wait", "main => take_token")):
        row = w[(w["pattern"] == pattern) & (w["callpath"] == callpath)]
        assert list(row["count"]) == [1], (pattern, w)
        assert 0.1 <= row["wait_s"].iloc[0] <= 0.4, (pattern, w)
    assert list(w[w["pattern"] == "lock_contention"]["callpath"]) == ["main => take_lock"]
    assert exp.table("waits") is w


def test_wait_causes_are_plx_waits_causes(parallax, waits_experiment):
    exp = parallax.open(waits_experiment)
    c = exp.wait_causes
    assert list(c.columns) == ["pattern", "waiting_location", "cause_location",
                               "cause_callpath", "delay_s", "kind"]
    want = csv_rows("waits", waits_experiment, "--causes")
    # a wait with no partner (kind none) has no cause: null here, empty in the CSV
    got = [{"pattern": r.pattern, "waiting_location": r.waiting_location,
            "cause_location": r.cause_location or "", "cause_callpath": r.cause_callpath or "",
            "delay_s": f"{r.delay_s:.6f}", "kind": r.kind} for r in c.itertuples()]
    assert got == want
    none = c[c["kind"] == "none"]
    assert len(none) > 0 and none["cause_location"].isna().all()
    # the lock's wait is the holder's time in hold_lock: direct, caused by thread 1
    lock = c[c["pattern"] == "lock_contention"]
    assert set(lock["kind"]) == {"direct"}
    assert set(lock["cause_location"].str.split(".").str[-1]) == {"1"}
    held = lock[lock["cause_callpath"].str.startswith("holder => hold_lock")]["delay_s"].sum()
    assert held >= 0.9 * exp.waits[exp.waits["pattern"] == "lock_contention"]["wait_s"].iloc[0]


def test_counters_are_plx_report_counters(parallax, counters_experiment):
    """Each row of plx report --counters --format csv, in its order — the threads' "(thread)"
    totals and the counted functions' rows — is the table's rows of its counted events, with
    the same numbers (refused events left out)."""
    c = parallax.open(counters_experiment).counters
    assert list(c.columns) == ["process", "pid", "rank", "thread", "thread_name", "function",
                               "epoch", "set", "calls", "context_calls", "estimated", "event",
                               "value", "exclusive", "estimate"]
    rows = csv_rows("report", counters_experiment, "--counters")
    names = [k for k in rows[0] if k not in (
        "process", "thread", "thread_name", "epoch", "set", "function", "calls",
        "context_calls", "estimated") and ":" not in k]
    num = lambda v: None if v == "" else int(v)  # noqa: E731
    want = []
    for r in rows:
        for e in names:
            if r[e] == "":
                continue
            est = None if r[e + ":estimate"] == "" else float(r[e + ":estimate"])
            want.append((r["process"], int(r["thread"]), r["thread_name"], r["function"],
                         num(r["epoch"]), int(r["set"]), num(r["calls"]),
                         num(r["context_calls"]), r["estimated"] == "1", e, int(r[e]),
                         num(r[e + ":exclusive"]), est))
    na = lambda v: None if v is None or v != v else v  # noqa: E731 (NaN, None: no value)
    got = [(p, t, tn, f, na(ep), s, na(ca), na(cc), bool(es), e, v, na(x),
            None if na(m) is None else round(m, 1))
           for p, t, tn, f, ep, s, ca, cc, es, e, v, x, m in zip(
               c["process"], c["thread"], c["thread_name"], c["function"], c["epoch"],
               c["set"], c["calls"], c["context_calls"], c["estimated"], c["event"],
               c["value"], c["exclusive"], c["estimate"])]
    got = [tuple(int(v) if isinstance(v, float) and v == int(v) and i in (4, 6, 7, 11)
                 else v for i, v in enumerate(g)) for g in got]
    assert got == want
    # 3 threads (main, 2 workers), each: its totals (3 events), touch_pages (2 events), spin
    # (task-clock; cycles refused without a PMU); the main thread also nap (2) and step (2 sets
    # of 1 and 2 events)
    rows_of = Counter(zip(c["thread"], c["function"]))
    pmu = 2 if "cycles" in set(c["event"]) else 1
    assert rows_of == {**{(t, f): n for t in (0, 1, 2)
                          for f, n in (("(thread)", 3), ("touch_pages", 2), ("spin", pmu))},
                       (0, "nap"): 2, (0, "step"): 3}
    touch = c[(c["function"] == "touch_pages") & (c["event"] == "minor-faults")]
    # main touches 500 pages, the workers 1000 and 2000 (in either order)
    assert list(touch["calls"]) == [1, 1, 1]
    assert all(v >= n for v, n in zip(sorted(touch["value"]), (500, 1000, 2000)))
    nap = c[(c["function"] == "nap") & (c["event"] == "context-switches")]
    assert list(nap["calls"]) == [1] and (nap["value"] >= 20).all()
    # step's 100 calls, 10 with one set then 10 with the other: 50 each, estimated to 100
    step = c[c["function"] == "step"]
    assert list(step["calls"]) == [50, 50, 50] and list(step["context_calls"]) == [100] * 3
    assert step["estimated"].all() and not c[c["function"] != "step"]["estimated"].any()


def test_native_batches_are_arrow_streams(parallax, experiments):
    """A native record batch is an Arrow C stream (__arrow_c_stream__): pyarrow.table,
    pyarrow's stream reader, Polars and DuckDB read it, its rows and values those of
    __arrow_c_array__; a batch is read as many times as asked, each reader the same rows."""
    d = str(experiments["t_mpi"])
    events = parallax._native.trace(d)["events"]
    want = pa.record_batch(events)
    got = pa.table(events)
    assert got.schema == want.schema and got.num_rows == want.num_rows > 500
    assert got.to_pylist() == pa.Table.from_batches([want]).to_pylist()
    messages = parallax._native.trace(d)["messages"]
    batches = list(pa.RecordBatchReader.from_stream(messages))
    assert len(batches) == 1
    assert batches[0].num_rows == pa.table(messages).num_rows == messages.num_rows > 0
    # a third and fourth reading of one batch: the same table, each reader its own arrays
    regions = parallax._native.trace(d)["regions"]
    first = pa.table(regions)
    assert pa.table(regions).equals(first) and pa.record_batch(regions).equals(first.to_batches()[0])
    del regions
    assert first.num_rows == len(first.column("name").to_pylist()) > 3  # alive after the batch
    require_module("polars", "Polars (pip install polars)")
    import polars as pl
    df = pl.DataFrame(events)
    assert df.height == want.num_rows
    assert df["kind"].cast(pl.String).to_list() == want.column("kind").cast(pa.string()).to_pylist()
    require_module("duckdb", "DuckDB (pip install duckdb)")
    import duckdb
    # DuckDB reads the batch itself (it asks for its schema, then for its data), twice
    kinds = dict(duckdb.sql("select kind::varchar, count(*) from events group by 1").fetchall())
    assert kinds == dict(Counter(want.column("kind").cast(pa.string()).to_pylist()))
    assert duckdb.sql("select count(*) from events").fetchall() == [(want.num_rows,)]