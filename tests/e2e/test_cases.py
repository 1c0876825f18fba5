"""End-to-end cases (tests/e2e/cases/NAME/): a program, its `plx run`, `plx` commands and the
expected output of each, as uftrace's t### tests and Perfetto's diff tests. One test per case,
compiler and run variant; what varies between runs is normalised before the comparison.
`PLX_BLESS=1` writes the expected files instead of comparing (tests/e2e/cases/README.md)."""

import csv
import difflib
import io
import json
import os
import re
import socket
import subprocess
import tomllib
from pathlib import Path

import pytest

from components import require_tools
from conftest import (
    BIN,
    PROGRAMS,
    ROOT,
    TOOLCHAINS,
    _fail_message,
    clean_env,
    plx,
    process_dirs,
)
from mpi_impls import IMPLS

CASES = Path(__file__).resolve().parent / "cases"
BLESS = os.environ.get("PLX_BLESS", "") not in ("", "0")
TIMEOUT = 120

# What varies from run to run, masked in every output: dates, durations and clock rates.
DATE = re.compile(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC)?")
DURATION = re.compile(r"(?<![\w.])\d+(\.\d+)?(e[-+]?\d+)? ?(ns|us|µs|ms|s|min)\b")
FREQUENCY = re.compile(r"\b\d+(\.\d+)? ?[GM]Hz\b")

# the CSV columns that name a process or thread (a pid, `PID.THREAD`)
LOCATION_COLUMNS = {"process", "location", "waiting_location", "cause_location"}

KEYS = {
    "program": {"sources", "compiler", "flags", "toolchains", "mpi", "ranks", "args", "status"},
    "run": {"options", "variants", "launch"},
    "command": {"name", "plx", "columns", "where", "lines", "drop", "mask", "sort", "stderr",
                "status"},
}

# {expected file: text} written by this session's PLX_BLESS: builds and variants that share a
# file must agree on it
BLESSED = {}


def load(case_dir):
    with open(case_dir / "case.toml", "rb") as f:
        case = tomllib.load(f)
    unknown = set(case) - set(KEYS)
    assert not unknown, "%s: unknown sections %s" % (case_dir, sorted(unknown))
    for section, tables in case.items():
        for table in tables if isinstance(tables, list) else [tables]:
            bad = set(table) - KEYS[section]
            assert not bad, "%s: [%s]: unknown keys %s" % (case_dir, section, sorted(bad))
    return case


def params():
    """(case, build, variant) of every case folder: one test each; a build is a toolchain (gcc,
    clang) or an MPI implementation (open-mpi, mpich) when the case names several."""
    out = []
    for d in sorted(p for p in CASES.iterdir() if (p / "case.toml").exists()):
        case = load(d)
        program = case["program"]
        builds = program.get("toolchains") or mpi_impls(program) or [None]
        variants = sorted(case.get("run", {}).get("variants", {"default": []}))
        for b in builds:
            for v in variants:
                ident = "-".join(x for x in (d.name, b, None if v == "default" else v) if x)
                out.append(pytest.param(d.name, b, v, id=ident))
    return out


def mpi_impls(program):
    """The MPI implementations (mpi_impls.IMPLS names) a case runs on, [] if not MPI."""
    impls = program.get("mpi", [])
    return [impls] if isinstance(impls, str) else impls


def source_path(case_dir, name):
    """A source named in a case: in its folder, else tests/e2e/programs, else the repository."""
    for base in (case_dir, PROGRAMS, ROOT):
        if (base / name).exists():
            return base / name
    raise AssertionError("%s: source %s is in neither the case folder, %s nor %s"
                         % (case_dir.name, name, PROGRAMS, ROOT))


def build_program(case_dir, program, build, out):
    compiler = program.get("compiler", "plx-cc")
    toolchain = build if build in TOOLCHAINS else None
    env = dict(TOOLCHAINS[toolchain]) if toolchain else {}
    if toolchain:
        require_tools(*env.values(), what=toolchain)
    if mpi_impls(program):
        impl = IMPLS[build]
        impl.require()
        assert compiler == "mpicc", "%s: an MPI program is built with mpicc" % case_dir.name
        cc = impl.mpicc
    else:
        assert compiler in ("plx-cc", "plx-c++"), "%s: compiler %s" % (case_dir.name, compiler)
        cc = str(BIN / compiler)
    sources = [str(source_path(case_dir, s)) for s in program["sources"]]
    cmd = [cc, *program.get("flags", []), *sources, "-o", str(out)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(env), timeout=TIMEOUT)
    assert cp.returncode == 0, _fail_message(cp)
    return out


