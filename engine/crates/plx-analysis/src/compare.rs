//! Comparison of runs (IPS-2's comparison mode): the metric table of several runs, one column
//! each, and the per-function differences of the last run against the first.
//!
//! A run is a [`Model`] (an experiment, or one application of a session), optionally limited to
//! a window of time ([`Run::new`] with a phase). Every row is defined in
//! `docs/commands/plx-compare.md`; a value a run cannot have (MPI rows of a run without MPI,
//! synchronization rows of a run without synchronization objects, CPU time in a window) is
//! `None`, never 0.

use std::collections::BTreeMap;

use plx_format::{RegionKind, SyncKind};

use crate::flat::flat_profile;
use crate::model::{Model, ProcessModel};
use crate::mpitime::MpiTime;
use crate::selection::{phase_window, PhaseSpec, Window};
use crate::AnalysisError;
use plx_format::Direction;

/// The MPI routine whose time and calls are barrier waits.
pub const MPI_BARRIER: &str = "MPI_Barrier";

/// One column of the comparison.
#[derive(Debug, Clone)]
pub struct Run {
    /// The column's name.
    pub name: String,
    /// The run's model (rebuilt for the window when there is one).
    pub model: Model,
    /// The window the model was limited to, global ns.
    pub window: Option<Window>,
    /// Elapsed time, s: from the first thread's start to the last process's end (inside the
    /// window when there is one).
    pub elapsed_s: Option<f64>,
}

impl Run {
    /// A run named `name` of `model`, limited to `phase` when given: an interval counts from
    /// the run's own first traced event, a phase name is that phase's span in this run (from
    /// its first enter to its last exit). A phase needs the run's trace.
    pub fn new(
        name: String,
        model: Model,
        phase: Option<&PhaseSpec>,
    ) -> Result<Run, AnalysisError> {
        let window = phase.map(|ph| phase_window(&model, ph)).transpose()?;
        let elapsed_s = elapsed(&model, window);
        let model = match window {
            Some(w) => model.windowed(w)?,
            None => model,
        };
        Ok(Run {
            name,
            model,
            window,
            elapsed_s,
        })
    }

    fn processes(&self) -> impl Iterator<Item = &ProcessModel> {
        self.model.processes.iter().filter(|p| p.measured)
    }
}

/// Global ns of a process's span: its first thread's start to its end (ProcessEnd; without
/// one, the start plus its longest thread's wall time).
fn span(p: &ProcessModel) -> Option<(f64, f64)> {
    let start = p.start_ticks()?;
    let s = p.rank0_ns(start);
    let e = match &p.end {
        Some(end) => p.rank0_ns(end.ticks),
        None => {
            let wall = p.threads.iter().filter_map(|t| t.wall_s).reduce(f64::max)?;
            s + wall * 1e9
        }
    };
    Some((s, e.max(s)))
}

/// Elapsed seconds of a model's measured processes, clipped to `window`.
fn elapsed(model: &Model, window: Option<Window>) -> Option<f64> {
    let (s, e) = model
        .processes
        .iter()
        .filter(|p| p.measured)
        .filter_map(span)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))?;
    Some(match window {
        Some(w) => w.overlap(s.round() as i64, e.round() as i64) as f64 * 1e-9,
        None => (e - s) * 1e-9,
    })
}

/// What a row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Seconds.
    Seconds,
    /// A count (calls, messages, acquisitions; Barriers may be fractional: per process).
    Count,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// `s`, `count` or `bytes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Count => "count",
            Unit::Bytes => "bytes",
        }
    }
}

/// One row of the metric table.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    /// `Elapsed Time`, ..., `Calls: f`.
    pub metric: String,
    /// Unit of the values.
    pub unit: Unit,
    /// One per run; `None` where the run cannot have it.
    pub values: Vec<Option<f64>>,
}

/// A function's figures in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FunctionStat {
    /// Inclusive seconds (recursion counted once).
    pub inclusive_s: f64,
    /// Exclusive seconds.
    pub exclusive_s: f64,
    /// Calls.
    pub calls: u64,
}

/// One function over all runs.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDiff {
    /// Its name.
    pub name: String,
    /// Its kind: a phase and a function of the same name are two rows.
    pub kind: RegionKind,
    /// One per run; `None` where the run's profile does not have it.
    pub runs: Vec<Option<FunctionStat>>,
    /// Last run's inclusive time minus the first's (a missing one counts 0), s.
    pub inclusive_diff_s: f64,
    /// Last run's inclusive time over the first's; `None` when the first's is 0 or missing.
    pub inclusive_ratio: Option<f64>,
}

