//! What ran during the path's CPU time, by call-stack samples (`plx run --sample`): for a procedure-level item (a function's exclusive time on a thread), the sampled call paths below that function on that thread.
//!
//! A sample hangs under the innermost measured call open when it was taken, so the samples
//! below a function's measured callpaths (and not below a measured call inside it) are what
//! ran while it was the innermost measured call: the time the procedure level gives it. Where
//! the runtime stamped the samples (a trace) only those taken during the path's CPU segments on
//! that thread count: what ran on the path. Without stamps (a profile) they are the samples of
//! the whole run in that function on that thread; each path's share of them estimates its
//! share of the item's time on the path.

use std::collections::HashMap;

use super::profile::{location_name, Item, ItemKind, Level, Segment};
use super::Graph;
use crate::model::Model;

/// The procedure level's name of time in no function.
pub const NO_FUNCTION: &str = "(no function)";

/// One sampled call path below an item's function.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledPath {
    /// Global regions of the frames below the function, outermost first; empty for samples
    /// in the function's own code.
    pub frames: Vec<u32>,
    /// Samples whose innermost frame ends this path.
    pub samples: u64,
    /// The item's time on the path × this path's share of the item's samples, ns.
    pub estimated_ns: i64,
}

/// The samples of an item.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSamples {
    /// Samples taken while the item's function was the innermost measured call, on its
    /// thread(s): during the path's segments there where the samples have times, else the
    /// whole run.
    pub samples: u64,
    /// Whether every thread's samples had times (only the path's segments count).
    pub timed: bool,
    /// The largest paths by samples (then frames), at most the number asked for.
    pub paths: Vec<SampledPath>,
}

/// The samples of procedure-level CPU item `item` of the path made of `segs`, its `top`
/// largest paths; `None` for another kind of item, or when its threads have no samples below
/// its function. An item of several threads (`ALL`) takes those of every thread with CPU time
/// on the path.
pub fn item_samples(
    model: &Model,
    g: &Graph,
    segs: &[Segment],
    item: &Item,
    top: usize,
) -> Option<ItemSamples> {
    if item.kind != ItemKind::Cpu {
        return None;
    }
    let function = (item.name != NO_FUNCTION).then_some(item.name.as_str());
    let mut on_path = vec![false; g.locations.len()];
    let mut spans: Vec<Vec<(i64, i64)>> = vec![Vec::new(); g.locations.len()];
    for s in segs.iter().filter(|s| s.kind == ItemKind::Cpu) {
        on_path[s.location as usize] = true;
        spans[s.location as usize].push((s.start_ns, s.end_ns));
    }
    let mut paths: HashMap<Vec<u32>, u64> = HashMap::new();
    let mut timed = true;
    for (li, l) in g.locations.iter().enumerate() {
        let here = location_name(model, l, Level::Procedure);
        let mine = match &item.location {
            Some(want) => *want == here,
            None => on_path[li],
        };
        if !mine {
            continue;
        }
        let Some(t) = model.processes[l.process]
            .threads
            .iter()
            .find(|t| t.thread == l.thread)
        else {
            continue;
        };
        let own = if t.sample_times.is_empty() {
            timed = false;
            t.tree.self_samples()
        } else {
            during(&model.processes[l.process], t, &spans[li])
        };
        below(model, &t.tree, &own, function, &mut paths);
    }
    let samples: u64 = paths.values().sum();
    if samples == 0 {
        return None;
    }
    let mut paths: Vec<SampledPath> = paths
        .into_iter()
        .map(|(frames, n)| SampledPath {
            estimated_ns: (item.time_ns as f64 * n as f64 / samples as f64).round() as i64,
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

/// Per node of `t`'s tree, its own stamped samples taken inside one of `spans` (global ns).
fn during(
    p: &crate::model::ProcessModel,
    t: &crate::model::ThreadModel,
    spans: &[(i64, i64)],
) -> Vec<u64> {
    let mut own = vec![0u64; t.tree.nodes().len()];
    let mut spans = spans.to_vec();
    spans.sort_unstable();
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
    own
}

/// Adds to `paths` the samples of `tree` whose innermost measured call is `function` (`None`:
/// no measured call open), by the frames below it.
fn below(
    model: &Model,
    tree: &crate::tree::CallTree,
    own: &[u64],
    function: Option<&str>,
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
        if samples == 0 {
            continue;
        }
        let a = anchor[i];
        let name = a.map(|a| model.regions.name(nodes[a as usize].region));
        if name != function {
            continue;
        }
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
