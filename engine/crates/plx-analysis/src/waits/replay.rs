//! The replay: the merged stream's events, one at a time, through each location's call stack, the messages in flight, the open collective instances and the synchronization objects' last releases; a wait is found when the event that ends it arrives (a receive, a collective's last member, an acquire, a send's exit).
//!
//! Memory: per location its stack and (with causes) its [`Account`] and the accounts at its
//! last synchronisation with each partner rank; beyond that, only what is still open (messages
//! sent and not yet received, collective instances not every member has reached, each object's
//! last releases).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use plx_format::{RegionKind, SyncKind, NONE_U32};

use super::delay::{divide, Account, CauseKind, Share, Start, Sync};
use super::{Callpaths, Pattern};
use crate::merge::EventKind;
use crate::regions::RegionTable;
use crate::selection::Window;

const NONE: u32 = NONE_U32;
/// Stream writes (reads) kept per stream while their reads (writes) have not come; nonblocking
/// sends kept per location while their completion has not come.
const MAX_PENDING: usize = 1024;
/// A location's latest receives kept for the wrong-order late receiver.
const RECENT: usize = 16;
/// A location's latest receive posts kept (the call paths of late receivers whose receive was
/// posted by MPI_Irecv or MPI_Start; a Waitall of more names the rest by its own).
const POSTS: usize = 256;
/// Of those, the latest keep the location's account at the post (with causes): a late
/// receiver's delay is its work before the post, not after.
const POST_ACCOUNTS: usize = 16;
/// A post's time from its `recv_posted` against its call's entry: the same clock value
/// converted along different ways (rounding).
const POST_SLACK_NS: i64 = 1_000;

/// What the replay needs to know of the experiment (made from a [`crate::Model`] and the
/// merge's locations, or by hand in tests).
#[derive(Debug, Clone)]
pub struct Setup {
    /// World rank of each location's process (`None`: not an MPI rank).
    pub loc_rank: Vec<Option<u32>>,
    /// Process (an index into [`crate::Model::processes`]) of each location.
    pub loc_process: Vec<u32>,
    /// Process-local thread index of each location.
    pub loc_thread: Vec<u32>,
    /// Whether a location's waits are reported (the application chosen; all by default).
    pub loc_counted: Vec<bool>,
    /// World ranks of each communicator ([`crate::Model::comms`] order).
    pub comm_ranks: Vec<Vec<u32>>,
    /// Waits are reported when they end inside.
    pub window: Window,
    /// Keep accounts and find causes.
    pub causes: bool,
}

/// Region classes, by the routine's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Other,
    /// MPI_Init, MPI_Init_thread: every rank synchronised at its exit.
    Init,
    /// A blocking send that may wait for its receive (MPI_Send, MPI_Ssend, MPI_Rsend).
    BlockingSend,
    /// A blocking receive (the receive is posted at its entry): MPI_Recv, MPI_Sendrecv, and
    /// MPI_Mrecv (its wait, if any, in the probe before it).
    BlockingRecv,
    /// A call that posts a receive completed later (MPI_Irecv, MPI_Imrecv, MPI_Isendrecv;
    /// MPI_Start and MPI_Startall, which may start nonblocking sends too).
    PostRecv,
    /// A blocking probe (MPI_Probe, MPI_Mprobe): it waits for the message its location's next
    /// receive takes.
    Probe,
    Barrier,
    NxN,
    OneToN,
    NToOne,
    /// The nonblocking forms (MPI_Ibarrier, MPI_Iallreduce, ...): posted here, completed in
    /// a Wait/Test call.
    IBarrier,
    INxN,
    IOneToN,
    INToOne,
    /// A Wait/Test of several requests (its completions' order is not the program's choice).
    WaitMany,
    /// Another MPI routine.
    Mpi,
    /// A socket call on a traced stream.
    Socket,
}

/// The pattern of a call that waits with no partner when it moved no traced bytes: a sleep, or
/// a wait on descriptors (wait.c's and socket.c's regions, kind 5). A send, write or connect
/// that moved nothing returned at once or failed: none.
fn alone(name: &str, kind: RegionKind) -> Option<Pattern> {
    if kind != RegionKind::Socket {
        return None;
    }
    match name {
        "sleep" | "usleep" | "nanosleep" | "clock_nanosleep" | "Thread.sleep" => {
            Some(Pattern::Sleep)
        }
        "poll" | "ppoll" | "select" | "pselect" | "epoll_wait" | "epoll_pwait" | "accept"
        | "accept4" | "recv" | "recvfrom" | "recvmsg" | "read" | "readv" => Some(Pattern::IoWait),
        _ => None,
    }
}

/// A wait on descriptors that returns when one is ready (poll, select, epoll): woken by bytes its
/// thread then reads, it waited for their writer (the rule the critical path's graph follows).
pub(crate) fn is_descriptor_wait(name: &str) -> bool {
    matches!(
        name,
        "poll" | "ppoll" | "select" | "pselect" | "epoll_wait" | "epoll_pwait"
    )
}

/// Whether MPI routine `name` posts a nonblocking collective, completed later in a Wait/Test
/// call (those in a pattern, and MPI_Iscan and MPI_Iexscan, in none).
pub fn posts_collective(name: &str) -> bool {
    classify(name, RegionKind::Mpi).completed_as().is_some()
        || matches!(name, "MPI_Iscan" | "MPI_Iexscan")
}

fn classify(name: &str, kind: RegionKind) -> Class {
    if kind == RegionKind::Socket {
        return Class::Socket;
    }
    if kind != RegionKind::Mpi {
        return Class::Other;
    }
    match name {
        "MPI_Init" | "MPI_Init_thread" => Class::Init,
        "MPI_Send" | "MPI_Ssend" | "MPI_Rsend" => Class::BlockingSend,
        "MPI_Recv" | "MPI_Sendrecv" | "MPI_Sendrecv_replace" | "MPI_Mrecv" => Class::BlockingRecv,
        "MPI_Irecv"
        | "MPI_Imrecv"
        | "MPI_Isendrecv"
        | "MPI_Isendrecv_replace"
        | "MPI_Start"
        | "MPI_Startall" => Class::PostRecv,
        "MPI_Probe" | "MPI_Mprobe" => Class::Probe,
        "MPI_Barrier" => Class::Barrier,
        "MPI_Allreduce"
        | "MPI_Alltoall"
        | "MPI_Alltoallv"
        | "MPI_Alltoallw"
        | "MPI_Allgather"
        | "MPI_Allgatherv"
        | "MPI_Reduce_scatter"
        | "MPI_Reduce_scatter_block" => Class::NxN,
        "MPI_Bcast" | "MPI_Scatter" | "MPI_Scatterv" => Class::OneToN,
        "MPI_Reduce" | "MPI_Gather" | "MPI_Gatherv" => Class::NToOne,
        "MPI_Waitall" | "MPI_Waitany" | "MPI_Waitsome" | "MPI_Testall" | "MPI_Testany"
        | "MPI_Testsome" => Class::WaitMany,
        _ => posted_form(name).unwrap_or(Class::Mpi),
    }
}

/// The class of a nonblocking collective (MPI_Ibarrier, MPI_Iallreduce, ...) from its blocking
/// form's (MPI_Barrier, MPI_Allreduce: the name capitalised after the I).
fn posted_form(name: &str) -> Option<Class> {
    let rest = name.strip_prefix("MPI_I")?;
    let first = rest.chars().next().filter(char::is_ascii_lowercase)?;
    let blocking = format!("MPI_{}{}", first.to_ascii_uppercase(), &rest[1..]);
    match classify(&blocking, RegionKind::Mpi) {
        Class::Barrier => Some(Class::IBarrier),
        Class::NxN => Some(Class::INxN),
        Class::OneToN => Some(Class::IOneToN),
        Class::NToOne => Some(Class::INToOne),
        _ => None,
    }
}

