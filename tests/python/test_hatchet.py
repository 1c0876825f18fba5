"""parallax's Hatchet GraphFrames and Thickets (python/parallax/hatchet.py) on real runs: the
numbers of plx report --callpath, each function's file and line, one root per thread, the
run's metadata from plx info, and a Thicket of two runs grouped by their parameters.

Runs: examples/threads/queue.c (2 producers, 2 consumers: 5 threads) with 300 and with 600 items
per producer, and examples/mpi/life.c under mpirun -np 4 of Open MPI and of MPICH (a main
thread and 2 workers per rank)."""

import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "python"))  # this tree's package, whether or not it is installed
from components import require_module, require_tools  # noqa: E402

BIN = ROOT / "build" / "bin"
PLX = BIN / "plx"
QUEUE = ROOT / "examples" / "threads" / "queue.c"
LIFE = ROOT / "examples" / "mpi" / "life.c"
TIMEOUT = 300


def run(cmd, extra_env=(), **kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLX_") and k != "LD_PRELOAD"}
    env.update(extra_env)
    env["LC_ALL"] = "C"
    env["PLX"] = str(PLX)
    env["PYTHONPATH"] = str(ROOT / "python")  # for the examples run as programs
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                        timeout=TIMEOUT, **kw)
    assert cp.returncode == 0, "%s exited %d\n%s\n%s" % (
        " ".join(map(str, cmd)), cp.returncode, cp.stdout[-3000:], cp.stderr[-3000:])
    return cp


def report(exp):
    return json.loads(run([PLX, "report", exp, "--callpath", "--format", "json"]).stdout)


def line_of(src, pattern):
    """The line a function's code starts at, as the engine reads it from the line table at the
    function's entry address: built by plx-cc (GCC), the line of the opening brace that follows
    the definition matching `pattern` (1-based)."""
    lines = src.read_text().splitlines()
    found = [i + 1 for i, t in enumerate(lines) if re.match(pattern, t)]
    assert len(found) == 1, (pattern, found)
    assert lines[found[0]] == "{", (pattern, lines[found[0]])
    return found[0] + 1


@pytest.fixture(scope="module")
def parallax():
    require_module("pandas")
    require_module("hatchet", "Hatchet (pip install llnl-hatchet)")
    require_module("thicket", "Thicket (pip install llnl-thicket)")
    if not PLX.exists():
        pytest.fail(f"Parallax is not built (missing {PLX}): run `make all` first")
    import parallax as p
    return p


@pytest.fixture(scope="module")
def queue_runs(tmp_path_factory):
    """{items per producer: experiment} of queue.c with 2 producers and 2 consumers, and the
    UTC times just before the first run and after the last."""
    root = tmp_path_factory.mktemp("queue")
    exe = root / "queue"
    run([BIN / "plx-cc", "-O1", "-g", "-pthread", QUEUE, "-o", exe])
    before = time.time()
    out = {}
    for items in (300, 600):
        exp = root / f"queue{items}.exp"
        run([PLX, "run", "-o", exp, "--", exe, "2", "2", str(items)], cwd=root)
        out[items] = exp
    return out, (before, time.time())


# the MPI implementations: (name, compiler wrapper, launcher and the options it always gets);
# as root Open MPI's mpirun wants --allow-run-as-root and refuses more ranks than cores without
# --oversubscribe, MPICH's Hydra needs neither
MPIS = {
    "open-mpi": ("Open MPI", "mpicc", ["mpirun", "--oversubscribe"]
                 + (["--allow-run-as-root"] if os.geteuid() == 0 else [])),
    "mpich": ("MPICH", "mpicc.mpich", ["mpirun.mpich"]),
}


@pytest.fixture(scope="module", params=sorted(MPIS))
def life_run(request, tmp_path_factory):
    """life.c, 20 steps of a 64-row board, 2 workers per rank, under mpirun -np 4 of Open MPI,
    then of MPICH."""
    name, mpicc, launcher = MPIS[request.param]
    require_tools(mpicc, launcher[0], what="%s (%s, %s)" % (name, mpicc, launcher[0]))
    root = tmp_path_factory.mktemp("life-" + request.param)
    exe = root / "life"
    run([BIN / "plx-mpicc", "-O1", "-g", LIFE, "-o", exe, "-lm"], extra_env={"PLX_MPICC": mpicc})
    exp = root / "life.exp"
    run([*launcher, "-np", "4", PLX, "run", "-o", exp, "--", exe, "20", "64", "2"], cwd=root)
    return exp


def path_of(node):
    """A function node's callpath as plx report names it (its thread root left out)."""
    return tuple(n.frame["name"] for n in node.path() if n.frame["type"] == "function")


