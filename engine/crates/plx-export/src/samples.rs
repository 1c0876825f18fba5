//! The call-stack samples of each exported location (`plx run --sample`): the callpaths of its thread's tree that samples were taken in, for the formats that carry them.
//!
//! The runtime merges a thread's samples into a tree as they are taken and keeps no time of
//! them (record `SampleTree`), so a format that needs a time places a location's samples at
//! its last event; the counts and callpaths are the model's (`plx report --callpath`).

use plx_analysis::{CallTree, Model, TraceLocation};

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
}

impl LocationSamples<'_> {
    /// Seconds of CPU time estimated for `samples`.
    pub fn seconds(&self, samples: u64) -> f64 {
        samples as f64 * self.period_ns as f64 * 1e-9
    }

    /// The regions of node `n`'s path from the root.
    pub fn path(&self, n: u32) -> Vec<u32> {
        self.tree.path(n)
    }
}

/// The samples of location `l`, `None` when its thread has none.
pub(crate) fn of<'m>(model: &'m Model, l: &TraceLocation) -> Option<LocationSamples<'m>> {
    let t = model.processes[l.process]
        .threads
        .iter()
        .find(|t| t.thread == l.thread)?;
    let stats = t.samples?;
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
    Some(LocationSamples {
        tree: &t.tree,
        period_ns: stats.period_ns,
        nodes,
    })
}

/// The samples of every location of `locations` (a merge's, of `model`), by location.
pub(crate) fn all<'m>(
    model: &'m Model,
    locations: &[TraceLocation],
) -> Vec<Option<LocationSamples<'m>>> {
    locations.iter().map(|l| of(model, l)).collect()
}
