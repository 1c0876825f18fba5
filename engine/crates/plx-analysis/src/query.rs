//! Metric × focus (Paradyn, section 3.5): a metric evaluated for one node of each resource
//! hierarchy, as a total and, with a trace, as a time series.
//!
//! A focus is `hierarchy=/path` parts separated by commas (`code=/matmul/matmul.c/innerp,
//! machine=/host/1234/multiply_rows#2`); an omitted hierarchy is its root. Each path
//! component selects the children named by it exactly (name or alias), else those whose name
//! starts with it; a focus may select several nodes (they are summed, nested code counted once).

use std::collections::BTreeSet;

use plx_format::{Direction, Event, RegionKind, SyncKind};

use crate::hierarchy::{HNode, Hierarchies, Resource};
use crate::model::{Model, ProcessModel};
use crate::tree::CallTree;

/// The metrics.
pub const METRICS: [&str; 7] = [
    "wall_time",
    "cpu_time",
    "calls",
    "wait_time",
    "hold_time",
    "messages",
    "bytes",
];

/// A metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Inclusive wall time of the focused code, seconds.
    WallTime,
    /// Inclusive CPU time of the focused `cputime` functions, seconds.
    CpuTime,
    /// Calls of the focused code.
    Calls,
    /// Time blocked on the focused synchronization objects, seconds.
    WaitTime,
    /// Time the focused objects were held, seconds.
    HoldTime,
    /// Messages sent (point-to-point messages and collective calls).
    Messages,
    /// Bytes sent.
    Bytes,
}

impl Metric {
    /// From its name; the error lists the valid ones.
    pub fn parse(name: &str) -> Result<Metric, String> {
        Ok(match name {
            "wall_time" => Metric::WallTime,
            "cpu_time" => Metric::CpuTime,
            "calls" => Metric::Calls,
            "wait_time" => Metric::WaitTime,
            "hold_time" => Metric::HoldTime,
            "messages" => Metric::Messages,
            "bytes" => Metric::Bytes,
            _ => {
                return Err(format!(
                    "unknown metric \"{name}\": valid metrics are {}",
                    METRICS.join(", ")
                ))
            }
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        METRICS[self as usize]
    }

    /// The unit of its values: `s` or `count` or `bytes`.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Calls | Metric::Messages => "count",
            Metric::Bytes => "bytes",
            _ => "s",
        }
    }

    fn is_sync(self) -> bool {
        matches!(self, Metric::WaitTime | Metric::HoldTime)
    }

    fn is_message(self) -> bool {
        matches!(self, Metric::Messages | Metric::Bytes)
    }
}

/// The sync part of a focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncFocus {
    /// Everything.
    All,
    /// Synchronization objects: (process index, object id).
    Objects(BTreeSet<(usize, u32)>),
    /// Messages on communicators (global indices), optionally of some tags only.
    Messages {
        /// Communicators, `None` for all.
        comms: Option<BTreeSet<u32>>,
        /// (communicator, tag) pairs, `None` for all tags.
        tags: Option<BTreeSet<(u32, i32)>>,
    },
}

/// A parsed focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    /// Focused regions (global indices); `None` for the whole program.
    pub code: Option<BTreeSet<u32>>,
    /// Focused threads (process index, thread); `None` for all.
    pub machine: Option<BTreeSet<(usize, u32)>>,
    /// The sync part.
    pub sync: SyncFocus,
    /// The focus as given, normalised (`code=/,machine=/,sync=/` for the whole program).
    pub text: String,
}