def check_against_report(gf, exp):
    """Every callpath row of every thread of plx report --callpath is the GraphFrame's row of
    that rank, thread and path, with the same calls and seconds; every other function row is
    zero."""
    doc = report(exp)
    want = {}
    for pos, p in enumerate(doc["processes"]):
        rank = p["rank"] if p["rank"] is not None else pos
        for t in p["threads"]:
            for c in t["callpaths"]:
                want[(rank, t["thread"], tuple(c["callpath"]))] = (
                    c["calls"], c["exclusive_s"], c["inclusive_s"], c["file"], c["line"])
    got = {}
    for (node, rank, thread), r in gf.dataframe.iterrows():
        # the rows of a thread that never ran the node are zeros
        if node.frame["type"] == "function" and (r["calls"], r["time (inc)"]) != (0, 0):
            got[(rank, thread, path_of(node))] = (
                r["calls"], r["time"], r["time (inc)"], r["file"], r["line"])
    assert got == want
    return doc


def test_graphframe_of_threads_is_plx_report(parallax, queue_runs):
    exp = queue_runs[0][300]
    gf = parallax.open(exp, plx=str(PLX)).to_hatchet()
    check_against_report(gf, exp)
    df = gf.dataframe
    assert list(df.index.names) == ["node", "rank", "thread"]
    assert gf.exc_metrics == ["time", "calls"] and gf.inc_metrics == ["time (inc)"]
    # 2 producers pushing 300 items each, 2 consumers popping them all
    # the threads are numbered as they start, producers and consumers in either order
    (proc,) = report(exp)["processes"]
    names = {t["thread"]: t["name"] for t in proc["threads"]}
    assert sorted(names.values()) == ["consumer", "consumer", "main", "producer", "producer"]
    push = df[df["name"] == "push"]
    assert push["calls"].groupby(level="thread").sum().to_dict() == {
        t: 300 if n == "producer" else 0 for t, n in names.items()}
    assert df[df["name"] == "pop"]["calls"].sum() >= 600


def test_graphframe_of_mpi_ranks_is_plx_report(parallax, life_run):
    gf = parallax.open(life_run, plx=str(PLX)).to_hatchet()
    check_against_report(gf, life_run)
    df = gf.dataframe.reset_index()
    assert sorted(df["rank"].unique()) == [0, 1, 2, 3]
    assert sorted(df["thread"].unique()) == [0, 1, 2]
    halos = df[(df["name"] == "exchange_halos") & (df["thread"] == 0)]
    assert sorted(halos["calls"]) == [20, 20, 20, 20]


def test_total_graphframe_is_plx_report_total(parallax, life_run):
    gt = parallax.open(life_run, plx=str(PLX)).to_hatchet(total=True).dataframe
    assert list(gt.index.names) == ["node"]
    want = {tuple(c["callpath"]): c for c in report(life_run)["total"]["callpaths"]}
    # the total table merges the threads' trees by path; the GraphFrame's nodes are per thread
    # root, so a path's total is the sum over the roots holding it
    got = {}
    for node, r in gt.iterrows():
        if node.frame["type"] == "function":
            g = got.setdefault(path_of(node), [0, 0.0, 0.0])
            g[0] += r["calls"]
            g[1] += r["time"]
            g[2] += r["time (inc)"]
    assert got.keys() == want.keys()
    for k, c in want.items():
        assert got[k][0] == c["calls"]
        assert got[k][1] == pytest.approx(c["exclusive_s"], rel=1e-12, abs=1e-15)
        assert got[k][2] == pytest.approx(c["inclusive_s"], rel=1e-12, abs=1e-15)
    # the thread roots: 4 main threads, 8 workers
    roots = {n.frame["name"]: r["calls"] for n, r in gt.iterrows() if n.frame["type"] == "thread"}
    assert sum(roots.values()) == 12


def test_frames_have_file_and_line(parallax, queue_runs, life_run):
    gf = parallax.open(queue_runs[0][300], plx=str(PLX)).to_hatchet()
    frames = {n.frame["name"]: n.frame for n in gf.graph.traverse()
              if n.frame["type"] == "function"}
    for fn, pattern in (("main", r"^int main\("), ("producer", r"^static void \*producer\("),
                        ("consumer", r"^static void \*consumer\("), ("push", r"^static void push\("),
                        ("pop", r"^static int pop\(")):
        assert frames[fn]["file"] == str(QUEUE), fn
        assert frames[fn]["line"] == line_of(QUEUE, pattern), fn
    rows = gf.dataframe.xs(0, level="thread")
    main = rows[rows["name"] == "main"]
    assert set(main["file"]) == {str(QUEUE)}
    assert set(main["line"]) == {line_of(QUEUE, r"^int main\(")}
    # plx report --callpath --format csv: the same file and line columns
    csv = run([PLX, "report", queue_runs[0][300], "--callpath", "--format", "csv"]).stdout
    header = csv.splitlines()[0].split(",")
    assert header[9:12] == ["callpath", "file", "line"]
    push = [r.split(",") for r in csv.splitlines()[1:] if ",push," in r]
    assert push and {(r[10], r[11]) for r in push} == {
        (str(QUEUE), str(line_of(QUEUE, r"^static void push\(")))}
    life = parallax.open(life_run, plx=str(PLX)).to_hatchet()
    frames = {n.frame["name"]: n.frame for n in life.graph.traverse()
              if n.frame["type"] == "function"}
    assert frames["exchange_halos"]["file"] == str(LIFE)
    assert frames["exchange_halos"]["line"] == line_of(LIFE, r"^static void exchange_halos\(")
    assert frames["life_worker"]["line"] == line_of(LIFE, r"^static void \*life_worker\(")
    # MPI routines have no source in the program
    assert frames["MPI_Allreduce"]["file"] == "" and frames["MPI_Allreduce"]["line"] == 0


