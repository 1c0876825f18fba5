"""Every trace export of a process killed with SIGKILL while calls are open
(tests/e2e/programs/blocked_exit.c `kill`: thread 0 in main > finish, thread 1 in waiter >
wait_outer > wait_inner, blocked in a read): read back by the formats' own readers (otf2-print,
pyarrow, an SDDF record count, the Chrome JSON), each of the 7 functions is entered once and
left once, and the 5 calls that were still open are left at the process's latest event marked
cut — OTF2 by the `truncated` attribute, Parquet by the `truncated` column, SDDF by a
`Truncated` record after the Exit, Chrome by `"args":{"truncated":true}` — and no other leave
is marked."""

import json
import os
import re
import signal
import subprocess
from collections import Counter

import pytest
from components import require_module, require_tools

from conftest import BIN, PLX, ROOT, clean_env, plx, run

CUT = {"main", "finish", "waiter", "wait_outer", "wait_inner"}
FUNCTIONS = CUT | {"marker"}
WARNINGS = [
    "thread 0: 2 calls still open when the process was killed, closed at its last event (truncated)",
    "thread 1: 3 calls still open when the process was killed, closed at its last event (truncated)",
]


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """blocked_exit.c traced and SIGKILLed once it printed "ready PID": the experiment."""
    root = tmp_path_factory.mktemp("killed")
    exe = root / "blocked_exit"
    run([BIN / "plx-cc", "-O0", "-pthread", ROOT / "tests" / "e2e" / "programs" / "blocked_exit.c",
         "-o", exe])
    out = root / "exp"
    p = subprocess.Popen([str(PLX), "run", "--trace", "-o", str(out), "--", str(exe), "kill"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env())
    line = p.stdout.readline()
    assert line.startswith("ready "), line + p.stderr.read()
    os.kill(int(line.split()[1]), signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 137, err
    return out


def export(exp, fmt, out):
    cp = plx("export", exp, "--format", fmt, "-o", out)
    for w in WARNINGS:
        assert cp.stderr.count(w) == 1, cp.stderr
    return cp


def test_otf2_print_sees_every_call_left_once_and_the_cut_ones_marked(killed, tmp_path):
    require_tools("otf2-print", what="otf2-print (otf2-tools)")
    out = tmp_path / "otf2"
    export(killed, "otf2", out)
    defs = run(["otf2-print", "-G", out / "traces.otf2"]).stdout
    assert re.search(r'^ATTRIBUTE\s+0\s+Name: "truncated"', defs, re.M), defs
    lines = run(["otf2-print", out / "traces.otf2"]).stdout.splitlines()
    enters, leaves, cut, times = Counter(), Counter(), Counter(), []
    for i, line in enumerate(lines):
        m = re.match(r'^(ENTER|LEAVE)\s+\d+\s+(\d+)\s+Region: "([^"]*)"', line)
        if not m:
            continue
        kind, t, name = m.groups()
        times.append(int(t))
        (enters if kind == "ENTER" else leaves)[name] += 1
        marked = i + 1 < len(lines) and '("truncated" <0>; UINT8; 1)' in lines[i + 1]
        if marked:
            assert kind == "LEAVE", line
            cut[name] += 1
            cut_time = int(t)
    assert {n: enters[n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert {n: leaves[n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert sum(enters.values()) == sum(leaves.values())
    assert cut == Counter(CUT)
    assert cut_time == max(times)


def test_parquet_has_every_call_left_once_and_the_cut_ones_marked(killed, tmp_path):
    require_module("pyarrow")
    import pyarrow.parquet as pq
    out = tmp_path / "pq"
    export(killed, "parquet", out)
    table = pq.read_table(out / "events.parquet")
    assert table.schema.metadata[b"plx.schema"] == b"4"
    rows = table.to_pylist()
    enters = Counter(r["region_name"] for r in rows if r["kind"] == "enter")
    exits = Counter(r["region_name"] for r in rows if r["kind"] == "exit")
    assert {n: enters[n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert {n: exits[n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert enters == exits
    cut = [r for r in rows if r["truncated"]]
    assert Counter(r["region_name"] for r in cut) == Counter(CUT)
    assert {r["kind"] for r in cut} == {"exit"}
    latest = max(r["time_ns"] for r in rows)
    assert {r["time_ns"] for r in cut} == {latest}
    assert sum(1 for r in rows if r["truncated"] is False) == len(rows) - len(CUT)


def test_sddf_has_every_call_left_once_and_the_cut_ones_marked(killed, tmp_path):
    out = tmp_path / "k.sddf"
    export(killed, "sddf", out)
    text = out.read_text()
    names = {int(i): n for i, n in re.findall(r'^"Region" \{ (\d+), \[\d+\] \{ "[^"]*" \}, '
                                               r'\[\d+\] \{ "([^"]*)" \} \};;$', text, re.M)}
    records = re.findall(r'^"(Enter|Exit|Truncated)" \{ \d+, \d+, ([\d.]+), (\d+) \};;$', text,
                         re.M)
    count = {k: Counter(names[int(r)] for kind, _, r in records if kind == k)
             for k in ("Enter", "Exit", "Truncated")}
    assert {n: count["Enter"][n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert count["Enter"] == count["Exit"]
    assert count["Truncated"] == Counter(CUT)
    # each Truncated record follows the Exit it marks, same time and region
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"Truncated" { '):
            assert lines[i - 1] == line.replace('"Truncated"', '"Exit"', 1), lines[i - 1:i + 1]
    latest = max(float(t) for _, t, _ in records)
    assert {float(t) for kind, t, _ in records if kind == "Truncated"} == {latest}
    assert "#14:" in text and '"Truncated" {' in text


def test_chrome_has_every_slice_ended_once_and_the_cut_ones_marked(killed, tmp_path):
    out = tmp_path / "k.json"
    export(killed, "chrome", out)
    events = json.loads(out.read_text())["traceEvents"]
    begins = Counter(e["name"] for e in events if e.get("ph") == "B")
    ends = Counter(e["name"] for e in events if e.get("ph") == "E")
    assert {n: begins[n] for n in FUNCTIONS} == {n: 1 for n in FUNCTIONS}
    assert begins == ends
    cut = Counter(e["name"] for e in events
                  if e.get("ph") == "E" and e.get("args") == {"truncated": True})
    assert cut == Counter(CUT)


def test_text_says_where_the_cut_calls_end(killed, tmp_path):
    out = tmp_path / "k.txt"
    export(killed, "text", out)
    said = [line for line in out.read_text().splitlines() if "calls still open" in line]
    assert len(said) == 2, said
    assert "2 calls still open (finish < main)" in said[0], said
    assert "3 calls still open (wait_inner < wait_outer < waiter)" in said[1], said
    for line in said:
        assert line.endswith("the process's latest event: it was killed (truncated)"), line
