//! The analysis model: processes (MPI ranks) and threads of an experiment, each thread with its callpath tree in seconds.

use std::collections::BTreeMap;
use std::path::PathBuf;

use plx_format::{
    ClockKind, ClockMap, ClockOffset, ClockSource, Experiment, MessageStats, MpiInit, OffsetMap,
    ProcessEnd, ProcessImage, RegionDef, RegionKind, TraceIndex, Warning, WarningKind, NONE_U32,
};

use crate::comms::CommTable;
use crate::hash::FastMap;
use crate::messages::MessageStat;
use crate::rebuild::{ProfileBuilder, TickNode};
use crate::regions::{RegionInfo, RegionTable};
use crate::symbols::{demangle, SymbolResolver};
use crate::sync::{name_objects, stats_in_seconds, SyncObjectInfo, SyncStat};
use crate::tree::CallTree;
use crate::userstats::UserStat;

/// What to do while building a [`Model`].
#[derive(Debug, Clone, Copy)]
pub struct BuildOptions {
    /// Rebuild profiles of threads without a ThreadProfile from their trace (reads the trace).
    pub rebuild_from_trace: bool,
    /// Resolve missing source locations from the modules' debug info.
    pub resolve_sources: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            rebuild_from_trace: true,
            resolve_sources: true,
        }
    }
}

/// How a thread's profile was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// The ThreadProfile record.
    Recorded,
    /// Rebuilt from the trace.
    Rebuilt,
    /// Recovered from the thread's live file (the process was killed before writing the
    /// ThreadProfile): exact counts and times of the calls that returned; no CPU time.
    Recovered,
    /// Neither: the tree is empty.
    None,
}

/// One thread.
#[derive(Debug, Clone)]
pub struct ThreadModel {
    /// Process-local index.
    pub thread: u32,
    /// Kernel thread id.
    pub tid: Option<u32>,
    /// Name (last rename wins).
    pub name: String,
    /// CPU time, seconds (needs ThreadInfo and ThreadProfile).
    pub cpu_s: Option<f64>,
    /// Wall time, seconds.
    pub wall_s: Option<f64>,
    /// Callpath profile.
    pub tree: CallTree,
    /// Where the profile came from.
    pub source: ProfileSource,
    /// Event words in the trace.
    pub trace_words: u64,
    /// Events recorded, per the ThreadProfile (or counted while rebuilding).
    pub trace_events: Option<u64>,
    /// Events lost.
    pub lost_events: u64,
    /// Callpaths lost.
    pub lost_nodes: u64,
    /// User event statistics.
    pub user_events: Vec<UserStat>,
    /// MPI message statistics: recorded (or recovered from the thread's live file), else
    /// derived from the trace when the thread has no ThreadProfile (then a receive completed by
    /// MPI_Wait counts under MPI_Wait).
    pub messages: Vec<MessageStat>,
    /// Synchronization statistics per object (recorded, or recovered from the thread's live
    /// file), by object id.
    pub sync: Vec<SyncStat>,
}

/// A region that stopped being measured.
#[derive(Debug, Clone)]
pub struct ThrottledRegion {
    /// Global region index.
    pub region: u32,
    /// Calls before throttling.
    pub calls: u64,
    /// Their inclusive time, seconds.
    pub inclusive_s: f64,
}

