"""plx export --format otf2: the archive read back with the official OTF2 reader (otf2.reader)
holds the text export's events, location by location and in order, under the same names."""

import os
import re
import stat
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from components import require_module

from conftest import ROOT, clean_env, plx, run

otf2 = require_module("otf2")
require_module("pyarrow")

DETAIL = re.compile(r"(\w+)=(\S+)")


@pytest.fixture(scope="module")
def archives(experiments, tmp_path_factory):
    root = tmp_path_factory.mktemp("otf2")
    out = {}
    for name, exp in experiments.items():
        d = root / name
        cp = plx("export", exp, "--format", "otf2", "-o", d)
        assert "as otf2" in cp.stderr
        assert (d / "traces.otf2").is_file() and (d / "traces.def").is_file()
        out[name] = d
    return out


def read_archive(path):
    """(definitions summary, {location name: [(kind, region or None, details)]})."""
    events = defaultdict(list)
    with otf2.reader.open(str(path / "traces.otf2")) as tr:
        d = tr.definitions
        defs = {
            "clock": d.clock_properties,
            "locations": {l.name: l.group.name for l in d.locations},
            "groups": {g.name: g.system_tree_parent.name for g in d.location_groups},
            "nodes": {n.name: (n.class_name, n.parent.name if n.parent else None)
                      for n in d.system_tree_nodes},
            "regions": {r.name for r in d.regions},
            "comms": {c.name for c in d.comms},
        }
        for loc, ev in tr.events:
            k = type(ev).__name__
            if k == "Enter":
                e = ("enter", ev.region.name, None)
            elif k == "Leave":
                e = ("exit", ev.region.name, None)
            elif k == "MpiSend":
                e = ("send", None, (ev.receiver, ev.msg_tag, ev.msg_length, ev.communicator.name))
            elif k == "MpiRecv":
                e = ("recv", None, (ev.sender, ev.msg_tag, ev.msg_length, ev.communicator.name))
            elif k == "MpiCollectiveBegin":
                e = ("collective-begin", None, ev.time)
            elif k == "MpiCollectiveEnd":
                e = ("collective", None, (ev.collective_op, ev.communicator.name, ev.root,
                                          ev.size_sent, ev.size_received, ev.time))
            elif k == "Metric":
                e = ("user", None, None)
            else:
                e = (k, None, None)
            events[loc.name].append(e)
    return defs, events


def text_lines(path):
    """{label: [(kind, region, {details})]} of a text export, and its header."""
    out = defaultdict(list)
    header = []
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            header.append(line)
            continue
        t, label, kind, rest = line.split(None, 3)
        region = rest if kind in ("enter", "exit") else rest.split("  ")[0]
        out[label].append((kind, region, dict(DETAIL.findall(rest)), int(t)))
    return header, out


def local(comm, world):
    """The rank in communicator `comm` (as the text export describes it) of world rank `world`:
    OTF2 names peers and roots by their rank in the event's communicator."""
    m = re.match(r"comm of \d+ ranks \[([\d ]+)\]", comm)
    if m:
        return [int(r) for r in m.group(1).split()].index(world)
    if comm.startswith("MPI_COMM_SELF"):
        return 0
    return world


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_archive_is_the_text_export(archives, experiments, text_exports, tmp_path, name):
    defs, events = read_archive(archives[name])
    text = text_exports[name]
    # the same locations, named as the text export names them, with the same counts per kind
    assert set(defs["locations"]) == set(text.events)
    for label, evs in text.events.items():
        got = Counter(k for k, _, _ in events[label] if k != "collective-begin")
        assert got == Counter(k for k, _ in evs), label
        # the same order: kinds, and regions of enters and exits
        mine = [(k, r) for k, r, _ in events[label] if k != "collective-begin"]
        want = [(k, r if k in ("enter", "exit") else None) for k, r in evs]
        assert mine == want, label
    # message details: peer (a rank of MPI_COMM_WORLD here), tag, bytes, communicator
    path = tmp_path / "t.txt"
    plx("export", experiments[name], "--format", "text", "-o", path)
    header, lines = text_lines(path)
    comm_names = {}
    for h in header:
        m = re.match(r"^#\s+c(\d+)\s+(.*)$", h)
        if m:
            comm_names["c" + m.group(1)] = m.group(2)
    origin = int(re.search(r"at (\d+) ns", "\n".join(header)).group(1))
    for label, evs in lines.items():
        mine = [e for e in events[label] if e[0] in ("send", "recv", "collective")]
        theirs = [e for e in evs if e[0] in ("send", "recv", "collective")]
        assert len(mine) == len(theirs)
        for (k, _, det), (k2, region, d, t) in zip(mine, theirs):
            assert k == k2
            comm = comm_names[d["comm"]]
            if k == "send":
                assert det == (local(comm, int(d["to"])), int(d["tag"]), int(d["bytes"]), comm)
            elif k == "recv":
                sender = int(d["from"].split(".")[0])  # matched: rank.thread of the sender
                assert det == (local(comm, sender), int(d["tag"]), int(d["bytes"]), comm)
            else:
                op, c, root, sent, received, ts = det
                assert c == comm and ts == origin + t
                assert (sent, received) == (int(d["sent"]), int(d["received"]))
                if d["root"] != "-":
                    assert root == local(comm, int(d["root"]))
                base = region[4:].lstrip("I") if region.startswith("MPI_I") else region[4:]
                assert str(op).split(".")[-1].replace("_", "").lower() == base.replace("_", "").lower() \
                    or region == "-", (op, region)


