"""Function names and source locations: executables, dlopen'ed libraries, plain
-finstrument-functions builds."""

import re
import subprocess
from pathlib import Path

import pytest
from plx_codec import decode, read_file
from plx_schema import RECORDS

from conftest import (
    PROGRAMS,
    calls,
    callpath_rows,
    clean_env,
    functions_of,
    build,
    have,
    info,
    process_dirs,
    report_csv,
    report_json,
    run,
)


def defining_line(source, pattern):
    for i, line in enumerate((PROGRAMS / source).read_text().splitlines(), 1):
        if re.match(pattern, line):
            return i
    raise AssertionError("%s not found in %s" % (pattern, source))


def symbol_lines(binary, names):
    """{name: (file, line)} of the first instruction of each function, by nm and addr2line."""
    nm = subprocess.run(["nm", str(binary)], capture_output=True, text=True, check=True).stdout
    addrs = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names and parts[1] in "Tt":
            addrs[parts[2]] = parts[0]
    out = subprocess.run(
        ["addr2line", "-e", str(binary), *(addrs[n] for n in names)],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    result = {}
    for n, loc in zip(names, out):
        f, _, line = loc.rpartition(":")
        result[n] = (f, int(line.split()[0]))
    return result


@pytest.fixture(scope="module")
def fib_json(fib_bin, exp_root):
    out = exp_root / "symbols-fib"
    run(out, fib_bin)
    return report_json(out)


def test_fib_source_location(fib_json):
    fns = functions_of(fib_json["total"])
    fib = fns["fib"]
    assert fib["file"].endswith("/fib.c")
    assert fib["file"] == str(PROGRAMS / "fib.c")
    assert fib["line"] == defining_line("fib.c", r"int fib\(int n\)")
    assert fns["main"]["file"] == str(PROGRAMS / "fib.c")
    # per thread, the same
    thread = fib_json["processes"][0]["threads"][0]
    assert functions_of(thread)["fib"]["line"] == fib["line"]
    # runtime regions have no source
    assert fns["plx_symbols"]["file"] == "" and fns["plx_symbols"]["line"] == 0


@pytest.mark.skipif(not (have("nm") and have("addr2line")), reason="binutils not installed")
def test_lines_match_addr2line(fib_json, fib_bin):
    """The line of a function is the line of its first instruction, as addr2line says."""
    want = symbol_lines(fib_bin, ["fib", "main"])
    fns = functions_of(fib_json["total"])
    for name, (f, line) in want.items():
        assert fns[name]["file"] == f, name
        assert fns[name]["line"] == line, name


@pytest.fixture(scope="module")
def plugin_exp(programs, exp_root):
    lib = programs.get("plugin.c", "-O0", "-shared", "-fPIC", name="libplugin")
    main = programs.get("dlopen_main.c", "-O0", "-ldl")
    out = exp_root / "dlopen"
    cp = run(out, main, lib)
    assert cp.stdout.strip() == "12"
    return out


def test_dlopen_plugin(plugin_exp):
    out = plugin_exp
    rows = report_csv(out)
    assert calls(rows, "plugin_work") == 4
    assert calls(rows, "plugin_helper") == 12  # a static function of the plugin
    assert calls(rows, "main") == 1
    paths = callpath_rows(report_csv(out, "--callpath"))
    assert int(paths[("main", "plugin_work")]["calls"]) == 4
    assert int(paths[("main", "plugin_work", "plugin_helper")]["calls"]) == 12
    fns = functions_of(report_json(out)["total"])
    assert fns["plugin_work"]["file"] == str(PROGRAMS / "plugin.c")
    assert fns["plugin_helper"]["file"] == str(PROGRAMS / "plugin.c")


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_library_loaded_where_another_was_unloaded(programs, tmp_path, mode):
    """Plugin A, B, then A again, each unloaded (dlclose) before the next is loaded at the same
    address: each function is counted and named as the library it ran in."""
    a = programs.get("reload_a.c", "-O0", "-shared", "-fPIC", name="libreload_a")
    b = programs.get("reload_b.c", "-O0", "-shared", "-fPIC", name="libreload_b")
    main = programs.get("reload_main.c", "-O0", "-ldl")
    out = tmp_path / "exp"
    cp = run(out, main, a, b, opts=("--trace",) if mode == "trace" else ())
    assert cp.stdout.split("\n")[:4] == ["90", "380", "870", "same address"]
    paths = callpath_rows(report_csv(out, "--callpath"))
    got = {p: int(r["calls"]) for p, r in paths.items() if p[0] == "main"}
    assert got == {
        ("main",): 1,
        ("main", "plugin_entry"): 3,
        ("main", "plugin_entry", "alpha_work"): 40,
        ("main", "plugin_entry", "beta_work"): 20,
    }
    fns = functions_of(report_json(out)["total"])
    assert fns["alpha_work"]["file"] == str(PROGRAMS / "reload_a.c")
    assert fns["beta_work"]["file"] == str(PROGRAMS / "reload_b.c")
    assert "warnings: none" in info(out).stdout
    # A loaded again where it was is the module it was, with its regions: a plugin loaded and
    # unloaded in a loop defines its functions once
    _kind, records = read_file(process_dirs(out)[0] / "process.plx")
    defs = [(RECORDS[t][0], decode(t, p)) for t, p in records if RECORDS.get(t, ("",))[0] in
            ("Module", "RegionDef")]
    modules = {d["module_id"]: d["path"] for name, d in defs if name == "Module"}
    plugins = sorted(Path(p).name for p in modules.values() if "libreload" in p)
    assert plugins == [Path(a).name, Path(b).name]
    regions = sorted((d["name"], Path(modules[d["module_id"]]).name) for name, d in defs
                     if name == "RegionDef" and d["module_id"] in modules
                     and "libreload" in modules[d["module_id"]])
    assert regions == sorted([("alpha_work", a.name), ("plugin_entry", a.name),
                              ("beta_work", b.name), ("plugin_entry", b.name)])


def test_plain_instrumented_build(tmp_path):
    """Built with -finstrument-functions -g by other means and not linked with the runtime:
    runs on its own, and is measured under plx run (which preloads the runtime)."""
    prog = tmp_path / "fib-plain"
    cp = subprocess.run(
        ["cc", "-O0", "-g", "-finstrument-functions", str(PROGRAMS / "fib.c"), "-o", str(prog)],
        capture_output=True, text=True, env=clean_env(),
    )
    assert cp.returncode == 0, cp.stderr
    alone = subprocess.run([str(prog)], capture_output=True, text=True, env=clean_env(), cwd=tmp_path)
    assert alone.returncode == 0 and alone.stdout == "fib(20) = 6765\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fib-plain"]
    out = tmp_path / "exp"
    run(out, prog)
    rows = report_csv(out)
    assert calls(rows, "fib") == 21891
    assert calls(rows, "main") == 1
    fns = functions_of(report_json(out)["total"])
    assert fns["fib"]["file"] == str(PROGRAMS / "fib.c")
    assert fns["fib"]["line"] == defining_line("fib.c", r"int fib\(int n\)")