/// One process image.
#[derive(Debug, Clone)]
pub struct ProcessModel {
    /// Host.
    pub host: String,
    /// Pid.
    pub pid: u32,
    /// Image number (0, or N of `process.N.plx`).
    pub image: u32,
    /// Parent pid.
    pub ppid: Option<u32>,
    /// Executable.
    pub executable: String,
    /// Command line.
    pub argv: Vec<String>,
    /// Parallax version that wrote it.
    pub version: String,
    /// Start, ns since the epoch.
    pub start_realtime_ns: Option<u64>,
    /// Clock kind.
    pub clock: Option<ClockKind>,
    /// Measured ticks per second.
    pub ticks_per_second: f64,
    /// How the clock rate was found.
    pub clock_source: ClockSource,
    /// ProcessEnd, if it finished.
    pub end: Option<ProcessEnd>,
    /// Filter text.
    pub filter: Option<String>,
    /// Number of RegionDefs.
    pub region_count: usize,
    /// Regions excluded by the filter.
    pub excluded_regions: usize,
    /// Threads by index.
    pub threads: Vec<ThreadModel>,
    /// Throttled regions.
    pub throttled: Vec<ThrottledRegion>,
    /// Classes the Java agent rewrote, in load order (empty for a process without the agent).
    pub java_classes: Vec<plx_format::JavaClass>,
    /// The process file.
    pub path: PathBuf,
    /// MpiInit: the process is an MPI rank.
    pub mpi: Option<MpiInit>,
    /// ClockOffset records.
    pub clock_offsets: Vec<ClockOffset>,
    /// Local `CLOCK_MONOTONIC` ns → rank 0's, from the ClockOffset records.
    pub offsets: OffsetMap,
    /// Ticks → local `CLOCK_MONOTONIC` ns.
    pub clock_map: ClockMap,
    /// Process-local communicator ids → indices of [`Model::comms`].
    pub comms: BTreeMap<u32, u32>,
    /// The trace's chunk index, if there is a trace.
    pub trace: Option<TraceIndex>,
    /// Has measured data: an MPI rank, regions other than the runtime's own, or user events (a
    /// launcher such as `mpirun` measured by `plx run` has none and is left out of reports).
    pub measured: bool,
    /// Synchronization objects, by id.
    pub sync_objects: Vec<SyncObjectInfo>,
    /// Process-local region ids → global region indices.
    pub region_map: BTreeMap<u32, u32>,
    /// The application (index into [`Model::apps`]).
    pub app: u32,
    /// Added to the process's own world ranks (its `MpiInit` rank, message peers, communicator
    /// members, collective roots) to make them unique across the applications of a session:
    /// the ranks of the first application with MPI keep their numbers, the next one's follow.
    pub rank_base: u32,
    /// Added to its times, ns: its application's [`AppModel::shift_ns`].
    pub shift_ns: i64,
    /// When its first thread started (or its trace begins), ticks.
    pub first_ticks: Option<u64>,
    /// The CPU sampler's samples (CpuSamples records, `PLX_CPU_SAMPLE`) in the order taken:
    /// at `ticks`, each measured thread's CPU ns. Empty when the run was not sampled.
    pub cpu_samples: Vec<plx_format::CpuSamples>,
}

/// An application of the model: the one of a plain experiment, or one of a session's.
#[derive(Debug, Clone, PartialEq)]
pub struct AppModel {
    /// Its name; empty for a plain experiment.
    pub name: String,
    /// Comparison mode: an older run shifted to start with the others.
    pub compare: bool,
    /// Added to its times to bring them onto the session's time base, ns (comparison mode).
    pub shift_ns: i64,
}

impl ProcessModel {
    /// A world rank as the process wrote it (a peer, a root, a member) → the model's rank.
    #[inline]
    pub fn global_rank(&self, local: u32) -> u32 {
        if local == NONE_U32 {
            local
        } else {
            local + self.rank_base
        }
    }

    /// The MPI rank, if the process is one.
    pub fn rank(&self) -> Option<u32> {
        self.mpi.as_ref().map(|m| m.rank)
    }

    /// Rank 0's `CLOCK_MONOTONIC` ns at `ticks` of this process (for an application in
    /// comparison mode, shifted onto the session's time base).
    pub fn rank0_ns(&self, ticks: u64) -> f64 {
        self.offsets.to_rank0(self.clock_map.ns(ticks)) + self.shift_ns as f64
    }

    /// When its first thread started (or its trace begins), ticks.
    pub fn start_ticks(&self) -> Option<u64> {
        self.first_ticks
    }

