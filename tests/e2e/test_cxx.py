"""C++ (plx-c++): filters on demangled names, long template names (the counts and call paths of
templates, namespaces, virtual methods and exceptions are the case tests/e2e/cases/cxx)."""

import csv
import io
import json

import pytest

from conftest import (
    RUNTIME_REGIONS,
    TOOLCHAINS,
    build,
    plx,
    report_csv,
    run,
    total_rows,
)
from components import require_tools


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def cxx_bin(request, programs):
    return programs.get("cxx.cpp", "-O0", cxx=True, toolchain=request.param)


def flat_calls(rows):
    return {r["function"]: int(r["calls"]) for r in total_rows(rows)}


def test_filter_on_demangled_names(cxx_bin, tmp_path):
    filt = tmp_path / "cxx.filter"
    filt.write_text("exclude *twice<double>*\nexclude geo::*\nexclude Shape::*\n")
    out = tmp_path / "exp"
    run(out, cxx_bin, opts=("--filter", filt))
    got = flat_calls(report_csv(out))
    assert "double twice<double>(double)" not in got
    assert "geo::area_sum(double, double)" not in got
    assert "Shape::Shape()" not in got and "Shape::~Shape()" not in got
    assert got["int twice<int>(int)"] == 7
    assert got["thrower(int)"] == 10
    assert got["Square::Square(double)"] == 1


# cxx_filter.cpp: std::vector<int> of 100 twice<int>() values, 4 Leafs made with new and
# destroyed with delete, one local Leaf
CXX_FILTER_OWN = {
    "main": 1,
    "int twice<int>(int)": 100,
    "Leaf::Leaf(int)": 5,
    "Node::Node(int)": 5,
    "Leaf::~Leaf()": 5,
    "Node::~Node()": 5,
}


@pytest.fixture(scope="module", params=["g++", "clang++"])
def cxx_filter_bin(request, tmp_path_factory):
    require_tools(request.param)
    out = tmp_path_factory.mktemp("cxx-filter") / ("cxx_filter-" + request.param)
    build("cxx_filter.cpp", out, "-O0", cxx=True, env={"PLX_CXX": request.param})
    return out


def user_calls(out):
    return {k: v for k, v in flat_calls(report_csv(out)).items() if k not in RUNTIME_REGIONS}


def test_delete_counts_one_destructor_call(cxx_filter_bin, tmp_path):
    # GCC's and clang's deleting destructor (D0) calls the complete one (D1) under the same
    # name: 4 deletes and one local object are 5 calls of each destructor, not 9
    got = user_calls(run_exp(tmp_path / "all", cxx_filter_bin))
    for name, n in CXX_FILTER_OWN.items():
        assert got.get(name) == n, (name, got)
    assert any(name.startswith("void std::vector<int") for name in got), got


def test_exclude_std_matches_names_that_begin_with_a_return_type(cxx_filter_bin, tmp_path):
    # `exclude std::*` (docs/formats/filter.md's example) leaves nothing of std:: measured,
    # `void std::vector<...>::_M_realloc_insert<...>(...)` included
    filt = tmp_path / "std.filter"
    filt.write_text("exclude std::*\nexclude __gnu_cxx::*\n")
    got = user_calls(run_exp(tmp_path / "exp", cxx_filter_bin, "--filter", filt))
    placement = {"operator new(unsigned long, void*)": 100}  # g++ instruments the inline one
    assert got in (CXX_FILTER_OWN, {**CXX_FILTER_OWN, **placement}), got


def test_include_glob_matches_a_function_template(cxx_filter_bin, tmp_path):
    filt = tmp_path / "twice.filter"
    filt.write_text("include twice*\n")
    got = user_calls(run_exp(tmp_path / "exp", cxx_filter_bin, "--filter", filt))
    assert got == {"int twice<int>(int)": 100}


def run_exp(out, prog, *opts):
    run(out, prog, opts=opts)
    return out


def test_critical_path_caps_a_long_template_name_column(programs, tmp_path):
    """plx critical-path padded its function column to the longest name: a template
    instantiated with a nested std::map made every line over 500 characters wide. The column
    is at most 60 characters (the name's first 29 and last 28 around "..."); CSV and JSON keep
    the whole name."""
    prog = programs.get("long_template.cpp", "-O0", cxx=True)
    out = tmp_path / "exp"
    run(out, prog, opts=("--trace",))
    doc = json.loads(plx("critical-path", out, "--level", "procedure", "--format",
                         "json").stdout)
    (name,) = [i["name"] for i in doc["items"] if "weigh<" in i["name"]]
    assert len(name) > 500, name
    assert name.startswith("long weigh<std::map<")
    rows = list(csv.DictReader(io.StringIO(
        plx("critical-path", out, "--level", "procedure", "--format", "csv").stdout)))
    assert [r["name"] for r in rows if "weigh<" in r["name"]] == [name]
    text = plx("critical-path", out, "--level", "procedure").stdout
    lines = text.splitlines()
    (row,) = [l for l in lines if "weigh<" in l]
    assert name[:29] + "..." + name[-28:] in row, row
    header = lines[1]
    # location column, two spaces, the 60-character function column, two spaces, "time s"
    assert header.index("time s") - header.index("function") == 60 + 2 + 6, header
    assert max(len(l) for l in lines) < 120, text
