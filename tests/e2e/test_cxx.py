"""C++ (plx-c++): demangled names, templates, namespaces, virtual methods, exceptions."""

import csv
import io
import json

import pytest

from conftest import (
    RUNTIME_REGIONS,
    TOOLCHAINS,
    build,
    plx,
    callpath_rows,
    report_csv,
    run,
    total_rows,
)
from components import require_tools

# cxx.cpp
COUNTS = {
    "main": 1,
    "int twice<int>(int)": 7,
    "double twice<double>(double)": 3,
    "geo::area_sum(double, double)": 5,
    "Square::area() const": 2,
    "Circle::area() const": 3,
    "thrower(int)": 10,
    "catcher(int)": 1,
}


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def cxx_bin(request, programs):
    return programs.get("cxx.cpp", "-O0", cxx=True, toolchain=request.param)


@pytest.fixture(scope="module", params=["profile", "trace"])
def cxx_exp(request, cxx_bin, exp_root):
    out = exp_root / ("%s-%s" % (cxx_bin.name, request.param))
    run(out, cxx_bin, opts=("--trace",) if request.param == "trace" else ())
    return out


def flat_calls(rows):
    return {r["function"]: int(r["calls"]) for r in total_rows(rows)}


def test_demangled_counts(cxx_exp):
    got = flat_calls(report_csv(cxx_exp))
    for name, n in COUNTS.items():
        assert got.get(name) == n, (name, got)
    # constructors and destructors of the two local objects
    assert got["Square::Square(double)"] == 1
    assert got["Circle::Circle(double)"] == 1
    assert got["Square::~Square()"] == 1
    assert got["Circle::~Circle()"] == 1
    assert got["Shape::Shape()"] == 2
    assert got["Shape::~Shape()"] == 2
    # nothing mangled is left
    assert not [n for n in got if n.startswith("_Z")]


def test_exceptions_keep_the_stack(cxx_exp):
    rows = report_csv(cxx_exp, "--callpath")
    paths = callpath_rows(rows)
    thrower = ("main", "catcher(int)", "thrower(int)")
    assert int(paths[thrower]["calls"]) == 10
    assert int(paths[("main", "catcher(int)")]["calls"]) == 1
    # catcher's children: thrower, and at most the runtime's first-sight lookup
    catcher_children = {
        p[-1]: int(r["calls"]) for p, r in paths.items() if p[:-1] == ("main", "catcher(int)")
    }
    assert set(catcher_children) - RUNTIME_REGIONS == {"thrower(int)"}
    assert int(paths[("main", "catcher(int)")]["child_calls"]) == sum(
        v for k, v in catcher_children.items() if k not in RUNTIME_REGIONS
    )
    # no frame left open by an exception: thrower never appears under thrower, nothing under
    # it, and every later call of main is still a direct child of main
    for p in paths:
        assert "thrower(int)" not in p[:-1], p
        if "thrower(int)" in p:
            assert p == thrower, p
    for name in ("Circle::~Circle()", "Square::~Square()", "geo::area_sum(double, double)"):
        assert ("main", name) in paths, name
    main_children = sum(
        int(r["calls"])
        for p, r in paths.items()
        if len(p) == 2 and p[0] == "main" and p[1] not in RUNTIME_REGIONS
    )
    assert int(paths[("main",)]["child_calls"]) == main_children


def test_templates_and_virtuals_are_children_of_main(cxx_exp):
    paths = callpath_rows(report_csv(cxx_exp, "--callpath"))
    assert int(paths[("main", "int twice<int>(int)")]["calls"]) == 7
    assert int(paths[("main", "double twice<double>(double)")]["calls"]) == 3
    assert int(paths[("main", "Square::area() const")]["calls"]) == 2
    assert int(paths[("main", "Circle::area() const")]["calls"]) == 3
    assert int(paths[("main", "Square::Square(double)", "Shape::Shape()")]["calls"]) == 1


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
