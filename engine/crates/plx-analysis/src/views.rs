//! Aggregations of the model: one table per thread or per process, then the total over
//! everything; and the model of a window of time, rebuilt from the trace.

use crate::hash::FastMap;
use crate::messages::MessageStat;
use crate::model::{Model, ProcessModel};
use crate::rebuild::{ProfileBuilder, TickNode};
use crate::regions::{RegionInfo, RegionTable};
use crate::selection::Window;
use crate::sync::SyncStat;
use crate::tree::CallTree;
use crate::userstats::{merge_stats, UserStat};
use crate::AnalysisError;
use plx_format::{Event, RegionKind, Warning, WarningKind, NONE_U32};

/// How to group locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// One table per thread.
    Thread,
    /// One table per process image.
    Process,
}

/// One table's location and data.
#[derive(Debug, Clone)]
pub struct Table {
    /// Index into `Model::processes`, `None` for the total.
    pub process: Option<usize>,
    /// Thread index, `None` for a process or the total.
    pub thread: Option<u32>,
    /// Callpath tree of the location.
    pub tree: CallTree,
    /// CPU seconds (threads summed), if known.
    pub cpu_s: Option<f64>,
    /// Wall seconds (the longest thread), if known.
    pub wall_s: Option<f64>,
    /// User event statistics.
    pub user_events: Vec<UserStat>,
}

fn sum_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0.0) + v))
}

fn max_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.map_or(v, |a: f64| a.max(v))))
}

impl Model {
    /// The global region index of phase `name`, or an error if no process defines it.
    pub fn phase(&self, name: &str) -> Result<u32, AnalysisError> {
        self.regions
            .find(name, RegionKind::Phase)
            .ok_or_else(|| AnalysisError::NoSuchPhase(name.to_string()))
    }

    /// Tables grouped `by`, then the total (a phase: [`Model::windowed`], docs/phases.md).
    pub fn tables(&self, by: GroupBy) -> (Vec<Table>, Table) {
        let mut tables = Vec::new();
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            match by {
                GroupBy::Thread => {
                    for t in &p.threads {
                        tables.push(Table {
                            process: Some(pi),
                            thread: Some(t.thread),
                            tree: t.tree.clone(),
                            cpu_s: t.cpu_s,
                            wall_s: t.wall_s,
                            user_events: t.user_events.clone(),
                        });
                    }
                }
                GroupBy::Process => {
                    let mut tree = CallTree::new();
                    for t in &p.threads {
                        tree.merge(&t.tree);
                    }
                    tables.push(Table {
                        process: Some(pi),
                        thread: None,
                        tree,
                        cpu_s: sum_opt(p.threads.iter().map(|t| t.cpu_s)),
                        wall_s: max_opt(p.threads.iter().map(|t| t.wall_s)),
                        user_events: merge_stats(
                            p.threads.iter().map(|t| t.user_events.as_slice()),
                        ),
                    });
                }
            }
        }
        let mut total = CallTree::new();
        for t in &tables {
            total.merge(&t.tree);
        }
        let total = Table {
            process: None,
            thread: None,
            tree: total,
            cpu_s: sum_opt(tables.iter().map(|t| t.cpu_s)),
            wall_s: max_opt(tables.iter().map(|t| t.wall_s)),
            user_events: merge_stats(tables.iter().map(|t| t.user_events.as_slice())),
        };
        (tables, total)
    }
}

impl Model {
    /// The model of window `w` (global ns, as [`crate::phase_window`] gives it): every traced
    /// thread's profile, message and synchronization statistics rebuilt from its trace with
    /// times clipped to the window — a call partly inside counts its time inside only, and is
    /// counted in `calls` if it begins inside; messages, user event values, acquisitions (their
    /// wait's beginning) and releases count if they happen inside. Wall time is the part of the
    /// thread's traced span inside the window; CPU time is unknown (`None`), and user events are
    /// left out (the trace's values carry no name here). Threads without a trace keep nothing
    /// and a warning says so. Errors when no process has a trace.
    pub fn windowed(&self, w: Window) -> Result<Model, AnalysisError> {
        if !self.processes.iter().any(ProcessModel::has_trace) {
            return Err(self.no_event_trace());
        }
        let mut m = self.clone();
        let start = w.start_ns.max(0) as u64;
        let end = w.end_ns.max(0) as u64;
        let mut warnings = Vec::new();
        for p in m.processes.iter_mut() {
            window_process(p, start, end, &mut m.regions, &mut warnings);
        }
        m.warnings.extend(warnings);
        Ok(m)
    }
}

/// Global ns of an instant of the process, clamped at 0 (the clipped builder's unit).
fn global_ns(p: &ProcessModel, ticks: u64) -> u64 {
    p.rank0_ns(ticks).round().max(0.0) as u64
}

