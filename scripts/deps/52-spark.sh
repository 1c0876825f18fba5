#!/usr/bin/env bash
# Analysis past one machine: the readers of the rank-partitioned Parquet dataset
# (`plx export --format parquet --partition rank`) that tests/e2e/test_parquet_dataset.py runs:
# DuckDB, Polars and Spark (pyspark runs a local session on the installed OpenJDK 17).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"

apt_install openjdk-17-jre-headless
pip_install duckdb:duckdb polars:polars pyspark:pyspark
