//! The critical path as segments (CPU on a thread, message, stream, synchronization, thread creation) and the critical-path profile at the procedure, thread, process or machine level.

use std::collections::HashMap;

use plx_format::Experiment;

use super::graph::{ArcKind, Graph, NodeKind, NONE};
use super::longest::LongestPath;
use crate::merge::{EventKind, GlobalMerge, MergeOptions, TraceLocation};
use crate::model::Model;
use crate::AnalysisError;

/// The kind of a path segment or profile item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    /// Time a thread ran (at the procedure level: a function's exclusive time).
    Cpu,
    /// A message or stream transfer between two threads.
    Msg,
    /// A lock, semaphore, condition, barrier, collective or join handing over.
    Sync,
    /// A thread creating another.
    Fork,
    /// A thread blocked in a call whose cause the graph does not show (`accept` waiting for
    /// a client): time on the path, but not CPU.
    Wait,
}

impl ItemKind {
    /// `cpu`, `msg`, `sync`, `fork`, `wait`.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Cpu => "cpu",
            ItemKind::Msg => "msg",
            ItemKind::Sync => "sync",
            ItemKind::Fork => "fork",
            ItemKind::Wait => "wait",
        }
    }
}

/// One piece of the critical path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// What it is.
    pub kind: ItemKind,
    /// The thread whose time it is (for a transfer: the receiving thread).
    pub location: u32,
    /// For a transfer or handoff, the thread it comes from.
    pub from: Option<u32>,
    /// Start, global ns.
    pub start_ns: i64,
    /// End, global ns (`end − start` is its weight).
    pub end_ns: i64,
    /// `CPU`, `message`, `stream`, `fork`, or the synchronization object or collective.
    pub what: String,
}

impl Segment {
    /// Its length, ns.
    pub fn length_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// The level of a critical-path profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Functions (exclusive time inside the path's CPU segments), transfers between threads.
    Procedure,
    /// Threads.
    Thread,
    /// Processes.
    Process,
    /// Machines (hosts).
    Machine,
}

impl Level {
    /// `procedure`, `thread`, `process`, `machine`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Procedure => "procedure",
            Level::Thread => "thread",
            Level::Process => "process",
            Level::Machine => "machine",
        }
    }
}

/// One row of a critical-path profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What kind of time.
    pub kind: ItemKind,
    /// `compute` (procedure level), `CPU: host:app[0.1]`, `Msg: A->B`, `Sync: mutex ...`,
    /// `Fork: A->B`.
    pub name: String,
    /// The one location (at the profile's level; threads at the procedure level) its time
    /// came from, `None` when several (IPS-2's ALL).
    pub location: Option<String>,
    /// Time on the path, ns.
    pub time_ns: i64,
}

