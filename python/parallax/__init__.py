"""Parallax's Python tools: exporters that use other projects' official libraries.

``python3 -m parallax.otf2_export SRC OUT`` writes an OTF2 archive from the Parquet tables of
``plx export --format parquet`` (``plx export --format otf2`` runs it).
"""

__all__ = ["otf2_export"]
