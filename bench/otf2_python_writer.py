"""The OTF2 export as it was before the engine wrote OTF2 itself — kept only as the baseline
bench/export.sh measures `plx export --format otf2` against, in the same run.

Usage::

    python3 bench/otf2_python_writer.py TABLES OUT

TABLES is the directory ``plx export EXP --format parquet -o TABLES`` wrote; OUT the archive's
directory. Each event goes through the OTF2 library's Python bindings (PyPI ``otf2``) after
being read from Parquet (``pyarrow``).
"""

import argparse
import os
import shutil
import sys

BATCH = 1 << 16
TIMER_RESOLUTION = 1_000_000_000

# MPI collective routine (without MPI_ / MPI_I) -> (CollectiveOp name, RegionRole name)
COLLECTIVES = {
    "Barrier": ("BARRIER", "BARRIER"),
    "Bcast": ("BCAST", "COLL_ONE2ALL"),
    "Scatter": ("SCATTER", "COLL_ONE2ALL"),
    "Scatterv": ("SCATTERV", "COLL_ONE2ALL"),
    "Gather": ("GATHER", "COLL_ALL2ONE"),
    "Gatherv": ("GATHERV", "COLL_ALL2ONE"),
    "Reduce": ("REDUCE", "COLL_ALL2ONE"),
    "Allgather": ("ALLGATHER", "COLL_ALL2ALL"),
    "Allgatherv": ("ALLGATHERV", "COLL_ALL2ALL"),
    "Allreduce": ("ALLREDUCE", "COLL_ALL2ALL"),
    "Alltoall": ("ALLTOALL", "COLL_ALL2ALL"),
    "Alltoallv": ("ALLTOALLV", "COLL_ALL2ALL"),
    "Alltoallw": ("ALLTOALLW", "COLL_ALL2ALL"),
    "Reduce_scatter": ("REDUCE_SCATTER", "COLL_ALL2ALL"),
    "Reduce_scatter_block": ("REDUCE_SCATTER_BLOCK", "COLL_ALL2ALL"),
    "Scan": ("SCAN", "COLL_ALL2ALL"),
    "Exscan": ("EXSCAN", "COLL_ALL2ALL"),
}

U32 = 0xFFFFFFFF


class MissingModule(Exception):
    pass


def _import_otf2():
    try:
        import otf2  # noqa: F401
    except ImportError as e:
        raise MissingModule(
            f"the Python module otf2 is missing ({e}): pip install otf2"
        ) from None
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise MissingModule(
            f"the Python module pyarrow is missing ({e}): pip install pyarrow"
        ) from None
    return otf2


def collective_of(routine):
    """(CollectiveOp name, RegionRole name) of an MPI routine name, or None."""
    if not routine or not routine.startswith("MPI_"):
        return None
    base = routine[4:]
    if base in COLLECTIVES:
        return COLLECTIVES[base]
    if base.startswith("I") and base[1:] in COLLECTIVES:  # nonblocking: MPI_Ibcast
        return COLLECTIVES[base[1:]]
    return None


def region_role(name, kind):
    if kind != "mpi":
        return "FUNCTION"
    c = collective_of(name)
    if c:
        return c[1]
    return "POINT2POINT" if _is_p2p(name) else "FUNCTION"


def _is_p2p(name):
    base = name[4:] if name.startswith("MPI_") else name
    for p in ("Send", "Recv", "Isend", "Irecv", "Bsend", "Ssend", "Rsend", "Ibsend", "Issend",
              "Irsend", "Sendrecv", "Wait", "Test", "Probe", "Iprobe", "Start", "Mprobe",
              "Mrecv", "Imrecv", "Improbe"):
        if base.startswith(p):
            return True
    return False


def read_table(pq, path):
    t = pq.read_table(path)
    return t.to_pylist()


def metadata(pq, path):
    md = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in md.items()}


