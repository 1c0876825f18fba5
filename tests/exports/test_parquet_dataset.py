"""plx export --format parquet --partition rank: a hive-style dataset (`events/rank=N/...`) read
as-is by DuckDB, Polars and Spark, with the same rows as the one-file export and the same counts
and sums as plx report and plx comm."""

import csv
import io
from collections import Counter

import pytest
from components import require, require_module

from conftest import plx

pd = require_module("pandas")
pl = require_module("polars")
duckdb = require_module("duckdb")
require_module("pyarrow")

PARTITIONED = {"events": "rank", "messages": "receiver_rank", "locations": "rank"}


@pytest.fixture(scope="module")
def datasets(experiments, tmp_path_factory):
    """For life: (the rank-partitioned dataset, the one-file export)."""
    root = tmp_path_factory.mktemp("dataset")
    d, flat = root / "life", root / "life-flat"
    cp = plx("export", experiments["life"], "--format", "parquet", "--partition", "rank", "-o", d)
    assert "as parquet" in cp.stderr
    plx("export", experiments["life"], "--format", "parquet", "-o", flat)
    return d, flat


def report_calls(exp):
    """plx report's calls per (pid, thread, function) (its per-thread rows, not the totals)."""
    rows = csv.DictReader(io.StringIO(plx("report", exp, "--format", "csv").stdout))
    return {(int(r["process"]), int(r["thread"]), r["function"]): int(r["calls"])
            for r in rows if r["process"] != "all"}


def comm_pairs(exp):
    """plx comm's (messages, bytes) per (sender rank, receiver rank)."""
    rows = csv.DictReader(io.StringIO(plx("comm", exp, "--format", "csv").stdout))
    return {(int(r["sender"]), int(r["receiver"])): (int(r["messages"]), int(r["bytes"]))
            for r in rows}


def test_layout_is_hive_partitions_by_rank(datasets):
    d, flat = datasets
    for table, key in PARTITIONED.items():
        parts = sorted(p.name for p in (d / table).iterdir())
        assert parts == [f"{key}={r}" for r in ("0", "1", "2", "3")], table
        for r in range(4):
            f = d / table / f"{key}={r}" / "part-0.parquet"
            cols = pl.read_parquet_schema(f)
            # the key is in the directory name only
            assert key not in cols, (table, f)
            assert list(cols) == [c for c in pl.read_parquet_schema(flat / f"{table}.parquet")
                                  if c != key]
    # the whole-run tables stay single files
    for table in ("regions", "comms"):
        assert (d / f"{table}.parquet").is_file()
        assert pd.read_parquet(d / f"{table}.parquet").equals(pd.read_parquet(flat / f"{table}.parquet"))


def test_duckdb_reads_the_dataset(datasets, experiments):
    d, flat = datasets
    con = duckdb.connect()
    ev = f"read_parquet('{d}/events/*/*.parquet', hive_partitioning = true)"
    # the same rows as the one-file export, per rank and kind
    got = dict(((r, k), n) for r, k, n in con.sql(
        f"select rank, kind, count(*) from {ev} group by all").fetchall())
    want = dict(((r, k), n) for r, k, n in con.sql(
        f"select rank, kind, count(*) from read_parquet('{flat}/events.parquet') group by all").fetchall())
    assert got == want and sum(got.values()) > 0
    # calls per (pid, thread, function): enters joined to the locations dataset, as plx report
    rows = con.sql(f"""select l.pid, e.thread, e.region_name, count(*)
                       from {ev} e join read_parquet('{d}/locations/*/*.parquet',
                                                     hive_partitioning = true) l
                         on e.location = l.location and e.rank = l.rank
                       where e.kind = 'enter' group by all""").fetchall()
    calls = {(pid, t, f): n for pid, t, f, n in rows}
    assert calls == report_calls(experiments["life"])
    # messages and bytes per rank pair, as plx comm
    rows = con.sql(f"""select sender_rank, receiver_rank, count(*), sum(bytes)
                       from read_parquet('{d}/messages/*/*.parquet', hive_partitioning = true)
                       group by all""").fetchall()
    assert {(s, r): (n, b) for s, r, n, b in rows} == comm_pairs(experiments["life"])


def test_polars_scans_the_dataset(datasets, experiments):
    d, _ = datasets
    ev = pl.scan_parquet(d / "events", hive_partitioning=True)
    locs = pl.scan_parquet(d / "locations", hive_partitioning=True)
    calls = (ev.filter(pl.col("kind") == "enter")
             .join(locs.select("location", "pid"), on="location")
             .group_by("pid", "thread", "region_name").agg(pl.len().alias("n")).collect())
    got = {(r["pid"], r["thread"], r["region_name"]): r["n"] for r in calls.iter_rows(named=True)}
    assert got == report_calls(experiments["life"])
    msgs = (pl.scan_parquet(d / "messages", hive_partitioning=True)
            .group_by("sender_rank", "receiver_rank")
            .agg(pl.len().alias("n"), pl.col("bytes").sum().alias("b")).collect())
    got = {(r["sender_rank"], r["receiver_rank"]): (r["n"], r["b"]) for r in msgs.iter_rows(named=True)}
    assert got == comm_pairs(experiments["life"])
    # the partition column holds each file's rank: every event's rank is its location's
    ranks = ev.join(locs.select("location", pl.col("rank").alias("loc_rank")), on="location")
    assert ranks.filter(pl.col("rank") != pl.col("loc_rank")).select(pl.len()).collect().item() == 0


def test_spark_reads_the_dataset(datasets, experiments):
    pyspark = require_module("pyspark")
    require(__import__("shutil").which("java") is not None, "a Java runtime (java) for Spark")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    d, _ = datasets
    spark = (SparkSession.builder.master("local[1]").appName("plx-dataset")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    try:
        assert pyspark.__version__
        ev = spark.read.parquet(str(d / "events"))
        locs = spark.read.parquet(str(d / "locations")).select("location", "pid")
        rows = (ev.where(F.col("kind") == "enter").join(locs, "location")
                .groupBy("pid", "thread", "region_name").count().collect())
        assert {(r["pid"], r["thread"], r["region_name"]): r["count"] for r in rows} == \
            report_calls(experiments["life"])
        rows = (spark.read.parquet(str(d / "messages")).groupBy("sender_rank", "receiver_rank")
                .agg(F.count("*").alias("n"), F.sum("bytes").alias("b")).collect())
        assert {(r["sender_rank"], r["receiver_rank"]): (r["n"], r["b"]) for r in rows} == \
            comm_pairs(experiments["life"])
    finally:
        spark.stop()


def test_partition_is_refused_where_it_does_not_apply(experiments, tmp_path):
    cp = plx("export", experiments["life"], "--format", "text", "--partition", "rank",
             "-o", tmp_path / "t.txt", check=False)
    assert cp.returncode == 2
    assert "--partition: the text format writes no partitioned tables" in cp.stderr