def test_one_root_per_thread(parallax, queue_runs, life_run):
    # queue.c's threads are numbered as they start: producers and consumers in either order
    for exp, names in ((queue_runs[0][300], ["consumer", "consumer", "main", "producer",
                                             "producer"]),
                       (life_run, None)):
        gf = parallax.open(exp, plx=str(PLX)).to_hatchet()
        doc = report(exp)
        threads = {}
        several = 0  # threads of more than one top-level callpath in plx report
        for (node, rank, thread), r in gf.dataframe.iterrows():
            if r["calls"] > 0:
                threads.setdefault((rank, thread), []).append((node, r))
        for pos, p in enumerate(doc["processes"]):
            rank = p["rank"] if p["rank"] is not None else pos
            for t in p["threads"]:
                rows = threads[(rank, t["thread"])]
                roots = [(n, r) for n, r in rows if not n.parents]
                assert len(roots) == 1, (rank, t["thread"], [n.frame for n, _ in roots])
                node, r = roots[0]
                assert node.frame["type"] == "thread"
                assert node.frame["name"] == "<thread %s>" % t["name"]
                if names:
                    assert sorted(x["name"] for x in p["threads"]) == names
                # the root holds its thread's top-level callpaths (plx_symbols among them)
                top = [c for c in t["callpaths"] if len(c["callpath"]) == 1]
                several += len(top) > 1
                assert r["calls"] == 1 and r["time"] == 0
                assert r["time (inc)"] == pytest.approx(sum(c["inclusive_s"] for c in top),
                                                        rel=1e-12)
                assert {c.frame["name"] for c in node.children} >= {
                    c["callpath"][0] for c in top}
        # each main thread ran main and the runtime's plx_symbols at the top: two trees that
        # hang under one root
        assert several >= len(doc["processes"])
        # a graph root per distinct thread name
        assert len(gf.graph.roots) == len({t["name"] for p in doc["processes"]
                                           for t in p["threads"]})


def test_metadata_is_the_run(parallax, queue_runs, life_run):
    runs, (before, after) = queue_runs
    version = run([PLX, "--version"]).stdout.split()[-1]
    info = json.loads(run([PLX, "info", runs[300], "--format", "json"]).stdout)
    meta = parallax.open(runs[300], plx=str(PLX)).to_hatchet().metadata
    date = datetime.datetime.fromisoformat(meta["date"])
    assert before - 1 <= date.timestamp() <= after
    assert meta == {
        "experiment": str(runs[300]),
        "executable": "queue",
        "command_line": info["processes"][0]["command_line"],
        "arguments": "2 2 300",
        "ranks": 1,
        "processes": 1,
        "threads": 5,
        "host": os.uname().nodename,
        "hosts": 1,
        "date": meta["date"],
        "parallax_version": version,
    }
    assert meta["command_line"].endswith("queue 2 2 300")
    life = parallax.open(life_run, plx=str(PLX)).to_hatchet(total=True).metadata
    assert (life["executable"], life["arguments"], life["ranks"], life["processes"],
            life["threads"], life["hosts"]) == ("life", "20 64 2", 4, 4, 3, 1)


def test_thicket_groups_runs_by_their_parameters(parallax, queue_runs):
    runs = queue_runs[0]
    tk = parallax.thicket([runs[300], runs[600]], plx=str(PLX))
    assert len(tk.profile) == 2
    assert sorted(tk.metadata["arguments"]) == ["2 2 300", "2 2 600"]
    assert set(tk.metadata["threads"]) == {5}
    groups = tk.groupby("arguments")
    assert sorted(groups) == ["2 2 300", "2 2 600"]
    for args, sub in groups.items():
        assert len(sub.profile) == 1
        df = sub.dataframe
        items = int(args.split()[2])
        # each run's profile is the sum over its threads: 2 producers pushing `items` each
        assert df[df["name"] == "push"]["calls"].sum() == 2 * items
        assert df[df["name"] == "<thread producer>"]["calls"].sum() == 2
    # grouped by the number of threads: one group of both runs
    assert [len(g.profile) for g in tk.groupby("threads").values()] == [2]


def test_thicket_compare_example(parallax, queue_runs):
    runs = queue_runs[0]
    out = run([sys.executable, ROOT / "python" / "examples" / "thicket_compare.py", runs[300],
               runs[600]]).stdout
    assert "groups: '2 2 300': 1 run, '2 2 600': 1 run" in out
    push = line_of(QUEUE, r"^static void push\(")
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(f"push (queue.c:{push})")]
    assert len(rows) == 1
    # calls in each run: 600 and 1200
    assert rows[0][2:4] == ["600", "1200"]