/// The comparison of several runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Column names.
    pub runs: Vec<String>,
    /// The metric table: the fixed rows, then `Calls: f` for the top functions.
    pub metrics: Vec<MetricRow>,
    /// Per-function differences, by absolute inclusive difference descending, then name.
    pub functions: Vec<FunctionDiff>,
}

/// The names of the fixed rows, in order.
pub const METRICS: [&str; 13] = [
    "Elapsed Time",
    "CPU Time",
    "MPI Time",
    "Barrier Wait Time",
    "Barriers",
    "Time Per Barrier",
    "Messages",
    "Bytes",
    "Lock Acquisitions",
    "Lock Wait Time",
    "Spin Locks",
    "Spin Time",
    "Processes",
];

/// The fixed rows' values of one run, in [`METRICS`] order.
fn run_metrics(run: &Run) -> Vec<Option<f64>> {
    let model = &run.model;
    let procs: Vec<&ProcessModel> = run.processes().collect();
    let n = procs.len() as f64;
    let has_mpi = procs.iter().any(|p| {
        p.mpi.is_some()
            || p.threads.iter().any(|t| {
                t.tree
                    .nodes()
                    .iter()
                    .any(|nd| model.regions.get(nd.region).kind == RegionKind::Mpi)
            })
    });
    let has_sync = procs.iter().any(|p| !p.sync_objects.is_empty());
    let threads = || procs.iter().flat_map(|p| p.threads.iter());

    let cpu = threads()
        .filter_map(|t| t.cpu_s)
        .fold(None, |a: Option<f64>, c| Some(a.unwrap_or(0.0) + c));

    let mut mpi = MpiTime::default();
    for t in threads() {
        mpi.merge(&MpiTime::of(&t.tree, &model.regions), &model.regions);
    }
    let barrier_routine = mpi
        .routines
        .iter()
        .find(|r| model.regions.name(r.region) == MPI_BARRIER);
    let (mpi_barrier_s, mpi_barriers) = barrier_routine.map_or((0.0, 0), |r| (r.time, r.calls));

    // synchronization statistics by kind: (acquisitions, wait)
    let mut sync: BTreeMap<SyncKind, (u64, f64)> = BTreeMap::new();
    for p in &procs {
        for t in &p.threads {
            for s in &t.sync {
                let Some(o) = p.sync_objects.iter().find(|o| o.id == s.object) else {
                    continue;
                };
                let e = sync.entry(o.kind).or_default();
                e.0 += s.acquisitions;
                e.1 += s.wait_s;
            }
        }
    }
    let kind = |k: SyncKind| sync.get(&k).copied().unwrap_or((0, 0.0));
    let (pt_barriers, pt_barrier_s) = kind(SyncKind::Barrier);

    let (messages, bytes) = if has_mpi {
        let (m, b) = sent(model);
        (Some(m as f64), Some(b as f64))
    } else {
        (None, None)
    };
    let barriers_known = has_mpi || has_sync;
    // without MPI there is no MPI_Barrier, without objects no pthread barrier: both add 0
    let barrier_wait = barriers_known.then_some(mpi_barrier_s + pt_barrier_s);
    let barrier_calls = mpi_barriers + pt_barriers;
    let barriers = (barriers_known && n > 0.0).then(|| barrier_calls as f64 / n);
    let per_barrier = barrier_wait
        .filter(|_| barrier_calls > 0)
        .map(|w| w / barrier_calls as f64);
    let (mutex, mutex_wait) = kind(SyncKind::Mutex);
    let (rw, rw_wait) = kind(SyncKind::RwLock);
    let (spin, spin_wait) = kind(SyncKind::Spin);
    let when_sync = |v: f64| has_sync.then_some(v);
    vec![
        run.elapsed_s,
        cpu,
        has_mpi.then_some(mpi.total),
        barrier_wait,
        barriers,
        per_barrier,
        messages,
        bytes,
        when_sync((mutex + rw) as f64),
        when_sync(mutex_wait + rw_wait),
        when_sync(spin as f64),
        when_sync(spin_wait),
        Some(n),
    ]
}

/// Point-to-point messages and bytes as the senders count them: the totals of `plx comm` (the
/// pairs of [`crate::messages::pairs`]), with a peer checked against the size of the sender's
/// own MPI_COMM_WORLD — peers of a session's later application carry its rank base.
fn sent(model: &Model) -> (u64, u64) {
    let (mut messages, mut bytes) = (0, 0);
    for (_, p) in model.ranks() {
        let size = p.mpi.as_ref().map_or(u32::MAX, |m| m.size);
        for t in &p.threads {
            for s in t.messages.iter().filter(|s| s.direction == Direction::Sent) {
                if s.peer.is_some_and(|r| r.wrapping_sub(p.rank_base) < size) {
                    messages += s.count;
                    bytes += s.bytes;
                }
            }
        }
    }
    (messages, bytes)
}