/// Splits a focus at commas that start a new `hierarchy=` part (names may hold commas).
fn split_parts(focus: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, _) in focus.match_indices(',') {
        let rest = focus[i + 1..].trim_start();
        if ["code=", "machine=", "sync="]
            .iter()
            .any(|h| rest.starts_with(h))
        {
            parts.push(&focus[start..i]);
            start = i + 1;
        }
    }
    parts.push(&focus[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// The nodes a path selects in a hierarchy; errors name the bad component and the valid ones.
fn resolve<'h>(root: &'h HNode, hierarchy: &str, path: &str) -> Result<Vec<&'h HNode>, String> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "focus {hierarchy}={path}: a path starts with / (e.g. {hierarchy}=/)"
        ));
    };
    let mut cur = vec![root];
    let mut so_far = String::new();
    for comp in rest.split('/').filter(|c| !c.is_empty()) {
        let mut next: Vec<&HNode> = cur.iter().flat_map(|n| n.select(comp)).collect();
        // code paths may leave out the module (or module and file): /file/function, /function
        if next.is_empty() && hierarchy == "code" && so_far.is_empty() {
            next = root
                .walk()
                .into_iter()
                .skip(1)
                .filter(|n| n.is_selected_by(comp))
                .collect();
        }
        if next.is_empty() {
            let mut valid: Vec<&str> = cur
                .iter()
                .flat_map(|n| n.children.iter().map(|c| c.name.as_str()))
                .collect();
            valid.sort_unstable();
            valid.dedup();
            let shown = if valid.len() > 30 {
                format!("{}, ... ({} in all)", valid[..30].join(", "), valid.len())
            } else if valid.is_empty() {
                "none (a leaf)".to_string()
            } else {
                valid.join(", ")
            };
            // a code path may leave out levels: any function below is a candidate then
            let mut candidates = valid.clone();
            if hierarchy == "code" {
                for n in &cur {
                    candidates.extend(n.walk().into_iter().skip(1).map(|n| n.name.as_str()));
                }
            }
            let hint = crate::suggest::did_you_mean(&crate::suggest::near(comp, candidates), 5);
            return Err(format!(
                "focus {hierarchy}={path}: nothing named \"{comp}\" under {hierarchy}=/{so_far}{hint}: valid are {shown}"
            ));
        }
        so_far.push_str(comp);
        so_far.push('/');
        cur = next;
    }
    Ok(cur)
}

impl Focus {
    /// Parses a focus against the hierarchies.
    pub fn parse(text: &str, h: &Hierarchies) -> Result<Focus, String> {
        let mut focus = Focus {
            code: None,
            machine: None,
            sync: SyncFocus::All,
            text: String::new(),
        };
        let mut seen = BTreeSet::new();
        let mut norm = [
            "code=/".to_string(),
            "machine=/".to_string(),
            "sync=/".to_string(),
        ];
        for part in split_parts(text) {
            let Some((hier, path)) = part.split_once('=') else {
                return Err(format!(
                    "focus part \"{part}\" is not hierarchy=/path: hierarchies are code, machine, sync"
                ));
            };
            let hier = hier.trim();
            if !seen.insert(hier.to_string()) {
                return Err(format!("focus names hierarchy \"{hier}\" twice"));
            }
            match hier {
                "code" => {
                    let nodes = resolve(&h.code, hier, path)?;
                    if path.trim_matches('/').is_empty() {
                        continue;
                    }
                    let mut set = BTreeSet::new();
                    for n in nodes {
                        for x in n.walk() {
                            if let Resource::Region(r) = x.resource {
                                set.insert(r);
                            }
                        }
                    }
                    focus.code = Some(set);
                    norm[0] = format!("code={path}");
                }
                "machine" | "program" => {
                    let root = if hier == "program" {
                        h.program.as_ref().ok_or_else(|| {
                            "focus program=/...: the experiment is not a session of applications"
                                .to_string()
                        })?
                    } else {
                        &h.machine
                    };
                    // a location name (`0.1`, `rank 0`, `vm:prog[0.1]`) instead of a path
                    let located;
                    let path = if hier == "machine" && !path.starts_with('/') {
                        located = location_path(root, path)?;
                        located.as_str()
                    } else {
                        path
                    };
                    let nodes = resolve(root, hier, path)?;
                    if path.trim_matches('/').is_empty() {
                        continue;
                    }
                    let mut set = BTreeSet::new();
                    for n in nodes {
                        for x in n.walk() {
                            if let Resource::Thread(p, t) = x.resource {
                                set.insert((p, t));
                            }
                        }
                    }
                    focus.machine = Some(match focus.machine.take() {
                        Some(prev) => prev.intersection(&set).copied().collect(),
                        None => set,
                    });
                    norm[1] = format!("{hier}={path}");
                }
                "sync" => {
                    let nodes = resolve(&h.sync, hier, path)?;
                    if path.trim_matches('/').is_empty() {
                        continue;
                    }
                    focus.sync = sync_focus(&nodes);
                    norm[2] = format!("sync={path}");
                }
                other => {
                    return Err(format!(
                        "unknown hierarchy \"{other}\" in focus: valid are code, machine, sync"
                    ))
                }
            }
        }
        focus.text = norm.join(",");
        Ok(focus)
    }
}

