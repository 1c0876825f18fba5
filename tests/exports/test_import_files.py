"""plx import's files: RFC 4180 CSV read exactly (quoted headers, empty fields holding the previous
value, the last line kept), and the metric file staged under a temporary name: a full file system
leaves an earlier import intact, and the temporary files of dead writers are removed."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, plx

PROGRAM = "static int work(int n) { return n + 1; }\nint main(void) { return work(0) - 1; }\n"


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A two-function program built with plx-cc."""
    d = tmp_path_factory.mktemp("prog")
    (d / "p.c").write_text(PROGRAM)
    exe = d / "p"
    subprocess.run([str(ROOT / "build" / "bin" / "plx-cc"), "-O0", str(d / "p.c"), "-o", str(exe)],
                   check=True)
    return exe


@pytest.fixture
def small_experiment(program):
    def make(where, *opts):
        exp = Path(where) / "exp"
        plx("run", "-o", exp, *opts, "--", program)
        return exp
    return make


def query_text(exp, metric, bins):
    return plx("query", exp, "--metric", metric, "--bins", str(bins)).stdout


def rows(text):
    """The (from, to, value) rows of plx query's text table."""
    out = []
    for line in text.splitlines()[5:]:
        f = line.split()
        out.append((" ".join(f[0:2]), " ".join(f[2:4]), f[4]))
    return out


def test_import_keeps_quoted_header_empty_fields_and_last_line(small_experiment, tmp_path):
    exp = small_experiment(tmp_path)
    csv = tmp_path / "power.csv"
    csv.write_bytes(b't,"temp, C",fan\r\n0,10,1000\r\n0.5,30,\r\n1.0,50,\r\n')
    cp = plx("import", exp, "--csv", csv, "--time-column", "t")
    assert cp.stderr == ("plx: imported 3 sample(s) of 2 metric(s) (temp, C, fan) from %s into "
                         "%s/metrics.csv-power.plx\n" % (csv, exp))
    temp = query_text(exp, "temp, C", 3)
    assert temp.splitlines()[:3] == ["metric temp, C (time-weighted mean)",
                                     "source csv %s" % csv, "total  30"]
    assert rows(temp) == [("0 s", "500.000 ms", "10"), ("500.000 ms", "1.000 s", "30"),
                          ("1.000 s", "1.500 s", "50")]
    # the fan's empty fields repeat its 1000: never NaN, never a gap
    fan = query_text(exp, "fan", 3)
    assert fan.splitlines()[2] == "total  1000"
    assert [r[2] for r in rows(fan)] == ["1000", "1000", "1000"]
    assert "NaN" not in temp + fan


def test_query_shows_no_value_before_the_first_sample(small_experiment, tmp_path):
    # with a trace, times count from its first event (without, from the first sample)
    exp = small_experiment(tmp_path, "--trace")
    csv = tmp_path / "late.csv"
    csv.write_text("t,early,late\n0,1,\n1,2,7\n2,3,9\n")
    plx("import", exp, "--csv", csv, "--time-column", "t")
    late = query_text(exp, "late", 3)
    assert rows(late) == [("0 s", "1.000 s", "-"), ("1.000 s", "2.000 s", "7"),
                          ("2.000 s", "3.000 s", "9")]
    assert late.splitlines()[2] == "total  8"
    csv_rows = plx("query", exp, "--metric", "late", "--bins", "3", "--format",
                   "csv").stdout.splitlines()
    assert csv_rows[1:3] == ["late,,total,,,8", "late,,0,0.000000000,1.000000000,"]


@pytest.fixture
def tmpfs(tmp_path):
    """A real 1 MiB tmpfs."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=True)


def test_import_on_a_full_file_system_keeps_the_earlier_import(small_experiment, tmpfs,
                                                                tmp_path):
    exp = small_experiment(tmpfs)
    csv = tmp_path / "p.csv"
    csv.write_text("t,b\n0,1\n1,2\n")
    plx("import", exp, "--csv", csv, "--time-column", "t")
    metric = exp / "metrics.csv-p.plx"
    good = metric.read_bytes()
    # 200,000 samples: about 5 MB of records, the file system holds 1 MiB
    csv.write_text("t,b\n" + "".join("%d,%d\n" % (i, i) for i in range(200000)))
    cp = plx("import", exp, "--csv", csv, "--time-column", "t", check=False)
    assert cp.returncode == 1
    assert cp.stderr == "plx: %s: No space left on device (os error 28)\n" % metric
    assert metric.read_bytes() == good
    assert sorted(os.listdir(exp)) == [".plx-run", "metrics.csv-p.plx",
                                       "%s" % next(p.name for p in exp.iterdir() if p.is_dir())]
    assert query_text(exp, "b", 1).splitlines()[2] == "total  1.5"
    assert "warnings: none" in plx("info", exp).stdout


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_stale_temporary_files_of_dead_writers_are_removed(small_experiment, tmp_path):
    exp = small_experiment(tmp_path)
    dead = dead_pid()
    stale = exp / (".metrics.csv-p.plx.plx-tmp-%d" % dead)
    stale.write_bytes(b"\0" * 65536)
    live = exp / (".metrics.csv-q.plx.plx-tmp-%d" % os.getpid())
    live.write_bytes(b"being written")
    csv = tmp_path / "p.csv"
    csv.write_text("t,b\n0,1\n")
    plx("import", exp, "--csv", csv, "--time-column", "t")
    assert not stale.exists()
    assert live.read_bytes() == b"being written"
    # an export killed midway: its temporary file goes at the next export into the directory
    out = tmp_path / "out"
    out.mkdir()
    killed = out / (".x.json.plx-tmp-%d" % dead_pid())
    killed.write_bytes(b"{" * 4096)
    plx("export", exp, "--format", "tau", "-o", out / "tau")
    assert sorted(os.listdir(out)) == ["tau"]
