"""One path of bench/python.sh: the events of experiment DIR into a DataFrame, timed (with
`intervals`: its matched intervals, by the native module).

  python3 bench/python_tables.py native|intervals|subprocess DIR PLX
prints one line: PATH ROWS SECONDS CPU_SECONDS ARROW_BYTES RSS_BEFORE_MIB RSS_PEAK_MIB
(CPU seconds: this process's threads and, for the former path, the plx subprocess's)
(RSS from /proc/self/status: VmRSS once the modules are imported, VmHWM at the end).
"""

import os
import subprocess
import sys
import tempfile
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system


def native(d, _plx):
    import parallax
    exp = parallax.open(d)
    df = exp.events
    return df, exp.arrow("events").nbytes


def intervals(d, _plx):
    import parallax
    exp = parallax.open(d)
    df = exp.intervals
    return df, exp.arrow("intervals").nbytes


def former(d, plx):
    """What the package did before the engine moved inside: plx export --format parquet in a
    subprocess into a temporary directory, then pandas.read_parquet."""
    with tempfile.TemporaryDirectory(prefix="parallax-") as tmp:
        subprocess.run([plx, "export", d, "--format", "parquet", "-o", tmp], check=True,
                       capture_output=True)
        path = os.path.join(tmp, "events.parquet")
        df = pd.read_parquet(path)
        return df, pq.read_table(path).nbytes


def main():
    which, d, plx = sys.argv[1:4]
    import parallax  # noqa: F401 (imported before the baseline, as a user's session has it)
    before = rss("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time() + children_cpu()
    path = {"native": native, "intervals": intervals}.get(which, former)
    df, nbytes = path(d, plx)
    t, c = time.perf_counter() - t0, time.process_time() + children_cpu() - c0
    print(which, len(df), f"{t:.3f}", f"{c:.3f}", nbytes, f"{before:.0f}", f"{rss('VmHWM'):.0f}")


if __name__ == "__main__":
    main()