/// The segments of a path, in path order; consecutive CPU segments of one thread joined.
pub fn segments(g: &Graph, path: &LongestPath) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (i, a) in path.arcs.iter().enumerate() {
        let to = &g.nodes[a.to as usize];
        if to.kind == NodeKind::Collective {
            // into the virtual node: nothing happens, the next arc leaves it
            continue;
        }
        let end = to.time_ns;
        let start = end - a.weight_ns;
        let seg = if a.thread && !a.transfer && to.kind == NodeKind::Unblocked {
            Segment {
                kind: ItemKind::Wait,
                location: to.loc,
                from: None,
                start_ns: start,
                end_ns: end,
                what: g
                    .labels
                    .get(to.label as usize)
                    .cloned()
                    .unwrap_or_else(|| "blocked".to_string()),
            }
        } else if a.thread && !a.transfer {
            Segment {
                kind: ItemKind::Cpu,
                location: to.loc,
                from: None,
                start_ns: start,
                end_ns: end,
                what: "CPU".to_string(),
            }
        } else {
            // a transfer reached along the receiving thread is still the message's time
            let from_node = &g.nodes[if a.transfer { to.remote } else { a.from } as usize];
            let from = if from_node.loc == NONE {
                // from a collective's virtual node: the member that arrived last
                i.checked_sub(1)
                    .map(|j| g.nodes[path.arcs[j].from as usize].loc)
            } else {
                Some(from_node.loc)
            };
            let (kind, what) = match to.arc {
                ArcKind::Msg => (ItemKind::Msg, "message".to_string()),
                ArcKind::Stream => (ItemKind::Msg, "stream".to_string()),
                ArcKind::Fork => (ItemKind::Fork, "thread creation".to_string()),
                ArcKind::Rendezvous => (ItemKind::Msg, "rendezvous".to_string()),
                ArcKind::Sync | ArcKind::Collective | ArcKind::None => (
                    ItemKind::Sync,
                    g.labels
                        .get(to.label as usize)
                        .cloned()
                        .unwrap_or_else(|| "sync".to_string()),
                ),
            };
            Segment {
                kind,
                location: to.loc,
                from,
                start_ns: start,
                end_ns: end,
                what,
            }
        };
        if let Some(last) = out.last_mut() {
            if seg.kind == ItemKind::Cpu
                && last.kind == ItemKind::Cpu
                && last.location == seg.location
                && last.end_ns == seg.start_ns
            {
                last.end_ns = seg.end_ns;
                continue;
            }
        }
        out.push(seg);
    }
    out
}

/// Names of locations at each level, in the one form of every command
/// ([`crate::location_name`]): [`TraceLocation::label`] for threads (`rank.thread` or
/// `pid.thread`, `app:` first in a session), without the thread for processes, the host for
/// machines.
pub fn location_name(_model: &Model, l: &TraceLocation, level: Level) -> String {
    let who = crate::location_name::Who::location(l);
    match level {
        Level::Machine => l.host.clone(),
        Level::Process => who.short(None),
        Level::Thread | Level::Procedure => who.short(Some(l.thread)),
    }
}

/// The critical-path profile of `segs` at `level`, rows by time (largest first, then name).
/// The procedure level reads the path's threads again (`exp`, `opts`, each thread alone as the
/// graph's merge gave it: [`Graph::replay`]) to split CPU segments among the functions running
/// in them.
pub fn profile(
    model: &Model,
    exp: &Experiment,
    g: &Graph,
    segs: &[Segment],
    level: Level,
    opts: MergeOptions,
) -> Result<Vec<Item>, AnalysisError> {
    let names: Vec<String> = g
        .locations
        .iter()
        .map(|l| location_name(model, l, level))
        .collect();
    let mut acc: HashMap<(ItemKind, String), (Option<String>, bool, i64)> = HashMap::new();
    let mut add = |kind: ItemKind, name: String, loc: &str, ns: i64| {
        let e = acc
            .entry((kind, name))
            .or_insert_with(|| (Some(loc.to_string()), false, 0));
        if e.0.as_deref() != Some(loc) {
            e.1 = true;
        }
        e.2 += ns;
    };
    for s in segs {
        let to = &names[s.location as usize];
        let from = s.from.map_or("?", |f| names[f as usize].as_str());
        match s.kind {
            ItemKind::Cpu if level == Level::Procedure => {}
            ItemKind::Cpu => add(ItemKind::Cpu, format!("CPU: {to}"), to, s.length_ns()),
            ItemKind::Msg => add(
                ItemKind::Msg,
                format!("Msg: {from}->{to}"),
                to,
                s.length_ns(),
            ),
            ItemKind::Fork => add(
                ItemKind::Fork,
                format!("Fork: {from}->{to}"),
                to,
                s.length_ns(),
            ),
            ItemKind::Sync => add(
                ItemKind::Sync,
                format!("Sync: {}", s.what),
                to,
                s.length_ns(),
            ),
            ItemKind::Wait => add(
                ItemKind::Wait,
                format!("Wait: {}", s.what),
                to,
                s.length_ns(),
            ),
        }
    }
    if level == Level::Procedure {
        for (name, loc, ns) in procedure_times(model, exp, g, segs, opts, None)? {
            add(ItemKind::Cpu, name, &names[loc as usize], ns);
        }
    }
    let mut items: Vec<Item> = acc
        .into_iter()
        .filter(|(_, (_, _, ns))| *ns > 0)
        .map(|((kind, name), (loc, several, ns))| Item {
            kind,
            name,
            location: if several { None } else { loc },
            time_ns: ns,
        })
        .collect();
    items.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.location.cmp(&b.location))
    });
    Ok(items)
}

