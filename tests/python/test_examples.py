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
