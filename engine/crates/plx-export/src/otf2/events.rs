//! The events: each kind of event of the merged stream as OTF2 event records, through one event writer per location.

use std::collections::HashMap;
use std::ptr;

use plx_analysis::MessageLink;
use plx_format::SyncKind;

use super::archive::Archive;
use super::ffi::*;
use super::refs::{collective_of, is_nonblocking_collective, CommRefs, CounterMetrics};
use super::samples::Contexts;
use super::starts::Starts;
use crate::driver::{At, CountedCall, Cx, Envelope, Step};
use crate::ExportError;

/// The event writers and what the events of one location need of the others'.
pub(super) struct Events {
    pub archive: Archive,
    /// Per location: its event writer (the library's until closed).
    pub writers: Vec<*mut OTF2_EvtWriter>,
    /// Per location: its process (model index), and its world rank (a matched receive's
    /// sender is named by it).
    process: Vec<usize>,
    rank: Vec<Option<u32>>,
    /// Per location: its thread's index in its process (a `send_done` names the sender so).
    thread: Vec<u32>,
    pub refs: CommRefs,
    pub ctr: CounterMetrics,
    /// OpenMP, per location: the team joined whose parallel region's enter is to come, and
    /// the teams open (the stack depth of their region's frame, the team, whether it forked it).
    omp_pending: Vec<Option<(u32, u32, bool)>>,
    omp_open: Vec<Vec<(usize, u32, bool)>>,
    /// Collective operation per region, and whether the region posts a nonblocking one
    /// (looked up once per region).
    ops: Vec<Option<Option<(u8, bool)>>>,
    /// Nonblocking collectives posted and not completed yet, by (process, thread, collective
    /// number): what their NonBlockingCollectiveComplete writes (operation, communicator,
    /// root, bytes sent and received, request).
    icolls: HashMap<(usize, u32, u64), Posted>,
    /// Per location: a collective routine entered whose MpiCollectiveBegin is written and
    /// whose MpiCollectiveEnd is not (the begin follows the routine's enter, as readers such
    /// as Scalasca's analyser take it for the time the location arrived).
    coll_open: Vec<bool>,
    /// Lock acquisitions so far per (process, object); the order of the one each location holds.
    lock_order: HashMap<(usize, u32), u32>,
    held: HashMap<(usize, u32), u32>,
    /// Records written per location (its Location definition counts them), events that wrote
    /// any, and the first and last time of those.
    pub counts: Vec<u64>,
    pub n: u64,
    pub first: Option<i64>,
    pub last: i64,
    /// The attribute list of a cut call's leave (the `truncated` attribute), made on first use.
    pub cut: Option<*mut OTF2_AttributeList>,
    /// The calling contexts of the call-stack samples written, and their number.
    pub contexts: Contexts,
    pub sampled: u64,
    /// Nonblocking point to point: each region's role (looked up once per region), the next
    /// request id, the nonblocking sends not completed yet by (process, thread, send number)
    /// with their request, per location its receive requests not completed yet (the entry of
    /// the MPI_Irecv or MPI_Start(all) that posted them, request) and the post time of its
    /// next receive (its `recv_posted`), and the persistent receives each start started.
    nonblocking: Vec<Option<Nonblocking>>,
    next_request: u64,
    isends: HashMap<(usize, u32, u64), u64>,
    irecvs: Vec<Vec<(i64, u64)>>,
    posted: Vec<Option<i64>>,
    starts: Starts,
}

/// A nonblocking collective posted: (operation, communicator, root, bytes sent, bytes
/// received, request).
type Posted = (u8, OTF2_CommRef, u32, u64, u64, u64);

/// A region's part in nonblocking point to point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nonblocking {
    /// MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Ibsend: its send is an MPI_ISEND.
    Send,
    /// MPI_Irecv: its entry is an MPI_IRECV_REQUEST.
    Recv,
    /// MPI_Start, MPI_Startall: each send in it is an MPI_ISEND, and its entry an
    /// MPI_IRECV_REQUEST per persistent receive it started (a new request each start).
    Start,
    Other,
}