/// The Machine path of location name `name` (any form the commands print): the first of its
/// candidate paths that names a node.
fn location_path(machine: &HNode, name: &str) -> Result<String, String> {
    let l: crate::location_name::LocationName = name.parse()?;
    let paths = l.machine_paths();
    paths
        .iter()
        .find(|p| resolve(machine, "machine", p).is_ok())
        .cloned()
        .ok_or_else(|| format!("focus machine={name}: no location {l} in the experiment"))
}

fn sync_focus(nodes: &[&HNode]) -> SyncFocus {
    let mut objects = BTreeSet::new();
    let mut comms: Option<BTreeSet<u32>> = Some(BTreeSet::new());
    let mut tags: Option<BTreeSet<(u32, i32)>> = Some(BTreeSet::new());
    let mut messages = false;
    for n in nodes {
        match &n.resource {
            Resource::Messages => {
                messages = true;
                comms = None;
                tags = None;
            }
            Resource::Comm(c) => {
                messages = true;
                if let Some(cs) = comms.as_mut() {
                    cs.insert(*c);
                }
                tags = None;
            }
            Resource::Tag(c, t) => {
                messages = true;
                if let Some(cs) = comms.as_mut() {
                    cs.insert(*c);
                }
                if let Some(ts) = tags.as_mut() {
                    ts.insert((*c, *t));
                }
            }
            _ => {
                for x in n.walk() {
                    if let Resource::Objects(ids) = &x.resource {
                        objects.extend(ids.iter().copied());
                    }
                }
            }
        }
    }
    if messages {
        SyncFocus::Messages { comms, tags }
    } else {
        SyncFocus::Objects(objects)
    }
}

/// A metric's value for a focus.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// The metric.
    pub metric: Metric,
    /// The focus, normalised.
    pub focus: String,
    /// The total.
    pub total: f64,
    /// Where the total comes from: `profile` or `trace`.
    pub source: &'static str,
    /// With a trace: (bin start s, bin end s, value), times from the earliest event.
    pub series: Option<Vec<(f64, f64, f64)>>,
}

fn thread_focused(focus: &Focus, pi: usize, th: u32) -> bool {
    focus.machine.as_ref().is_none_or(|m| m.contains(&(pi, th)))
}

/// Sum over nodes selected by `pred` with no selected ancestor: (inclusive, cpu), and the calls
/// of every selected node.
fn tree_sums(tree: &CallTree, pred: impl Fn(&crate::tree::Node) -> bool) -> (f64, f64, u64) {
    let nodes = tree.nodes();
    let mut inside = vec![false; nodes.len()];
    let (mut incl, mut cpu, mut calls) = (0.0, 0.0, 0u64);
    for (i, n) in nodes.iter().enumerate() {
        let anc = n.parent.is_some_and(|p| inside[p as usize]);
        let sel = pred(n);
        if sel {
            calls += n.calls;
            if !anc {
                incl += n.inclusive;
                cpu += n.cpu.unwrap_or(0.0);
            }
        }
        inside[i] = anc || sel;
    }
    (incl, cpu, calls)
}