impl Class {
    /// A nonblocking collective's blocking form (its pattern's), `None` for any other routine.
    fn completed_as(self) -> Option<Class> {
        match self {
            Class::IBarrier => Some(Class::Barrier),
            Class::INxN => Some(Class::NxN),
            Class::IOneToN => Some(Class::OneToN),
            Class::INToOne => Some(Class::NToOne),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    region: u32,
    cp: u32,
    enter: i64,
    class: Class,
    /// Its pattern when it waits with no partner (moves no traced bytes).
    alone: Option<Pattern>,
    /// A wait on descriptors ([`is_descriptor_wait`]).
    poll: bool,
}

/// A synchronisation the location takes part in, its account taken at the routine's exit.
#[derive(Debug, Clone, Copy)]
enum SyncWith {
    Rank(u32, Option<Sync>),
    /// A barrier or N×N collective on a communicator ([`EVERYONE`]: MPI_Init).
    Collective(u32, Option<Sync>),
    /// A stream write or read.
    Stream,
}

/// A location's account at the exit of a synchronising routine.
#[derive(Debug, Clone)]
struct Snap {
    /// The synchronisation and the routine (`None`: not one its partners name alike).
    start: Option<Start>,
    exit: i64,
    acc: Account,
}

#[derive(Debug, Default)]
struct Loc {
    stack: Vec<Frame>,
    last_t: i64,
    /// Whether it had an event that was accounted (its time before is nobody's).
    started: bool,
    acc: Account,
    /// Account at the exit of the last synchronisation with each partner rank.
    pair: HashMap<u32, Snap>,
    /// Account at the exit of the last synchronising collective on each communicator (MPI_Init
    /// on [`EVERYONE`]).
    coll: Vec<(u32, Snap)>,
    /// Synchronisations of the open routine, recorded at its exit.
    pending: Vec<SyncWith>,
    /// The message of the open blocking send, for its late receiver.
    open_send: Option<u64>,
    /// When the partner of its latest wait found came (with causes), ns.
    wait_end: i64,
    /// Late-sender waiting already counted in the open routine: (its entry, counted until). A
    /// Waitall completing several receives waits once, until the latest send.
    counted: (i64, i64),
    /// Account when the thread last left a barrier or joined an OpenMP team (with causes).
    team: Option<Account>,
    /// Account at the exit of its last stream write or read (with causes).
    stream: Option<Account>,
    /// Send events seen: the next one's number (as `send_done` events number them).
    sends: u64,
    /// Collective events seen: the next one's number (as `coll_done` events number them).
    colls: u64,
    /// Stream writes seen: the next one's number (a parallel analysis's items name them).
    writes: u64,
    /// Its nonblocking sends not completed yet, oldest first: (number, message).
    nonblocking: VecDeque<(u64, u64)>,
    /// Its latest receives: (time, the send event's time), newest last.
    recent: VecDeque<(i64, i64)>,
    /// Its latest calls that posted a receive: (entry, call path, with causes the account at
    /// the entry for the latest [`POST_ACCOUNTS`]), newest last.
    posts: VecDeque<(i64, u32, Option<Account>)>,
    /// The post time of its next receive (its `recv_posted` event).
    posted: Option<i64>,
    /// Its last blocking probe, until its next receive: (entry, exit, call path).
    probe: Option<(i64, i64, u32)>,
    /// When it last had a stream event (`None`: never).
    streamed: Option<i64>,
    /// Its last wait on descriptors that moved no traced bytes, until its next stream read
    /// (whose write may have woken it) or its next such wait.
    poll: Option<Read>,
}

impl Loc {
    fn cp(&self) -> u32 {
        self.stack.last().map_or(NONE, |f| f.cp)
    }

    /// The innermost open MPI routine.
    fn routine(&self) -> Option<Frame> {
        self.stack
            .iter()
            .rev()
            .find(|f| f.class != Class::Other)
            .copied()
    }

    /// Its last synchronising collective ended by `at` on a communicator `on` accepts.
    fn last_coll(&self, at: i64, on: impl Fn(u32) -> bool) -> Option<&Snap> {
        self.coll
            .iter()
            .filter(|(c, s)| s.exit <= at && on(*c))
            .map(|(_, s)| s)
            .max_by_key(|s| s.exit)
    }

    /// The account since the last synchronisation with rank `peer`: their last message, or
    /// their last collective on a communicator holding both, whichever is later (`None`: an
    /// unranked peer, any collective).
    fn since(&self, peer: Option<u32>, comms: &Comms) -> Account {
        self.at_since(&self.acc, i64::MAX, peer, comms)
    }

    /// [`Loc::since`] of an account the location had at time `at` (`acc`): from its last
    /// synchronisation before then (one since, a message received after a receive was
    /// posted, comes after the interval that post ends).
    fn at_since(&self, acc: &Account, at: i64, peer: Option<u32>, comms: &Comms) -> Account {
        let pair = peer
            .and_then(|p| self.pair.get(&p))
            .filter(|s| s.exit <= at);
        let coll = self.last_coll(at, |c| peer.is_none_or(|p| comms.holds(c, p)));
        since_snap(acc, pair, coll)
    }

    /// Its accounts since its last synchronisation with each rank it synchronised with after
    /// collective `coll`, and since its last collective on each communicator it synchronised
    /// on after it ([`Pairs`]).
    fn pairs_since(&self, coll: Option<&Snap>, comms: &Comms) -> Pairs {
        let after = coll.map_or(i64::MIN, |c| c.exit);
        let mut out: Pairs = self
            .pair
            .iter()
            .filter(|(_, s)| s.exit > after)
            .map(|(&r, _)| (r, self.since(Some(r), comms)))
            .chain(
                self.coll
                    .iter()
                    .filter(|(c, s)| s.exit > after && *c < COMM_KEY)
                    .map(|(c, s)| (COMM_KEY | c, since_snap(&self.acc, None, Some(s)))),
            )
            .collect();
        out.sort_unstable_by_key(|p| p.0);
        out
    }
}

/// `acc` since the later of two synchronisations' accounts, the interval beginning there.
fn since_snap(acc: &Account, a: Option<&Snap>, b: Option<&Snap>) -> Account {
    let snap = match (a, b) {
        (Some(p), Some(c)) => Some(if p.exit >= c.exit { p } else { c }),
        (p, c) => p.or(c),
    };
    let mut out = acc.since(snap.map(|s| &s.acc));
    out.start = snap.and_then(|s| s.start);
    out
}

/// The communicator of MPI_Init's synchronisation: every rank.
const EVERYONE: u32 = u32::MAX;

/// The communicators' members, to tell which collectives synchronised two ranks: sorted world
/// ranks of each, and which communicators hold every member of which (found once a pair).
#[derive(Debug, Default)]
pub struct Comms {
    sorted: Vec<Vec<u32>>,
    covers: HashMap<(u32, u32), bool>,
}

impl Comms {
    fn new(comm_ranks: &[Vec<u32>]) -> Comms {
        let sorted = comm_ranks
            .iter()
            .map(|r| {
                let mut v = r.clone();
                v.sort_unstable();
                v
            })
            .collect();
        Comms {
            sorted,
            covers: HashMap::new(),
        }
    }

    /// Whether communicator `c` holds world rank `rank`.
    fn holds(&self, c: u32, rank: u32) -> bool {
        c == EVERYONE
            || self
                .sorted
                .get(c as usize)
                .is_some_and(|v| v.binary_search(&rank).is_ok())
    }

    /// Whether communicator `d` holds every member of `c`.
    fn covers(&mut self, d: u32, c: u32) -> bool {
        if d == c || d == EVERYONE {
            return true;
        }
        let (Some(dm), Some(cm)) = (self.sorted.get(d as usize), self.sorted.get(c as usize))
        else {
            return false;
        };
        if dm.len() < cm.len() {
            return false;
        }
        *self
            .covers
            .entry((d, c))
            .or_insert_with(|| cm.iter().all(|r| dm.binary_search(r).is_ok()))
    }
}

/// A matched message between its send and its receive (and, for a late receiver, the send's
/// exit).
#[derive(Debug)]
struct Msg {
    sender: u32,
    send_enter: i64,
    send_cp: u32,
    /// The send event's time, and the receiving rank.
    sent: i64,
    peer: u32,
    /// A blocking send, or a nonblocking one whose completion may come (a late receiver).
    blocking: bool,
    nonblocking: bool,
    /// The sender's account since it last synchronised with the receiver, at the send.
    acc: Account,
    /// The call that waited for the send to complete, once it returned: (location, entry,
    /// call path, return) — the blocking send, or the Wait/Test completing a nonblocking one.
    done: Option<(u32, i64, u32, i64)>,
    /// A blocking receive seen: (receiver, its entry, its call path, its account, whether the
    /// receiver received a message sent after this one while it waited).
    recv: Option<(u32, i64, u32, Account, bool)>,
}

#[derive(Debug)]
struct Member {
    loc: u32,
    rank: Option<u32>,
    enter: i64,
    exit: i64,
    cp: u32,
    acc: Account,
    /// Its accounts since its last synchronisation with each rank it synchronised with after
    /// its last collective, by rank (`acc` stands for every other rank).
    pairs: Pairs,
}

impl Member {
    /// Its account since the last message exchanged with `other` after its last collective.
    fn pair_with(&self, other: &Member) -> Option<&Account> {
        other
            .rank
            .and_then(|r| self.pairs.iter().find(|p| p.0 == r))
            .map(|p| &p.1)
    }

    /// Of the communicators it synchronised on after its last collective that hold `other`,
    /// the one it synchronised on last: (its [`Pairs`] key, its account since then).
    fn comm_with(&self, other: &Member, comms: &Comms) -> Option<(u32, &Account)> {
        let r = other.rank?;
        self.pairs
            .iter()
            .filter(|p| p.0 & COMM_KEY != 0 && comms.holds(p.0 & !COMM_KEY, r))
            .max_by_key(|p| p.1.start.map_or(i64::MIN, |s| s.exit))
            .map(|p| (p.0, &p.1))
    }
}

/// The accounts of late member `late` and waiting member `w` since they last synchronised: since
/// their last message after the last collective when it synchronised them, else since the last
/// collective. A message synchronised them when both name it, the two routines were in it at
/// once (one waited for the other), and neither routine kept waiting after the other left it
/// (an MPI_Waitall that went on waiting for a third rank). A message neither waited for (sent
/// long before its receive was entered) tells neither where the other was: the late one's time
/// between is work (or waiting) of its own, as Scalasca counts only wait states as
/// synchronisations.
///
/// A collective on a smaller communicator holding both after the last collective (a split
/// half's) synchronised them too: the later of it and that message begins the interval.
fn since_synchronised<'a>(
    late: &'a Member,
    w: &'a Member,
    comms: &Comms,
) -> (&'a Account, &'a Account) {
    let met = |x: Start, y: Start| {
        x.sync == y.sync
            && x.enter.max(y.enter) < x.exit.min(y.exit)
            && x.waited_until <= y.exit
            && y.waited_until <= x.exit
    };
    let msg = match (late.pair_with(w), w.pair_with(late)) {
        (Some(a), Some(b)) => match (a.start, b.start) {
            (Some(x), Some(y)) if met(x, y) => Some((a, b)),
            _ => None,
        },
        _ => None,
    };
    let coll = late.comm_with(w, comms).and_then(|(key, a)| {
        let b = w.pairs.iter().find(|p| p.0 == key).map(|p| &p.1)?;
        Some((a, b))
    });
    let exit = |p: &Option<(&Account, &Account)>| {
        p.and_then(|(a, _)| a.start.map(|s| s.exit))
            .unwrap_or(i64::MIN)
    };
    match (msg, coll) {
        (Some(m), Some(c)) => {
            if exit(&Some(m)) >= exit(&Some(c)) {
                m
            } else {
                c
            }
        }
        (m, c) => m.or(c).unwrap_or((&late.acc, &w.acc)),
    }
}

/// A nonblocking collective instance every member has posted: its waits come at its waiting
/// members' completions.
#[derive(Debug)]
struct AllPosted {
    pattern: Pattern,
    /// The member the others waited for (its entry: its post's).
    late: Member,
    /// The members that waited for it, by location, whose completion has not come yet (this
    /// replay's own only).
    waiting: Vec<u32>,
}

#[derive(Debug, Default)]
struct Instance {
    /// The members met, and of another block's members (a parallel analysis) those its
    /// [`Summary`] names.
    members: Vec<Member>,
    /// Members arrived: those met and those the other blocks' summaries count.
    count: usize,
}

/// One block's members of a collective instance in a parallel analysis ([`super::parallel`]),
/// reduced to what the other blocks' waits need: the members that may be the instance's late
/// one. It stands, in the other blocks' replays, at the place of the block's last member's
/// collective event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The communicator.
    pub comm: u32,
    /// The instance: the k-th collective on the communicator at each member.
    pub instance: u32,
    /// The block's members.
    pub members: u32,
    /// The routine of the block's last member (its class names the pattern).
    pub region: u32,
    /// The root its last member named.
    pub root: Option<u32>,
    /// (location, entry) of the latest member, the root and the earliest member but the root,
    /// each once, by location.
    pub candidates: Vec<(u32, i64)>,
}

