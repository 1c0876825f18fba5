//! Wait states and their root causes (Scalasca's patterns, Böhme et al.'s delay analysis), found by one replay of the merged trace.
//!
//! [`WaitAnalysis::compute`] feeds the merged stream to a [`Replay`]: every location's call
//! stack, the matched messages in flight, the collective instances (the k-th collective on a
//! communicator at each member, numbered as the critical path numbers them) and the
//! synchronization objects' releases. A wait is found when the event that ends it comes:
//!
//! - **late_sender**: a receive (or the Wait/Test that completes one) entered before its send's
//!   routine: `send_enter - recv_enter`, at most the receive's own duration;
//! - **late_receiver**: a blocking send (MPI_Send, MPI_Ssend, MPI_Rsend), or the Wait/Test
//!   call completing a nonblocking send that is not buffered (its `send_done` event), that
//!   returned only after a blocking receive was posted: `recv_enter - enter`;
//! - **late_sender_wrong_order**: a late sender while a message sent to the receiving rank
//!   before the awaited one was pending; **late_receiver_wrong_order**: a late receiver whose
//!   receiver, while the send waited, received a message sent after it. A wait is counted in
//!   one of the two variants only;
//! - **wait_at_barrier**, **wait_at_nxn**: every member but the last to enter waits from its
//!   entry to the last entry; **late_broadcast** (Bcast, Scatter): a member that entered
//!   before the root; **early_reduce** (Reduce, Gather): the root, from its entry to the latest
//!   other member's (Scalasca's definition);
//! - threads, from the acquire events' recorded wait: **lock_contention** (mutex, rwlock,
//!   spinlock; the cause is the holder that released it), **condition_wait** (the signaller),
//!   **join_wait** (the joined thread), **semaphore_wait** (the poster), **thread_barrier** and
//!   **omp_barrier** (from the own arrival to the last one), **omp_critical**, **omp_lock**,
//!   **omp_ordered**, **omp_taskwait**; **monitor_wait** (a Java `synchronized` entered while
//!   another thread held it: the cause is the owner the runtime named when the wait began, at
//!   its call path when the waiter got in) and `Object.wait` as **condition_wait**;
//! - **stream_wait**: a read on a traced stream socket entered before the write holding its
//!   last byte (a client waiting for its server, across the applications of a session), and a
//!   poll, select or epoll wait its thread's next read follows, when that write began while it
//!   waited;
//! - **late_connect**: a server's accept of a traced connection entered before its client's
//!   connect (the two ends' stream events of 0 bytes): `connect_enter - accept_enter`;
//! - with no partner: **sleep** (sleep, usleep, nanosleep, clock_nanosleep, Java's
//!   Thread.sleep) and **io_wait** (a poll, select or epoll wait, an accept or a read that moved
//!   no traced bytes, and an accept or read on a traced stream whose other end was not
//!   measured): the call's whole duration, with no cause (no other location made it wait).
//!
//! With causes, each location keeps an [`Account`] (time by call path, time waited, and its
//! waits' root causes), and at the exit of every synchronising routine the account at that
//! moment, per partner rank and for the last collective. A wait's time is divided between the
//! late location's excess over the waiting one since they last synchronised ([`delay::divide`]).

pub mod delay;
pub mod parallel;
pub mod replay;
mod sampled;

use plx_format::{Experiment, Warning, NONE_U32};

use crate::hash::FastMap;
use crate::merge::{GlobalMerge, MergeOptions, TraceLocation};
use crate::model::Model;
use crate::regions::RegionTable;
use crate::selection::Window;
use crate::AnalysisError;

pub use delay::{Account, CauseKind};
pub use replay::{CauseSpan, FoundWait, Replay, Setup, Spans};

/// A kind of wait state, in the order of the metric tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// A receive blocked before its send began.
    LateSender,
    /// A late sender while a message sent to the same rank earlier than the awaited one was
    /// pending (received in the wrong order).
    LateSenderWrongOrder,
    /// A send blocked until its receive was posted (a blocking send, or the Wait/Test
    /// completing a nonblocking one).
    LateReceiver,
    /// A late receiver whose receiver, while the send waited, received a message sent after it.
    LateReceiverWrongOrder,
    /// MPI_Barrier: waiting for the last member.
    WaitAtBarrier,
    /// An N-to-N collective: waiting for the last member.
    WaitAtNxn,
    /// A 1-to-N collective: a member waiting for the root.
    LateBroadcast,
    /// An N-to-1 collective: the root waiting for the first member.
    EarlyReduce,
    /// A mutex, rwlock or spinlock held by another thread.
    LockContention,
    /// A condition variable until signalled.
    ConditionWait,
    /// pthread_join until the thread ended.
    JoinWait,
    /// A semaphore until posted.
    SemaphoreWait,
    /// A pthread barrier: waiting for the last thread.
    ThreadBarrier,
    /// A Java monitor (`synchronized`) held by another thread.
    MonitorWait,
    /// An OpenMP barrier: waiting for the last thread.
    OmpBarrier,
    /// An OpenMP critical section (or atomic under a lock) held by another thread.
    OmpCritical,
    /// An OpenMP lock held by another thread.
    OmpLock,
    /// An OpenMP ordered section.
    OmpOrdered,
    /// An OpenMP taskwait.
    OmpTaskwait,
    /// A read on a traced stream socket until the write of its bytes began (a client waiting
    /// for its server, across applications too).
    StreamWait,
    /// A server's accept of a traced connection until its client's connect began.
    LateConnect,
    /// A sleep (sleep, usleep, nanosleep, clock_nanosleep, Thread.sleep): waiting with no partner.
    Sleep,
    /// A poll, select or epoll wait, or an accept or read no measured location answered:
    /// waiting on descriptors with no partner.
    IoWait,
}

