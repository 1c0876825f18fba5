"""The PLX_* settings declared once (runtime/src/core/options.def): plx run and the runtime read
a value with the same grammar and say the same words about a wrong one, and the filter file has
one parser, which reads it whole."""

import re
import subprocess

import pytest

from conftest import DOCS, LIBPLX, RUNTIME_REGIONS, clean_env, info, plx, report_csv, total_rows


def runtime(tmp_path, env, program=("true",), name="direct"):
    """The program measured by libplx without plx run: the runtime's own reading of `env`."""
    out = tmp_path / name
    cp = subprocess.run(
        list(program), capture_output=True, text=True, cwd=tmp_path,
        env=clean_env({"LD_PRELOAD": LIBPLX, "PLX_OUTPUT": out, **env}),
    )
    assert cp.returncode == 0, cp.stderr
    return out, cp.stderr


def cli_value(tmp_path, flag, var, value):
    """(variable's value set by plx run, None) or (None, plx run's refusal)."""
    got = tmp_path / "got"
    got.unlink(missing_ok=True)
    cp = plx("run", "-o", tmp_path / "cli", flag, value, "--", "sh", "-c",
             'printf %%s "$%s" > %s' % (var, got), check=False)
    if cp.returncode == 0:
        return got.read_text(), None
    assert cp.returncode == 2, cp.stderr
    assert not got.exists()
    m = re.search(r"invalid value '%s' for '%s <[A-Z]+>': (.*)" % (re.escape(value), flag), cp.stderr)
    assert m, cp.stderr
    return None, m.group(1).strip()


def runtime_value(tmp_path, var, value):
    """(the value the runtime uses, None) or (None, the runtime's warning) for VAR=value."""
    _, err = runtime(tmp_path, {var: value, "PLX_VERBOSE": "1"})
    m = re.search(r"^plx: %s=%s: (.*); (?:using the default, \S+|left unset)$" % (var, re.escape(value)), err, re.M)
    if m:
        return None, m.group(1)
    m = re.search(r"^plx: settings:.* %s=(\S+)" % var, err, re.M)
    assert m, err
    return m.group(1), None


@pytest.mark.parametrize(
    "flag,var,value,want",
    [
        ("--buffer", "PLX_BUFFER", "4k", ("4096", None)),
        ("--buffer", "PLX_BUFFER", "64K", ("65536", None)),
        ("--buffer", "PLX_BUFFER", "4G", ("4294967296", None)),
        ("--buffer", "PLX_BUFFER", "8G", (None, "at most 4G")),
        ("--buffer", "PLX_BUFFER", "1.5M", (None, "not a whole number of bytes, K, M or G")),
        ("--buffer", "PLX_BUFFER", "1K", (None, "at least 4K")),
        ("--buffer", "PLX_BUFFER", "12Q", (None, "unknown unit 'Q' (use K, M or G)")),
        ("--cpu-sample", "PLX_CPU_SAMPLE", "250", ("250", None)),
        ("--cpu-sample", "PLX_CPU_SAMPLE", "3600001", (None, "expected a whole number from 0 to 3600000")),
    ],
)
def test_cli_and_runtime_read_a_value_alike(tmp_path, flag, var, value, want):
    assert cli_value(tmp_path, flag, var, value) == want
    assert runtime_value(tmp_path, var, value) == want


def test_clock_choice_alike(tmp_path):
    assert cli_value(tmp_path, "--clock", "PLX_CLOCK", "coarse") == ("coarse", None)
    refusal = "expected tsc, monotonic or coarse"
    assert cli_value(tmp_path, "--clock", "PLX_CLOCK", "fast") == (None, refusal)
    _, err = runtime(tmp_path, {"PLX_CLOCK": "fast"})
    assert err.splitlines() == ["plx: PLX_CLOCK=fast: %s; left unset" % refusal]


def test_unknown_values_are_warned_by_name(tmp_path):
    _, err = runtime(tmp_path, {"PLX_TRACE": "2", "PLX_MAX_DEPTH": "abc", "PLX_PATCH": "maybe"})
    # in the table's order
    assert err.splitlines() == [
        "plx: PLX_TRACE=2: expected 1 or 0 (yes/no, true/false, on/off); using the default, 0",
        "plx: PLX_MAX_DEPTH=abc: expected a whole number from 16 to 1048576; using the default, 4096",
        "plx: PLX_PATCH=maybe: expected 1 or 0 (yes/no, true/false, on/off); using the default, 1",
    ]