    /// The application's name, empty for a plain experiment.
    pub fn app_name<'a>(&self, model: &'a Model) -> &'a str {
        model
            .apps
            .get(self.app as usize)
            .map_or("", |a| a.name.as_str())
    }

    /// Does a trace with events exist?
    pub fn has_trace(&self) -> bool {
        self.trace.as_ref().is_some_and(|t| !t.chunks.is_empty())
    }
}

/// A whole experiment, ready for reports.
#[derive(Debug, Clone)]
pub struct Model {
    /// The directory.
    pub dir: PathBuf,
    /// Regions of all processes.
    pub regions: RegionTable,
    /// Process images: MPI ranks by rank first, then the others by host, pid and image.
    pub processes: Vec<ProcessModel>,
    /// MPI communicators of all processes.
    pub comms: CommTable,
    /// Warnings from reading and analysis.
    pub warnings: Vec<Warning>,
    /// The module (file name without its directory) of each region that has one, by global
    /// region index (the first process's wins).
    pub region_modules: BTreeMap<u32, String>,
    /// The applications ([`ProcessModel::app`] indexes it): one for a plain experiment.
    pub apps: Vec<AppModel>,
}

impl Model {
    /// Reads and builds the model of the experiment in `dir`.
    pub fn open(dir: &std::path::Path, opts: BuildOptions) -> Result<Model, crate::AnalysisError> {
        let exp = Experiment::open(dir)?;
        Ok(Model::build(&exp, opts))
    }

    /// Builds the model of an experiment already read.
    pub fn build(exp: &Experiment, opts: BuildOptions) -> Model {
        let mut regions = RegionTable::default();
        let mut comms = CommTable::default();
        let mut warnings = exp.warnings.clone();
        let mut resolver = SymbolResolver::new();
        let mut region_modules = BTreeMap::new();
        let bases = rank_bases(exp);
        let mut processes: Vec<ProcessModel> = exp
            .images
            .iter()
            .map(|img| {
                let mut p = build_process(img, opts, &mut regions, &mut resolver, &mut warnings);
                p.app = img.app;
                p.rank_base = bases[img.app as usize];
                globalize_ranks(&mut p);
                for def in img.process.regions.values() {
                    let (Some(m), Some(g)) = (
                        img.process.modules.get(&def.module_id),
                        regions.find(&region_info_name(def), def.kind),
                    ) else {
                        continue;
                    };
                    let base = m.path.rsplit('/').next().unwrap_or(&m.path).to_string();
                    region_modules.entry(g).or_insert(base);
                }
                for def in img.process.comms.values() {
                    let mut def = def.clone();
                    for r in &mut def.ranks {
                        *r = p.global_rank(*r);
                    }
                    p.comms.insert(def.comm, comms.intern(&def));
                }
                p
            })
            .collect();
        processes.sort_by_key(|p| (p.rank().is_none(), p.rank(), p.app));
        share_host_clocks(&mut processes);
        name_unfinished_ranks(&processes, &mut warnings);
        let apps = app_models(exp, &mut processes);
        let mut model = Model {
            dir: exp.dir.clone(),
            regions,
            processes,
            comms,
            warnings,
            region_modules,
            apps,
        };
        let mpi_warnings = crate::messages::mpi_warnings(&model);
        model.warnings.extend(mpi_warnings);
        model
    }

    /// The warnings, less those about the files of processes left out of reports (not measured,
    /// such as an `mpirun` that never wrote its ProcessEnd).
    pub fn report_warnings(&self) -> Vec<&Warning> {
        let skip: Vec<PathBuf> = self
            .processes
            .iter()
            .filter(|p| !p.measured)
            .flat_map(|p| {
                let name = p.path.file_name().map(|n| n.to_string_lossy().into_owned());
                let trace = name
                    .and_then(|n| n.strip_prefix("process").map(|r| format!("trace{r}")))
                    .map(|n| p.path.with_file_name(n));
                std::iter::once(p.path.clone()).chain(trace)
            })
            .collect();
        self.warnings
            .iter()
            .filter(|w| !skip.contains(&w.path))
            .collect()
    }

