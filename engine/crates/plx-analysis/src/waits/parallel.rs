//! The wait-state analysis as an MPI job (`mpirun -np N plx waits --parallel`): each analysis rank merges and replays only its own block of the measured processes, and the ranks exchange the replay's boundary events; rank 0 gets the rows as the serial analysis gives them.
//!
//! **Blocks.** The M processes with a trace (in [`Model::processes`] order) are cut into N
//! contiguous blocks, one per analysis rank (M ≥ N; a rank beyond M has none). A process's
//! threads stay together: the thread patterns (locks, joins, barriers, OpenMP, monitors) are
//! found inside one block.
//!
//! **Boundary events.** What a location's MPI partners need of it is what happens inside its MPI
//! (and socket) calls: their enters and exits, and the send, receive, send-completion,
//! collective and stream events. Each rank merges its own processes (no clock repair: see
//! below), keeps that merged stream, and gives every other rank its boundary events (one
//! all-gather). Each rank then replays its own stream interleaved with the other ranks'
//! boundary events in the serial merge's order — (time, process), a process's events in their
//! own order — through the same [`Replay`] as the serial analysis, counting only its own
//! locations' waits. The partners' MPI state (their open routine, their messages, collective
//! instances, the receives behind the wrong-order variants) is then what the serial replay has,
//! so each own wait is the serial one; the partners' call paths outside MPI are not known (they
//! matter only to the causes).
//!
//! **Messages.** A message is named by its channel (communicator, sender, receiver, tag) and
//! its number on it, which the sender's and the receiver's blocks count alike (MPI's order per
//! channel), so the two blocks agree without asking each other.
//!
//! **Clock condition.** The serial merge moves a receive recorded before its send (clocks of
//! several hosts) later, with its process's later events. A block cannot: when any receive is
//! not after its send, or the merge of the message events alone ([`crate::clock_condition`],
//! on rank 0) moves any receive, rank 0 runs the serial analysis instead, and says so.
//!
//! **Results.** Rows, and for every call path the first event (time, process, position) that
//! entered it at an own location, go to rank 0: the call paths are numbered in the order of
//! their first entry anywhere, as the serial replay numbers them, so the rows come in its order.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use plx_format::{Experiment, RegionKind, NONE_U32};

use super::replay::{Replay, Setup};
use super::{Callpaths, Pattern, WaitAnalysis, WaitRow};
use crate::hash::FastMap;
use crate::merge::{EventKind, GlobalMerge, MergeOptions, MessageLink, TraceLocation};
use crate::model::Model;
use crate::regions::{RegionInfo, RegionTable};
use crate::selection::Window;
use crate::AnalysisError;

/// The job's communication, as the analysis needs it: one all-gather of bytes.
pub trait Exchange {
    /// This process's rank in the analysis job.
    fn rank(&self) -> usize;
    /// Processes in the analysis job.
    fn size(&self) -> usize;
    /// Every rank's `bytes`, in rank order (a collective call: every rank makes it).
    fn allgather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, AnalysisError>;
}

/// What rank 0 gets of a parallel analysis.
#[derive(Debug)]
pub struct ParallelResult {
    /// The analysis, as the serial one gives it.
    pub analysis: WaitAnalysis,
    /// The clock condition did not hold: the analysis is rank 0's serial one.
    pub serial: bool,
}

/// The processes of analysis rank `rank` of `size`: its contiguous share of `procs`.
pub fn block(procs: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    (rank * procs / size)..((rank + 1) * procs / size)
}

