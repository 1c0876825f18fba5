"""The package's `samples` table: a row per call-stack sample, with its time where the runtime
stamped it (plx run --trace --sample), checked against the Parquet export's sample_times.parquet
(the same samples, times and callpaths) and against the program's own phase intervals."""

import re
from collections import Counter

import pandas as pd
import pytest

from conftest import ROOT, plx, run

SRC = ROOT / "tests" / "e2e" / "programs" / "sample_phases.c"


@pytest.fixture(scope="module")
def phases(tmp_path_factory):
    """(traced experiment, {phase: (start ns, end ns)}, experiment without --trace)."""
    root = tmp_path_factory.mktemp("phases")
    exe = root / "phases"
    run(["gcc", "-O2", "-g", "-fomit-frame-pointer", SRC, "-o", exe, "-pthread"])
    exp = root / "traced.exp"
    cp = plx("run", "--trace", "--sample", "-o", exp, "--", exe)
    spans = {m[0]: (int(m[1]), int(m[2]))
             for m in re.findall(r"^phase (\S+) (\d+) (\d+)$", cp.stdout, re.M)}
    prof = root / "profile.exp"
    plx("run", "--sample", "-o", prof, "--", exe)
    return exp, spans, prof


def test_samples_are_the_parquet_export(parallax, phases, tmp_path):
    exp, spans, _ = phases
    plx("export", exp, "--format", "parquet", "-o", tmp_path / "pq")
    totals = pd.read_parquet(tmp_path / "pq" / "samples.parquet")
    stamped = pd.read_parquet(tmp_path / "pq" / "sample_times.parquet")
    x = parallax.open(exp)
    s = x.samples
    assert list(s.columns) == ["time_ns", "location", "process", "rank", "thread", "callpath",
                               "function", "file", "line", "estimated"]
    # every sample stamped (a trace): the same rows as the Parquet export's stamped rows
    assert s.time_ns.notna().all() and len(s) == len(stamped) > 300
    assert list(s.time_ns.astype("int64")) == list(stamped.time_ns.astype("int64"))
    assert list(s.callpath.astype(str)) == list(stamped.callpath)
    assert list(s.location.astype("int64")) == list(stamped.location)
    assert list(s.function.astype(str)) == [c.split(" => ")[-1] for c in stamped.callpath]
    # as many per callpath as the callpath rows count
    assert Counter(s.callpath.astype(str)) == {c: n for c, n in zip(totals.callpath, totals.self_samples) if n}
    # each phase's samples inside the phase (one period either side)
    origin = x.origin_ns
    for phase, (lo, hi) in spans.items():
        t = s[s.callpath.astype(str).str.contains(phase)].time_ns.astype("int64") + origin
        assert len(t) > 150 and t.min() >= lo - 1_000_000 and t.max() <= hi + 1_000_000, phase
    # the spinning function's file is the program's source
    spin = s[s.function.astype(str) == "spin"]
    assert len(spin) and (spin.file.astype(str).str.endswith("sample_phases.c")).all()


def test_samples_of_a_profile_have_no_time(parallax, phases):
    _, _, prof = phases
    s = parallax.open(prof).samples
    assert len(s) > 300 and s.time_ns.isna().all()
