"""One experiment directory, its tables computed by the engine inside the package
(``parallax._native``, the plx-analysis and plx-export crates) and handed over as Arrow record
batches: no subprocess, no temporary files, no copy of a column."""

import os
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import _native
from . import hatchet as _hatchet
from .callpaths import NA, SEPARATOR, CallpathArray, Paths  # noqa: F401 (SEPARATOR: re-export)

# the tables of each engine pass (one merge of the trace gives the first five, another the
# intervals: the events are not computed for the intervals, nor the intervals for the events)
GROUPS = {
    "trace": ("events", "messages", "locations", "regions", "comms"),
    "intervals": ("intervals",),
    "profiles": ("profiles", "callpaths"),
    "sync": ("sync",),
    "waits": ("waits", "wait_causes"),
    "counters": ("counters",),
    "processes": ("processes",),
    "samples": ("samples",),
}
TRACE_TABLES = ("events", "intervals", "messages", "locations", "regions", "comms")
# the tables a user asks for by name (callpaths and sync are read through profiles and
# sync_objects)
TABLES = (*TRACE_TABLES, "profiles", "sync_objects", "waits", "wait_causes", "counters",
          "processes", "samples")
BACKENDS = ("pandas", "polars", "arrow")
# the tables whose pandas frames keep Arrow's memory (pd.ArrowDtype columns)
ARROW_BACKED = ("events", "intervals", "messages", "samples")

PlxError = _native.PlxError


class PlxWarning(UserWarning):
    """What the engine could not read of an experiment (the `plx: warning:` lines plx prints):
    the tables hold what was intact, as plx report's do."""


