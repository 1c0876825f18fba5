"""Parallax experiments in Python: pandas and Polars DataFrames, Hatchet GraphFrames, Thickets.

``parallax.open(DIR)`` opens an experiment directory (what ``plx run`` wrote); every table comes
from the ``plx`` engine — ``plx report --format json`` for the profiles, ``plx export --format
parquet`` for the merged trace, ``plx hierarchy`` and ``plx query`` for the synchronization
objects — so that Python never parses the experiment's own format (docs/python.md).
"""

from .experiment import Experiment, PlxError, PlxWarning, open, thicket

__all__ = ["Experiment", "PlxError", "PlxWarning", "open", "thicket"]