impl Summary {
    /// The candidates of `members` ((location, world rank, entry), in arrival order) when the
    /// last of them named `root`: the latest to enter, the root, and the earliest but the root
    /// (as [`Replay`] chooses the late member of a completed instance).
    pub fn candidates(members: &[(u32, Option<u32>, i64)], root: Option<u32>) -> Vec<(u32, i64)> {
        let is_root = |m: &&(u32, Option<u32>, i64)| m.1.is_some() && m.1 == root;
        let mut may: Vec<(u32, i64)> = Vec::new();
        may.extend(
            members
                .iter()
                .max_by_key(|x| (x.2, x.0))
                .map(|x| (x.0, x.2)),
        );
        may.extend(members.iter().find(is_root).map(|x| (x.0, x.2)));
        may.extend(
            members
                .iter()
                .filter(|x| !is_root(x))
                .min_by_key(|x| (x.2, x.0))
                .map(|x| (x.0, x.2)),
        );
        may.sort_unstable();
        may.dedup_by_key(|m| m.0);
        may
    }
}

/// A stream write not yet read to its end.
#[derive(Debug)]
struct Write {
    /// Bytes written to the stream so far, this write's included.
    end: u64,
    loc: u32,
    enter: i64,
    cp: u32,
    /// The writer's account since its last stream operation.
    acc: Account,
}

/// A stream read whose write has not come yet.
#[derive(Debug)]
struct Read {
    loc: u32,
    enter: i64,
    cp: u32,
    t: i64,
    end: u64,
    acc: Account,
    /// A wait on descriptors its thread's read followed: it waited for the write only if
    /// the write began before it returned.
    poll: bool,
}

/// An object's latest releases: (location, call path, time) of the last, and of the last by a
/// thread other than the last's.
#[derive(Debug, Clone, Default)]
struct Releases {
    last: Option<(u32, u32, i64)>,
    other: Option<(u32, u32, i64)>,
    /// Of a barrier (with causes): the last arrival's account since it last left a barrier or
    /// joined an OpenMP team.
    arrival: Option<Account>,
    /// Of a lock (with causes): the account of the holder's hold that ended with `last`, and
    /// with `other`.
    held: Option<Account>,
    held_other: Option<Account>,
    /// Of a read-write lock: the last release of a hold for writing, and (with causes) that
    /// hold's account: what a reader waits for.
    writer: Option<(u32, u32, i64)>,
    held_writer: Option<Account>,
}

fn is_lock(kind: SyncKind) -> bool {
    matches!(
        kind,
        SyncKind::Mutex
            | SyncKind::RwLock
            | SyncKind::Spin
            | SyncKind::OmpCritical
            | SyncKind::OmpAtomic
            | SyncKind::OmpLock
            | SyncKind::OmpOrdered
    )
}

/// A location's hold of a lock.
#[derive(Debug)]
struct Hold {
    /// Acquires not released yet (a recursive mutex's, a reader's repeated read lock).
    depth: u32,
    /// A read-write lock held for reading.
    shared: bool,
    /// The location's account at the first acquire (with causes).
    acc: Option<Account>,
}

/// The replay's state and results.
pub struct Replay {
    setup: Setup,
    locs: Vec<Loc>,
    classes: Vec<Option<(Class, Option<Pattern>, bool)>>,
    /// Call paths met.
    pub callpaths: Callpaths,
    msgs: HashMap<u64, Msg>,
    coll_count: HashMap<(u32, u32), u32>,
    instances: HashMap<(u32, u32), Instance>,
    comms: Comms,
    /// Nonblocking collectives posted and not completed: (location, its collective number) →
    /// (instance, its blocking form's class).
    posts: HashMap<(u32, u64), ((u32, u32), Class)>,
    /// Nonblocking instances every member has posted, until their waiting members complete.
    posted: HashMap<(u32, u32), AllPosted>,
    /// Completions of nonblocking instances not every member had posted yet: (the posting
    /// location, the completing call as a member).
    early: HashMap<(u32, u32), Vec<(u32, Member)>>,
    objects: HashMap<(u32, u32), Releases>,
    /// (location, lock) → its hold of the lock.
    holding: HashMap<(u32, u32), Hold>,
    /// Each stream's writes whose last byte is not read yet, in order.
    writes: HashMap<u64, std::collections::VecDeque<Write>>,
    /// Each stream's reads that came before the write holding their last byte.
    reads: HashMap<u64, std::collections::VecDeque<Read>>,
    /// (process, thread index) → location.
    loc_of: HashMap<(u32, u32), u32>,
    /// Each rank's matched messages not received yet: (send time, message).
    inbound: HashMap<u32, BTreeSet<(i64, u64)>>,
    /// (pattern, location, call path) → (wait ns, count).
    pub waits: BTreeMap<(Pattern, u32, u32), (i64, u64)>,
    /// (pattern, waiting location, cause location, cause call path, kind) → delay ns.
    pub causes: BTreeMap<(Pattern, u32, u32, u32, CauseKind), f64>,
    /// Each wait counted, in the order found, when kept (`Some`; `None`: not kept).
    pub found: Option<Vec<FoundWait>>,
    /// When kept (with causes): the intervals of the waits and of their direct causes, where
    /// to look for what ran (the samples taken there).
    pub spans: Option<Spans>,
    /// In a parallel analysis with causes: this block's locations and its items for and from
    /// the other blocks (`None`: every location is this replay's).
    pub link: Option<Link>,
}

/// What a block of a parallel analysis with causes ([`super::parallel`]) gives the others and
/// takes from them: the late location's account since the last synchronisation, which only
/// the late location's block keeps.
///
/// - at a send to a rank of another block, the sender's call path and account since it last
///   synchronised with the receiver ([`Item::Send`]), for a late sender there;
/// - at a receive from a rank of another block, where the receive was posted, with the
///   receiver's account ([`Item::Post`]), for a late receiver at the sender;
/// - at a stream write, the writer's call path and account since its last stream operation
///   ([`Item::Send`] under [`Key::Write`]), to the blocks reading the stream (a stream wait's
///   late location);
/// - when the block's last member of a collective instance has arrived, the call path and
///   account of its members that may be the instance's late one ([`Item::Coll`]: the latest
///   arrival, the root, the earliest other than the root), to every other block with members.
///
/// An item is made when its event is replayed and needed when an event at the same place or
/// later in the merged order is ([`Replay::needs`]): the blocks never wait for each other in
/// a cycle.
#[derive(Debug, Default)]
pub struct Link {
    /// Whether each location is this block's.
    pub own: Vec<bool>,
    /// Each location's block.
    pub loc_block: Vec<u32>,
    /// Each world rank's block.
    pub rank_block: HashMap<u32, u32>,
    /// This block.
    pub me: u32,
    /// Per communicator: the other blocks with members, and this block's members.
    pub comm_blocks: Vec<(Vec<u32>, usize)>,
    /// Per traced stream: the blocks whose locations read it.
    pub stream_blocks: HashMap<u64, Vec<u32>>,
    /// Items from the other blocks, not used yet.
    pub inbox: HashMap<Key, Item>,
    /// Items for other blocks: (block, key, item).
    pub outbox: Vec<(u32, Key, Item)>,
}

impl Link {
    /// The link of block `me`, its locations `own`, each location's block and the blocks of
    /// the ranks; `comm_ranks` as in [`Setup`].
    pub fn new(
        me: u32,
        own: Vec<bool>,
        loc_block: Vec<u32>,
        rank_block: HashMap<u32, u32>,
        comm_ranks: &[Vec<u32>],
    ) -> Link {
        let comm_blocks = comm_ranks
            .iter()
            .map(|ranks| {
                let blocks: BTreeSet<u32> = ranks
                    .iter()
                    .filter_map(|r| rank_block.get(r).copied())
                    .collect();
                let mine = ranks
                    .iter()
                    .filter(|r| rank_block.get(r) == Some(&me))
                    .count();
                (blocks.into_iter().filter(|&b| b != me).collect(), mine)
            })
            .collect();
        Link {
            own,
            loc_block,
            rank_block,
            me,
            comm_blocks,
            stream_blocks: HashMap::new(),
            inbox: HashMap::new(),
            outbox: Vec::new(),
        }
    }

    /// Whether this block's locations read `stream`.
    pub fn reads(&self, stream: u64) -> bool {
        self.stream_blocks
            .get(&stream)
            .is_some_and(|b| b.contains(&self.me))
    }
}

/// An item's name: a message's number, or a collective instance (communicator, number) and
/// the block that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// The send of a message.
    Send(u64),
    /// The receive of a message.
    Post(u64),
    /// A block's members of a collective instance: (communicator, instance, block).
    Coll(u32, u32, u32),
    /// A stream write: (writer, its number among the writer's stream writes).
    Write(u32, u64),
}

/// Where a receive was posted (a late receiver's late location): (receiver, post time, call
/// path, the receiver's account since it last synchronised with the sender, whether the
/// receiver received a message sent after this one while it waited).
pub type Posted = (u32, i64, u32, Account, bool);

/// A collective member's accounts since it last synchronised with each rank it synchronised
/// with after its last collective, and since its last collective on each smaller communicator
/// it synchronised on after it: (key, account), by key; the key a world rank, or [`COMM_KEY`]
/// with the communicator.
pub type Pairs = Vec<(u32, Account)>;

/// In a [`Pairs`] key, the bit that marks a communicator (world ranks stay below it).
pub const COMM_KEY: u32 = 1 << 31;

/// A member of a collective instance that may be its late one: (location, call path, its
/// account since its last collective, [`Pairs`]).
pub type Candidate = (u32, u32, Account, Pairs);

/// An item ([`Link`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The sender's call path at the send and its account.
    Send(u32, Account),
    /// Where the receive was posted (`None`: the receive is no late receiver's).
    Post(Option<Posted>),
    /// Members that may be late: (location, call path, account, accounts by rank).
    Coll(Vec<Candidate>),
}

/// The intervals of the waits and of their direct causes ([`Replay::spans`]), ns.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    /// (pattern, location, call path) → each wait's (start, end).
    pub waits: BTreeMap<(Pattern, u32, u32), Vec<(i64, i64)>>,
    /// (pattern, waiting location, cause location, cause call path) → per wait, the intervals
    /// whose excess its direct cause is, and the delay.
    pub causes: BTreeMap<(Pattern, u32, u32, u32), Vec<CauseSpan>>,
}

