"""Java under plx run: the agent's method entries and exits (exact call counts and call paths,
exceptional exits), Java thread names, the user API (org.parallax.Profile), filter class rules,
the JNI call path Java -> C, and Game of Life on Open MPI's Java bindings (4 ranks x 2 worker
threads: methods and MPI calls on their Java threads, every message matched, the matrix as
sent, exports and displays); MPJ Express under plx-mpj: methods, threads and its messages as MPI
records (the same pairs as the Open MPI run of the same program), on split, created and
duplicated communicators (examples/java/mpj/CommsMpj.java, and Comms.java on Open MPI) and on an
intercommunicator (examples/java/mpj/IntercommMpj.java), with the v collectives, Probe, the
Test/Wait families and MPI.OBJECT; every JVM thread in plx info.

programs/java/JCalls.java lists its calls in its header comment; examples/java/Life.java its
calls and messages."""

import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import (
    LIBPLX,
    PLX_CC,
    PROGRAMS,
    ROOT,
    _fail_message,
    clean_env,
    plx,
    report_csv,
    report_json,
    run,
)
from components import require, require_tools

AGENT = LIBPLX.with_name("plx-agent.jar")
API = LIBPLX.with_name("parallax-api.jar")
OMPI_LIB = Path("/usr/lib/x86_64-linux-gnu/openmpi/lib")
MPI_JAR = OMPI_LIB / "mpi.jar"


def need_java():
    require_tools("java", "javac", what="a JDK (java, javac)")
    require(AGENT.is_file() and API.is_file(), "the Java agent (build/lib/plx-agent.jar)", "make java")


def jdk25():
    """The home of a JDK 25 (the image installs Temurin 25 in /usr/lib/jvm beside the default
    JDK 17): $PLX_JDK25, else the first /usr/lib/jvm/* whose `release` file says JAVA_VERSION 25."""
    need_java()
    homes = [Path(os.environ["PLX_JDK25"])] if os.environ.get("PLX_JDK25") else sorted(
        Path("/usr/lib/jvm").glob("*"))
    for home in homes:
        release = home / "release"
        if (home / "bin" / "javac").is_file() and release.is_file() and re.search(
                r'(?m)^JAVA_VERSION="25[."]', release.read_text()):
            return home
    require(False, "a JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64, or PLX_JDK25=its home)",
            "Temurin 25 from adoptium.net")
    return None


def sh(*cmd, cwd=None):
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=clean_env(), cwd=cwd)
    assert cp.returncode == 0, _fail_message(cp)
    return cp


@pytest.fixture(scope="module")
def jcalls(tmp_path_factory):
    """JCalls compiled, with its JNI library built by plx-cc (so c_helper is instrumented)."""
    need_java()
    d = tmp_path_factory.mktemp("jcalls")
    sh("javac", "-d", d, "-cp", API, PROGRAMS / "java" / "JCalls.java")
    jdk = Path(os.path.realpath(subprocess.run(["which", "javac"], capture_output=True,
                                               text=True).stdout.strip())).parents[1]
    inc = jdk / "include"
    sh(PLX_CC, "-O1", "-shared", "-fPIC", "-I%s" % inc, "-I%s" % (inc / "linux"),
       PROGRAMS / "java" / "jcalls_native.c", "-o", d / "libjcalls.so")
    return d


def run_jcalls(jcalls, out, opts=(), native=True):
    args = ["java", "-cp", "%s:%s" % (API, jcalls), "JCalls"]
    if native:
        args.append(jcalls / "libjcalls.so")
    cp = run(out, *args, opts=opts)
    assert "total " in cp.stdout
    return cp


@pytest.fixture(scope="module")
def profile_exp(jcalls):
    out = jcalls / "profile"
    run_jcalls(jcalls, out)
    return out


@pytest.fixture(scope="module")
def trace_exp(jcalls):
    out = jcalls / "trace"
    run_jcalls(jcalls, out, opts=("--trace",))
    return out


def paths(exp, thread_name):
    """{callpath: calls} of one thread (by name) in `plx report --callpath`."""
    rows = report_csv(exp, "--callpath")
    got = {}
    for r in rows:
        if r["process"] != "all" and r["thread_name"] == thread_name:
            got[r["callpath"]] = got.get(r["callpath"], 0) + int(r["calls"])
    return got


MAIN = "JCalls.main(String[])"


def expected_main_paths():
    deep = [MAIN] + ["JCalls.deep(int)"] * 4
    return {
        MAIN: 1,
        MAIN + " => setup": 1,
        MAIN + " => setup => JCalls.mid(int)": 1,
        MAIN + " => setup => JCalls.mid(int) => JCalls.leaf(int)": 1000,
        MAIN + " => compute": 3,
        MAIN + " => compute => JCalls.fib(int)": 3,
        MAIN + " => phase-A": 1,
        MAIN + " => phase-A => JCalls.catcher(int)": 1,
        MAIN + " => phase-A => JCalls.catcher(int) => JCalls.thrower(int)": 10,
        " => ".join(deep[:2]): 1,
        " => ".join(deep[:3]): 1,
        " => ".join(deep[:4]): 1,
        " => ".join(deep): 1,
        MAIN + " => JCalls.after()": 1,
        MAIN + " => JCalls$Bad.<init>()": 1,
        MAIN + " => JCalls.bits()": 1,
        MAIN + " => JCalls.viaNative(int)": 1,
        MAIN + " => JCalls.viaNative(int) => Java_JCalls_nativeSum": 1,
        MAIN + " => JCalls.viaNative(int) => Java_JCalls_nativeSum => c_helper": 1,
    }


# The C library's wait calls (docs/sockets.md): one made by the JVM itself on a Java thread,
# outside every Java method (its exit sleeps while threads in native code stop, a number of
# times of its own), is a region at the top of that thread, as every wait of a measured thread is
WAIT_CALLS = {"sleep", "usleep", "nanosleep", "clock_nanosleep", "poll", "ppoll", "select",
              "pselect", "epoll_wait", "epoll_pwait"}


def jvm_own(path):
    """Whether a call path is a wait the JVM made outside every Java method."""
    return path in WAIT_CALLS


def program_paths(got):
    """Without the runtime's own regions, the JVM's own waits and fib's deeper recursion
    (checked by total)."""
    return {p: n for p, n in got.items()
            if "plx_" not in p and not jvm_own(p) and p.count("JCalls.fib(int)") <= 1}


def test_method_calls_paths_and_exceptional_exits(profile_exp):
    got = paths(profile_exp, "main")
    assert program_paths(got) == expected_main_paths()
    # fib(10) three times: 177 calls each, whatever the depth
    assert sum(n for p, n in got.items() if p.endswith("JCalls.fib(int)")) == 3 * 177
    # the exceptions left every frame: after(), bits() are the main method's children, and a
    # constructor that threw has no children
    rows = {r["function"]: r for r in report_csv(profile_exp)
            if r["process"] == "all" and r["thread"] == "all"}
    assert int(rows["JCalls$Bad.<init>()"]["child_calls"]) == 0
    assert int(rows["JCalls.thrower(int)"]["calls"]) == 10
    assert int(rows["JCalls.deep(int)"]["calls"]) == 4
    # the JDK is not measured by default: no java.* method, no Parallax API method
    assert not [f for f in rows if f.startswith(("java.", "jdk.", "sun.", "org.parallax."))]


def test_jdk25_class_files_are_measured(jcalls, tmp_path):
    """JCalls compiled by javac 25 (class file major version 69) and run on a JDK 25: the same
    exact call counts under the same call paths as on the default JDK, and every class
    rewritten (was: the agent's ASM 9.7.1 read no class file of major 69, and the program ran
    unmeasured)."""
    home = jdk25()
    classes = tmp_path / "classes"
    sh(home / "bin" / "javac", "-d", classes, "-cp", API, PROGRAMS / "java" / "JCalls.java")
    assert (classes / "JCalls.class").read_bytes()[6:8] == (69).to_bytes(2, "big")
    out = tmp_path / "exp"
    cp = run(out, home / "bin" / "java", "-cp", "%s:%s" % (API, classes), "JCalls",
             jcalls / "libjcalls.so")
    assert "total " in cp.stdout and "left unmeasured" not in cp.stderr, cp.stderr
    assert program_paths(paths(out, "main")) == expected_main_paths()
    assert paths(out, "worker-1") == {
        "JCalls.lambda$main$0()": 1,
        "JCalls.lambda$main$0() => JCalls.mid(int)": 1,
        "JCalls.lambda$main$0() => JCalls.mid(int) => JCalls.leaf(int)": 100,
    }
    text = plx("info", out).stdout
    assert re.search(r"(?m)^  java        2 classes rewritten, 13 methods, ", text), text
    assert "could not be rewritten" not in text, text


