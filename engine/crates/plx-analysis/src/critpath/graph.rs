//! The program activity graph built from the merged stream: nodes at each thread's communication points, thread arcs between consecutive nodes, remote arcs for messages, stream bytes, lock handoffs, joins, thread creation and collectives.
//!
//! Invariants: a thread's nodes are created in its event order and their times never go back
//! (a node is clamped to the thread's previous node); a node has at most one thread
//! predecessor (`prev`) and one remote predecessor (`remote`), except a collective's virtual
//! node, whose predecessors are the members' arrivals ([`Graph::members`]).

use std::collections::HashMap;

use plx_format::{Experiment, RegionKind, SyncKind, Warning, NONE_U32};

use crate::merge::{EventKind, GlobalMerge, MergeOptions, MessageLink, ReplayPlan, TraceLocation};
use crate::model::Model;
use crate::regions::RegionTable;
use crate::selection::Window;
use crate::AnalysisError;

/// No node.
pub const NONE: u32 = NONE_U32;

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A thread's first node (its start, or the window's start).
    Start,
    /// A thread's last node (its last event, or the window's end).
    End,
    /// The creating thread at the moment a thread it created started.
    Fork,
    /// An MPI message left.
    Send,
    /// The entry of the routine in which a receive, or the moment at which a lock wait, began.
    WaitStart,
    /// An MPI receive completed.
    Recv,
    /// Entry of a collective routine.
    Arrive,
    /// Exit of a collective routine.
    Depart,
    /// A collective instance's last arrival (no thread: its predecessors are all arrivals).
    Collective,
    /// Bytes written to a stream, or a `connect` (at its entry).
    StreamSend,
    /// Bytes read from a stream, or an `accept` released by a `connect`.
    StreamRecv,
    /// A lock taken or a wait ended after blocking.
    Acquire,
    /// A lock released, a semaphore posted, a condition signalled, a thread ended.
    Release,
    /// The entry of the call that posted a receive (MPI_Irecv, MPI_Start).
    Post,
    /// A send completed: a nonblocking one's `send_done` (in the Wait/Test call), other than a
    /// buffered one, or the return of a blocking MPI_Send, MPI_Ssend or MPI_Rsend. Its remote
    /// arc, where the call waited for the receive's post, comes from that post (a rendezvous).
    SendDone,
    /// The return of a blocking socket call (`accept`, a receive that got nothing) whose cause
    /// the graph does not show: the thread arc into it is waiting, not CPU (its label: the
    /// routine).
    Unblocked,
}

/// The kind of a node's remote arc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcKind {
    /// No remote predecessor.
    None,
    /// An MPI message from its send.
    Msg,
    /// Stream bytes from the write that held them.
    Stream,
    /// A lock handoff, a semaphore, a condition or a join (label: the object).
    Sync,
    /// Thread creation.
    Fork,
    /// From a collective's virtual node (label: routine and communicator).
    Collective,
    /// A send's completion (a nonblocking send's Wait/Test, a blocking send's return) from its
    /// receive's post.
    Rendezvous,
}

/// One node of the program activity graph.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// Global time, ns.
    pub time_ns: i64,
    /// The thread (index into [`Graph::locations`]); [`NONE`] for a collective's virtual node.
    pub loc: u32,
    /// The thread's previous node, [`NONE`] for its first.
    pub prev: u32,
    /// The remote predecessor ([`NONE`] if none); for a virtual node, its index into
    /// [`Graph::members`].
    pub remote: u32,
    /// What it is.
    pub kind: NodeKind,
    /// What its remote arc is.
    pub arc: ArcKind,
    /// For Sync and Collective arcs (and virtual nodes), index into [`Graph::labels`].
    pub label: u32,
}

/// The program activity graph of an experiment (all applications: the modes choose the part
/// they use).
#[derive(Debug, Clone)]
pub struct Graph {
    /// Nodes; each thread's in time order.
    pub nodes: Vec<Node>,
    /// Predecessors (arrivals) of each virtual collective node.
    pub members: Vec<Vec<u32>>,
    /// Names of synchronization objects and collectives.
    pub labels: Vec<String>,
    /// The threads (as the merge numbers them).
    pub locations: Vec<TraceLocation>,
    /// Application of each location ([`crate::ProcessModel::app`]).
    pub loc_app: Vec<u32>,
    /// The part of the trace the graph covers.
    pub window: Window,
    /// Events read from the merged stream.
    pub events: u64,
    /// The trace's first event, ns (the origin of times shown).
    pub origin_ns: i64,
    /// The first and last event inside the window, ns (the elapsed time the path is part of;
    /// 0 and 0 without events).
    pub span_ns: (i64, i64),
    /// The merge's warnings.
    pub warnings: Vec<Warning>,
    /// What the merge gave each thread, for a second pass over each thread alone (the
    /// procedure profile).
    pub replay: ReplayPlan,
}

#[derive(Debug, Clone, Default)]
struct LocState {
    /// Open regions: (global region, enter time).
    stack: Vec<(u32, i64)>,
    last: Option<u32>,
    last_time: i64,
    /// Had an event before the window.
    before: bool,
    /// Collective events seen: the next one's number (as `coll_done` events name them).
    colls: u64,
    started: bool,
    last_event: i64,
    /// Inside MPI_Init or MPI_Finalize: (region, its arrival node).
    init_or_finalize: Option<(u32, u32)>,
    /// Send events seen: the next one's number (as `send_done` events number them).
    sends: u64,
    /// Its latest receive posts: (time, node), oldest first.
    posts: std::collections::VecDeque<(i64, u32)>,
    /// The post time of its next receive (a `recv_posted` event).
    posted: Option<i64>,
    /// The blocking send open on it: (its routine, the routine's entry, the message).
    blocking_send: Option<(u32, i64, u64)>,
    /// The [`NodeKind::Unblocked`] node of its last wait on descriptors (`poll`, `select`,
    /// `epoll_wait`), until its next read: bytes that read takes, written before the wait
    /// returned, are what woke it.
    poll: Option<u32>,
    /// Its last blocking probe, until its next receive: (the node of its entry, the node of
    /// its return, the return's time): the message the receive takes woke it.
    probe: Option<(u32, u32, i64)>,
    /// The receive of the open Wait/Test of several requests whose message was sent last, so
    /// far: (the call's entry, its node, the send's node).
    many: Option<(i64, u32, u32)>,
}