def run_program(case, build, exe, exp, options, cwd):
    """`plx run -o EXP OPTIONS -- EXE ARGS`, or for MPI `LAUNCHER -np N plx run ...` (launch
    "mpirun-plx", the default) or `plx run ... -- LAUNCHER -np N EXE` (launch "plx-mpirun")."""
    program = case["program"]
    args = [str(a) for a in program.get("args", [])]
    command = [str(exe), *args]
    if mpi_impls(program):
        impl = IMPLS[build]
        ranks = program.get("ranks", 2)
        if case.get("run", {}).get("launch", "mpirun-plx") == "plx-mpirun":
            cmd = [str(BIN / "plx"), "run", "-o", str(exp), *options, "--",
                   *impl.mpirun_cmd(ranks, *command)]
        else:
            cmd = impl.mpirun_cmd(ranks, BIN / "plx", "run", "-o", exp, *options, "--", *command)
    else:
        cmd = [str(BIN / "plx"), "run", "-o", str(exp), *options, "--", *command]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), cwd=cwd,
                        timeout=TIMEOUT)
    assert cp.returncode == program.get("status", 0), _fail_message(cp)


def masks(exp, paths):
    """[(regex, replacement)] of what names this run: its paths, host, process and thread ids.
    An id is masked where it stands for a process or thread, never as a bare number elsewhere:
    in a fresh container a pid can equal a count the case holds (`pid N`, `process N`, `N.T`,
    a line that is `N`, `HOST.N`, a row of plx info's thread table, a CSV location field)."""
    out = [(re.compile(re.escape(str(p))), name) for p, name in paths]
    out.append((re.compile(r"\b%s\b" % re.escape(socket.gethostname())), "HOST"))
    pids, tids = {}, set()  # pids: {pid: its mask}
    for d in process_dirs(exp):
        pids[d.name.rsplit(".", 1)[1]] = "PID"
    doc = json.loads(plx("report", exp, "--format", "json", check=False).stdout or "{}")
    for p in doc.get("processes", []):
        # an MPI rank's pid names the rank: its rows stay apart and in rank order
        pids[str(p["pid"])] = "PID" if p.get("rank") is None else "PIDr%d" % p["rank"]
        tids |= {str(t["tid"]) for t in p["threads"] if t.get("tid") is not None}
    ids = {**{t: "TID" for t in tids}, **pids}  # a main thread's tid is its pid
    for i in sorted(ids, key=len, reverse=True):
        m = ids[i]
        if i in pids:
            for context in (r"(?<=pid )%s\b", r"(?<=process )%s\b", r"(?<![\w.])%s(?=\.\d)",
                            r"(?<=HOST\.)%s\b"):
                out.append((re.compile(context % i), m))
            out.append((re.compile(r"(?m)^(\s*)%s$" % i), r"\g<1>" + m))
        out.append((re.compile(r"(?m)^(\s+\d+\s+)%s\b" % i), r"\g<1>" + m))
    return out, pids


def normalise(text, spec, masks_):
    """The text of one command as compared: masked, then the command's own selection."""
    regexes, pids = masks_
    for regex, name in regexes:
        text = regex.sub(name, text)
    text = DATE.sub("DATE", text)
    text = FREQUENCY.sub("FREQ", text)
    if "columns" in spec:
        rows = list(csv.DictReader(io.StringIO(text)))
        where = spec.get("where", {})
        for r in rows:  # a location field that is a pid (`N.T` is masked above)
            for c in LOCATION_COLUMNS & set(r):
                r[c] = pids.get(r[c], r[c])
        rows = [r for r in rows if all(re.fullmatch(v, r[k]) for k, v in where.items())]
        cols = spec["columns"]
        header = next(csv.reader(io.StringIO(text)), [])
        missing = [c for c in [*cols, *where] if c not in header]
        assert not missing, "columns %s not in the CSV header %s" % (missing, header)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(sorted([r[c] for c in cols] for r in rows))
        return buf.getvalue()
    text = DURATION.sub("TIME", text)
    # columns are as wide as their widest value, a time's among them: one space between words
    # (a line's indentation, a tree's depth, is kept); the selection below sees the lines as the
    # expected file shows them
    lines = [re.sub(r"(?<=\S)\s+", " ", line).rstrip() for line in text.splitlines()]
    if "lines" in spec:
        lines = [line for line in lines if re.search(spec["lines"], line)]
    if "drop" in spec:
        lines = [line for line in lines if not re.search(spec["drop"], line)]
    for regex in spec.get("mask", []):
        lines = [re.sub(regex, "*", line) for line in lines]
    key = spec.get("sort")
    if key is True:
        lines.sort()
    elif key:  # a stable sort by the regex's first match: the lines of each location in order
        lines.sort(key=lambda line: (m.group(0) if (m := re.search(key, line)) else ""))
    return "".join(line + "\n" for line in lines)


