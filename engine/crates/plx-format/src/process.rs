//! Reads one `process.plx` into [`ProcessData`], keeping everything intact and warning about the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::counters::{CounterEpoch, CounterSet};
use crate::cpu::CpuSamples;
use crate::framing::{check_file_header, FileKind, RecordIter};
use crate::mpi::{ClockOffset, CommDef, MessageStats, MpiInit};
use crate::records::{
    Calibration, Module, ProcessEnd, ProcessInfo, Record, RegionDef, ThreadInfo, ThreadProfile,
    Throttled, UserEventDef, UserEventStats,
};
use crate::records::{CounterReadPaths, NodeCounters};
use crate::sync::{SyncObject, SyncStats};
use crate::warning::{Warning, WarningKind};

/// A SampleStamps word: bits 0..39 the ticks since the previous stamp, 40..63 the frame.
const STAMP_DELTA_MASK: u64 = (1 << 40) - 1;
const STAMP_FRAME_SHIFT: u32 = 40;

/// Everything one thread's records say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadData {
    /// Process-local index.
    pub thread: u32,
    /// ThreadInfo, if written.
    pub info: Option<ThreadInfo>,
    /// Current name: the last ThreadName, else the ThreadInfo name.
    pub name: String,
    /// The callpath profile: the ThreadProfile record (the last one wins), or, when there is
    /// none, the one recovered from the thread's `live.<thread>.nodes` file (see [`Recovered`]).
    pub profile: Option<ThreadProfile>,
    /// User event statistics.
    pub user_stats: Vec<UserEventStats>,
    /// MPI message statistics (one per routine, peer, direction and communicator; the last
    /// wins), or, when there are no records, those recovered from `live.<thread>.mpi`.
    pub message_stats: Vec<MessageStats>,
    /// Synchronization statistics, one per object (the last wins), or, when the thread's
    /// `live.<thread>.sync` file is still there, those it holds (the live file wins).
    pub sync_stats: Vec<SyncStats>,
    /// CPU time of `cputime` functions' profile nodes: (ThreadProfile node index, ns); the
    /// last NodeCpu record wins.
    pub node_cpu: Vec<(u32, u64)>,
    /// Whole-thread counter totals: (set, one value per event); the last record of a set wins.
    pub counters: Vec<(u32, Vec<u64>)>,
    /// Counted calls of `counters` contexts, one record per set and callpath (or function)
    /// (the last of a set and node/region wins).
    pub node_counters: Vec<NodeCounters>,
    /// How each set the thread opened was read (the last record of a set wins).
    pub counter_paths: Vec<CounterReadPaths>,
    /// Call-stack samples merged into a tree of code addresses (the last SampleTree wins).
    pub sample_tree: Option<crate::records::SampleTree>,
    /// With a trace: each call-stack sample's time (ticks) and the index of its innermost frame
    /// in `sample_tree`'s frames, in the order taken (the SampleStamps records decoded).
    pub sample_stamps: Vec<(u64, u32)>,
    /// What was taken from live files because the records were never written.
    pub recovered: Recovered,
}

/// The live files a thread's data was recovered from (spec/format.md "Live files"): the process
/// was killed before the thread's records were written. A recovered [`ThreadProfile`] holds the
/// live tree (regions still open at the kill are not in its times); its `end_ticks` is the
/// latest time known for the process (never before the thread's start plus the time its tree
/// accounts for), its `cpu_ns` the thread's CPU clock at start (its CPU time is unknown) and its
/// event counts 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// `live.<thread>.nodes`, if the profile comes from it.
    pub profile: Option<PathBuf>,
    /// `live.<thread>.mpi`, if the message statistics come from it.
    pub messages: Option<PathBuf>,
    /// `live.<thread>.sync`, if the synchronization statistics come from it.
    pub sync: Option<PathBuf>,
    /// `live.<thread>.samples`, if the call-stack samples come from it.
    pub samples: Option<PathBuf>,
    /// Samples its head counted that none of its frames holds (lost with the process).
    pub samples_not_kept: u64,
}

