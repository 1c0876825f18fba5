"""plx export --format parquet: every table read by pandas (pyarrow), Polars and DuckDB, and the
same events as the text export, the same matched messages as plx comm."""

import csv
import io
import json
from collections import Counter

import pytest
from components import require_module

from conftest import BIN, ROOT, plx, run

pd = require_module("pandas")
pl = require_module("polars")
duckdb = require_module("duckdb")
require_module("pyarrow")

TABLES = ["events", "messages", "locations", "regions", "comms", "waits", "wait_causes"]


@pytest.fixture(scope="module")
def parquet_exports(experiments, tmp_path_factory):
    root = tmp_path_factory.mktemp("parquet")
    out = {}
    for name, exp in experiments.items():
        d = root / name
        cp = plx("export", exp, "--format", "parquet", "-o", d)
        assert "as parquet" in cp.stderr
        out[name] = d
    return out


@pytest.mark.parametrize("name", ["life", "t_mpi", "pingpong"])
def test_waits_are_plx_waits(parquet_exports, experiments, name):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(parquet_exports[name] / "waits.parquet")
    assert t.schema.names == ["pattern", "location", "callpath", "wait_s", "count"]
    assert [f.type for f in t.schema] == [pa.string(), pa.string(), pa.string(), pa.float64(),
                                          pa.int64()]
    assert t.schema.metadata[b"plx.schema"] == b"4"
    # every row of plx waits --format csv, in its order, the seconds to its 6 decimals
    want = list(csv.DictReader(io.StringIO(
        plx("waits", experiments[name], "--format", "csv").stdout)))
    got = [{"pattern": r["pattern"], "location": r["location"], "callpath": r["callpath"],
            "wait_s": f"{r['wait_s']:.6f}"} for r in t.to_pylist()]
    assert got == want
    # the counts are plx waits --format json's
    doc = json.loads(plx("waits", experiments[name], "--format", "json").stdout)
    assert [r["count"] for r in t.to_pylist()] == [r["count"] for r in doc["rows"]]
    assert len(want) > 0 and all(r["count"] >= 1 for r in t.to_pylist())


@pytest.fixture(scope="module")
def sleep_wait(tmp_path_factory):
    """tests/e2e/programs/sleep_wait.c traced (0.1 s in each of usleep, nanosleep, poll, select,
    epoll_wait), and its Parquet export."""
    root = tmp_path_factory.mktemp("sleep_wait")
    exe, exp, out = root / "sleep_wait", root / "sleep_wait.exp", root / "sleep_wait.pq"
    run([BIN / "plx-cc", "-O1", "-g", ROOT / "tests" / "e2e" / "programs" / "sleep_wait.c",
         "-o", exe])
    plx("run", "--trace", "-o", exp, "--", exe)
    plx("export", exp, "--format", "parquet", "-o", out)
    return exp, out


def causes_table(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path / "wait_causes.parquet")
    assert t.schema.names == ["pattern", "waiting_location", "cause_location", "cause_callpath",
                              "delay_s", "kind"]
    assert [f.type for f in t.schema] == [pa.string()] * 4 + [pa.float64(), pa.string()]
    return t.to_pylist()


def test_wait_causes_hold_the_waits_with_no_partner(sleep_wait):
    """The Parquet export had no causes table, so the sleeps and I/O waits that plx waits
    --causes gives (kind none, no cause) were in no table: wait_causes is plx waits --causes
    --format json's rows, in its order, the same seconds: 2 sleeps (usleep, nanosleep) and 3
    I/O waits (poll, select, epoll_wait) of 0.1 s each."""
    exp, out = sleep_wait
    got = causes_table(out)
    want = json.loads(plx("waits", exp, "--causes", "--format", "json").stdout)["causes"]
    assert got == want
    assert [(r["pattern"], r["kind"], r["cause_location"], r["cause_callpath"]) for r in got] == \
        [("sleep", "none", None, None)] * 2 + [("io_wait", "none", None, None)] * 3
    assert all(0.1 <= r["delay_s"] < 0.15 for r in got), got


@pytest.mark.parametrize("name", ["life", "t_mpi", "pingpong"])
def test_wait_causes_are_plx_waits_causes(parquet_exports, experiments, name):
    got = causes_table(parquet_exports[name])
    want = json.loads(plx("waits", experiments[name], "--causes", "--format", "json").stdout)
    assert got == want["causes"]
    if name != "pingpong":
        assert len(got) > 0 and all(r["kind"] in ("direct", "propagated") for r in got)


