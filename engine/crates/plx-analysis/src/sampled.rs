//! What ran in a thread's stretch of time, by call-stack samples (`plx run --sample`): the sampled call paths below the innermost measured call that was open, as the critical path (`--samples`) and the wait states' causes (`plx waits --causes --samples`) show them.
//!
//! A sample hangs under the innermost measured call open when it was taken (a node of the
//! thread's call tree with calls, its *anchor*), so the samples below an anchor (and not below
//! a measured call inside it) are what ran while it was the innermost measured call. Where the
//! runtime stamped the samples (a trace) only those taken inside the stretches asked for count;
//! without stamps (a profile) they are those of the whole run. Each path's share of the
//! samples estimates its share of the time they stand for.

use std::collections::HashMap;

use crate::model::{Model, ProcessModel, ThreadModel};
use crate::tree::CallTree;

/// One sampled call path below a measured call.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledPath {
    /// Global regions of the frames below the measured call, outermost first; empty for
    /// samples in its own code.
    pub frames: Vec<u32>,
    /// Samples whose innermost frame ends this path.
    pub samples: u64,
    /// The time the samples stand for × this path's share of them, ns.
    pub estimated_ns: i64,
}

/// The samples of an item (a function on the critical path, a wait's cause).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSamples {
    /// Samples taken while the item's call was the innermost measured call, on its thread(s):
    /// inside the item's stretches there where the samples have times, else the whole run.
    pub samples: u64,
    /// Whether every thread's samples had times (only the item's stretches count).
    pub timed: bool,
    /// The largest paths by samples (then frames), at most the number asked for.
    pub paths: Vec<SampledPath>,
}

/// The samples of thread `t` (of process `p`) to count, per node of its tree: those taken
/// inside one of `spans` (global ns, both ends included) when the samples have times, else
/// all its own; and whether they had times.
pub(crate) fn own_samples(
    p: &ProcessModel,
    t: &ThreadModel,
    spans: &[(i64, i64)],
) -> (Vec<u64>, bool) {
    if t.sample_times.is_empty() {
        return (t.tree.self_samples(), false);
    }
    let mut own = vec![0u64; t.tree.nodes().len()];
    let spans = union(spans);
    for s in &t.sample_times {
        let Some(node) = s.node.filter(|&n| (n as usize) < own.len()) else {
            continue;
        };
        let ns = p.rank0_ns(s.ticks).round() as i64;
        // the last span starting at or before ns
        let k = spans.partition_point(|&(a, _)| a <= ns);
        if k > 0 && ns <= spans[k - 1].1 {
            own[node as usize] += 1;
        }
    }
    (own, true)
}

/// `spans` sorted and merged where they overlap.
fn union(spans: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Adds to `paths` the samples `own` (per node of `tree`) whose anchor (innermost measured
/// call: a node of `tree`, `None` when none was open) `anchored` accepts, by the frames below
/// the anchor.
pub(crate) fn below(
    tree: &CallTree,
    own: &[u64],
    anchored: impl Fn(Option<u32>) -> bool,
    paths: &mut HashMap<Vec<u32>, u64>,
) {
    let nodes = tree.nodes();
    // per node: its innermost measured callpath (itself when an event entered it)
    let mut anchor: Vec<Option<u32>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        anchor[i] = if n.calls > 0 {
            Some(i as u32)
        } else {
            n.parent.and_then(|p| anchor[p as usize])
        };
    }
    for (i, &samples) in own.iter().enumerate() {
        if samples == 0 || !anchored(anchor[i]) {
            continue;
        }
        let a = anchor[i];
        let mut frames = Vec::new();
        let mut cur = Some(i as u32);
        while cur.is_some() && cur != a {
            let c = cur.expect("checked") as usize;
            frames.push(nodes[c].region);
            cur = nodes[c].parent;
        }
        frames.reverse();
        *paths.entry(frames).or_default() += samples;
    }
}

/// The nodes of `tree` whose measured call path is the region names `want` (outermost first).
pub(crate) fn nodes_at(model: &Model, tree: &CallTree, want: &[&str]) -> Vec<bool> {
    let nodes = tree.nodes();
    // per node: its depth when its path is a prefix of `want`
    let mut depth: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        let k = match n.parent {
            None => Some(0),
            Some(p) => depth[p as usize].map(|d| d + 1),
        };
        depth[i] = k.filter(|&k| k < want.len() && model.regions.name(n.region) == want[k]);
    }
    depth
        .iter()
        .map(|d| d.is_some_and(|d| d + 1 == want.len()))
        .collect()
}

/// The samples of `paths` as an item's: the `top` largest, each with its share of `time_ns`;
/// `None` without samples.
pub(crate) fn ranked(
    paths: HashMap<Vec<u32>, u64>,
    time_ns: f64,
    timed: bool,
    top: usize,
) -> Option<ItemSamples> {
    let samples: u64 = paths.values().sum();
    if samples == 0 {
        return None;
    }
    let mut paths: Vec<SampledPath> = paths
        .into_iter()
        .map(|(frames, n)| SampledPath {
            estimated_ns: (time_ns * n as f64 / samples as f64).round() as i64,
            frames,
            samples: n,
        })
        .collect();
    paths.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then_with(|| a.frames.cmp(&b.frames))
    });
    paths.truncate(top);
    Some(ItemSamples {
        samples,
        timed,
        paths,
    })
}

#[cfg(test)]
mod tests {
    use super::union;

    #[test]
    fn overlapping_spans_are_merged() {
        assert_eq!(
            union(&[(50, 60), (0, 10), (5, 20), (20, 30), (40, 45)]),
            vec![(0, 30), (40, 45), (50, 60)]
        );
    }
}