/// The decoded content of one `process.plx` (or `process.N.plx`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessData {
    /// The file read.
    pub path: PathBuf,
    /// ProcessInfo, if present.
    pub info: Option<ProcessInfo>,
    /// Calibration pairs in file order.
    pub calibrations: Vec<Calibration>,
    /// Measured ticks per second.
    pub clock_rate: Option<f64>,
    /// Modules by id.
    pub modules: BTreeMap<u32, Module>,
    /// Regions by id.
    pub regions: BTreeMap<u32, RegionDef>,
    /// Threads by index.
    pub threads: BTreeMap<u32, ThreadData>,
    /// User event names by id.
    pub user_events: BTreeMap<u32, UserEventDef>,
    /// Throttled regions.
    pub throttled: Vec<Throttled>,
    /// ProcessEnd, absent if the process did not finish writing.
    pub end: Option<ProcessEnd>,
    /// Filter text in force.
    pub filter: Option<String>,
    /// MpiInit: the process is this MPI rank.
    pub mpi: Option<MpiInit>,
    /// Clock offsets to rank 0 in file order.
    pub clock_offsets: Vec<ClockOffset>,
    /// Communicators by process-local id.
    pub comms: BTreeMap<u32, CommDef>,
    /// Intercommunicators by process-local id (the ids are shared with `comms`).
    pub inter_comms: BTreeMap<u32, crate::records::InterCommDef>,
    /// Synchronization objects by process-local id.
    pub sync_objects: BTreeMap<u32, SyncObject>,
    /// CPU samples (CpuSamples records) in file order.
    pub cpu_samples: Vec<CpuSamples>,
    /// Counter event sets by id.
    pub counter_sets: BTreeMap<u32, CounterSet>,
    /// Counter configurations read (the start, then each reload), in file order.
    pub counter_epochs: Vec<CounterEpoch>,
    /// Classes the Java agent rewrote (JavaClass records) in file order.
    pub java_classes: Vec<crate::records::JavaClass>,
    /// The JVM's threads the Java agent listed (JavaThread records) in file order.
    pub java_threads: Vec<crate::records::JavaThread>,
    /// Code the JVM made at run time (JitCode records) in file order.
    pub jit_code: Vec<crate::records::JitCode>,
    /// Compiled methods the JVM freed (JitUnload records) in file order.
    pub jit_unloads: Vec<crate::records::JitUnload>,
    /// The Java methods JitInline records name (JitMethod records) in file order.
    pub jit_methods: Vec<crate::records::JitMethod>,
    /// The methods inlined at compiled methods' instructions (JitInline records) in file order.
    pub jit_inline: Vec<crate::records::JitInline>,
    /// Changes of the sampling signal (SampleSignal records) in file order.
    pub sample_signals: Vec<crate::records::SampleSignal>,
    /// Functions selected for probes, probed or skipped (ProbeSite records) in file order.
    pub probe_sites: Vec<crate::records::ProbeSite>,
    /// Probes inserted and removed (ProbeChange records) in file order.
    pub probe_changes: Vec<crate::records::ProbeChange>,
    /// OpenMP teams per thread (OmpTeams records) in file order.
    pub omp_teams: Vec<crate::records::OmpTeams>,
    /// Writes the runtime could not complete, per file (WriteFailures records).
    pub write_failures: Vec<crate::records::WriteFailures>,
    /// Threads whose calls were still open when the process ended (OpenAtEnd records).
    pub open_at_end: Vec<crate::records::OpenAtEnd>,
    /// MPI's clock exchange was not run: not every rank of the job was measured
    /// (ClockSyncSkipped record).
    pub clock_sync_skipped: Option<crate::records::ClockSyncSkipped>,
    /// Records of types this reader does not know (skipped).
    pub unknown_records: u64,
}

impl ProcessData {
    pub(crate) fn thread_mut(&mut self, thread: u32) -> &mut ThreadData {
        self.threads.entry(thread).or_insert_with(|| ThreadData {
            thread,
            ..ThreadData::default()
        })
    }