/// A receive is the MPI_Irecv's posted at most this long after the call's entry (as the
/// waits analysis pairs them).
const POST_SLACK_NS: i64 = 1_000;

/// The posting call of a receive posted at `p` among calls `q` in time order (`enter` gives
/// a call's entry): the one entered nearest to `p`, at most [`POST_SLACK_NS`] after it (the
/// post is the call's entry, but for rounding and clock correction), the first of those
/// entered at one time (the receives of one MPI_Startall complete in its order).
pub(super) fn posting_call<T>(q: &[T], enter: impl Fn(&T) -> i64, p: i64) -> Option<usize> {
    let after = q.partition_point(|c| enter(c) < p);
    let before = after.checked_sub(1);
    let after = (after < q.len() && enter(&q[after]) <= p + POST_SLACK_NS).then_some(after);
    let mut i = match (before, after) {
        (Some(b), Some(a)) => {
            if p - enter(&q[b]) <= enter(&q[a]) - p {
                b
            } else {
                a
            }
        }
        (b, a) => b.or(a)?,
    };
    while i > 0 && enter(&q[i - 1]) == enter(&q[i]) {
        i -= 1;
    }
    Some(i)
}

/// The attribute of a cut call's leave: 1 (`truncated`, defined only when a call was cut).
pub(super) const TRUNCATED: OTF2_AttributeRef = 0;

/// No attribute list.
const NO_ATTRIBUTES: *mut OTF2_AttributeList = ptr::null_mut();

impl Events {
    /// The events of `archive`, before its locations ([`Events::location`]).
    pub fn new(archive: Archive, model: &plx_analysis::Model, starts: Starts) -> Events {
        Events {
            archive,
            writers: Vec::new(),
            process: Vec::new(),
            rank: Vec::new(),
            refs: CommRefs::new(model),
            ctr: CounterMetrics::new(model),
            omp_pending: Vec::new(),
            omp_open: Vec::new(),
            ops: Vec::new(),
            icolls: HashMap::new(),
            coll_open: Vec::new(),
            lock_order: HashMap::new(),
            held: HashMap::new(),
            counts: Vec::new(),
            n: 0,
            first: None,
            last: 0,
            cut: None,
            contexts: Contexts::default(),
            sampled: 0,
            nonblocking: Vec::new(),
            next_request: 0,
            isends: HashMap::new(),
            irecvs: Vec::new(),
            posted: Vec::new(),
            starts,
            thread: Vec::new(),
        }
    }

    /// The next location, `l`: its event writer and state.
    pub fn location(&mut self, l: &plx_analysis::TraceLocation) -> Result<(), ExportError> {
        let li = self.writers.len() as u64;
        // SAFETY: the event files are open; the library owns the writer until closed.
        let w = unsafe { OTF2_Archive_GetEvtWriter(self.archive.raw, li) };
        if w.is_null() {
            return Err(self.archive.fail("no event writer"));
        }
        self.writers.push(w);
        self.process.push(l.process);
        self.rank.push(l.rank);
        self.thread.push(l.thread);
        self.omp_pending.push(None);
        self.omp_open.push(Vec::new());
        self.coll_open.push(false);
        self.counts.push(0);
        self.irecvs.push(Vec::new());
        self.posted.push(None);
        Ok(())
    }

    /// Counts `records` written for the event at `at` (an event that wrote none is not
    /// counted), after checking the library's `code`.
    #[inline]
    fn wrote(&mut self, at: At, code: OTF2_ErrorCode, records: u64) -> Step {
        self.archive.check(code, "writing an event")?;
        if records > 0 {
            self.counts[at.loc as usize] += records;
            self.n += 1;
            self.first.get_or_insert(at.ns);
            self.last = at.ns;
        }
        Ok(())
    }