/// The waits of `model` as [`WaitAnalysis::compute`] finds them without causes, computed by every
/// rank of `x` together; `Some` on rank 0.
pub fn compute(
    model: &Model,
    exp: &Experiment,
    window: Window,
    app: Option<u32>,
    x: &dyn Exchange,
) -> Result<Option<ParallelResult>, AnalysisError> {
    let traced: Vec<usize> = (0..model.processes.len())
        .filter(|&p| model.processes[p].measured && model.processes[p].has_trace())
        .collect();
    let own: HashSet<usize> = traced[block(traced.len(), x.rank(), x.size())]
        .iter()
        .copied()
        .collect();
    // the block's merge: its processes alone, on their recorded clocks (see the clock condition)
    let mut mine = model.clone();
    for (i, p) in mine.processes.iter_mut().enumerate() {
        p.measured &= own.contains(&i);
    }
    let opts = MergeOptions {
        repair_clock: false,
        min_latency_ns: None,
    };
    let merge = match own.is_empty() {
        true => None,
        false => Some(GlobalMerge::new(&mine, exp, opts)?),
    };
    let own_locs: Vec<(usize, u32)> = merge.as_ref().map_or(Vec::new(), |m| {
        m.locations()
            .iter()
            .map(|l| (l.process, l.thread))
            .collect()
    });

    // the global locations: the blocks' own, in rank order (blocks follow the process order,
    // as the serial merge's locations do)
    let mut w = Buf::default();
    w.u32(own_locs.len() as u32);
    for &(p, t) in &own_locs {
        w.u32(p as u32);
        w.u32(t);
    }
    let mut locations = Vec::new();
    for b in x.allgather(&w.0)? {
        let mut r = Rd::new(&b);
        for _ in 0..r.u32()? {
            let (p, t) = (r.u32()? as usize, r.u32()?);
            if p >= model.processes.len() {
                return Err(bad("location of an unknown process"));
            }
            locations.push(TraceLocation::of(model, p, t));
        }
    }
    let global: FastMap<(usize, u32), u32> = locations
        .iter()
        .enumerate()
        .map(|(i, l)| ((l.process, l.thread), i as u32))
        .collect();
    // each merge location's global index, process and rank
    let local: Vec<(u32, u32, Option<u32>)> = own_locs
        .iter()
        .map(|&(p, t)| (global[&(p, t)], p as u32, model.processes[p].rank()))
        .collect();

    // own stream on global locations, messages named by channel; boundary events for the others
    let mut ids = Channels::default();
    let mut own_events = Vec::new();
    let mut boundary = Boundary::default();
    let (mut counted, mut beyond) = (0u64, false);
    let mut regions = match merge {
        None => RegionTable::default(),
        Some(m) => {
            m.feed(Some(window.end_ns), |feed| {
                while let Some(ev) = feed.next_event() {
                    if ev.time_ns >= window.end_ns {
                        beyond = true;
                        break;
                    }
                    counted += 1;
                    let (loc, p, rank) = local[ev.location as usize];
                    let kind = ids.rename(ev.kind, rank);
                    own_events.push((ev.time_ns, p, loc, kind));
                    boundary.add(feed.regions(), ev.time_ns, p, loc, kind);
                }
                feed.regions().clone()
            })
            .1
        }
    };
    let mut remote: Vec<(i64, u32, u32, EventKind)> = Vec::new();
    for (r, b) in x.allgather(&boundary.finish())?.iter().enumerate() {
        if r != x.rank() {
            decode_boundary(b, &mut regions, locations.len(), &mut remote)?;
        }
    }
    // stable: a process's events keep their order (they all come from one rank)
    remote.sort_by_key(|e| (e.0, e.1));

    let own_ranks: HashSet<u32> = locations
        .iter()
        .filter(|l| own.contains(&l.process))
        .filter_map(|l| l.rank)
        .collect();
    let setup = Setup {
        loc_rank: locations.iter().map(|l| l.rank).collect(),
        loc_process: locations.iter().map(|l| l.process as u32).collect(),
        loc_thread: locations.iter().map(|l| l.thread).collect(),
        loc_counted: locations
            .iter()
            .map(|l| {
                own.contains(&l.process) && app.is_none_or(|a| model.processes[l.process].app == a)
            })
            .collect(),
        comm_ranks: super::comm_members(model),
        window,
        causes: false,
    };
    let mut replay = Replay::new(setup);
    // a call path's first entry at an own location: (time, process, position in the stream)
    let mut first: FastMap<u32, (i64, u32, u64)> = FastMap::default();
    let mut sends: FastMap<u64, i64> = FastMap::default();
    let mut recvs: FastMap<u64, i64> = FastMap::default();
    let mut unordered = false;
    let (mut a, mut b) = (own_events.iter().peekable(), remote.iter().peekable());
    let mut seq = 0u64;
    loop {
        let take_own = match (a.peek(), b.peek()) {
            (Some(o), Some(r)) => (o.0, o.1) < (r.0, r.1),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let &(t, p, loc, kind) = if take_own { a.next() } else { b.next() }.expect("peeked");
        // the clock condition: each own receive after its send (either may come first)
        match kind {
            EventKind::Send {
                peer,
                message: Some(id),
                ..
            } if own_ranks.contains(&peer) => {
                if recvs.remove(&id).is_some() {
                    unordered = true;
                } else {
                    sends.insert(id, t);
                }
            }
            EventKind::Recv {
                message: Some(link),
                ..
            } if take_own => match sends.remove(&link.id) {
                Some(s) => unordered |= t <= s,
                None => {
                    recvs.insert(link.id, t);
                }
            },
            _ => {}
        }
        replay.event(&regions, loc, t, kind);
        if take_own {
            if let EventKind::Enter { .. } = kind {
                let cp = replay.callpath_of(loc);
                first.entry(cp).or_insert((t, p, seq));
            }
            seq += 1;
        }
    }

    // to rank 0: rows, first entries, events, the clock condition
    let mut w = Buf::default();
    w.u64(counted);
    w.u8(beyond as u8);
    w.u8(unordered as u8);
    w.u32(replay.waits.len() as u32);
    for (&(pattern, loc, cp), &(ns, n)) in &replay.waits {
        w.u8(Pattern::ALL
            .iter()
            .position(|&q| q == pattern)
            .expect("pattern") as u8);
        w.u32(loc);
        w.str(&replay.callpaths.name(cp, &regions));
        w.i64(ns);
        w.u64(n);
    }
    w.u32(first.len() as u32);
    for (&cp, &(t, p, s)) in &first {
        w.str(&replay.callpaths.name(cp, &regions));
        w.i64(t);
        w.u32(p);
        w.u64(s);
    }
    let all = x.allgather(&w.0)?;
    if x.rank() != 0 {
        return Ok(None);
    }
    assemble(model, exp, window, app, locations, &all).map(Some)
}

/// Rank 0: the rows of every rank as one analysis (or the serial one).
fn assemble(
    model: &Model,
    exp: &Experiment,
    window: Window,
    app: Option<u32>,
    locations: Vec<TraceLocation>,
    all: &[Vec<u8>],
) -> Result<ParallelResult, AnalysisError> {
    let mut events = 0u64;
    let mut beyond = false;
    let mut unordered = false;
    let mut rows: Vec<(Pattern, u32, String, i64, u64)> = Vec::new();
    let mut first: HashMap<String, (i64, u32, u64)> = HashMap::new();
    for b in all {
        let mut r = Rd::new(b);
        events += r.u64()?;
        beyond |= r.u8()? != 0;
        unordered |= r.u8()? != 0;
        for _ in 0..r.u32()? {
            let p = *Pattern::ALL
                .get(r.u8()? as usize)
                .ok_or_else(|| bad("pattern"))?;
            rows.push((p, r.u32()?, r.str()?, r.i64()?, r.u64()?));
        }
        for _ in 0..r.u32()? {
            let name = r.str()?;
            let key = (r.i64()?, r.u32()?, r.u64()?);
            let e = first.entry(name).or_insert(key);
            *e = (*e).min(key);
        }
    }
    // the serial merge may move receives on other grounds too (its controlled logical clock
    // over the pairs it matched): its check over the message events alone is the judge
    let moved = crate::merge::clock_condition(model, MergeOptions::default())
        .is_some_and(|c| c.report.shifted_receives > 0 || c.report.violations_after > 0);
    if unordered || moved {
        let analysis =
            WaitAnalysis::compute(model, exp, window, app, false, MergeOptions::default())?;
        return Ok(ParallelResult {
            analysis,
            serial: true,
        });
    }
    // call paths numbered by their first entry, as the serial replay met them
    let mut names: Vec<&String> = first.keys().collect();
    names.sort_by_key(|n| (first[*n], n.as_str()));
    let mut regions = RegionTable::default();
    let mut callpaths = Callpaths::default();
    let mut cp_of: HashMap<String, u32> = HashMap::new();
    let intern = |name: &str, regions: &mut RegionTable, callpaths: &mut Callpaths| {
        let r = regions.intern(RegionInfo {
            name: name.to_string(),
            kind: RegionKind::Function,
            file: String::new(),
            line: 0,
        });
        callpaths.child(NONE_U32, r)
    };
    for n in names {
        let cp = intern(n, &mut regions, &mut callpaths);
        cp_of.insert(n.clone(), cp);
    }
    let mut out: Vec<WaitRow> = rows
        .into_iter()
        .map(|(pattern, location, name, wait_ns, count)| WaitRow {
            pattern,
            location,
            callpath: *cp_of
                .entry(name.clone())
                .or_insert_with(|| intern(&name, &mut regions, &mut callpaths)),
            wait_ns,
            count,
        })
        .collect();
    out.sort_by_key(|r| (r.pattern, r.location, r.callpath));
    Ok(ParallelResult {
        analysis: WaitAnalysis {
            locations,
            regions,
            callpaths,
            rows: out,
            causes: Vec::new(),
            events: events + beyond as u64,
            warnings: Vec::new(),
            found: Vec::new(),
        },
        serial: false,
    })
}

/// Messages named by channel and number: (communicator, sender, receiver, tag) → sends and
/// receives counted so far.
#[derive(Default)]
struct Channels {
    sent: FastMap<(u32, u32, u32, i32), u64>,
    received: FastMap<(u32, u32, u32, i32), u64>,
}

impl Channels {
    fn id(key: (u32, u32, u32, i32), n: u64) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (key, n).hash(&mut h);
        h.finish()
    }

    fn rename(&mut self, kind: EventKind, rank: Option<u32>) -> EventKind {
        let Some(me) = rank else { return kind };
        match kind {
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => {
                let key = (comm.unwrap_or(NONE_U32), me, peer, tag);
                let n = self.sent.entry(key).or_insert(0);
                *n += 1;
                EventKind::Send {
                    peer,
                    tag,
                    bytes,
                    comm,
                    message: Some(Self::id(key, *n - 1)),
                }
            }
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
                message,
            } => {
                let key = (comm.unwrap_or(NONE_U32), peer, me, tag);
                let n = self.received.entry(key).or_insert(0);
                *n += 1;
                EventKind::Recv {
                    peer,
                    tag,
                    bytes,
                    comm,
                    message: Some(MessageLink {
                        id: Self::id(key, *n - 1),
                        send_ns: message.map_or(0, |m| m.send_ns),
                        sender: message.map_or(NONE_U32, |m| m.sender),
                    }),
                }
            }
            k => k,
        }
    }
}