    /// Does the experiment hold MPI data (a rank or an MPI routine)?
    pub fn has_mpi(&self) -> bool {
        self.processes.iter().any(|p| p.mpi.is_some())
            || self.regions.all().iter().any(|r| r.kind == RegionKind::Mpi)
    }

    /// The measured processes that are MPI ranks, by rank (the first process of a rank seen twice).
    pub fn ranks(&self) -> Vec<(u32, &ProcessModel)> {
        let mut out: Vec<(u32, &ProcessModel)> = Vec::new();
        for p in self.processes.iter().filter(|p| p.measured) {
            if let Some(r) = p.rank() {
                if out.last().is_none_or(|(last, _)| *last != r) {
                    out.push((r, p));
                }
            }
        }
        out
    }
}

/// "rank N: no ProcessEnd record..." instead of the file's anonymous warning.
fn name_unfinished_ranks(processes: &[ProcessModel], warnings: &mut [Warning]) {
    for p in processes.iter().filter(|p| p.end.is_none()) {
        let Some(rank) = p.rank() else {
            continue;
        };
        for w in warnings
            .iter_mut()
            .filter(|w| w.kind == WarningKind::Unfinished && w.path == p.path)
        {
            w.message = format!("rank {rank}: {}", w.message);
        }
    }
}

fn message_stats(
    stats: &[MessageStats],
    rmap: &mut RegionMap,
    table: &mut RegionTable,
) -> Vec<MessageStat> {
    stats
        .iter()
        .map(|s| MessageStat {
            region: if s.region == NONE_U32 {
                None
            } else {
                Some(rmap.global(s.region, table))
            },
            peer: (s.peer != NONE_U32).then_some(s.peer),
            direction: s.direction,
            comm: s.comm,
            count: s.count,
            bytes: s.bytes,
            min_bytes: s.min_bytes,
            max_bytes: s.max_bytes,
        })
        .collect()
}

/// Process-local region ids → global indices.
struct RegionMap {
    map: FastMap<u32, u32>,
}

impl RegionMap {
    fn global(&mut self, local: u32, table: &mut RegionTable) -> u32 {
        *self.map.entry(local).or_insert_with(|| {
            table.intern(RegionInfo {
                name: format!("region {local}"),
                kind: RegionKind::Function,
                file: String::new(),
                line: 0,
            })
        })
    }
}

fn region_info_name(def: &RegionDef) -> String {
    demangle(&def.name).unwrap_or_else(|| def.name.clone())
}

fn region_info(
    def: &RegionDef,
    img: &ProcessImage,
    opts: BuildOptions,
    resolver: &mut SymbolResolver,
) -> RegionInfo {
    let name = demangle(&def.name).unwrap_or_else(|| def.name.clone());
    let (file, line) = if def.file.is_empty() && opts.resolve_sources {
        resolver
            .locate(def, img.process.modules.get(&def.module_id))
            .unwrap_or_default()
    } else {
        (def.file.clone(), def.line)
    };
    RegionInfo {
        name,
        kind: def.kind,
        file,
        line,
    }
}

fn tree_from_ticks(
    nodes: &[TickNode],
    img: &ProcessImage,
    rmap: &mut RegionMap,
    table: &mut RegionTable,
    warnings: &mut Vec<Warning>,
) -> CallTree {
    let mut tree = CallTree::new();
    let mut map = vec![0u32; nodes.len()];
    let mut bad_parents = 0u64;
    for (i, n) in nodes.iter().enumerate() {
        let parent = if n.parent == NONE_U32 {
            None
        } else if (n.parent as usize) < i {
            Some(map[n.parent as usize])
        } else {
            bad_parents += 1;
            None
        };
        let region = rmap.global(n.region, table);
        let m = tree.child(parent, region);
        tree.add(
            m,
            n.calls,
            n.child_calls,
            img.clock.seconds(n.inclusive),
            img.clock.seconds(n.exclusive),
        );
        if let Some(ns) = n.cpu_ns {
            tree.add_cpu(m, ns as f64 * 1e-9);
        }
        map[i] = m;
    }
    if bad_parents > 0 {
        warnings.push(Warning::file(
            img.process_path(),
            WarningKind::Malformed,
            format!("{bad_parents} profile nodes name a parent that does not precede them: shown as roots"),
        ));
    }
    tree
}