/// Where a wait's direct cause came from: the intervals the delay analysis compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CauseSpan {
    /// The late location's interval, ns: (after, up to).
    pub late: (i64, i64),
    /// The waiting location's own interval since the same synchronisation, whose time in the
    /// same call path the late location's is compared with (`None`: nothing to compare, as a
    /// lock holder's hold or a joined thread's life).
    pub own: Option<(i64, i64)>,
    /// The delay of this wait that the cause is, ns.
    pub delay_ns: f64,
}

/// The interval an account covers.
fn span(a: &Account) -> (i64, i64) {
    (a.from, a.at)
}

/// The intervals of a wait's direct causes ([`CauseSpan`] without the delay): the late
/// location's, and the waiting one's.
type Intervals = Option<((i64, i64), Option<(i64, i64)>)>;

/// One wait, as [`Replay::found`] keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundWait {
    /// The pattern.
    pub pattern: Pattern,
    /// The waiting location.
    pub location: u32,
    /// Where it waited.
    pub callpath: u32,
    /// When the wait began, ns.
    pub start: i64,
    /// Time waited, ns.
    pub wait_ns: i64,
    /// The location it waited for and that location's call path when it arrived (`None`: not
    /// known, a lock whose holder was not seen).
    pub late: Option<(u32, u32)>,
    /// Its causes (with causes): cause location, cause call path, kind, ns.
    pub causes: Vec<Share>,
}

impl Replay {
    /// A replay of `setup.loc_rank.len()` locations.
    pub fn new(setup: Setup) -> Replay {
        let n = setup.loc_rank.len();
        Replay {
            locs: (0..n).map(|_| Loc::default()).collect(),
            classes: Vec::new(),
            callpaths: Callpaths::default(),
            msgs: HashMap::new(),
            coll_count: HashMap::new(),
            instances: HashMap::new(),
            comms: Comms::new(&setup.comm_ranks),
            posts: HashMap::new(),
            posted: HashMap::new(),
            early: HashMap::new(),
            objects: HashMap::new(),
            holding: HashMap::new(),
            writes: HashMap::new(),
            reads: HashMap::new(),
            loc_of: (0..n)
                .map(|i| ((setup.loc_process[i], setup.loc_thread[i]), i as u32))
                .collect(),
            inbound: HashMap::new(),
            waits: BTreeMap::new(),
            causes: BTreeMap::new(),
            found: None,
            spans: None,
            link: None,
            setup,
        }
    }

    /// Whether location `li` is this replay's (not another block's).
    fn own(&self, li: usize) -> bool {
        self.link.as_ref().is_none_or(|k| k.own[li])
    }

    /// The items (and the blocks they come from) that [`Replay::event`] needs in its link's
    /// inbox for this event: a message's send or receive at another block's location whose
    /// partner is this block's, and the other blocks' members of a collective instance this
    /// event completes.
    pub fn needs(&self, loc: u32, kind: &EventKind) -> Vec<(Key, u32)> {
        let Some(k) = &self.link else {
            return Vec::new();
        };
        let li = loc as usize;
        let mine = |peer: &u32| k.rank_block.get(peer) == Some(&k.me);
        match *kind {
            EventKind::Send {
                peer,
                message: Some(id),
                ..
            } if !k.own[li] && mine(&peer) => vec![(Key::Send(id), k.loc_block[li])],
            EventKind::Recv {
                peer,
                message: Some(m),
                ..
            } if !k.own[li] && mine(&peer) => vec![(Key::Post(m.id), k.loc_block[li])],
            EventKind::Collective {
                comm: Some(comm), ..
            } => {
                let Some((blocks, n)) = k.comm_blocks.get(comm as usize) else {
                    return Vec::new();
                };
                let size = self.setup.comm_ranks[comm as usize].len();
                if *n == 0 || size < 2 || self.locs[li].routine().is_none() {
                    return Vec::new();
                }
                let process = self.setup.loc_process[li];
                let n = self.coll_count.get(&(process, comm)).copied().unwrap_or(0);
                let have = self.instances.get(&(comm, n)).map_or(0, |i| i.count);
                if have + 1 < size {
                    return Vec::new();
                }
                blocks.iter().map(|&b| (Key::Coll(comm, n, b), b)).collect()
            }
            EventKind::StreamSend { stream, .. } if !k.own[li] && k.reads(stream) => {
                let n = self.locs[li].writes;
                vec![(Key::Write(loc, n), k.loc_block[li])]
            }
            _ => Vec::new(),
        }
    }

    /// Numbers location `loc`'s next send `n` (among its sends: a block that gets only
    /// some of another block's sends, [`super::parallel`]).
    pub fn set_next_send(&mut self, loc: u32, n: u64) {
        self.locs[loc as usize].sends = n;
    }

    /// Numbers location `loc`'s next stream write `n` (among its stream writes), as
    /// [`Replay::set_next_send`] its sends.
    pub fn set_next_write(&mut self, loc: u32, n: u64) {
        self.locs[loc as usize].writes = n;
    }

    /// The items [`Replay::summary`] needs for `s`: when it completes an instance, the other
    /// member blocks' candidates ([`Item::Coll`]).
    pub fn needs_summary(&self, s: &Summary) -> Vec<(Key, u32)> {
        let Some(k) = &self.link else {
            return Vec::new();
        };
        let Some((blocks, n)) = k.comm_blocks.get(s.comm as usize) else {
            return Vec::new();
        };
        let size = self
            .setup
            .comm_ranks
            .get(s.comm as usize)
            .map_or(0, |c| c.len());
        let have = self
            .instances
            .get(&(s.comm, s.instance))
            .map_or(0, |i| i.count);
        if *n == 0 || have + (s.members as usize) < size {
            return Vec::new();
        }
        blocks
            .iter()
            .map(|&b| (Key::Coll(s.comm, s.instance, b), b))
            .collect()
    }

    /// Another block's members of a collective instance ([`Summary`]), at the place of its
    /// last member's collective event: when they complete the instance, its waits.
    pub fn summary(&mut self, regions: &RegionTable, s: &Summary) {
        let (class, _, _) = self.class(regions, s.region);
        let size = self
            .setup
            .comm_ranks
            .get(s.comm as usize)
            .map_or(0, |c| c.len());
        let key = (s.comm, s.instance);
        let inst = self.instances.entry(key).or_default();
        for &(loc, enter) in &s.candidates {
            inst.members.push(Member {
                loc,
                rank: self.setup.loc_rank[loc as usize],
                enter,
                // never a waiting one here: another block's
                exit: enter,
                cp: NONE,
                acc: Account::default(),
                pairs: Vec::new(),
            });
        }
        inst.count += s.members as usize;
        if inst.count >= size {
            self.finish_instance(key, class, s.root);
        }
    }

    /// The call path location `loc` is in now ([`NONE`] outside every region).
    pub fn callpath_of(&self, loc: u32) -> u32 {
        self.locs[loc as usize].cp()
    }

    fn class(&mut self, regions: &RegionTable, r: u32) -> (Class, Option<Pattern>, bool) {
        let i = r as usize;
        if self.classes.len() <= i {
            self.classes.resize(i + 1, None);
        }
        *self.classes[i].get_or_insert_with(|| {
            let info = regions.get(r);
            let alone = alone(&info.name, info.kind);
            (
                classify(&info.name, info.kind),
                alone,
                alone == Some(Pattern::IoWait) && is_descriptor_wait(&info.name),
            )
        })
    }

    /// One event of the merged stream (in the stream's order).
    pub fn event(&mut self, regions: &RegionTable, loc: u32, t: i64, kind: EventKind) {
        let li = loc as usize;
        match kind {
            EventKind::Enter { region } => {
                self.account(li, t);
                let (class, alone, poll) = self.class(regions, region);
                let l = &mut self.locs[li];
                // the runtime's own work is apart from the user's call paths (a root of its own)
                let parent = if regions.get(region).kind == RegionKind::Runtime {
                    NONE
                } else {
                    l.cp()
                };
                let cp = self.callpaths.child(parent, region);
                l.stack.push(Frame {
                    region,
                    cp,
                    enter: t,
                    class,
                    alone,
                    poll,
                });
                if class == Class::PostRecv {
                    if l.posts.len() >= POSTS {
                        l.posts.pop_front();
                    }
                    let acc = self.setup.causes.then(|| l.acc.clone());
                    l.posts.push_back((t, cp, acc));
                    if let Some(i) = l.posts.len().checked_sub(POST_ACCOUNTS + 1) {
                        l.posts[i].2 = None;
                    }
                }
            }
            EventKind::Exit { region } => {
                self.account(li, t);
                self.exit(li, region, t);
            }
            EventKind::Send { message, peer, .. } => self.send_event(li, t, message, peer),
            EventKind::SendDone { thread, mode, send } => self.send_done(li, t, thread, mode, send),
            EventKind::CollDone { thread, collective } => self.coll_done(li, t, thread, collective),
            EventKind::RecvPosted { before_ns } => {
                self.locs[li].posted = Some(t - before_ns as i64);
            }
            EventKind::Recv { message, peer, .. } => {
                self.recv_event(li, t, peer, message.map(|m| m.id));
            }
            EventKind::Collective { comm, root, .. } => {
                self.collective(li, t, comm, root);
            }
            EventKind::Acquire {
                object,
                kind,
                wait_ns,
                holder,
                shared,
            } => {
                let kind = SyncKind::from_u8(kind);
                self.acquire(li, t, object, kind, wait_ns as i64, holder, shared);
                if is_lock(kind) {
                    // held from its first acquire to its last release (a recursive lock's
                    // inner ones hand nothing over)
                    let acc = self.setup.causes.then(|| self.locs[li].acc.clone());
                    let h = self.holding.entry((loc, object)).or_insert(Hold {
                        depth: 0,
                        shared,
                        acc,
                    });
                    h.depth += 1;
                }
                if self.setup.causes && matches!(kind, SyncKind::Barrier | SyncKind::OmpBarrier) {
                    let l = &mut self.locs[li];
                    l.team = Some(l.acc.clone());
                }
            }
            EventKind::Release { object, kind } => self.release(li, t, object, kind),
            EventKind::StreamSend { stream, end, .. } => {
                let l = &mut self.locs[li];
                l.streamed = Some(t);
                l.pending.push(SyncWith::Stream);
                let r = l.routine();
                let n = l.writes;
                l.writes += 1;
                let mut acc = if self.setup.causes {
                    l.acc.since(l.stream.as_ref())
                } else {
                    Account::default()
                };
                let mut cp = r.map_or(l.cp(), |f| f.cp);
                let own = self.own(li);
                if let Some(k) = &mut self.link {
                    let key = Key::Write(loc, n);
                    if own {
                        // the stream's readers in other blocks: the writer's place and account
                        let readers = k.stream_blocks.get(&stream).map_or(&[][..], |b| b);
                        for &b in readers.iter().filter(|&&b| b != k.me) {
                            k.outbox.push((b, key, Item::Send(cp, acc.clone())));
                        }
                    } else if let Some(Item::Send(c, a)) = k.inbox.remove(&key) {
                        (cp, acc) = (c, a);
                    }
                }
                let w = Write {
                    end,
                    loc,
                    enter: r.map_or(t, |f| f.enter),
                    cp,
                    acc,
                };
                let q = self.writes.entry(stream).or_default();
                // a stream whose reader is not traced keeps only its latest writes
                if q.len() >= MAX_PENDING {
                    q.pop_front();
                }
                q.push_back(w);
                self.reads_fed(stream);
            }
            EventKind::StreamRecv { stream, end, .. } => {
                self.locs[li].streamed = Some(t);
                self.locs[li].pending.push(SyncWith::Stream);
                self.stream_read(li, t, stream, end);
            }
            EventKind::OmpTeam { .. } if self.setup.causes => {
                self.account(li, t);
                let l = &mut self.locs[li];
                l.team = Some(l.acc.clone());
            }
            _ => {}
        }
    }

