#!/usr/bin/env python3
"""The total of each metric of a Cube 4 report (`.cubex`, as Scalasca's analyser writes it):
`cube_totals.py REPORT.cubex` prints `metric<TAB>total` for each metric stored in it;
`cube_totals.py --callpaths REPORT.cubex [METRIC,...]` prints
`metric<TAB>location<TAB>call path<TAB>value` for each non-zero value (of the metrics named, or
of all), the call path's regions joined by ` => ` as `plx waits` writes them.

A `.cubex` is a tar archive: `anchor.xml` defines the metrics (id, unique name, data type), the
regions, the call tree (nested `cnode` elements, each naming its region) and the locations; per
metric `ID.index` lists the call-tree nodes with values (their positions in the call tree's
depth-first order, as anchor.xml nests them) and `ID.data` holds them, one value per node and
location (8 bytes: a double for FLOAT metrics, an unsigned integer otherwise). A metric without
a data file is zero everywhere. Compressed reports (CUBEX_ZLIB_COMPRESSION) are refused."""

import struct
import sys
import tarfile
import xml.etree.ElementTree as ET


def _values(path, t, mid, dtype):
    """The metric's values, or None when it has no data file."""
    if f"{mid}.data" not in t.getnames():
        return None
    data = t.extractfile(f"{mid}.data").read()
    if not data.startswith(b"CUBEX.DATA"):
        sys.exit(f"cube_totals.py: {path}: {mid}.data is not an uncompressed CUBEX.DATA file")
    body = data[len(b"CUBEX.DATA"):]
    code = "d" if dtype == "FLOAT" else "Q"
    n = len(body) // 8
    return struct.unpack(f"<{n}{code}", body[:n * 8])


def _metrics(root):
    for m in root.iter("metric"):
        yield m.get("id"), m.find("uniq_name").text, m.find("dtype").text


def totals(path):
    with tarfile.open(path) as t:
        root = ET.fromstring(t.extractfile("anchor.xml").read())
        out = {}
        for mid, name, dtype in _metrics(root):
            v = _values(path, t, mid, dtype)
            out[name] = 0.0 if v is None else float(sum(v))
        return out


def by_callpath(path, wanted=None):
    """{(metric, location, call path): value} of the non-zero values."""
    with tarfile.open(path) as t:
        root = ET.fromstring(t.extractfile("anchor.xml").read())
        regions = {r.get("id"): r.find("name").text for r in root.iter("region")}
        order = []  # call paths in the call tree's depth-first order

        def walk(node, prefix):
            for c in node.findall("cnode"):
                p = prefix + [regions[c.get("calleeId")]]
                order.append(" => ".join(p))
                walk(c, p)

        walk(root.find("program"), [])
        locs = [l.find("name").text for l in root.iter("location")]
        out = {}
        for mid, name, dtype in _metrics(root):
            if wanted and name not in wanted:
                continue
            v = _values(path, t, mid, dtype)
            if v is None:
                continue
            idx = t.extractfile(f"{mid}.index").read()
            if not idx.startswith(b"CUBEX.INDEX"):
                sys.exit(f"cube_totals.py: {path}: {mid}.index is not a CUBEX.INDEX file")
            # magic, endianness mark (u32), version (u16), format (u8), count (u32), positions
            (n,) = struct.unpack("<I", idx[18:22])
            rows = struct.unpack(f"<{n}I", idx[22:22 + 4 * n])
            for i, row in enumerate(rows):
                for j, loc in enumerate(locs):
                    x = v[i * len(locs) + j]
                    if x:
                        out[(name, loc, order[row])] = float(x)
        return out


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--callpaths"] and len(args) in (2, 3):
        wanted = set(args[2].split(",")) if len(args) == 3 else None
        for (m, loc, cp), x in sorted(by_callpath(args[1], wanted).items()):
            print(f"{m}\t{loc}\t{cp}\t{x:.6f}")
    elif len(args) == 1:
        for name, v in totals(args[0]).items():
            print(f"{name}\t{v:.6f}")
    else:
        sys.exit("usage: cube_totals.py [--callpaths] REPORT.cubex [METRIC,...]")