def test_jdk25_stderr_holds_no_line_of_the_agents(jcalls, tmp_path):
    """JCalls (without its JNI library: the program loads no library itself) on a JDK 25 under
    plx run, as the JDK runs it by default and with `--illegal-native-access=deny` (what JEP 472
    announces as a later JDK's default): its exit status and standard output are the unmeasured
    run's, its standard error the unmeasured run's between the JVM's `Picked up
    JAVA_TOOL_OPTIONS` line and plx's last line, and every call is counted (was: the agent
    loaded libplx with System.load, a restricted method from JDK 24 on: by default the JVM
    printed `WARNING: A restricted method in java.lang.System has been called`, four lines
    more and an empty one into the program's standard error; with deny the agent's premain
    threw IllegalCallerException and the JVM aborted before the program's main)."""
    home = jdk25()
    for jvm_opts in ((), ("--illegal-native-access=deny",)):
        command = [home / "bin" / "java", *jvm_opts, "-cp", "%s:%s" % (API, jcalls), "JCalls"]
        plain = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                               env=clean_env())
        assert plain.returncode == 0 and plain.stdout.startswith("total "), _fail_message(plain)
        out = tmp_path / ("exp" + "".join(jvm_opts))
        cp = run(out, *command)
        assert cp.stdout == plain.stdout
        lines = cp.stderr.splitlines()
        assert lines[0].startswith("Picked up JAVA_TOOL_OPTIONS: -agentpath:"), cp.stderr
        assert lines[-1] == "plx: experiment written to %s" % out, cp.stderr
        assert lines[1:-1] == plain.stderr.splitlines(), cp.stderr
        want = {p: n for p, n in expected_main_paths().items() if "viaNative" not in p}
        assert program_paths(paths(out, "main")) == want, jvm_opts
        assert paths(out, "worker-2") == {
            "JCalls.lambda$main$0()": 1,
            "JCalls.lambda$main$0() => JCalls.mid(int)": 1,
            "JCalls.lambda$main$0() => JCalls.mid(int) => JCalls.leaf(int)": 100,
        }, jvm_opts


VT_N, VT_ROUNDS = 8, 20


def test_virtual_threads_are_locations_of_their_own(tmp_path):
    """programs/java/JVirtual.java on JDK 25: 8 virtual threads each call a -> b 20 times, b
    parking (Thread.sleep, LockSupport.parkNanos) so that others mount on its carrier meanwhile.
    Each virtual thread is a location of its own, named by its Thread name, with its exact calls
    under its exact paths, and no method of the program is on a carrier thread (was: recorded
    on the carrier, a virtual thread mounted after another's park nested inside its open frames,
    paths 24 deep here), in profile and trace mode alike."""
    home = jdk25()
    sh(home / "bin" / "javac", "-d", tmp_path, PROGRAMS / "java" / "JVirtual.java")
    run_ = "JVirtual.lambda$spawn$0(int) => JVirtual.run(int)"
    want = {"JVirtual.lambda$spawn$0(int)": 1, run_: 1, run_ + " => JVirtual.a(int)": VT_ROUNDS,
            run_ + " => JVirtual.a(int) => JVirtual.b(int)": VT_ROUNDS}
    for mode in ((), ("--trace",)):
        out = tmp_path / ("exp" + "".join(mode))
        cp = run(out, home / "bin" / "java", "-cp", tmp_path, "JVirtual", VT_N, VT_ROUNDS, opts=mode)
        assert cp.stdout == "%d virtual threads, %d rounds\n" % (VT_N, VT_ROUNDS)
        rows = [r for r in report_csv(out, "--callpath") if r["process"] != "all"]
        for i in range(VT_N):
            assert paths(out, "vt-%d" % i) == want, (mode, i)
        by_thread = {}
        for r in rows:
            by_thread.setdefault(r["thread"], set()).add(r["thread_name"])
        assert sorted(n for names in by_thread.values() for n in names if n.startswith("vt-")) == \
            ["vt-%d" % i for i in range(VT_N)]
        assert not [r for r in rows if r["function"].startswith("JVirtual.")
                    and not r["thread_name"].startswith("vt-") and r["thread_name"] != "main"], rows
        assert max(r["callpath"].count(" => ") for r in rows) <= 3
        assert "warnings: none" in plx("info", out).stdout


def test_sync_names_java_monitors_by_class_and_leaves_their_hold_unknown(tmp_path):
    """programs/java/JMonitors.java: main blocks entering the monitors of an ArrayList, an int[]
    and a JMonitors$Account, each held 100 ms by thread "holder". plx report --sync names each
    monitor by its object's class and shows its hold as unknown (JVMTI sees no monitor exit),
    and names the holders' Thread objects by their name (was: `java-monitor 0x0 (object N)`
    with hold 0 s, `thread 0x0`)."""
    need_java()
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "JMonitors.java")
    out = tmp_path / "exp"
    cp = run(out, "java", "-cp", tmp_path, "JMonitors", 100)
    assert cp.stdout == "3 monitors\n"
    rows = [r for r in report_csv(out, "--sync") if r["process"] == "all"]
    monitors = {r["object"]: r for r in rows if r["kind"] == "java-monitor"}
    assert sorted(monitors) == ["java-monitor JMonitors$Account", "java-monitor int[]",
                                "java-monitor java.util.ArrayList"], rows
    for r in monitors.values():
        assert (r["acquisitions"], r["contended"], r["hold_s"], r["site"]) == ("1", "1", "", ""), r
        assert 0.09 <= float(r["wait_s"]) < 1.0, r
    threads = [r["object"] for r in rows if r["kind"] == "thread" and "holder" in r["object"]]
    assert len(threads) == 3 and all(t.startswith("thread holder (object ") for t in threads), rows
    assert not [r for r in rows if "0x0" in r["object"]], rows
    text = plx("report", out, "--sync").stdout
    assert re.search(r"(?m)^\s+\S+ ms\s+1\s+1\s+-\s+0  java-monitor java\.util\.ArrayList$", text), text
    doc = report_json(out, "--sync")
    assert [r["hold_s"] for r in doc["total"] if r["kind"] == "java-monitor"] == [None] * 3


def test_info_reports_rewritten_classes(profile_exp):
    text = plx("info", profile_exp).stdout
    # JCalls: 12 methods with code (nativeSum is native); JCalls$Bad: its constructor
    assert re.search(r"(?m)^  java        2 classes rewritten, 13 methods, \S+ \S+ instrumenting", text), text
    assert "costliest: JCalls (12 methods" in text
    assert "not measured: JDK classes" in text


def test_java_threads_named_by_thread_getname(profile_exp):
    for w in ("worker-1", "worker-2"):
        assert paths(profile_exp, w) == {
            "JCalls.lambda$main$0()": 1,
            "JCalls.lambda$main$0() => JCalls.mid(int)": 1,
            "JCalls.lambda$main$0() => JCalls.mid(int) => JCalls.leaf(int)": 100,
        }
    names = [t["name"] for p in report_json(profile_exp)["processes"] for t in p["threads"]]
    assert names.count("worker-1") == 1 and names.count("worker-2") == 1
    # the launcher's main thread re-attaches as DestroyJavaVM: it keeps its Java name
    assert "DestroyJavaVM" not in names


def test_every_jvm_thread_listed(profile_exp):
    """The JVM's own threads appear in plx info by name, marked as running no measured code;
    the program's threads as measured."""
    text = plx("info", profile_exp).stdout
    block = text[text.index("  jvm threads "):]
    got = dict(re.findall(r"(?m)^              (\S(?:.*?\S)?)\s{2,}(measured|running no measured code)$", block))
    for name in ("Reference Handler", "Finalizer", "Signal Dispatcher", "Common-Cleaner"):
        assert got[name] == "running no measured code", block
    for name in ("main", "worker-1", "worker-2"):
        assert got[name] == "measured", block


def test_user_api_regions_phases_events(profile_exp):
    doc = report_json(profile_exp)
    events = [e for p in doc["processes"] for t in p["threads"] for e in t["user_events"]]
    assert events == [{"count": 5, "max": 5.0, "mean": 3.0, "min": 1.0, "name": "size",
                       "std_dev": pytest.approx(2 ** 0.5)}]
    got = paths(profile_exp, "main")
    assert got[MAIN + " => setup"] == 1 and got[MAIN + " => compute"] == 3
    assert got[MAIN + " => phase-A"] == 1


