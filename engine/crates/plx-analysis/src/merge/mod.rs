//! The global merge: every thread of every process in one time-ordered stream on one clock, the clock condition repaired.
//!
//! **Streaming.** Each location (a thread of a process image with a trace) is a [`cursor`] over
//! its chunks in file order; a k-way merge with a binary heap keyed by time picks the next event.
//! A location holds at most one chunk's bytes (plus a small batch of decoded events, and with
//! more than one engine thread the next batch decoded ahead: [`ahead`]), so memory is bounded
//! by the number of threads, never by the trace ([`MergeStats`] counts it). A location whose
//! next event is still the earliest keeps going without touching the heap. [`GlobalMerge::feed`]
//! runs the merge on a thread of its own while the caller consumes the stream ([`feed`]).
//!
//! **One time base.** Ticks become the process's `CLOCK_MONOTONIC` ns by its calibration, then
//! rank 0's by the ClockOffset records ([`ProcessModel::rank0_ns`]); processes without MPI keep
//! their own monotonic clock (one host, one clock). Times are rounded to whole ns.
//!
//! **Order.** Events are ordered by (time, process, ticks, thread): within a process by its own
//! ticks, then thread — the order [`crate::matching`] gives a rank's messages — and a thread's
//! events keep their order in the trace.
//!
//! **Clock condition.** Offsets measured at MPI_Init and MPI_Finalize leave residual errors: a
//! receive can still end before its matching send begins. A controlled logical clock repairs
//! it in the stream: a receive earlier than its send's time plus a minimum latency moves to
//! that time, and with it every later event of its process (all threads: they share the clock)
//! by the same amount, keeping local intervals; the shift only grows, and propagates through
//! the later sends. A receive met before its send has been seen holds its process back
//! (events at or after it wait) until the send comes. Which messages pair up is the matching's
//! answer, counted beforehand ([`clc`]), so the stream only waits for sends that will come.
//!
//! **Replay.** A second pass that needs each thread's events with their times but not their
//! global order (the critical path's procedure profile) reads each location alone
//! ([`GlobalMerge::replay_location`]) with the clock shifts the first merge gave each location
//! and as many events as it gave ([`ReplayPlan`]): the same events, no heap, no matching.

mod ahead;
mod alone;
mod clc;
mod cursor;
mod feed;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use plx_format::{Event, Experiment, RegionKind, Warning, WarningKind, NONE_U32};

use crate::matching::{comm_of_key, MatchSummary};
use crate::model::{BuildOptions, Model, ProcessModel};
use crate::regions::{RegionInfo, RegionTable};
use crate::symbols::demangle;
use crate::AnalysisError;

pub use alone::{Alone, AloneEvent, Links, LocationStream, NeedsMerge, Sink, UNRESOLVED};
pub use clc::{ClockReport, DEFAULT_MIN_LATENCY_NS};
pub use cursor::MergeStats;
pub use feed::Feed;

use ahead::{Source, Sources};
use clc::{KeyMemo, MessagePlan, Messages, MsgKey, QueuedSend};
use cursor::{Clock, Cursor, Files, Filter, Head};

/// How to merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeOptions {
    /// Repair the clock condition with the controlled logical clock (default on).
    pub repair_clock: bool,
    /// Minimum message latency of a repaired message, ns; `None`: the smallest transfer time
    /// observed, at most [`DEFAULT_MIN_LATENCY_NS`].
    pub min_latency_ns: Option<u64>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            repair_clock: true,
            min_latency_ns: None,
        }
    }
}

/// A thread of a process image that has trace events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLocation {
    /// Index into [`Model::processes`].
    pub process: usize,
    /// Process-local thread index.
    pub thread: u32,
    /// MPI rank of the process, if it is one.
    pub rank: Option<u32>,
    /// Pid.
    pub pid: u32,
    /// Exec image (0, or N of `process.N.plx`).
    pub image: u32,
    /// Host.
    pub host: String,
    /// Thread name.
    pub name: String,
    /// The application's name in a session, else empty.
    pub app: String,
    /// The process's rank base ([`ProcessModel::rank_base`]).
    pub rank_base: u32,
}

impl TraceLocation {
    /// Thread `thread` of process `process` (a [`Model::processes`] index) of `model`.
    pub fn of(model: &Model, process: usize, thread: u32) -> TraceLocation {
        let p = &model.processes[process];
        TraceLocation {
            process,
            thread,
            rank: p.rank(),
            pid: p.pid,
            image: p.image,
            host: p.host.clone(),
            app: p.app_name(model).to_string(),
            rank_base: p.rank_base,
            name: p
                .threads
                .iter()
                .find(|t| t.thread == thread)
                .map(|t| t.name.clone())
                .unwrap_or_default(),
        }
    }

    /// The location's short name ([`crate::location_name::Who::short`]): `rank.thread` for an
    /// MPI rank, else `pid.thread` (`pid:image.thread` for a later exec image); in a session
    /// prefixed with `app:`, the rank the application's own.
    pub fn label(&self) -> String {
        crate::location_name::Who::location(self).short(Some(self.thread))
    }

    /// The location's long name, for headings: `0.1 "worker" (pid 1234 on node1)`.
    pub fn long_label(&self) -> String {
        crate::location_name::Who::location(self).long(Some((self.thread, &self.name)))
    }
}

/// The partner of a matched receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageLink {
    /// The message's number in the stream (0, 1, ... in the order the sends come).
    pub id: u64,
    /// The send event's time, ns (global, repaired).
    pub send_ns: i64,
    /// The sending location (index into [`GlobalMerge::locations`]).
    pub sender: u32,
}