def test_verbose_prints_every_setting(tmp_path):
    out, err = runtime(tmp_path, {"PLX_VERBOSE": "1", "PLX_BUFFER": "64K", "PLX_CLOCK": "monotonic"})
    (line,) = [l for l in err.splitlines() if l.startswith("plx: settings:")]
    settings = dict(w.split("=", 1) for w in line.split()[2:])
    documented = re.findall(r"^\| `(PLX_[A-Z_]+)` \|", (DOCS / "commands/plx-run.md").read_text().split("Read by other programs")[0], re.M)
    assert list(settings) == documented
    assert settings["PLX_OUTPUT"] == str(out)
    assert settings["PLX_BUFFER"] == "65536"
    assert settings["PLX_CLOCK"] == "monotonic"
    assert settings["PLX_CPU_SAMPLE"] == "0"  # computed: off without a trace
    assert settings["PLX_MAX_DEPTH"] == "4096"


# ---- the filter file: one parser -------------------------------------------------------------

COUNTS = {"main": 1, "alpha": 10, "beta": 20, "gamma_one": 30, "gamma_two": 40, "tiny": 100000, "after": 1}


@pytest.fixture(scope="module")
def filters_bin(programs):
    return programs.get("filters.c", "-O0")


def measured(rows):
    return {r["function"]: int(r["calls"]) for r in total_rows(rows) if r["function"] not in RUNTIME_REGIONS}


def big_filter(path):
    """Over 64 KiB, 3,000 rules (past the 1,024 the runtime once kept) and a 10,000-byte line,
    with the rule that matters last."""
    lines = ["# a long filter"]
    lines += ["exclude nomatch_%04d_*" % i for i in range(3000)]
    lines.append("exclude nomatch_" + "x" * 10000)
    lines.append("exclude gamma_*")
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 64 * 1024
    return path


def test_filter_over_64k_works_end_to_end(filters_bin, tmp_path):
    filt = big_filter(tmp_path / "big.filter")
    want = {k: v for k, v in COUNTS.items() if not k.startswith("gamma_")}
    out = tmp_path / "cli"
    cp = plx("run", "-o", out, "--filter", filt, "--", filters_bin)
    assert "plx: " + str(filt) not in cp.stderr
    assert measured(report_csv(out)) == want
    # the experiment keeps the whole file
    (line,) = [l for l in info(out).stdout.splitlines() if l.strip().startswith("filter")]
    assert line.endswith("exclude nomatch_" + "x" * 10000 + "; exclude gamma_*")
    assert line.count("; exclude nomatch_") == 3001
    # and the runtime alone reads it the same
    direct, err = runtime(tmp_path, {"PLX_FILTER": filt}, program=(str(filters_bin),))
    assert err == ""
    assert measured(report_csv(direct)) == want


def test_bad_filter_line_same_message_from_cli_and_runtime(filters_bin, tmp_path):
    filt = tmp_path / "bad.filter"
    filt.write_text("exclude alpha\nexclud beta\nthrottle 10\ncounters f* cycels\ninclude [ab\n")
    want = [
        "plx: %s:2: unknown rule 'exclud' (expected include, exclude, cputime, throttle or counters)"
        % filt,
        "plx: %s:3: expected 'throttle CALLS USEC' (e.g. throttle 100000 10)" % filt,
        "plx: %s:4: unknown counter 'cycels' (did you mean cycles?; docs/formats/counters.md "
        "lists the names)" % filt,
        "plx: %s:5: '[ab': a '[' is not closed" % filt,
    ]
    marker = tmp_path / "ran"
    cp = plx("run", "-o", tmp_path / "e", "--filter", filt, "--", "touch", marker, check=False)
    assert cp.returncode == 2
    assert not marker.exists()
    assert cp.stderr.splitlines() == want
    # the runtime, given the file by hand, says the same (plx adds the counter names near a
    # wrong one) and keeps the good lines
    direct, err = runtime(tmp_path, {"PLX_FILTER": filt}, program=(str(filters_bin),))
    assert err.splitlines() == [w.replace("did you mean cycles?; ", "") for w in want]
    assert measured(report_csv(direct)) == {k: v for k, v in COUNTS.items() if k != "alpha"}


def test_unknown_variables_are_named(tmp_path):
    """A PLX_* variable of neither list of options.def (a typo) is said, not silently ignored;
    those read by other programs of Parallax are not the runtime's business."""
    _, err = runtime(tmp_path, {"PLX_BUFER": "8M", "PLX_LIB_DIR": tmp_path, "PLX_BENCH_REPS": "3"})
    assert err.splitlines() == [
        "plx: PLX_BUFER is not a setting of this version (see docs/commands/plx-run.md); ignored"
    ]