def test_trace_mode_same_calls_and_no_loss(trace_exp, profile_exp):
    cp = plx("report", trace_exp, "--callpath", "--format", "csv")
    assert "warning" not in cp.stderr, cp.stderr
    assert program_paths(paths(trace_exp, "main")) == expected_main_paths()
    text = plx("info", trace_exp).stdout
    assert "warnings: none" in text


FORK_D = 0.3


def test_critical_path_enters_a_java_thread_from_its_thread_start(tmp_path):
    """programs/java/JFork.java: main starts thread "worker" in startWorker (Thread.start), the
    worker sleeps D in longWork, main joins it in joinWorker (Object.wait on the Thread
    object). The critical path forks from main inside startWorker into the worker, runs
    through longWork (its CPU, and its Thread.sleep as a wait, the whole call in the trace:
    a sleep is never CPU of its caller) and comes back to main by the join at the worker's end
    (its release of its Thread object); main's wait in joinWorker is not on it. Segment times
    are the trace's own events (the Chrome export, in us)."""
    need_java()
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "JFork.java")
    exp = tmp_path / "exp"
    run(exp, "java", "-cp", tmp_path, "JFork", FORK_D, opts=["--trace"])
    chrome = tmp_path / "trace.json"
    plx("export", exp, "--format", "chrome", "-o", chrome)
    events = json.loads(chrome.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    # main: the thread running JFork.main; the worker: the one running longWork
    (pid,) = {e["pid"] for e in events if e.get("ph") == "B"}
    tid = {name: e["tid"] for e in events for name, m in (("main", "JFork.main(String[])"),
                                                          ("worker", "JFork.longWork()"))
           if e.get("ph") == "B" and e["name"] == m}
    label = {name: "%d.%d" % (pid, t) for name, t in tid.items()}

    def at(name, ph, what):
        (t,) = [e["ts"] / 1e6 for e in events
                if e.get("tid") == tid[name] and e.get("ph") == ph and e["name"] == what]
        return t

    segs = list(csv.DictReader(io.StringIO(
        plx("critical-path", exp, "--path", "--format", "csv").stdout)))
    main, worker = label["main"], label["worker"]
    kinds = [(s["kind"], s["from"], s["location"]) for s in segs]
    i = kinds.index(("fork", main, worker))
    fork, run_, sleep, after, join = segs[i:i + 5]
    # the fork: inside main's startWorker (its Thread.start)
    t = float(fork["start_s"])
    assert at("main", "B", "JFork.startWorker()") <= t <= at("main", "E", "JFork.startWorker()")
    # the worker from there to its end, then the join into main
    obj = [e["args"]["object"] for e in events if e.get("tid") == tid["main"]
           and e.get("ph") == "i" and e["name"].startswith("acquire thread")
           and e["args"]["wait_us"] > 0]
    assert len(obj) == 1, obj
    release = at("worker", "i", "release thread %d" % obj[0])
    acquire = at("main", "i", "acquire thread %d" % obj[0])
    assert (run_["kind"], run_["location"]) == ("cpu", worker), run_
    assert (sleep["kind"], sleep["location"], sleep["what"]) == ("wait", worker, "Thread.sleep")
    assert (after["kind"], after["location"]) == ("cpu", worker), after
    begin, end = at("worker", "B", "Thread.sleep"), at("worker", "E", "Thread.sleep")
    assert abs(float(run_["start_s"]) - t) <= 2e-6 and abs(float(run_["end_s"]) - begin) <= 2e-6
    assert abs(float(sleep["start_s"]) - begin) <= 2e-6 and abs(float(sleep["end_s"]) - end) <= 2e-6
    assert abs(float(after["start_s"]) - end) <= 2e-6
    # the worker's CPU runs to its release of its Thread object, or on to its end where the
    # JVM's own exit work after that release lasted until main's acquire (a fresh-clone run
    # under load: 5.9 ms)
    assert release - 2e-6 <= float(after["end_s"]) <= acquire + 2e-6, (after, release, acquire)
    assert (join["kind"], join["from"], join["location"], join["what"]) == (
        "sync", worker, main, "join " + worker), join
    assert abs(float(join["start_s"]) - float(after["end_s"])) <= 2e-6, join
    assert abs(float(join["end_s"]) - acquire) <= 2e-6, join
    # the profile: longWork's whole time in the trace on the worker (the sleep as a wait), main's
    # wait not on it
    prof = {(r["name"], r["location"]): float(r["time_s"]) for r in csv.DictReader(io.StringIO(
        plx("critical-path", exp, "--format", "csv").stdout))}
    work = at("worker", "E", "JFork.longWork()") - at("worker", "B", "JFork.longWork()")
    assert FORK_D <= work < 2 * FORK_D, work
    assert FORK_D <= end - begin < work, (begin, end)
    assert abs(prof[("Wait: Thread.sleep", worker)] - (end - begin)) <= 2e-6, prof
    assert abs(prof[("JFork.longWork()", worker)] + prof[("Wait: Thread.sleep", worker)]
               - work) <= 4e-6, prof
    assert prof.get(("JFork.joinWorker(Thread)", main), 0.0) < 0.001, prof


def test_gc_pauses_on_the_vm_thread(jcalls):
    sh("javac", "-d", jcalls, PROGRAMS / "java" / "Gc.java")
    out = jcalls / "gc"
    run(out, "java", "-Xmx64m", "-cp", jcalls, "Gc")
    rows = [r for r in report_csv(out, "--by", "thread") if r["process"] != "all"]
    gc = [r for r in rows if r["function"] == "(garbage collection)"]
    # collections are regions of the JVM's VM thread, never of the thread that allocated
    assert len(gc) == 1 and gc[0]["thread_name"] == "VM Thread" and int(gc[0]["calls"]) >= 1
    alloc = [r for r in rows if r["function"] == "Gc.alloc()"]
    assert len(alloc) == 1 and int(alloc[0]["calls"]) == 20 and alloc[0]["thread_name"] == "main"


def test_filter_class_rules_and_method_globs(jcalls):
    f = jcalls / "filter1"
    # the paper's exclude list: JDK classes measured except java/lang; BitSet is java/util
    f.write_text("include class java,JCalls\nexclude class java/lang,sun\nexclude *.leaf(int)\n")
    out = jcalls / "filtered"
    run_jcalls(jcalls, out, opts=("--filter", f), native=False)
    rows = {r["function"]: int(r["calls"]) for r in report_csv(out)
            if r["process"] == "all" and r["thread"] == "all"}
    assert rows["java.util.BitSet.set(int)"] == 8
    assert rows["java.util.BitSet.cardinality()"] == 1
    assert not [n for n in rows if n.startswith("java.lang.")]
    assert "JCalls.leaf(int)" not in rows and rows["JCalls.mid(int)"] == 3
    f2 = jcalls / "filter2"
    f2.write_text("exclude class JCalls$Bad\n")
    out2 = jcalls / "filtered2"
    run_jcalls(jcalls, out2, opts=("--filter", f2), native=False)
    rows2 = {r["function"] for r in report_csv(out2)}
    assert "JCalls$Bad.<init>()" not in rows2 and "JCalls.bits()" in rows2


def test_filter_file_class_rule_checked(jcalls):
    f = jcalls / "bad_filter"
    f.write_text("exclude class\n")
    cp = plx("run", "--filter", f, "--", "true", check=False)
    assert cp.returncode == 2 and "bad_filter:1" in cp.stderr


# ---- Open MPI's Java bindings -------------------------------------------------------------

GENS, ROWS, COLS, WORKERS = 20, 16, 32, 2


@pytest.fixture(scope="module")
def life_exp(tmp_path_factory):
    need_java()
    require_tools("mpirun", what="Open MPI (mpirun)")
    require(MPI_JAR.is_file(), "Open MPI's mpi.jar", "scripts/deps/30-java.sh")
    d = tmp_path_factory.mktemp("life")
    sh("javac", "-d", d, "-cp", MPI_JAR, ROOT / "examples" / "java" / "Life.java")
    out = d / "exp"
    cmd = ["mpirun", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", "4", str(ROOT / "build" / "bin" / "plx"), "run", "-o", str(out), "--trace",
            "--", "java", "-Djava.library.path=%s" % OMPI_LIB, "-cp", "%s:%s" % (MPI_JAR, d),
            "Life", str(GENS), str(ROWS), str(COLS), str(WORKERS)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert "live cells after 20 generations" in cp.stdout
    (d / "stdout").write_text(cp.stdout)
    return out


def test_life_methods_and_mpi_on_their_java_threads(life_exp):
    rows = [r for r in report_csv(life_exp, "--callpath", "--by", "thread") if r["process"] != "all"]
    ranks = {}
    for r in rows:
        ranks.setdefault(r["process"], []).append(r)
    assert len(ranks) == 4
    exchange = "Life.main(String[]) => Life.exchange()"
    sendrecv = exchange + (" => mpi.Comm.sendRecv(Object, int, Datatype, int, int, Object, int,"
                           " Datatype, int, int) => MPI_Sendrecv")
    per_rank_sendrecv = []
    for proc, rs in ranks.items():
        by = {}
        for r in rs:
            key = (r["thread_name"], r["callpath"])
            by[key] = by.get(key, 0) + int(r["calls"])
        assert by[("main", exchange)] == GENS
        per_rank_sendrecv.append(by.get(("main", sendrecv), 0))
        for w in range(WORKERS):
            name = "worker-%d" % w
            steps = [n for (t, p), n in by.items() if t == name and p.endswith("Life.step(int, int)")]
            assert steps == [GENS]
            # no MPI call on a worker thread
            assert not [p for (t, p) in by if t == name and "MPI_" in p]
    # edge ranks exchange with one neighbour, the middle ranks with two
    assert sorted(per_rank_sendrecv) == [GENS, GENS, 2 * GENS, 2 * GENS]


def test_life_trace_messages_matched_matrix_as_sent(life_exp):
    doc = json.loads(plx("comm", life_exp, "--by", "thread", "--format", "json").stdout)
    assert doc["source"] == "trace"
    assert doc["matched"] == 6 * GENS
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    # every message was sent and received by its rank's Java main thread
    mains = {"%d.%d" % (p["rank"], t["thread"]) for p in report_json(life_exp)["processes"]
             for t in p["threads"] if t["name"] == "main" and t["thread"] != 0}
    assert set(doc["locations"]) == mains and len(mains) == 4
    assert sum(p["messages"] for p in doc["pairs"]) == 6 * GENS
    rank_doc = json.loads(plx("comm", life_exp, "--format", "json").stdout)
    got = {(p["sender"], p["receiver"]): (p["messages"], p["bytes"]) for p in rank_doc["pairs"]}
    want = {}
    for r in range(3):
        want[(r, r + 1)] = want[(r + 1, r)] = (GENS, GENS * COLS * 4)
    assert got == want


def test_life_exports_and_display(life_exp, tmp_path):
    chrome = tmp_path / "life.json"
    plx("export", life_exp, "--format", "chrome", "-o", chrome)
    events = json.loads(chrome.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e.get("name") for e in events}
    assert {"Life.exchange()", "Life.step(int, int)", "MPI_Sendrecv"} <= names
    flows = [e for e in events if e.get("ph") == "s"]
    assert len(flows) == 6 * GENS
    sddf = tmp_path / "life.sddf"
    plx("export", life_exp, "--format", "sddf", "-o", sddf)
    assert "Life.exchange()" in sddf.read_text(errors="replace")
    # the Gantt chart: MPI time only on each rank's Java main thread, worker threads computing
    doc = report_json(life_exp)
    main_loc, worker_locs = set(), set()
    for p in doc["processes"]:
        for t in p["threads"]:
            loc = "%d.%d" % (p["rank"], t["thread"])
            if t["name"].startswith("worker-"):
                worker_locs.add(loc)
            elif t["name"] == "main" and t["thread"] != 0:
                main_loc.add(loc)
    assert len(main_loc) == 4 and len(worker_locs) == 4 * WORKERS
    cp = plx("display", life_exp, "--kind", "gantt", "--format", "csv")
    states = {}
    for line in cp.stdout.splitlines()[1:]:
        loc, state = line.split(",")[:2]
        states.setdefault(loc, set()).add(state)
    assert {loc for loc, st in states.items() if "mpi" in st} == main_loc
    assert all("computing" in states[loc] for loc in worker_locs)


PP_ITERATIONS, PP_SIZES = 20, (8, 1024, 65536)


@pytest.fixture(scope="module")
def pingpong_ompi(tmp_path_factory):
    """examples/java/PingPong.java on Open MPI's Java bindings, 2 ranks, traced."""
    need_java()
    require_tools("mpirun", what="Open MPI (mpirun)")
    require(MPI_JAR.is_file(), "Open MPI's mpi.jar", "scripts/deps/30-java.sh")
    d = tmp_path_factory.mktemp("pingpong")
    sh("javac", "-d", d, "-cp", MPI_JAR, ROOT / "examples" / "java" / "PingPong.java")
    out = d / "exp"
    cmd = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    cmd += ["-np", "2", str(ROOT / "build" / "bin" / "plx"), "run", "-o", str(out), "--trace",
            "--", "java", "-Djava.library.path=%s" % OMPI_LIB, "-cp", "%s:%s" % (MPI_JAR, d),
            "PingPong", str(PP_ITERATIONS), *(str(s) for s in PP_SIZES)]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert cp.stdout.count("per round trip") == len(PP_SIZES)
    return out


def comm_pairs(exp):
    doc = json.loads(plx("comm", exp, "--format", "json").stdout)
    return {(p["sender"], p["receiver"]): (p["messages"], p["bytes"]) for p in doc["pairs"]}


def test_pingpong_fit_on_java_mpi(pingpong_ompi):
    n = PP_ITERATIONS * len(PP_SIZES)
    doc = json.loads(plx("comm", pingpong_ompi, "--fit", "--format", "json").stdout)
    assert doc["matched"] == 2 * n
    assert doc["unmatched"]["sends"] == 0 and doc["unmatched"]["receives"] == 0
    assert [(f["sender"], f["receiver"], f["messages"]) for f in doc["fit"]] == [(0, 1, n), (1, 0, n)]
    b = PP_ITERATIONS * sum(PP_SIZES)
    assert comm_pairs(pingpong_ompi) == {(0, 1): (n, b), (1, 0): (n, b)}


# ---- MPJ Express (pure Java, started by plx-mpj) -------------------------------------------

MPJ_JARS = (Path("/usr/share/java/mpj.jar"), Path("/usr/share/java/log4j-1.2.jar"))


def need_mpj():
    need_java()
    require(all(j.is_file() for j in MPJ_JARS), "MPJ Express (libmpj-java, liblog4j1.2-java)",
            "scripts/deps/30-java.sh")
    return ":".join(str(j) for j in MPJ_JARS)


def test_mpj_pingpong_messages_as_open_mpi(tmp_path, pingpong_ompi):
    """MPJ's Send/Recv/Barrier recorded as MPI: the same program's messages and bytes per rank
    pair as on Open MPI's Java bindings, every message matched, the fit, the message lines of
    the Chrome export and the critical path."""
    cp_jars = need_mpj()
    sh("javac", "-d", tmp_path, "-cp", cp_jars, ROOT / "examples" / "java" / "mpj" / "PingPongMpj.java")
    out = tmp_path / "exp"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "2", "-o", str(out), "--trace",
         "--", "java", "-cp", "%s:%s" % (cp_jars, tmp_path), "PingPongMpj",
         str(PP_ITERATIONS), *(str(s) for s in PP_SIZES)],
        capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert cp.stdout.count("per round trip") == len(PP_SIZES)
    n, b = PP_ITERATIONS * len(PP_SIZES), PP_ITERATIONS * sum(PP_SIZES)
    assert comm_pairs(out) == comm_pairs(pingpong_ompi) == {(0, 1): (n, b), (1, 0): (n, b)}
    doc = json.loads(plx("comm", out, "--fit", "--format", "json").stdout)
    assert doc["matched"] == 2 * n
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    assert [(f["sender"], f["receiver"], f["messages"]) for f in doc["fit"]] == [(0, 1, n), (1, 0, n)]
    # MPI routines inside MPJ's methods, on the Java main thread, as MPI_Send under JNI
    rows = [r for r in report_csv(out, "--callpath", "--by", "thread") if r["process"] != "all"]
    send = "PingPongMpj.exchange(byte[], int, int, int) => mpi.Comm.Send(Object, int, int, Datatype, int, int) => MPI_Send"
    recv = "PingPongMpj.exchange(byte[], int, int, int) => mpi.Comm.Recv(Object, int, int, Datatype, int, int) => MPI_Recv"
    for path in (send, recv):
        got = [(r["thread_name"], int(r["calls"])) for r in rows if r["callpath"].endswith(path)]
        assert sorted(got) == [("main", n), ("main", n)]
    barrier = [int(r["calls"]) for r in rows if r["callpath"].endswith("mpi.Intracomm.Barrier() => MPI_Barrier")]
    assert barrier == [len(PP_SIZES)] * 2
    chrome = tmp_path / "pp.json"
    plx("export", out, "--format", "chrome", "-o", chrome)
    events = json.loads(chrome.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert len([e for e in events if e.get("ph") == "s"]) == 2 * n
    cpath = plx("critical-path", out).stdout
    assert "TOTAL LENGTH" in cpath and "PingPongMpj" in cpath


def test_mpj_life_under_plx_mpj(tmp_path, life_exp):
    cp_jars = need_mpj()
    sh("javac", "-d", tmp_path, "-cp", cp_jars, ROOT / "examples" / "java" / "mpj" / "LifeMpj.java")
    out = tmp_path / "exp"
    f = tmp_path / "filter"
    # MPJ's devices and buffers out, and of its API only the communicator class
    f.write_text("exclude class mpjdev,xdev,mpjbuf,mpi\ninclude class mpi/Comm\n")
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "4", "-o", str(out), "--filter", str(f),
         "--", "java", "-cp", "%s:%s" % (cp_jars, tmp_path), "LifeMpj",
         str(GENS), str(ROWS), str(COLS), str(WORKERS)],
        capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    # the same program on both MPI libraries computes the same grid
    ompi_line = [l for l in (life_exp.parent / "stdout").read_text().splitlines() if "live cells" in l]
    assert [l for l in cp.stdout.splitlines() if "live cells" in l] == ompi_line
    rows = [r for r in report_csv(out, "--by", "thread") if r["process"] != "all"]
    procs = {r["process"] for r in rows}
    assert len(procs) == 4
    sendrecv = []
    for proc in procs:
        mine = [r for r in rows if r["process"] == proc]
        ex = [r for r in mine if r["function"] == "LifeMpj.exchange()"]
        assert len(ex) == 1 and int(ex[0]["calls"]) == GENS and ex[0]["thread_name"] == "main"
        for w in range(WORKERS):
            st = [r for r in mine if r["function"] == "LifeMpj.step(int, int)"
                  and r["thread_name"] == "worker-%d" % w]
            assert len(st) == 1 and int(st[0]["calls"]) == GENS
        sr = [r for r in mine if r["function"].startswith("mpi.Comm.Sendrecv(")]
        assert {r["thread_name"] for r in sr} == {"main"}
        sendrecv.append(sum(int(r["calls"]) for r in sr))
    assert sorted(sendrecv) == [GENS, GENS, 2 * GENS, 2 * GENS]
    # MPJ's messages (profile mode: the statistics) as the Open MPI run's, with the filter
    # excluding MPJ's classes: the messages are recorded whatever the filter
    want = {}
    for r in range(3):
        want[(r, r + 1)] = want[(r + 1, r)] = (GENS, GENS * COLS * 4)
    assert comm_pairs(out) == comm_pairs(life_exp) == want


def test_mpj_nonblocking_and_collectives(tmp_path):
    """programs/java/MpjRing.java on 3 ranks: Irecv/Isend completed by Wait and by Waitall, one
    Bcast, Reduce, Gather, Scatter, Allgather and Alltoall, all as MPI routines and messages."""
    cp_jars = need_mpj()
    sh("javac", "-d", tmp_path, "-cp", cp_jars, PROGRAMS / "java" / "MpjRing.java")
    out = tmp_path / "exp"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "3", "-o", str(out), "--trace",
         "--", "java", "-cp", "%s:%s" % (cp_jars, tmp_path), "MpjRing"],
        capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert "ring ok" in cp.stdout
    # 10 rounds of 16 ints to the right neighbour
    assert comm_pairs(out) == {(0, 1): (10, 640), (1, 2): (10, 640), (2, 0): (10, 640)}
    text = plx("info", out).stdout
    assert ("messages in the traces: 30 matched, 0 sends never received, 0 receives without a "
            "send, 18 collective events") in text, text
    calls = {r["function"]: int(r["calls"]) for r in report_csv(out)
             if r["process"] == "all" and r["function"].startswith("MPI_")}
    assert calls == {"MPI_Init": 3, "MPI_Irecv": 30, "MPI_Isend": 30, "MPI_Wait": 30,
                     "MPI_Waitall": 15, "MPI_Bcast": 3, "MPI_Reduce": 3, "MPI_Gather": 3,
                     "MPI_Scatter": 3, "MPI_Allgather": 3, "MPI_Alltoall": 3, "MPI_Finalize": 3}
    # each rank's bytes sent and received per collective, counted as the C wrappers count them
    # (4-byte ints, 3 ranks): Bcast 16 from 0, Reduce 1 to 0, Gather 2 to 1, Scatter 3 from 2,
    # Allgather 4, Alltoall 5 per pair
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    got = {}
    for m in re.finditer(r"^\s*\d+ (\d+)\.\d+ collective (MPI_\w+)\s+comm=\S+ root=\S+ sent=(\d+) "
                         r"received=(\d+)$", text, re.M):
        got[(int(m.group(1)), m.group(2))] = (int(m.group(3)), int(m.group(4)))
    want = {}
    for r in range(3):
        want[(r, "MPI_Bcast")] = (64, 0) if r == 0 else (0, 64)
        want[(r, "MPI_Reduce")] = (4, 4 if r == 0 else 0)
        want[(r, "MPI_Gather")] = (8, 24 if r == 1 else 0)
        want[(r, "MPI_Scatter")] = (36 if r == 2 else 0, 12)
        want[(r, "MPI_Allgather")] = (16, 48)
        want[(r, "MPI_Alltoall")] = (60, 60)
    assert got == want, got