/// What happened, with global region, user event and communicator indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventKind {
    /// An OpenMP implicit task began: the location joined a team, whose parallel region's
    /// enter follows (on a worker, after the enters of the starter's call path).
    OmpTeam {
        /// The parallel region (index into [`GlobalMerge::regions`]).
        region: u32,
        /// Nesting level (1 = outermost).
        level: u32,
        /// Threads in the team.
        team_size: u32,
        /// The location's OpenMP thread number in it (0: the thread that started it).
        thread_num: u32,
    },
    /// A region was entered (index into [`GlobalMerge::regions`]).
    Enter {
        /// Region.
        region: u32,
    },
    /// A region was left.
    Exit {
        /// Region.
        region: u32,
    },
    /// A user event value (index into [`GlobalMerge::user_events`]).
    User {
        /// User event.
        event: u32,
        /// Value.
        value: f64,
    },
    /// An MPI message left.
    Send {
        /// Receiver, a world rank.
        peer: u32,
        /// Tag.
        tag: i32,
        /// Bytes.
        bytes: u64,
        /// Communicator ([`Model::comms`] index), `None` without a CommDef.
        comm: Option<u32>,
        /// The message's number when it is matched (its receive carries the same).
        message: Option<u64>,
    },
    /// An MPI message arrived.
    Recv {
        /// Sender, a world rank.
        peer: u32,
        /// Tag.
        tag: i32,
        /// Bytes.
        bytes: u64,
        /// Communicator ([`Model::comms`] index), `None` without a CommDef.
        comm: Option<u32>,
        /// The matching send, when matched.
        message: Option<MessageLink>,
    },
    /// The location's next receive was posted before the call that completes it (an
    /// MPI_Irecv, or MPI_Start of a persistent receive): that receive's [`EventKind::Recv`]
    /// follows on the location.
    RecvPosted {
        /// Time from the post to this event, ns (the post is at this event's time minus it).
        before_ns: u64,
    },
    /// A nonblocking or persistent send completed (in the Wait/Test call that completed it).
    SendDone {
        /// The process-local thread that recorded the send.
        thread: u32,
        /// Its mode: 0 standard, 1 synchronous, 2 buffered, 3 ready.
        mode: u8,
        /// The send's number among that thread's send events (0 the first).
        send: u64,
    },
    /// A nonblocking collective completed (in the Wait/Test call that completed it).
    CollDone {
        /// The process-local thread that posted it.
        thread: u32,
        /// Its post's number among that thread's [`EventKind::Collective`] events (0 the
        /// first).
        collective: u64,
    },
    /// This rank's part of a collective.
    Collective {
        /// Communicator ([`Model::comms`] index), `None` without a CommDef.
        comm: Option<u32>,
        /// Root as a world rank.
        root: Option<u32>,
        /// Bytes sent.
        bytes_sent: u64,
        /// Bytes received.
        bytes_recv: u64,
    },
    /// A synchronization object taken, or a wait on one ended.
    Acquire {
        /// Process-local object id ([`ProcessModel::sync_objects`]).
        object: u32,
        /// Object kind (SyncObject kinds: 0 mutex .. 6 thread).
        kind: u8,
        /// Time blocked before it, ns.
        wait_ns: u64,
        /// 1 + the thread index of the object's owner when the wait began (Java monitors);
        /// 0 unknown.
        holder: u32,
        /// A read-write lock taken for reading (shared with other readers).
        shared: bool,
    },
    /// A synchronization object released, posted or signalled (a thread's end releases its
    /// own thread object, kind 6).
    Release {
        /// Process-local object id.
        object: u32,
        /// Object kind.
        kind: u8,
    },
    /// Bytes written to a traced stream socket (one direction of a TCP connection).
    StreamSend {
        /// The direction's id (the same in the writer's and the reader's process).
        stream: u64,
        /// Bytes written to this direction so far, this write's included.
        end: u64,
        /// Bytes this write moved.
        bytes: u64,
    },
    /// Bytes read from a traced stream socket.
    StreamRecv {
        /// The direction's id.
        stream: u64,
        /// Bytes read from this direction so far, this read's included.
        end: u64,
        /// Bytes this read moved.
        bytes: u64,
    },
    /// A call counted by a `counters` context ended (only in [`GlobalMerge::with_counters`]):
    /// its inclusive counts, before the region's exit.
    Counted {
        /// The process-local counter set ([`ProcessModel::counters`]`.sets`).
        set: u32,
        /// Region (the function counted).
        region: u32,
        /// The set's first four events' inclusive values (0 past the set's events).
        values: [u64; 4],
    },
}

/// One event of the merged stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GlobalEvent {
    /// Global time, ns of rank 0's `CLOCK_MONOTONIC` (repaired).
    pub time_ns: i64,
    /// Index into [`GlobalMerge::locations`].
    pub location: u32,
    /// The event.
    pub kind: EventKind,
}

/// A process image with a trace (what the merge reads of it at every event is its [`SlotState`]).
struct Slot {
    model_index: usize,
    path: PathBuf,
    /// `SlotState::regions` is this process's alone (not shared with a process of the same ids).
    own_regions: bool,
    user_events: HashMap<u64, u32>,
    /// The receive the process waits at: events at or after (ticks, thread) are parked.
    block: Option<(u64, u32, MsgKey)>,
    parked: Vec<u32>,
}

/// What the merge reads of a process at each of its events, kept apart from its [`Slot`] and
/// small (32 bytes): when the stream goes from process to process at every event (a ring), the
/// states of 4,096 processes (128 KiB) stay in the processor's cache.
#[derive(Debug, Clone, Copy)]
struct SlotState {
    /// Current clock shift of the process, ns (only grows).
    delta: i64,
    /// Bumped with every shift: heap entries of an older generation have stale keys.
    generation: u32,
    /// Process-local region id → global: an index into [`GlobalMerge::region_maps`].
    regions: u32,
    rank: Option<u32>,
    /// In [`Model::ranks`]: its messages take part in matching.
    matching: bool,
    /// The process waits at a receive ([`Slot::block`] is set).
    blocked: bool,
}

/// A receive's state while the merge decides its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Pending {
    #[default]
    None,
    /// Blocked until the send of this key comes.
    Waiting(MsgKey),
    /// Paired with its send.
    Paired(MessageLink),
    /// Given up on: emitted without a partner.
    Released,
}

