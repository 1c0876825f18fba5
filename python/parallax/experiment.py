"""One experiment directory, its tables read from the plx engine's outputs."""

import json
import os
import shutil
import subprocess
import tempfile
import warnings

import numpy as np
import pandas as pd

from . import hatchet as _hatchet
from .callpaths import NA, SEPARATOR, CallpathArray, Paths

# the Parquet export's tables (docs/exports/parquet.md)
TRACE_TABLES = ("events", "messages", "locations", "regions", "comms")
# plx hierarchy's Sync branch of communicators and tags (not synchronization objects)
MESSAGES = "Messages"
# the tables computed from other plx commands
DERIVED_TABLES = ("profiles", "sync_objects", "waits", "wait_causes")


class PlxError(RuntimeError):
    """plx failed (or is missing): the command and what it printed."""


class PlxWarning(UserWarning):
    """What plx could not read of an experiment (its `plx: warning:` lines): the tables hold
    what was intact, as plx report's do."""


WARNING_PREFIX = "plx: warning: "


def _plx_binary(plx=None):
    found = plx or os.environ.get("PLX") or shutil.which("plx")
    if not found:
        raise PlxError("the plx command is not on PATH (set $PLX to the plx binary)")
    return found


class Experiment:
    """An experiment directory. Tables are computed by plx on first use, then kept."""

    def __init__(self, path, plx=None):
        self.path = os.fspath(path)
        if not os.path.isdir(self.path):
            raise FileNotFoundError(f"{self.path}: not a directory")
        self.plx = _plx_binary(plx)
        self._cache = {}
        self._parquet = None
        self._warned = set()

    def __repr__(self):
        return f"parallax.Experiment({self.path!r})"

    # -- running the engine

    def _run(self, *args):
        cmd = [self.plx, *args]
        cp = subprocess.run(cmd, capture_output=True, text=True)
        if cp.returncode != 0:
            raise PlxError(f"{' '.join(cmd)} exited {cp.returncode}: {cp.stderr.strip()}")
        # every warning of the engine is passed on, once per experiment object
        for line in cp.stderr.splitlines():
            if line.startswith(WARNING_PREFIX) and line not in self._warned:
                self._warned.add(line)
                warnings.warn(PlxWarning(line[len(WARNING_PREFIX):]), stacklevel=3)
        return cp.stdout

    def _json(self, *args):
        return json.loads(self._run(*args, "--format", "json"))

    def _parquet_dir(self):
        """The Parquet export of the merged trace, written once into a temporary directory."""
        if self._parquet is None:
            tmp = tempfile.TemporaryDirectory(prefix="parallax-")
            self._run("export", self.path, "--format", "parquet", "-o", tmp.name)
            self._parquet = tmp  # removed with this object
        return self._parquet.name

    # -- tables

    def report(self):
        """plx report --callpath --format json, as a dict. Its rows name their whole path (a
        chain N deep: N²/2 names); profiles and to_hatchet read --tree's rows instead."""
        if "report" not in self._cache:
            self._cache["report"] = self._json("report", self.path, "--callpath")
        return self._cache["report"]

    def _callpath_tree(self):
        """plx report --callpath --tree --format json (rows by node id and parent id: its size
        linear in the call depth), with every row's path interned in one `Paths` table: returns
        (the document, the table); each callpaths row gets a "path" key, its id there."""
        if "tree" not in self._cache:
            doc = self._json("report", self.path, "--callpath", "--tree")
            paths = Paths()
            tables = [t["callpaths"] for p in doc["processes"] for t in p["threads"]]
            tables.append(doc["total"]["callpaths"])
            for rows in tables:
                # a parent's id is smaller than its children's: parents are interned first
                local = {}
                for c in sorted(rows, key=lambda c: c["id"]):
                    parent = NA if c["parent"] is None else local[c["parent"]]
                    c["path"] = local[c["id"]] = paths.intern(parent, c["function"])
            self._cache["tree"] = (doc, paths)
        return self._cache["tree"]

    @property
    def info(self):
        """plx info DIR --format json, as a dict: each process's command line, host, start
        (start_realtime_ns), MPI world size, threads and the runtime's version (written_by)."""
        if "info" not in self._cache:
            self._cache["info"] = self._json("info", self.path)
        return self._cache["info"]

    @property
    def profiles(self):
        """One row per thread and callpath: node (the MPI rank, else the process's position),
        context (0), thread, pid, host, thread_name, callpath (frames joined by ' => '),
        function (the last frame), depth, file and line (the function's source, "" and 0
        where the debug information has none), calls, child_calls, exclusive_s, inclusive_s.

        The callpath column holds each row's path as an id into a tree of the paths (dtype
        "callpath"): a row's text is built when it is read, and comparing the column with a
        text, unique() and groupby work on the ids, so the table's memory is linear in the
        call depth; ``.astype(str)`` makes every text (N²/2 frames for a chain N deep)."""
        if "profiles" not in self._cache:
            doc, paths = self._callpath_tree()
            cols = {k: [] for k in ("node", "thread", "pid", "host", "thread_name", "path",
                                    "file", "line", "calls", "child_calls", "exclusive_s",
                                    "inclusive_s")}
            for i, p in enumerate(doc["processes"]):
                node = p["rank"] if p.get("rank") is not None else i
                for t in p["threads"]:
                    for c in t["callpaths"]:
                        cols["node"].append(node)
                        cols["thread"].append(t["thread"])
                        cols["pid"].append(p["pid"])
                        cols["host"].append(p["host"])
                        cols["thread_name"].append(t["name"])
                        for k in ("path", "file", "line", "calls", "child_calls",
                                  "exclusive_s", "inclusive_s"):
                            cols[k].append(c[k])
            ids = np.array(cols.pop("path"), dtype=np.int64)
            df = pd.DataFrame({
                "node": pd.Series(cols["node"], dtype="int64"),
                "context": np.zeros(len(ids), dtype=np.int64),
                "thread": pd.Series(cols["thread"], dtype="int64"),
                "pid": pd.Series(cols["pid"], dtype="int64"),
                "host": pd.Series(cols["host"], dtype=object),
                "thread_name": pd.Series(cols["thread_name"], dtype=object),
                "callpath": CallpathArray(ids, paths),
                "function": pd.Series([paths.name[i] for i in ids], dtype=object),
                "depth": pd.Series([paths.depth[i] for i in ids], dtype="int64"),
                "file": pd.Series(cols["file"], dtype=object),
                "line": pd.Series(cols["line"], dtype="int64"),
                "calls": pd.Series(cols["calls"], dtype="int64"),
                "child_calls": pd.Series(cols["child_calls"], dtype="int64"),
                "exclusive_s": pd.Series(cols["exclusive_s"], dtype="float64"),
                "inclusive_s": pd.Series(cols["inclusive_s"], dtype="float64"),
            })
            self._cache["profiles"] = df
        return self._cache["profiles"]

    def table(self, name, backend="pandas"):
        """A table of the merged trace (events, messages, locations, regions, comms), or the
        profiles or sync_objects, as a pandas or a Polars DataFrame."""
        if backend not in ("pandas", "polars"):
            raise ValueError(f"backend {backend!r}: pandas or polars")
        if name in TRACE_TABLES:
            path = os.path.join(self._parquet_dir(), name + ".parquet")
            if backend == "polars":
                import polars as pl
                return pl.read_parquet(path)
            key = "trace:" + name
            if key not in self._cache:
                self._cache[key] = pd.read_parquet(path)
            return self._cache[key]
        if name in DERIVED_TABLES:
            df = getattr(self, name)
            if backend == "polars":
                import polars as pl
                return pl.from_pandas(df)
            return df
        raise ValueError(f"no table {name!r} (tables: "
                         f"{', '.join(TRACE_TABLES + DERIVED_TABLES)})")

    @property
    def events(self):
        """Every event of the merged trace in global time order (plx export --format parquet):
        enter, exit, user, send, recv, collective, acquire and release (synchronization
        objects: object, sync_kind, wait_ns)."""
        return self.table("events")

    @property
    def messages(self):
        """Every matched MPI message: sender and receiver, times, bytes, tag, communicator."""
        return self.table("messages")

    @property
    def locations(self):
        return self.table("locations")

    @property
    def regions(self):
        """Every region: region (its id in events), name, kind, file and line (resolved from
        the executables' debug information, as plx report and the OTF2 export show them;
        empty and 0 where there is none)."""
        return self.table("regions")

    @property
    def comms(self):
        return self.table("comms")

    @property
    def sync_objects(self):
        """One row per synchronization object (plx hierarchy's Sync tree): category (Mutex,
        CondVar, Barrier, Thread, ...), object (its id), name (where it was created), wait_s and
        hold_s (plx query's wait_time and hold_time for the focus sync=/CATEGORY/OBJECT). The
        Sync tree's Messages branch (communicators and tags of an MPI experiment) holds no
        synchronization objects: it is left out."""
        if "sync_objects" not in self._cache:
            sync = self._json("hierarchy", self.path).get("sync") or {}
            rows = []
            for cat in sync.get("children", []):
                if cat["name"] == MESSAGES:
                    continue
                for o in cat.get("children", []):
                    obj = next((a for a in o["aliases"] if a.isdigit()), None)
                    focus = f"sync=/{cat['name']}/{obj if obj is not None else o['name']}"
                    row = {"category": cat["name"], "object": int(obj) if obj else None,
                           "name": o["name"]}
                    for metric in ("wait_time", "hold_time"):
                        q = self._json("query", self.path, "--metric", metric, "--focus", focus,
                                       "--bins", "1")
                        row[metric.replace("_time", "_s")] = q["total"]
                    rows.append(row)
            self._cache["sync_objects"] = pd.DataFrame(
                rows, columns=["category", "object", "name", "wait_s", "hold_s"])
        return self._cache["sync_objects"]

    def _waits(self):
        """plx waits --causes --format json (its rows and its causes: one replay for both)."""
        if "waits" not in self._cache:
            doc = self._json("waits", self.path, "--causes")
            self._cache["waits"] = pd.DataFrame({
                "pattern": pd.Series([r["pattern"] for r in doc["rows"]], dtype=object),
                "location": pd.Series([r["location"] for r in doc["rows"]], dtype=object),
                "callpath": pd.Series([r["callpath"] for r in doc["rows"]], dtype=object),
                "wait_s": pd.Series([r["wait_s"] for r in doc["rows"]], dtype="float64"),
                "count": pd.Series([r["count"] for r in doc["rows"]], dtype="int64"),
            })
            cols = ("pattern", "waiting_location", "cause_location", "cause_callpath", "kind")
            causes = {k: pd.Series([c[k] for c in doc["causes"]], dtype=object) for k in cols}
            causes["delay_s"] = pd.Series([c["delay_s"] for c in doc["causes"]],
                                          dtype="float64")
            self._cache["wait_causes"] = pd.DataFrame(
                causes, columns=["pattern", "waiting_location", "cause_location",
                                 "cause_callpath", "delay_s", "kind"])
        return self._cache["waits"]

    @property
    def waits(self):
        """One row per wait-state pattern, location and call path (plx waits, in its order):
        pattern (late_sender, wait_at_barrier, lock_contention, ...), location (its label,
        RANK.THREAD), callpath (frames joined by ' => '), wait_s, count (the waits summed)."""
        return self._waits()

    @property
    def wait_causes(self):
        """The delays that caused the waits (plx waits --causes): pattern, waiting_location,
        cause_location, cause_callpath, delay_s, kind (direct or propagated)."""
        self._waits()
        return self._cache["wait_causes"]

    # -- Hatchet

    def to_hatchet(self, total=False):
        """A Hatchet GraphFrame of the callpath profiles (parallax.hatchet.to_hatchet)."""
        return _hatchet.to_hatchet(self, total=total)


def open(path, plx=None):  # noqa: A001 (the package's entry point, as in parallax.open)
    """The experiment in directory `path` (`plx`: the binary, else $PLX, else plx on PATH)."""
    return Experiment(path, plx=plx)


def thicket(paths, plx=None):
    """A Thicket of the runs in directories `paths` (parallax.hatchet.thicket)."""
    return _hatchet.thicket(open(p, plx=plx) for p in paths)