/// A block's boundary events, encoded: the regions they name, then the events.
#[derive(Default)]
struct Boundary {
    regions: Buf,
    region_ids: FastMap<u32, u32>,
    events: Buf,
    n: u32,
}

impl Boundary {
    fn region(&mut self, table: &RegionTable, r: u32) -> u32 {
        let next = self.region_ids.len() as u32;
        *self.region_ids.entry(r).or_insert_with(|| {
            let info = table.get(r);
            self.regions.str(&info.name);
            self.regions.u8(info.kind.to_u8());
            self.regions.str(&info.file);
            self.regions.u32(info.line);
            next
        })
    }

    fn add(&mut self, table: &RegionTable, t: i64, p: u32, loc: u32, kind: EventKind) {
        let boundary_region =
            |r: u32| matches!(table.get(r).kind, RegionKind::Mpi | RegionKind::Socket);
        let head = |w: &mut Buf, tag: u8| {
            w.i64(t);
            w.u32(p);
            w.u32(loc);
            w.u8(tag);
        };
        match kind {
            EventKind::Enter { region } | EventKind::Exit { region } if boundary_region(region) => {
                let id = self.region(table, region);
                let tag = if matches!(kind, EventKind::Enter { .. }) {
                    0
                } else {
                    1
                };
                head(&mut self.events, tag);
                self.events.u32(id);
            }
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
                message,
            } => {
                head(&mut self.events, 2);
                let w = &mut self.events;
                w.u32(peer);
                w.i32(tag);
                w.u64(bytes);
                w.u32(comm.unwrap_or(NONE_U32));
                w.u64(message.expect("named"));
            }
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
                message,
            } => {
                head(&mut self.events, 3);
                let w = &mut self.events;
                w.u32(peer);
                w.i32(tag);
                w.u64(bytes);
                w.u32(comm.unwrap_or(NONE_U32));
                let m = message.expect("named");
                w.u64(m.id);
                w.i64(m.send_ns);
                w.u32(m.sender);
            }
            EventKind::SendDone { thread, mode, send } => {
                head(&mut self.events, 4);
                self.events.u32(thread);
                self.events.u8(mode);
                self.events.u64(send);
            }
            EventKind::Collective {
                comm,
                root,
                bytes_sent,
                bytes_recv,
            } => {
                head(&mut self.events, 5);
                let w = &mut self.events;
                w.u32(comm.unwrap_or(NONE_U32));
                w.u32(root.unwrap_or(NONE_U32));
                w.u64(bytes_sent);
                w.u64(bytes_recv);
            }
            EventKind::StreamSend { stream, end, bytes }
            | EventKind::StreamRecv { stream, end, bytes } => {
                let tag = if matches!(kind, EventKind::StreamSend { .. }) {
                    6
                } else {
                    7
                };
                head(&mut self.events, tag);
                self.events.u64(stream);
                self.events.u64(end);
                self.events.u64(bytes);
            }
            _ => return,
        }
        self.n += 1;
    }

    fn finish(self) -> Vec<u8> {
        let mut w = Buf::default();
        w.u32(self.region_ids.len() as u32);
        w.0.extend_from_slice(&self.regions.0);
        w.u32(self.n);
        w.0.extend_from_slice(&self.events.0);
        w.0
    }
}