    fn apply(&mut self, rec: Record) {
        match rec {
            Record::ProcessInfo(p) => self.info = Some(p),
            Record::Calibration(c) => self.calibrations.push(c),
            Record::ClockRate(r) => self.clock_rate = Some(r),
            Record::Module(m) => {
                self.modules.insert(m.module_id, m);
            }
            Record::RegionDef(d) => {
                self.regions.insert(d.region_id, d);
            }
            Record::ThreadInfo(t) => {
                let td = self.thread_mut(t.thread);
                if td.name.is_empty() {
                    td.name = t.name.clone();
                }
                td.info = Some(t);
            }
            Record::ThreadName(n) => {
                let t = n.thread;
                self.thread_mut(t).name = n.name;
            }
            Record::ThreadProfile(p) => {
                let t = p.thread;
                self.thread_mut(t).profile = Some(p);
            }
            Record::UserEventDef(d) => {
                self.user_events.insert(d.event_id, d);
            }
            Record::UserEventStats(s) => {
                let td = self.thread_mut(s.thread);
                td.user_stats.retain(|o| o.event_id != s.event_id);
                td.user_stats.push(s);
            }
            Record::Throttled(t) => self.throttled.push(t),
            Record::ProcessEnd(e) => self.end = Some(e),
            Record::Filter(f) => self.filter = Some(f),
            Record::MpiInit(m) => self.mpi = Some(m),
            Record::ClockOffset(c) => self.clock_offsets.push(c),
            Record::CommDef(c) => {
                self.comms.insert(c.comm, c);
            }
            Record::InterCommDef(c) => {
                self.inter_comms.insert(c.comm, c);
            }
            Record::MessageStats(m) => {
                let td = self.thread_mut(m.thread);
                td.message_stats.retain(|o| {
                    (o.region, o.peer, o.direction, o.comm)
                        != (m.region, m.peer, m.direction, m.comm)
                });
                td.message_stats.push(m);
            }
            Record::SyncObject(o) => {
                self.sync_objects.insert(o.object, o);
            }
            Record::SyncStats(st) => {
                let td = self.thread_mut(st.thread);
                td.sync_stats.retain(|o| o.object != st.object);
                td.sync_stats.push(st);
            }
            Record::NodeCpu(c) => {
                self.thread_mut(c.thread).node_cpu = c.entries;
            }
            Record::CpuSamples(c) => self.cpu_samples.push(c),
            Record::CounterSet(s) => {
                self.counter_sets.insert(s.set, s);
            }
            Record::CounterEpoch(e) => self.counter_epochs.push(e),
            Record::ThreadCounters(c) => {
                let td = self.thread_mut(c.thread);
                td.counters.retain(|(s, _)| *s != c.set);
                td.counters.push((c.set, c.values));
            }
            Record::NodeCounters(c) => {
                let td = self.thread_mut(c.thread);
                td.node_counters
                    .retain(|o| (o.set, o.node, o.region) != (c.set, c.node, c.region));
                td.node_counters.push(c);
            }
            Record::CounterReadPaths(c) => {
                let td = self.thread_mut(c.thread);
                td.counter_paths.retain(|o| o.set != c.set);
                td.counter_paths.push(c);
            }
            Record::JavaClass(c) => self.java_classes.push(c),
            Record::JavaThread(t) => self.java_threads.push(t),
            Record::JitCode(c) => self.jit_code.push(c),
            Record::JitUnload(u) => self.jit_unloads.push(u),
            Record::JitMethod(m) => self.jit_methods.push(m),
            Record::JitInline(i) => self.jit_inline.push(i),
            Record::SampleSignal(s) => self.sample_signals.push(s),
            Record::WriteFailures(w) => self.write_failures.push(w),
            Record::OpenAtEnd(o) => self.open_at_end.push(o),
            Record::ClockSyncSkipped(c) => self.clock_sync_skipped = Some(c),
            Record::SampleTree(t) => {
                let thread = t.thread;
                self.thread_mut(thread).sample_tree = Some(t);
            }
            Record::SampleStamps(s) => {
                let stamps = &mut self.thread_mut(s.thread).sample_stamps;
                let mut ticks = s.base_ticks;
                stamps.reserve(s.stamps.len());
                for w in s.stamps {
                    ticks = ticks.wrapping_add(w & STAMP_DELTA_MASK);
                    stamps.push((ticks, (w >> STAMP_FRAME_SHIFT) as u32));
                }
            }
            Record::ProbeSite(p) => self.probe_sites.push(p),
            Record::ProbeChange(c) => self.probe_changes.push(c),
            Record::OmpTeams(t) => self.omp_teams.push(t),
        }
    }