/// Units of the fixed rows, in [`METRICS`] order.
fn unit_of(metric: &str) -> Unit {
    match metric {
        "Barriers" | "Messages" | "Lock Acquisitions" | "Spin Locks" | "Processes" => Unit::Count,
        "Bytes" => Unit::Bytes,
        _ => Unit::Seconds,
    }
}

/// How a region of `kind` named `name` is shown: a function, an MPI routine, a socket call or
/// an OpenMP construct by its name alone, a phase or a user region with its kind after it
/// (`solve (phase)`), so that it is never taken for the function of the same name.
pub fn region_label(name: &str, kind: RegionKind) -> String {
    match kind {
        RegionKind::Phase | RegionKind::User | RegionKind::Other(_) => {
            format!("{name} ({})", kind.as_str())
        }
        _ => name.to_string(),
    }
}

impl FunctionDiff {
    /// The row's name as shown: [`region_label`].
    pub fn label(&self) -> String {
        region_label(&self.name, self.kind)
    }
}

/// A region of a profile: its name, then its kind (regions of different runs are matched by
/// both, so a phase and a function of the same name stay apart).
type RegionKey = (String, u8);

/// The flat profile of a run by region name and kind (the runtime's own regions left out).
fn functions_of(run: &Run) -> BTreeMap<RegionKey, FunctionStat> {
    let model = &run.model;
    let mut out: BTreeMap<RegionKey, FunctionStat> = BTreeMap::new();
    for p in run.processes() {
        for t in &p.threads {
            for r in flat_profile(&t.tree) {
                let info = model.regions.get(r.region);
                if info.kind == RegionKind::Runtime {
                    continue;
                }
                let key = (info.name.clone(), info.kind.to_u8());
                let e = out.entry(key).or_insert(FunctionStat {
                    inclusive_s: 0.0,
                    exclusive_s: 0.0,
                    calls: 0,
                });
                e.inclusive_s += r.inclusive;
                e.exclusive_s += r.exclusive;
                e.calls += r.calls;
            }
        }
    }
    out
}

/// Compares `runs` (at least one): the metric table with `Calls: f` rows for the `top`
/// functions by inclusive time summed over all runs, and the per-function differences.
pub fn compare(runs: &[Run], top: usize) -> Comparison {
    let per_run: Vec<Vec<Option<f64>>> = runs.iter().map(run_metrics).collect();
    let mut metrics: Vec<MetricRow> = METRICS
        .iter()
        .enumerate()
        .map(|(i, m)| MetricRow {
            metric: m.to_string(),
            unit: unit_of(m),
            values: per_run.iter().map(|v| v[i]).collect(),
        })
        .collect();

    let profiles: Vec<BTreeMap<RegionKey, FunctionStat>> = runs.iter().map(functions_of).collect();
    let mut names: Vec<&RegionKey> = profiles.iter().flat_map(|p| p.keys()).collect();
    names.sort();
    names.dedup();
    let mut functions: Vec<FunctionDiff> = names
        .iter()
        .map(|name| {
            let stats: Vec<Option<FunctionStat>> =
                profiles.iter().map(|p| p.get(*name).copied()).collect();
            let incl = |s: Option<&Option<FunctionStat>>| {
                s.copied().flatten().map_or(0.0, |s| s.inclusive_s)
            };
            let first = incl(stats.first());
            let last = incl(stats.last());
            FunctionDiff {
                name: name.0.clone(),
                kind: RegionKind::from_u8(name.1),
                inclusive_diff_s: last - first,
                inclusive_ratio: (first > 0.0).then(|| last / first),
                runs: stats,
            }
        })
        .collect();
    functions.sort_by(|a, b| {
        b.inclusive_diff_s
            .abs()
            .partial_cmp(&a.inclusive_diff_s.abs())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.kind.to_u8().cmp(&b.kind.to_u8()))
    });

    let mut by_time: Vec<(&RegionKey, f64)> = names
        .iter()
        .map(|n| {
            let total: f64 = profiles
                .iter()
                .filter_map(|p| p.get(*n))
                .map(|s| s.inclusive_s)
                .sum();
            (*n, total)
        })
        .collect();
    by_time.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(b.0))
    });
    for (name, _) in by_time.into_iter().take(top) {
        metrics.push(MetricRow {
            metric: format!(
                "Calls: {}",
                region_label(&name.0, RegionKind::from_u8(name.1))
            ),
            unit: Unit::Count,
            values: profiles
                .iter()
                .map(|p| Some(p.get(name).map_or(0, |s| s.calls) as f64))
                .collect(),
        });
    }
    Comparison {
        runs: runs.iter().map(|r| r.name.clone()).collect(),
        metrics,
        functions,
    }
}
