//! Comparison of runs: the metric table of several experiments (IPS-2 comparison mode) and per-function differences.
