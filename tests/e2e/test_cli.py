"""The plx command line: exit statuses, the default output directory, options and help."""

import datetime
import re
import shutil
import subprocess

import pytest

from conftest import DOCS, LIBPLX, PLX, calls, clean_env, plx, report_csv, run


def test_exit_status_of_false(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", "--", "false", check=False)
    assert cp.returncode == 1
    assert "experiment written to" in cp.stderr


def test_exit_status_passed_through(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", "--", "sh", "-c", "exit 7", check=False)
    assert cp.returncode == 7
    assert "killed by signal" not in cp.stderr


def test_killed_by_signal_status(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", "--", "sh", "-c", "kill -TERM $$", check=False)
    assert cp.returncode == 128 + 15
    assert "killed by signal 15 (SIGTERM)" in cp.stderr


def test_program_not_found(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", "--", tmp_path / "no-such-program", check=False)
    assert cp.returncode == 127
    assert "no-such-program" in cp.stderr


def test_program_not_executable(tmp_path):
    prog = tmp_path / "not-executable"
    prog.write_text("#!/bin/sh\nexit 0\n")
    prog.chmod(0o644)
    cp = plx("run", "-o", tmp_path / "e", "--", prog, check=False)
    assert cp.returncode == 126
    assert "not-executable" in cp.stderr


def test_default_output_directory(fib_bin, tmp_path):
    before = datetime.datetime.now().replace(microsecond=0)
    cp = plx("run", "--", fib_bin, cwd=tmp_path)
    after = datetime.datetime.now()
    dirs = [d.name for d in tmp_path.iterdir()]
    assert len(dirs) == 1, dirs
    m = re.fullmatch(r"plx-%s-(\d{8}-\d{6})" % re.escape(fib_bin.name), dirs[0])
    assert m, dirs[0]
    stamp = datetime.datetime.strptime(m.group(1), "%Y%m%d-%H%M%S")
    assert before - datetime.timedelta(seconds=1) <= stamp <= after, (stamp, before, after)
    assert "experiment written to %s" % dirs[0] in cp.stderr
    assert calls(report_csv(tmp_path / dirs[0]), "fib") == 21891


def test_output_parents_created(fib_bin, tmp_path):
    out = tmp_path / "a" / "b" / "c"
    run(out, fib_bin)
    assert calls(report_csv(out), "fib") == 21891


def test_options_after_the_command_belong_to_it(tmp_path):
    argsfile = tmp_path / "args"
    out = tmp_path / "e"
    plx("run", "-o", out, "sh", "-c", 'echo "$@" > %s' % argsfile, "sh", "--trace", "-o", "x")
    assert argsfile.read_text().split() == ["--trace", "-o", "x"]
    assert not list(out.glob("*/trace.plx"))


def test_environment_given_to_the_program(tmp_path):
    filt = tmp_path / "f.filter"
    filt.write_text("exclude nothing_*\n")
    envfile = tmp_path / "env"
    plx(
        "run", "-o", "rel-exp", "--trace", "--buffer", "64K", "--filter", "f.filter", "--",
        "sh", "-c", 'env > %s' % envfile,
        cwd=tmp_path, env={"LD_PRELOAD": ""},
    )
    env = dict(line.split("=", 1) for line in envfile.read_text().splitlines() if "=" in line)
    assert env["PLX_OUTPUT"] == str(tmp_path / "rel-exp")
    assert env["PLX_TRACE"] == "1"
    assert env["PLX_BUFFER"] == "65536"
    assert env["PLX_FILTER"] == str(filt)
    assert env["LD_PRELOAD"].split(":")[0] == str(LIBPLX.resolve())


def test_existing_ld_preload_kept(tmp_path):
    envfile = tmp_path / "env"
    other = "/nonexistent-but-harmless.so"
    cp = plx(
        "run", "-o", tmp_path / "e", "--", "sh", "-c", 'echo "$LD_PRELOAD" > %s' % envfile,
        env={"LD_PRELOAD": other}, check=False,
    )
    assert cp.returncode == 0, cp.stderr
    assert envfile.read_text().strip().split(":") == [str(LIBPLX.resolve()), other]


@pytest.mark.parametrize(
    "size,message",
    [("12Q", "unknown unit"), ("1K", "4K"), ("abc", "abc")],
)
def test_invalid_buffer_size(tmp_path, size, message):
    marker = tmp_path / "ran"
    cp = plx("run", "-o", tmp_path / "e", "--buffer", size, "--", "touch", marker, check=False)
    assert cp.returncode == 2
    assert message in cp.stderr
    assert not marker.exists()


@pytest.mark.parametrize("size,bytes_", [("4K", 4096), ("4KiB", 4096), ("1M", 1 << 20), ("8192", 8192)])
def test_buffer_sizes(tmp_path, size, bytes_):
    envfile = tmp_path / "env"
    plx("run", "-o", tmp_path / "e", "--buffer", size, "--", "sh", "-c", 'echo $PLX_BUFFER > %s' % envfile)
    assert envfile.read_text().strip() == str(bytes_)


def test_runtime_library_missing(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shutil.copy(PLX, bindir / "plx")
    marker = tmp_path / "ran"
    cmd = [str(bindir / "plx"), "run", "-o", str(tmp_path / "e"), "--", "touch", str(marker)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
    assert cp.returncode == 2
    assert "libplx.so" in cp.stderr
    assert not marker.exists()
    # PLX_LIB_DIR names the directory to find it in
    cp = subprocess.run(
        cmd, capture_output=True, text=True, env=clean_env({"PLX_LIB_DIR": LIBPLX.parent})
    )
    assert cp.returncode == 0, cp.stderr
    assert marker.exists()


def test_sigint_ignored_by_plx(tmp_path):
    """plx ignores SIGINT while the program runs, and still reports its exit status."""
    cp = plx(
        "run", "-o", tmp_path / "e", "--", "sh", "-c", "kill -INT $PPID; sleep 0.2; exit 5",
        check=False,
    )
    assert cp.returncode == 5
    assert "experiment written to" in cp.stderr


def test_missing_command(tmp_path):
    cp = plx("run", "-o", tmp_path / "e", check=False)
    assert cp.returncode == 2
    assert "CMD" in cp.stderr or "command" in cp.stderr.lower()


@pytest.mark.parametrize(
    "args",
    [("--bogus",), ("report", "--bogus", "x"), ("info", "--bogus", "x"), ("report", "x", "--format", "xml")],
    ids=["plx", "report", "info", "format"],
)
def test_unknown_option(args):
    cp = plx(*args, check=False)
    assert cp.returncode == 2
    assert args[-1] in cp.stderr or args[1] in cp.stderr


def test_unknown_run_option_is_an_error(tmp_path):
    cp = plx("run", "--bogus", "-o", tmp_path / "e", "--", "true", check=False)
    assert cp.returncode != 0
    assert "--bogus" in cp.stderr


def test_unknown_run_option_is_a_usage_error(tmp_path):
    marker = tmp_path / "ran"
    cp = plx("run", "--bogus", "-o", tmp_path / "e", "--", "touch", marker, check=False)
    assert cp.returncode == 2, cp.stderr
    assert "--bogus" in cp.stderr
    assert not marker.exists()
    assert "No such file or directory" not in cp.stderr


def doc_options(page):
    """The options of a docs/commands page's Options table: ['-o', '--output', '--trace', ...]
    and the values named with them (`--by thread` gives '--by' and 'thread')."""
    text = (DOCS / "commands" / page).read_text()
    section = text.split("## Options", 1)[1].split("\n## ", 1)[0]
    opts, values = set(), set()
    for line in section.splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if not m:
            continue
        for part in m.group(1).split(","):
            words = part.split()
            opts.add(words[0])
            for w in words[1:]:
                if w.islower() and w.isalpha():
                    values.add(w)
    return opts, values


def test_docs_list_options():
    run_opts, _ = doc_options("plx-run.md")
    assert {"-o", "--output", "--trace", "--filter", "--buffer", "--help"} <= run_opts
    report_opts, values = doc_options("plx-report.md")
    assert {"--by", "--callpath", "--gprof", "--format", "--phase"} <= report_opts
    assert {"thread", "process", "text", "json", "csv"} <= values


@pytest.mark.parametrize("page,command", [("plx-run.md", "run"), ("plx-report.md", "report")])
def test_help_mentions_documented_options(page, command):
    opts, values = doc_options(page)
    cp = plx(command, "--help")
    for opt in sorted(opts | values):
        assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), cp.stdout), (opt, cp.stdout)


def test_top_level_help():
    cp = plx("--help")
    # every page but the compiler wrappers' (plx-cc.md) is a subcommand
    commands = sorted(
        p.stem[len("plx-"):] for p in (DOCS / "commands").glob("plx-*.md") if p.stem != "plx-cc"
    )
    assert {"run", "report", "info", "comm", "export"} <= set(commands), commands
    for command in commands:
        assert re.search(r"^\s+%s\s" % command, cp.stdout, re.M), (command, cp.stdout)
    assert "--help" in cp.stdout and "--version" in cp.stdout
    assert "DIR" in plx("info", "--help").stdout


def test_version_matches_written_by(fib_bin, tmp_path):
    version = plx("--version").stdout.split()[-1]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    out = tmp_path / "e"
    run(out, fib_bin)
    assert re.search(r"written by\s+parallax %s\b" % re.escape(version), plx("info", out).stdout)




def help_flags(command):
    """The flags `plx COMMAND --help` lists: {'-o', '--output', '--trace', ..., '--help'}."""
    text = plx(command, "--help").stdout.split("Options:", 1)[1]
    flags = set()
    for line in text.splitlines():
        m = re.match(r"\s+(?:(-\w), )?(--[\w-]+)", line)
        if m:
            flags |= {f for f in m.groups() if f}
    return flags


def test_every_run_flag_is_documented_and_every_documented_flag_exists():
    """Both ways: `plx run --help` and the Options table of docs/commands/plx-run.md list the
    same flags (those setting PLX_* variables come from runtime/src/core/options.def)."""
    documented, _ = doc_options("plx-run.md")
    flags = help_flags("run")
    assert {"-o", "--output", "--trace", "--filter", "--buffer", "--clock", "--cpu-sample",
            "--session", "--app", "-h", "--help"} <= flags
    assert flags == documented


def subcommands():
    """The commands `plx --help` lists (the hidden `generate` is not among them)."""
    text = plx("--help").stdout.split("Commands:", 1)[1].split("Options:", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s", text, re.M) if m.group(1) != "help"]


def test_man_pages_name_every_flag_and_completions_are_made(tmp_path):
    """`plx generate DIR` (what `make` runs): a man page per command naming every flag of its
    `--help`, and completions for bash, zsh and fish that know the commands and their flags."""
    plx("generate", tmp_path)
    man = tmp_path / "man" / "man1"
    commands = subcommands()
    assert {"run", "report", "info", "histogram", "session"} <= set(commands)
    assert "generate" not in commands
    pages = {p.name for p in man.iterdir()}
    assert "plx.1" in pages and "plx-generate.1" not in pages
    for command in commands:
        page = man / ("plx-%s.1" % command)
        assert page.is_file(), (command, sorted(pages))
        roff = page.read_text()
        assert roff.startswith(".ie"), command
        text = re.sub(r"\\f[BRIP]", "", roff).replace("\\-", "-")
        for flag in help_flags(command):
            assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(flag), text), (command, flag)
    for sub in ("list", "add"):
        assert (man / ("plx-session-%s.1" % sub)).is_file()
    bash = (tmp_path / "bash-completion" / "completions" / "plx").read_text()
    zsh = (tmp_path / "zsh" / "site-functions" / "_plx").read_text()
    fish = (tmp_path / "fish" / "vendor_completions.d" / "plx.fish").read_text()
    assert "complete -F _plx" in bash and zsh.startswith("#compdef plx")
    for text in (bash, zsh, fish):
        for command in commands:
            assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(command), text), command
        assert "--phase" in text or "-l phase" in text
        assert "--counters" in text or "-l counters" in text


def test_make_install_installs_what_make_built_without_building(tmp_path):
    """`make install PREFIX=...` copies build/ (programs, libraries, man pages, completions)
    and runs no build step: its commands name no compiler or build tool."""
    repo = DOCS.parent
    if not (repo / "build" / "share" / "man" / "man1" / "plx-report.1").is_file():
        pytest.fail("build/share is missing: run make first")
    dry = subprocess.run(["make", "-n", "install", "PREFIX=%s" % tmp_path], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    for tool in ("cargo", "ninja", "cmake", "npm", "mvn", "esbuild"):
        assert tool not in dry, (tool, dry)
    subprocess.run(["make", "install", "PREFIX=%s" % tmp_path], cwd=repo, capture_output=True,
                   text=True, check=True)
    for f in ("bin/plx", "bin/plx-cc", "lib/libplx.so", "include/plx.h",
              "share/man/man1/plx.1", "share/man/man1/plx-report.1",
              "share/bash-completion/completions/plx", "share/zsh/site-functions/_plx",
              "share/fish/vendor_completions.d/plx.fish"):
        assert (tmp_path / f).is_file(), f
    cp = subprocess.run([tmp_path / "bin" / "plx", "--version"], capture_output=True, text=True)
    assert cp.returncode == 0 and cp.stdout.startswith("plx ")