/// A send's rendezvous (a nonblocking send's, or a blocking send's): its completion and its
/// receive's post, linked when both are known.
#[derive(Debug, Clone, Copy)]
struct Rendezvous {
    /// The post node of its receive ([`NONE`]: not seen yet).
    post: u32,
    /// The completion's node and the entry of the call that completed it.
    done: Option<(u32, i64)>,
}

#[derive(Debug, Clone, Copy)]
struct Handoff {
    node: u32,
    loc: u32,
}

/// The latest release of an object, and the latest by a thread other than its thread.
#[derive(Debug, Clone, Copy)]
struct LockState {
    last: Handoff,
    other: Option<Handoff>,
    /// A read-write lock's last release of a hold for writing (what a reader waits for).
    writer: Option<Handoff>,
}

#[derive(Debug, Default)]
struct Instance {
    arrivals: Vec<u32>,
    departures: Vec<u32>,
    label: u32,
}

struct Builder<'a> {
    model: &'a Model,
    g: Graph,
    locs: Vec<LocState>,
    /// Node of each matched message's send, by message id.
    send_of: Vec<u32>,
    locks: HashMap<(u32, u32), LockState>,
    /// (location, read-write lock) → its read locks not released yet.
    reading: HashMap<(u32, u32), u32>,
    /// (process, comm) → collectives seen.
    coll_count: HashMap<(u32, u32), u32>,
    /// (comm, k) → instance.
    instances: HashMap<(u32, u32), usize>,
    inst: Vec<Instance>,
    /// Nonblocking collectives posted, by (location, its collective number): their instance,
    /// until the Wait/Test completing them.
    posted_colls: HashMap<(u32, u64), usize>,
    /// Per stream: (end, bytes, node) of each write, and of each `connect` (0 bytes at end 0).
    stream_sends: HashMap<u64, Vec<(u64, u64, u32)>>,
    /// (node, stream, end, label): each read, and each `accept` (end 0, labelled with its
    /// routine: it stays a wait when no connect is found).
    stream_recvs: Vec<(u32, u64, u64, u32)>,
    /// (wait's node, stream, end): each descriptor wait's first read after it.
    poll_reads: Vec<(u32, u64, u64)>,
    label_index: HashMap<String, u32>,
    /// Threads created inside the window: (start time, child location, parent location).
    starts: Vec<(i64, u32, u32)>,
    next_start: usize,
    /// Per global region: 0 not classified yet, 1 other, 2 MPI or socket routine, 3 MPI_Init,
    /// MPI_Init_thread or MPI_Finalize (collective over MPI_COMM_WORLD without an event), 4
    /// a receive's post, 5 a nonblocking send, 6 a blocking receive, 7 a blocking send.
    class: Vec<u8>,
    /// (process, thread) → location.
    loc_of: HashMap<(usize, u32), u32>,
    /// A nonblocking send's message by (location, send number), until its `send_done`.
    nonblocking: HashMap<(u32, u64), u64>,
    /// Messages of sends (nonblocking, or blocking but not buffered) whose completion or
    /// receive is still to come.
    rendezvous: HashMap<u64, Rendezvous>,
}

/// Receive posts kept per location for their `recv_posted` (a Waitall of more receives names
/// the rest by their completing call).
const POSTS: usize = 256;
/// A post's time from its `recv_posted` against the node of its call's entry: the two are
/// the same clock value converted along different ways (rounding).
const POST_SLACK_NS: i64 = 1_000;

const OTHER: u8 = 1;
const ROUTINE: u8 = 2;
const INIT_FINALIZE: u8 = 3;
/// A routine that posts a receive (MPI_Irecv, MPI_Imrecv; MPI_Isendrecv, MPI_Start and
/// MPI_Startall, which may start nonblocking sends too).
const POST: u8 = 4;
/// A nonblocking send that may wait for its receive (not MPI_Ibsend).
const NB_SEND: u8 = 5;
/// A blocking receive: posted at its entry.
const BLOCKING_RECV: u8 = 6;
/// A blocking probe (MPI_Probe, MPI_Mprobe): it waits for the message its location's next
/// receive takes.
const PROBE: u8 = 8;
/// A blocking send that may wait for its receive (MPI_Ssend; MPI_Send when the message goes
/// rendezvous; MPI_Rsend; not MPI_Bsend): its return is a send's completion.
const BLOCKING_SEND: u8 = 7;
/// A Wait/Test of several requests (MPI_Waitall, MPI_Waitsome, MPI_Testall, MPI_Testsome): its
/// receives are recorded at its return, in the requests' order, not their arrival's.
const WAIT_MANY: u8 = 9;
/// Posts a nonblocking collective (MPI_Iallreduce, ...): its arrival is the post, its
/// departure the completion in a Wait/Test call (the `coll_done` there).
const POST_COLL: u8 = 10;
/// Collective instance numbers of MPI_Init and MPI_Finalize (after every counted one).
const INIT_K: u32 = u32::MAX - 1;
const FINALIZE_K: u32 = u32::MAX;