# examples/java/mpj/CommsMpj.java on 4 ranks (its header comment lists what it sends)
SPLIT_ROUNDS, PROBES, TESTS, OBJECTS = 6, 5, 4, 4


@pytest.fixture(scope="module")
def comms_mpj(tmp_path_factory):
    """CommsMpj under plx-mpj, traced: the experiment, its text export and the serialized
    length of its MPI.OBJECT messages as the program computed it."""
    cp_jars = need_mpj()
    d = tmp_path_factory.mktemp("comms-mpj")
    sh("javac", "-d", d, "-cp", cp_jars, ROOT / "examples" / "java" / "mpj" / "CommsMpj.java")
    out = d / "exp"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "4", "-o", str(out), "--trace",
         "--", "java", "-cp", "%s:%s" % (cp_jars, d), "CommsMpj"],
        capture_output=True, text=True, env=clean_env(), timeout=180)
    assert cp.returncode == 0, _fail_message(cp)
    assert "comms ok" in cp.stdout, _fail_message(cp)
    object_bytes = int(re.search(r"^object bytes (\d+)$", cp.stdout, re.M).group(1))
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    return out, text, object_bytes


EVENT = r"^\s*\d+ (\d+)\.\d+ "


def text_comms(text):
    """{token: description} of the text export's communicator legend."""
    return dict(re.findall(r"^#\s+(c\d+)\s+(.+?)\s*$", text, re.M))


