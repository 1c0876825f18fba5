//! The analysis model: processes (MPI ranks) and threads of an experiment, each thread with its callpath tree in seconds.
//! Its types are here; building it is `build.rs`'s, sharing clocks `clocks.rs`'s.

mod build;
mod clocks;
mod samples;

pub(crate) use build::region_info;
use build::*;
pub use clocks::globalize_event;
pub(crate) use clocks::globalize_event_by;
use clocks::*;
use samples::{fold_samples, timed_samples, FrameNames};
pub use samples::{SampleStats, TimedSample};

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::AnalysisError;

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

/// The JVM's code ranges of a process (docs/java.md "Sampling").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JitCounts {
    /// Compiled methods installed (JitCode of kind 0).
    pub methods: usize,
    /// Pieces of code the JVM generated itself: the interpreter, stubs (JitCode of kind 1).
    pub generated: usize,
    /// Compiled methods freed (JitUnload).
    pub freed: usize,
}

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
    /// Call-stack sampling's counts (`plx run --sample`), when the thread was sampled.
    pub samples: Option<SampleStats>,
    /// With a trace: each call-stack sample's time and tree node, in the order taken (empty
    /// without stamps: a profile, or an experiment older than SampleStamps).
    pub sample_times: Vec<TimedSample>,
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
    /// Counter sets, whole-thread totals and counted functions (empty without counters).
    pub counters: crate::counters::ProcessCounters,
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
    /// The JVM's threads (JavaThread records), measured code or not.
    pub java_threads: Vec<plx_format::JavaThread>,
    /// The JVM's code ranges recorded for naming samples (JitCode, JitUnload records).
    pub jit_code: JitCounts,
    /// Changes of the sampling signal the program forced (SampleSignal records), in file order.
    pub sample_signals: Vec<plx_format::records::SampleSignal>,
    /// Functions selected for probes (probed or skipped with a reason), in file order.
    pub probe_sites: Vec<plx_format::ProbeSite>,
    /// When probes were inserted and removed, in file order.
    pub probe_changes: Vec<plx_format::ProbeChange>,
    /// OpenMP teams per thread (OmpTeams records; regions process-local, see `region_map`).
    pub omp_teams: Vec<plx_format::OmpTeams>,
    /// The process file.
    pub path: PathBuf,
    /// MpiInit: the process is an MPI rank.
    pub mpi: Option<MpiInit>,
    /// ClockOffset records.
    pub clock_offsets: Vec<ClockOffset>,
    /// ClockSyncSkipped: MPI's clock exchange was not run (not every rank measured).
    pub clock_sync_skipped: Option<plx_format::ClockSyncSkipped>,
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
    /// `1234`, or `1234.2` for the second exec image: the process as the reports name it.
    pub fn pid_text(&self) -> String {
        if self.image == 0 {
            self.pid.to_string()
        } else {
            format!("{}.{}", self.pid, self.image)
        }
    }

    /// The command line as a shell would take it back: a word that is empty or holds anything
    /// but letters, digits and `_./=:,+@%-` in single quotes (`'a b'`, `''`), so that `a b` and
    /// `a`, `b` read apart.
    pub fn command_line(&self) -> String {
        shell_words(&self.argv)
    }

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
    /// The error of a command that needs an event trace and finds none: the run's trace
    /// events all lost (`TraceLost`), or never recorded (`NoEventTrace`).
    pub fn no_event_trace(&self) -> AnalysisError {
        let lost: u64 = self
            .processes
            .iter()
            .flat_map(|p| &p.threads)
            .map(|t| t.lost_events)
            .sum();
        if lost > 0 {
            AnalysisError::TraceLost(self.dir.clone(), lost)
        } else {
            AnalysisError::NoEventTrace(self.dir.clone())
        }
    }

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
        // decoding (the traces read whole) in parallel, one image a work item; the tables are
        // then filled image by image in order, so ids and warnings do not depend on the threads
        let decoded: Vec<build::Decoded> = {
            use rayon::prelude::*;
            exp.images
                .par_iter()
                .map(|img| build::decode_process(img, opts))
                .collect()
        };
        let mut processes: Vec<ProcessModel> = exp
            .images
            .iter()
            .zip(decoded)
            .map(|(img, decoded)| {
                let mut p = build_process(
                    img,
                    decoded,
                    opts,
                    &mut regions,
                    &mut resolver,
                    &mut warnings,
                );
                p.app = img.app;
                p.rank_base = bases[img.app as usize];
                globalize_ranks(&mut p);
                for def in img.process.regions.values() {
                    let name = if def.kind == RegionKind::Omp {
                        region_info(def, img, opts, &mut resolver).name
                    } else {
                        region_info_name(def)
                    };
                    let (Some(m), Some(g)) = (
                        img.process.modules.get(&def.module_id),
                        regions.find(&name, def.kind),
                    ) else {
                        continue;
                    };
                    let base = m.path.rsplit('/').next().unwrap_or(&m.path).to_string();
                    region_modules.entry(g).or_insert(base);
                }
                for def in img.process.comms.values() {
                    if def.ranks.is_empty() {
                        // the world's ranks in order (format version 3), as many as MpiInit says
                        let size = img.process.mpi.as_ref().map_or(0, |m| m.size);
                        match comms.intern_world(def, size, p.global_rank(0)) {
                            Some(g) => {
                                p.comms.insert(def.comm, g);
                                continue;
                            }
                            None => warnings.push(Warning::file(
                                img.process_path(),
                                WarningKind::Malformed,
                                format!(
                                    "communicator {}: the world's ranks, a world of {size} claimed by MpiInit: over the {} ranks the reader lists; its members are left out",
                                    def.comm,
                                    crate::comms::WORLD_RANKS_LIMIT
                                ),
                            )),
                        }
                    }
                    let mut def = def.clone();
                    for r in &mut def.ranks {
                        *r = p.global_rank(*r);
                    }
                    p.comms.insert(def.comm, comms.intern(&def));
                }
                for def in img.process.inter_comms.values() {
                    let mut def = def.clone();
                    for r in &mut def.ranks {
                        *r = p.global_rank(*r);
                    }
                    p.comms.insert(def.comm, comms.intern_inter(&def));
                }
                p
            })
            .collect();
        if !opts.resolve_sources {
            let mut seen = std::collections::HashSet::new();
            for m in exp.images.iter().flat_map(|i| i.process.modules.values()) {
                if seen.insert((&m.path, &m.build_id)) {
                    resolver.check_build(m);
                }
            }
        }
        for m in resolver.take_stale() {
            let found = if m.found.is_empty() { "none" } else { &m.found };
            warnings.push(Warning::file(
                &m.path,
                WarningKind::StaleModule,
                format!(
                    "rebuilt or replaced since the run (build-id {} then, {found} now) and no matching \
                     debug file under /usr/lib/debug/.build-id: its source locations are not shown",
                    m.recorded
                ),
            ));
        }
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
        let runtime_cost = crate::runtime_cost::runtime_cost_warnings(&model);
        model.warnings.extend(runtime_cost);
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

/// `argv` as `ProcessModel::command_line` writes it.
pub fn shell_words(argv: &[String]) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,+@%-".contains(c);
    argv.iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(plain) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod shell_words_tests {
    use super::shell_words;

    #[test]
    fn words_with_spaces_or_nothing_are_quoted() {
        let w = |v: &[&str]| shell_words(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(w(&["./solver", "-n", "64"]), "./solver -n 64");
        assert_eq!(w(&["./a", "a b", "", "c"]), "./a 'a b' '' c");
        assert_eq!(w(&["it's"]), "'it'\\''s'");
    }
}