fn opt(v: u32) -> Option<u32> {
    (v != NONE_U32).then_some(v)
}

fn decode_boundary(
    b: &[u8],
    regions: &mut RegionTable,
    locations: usize,
    out: &mut Vec<(i64, u32, u32, EventKind)>,
) -> Result<(), AnalysisError> {
    let mut r = Rd::new(b);
    let mut ids = Vec::new();
    for _ in 0..r.u32()? {
        let info = RegionInfo {
            name: r.str()?,
            kind: RegionKind::from_u8(r.u8()?),
            file: r.str()?,
            line: r.u32()?,
        };
        ids.push(regions.intern(info));
    }
    for _ in 0..r.u32()? {
        let (t, p, loc) = (r.i64()?, r.u32()?, r.u32()?);
        if loc as usize >= locations {
            return Err(bad("boundary event of an unknown location"));
        }
        let region = |r: &mut Rd| -> Result<u32, AnalysisError> {
            ids.get(r.u32()? as usize)
                .copied()
                .ok_or_else(|| bad("unknown region"))
        };
        let kind = match r.u8()? {
            0 => EventKind::Enter {
                region: region(&mut r)?,
            },
            1 => EventKind::Exit {
                region: region(&mut r)?,
            },
            2 => EventKind::Send {
                peer: r.u32()?,
                tag: r.i32()?,
                bytes: r.u64()?,
                comm: opt(r.u32()?),
                message: Some(r.u64()?),
            },
            3 => EventKind::Recv {
                peer: r.u32()?,
                tag: r.i32()?,
                bytes: r.u64()?,
                comm: opt(r.u32()?),
                message: Some(MessageLink {
                    id: r.u64()?,
                    send_ns: r.i64()?,
                    sender: r.u32()?,
                }),
            },
            4 => EventKind::SendDone {
                thread: r.u32()?,
                mode: r.u8()?,
                send: r.u64()?,
            },
            5 => EventKind::Collective {
                comm: opt(r.u32()?),
                root: opt(r.u32()?),
                bytes_sent: r.u64()?,
                bytes_recv: r.u64()?,
            },
            6 => EventKind::StreamSend {
                stream: r.u64()?,
                end: r.u64()?,
                bytes: r.u64()?,
            },
            7 => EventKind::StreamRecv {
                stream: r.u64()?,
                end: r.u64()?,
                bytes: r.u64()?,
            },
            _ => return Err(bad("unknown boundary event")),
        };
        out.push((t, p, loc, kind));
    }
    Ok(())
}

