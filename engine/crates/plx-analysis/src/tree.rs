//! The callpath tree in seconds: nodes, keyed insertion, merging and phase subtrees.

use crate::hash::{child_key, FastMap};

/// One callpath node.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Global region index (see [`crate::RegionTable`]).
    pub region: u32,
    /// Parent node, `None` for a root.
    pub parent: Option<u32>,
    /// Times entered.
    pub calls: u64,
    /// Calls made from it to measured children.
    pub child_calls: u64,
    /// Inclusive time, seconds.
    pub inclusive: f64,
    /// Exclusive time, seconds.
    pub exclusive: f64,
    /// Inclusive CPU time, seconds, of a function selected by the filter rule `cputime`;
    /// `None` when not measured.
    pub cpu: Option<f64>,
    /// Call-stack samples taken inside this callpath (inclusive: in it or below it).
    pub samples: u64,
}

impl Node {
    /// A frame known from call-stack samples only: no event entered it, so it has no calls
    /// and its times are estimated from its samples (samples × period, CPU time).
    pub fn is_estimated(&self) -> bool {
        self.calls == 0 && self.samples > 0
    }
}

/// A callpath tree; a parent always precedes its children, and (parent, region) is unique.
#[derive(Debug, Clone, Default)]
pub struct CallTree {
    nodes: Vec<Node>,
    index: FastMap<u64, u32>,
}

impl CallTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// The nodes in order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node for `region` under `parent`, created empty if absent.
    pub fn child(&mut self, parent: Option<u32>, region: u32) -> u32 {
        let key = child_key(parent, region);
        if let Some(&n) = self.index.get(&key) {
            return n;
        }
        let n = self.nodes.len() as u32;
        self.nodes.push(Node {
            region,
            parent,
            calls: 0,
            child_calls: 0,
            inclusive: 0.0,
            exclusive: 0.0,
            cpu: None,
            samples: 0,
        });
        self.index.insert(key, n);
        n
    }

    /// Adds counts and times to node `n`.
    pub fn add(&mut self, n: u32, calls: u64, child_calls: u64, inclusive: f64, exclusive: f64) {
        let node = &mut self.nodes[n as usize];
        // counts come from files: a damaged one may hold anything, so they saturate
        node.calls = node.calls.saturating_add(calls);
        node.child_calls = node.child_calls.saturating_add(child_calls);
        node.inclusive += inclusive;
        node.exclusive += exclusive;
    }

    /// Adds CPU seconds to node `n` (making its CPU time known).
    pub fn add_cpu(&mut self, n: u32, cpu: f64) {
        let c = &mut self.nodes[n as usize].cpu;
        *c = Some(c.unwrap_or(0.0) + cpu);
    }

    /// Adds call-stack samples to node `n`.
    pub fn add_samples(&mut self, n: u32, samples: u64) {
        let node = &mut self.nodes[n as usize];
        node.samples = node.samples.saturating_add(samples);
    }

    /// Takes `seconds` of estimated time out of node `n`'s exclusive time (given to its
    /// sampled children), never below zero.
    pub fn take_exclusive(&mut self, n: u32, seconds: f64) {
        let node = &mut self.nodes[n as usize];
        node.exclusive = (node.exclusive - seconds).max(0.0);
    }

    /// Does any node have call-stack samples?
    pub fn has_samples(&self) -> bool {
        self.nodes.iter().any(|n| n.samples > 0)
    }

    /// Per node, the samples taken in its own code: its samples less its children's (a
    /// sample's innermost frame is counted once, at its node).
    pub fn self_samples(&self) -> Vec<u64> {
        let mut own: Vec<u64> = self.nodes.iter().map(|n| n.samples).collect();
        for n in &self.nodes {
            if let Some(p) = n.parent {
                own[p as usize] = own[p as usize].saturating_sub(n.samples);
            }
        }
        own
    }

    /// Does any node have a CPU time?
    pub fn has_cpu(&self) -> bool {
        self.nodes.iter().any(|n| n.cpu.is_some())
    }

    /// Merges all of `other` into this tree (same callpaths add up).
    pub fn merge(&mut self, other: &CallTree) {
        let mut map = vec![0u32; other.nodes.len()];
        for (i, n) in other.nodes.iter().enumerate() {
            let parent = n.parent.map(|p| map[p as usize]);
            let m = self.child(parent, n.region);
            self.add(m, n.calls, n.child_calls, n.inclusive, n.exclusive);
            if let Some(c) = n.cpu {
                self.add_cpu(m, c);
            }
            self.add_samples(m, n.samples);
            map[i] = m;
        }
    }

    /// Children lists of every node.
    pub fn children(&self) -> Vec<Vec<u32>> {
        let mut c = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                c[p as usize].push(i as u32);
            }
        }
        c
    }

    /// For each node: true if no ancestor has the same region (its time is not inside another call of it).
    pub fn outermost(&self) -> Vec<bool> {
        // Parents precede children, so one forward pass can carry each node's ancestor-region set
        // as a walk up the parent chain; memoise the nearest same-region answer per (node) by
        // walking with a per-region "open" counter over an explicit DFS instead.
        let children = self.children();
        let max_region = self.nodes.iter().map(|n| n.region).max().unwrap_or(0) as usize;
        let mut open = vec![0u32; max_region + 1];
        let mut out = vec![true; self.nodes.len()];
        let mut stack: Vec<(u32, bool)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.parent.is_none())
            .map(|(i, _)| (i as u32, false))
            .collect();
        while let Some((n, leaving)) = stack.pop() {
            let r = self.nodes[n as usize].region as usize;
            if leaving {
                open[r] -= 1;
                continue;
            }
            out[n as usize] = open[r] == 0;
            open[r] += 1;
            stack.push((n, true));
            for &c in children[n as usize].iter().rev() {
                stack.push((c, false));
            }
        }
        out
    }

    /// The regions from the root down to node `n`.
    pub fn path(&self, n: u32) -> Vec<u32> {
        let mut p = Vec::new();
        let mut cur = Some(n);
        while let Some(c) = cur {
            p.push(self.nodes[c as usize].region);
            cur = self.nodes[c as usize].parent;
        }
        p.reverse();
        p
    }

    /// Calls `each` with the regions of node `n`'s path from the root, without building it:
    /// memory is the depth in node indices only once per call (no region vector per node).
    pub fn for_each_in_path(&self, n: u32, mut each: impl FnMut(u32)) {
        let mut chain = Vec::new();
        let mut cur = Some(n);
        while let Some(c) = cur {
            chain.push(c);
            cur = self.nodes[c as usize].parent;
        }
        for &c in chain.iter().rev() {
            each(self.nodes[c as usize].region);
        }
    }

    /// Each node's rank when the paths (region ids from the root) are sorted as sequences: a
    /// depth-first walk, children by region (a prefix sorts before its extensions). Linear in
    /// the nodes (after sorting siblings), iterative whatever the depth.
    pub fn path_order(&self) -> Vec<u32> {
        let n = self.nodes.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            match node.parent {
                Some(p) => children[p as usize].push(i as u32),
                None => roots.push(i as u32),
            }
        }
        let by_region = |v: &mut Vec<u32>| v.sort_by_key(|&c| self.nodes[c as usize].region);
        by_region(&mut roots);
        let mut order = vec![0u32; n];
        let mut next = 0u32;
        // a stack of nodes still to visit, the next sibling on top
        let mut stack: Vec<u32> = roots.into_iter().rev().collect();
        while let Some(c) = stack.pop() {
            order[c as usize] = next;
            next += 1;
            let mut kids = std::mem::take(&mut children[c as usize]);
            by_region(&mut kids);
            stack.extend(kids.into_iter().rev());
        }
        order
    }

    /// Sum of the roots' inclusive times.
    pub fn total(&self) -> f64 {
        self.nodes
            .iter()
            .filter(|n| n.parent.is_none())
            .map(|n| n.inclusive)
            .sum()
    }
}

