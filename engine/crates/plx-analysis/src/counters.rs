//! Counters (records 22–25): the event sets of each configuration, whole-thread totals, and the
//! counted functions' inclusive and exclusive counts per thread and callpath, with the estimate
//! of a multiplexed set scaled to all of its function's calls.

use std::collections::BTreeMap;

use plx_format::{ProcessData, NONE_U32};

/// An event set as defined by the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSetInfo {
    /// Process-local id.
    pub set: u32,
    /// Configuration (epoch): 0 the first, +1 per reload.
    pub epoch: u32,
    /// Context (its `counters` rule), `None` for the whole-thread totals.
    pub context: Option<u32>,
    /// Calls between switches (0: one set).
    pub every: u32,
    /// Place among the context's sets, and how many it has.
    pub position: u32,
    /// Sets of the context.
    pub sets_in_context: u32,
    /// The context's function glob.
    pub glob: String,
    /// Event names.
    pub events: Vec<String>,
    /// Per event: 0 counted, else the errno of the refusal.
    pub refused: Vec<u32>,
}

impl CounterSetInfo {
    /// Whether the set shares its function's calls with other sets (its counts are a sample).
    pub fn multiplexed(&self) -> bool {
        self.sets_in_context > 1
    }
}

/// One counted function (or callpath) of one thread, counted with one set.
#[derive(Debug, Clone, PartialEq)]
pub struct CountedCall {
    /// The set.
    pub set: u32,
    /// Global region.
    pub region: u32,
    /// Global regions from the root (profile mode); empty when only the function is known
    /// (trace mode).
    pub path: Vec<u32>,
    /// Calls counted with this set.
    pub calls: u64,
    /// Calls of the function under the set's context in this thread (all its sets), on this
    /// path: the calls the estimate is scaled to.
    pub context_calls: u64,
    /// Inclusive values per event.
    pub inclusive: Vec<u64>,
    /// Exclusive values per event.
    pub exclusive: Vec<u64>,
}

impl CountedCall {
    /// The inclusive value of event `i` scaled to all of the context's calls.
    pub fn estimate(&self, i: usize) -> f64 {
        if self.calls == 0 {
            return 0.0;
        }
        self.inclusive[i] as f64 * self.context_calls as f64 / self.calls as f64
    }
}

/// One thread's counter data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThreadCounters {
    /// Thread index.
    pub thread: u32,
    /// Whole-thread totals: (set, values).
    pub totals: Vec<(u32, Vec<u64>)>,
    /// Counted functions.
    pub calls: Vec<CountedCall>,
}

/// How one set was read, over the threads that opened it (record 26).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetReadPaths {
    /// Threads that opened the set.
    pub threads: u32,
    /// Readings made with `rdpmc`, and with `read()` (or `PAPI_read`), over those threads.
    pub rdpmc_readings: u64,
    /// See `rdpmc_readings`.
    pub syscall_readings: u64,
    /// Per event of the set: path (record 26's codes) → threads that read it so.
    pub events: Vec<BTreeMap<u8, u32>>,
}

/// The name of a read path code of record 26.
pub fn read_path_name(path: u8) -> &'static str {
    match path {
        0 => "not counted",
        1 => "read()",
        2 => "group time enabled",
        3 => "rdpmc",
        4 => "PAPI",
        _ => "unknown path",
    }
}

/// One process's counter data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessCounters {
    /// Sets by id.
    pub sets: BTreeMap<u32, CounterSetInfo>,
    /// Configurations read: (epoch, file, bad lines).
    pub epochs: Vec<(u32, String, u32)>,
    /// Threads with counter data, by index.
    pub threads: Vec<ThreadCounters>,
    /// How each set was read, by set.
    pub read_paths: BTreeMap<u32, SetReadPaths>,
}

impl ProcessCounters {
    /// Whether the run counted anything.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Refused events: (name, errno), once each.
    pub fn refused(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = Vec::new();
        for s in self.sets.values() {
            for (n, e) in s.events.iter().zip(&s.refused) {
                if *e != 0 && !out.iter().any(|(m, _)| m == n) {
                    out.push((n.clone(), *e));
                }
            }
        }
        out
    }
}