impl Graph {
    /// Builds the graph of the merged trace of `model` (read from `exp`) inside `window`: the
    /// window's start is every running thread's first node, its end their last.
    pub fn build(
        model: &Model,
        exp: &Experiment,
        window: Window,
        opts: MergeOptions,
    ) -> Result<Graph, AnalysisError> {
        let mut merge = GlobalMerge::new(model, exp, opts)?;
        merge.keep_replay_plan();
        let locations = merge.locations().to_vec();
        let loc_app = locations
            .iter()
            .map(|l| model.processes[l.process].app)
            .collect();
        let n = locations.len();
        let mut b = Builder {
            model,
            g: Graph {
                nodes: Vec::new(),
                members: Vec::new(),
                labels: Vec::new(),
                locations,
                loc_app,
                window,
                events: 0,
                origin_ns: merge.origin_ns(),
                span_ns: (i64::MAX, i64::MIN),
                warnings: Vec::new(),
                replay: ReplayPlan::default(),
            },
            locs: vec![LocState::default(); n],
            send_of: Vec::new(),
            locks: HashMap::new(),
            reading: HashMap::new(),
            coll_count: HashMap::new(),
            instances: HashMap::new(),
            inst: Vec::new(),
            posted_colls: HashMap::new(),
            stream_sends: HashMap::new(),
            stream_recvs: Vec::new(),
            poll_reads: Vec::new(),
            label_index: HashMap::new(),
            starts: Vec::new(),
            next_start: 0,
            class: Vec::new(),
            loc_of: HashMap::new(),
            nonblocking: HashMap::new(),
            rendezvous: HashMap::new(),
        };
        b.loc_of = (b.g.locations.iter().enumerate())
            .map(|(i, l)| ((l.process, l.thread), i as u32))
            .collect();
        b.thread_starts(exp);
        // the graph is built beside the merge (on its own thread with more than one engine
        // thread), which stops where the graph does: at the window's end
        let (mut merge, cut) = merge.feed(Some(window.end_ns), |feed| {
            while let Some(ev) = feed.next_event() {
                b.g.events += 1;
                if ev.time_ns >= window.end_ns {
                    return true;
                }
                if ev.time_ns >= window.start_ns {
                    let s = &mut b.g.span_ns;
                    *s = (s.0.min(ev.time_ns), s.1.max(ev.time_ns));
                }
                b.event(feed.regions(), ev.location, ev.time_ns, ev.kind);
            }
            false
        });
        if b.g.span_ns.0 > b.g.span_ns.1 {
            b.g.span_ns = (0, 0);
        } else {
            // threads running into or out of the window run from its start or to its end
            if b.locs.iter().any(|l| l.before) {
                b.g.span_ns.0 = window.start_ns;
            }
            if cut {
                b.g.span_ns.1 = window.end_ns;
            }
        }
        b.starts_until(i64::MAX);
        b.finish(cut);
        b.g.warnings = merge.warnings().to_vec();
        b.g.replay = merge.take_replay_plan();
        Ok(b.g)
    }

    /// Elapsed time of the window's events, ns (to the window's end when the trace goes on).
    pub fn elapsed_ns(&self) -> i64 {
        self.span_ns.1 - self.span_ns.0
    }

    /// Elapsed time of application `app`'s nodes, ns (from its first to its last).
    pub fn app_elapsed_ns(&self, app: u32) -> i64 {
        let mut span: Option<(i64, i64)> = None;
        for n in &self.nodes {
            if n.loc != NONE && self.loc_app[n.loc as usize] == app {
                span = Some(span.map_or((n.time_ns, n.time_ns), |(a, b)| {
                    (a.min(n.time_ns), b.max(n.time_ns))
                }));
            }
        }
        span.map_or(0, |(a, b)| b - a)
    }

    /// The node's thread's application, `None` for a virtual node.
    pub fn app_of(&self, v: u32) -> Option<u32> {
        let l = self.nodes[v as usize].loc;
        (l != NONE).then(|| self.loc_app[l as usize])
    }
}

