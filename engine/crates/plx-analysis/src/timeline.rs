//! Metrics over time: time histograms, NPT, utilization and concurrency, message queue length and the space-time diagram.
