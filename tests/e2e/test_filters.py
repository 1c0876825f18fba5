"""Filter files (docs/formats/filter.md): exclude, include lists, file rules, throttle, errors."""

import re

import pytest

from conftest import (
    RUNTIME_REGIONS,
    TOOLCHAINS,
    build,
    info,
    plx,
    report_csv,
    report_json,
    run,
    total_rows,
)

# filters.c
COUNTS = {
    "main": 1,
    "alpha": 10,
    "beta": 20,
    "gamma_one": 30,
    "gamma_two": 40,
    "tiny": 100000,
    "after": 1,
}


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def filters_bin(request, programs):
    return programs.get("filters.c", "-O0", toolchain=request.param)


def measure(tmp_path, prog, rules, opts=(), env=None, name="exp"):
    filt = tmp_path / (name + ".filter")
    filt.write_text(rules)
    out = tmp_path / name
    run(out, prog, opts=("--filter", filt, *opts), env=env)
    return out


def measured(rows):
    return {r["function"]: int(r["calls"]) for r in total_rows(rows) if r["function"] not in RUNTIME_REGIONS}


def test_no_filter_counts(filters_bin, tmp_path):
    out = tmp_path / "all"
    run(out, filters_bin)
    assert measured(report_csv(out)) == COUNTS


@pytest.mark.parametrize(
    "mode,opts,env",
    [
        ("profile", (), None),
        ("unpatched", (), {"PLX_PATCH": "0"}),
        ("trace", ("--trace", "--buffer", "4K"), None),
    ],
)
def test_exclude_glob(filters_bin, tmp_path, mode, opts, env):
    out = measure(tmp_path, filters_bin, "# not the gammas\nexclude gamma_*\n", opts=opts, env=env)
    want = {k: v for k, v in COUNTS.items() if not k.startswith("gamma_")}
    assert measured(report_csv(out)) == want
    text = info(out).stdout
    assert re.search(r"^\s*filter\s+.*exclude gamma_\*", text, re.M), text
    # main's child calls count only what was measured
    main = [r for r in total_rows(report_csv(out, "--callpath")) if r["callpath"] == "main"][0]
    measured_children = 10 + 20 + 100000 + 1
    assert int(main["child_calls"]) == measured_children


def test_include_list(filters_bin, tmp_path):
    out = measure(tmp_path, filters_bin, "include alpha\n")
    assert measured(report_csv(out)) == {"alpha": 10}
    # alpha is then a root: main is not measured
    paths = {r["callpath"] for r in total_rows(report_csv(out, "--callpath"))}
    assert "alpha" in paths


def test_last_matching_rule_wins(filters_bin, tmp_path):
    out = measure(tmp_path, filters_bin, "exclude gamma_*\ninclude gamma_two\nexclude a*\n")
    want = dict(COUNTS)
    del want["gamma_one"], want["alpha"], want["after"]
    assert measured(report_csv(out)) == want


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def files_bin(request, programs):
    return programs.get(["files_main.c", "files_other.c"], "-O0", name="files", toolchain=request.param)


def test_two_files_unfiltered(files_bin, tmp_path):
    out = tmp_path / "files"
    run(out, files_bin)
    assert measured(report_csv(out)) == {
        "main": 1,
        "here_one": 3,
        "here_two": 4,
        "other_one": 5,
        "other_two": 6,
    }
    files = {f["function"]: f["file"] for f in report_json(out)["total"]["functions"]}
    assert files["other_one"].endswith("/files_other.c")
    assert files["here_one"].endswith("/files_main.c")


def test_exclude_file(files_bin, tmp_path):
    out = measure(tmp_path, files_bin, "exclude file */files_other.c\n")
    assert measured(report_csv(out)) == {"main": 1, "here_one": 3, "here_two": 4}


def test_include_file(files_bin, tmp_path):
    out = measure(tmp_path, files_bin, "include file */files_other.c\n")
    assert measured(report_csv(out)) == {"other_one": 5, "other_two": 6}


@pytest.fixture(scope="module")
def header_bin(programs):
    return programs.get(["files_header.c", "files_other.c"], "-O0", name="files_header")


def test_file_rule_names_the_header(header_bin, tmp_path):
    """A function defined in a header is in the header's file, not in the .c including it."""
    out = measure(tmp_path, header_bin, "exclude file */files_header.h\n")
    assert measured(report_csv(out)) == {"main": 1, "local_fn": 4, "other_one": 5, "other_two": 6}
    out = measure(tmp_path, header_bin, "include file */files_header.h\ninclude main\n", name="inc")
    assert measured(report_csv(out)) == {"main": 1, "header_fn": 7}