    /// A synchronization object released (posted, signalled) at location `li`: its latest
    /// releases, and a lock's hold that ended.
    fn release(&mut self, li: usize, t: i64, object: u32, kind: u8) {
        let loc = li as u32;
        self.account(li, t);
        let process = self.setup.loc_process[li];
        let kind = SyncKind::from_u8(kind);
        let hold = match self.holding.get_mut(&(loc, object)) {
            // an inner release of a recursive hold: the lock stays held
            Some(h) if h.depth > 1 => {
                h.depth -= 1;
                return;
            }
            _ => self.holding.remove(&(loc, object)),
        };
        // a read-write lock's writer (its readers exclude no other reader; a release
        // whose acquire was not seen: a writer's)
        let writer = kind == SyncKind::RwLock && !hold.as_ref().is_some_and(|h| h.shared);
        let l = &self.locs[li];
        let here = (loc, l.cp(), t);
        let barrier = matches!(kind, SyncKind::Barrier | SyncKind::OmpBarrier);
        let arrival = (barrier && self.setup.causes).then(|| l.acc.since(l.team.as_ref()));
        let held = hold.and_then(|h| h.acc).map(|a| l.acc.since(Some(&a)));
        let r = self.objects.entry((process, object)).or_default();
        if let Some(last) = r.last.filter(|l| l.0 != loc) {
            r.other = Some(last);
            r.held_other = r.held.take();
        }
        if writer {
            r.writer = Some(here);
            r.held_writer = held.clone();
        }
        r.last = Some(here);
        r.arrival = arrival;
        r.held = held;
    }

    /// An MPI send at location `li`: a nonblocking or blocking send's bookkeeping, the message
    /// as its receive will find it (with causes, what its sender's time went to), and, with
    /// blocks, the send's call path sent to or taken from the receiver's block.
    fn send_event(&mut self, li: usize, t: i64, message: Option<u64>, peer: u32) {
        let loc = li as u32;
        let l = &mut self.locs[li];
        l.pending
            .push(SyncWith::Rank(peer, message.map(Sync::Message)));
        let n = l.sends;
        l.sends += 1;
        let Some(id) = message else { return };
        let r = l.routine();
        let blocking = r.is_some_and(|f| f.class == Class::BlockingSend);
        // a send that is not a blocking call's is a nonblocking (or started) one
        let nonblocking =
            !blocking && r.is_some_and(|f| matches!(f.class, Class::Mpi | Class::PostRecv));
        if blocking {
            l.open_send = Some(id);
        }
        if nonblocking {
            l.nonblocking.push_back((n, id));
            if l.nonblocking.len() > MAX_PENDING {
                let (_, old) = l.nonblocking.pop_front().expect("front");
                if self.msgs.get(&old).is_some_and(|m| m.recv.is_some()) {
                    self.msgs.remove(&old);
                }
            }
        }
        let own = self.own(li);
        let l = &self.locs[li];
        let mut send_cp = r.map_or(l.cp(), |f| f.cp);
        let mut acc = if self.setup.causes && own {
            l.since(Some(peer), &self.comms)
        } else {
            Account::default()
        };
        if let Some(k) = &mut self.link {
            match (own, k.rank_block.get(&peer).copied()) {
                (true, Some(b)) if b != k.me => {
                    k.outbox
                        .push((b, Key::Send(id), Item::Send(send_cp, acc.clone())));
                }
                (false, _) => {
                    if let Some(Item::Send(cp, a)) = k.inbox.remove(&Key::Send(id)) {
                        (send_cp, acc) = (cp, a);
                    }
                }
                _ => {}
            }
        }
        self.inbound.entry(peer).or_default().insert((t, id));
        self.msgs.insert(
            id,
            Msg {
                sender: loc,
                send_enter: r.map_or(t, |f| f.enter),
                send_cp,
                sent: t,
                peer,
                blocking,
                nonblocking,
                acc,
                done: None,
                recv: None,
            },
        );
    }

    /// Time since the location's last event goes to its current call path (the root's
    /// [`NONE`] when no measured call is open: a program measured only in its MPI or thread
    /// calls computes there).
    fn account(&mut self, li: usize, t: i64) {
        let own = self.own(li);
        let l = &mut self.locs[li];
        if self.setup.causes && own && l.started && t > l.last_t {
            *l.acc.time.entry(l.cp()).or_insert(0) += t - l.last_t;
        }
        l.started = true;
        l.last_t = l.last_t.max(t);
        l.acc.at = l.last_t;
    }

    fn exit(&mut self, li: usize, region: u32, t: i64) {
        let l = &mut self.locs[li];
        let Some(i) = l.stack.iter().rposition(|f| f.region == region) else {
            return;
        };
        let f = l.stack[i];
        l.stack.truncate(i);
        // a sleep, or a wait on descriptors that got no traced bytes (an uninstrumented
        // program's poll, an accept of a client the runtime does not trace): the whole call
        if let Some(p) = f.alone {
            if l.streamed.is_none_or(|s| s < f.enter) {
                if f.poll {
                    // its pattern waits for the thread's next read (a stream wait if bytes
                    // written before it returned woke it); a poll before it had none
                    let acc = if self.setup.causes {
                        l.acc.since(l.stream.as_ref())
                    } else {
                        Account::default()
                    };
                    let read = Read {
                        loc: li as u32,
                        enter: f.enter,
                        cp: f.cp,
                        t,
                        end: 0,
                        acc,
                        poll: true,
                    };
                    if let Some(old) = l.poll.replace(read) {
                        self.alone(Pattern::IoWait, old.loc, old.cp, (old.enter, old.t));
                    }
                } else {
                    self.alone(p, li as u32, f.cp, (f.enter, t));
                }
            }
        }
        let l = &mut self.locs[li];
        if f.class == Class::Other {
            return;
        }
        if f.class == Class::Init {
            l.pending
                .push(SyncWith::Collective(EVERYONE, Some(Sync::Init)));
        }
        if f.class == Class::Probe {
            l.probe = Some((f.enter, t, f.cp));
        }
        // the blocking send's own exit (not that of a routine measured inside it: MPJ
        // Express's socket writes inside its Ssend)
        if f.class == Class::BlockingSend {
            if let Some(id) = l.open_send.take() {
                self.send_exit(id, (li as u32, f.enter, f.cp, t));
            }
        }
        let own = self.own(li);
        let l = &mut self.locs[li];
        if self.setup.causes && own {
            let snap = |sync: Option<Sync>, acc: &Account| Snap {
                start: sync.map(|sync| Start {
                    sync,
                    enter: f.enter,
                    exit: t,
                    cp: f.cp,
                    waited_until: if l.wait_end > f.enter {
                        l.wait_end
                    } else {
                        i64::MIN
                    },
                }),
                exit: t,
                acc: acc.clone(),
            };
            for s in std::mem::take(&mut l.pending) {
                match s {
                    SyncWith::Rank(r, sync) => {
                        l.pair.insert(r, snap(sync, &l.acc));
                    }
                    SyncWith::Collective(c, sync) => {
                        let snap = snap(sync, &l.acc);
                        match l.coll.iter_mut().find(|x| x.0 == c) {
                            Some(x) => x.1 = snap,
                            None => l.coll.push((c, snap)),
                        }
                    }
                    SyncWith::Stream => l.stream = Some(l.acc.clone()),
                }
            }
        } else {
            l.pending.clear();
        }
    }

    /// A receive event at `t` from `peer`, of message `id` (`None`: an untraced sender's).
    fn recv_event(&mut self, li: usize, t: i64, peer: u32, id: Option<u64>) {
        let l = &mut self.locs[li];
        l.pending.push(SyncWith::Rank(peer, id.map(Sync::Message)));
        let posted = l.posted.take();
        let probe = l.probe.take();
        let Some(id) = id else { return };
        if !self.own(li) {
            self.others_recv(id);
            return;
        }
        let post = self.recv(li, t, id, posted, probe);
        if let Some(k) = &mut self.link {
            if let Some(b) = k.rank_block.get(&peer).copied().filter(|&b| b != k.me) {
                k.outbox.push((b, Key::Post(id), Item::Post(post)));
            }
        }
    }