def test_uninstrumented_program_measures_nothing(tmp_path):
    prog = tmp_path / "fib-uninstrumented"
    subprocess.run(
        ["cc", "-O0", str(PROGRAMS / "fib.c"), "-o", str(prog)], check=True, env=clean_env()
    )
    out = tmp_path / "exp"
    run(out, prog)
    rows = report_csv(out)
    assert calls(rows, "fib") == 0
    assert calls(rows, "main") == 0


def test_rebuilt_binary_shows_no_wrong_lines(tmp_path):
    """Source locations come only from the file that ran (its build-id is recorded): after
    the program is rebuilt with its lines moved, plx report shows no line rather than a wrong
    one and plx info names the file with both build-ids; the same build again resolves."""
    src = tmp_path / "fib.c"
    src.write_text((PROGRAMS / "fib.c").read_text())
    prog = build(src, tmp_path / "fib", "-g", "-O0")
    out = tmp_path / "exp"
    run(out, prog)
    line = defining_line("fib.c", r"int fib\(int n\)")
    assert functions_of(report_json(out)["total"])["fib"]["line"] == line
    ran = subprocess.run(["readelf", "-n", str(prog)], capture_output=True, text=True).stdout
    ran_id = re.search(r"Build ID: ([0-9a-f]+)", ran).group(1)
    assert "warnings: none" in info(out).stdout

    src.write_text("\n\n\n" + (PROGRAMS / "fib.c").read_text())
    build(src, prog, "-g", "-O0")
    now = subprocess.run(["readelf", "-n", str(prog)], capture_output=True, text=True).stdout
    now_id = re.search(r"Build ID: ([0-9a-f]+)", now).group(1)
    assert now_id != ran_id
    fib = functions_of(report_json(out)["total"])["fib"]
    assert (fib["file"], fib["line"]) == ("", 0)
    assert fib["calls"] == 21891
    text = info(out).stdout
    assert "%s: rebuilt or replaced since the run (build-id %s then, %s now)" % (prog, ran_id, now_id) in text

    src.write_text((PROGRAMS / "fib.c").read_text())
    build(src, prog, "-g", "-O0")
    assert functions_of(report_json(out)["total"])["fib"]["line"] == line
    assert "warnings: none" in info(out).stdout
