#!/usr/bin/env python3
"""Writes spec/golden/unknown/: a small synthetic experiment holding what no reader knows, and
must skip by length: record types 999 and 60000 in process.plx, 998 in trace.plx, a Calibration
with 8 bytes past its fields (a later version's), extended subtype 63, a user event with a third
payload word, and a word of kind 3. Its dump (unknown.expected) is the same in every reader."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests/support"))
from plx_codec import encode, event_word, file_header, pack, raw_record  # noqa: E402

NONE = 0xFFFFFFFF


def process():
    b = file_header("process")
    b += encode("ProcessInfo", pid=1000, ppid=1, start_realtime_ns=1700000000000000000, clock=1,
                host="golden", version="0.1.0", executable="/golden", argv=["/golden", "x y"])
    b += encode("ClockRate", ticks_per_second=1e9)
    b += raw_record(2, encode("Calibration", ticks=1000, monotonic_ns=1000)[8:] + b"\x01" * 8)
    b += raw_record(999, bytes(range(12)))
    b += encode("RegionDef", region_id=0, kind=3, flags=0, module_id=NONE, address=0,
                name="plx_flush", file="", line=0)
    b += encode("RegionDef", region_id=2, kind=0, flags=0, module_id=NONE, address=0x1000,
                name="main", file="golden.c", line=3)
    b += encode("ThreadInfo", thread=0, tid=1000, parent=NONE, start_ticks=1000, cpu_ns=10,
                name="main")
    b += encode("UserEventDef", event_id=0, name="size")
    b += raw_record(60000, b"")
    b += encode("ThreadProfile", thread=0, end_ticks=5000, cpu_ns=900, trace_events=13,
                lost_events=0, lost_nodes=0, nodes=[])
    b += encode("UserEventStats", thread=0, event_id=0, count=1, min=2.5, max=2.5, sum=2.5,
                sum_squares=6.25)
    b += encode("Calibration", ticks=5000, monotonic_ns=5000)
    b += encode("ProcessEnd", ticks=5100, reason=0, status=0)
    return b


def trace():
    b = file_header("trace")
    w = [event_word("enter", 10, region=2),
         event_word("extended", 5, subtype=63, words=2), 7, 8,
         event_word("extended", 5, subtype=1, words=3), *pack("user", event_id=0, value=2.5), 0xDEAD,
         (3 << 62) | 4,
         event_word("exit", 100, region=2)]
    b += encode("TraceChunk", thread=0, event_count=len(w), base_ticks=1000, calib_ticks=2000,
                calib_monotonic_ns=2000, events=w)
    b += raw_record(998, b"\x00\x01\x02\x03")
    w = [event_word("extended", 0, subtype=0, words=1), *pack("time_reset", ticks=4000),
         event_word("enter", 1, region=0), event_word("exit", 2, region=0)]
    b += encode("TraceChunk", thread=0, event_count=len(w), base_ticks=2000, calib_ticks=4100,
                calib_monotonic_ns=4100, events=w)
    return b


def main():
    d = HERE / "unknown" / "golden.1000"
    d.mkdir(parents=True, exist_ok=True)
    (d / "process.plx").write_bytes(process())
    (d / "trace.plx").write_bytes(trace())


if __name__ == "__main__":
    main()