def text_messages(text, kind):
    """(rank, innermost region, peer rank, tag, bytes, comm token, matched) of each send or recv
    event (the region: the MPI routine, or an MPJ method measured inside it)."""
    peer = "to" if kind == "send" else "from"
    pat = EVENT + kind + r"\s+(\S.*?)\s+%s=(\d+)(?:\.\d+)? tag=(\d+) bytes=(\d+) comm=(\S+)( msg=\d+)?$" % peer
    return [(int(r), f, int(p), int(t), int(b), c, bool(m)) for r, f, p, t, b, c, m in re.findall(pat, text, re.M)]


def test_mpj_communicators_peers_as_world_ranks(comms_mpj):
    """Messages on Split, Create and clone (Comm_dup) communicators: every one matched, peers as
    world ranks, the rank matrix and the per-communicator figures as the program sent them."""
    out, text, object_bytes = comms_mpj
    want = {(0, 2): (SPLIT_ROUNDS, SPLIT_ROUNDS * 32), (1, 3): (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
            (3, 1): (2, 2 * 40), (2, 0): (1, 24), (1, 0): (PROBES, PROBES * 24),
            (2, 3): (TESTS + 6, TESTS * 28 + 6 * 4), (0, 1): (OBJECTS, object_bytes)}
    assert comm_pairs(out) == want
    total = sum(n for n, _ in want.values())
    doc = json.loads(plx("comm", out, "--by", "thread", "--format", "json").stdout)
    assert doc["matched"] == total
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    # per communicator (the text export's sends, named by the communicator legend)
    sends, recvs = text_messages(text, "send"), text_messages(text, "recv")
    assert len(sends) == len(recvs) == total and all(m[6] for m in sends + recvs)
    per_comm = per_comm_sends(text)
    assert per_comm == {
        "comm of 2 ranks [0 2] #0": (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
        "comm of 2 ranks [1 3] #0": (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
        "comm of 2 ranks [3 1] #0": (2, 80),
        # a duplicate of MPI_COMM_WORLD: the second communicator of these members
        "comm of 4 ranks [0 1 2 3] #1": (1, 24),
        "MPI_COMM_WORLD": (PROBES + TESTS + 6 + OBJECTS,
                           PROBES * 24 + TESTS * 28 + 6 * 4 + object_bytes),
    }, per_comm
    # the Bcast in each half from its rank 1: the root as a world rank
    roots = dict(re.findall(EVENT + r"collective MPI_Bcast\s+comm=\S+ root=(\d+) ", text, re.M))
    assert roots == {"0": "2", "2": "2", "1": "3", "3": "3"}
    info = plx("info", out).stdout
    # MPI_COMM_WORLD, each rank's MPI_COMM_SELF, the two halves, {3, 1} and the duplicate
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, 9 communicator\(s\), 4 rank\(s\) traced$",
                     info), info


def per_comm_sends(text):
    """{communicator description: (messages, bytes)} of the text export's send events."""
    comms, got = text_comms(text), {}
    for _, _, _, _, b, c, _ in text_messages(text, "send"):
        n0, b0 = got.get(comms[c], (0, 0))
        got[comms[c]] = (n0 + 1, b0 + b)
    return got


# examples/java/mpj/IntercommMpj.java on 4 ranks (its header lists its messages, all with tag 1)
HALF_ROUNDS, INTER_ROUNDS, REPLIES, MERGED = 4, 5, 3, 2


def test_mpj_intercommunicator_messages_matched(tmp_path):
    """Messages on Create_intercomm's intercommunicator, its clone, its Merge and the split
    halves of the same members: each side of the intercommunicator names it by both groups
    (an InterCommDef), so every message is matched and counted on its own communicator."""
    cp_jars = need_mpj()
    sh("javac", "-d", tmp_path, "-cp", cp_jars,
       ROOT / "examples" / "java" / "mpj" / "IntercommMpj.java")
    out = tmp_path / "exp"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "4", "-o", str(out), "--trace",
         "--", "java", "-cp", "%s:%s" % (cp_jars, tmp_path), "IntercommMpj"],
        capture_output=True, text=True, env=clean_env(), timeout=180)
    assert cp.returncode == 0 and "intercomm ok" in cp.stdout, _fail_message(cp)
    want = {(0, 2): (HALF_ROUNDS, HALF_ROUNDS * 16), (1, 3): (HALF_ROUNDS, HALF_ROUNDS * 16),
            (0, 1): (INTER_ROUNDS, INTER_ROUNDS * 64), (2, 3): (INTER_ROUNDS, INTER_ROUNDS * 64),
            (1, 2): (REPLIES, REPLIES * 64), (3, 0): (REPLIES, REPLIES * 64),
            (2, 1): (1, 12), (0, 3): (MERGED, MERGED * 4)}
    assert comm_pairs(out) == want
    total = sum(n for n, _ in want.values())
    doc = json.loads(plx("comm", out, "--by", "thread", "--format", "json").stdout)
    assert doc["matched"] == total == 27
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    sends, recvs = text_messages(text, "send"), text_messages(text, "recv")
    assert len(sends) == len(recvs) == total and all(m[6] for m in sends + recvs)
    # the same per communicator from the trace's sends and from the senders' statistics
    assert per_comm_sends(text) == {
        c["name"]: (c["messages"], c["bytes"]) for c in doc["communicators"]} == {
        "comm of 2 ranks [0 2] #0": (HALF_ROUNDS, HALF_ROUNDS * 16),
        "comm of 2 ranks [1 3] #0": (HALF_ROUNDS, HALF_ROUNDS * 16),
        "intercomm of [0 2] and [1 3] #0": (2 * INTER_ROUNDS + 2 * REPLIES,
                                            (2 * INTER_ROUNDS + 2 * REPLIES) * 64),
        "intercomm of [0 2] and [1 3] #1": (1, 12),
        "comm of 4 ranks [0 2 1 3] #0": (MERGED, MERGED * 4),
    }
    info = plx("info", out).stdout
    assert re.search(r"(?m)^MPI: 4 rank\(s\) of a world of 4, 10 communicator\(s\), 4 rank\(s\) traced$",
                     info), info
    assert re.search(r"(?m)^intercommunicators: intercomm of \[0 2\] and \[1 3\] #0, "
                     r"intercomm of \[0 2\] and \[1 3\] #1$", info), info