impl Builder<'_> {
    /// Threads with a creating thread that start inside the window: their Fork arcs.
    fn thread_starts(&mut self, exp: &Experiment) {
        let mut by_thread: HashMap<(usize, u32), u32> = HashMap::new();
        for (i, l) in self.g.locations.iter().enumerate() {
            by_thread.insert((l.process, l.thread), i as u32);
        }
        // the images by path, looked up once per process (a scan per process was quadratic)
        let images: HashMap<std::path::PathBuf, &plx_format::ProcessImage> =
            exp.images.iter().map(|i| (i.process_path(), i)).collect();
        for (pi, p) in self.model.processes.iter().enumerate() {
            let Some(img) = images.get(&p.path) else {
                continue;
            };
            for t in img.process.threads.values() {
                let Some(info) = &t.info else { continue };
                if info.parent == NONE_U32 {
                    continue;
                }
                let (Some(&child), Some(&parent)) = (
                    by_thread.get(&(pi, info.thread)),
                    by_thread.get(&(pi, info.parent)),
                ) else {
                    continue;
                };
                let at = crate::merge::round_ns(p.rank0_ns(info.start_ticks));
                if self.g.window.contains(at) {
                    self.starts.push((at, child, parent));
                }
            }
        }
        self.starts.sort_unstable();
    }

    fn starts_until(&mut self, t: i64) {
        while let Some(&(at, child, parent)) = self.starts.get(self.next_start) {
            if at > t {
                break;
            }
            self.next_start += 1;
            if self.locs[child as usize].started {
                continue;
            }
            let f = self.push(parent, at, NodeKind::Fork);
            self.locs[parent as usize].started = true;
            let s = self.push(child, at, NodeKind::Start);
            self.set_remote(s, f, ArcKind::Fork, NONE);
            self.locs[child as usize].started = true;
        }
    }

    /// A node on thread `loc` at `t` (not before the thread's previous node).
    fn push(&mut self, loc: u32, t: i64, kind: NodeKind) -> u32 {
        let st = &mut self.locs[loc as usize];
        let time_ns = match st.last {
            Some(_) => t.max(st.last_time),
            None => t,
        };
        let id = self.g.nodes.len() as u32;
        self.g.nodes.push(Node {
            time_ns,
            loc,
            prev: st.last.unwrap_or(NONE),
            remote: NONE,
            kind,
            arc: ArcKind::None,
            label: NONE,
        });
        st.last = Some(id);
        st.last_time = time_ns;
        id
    }

    fn set_remote(&mut self, v: u32, r: u32, arc: ArcKind, label: u32) {
        let n = &mut self.g.nodes[v as usize];
        n.remote = r;
        n.arc = arc;
        n.label = label;
    }

    fn label(&mut self, s: String) -> u32 {
        if let Some(&i) = self.label_index.get(&s) {
            return i;
        }
        let i = self.g.labels.len() as u32;
        self.g.labels.push(s.clone());
        self.label_index.insert(s, i);
        i
    }

    fn class(&mut self, regions: &RegionTable, r: u32) -> u8 {
        let i = r as usize;
        if self.class.len() <= i {
            self.class.resize(i + 1, 0);
        }
        if self.class[i] == 0 {
            let info = regions.get(r);
            self.class[i] = match info.kind {
                RegionKind::Mpi
                    if matches!(
                        info.name.as_str(),
                        "MPI_Init" | "MPI_Init_thread" | "MPI_Finalize"
                    ) =>
                {
                    INIT_FINALIZE
                }
                RegionKind::Mpi => match info.name.as_str() {
                    "MPI_Irecv"
                    | "MPI_Imrecv"
                    | "MPI_Isendrecv"
                    | "MPI_Isendrecv_replace"
                    | "MPI_Start"
                    | "MPI_Startall" => POST,
                    "MPI_Isend" | "MPI_Issend" | "MPI_Irsend" => NB_SEND,
                    "MPI_Recv" | "MPI_Sendrecv" | "MPI_Sendrecv_replace" | "MPI_Mrecv" => {
                        BLOCKING_RECV
                    }
                    "MPI_Probe" | "MPI_Mprobe" => PROBE,
                    "MPI_Send" | "MPI_Ssend" | "MPI_Rsend" => BLOCKING_SEND,
                    "MPI_Waitall" | "MPI_Waitsome" | "MPI_Testall" | "MPI_Testsome" => WAIT_MANY,
                    n if crate::waits::replay::posts_collective(n) => POST_COLL,
                    _ => ROUTINE,
                },
                RegionKind::Socket => ROUTINE,
                _ => OTHER,
            };
        }
        self.class[i]
    }

    /// The innermost open MPI or socket routine: (region, enter time).
    fn routine(&mut self, regions: &RegionTable, loc: u32) -> Option<(u32, i64)> {
        let n = self.locs[loc as usize].stack.len();
        for i in (0..n).rev() {
            let (r, t) = self.locs[loc as usize].stack[i];
            if self.class(regions, r) >= ROUTINE {
                return Some((r, t));
            }
        }
        None
    }

    /// Adds a member's arrival and departure to the k-th collective on `comm` (a model
    /// communicator), named `routine`.
    /// The nonblocking collective whose post was the `collective`-th collective event of
    /// thread `thread` of `loc`'s process completed at `t` in the Wait/Test call open at
    /// `loc`: a wait-start at the call's entry and the member's departure.
    fn coll_done(
        &mut self,
        regions: &RegionTable,
        loc: u32,
        t: i64,
        (thread, collective): (u32, u64),
    ) {
        let process = self.g.locations[loc as usize].process;
        let Some(&poster) = self.loc_of.get(&(process, thread)) else {
            return;
        };
        let Some(i) = self.posted_colls.remove(&(poster, collective)) else {
            return;
        };
        let Some((_, enter)) = self.routine(regions, loc) else {
            return;
        };
        self.wait_start(loc, enter);
        let d = self.push(loc, t, NodeKind::Depart);
        self.inst[i].departures.push(d);
    }

    /// The instance of the `k`-th collective on `comm`, of `routine` (its label's).
    fn instance(
        &mut self,
        regions: &RegionTable,
        comm: u32,
        k: u32,
        routine: Option<u32>,
    ) -> usize {
        let key = (comm, k);
        match self.instances.get(&key) {
            Some(&i) => i,
            None => {
                let name = routine.map_or("collective", |r| regions.name(r));
                let label = self.label(format!(
                    "{name} on {}",
                    self.model.comms.get(comm).describe()
                ));
                self.inst.push(Instance {
                    label,
                    ..Instance::default()
                });
                self.instances.insert(key, self.inst.len() - 1);
                self.inst.len() - 1
            }
        }
    }

    /// MPI_Init and MPI_Finalize synchronize every rank without a collective event: their
    /// entry is an arrival, their exit a departure of an instance on MPI_COMM_WORLD.
    fn init_or_finalize(&mut self, regions: &RegionTable, loc: u32, t: i64, kind: &EventKind) {
        let (region, enter) = match *kind {
            EventKind::Enter { region } => (region, true),
            EventKind::Exit { region } => (region, false),
            _ => return,
        };
        if self.class(regions, region) != INIT_FINALIZE {
            return;
        }
        let li = loc as usize;
        if enter {
            let a = self.push(loc, t, NodeKind::Arrive);
            self.locs[li].init_or_finalize = Some((region, a));
            return;
        }
        let Some((r, a)) = self.locs[li]
            .init_or_finalize
            .take()
            .filter(|(r, _)| *r == region)
        else {
            return;
        };
        let d = self.push(loc, t, NodeKind::Depart);
        let p = &self.model.processes[self.g.locations[li].process];
        let Some(&world) = p.comms.get(&0) else {
            return;
        };
        if p.mpi.is_none() || self.model.comms.get(world).ranks.len() < 2 {
            return;
        }
        let k = if regions.name(r) == "MPI_Finalize" {
            FINALIZE_K
        } else {
            INIT_K
        };
        let i = self.instance(regions, world, k, Some(r));
        self.inst[i].arrivals.push(a);
        self.inst[i].departures.push(d);
    }

    /// The exit of a socket routine at `t`: unless a node was placed since its entry (its
    /// stream event), the time since its entry was spent blocked in it (accept waiting for a client,
    /// a receive that got nothing): a wait-start at the entry and an [`NodeKind::Unblocked`]
    /// node at the exit, labelled with the routine.
    fn socket_exit(&mut self, regions: &RegionTable, loc: u32, region: u32, t: i64) {
        if regions.get(region).kind != RegionKind::Socket {
            return;
        }
        let st = &self.locs[loc as usize];
        let Some(&(_, enter)) = st.stack.iter().rev().find(|(r, _)| *r == region) else {
            return;
        };
        // a stream event inside (a write's send at the entry, a read's receive at the exit)
        // already placed the call in the graph; the thread's start node alone does not (an
        // uninstrumented program's first event may be the entry of a wait)
        let placed = st
            .last
            .is_some_and(|v| self.g.nodes[v as usize].kind != NodeKind::Start);
        if enter >= t || (placed && st.last_time >= enter) {
            return;
        }
        self.wait_start(loc, enter);
        let v = self.push(loc, t, NodeKind::Unblocked);
        let name = regions.name(region);
        if crate::waits::replay::is_descriptor_wait(name) {
            self.locs[loc as usize].poll = Some(v);
        }
        let label = self.label(name.to_string());
        self.g.nodes[v as usize].label = label;
    }

    /// A lock taken (or a wait on an object ended) at `loc`, after `wait_ns` blocked: its
    /// arc from the release that let it go.
    fn lock_acquire(
        &mut self,
        loc: u32,
        t: i64,
        (object, k, shared): (u32, u8, bool),
        wait_ns: u64,
    ) {
        let li = loc as usize;
        let rwlock = SyncKind::from_u8(k) == SyncKind::RwLock;
        if rwlock && shared {
            *self.reading.entry((loc, object)).or_insert(0) += 1;
        }
        if wait_ns == 0 {
            return;
        }
        let arrival = t - wait_ns as i64;
        self.wait_start(loc, arrival);
        let v = self.push(loc, t, NodeKind::Acquire);
        let process = self.g.locations[li].process as u32;
        let Some(lock) = self.locks.get(&(process, object)).copied() else {
            return;
        };
        // a reader waits for the last writer to release it while it waited (as
        // `plx waits` names it), not for a reader that released it after
        let from = if rwlock && shared {
            lock.writer
                .filter(|h| h.loc != loc && self.g.nodes[h.node as usize].time_ns >= arrival)
        } else if lock.last.loc != loc {
            Some(lock.last)
        } else {
            lock.other
        };
        if let Some(h) = from {
            let label = self.sync_label(process, object, k, h.loc);
            self.set_remote(v, h.node, ArcKind::Sync, label);
        }
    }

    /// An object released (posted, signalled) at `loc`.
    fn lock_release(&mut self, loc: u32, t: i64, object: u32, k: u8) {
        let li = loc as usize;
        let v = self.push(loc, t, NodeKind::Release);
        let process = self.g.locations[li].process as u32;
        let h = Handoff { node: v, loc };
        // a read lock's release (a reader that took it twice releases it twice)
        let read = match self.reading.get_mut(&(loc, object)) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => self.reading.remove(&(loc, object)).is_some(),
            None => false,
        };
        let writer = (SyncKind::from_u8(k) == SyncKind::RwLock && !read).then_some(h);
        self.locks
            .entry((process, object))
            .and_modify(|s| {
                if s.last.loc != loc {
                    s.other = Some(s.last);
                }
                s.last = h;
                s.writer = writer.or(s.writer);
            })
            .or_insert(LockState {
                last: h,
                other: None,
                writer,
            });
    }

    /// A wait-start node at `at` unless the thread's last node is already there or later.
    fn wait_start(&mut self, loc: u32, at: i64) {
        let st = &self.locs[loc as usize];
        if st.last.is_none_or(|_| at > st.last_time) {
            self.push(loc, at, NodeKind::WaitStart);
        }
    }

    fn event(&mut self, regions: &RegionTable, loc: u32, t: i64, kind: EventKind) {
        let w = self.g.window;
        let li = loc as usize;
        if t < w.start_ns {
            // before the window: only the call stack and the collectives' numbering matter
            self.locs[li].before = true;
            self.stack(loc, t, &kind);
            if let EventKind::Send { .. } = kind {
                self.locs[li].sends += 1;
            }
            if let EventKind::Collective { comm, .. } = kind {
                self.locs[li].colls += 1;
                if let Some(c) = comm {
                    let process = self.g.locations[li].process as u32;
                    *self.coll_count.entry((process, c)).or_insert(0) += 1;
                }
            }
            return;
        }
        self.starts_until(t);
        if !self.locs[li].started {
            let at = if self.locs[li].before { w.start_ns } else { t };
            self.push(loc, at, NodeKind::Start);
            self.locs[li].started = true;
        }
        self.locs[li].last_event = t;
        match kind {
            EventKind::Enter { .. } | EventKind::Exit { .. } => {
                if let EventKind::Exit { region } = kind {
                    self.socket_exit(regions, loc, region, t);
                    self.blocking_send_exit(loc, region, t);
                    self.probe_exit(regions, loc, region, t);
                }
                self.stack(loc, t, &kind);
                self.init_or_finalize(regions, loc, t, &kind);
                if let EventKind::Enter { region } = kind {
                    if self.class(regions, region) == POST {
                        let v = self.push(loc, t, NodeKind::Post);
                        let posts = &mut self.locs[li].posts;
                        if posts.len() >= POSTS {
                            posts.pop_front();
                        }
                        posts.push_back((t, v));
                    }
                }
            }
            EventKind::User { .. } | EventKind::OmpTeam { .. } => {}
            EventKind::CollDone { thread, collective } => {
                self.coll_done(regions, loc, t, (thread, collective));
            }
            EventKind::RecvPosted { before_ns } => {
                self.locs[li].posted = Some(t - before_ns as i64);
            }
            EventKind::SendDone { thread, mode, send } => {
                self.send_done(regions, loc, t, (thread, mode, send));
            }
            EventKind::Send { message, .. } => self.send(regions, loc, t, message),
            EventKind::Recv { message, .. } => self.recv(regions, loc, t, message),
            EventKind::Collective { comm, .. } => {
                let n = self.locs[li].colls;
                self.locs[li].colls += 1;
                let routine = self.routine(regions, loc);
                let enter = routine.map_or(t, |(_, e)| e);
                // a nonblocking one departs where the Wait/Test completing it does
                let posted = routine.is_some_and(|(r, _)| self.class(regions, r) == POST_COLL);
                let a = self.push(loc, enter, NodeKind::Arrive);
                let d = (!posted).then(|| self.push(loc, t, NodeKind::Depart));
                let Some(comm) = comm else { return };
                if self.model.comms.get(comm).ranks.len() < 2 {
                    return;
                }
                let process = self.g.locations[li].process as u32;
                let k = self.coll_count.entry((process, comm)).or_insert(0);
                let kk = *k;
                *k += 1;
                let i = self.instance(regions, comm, kk, routine.map(|(r, _)| r));
                self.inst[i].arrivals.push(a);
                match d {
                    Some(d) => self.inst[i].departures.push(d),
                    None => {
                        self.posted_colls.insert((loc, n), i);
                    }
                }
            }
            EventKind::Acquire {
                object,
                kind: k,
                wait_ns,
                shared,
                ..
            } => self.lock_acquire(loc, t, (object, k, shared), wait_ns),
            EventKind::Release { object, kind: k } => self.lock_release(loc, t, object, k),
            EventKind::StreamSend { stream, end, bytes } => {
                // the bytes may reach the reader before the write returns: the send is where
                // the call began (push keeps the thread's order)
                let at = self.routine(regions, loc).map_or(t, |(_, e)| e);
                let v = self.push(loc, at, NodeKind::StreamSend);
                self.stream_sends
                    .entry(stream)
                    .or_default()
                    .push((end, bytes, v));
            }
            EventKind::StreamRecv { stream, end, .. } => {
                let routine = self.routine(regions, loc);
                if let Some((_, enter)) = routine {
                    self.wait_start(loc, enter);
                }
                let v = self.push(loc, t, NodeKind::StreamRecv);
                let label = match routine {
                    Some((r, _)) if end == 0 => self.label(regions.name(r).to_string()),
                    _ => NONE,
                };
                self.stream_recvs.push((v, stream, end, label));
                if end != 0 {
                    if let Some(w) = self.locs[li].poll.take() {
                        self.poll_reads.push((w, stream, end));
                    }
                }
            }
            // only in a merge with counters, which this is not
            EventKind::Counted { .. } => {}
        }
    }

    /// An MPI send at `loc`: its node, the rendezvous a blocking or nonblocking send
    /// waits on, and where its receive will find it.
    fn send(&mut self, regions: &RegionTable, loc: u32, t: i64, message: Option<u64>) {
        let li = loc as usize;
        let v = self.push(loc, t, NodeKind::Send);
        let n = self.locs[li].sends;
        self.locs[li].sends += 1;
        let routine = self.routine(regions, loc);
        let class = routine.map_or(OTHER, |(r, _)| self.class(regions, r));
        let nonblocking = matches!(class, POST | NB_SEND);
        if let (Some(id), Some((r, enter)), BLOCKING_SEND) = (message, routine, class) {
            self.locs[li].blocking_send = Some((r, enter, id));
            self.rendezvous.insert(
                id,
                Rendezvous {
                    post: NONE,
                    done: None,
                },
            );
        }
        if let (Some(id), true) = (message, nonblocking) {
            self.nonblocking.insert((loc, n), id);
            self.rendezvous.insert(
                id,
                Rendezvous {
                    post: NONE,
                    done: None,
                },
            );
        }
        if let Some(id) = message {
            let id = id as usize;
            if self.send_of.len() <= id {
                self.send_of.resize(id + 1, NONE);
            }
            self.send_of[id] = v;
        }
    }

    /// An MPI receive at `loc`: the wait from its call's entry, its post (an Irecv's node, a
    /// blocking receive's entry) and its node, linked to its send's.
    fn recv(&mut self, regions: &RegionTable, loc: u32, t: i64, message: Option<MessageLink>) {
        let li = loc as usize;
        let routine = self.routine(regions, loc);
        if let Some((_, enter)) = routine {
            self.wait_start(loc, enter);
        }
        // where the receive was posted: an Irecv's (or Start's) node, a blocking
        // receive's entry
        let posted = self.locs[li].posted.take();
        let r = message
            .and_then(|m| self.send_of.get(m.id as usize).copied())
            .unwrap_or(NONE);
        // a blocking probe before it waited for the message (sent before the probe returned):
        // the message arc ends at the probe's return, the receive was posted at its entry
        let probe = self.locs[li]
            .probe
            .take()
            .filter(|&(_, _, exit)| r != NONE && self.g.nodes[r as usize].time_ns <= exit);
        let post = match (probe, posted, routine) {
            (Some((p, _, _)), _, _) => Some(p).filter(|&p| p != NONE),
            (None, Some(p), _) => self.locs[li]
                .posts
                .iter()
                .rev()
                .find(|&&(at, _)| at <= p + POST_SLACK_NS)
                .map(|&(_, v)| v),
            (None, None, Some((r, _))) if self.class(regions, r) == BLOCKING_RECV => {
                self.locs[li].last
            }
            _ => None,
        };
        if let (Some(m), Some(post)) = (message, post) {
            self.posted(m.id, post);
        }
        let v = self.push(loc, t, NodeKind::Recv);
        let woken = probe.map_or(v, |(_, p, _)| p);
        if r == NONE {
            return;
        }
        // a call completing several receives (recorded at its return, in the requests' order)
        // returned with the message sent last: its arc goes to the call's first receive node,
        // which ends the call's wait; an earlier message, which had come, arrives at a later
        // node of no length (its arc would carry the wait for the last)
        if let Some((_, enter)) = routine.filter(|&(rr, _)| self.class(regions, rr) == WAIT_MANY) {
            let sent = |g: &Graph, x: u32| g.nodes[x as usize].time_ns;
            match self.locs[li].many.filter(|m| m.0 == enter) {
                Some((_, first, last)) if sent(&self.g, r) > sent(&self.g, last) => {
                    self.set_remote(first, r, ArcKind::Msg, NONE);
                    self.set_remote(woken, last, ArcKind::Msg, NONE);
                    self.locs[li].many = Some((enter, first, r));
                    return;
                }
                Some(_) => {}
                None => self.locs[li].many = Some((enter, woken, r)),
            }
        }
        self.set_remote(woken, r, ArcKind::Msg, NONE);
    }

    /// `mutex queue.c:97 (main)`, or `join 0.1` for a thread object (the thread that ended).
    /// A nonblocking send completed in the Wait/Test call open at `loc`: a node at the
    /// completion (after a wait-start at the call's entry), linked to its receive's post once
    /// both are known.
    fn send_done(
        &mut self,
        regions: &RegionTable,
        loc: u32,
        t: i64,
        (thread, mode, send): (u32, u8, u64),
    ) {
        let process = self.g.locations[loc as usize].process;
        let Some(&sender) = self.loc_of.get(&(process, thread)) else {
            return;
        };
        let Some(id) = self.nonblocking.remove(&(sender, send)) else {
            return;
        };
        let enter = self.routine(regions, loc).map(|(_, e)| e);
        // a buffered send never waits for its receive
        let (false, Some(enter)) = (mode == 2, enter) else {
            self.rendezvous.remove(&id);
            return;
        };
        self.wait_start(loc, enter);
        let v = self.push(loc, t, NodeKind::SendDone);
        self.done(id, v, enter);
    }

    /// The return of a blocking probe at `t`: a wait-start at its entry and a receive node at
    /// its return, whose message arc the location's next receive sets.
    fn probe_exit(&mut self, regions: &RegionTable, loc: u32, region: u32, t: i64) {
        if self.class(regions, region) != PROBE {
            return;
        }
        let st = &self.locs[loc as usize];
        let Some(&(_, enter)) = st.stack.iter().rev().find(|(r, _)| *r == region) else {
            return;
        };
        self.wait_start(loc, enter);
        let post = self.locs[loc as usize].last.unwrap_or(NONE);
        let v = self.push(loc, t, NodeKind::Recv);
        self.locs[loc as usize].probe = Some((post, v, t));
    }

    /// The return of a blocking send at `t` (if `region` is the one open on `loc`): a node,
    /// linked to its receive's post once both are known.
    fn blocking_send_exit(&mut self, loc: u32, region: u32, t: i64) {
        let st = &mut self.locs[loc as usize];
        let Some((id, enter)) = (st.blocking_send)
            .filter(|&(r, _, _)| r == region)
            .map(|(_, e, id)| (id, e))
        else {
            return;
        };
        st.blocking_send = None;
        let v = self.push(loc, t, NodeKind::SendDone);
        self.done(id, v, enter);
    }

    /// Message `id`'s send completed at node `v`, in a call entered at `enter`.
    fn done(&mut self, id: u64, v: u32, enter: i64) {
        let Some(r) = self.rendezvous.get_mut(&id) else {
            return;
        };
        if r.post == NONE {
            r.done = Some((v, enter));
        } else {
            let post = r.post;
            self.rendezvous.remove(&id);
            self.link(post, v, enter);
        }
    }

    /// Message `id`'s receive was posted at node `post`.
    fn posted(&mut self, id: u64, post: u32) {
        let Some(r) = self.rendezvous.get_mut(&id) else {
            return;
        };
        match r.done {
            Some((v, enter)) => {
                self.rendezvous.remove(&id);
                self.link(post, v, enter);
            }
            None => r.post = post,
        }
    }

    /// The completion `v` of a call entered at `enter` waited for the receive's post `post`
    /// when the post came while the call was blocked.
    fn link(&mut self, post: u32, v: u32, enter: i64) {
        let p = self.g.nodes[post as usize].time_ns;
        if p >= enter && p <= self.g.nodes[v as usize].time_ns {
            self.set_remote(v, post, ArcKind::Rendezvous, NONE);
        }
    }

    fn sync_label(&mut self, process: u32, object: u32, kind: u8, releaser: u32) -> u32 {
        let kind = SyncKind::from_u8(kind);
        let s = if kind == SyncKind::Thread {
            format!("join {}", self.g.locations[releaser as usize].label())
        } else {
            self.model.processes[process as usize]
                .sync_objects
                .iter()
                .find(|o| o.id == object)
                .map_or_else(|| format!("{} {object}", kind.as_str()), |o| o.label())
        };
        self.label(s)
    }

    fn stack(&mut self, loc: u32, t: i64, kind: &EventKind) {
        let stack = &mut self.locs[loc as usize].stack;
        match *kind {
            EventKind::Enter { region } => stack.push((region, t)),
            EventKind::Exit { region } => {
                if let Some(i) = stack.iter().rposition(|(r, _)| *r == region) {
                    stack.truncate(i);
                }
            }
            _ => {}
        }
    }

    /// End nodes; collectives' virtual nodes; stream receives linked to their writes.
    fn finish(&mut self, cut: bool) {
        let w = self.g.window;
        for loc in 0..self.locs.len() as u32 {
            let st = &self.locs[loc as usize];
            if !st.started {
                // running through the whole window without an event in it
                if !(cut && st.before && !st.stack.is_empty()) {
                    continue;
                }
                self.push(loc, w.start_ns, NodeKind::Start);
            }
            let st = &self.locs[loc as usize];
            let at = if cut && !st.stack.is_empty() {
                // inside a routine that completes after the window: its time in the window is
                // waiting for something the graph does not show
                let open = st
                    .stack
                    .iter()
                    .find(|(r, _)| self.class.get(*r as usize).is_some_and(|&c| c >= ROUTINE));
                open.map_or(w.end_ns, |&(_, e)| e.max(w.start_ns))
            } else {
                st.last_event.min(w.end_ns)
            };
            self.push(loc, at, NodeKind::End);
        }
        for inst in std::mem::take(&mut self.inst) {
            if inst.arrivals.len() < 2 {
                continue;
            }
            let last = inst
                .arrivals
                .iter()
                .map(|&a| self.g.nodes[a as usize].time_ns)
                .max()
                .unwrap_or(0);
            let c = self.g.nodes.len() as u32;
            self.g.nodes.push(Node {
                time_ns: last,
                loc: NONE,
                prev: NONE,
                remote: self.g.members.len() as u32,
                kind: NodeKind::Collective,
                arc: ArcKind::None,
                label: inst.label,
            });
            self.g.members.push(inst.arrivals);
            for d in inst.departures {
                // a member that left before the last arrival did not wait for it
                if self.g.nodes[d as usize].time_ns >= last {
                    self.set_remote(d, c, ArcKind::Collective, inst.label);
                }
            }
        }
        for sends in self.stream_sends.values_mut() {
            sends.sort_by_key(|s| s.0);
        }
        for (v, stream, end, label) in std::mem::take(&mut self.stream_recvs) {
            if end == 0 {
                self.opened(v, stream, label);
                continue;
            }
            if let Some(s) = self.write_holding(stream, end) {
                self.set_remote(v, s, ArcKind::Stream, NONE);
            }
        }
        // a descriptor wait woken by bytes its thread then read: from their write, when that
        // came before the wait returned (else something else woke it)
        for (w, stream, end) in std::mem::take(&mut self.poll_reads) {
            let Some(s) = self.write_holding(stream, end) else {
                continue;
            };
            let (wait, write) = (&self.g.nodes[w as usize], &self.g.nodes[s as usize]);
            if wait.remote == NONE && write.time_ns <= wait.time_ns {
                let label = wait.label;
                self.set_remote(w, s, ArcKind::Stream, label);
            }
        }
    }

    /// The node of the write to `stream` whose bytes `[end_s - bytes_s, end_s)` hold byte
    /// `end - 1` (the writes sorted by end).
    fn write_holding(&self, stream: u64, end: u64) -> Option<u32> {
        let sends = self.stream_sends.get(&stream)?;
        let i = sends.partition_point(|s| s.0 < end);
        let &(e, bytes, s) = sends.get(i)?;
        (e.saturating_sub(bytes) < end).then_some(s)
    }

    /// An `accept` (a receive of 0 bytes at end 0): released by the latest `connect` of its
    /// stream that began before it returned (the earliest if clocks put all after it); without
    /// one (the client not measured), blocked in its routine for a cause the graph does not show.
    fn opened(&mut self, v: u32, stream: u64, label: u32) {
        let t = self.g.nodes[v as usize].time_ns;
        let nodes = &self.g.nodes;
        let connect = self.stream_sends.get(&stream).and_then(|sends| {
            let time = |s: &&(u64, u64, u32)| nodes[s.2 as usize].time_ns;
            let opens = sends.iter().filter(|s| s.0 == 0 && s.1 == 0);
            opens
                .clone()
                .filter(|s| time(s) <= t)
                .max_by_key(time)
                .or_else(|| opens.min_by_key(time))
                .map(|s| s.2)
        });
        match connect {
            Some(c) => self.set_remote(v, c, ArcKind::Stream, NONE),
            None if label != NONE => {
                let n = &mut self.g.nodes[v as usize];
                n.kind = NodeKind::Unblocked;
                n.label = label;
            }
            None => {}
        }
    }
}
