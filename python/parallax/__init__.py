"""Parallax experiments in Python: pandas and Polars DataFrames, Hatchet GraphFrames, Thickets.

``parallax.open(DIR)`` opens an experiment directory (what ``plx run`` wrote); every table is
computed by the plx engine compiled into the package (``parallax._native``) and handed over as
Arrow record batches without a copy — the numbers of ``plx report``, ``plx export``, ``plx
waits`` — so that Python never parses the experiment's own format (docs/python.md).
"""

from .experiment import Experiment, PlxError, PlxWarning, open, thicket

__all__ = ["Experiment", "PlxError", "PlxWarning", "open", "thicket"]