/// One node's callpath as the names of its regions from the root, serialized as the tree is
/// walked, never built as a value (a chain N deep names N²/2 regions in all): the JSON report's
/// and the viewer's callpath rows.
pub struct PathNames<'a> {
    /// The tree the node is in.
    pub tree: &'a CallTree,
    /// The node whose path this is.
    pub node: u32,
    /// The names of the regions.
    pub regions: &'a crate::RegionTable,
}

impl serde::Serialize for PathNames<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        let mut result = Ok(());
        self.tree.for_each_in_path(self.node, |r| {
            if result.is_ok() {
                result = seq.serialize_element(self.regions.name(r));
            }
        });
        result?;
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_same_paths() {
        let mut a = CallTree::new();
        let r = a.child(None, 1);
        a.add(r, 1, 1, 3.0, 1.0);
        let c = a.child(Some(r), 2);
        a.add(c, 1, 0, 2.0, 2.0);
        let mut b = a.clone();
        let d = b.child(Some(0), 3);
        b.add(d, 2, 0, 0.5, 0.5);
        a.merge(&b);
        assert_eq!(a.nodes().len(), 3);
        assert_eq!(a.nodes()[0].calls, 2);
        assert_eq!(a.nodes()[1].inclusive, 4.0);
        assert_eq!(a.path(2), vec![1, 3]);
    }

    #[test]
    fn outermost_marks_recursion() {
        let mut t = CallTree::new();
        let a = t.child(None, 1);
        let b = t.child(Some(a), 2);
        let a2 = t.child(Some(b), 1);
        let c = t.child(Some(a2), 3);
        assert_eq!(t.outermost(), vec![true, true, false, true]);
        let _ = c;
    }
}