impl Pattern {
    /// Every pattern, in metric-tree order.
    /// (A parallel analysis numbers them by their place here: new ones go last.)
    pub const ALL: [Pattern; 23] = [
        Pattern::LateSender,
        Pattern::LateSenderWrongOrder,
        Pattern::LateReceiver,
        Pattern::LateReceiverWrongOrder,
        Pattern::WaitAtBarrier,
        Pattern::WaitAtNxn,
        Pattern::LateBroadcast,
        Pattern::EarlyReduce,
        Pattern::LockContention,
        Pattern::ConditionWait,
        Pattern::JoinWait,
        Pattern::SemaphoreWait,
        Pattern::ThreadBarrier,
        Pattern::MonitorWait,
        Pattern::OmpBarrier,
        Pattern::OmpCritical,
        Pattern::OmpLock,
        Pattern::OmpOrdered,
        Pattern::OmpTaskwait,
        Pattern::StreamWait,
        Pattern::LateConnect,
        Pattern::Sleep,
        Pattern::IoWait,
    ];

    /// The name in tables (`late_sender`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Pattern::LateSender => "late_sender",
            Pattern::LateSenderWrongOrder => "late_sender_wrong_order",
            Pattern::LateReceiver => "late_receiver",
            Pattern::LateReceiverWrongOrder => "late_receiver_wrong_order",
            Pattern::WaitAtBarrier => "wait_at_barrier",
            Pattern::WaitAtNxn => "wait_at_nxn",
            Pattern::LateBroadcast => "late_broadcast",
            Pattern::EarlyReduce => "early_reduce",
            Pattern::LockContention => "lock_contention",
            Pattern::ConditionWait => "condition_wait",
            Pattern::JoinWait => "join_wait",
            Pattern::SemaphoreWait => "semaphore_wait",
            Pattern::ThreadBarrier => "thread_barrier",
            Pattern::MonitorWait => "monitor_wait",
            Pattern::OmpBarrier => "omp_barrier",
            Pattern::OmpCritical => "omp_critical",
            Pattern::OmpLock => "omp_lock",
            Pattern::OmpOrdered => "omp_ordered",
            Pattern::OmpTaskwait => "omp_taskwait",
            Pattern::StreamWait => "stream_wait",
            Pattern::LateConnect => "late_connect",
            Pattern::Sleep => "sleep",
            Pattern::IoWait => "io_wait",
        }
    }

    /// Its place in the metric tree under `time`: (group, subgroup).
    pub fn group(self) -> (&'static str, &'static str) {
        match self {
            Pattern::LateSender
            | Pattern::LateSenderWrongOrder
            | Pattern::LateReceiver
            | Pattern::LateReceiverWrongOrder => ("mpi", "point-to-point"),
            Pattern::WaitAtBarrier
            | Pattern::WaitAtNxn
            | Pattern::LateBroadcast
            | Pattern::EarlyReduce => ("mpi", "collective"),
            Pattern::LockContention
            | Pattern::ConditionWait
            | Pattern::JoinWait
            | Pattern::SemaphoreWait
            | Pattern::ThreadBarrier => ("threads", "pthread"),
            Pattern::StreamWait | Pattern::LateConnect => ("sockets", "streams"),
            Pattern::MonitorWait => ("threads", "java"),
            Pattern::Sleep | Pattern::IoWait => ("system", "no partner"),
            _ => ("threads", "openmp"),
        }
    }

    /// Whether another location can have caused its waits: not a sleep's or an I/O wait's,
    /// which have no partner (their `--causes` say `none`).
    pub fn has_cause(self) -> bool {
        !matches!(self, Pattern::Sleep | Pattern::IoWait)
    }
}

/// Call paths, interned: each a (parent, region) pair; [`NONE_U32`] is the root.
#[derive(Debug, Clone, Default)]
pub struct Callpaths {
    nodes: Vec<(u32, u32)>,
    index: FastMap<(u32, u32), u32>,
}