/// A location in the merge: what is read of it at each of its events, small (40 bytes) for the
/// same reason as [`SlotState`]; its message state is in [`LocMessages`].
struct Loc {
    /// The current batch of the location's events ([`Sources::next_batch`]); the head (the
    /// next event to place) is `batch[at]`, read where it was decoded.
    batch: Vec<Head>,
    at: u32,
    slot: u32,
    thread: u32,
}

impl Loc {
    #[inline]
    fn head(&self) -> Option<&Head> {
        self.batch.get(self.at as usize)
    }
}

/// A location's state in the pairing of messages, touched at its send and receive events only.
#[derive(Default)]
struct LocMessages {
    pending: Pending,
    /// The location's last message keys ([`clc::next_matched`]).
    memo: KeyMemo,
}

/// What a merge gave each location, for a second pass that reads each location alone
/// ([`GlobalMerge::replay_location`]): how many events, and from which of them on which clock
/// shift. Taken with [`GlobalMerge::take_replay_plan`] from a merge that kept it
/// ([`GlobalMerge::keep_replay_plan`]); empty otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayPlan {
    locations: Vec<LocationLog>,
}

/// One location's part of a [`ReplayPlan`]: one entry per change of the shift its events were
/// given (at most one per event, so it grows with the events read, never beyond).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LocationLog {
    /// Events given.
    events: u64,
    /// (first event, shift): from that event on (counted from 0), the shift (before the first
    /// entry, 0).
    shifts: Vec<(u64, i64)>,
}

/// What became of the heap's top.
enum Taken {
    /// Emitted: the location's next event takes its place.
    Emitted(GlobalEvent),
    /// Goes back at a later time (its process's clock moved).
    Requeued,
    /// Waits with its process for a send.
    Parked,
}

/// A heap key: (time, process, ticks, thread) then the location; `generation` tells stale keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    time: i64,
    slot: u32,
    ticks: u64,
    thread: u32,
    loc: u32,
    generation: u32,
}

/// The merged stream of an experiment's traces; pull events with [`GlobalMerge::next_event`].
pub struct GlobalMerge<'m> {
    model: &'m Model,
    slots: Vec<Slot>,
    /// The slots' [`SlotState`]s, by slot.
    states: Vec<SlotState>,
    locs: Vec<Loc>,
    /// The locations' [`LocMessages`], by location.
    loc_messages: Vec<LocMessages>,
    sources: Sources,
    /// The processes' region maps, one per distinct map (the ranks of one program share it:
    /// one table in cache instead of one per process).
    region_maps: Vec<LocalIds>,
    locations: Vec<TraceLocation>,
    /// Every location with a head and not parked; the top is the one being decided on.
    heap: BinaryHeap<Reverse<Entry>>,
    /// Locations to push once the top's decision is made (pushing earlier would move the top).
    deferred: Vec<u32>,
    regions: RegionTable,
    user_events: Vec<String>,
    user_index: HashMap<String, u32>,
    messages: Option<Messages>,
    /// Kept for a second pass ([`GlobalMerge::keep_replay_plan`]).
    replay: Option<ReplayPlan>,
    repair: bool,
    min_latency: i64,
    origin_ns: i64,
    /// Events produced.
    events: u64,
    /// The matching's warnings first (`matching_warnings` of them), then the merge's own.
    warnings: Vec<Warning>,
    matching_warnings: usize,
    released: u64,
    finished: bool,
}

/// Process-local ids (of regions, of communicators) → global: a vector indexed by id for the
/// ids the runtime hands out (small, dense), a map for others (the ids come from files: a
/// damaged one may name any u32, which must not size a vector).
#[derive(Default, Clone)]
struct LocalIds {
    dense: Vec<u32>,
    sparse: crate::hash::FastMap<u32, u32>,
}

impl LocalIds {
    const DENSE: u32 = 1 << 20;

    #[inline]
    fn get(&self, local: u32) -> Option<u32> {
        match self.dense.get(local as usize) {
            Some(&g) if g != NONE_U32 => Some(g),
            _ if local >= Self::DENSE => self.sparse.get(&local).copied(),
            _ => None,
        }
    }

    fn set(&mut self, local: u32, g: u32) {
        if local < Self::DENSE {
            let i = local as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, NONE_U32);
            }
            self.dense[i] = g;
        } else {
            self.sparse.insert(local, g);
        }
    }
}

/// Where each location's calls still open after its last event (`last`, ns) end, by
/// [`crate::rebuild::killed_end`]: `None` but for a killed process, whose locations' open calls
/// end at its latest event (any thread's) and are cut there (truncated).
pub fn killed_ends(
    model: &Model,
    locations: &[TraceLocation],
    last: &[Option<i64>],
) -> Vec<Option<i64>> {
    let per_process: Vec<Option<i64>> = (0..model.processes.len())
        .map(|p| {
            crate::rebuild::killed_end(
                model.processes[p].end.is_some(),
                locations
                    .iter()
                    .zip(last)
                    .filter(|(l, _)| l.process == p)
                    .filter_map(|(_, t)| *t),
            )
        })
        .collect();
    locations.iter().map(|l| per_process[l.process]).collect()
}

