#!/usr/bin/env python3
"""The total of each metric of a Cube 4 report (`.cubex`, as Scalasca's analyser writes it):
`cube_totals.py REPORT.cubex` prints `metric<TAB>total` for each metric stored in it.

A `.cubex` is a tar archive: `anchor.xml` defines the metrics (id, unique name, data type) and
per metric `ID.index` lists the call-tree nodes with values and `ID.data` holds them, one value
per node and location (8 bytes: a double for FLOAT metrics, an unsigned integer otherwise). A
metric without a data file is zero everywhere. Compressed reports (CUBEW_ZLIB_COMPRESSION) are
refused."""

import re
import struct
import sys
import tarfile


def totals(path):
    with tarfile.open(path) as t:
        files = {m.name for m in t.getmembers()}
        anchor = t.extractfile("anchor.xml").read().decode()
        metrics = re.findall(
            r'<metric id="(\d+)"[^>]*>\s*<disp_name>[^<]*</disp_name>\s*'
            r"<uniq_name>([^<]*)</uniq_name>\s*<dtype>([^<]*)</dtype>", anchor)
        out = {}
        for mid, name, dtype in metrics:
            if f"{mid}.data" not in files:
                out[name] = 0.0
                continue
            data = t.extractfile(f"{mid}.data").read()
            if not data.startswith(b"CUBEX.DATA"):
                sys.exit(f"cube_totals.py: {path}: {mid}.data is not an uncompressed CUBEX.DATA file")
            body = data[len(b"CUBEX.DATA"):]
            code = "d" if dtype == "FLOAT" else "Q"
            n = len(body) // 8
            out[name] = float(sum(struct.unpack(f"<{n}{code}", body[:n * 8])))
        return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: cube_totals.py REPORT.cubex")
    for name, v in totals(sys.argv[1]).items():
        print(f"{name}\t{v:.6f}")
