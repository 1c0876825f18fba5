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
    /// The largest paths by estimate (then samples, then frames), at most the number asked for.
    pub paths: Vec<SampledPath>,
    /// The paths left out of `paths`: how many, and their samples and estimate (ns).
    pub rest: (usize, u64, i64),
}

/// A thread's samples below the measured calls an item accepts, ready to be counted in any
/// stretch of time.
pub(crate) struct Below {
    /// The stamped samples, by time: (global ns, node); empty without stamps.
    times: Vec<(i64, u32)>,
    /// Without stamps: each node's own samples of the whole run.
    untimed: Option<Vec<u64>>,
    /// Per node of the tree: the frames below its anchor when `anchored` accepted the anchor
    /// (innermost measured call: itself when an event entered it; `None` when none was open).
    path: Vec<Option<Vec<u32>>>,
}

impl Below {
    /// The samples of thread `t` of process `p` whose anchor `anchored` accepts.
    pub(crate) fn new(
        p: &ProcessModel,
        t: &ThreadModel,
        anchored: impl Fn(Option<u32>) -> bool,
    ) -> Below {
        let nodes = t.tree.nodes();
        let mut anchor: Vec<Option<u32>> = vec![None; nodes.len()];
        let mut path: Vec<Option<Vec<u32>>> = vec![None; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            anchor[i] = if n.calls > 0 {
                Some(i as u32)
            } else {
                n.parent.and_then(|p| anchor[p as usize])
            };
            if !anchored(anchor[i]) {
                continue;
            }
            // the frames from the anchor (excluded) down to the node
            path[i] = Some(match n.parent {
                _ if anchor[i] == Some(i as u32) => Vec::new(),
                Some(up) if anchor[up as usize] == anchor[i] => {
                    let mut f = path[up as usize].clone().unwrap_or_default();
                    f.push(n.region);
                    f
                }
                _ => vec![n.region],
            });
        }
        let own = t.tree.self_samples();
        let (times, untimed) = if t.sample_times.is_empty() {
            // (a thread with no samples at all has none to stamp)
            (Vec::new(), own.iter().any(|&n| n > 0).then_some(own))
        } else {
            let mut times: Vec<(i64, u32)> = t
                .sample_times
                .iter()
                .filter_map(|s| {
                    let node = s.node.filter(|&n| (n as usize) < nodes.len())?;
                    Some((p.rank0_ns(s.ticks).round() as i64, node))
                })
                .collect();
            times.sort_unstable();
            (times, None)
        };
        Below {
            times,
            untimed,
            path,
        }
    }

    /// Whether the samples have times (else every stretch counts the whole run's).
    pub(crate) fn timed(&self) -> bool {
        self.untimed.is_none()
    }

    /// Adds to `paths` the samples taken inside one of `spans` (global ns, both ends
    /// included; without stamps, all of them), by the frames below their anchor.
    pub(crate) fn add(&self, spans: &[(i64, i64)], paths: &mut HashMap<Vec<u32>, u64>) {
        let mut add = |node: usize, n: u64| {
            if let Some(f) = self.path.get(node).and_then(Option::as_ref) {
                *paths.entry(f.clone()).or_default() += n;
            }
        };
        if let Some(own) = &self.untimed {
            for (node, &n) in own.iter().enumerate().filter(|x| *x.1 > 0) {
                add(node, n);
            }
            return;
        }
        for (a, b) in union(spans) {
            let from = self.times.partition_point(|&(ns, _)| ns < a);
            for &(ns, node) in &self.times[from..] {
                if ns > b {
                    break;
                }
                add(node as usize, 1);
            }
        }
    }
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
    let estimated = paths
        .into_iter()
        .map(|(frames, n)| (frames, (n, time_ns * n as f64 / samples.max(1) as f64)))
        .collect();
    ranked_by(estimated, timed, top)
}

/// The samples of `paths` (frames → samples and estimated ns) as an item's: the `top`
/// largest by estimate (then samples, then frames); `None` without samples.
pub(crate) fn ranked_by(
    paths: HashMap<Vec<u32>, (u64, f64)>,
    timed: bool,
    top: usize,
) -> Option<ItemSamples> {
    let samples: u64 = paths.values().map(|p| p.0).sum();
    if samples == 0 {
        return None;
    }
    let mut paths: Vec<(f64, SampledPath)> = paths
        .into_iter()
        .map(|(frames, (n, ns))| {
            let path = SampledPath {
                estimated_ns: ns.round() as i64,
                frames,
                samples: n,
            };
            (ns, path)
        })
        .collect();
    paths.sort_by(|(a, x), (b, y)| {
        b.total_cmp(a)
            .then_with(|| y.samples.cmp(&x.samples))
            .then_with(|| x.frames.cmp(&y.frames))
    });
    let left = paths.split_off(top.min(paths.len()));
    let rest = (
        left.len(),
        left.iter().map(|p| p.1.samples).sum(),
        left.iter().map(|p| p.0).sum::<f64>().round() as i64,
    );
    Some(ItemSamples {
        samples,
        timed,
        paths: paths.into_iter().map(|p| p.1).collect(),
        rest,
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