/// A function's critical-path imbalance (Böhme et al., "Scalable critical-path based
/// performance analysis"): how much longer the path is in it than its mean time per thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Imbalance {
    /// The function ([`super::NO_FUNCTION`]: time in none).
    pub name: String,
    /// Its exclusive time on the path (the procedure level's row), ns.
    pub path_ns: i64,
    /// Its exclusive time per thread of the graph with events in the window, the mean, ns.
    pub mean_ns: f64,
    /// `path_ns − mean_ns` where positive: the path's time in it that a balanced program (every
    /// thread as long in it as the mean) would not have.
    pub imbalance_ns: f64,
}

/// Each function's critical-path imbalance, largest first (those with none left out): its
/// time on the path against its mean exclusive time per thread in the window.
pub fn imbalance(
    model: &Model,
    exp: &Experiment,
    g: &Graph,
    segs: &[Segment],
    opts: MergeOptions,
) -> Result<Vec<Imbalance>, AnalysisError> {
    let mut totals = Totals::default();
    let on_path = procedure_times(model, exp, g, segs, opts, Some(&mut totals))?;
    let mut path: HashMap<String, i64> = HashMap::new();
    for (name, _, ns) in on_path {
        *path.entry(name).or_default() += ns;
    }
    let threads = totals.threads.max(1) as f64;
    let mut out: Vec<Imbalance> = path
        .into_iter()
        .map(|(name, path_ns)| {
            let mean_ns = totals.by_name.get(&name).copied().unwrap_or(0) as f64 / threads;
            Imbalance {
                imbalance_ns: path_ns as f64 - mean_ns,
                name,
                path_ns,
                mean_ns,
            }
        })
        // time in no function is no function's unevenness (a thread's start before its first
        // event is on the path, in no thread's functions); under 1 ns is rounding
        .filter(|i| i.imbalance_ns >= 1.0 && i.name != super::NO_FUNCTION)
        .collect();
    out.sort_by(|a, b| {
        b.imbalance_ns
            .total_cmp(&a.imbalance_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

/// Every thread's exclusive time by function in the window (for the mean), and the threads
/// with events in it.
#[derive(Default)]
struct Totals {
    by_name: HashMap<String, i64>,
    threads: usize,
}

/// Exclusive time of each (function, thread) inside the path's CPU segments: a second pass
/// over each thread of the path alone ([`GlobalMerge::replay_location`]), its call stack
/// replayed; with `totals`, over every thread, each function's exclusive time in the window
/// too.
fn procedure_times(
    model: &Model,
    exp: &Experiment,
    g: &Graph,
    segs: &[Segment],
    opts: MergeOptions,
    totals: Option<&mut Totals>,
) -> Result<Vec<(String, u32, i64)>, AnalysisError> {
    let n = g.locations.len();
    let mut per_loc: Vec<Vec<(i64, i64)>> = vec![Vec::new(); n];
    for s in segs.iter().filter(|s| s.kind == ItemKind::Cpu) {
        if s.end_ns > s.start_ns {
            per_loc[s.location as usize].push((s.start_ns, s.end_ns));
        }
    }
    for v in &mut per_loc {
        v.sort_unstable();
    }
    let mut merge = GlobalMerge::new(model, exp, opts)?;
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut prev: Vec<Option<i64>> = vec![None; n];
    let mut cursor = vec![0usize; n];
    let mut times: HashMap<(u32, u32), i64> = HashMap::new();
    // the time [a, b) of `loc` went to the top of its stack: the part inside its segments
    let mut charge = |loc: usize, a: i64, b: i64, top: u32, cursor: &mut [usize]| {
        let v = &per_loc[loc];
        let mut i = cursor[loc];
        while i < v.len() && v[i].1 <= a {
            i += 1;
        }
        cursor[loc] = i;
        while i < v.len() && v[i].0 < b {
            let o = v[i].1.min(b) - v[i].0.max(a);
            if o > 0 {
                *times.entry((top, loc as u32)).or_default() += o;
            }
            if v[i].1 > b {
                break;
            }
            i += 1;
        }
    };
    let window = g.window;
    // every thread's time by function in the window (with totals)
    let mut all: HashMap<u32, i64> = HashMap::new();
    let mut threads = 0;
    // the latest event read: a thread's call open at the end lasts until the window's end or
    // this, whichever comes first (the whole run's window has no end)
    let mut latest = i64::MIN;
    // each thread with CPU segments read alone (every thread with totals), its events as the
    // graph's merge gave them (up to the first at or after the window's end): no second merge
    let every = totals.is_some();
    for li in (0..n).filter(|&li| every || !per_loc[li].is_empty()) {
        let mut ended = false;
        let mut seen = false;
        merge.replay_location(li as u32, &g.replay, |e| {
            if ended {
                return;
            }
            let t = e.time_ns.min(window.end_ns);
            latest = latest.max(t);
            if let Some(p) = prev[li] {
                let top = stacks[li].last().copied().unwrap_or(NONE);
                charge(li, p, t, top, &mut cursor);
                let from = p.max(window.start_ns);
                if every && t > from {
                    *all.entry(top).or_default() += t - from;
                }
            }
            seen |= e.time_ns >= window.start_ns && e.time_ns < window.end_ns;
            prev[li] = Some(t);
            if e.time_ns >= window.end_ns {
                ended = true;
                return;
            }
            match e.kind {
                EventKind::Enter { region } => stacks[li].push(region),
                EventKind::Exit { region } => {
                    if let Some(i) = stacks[li].iter().rposition(|r| *r == region) {
                        stacks[li].truncate(i);
                    }
                }
                _ => {}
            }
        });
        threads += usize::from(seen);
    }
    // a segment past a thread's last event read (the window's end): its open region (for
    // the mean too: a call the window's end cut)
    let end = window.end_ns.min(latest);
    for li in 0..n {
        if let Some(p) = prev[li] {
            let top = stacks[li].last().copied().unwrap_or(NONE);
            charge(li, p, window.end_ns, top, &mut cursor);
            let from = p.max(window.start_ns);
            if every && top != NONE && end > from {
                *all.entry(top).or_default() += end - from;
            }
        }
    }
    // what no event of the thread covers (before its first event read, say) is time in no
    // function, so that the rows add up to the path
    let mut charged = vec![0i64; n];
    for ((_, loc), ns) in &times {
        charged[*loc as usize] += ns;
    }
    for (li, segs) in per_loc.iter().enumerate() {
        let total: i64 = segs.iter().map(|(a, b)| b - a).sum();
        if total > charged[li] {
            *times.entry((NONE, li as u32)).or_default() += total - charged[li];
        }
    }
    let regions = merge.regions();
    let name = |r: u32| {
        if r == NONE {
            super::NO_FUNCTION.to_string()
        } else {
            regions.name(r).to_string()
        }
    };
    if let Some(tot) = totals {
        for (r, ns) in all {
            *tot.by_name.entry(name(r)).or_default() += ns;
        }
        tot.threads = threads;
    }
    Ok(times
        .into_iter()
        .map(|((r, loc), ns)| (name(r), loc, ns))
        .collect())
}