def test_open_mpi_java_communicators_as_mpj(tmp_path, comms_mpj):
    """examples/java/Comms.java on Open MPI's Java bindings (the PMPI wrappers under JNI): the
    split halves and the duplicate of MPI_COMM_WORLD carry the same messages and collectives as
    in the MPJ Express run."""
    need_java()
    require_tools("mpirun", what="Open MPI (mpirun)")
    require(MPI_JAR.is_file(), "Open MPI's mpi.jar", "scripts/deps/30-java.sh")
    sh("javac", "-d", tmp_path, "-cp", MPI_JAR, ROOT / "examples" / "java" / "Comms.java")
    out = tmp_path / "exp"
    cmd = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    cmd += ["-np", "4", str(ROOT / "build" / "bin" / "plx"), "run", "-o", str(out), "--trace",
            "--", "java", "-Djava.library.path=%s" % OMPI_LIB, "-cp", "%s:%s" % (MPI_JAR, tmp_path),
            "Comms"]
    cp = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=180)
    assert cp.returncode == 0, _fail_message(cp)
    assert "comms ok" in cp.stdout
    want = {(0, 2): (SPLIT_ROUNDS, SPLIT_ROUNDS * 32), (1, 3): (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
            (2, 0): (1, 24)}
    assert comm_pairs(out) == want
    doc = json.loads(plx("comm", out, "--by", "thread", "--format", "json").stdout)
    assert doc["matched"] == sum(n for n, _ in want.values())
    assert doc["unmatched"] == {"sends": 0, "receives": 0, "pairs": [], "ranks_without_trace": []}
    text = plx("export", out, "--format", "text", "-o", "-").stdout
    got = per_comm_sends(text)
    assert got == {"comm of 2 ranks [0 2] #0": (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
                   "comm of 2 ranks [1 3] #0": (SPLIT_ROUNDS, SPLIT_ROUNDS * 32),
                   "comm of 4 ranks [0 1 2 3] #1": (1, 24)}, got
    mpj = per_comm_sends(comms_mpj[1])
    assert {c: v for c, v in mpj.items() if c in got} == got
    colls = {}
    for m in re.finditer(EVENT + r"collective (MPI_Bcast|MPI_Gatherv)\s+comm=\S+ root=(\S+) sent=(\d+) "
                         r"received=(\d+)$", text, re.M):
        colls[(int(m.group(1)), m.group(2))] = (m.group(3), int(m.group(4)), int(m.group(5)))
    assert colls == {**{(r, "MPI_Bcast"): (str(2 + r % 2), 16 if r >= 2 else 0, 0 if r >= 2 else 16)
                        for r in range(4)},
                     **{(r, "MPI_Gatherv"): ("0", 4 * (r + 1), 40 if r == 0 else 0) for r in range(4)}}


def test_mpj_v_collectives_bytes(comms_mpj):
    """Gatherv, Allgatherv, Scatterv, Alltoallv and Reduce_scatter as MPI collectives, each
    rank's bytes from the counts arrays (rank r contributes r + 1 ints; counts 1, 2, 3, 4)."""
    _, text, _ = comms_mpj
    got = {}
    for m in re.finditer(EVENT + r"collective (MPI_\w+)\s+comm=\S+ root=\S+ sent=(\d+) received=(\d+)$",
                         text, re.M):
        got[(int(m.group(1)), m.group(2))] = (int(m.group(3)), int(m.group(4)))
    want = {}
    for r in range(4):
        part = 4 * (r + 1)
        want[(r, "MPI_Gatherv")] = (part, 40 if r == 0 else 0)
        want[(r, "MPI_Allgatherv")] = (part, 40)
        want[(r, "MPI_Scatterv")] = (40 if r == 3 else 0, part)
        want[(r, "MPI_Alltoallv")] = (40, 4 * part)
        want[(r, "MPI_Reduce_scatter")] = (40, part)
        want[(r, "MPI_Bcast")] = (16, 0) if r >= 2 else (0, 16)
        want[(r, "MPI_Barrier")] = (0, 0)
    assert got == want, got


def test_mpj_probe_and_test_families(comms_mpj):
    """Probe then Recv; receives completed by Test, Waitany, Testall and Waitsome give their
    message events in the routine that completed them."""
    out, text, _ = comms_mpj
    recvs = text_messages(text, "recv")
    by_routine = {}
    for rank, routine, peer, tag, b, _, _ in recvs:
        key = (rank, routine, peer)
        n0, b0 = by_routine.get(key, (0, 0))
        by_routine[key] = (n0 + 1, b0 + b)
    assert by_routine[(3, "MPI_Test", 2)] == (TESTS, TESTS * 28)
    assert by_routine[(3, "MPI_Waitany", 2)] == (2, 8)
    assert by_routine[(3, "MPI_Testall", 2)] == (2, 8)
    assert by_routine[(3, "MPI_Waitsome", 2)] == (2, 8)
    assert by_routine[(0, "MPI_Recv", 1)] == (PROBES, PROBES * 24)
    probes = [int(r["calls"]) for r in report_csv(out) if r["process"] == "all" and r["function"] == "MPI_Probe"]
    assert probes == [PROBES]
    # the sends completed by Test: 2's Isends, each tested until done
    sends = [m for m in text_messages(text, "send") if m[0] == 2 and m[3] == 12]
    assert [(m[1], m[2], m[4]) for m in sends] == [("MPI_Isend", 3, 28)] * TESTS


def test_mpj_object_bytes_serialized(comms_mpj):
    """MPI.OBJECT messages count the bytes of their Java serialization, as sent and as received
    (3 by Send/Recv, the last by Isend and Irecv + Wait)."""
    out, text, object_bytes = comms_mpj
    sends = [m for m in text_messages(text, "send") if m[0] == 0 and m[3] == 20]
    recvs = [m for m in text_messages(text, "recv") if m[0] == 1 and m[3] == 20]
    assert [m[1] for m in recvs] == ["MPI_Recv"] * (OBJECTS - 1) + ["MPI_Wait"]
    assert len(sends) == OBJECTS and all(m[2] == 1 and m[4] > 0 for m in sends)
    assert [m[4] for m in sends] == [m[4] for m in recvs]
    assert sum(m[4] for m in sends) == object_bytes
    # the statistics by routine, as sent and as received
    stats = {}
    for p in report_json(out, "--by", "process")["processes"]:
        for m in p["mpi"]["messages"] if p.get("mpi") else []:
            if (p["rank"], m["peer"]) in ((0, 1), (1, 0)):
                stats[(p["rank"], m["routine"], m["direction"])] = (m["count"], m["bytes"])
    last = sends[-1][4]
    assert stats == {(0, "MPI_Send", "sent"): (OBJECTS - 1, object_bytes - last),
                     (0, "MPI_Isend", "sent"): (1, last),
                     (1, "MPI_Send", "sent"): (PROBES, PROBES * 24),
                     (0, "MPI_Recv", "received"): (PROBES, PROBES * 24),
                     (1, "MPI_Recv", "received"): (OBJECTS - 1, object_bytes - last),
                     # a completed receive counts under the routine that posted it, as in C
                     (1, "MPI_Irecv", "received"): (1, last)}, stats


def test_life_under_plx_run_of_mpirun(life_exp, tmp_path):
    """`plx run -- mpirun -np 4 java ...`: Open MPI's launcher adds mpi.jar and the library path
    itself; the agent and the MPI wrappers reach every rank through the environment."""
    classes = life_exp.parent
    out = tmp_path / "exp"
    launcher = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    run(out, *launcher, "-np", "4", "java", "-cp", classes, "Life", GENS, ROWS, COLS, WORKERS)
    rank_doc = json.loads(plx("comm", out, "--format", "json").stdout)
    got = {(p["sender"], p["receiver"]): p["messages"] for p in rank_doc["pairs"]}
    assert got == {(r, r + d): GENS for r in range(4) for d in (-1, 1) if 0 <= r + d < 4}
    rows = [r for r in report_csv(out) if r["process"] == "all" and r["function"] == "Life.exchange()"]
    assert len(rows) == 1 and int(rows[0]["calls"]) == 4 * GENS


@pytest.fixture(scope="module")
def jsoe(tmp_path_factory):
    need_java()
    d = tmp_path_factory.mktemp("jsoe")
    sh("javac", "-d", d, PROGRAMS / "java" / "JSoe.java")
    return d


@pytest.mark.parametrize("mode", ["profile", "trace"])
def test_caught_stack_overflow_and_exceptions_leave_no_frame_open(jsoe, mode):
    """programs/java/JSoe.java: a StackOverflowError caught above the recursion, an ordinary
    exception thrown through 4 frames 6 times; later calls are the catching methods' children."""
    out = jsoe / mode
    cp = run(out, "java", "-cp", jsoe, "JSoe", opts=("--trace",) if mode == "trace" else ())
    depth = int(re.search(r"^depth (\d+)", cp.stdout, re.M).group(1))
    self_depth = int(re.search(r"^self depth (\d+)", cp.stdout, re.M).group(1))
    assert "caught 11" in cp.stdout
    rows = report_csv(out, "--callpath")
    got = {}
    for r in rows:
        if r["process"] != "all" and "plx_" not in r["callpath"] and not jvm_own(r["callpath"]):
            key = (r["thread_name"], r["callpath"])
            got[key] = got.get(key, 0) + int(r["calls"])
    main, catcher, leaf = "JSoe.main(String[])", "JSoe.catcher()", "JSoe.leaf(int)"
    thrower = [main, catcher] + ["JSoe.thrower(int)"] * 4
    expected = {
        ("main", main): 1,
        ("main", main + " => " + catcher): 1,
        ("main", main + " => " + catcher + " => " + leaf): 6,
        ("main", main + " => " + leaf): 5,
        ("deep", "JSoe.deepThread()"): 1,
        ("deep", "JSoe.deepThread() => JSoe.overflow()"): 1,
        ("deep", "JSoe.deepThread() => JSoe.overflow() => " + leaf): 1,
        ("deep", "JSoe.deepThread() => " + leaf): 5,
    }
    for k in range(3, 7):
        expected[("main", " => ".join(thrower[:k]))] = 6
    recurse = "JSoe.deepThread() => JSoe.overflow()"
    for _ in range(depth):
        recurse += " => JSoe.recurse()"
        expected[("deep", recurse)] = 1
    # the recursion that catches its own overflow: one call per level, the later calls under
    # selfThread
    expected[("self", "JSoe.selfThread()")] = 1
    expected[("self", "JSoe.selfThread() => " + leaf)] = 5
    selfpath = "JSoe.selfThread()"
    for _ in range(self_depth):
        selfpath += " => JSoe.selfCatch()"
        expected[("self", selfpath)] = 1
    assert got == expected


def test_jvm_started_by_a_script_is_measured(jcalls):
    """plx run -- ./run.sh where the script execs java: the JVM gets the agent all the same
    (JAVA_TOOL_OPTIONS), with the exact calls of a JVM named on the command line."""
    script = jcalls / "run.sh"
    script.write_text(
        "#!/bin/sh\nexec java -cp %s:%s JCalls %s\n" % (API, jcalls, jcalls / "libjcalls.so")
    )
    script.chmod(0o755)
    out = jcalls / "script"
    cp = run(out, script)
    assert "total " in cp.stdout
    assert "Picked up JAVA_TOOL_OPTIONS: -agentpath:" in cp.stderr
    assert program_paths(paths(out, "main")) == expected_main_paths()


def test_sampled_jit_methods_named_with_their_thread_cpu_time(tmp_path):
    # JitSpin's two hot methods spin known CPU times (ThreadMXBean) on two threads, not
    # rewritten by the agent (the filter): the samples alone find them, in compiled code the
    # JVM made at run time, named by the agent's JitCode records
    need_java()
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "JitSpin.java")
    f = tmp_path / "filter"
    f.write_text("exclude class JitSpin\n")
    out = tmp_path / "exp"
    cp = run(out, "java", "-cp", tmp_path, "JitSpin", "800", "500",
             opts=("--sample=1000", "--filter", f))
    truth = {(t, m): float(s) for t, m, s in
             re.findall(r"^truth (\S+) (\S+) ([0-9.]+)$", cp.stdout, re.M)}
    assert sorted(truth) == [("alpha-thread", "spinAlpha"), ("beta-thread", "spinBeta")], cp.stdout
    rows = [r for r in report_csv(out, "--callpath") if r["thread"] != "all" and r["process"] != "all"]
    for (thread, method), seconds in truth.items():
        name = "JitSpin.%s(long)" % method
        own = [r for r in rows if r["callpath"].split(" => ")[-1] == name]
        assert own and all(r["estimated"] == "1" for r in own)
        # every sampled frame of the method is on its own thread
        assert {r["thread_name"] for r in own} == {thread}, own
        estimated = sum(float(r["exclusive_s"]) for r in own)
        assert abs(estimated - seconds) <= 0.15 * seconds, "%s: estimated %.4f s, truth %.4f s" % (
            name, estimated, seconds)
    assert not [r for r in rows if r["callpath"].split(" => ")[-1].startswith("[jit:")]
    text = plx("info", out).stdout
    assert re.search(r"jvm code    \d+ compiled methods \(\d+ freed\), \d+ pieces of code", text), text


def test_sampled_jit_frames_name_the_methods_inlined_there(tmp_path):
    # JitInlined.mix is inlined by C2 into spin's loop (PrintInlining says so); mix ends in a call
    # of next, kept out of line, an instruction the compiler records with mix inlined there. The
    # samples in spin's compiled code then read `spin => mix` (JitInline records), mix with its
    # file and a line of its body, and carry most of spin's CPU time: mix is three of the loop's
    # four statements (the rest: the loop's counter, the call of next, next itself, named apart)
    # 0.6: the first recorded instruction after a sampled one may be the loop's own (its
    # counter and test): measured 0.88 of spin's time, 0.6 leaves the load's spread room
    need_java()
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "JitInlined.java")
    f = tmp_path / "filter"
    f.write_text("exclude class JitInlined\n")
    out = tmp_path / "exp"
    cp = run(out, "java", "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,JitInlined.next",
             "-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintInlining", "-cp", tmp_path, "JitInlined", "1000",
             opts=("--sample=1000", "--filter", f))
    assert re.search(r"JitInlined::mix \(\d+ bytes\)\s+inline \(hot\)", cp.stdout), cp.stdout[-3000:]
    truth = float(re.search(r"^truth spin-thread spin ([0-9.]+)$", cp.stderr, re.M).group(1))
    rows = [r for r in report_csv(out, "--callpath") if r["thread"] != "all" and r["process"] != "all"]
    # a sample in the JVM's code is not unwound (its frames have no unwind information): the
    # compiled method is the root of the thread's sampled tree
    inlined = [r for r in rows if r["callpath"] == "JitInlined.spin(long) => JitInlined.mix(long)"]
    assert inlined and all(r["estimated"] == "1" for r in inlined), [r["callpath"] for r in rows][:40]
    assert {r["thread_name"] for r in inlined} == {"spin-thread"}
    src = (PROGRAMS / "java" / "JitInlined.java").read_text().splitlines()
    body = range(src.index("    static long mix(long x) {") + 1, src.index("        return next(x ^ (x >>> 17));") + 2)
    assert all(r["file"].endswith("JitInlined.java") and int(r["line"]) in body for r in inlined), inlined
    mix = sum(float(r["inclusive_s"]) for r in inlined)
    assert 0.6 * truth <= mix <= 1.1 * truth, "spin => mix: %.4f s of spin's %.4f s" % (mix, truth)