    /// The location's writer and the event's time.
    #[inline]
    fn w(&self, at: At) -> (*mut OTF2_EvtWriter, u64) {
        (self.writers[at.loc as usize], at.ns.max(0) as u64)
    }

    #[inline]
    pub fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        let li = at.loc as usize;
        if let Some((r, team, forked)) = self.omp_pending[li] {
            if r == region {
                self.omp_open[li].push((cx.stacks.depth(at.loc), team, forked));
                self.omp_pending[li] = None;
            }
        }
        let (w, t) = self.w(at);
        // SAFETY (every writer call of this file): `w` is an open event writer of the archive.
        let mut code = unsafe { OTF2_EvtWriter_Enter(w, NO_ATTRIBUTES, t, region) };
        let mut records = 1;
        if code == OTF2_SUCCESS && self.op_of(cx, region).is_some_and(|(_, nb)| !nb) {
            code = unsafe { OTF2_EvtWriter_MpiCollectiveBegin(w, NO_ATTRIBUTES, t) };
            self.coll_open[li] = true;
            records += 1;
        } else if code == OTF2_SUCCESS {
            let posts = match self.role(cx, region) {
                Nonblocking::Recv => 1,
                Nonblocking::Start => self.starts.take(li, at.ns),
                _ => 0,
            };
            for _ in 0..posts {
                let request = self.request();
                self.irecvs[li].push((at.ns, request));
                code = unsafe { OTF2_EvtWriter_MpiIrecvRequest(w, NO_ATTRIBUTES, t, request) };
                records += 1;
                if code != OTF2_SUCCESS {
                    break;
                }
            }
        }
        self.wrote(at, code, records)
    }

    /// The collective operation of MPI routine `region`, if it is one, and whether the
    /// routine posts a nonblocking one.
    fn op_of(&mut self, cx: &Cx, region: u32) -> Option<(u8, bool)> {
        let r = region as usize;
        if self.ops.len() <= r {
            self.ops.resize(r + 1, None);
        }
        *self.ops[r].get_or_insert_with(|| {
            let name = cx.regions().name(region);
            collective_of(name).map(|(op, _)| (op, is_nonblocking_collective(name)))
        })
    }

    /// The end of a collective begun at a routine's enter whose collective event never came
    /// (the routine left, or the trace ended, first): on no known communicator, nothing moved.
    fn end_open_collective(&mut self, cx: &Cx, at: At, region: u32) -> (OTF2_ErrorCode, u64) {
        let li = at.loc as usize;
        if !std::mem::replace(&mut self.coll_open[li], false) {
            return (OTF2_SUCCESS, 0);
        }
        let op = self.op_of(cx, region).map_or(OTF2_COLLECTIVE_OP_BARRIER, |o| o.0);
        let c = self.refs.comm(None, 0).0;
        let (w, t) = self.w(at);
        let code = unsafe {
            OTF2_EvtWriter_MpiCollectiveEnd(w, NO_ATTRIBUTES, t, op, c, OTF2_COLLECTIVE_ROOT_NONE, 0, 0)
        };
        (code, 1)
    }

    /// The part `region` has in nonblocking point to point.
    fn role(&mut self, cx: &Cx, region: u32) -> Nonblocking {
        let r = region as usize;
        if self.nonblocking.len() <= r {
            self.nonblocking.resize(r + 1, None);
        }
        *self.nonblocking[r].get_or_insert_with(|| match cx.regions().name(region) {
            "MPI_Isend" | "MPI_Issend" | "MPI_Irsend" | "MPI_Ibsend" => Nonblocking::Send,
            "MPI_Irecv" => Nonblocking::Recv,
            "MPI_Start" | "MPI_Startall" => Nonblocking::Start,
            _ => Nonblocking::Other,
        })
    }

    fn request(&mut self) -> u64 {
        self.next_request += 1;
        self.next_request
    }

    /// A leave of `region`; a team ends with its region's frame: the thread leaves it, and the
    /// one that forked it joins the team.
    #[inline]
    pub fn exit(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        let li = at.loc as usize;
        let (mut code, mut records) = self.end_open_collective(cx, at, region);
        let (w, t) = self.w(at);
        if code == OTF2_SUCCESS {
            code = unsafe { OTF2_EvtWriter_Leave(w, NO_ATTRIBUTES, t, region) };
            records += 1;
        }
        while let Some(&(d, team, forked)) = self.omp_open[li].last() {
            if code != OTF2_SUCCESS || d <= cx.stacks.depth(at.loc) {
                break;
            }
            self.omp_open[li].pop();
            code = unsafe { OTF2_EvtWriter_ThreadTeamEnd(w, NO_ATTRIBUTES, t, team) };
            records += 1;
            if forked && code == OTF2_SUCCESS {
                code = unsafe { OTF2_EvtWriter_ThreadJoin(w, NO_ATTRIBUTES, t, OTF2_PARADIGM_OPENMP) };
                records += 1;
            }
        }
        self.wrote(at, code, records)
    }

    /// The leaves of the calls still open at the end; those `cut` carry the `truncated`
    /// attribute (1).
    pub fn open_at_end(&mut self, at: At, calls: &[u32], cut: bool) -> Step {
        let (w, t) = self.w(at);
        if std::mem::replace(&mut self.coll_open[at.loc as usize], false) {
            // the innermost open call is the collective routine (its operation looked up at its enter)
            let op = calls.first().and_then(|&r| self.ops.get(r as usize).copied().flatten().flatten());
            let c = self.refs.comm(None, 0).0;
            let op = op.map_or(OTF2_COLLECTIVE_OP_BARRIER, |o| o.0);
            let code = unsafe {
                OTF2_EvtWriter_MpiCollectiveEnd(w, NO_ATTRIBUTES, t, op, c, OTF2_COLLECTIVE_ROOT_NONE, 0, 0)
            };
            self.archive.check(code, "writing an event")?;
            self.counts[at.loc as usize] += 1;
        }
        for &r in calls {
            let attributes = if cut { self.cut_attribute()? } else { NO_ATTRIBUTES };
            let code = unsafe { OTF2_EvtWriter_Leave(w, attributes, t, r) };
            self.archive.check(code, "writing an event")?;
            self.counts[at.loc as usize] += 1;
            self.n += 1;
            self.last = self.last.max(at.ns);
        }
        Ok(())
    }

    /// The attribute list holding `truncated` = 1 (the writer empties it with each event).
    fn cut_attribute(&mut self) -> Result<*mut OTF2_AttributeList, ExportError> {
        // SAFETY: the list is the library's, made once and deleted with `self`.
        let list = match self.cut {
            Some(l) => l,
            None => {
                let l = unsafe { OTF2_AttributeList_New() };
                if l.is_null() {
                    return Err(self.archive.fail("no attribute list"));
                }
                self.cut = Some(l);
                l
            }
        };
        let code = unsafe { OTF2_AttributeList_AddUint8(list, TRUNCATED, 1) };
        self.archive.check(code, "an attribute")?;
        Ok(list)
    }

    pub fn omp_team(&mut self, at: At, region: u32, level: u32, (size, num): (u32, u32)) -> Step {
        let li = at.loc as usize;
        let team = self.refs.omp_team(self.process[li], region, level, li as u64);
        let forked = num == 0;
        self.omp_pending[li] = Some((region, team, forked));
        let (w, t) = self.w(at);
        let mut code = OTF2_SUCCESS;
        let mut records = 0;
        if forked {
            code = unsafe { OTF2_EvtWriter_ThreadFork(w, NO_ATTRIBUTES, t, OTF2_PARADIGM_OPENMP, size) };
            records += 1;
        }
        if code == OTF2_SUCCESS {
            code = unsafe { OTF2_EvtWriter_ThreadTeamBegin(w, NO_ATTRIBUTES, t, team) };
            records += 1;
        }
        self.wrote(at, code, records)
    }

    /// A send: an MPI_ISEND with a request of its own in a nonblocking send routine or a start
    /// of a persistent send (its MPI_ISEND_COMPLETE comes with the `send_done` of the
    /// Wait/Test completing it), else an MPI_SEND.
    pub fn send(&mut self, cx: &Cx, at: At, m: Envelope) -> Step {
        let (c, to) = self.refs.comm(m.comm, m.peer);
        let li = at.loc as usize;
        let isend = cx
            .stacks
            .top(at.loc)
            .is_some_and(|r| matches!(self.role(cx, r), Nonblocking::Send | Nonblocking::Start));
        let (w, t) = self.w(at);
        let code = if isend {
            let request = self.request();
            self.isends
                .insert((self.process[li], self.thread[li], cx.sends), request);
            unsafe {
                OTF2_EvtWriter_MpiIsend(w, NO_ATTRIBUTES, t, to, c, m.tag as u32, m.bytes, request)
            }
        } else {
            unsafe { OTF2_EvtWriter_MpiSend(w, NO_ATTRIBUTES, t, to, c, m.tag as u32, m.bytes) }
        };
        self.wrote(at, code, 1)
    }

    /// A nonblocking or started persistent send completed: MPI_ISEND_COMPLETE of its request,
    /// at the completing call (a send written as an MPI_SEND: nothing).
    pub fn send_done(&mut self, at: At, thread: u32, send: u64) -> Step {
        let key = (self.process[at.loc as usize], thread, send);
        let Some(request) = self.isends.remove(&key) else {
            return self.wrote(at, OTF2_SUCCESS, 0);
        };
        let (w, t) = self.w(at);
        let code = unsafe { OTF2_EvtWriter_MpiIsendComplete(w, NO_ATTRIBUTES, t, request) };
        self.wrote(at, code, 1)
    }

    /// The next receive here was posted `before_ns` ago (by an MPI_Irecv, or MPI_Start).
    pub fn recv_posted(&mut self, at: At, before_ns: u64) -> Step {
        self.posted[at.loc as usize] = Some(at.ns - before_ns as i64);
        self.wrote(at, OTF2_SUCCESS, 0)
    }

    /// A receive: the MPI_IRECV of the request of the MPI_Irecv or MPI_Start(all) that posted
    /// it ([`posting_call`]), else an MPI_RECV.
    pub fn recv(&mut self, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        // the sender's world rank: the matched send's location's, else the record's
        let from = link
            .and_then(|l| self.rank[l.sender as usize])
            .unwrap_or(m.peer);
        let (c, from) = self.refs.comm(m.comm, from);
        let li = at.loc as usize;
        let request = self.posted[li].take().and_then(|p| {
            let q = &mut self.irecvs[li];
            let i = posting_call(q, |c| c.0, p)?;
            Some(q.remove(i).1)
        });
        let (w, t) = self.w(at);
        let (tag, bytes) = (m.tag as u32, m.bytes);
        let code = match request {
            Some(r) => unsafe { OTF2_EvtWriter_MpiIrecv(w, NO_ATTRIBUTES, t, from, c, tag, bytes, r) },
            None => unsafe { OTF2_EvtWriter_MpiRecv(w, NO_ATTRIBUTES, t, from, c, tag, bytes) },
        };
        self.wrote(at, code, 1)
    }

    /// A nonblocking collective completed: the NON_BLOCKING_COLLECTIVE_COMPLETE of its
    /// request, at the completing call (one not posted here: nothing).
    pub fn coll_done(&mut self, at: At, thread: u32, collective: u64) -> Step {
        let key = (self.process[at.loc as usize], thread, collective);
        let Some((op, c, root, sent, received, request)) = self.icolls.remove(&key) else {
            return self.wrote(at, OTF2_SUCCESS, 0);
        };
        let (w, t) = self.w(at);
        let code = unsafe {
            OTF2_EvtWriter_NonBlockingCollectiveComplete(
                w,
                NO_ATTRIBUTES,
                t,
                op,
                c,
                root,
                sent,
                received,
                request,
            )
        };
        self.wrote(at, code, 1)
    }

    /// A collective's begin and end, its operation that of the MPI routine it is in; in a
    /// routine that posts a nonblocking one, a NON_BLOCKING_COLLECTIVE_REQUEST (its
    /// completion comes with the `coll_done` of the Wait/Test completing it).
    pub fn collective(
        &mut self,
        cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        (sent, received): (u64, u64),
    ) -> Step {
        let op = cx.stacks.top(at.loc).and_then(|r| self.op_of(cx, r));
        let (c, root) = match root {
            Some(r) => self.refs.comm(comm, r),
            None => (self.refs.comm(comm, 0).0, OTF2_COLLECTIVE_ROOT_NONE),
        };
        let (w, t) = self.w(at);
        if let Some((op, true)) = op {
            let li = at.loc as usize;
            let request = self.request();
            let key = (self.process[li], self.thread[li], cx.colls);
            self.icolls
                .insert(key, (op, c, root, sent, received, request));
            let code =
                unsafe { OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NO_ATTRIBUTES, t, request) };
            return self.wrote(at, code, 1);
        }
        let op = op.map_or(OTF2_COLLECTIVE_OP_BARRIER, |o| o.0);
        // begun at the routine's enter, unless the event is outside a collective routine
        let begun = std::mem::replace(&mut self.coll_open[at.loc as usize], false);
        let mut code = if begun {
            OTF2_SUCCESS
        } else {
            unsafe { OTF2_EvtWriter_MpiCollectiveBegin(w, NO_ATTRIBUTES, t) }
        };
        if code == OTF2_SUCCESS {
            code = unsafe {
                OTF2_EvtWriter_MpiCollectiveEnd(w, NO_ATTRIBUTES, t, op, c, root, sent, received)
            };
        }
        self.wrote(at, code, if begun { 1 } else { 2 })
    }

    /// A user event's value: a metric event of its metric (after the counter metrics).
    pub fn user(&mut self, at: At, event: u32, value: f64) -> Step {
        let v = OTF2_MetricValue {
            floating_point: value,
        };
        let metric = self.ctr.classes.len() as u32 + event;
        let (w, t) = self.w(at);
        let code =
            unsafe { OTF2_EvtWriter_Metric(w, NO_ATTRIBUTES, t, metric, 1, &OTF2_TYPE_DOUBLE, &v) };
        self.wrote(at, code, 1)
    }

    /// A counted call: a metric event of its set's class.
    pub fn counted(&mut self, at: At, call: &CountedCall) -> Step {
        let Some((class, idx)) = self.ctr.of.get(&(self.process[at.loc as usize], call.set)) else {
            return self.wrote(at, OTF2_SUCCESS, 0);
        };
        let types = vec![OTF2_TYPE_UINT64; idx.len()];
        let vs: Vec<OTF2_MetricValue> = idx
            .iter()
            .map(|&i| OTF2_MetricValue {
                unsigned_int: call.values[i],
            })
            .collect();
        let (w, t) = self.w(at);
        let (class, k) = (*class, idx.len() as u8);
        let code = unsafe {
            OTF2_EvtWriter_Metric(w, NO_ATTRIBUTES, t, class, k, types.as_ptr(), vs.as_ptr())
        };
        self.wrote(at, code, 1)
    }

    /// A lock taken (its acquisition's order among the process's), or a thread joined.
    pub fn acquire(&mut self, at: At, object: u32, kind: u8) -> Step {
        let (li, (w, t)) = (at.loc as usize, self.w(at));
        let process = self.process[li];
        let code = match SyncKind::from_u8(kind) {
            SyncKind::Mutex
            | SyncKind::RwLock
            | SyncKind::Spin
            | SyncKind::OmpLock
            | SyncKind::OmpCritical => {
                let o = self.lock_order.entry((process, object)).or_insert(0);
                *o += 1;
                self.held.insert((li, object), *o);
                let o = *o;
                let p = lock_paradigm(kind);
                unsafe { OTF2_EvtWriter_ThreadAcquireLock(w, NO_ATTRIBUTES, t, p, object, o) }
            }
            SyncKind::Thread => {
                let c = self.refs.thread_contingent(process);
                unsafe { OTF2_EvtWriter_ThreadWait(w, NO_ATTRIBUTES, t, c, object as u64) }
            }
            _ => return self.wrote(at, OTF2_SUCCESS, 0),
        };
        self.wrote(at, code, 1)
    }

    /// A lock released (the acquisition this location holds: another thread may have taken
    /// the lock since, the merge ordering an unlock after the next lock when their clocks say
    /// so), or a thread ended.
    pub fn release(&mut self, at: At, object: u32, kind: u8) -> Step {
        let (li, (w, t)) = (at.loc as usize, self.w(at));
        let process = self.process[li];
        let code = match SyncKind::from_u8(kind) {
            SyncKind::Mutex
            | SyncKind::RwLock
            | SyncKind::Spin
            | SyncKind::OmpLock
            | SyncKind::OmpCritical => {
                let o = self.held.remove(&(li, object)).unwrap_or_else(|| {
                    self.lock_order.get(&(process, object)).copied().unwrap_or(0)
                });
                let p = lock_paradigm(kind);
                unsafe { OTF2_EvtWriter_ThreadReleaseLock(w, NO_ATTRIBUTES, t, p, object, o) }
            }
            SyncKind::Thread => {
                let c = self.refs.thread_contingent(process);
                unsafe { OTF2_EvtWriter_ThreadEnd(w, NO_ATTRIBUTES, t, c, object as u64) }
            }
            _ => return self.wrote(at, OTF2_SUCCESS, 0),
        };
        self.wrote(at, code, 1)
    }
}