/// Builds a process's counter data; `global` maps a process-local region to the global one.
pub fn build(p: &ProcessData, global: &mut dyn FnMut(u32) -> u32) -> ProcessCounters {
    let sets: BTreeMap<u32, CounterSetInfo> = p
        .counter_sets
        .values()
        .map(|s| {
            (
                s.set,
                CounterSetInfo {
                    set: s.set,
                    epoch: s.epoch,
                    context: (s.context != NONE_U32).then_some(s.context),
                    every: s.every,
                    position: s.position,
                    sets_in_context: s.sets_in_context.max(1),
                    glob: s.glob.clone(),
                    events: s.events.iter().map(|e| e.name.clone()).collect(),
                    refused: s.events.iter().map(|e| e.refused).collect(),
                },
            )
        })
        .collect();
    let mut read_paths: BTreeMap<u32, SetReadPaths> = BTreeMap::new();
    for d in p.threads.values() {
        for r in &d.counter_paths {
            let e = read_paths.entry(r.set).or_default();
            e.threads += 1;
            e.rdpmc_readings += r.rdpmc_readings;
            e.syscall_readings += r.syscall_readings;
            if e.events.len() < r.paths.len() {
                e.events.resize(r.paths.len(), BTreeMap::new());
            }
            for (i, &path) in r.paths.iter().enumerate() {
                *e.events[i].entry(path).or_default() += 1;
            }
        }
    }
    let mut threads = Vec::new();
    for (th, d) in &p.threads {
        if d.counters.is_empty() && d.node_counters.is_empty() {
            continue;
        }
        let nodes = d
            .profile
            .as_ref()
            .map(|p| p.nodes.as_slice())
            .unwrap_or(&[]);
        let mut calls = Vec::new();
        for r in &d.node_counters {
            {
                let mut path = Vec::new();
                let mut n = r.node;
                let mut guard = 0;
                while n != NONE_U32 && (n as usize) < nodes.len() && guard < 100_000 {
                    path.push(global(nodes[n as usize].region));
                    n = nodes[n as usize].parent;
                    guard += 1;
                }
                path.reverse();
                calls.push(CountedCall {
                    set: r.set,
                    region: global(r.region),
                    path,
                    calls: r.calls,
                    context_calls: 0,
                    inclusive: r.inclusive().to_vec(),
                    exclusive: r.exclusive().to_vec(),
                });
            }
        }
        // the calls each set's sample stands for: all calls of its function (and path) under
        // the same context
        let ctx = |s: u32| sets.get(&s).and_then(|i| i.context);
        let totals: Vec<u64> = calls
            .iter()
            .map(|c| {
                calls
                    .iter()
                    .filter(|o| {
                        o.region == c.region && o.path == c.path && ctx(o.set) == ctx(c.set)
                    })
                    .map(|o| o.calls)
                    .sum()
            })
            .collect();
        for (c, t) in calls.iter_mut().zip(totals) {
            c.context_calls = t;
        }
        threads.push(ThreadCounters {
            thread: *th,
            totals: d.counters.clone(),
            calls,
        });
    }
    ProcessCounters {
        sets,
        epochs: p
            .counter_epochs
            .iter()
            .map(|e| (e.epoch, e.path.clone(), e.bad_lines))
            .collect(),
        threads,
        read_paths,
    }
}

/// `plx query --metric EVENT`: a counter's total for a focus.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterQuery {
    /// The event as the run named it.
    pub event: String,
    /// The total.
    pub total: f64,
    /// Part of it is an estimate (a multiplexed set scaled to all calls).
    pub estimated: bool,
    /// Where it comes from: `thread totals` or `counted functions`.
    pub source: &'static str,
}

/// Whether `metric` names an event of the experiment: as the run wrote it, or with `_` for `-`
/// (`page_faults`).
pub fn counter_event(model: &crate::Model, metric: &str) -> Option<String> {
    model
        .processes
        .iter()
        .flat_map(|p| p.counters.sets.values())
        .flat_map(|s| s.events.iter())
        .find(|e| e.as_str() == metric || e.replace('-', "_") == metric)
        .cloned()
}

/// The total of counter `event` for `focus`: without a code focus, the focused threads'
/// whole-thread totals; with one, the inclusive counts of the focused counted functions (a
/// function called inside another focused one is in that one's count already), estimates for
/// multiplexed sets.
pub fn counter_query(
    model: &crate::Model,
    event: &str,
    focus: &crate::query::Focus,
) -> Result<CounterQuery, String> {
    if !matches!(focus.sync, crate::query::SyncFocus::All) {
        return Err(format!(
            "{event} is a counter: focus code and machine, not sync"
        ));
    }
    let threads_ok =
        |pi: usize, th: u32| focus.machine.as_ref().is_none_or(|m| m.contains(&(pi, th)));
    let mut total = 0.0;
    let mut estimated = false;
    let mut any = false;
    for (pi, p) in model.processes.iter().enumerate() {
        for tc in p
            .counters
            .threads
            .iter()
            .filter(|t| threads_ok(pi, t.thread))
        {
            match &focus.code {
                None => {
                    for (s, v) in &tc.totals {
                        let set = &p.counters.sets[s];
                        if let Some(i) = set.events.iter().position(|e| e == event) {
                            any |= set.refused[i] == 0;
                            total += v[i] as f64;
                        }
                    }
                }
                Some(code) => {
                    for c in &tc.calls {
                        let Some(set) = p.counters.sets.get(&c.set) else {
                            continue;
                        };
                        let Some(i) = set.events.iter().position(|e| e == event) else {
                            continue;
                        };
                        let inner = c.path.len() > 1
                            && c.path[..c.path.len() - 1].iter().any(|r| code.contains(r));
                        if !code.contains(&c.region) || inner || set.refused[i] != 0 {
                            continue;
                        }
                        any = true;
                        if set.multiplexed() {
                            estimated = true;
                            total += c.estimate(i);
                        } else {
                            total += c.inclusive[i] as f64;
                        }
                    }
                }
            }
        }
    }
    if !any {
        return Err(match focus.code {
            None => format!(
                "{event} has no whole-thread totals for this focus (plx run --counters); focus \
                 code=/... on a function a `counters` rule counts"
            ),
            Some(_) => format!("no function of this focus was counted with {event}"),
        });
    }
    Ok(CounterQuery {
        event: event.to_string(),
        total,
        estimated,
        source: if focus.code.is_some() {
            "counted functions"
        } else {
            "thread totals"
        },
    })
}