def test_mpj_critical_path_runs_through_an_isend_rendezvous(tmp_path):
    """programs/java/MpjRendezvous.java under MPJ Express (plx-mpj, 3 ranks), as
    examples/critpath/rendezvous.c under C MPI: in phase work rank 1 computes 0.5 s before it
    posts the Irecv of rank 0's 1 MiB Isend (niodev's rendezvous), whose Request.Wait returns
    only then; rank 0 computes 0.1 s after it. The phase's path: rank 1's computeLate, an arc
    from rank 1 into rank 0 (niodev's stream into the selector thread's epoll_wait, which those
    bytes woke), rank 0's computeAfter; never the selector's epoll_wait as time (was: 0.5 s of
    `Wait: epoll_wait` with no partner on the path instead of rank 1's computation)."""
    cp_jars = need_mpj() + ":" + str(API)
    sh("javac", "-d", tmp_path, "-cp", cp_jars, PROGRAMS / "java" / "MpjRendezvous.java")
    out = tmp_path / "exp"
    cp = subprocess.run(
        [str(ROOT / "build" / "bin" / "plx-mpj"), "-np", "3", "-o", str(out), "--trace",
         "--", "java", "-cp", "%s:%s" % (cp_jars, tmp_path), "MpjRendezvous", "0.5", "0.1"],
        capture_output=True, text=True, env=clean_env(), timeout=120)
    assert cp.returncode == 0, _fail_message(cp)
    assert "rendezvous ok" in cp.stdout
    doc = json.loads(plx("critical-path", out, "--phase", "work", "--path", "--format",
                         "json").stdout)
    items = {(i["location"], i["name"]): i["time_s"] for i in doc["items"]}
    # busy(double) on both threads (item location ALL): 0.5 s on rank 1, then 0.1 s on rank 0
    # (less a few ms the path spends in the calls busy makes: 0.5957 s in a fresh-clone run)
    assert items.get(("ALL", "MpjRendezvous.busy(double)"), 0.0) >= 0.58, items
    cpu = {}
    for s in doc["path"]:
        if s["kind"] == "cpu":
            cpu[s["location"]] = cpu.get(s["location"], 0.0) + s["time_s"]
    assert cpu.get("1.1", 0.0) >= 0.5 and cpu.get("0.1", 0.0) >= 0.1, doc["path"]
    arcs = [(s["location"], s.get("from"), s["what"]) for s in doc["path"] if s["kind"] == "msg"]
    assert any(to.startswith("0.") and src.startswith("1.") for to, src, _ in arcs), arcs
    waits = sum(s["time_s"] for s in doc["path"] if s["kind"] == "wait")
    assert waits < 0.05, doc["path"]


