//! Forward diffusion of path lengths over the graph in topological order (Kahn), active and passive for the inter-application mode, and the backward traversal that gives the critical path.
//!
//! Arc weights: a node `v` at `t_v` with thread predecessor `u` and remote predecessor `r`
//! gets `w = max(0, t_v − max(t_u, t_r))` on both arcs, so `L(v) = max(L(u), L(r)) + w` and
//! time spent waiting is never counted; without a remote predecessor the thread arc weighs
//! `t_v − t_u` (CPU); a collective's virtual node adds nothing to its arrivals' longest. In the
//! intra-application mode an arc from another application is ignored, but its time still
//! bounds the wait: waiting for another application is never counted either.

use super::graph::{Graph, NodeKind, NONE};

/// Which part of the graph, and how (IPS-2's three kinds of critical path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One application in isolation: only its threads, arcs to and from other applications
    /// ignored.
    Intra,
    /// One application and whatever delayed it: active diffusion from its threads' sources,
    /// passive (zero-length) diffusion from every other application's; the path begins and
    /// ends in the application.
    Inter,
    /// Every application (the physical tree), every arc.
    Global,
}

impl Mode {
    /// `intra`, `inter`, `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Intra => "intra",
            Mode::Inter => "inter",
            Mode::Global => "global",
        }
    }
}

/// One arc of the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArc {
    /// Its tail node.
    pub from: u32,
    /// Its head node.
    pub to: u32,
    /// Its weight, ns.
    pub weight_ns: i64,
    /// The head's thread arc (else its remote arc).
    pub thread: bool,
    /// The weight is a transfer's (the head is a receive whose message or stream bytes came
    /// from a thread in the view): the time between the send, or the receive's call if later,
    /// and the receive's return, whichever arc the path took.
    pub transfer: bool,
}

/// The longest path of a mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongestPath {
    /// Its length, ns.
    pub length_ns: i64,
    /// Its arcs from the first node (a source) to the terminal.
    pub arcs: Vec<PathArc>,
    /// Its first node.
    pub first: u32,
    /// The terminal node.
    pub terminal: u32,
    /// Nodes whose remote predecessors had to be ignored to break a cycle (clocks that
    /// contradict the order of events).
    pub cycles_broken: u64,
}

const DONE: u8 = 1;
const ACTIVE: u8 = 2;

/// The part of the graph a mode uses.
struct View<'g> {
    g: &'g Graph,
    mode: Mode,
    app: Option<u32>,
}

impl View<'_> {
    #[inline]
    fn included(&self, v: u32) -> bool {
        match (self.mode, self.app) {
            (Mode::Intra, Some(a)) => {
                let n = &self.g.nodes[v as usize];
                if n.loc == NONE {
                    self.g.members[n.remote as usize]
                        .first()
                        .is_some_and(|&m| self.g.app_of(m) == Some(a))
                } else {
                    self.g.loc_app[n.loc as usize] == a
                }
            }
            _ => true,
        }
    }

    /// A node of the application of interest (all nodes outside intra and inter).
    #[inline]
    fn own(&self, v: u32) -> bool {
        match (self.mode, self.app) {
            (Mode::Intra | Mode::Inter, Some(a)) => self.g.app_of(v) == Some(a),
            _ => true,
        }
    }

    /// Calls `f(pred, thread_arc)` for each predecessor of `v` in the view.
    #[inline]
    fn preds(&self, v: u32, mut f: impl FnMut(u32, bool)) {
        let n = &self.g.nodes[v as usize];
        if n.kind == NodeKind::Collective {
            for &m in &self.g.members[n.remote as usize] {
                if self.included(m) {
                    f(m, false);
                }
            }
            return;
        }
        if n.prev != NONE {
            f(n.prev, true);
        }
        if n.remote != NONE && self.included(n.remote) {
            f(n.remote, false);
        }
    }

    /// The weight of `v`'s incoming arcs (the same for both), counting only the predecessors
    /// accepted by `ok`.
    #[inline]
    fn weight(&self, v: u32, ok: impl Fn(u32) -> bool) -> i64 {
        let n = &self.g.nodes[v as usize];
        if n.kind == NodeKind::Collective {
            return 0;
        }
        let t = |x: u32| self.g.nodes[x as usize].time_ns;
        let u = (n.prev != NONE && ok(n.prev)).then(|| t(n.prev));
        // a wait for another application is unproductive time even where its arc is ignored
        // (intra): the remote predecessor's time still bounds the wait
        let r =
            (n.remote != NONE && (!self.included(n.remote) || ok(n.remote))).then(|| t(n.remote));
        match (u, r) {
            (_, Some(tr)) => (n.time_ns - u.map_or(tr, |tu| tu.max(tr))).max(0),
            (Some(tu), None) => (n.time_ns - tu).max(0),
            (None, None) => 0,
        }
    }

    /// The view's in-degrees, and its successors in CSR form (node `v`'s are
    /// `succ[start[v]..start[v + 1]]`), over the nodes `inc` includes: (indeg, start, succ).
    fn successors(&self, inc: &[bool]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let n = inc.len();
        let mut indeg = vec![0u32; n];
        let mut start = vec![0u32; n + 1];
        for v in 0..n as u32 {
            if !inc[v as usize] {
                continue;
            }
            self.preds(v, |p, _| {
                start[p as usize + 1] += 1;
                indeg[v as usize] += 1;
            });
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut succ = vec![0u32; start[n] as usize];
        for v in 0..n as u32 {
            if !inc[v as usize] {
                continue;
            }
            self.preds(v, |p, _| {
                succ[fill[p as usize] as usize] = v;
                fill[p as usize] += 1;
            });
        }
        (indeg, start, succ)
    }
}

