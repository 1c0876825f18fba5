//! CPU time per location from the CPU sampler's samples (CpuSamples records, `PLX_CPU_SAMPLE`).

use crate::merge::{round_ns, TraceLocation};
use crate::model::Model;

/// The CPU time a location used between two consecutive samples: `cpu_ns` over `[start_ns,
/// end_ns)` (global ns), taken as spread evenly over the interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuSpan {
    /// The earlier sample's time, global ns.
    pub start_ns: i64,
    /// The later sample's time, global ns.
    pub end_ns: i64,
    /// CPU ns the thread used in between.
    pub cpu_ns: u64,
}

impl CpuSpan {
    /// CPU ns per ns of the interval: the fraction of it the thread was on a CPU, at most 1
    /// (the clocks of one sample are read one after another, a few µs apart).
    pub fn rate(&self) -> f64 {
        let wall = (self.end_ns - self.start_ns) as f64;
        if wall <= 0.0 {
            return 0.0;
        }
        (self.cpu_ns as f64 / wall).min(1.0)
    }
}

/// For each location (in `locations` order), its CPU spans in time order; empty when its
/// process has no sample of it. Times are the process's own on rank 0's clock (plus its
/// application's shift), as [`super::waits`] takes them: without the shift the merge may give
/// an MPI process to repair the clock condition.
pub(crate) fn cpu_spans(model: &Model, locations: &[TraceLocation]) -> Vec<Vec<CpuSpan>> {
    let mut out = vec![Vec::new(); locations.len()];
    for (li, loc) in locations.iter().enumerate() {
        let p = &model.processes[loc.process];
        if p.cpu_samples.is_empty() {
            continue;
        }
        let mut points: Vec<(u64, u64)> = p
            .cpu_samples
            .iter()
            .filter_map(|s| {
                s.values
                    .iter()
                    .find(|(t, _)| *t == loc.thread)
                    .map(|&(_, ns)| (s.ticks, ns))
            })
            .collect();
        points.sort_unstable();
        points.dedup_by_key(|p| p.0);
        out[li] = points
            .windows(2)
            .filter_map(|w| {
                let a = round_ns(p.rank0_ns(w[0].0));
                let b = round_ns(p.rank0_ns(w[1].0));
                (b > a).then_some(CpuSpan {
                    start_ns: a,
                    end_ns: b,
                    cpu_ns: w[1].1.saturating_sub(w[0].1),
                })
            })
            .collect();
    }
    out
}