impl<'m> GlobalMerge<'m> {
    /// The merge of every traced thread of `model` (built from `exp`, which gives the regions'
    /// and user events' definitions). Errors with [`AnalysisError::NoEventTrace`] when no
    /// process has a trace.
    pub fn new(
        model: &'m Model,
        exp: &Experiment,
        opts: MergeOptions,
    ) -> Result<GlobalMerge<'m>, AnalysisError> {
        Self::build(model, Some(exp), opts, Filter::All)
    }

    /// As [`GlobalMerge::new`], with each counted call (trace subtype 10) in the stream as an
    /// [`EventKind::Counted`], right before its function's exit.
    pub fn with_counters(
        model: &'m Model,
        exp: &Experiment,
        opts: MergeOptions,
    ) -> Result<GlobalMerge<'m>, AnalysisError> {
        Self::build(model, Some(exp), opts, Filter::AllWithCounters)
    }

    /// A merge of the send and receive events only (all it takes to check and repair the clock
    /// condition: see [`clock_condition`]).
    pub fn messages_only(
        model: &'m Model,
        opts: MergeOptions,
    ) -> Result<GlobalMerge<'m>, AnalysisError> {
        Self::build(model, None, opts, Filter::Messages)
    }

    fn build(
        model: &'m Model,
        exp: Option<&Experiment>,
        opts: MergeOptions,
        filter: Filter,
    ) -> Result<GlobalMerge<'m>, AnalysisError> {
        Self::build_with(model, exp, opts, filter, true)
    }

    /// [`GlobalMerge::build`]; `match_messages`: plan the matching of the ranks' messages (a
    /// pass over their send and receive events) when there are ranks.
    fn build_with(
        model: &'m Model,
        exp: Option<&Experiment>,
        opts: MergeOptions,
        filter: Filter,
        match_messages: bool,
    ) -> Result<GlobalMerge<'m>, AnalysisError> {
        if !model.processes.iter().any(ProcessModel::has_trace) {
            return Err(model.no_event_trace());
        }
        let ranks = model.ranks();
        let mut m = GlobalMerge {
            model,
            slots: Vec::new(),
            states: Vec::new(),
            locs: Vec::new(),
            loc_messages: Vec::new(),
            sources: Sources::new(Vec::new(), false),
            region_maps: Vec::new(),
            locations: Vec::new(),
            heap: BinaryHeap::new(),
            deferred: Vec::new(),
            regions: model.regions.clone(),
            user_events: Vec::new(),
            user_index: HashMap::new(),
            messages: None,
            replay: None,
            repair: opts.repair_clock,
            min_latency: 0,
            origin_ns: 0,
            events: 0,
            warnings: Vec::new(),
            matching_warnings: 0,
            released: 0,
            finished: false,
        };
        let mut resolver = crate::symbols::SymbolResolver::new();
        // looked up once per process: by path, and the ranks taking part in matching (a scan
        // per process made the setup quadratic in processes)
        let images: HashMap<PathBuf, &plx_format::ProcessImage> = exp
            .map(|e| e.images.iter().map(|i| (i.process_path(), i)).collect())
            .unwrap_or_default();
        let matching: std::collections::HashSet<*const ProcessModel> = ranks
            .iter()
            .map(|(_, r)| *r as *const ProcessModel)
            .collect();
        let mut sources = Vec::new();
        let mut region_maps = HashMap::new();
        // the processes' communicator maps, one per distinct map: the events' keys are found
        // with them as they are decoded ([`Head::comm`])
        let mut comm_maps: Vec<Arc<LocalIds>> = Vec::new();
        let mut comm_ids = HashMap::new();
        for (pi, p) in model.processes.iter().enumerate() {
            // a process with nothing measured (an `mpirun` launched under `plx run`, whose
            // trace holds at most its own lock events) is no location of the program
            if !p.measured {
                continue;
            }
            let Some(index) = p.trace.as_ref().filter(|t| !t.chunks.is_empty()) else {
                continue;
            };
            let files = open_trace_files(index, &mut m.warnings);
            if files.is_empty() {
                continue;
            }
            let slot = m.slots.len() as u32;
            let files = Arc::new(Files {
                path: index.path.clone(),
                files,
            });
            let comms = p.comms.iter().map(|(&l, &g)| (l, g)).collect();
            let comms = intern_map(&mut comm_maps, &mut comm_ids, comms);
            let clock = Clock::of(p, Arc::clone(&comm_maps[comms as usize]));
            let mut s = Slot {
                model_index: pi,
                path: index.path.clone(),
                own_regions: false,
                user_events: HashMap::new(),
                block: None,
                parked: Vec::new(),
            };
            let mut regions = Vec::new();
            if let Some(img) = images.get(&p.path) {
                regions = m.image_regions(img, &mut s.user_events, &mut resolver);
            }
            regions.sort_unstable();
            m.states.push(SlotState {
                delta: 0,
                generation: 0,
                regions: intern_map(&mut m.region_maps, &mut region_maps, regions),
                rank: p.rank(),
                matching: matching.contains(&(p as *const ProcessModel)),
                blocked: false,
            });
            m.slots.push(s);
            for &thread in index.words_per_thread.keys() {
                let chunks: Vec<_> = index
                    .chunks
                    .iter()
                    .filter(|c| c.header.thread == thread)
                    .copied()
                    .collect();
                m.locations.push(TraceLocation::of(model, pi, thread));
                sources.push(Source::new(
                    Cursor::new(thread, chunks, filter),
                    Arc::clone(&files),
                    clock.clone(),
                ));
                m.locs.push(Loc {
                    batch: Vec::new(),
                    at: 0,
                    slot,
                    thread,
                });
                m.loc_messages.push(LocMessages::default());
            }
        }
        if match_messages && m.states.iter().any(|s| s.matching) {
            if let Some(plan) = MessagePlan::new(model) {
                let msgs = Messages::new(plan, opts.repair_clock, opts.min_latency_ns);
                m.min_latency = msgs.report.min_latency_ns;
                let mw = msgs.warnings();
                m.warnings.splice(0..0, mw.iter().cloned());
                m.matching_warnings = mw.len();
                m.messages = Some(msgs);
            }
        }
        // the merge is one thread; with more, a second one reads and decodes ahead
        m.sources = Sources::new(sources, rayon::current_num_threads() > 1);
        let mut origin: Option<i64> = None;
        for li in 0..m.locs.len() as u32 {
            m.sources.next_batch(li, &mut m.locs[li as usize].batch);
            if let Some(h) = m.locs[li as usize].head() {
                origin = Some(origin.map_or(h.base_ns, |o: i64| o.min(h.base_ns)));
                m.push(li);
            }
        }
        m.origin_ns = origin.unwrap_or(0);
        Ok(m)
    }

    /// The model the merge reads.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The locations, by process (model order) then thread.
    pub fn locations(&self) -> &[TraceLocation] {
        &self.locations
    }

    /// Regions: the model's table, plus any region the trace names without a definition.
    pub fn regions(&self) -> &RegionTable {
        &self.regions
    }

    /// User event names by global index.
    pub fn user_events(&self) -> &[String] {
        &self.user_events
    }

    /// The earliest event's time, ns: exports count time from it.
    pub fn origin_ns(&self) -> i64 {
        self.origin_ns
    }

    /// Memory and progress counters.
    pub fn stats(&self) -> MergeStats {
        self.sources.stats(self.events)
    }

    /// The clock condition's numbers (final once the stream is exhausted); `None` when no MPI
    /// rank has a trace.
    pub fn clock_report(&self) -> Option<ClockReport> {
        self.messages.as_ref().map(|m| m.report)
    }

    /// Warnings so far: the matching's (unmatched messages...), and once the stream is
    /// exhausted, damage met in the traces.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Keeps from now on what a second pass needs to read each location alone
    /// ([`ReplayPlan`]); call it before the first event.
    pub fn keep_replay_plan(&mut self) {
        self.replay = Some(ReplayPlan {
            locations: vec![LocationLog::default(); self.locs.len()],
        });
    }

    /// What this merge gave each location so far (empty without
    /// [`GlobalMerge::keep_replay_plan`]); the merge keeps no plan after it.
    pub fn take_replay_plan(&mut self) -> ReplayPlan {
        self.replay.take().unwrap_or_default()
    }

    /// Location `li`'s events as the merge that kept `plan` gave them — the same times (its
    /// clock shifts), kinds and region names, as many as it gave — to `f`, in the location's
    /// order; call it on a fresh merge of the same experiment, for each location at most once.
    /// Messages are not linked (`message` is `None`).
    pub fn replay_location(&mut self, li: u32, plan: &ReplayPlan, mut f: impl FnMut(GlobalEvent)) {
        let Some(log) = plan.locations.get(li as usize) else {
            return;
        };
        self.messages = None;
        let si = self.locs[li as usize].slot;
        let mut shifts = log.shifts.iter().peekable();
        for k in 0..log.events {
            let Some(&head) = self.locs[li as usize].head() else {
                break;
            };
            while let Some(&(_, d)) = shifts.next_if(|&&(from, _)| from <= k) {
                self.states[si as usize].delta = d;
            }
            f(self.emit(li, si, head));
        }
        self.states[si as usize].delta = 0;
    }

    /// The regions of process image `img` as (its id, the merge's region), in its order, and
    /// its user events interned into `user_events` (its id to the merge's).
    fn image_regions(
        &mut self,
        img: &plx_format::ProcessImage,
        user_events: &mut HashMap<u64, u32>,
        resolver: &mut crate::symbols::SymbolResolver,
    ) -> Vec<(u32, u32)> {
        let mut regions = Vec::new();
        for def in img.process.regions.values() {
            // an OpenMP construct's name is its source line (as in the model)
            let info = if def.kind == RegionKind::Omp {
                crate::model::region_info(def, img, BuildOptions::default(), resolver)
            } else {
                RegionInfo {
                    name: demangle(&def.name).unwrap_or_else(|| def.name.clone()),
                    kind: def.kind,
                    file: def.file.clone(),
                    line: def.line,
                }
            };
            regions.push((def.region_id, self.regions.intern(info)));
        }
        for (id, def) in &img.process.user_events {
            let g = self.intern_user_event(&def.name);
            user_events.insert(*id as u64, g);
        }
        regions
    }

    fn intern_user_event(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.user_index.get(name) {
            return i;
        }
        let i = self.user_events.len() as u32;
        self.user_events.push(name.to_string());
        self.user_index.insert(name.to_string(), i);
        i
    }

    #[inline]
    fn global_region(&mut self, slot: u32, local: u32) -> u32 {
        let regions = self.states[slot as usize].regions;
        if let Some(g) = self.region_maps[regions as usize].get(local) {
            return g;
        }
        let g = self.regions.intern(RegionInfo {
            name: format!("region {local}"),
            kind: RegionKind::Function,
            file: String::new(),
            line: 0,
        });
        let (s, state) = (
            &mut self.slots[slot as usize],
            &mut self.states[slot as usize],
        );
        if !s.own_regions {
            // the map may be another process's too, which does not name this id
            let own = self.region_maps[state.regions as usize].clone();
            state.regions = self.region_maps.len() as u32;
            s.own_regions = true;
            self.region_maps.push(own);
        }
        self.region_maps[state.regions as usize].set(local, g);
        g
    }

    fn global_user_event(&mut self, slot: u32, id: u64) -> u32 {
        if let Some(&g) = self.slots[slot as usize].user_events.get(&id) {
            return g;
        }
        let g = self.intern_user_event(&format!("event {id}"));
        self.slots[slot as usize].user_events.insert(id, g);
        g
    }

    /// The location's next event becomes its head.
    #[inline]
    fn advance(&mut self, li: u32) {
        let loc = &mut self.locs[li as usize];
        loc.at += 1;
        if loc.at as usize >= loc.batch.len() {
            self.sources.next_batch(li, &mut loc.batch);
            loc.at = 0;
        }
    }

    fn entry(&self, li: u32) -> Option<Entry> {
        let loc = &self.locs[li as usize];
        let h = loc.head()?;
        let s = &self.states[loc.slot as usize];
        Some(Entry {
            time: h.base_ns + s.delta,
            slot: loc.slot,
            ticks: h.ticks,
            thread: loc.thread,
            loc: li,
            generation: s.generation,
        })
    }

    fn push(&mut self, li: u32) {
        if let Some(e) = self.entry(li) {
            self.heap.push(Reverse(e));
        }
    }

    /// The next event of the merged stream, `None` at the end.
    pub fn next_event(&mut self) -> Option<GlobalEvent> {
        loop {
            for li in std::mem::take(&mut self.deferred) {
                self.push(li);
            }
            let Some(&Reverse(top)) = self.heap.peek() else {
                if self.release_one() {
                    continue;
                }
                self.finish();
                return None;
            };
            if top.generation != self.states[top.slot as usize].generation {
                // the process's clock moved on since the push: its key is stale
                self.replace_top(top.loc);
                continue;
            }
            match self.take(top.loc) {
                Taken::Emitted(ev) => {
                    // the location's next event takes its place (it stays on top while earliest)
                    self.replace_top(top.loc);
                    return Some(ev);
                }
                Taken::Requeued => self.replace_top(top.loc),
                Taken::Parked => {
                    self.heap.pop();
                }
            }
        }
    }

    /// Gives the heap's top (location `li`) its current key, or removes it when it has no head.
    fn replace_top(&mut self, li: u32) {
        match self.entry(li) {
            Some(e) => {
                *self.heap.peek_mut().expect("the top is li") = Reverse(e);
            }
            None => {
                self.heap.pop();
            }
        }
    }

    /// Decides on the head of location `li` (the heap's top): emits it, parks it, or re-queues
    /// it at a later time.
    fn take(&mut self, li: u32) -> Taken {
        let loc = &self.locs[li as usize];
        let head = *loc.head().expect("a location in the heap has a head");
        let si = loc.slot;
        if self.states[si as usize].blocked {
            let slot = &mut self.slots[si as usize];
            let (t, th, _) = slot.block.expect("blocked");
            if (head.ticks, loc.thread) >= (t, th) {
                slot.parked.push(li);
                return Taken::Parked;
            }
        }
        if let Event::Recv { peer, tag, .. } = head.ev {
            if let Some(wait) = self.place_receive(li, si, head, (peer, tag)) {
                return wait;
            }
        }
        Taken::Emitted(self.emit(li, si, head))
    }

    /// Pairs a receive with its send and repairs its time: `None` when it can go now, else it
    /// waits for its send (parked) or goes back at its repaired time (re-queued).
    fn place_receive(
        &mut self,
        li: u32,
        si: u32,
        head: Head,
        (peer, tag): (u32, i32),
    ) -> Option<Taken> {
        const GO: Option<Taken> = None;
        let ck = head.comm;
        let state = &self.states[si as usize];
        let (Some(msgs), true, Some(rank)) = (self.messages.as_mut(), state.matching, state.rank)
        else {
            return GO;
        };
        let thread = self.locs[li as usize].thread;
        let loc = &mut self.loc_messages[li as usize];
        match loc.pending {
            Pending::None => {
                let key = (ck, peer, rank, tag);
                let Some(ks) =
                    clc::next_matched(&mut msgs.keys, &msgs.plan, key, false, &mut loc.memo)
                else {
                    return GO;
                };
                match ks.queue.pop_front() {
                    Some(s) => loc.pending = Pending::Paired(link(s)),
                    // a message to itself whose send is not seen yet can only come later in
                    // this very process, which waiting would hold back: never wait for it
                    None if self.repair && peer != rank => {
                        ks.waiting = Some(si);
                        loc.pending = Pending::Waiting(key);
                        let slot = &mut self.slots[si as usize];
                        slot.block = Some((head.ticks, thread, key));
                        slot.parked.push(li);
                        self.states[si as usize].blocked = true;
                        return Some(Taken::Parked);
                    }
                    None => {
                        // not repairing (or a send to itself still to come): the receive goes
                        // before its send, unlinked
                        ks.orphaned_sends += 1;
                        loc.pending = Pending::Released;
                        msgs.report.violations_after += 1;
                        if self.repair {
                            self.released += 1;
                        }
                    }
                }
            }
            Pending::Waiting(key) => {
                let ks = msgs.keys.get_mut(&key).expect("waited on");
                let s = ks.queue.pop_front().expect("unblocked by its send");
                loc.pending = Pending::Paired(link(s));
            }
            Pending::Paired(_) | Pending::Released => {}
        }
        if let (Pending::Paired(l), true) = (loc.pending, self.repair) {
            let state = &mut self.states[si as usize];
            let required = l.send_ns + self.min_latency;
            if head.base_ns + state.delta < required {
                state.delta = required - head.base_ns;
                state.generation += 1;
                msgs.report.shifted_receives += 1;
                msgs.report.max_shift_ns = msgs.report.max_shift_ns.max(state.delta);
                // later events of other processes may now come first
                return Some(Taken::Requeued);
            }
        }
        GO
    }

    /// Emits the head of `li`, links its message, advances the location.
    fn emit(&mut self, li: u32, si: u32, head: Head) -> GlobalEvent {
        let delta = self.states[si as usize].delta;
        let time_ns = head.base_ns + delta;
        if let Some(plan) = &mut self.replay {
            let log = &mut plan.locations[li as usize];
            if log.shifts.last().map_or(0, |&(_, d)| d) != delta {
                log.shifts.push((log.events, delta));
            }
            log.events += 1;
        }
        let kind = match head.ev {
            Event::Send {
                peer, tag, bytes, ..
            } => EventKind::Send {
                peer,
                tag,
                bytes,
                comm: comm_of_key(head.comm),
                message: self.queue_send(li, si, time_ns, (peer, tag, head.comm)),
            },
            Event::Recv {
                peer, tag, bytes, ..
            } => {
                let loc = &mut self.loc_messages[li as usize];
                let message = match std::mem::replace(&mut loc.pending, Pending::None) {
                    Pending::Paired(l) => Some(l),
                    _ => None,
                };
                if let Some(msgs) = self.messages.as_mut() {
                    if message.is_some_and(|l| time_ns < l.send_ns) {
                        msgs.report.violations_after += 1;
                    }
                }
                EventKind::Recv {
                    peer,
                    tag,
                    bytes,
                    comm: comm_of_key(head.comm),
                    message,
                }
            }
            _ => kind_of(&head, &mut SlotNames { merge: self, si }),
        };
        self.events += 1;
        self.advance(li);
        GlobalEvent {
            time_ns,
            location: li,
            kind,
        }
    }

    /// Queues a matched send for its receive (and wakes the process waiting for it); its id.
    fn queue_send(
        &mut self,
        li: u32,
        si: u32,
        time_ns: i64,
        (peer, tag, ck): (u32, i32, u64),
    ) -> Option<u64> {
        let state = &self.states[si as usize];
        let (Some(msgs), true, Some(rank)) = (self.messages.as_mut(), state.matching, state.rank)
        else {
            return None;
        };
        let key = (ck, rank, peer, tag);
        let Messages {
            keys,
            plan,
            next_id,
            ..
        } = msgs;
        let ks = clc::next_matched(
            keys,
            plan,
            key,
            true,
            &mut self.loc_messages[li as usize].memo,
        )?;
        if ks.orphaned_sends > 0 {
            // its receive already went by without it
            ks.orphaned_sends -= 1;
            return None;
        }
        let id = *next_id;
        *next_id += 1;
        ks.queue.push_back(QueuedSend {
            id,
            time_ns,
            location: li,
        });
        if let Some(w) = ks.waiting.take() {
            self.unblock(w);
        }
        Some(id)
    }

    fn unblock(&mut self, si: u32) {
        let parked = {
            let s = &mut self.slots[si as usize];
            s.block = None;
            self.states[si as usize].blocked = false;
            std::mem::take(&mut s.parked)
        };
        self.deferred.extend(parked);
    }

    /// Nothing can go on but processes wait for sends: the traces contradict themselves (a
    /// receive before its send within one process, or a cycle). Lets the earliest waiting
    /// receive go without its send. False when nothing waits.
    fn release_one(&mut self) -> bool {
        let mut best: Option<(i64, u32)> = None;
        for (si, s) in self.slots.iter().enumerate() {
            let Some((_, _, key)) = s.block else {
                continue;
            };
            let li = s
                .parked
                .iter()
                .copied()
                .find(|&li| self.loc_messages[li as usize].pending == Pending::Waiting(key));
            let Some(li) = li else { continue };
            let head = self.locs[li as usize].head();
            let t = head.map_or(i64::MAX, |h| h.base_ns) + self.states[si].delta;
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, si as u32));
            }
        }
        let Some((_, si)) = best else {
            return false;
        };
        let (_, _, key) = self.slots[si as usize].block.expect("chosen as blocked");
        for &li in &self.slots[si as usize].parked {
            let loc = &mut self.loc_messages[li as usize];
            if loc.pending == Pending::Waiting(key) {
                loc.pending = Pending::Released;
            }
        }
        if let Some(msgs) = self.messages.as_mut() {
            let ks = msgs.keys.get_mut(&key).expect("waited on");
            ks.waiting = None;
            ks.orphaned_sends += 1;
            msgs.report.violations_after += 1;
        }
        self.released += 1;
        self.unblock(si);
        true
    }

    /// End of stream: damage met in the traces becomes warnings.
    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        // events this reader cannot decode: one warning per process (every thread has them)
        let mut skipped: Vec<(u64, u64, Vec<u32>)> = vec![(0, 0, Vec::new()); self.slots.len()];
        for (li, loc) in self.locs.iter().enumerate() {
            let slot = &self.slots[loc.slot as usize];
            let d = &mut self.sources.take_damage(li as u32);
            self.warnings.append(&mut d.warnings);
            if d.unknown > 0 {
                let k = &mut skipped[loc.slot as usize];
                k.0 += d.unknown;
                k.1 |= d.unknown_subtypes;
                k.2.push(loc.thread);
            }
            if d.out_of_order > 0 {
                self.warnings.push(Warning::file(
                    &slot.path,
                    WarningKind::BadEvents {
                        count: d.out_of_order,
                    },
                    format!(
                        "thread {}: {} events earlier than the event before them: given that event's time",
                        loc.thread, d.out_of_order
                    ),
                ));
            }
        }
        for (slot, (count, subtypes, threads)) in self.slots.iter().zip(skipped) {
            if count == 0 {
                continue;
            }
            let kinds: Vec<String> = (0..64)
                .filter(|b| subtypes & (1u64 << b) != 0)
                .map(|b| {
                    if b == 63 {
                        "kind 3".to_string()
                    } else {
                        b.to_string()
                    }
                })
                .collect();
            let threads: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
            self.warnings.push(Warning::file(
                &slot.path,
                WarningKind::BadEvents { count },
                format!(
                    "{count} events of kinds this reader does not decode (extended subtypes {}) left out (threads {})",
                    kinds.join(", "),
                    threads.join(", ")
                ),
            ));
        }
        if self.released > 0 {
            self.warnings.push(Warning::file(
                &self.model.dir,
                WarningKind::Clock,
                format!(
                    "{} receive(s) could not be placed after their send (the traces contradict each other): left before it",
                    self.released
                ),
            ));
        }
        if let Some(msgs) = &self.messages {
            let left: usize = msgs.keys.values().map(|k| k.queue.len()).sum();
            if left > 0 {
                self.warnings.push(Warning::file(
                    &self.model.dir,
                    WarningKind::UnmatchedMessages { count: left as u64 },
                    format!("{left} matched send(s) whose receive never came in the merged stream"),
                ));
            }
        }
    }
}

