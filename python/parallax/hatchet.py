"""Hatchet GraphFrames and Thickets of experiments, built from an Experiment's tables.

A thread's profile becomes one tree: its root is a frame of type "thread" named after the
thread (``<thread main>``, ``<thread worker>``), the thread's callpaths its descendants, so the
functions the runtime records apart from the program (``plx_symbols``, ``plx_flush``) and a
worker's entry function each hang under the one root of their thread. Threads of the same name
share their root (the graph is the union of the threads' trees, as Hatchet's multi-rank readers
give). A function's frame holds its name, source file and line (from the profiles' ``file`` and
``line``: the engine's, resolved from the executables' debug information). Times are in seconds,
the unit of Hatchet's cProfile, gprof and HPCToolkit readers: ``time`` exclusive, ``time (inc)``
inclusive; ``calls`` the call count (a thread root: 1 per thread).
"""

import datetime
import os

import pandas as pd

from .callpaths import NA

METRICS = ["calls", "time", "time (inc)"]


def _thread_label(name, thread):
    """A thread root's name: the thread's name, else its index (a thread with no name)."""
    return f"<thread {name}>" if isinstance(name, str) and name else f"<thread {thread}>"


def metadata(exp):
    """One run's parameters, the keys of a Thicket's metadata table (``Thicket.groupby``):
    experiment (its absolute path), executable (the program's base name), command_line and
    arguments (the first process's, as plx info shows them; arguments: what follows the
    program), ranks (the MPI world size, else the number of processes), processes, threads (the
    most threads of a process), host (the first process's) and hosts (distinct hosts), date
    (the first process's start, UTC, ISO 8601), parallax_version (of the runtime that wrote the
    experiment)."""
    info = exp.info
    procs = info["processes"]
    first = procs[0] if procs else {}
    starts = [p["start_realtime_ns"] for p in procs if p.get("start_realtime_ns")]
    date = None
    if starts:
        date = datetime.datetime.fromtimestamp(min(starts) / 1e9, tz=datetime.timezone.utc)
        date = date.isoformat(timespec="seconds")
    version = first.get("written_by") or ""
    world = next((p["world_size"] for p in procs if p.get("world_size")), None)
    return {
        "experiment": os.path.abspath(exp.path),
        "executable": os.path.basename(first.get("executable") or ""),
        "command_line": first.get("command_line"),
        "arguments": first.get("arguments") or "",
        "ranks": world if world else len(procs),
        "processes": len(procs),
        "threads": max((p["threads"] for p in procs), default=0),
        "host": first.get("host"),
        "hosts": len({p["host"] for p in procs}),
        "date": date,
        "parallax_version": version.removeprefix("parallax "),
    }


def to_hatchet(exp, total=False):
    """The GraphFrame of `exp`'s callpath profiles (see the module's doc). Per thread: index
    node, rank (the profiles' node: the MPI rank, else the process's position), thread, a row for
    every (rank, thread) and graph node (zeros where that thread never ran it, as Hatchet's
    multi-rank readers give); with total=True the sum over threads, index node only. Columns:
    name, file, line, calls, time, time (inc); metadata: `metadata(exp)`."""
    import hatchet
    from hatchet.frame import Frame
    from hatchet.graph import Graph
    from hatchet.node import Node

    prof = exp.profiles
    paths = prof["callpath"].array.paths
    ids = prof["callpath"].array.path_ids
    labels = [_thread_label(n, t) for n, t in zip(prof["thread_name"], prof["thread"])]
    where = {}  # path id -> (file, line) of its function
    for i, f, ln in zip(ids, prof["file"], prof["line"]):
        # "" and 0 where the debug information has none (also read from a null)
        where.setdefault(int(i), (f if isinstance(f, str) else "", int(ln) if ln == ln else 0))

    # the graph: a root per thread label, below it one node per callpath that label's threads
    # ran; a path's parent has a smaller id than it, so parents are made first
    roots = {}
    nodes = {}  # (label, path id) -> Node
    for label in sorted(set(labels)):
        roots[label] = Node(Frame({"type": "thread", "name": label}), None)
    needed = set()
    for label, i in zip(labels, ids):
        i = int(i)
        while i != NA and (label, i) not in needed:
            needed.add((label, i))
            i = paths.parent[i]
    for label, i in sorted(needed, key=lambda k: (k[1], k[0])):
        p = paths.parent[i]
        parent = roots[label] if p == NA else nodes[(label, p)]
        f, ln = where.get(i, ("", 0))
        n = Node(Frame({"type": "function", "name": paths.name[i], "file": f, "line": ln}),
                 parent)
        parent.add_child(n)
        nodes[(label, i)] = n
    graph = Graph([roots[k] for k in sorted(roots)])
    graph.enumerate_traverse()

    records = []
    thread_roots = {}  # (rank, thread) -> [label, inclusive time of its top-level paths]
    for label, i, r, t, c, e, inc in zip(labels, ids, prof["node"], prof["thread"],
                                         prof["calls"], prof["exclusive_s"],
                                         prof["inclusive_s"]):
        i, r, t = int(i), int(r), int(t)
        records.append((nodes[(label, i)], r, t, int(c), float(e), float(inc)))
        root = thread_roots.setdefault((r, t), [label, 0.0])
        if paths.parent[i] == NA:
            root[1] += float(inc)
    for (r, t), (label, inc) in thread_roots.items():
        records.append((roots[label], r, t, 1, 0.0, inc))
    df = pd.DataFrame(records, columns=["node", "rank", "thread", *METRICS])
    every = [n for n in graph.traverse()]
    if total:
        df = df.groupby("node", sort=False)[METRICS].sum().reindex(every, fill_value=0)
        df.index.name = "node"
    else:
        pairs = sorted(thread_roots)
        idx = pd.MultiIndex.from_tuples([(n, r, t) for n in every for r, t in pairs],
                                        names=["node", "rank", "thread"])
        df = df.set_index(["node", "rank", "thread"]).reindex(idx, fill_value=0)
    frames = [n.frame for n in df.index.get_level_values("node")]
    df.insert(0, "name", [f["name"] for f in frames])
    df.insert(1, "file", [f.get("file", "") for f in frames])
    df.insert(2, "line", [int(f.get("line", 0)) for f in frames])
    df["calls"] = df["calls"].astype("int64")
    df = df.sort_index()
    gf = hatchet.GraphFrame(graph, df, ["time", "calls"], ["time (inc)"])
    gf.default_metric = "time (inc)"
    gf.metadata = metadata(exp)
    return gf


def thicket(experiments):
    """A Thicket (llnl-thicket) of several runs: each run's GraphFrame summed over its threads
    (to_hatchet(total=True)) is one profile, named by its directory's absolute path; the call
    trees are united and the metadata table holds each run's `metadata` (``tk.groupby(
    "arguments")`` splits the runs by their parameters)."""
    from thicket import Thicket

    experiments = list(experiments)
    if not experiments:
        raise ValueError("thicket() needs at least one experiment directory")
    tks = [Thicket.thicketize_graphframe(to_hatchet(e, total=True), os.path.abspath(e.path))
           for e in experiments]
    if len(tks) == 1:
        return tks[0]
    return Thicket.concat_thickets(thickets=tks, axis="index", calltree="union",
                                   disable_tqdm=True)