class Experiment:
    """An experiment directory. Each table is computed by the engine on first use, then kept
    (as Arrow; a pandas frame is made once per table)."""

    def __init__(self, path, plx=None):
        # plx: accepted for compatibility (the tables once came from the plx command); unused
        self.path = os.fspath(path)
        if not os.path.isdir(self.path):
            raise FileNotFoundError(f"{self.path}: not a directory")
        self.plx = plx
        self._arrow = {}
        self._cache = {}
        self._warned = set()
        self.origin_ns = None

    def __repr__(self):
        return f"parallax.Experiment({self.path!r})"

    # -- the engine

    def _load(self, group):
        """Runs the engine pass `group` once: its tables as pyarrow Tables (zero-copy)."""
        out = getattr(_native, group)(self.path)
        for w in out.pop("warnings"):
            if w not in self._warned:
                self._warned.add(w)
                warnings.warn(PlxWarning(w), stacklevel=4)
        if "origin_ns" in out:
            self.origin_ns = out.pop("origin_ns")
        for name, batch in out.items():
            self._arrow[name] = pa.Table.from_batches([pa.record_batch(batch)])

    def arrow(self, name):
        """Table `name` as a pyarrow Table holding the engine's memory (no copy)."""
        if name == "sync_objects":
            name = "sync"
        if name not in self._arrow:
            group = next((g for g, names in GROUPS.items() if name in names), None)
            if group is None:
                raise ValueError(f"no table {name!r} (tables: {', '.join(TABLES)})")
            self._load(group)
        return self._arrow[name]

    def table(self, name, backend="pandas"):
        """Table `name` (events, intervals, messages, locations, regions, comms, profiles,
        sync_objects, waits, wait_causes, counters, samples) as a pandas DataFrame (kept: the same object each
        time), a Polars DataFrame or a pyarrow Table. The pandas columns of events, intervals
        and messages are Arrow-backed (``pd.ArrowDtype``: the engine's memory, nulls as
        ``<NA>``, names dictionary-encoded; ``.astype(...)`` or ``.to_numpy()`` makes numpy
        arrays), those of the other tables numpy arrays (strings as objects, nulls as NaN or
        None)."""
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
        if name not in TABLES:
            raise ValueError(f"no table {name!r} (tables: {', '.join(TABLES)})")
        if name == "profiles":
            df = self.profiles
            if backend == "pandas":
                return df
            df = df.assign(callpath=df["callpath"].astype(str))
            if backend == "arrow":
                return pa.Table.from_pandas(df, preserve_index=False)
            import polars as pl
            return pl.from_pandas(df)
        t = self.arrow(name)
        if backend == "arrow":
            return t
        if backend == "polars":
            import polars as pl
            return pl.from_arrow(t)
        if name not in self._cache:
            # the trace's tables (a row per event or call): pandas columns over the Arrow arrays
            # themselves (pd.ArrowDtype), no conversion, no copy; the others numpy columns
            mapper = pd.ArrowDtype if name in ARROW_BACKED else None
            self._cache[name] = t.to_pandas(types_mapper=mapper)
        return self._cache[name]

    def report(self):
        """The callpath profiles of every thread and their total (process, thread null), as
        plx report --callpath computes them: the ``profiles`` table with its total rows."""
        if "report" not in self._cache:
            df = self.arrow("profiles").to_pandas()
            df["callpath"] = CallpathArray(df["callpath"].to_numpy(np.int64), self._paths())
            self._cache["report"] = df
        return self._cache["report"]

    def _paths(self):
        """The profiles' callpaths as a `Paths` tree (each interned once: linear in paths)."""
        if "paths" not in self._cache:
            t = self.arrow("callpaths")
            paths = Paths()
            paths.parent = t.column("parent").to_pylist()
            paths.name = t.column("function").to_pylist()
            paths.depth = t.column("depth").to_pylist()
            paths._ids = {(p, n): i for i, (p, n) in enumerate(zip(paths.parent, paths.name))}
            self._cache["paths"] = paths
        return self._cache["paths"]

    def _callpath_tree(self):
        """(document, paths): the total table's rows ({"path", "calls", "exclusive_s",
        "inclusive_s"}) under doc["total"]["callpaths"], the form to_hatchet reads."""
        if "tree" not in self._cache:
            t = self.arrow("profiles")
            total = t.filter(t.column("total"))
            rows = [{"path": p, "calls": c, "exclusive_s": e, "inclusive_s": i}
                    for p, c, e, i in zip(*(total.column(k).to_pylist() for k in
                                            ("callpath", "calls", "exclusive_s",
                                             "inclusive_s")))]
            self._cache["tree"] = ({"total": {"callpaths": rows}}, self._paths())
        return self._cache["tree"]

    @property
    def info(self):
        """The run's identity, as plx info gives it: {"experiment": path, "processes": [one dict
        per process image: process, pid, host, rank, world_size, executable, command_line,
        arguments (after the program, shell-quoted), start_realtime_ns, written_by
        ("parallax VERSION"), threads (how many)]} (the ``processes`` table's rows)."""
        if "info" not in self._cache:
            procs = self.arrow("processes").to_pylist()
            self._cache["info"] = {"experiment": self.path, "processes": procs}
        return self._cache["info"]

    @property
    def profiles(self):
        """One row per thread and callpath (plx report --callpath, in its order): node (the
        MPI rank, else the process's index), context (0), thread, pid, process (the pid, or
        pid.image of a later exec image), host, thread_name, callpath, function, depth, file
        and line (the function's source, "" and 0 where the debug information has none), calls,
        child_calls, exclusive_s, inclusive_s, cpu_s (NaN where not measured), and where the
        run sampled call stacks samples and estimated.

        The callpath column holds each row's path as an id into a tree of the paths (dtype
        "callpath"): a row's text is built when it is read, and comparing the column with a
        text, unique() and groupby work on the ids, so the table's memory is linear in the
        call depth; ``.astype(str)`` makes every text (N²/2 frames for a chain N deep)."""
        if "profiles" not in self._cache:
            t = self.arrow("profiles")
            t = t.filter(pc.invert(t.column("total")))
            df = t.drop_columns(["total"]).to_pandas()
            df["callpath"] = CallpathArray(df["callpath"].to_numpy(np.int64), self._paths())
            df["function"] = df["function"].astype(object)
            for k in ("node", "thread", "pid"):
                df[k] = df[k].astype("int64")
            df.insert(1, "context", np.zeros(len(df), dtype=np.int64))
            self._cache["profiles"] = df
        return self._cache["profiles"]

    @property
    def events(self):
        """Every event of the merged trace in global time order (the Parquet export's events
        table): time_ns, location, process, rank, thread, kind (enter, exit, user, send, recv,
        collective, acquire, release), region and region_name, the messages' peer, tag, bytes,
        comm, message, user events' user_event and value, synchronization objects' object,
        sync_kind and wait_ns, truncated."""
        return self.table("events")

    @property
    def intervals(self):
        """One row per call, its enter matched with the exit that ended it (pipit's
        match_events), in the order the calls ended: location, process, rank, thread, region
        (its name), region_id, callpath (its frames joined by ' => '), depth (0: a root
        call), start_ns, end_ns, start_s, end_s, duration_s, truncated (ended by its killed
        process's end)."""
        return self.table("intervals")

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
        """plx report --sync's rows: a row per thread and synchronization object (mutex,
        rwlock, condition variable, barrier, semaphore, spin lock, joined thread), each
        thread's sorted by wait time, then a row per object in total (process, pid, thread
        null): process, pid, rank, thread, object (its name), kind, acquisitions, contended,
        wait_s, hold_s (null where not known: a Java monitor's), releases, site, id (the
        process-local id), thread_name, host."""
        return self.table("sync_objects")

    @property
    def counters(self):
        """The rows of plx report --counters, one per counted event of each: the threads'
        whole-run totals (plx run --counters; function "(thread)") and the counted functions
        (counters rules; per epoch and event set): process, pid, rank, thread, thread_name,
        function, epoch, set, calls, context_calls, estimated, event, value (the total, or a
        function's inclusive count), exclusive, estimate (the inclusive count scaled to all
        the context's calls). Empty without counters."""
        return self.table("counters")

    @property
    def samples(self):
        """One row per call-stack sample of plx run --sample: time_ns (ns since origin_ns, as
        the events'; <NA> where the runtime kept no time: without --trace), location, process,
        rank, thread, callpath (frames joined by ' => '), function (its innermost frame), file
        and line (the function's source, "" and 0 where the debug information has none),
        estimated (a frame known only from samples). Stamped samples come first, per location
        in time order. Empty without sampling."""
        return self.table("samples")

    @property
    def waits(self):
        """One row per wait-state pattern, location and call path (plx waits, in its order):
        pattern (late_sender, wait_at_barrier, lock_contention, ...), location (its label,
        RANK.THREAD), callpath (frames joined by ' => '), wait_s, count (the waits summed)."""
        return self.table("waits")

    @property
    def wait_causes(self):
        """The delays that caused the waits (plx waits --causes): pattern, waiting_location,
        cause_location, cause_callpath, delay_s, kind (direct or propagated)."""
        return self.table("wait_causes")

    # -- Hatchet

    def to_hatchet(self, total=False):
        """A Hatchet GraphFrame of the callpath profiles (parallax.hatchet.to_hatchet)."""
        return _hatchet.to_hatchet(self, total=total)


def open(path, plx=None):  # noqa: A001 (the package's entry point, as in parallax.open)
    """The experiment in directory `path` (`plx`: accepted for compatibility, unused: the
    engine is inside the package)."""
    return Experiment(path, plx=plx)


def thicket(paths, plx=None):
    """A Thicket of the runs in directories `paths` (parallax.hatchet.thicket)."""
    return _hatchet.thicket(open(p, plx=plx) for p in paths)
