//! A gprof-style call graph: per function its callers, itself (self/children, called) and callees.

use std::collections::BTreeMap;

use crate::flat::flat_profile;
use crate::tree::CallTree;

/// A caller or callee line.
#[derive(Debug, Clone, PartialEq)]
pub struct Arc {
    /// The other function (global region), `None` for `<spontaneous>` (a root).
    pub region: Option<u32>,
    /// Calls along this arc.
    pub calls: u64,
    /// Total non-recursive calls of the callee (gprof's "called/total" denominator).
    pub total_calls: u64,
    /// Exclusive seconds of the callee along this arc.
    pub self_s: f64,
    /// Seconds in the callee's descendants along this arc.
    pub children_s: f64,
    /// Call-stack samples in the callee along this arc (its outermost nodes').
    pub samples: u64,
    /// Known only from samples (no event entered the callee from this caller): the times are
    /// estimates, `calls` 0.
    pub estimated: bool,
}

/// One function's block.
#[derive(Debug, Clone, PartialEq)]
pub struct GprofEntry {
    /// Position in the listing, from 1, by inclusive time.
    pub index: usize,
    /// Global region.
    pub region: u32,
    /// Share of the total time spent in it and its descendants.
    pub percent: f64,
    /// Exclusive seconds.
    pub self_s: f64,
    /// Inclusive minus exclusive seconds.
    pub children_s: f64,
    /// Calls from other functions.
    pub calls: u64,
    /// Calls from itself (recursion).
    pub recursive_calls: u64,
    /// Call-stack samples inside it (outermost nodes').
    pub samples: u64,
    /// Some of its times are estimated from samples (a node no event entered).
    pub estimated: bool,
    /// Callers.
    pub parents: Vec<Arc>,
    /// Callees.
    pub children: Vec<Arc>,
}

#[derive(Default, Clone, Copy)]
struct Acc {
    calls: u64,
    self_s: f64,
    children_s: f64,
    samples: u64,
    estimated: bool,
}

/// The call graph of a tree, entries by inclusive time descending.
pub fn call_graph(tree: &CallTree) -> Vec<GprofEntry> {
    let outer = tree.outermost();
    let nodes = tree.nodes();
    // (caller, callee) → totals; caller None = root.
    let mut arcs: BTreeMap<(Option<u32>, u32), Acc> = BTreeMap::new();
    let mut recursive: BTreeMap<u32, u64> = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let caller = n.parent.map(|p| nodes[p as usize].region);
        if caller == Some(n.region) {
            *recursive.entry(n.region).or_default() += n.calls;
            continue;
        }
        let a = arcs.entry((caller, n.region)).or_default();
        a.calls += n.calls;
        a.self_s += n.exclusive;
        a.estimated |= n.is_estimated();
        if outer[i] {
            a.children_s += n.inclusive - n.exclusive;
            a.samples += n.samples;
        }
    }
    let total = tree.total();
    let mut flat = flat_profile(tree);
    flat.sort_by(|a, b| {
        b.inclusive
            .partial_cmp(&a.inclusive)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.region.cmp(&b.region))
    });
    let rec = |r: u32| recursive.get(&r).copied().unwrap_or(0);
    let calls_of: BTreeMap<u32, u64> = flat
        .iter()
        .map(|f| (f.region, f.calls - rec(f.region)))
        .collect();
    flat.iter()
        .enumerate()
        .map(|(i, f)| {
            let parents = arcs
                .iter()
                .filter(|((_, callee), _)| *callee == f.region)
                .map(|((caller, _), a)| Arc {
                    region: *caller,
                    calls: a.calls,
                    total_calls: calls_of[&f.region],
                    self_s: a.self_s,
                    children_s: a.children_s,
                    samples: a.samples,
                    estimated: a.estimated,
                })
                .collect();
            let children = arcs
                .iter()
                .filter(|((caller, _), _)| *caller == Some(f.region))
                .map(|((_, callee), a)| Arc {
                    region: Some(*callee),
                    calls: a.calls,
                    total_calls: calls_of[callee],
                    self_s: a.self_s,
                    children_s: a.children_s,
                    samples: a.samples,
                    estimated: a.estimated,
                })
                .collect();
            GprofEntry {
                index: i + 1,
                region: f.region,
                percent: if total > 0.0 {
                    100.0 * f.inclusive / total
                } else {
                    0.0
                },
                self_s: f.exclusive,
                children_s: (f.inclusive - f.exclusive).max(0.0),
                calls: calls_of[&f.region],
                recursive_calls: rec(f.region),
                samples: f.samples,
                estimated: f.estimated,
                parents,
                children,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_children_and_recursion() {
        // main(10) -> f(6, 2 calls) -> f(1 call, 2) ; main -> g(1)
        let mut t = CallTree::new();
        let m = t.child(None, 0);
        t.add(m, 1, 3, 10.0, 3.0);
        let f = t.child(Some(m), 1);
        t.add(f, 2, 1, 6.0, 4.0);
        let f2 = t.child(Some(f), 1);
        t.add(f2, 1, 0, 2.0, 2.0);
        let g = t.child(Some(m), 2);
        t.add(g, 1, 0, 1.0, 1.0);
        let cg = call_graph(&t);
        assert_eq!(cg[0].region, 0);
        assert_eq!(cg[0].parents[0].region, None);
        assert_eq!(cg[0].children.len(), 2);
        let fe = &cg[1];
        assert_eq!(fe.region, 1);
        assert_eq!(fe.calls, 2);
        assert_eq!(fe.recursive_calls, 1);
        assert_eq!(fe.self_s, 6.0);
        assert_eq!(fe.parents[0].region, Some(0));
        assert_eq!(fe.parents[0].calls, 2);
        assert!((fe.percent - 60.0).abs() < 1e-9);
        assert!(!fe.estimated && !fe.parents[0].estimated);
    }

    #[test]
    fn sampled_functions_are_estimated_with_their_samples() {
        // main(1 call, 10 s) -> kernel (sampled only: 4 samples, 4 s) -> leaf (1 sample)
        let mut t = CallTree::new();
        let m = t.child(None, 0);
        t.add(m, 1, 0, 10.0, 5.0);
        t.add_samples(m, 5);
        let k = t.child(Some(m), 1);
        t.add(k, 0, 0, 5.0, 4.0);
        t.add_samples(k, 5);
        let l = t.child(Some(k), 2);
        t.add(l, 0, 0, 1.0, 1.0);
        t.add_samples(l, 1);
        let cg = call_graph(&t);
        let main = cg.iter().find(|e| e.region == 0).unwrap();
        assert!(!main.estimated && main.samples == 5 && main.calls == 1);
        let kernel = cg.iter().find(|e| e.region == 1).unwrap();
        assert!(kernel.estimated && kernel.samples == 5 && kernel.calls == 0);
        assert_eq!(kernel.self_s, 4.0);
        let from_main = &kernel.parents[0];
        assert_eq!(
            (from_main.region, from_main.samples, from_main.calls),
            (Some(0), 5, 0)
        );
        assert!(from_main.estimated);
        let to_leaf = &kernel.children[0];
        assert_eq!((to_leaf.region, to_leaf.samples), (Some(2), 1));
        assert!(to_leaf.estimated && main.children[0].estimated);
    }
}
