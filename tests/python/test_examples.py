"""python/examples run with the installed package: the Gantt chart of a real run's calls."""

import struct

from components import require_module

from conftest import ROOT, in_venv


def png_size(path):
    """(width, height) from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_gantt_draws_the_calls_of_every_thread(venv, experiments, parallax, tmp_path):
    """gantt.py: one bar per call of depth < 2 (exp.intervals), a row per thread, saved as a
    PNG; it says how many calls it drew."""
    require_module("matplotlib", "matplotlib (pip install matplotlib)")
    out = tmp_path / "life.png"
    cp = in_venv(venv, open(ROOT / "python" / "examples" / "gantt.py").read(),
                 str(experiments["life"]), str(out))
    iv = parallax.open(experiments["life"]).intervals
    want = int((iv["depth"] < 2).sum())
    assert cp.stdout == f"{out}: {want} calls\n"
    assert want > 12  # 4 ranks × 3 threads: at least their root calls
    w, h = png_size(out)
    assert (w, h) == (1200, 580)  # 12 in × 5.8 in (a row per thread: 4 ranks × 3) at 100 dpi


def test_tour_runs_on_the_installed_package(venv, experiments):
    """tour.py (docs/python.md's walk-through): the MPI calls per rank, the messages per pair
    and size of pingpong.c (20 round trips of 8 and 4096 bytes: 20 each way and size)."""
    require_module("hatchet", "Hatchet (pip install llnl-hatchet)")
    require_module("thicket", "Thicket (pip install llnl-thicket)")
    cp = in_venv(venv, open(ROOT / "python" / "examples" / "tour.py").read(),
                 str(experiments["pingpong"]), str(experiments["life"]))
    out = cp.stdout
    assert "messages per pair and size:" in out
    pairs = out.split("messages per pair and size:")[1].split("Name: count")[0]
    counts = [line.split()[-1] for line in pairs.strip().splitlines()[1:]]
    assert counts == ["20", "20", "20", "20"]
    assert "thicket: 2 profiles," in out