/// The index of the map of `pairs` (local id, global id; sorted) in `maps`, added if new.
/// Where [`kind_of`] turns a process's local region and user event ids into global ones.
pub(crate) trait Names {
    /// The global region of local id `local`.
    fn region(&mut self, local: u32) -> u32;
    /// The global user event of local id `id`.
    fn user_event(&mut self, id: u64) -> u32;
    /// The process's clock's ns per tick (asked at a wait's end only).
    fn ns_per_tick(&self) -> f64;
}

/// A merge's names of slot `si` (an id it has not met is interned).
struct SlotNames<'a, 'm> {
    merge: &'a mut GlobalMerge<'m>,
    si: u32,
}

impl Names for SlotNames<'_, '_> {
    #[inline]
    fn region(&mut self, local: u32) -> u32 {
        self.merge.global_region(self.si, local)
    }

    fn user_event(&mut self, id: u64) -> u32 {
        self.merge.global_user_event(self.si, id)
    }

    fn ns_per_tick(&self) -> f64 {
        let slot = &self.merge.slots[self.si as usize];
        self.merge.model.processes[slot.model_index]
            .clock_map
            .ns_per_tick()
    }
}

/// What a decoded event is in the merged stream, its messages unlinked (`message: None`):
/// the one translation of [`GlobalMerge`]'s events and of [`Alone`]'s.
#[inline]
pub(crate) fn kind_of(head: &Head, names: &mut impl Names) -> EventKind {
    match head.ev {
        Event::Enter { region, .. } => EventKind::Enter {
            region: names.region(region),
        },
        Event::Exit { region, .. } => EventKind::Exit {
            region: names.region(region),
        },
        Event::OmpTask {
            thread_num,
            team_size,
            level,
            region,
            ..
        } => EventKind::OmpTeam {
            region: names.region(region),
            level,
            team_size,
            thread_num,
        },
        Event::User {
            event_id, value, ..
        } => EventKind::User {
            event: names.user_event(event_id),
            value,
        },
        Event::Send {
            peer, tag, bytes, ..
        } => EventKind::Send {
            peer,
            tag,
            bytes,
            comm: comm_of_key(head.comm),
            message: None,
        },
        Event::Recv {
            peer, tag, bytes, ..
        } => EventKind::Recv {
            peer,
            tag,
            bytes,
            comm: comm_of_key(head.comm),
            message: None,
        },
        Event::SendDone {
            thread, mode, send, ..
        } => EventKind::SendDone { thread, mode, send },
        Event::CollDone {
            thread, collective, ..
        } => EventKind::CollDone { thread, collective },
        Event::RecvPosted { posted, ticks } => EventKind::RecvPosted {
            before_ns: round_ns(ticks.saturating_sub(posted) as f64 * names.ns_per_tick()).max(0)
                as u64,
        },
        Event::Collective {
            root,
            bytes_sent,
            bytes_recv,
            ..
        } => EventKind::Collective {
            comm: comm_of_key(head.comm),
            root: (root != NONE_U32).then_some(root),
            bytes_sent,
            bytes_recv,
        },
        Event::Acquire {
            object,
            kind,
            holder,
            wait_ticks,
            shared,
            ..
        } => EventKind::Acquire {
            object,
            kind,
            wait_ns: round_ns(wait_ticks as f64 * names.ns_per_tick()).max(0) as u64,
            holder,
            shared: shared != 0,
        },
        Event::Release { object, kind, .. } => EventKind::Release { object, kind },
        Event::StreamSend {
            stream, end, bytes, ..
        } => EventKind::StreamSend { stream, end, bytes },
        Event::StreamRecv {
            stream, end, bytes, ..
        } => EventKind::StreamRecv { stream, end, bytes },
        Event::CountedCall {
            set,
            region,
            value0,
            value1,
            value2,
            value3,
            ..
        } => EventKind::Counted {
            set,
            region: names.region(region),
            values: [value0, value1, value2, value3],
        },
        Event::TimeReset { .. }
        | Event::Unknown { .. }
        | Event::Cpu { .. }
        | Event::OmpContext { .. }
        | Event::CounterEpoch { .. } => {
            unreachable!(
                "cursors drop time resets, unknown, CPU, OpenMP context and counter epoch events"
            )
        }
    }
}