impl Model {
    /// Evaluates `metric` for `focus`: the total, and with a trace a series of `bins` bins.
    pub fn query(&self, metric: Metric, focus: &Focus, bins: usize) -> Result<QueryResult, String> {
        self.query_in(metric, focus, bins, None)
    }

    /// [`Model::query`] limited to `window` (global ns, as [`crate::phase_window`] gives it):
    /// the series covers the window, the total is the series' sum (from the trace).
    pub fn query_in(
        &self,
        metric: Metric,
        focus: &Focus,
        bins: usize,
        window: Option<crate::Window>,
    ) -> Result<QueryResult, String> {
        if metric.is_sync() && matches!(focus.sync, SyncFocus::Messages { .. }) {
            return Err(format!(
                "{} is a metric of synchronization objects: the focus sync={} is messages",
                metric.name(),
                focus.text.rsplit("sync=").next().unwrap_or("")
            ));
        }
        if metric.is_message() && matches!(focus.sync, SyncFocus::Objects(_)) {
            return Err(format!(
                "{} is a metric of messages: focus sync=/Messages/... (or leave sync out)",
                metric.name()
            ));
        }
        let has_trace = self.processes.iter().any(|p| p.measured && p.has_trace());
        let tag_focus = matches!(&focus.sync, SyncFocus::Messages { tags: Some(_), .. });
        let needs_trace = ((metric.is_sync() || metric.is_message()) && focus.code.is_some())
            || (metric.is_message() && tag_focus);
        let needs_trace = needs_trace || window.is_some();
        if needs_trace && !has_trace {
            return Err(format!(
                "{} for this focus needs a trace (plx run --trace): the profile keeps {} per thread and {}, not per function{}",
                metric.name(),
                if metric.is_sync() { "synchronization statistics" } else { "message statistics" },
                if metric.is_sync() { "object" } else { "communicator" },
                if metric.is_message() { " or tag" } else { "" }
            ));
        }
        let series = if has_trace {
            Some(self.series(metric, focus, bins.max(1), window))
        } else {
            None
        };
        let (total, source) = if needs_trace {
            (
                series.as_ref().map_or(0.0, |s| s.iter().map(|b| b.2).sum()),
                "trace",
            )
        } else {
            (self.profile_total(metric, focus)?, "profile")
        };
        Ok(QueryResult {
            metric,
            focus: focus.text.clone(),
            total,
            source,
            series,
        })
    }