def run_command(spec, exp, out, case_dir, masks_):
    """Runs `plx ARGS` ({exp}: the experiment, {out}: a file the command writes and whose text
    is compared, {case}: the case folder); returns its output as compared."""
    sub = {"{exp}": str(exp), "{out}": str(out), "{case}": str(case_dir)}
    args = [sub.get(a, a) for a in spec["plx"]]
    cp = plx(*args, check=False, timeout=TIMEOUT)
    assert cp.returncode == spec.get("status", 0), _fail_message(cp)
    text = normalise(out.read_text() if "{out}" in spec["plx"] else cp.stdout, spec, masks_)
    if spec.get("stderr"):
        text += "--- stderr ---\n" + normalise(cp.stderr, {}, masks_)
    return text


def expected_file(case_dir, name, build, variant):
    """NAME.expected, or NAME.BUILD.expected / NAME.VARIANT.expected where a case keeps one (an
    output that differs by compiler, MPI implementation or run variant)."""
    for tag in (build, variant):
        f = case_dir / ("%s.%s.expected" % (name, tag))
        if tag and f.exists():
            return f
    return case_dir / (name + ".expected")


def compare(expected_file, got):
    """Blesses EXPECTED_FILE with GOT, or returns the failure message of a difference."""
    if BLESS:
        if BLESSED.get(expected_file, got) != got:
            return ("%s: another build or variant of the case blessed other output: keep one "
                    "file each (NAME.BUILD.expected, NAME.VARIANT.expected) or select what they "
                    "share" % expected_file.relative_to(ROOT))
        BLESSED[expected_file] = got
        expected_file.write_text(got)
        return None
    if not expected_file.exists():
        return "%s is missing: PLX_BLESS=1 writes it" % expected_file.relative_to(ROOT)
    want = expected_file.read_text()
    if got == want:
        return None
    return "".join(difflib.unified_diff(want.splitlines(keepends=True),
                                        got.splitlines(keepends=True),
                                        str(expected_file.relative_to(ROOT)), "plx's output"))


@pytest.mark.parametrize("name,build,variant", params())
def test_case(name, build, variant, tmp_path):
    case_dir = CASES / name
    case = load(case_dir)
    exe = build_program(case_dir, case["program"], build, tmp_path / name)
    run_opts = case.get("run", {})
    options = [*run_opts.get("options", []), *run_opts.get("variants", {}).get(variant, [])]
    exp = tmp_path / "exp"
    run_program(case, build, exe, exp, options, tmp_path)
    paths = [(exp, "EXP"), (tmp_path, "TMP"), (case_dir, "CASE"), (PROGRAMS, "PROGRAMS"),
             (ROOT, "ROOT")]
    masks_ = masks(exp, paths)
    assert case.get("command"), "%s: no [[command]]" % name
    failures = []
    for spec in case["command"]:
        got = run_command(spec, exp, tmp_path / "out", case_dir, masks_)
        failure = compare(expected_file(case_dir, spec["name"], build, variant), got)
        if failure:
            failures.append(failure)
    if failures:
        pytest.fail("output differs from the expected files (`PLX_BLESS=1 python3 -m pytest "
                    "tests/e2e/test_cases.py -k %s` rewrites them after a deliberate change):\n%s"
                    % (name, "\n".join(failures)), pytrace=False)