    /// A message received at `t`; `posted`: when its receive was posted, if not at the entry
    /// of a blocking receive (an MPI_Irecv or MPI_Start: its `recv_posted`); `probe`: the
    /// location's blocking probe before the receive (entry, exit, call path), the message's
    /// when its send began before the probe returned: the receive waits there.
    /// Returns where the receive was posted when the message's sender waits for it (a late
    /// receiver's late location, for the sender's block in a parallel analysis).
    fn recv(
        &mut self,
        li: usize,
        t: i64,
        id: u64,
        posted: Option<i64>,
        probe: Option<(i64, i64, u32)>,
    ) -> Option<Posted> {
        let mut m = self.msgs.remove(&id)?;
        let probe = probe.filter(|&(_, exit, _)| m.send_enter <= exit);
        let inbound = self.inbound.get_mut(&m.peer);
        // a message sent to this rank before the awaited one and not received yet
        let earlier = inbound.is_some_and(|q| {
            q.remove(&(m.sent, id));
            q.first().is_some_and(|&(sent, _)| sent < m.sent)
        });
        let l = &mut self.locs[li];
        // while the message waited, its receiver received one sent after it
        let overtaken = l
            .recent
            .iter()
            .any(|&(at, sent)| at > m.send_enter && sent > m.sent);
        l.recent.push_back((t, m.sent));
        if l.recent.len() > RECENT {
            l.recent.pop_front();
        }
        let mut r = l.routine()?;
        // a probed message: the receive waits in the probe (until its return), and is posted
        // at the probe's entry
        let mut to = m.send_enter.min(t);
        if let Some((enter, exit, cp)) = probe {
            r = Frame {
                cp,
                enter,
                class: Class::BlockingRecv,
                ..r
            };
            to = to.min(exit);
        }
        let sender_rank = self.setup.loc_rank[m.sender as usize];
        let acc = if self.setup.causes {
            l.since(sender_rank, &self.comms)
        } else {
            Account::default()
        };
        // late sender: the receive (or the wait completing it) began before the send did;
        // from the entry, or from where an earlier receive of the same call was counted to
        let from = match l.counted {
            (enter, until) if enter == r.enter => until.max(r.enter),
            _ => r.enter,
        };
        let d = to - from;
        if d > 0 {
            self.locs[li].counted = (r.enter, to);
            self.wait(
                if earlier && r.class != Class::WaitMany {
                    Pattern::LateSenderWrongOrder
                } else {
                    Pattern::LateSender
                },
                li as u32,
                r.cp,
                (from, if probe.is_some() { to } else { t }),
                d,
                (m.sender, m.send_cp),
                &m.acc,
                &acc,
            );
        }
        // where the receive was posted, for a late receiver: a blocking receive's entry, or
        // the MPI_Irecv (MPI_Start) call its recv_posted names (the completing call's path
        // when that call is no longer kept)
        let post = match (r.class, posted) {
            (Class::BlockingRecv, _) => Some((r.enter, r.cp, acc)),
            (_, Some(p)) => {
                let l = &self.locs[li];
                let at = l.posts.iter().rev().find(|e| e.0 <= p + POST_SLACK_NS);
                let cp = at.map_or(r.cp, |e| e.1);
                let acc = match at.and_then(|e| e.2.as_ref()) {
                    Some(a) => l.at_since(a, p, sender_rank, &self.comms),
                    None => acc,
                };
                Some((p, cp, acc))
            }
            _ => None,
        };
        let (true, Some((post_t, post_cp, acc))) = (m.blocking || m.nonblocking, post) else {
            return None;
        };
        let recv = (li as u32, post_t, post_cp, acc, overtaken);
        let out = self.link.is_some().then(|| recv.clone());
        m.recv = Some(recv);
        match m.done {
            Some(_) => self.late_receiver(&m),
            None => {
                self.msgs.insert(id, m);
            }
        }
        out
    }

    /// A message received at another block's location: where its receiver posted it comes
    /// from that block when the sender is this block's (a late receiver's late location).
    fn others_recv(&mut self, id: u64) {
        let Some(mut m) = self.msgs.remove(&id) else {
            return;
        };
        if let Some(q) = self.inbound.get_mut(&m.peer) {
            q.remove(&(m.sent, id));
        }
        let post = match self
            .link
            .as_mut()
            .and_then(|k| k.inbox.remove(&Key::Post(id)))
        {
            Some(Item::Post(Some(p))) => p,
            _ => return,
        };
        if m.blocking || m.nonblocking {
            m.recv = Some(post);
            match m.done {
                Some(_) => self.late_receiver(&m),
                None => {
                    self.msgs.insert(id, m);
                }
            }
        }
    }

    /// A nonblocking send completed in the Wait/Test call open at `li` (a buffered one never
    /// waits for its receiver).
    fn send_done(&mut self, li: usize, t: i64, thread: u32, mode: u8, send: u64) {
        let process = self.setup.loc_process[li];
        let Some(&sender) = self.loc_of.get(&(process, thread)) else {
            return;
        };
        let q = &mut self.locs[sender as usize].nonblocking;
        let Some(i) = q.iter().position(|&(n, _)| n == send) else {
            return;
        };
        let (_, id) = q.remove(i).expect("present");
        let Some(r) = self.locs[li].routine() else {
            self.drop_if_received(id);
            return;
        };
        if mode == 2 {
            self.drop_if_received(id);
            return;
        }
        self.send_exit(id, (li as u32, r.enter, r.cp, t));
    }

    fn drop_if_received(&mut self, id: u64) {
        if self.msgs.get(&id).is_some_and(|m| m.recv.is_some()) {
            self.msgs.remove(&id);
        } else if let Some(m) = self.msgs.get_mut(&id) {
            m.nonblocking = false;
        }
    }

    /// A read of a stream's bytes up to `end` that began before the write holding its last
    /// byte did waited for it (a client for its server, say). A write is recorded at its
    /// return, which may come after the read it fed: the read then waits for it in `reads`.
    fn stream_read(&mut self, li: usize, t: i64, stream: u64, end: u64) {
        // the thread's last wait on descriptors: woken by these bytes, if written before it
        // returned (an accept's connect, end 0, wakes no poll of the reader's: bytes do)
        if let Some(mut poll) = self.locs[li].poll.take_if(|_| end > 0) {
            poll.end = end;
            self.match_read(poll, stream, false);
        }
        let l = &self.locs[li];
        let Some(r) = l.routine() else { return };
        let read = Read {
            loc: li as u32,
            enter: r.enter,
            cp: r.cp,
            t,
            end,
            acc: if self.setup.causes {
                l.acc.since(l.stream.as_ref())
            } else {
                Account::default()
            },
            poll: false,
        };
        self.match_read(read, stream, true);
    }

    /// `read` against the write holding its last byte, or kept until that write comes;
    /// `consume`: a read takes the writes whose bytes it read (a poll only looks).
    fn match_read(&mut self, read: Read, stream: u64, consume: bool) {
        let end = read.end;
        let q = self.writes.entry(stream).or_default();
        // writes whose bytes all came before this read's last are read
        while consume && q.front().is_some_and(|w| w.end < end) {
            q.pop_front();
        }
        // an accept pairs with its connect only, never with the client's first bytes
        match q
            .iter()
            .find(|w| w.end >= end)
            .filter(|w| end > 0 || w.end == 0)
        {
            Some(w) => {
                let w = (w.loc, w.enter, w.cp, w.acc.clone());
                if consume && q.front().is_some_and(|w| w.end == end) {
                    q.pop_front();
                }
                self.stream_wait(read, w);
            }
            None => {
                let q = self.reads.entry(stream).or_default();
                if q.len() >= MAX_PENDING {
                    q.pop_front();
                }
                q.push_back(read);
            }
        }
    }

    /// The reads of `stream` that waited for its newest write.
    fn reads_fed(&mut self, stream: u64) {
        let Some(w) = self.writes.get(&stream).and_then(|q| q.back()) else {
            return;
        };
        let (end, w) = (w.end, (w.loc, w.enter, w.cp, w.acc.clone()));
        while let Some(q) = self.reads.get_mut(&stream) {
            if q.front().is_none_or(|r| r.end > end) {
                break;
            }
            let r = q.pop_front().expect("front");
            if r.end == 0 && end > 0 {
                // an accept whose connect is not traced: bytes are no connect, its client was
                // not measured
                self.alone(Pattern::IoWait, r.loc, r.cp, (r.enter, r.t));
                continue;
            }
            self.stream_wait(r, w.clone());
        }
    }

    fn stream_wait(&mut self, r: Read, (wloc, wenter, wcp, wacc): (u32, i64, u32, Account)) {
        if r.poll && (wenter >= r.t || wenter <= r.enter || wloc == r.loc) {
            // bytes written after it returned did not wake it, nor did bytes there before it
            // began: it waited for something else
            self.alone(Pattern::IoWait, r.loc, r.cp, (r.enter, r.t));
            return;
        }
        let d = wenter.min(r.t) - r.enter;
        if d > 0 && wloc != r.loc {
            self.wait(
                stream_pattern(&r),
                r.loc,
                r.cp,
                (r.enter, r.t),
                d,
                (wloc, wcp),
                &wacc,
                &r.acc,
            );
        }
    }

    /// The call that waited for the send returned: (location, entry, call path, return).
    fn send_exit(&mut self, id: u64, done: (u32, i64, u32, i64)) {
        let Some(m) = self.msgs.get_mut(&id) else {
            return;
        };
        m.done = Some(done);
        if m.recv.is_some() {
            let m = self.msgs.remove(&id).expect("present");
            self.late_receiver(&m);
        } else if !m.blocking && !m.nonblocking {
            self.msgs.remove(&id);
        }
    }

    /// A send whose call (the blocking send, or the Wait/Test completing it) lasted until the
    /// receive was posted waited from that call's entry to the receive's.
    fn late_receiver(&mut self, m: &Msg) {
        let (Some((rl, r_enter, r_cp, r_acc, overtaken)), Some((wl, enter, cp, exit))) =
            (&m.recv, m.done)
        else {
            return;
        };
        if exit < *r_enter {
            // it had returned before the receive was posted: it never waited for it
            return;
        }
        // a Wait/Test completing several requests waits once: from where its earlier waits
        // were counted to
        let w = &mut self.locs[wl as usize];
        let from = match w.counted {
            (e, until) if e == enter => until.max(enter),
            _ => enter,
        };
        let d = r_enter - from;
        if d > 0 {
            if !m.blocking {
                w.counted = (enter, *r_enter);
            }
            let pattern = if *overtaken {
                Pattern::LateReceiverWrongOrder
            } else {
                Pattern::LateReceiver
            };
            self.wait(
                pattern,
                wl,
                cp,
                (from, exit),
                d,
                (*rl, *r_cp),
                r_acc,
                &m.acc,
            );
        }
    }

