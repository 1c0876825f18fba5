"""Frames that leave without their exit hook: C++ exceptions (Clang calls no exit hook in the
frames a throw unwinds), longjmp, pthread_exit and cancellation, under GCC and Clang, profile
and trace mode. Every later call is a child of the function that made it, counts are exact, and
an abandoned frame ends when its thread went on (or ended)."""

import pytest

from conftest import TOOLCHAINS, paths_of, run

MODES = {"profile": (), "trace": ("--trace",)}

# unwind.cpp
THROWS, DEPTH = 6, 4
# unwind_jmp.c
JUMPS, JUMP_DEPTH = 5, 3
WAIT_S = 0.060  # exit_inner and cancel_inner each wait 60 ms before their thread ends


@pytest.fixture(scope="module", params=sorted(TOOLCHAINS))
def toolchain(request):
    return request.param


@pytest.fixture(scope="module", params=sorted(MODES))
def mode(request):
    return request.param


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3", "-Os"])
def test_exceptions_close_the_frames_they_unwind(programs, toolchain, mode, opt, tmp_path):
    prog = programs.get("unwind.cpp", opt, cxx=True, toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, opts=MODES[mode])
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    expected = {("main",): 1, ("main", "catcher()"): 1, ("main", "after(int)"): 1}
    expected[("main", "catcher()", "after(int)")] = THROWS
    dive = ("main", "catcher()")
    for _ in range(DEPTH):
        dive += ("dive(int)",)
        expected[dive] = THROWS
    assert calls == expected


def test_exceptions_through_frames_deeper_than_the_stack(programs, toolchain, mode, tmp_path):
    """40 frames thrown through with PLX_MAX_DEPTH=16: the calls below the 16th are lost (and
    counted), and after each catch the calls are the catcher's children again."""
    prog = programs.get("unwind.cpp", "-O0", cxx=True, toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, "40", opts=MODES[mode], env={"PLX_MAX_DEPTH": 16})
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    expected = {("main",): 1, ("main", "catcher()"): 1, ("main", "after(int)"): 1}
    expected[("main", "catcher()", "after(int)")] = THROWS
    dive = ("main", "catcher()")
    for _ in range(14):
        dive += ("dive(int)",)
        expected[dive] = THROWS
    assert calls == expected


def test_longjmp_pthread_exit_and_cancel_close_their_frames(programs, toolchain, mode, tmp_path):
    prog = programs.get("unwind_jmp.c", "-O0", "-pthread", toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, opts=MODES[mode])
    paths = paths_of(out)
    calls = {p: c for p, (c, _) in paths.items()}
    expected = {("main",): 1, ("main", "jumper"): 1, ("main", "after"): 1}
    expected[("main", "jumper", "after")] = JUMPS
    sink = ("main", "jumper")
    for _ in range(JUMP_DEPTH):
        sink += ("sink",)
        expected[sink] = JUMPS
    for start, outer, inner in (
        ("exiter", "exit_outer", "exit_inner"),
        ("cancelled", "cancel_outer", "cancel_inner"),
    ):
        expected[(start,)] = 1
        expected[(start, outer)] = 1
        expected[(start, outer, inner)] = 1
        # the 60 ms wait the thread ends in: a wait region (adapters/wait.c), closed when
        # pthread_exit or the cancellation ends the thread
        expected[(start, outer, inner, "nanosleep")] = 1
    expected[("main", "nanosleep")] = 1
    assert calls == expected
    # the frames a pthread_exit or a cancellation left end when their thread ends: after the
    # 60 ms wait (not at the thread's last event, the entry of the innermost one)
    for path in (("exiter", "exit_outer", "exit_inner"), ("cancelled", "cancel_outer", "cancel_inner")):
        for k in range(1, 4):
            assert paths[path[:k]][1] >= WAIT_S - 0.001, (path[:k], paths[path[:k]])


@pytest.mark.parametrize("opt", ["-O1", "-O2", "-O3", "-Os"])
def test_exceptions_through_inlined_frames(programs, toolchain, mode, opt, tmp_path):
    """cxx.cpp at -O1 to -O3 and -Os: Clang inlines catcher and thrower into main, so the frames
    a throw leaves are at the catching function's own stack pointer; closed when thrower is
    entered again."""
    prog = programs.get("cxx.cpp", opt, cxx=True, toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, opts=MODES[mode])
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    assert calls[("main", "catcher(int)")] == 1
    assert calls[("main", "catcher(int)", "thrower(int)")] == 10
    assert not [p for p in calls if "thrower(int)" in p[:-1] or (p[-1] == "thrower(int)" and len(p) != 3)]


def fib_calls_by_depth(n):
    """{depth: calls of fib} of fib(n), depth 1 being the call from main."""
    counts = {}

    def go(k, depth):
        counts[depth] = counts.get(depth, 0) + 1
        if k >= 2:
            go(k - 1, depth + 1)
            go(k - 2, depth + 1)

    go(n, 1)
    return counts


