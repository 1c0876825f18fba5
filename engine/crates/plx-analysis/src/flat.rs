//! Flat (per region) and callpath rows derived from a callpath tree.

use crate::tree::CallTree;

/// One region's totals over a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct FlatRow {
    /// Global region index.
    pub region: u32,
    /// Calls, summed over its nodes.
    pub calls: u64,
    /// Calls to children, summed.
    pub child_calls: u64,
    /// Exclusive seconds, summed.
    pub exclusive: f64,
    /// Inclusive seconds, summed over nodes with no ancestor of the same region.
    pub inclusive: f64,
    /// Inclusive CPU seconds (filter rule `cputime`), summed like `inclusive`; `None` when no
    /// node of the region has one.
    pub cpu: Option<f64>,
    /// Call-stack samples inside it, summed like `inclusive`.
    pub samples: u64,
    /// Some of its times are estimated from samples (a node no event entered).
    pub estimated: bool,
}

/// One callpath (node) of a tree. The path itself is not held (a chain N deep would hold N²/2
/// regions): [`CallTree::path`] or [`CallTree::for_each_in_path`] give it from `node`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallpathRow {
    /// The node of the tree.
    pub node: u32,
    /// Calls.
    pub calls: u64,
    /// Calls to children.
    pub child_calls: u64,
    /// Exclusive seconds.
    pub exclusive: f64,
    /// Inclusive seconds.
    pub inclusive: f64,
    /// Inclusive CPU seconds (filter rule `cputime`), if measured.
    pub cpu: Option<f64>,
    /// Call-stack samples inside it (inclusive).
    pub samples: u64,
    /// Its times are estimated from samples (no event entered it).
    pub estimated: bool,
}

/// Sorts by exclusive time descending, then by `key` for a stable order.
fn by_exclusive<T, K: Ord>(rows: &mut [T], excl: impl Fn(&T) -> f64, key: impl Fn(&T) -> K) {
    rows.sort_by(|a, b| {
        excl(b)
            .partial_cmp(&excl(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| key(a).cmp(&key(b)))
    });
}

/// The flat profile of a tree, by exclusive time descending (recursion not double counted).
pub fn flat_profile(tree: &CallTree) -> Vec<FlatRow> {
    let outer = tree.outermost();
    let mut rows: Vec<FlatRow> = Vec::new();
    let mut slot: Vec<Option<usize>> = Vec::new();
    for (i, n) in tree.nodes().iter().enumerate() {
        let r = n.region as usize;
        if slot.len() <= r {
            slot.resize(r + 1, None);
        }
        let k = *slot[r].get_or_insert_with(|| {
            rows.push(FlatRow {
                region: n.region,
                calls: 0,
                child_calls: 0,
                exclusive: 0.0,
                inclusive: 0.0,
                cpu: None,
                samples: 0,
                estimated: false,
            });
            rows.len() - 1
        });
        let row = &mut rows[k];
        row.calls += n.calls;
        row.child_calls += n.child_calls;
        row.exclusive += n.exclusive;
        row.estimated |= n.is_estimated();
        if outer[i] {
            row.inclusive += n.inclusive;
            row.samples += n.samples;
            if let Some(c) = n.cpu {
                row.cpu = Some(row.cpu.unwrap_or(0.0) + c);
            }
        }
    }
    by_exclusive(&mut rows, |r| r.exclusive, |r| r.region);
    rows
}

/// Every callpath of a tree, by exclusive time descending, then by path (region ids from the
/// root, compared as sequences). Memory is linear in the nodes, whatever the depth.
pub fn callpath_rows(tree: &CallTree) -> Vec<CallpathRow> {
    let order = tree.path_order();
    let mut rows: Vec<CallpathRow> = tree
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, n)| CallpathRow {
            node: i as u32,
            calls: n.calls,
            child_calls: n.child_calls,
            exclusive: n.exclusive,
            inclusive: n.inclusive,
            cpu: n.cpu,
            samples: n.samples,
            estimated: n.is_estimated(),
        })
        .collect();
    by_exclusive(&mut rows, |r| r.exclusive, |r| order[r.node as usize]);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursion_inclusive_counted_once() {
        // a(10) -> a(6) -> b(2)
        let mut t = CallTree::new();
        let a = t.child(None, 0);
        t.add(a, 1, 1, 10.0, 4.0);
        let a2 = t.child(Some(a), 0);
        t.add(a2, 1, 1, 6.0, 4.0);
        let b = t.child(Some(a2), 1);
        t.add(b, 1, 0, 2.0, 2.0);
        let f = flat_profile(&t);
        assert_eq!(f[0].region, 0);
        assert_eq!(f[0].calls, 2);
        assert_eq!(f[0].exclusive, 8.0);
        assert_eq!(f[0].inclusive, 10.0);
        assert_eq!(f[1].inclusive, 2.0);
        let c = callpath_rows(&t);
        assert_eq!(c.len(), 3);
        assert_eq!(t.path(c[2].node), vec![0, 0, 1]);
    }
}