/// The paradigm of a lock's records: OpenMP for an OpenMP lock or critical section, else
/// pthread. OTF2 writes both as `ThreadAcquireLock`/`ThreadReleaseLock` (its `OmpAcquireLock`
/// records are deprecated, not to be mixed with them).
fn lock_paradigm(kind: u8) -> OTF2_Paradigm {
    match SyncKind::from_u8(kind) {
        SyncKind::OmpLock | SyncKind::OmpCritical => OTF2_PARADIGM_OPENMP,
        _ => OTF2_PARADIGM_PTHREAD,
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        if let Some(l) = self.cut.take() {
            // SAFETY: made by OTF2_AttributeList_New, deleted once.
            unsafe {
                OTF2_AttributeList_Delete(l);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::posting_call;

    #[test]
    fn a_receive_pairs_with_the_call_entered_nearest_its_post() {
        // an MPI_Startall of two receives at 100, an MPI_Start 400 ns later
        let q = [(100, 1), (100, 2), (500, 3)];
        let at = |p| posting_call(&q, |c: &(i64, u32)| c.0, p).map(|i| q[i].1);
        assert_eq!(at(100), Some(1)); // not the start 400 ns later, within the slack
        assert_eq!(at(99), Some(1));
        assert_eq!(at(499), Some(3));
        assert_eq!(at(290), Some(1));
        assert_eq!(at(310), Some(3));
        assert_eq!(at(9_000), Some(3));
        assert_eq!(at(-900), Some(1));
        assert_eq!(at(-901), None);
        assert_eq!(posting_call(&[] as &[(i64, u32)], |c| c.0, 5), None);
    }
}