def test_file_rules_in_a_library(tmp_path):
    """A library the program needs gets its file rules too (the list covers the closure)."""
    lib = build(["files_other.c"], tmp_path / "libfilesother.so", "-O0", "-fPIC", "-shared")
    exe = build(["files_main.c"], tmp_path / "files_linked", "-O0", "-Wl,--no-as-needed",
                "-L%s" % tmp_path,
                "-lfilesother", "-Wl,-rpath,%s" % tmp_path)
    out = measure(tmp_path, exe, "exclude file */files_other.c\n")
    assert measured(report_csv(out)) == {"main": 1, "here_one": 3, "here_two": 4}
    listed = (out / "source-files").read_text().splitlines()
    assert listed[0] == "plx-source-files 1"
    assert "module %s" % lib.resolve() in listed


@pytest.mark.parametrize("opts", [(), ("--trace",)], ids=["profile", "trace"])
def test_throttle(filters_bin, tmp_path, opts):
    out = measure(tmp_path, filters_bin, "throttle 1000 50\n", opts=opts)
    # tiny (a few ns a call) stops being measured after exactly 1000 calls; the others are
    # called fewer than 1000 times and stay exact; after() shows the stack is still right
    want = dict(COUNTS, tiny=1000)
    assert measured(report_csv(out)) == want
    text = info(out).stdout
    assert re.search(r"^\s*throttled\s*$", text, re.M), text
    assert re.search(r"^\s*tiny after 1000 calls\b", text, re.M), text
    assert "tiny throttled after 1000 calls" in text
    doc = report_json(out)
    (proc,) = doc["processes"]
    assert [(t["function"], t["calls"]) for t in proc["throttled"]] == [("tiny", 1000)]
    report = plx("report", out).stdout
    m = re.search(r"throttled regions of \d+ \(pid \d+ on \S+\): .*\n((?:.*\n?)*)", report)
    assert m, report
    assert re.search(r"^\s*1000 calls\s+\S+ \S+\s+tiny\s*$", m.group(1), re.M), m.group(1)


@pytest.mark.parametrize("opts", [(), ("--trace",)], ids=["profile", "trace"])
def test_throttle_per_thread_and_callpath(programs, tmp_path, opts):
    """throttle_threads.c: four threads call tiny() 1000 times each, main 1000 times directly
    and 200 times through slow(). Each thread keeps its own first 100 calls; in a profile each
    callpath does (main => tiny and main => slow => tiny), in a trace each thread."""
    prog = programs.get("throttle_threads.c", "-O0", "-pthread")
    out = measure(tmp_path, prog, "throttle 100 50\n", opts=opts)
    rows = [r for r in report_csv(out, "--callpath")
            if r["process"] != "all" and r["function"] not in RUNTIME_REGIONS]
    got = sorted((r["thread_name"], r["callpath"], int(r["calls"])) for r in rows)
    want = [("main", "main", 1), ("main", "main => slow", 200), ("main", "main => tiny", 100)]
    if not opts:
        want.append(("main", "main => slow => tiny", 100))
    want += [("work", "work", 1), ("work", "work => tiny", 100)] * 4
    assert got == sorted(want)
    doc = report_json(out)
    (proc,) = doc["processes"]
    assert [(t["function"], t["calls"]) for t in proc["throttled"]] == [("tiny", 100)]


def test_bad_rule_stops_before_running(filters_bin, tmp_path):
    filt = tmp_path / "bad.filter"
    filt.write_text("# a comment\n\nexclude gamma_*\nexclud foo\n")
    marker = tmp_path / "ran"
    out = tmp_path / "bad-exp"
    cp = plx(
        "run", "-o", out, "--filter", filt, "--", "sh", "-c", "touch %s" % marker, check=False
    )
    assert cp.returncode == 2, cp.stderr
    assert not marker.exists(), "the program ran despite the bad filter"
    assert "plx: %s:4:" % filt in cp.stderr, cp.stderr
    assert "exclud" in cp.stderr


def test_bad_rule_relative_path(filters_bin, tmp_path):
    (tmp_path / "rel.filter").write_text("include alpha\nthrottle x 5\n")
    cp = plx("run", "-o", "e", "--filter", "rel.filter", "--", "true", check=False, cwd=tmp_path)
    assert cp.returncode == 2, cp.stderr
    assert "rel.filter:2:" in cp.stderr, cp.stderr


@pytest.mark.parametrize("rule", ["counters cycles", "context main", "exclude file a b", "throttle 10"])
def test_reserved_and_malformed_rules(tmp_path, rule):
    filt = tmp_path / "r.filter"
    filt.write_text("exclude gamma_*\n%s\n" % rule)
    marker = tmp_path / "ran"
    cp = plx(
        "run", "-o", tmp_path / "e", "--filter", filt, "--", "sh", "-c", "touch %s" % marker,
        check=False,
    )
    assert cp.returncode == 2, cp.stderr
    assert "%s:2:" % filt in cp.stderr, cp.stderr
    assert not marker.exists()


def test_missing_filter_file(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", "--filter", tmp_path / "nope.filter", "--", "true", check=False)
    assert cp.returncode == 2
    assert "nope.filter" in cp.stderr
