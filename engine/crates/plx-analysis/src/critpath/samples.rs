//! What ran during the path's CPU time, by call-stack samples (`plx run --sample`): for a procedure-level item (a function's exclusive time on a thread), the sampled call paths below that function on that thread.
//!
//! The samples below a function's measured callpaths (and not below a measured call inside
//! it) are what ran while it was the innermost measured call: the time the procedure level
//! gives it ([`crate::sampled`]). Where the runtime stamped the samples (a trace) only those
//! taken during the path's CPU segments on that thread count: what ran on the path. Without
//! stamps (a profile) they are the samples of the whole run in that function on that thread;
//! each path's share of them estimates its share of the item's time on the path.

use std::collections::HashMap;

use super::profile::{location_name, Item, ItemKind, Level, Segment};
use super::Graph;
use crate::model::Model;
use crate::sampled::{ranked, Below};
pub use crate::sampled::{ItemSamples, SampledPath};

/// The procedure level's name of time in no function.
pub const NO_FUNCTION: &str = "(no function)";

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
        let p = &model.processes[l.process];
        let Some(t) = p.threads.iter().find(|t| t.thread == l.thread) else {
            continue;
        };
        let nodes = t.tree.nodes();
        // the function as the innermost measured call (`None`: no measured call open)
        let anchored =
            |a: Option<u32>| a.map(|a| model.regions.name(nodes[a as usize].region)) == function;
        let b = Below::new(p, t, anchored);
        timed &= b.timed();
        b.add(&spans[li], &mut paths);
    }
    ranked(paths, item.time_ns as f64, timed, top)
}