    /// Applies the records of one file in memory; false when its header is not a process
    /// file's (nothing read).
    fn apply_file(&mut self, path: &Path, bytes: &[u8], warnings: &mut Vec<Warning>) -> bool {
        let head = &bytes[..bytes.len().min(16)];
        if let Err(w) = check_file_header(path, head, bytes.len() as u64, FileKind::Process) {
            warnings.push(w);
            return false;
        }
        let mut it = RecordIter::new(path, bytes);
        for (h, payload) in it.by_ref() {
            match Record::decode(h.record_type, payload) {
                Ok(Some(rec)) => self.apply(rec),
                Ok(None) => self.unknown_records += 1,
                Err(problem) => warnings.push(Warning::at(
                    path,
                    h.offset,
                    WarningKind::Malformed,
                    format!("malformed record of type {}: {}", h.record_type, problem),
                )),
            }
        }
        if let Some(w) = it.warning {
            warnings.push(w);
        }
        true
    }

    /// Decodes a whole file already in memory; damage is appended to `warnings`.
    pub fn parse(path: &Path, bytes: &[u8], warnings: &mut Vec<Warning>) -> ProcessData {
        Self::parse_with_end(path, bytes, None, warnings)
    }

    /// [`ProcessData::parse`], then the records of the process's end file (`end.plx`: the last
    /// records the runtime wrote into its reserved room when `process.plx` had none).
    fn parse_with_end(
        path: &Path,
        bytes: &[u8],
        end: Option<(&Path, &[u8])>,
        warnings: &mut Vec<Warning>,
    ) -> ProcessData {
        let mut data = ProcessData {
            path: path.to_path_buf(),
            ..ProcessData::default()
        };
        let whole = data.apply_file(path, bytes, warnings);
        if let Some((end_path, end_bytes)) = end {
            data.apply_file(end_path, end_bytes, warnings);
        } else if !whole {
            return data;
        }
        if data.info.is_none() {
            warnings.push(Warning::file(
                path,
                WarningKind::Malformed,
                "no ProcessInfo record".to_string(),
            ));
        }
        if data.end.is_none() {
            warnings.push(Warning::file(
                path,
                WarningKind::Unfinished,
                "no ProcessEnd record: the process did not finish writing".to_string(),
            ));
        }
        data
    }

    /// Reads and decodes a file; an unreadable file (or not a regular file) gives a warning and
    /// empty data. Only the bytes before the file's first hole are read: a sparse file claiming
    /// more gives a warning for the rest.
    pub fn read(path: &Path, warnings: &mut Vec<Warning>) -> ProcessData {
        let bytes = crate::input::open_regular(path).and_then(|input| {
            let bytes = input.read_data()?;
            Ok((bytes, input.len))
        });
        match bytes {
            Ok((bytes, len)) => {
                let end_path = end_file(path);
                let end = end_path.as_deref().and_then(|p| read_end_file(p, warnings));
                let data = Self::parse_with_end(
                    path,
                    &bytes,
                    end.as_ref().map(|(p, b)| (p.as_path(), b.as_slice())),
                    warnings,
                );
                if (bytes.len() as u64) < len {
                    warnings.push(hole_warning(path, bytes.len() as u64, len));
                }
                data
            }
            Err(e) => {
                warnings.push(Warning::file(
                    path,
                    WarningKind::MissingFile,
                    format!("cannot read: {e}"),
                ));
                ProcessData {
                    path: path.to_path_buf(),
                    ..ProcessData::default()
                }
            }
        }
    }
}

/// `end.plx` beside `process.plx`, `end.N.plx` beside `process.N.plx`: where the runtime wrote
/// the process's last records that `process.plx` had no room for.
pub fn end_file(process: &Path) -> Option<PathBuf> {
    let name = process.file_name()?.to_str()?;
    let rest = name.strip_prefix("process")?;
    Some(process.with_file_name(format!("end{rest}")))
}

/// The end file's bytes, if there is one; one that is there but cannot be read is a warning.
fn read_end_file(path: &Path, warnings: &mut Vec<Warning>) -> Option<(PathBuf, Vec<u8>)> {
    match crate::input::open_regular(path).and_then(|input| input.read_data()) {
        Ok(bytes) => Some((path.to_path_buf(), bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(Warning::file(
                path,
                WarningKind::MissingFile,
                format!("cannot read: {e}"),
            ));
            None
        }
    }
}

/// The warning for a file whose bytes from `data_end` to `len` were never written (a hole).
pub(crate) fn hole_warning(path: &Path, data_end: u64, len: u64) -> Warning {
    Warning::at(
        path,
        data_end,
        WarningKind::Garbage {
            ignored: len - data_end,
        },
        format!(
            "a hole (bytes never written): {} bytes ignored from here to the end",
            len - data_end
        ),
    )
}