/// The event with its times in global ns (a wait becomes the ns between its two instants).
fn event_ns(p: &ProcessModel, ev: Event) -> Event {
    let t = global_ns(p, ev.ticks());
    match ev {
        Event::Enter { region, .. } => Event::Enter { region, ticks: t },
        Event::Exit { region, .. } => Event::Exit { region, ticks: t },
        Event::Acquire {
            object,
            kind,
            holder,
            wait_ticks,
            shared,
            ticks,
        } => Event::Acquire {
            object,
            kind,
            holder,
            wait_ticks: t.saturating_sub(global_ns(p, ticks.saturating_sub(wait_ticks))),
            shared,
            ticks: t,
        },
        Event::Release { object, kind, .. } => Event::Release {
            object,
            kind,
            ticks: t,
        },
        Event::Send {
            peer,
            tag,
            bytes,
            comm,
            ..
        } => Event::Send {
            peer,
            tag,
            bytes,
            comm,
            ticks: t,
        },
        Event::Recv {
            peer,
            tag,
            bytes,
            comm,
            ..
        } => Event::Recv {
            peer,
            tag,
            bytes,
            comm,
            ticks: t,
        },
        Event::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
            ..
        } => Event::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
            ticks: t,
        },
        // the rest counts only by its time (user values are left out of a window)
        _ => Event::TimeReset { ticks: t },
    }
}

fn window_process(
    p: &mut ProcessModel,
    start: u64,
    end: u64,
    regions: &mut RegionTable,
    warnings: &mut Vec<Warning>,
) {
    for t in &mut p.threads {
        t.tree = CallTree::new();
        t.cpu_s = None;
        t.wall_s = None;
        t.messages.clear();
        t.sync.clear();
        t.user_events.clear();
    }
    if !p.measured {
        return;
    }
    let Some(index) = p.trace.clone().filter(|t| !t.chunks.is_empty()) else {
        warnings.push(Warning::file(
            &p.path,
            WarningKind::MissingFile,
            format!(
                "process {} has no trace: it has no data in the window",
                p.pid
            ),
        ));
        return;
    };
    let runtime: Vec<u32> = p
        .region_map
        .iter()
        .filter(|(_, g)| regions.get(**g).kind == RegionKind::Runtime)
        .map(|(l, _)| *l)
        .collect();
    let mut builders: FastMap<u32, ProfileBuilder> = FastMap::default();
    let Some(mut reader) = index.reader_or_warn(warnings) else {
        return;
    };
    for info in &index.chunks {
        let b = builders.entry(info.header.thread).or_insert_with(|| {
            ProfileBuilder::clipped(start, end).runtime_regions(runtime.iter().copied())
        });
        match reader.read(*info) {
            Ok(events) => {
                for ev in events {
                    b.event(event_ns(p, ev));
                }
            }
            Err(w) => {
                warnings.push(w);
                break;
            }
        }
    }
    let mut local: FastMap<u32, u32> = p.region_map.iter().map(|(k, v)| (*k, *v)).collect();
    for (th, b) in builders {
        let (nodes, b) = b.finish();
        let tree = clipped_tree(&nodes, &mut local, regions);
        let messages = b
            .messages
            .iter()
            .map(|s| MessageStat {
                region: (s.region != NONE_U32)
                    .then(|| global_region(&mut local, s.region, regions)),
                peer: (s.peer != NONE_U32).then(|| p.global_rank(s.peer)),
                direction: s.direction,
                comm: s.comm,
                count: s.count,
                bytes: s.bytes,
                min_bytes: s.min_bytes,
                max_bytes: s.max_bytes,
            })
            .collect();
        let mut sync: Vec<SyncStat> = b
            .sync
            .iter()
            .map(|s| SyncStat {
                object: s.object,
                acquisitions: s.acquisitions,
                contended: s.contended,
                wait_s: s.wait as f64 * 1e-9,
                hold_s: s.hold as f64 * 1e-9,
                releases: s.releases,
            })
            .collect();
        sync.sort_by_key(|s| s.object);
        let wall = b
            .first_ticks
            .map(|f| b.last_ticks.saturating_sub(f) as f64 * 1e-9);
        if let Some(t) = p.threads.iter_mut().find(|t| t.thread == th) {
            t.tree = tree;
            t.messages = messages;
            t.sync = sync;
            t.wall_s = wall;
        }
    }
}

fn global_region(local: &mut FastMap<u32, u32>, region: u32, table: &mut RegionTable) -> u32 {
    *local.entry(region).or_insert_with(|| {
        table.intern(RegionInfo {
            name: format!("region {region}"),
            kind: RegionKind::Function,
            file: String::new(),
            line: 0,
        })
    })
}

/// The tree of a clipped rebuild (times in ns), without the callpaths that have neither a call
/// nor time in the window (nor a descendant that has).
fn clipped_tree(
    nodes: &[TickNode],
    local: &mut FastMap<u32, u32>,
    table: &mut RegionTable,
) -> CallTree {
    let mut keep: Vec<bool> = nodes
        .iter()
        .map(|n| n.calls > 0 || n.inclusive > 0)
        .collect();
    // children follow their parents: one backward pass keeps the ancestors of kept nodes
    for i in (0..nodes.len()).rev() {
        let parent = nodes[i].parent;
        if keep[i] && parent != NONE_U32 && (parent as usize) < i {
            keep[parent as usize] = true;
        }
    }
    let mut tree = CallTree::new();
    let mut map = vec![None::<u32>; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let parent = (n.parent != NONE_U32)
            .then(|| map.get(n.parent as usize).copied().flatten())
            .flatten();
        let region = global_region(local, n.region, table);
        let m = tree.child(parent, region);
        tree.add(
            m,
            n.calls,
            n.child_calls,
            n.inclusive as f64 * 1e-9,
            n.exclusive as f64 * 1e-9,
        );
        map[i] = Some(m);
    }
    tree
}