fn bad(what: &str) -> AnalysisError {
    AnalysisError::Parallel(format!("a rank's exchange data is damaged: {what}"))
}

/// Little-endian bytes for the exchange.
#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// Reads what [`Buf`] wrote; a short buffer is an error.
struct Rd<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Rd<'a> {
    fn new(b: &'a [u8]) -> Rd<'a> {
        Rd { b, at: 0 }
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], AnalysisError> {
        let s = self
            .b
            .get(self.at..self.at + N)
            .ok_or_else(|| bad("short"))?;
        self.at += N;
        Ok(s.try_into().expect("length"))
    }
    fn u8(&mut self) -> Result<u8, AnalysisError> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, AnalysisError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32, AnalysisError> {
        Ok(i32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, AnalysisError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn i64(&mut self) -> Result<i64, AnalysisError> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    fn str(&mut self) -> Result<String, AnalysisError> {
        let n = self.u32()? as usize;
        let s = self
            .b
            .get(self.at..self.at.saturating_add(n))
            .ok_or_else(|| bad("short"))?;
        self.at += n;
        String::from_utf8(s.to_vec()).map_err(|_| bad("a name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_processes_contiguously() {
        // 64 measured ranks over 4 analysis ranks: 16 each, in order
        let b: Vec<_> = (0..4).map(|r| block(64, r, 4)).collect();
        assert_eq!(b, vec![0..16, 16..32, 32..48, 48..64]);
        // 5 over 3: 1, 2, 2; more analysis ranks than processes: some get none
        let b: Vec<_> = (0..3).map(|r| block(5, r, 3)).collect();
        assert_eq!(b, vec![0..1, 1..3, 3..5]);
        assert_eq!(block(2, 0, 4), 0..0);
        assert_eq!(block(2, 3, 4), 1..2);
    }

    #[test]
    fn a_damaged_exchange_is_an_error() {
        let mut w = Buf::default();
        w.u32(1);
        w.str("MPI_Send");
        let mut t = RegionTable::default();
        let mut out = Vec::new();
        let e = decode_boundary(&w.0[..w.0.len() - 2], &mut t, 4, &mut out).unwrap_err();
        assert!(e.to_string().contains("damaged"), "{e}");
    }
}