    fn profile_total(&self, metric: Metric, focus: &Focus) -> Result<f64, String> {
        let in_code = |r: u32| focus.code.as_ref().is_none_or(|c| c.contains(&r));
        let mut total = 0.0;
        let mut any_cpu = false;
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            for t in p
                .threads
                .iter()
                .filter(|t| thread_focused(focus, pi, t.thread))
            {
                match metric {
                    Metric::WallTime => total += tree_sums(&t.tree, |n| in_code(n.region)).0,
                    Metric::Calls => total += tree_sums(&t.tree, |n| in_code(n.region)).2 as f64,
                    Metric::CpuTime => {
                        let (_, cpu, _) =
                            tree_sums(&t.tree, |n| n.cpu.is_some() && in_code(n.region));
                        any_cpu |= t
                            .tree
                            .nodes()
                            .iter()
                            .any(|n| n.cpu.is_some() && in_code(n.region));
                        total += cpu;
                    }
                    Metric::WaitTime | Metric::HoldTime => {
                        for s in &t.sync {
                            let ok = match &focus.sync {
                                SyncFocus::Objects(o) => o.contains(&(pi, s.object)),
                                _ => true,
                            };
                            if ok {
                                total += if metric == Metric::WaitTime {
                                    s.wait_s
                                } else {
                                    s.hold_s
                                };
                            }
                        }
                    }
                    Metric::Messages | Metric::Bytes => {
                        for m in t.messages.iter().filter(|m| m.direction == Direction::Sent) {
                            if !comm_focused(focus, p, m.comm) {
                                continue;
                            }
                            total += if metric == Metric::Messages {
                                m.count
                            } else {
                                m.bytes
                            } as f64;
                        }
                    }
                }
            }
        }
        if metric == Metric::CpuTime && !any_cpu {
            let any_anywhere = self
                .processes
                .iter()
                .any(|p| p.threads.iter().any(|t| t.tree.has_cpu()));
            return Err(if any_anywhere {
                "cpu_time: no function of this focus has CPU time data (only the functions selected by the filter rule `cputime` have)".to_string()
            } else {
                "cpu_time needs CPU time data: run with a filter file holding `cputime FUNCTION` (plx run --filter FILE)".to_string()
            });
        }
        Ok(total)
    }

    /// The series: every focused thread's events, binned over the span of the trace.
    fn series(
        &self,
        metric: Metric,
        focus: &Focus,
        bins: usize,
        window: Option<crate::Window>,
    ) -> Vec<(f64, f64, f64)> {
        // contributions: (start ns, end ns, value) on rank 0's clock (a point when start = end)
        let mut parts: Vec<(f64, f64, f64)> = Vec::new();
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            let Some(index) = &p.trace else { continue };
            let Ok(mut reader) = index.reader() else {
                continue;
            };
            // region ids of this process → global, through the names
            let mut walkers: std::collections::HashMap<u32, Walker> = Default::default();
            for info in &index.chunks {
                let th = info.header.thread;
                let Ok(events) = reader.read(*info) else {
                    break;
                };
                let w = walkers.entry(th).or_default();
                for ev in events {
                    let ns = p.rank0_ns(ev.ticks());
                    lo = lo.min(ns);
                    hi = hi.max(ns);
                    if thread_focused(focus, pi, th) {
                        w.event(self, p, pi, metric, focus, ev, &mut parts);
                    }
                }
            }
            for w in walkers.values_mut() {
                w.finish(metric, &mut parts);
            }
        }
        if !lo.is_finite() {
            return Vec::new();
        }
        if let Some(w) = window {
            // the window's part of each contribution, in proportion to its overlap
            lo = lo.max(w.start_ns as f64);
            hi = hi.min(w.end_ns as f64);
            if hi <= lo {
                return Vec::new();
            }
            parts.retain_mut(|(a, b, v)| {
                if *b <= *a {
                    return *a >= lo && *a < hi;
                }
                let inside = (b.min(hi) - a.max(lo)).max(0.0);
                *v *= inside / (*b - *a);
                *a = a.max(lo);
                *b = b.min(hi);
                inside > 0.0
            });
        }
        let span = (hi - lo).max(1.0);
        let width = span / bins as f64;
        let mut values = vec![0.0; bins];
        for (a, b, v) in parts {
            if b <= a {
                let i = (((a - lo) / width) as usize).min(bins - 1);
                values[i] += v;
                continue;
            }
            // spread over the interval in proportion to the overlap
            let first = (((a - lo) / width) as usize).min(bins - 1);
            let last = (((b - lo) / width) as usize).min(bins - 1);
            for (i, slot) in values.iter_mut().enumerate().take(last + 1).skip(first) {
                let s = lo + i as f64 * width;
                let e = if i == bins - 1 { hi.max(b) } else { s + width };
                let overlap = (b.min(e) - a.max(s)).max(0.0);
                *slot += v * overlap / (b - a);
            }
        }
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as f64 * width * 1e-9, (i + 1) as f64 * width * 1e-9, v))
            .collect()
    }
}

fn comm_focused(focus: &Focus, p: &ProcessModel, local: u32) -> bool {
    match &focus.sync {
        SyncFocus::Messages {
            comms: Some(cs), ..
        } => p.comms.get(&local).is_some_and(|g| cs.contains(g)),
        _ => true,
    }
}