def read_all(path):
    """The table at path by the three readers: (pandas frame, polars frame, duckdb row count)."""
    a = pd.read_parquet(path, engine="pyarrow")
    b = pl.read_parquet(path)
    n = duckdb.sql(f"select count(*) from read_parquet('{path}')").fetchall()[0][0]
    return a, b, n


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_every_table_reads_with_pandas_polars_duckdb(parquet_exports, name):
    for t in TABLES:
        path = parquet_exports[name] / f"{t}.parquet"
        a, b, n = read_all(path)
        assert len(a) == b.height == n, t
        assert list(a.columns) == b.columns, t
    # and the same values, not just counts: pandas and polars agree on the events
    a = pd.read_parquet(parquet_exports[name] / "events.parquet", engine="pyarrow")
    b = pl.read_parquet(parquet_exports[name] / "events.parquet").to_pandas()
    assert (a["time_ns"].to_numpy() == b["time_ns"].to_numpy()).all()
    assert (a["kind"].to_numpy() == b["kind"].to_numpy()).all()


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_events_are_the_text_exports(parquet_exports, text_exports, name):
    text = text_exports[name]
    ev = pd.read_parquet(parquet_exports[name] / "events.parquet", engine="pyarrow")
    locs = pd.read_parquet(parquet_exports[name] / "locations.parquet", engine="pyarrow")
    assert len(ev) == text.total + text.sync
    assert ev["time_ns"].is_monotonic_increasing
    label = dict(zip(locs["location"], locs["label"]))
    assert set(label.values()) == set(text.with_sync)
    # per location, the same events in the same order (kind and region), acquires and
    # releases of synchronization objects included
    ev["label"] = ev["location"].map(label)
    for lab, group in ev.groupby("label", sort=False):
        got = [(k, r if r is not None else "-") for k, r in zip(group["kind"], group["region_name"])]
        assert got == text.with_sync[lab], lab
    # DuckDB counts the same kinds
    path = parquet_exports[name] / "events.parquet"
    rows = duckdb.sql(f"select kind, count(*) from read_parquet('{path}') group by kind").fetchall()
    want = Counter(k for evs in text.with_sync.values() for k, _ in evs)
    assert dict(rows) == dict(want)


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_messages_are_plx_comms(parquet_exports, experiments, name):
    msgs = pl.read_parquet(parquet_exports[name] / "messages.parquet")
    # by rank: the matrix of plx comm (from the message statistics)
    rows = list(csv.DictReader(io.StringIO(plx("comm", experiments[name], "--format", "csv").stdout)))
    want = {(int(r["sender"]), int(r["receiver"])): (int(r["messages"]), int(r["bytes"])) for r in rows}
    got = msgs.group_by(["sender_rank", "receiver_rank"]).agg(
        pl.len().alias("n"), pl.col("bytes").sum().alias("b"))
    got = {(r["sender_rank"], r["receiver_rank"]): (r["n"], r["b"]) for r in got.iter_rows(named=True)}
    assert got == want
    assert msgs.height == sum(n for n, _ in want.values())
    # by thread: plx comm's matching of the trace
    rows = list(csv.DictReader(io.StringIO(
        plx("comm", experiments[name], "--by", "thread", "--format", "csv").stdout)))
    want = {(r["sender"], r["receiver"]): int(r["messages"]) for r in rows}
    got = Counter(
        (f"{r['sender_rank']}.{r['sender_thread']}", f"{r['receiver_rank']}.{r['receiver_thread']}")
        for r in msgs.iter_rows(named=True))
    assert dict(got) == want
    # every matched message: its send and receive in the events, the receive not before the send
    assert (msgs["recv_ns"] >= msgs["send_ns"]).all()
    con = duckdb.connect()
    d = parquet_exports[name]
    n = con.sql(f"""select count(*) from read_parquet('{d}/messages.parquet') m
                    join read_parquet('{d}/events.parquet') s
                      on s.kind = 'send' and s.message = m.message and s.time_ns = m.send_ns
                    join read_parquet('{d}/events.parquet') r
                      on r.kind = 'recv' and r.message = m.message and r.time_ns = m.recv_ns""").fetchall()[0][0]
    assert n == msgs.height


def test_locations_regions_comms(parquet_exports, text_exports):
    d = parquet_exports["t_mpi"]
    locs = pd.read_parquet(d / "locations.parquet", engine="pyarrow")
    text = text_exports["t_mpi"]
    for r in locs.itertuples():
        who, thread_name = text.locations[r.label]
        assert who == f"(pid {r.pid} on {r.host})" and r.label.startswith(f"{r.rank}.")
        assert thread_name == r.thread_name
    regions = pd.read_parquet(d / "regions.parquet", engine="pyarrow")
    assert list(regions["region"]) == list(range(len(regions)))
    ev = pd.read_parquet(d / "events.parquet", engine="pyarrow")
    named = ev.dropna(subset=["region"])
    assert (named["region_name"] == named["region"].astype(int).map(dict(zip(regions.region, regions.name)))).all()
    comms = pd.read_parquet(d / "comms.parquet", engine="pyarrow")
    assert "MPI_COMM_WORLD" in set(comms["name"])
    world = comms[comms["name"] == "MPI_COMM_WORLD"].iloc[0]
    assert world["ranks"] == "0 1 2 3" and world["size"] == 4
    assert set(ev["comm"].dropna().astype(int)) <= set(comms["comm"])


def test_writes_a_directory_only(experiments, tmp_path):
    cp = plx("export", experiments["life"], "--format", "parquet", "-o", "-", check=False)
    assert cp.returncode == 2
    assert "directory" in cp.stderr
