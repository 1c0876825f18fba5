"""Mutation fuzzing of every reading command: a small real experiment (traced, threads, several
chunks) is damaged — bytes flipped, files cut, bytes inserted, fields set to huge values, files
replaced by FIFOs or by links to /dev/zero, a garbage session.txt — and a reading command runs
on it under a timeout and an address-space limit. None may panic (exit 101, "panicked"), die of
a signal, hang, or exceed the memory limit; a clear error (exit 2) or warnings are what is
expected.

Quick form (make test): PLX_FUZZ_CASES cases (default 240), seed PLX_FUZZ_SEED (default 1).
Long form: `make fuzz` (bench/fuzz.sh: 20,000 cases, a seed from the clock, printed) — a case
that fails is printed with its seed and case number, and reproduced with
`PLX_FUZZ_SEED=S PLX_FUZZ_ONLY=N python3 -m pytest tests/e2e/test_fuzz.py`.
"""

import os
import random
import resource
import shutil
import subprocess

import pytest

from conftest import EXPORTS, PLX, clean_env, process_dirs, run

CASES = int(os.environ.get("PLX_FUZZ_CASES", "240"))
SEED = int(os.environ.get("PLX_FUZZ_SEED", "1"))
ONLY = os.environ.get("PLX_FUZZ_ONLY")
TIMEOUT = 60  # a refusal or a warning is immediate: this catches hangs only
MEMORY = 2 << 30  # address space of one command: the experiment is 30 KB

READERS = [
    ("info",),
    ("report",),
    ("report", "--callpath", "--format", "csv"),
    ("report", "--format", "json"),
    ("comm",),
    ("critical-path",),
    ("hierarchy",),
    ("query", "--metric", "calls:work"),
    ("histogram", "--metric", "cpu"),
    ("display", "utilization"),
    *EXPORTS,
]


@pytest.fixture(scope="module")
def seed_exp(programs, exp_root):
    out = exp_root / "fuzz-seed"
    run(out, programs.get("threads.c", "-O0", "-pthread"), opts=("--trace", "--buffer", "4K"))
    return out


def files_of(exp):
    return sorted(p for p in exp.rglob("*") if p.is_file() and not p.is_symlink())


def mutate(exp, rng):
    """Damages experiment copy `exp` one way; returns what was done (for the failure message)."""
    files = files_of(exp)
    f = rng.choice(files)
    data = bytearray(f.read_bytes())
    kind = rng.choice(["flip", "flip", "cut", "insert", "huge", "zero", "fifo", "devzero",
                       "session", "dup"])
    rel = f.relative_to(exp)
    if kind == "flip" and data:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        what = "%s: bits flipped" % rel
    elif kind == "cut":
        n = rng.randrange(len(data) + 1)
        data = data[:n]
        what = "%s: cut to %d bytes" % (rel, n)
    elif kind == "insert":
        i = rng.randrange(len(data) + 1)
        data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        what = "%s: bytes inserted at %d" % (rel, i)
    elif kind == "huge" and len(data) >= 8:
        i = rng.randrange(len(data) - 7) & ~3
        width = rng.choice([2, 4, 8])
        data[i:i + width] = b"\xff" * width if rng.random() < 0.5 else b"\x7f" + b"\xff" * (width - 1)
        what = "%s: %d bytes at %d set huge" % (rel, width, i)
    elif kind == "zero" and data:
        i = rng.randrange(len(data))
        n = rng.randint(1, 256)
        data[i:i + n] = bytes(len(data[i:i + n]))
        what = "%s: %d bytes zeroed at %d" % (rel, n, i)
    elif kind == "dup" and data:
        i = rng.randrange(len(data))
        n = rng.randint(1, 4096)
        data[i:i] = data[i:i + n]
        what = "%s: %d bytes repeated at %d" % (rel, n, i)
    elif kind == "fifo":
        f.unlink()
        os.mkfifo(f)
        return "%s: a FIFO" % rel
    elif kind == "devzero":
        f.unlink()
        os.symlink("/dev/zero", f)
        return "%s: a link to /dev/zero" % rel
    elif kind == "session":
        lines = ["app a %s live" % process_dirs(exp)[0].name, "app b . compare",
                 "app " + "x" * rng.randint(1, 300) + " . live", "garbage", "app a . live",
                 "app c /nonexistent live", "\x00\xff"]
        text = "\n".join(rng.choice(lines) for _ in range(rng.randint(1, 5)))
        session = exp / "session.txt"
        if session.exists() or session.is_symlink():
            session.unlink()  # an earlier mutation may have made it a FIFO
        session.write_text(text, errors="surrogateescape")
        return "session.txt: %r" % text
    else:
        data = bytearray(rng.randbytes(rng.randint(0, 64)))
        what = "%s: replaced by %d random bytes" % (rel, len(data))
    f.write_bytes(bytes(data))
    return what


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_reader(command, exp, out):
    args = [str(out) if a == "OUT" else a for a in command[1:]]
    env = clean_env({"RAYON_NUM_THREADS": "2", "RUST_BACKTRACE": "0"})
    try:
        cp = subprocess.run([str(PLX), command[0], str(exp), *args], capture_output=True,
                            text=True, errors="replace", env=env, timeout=TIMEOUT,
                            preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return "hung (no answer in %d s)" % TIMEOUT
    if cp.returncode == 101 or "panicked" in cp.stderr:
        return "panicked: " + cp.stderr[-2000:]
    if cp.returncode < 0:
        return "killed by signal %d: %s" % (-cp.returncode, cp.stderr[-2000:])
    if "memory allocation of" in cp.stderr:
        return "ran out of memory (%d bytes allowed): %s" % (MEMORY, cp.stderr[-500:])
    if cp.returncode not in (0, 1, 2, 3):
        return "exited %d: %s" % (cp.returncode, cp.stderr[-2000:])
    return None


def test_mutated_experiments(seed_exp, tmp_path):
    rng = random.Random(SEED)
    failures = []
    for case in range(CASES):
        # each case draws from its own generator: one case reproduces alone
        crng = random.Random(rng.getrandbits(64))
        if ONLY is not None and case != int(ONLY):
            continue
        exp = tmp_path / "exp"
        shutil.rmtree(exp, ignore_errors=True)
        shutil.copytree(seed_exp, exp, symlinks=True)
        what = [mutate(exp, crng) for _ in range(crng.choice([1, 1, 1, 2, 3]))]
        command = READERS[case % len(READERS)]
        out = tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        if out.exists():
            out.unlink()
        why = run_reader(command, exp, out)
        if why:
            failures.append("seed %d case %d: plx %s on [%s]: %s"
                            % (SEED, case, " ".join(command), "; ".join(what), why))
    assert not failures, "\n\n".join(failures)