@pytest.mark.parametrize("name", ["life", "t_mpi"])
def test_definitions(archives, text_exports, experiments, tmp_path, name):
    defs, _ = read_archive(archives[name])
    text = text_exports[name]
    # regions: every region an event names, under the same name
    used = {r for evs in text.events.values() for k, r in evs if k in ("enter", "exit")}
    assert used <= defs["regions"]
    # system tree: machine > node per host > rank N > locations
    assert any(c == "machine" and p is None for c, p in defs["nodes"].values())
    for label, (who, _) in text.locations.items():
        rank = int(who.split()[1])
        host = re.search(r" on (\S+)\)", who).group(1)
        assert defs["locations"][label] == f"rank {rank}"
        assert defs["groups"][f"rank {rank}"] == host
        assert defs["nodes"][host] == ("node", "machine")
    assert "MPI_COMM_WORLD" in defs["comms"]
    # clock: ns, offset at the first event, length the span
    path = tmp_path / "t.txt"
    plx("export", experiments[name], "--format", "text", "-o", path)
    header, lines = text_lines(path)
    origin = int(re.search(r"at (\d+) ns", "\n".join(header)).group(1))
    last = max(t for evs in lines.values() for *_, t in evs)
    clock = defs["clock"]
    assert clock.timer_resolution == 1_000_000_000
    assert clock.global_offset == origin
    assert clock.trace_length == last


def test_module_runs_on_tables_and_experiments(experiments, tmp_path):
    """python3 -m parallax.otf2_export on parquet tables, and on an experiment directory."""
    env = clean_env({"PYTHONPATH": str(ROOT / "python"), "PLX": str(ROOT / "build" / "bin" / "plx")})
    tables = tmp_path / "tables"
    plx("export", experiments["life"], "--format", "parquet", "-o", tables)
    run([sys.executable, "-m", "parallax.otf2_export", tables, tmp_path / "a"], env=env)
    run([sys.executable, "-m", "parallax.otf2_export", experiments["life"], tmp_path / "b"], env=env)
    counts = []
    for d in ("a", "b"):
        _, events = read_archive(tmp_path / d)
        counts.append({k: len(v) for k, v in events.items()})
    assert counts[0] == counts[1]
    # writing again over an archive replaces it
    run([sys.executable, "-m", "parallax.otf2_export", tables, tmp_path / "a"], env=env)
    _, events = read_archive(tmp_path / "a")
    assert {k: len(v) for k, v in events.items()} == counts[0]


def test_missing_module_says_pip_install_otf2(experiments, tmp_path):
    # an interpreter without site-packages: no otf2 module
    py = tmp_path / "python3"
    py.write_text('#!/bin/sh\nexec "%s" -S "$@"\n' % sys.executable)
    py.chmod(py.stat().st_mode | stat.S_IEXEC)
    cp = run([ROOT / "build" / "bin" / "plx", "export", experiments["life"], "--format", "otf2",
              "-o", tmp_path / "out"], check=False, env=clean_env({"PLX_PYTHON": str(py)}))
    assert cp.returncode == 2
    assert "pip install otf2" in cp.stderr
    cp = run([ROOT / "build" / "bin" / "plx", "export", experiments["life"], "--format", "otf2",
              "-o", tmp_path / "out"], check=False,
             env=clean_env({"PLX_PYTHON": str(tmp_path / "no-such-python")}))
    assert cp.returncode == 2
    assert "pip install otf2" in cp.stderr