impl Callpaths {
    /// The call path of `region` called in `parent`.
    pub fn child(&mut self, parent: u32, region: u32) -> u32 {
        let n = self.nodes.len() as u32;
        *self.index.entry((parent, region)).or_insert_with(|| {
            self.nodes.push((parent, region));
            n
        })
    }

    /// Call paths interned so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Call path `cp`'s (parent, region).
    pub fn node(&self, cp: u32) -> (u32, u32) {
        self.nodes[cp as usize]
    }

    /// `main => work => MPI_Recv` (`(thread)` for the root: outside every region).
    pub fn name(&self, cp: u32, regions: &RegionTable) -> String {
        let names = self.names(cp, regions);
        if names.is_empty() {
            return "(thread)".to_string();
        }
        names.join(" => ")
    }

    /// The region names of call path `cp`, outermost first (none for the root).
    pub fn names<'r>(&self, cp: u32, regions: &'r RegionTable) -> Vec<&'r str> {
        let mut names = Vec::new();
        let mut c = cp;
        while c != NONE_U32 {
            let (p, r) = self.nodes[c as usize];
            names.push(regions.name(r));
            c = p;
        }
        names.reverse();
        names
    }
}

/// One row of waits: a pattern at a location and call path.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRow {
    /// The pattern.
    pub pattern: Pattern,
    /// The waiting location (index into [`WaitAnalysis::locations`]).
    pub location: u32,
    /// Where it waited (index into [`WaitAnalysis::callpaths`]).
    pub callpath: u32,
    /// Time waited, ns.
    pub wait_ns: i64,
    /// Waits.
    pub count: u64,
}

/// One row of causes: the part of a pattern's waits at a location that a delay caused.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseRow {
    /// The pattern of the waits.
    pub pattern: Pattern,
    /// The waiting location.
    pub waiting: u32,
    /// The location whose delay caused them.
    pub cause: u32,
    /// The call path of the delay (for a thread wait other than a join: where the holder,
    /// signaller or last arrival was when it let the waiter go).
    pub cause_callpath: u32,
    /// Direct or propagated.
    pub kind: CauseKind,
    /// Wait time caused, ns.
    pub delay_ns: f64,
}

/// One row of the causes table ([`WaitAnalysis::cause_table`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CauseEntry {
    /// The pattern of the waits.
    pub pattern: Pattern,
    /// The waiting location.
    pub waiting: u32,
    /// The location whose delay caused them and the delay's call path; `None` for waits
    /// with no partner.
    pub cause: Option<(u32, u32)>,
    /// `direct`, `propagated`, or `none` (no partner).
    pub kind: &'static str,
    /// Wait time caused, ns.
    pub delay_ns: f64,
}

impl From<&CauseRow> for CauseEntry {
    fn from(c: &CauseRow) -> CauseEntry {
        CauseEntry {
            pattern: c.pattern,
            waiting: c.waiting,
            cause: Some((c.cause, c.cause_callpath)),
            kind: c.kind.as_str(),
            delay_ns: c.delay_ns,
        }
    }
}

/// The waits of an experiment (and with causes, their causes).
#[derive(Debug, Clone)]
pub struct WaitAnalysis {
    /// The merge's locations.
    pub locations: Vec<TraceLocation>,
    /// The regions named by call paths.
    pub regions: RegionTable,
    /// The call paths.
    pub callpaths: Callpaths,
    /// Waits, by pattern, location and call path.
    pub rows: Vec<WaitRow>,
    /// Causes (empty unless asked for), by pattern, waiting location, cause location, call
    /// path and kind.
    pub causes: Vec<CauseRow>,
    /// Events replayed.
    pub events: u64,
    /// The merge's warnings.
    pub warnings: Vec<Warning>,
    /// Each wait, in the order found ([`WaitAnalysis::compute_each`]; empty otherwise).
    pub found: Vec<FoundWait>,
    /// The intervals of the waits and of the direct causes' excess
    /// ([`WaitAnalysis::compute_spans`]; empty otherwise).
    pub spans: Spans,
}

/// What a replay keeps beside the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Rows,
    /// Each wait too.
    Each,
    /// The causes' intervals too.
    Spans,
}

impl WaitAnalysis {
    /// Replays `model`'s merged trace (read from `exp`) up to the window's end; reports the
    /// waits that end inside `window` at locations of application `app` (`None`: all), and
    /// with `causes`, their causes.
    pub fn compute(
        model: &Model,
        exp: &Experiment,
        window: Window,
        app: Option<u32>,
        causes: bool,
        opts: MergeOptions,
    ) -> Result<WaitAnalysis, AnalysisError> {
        Self::replay(model, exp, window, app, causes, opts, Keep::Rows)
    }

