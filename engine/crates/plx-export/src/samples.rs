//! The call-stack samples of each exported location (`plx run --sample`): the callpaths of its thread's tree that samples were taken in, for the formats that carry them.
//!
//! The runtime merges a thread's samples into a tree as they are taken (record `SampleTree`);
//! with a trace it also stamps each with its time (record `SampleStamps`), and a format places
//! each sample at its time. Samples without a stamp (a profile, a stamp record lost) are placed
//! at the location's last event. The counts and callpaths are the model's (`plx report
//! --callpath`).

use plx_analysis::{CallTree, Model, TraceLocation, Window};

/// One callpath of a location's tree with samples in it.
pub(crate) struct SampledNode {
    /// Its index in the thread's tree.
    pub node: u32,
    /// The calling node (`None`: a root), itself sampled.
    pub parent: Option<u32>,
    /// Global region.
    pub region: u32,
    /// Frames from the root, 1 for a root.
    pub depth: u32,
    /// Samples taken in it or below it.
    pub samples: u64,
    /// Samples whose innermost frame it is.
    pub self_samples: u64,
    /// A frame known only from samples (no event entered it): its times are estimates.
    pub estimated: bool,
}

/// A location's samples.
pub(crate) struct LocationSamples<'m> {
    pub tree: &'m CallTree,
    /// ns of the thread's CPU time per sample.
    pub period_ns: u64,
    /// Every node with samples, a parent before its children.
    pub nodes: Vec<SampledNode>,
    /// The stamped samples, in time order: (ns on the merge's clock, as events' `At::ns`, tree
    /// node whose own sample it is).
    pub times: Vec<(i64, u32)>,
    /// Per tree node: its own samples that have a stamp in `times`.
    timed: Vec<u64>,
    /// Only the samples stamped inside a window ([`of`]): none is untimed.
    windowed: bool,
}

impl LocationSamples<'_> {
    /// Seconds of CPU time estimated for `samples`.
    pub fn seconds(&self, samples: u64) -> f64 {
        samples as f64 * self.period_ns as f64 * 1e-9
    }

    /// The own samples of `n` without a time (placed at the location's last event).
    pub fn untimed(&self, n: &SampledNode) -> u64 {
        if self.windowed {
            return 0;
        }
        n.self_samples
            .saturating_sub(self.timed.get(n.node as usize).copied().unwrap_or(0))
    }

    /// Are they a window's (only the samples stamped inside it)?
    pub fn windowed(&self) -> bool {
        self.windowed
    }

    /// The regions of node `n`'s path from the root.
    pub fn path(&self, n: u32) -> Vec<u32> {
        self.tree.path(n)
    }
}

/// The samples of location `l` in `window`, `None` when its thread has none: with a window
/// (not [`Window::ALL`]) its stamped samples inside it, none without a stamp (no time to place
/// them in it).
pub(crate) fn of<'m>(
    model: &'m Model,
    l: &TraceLocation,
    window: Window,
) -> Option<LocationSamples<'m>> {
    let mut s = of_thread(model, l.process, l.thread)?;
    if window != Window::ALL {
        s.times.retain(|&(ns, _)| window.contains(ns));
        s.timed.iter_mut().for_each(|n| *n = 0);
        for &(_, node) in &s.times {
            s.timed[node as usize] += 1;
        }
        s.windowed = true;
    }
    Some(s)
}

/// The samples of thread `thread` of process `process` (model indices).
fn of_thread(model: &Model, process: usize, thread: u32) -> Option<LocationSamples<'_>> {
    let t = model.processes[process]
        .threads
        .iter()
        .find(|t| t.thread == thread)?;
    let stats = t.samples?;
    let p = &model.processes[process];
    if !t.tree.has_samples() {
        return None;
    }
    let own = t.tree.self_samples();
    let mut depth = vec![0u32; t.tree.nodes().len()];
    let mut nodes = Vec::new();
    for (i, n) in t.tree.nodes().iter().enumerate() {
        depth[i] = n.parent.map_or(1, |p| depth[p as usize] + 1);
        if n.samples == 0 {
            continue;
        }
        nodes.push(SampledNode {
            node: i as u32,
            parent: n.parent,
            region: n.region,
            depth: depth[i],
            samples: n.samples,
            self_samples: own[i],
            estimated: n.is_estimated(),
        });
    }
    let mut timed = vec![0u64; t.tree.nodes().len()];
    let mut times: Vec<(i64, u32)> = Vec::with_capacity(t.sample_times.len());
    for ts in &t.sample_times {
        let Some(node) = ts.node.filter(|&n| (n as usize) < timed.len()) else {
            continue; // the thread's root: no callpath to name it by
        };
        // never more stamps than the tree counts: the rest stays untimed
        if timed[node as usize] < own[node as usize] {
            timed[node as usize] += 1;
            times.push((p.rank0_ns(ts.ticks).round() as i64, node));
        }
    }
    times.sort_by_key(|x| x.0);
    Some(LocationSamples {
        tree: &t.tree,
        period_ns: stats.period_ns,
        nodes,
        times,
        timed,
        windowed: false,
    })
}

/// One call-stack sample as a row (the Python package's `samples` table).
pub struct SampleRow {
    /// ns since the merge's origin (as events' `time_ns`); `None`: not stamped.
    pub time_ns: Option<i64>,
    /// Index into the merge's locations.
    pub location: u32,
    /// Tree node of the sample's innermost frame in its thread's tree.
    pub node: u32,
    /// Global region of that frame.
    pub region: u32,
    /// The regions from the thread's root to the frame.
    pub path: Vec<u32>,
    /// A frame known only from samples: its times are estimates.
    pub estimated: bool,
}

/// Every call-stack sample of the threads `locations` ((process, thread) of `model`: a merge's
/// locations, or every thread of an experiment without a trace), a row each: per location its
/// stamped samples in time order (ns since `origin`), then per sampled callpath (a parent
/// before its children) its samples without a time.
pub fn sample_rows(model: &Model, locations: &[(usize, u32)], origin: i64) -> Vec<SampleRow> {
    let mut rows = Vec::new();
    for (li, &(process, thread)) in locations.iter().enumerate() {
        let Some(s) = of_thread(model, process, thread) else {
            continue;
        };
        let s = &s;
        let by_node: std::collections::HashMap<u32, &SampledNode> =
            s.nodes.iter().map(|n| (n.node, n)).collect();
        let row = |n: &SampledNode, time_ns| SampleRow {
            time_ns,
            location: li as u32,
            node: n.node,
            region: n.region,
            path: s.path(n.node),
            estimated: n.estimated,
        };
        for &(ns, node) in &s.times {
            if let Some(n) = by_node.get(&node) {
                rows.push(row(n, Some(ns - origin)));
            }
        }
        for n in &s.nodes {
            for _ in 0..s.untimed(n) {
                rows.push(row(n, None));
            }
        }
    }
    rows
}