fn build_process(
    img: &ProcessImage,
    opts: BuildOptions,
    table: &mut RegionTable,
    resolver: &mut SymbolResolver,
    warnings: &mut Vec<Warning>,
) -> ProcessModel {
    let p = &img.process;
    let mut rmap = RegionMap {
        map: FastMap::default(),
    };
    for def in p.regions.values() {
        let g = table.intern(region_info(def, img, opts, resolver));
        rmap.map.insert(def.region_id, g);
    }
    let event_name = |id: u64| {
        u32::try_from(id)
            .ok()
            .and_then(|i| p.user_events.get(&i))
            .map_or_else(|| format!("event {id}"), |d| d.name.clone())
    };

    let mut thread_ids: Vec<u32> = p.threads.keys().copied().collect();
    if let Some(t) = &img.trace {
        thread_ids.extend(t.threads());
    }
    thread_ids.sort_unstable();
    thread_ids.dedup();

    let rebuilt = if opts.rebuild_from_trace {
        rebuild_threads(img, &thread_ids, warnings)
    } else {
        FastMap::default()
    };

    let mut threads = Vec::new();
    for th in thread_ids {
        let data = p.threads.get(&th);
        let info = data.and_then(|d| d.info.as_ref());
        let profile = data.and_then(|d| d.profile.as_ref());
        let recovered = data.is_some_and(|d| d.recovered.profile.is_some());
        let trace_words = img
            .trace
            .as_ref()
            .and_then(|t| t.words_per_thread.get(&th).copied())
            .unwrap_or(0);
        let mut tm = ThreadModel {
            thread: th,
            tid: info.map(|i| i.tid),
            name: data.map(|d| d.name.clone()).unwrap_or_default(),
            cpu_s: None,
            wall_s: None,
            tree: CallTree::new(),
            source: ProfileSource::None,
            trace_words,
            trace_events: profile.filter(|_| !recovered).map(|p| p.trace_events),
            lost_events: profile.map_or(0, |p| p.lost_events),
            lost_nodes: profile.map_or(0, |p| p.lost_nodes),
            user_events: Vec::new(),
            messages: Vec::new(),
            sync: stats_in_seconds(data.map(|d| d.sync_stats.as_slice()).unwrap_or(&[]), |t| {
                img.clock.seconds(t)
            }),
        };
        let recorded_messages = data.map(|d| d.message_stats.as_slice()).unwrap_or(&[]);
        let rebuilt_here = rebuilt.get(&th);
        // In trace mode the runtime writes ThreadProfiles without nodes: the trace is the profile.
        let recorded = profile.filter(|p| !p.nodes.is_empty() || rebuilt_here.is_none());
        if let Some(prof) = recorded {
            let mut nodes: Vec<TickNode> = prof
                .nodes
                .iter()
                .map(|n| TickNode {
                    parent: n.parent,
                    region: n.region,
                    calls: n.calls,
                    child_calls: n.child_calls,
                    inclusive: n.inclusive_ticks,
                    exclusive: n.exclusive_ticks,
                    cpu_ns: None,
                })
                .collect();
            if !recovered {
                for (node, ns) in data.map(|d| d.node_cpu.as_slice()).unwrap_or(&[]) {
                    if let Some(n) = nodes.get_mut(*node as usize) {
                        n.cpu_ns = Some(n.cpu_ns.unwrap_or(0) + ns);
                    }
                }
            }
            tm.tree = tree_from_ticks(&nodes, img, &mut rmap, table, warnings);
            tm.source = if recovered {
                ProfileSource::Recovered
            } else {
                ProfileSource::Recorded
            };
            tm.messages = message_stats(recorded_messages, &mut rmap, table);
            if let Some(i) = info {
                tm.cpu_s = (!recovered).then(|| prof.cpu_ns.saturating_sub(i.cpu_ns) as f64 * 1e-9);
                tm.wall_s = Some(
                    img.clock
                        .seconds(prof.end_ticks.saturating_sub(i.start_ticks)),
                );
            }
            for s in data.map(|d| d.user_stats.as_slice()).unwrap_or(&[]) {
                tm.user_events.push(UserStat {
                    name: event_name(s.event_id as u64),
                    count: s.count,
                    min: s.min,
                    max: s.max,
                    sum: s.sum,
                    sum_squares: s.sum_squares,
                });
            }
        } else if let Some((nodes, b)) = rebuilt_here {
            tm.tree = tree_from_ticks(nodes, img, &mut rmap, table, warnings);
            tm.source = ProfileSource::Rebuilt;
            // records (or statistics recovered from the live file) count exactly what the trace
            // may only partly hold (a killed process's last buffer is lost)
            let derived = if profile.is_some() || !recorded_messages.is_empty() {
                recorded_messages
            } else {
                b.messages.as_slice()
            };
            tm.messages = message_stats(derived, &mut rmap, table);
            if let (Some(prof), Some(i)) = (profile, info) {
                tm.cpu_s = Some(prof.cpu_ns.saturating_sub(i.cpu_ns) as f64 * 1e-9);
                tm.wall_s = Some(
                    img.clock
                        .seconds(prof.end_ticks.saturating_sub(i.start_ticks)),
                );
            }
            tm.trace_events = Some(tm.trace_events.unwrap_or(b.events));
            let start = info.map(|i| i.start_ticks).or(b.first_ticks);
            if let (None, Some(s)) = (tm.wall_s, start) {
                tm.wall_s = Some(img.clock.seconds(b.last_ticks.saturating_sub(s)));
            }
            let recorded_stats = data.map(|d| d.user_stats.as_slice()).unwrap_or(&[]);
            for s in recorded_stats {
                tm.user_events.push(UserStat {
                    name: event_name(s.event_id as u64),
                    count: s.count,
                    min: s.min,
                    max: s.max,
                    sum: s.sum,
                    sum_squares: s.sum_squares,
                });
            }
            let mut ids: Vec<_> = b.user.iter().collect();
            ids.sort_by_key(|(id, _)| **id);
            for (id, s) in ids.into_iter().filter(|_| recorded_stats.is_empty()) {
                tm.user_events.push(UserStat {
                    name: event_name(*id),
                    count: s.count,
                    min: s.min,
                    max: s.max,
                    sum: s.sum,
                    sum_squares: s.sum_squares,
                });
            }
        } else {
            // no profile at all: message statistics (recovered from a live file) still count
            tm.messages = message_stats(recorded_messages, &mut rmap, table);
        }
        threads.push(tm);
    }

    let throttled = p
        .throttled
        .iter()
        .map(|t| ThrottledRegion {
            region: rmap.global(t.region_id, table),
            calls: t.calls,
            inclusive_s: img.clock.seconds(t.inclusive_ticks),
        })
        .collect();
    let info = p.info.as_ref();
    let measured = p.mpi.is_some()
        || p.regions.is_empty()
        || !p.user_events.is_empty()
        || p.regions.values().any(|r| r.kind != RegionKind::Runtime);
    ProcessModel {
        host: info.map_or_else(|| img.host.clone(), |i| i.host.clone()),
        pid: info.map_or(img.pid, |i| i.pid),
        image: img.image,
        ppid: info.map(|i| i.ppid),
        executable: info.map(|i| i.executable.clone()).unwrap_or_default(),
        argv: info.map(|i| i.argv.clone()).unwrap_or_default(),
        version: info.map(|i| i.version.clone()).unwrap_or_default(),
        start_realtime_ns: info.map(|i| i.start_realtime_ns),
        clock: info.map(|i| i.clock),
        ticks_per_second: img.clock.ticks_per_second(),
        clock_source: img.clock.source,
        end: p.end,
        filter: p.filter.clone(),
        region_count: p.regions.len(),
        excluded_regions: p.regions.values().filter(|r| r.excluded()).count(),
        threads,
        throttled,
        java_classes: p.java_classes.clone(),
        path: img.process_path(),
        mpi: p.mpi.clone(),
        clock_offsets: p.clock_offsets.clone(),
        offsets: OffsetMap::new(&p.clock_offsets),
        clock_map: img.clock,
        comms: BTreeMap::new(),
        trace: img.trace.clone(),
        measured,
        sync_objects: name_objects(&p.sync_objects, &p.modules, resolver, opts.resolve_sources),
        region_map: rmap.map.iter().map(|(k, v)| (*k, *v)).collect(),
        app: 0,
        rank_base: 0,
        shift_ns: 0,
        cpu_samples: p.cpu_samples.clone(),
        first_ticks: p
            .threads
            .values()
            .filter_map(|d| d.info.as_ref().map(|i| i.start_ticks))
            .chain(
                img.trace
                    .iter()
                    .flat_map(|t| t.chunks.iter().map(|c| c.header.base_ticks)),
            )
            .min(),
    }
}