    /// [`WaitAnalysis::compute`] with causes, keeping the intervals of the waits and of the
    /// late locations whose excess the direct causes are ([`WaitAnalysis::spans`]), to say what
    /// ran there ([`WaitAnalysis::wait_samples`], [`WaitAnalysis::cause_samples`]).
    pub fn compute_spans(
        model: &Model,
        exp: &Experiment,
        window: Window,
        app: Option<u32>,
        opts: MergeOptions,
    ) -> Result<WaitAnalysis, AnalysisError> {
        Self::replay(model, exp, window, app, true, opts, Keep::Spans)
    }

    /// [`WaitAnalysis::compute`] of the whole run with causes, keeping each wait
    /// ([`WaitAnalysis::found`]) as well as the rows (the viewer's waits on the timeline).
    pub fn compute_each(
        model: &Model,
        exp: &Experiment,
        opts: MergeOptions,
    ) -> Result<WaitAnalysis, AnalysisError> {
        Self::replay(model, exp, Window::ALL, None, true, opts, Keep::Each)
    }

    fn replay(
        model: &Model,
        exp: &Experiment,
        window: Window,
        app: Option<u32>,
        causes: bool,
        opts: MergeOptions,
        keep: Keep,
    ) -> Result<WaitAnalysis, AnalysisError> {
        let merge = GlobalMerge::new(model, exp, opts)?;
        let locations = merge.locations().to_vec();
        let setup = Setup {
            loc_rank: locations.iter().map(|l| l.rank).collect(),
            loc_process: locations.iter().map(|l| l.process as u32).collect(),
            loc_thread: locations.iter().map(|l| l.thread).collect(),
            loc_counted: locations
                .iter()
                .map(|l| app.is_none_or(|a| model.processes[l.process].app == a))
                .collect(),
            comm_ranks: comm_members(model),
            window,
            causes,
        };
        let mut replay = Replay::new(setup);
        match keep {
            Keep::Rows => {}
            Keep::Each => replay.found = Some(Vec::new()),
            Keep::Spans => replay.spans = Some(Spans::default()),
        }
        let mut events = 0u64;
        let (merge, regions) = merge.feed(Some(window.end_ns), |feed| {
            while let Some(ev) = feed.next_event() {
                events += 1;
                if ev.time_ns >= window.end_ns {
                    break;
                }
                replay.event(feed.regions(), ev.location, ev.time_ns, ev.kind);
            }
            replay.finish();
            feed.regions().clone()
        });
        Ok(WaitAnalysis {
            locations,
            regions,
            rows: replay
                .waits
                .iter()
                .map(
                    |(&(pattern, location, callpath), &(wait_ns, count))| WaitRow {
                        pattern,
                        location,
                        callpath,
                        wait_ns,
                        count,
                    },
                )
                .collect(),
            causes: replay
                .causes
                .iter()
                .map(
                    |(&(pattern, waiting, cause, cause_callpath, kind), &delay_ns)| CauseRow {
                        pattern,
                        waiting,
                        cause,
                        cause_callpath,
                        kind,
                        delay_ns,
                    },
                )
                .collect(),
            found: replay.found.unwrap_or_default(),
            spans: replay.spans.unwrap_or_default(),
            callpaths: replay.callpaths,
            events,
            warnings: merge.warnings().to_vec(),
        })
    }

    /// A call path's name.
    pub fn callpath_name(&self, cp: u32) -> String {
        self.callpaths.name(cp, &self.regions)
    }

    /// The causes as `plx waits --causes` gives them: the cause rows, then each row of waits
    /// with no partner (a sleep, an I/O wait), which no location caused: kind `none`, no cause
    /// location or call path, its wait time as the delay.
    pub fn cause_table(&self) -> impl Iterator<Item = CauseEntry> + '_ {
        let caused = self.causes.iter().map(CauseEntry::from);
        let alone = self
            .rows
            .iter()
            .filter(|r| !r.pattern.has_cause())
            .map(|r| CauseEntry {
                pattern: r.pattern,
                waiting: r.location,
                cause: None,
                kind: "none",
                delay_ns: r.wait_ns as f64,
            });
        caused.chain(alone)
    }

    /// Total waiting of a pattern, ns.
    pub fn total_ns(&self, pattern: Pattern) -> i64 {
        self.rows
            .iter()
            .filter(|r| r.pattern == pattern)
            .map(|r| r.wait_ns)
            .sum()
    }
}

/// Each communicator's world ranks ([`Setup::comm_ranks`]); an intercommunicator's
/// collectives are not analysed: no members.
fn comm_members(model: &Model) -> Vec<Vec<u32>> {
    model
        .comms
        .all()
        .iter()
        .map(|c| match c.remote {
            Some(_) => Vec::new(),
            None => c.ranks.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