fn intern_map<M: From<LocalIds>>(
    maps: &mut Vec<M>,
    known: &mut HashMap<Vec<(u32, u32)>, u32>,
    pairs: Vec<(u32, u32)>,
) -> u32 {
    *known.entry(pairs).or_insert_with_key(|pairs| {
        let mut ids = LocalIds::default();
        for &(l, g) in pairs {
            ids.set(l, g);
        }
        maps.push(ids.into());
        maps.len() as u32 - 1
    })
}

/// Nanoseconds rounded to the nearest whole one (halves up), without a libm call on the hot path.
#[inline]
pub(crate) fn round_ns(x: f64) -> i64 {
    let r = x + 0.5;
    let t = r as i64;
    // `as` truncates toward zero: step down for negative non-integers (floor)
    if (t as f64) > r {
        t - 1
    } else {
        t
    }
}

fn link(s: QueuedSend) -> MessageLink {
    MessageLink {
        id: s.id,
        send_ns: s.time_ns,
        sender: s.location,
    }
}

/// What [`clock_condition`] finds.
#[derive(Debug, Clone)]
pub struct ClockCondition {
    /// The numbers.
    pub report: ClockReport,
    /// The matching of the traces' messages (as [`crate::match_messages`] gives it).
    pub matching: MatchSummary,
    /// Damage met by the merge, and receives that could not be placed after their sends
    /// (the matching's warnings are in `matching`).
    pub warnings: Vec<Warning>,
}

