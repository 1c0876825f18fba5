"""Call-stack samples at their times (`plx run --trace --sample`: each sample stamped by the
runtime). A plain program (tests/e2e/programs/sample_phases.c, gcc -O2 -g without frame
pointers) spins 0.3 s of CPU time in phase_f, then 0.3 s in phase_g, on one thread, and prints
each phase's CLOCK_MONOTONIC interval. Every sample under phase_f is timed inside phase_f's
interval (to one sampling period), every one under phase_g inside phase_g's — in the Parquet
export, the OTF2 archive (read by otf2-print), Chrome's trace-event JSON and the Python
package's samples table — and the stamped samples of each callpath are exactly the samples the
profile counts for it."""

import csv
import json
import re
from collections import Counter

import pytest

from conftest import ROOT, plx, run

SRC = ROOT / "tests" / "e2e" / "programs" / "sample_phases.c"
PERIOD_NS = 1_000_000  # --sample's default 1 kHz


@pytest.fixture(scope="module")
def phases(tmp_path_factory):
    """(experiment, {phase: (start ns, end ns)}, {callpath tuple: own samples of the worker})."""
    root = tmp_path_factory.mktemp("stamps")
    exe = root / "phases"
    run(["gcc", "-O2", "-g", "-fomit-frame-pointer", SRC, "-o", exe, "-pthread"])
    exp = root / "exp"
    cp = plx("run", "-o", exp, "--trace", "--sample", "--", exe)
    spans = {m[0]: (int(m[1]), int(m[2]))
             for m in re.findall(r"^phase (\S+) (\d+) (\d+)$", cp.stdout, re.M)}
    assert sorted(spans) == ["phase_f", "phase_g"]
    rows = plx("report", exp, "--callpath", "--format", "csv").stdout.splitlines()
    inclusive = {}
    for r in csv.DictReader(rows):
        if r["process"] != "all" and r["thread"] == "1" and int(r["samples"]) > 0:
            inclusive[tuple(r["callpath"].split(" => "))] = int(r["samples"])
    own = dict(inclusive)
    for p, s in inclusive.items():
        if len(p) > 1 and p[:-1] in own:
            own[p[:-1]] -= s
    return exp, spans, {p: s for p, s in own.items() if s > 0}


def phase_of(path):
    found = [f for f in ("phase_f", "phase_g") if f in path]
    return found[0] if found else None


def check_times(timed, spans, own):
    """timed: [(absolute ns, callpath tuple)] of the worker's samples."""
    per_phase = Counter()
    for ns, path in timed:
        phase = phase_of(path)
        if phase:
            lo, hi = spans[phase]
            assert lo - PERIOD_NS <= ns <= hi + PERIOD_NS, (phase, ns, lo, hi)
            per_phase[phase] += 1
    # 0.3 s of CPU time each at 1 kHz: about 300 samples (the machine may lose some to load)
    assert per_phase["phase_f"] > 150 and per_phase["phase_g"] > 150, per_phase
    assert Counter(p for _, p in timed) == own


def test_parquet_samples_have_times(phases, tmp_path):
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    exp, spans, own = phases
    plx("export", exp, "--format", "parquet", "-o", tmp_path / "pq")
    f = tmp_path / "pq" / "sample_times.parquet"
    meta = pq.read_schema(f).metadata
    assert meta[b"plx.schema"] == b"4"
    origin = int(meta[b"plx.origin_ns"])
    t = pd.read_parquet(f)
    stamped = t[t.thread == 1]
    totals = pd.read_parquet(tmp_path / "pq" / "samples.parquet")
    totals = totals[totals.thread == 1]
    # samples.parquet's callpath rows count every sample, sample_times.parquet has each once
    assert {tuple(c.split(" => ")): s for c, s in zip(totals.callpath, totals.self_samples) if s} == own
    assert list(stamped.time_ns) == sorted(stamped.time_ns)
    check_times([(origin + int(ns), tuple(c.split(" => ")))
                 for ns, c in zip(stamped.time_ns, stamped.callpath)], spans, own)


def test_otf2_samples_at_their_times(phases, tmp_path):
    exp, spans, own = phases
    out = tmp_path / "o2"
    plx("export", exp, "--format", "otf2", "-o", out)
    printed = run(["otf2-print", "-G", out / "traces.otf2"]).stdout
    # the definitions: calling context -> (region, parent context); region -> name
    names = dict(re.findall(r'^REGION\s+(\d+)\s+Name: "([^"]*)"', printed, re.M))
    contexts = {}
    for m in re.finditer(r"^CALLING_CONTEXT\s+(\d+)\s+Region: \"([^\"]*)\" <(\d+)>.*?Parent: "
                         r"(?:UNDEFINED|\"[^\"]*\" <(\d+)>)", printed, re.M):
        contexts[m[1]] = (m[2], m[4])

    def path(cc):
        p = []
        while cc is not None:
            region, cc = contexts[cc]
            p.append(region)
        return tuple(reversed(p))

    events = run(["otf2-print", out / "traces.otf2"]).stdout
    timed = []
    for m in re.finditer(r"^CALLING_CONTEXT_SAMPLE\s+(\d+)\s+(\d+)\s+Calling Context: \"[^\"]*\" <(\d+)>",
                         events, re.M):
        if m[1] == "1":  # the worker's location
            timed.append((int(m[2]), path(m[3])))
    assert timed, events[:2000]
    check_times(timed, spans, own)
    # every record inside the clock's span: from its global offset, for its length (samples
    # stamped before the first traced event were before the offset)
    clock = re.search(r"Global Offset: (\d+), Length: (\d+)", printed)
    offset, length = int(clock[1]), int(clock[2])
    stamps = [int(m[1]) for m in re.finditer(r"^[A-Z_]+\s+\d+\s+(\d+)\s", events, re.M)]
    assert stamps and offset <= min(stamps) and max(stamps) <= offset + length, (
        offset, length, min(stamps), max(stamps))


def test_chrome_samples_at_their_times(phases, tmp_path):
    exp, spans, own = phases
    out = tmp_path / "trace.json"
    plx("export", exp, "--format", "chrome", "-o", out)
    doc = json.loads(out.read_text())
    origin = doc["metadata"]["time_origin_ns"] if "metadata" in doc else doc["otherData"]["time_origin_ns"]
    frames = doc["stackFrames"]

    def path(sf):
        p = []
        while sf is not None:
            p.append(frames[sf]["name"])
            sf = frames[sf].get("parent")
        return tuple(reversed(p))

    timed = [(origin + round(s["ts"] * 1000), path(s["sf"])) for s in doc["samples"] if s["tid"] == 1]
    assert all(s["weight"] == 1 for s in doc["samples"])
    check_times(timed, spans, own)