def test_inlined_recursion_keeps_its_call_paths(programs, toolchain, mode, tmp_path):
    """fib.c at -O2 and -O3: GCC inlines fib into itself, its hooks at the same stack pointer
    and return address as the frame it is inlined into: still fib's child, never a frame gone."""
    for opt in ("-O2", "-O3"):
        prog = programs.get("fib.c", opt, toolchain=toolchain)
        out = tmp_path / ("exp" + opt)
        run(out, prog, opts=MODES[mode])
        calls = {p: c for p, (c, _) in paths_of(out).items()}
        expected = {("main",): 1}
        for depth, n in fib_calls_by_depth(20).items():
            expected[("main",) + ("fib",) * depth] = n
        assert calls == expected, opt


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3", "-Os"])
def test_exceptions_caught_above_inlined_frames(programs, toolchain, mode, opt, tmp_path):
    """unwind_inline.cpp: a throw caught by the function its thrower is inlined into, and one
    caught two levels above inlined frames. Exact counts of every path, as GCC at -O0 has them
    (Clang at -O1 and above: the frames the catch left, inlined into the catching function at its
    stack pointer, told from live ones by the debug information around the handler)."""
    prog = programs.get("unwind_inline.cpp", opt, cxx=True, toolchain=toolchain)
    out = tmp_path / "exp"
    run(out, prog, opts=MODES[mode])
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    n, thrown = 9, 6  # outer(9): leaf throws for i % 3 == 0 (via in2) and (i + 1) % 3 == 0 (in1)
    top = ("main", "outer(int)")
    expected = {("main",): 1, top: 1, top + ("after(int)",): n + thrown}
    for base in (top, top + ("catcher_inl(int)", "mid(int)")):
        expected[base + ("in1(int)",)] = n
        expected[base + ("in1(int)", "in2(int)")] = n
        expected[base + ("in1(int)", "in2(int)", "leaf(int)")] = n
        expected[base + ("in1(int)", "leaf(int)")] = n - 3
    expected[top + ("catcher_inl(int)",)] = n
    expected[top + ("catcher_inl(int)", "mid(int)")] = n
    expected[top + ("catcher_inl(int)", "after(int)")] = n + thrown
    assert calls == expected


def ns_paths(n=8):
    """unwind_inline_ns.cpp's call paths and counts: driver(n) throws for every even i."""
    top = ("main", "driver(int)")
    get, boom = "ns::Box<int>::get(int)", "ns::boom(int)"
    safe, note = "ns::Box<int>::safe(int)", "ns::Box<int>::note(int)"
    return {("main",): 1, top: 1, top + (get,): n, top + (get, boom): n, top + (boom,): n // 2,
            top + (safe,): n, top + (safe, get): n, top + (safe, get, boom): n,
            top + (safe, note): n // 2}


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O3"])
def test_exceptions_through_inlined_members_in_a_namespace(programs, toolchain, mode, opt, tmp_path):
    """unwind_inline_ns.cpp: template members in a namespace, inlined, thrown through and caught
    by the function they are inlined into, or catching themselves (GCC puts such functions
    under namespace and class entries of the debug information): exact counts."""
    prog = programs.get("unwind_inline_ns.cpp", opt, cxx=True, toolchain=toolchain)
    out = tmp_path / "exp"
    cp = run(out, prog, opts=MODES[mode])
    assert "plx:" not in cp.stderr.replace("plx: experiment written to", ""), cp.stderr
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    assert calls == ns_paths()


def test_inlined_frames_without_debug_information_are_said(programs, tmp_path):
    """Clang -O2 without -g: nothing tells the inlined frames a catch left from live ones; the
    runtime says so once (the documented limit: they stay open until entered again)."""
    prog = programs.get("unwind_inline_ns.cpp", "-O2", "-g0", cxx=True, toolchain="clang")
    out = tmp_path / "exp"
    cp = run(out, prog)
    assert cp.stderr.count("plx: a C++ exception was caught in driver(int) over functions inlined "
                           "into it, without debug information (-g) or libdw (libdw1)") == 1, \
        cp.stderr
    calls = {p: c for p, (c, _) in paths_of(out).items()}
    assert calls != ns_paths()


def test_asynchronous_cancellation_writes_no_event_twice(programs, tmp_path):
    """programs/async_cancel.c: 40 threads cancelled asynchronously while they call work() in a
    loop, traced with a small buffer (many flushes). Each call is counted once: at most one more
    per cancelled thread than the program counted itself (a cancellation between the entry and
    the program's count), never a chunk read twice (was: 3-6 % more calls, and impossible
    paths `spin => loop => spin => loop => work`: a cancellation between a chunk's write and the
    buffer's reset has the thread's end write those words again, with its last events after
    them; readers take them once)."""
    from conftest import callpath_rows, report_csv

    prog = programs.get("async_cancel.c", "-O2")
    out = tmp_path / "exp"
    cp = run(out, prog, "20", opts=("--trace", "--buffer", "64K"))
    counted = int(cp.stdout.split()[-1])
    paths = {p: int(r["calls"]) for p, r in callpath_rows(report_csv(out, "--callpath")).items()}
    work = sum(c for p, c in paths.items() if p[-1] == "work")
    assert counted <= work <= counted + 40, (counted, work)
    assert all(p.count("loop") <= 1 for p in paths), sorted(paths)