impl Graph {
    /// The critical path of `mode` for application `app` (`None`: every application; for
    /// intra and inter, `None` is the global path). `None` when the view has no thread end.
    pub fn longest_path(&self, mode: Mode, app: Option<u32>) -> Option<LongestPath> {
        let view = View { g: self, mode, app };
        let n = self.nodes.len();
        let inc: Vec<bool> = (0..n as u32).map(|v| view.included(v)).collect();
        let (mut indeg, start, succ) = view.successors(&inc);

        let mut len = vec![0i64; n];
        let mut best = vec![NONE; n];
        let mut flags = vec![0u8; n];
        // Nodes are taken in index order (the merge's, about time order: the arrays are read
        // front to back, not at random) as far as their predecessors are done: a node ready
        // before the sweep reaches it waits for the sweep; one that becomes ready behind it (a
        // collective's departure, whose virtual node comes later) goes on `ready`. The lengths
        // do not depend on the order: a node's are taken from its predecessors, all done.
        let mut ready: Vec<u32> = Vec::new();
        let mut sweep = 0usize;
        let total = inc.iter().filter(|&&i| i).count();
        let mut done = 0usize;
        let mut cycles_broken = 0u64;
        let mut scan = 0usize;
        loop {
            let next = ready.pop().or_else(|| {
                while sweep < n {
                    let i = sweep;
                    sweep += 1;
                    if inc[i] && indeg[i] == 0 && flags[i] & DONE == 0 {
                        return Some(i as u32);
                    }
                }
                None
            });
            let Some(v) = next else {
                if done == total {
                    break;
                }
                // a cycle: take the earliest unfinished node whose thread predecessor is done
                // and ignore its unfinished remote predecessors
                let pick = (scan..n)
                    .filter(|&i| inc[i] && flags[i] & DONE == 0)
                    .filter(|&i| {
                        let p = self.nodes[i].prev;
                        p == NONE || flags[p as usize] & DONE != 0
                    })
                    .min_by_key(|&i| (self.nodes[i].time_ns, i));
                let Some(i) = pick else { break };
                scan = (scan..n)
                    .find(|&i| inc[i] && flags[i] & DONE == 0)
                    .unwrap_or(n);
                cycles_broken += 1;
                ready.push(i as u32);
                continue;
            };
            let vi = v as usize;
            if flags[vi] & DONE != 0 {
                continue;
            }
            let is_done = |p: u32| flags[p as usize] & DONE != 0;
            let w = view.weight(v, is_done);
            let (mut l, mut b, mut active, mut any) = (0i64, NONE, false, false);
            let mut passive_pred = NONE;
            view.preds(v, |p, thread| {
                let pi = p as usize;
                if flags[pi] & DONE == 0 {
                    return;
                }
                any = true;
                if mode == Mode::Inter && flags[pi] & ACTIVE == 0 {
                    // passive diffusion: zero length, never beats an active one
                    if passive_pred == NONE {
                        passive_pred = p;
                    }
                    return;
                }
                let cand = len[pi] + w;
                // ties stay on the thread
                if !active || cand > l || (cand == l && thread) {
                    l = cand;
                    b = p;
                    active = true;
                }
            });
            if !any {
                // a source: active where the diffusion starts
                active = mode != Mode::Inter || view.own(v);
            } else if !active {
                l = 0;
                b = passive_pred;
            }
            len[vi] = if active { l } else { 0 };
            best[vi] = b;
            flags[vi] |= DONE | if active { ACTIVE } else { 0 };
            done += 1;
            for &s in &succ[start[vi] as usize..start[vi + 1] as usize] {
                let d = &mut indeg[s as usize];
                *d -= 1;
                if *d == 0 && flags[s as usize] & DONE == 0 && (s as usize) < sweep {
                    ready.push(s);
                }
            }
        }

        // the terminal: an end of the application's threads with the greatest length
        let terminal = (0..n as u32)
            .filter(|&v| {
                let i = v as usize;
                self.nodes[i].kind == NodeKind::End
                    && inc[i]
                    && view.own(v)
                    && flags[i] & DONE != 0
                    && flags[i] & ACTIVE != 0
            })
            .max_by_key(|&v| {
                (
                    len[v as usize],
                    self.nodes[v as usize].time_ns,
                    std::cmp::Reverse(v),
                )
            })?;
        let mut arcs = Vec::new();
        let mut v = terminal;
        while best[v as usize] != NONE {
            let p = best[v as usize];
            let node = &self.nodes[v as usize];
            let thread = node.prev == p;
            // a receive's time is its transfer's, a collective's departure its operation's
            // (after the last arrival), whichever arc the path took
            let transfer = matches!(
                node.kind,
                NodeKind::Recv | NodeKind::StreamRecv | NodeKind::Depart
            ) && node.remote != NONE
                && inc[node.remote as usize];
            arcs.push(PathArc {
                from: p,
                to: v,
                weight_ns: len[v as usize] - len[p as usize],
                thread,
                transfer,
            });
            v = p;
        }
        arcs.reverse();
        Some(LongestPath {
            length_ns: len[terminal as usize],
            arcs,
            first: v,
            terminal,
            cycles_broken,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::critpath::graph::{ArcKind, Node};
    use crate::merge::TraceLocation;
    use crate::selection::Window;

    /// A graph of `threads` threads of one application from its nodes: (time, thread or NONE,
    /// kind, remote), each thread's nodes in index order.
    fn graph(threads: u32, nodes: &[(i64, u32, NodeKind, u32)], members: Vec<Vec<u32>>) -> Graph {
        let mut last = vec![NONE; threads as usize];
        let nodes = nodes
            .iter()
            .enumerate()
            .map(|(i, &(time_ns, loc, kind, remote))| {
                let prev = if loc == NONE {
                    NONE
                } else {
                    std::mem::replace(&mut last[loc as usize], i as u32)
                };
                let arc = match (kind, remote) {
                    (_, NONE) => ArcKind::None,
                    (NodeKind::Depart, _) => ArcKind::Collective,
                    _ => ArcKind::Msg,
                };
                Node {
                    time_ns,
                    loc,
                    prev,
                    remote,
                    kind,
                    arc,
                    label: NONE,
                }
            })
            .collect();
        let location = |thread| TraceLocation {
            process: 0,
            thread,
            rank: None,
            pid: 1,
            image: 0,
            host: String::new(),
            name: String::new(),
            app: String::new(),
            rank_base: 0,
        };
        Graph {
            nodes,
            members,
            labels: Vec::new(),
            locations: (0..threads).map(location).collect(),
            loc_app: vec![0; threads as usize],
            window: Window::ALL,
            events: 0,
            origin_ns: 0,
            span_ns: (0, 50),
            warnings: Vec::new(),
            replay: Default::default(),
        }
    }

    fn arcs(p: &LongestPath) -> Vec<(u32, u32, i64, bool)> {
        p.arcs
            .iter()
            .map(|a| (a.from, a.to, a.weight_ns, a.thread))
            .collect()
    }

    /// A barrier whose virtual node comes after the departures that wait for it (as the
    /// graph makes it: at the instance's end): the late arrival's wait-free time is the path.
    #[test]
    fn collective_node_after_its_departures() {
        use NodeKind::*;
        let g = graph(
            2,
            &[
                (0, 0, Start, NONE),   // 0
                (0, 1, Start, NONE),   // 1
                (10, 0, Arrive, NONE), // 2
                (30, 1, Arrive, NONE), // 3
                (40, 0, Depart, 8),    // 4
                (40, 1, Depart, 8),    // 5
                (50, 0, End, NONE),    // 6
                (45, 1, End, NONE),    // 7
                (30, NONE, Collective, 0),
            ],
            vec![vec![2, 3]],
        );
        let p = g.longest_path(Mode::Global, None).expect("a path");
        assert_eq!(p.length_ns, 50);
        assert_eq!((p.first, p.terminal, p.cycles_broken), (1, 6, 0));
        assert_eq!(
            arcs(&p),
            [
                (1, 3, 30, true),
                (3, 8, 0, false),
                (8, 4, 10, false),
                (4, 6, 10, true)
            ]
        );
    }

    /// Two receives each waiting for the other's later send (clocks that contradict the
    /// order): the cycle is broken at the earliest receive, whose remote arc is ignored.
    #[test]
    fn cycle_is_broken_at_the_earliest_receive() {
        use NodeKind::*;
        let g = graph(
            2,
            &[
                (0, 0, Start, NONE), // 0
                (0, 1, Start, NONE), // 1
                (10, 0, Recv, 5),    // 2: waits for thread 1's send
                (12, 1, Recv, 4),    // 3: waits for thread 0's send
                (20, 0, Send, NONE), // 4
                (25, 1, Send, NONE), // 5
                (30, 0, End, NONE),  // 6
                (40, 1, End, NONE),  // 7
            ],
            Vec::new(),
        );
        let p = g.longest_path(Mode::Global, None).expect("a path");
        assert_eq!(p.cycles_broken, 1);
        // 2 goes first (its remote ignored: 10 on its thread), then 4 (20), 3 from 4's send
        // (its wait ends at 12 < 20: no time), 5 (+13), 7 (+15)
        assert_eq!(p.length_ns, 48);
        assert_eq!(
            arcs(&p),
            [
                (0, 2, 10, true),
                (2, 4, 10, true),
                (4, 3, 0, false),
                (3, 5, 13, true),
                (5, 7, 15, true)
            ]
        );
    }
}