/// One thread's walk over its events for the series.
#[derive(Default)]
struct Walker {
    /// (global region, enter ns, focused)
    stack: Vec<(Option<u32>, f64, bool)>,
    /// Focused frames open.
    focused: usize,
    /// Frames of the runtime's own work open (kind runtime): while one is, no code is active
    /// (its time is in no function, as in the profiles).
    runtime: usize,
    /// When the focused code (or any code, for the root) became active.
    active_since: Option<f64>,
    /// Holds in progress by object: (depth, since).
    holds: std::collections::HashMap<u32, (u32, f64)>,
    last: f64,
    /// Enters still to come that are an OpenMP team starter's path, not calls.
    context: u32,
}

impl Walker {
    /// The start of the open call of region `g` whose CPU time a Cpu event of `g` gives, when
    /// the focus selects it and it counts: once, not inside a selected call of `g`.
    fn cpu_call_start(&self, g: Option<u32>, focus: &Focus) -> Option<f64> {
        let pos = self.stack.iter().rposition(|f| f.0 == g)?;
        let sel = focus
            .code
            .as_ref()
            .is_none_or(|c| g.is_some_and(|g| c.contains(&g)));
        // counted once: no enclosing selected call of a cputime function
        let enclosed = self.stack[..pos].iter().any(|f| {
            focus
                .code
                .as_ref()
                .is_none_or(|c| f.0.is_some_and(|r| c.contains(&r)))
                && f.0 == g
        });
        (sel && !enclosed).then(|| self.stack[pos].1)
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        model: &Model,
        p: &ProcessModel,
        pi: usize,
        metric: Metric,
        focus: &Focus,
        ev: Event,
        parts: &mut Vec<(f64, f64, f64)>,
    ) {
        let ns = p.rank0_ns(ev.ticks());
        self.last = ns;
        let code_on = |w: &Walker| {
            w.runtime == 0 && (focus.code.is_none() && !w.stack.is_empty() || w.focused > 0)
        };
        match ev {
            Event::Enter { region, .. }
                if global_region(model, p, region)
                    .is_some_and(|g| model.regions.get(g).kind == RegionKind::Runtime) =>
            {
                let g = global_region(model, p, region);
                // a call as the profiles count it (a row of its own), but no active code
                let sel = focus
                    .code
                    .as_ref()
                    .is_none_or(|c| g.is_some_and(|g| c.contains(&g)));
                if sel && metric == Metric::Calls {
                    parts.push((ns, ns, 1.0));
                }
                let was = code_on(self);
                self.stack.push((g, ns, false));
                self.runtime += 1;
                if let (true, Some(s), Metric::WallTime) = (was, self.active_since.take(), metric) {
                    parts.push((s, ns, (ns - s) * 1e-9));
                }
            }
            Event::Exit { region, .. }
                if self.runtime > 0
                    && self
                        .stack
                        .last()
                        .is_some_and(|f| f.0 == global_region(model, p, region)) =>
            {
                self.stack.pop();
                self.runtime -= 1;
                if code_on(self) {
                    self.active_since = Some(ns);
                }
            }
            Event::Enter { region, .. } => {
                let g = global_region(model, p, region);
                let sel = focus
                    .code
                    .as_ref()
                    .is_none_or(|c| g.is_some_and(|g| c.contains(&g)));
                if sel && metric == Metric::Calls && self.context == 0 {
                    parts.push((ns, ns, 1.0));
                }
                self.context = self.context.saturating_sub(1);
                let was = code_on(self);
                self.stack.push((g, ns, sel && focus.code.is_some()));
                if sel && focus.code.is_some() {
                    self.focused += 1;
                }
                if !was && code_on(self) {
                    self.active_since = Some(ns);
                }
            }
            Event::Exit { .. } => {
                let was = code_on(self);
                if let Some((_, _, f)) = self.stack.pop() {
                    if f {
                        self.focused -= 1;
                    }
                }
                if was && !code_on(self) {
                    if let (Some(s), Metric::WallTime) = (self.active_since.take(), metric) {
                        parts.push((s, ns, (ns - s) * 1e-9));
                    }
                }
            }
            Event::Cpu { region, cpu_ns, .. } if metric == Metric::CpuTime => {
                let g = global_region(model, p, region);
                if let Some(start) = self.cpu_call_start(g, focus) {
                    parts.push((start, ns, cpu_ns as f64 * 1e-9));
                }
            }
            Event::Acquire {
                object,
                kind,
                wait_ticks,
                ..
            } => {
                if !self.sync_ok(focus, pi, object) || !code_on(self) && focus.code.is_some() {
                    return;
                }
                if metric == Metric::WaitTime {
                    let start = p.rank0_ns(ev.ticks().saturating_sub(wait_ticks));
                    parts.push((start, ns, p.clock_map.seconds(wait_ticks)));
                }
                if metric == Metric::HoldTime && SyncKind::from_u8(kind).holds() {
                    let h = self.holds.entry(object).or_insert((0, ns));
                    if h.0 == 0 {
                        h.1 = ns;
                    }
                    h.0 += 1;
                }
            }
            Event::Release { object, kind, .. } => {
                if metric != Metric::HoldTime || !SyncKind::from_u8(kind).holds() {
                    return;
                }
                if let Some(h) = self.holds.get_mut(&object) {
                    if h.0 > 0 {
                        h.0 -= 1;
                        if h.0 == 0 {
                            parts.push((h.1, ns, (ns - h.1) * 1e-9));
                        }
                    }
                }
            }
            Event::Send {
                comm, tag, bytes, ..
            } if metric.is_message() => {
                if !code_on(self) && focus.code.is_some() || !msg_ok(focus, p, comm, Some(tag)) {
                    return;
                }
                parts.push((
                    ns,
                    ns,
                    if metric == Metric::Messages {
                        1.0
                    } else {
                        bytes as f64
                    },
                ));
            }
            Event::Collective {
                comm, bytes_sent, ..
            } if metric.is_message() => {
                if !code_on(self) && focus.code.is_some() || !msg_ok(focus, p, comm, None) {
                    return;
                }
                parts.push((
                    ns,
                    ns,
                    if metric == Metric::Messages {
                        1.0
                    } else {
                        bytes_sent as f64
                    },
                ));
            }
            _ => {}
        }
    }