def export(src, out, quiet=True):
    """Writes the archive OUT from the tables in SRC; returns the number of events written."""
    otf2 = _import_otf2()
    import pyarrow.parquet as pq

    meta = metadata(pq, os.path.join(src, "events.parquet"))
    origin = int(meta.get("plx.origin_ns", "0"))
    locations = read_table(pq, os.path.join(src, "locations.parquet"))
    regions = read_table(pq, os.path.join(src, "regions.parquet"))
    comms = read_table(pq, os.path.join(src, "comms.parquet"))

    if os.path.exists(out):
        # the OTF2 library will not write over an archive: clear what a previous export left
        for name in ("traces", "traces.otf2", "traces.def"):
            p = os.path.join(out, name)
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)
    else:
        os.makedirs(out)

    n = 0
    with otf2.writer.open(out, timer_resolution=TIMER_RESOLUTION) as trace:
        defs = trace.definitions
        # -- system tree, location groups, locations
        machine = defs.system_tree_node("machine", class_name="machine")
        nodes = {}
        groups = {}
        writers = {}
        rank_location = {}  # world rank -> its first (lowest thread) location
        for loc in locations:
            host = loc["host"] or "localhost"
            if host not in nodes:
                nodes[host] = defs.system_tree_node(host, class_name="node", parent=machine)
            p = loc["process"]
            if p not in groups:
                if loc["rank"] is not None:
                    name = f"rank {loc['rank']}"
                else:
                    exe = os.path.basename(loc["executable"] or "")
                    name = f"process {loc['pid']}" + (f" {exe}" if exe else "")
                groups[p] = defs.location_group(
                    name,
                    location_group_type=otf2.LocationGroupType.PROCESS,
                    system_tree_parent=nodes[host],
                )
            location = defs.location(
                loc["label"], type=otf2.LocationType.CPU_THREAD, group=groups[p]
            )
            writers[loc["location"]] = trace.event_writer_from_location(location)
            if loc["rank"] is not None and loc["rank"] not in rank_location:
                rank_location[loc["rank"]] = location

        # -- regions
        region_defs = []
        for r in regions:
            kind = r["kind"]
            paradigm = {
                "mpi": otf2.Paradigm.MPI,
                "user": otf2.Paradigm.USER,
                "phase": otf2.Paradigm.USER,
                "runtime": otf2.Paradigm.MEASUREMENT_SYSTEM,
            }.get(kind, otf2.Paradigm.COMPILER)
            kw = dict(
                canonical_name=r["name"],
                region_role=getattr(otf2.RegionRole, region_role(r["name"], kind)),
                paradigm=paradigm,
            )
            if r["file"]:
                kw["source_file"] = defs.string(r["file"]) if hasattr(defs, "string") else r["file"]
                kw["begin_line_number"] = max(0, r["line"] or 0)
                kw["end_line_number"] = max(0, r["line"] or 0)
            try:
                region_defs.append(defs.region(r["name"], **kw))
            except TypeError:
                kw.pop("source_file", None)
                region_defs.append(defs.region(r["name"], **kw))

        # -- communicators: the MPI locations (one per rank, in rank order), then a group and a
        # comm per Parallax communicator; members are world ranks' indices in the location list
        ranks = sorted(rank_location)
        rank_index = {r: i for i, r in enumerate(ranks)}
        comm_defs = {}
        comm_ranks = {}  # comm -> {world rank: rank in the comm}
        if ranks:
            defs.group(
                "MPI ranks",
                group_type=otf2.GroupType.COMM_LOCATIONS,
                paradigm=otf2.Paradigm.MPI,
                group_flags=otf2.GroupFlag.NONE,
                members=[rank_location[r] for r in ranks],
            )

            def make_comm(name, world_ranks):
                members = [rank_index[r] for r in world_ranks if r in rank_index]
                g = defs.group(
                    name,
                    group_type=otf2.GroupType.COMM_GROUP,
                    paradigm=otf2.Paradigm.MPI,
                    group_flags=otf2.GroupFlag.NONE,
                    members=members,
                )
                return defs.comm(name, group=g)

            for c in comms:
                world = [int(x) for x in c["ranks"].split()] if c["ranks"] else []
                comm_defs[c["comm"]] = make_comm(c["name"], world)
                comm_ranks[c["comm"]] = {r: i for i, r in enumerate(world)}
            comm_ranks[None] = {r: i for i, r in enumerate(ranks)}

        def comm_of(c):
            if c is not None and c in comm_defs:
                return comm_defs[c], comm_ranks[c]
            # an event without a CommDef: a communicator of the world ranks, made on first use
            if None not in comm_defs:
                comm_defs[None] = make_comm("unknown communicator (world ranks)", ranks)
            return comm_defs[None], comm_ranks[None]

        metrics = {}

        # -- events, in the stream's order (each location's in time order)
        columns = ["time_ns", "location", "kind", "region", "region_name", "peer", "tag",
                   "bytes", "bytes_recv", "comm", "root", "user_event", "value"]
        f = pq.ParquetFile(os.path.join(src, "events.parquet"))
        for batch in f.iter_batches(batch_size=BATCH, columns=columns):
            cols = [batch.column(c).to_pylist() for c in columns]
            for (t, li, kind, region, rname, peer, tag, nbytes, brecv, comm, root, uev,
                 value) in zip(*cols):
                w = writers[li]
                ts = origin + t
                if kind == "enter":
                    w.enter(ts, region_defs[region])
                elif kind == "exit":
                    w.leave(ts, region_defs[region])
                elif kind == "send":
                    cd, cr = comm_of(comm)
                    w.mpi_send(ts, cr.get(peer, peer), cd, tag & U32, nbytes)
                elif kind == "recv":
                    cd, cr = comm_of(comm)
                    w.mpi_recv(ts, cr.get(peer, peer), cd, tag & U32, nbytes)
                elif kind == "collective":
                    cd, cr = comm_of(comm)
                    op = collective_of(rname)
                    op = getattr(otf2.CollectiveOp, op[0] if op else "BARRIER")
                    root_rank = cr.get(root, root) if root is not None else U32
                    w.mpi_collective_begin(ts)
                    w.mpi_collective_end(ts, op, cd, root_rank, nbytes or 0, brecv or 0)
                elif kind == "user":
                    m = metrics.get(uev)
                    if m is None:
                        m = metrics[uev] = defs.metric(uev)
                    w.metric(ts, m, float(value))
                else:
                    continue
                n += 1
        # the realtime of the first event: the earliest process start is the nearest known
        starts = [loc["start_realtime_ns"] for loc in locations if loc["start_realtime_ns"]]
        if starts and n and hasattr(trace, "_realtime_timestamp"):
            trace._realtime_timestamp = min(starts) / 1e9
    if not quiet:
        print(f"otf2: {n} events written to {out}", file=sys.stderr)
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="otf2_python_writer.py",
        description="Write an OTF2 archive from Parallax's Parquet tables "
        "(plx export --format parquet): the benchmark's baseline.",
    )
    ap.add_argument("src", help="the parquet export's directory")
    ap.add_argument("out", help="the OTF2 archive's directory (traces.otf2 goes in it)")
    ap.add_argument("--quiet", action="store_true", help="no summary line")
    args = ap.parse_args(argv)
    try:
        _import_otf2()
    except MissingModule as e:
        print(f"otf2_python_writer: {e}", file=sys.stderr)
        return 2
    export(args.src, args.out, quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