    fn collective(&mut self, li: usize, t: i64, comm: Option<u32>, root: Option<u32>) {
        let l = &mut self.locs[li];
        let number = l.colls;
        l.colls += 1;
        let r = l.routine();
        // a barrier or an N×N collective makes every member wait for the last: they leave it
        // synchronised, and their intervals for the next waits begin there; a 1-to-N or N-to-1
        // collective (or another) synchronises only members that waited in it, which the
        // members that left before the late one came never did (an eager MPI_Reduce's
        // members, left long before the root entered it): it begins no interval
        // (on its communicator: the ranks outside it were not synchronised by it; one the
        // trace does not define synchronises nobody known)
        let syncs = r.is_none_or(|r| matches!(r.class, Class::Barrier | Class::NxN));
        let Some(comm) = comm else { return };
        if syncs {
            l.pending.push(SyncWith::Collective(comm, None));
        }
        let Some(r) = r else { return };
        let size = self
            .setup
            .comm_ranks
            .get(comm as usize)
            .map_or(0, |c| c.len());
        if size < 2 {
            return;
        }
        let own = self.link.as_ref().is_none_or(|k| k.own[li]);
        let member = self.member(li, comm, r, t, own);
        let process = self.setup.loc_process[li];
        let k = self.coll_count.entry((process, comm)).or_insert(0);
        let key = (comm, *k);
        *k += 1;
        if let (true, Some(SyncWith::Collective(_, s))) = (syncs, self.locs[li].pending.last_mut())
        {
            *s = Some(Sync::Collective(comm, key.1));
        }
        // a nonblocking one's post, until the call that completes it (this replay's own:
        // another block's completions are that block's)
        if let (Some(c), true) = (r.class.completed_as(), own) {
            self.posts.insert((li as u32, number), (key, c));
        }
        let inst = self.instances.entry(key).or_default();
        inst.members.push(member);
        inst.count += 1;
        if let (Some(k), true) = (&mut self.link, own) {
            let (blocks, n) = &k.comm_blocks[comm as usize];
            let mine: Vec<&Member> = inst
                .members
                .iter()
                .filter(|m| k.own[m.loc as usize])
                .collect();
            if mine.len() == *n && !blocks.is_empty() {
                // the block's members that may be the late one ([`Summary::candidates`])
                let arrived: Vec<(u32, Option<u32>, i64)> =
                    mine.iter().map(|m| (m.loc, m.rank, m.enter)).collect();
                let item: Vec<Candidate> = Summary::candidates(&arrived, root)
                    .iter()
                    .filter_map(|&(l, _)| mine.iter().find(|m| m.loc == l))
                    .map(|m| (m.loc, m.cp, m.acc.clone(), m.pairs.clone()))
                    .collect();
                for &b in blocks {
                    k.outbox
                        .push((b, Key::Coll(comm, key.1, k.me), Item::Coll(item.clone())));
                }
            }
        }
        if inst.count < size {
            return;
        }
        self.finish_instance(key, r.class, root);
    }

    /// Location `li` as a member of a collective on `comm`, in routine `r` at `t` (the
    /// collective's event, or a nonblocking one's completion). With causes (an own location),
    /// its accounts: since its last synchronising collective on a communicator holding every
    /// member of `comm` (that collective synchronised it with each of them), and since each
    /// rank and smaller communicator it synchronised with after that.
    fn member(&mut self, li: usize, comm: u32, r: Frame, t: i64, own: bool) -> Member {
        let comms = &mut self.comms;
        let l = &self.locs[li];
        let (acc, pairs) = if self.setup.causes && own {
            let coll = l
                .coll
                .iter()
                .filter(|(c, _)| comms.covers(*c, comm))
                .map(|(_, s)| s)
                .max_by_key(|s| s.exit);
            (since_snap(&l.acc, None, coll), l.pairs_since(coll, comms))
        } else {
            (Account::default(), Vec::new())
        };
        Member {
            loc: li as u32,
            rank: self.setup.loc_rank[li],
            enter: r.enter,
            exit: t,
            cp: r.cp,
            acc,
            pairs,
        }
    }

    /// Collective instance `key` is complete: with the other blocks' candidates' call paths
    /// and accounts (a parallel analysis), its waits.
    fn finish_instance(&mut self, key: (u32, u32), class: Class, root: Option<u32>) {
        let comm = key.0;
        let mut inst = self.instances.remove(&key).expect("present");
        if let Some(k) = &mut self.link {
            let (blocks, n) = &k.comm_blocks[comm as usize];
            if *n == 0 {
                return; // no member is this block's: nobody here waited
            }
            let mut may: HashMap<u32, (u32, Account, Pairs)> = HashMap::new();
            for &b in blocks {
                if let Some(Item::Coll(v)) = k.inbox.remove(&Key::Coll(comm, key.1, b)) {
                    may.extend(v.into_iter().map(|(l, cp, a, p)| (l, (cp, a, p))));
                }
            }
            for m in &mut inst.members {
                if let Some((cp, a, p)) = may.remove(&m.loc) {
                    (m.cp, m.acc, m.pairs) = (cp, a, p);
                }
            }
        }
        match class.completed_as() {
            Some(c) => self.all_posted(key, c, root, inst),
            None => self.complete(class, root, inst),
        }
    }

    /// The pattern of a collective instance of class `class` (a blocking form), its late member
    /// and those that waited for it.
    fn roles(
        class: Class,
        root: Option<u32>,
        m: &[Member],
    ) -> Option<(Pattern, &Member, Vec<&Member>)> {
        let latest = || m.iter().max_by_key(|x| (x.enter, x.loc)).expect("members");
        Some(match class {
            Class::Barrier | Class::NxN => {
                let last = latest();
                let p = if class == Class::Barrier {
                    Pattern::WaitAtBarrier
                } else {
                    Pattern::WaitAtNxn
                };
                (p, last, m.iter().filter(|x| x.loc != last.loc).collect())
            }
            Class::OneToN => {
                let r = m.iter().find(|x| x.rank.is_some() && x.rank == root)?;
                let others = m.iter().filter(|x| x.loc != r.loc).collect();
                (Pattern::LateBroadcast, r, others)
            }
            Class::NToOne => {
                let r = m.iter().find(|x| x.rank.is_some() && x.rank == root)?;
                // as Scalasca's: the root waits for the latest of the members it receives from
                let last = m
                    .iter()
                    .filter(|x| x.loc != r.loc)
                    .max_by_key(|x| (x.enter, x.loc))?;
                (Pattern::EarlyReduce, last, vec![r])
            }
            _ => return None,
        })
    }

    /// Every member of a collective instance has left it: its waits.
    fn complete(&mut self, class: Class, root: Option<u32>, inst: Instance) {
        let Some((pattern, late, waiting)) = Self::roles(class, root, &inst.members) else {
            return;
        };
        for w in waiting {
            let d = (late.enter - w.enter).min(w.exit - w.enter);
            if d > 0 {
                let (late_acc, own_acc) = since_synchronised(late, w, &self.comms);
                self.wait(
                    pattern,
                    w.loc,
                    w.cp,
                    (w.enter, w.exit),
                    d,
                    (late.loc, late.cp),
                    late_acc,
                    own_acc,
                );
            }
        }
    }

    /// Every member of nonblocking collective instance `key` (of blocking form `class`) has
    /// posted it: its waits come with its waiting members' completions (some may have come).
    fn all_posted(&mut self, key: (u32, u32), class: Class, root: Option<u32>, mut inst: Instance) {
        let early = self.early.remove(&key).unwrap_or_default();
        let Some((pattern, late, waiting)) = Self::roles(class, root, &inst.members) else {
            return;
        };
        let late = late.loc;
        let waiting: Vec<u32> = waiting
            .iter()
            .map(|w| w.loc)
            .filter(|&l| self.own(l as usize))
            .collect();
        let i = inst
            .members
            .iter()
            .position(|m| m.loc == late)
            .expect("member");
        let mut p = AllPosted {
            pattern,
            late: inst.members.swap_remove(i),
            waiting,
        };
        for (poster, w) in early {
            self.posted_wait(&mut p, poster, w);
        }
        if !p.waiting.is_empty() {
            self.posted.insert(key, p);
        }
    }

    /// A nonblocking collective completed in the Wait/Test call open at `li`: its post was the
    /// `collective`-th collective event of thread `thread` of the same process.
    fn coll_done(&mut self, li: usize, t: i64, thread: u32, collective: u64) {
        let process = self.setup.loc_process[li];
        let Some(&poster) = self.loc_of.get(&(process, thread)) else {
            return;
        };
        let Some((key, class)) = self.posts.remove(&(poster, collective)) else {
            return;
        };
        let own = self.own(li);
        let l = &mut self.locs[li];
        let Some(r) = l.routine() else {
            return;
        };
        // a barrier or an N×N collective completed: its members are synchronised at the
        // completing call's exit, as at a blocking one's
        if matches!(class, Class::Barrier | Class::NxN) {
            let sync = Sync::Collective(key.0, key.1);
            l.pending.push(SyncWith::Collective(key.0, Some(sync)));
        }
        let w = self.member(li, key.0, r, t, own);
        match self.posted.remove(&key) {
            Some(mut p) => {
                self.posted_wait(&mut p, poster, w);
                if !p.waiting.is_empty() {
                    self.posted.insert(key, p);
                }
            }
            None => self.early.entry(key).or_default().push((poster, w)),
        }
    }