    fn sync_ok(&self, focus: &Focus, pi: usize, object: u32) -> bool {
        match &focus.sync {
            SyncFocus::Objects(o) => o.contains(&(pi, object)),
            _ => true,
        }
    }

    fn finish(&mut self, metric: Metric, parts: &mut Vec<(f64, f64, f64)>) {
        if let (Some(s), Metric::WallTime) = (self.active_since.take(), metric) {
            parts.push((s, self.last, (self.last - s) * 1e-9));
        }
    }
}

fn msg_ok(focus: &Focus, p: &ProcessModel, comm: u32, tag: Option<i32>) -> bool {
    match &focus.sync {
        SyncFocus::Messages { comms, tags } => {
            let g = p.comms.get(&comm).copied();
            let c_ok = comms
                .as_ref()
                .is_none_or(|cs| g.is_some_and(|g| cs.contains(&g)));
            let t_ok = tags
                .as_ref()
                .is_none_or(|ts| g.is_some_and(|g| tag.is_some_and(|t| ts.contains(&(g, t)))));
            c_ok && t_ok
        }
        _ => true,
    }
}

/// The global index of a process-local region, through its definition's name and kind.
fn global_region(model: &Model, p: &ProcessModel, local: u32) -> Option<u32> {
    let _ = model;
    p.region_map.get(&local).copied()
}