/// Processes of one host read one time-stamp counter: each converting it with its own
/// calibration (pairs read with some jitter) would put events of different processes out of
/// order by tens of ns — a message received "before" it was sent. They all take the map of the
/// host's first process (rank 0 when it is there) when their own measured rate agrees with it
/// within 100 ppm (the same counter).
fn share_host_clocks(processes: &mut [ProcessModel]) {
    let mut reference: BTreeMap<String, ClockMap> = BTreeMap::new();
    for p in processes.iter_mut() {
        if p.clock != Some(ClockKind::Tsc) || p.clock_map.source != ClockSource::Calibrated {
            continue;
        }
        match reference.get(&p.host) {
            None => {
                reference.insert(p.host.clone(), p.clock_map);
            }
            Some(r) => {
                let (a, b) = (r.ticks_per_second(), p.clock_map.ticks_per_second());
                if (a - b).abs() <= a * 1e-4 {
                    p.clock_map = *r;
                }
            }
        }
    }
}

/// Rank bases per application: each application's ranks follow the previous ones'.
fn rank_bases(exp: &Experiment) -> Vec<u32> {
    let mut bases = Vec::with_capacity(exp.apps.len());
    let mut next = 0u32;
    for a in 0..exp.apps.len() as u32 {
        bases.push(next);
        let top = exp
            .images
            .iter()
            .filter(|i| i.app == a)
            .filter_map(|i| i.process.mpi.as_ref())
            .map(|m| m.rank.max(m.size.saturating_sub(1)) + 1)
            .max();
        next += top.unwrap_or(0);
    }
    bases
}

