//! What ran during the path's CPU time, by call-stack samples (`plx run --sample`): for a procedure-level item (a function's exclusive time on a thread), the sampled call paths below that function on that thread.
//!
//! A sample hangs under the innermost measured call open when it was taken, so the samples
//! below a function's measured callpaths (and not below a measured call inside it) are what
//! ran while it was the innermost measured call: the time the procedure level gives it. The
//! runtime keeps no time of a sample: they are the samples of the whole run in that function
//! on that thread, not only of the path's segments; each path's share of them estimates its
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
    /// thread(s), the whole run.
    pub samples: u64,
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
    for s in segs.iter().filter(|s| s.kind == ItemKind::Cpu) {
        on_path[s.location as usize] = true;
    }
    let mut paths: HashMap<Vec<u32>, u64> = HashMap::new();
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
        below(model, &t.tree, function, &mut paths);
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
    Some(ItemSamples { samples, paths })
}

/// Adds to `paths` the samples of `tree` whose innermost measured call is `function` (`None`:
/// no measured call open), by the frames below it.
fn below(
    model: &Model,
    tree: &crate::tree::CallTree,
    function: Option<&str>,
    paths: &mut HashMap<Vec<u32>, u64>,
) {
    let nodes = tree.nodes();
    let own = tree.self_samples();
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
