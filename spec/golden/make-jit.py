#!/usr/bin/env python3
"""Writes spec/golden/jit/: a small synthetic experiment of a sampled JVM process, its values
taken from a real run (java -Xcomp with one method compiled, loaded by three class loaders in
turn and freed at their collection): JitCode records of compiled methods and of the JVM's own
code, a JitUnload, a SampleSignal, and a SampleTree whose frames lie in that code, its samples
stamped (SampleStamps, as a traced run writes them). A real run's
process.plx holds ~900 pieces of the JVM's code (300 KB): too large to keep as a golden file.

spec/golden/jit-inline/ is the same process with the compiled method's inlining (JitMethod,
JitInline, format version 3): `run()J` inlined `mix(J)J` at the sampled instruction."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests/support"))
from plx_codec import encode, file_header  # noqa: E402

NONE = 0xFFFFFFFF


def process(inline=False):
    b = file_header("process")
    b += encode("ProcessInfo", pid=1000, ppid=1, start_realtime_ns=1700000000000000000, clock=1,
                host="golden", version="0.1.0", executable="/usr/bin/java",
                argv=["java", "Unload"])
    b += encode("ClockRate", ticks_per_second=1e9)
    b += encode("Calibration", ticks=1000, monotonic_ns=1000)
    b += encode("SampleSignal", reason=1, replaced=5, signal=40, ticks=1500)
    b += encode("ThreadInfo", thread=0, tid=1000, parent=NONE, start_ticks=1000, cpu_ns=10,
                name="main")
    b += encode("JitCode", start=0x7F00_1000_0000, size=0x3E0, ticks=1100, kind=1, line=0,
                method="Interpreter", file="", **{"class": ""})
    b += encode("JitCode", start=0x7F00_1000_8000, size=0x120, ticks=2000, kind=0, line=1,
                method="run()J", file="Hot.java", **{"class": "LHot;"})
    b += encode("JitUnload", start=0x7F00_1000_8000, ticks=3000)
    b += encode("JitCode", start=0x7F00_1000_8000, size=0x120, ticks=3100, kind=0, line=1,
                method="run()J", file="Hot.java", **{"class": "LHot;"})
    if inline:
        # at offset 0x48 (the first recorded instruction at or after the sample at 0x41) mix,
        # line 9, inlined into run, line 4; at 0x100 run alone, line 6
        b += encode("JitMethod", id=0, method="run()J", file="Hot.java", line=1,
                    **{"class": "LHot;"})
        b += encode("JitMethod", id=1, method="mix(J)J", file="Hot.java", line=8,
                    **{"class": "LHot;"})
        b += encode("JitInline", start=0x7F00_1000_8000, ticks=3100, count=3,
                    frames=[dict(offset=0x48, method=1, line=9),
                            dict(offset=0x48, method=0, line=4),
                            dict(offset=0x100, method=0, line=6)])
    b += encode("ThreadProfile", thread=0, end_ticks=5000, cpu_ns=900, trace_events=0,
                lost_events=0, lost_nodes=0, nodes=[])
    # the five samples' stamps: ticks since the previous one (bits 0..39), the tree frame whose
    # samples count it (bits 40..63): frame 0 twice, frame 1 three times
    stamps = [(f << 40) | d for f, d in ((0, 100), (1, 500), (0, 400), (1, 300), (1, 200))]
    b += encode("SampleStamps", thread=0, base_ticks=2000, stamps=stamps)
    b += encode("SampleTree", thread=0, period_ns=1000000, samples=5, lost_full=0, lost_loader=0,
                frames=[dict(parent=NONE, node=NONE, module=NONE, address=0x7F00_1000_0010,
                             samples=2),
                        dict(parent=0, node=NONE, module=NONE, address=0x7F00_1000_8041,
                             samples=3)])
    b += encode("Calibration", ticks=5000, monotonic_ns=5000)
    b += encode("ProcessEnd", ticks=5100, reason=0, status=0, realtime_ns=1700000000000005100)
    return b


def main():
    for name, inline in (("jit", False), ("jit-inline", True)):
        d = HERE / name / "golden.1000"
        if name == "jit" and (d / "process.plx").exists():
            continue  # kept as checked in: old formats must keep decoding
        d.mkdir(parents=True, exist_ok=True)
        (d / "process.plx").write_bytes(process(inline))


if __name__ == "__main__":
    main()