/// An event with its world ranks (peer, root) moved by the process's rank base.
#[inline]
pub fn globalize_event(p: &ProcessModel, ev: plx_format::Event) -> plx_format::Event {
    use plx_format::Event;
    if p.rank_base == 0 {
        return ev;
    }
    match ev {
        Event::Send {
            peer,
            tag,
            bytes,
            comm,
            ticks,
        } => Event::Send {
            peer: p.global_rank(peer),
            tag,
            bytes,
            comm,
            ticks,
        },
        Event::Recv {
            peer,
            tag,
            bytes,
            comm,
            ticks,
        } => Event::Recv {
            peer: p.global_rank(peer),
            tag,
            bytes,
            comm,
            ticks,
        },
        Event::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
            ticks,
        } => Event::Collective {
            comm,
            root: p.global_rank(root),
            bytes_sent,
            bytes_recv,
            ticks,
        },
        other => other,
    }
}

/// Moves the process's own world ranks by its rank base.
fn globalize_ranks(p: &mut ProcessModel) {
    if p.rank_base == 0 {
        return;
    }
    let base = p.rank_base;
    if let Some(m) = p.mpi.as_mut() {
        m.rank += base;
    }
    for t in &mut p.threads {
        for m in &mut t.messages {
            if let Some(peer) = m.peer.as_mut() {
                *peer += base;
            }
        }
    }
}