    /// The wait of the member of `p` that location `poster` posted, in the call `w` that
    /// completed it: from the call's entry (or from where the same call's earlier waits were
    /// counted to: an MPI_Waitall of receives and collectives waits once) until the late
    /// member posted.
    fn posted_wait(&mut self, p: &mut AllPosted, poster: u32, w: Member) {
        let Some(i) = p.waiting.iter().position(|&l| l == poster) else {
            return;
        };
        p.waiting.swap_remove(i);
        let li = w.loc as usize;
        let from = match self.locs[li].counted {
            (enter, until) if enter == w.enter => until.max(w.enter),
            _ => w.enter,
        };
        let to = p.late.enter.min(w.exit);
        if to <= from {
            return;
        }
        self.locs[li].counted = (w.enter, to);
        let (late_acc, own_acc) = since_synchronised(&p.late, &w, &self.comms);
        self.wait(
            p.pattern,
            w.loc,
            w.cp,
            (from, w.exit),
            to - from,
            (p.late.loc, p.late.cp),
            late_acc,
            own_acc,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn acquire(
        &mut self,
        li: usize,
        t: i64,
        object: u32,
        kind: SyncKind,
        wait: i64,
        holder: u32,
        shared: bool,
    ) {
        self.account(li, t);
        if wait <= 0 {
            return;
        }
        let loc = li as u32;
        let process = self.setup.loc_process[li];
        let rel = self
            .objects
            .get(&(process, object))
            .cloned()
            .unwrap_or_default();
        let arrival = t - wait;
        let (by_other, held) = match rel.last {
            // a reader waited for a writer: the last to release the lock held for writing
            // while it waited (not a reader that released it after the writer; none seen:
            // unknown)
            _ if shared && kind == SyncKind::RwLock => (
                rel.writer.filter(|w| w.0 != loc && w.2 >= arrival),
                rel.held_writer.as_ref(),
            ),
            Some(l) if l.0 != loc => (Some(l), rel.held.as_ref()),
            _ => (rel.other, rel.held_other.as_ref()),
        };
        // the owner the runtime named when the wait began (Java monitors), where it is now
        let owner = holder
            .checked_sub(1)
            .and_then(|h| self.loc_of.get(&(process, h)))
            .map(|&o| (o, self.locs[o as usize].cp(), t));
        let (pattern, cause, d) = match kind {
            SyncKind::JavaMonitor => (Pattern::MonitorWait, owner, wait),
            // only a notify made while it waited ended it: an earlier one (the notifier of
            // an earlier wait on the object) is no cause of this one; a notify the runtime did
            // not see (a class not rewritten) leaves the wait without a cause
            SyncKind::JavaWait => (
                Pattern::ConditionWait,
                owner.or(by_other.filter(|l| l.2 >= arrival)),
                wait,
            ),
            SyncKind::Mutex | SyncKind::RwLock | SyncKind::Spin => {
                (Pattern::LockContention, by_other, wait)
            }
            SyncKind::Cond => (Pattern::ConditionWait, by_other, wait),
            SyncKind::Sem => (Pattern::SemaphoreWait, by_other, wait),
            SyncKind::Thread => (Pattern::JoinWait, by_other, wait),
            SyncKind::OmpCritical | SyncKind::OmpAtomic => (Pattern::OmpCritical, by_other, wait),
            SyncKind::OmpLock => (Pattern::OmpLock, by_other, wait),
            SyncKind::OmpOrdered => (Pattern::OmpOrdered, by_other, wait),
            SyncKind::OmpTaskwait => (Pattern::OmpTaskwait, by_other, wait),
            SyncKind::Barrier | SyncKind::OmpBarrier => {
                // each arrival is a release: the barrier opened at the last one
                let p = if kind == SyncKind::Barrier {
                    Pattern::ThreadBarrier
                } else {
                    Pattern::OmpBarrier
                };
                match rel.last {
                    Some(last) if last.0 != loc => (p, Some(last), (last.2 - arrival).min(wait)),
                    _ => return,
                }
            }
            SyncKind::Other(_) => return,
        };
        if d <= 0 {
            return;
        }
        let cp = self.locs[li].cp();
        let Some((cl, ccp, _)) = cause else {
            self.record(pattern, loc, cp, (arrival, t), d, None, (Vec::new(), None));
            return;
        };
        let barrier = matches!(kind, SyncKind::Barrier | SyncKind::OmpBarrier);
        let division = if !self.setup.causes {
            (Vec::new(), None)
        } else if let (true, Some(late)) = (barrier, &rel.arrival) {
            // the last arrival's excess since both last left a barrier (or joined the team)
            // (its own account up to its arrival: the wait just accounted in its call path,
            // which a barrier of threads shares with their work, is no busy time)
            let l = &self.locs[li];
            let mut own = l.acc.since(l.team.as_ref());
            *own.waited.entry(cp).or_insert(0) += wait;
            own.at = arrival;
            let spans = Some((span(late), Some(span(&own))));
            (divide(d, cl, ccp, late, &own), spans)
        } else if let (true, Some(held)) = (is_lock(kind), held) {
            // the holder's time by call path while it held the lock
            (
                divide(d, cl, ccp, held, &Account::default()),
                Some((span(held), None)),
            )
        } else if kind == SyncKind::Thread {
            // the joined thread ran longer than the joiner waited: its time by call path
            let c = &self.locs[cl as usize].acc;
            (
                divide(d, cl, ccp, c, &Account::default()),
                Some((span(c), None)),
            )
        } else {
            // the signaller, poster or owner where it let the waiter go: its work meanwhile
            let shares = vec![(cl, ccp, CauseKind::Direct, d as f64)];
            (shares, Some(((arrival, t), None)))
        };
        self.record(pattern, loc, cp, (arrival, t), d, Some((cl, ccp)), division);
    }

    /// A wait of `d` ns of location `loc` in call path `cp` from `at.0`, found at `at.1`, caused by
    /// location `late.0` arriving late at call path `late.1` (accounts since they last
    /// synchronised: `late_acc` of the late one, `own_acc` of the waiting one).
    #[allow(clippy::too_many_arguments)]
    fn wait(
        &mut self,
        pattern: Pattern,
        loc: u32,
        cp: u32,
        at: (i64, i64),
        d: i64,
        late: (u32, u32),
        late_acc: &Account,
        own_acc: &Account,
    ) {
        if !self.own(loc as usize) {
            return; // another block's wait: that block finds it
        }
        let division = if self.setup.causes {
            let spans = Some((span(late_acc), Some(span(own_acc))));
            (divide(d, late.0, late.1, late_acc, own_acc), spans)
        } else {
            (Vec::new(), None)
        };
        self.record(pattern, loc, cp, at, d, Some(late), division);
    }

    /// The end of the replay: a read (an accept) on a traced stream whose write (connect)
    /// never came waited for a writer that was not measured, and a wait on descriptors that no
    /// traced bytes woke: I/O waits with no partner.
    pub fn finish(&mut self) {
        let mut left: Vec<Read> = self.reads.drain().flat_map(|(_, q)| q).collect();
        // waits on descriptors no read of their thread followed
        left.extend(self.locs.iter_mut().filter_map(|l| l.poll.take()));
        left.sort_by_key(|r| (r.t, r.loc));
        for r in left {
            self.alone(Pattern::IoWait, r.loc, r.cp, (r.enter, r.t));
        }
    }

    /// A wait with no partner (a sleep, an I/O wait), from its start to its end: counted, no
    /// cause. It is not in the location's own waiting: a location late because it slept was
    /// late by its sleep, which is the direct cause of whoever waited for it.
    fn alone(&mut self, pattern: Pattern, loc: u32, cp: u32, (start, end): (i64, i64)) {
        let li = loc as usize;
        if end <= start || !self.own(li) || !self.setup.loc_counted[li] {
            return;
        }
        if let Some((start, d)) = self.inside(start, end - start) {
            self.count(pattern, loc, cp, (start, d), None, &[]);
        }
    }

    /// The part of a wait from `start` for `d` ns inside the window: (start, ns), `None` when
    /// none of it is (a window is one window: `plx report --phase` clips calls alike).
    fn inside(&self, start: i64, d: i64) -> Option<(i64, i64)> {
        let w = self.setup.window;
        let (lo, hi) = (start.max(w.start_ns), (start + d).min(w.end_ns));
        (hi > lo).then_some((lo, hi - lo))
    }

    /// A wait's row, and the wait itself when they are kept.
    fn count(
        &mut self,
        pattern: Pattern,
        loc: u32,
        cp: u32,
        (start, d): (i64, i64),
        late: Option<(u32, u32)>,
        shares: &[Share],
    ) {
        let e = self.waits.entry((pattern, loc, cp)).or_insert((0, 0));
        e.0 += d;
        e.1 += 1;
        if let Some(spans) = &mut self.spans {
            let w = spans.waits.entry((pattern, loc, cp)).or_default();
            w.push((start, start + d));
        }
        if let Some(found) = &mut self.found {
            found.push(FoundWait {
                pattern,
                location: loc,
                callpath: cp,
                start,
                wait_ns: d,
                late,
                causes: shares.to_vec(),
            });
        }
    }

    /// A wait of `d` ns of location `loc` in call path `cp` from `start` to `end`, for location
    /// and call path `late`; its causes' shares and the interval of the late location that the
    /// direct ones are the excess of (when known).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        pattern: Pattern,
        loc: u32,
        cp: u32,
        (start, end): (i64, i64),
        d: i64,
        late: Option<(u32, u32)>,
        (shares, intervals): (Vec<Share>, Intervals),
    ) {
        let li = loc as usize;
        if self.setup.causes {
            let l = &mut self.locs[li];
            // when the partner came (the wait's end may be found later: at the receive)
            if late.is_some() {
                l.wait_end = l.wait_end.max(start + d);
            }
            // a collective's wait is known only when its last member comes, maybe after the
            // location left it and took its accounts at the exit: those include it too
            let later = l
                .pair
                .values_mut()
                .chain(l.coll.iter_mut().map(|(_, s)| s))
                .filter(|s| s.exit >= end)
                .map(|s| &mut s.acc);
            for acc in std::iter::once(&mut l.acc).chain(later) {
                *acc.waited.entry(cp).or_insert(0) += d;
                for &(cl, ccp, _, ns) in &shares {
                    *acc.blame.entry((cl, ccp)).or_insert(0.0) += ns;
                }
            }
        }
        if !self.setup.loc_counted[li] {
            return;
        }
        let Some((start, part)) = self.inside(start, d) else {
            return;
        };
        // the causes of the part inside, in the same proportions
        let shares: Vec<Share> = if part == d {
            shares
        } else {
            let f = part as f64 / d as f64;
            shares
                .into_iter()
                .map(|(l, c, k, ns)| (l, c, k, ns * f))
                .collect()
        };
        let d = part;
        self.count(pattern, loc, cp, (start, d), late, &shares);
        if let (Some(spans), Some((late, own))) = (&mut self.spans, intervals) {
            for &(cl, ccp, kind, delay_ns) in &shares {
                if kind == CauseKind::Direct {
                    let at = spans.causes.entry((pattern, loc, cl, ccp)).or_default();
                    at.push(CauseSpan {
                        late,
                        own,
                        delay_ns,
                    });
                }
            }
        }
        for (cl, ccp, kind, ns) in shares {
            *self
                .causes
                .entry((pattern, loc, cl, ccp, kind))
                .or_insert(0.0) += ns;
        }
    }
}

/// A stream read's pattern: the events of 0 bytes at offset 0 are a connection's opening (the
/// client's connect and the server's accept, docs/sockets.md), whose wait is the server's for
/// its client ([`Pattern::LateConnect`]); any other read waited for the bytes it got.
fn stream_pattern(r: &Read) -> Pattern {
    if r.end == 0 {
        Pattern::LateConnect
    } else {
        Pattern::StreamWait
    }
}