/// A row of `plx report --counters`: a thread's whole-run totals of an event set (`call`
/// `None`, function `(thread)`), or a counted function's calls with a set (per callpath with
/// `callpath`).
#[derive(Debug, Clone)]
pub struct CounterRow<'a> {
    /// The process image.
    pub process: &'a crate::ProcessModel,
    /// Thread index.
    pub thread: u32,
    /// The thread's name.
    pub thread_name: &'a str,
    /// `(thread)` for the totals, else the counted function's name.
    pub function: String,
    /// The callpath (`a => b`), empty unless rows are per callpath.
    pub callpath: String,
    /// The event set.
    pub set: &'a CounterSetInfo,
    /// The counted calls (a function's row).
    pub call: Option<CountedCall>,
    /// The totals, by index in the set (a `(thread)` row).
    pub totals: Option<&'a [u64]>,
}

/// The rows of `plx report --counters` (`callpath`: `--callpath`): per process and thread, its
/// totals per set, then its counted functions by epoch, name, callpath and set (the callpaths of
/// a function and set summed unless `callpath`).
pub fn report_rows<'a>(model: &'a crate::Model, callpath: bool) -> Vec<CounterRow<'a>> {
    let mut out = Vec::new();
    for p in &model.processes {
        for tc in &p.counters.threads {
            let name = p
                .threads
                .iter()
                .find(|t| t.thread == tc.thread)
                .map_or("", |t| t.name.as_str());
            let row = |function: String, callpath: String, set, call, totals| CounterRow {
                process: p,
                thread: tc.thread,
                thread_name: name,
                function,
                callpath,
                set,
                call,
                totals,
            };
            for (s, v) in &tc.totals {
                if let Some(set) = p.counters.sets.get(s) {
                    out.push(row("(thread)".into(), String::new(), set, None, Some(v)));
                }
            }
            let mut calls: Vec<&CountedCall> = tc.calls.iter().collect();
            calls.sort_by(|a, b| {
                let key = |c: &&'a CountedCall| {
                    (
                        p.counters.sets.get(&c.set).map(|s| s.epoch),
                        model.regions.name(c.region),
                        &c.path,
                        c.set,
                    )
                };
                key(a).cmp(&key(b))
            });
            // per function: the callpaths of one function and set are summed
            let mut merged: Vec<CountedCall> = Vec::new();
            for c in calls {
                let key_path = if callpath { c.path.clone() } else { Vec::new() };
                match merged
                    .iter_mut()
                    .find(|m| m.set == c.set && m.region == c.region && m.path == key_path)
                {
                    Some(m) => {
                        m.calls += c.calls;
                        m.context_calls += c.context_calls;
                        for (a, b) in m.inclusive.iter_mut().zip(&c.inclusive) {
                            *a += b;
                        }
                        for (a, b) in m.exclusive.iter_mut().zip(&c.exclusive) {
                            *a += b;
                        }
                    }
                    None => merged.push(CountedCall {
                        path: key_path,
                        ..c.clone()
                    }),
                }
            }
            for c in merged {
                let Some(set) = p.counters.sets.get(&c.set) else {
                    continue;
                };
                let text = c
                    .path
                    .iter()
                    .map(|r| model.regions.name(*r))
                    .collect::<Vec<_>>()
                    .join(" => ");
                out.push(row(
                    model.regions.name(c.region).to_string(),
                    text,
                    set,
                    Some(c),
                    None,
                ));
            }
        }
    }
    out
}

/// Every counted event's name in the experiment, in order of first appearance.
pub fn event_names(model: &crate::Model) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in &model.processes {
        for s in p.counters.sets.values() {
            for e in &s.events {
                if !names.contains(e) {
                    names.push(e.clone());
                }
            }
        }
    }
    names
}