/// The applications, with the time shift of those in comparison mode: each starts when the
/// earliest of the live applications (all of them, if none is live) starts.
fn app_models(exp: &Experiment, processes: &mut [ProcessModel]) -> Vec<AppModel> {
    let start = |a: u32, ps: &[ProcessModel]| -> Option<f64> {
        ps.iter()
            .filter(|p| p.app == a && p.measured)
            .filter_map(|p| p.start_ticks().map(|t| p.rank0_ns(t)))
            .reduce(f64::min)
    };
    let live_start = (0..exp.apps.len() as u32)
        .filter(|a| !exp.apps[*a as usize].compare)
        .filter_map(|a| start(a, processes))
        .reduce(f64::min);
    let mut apps = Vec::new();
    for (i, def) in exp.apps.iter().enumerate() {
        let mut shift_ns = 0;
        if def.compare {
            if let (Some(to), Some(from)) = (live_start, start(i as u32, processes)) {
                shift_ns = (to - from).round() as i64;
            }
        }
        for p in processes.iter_mut().filter(|p| p.app == i as u32) {
            p.shift_ns = shift_ns;
        }
        apps.push(AppModel {
            name: def.name.clone(),
            compare: def.compare,
            shift_ns,
        });
    }
    apps
}

type Rebuilt = FastMap<u32, (Vec<TickNode>, ProfileBuilder)>;

/// One pass over the trace feeding a builder per thread that has no ThreadProfile.
fn rebuild_threads(img: &ProcessImage, threads: &[u32], warnings: &mut Vec<Warning>) -> Rebuilt {
    let mut out = FastMap::default();
    let Some(index) = &img.trace else {
        return out;
    };
    let mut builders: FastMap<u32, ProfileBuilder> = threads
        .iter()
        .filter(|t| {
            img.process
                .threads
                .get(t)
                .is_none_or(|d| d.profile.as_ref().is_none_or(|p| p.nodes.is_empty()))
                && index.words_per_thread.get(t).is_some_and(|w| *w > 0)
        })
        .map(|t| (*t, ProfileBuilder::new()))
        .collect();
    if builders.is_empty() {
        return out;
    }
    let Some(mut reader) = index.reader_or_warn(warnings) else {
        return out;
    };
    for info in &index.chunks {
        let Some(b) = builders.get_mut(&info.header.thread) else {
            continue;
        };
        match reader.read(*info) {
            Ok(mut events) => {
                for ev in events.by_ref() {
                    b.event(ev);
                }
                if let Some(w) = events.cut_at() {
                    warnings.push(Warning::at(
                        &index.path,
                        info.events_offset + 8 * w as u64,
                        WarningKind::Malformed,
                        format!(
                            "thread {}: extended event's payload runs past its chunk: rest of chunk skipped",
                            info.header.thread
                        ),
                    ));
                }
            }
            Err(w) => {
                warnings.push(w);
                break;
            }
        }
    }
    for (th, b) in builders {
        let (nodes, b) = b.finish();
        if b.unmatched_exits > 0 {
            warnings.push(Warning::file(
                &index.path,
                WarningKind::BadEvents {
                    count: b.unmatched_exits,
                },
                format!(
                    "thread {th}: {} exit events matched no open region",
                    b.unmatched_exits
                ),
            ));
        }
        out.insert(th, (nodes, b));
    }
    out
}