def test_a_class_the_agent_cannot_rewrite_is_a_warning(tmp_path):
    """A class file the agent cannot rewrite (major version 99, which no JVM and no ASM reads) leaves its methods unmeasured: plx info warns, naming the class (was: only a
    line on standard error, and `warnings: none`)."""
    need_java()
    newer = tmp_path / "newer"
    newer.mkdir()
    (tmp_path / "Newer.java").write_text("public class Newer { public static int f() { return 1; } }\n")
    sh("javac", "-d", newer, tmp_path / "Newer.java")
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "LoadNewer.java")
    cls = newer / "Newer.class"
    b = bytearray(cls.read_bytes())
    b[6:8] = (99).to_bytes(2, "big")
    cls.write_bytes(bytes(b))
    out = tmp_path / "exp"
    cp = run(out, "java", "-cp", tmp_path, "LoadNewer", newer)
    assert cp.stdout == "refused\n"
    assert "plx: class Newer left unmeasured: " in cp.stderr, cp.stderr
    text = plx("info", out).stdout
    assert re.search(r"(?m)^  \S+/process\.plx: 1 Java classes could not be rewritten, their "
                     r"methods are not measured: Newer \(the JVM's standard error said why", text), text


def test_a_thread_renamed_after_it_started_has_its_last_name(tmp_path):
    """programs/java/JRename.java: a thread calls Thread.setName after it started (a name longer
    than the 15 characters of a native name): its rows carry that name, not `Thread-0`, and the
    launcher's main thread stays `main`."""
    need_java()
    sh("javac", "-d", tmp_path, PROGRAMS / "java" / "JRename.java")
    out = tmp_path / "exp"
    cp = run(out, "java", "-cp", tmp_path, "JRename")
    assert cp.stdout == "worker was named renamed-worker-with-a-long-name, 3 calls\n"
    rows = [r for r in report_csv(out) if r["function"] == "JRename.work()" and r["thread"] != "all"]
    assert [(r["thread_name"], r["calls"]) for r in rows] == [
        ("renamed-worker-with-a-long-name", "3")], rows
    names = {r["thread_name"] for r in report_csv(out) if r["thread"] != "all"}
    assert "main" in names and "Thread-0" not in names and "DestroyJavaVM" not in names, names