/// The clock condition of an experiment's MPI traces: pairs the messages, counts the receives
/// before their sends, repairs them, and counts what is left — a merge of the message events
/// only. `None` when no MPI rank has a trace.
pub fn clock_condition(model: &Model, opts: MergeOptions) -> Option<ClockCondition> {
    if !model.ranks().iter().any(|(_, p)| p.has_trace()) {
        return None;
    }
    let mut m = GlobalMerge::messages_only(model, opts).ok()?;
    while m.next_event().is_some() {}
    let msgs = m.messages.take()?;
    Some(ClockCondition {
        report: msgs.report,
        matching: msgs.plan.summary,
        warnings: m.warnings.split_off(m.matching_warnings),
    })
}

/// The files of trace `index` (its own, then those recovered from live files) that open, up
/// to the first that does not (a warning).
fn open_trace_files(
    index: &plx_format::TraceIndex,
    warnings: &mut Vec<Warning>,
) -> Vec<std::fs::File> {
    let mut files = Vec::new();
    let paths = std::iter::once(&index.path).chain(index.recovered.iter().map(|r| &r.path));
    for path in paths {
        match plx_format::open_regular(path) {
            Ok(input) => files.push(input.file),
            Err(e) => {
                warnings.push(Warning::file(
                    path,
                    WarningKind::MissingFile,
                    format!("cannot read: {e}"),
                ));
                break;
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the merge reads of every location and process per event stays small: at 4,096
    /// ranks, every one of them is touched within 4,096 events.
    #[test]
    fn per_event_state_is_small() {
        assert_eq!(std::mem::size_of::<Loc>(), 40);
        assert_eq!(std::mem::size_of::<SlotState>(), 32);
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }
}
