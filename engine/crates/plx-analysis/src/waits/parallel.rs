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
//! below), keeps that merged stream, and gives the other ranks the boundary events they need
//! (one all-to-all): an MPI call's events, with its enter and exit, go to the blocks of its
//! messages' partners and its collectives' members. Each rank then replays its own stream
//! interleaved with the boundary events it got in the serial merge's order — (time,
//! process), a process's events in their own order — through the same [`Replay`] as the serial analysis, counting only its own
//! locations' waits. The partners' MPI state (their open routine, their messages, collective
//! instances, the receives behind the wrong-order variants) is then what the serial replay has,
//! so each own wait is the serial one. The partners' call paths outside MPI and their accounts
//! are not known here: with causes, the late location's block sends them as items
//! ([`Link`]), and the call paths are numbered beforehand as the serial replay numbers them.
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

use super::delay::{Account, CauseKind, Start, Sync};
use super::replay::{Item, Key, Link, Replay, Setup, Spans, Summary};
use super::{Callpaths, CauseRow, Pattern, WaitAnalysis, WaitRow};
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
    /// Sends `bytes` to rank `to` without waiting for it to receive them.
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), AnalysisError>;
    /// The next bytes rank `from` sent this rank (waits for them).
    fn recv(&self, from: usize) -> Result<Vec<u8>, AnalysisError>;
    /// Gives each rank its part of `parts` (one per rank) and returns what each rank gave this
    /// one (a collective call: every rank makes it; an empty part is not sent).
    fn alltoallv(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, AnalysisError> {
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); self.size()];
        let mut sizes = Vec::with_capacity(parts.len() * 8);
        for p in &parts {
            sizes.extend_from_slice(&(p.len() as u64).to_le_bytes());
        }
        // who sends to whom: every rank's part sizes
        let all = self.allgather(&sizes)?;
        for (r, p) in parts.into_iter().enumerate() {
            if r == self.rank() {
                out[r] = p;
            } else if !p.is_empty() {
                self.send(r, p)?;
            }
        }
        for (r, s) in all.iter().enumerate() {
            let at = self.rank() * 8;
            let n = s
                .get(at..at + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            if r != self.rank() && n > 0 {
                out[r] = self.recv(r)?;
            }
        }
        Ok(out)
    }
}

/// What another block gave this one: a boundary event (for a send or a stream write, its
/// number among its location's), or its members of a collective instance.
#[derive(Debug, Clone)]
enum Given {
    Event(EventKind, Option<u64>),
    Summary(Summary),
}

/// Another block's boundary event or summary: (time, process, location, what).
type Remote = (i64, u32, u32, Given);

/// What the blocks need of each other that the routing knows: the blocks of the ranks, of
/// each communicator's members and of each stream's readers.
struct Routes<'a> {
    me: usize,
    size: usize,
    rank_block: &'a HashMap<u32, u32>,
    /// Per communicator: its size, the blocks with members and this block's members.
    comms: Vec<(usize, Vec<u32>, usize)>,
    /// Per stream: the blocks reading it.
    readers: &'a HashMap<u64, Vec<u32>>,
    global: &'a FastMap<(usize, u32), u32>,
    /// Each location's world rank.
    loc_rank: &'a [Option<u32>],
}

/// Per traced stream: the blocks reading it.
type StreamReaders = HashMap<u64, Vec<u32>>;

/// A block's members of a collective instance met so far: (location, rank, entry).
type Arrived = Vec<(u32, Option<u32>, i64)>;

/// Each call path's first entry at an own location: (time, process, position in the own
/// stream).
type FirstEntries = FastMap<u32, (i64, u32, u64)>;

/// Each block's boundary events of this block's stream `events`, encoded: an MPI (or socket)
/// call's events go, with its enter and exit, to the blocks of its messages' partners and of
/// its stream writes' readers; nothing of a call without any. A collective's events go nowhere:
/// when the block's last member of an instance has arrived, its [`Summary`] goes to the other
/// blocks with members, at the place of that member's collective event.
fn route(events: &[(i64, u32, u32, EventKind)], regions: &RegionTable, x: &Routes) -> Vec<Vec<u8>> {
    let boundary = |r: u32| matches!(regions.get(r).kind, RegionKind::Mpi | RegionKind::Socket);
    let mine: Vec<usize> = x.comms.iter().map(|c| c.2).collect();
    // per location: the open calls' events (their positions) and where they go
    let mut open: FastMap<u32, (Vec<usize>, Vec<u32>, usize)> = FastMap::default();
    // per location: the open boundary routines (region, entry), as the replay nests them
    let mut routines: FastMap<u32, Vec<(u32, i64)>> = FastMap::default();
    let mut sends: FastMap<u32, u64> = FastMap::default();
    let mut writes: FastMap<u32, u64> = FastMap::default();
    // a nonblocking send's block, until its completion
    let mut nonblocking: FastMap<(u32, u64), u32> = FastMap::default();
    // collective instances: the next per (process, communicator), the block's members met
    let mut coll_count: FastMap<(u32, u32), u32> = FastMap::default();
    let mut arrived: FastMap<(u32, u32), Arrived> = FastMap::default();
    let mut to: Vec<Vec<(usize, Option<u64>)>> = vec![Vec::new(); x.size];
    let mut summaries: Vec<Vec<(usize, Summary)>> = vec![Vec::new(); x.size];
    let mut number: Vec<Option<u64>> = vec![None; events.len()];
    for (i, &(t, p, loc, kind)) in events.iter().enumerate() {
        let o = open.entry(loc).or_default();
        let dests: Vec<u32> = match kind {
            EventKind::Enter { region } if boundary(region) => {
                routines.entry(loc).or_default().push((region, t));
                o.2 += 1;
                Vec::new()
            }
            EventKind::Exit { region } if boundary(region) => {
                let r = routines.entry(loc).or_default();
                if let Some(at) = r.iter().rposition(|f| f.0 == region) {
                    r.truncate(at);
                }
                if o.2 == 0 {
                    continue;
                }
                o.2 -= 1;
                Vec::new()
            }
            EventKind::Send { peer, message, .. } => {
                let n = sends.entry(loc).or_insert(0);
                number[i] = Some(*n);
                // an unmatched send (its receiver's trace is missing): no block replays it
                let b = message.and(x.rank_block.get(&peer).copied());
                if let (Some(b), true) = (b, o.2 > 0) {
                    nonblocking.insert((loc, *n), b);
                }
                *n += 1;
                b.into_iter().collect()
            }
            EventKind::Recv { peer, message, .. } => message
                .and(x.rank_block.get(&peer).copied())
                .into_iter()
                .collect(),
            EventKind::SendDone { thread, send, .. } => x
                .global
                .get(&(p as usize, thread))
                .and_then(|&sender| nonblocking.remove(&(sender, send)))
                .into_iter()
                .collect(),
            EventKind::Collective { comm, root, .. } => {
                // counted as the replay counts instances: inside a routine, on a
                // communicator of 2 or more
                let routine = routines.get(&loc).and_then(|r| r.last()).copied();
                let (Some((region, enter)), Some(c)) = (routine, comm) else {
                    continue;
                };
                let Some((n, blocks, _)) = x.comms.get(c as usize) else {
                    continue;
                };
                if *n < 2 {
                    continue;
                }
                let k = coll_count.entry((p, c)).or_insert(0);
                let key = (c, *k);
                *k += 1;
                if blocks.len() < 2 {
                    continue; // every member is this block's
                }
                let a = arrived.entry(key).or_default();
                a.push((loc, x.loc_rank[loc as usize], enter));
                if a.len() == mine[c as usize] {
                    let a = arrived.remove(&key).expect("present");
                    let s = Summary {
                        comm: c,
                        instance: key.1,
                        members: a.len() as u32,
                        region,
                        root,
                        candidates: Summary::candidates(&a, root),
                    };
                    for &b in blocks.iter().filter(|&&b| b as usize != x.me) {
                        summaries[b as usize].push((i, s.clone()));
                    }
                }
                continue;
            }
            EventKind::StreamSend { stream, .. } => {
                let n = writes.entry(loc).or_insert(0);
                number[i] = Some(*n);
                *n += 1;
                x.readers.get(&stream).cloned().unwrap_or_default()
            }
            // a read's wait is found at the reader: its block has it
            EventKind::StreamRecv { .. } => Vec::new(),
            // a receive's post goes with the call completing it, to its sender's block: a
            // late receiver waits for the post, not for the Wait's entry
            EventKind::RecvPosted { .. } => Vec::new(),
            _ => continue,
        };
        o.0.push(i);
        o.1.extend(dests);
        if o.2 == 0 {
            // the outermost call returned (or an event outside any): to its blocks
            let (evs, mut ds, _) = std::mem::take(o);
            ds.sort_unstable();
            ds.dedup();
            for d in ds {
                if d as usize != x.me {
                    to[d as usize].extend(evs.iter().map(|&e| (e, number[e])));
                }
            }
        }
    }
    to.into_iter()
        .zip(summaries)
        .map(|(mut evs, sums)| {
            if evs.is_empty() && sums.is_empty() {
                return Vec::new();
            }
            // the stream's order: a process's events in their own order, a summary at its
            // last member's collective event
            evs.sort_unstable_by_key(|e| e.0);
            let mut w = Boundary::default();
            let mut sums = sums.into_iter().peekable();
            for (e, n) in evs {
                while let Some((at, s)) = sums.next_if(|s| s.0 < e) {
                    let (t, p, loc, _) = events[at];
                    w.summary(regions, t, p, loc, &s);
                }
                let (t, p, loc, kind) = events[e];
                w.add(regions, t, p, loc, kind, n);
            }
            for (at, s) in sums {
                let (t, p, loc, _) = events[at];
                w.summary(regions, t, p, loc, &s);
            }
            w.finish()
        })
        .collect()
}

/// What rank 0 gets of a parallel analysis.
#[derive(Debug)]
pub struct ParallelResult {
    /// The analysis, as the serial one gives it.
    pub analysis: WaitAnalysis,
    /// The clock condition did not hold (or, with causes, a stream crossed the blocks): the
    /// analysis is rank 0's serial one.
    pub serial: bool,
    /// What each analysis process did, in rank order.
    pub stats: Vec<Stats>,
}

/// What one analysis process replayed and exchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Its own events replayed.
    pub events: u64,
    /// The other blocks' events replayed.
    pub remote_events: u64,
    /// Waits found at its own locations (their rows).
    pub rows: u64,
    /// Cause rows found at its own locations.
    pub causes: u64,
    /// Bytes it gave the collective exchanges (each all-gather's own part).
    pub gathered_bytes: u64,
    /// Bytes it sent point to point (the causes' items), and the items.
    pub sent_bytes: u64,
    /// Items it sent.
    pub items: u64,
}

/// The processes of analysis rank `rank` of `size`: its contiguous share of `procs`.
pub fn block(procs: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    (rank * procs / size)..((rank + 1) * procs / size)
}

/// The waits of `model` as [`WaitAnalysis::compute`] finds them (with `causes`, their causes
/// too), computed by every rank of `x` together; `Some` on rank 0.
pub fn compute(
    model: &Model,
    exp: &Experiment,
    window: Window,
    app: Option<u32>,
    causes: bool,
    x: &dyn Exchange,
) -> Result<Option<ParallelResult>, AnalysisError> {
    let mut st = Stats::default();
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
    let locations = gather_locations(model, &own_locs, &mut st, x)?;
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

    // each process's block, each rank's, and per communicator the blocks with members
    let proc_block = process_blocks(model.processes.len(), &traced, x.size());
    let rank_block: HashMap<u32, u32> = locations
        .iter()
        .filter_map(|l| l.rank.map(|r| (r, proc_block[l.process])))
        .collect();
    let comm_ranks = super::comm_members(model);

    // own stream on global locations, messages named by channel; boundary events for the
    // blocks holding their partners
    let mut ids = Channels::default();
    let mut own_events = Vec::new();
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
                }
                feed.regions().clone()
            })
            .1
        }
    };
    let (remote, readers) = exchange_boundary(
        &own_events,
        &mut regions,
        &rank_block,
        &comm_ranks,
        &global,
        &locations,
        &mut st,
        x,
    )?;

    let own_ranks: HashSet<u32> = locations
        .iter()
        .filter(|l| own.contains(&l.process))
        .filter_map(|l| l.rank)
        .collect();
    let setup = block_setup(model, &locations, &own, app, &comm_ranks, window, causes);
    let mut replay = Replay::new(setup);
    // with causes: the call paths numbered as the serial replay numbers them, from every
    // block's first entries, and the link to the other blocks
    let mut numbered = None;
    if causes {
        let cps = gather_callpaths(&own_events, &mut regions, &mut st, x)?;
        replay.callpaths = cps.clone();
        numbered = Some(cps);
        let loc_block: Vec<u32> = locations.iter().map(|l| proc_block[l.process]).collect();
        let mut link = Link::new(
            x.rank() as u32,
            locations.iter().map(|l| own.contains(&l.process)).collect(),
            loc_block,
            rank_block,
            &comm_ranks,
        );
        link.stream_blocks = readers;
        replay.link = Some(link);
    }
    let mut post = Post {
        x,
        ended: vec![false; x.size()],
    };
    // a call path's first entry at an own location: (time, process, position in the stream)
    let (first, unordered) = replay_events(
        &own_events,
        &remote,
        &mut replay,
        &regions,
        &own_ranks,
        &mut post,
        &mut st,
    )?;

    if replay.link.is_some() {
        post.finish(&mut replay, &mut st)?;
    }
    // the block's reads no write answered: I/O waits with no partner, as in the serial replay
    replay.finish();

    // to rank 0: rows, first entries, events, the clock condition
    st.rows = replay.waits.len() as u64;
    st.causes = replay.causes.len() as u64;
    let mut w = Buf::default();
    w.u64(counted);
    w.u8(beyond as u8);
    w.u8(unordered as u8);
    if let Some(cps) = numbered {
        // the call paths are the serial ones: rows and causes by number
        encode_numbered(&mut w, &replay);
        st.gathered_bytes += w.0.len() as u64 + STATS_BYTES;
        stats(&mut w, &st);
        let all = x.allgather(&w.0)?;
        if x.rank() != 0 {
            return Ok(None);
        }
        return assemble_numbered(model, exp, window, app, locations, regions, cps, &all).map(Some);
    }
    encode_named(&mut w, &replay, &first, &regions);
    st.gathered_bytes += w.0.len() as u64 + STATS_BYTES;
    stats(&mut w, &st);
    let all = x.allgather(&w.0)?;
    if x.rank() != 0 {
        return Ok(None);
    }
    assemble(model, exp, window, app, locations, &all).map(Some)
}

/// Each of `processes` processes' block among `size` ([`block`] of the `traced` ones;
/// `NONE_U32` for the others).
fn process_blocks(processes: usize, traced: &[usize], size: usize) -> Vec<u32> {
    let mut proc_block = vec![NONE_U32; processes];
    for b in 0..size {
        for &p in &traced[block(traced.len(), b, size)] {
            proc_block[p] = b as u32;
        }
    }
    proc_block
}

/// The call paths numbered as the serial replay numbers them, from every block's first
/// entries (`own_events`' here).
fn gather_callpaths(
    own_events: &[(i64, u32, u32, EventKind)],
    regions: &mut RegionTable,
    st: &mut Stats,
    x: &dyn Exchange,
) -> Result<Callpaths, AnalysisError> {
    let mine = first_entries(own_events, regions);
    let mut w = Buf::default();
    encode_callpaths(&mut w, &mine.0, &mine.1, regions);
    st.gathered_bytes += w.0.len() as u64;
    let all = x.allgather(&w.0)?;
    number_callpaths(&all, regions)
}

/// The global locations: every block's own (`own_locs`: process, thread), in rank order.
fn gather_locations(
    model: &Model,
    own_locs: &[(usize, u32)],
    st: &mut Stats,
    x: &dyn Exchange,
) -> Result<Vec<TraceLocation>, AnalysisError> {
    let mut w = Buf::default();
    w.u32(own_locs.len() as u32);
    for &(p, t) in own_locs {
        w.u32(p as u32);
        w.u32(t);
    }
    let mut locations = Vec::new();
    for b in {
        st.gathered_bytes += w.0.len() as u64;
        x.allgather(&w.0)?
    } {
        let mut r = Rd::new(&b);
        for _ in 0..r.u32()? {
            let (p, t) = (r.u32()? as usize, r.u32()?);
            if p >= model.processes.len() {
                return Err(bad("location of an unknown process"));
            }
            locations.push(TraceLocation::of(model, p, t));
        }
    }
    Ok(locations)
}

/// The replay's setup for a block owning the processes `own`: every global location, those
/// of `own` (and of application `app`) counted.
fn block_setup(
    model: &Model,
    locations: &[TraceLocation],
    own: &HashSet<usize>,
    app: Option<u32>,
    comm_ranks: &[Vec<u32>],
    window: Window,
    causes: bool,
) -> Setup {
    Setup {
        loc_rank: locations.iter().map(|l| l.rank).collect(),
        loc_process: locations.iter().map(|l| l.process as u32).collect(),
        loc_thread: locations.iter().map(|l| l.thread).collect(),
        loc_counted: locations
            .iter()
            .map(|l| {
                own.contains(&l.process) && app.is_none_or(|a| model.processes[l.process].app == a)
            })
            .collect(),
        comm_ranks: comm_ranks.to_vec(),
        window,
        causes,
    }
}

/// The other blocks' boundary events and summaries for this block (in time order), and the
/// blocks reading each traced stream (every block's reads, all-gathered: a stream's writes go
/// to them).
#[allow(clippy::too_many_arguments)]
fn exchange_boundary(
    own_events: &[(i64, u32, u32, EventKind)],
    regions: &mut RegionTable,
    rank_block: &HashMap<u32, u32>,
    comm_ranks: &[Vec<u32>],
    global: &FastMap<(usize, u32), u32>,
    locations: &[TraceLocation],
    st: &mut Stats,
    x: &dyn Exchange,
) -> Result<(Vec<Remote>, StreamReaders), AnalysisError> {
    let mut read: Vec<u64> = own_events
        .iter()
        .filter_map(|e| match e.3 {
            EventKind::StreamRecv { stream, .. } => Some(stream),
            _ => None,
        })
        .collect();
    read.sort_unstable();
    read.dedup();
    let mut w = Buf::default();
    w.u32(read.len() as u32);
    for &s in &read {
        w.u64(s);
    }
    st.gathered_bytes += w.0.len() as u64;
    let mut readers: HashMap<u64, Vec<u32>> = HashMap::new();
    for (b, bytes) in x.allgather(&w.0)?.iter().enumerate() {
        let mut r = Rd::new(bytes);
        for _ in 0..r.u32()? {
            readers.entry(r.u64()?).or_default().push(b as u32);
        }
    }
    let loc_rank: Vec<Option<u32>> = locations.iter().map(|l| l.rank).collect();
    let routes = Routes {
        me: x.rank(),
        size: x.size(),
        rank_block,
        comms: comm_ranks
            .iter()
            .map(|ranks| {
                let mut b: Vec<u32> = ranks
                    .iter()
                    .filter_map(|r| rank_block.get(r).copied())
                    .collect();
                let mine = b.iter().filter(|&&b| b as usize == x.rank()).count();
                b.sort_unstable();
                b.dedup();
                (ranks.len(), b, mine)
            })
            .collect(),
        readers: &readers,
        global,
        loc_rank: &loc_rank,
    };
    let parts = route(own_events, regions, &routes);
    for (b, p) in parts.iter().enumerate() {
        if b != x.rank() && !p.is_empty() {
            st.sent_bytes += p.len() as u64;
        }
    }
    let mut remote: Vec<Remote> = Vec::new();
    for (r, b) in x.alltoallv(parts)?.iter().enumerate() {
        if r != x.rank() && !b.is_empty() {
            decode_boundary(b, regions, locations.len(), &mut remote)?;
        }
    }
    // stable: a process's events keep their order (they all come from one rank)
    remote.sort_by_key(|e| (e.0, e.1));
    Ok((remote, readers))
}

/// Replays the block's own events and the other blocks' boundary events (`remote`) in time
/// order, fetching what the replay needs from the other blocks through `post`: the first entry
/// of each call path at an own location (time, process, position in the own stream), and
/// whether an own receive came at or before its send (the clock condition does not hold).
fn replay_events(
    own_events: &[(i64, u32, u32, EventKind)],
    remote: &[Remote],
    replay: &mut Replay,
    regions: &RegionTable,
    own_ranks: &HashSet<u32>,
    post: &mut Post<'_>,
    st: &mut Stats,
) -> Result<(FirstEntries, bool), AnalysisError> {
    let mut first: FirstEntries = FastMap::default();
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
        let (t, p, loc, kind): (i64, u32, u32, EventKind) = if take_own {
            *a.next().expect("peeked")
        } else {
            let e = b.next().expect("peeked");
            st.remote_events += 1;
            let (kind, n) = match &e.3 {
                Given::Event(kind, n) => (*kind, *n),
                Given::Summary(s) => {
                    for (key, from) in replay.needs_summary(s) {
                        post.fetch(replay, st, key, from)?;
                    }
                    replay.summary(regions, s);
                    continue;
                }
            };
            match (kind, n) {
                (EventKind::Send { .. }, Some(n)) => replay.set_next_send(e.2, n),
                (EventKind::StreamSend { .. }, Some(n)) => replay.set_next_write(e.2, n),
                _ => {}
            }
            (e.0, e.1, e.2, kind)
        };
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
        for (key, from) in replay.needs(loc, &kind) {
            post.fetch(replay, st, key, from)?;
        }
        replay.event(regions, loc, t, kind);
        if replay.link.as_ref().is_some_and(|k| k.outbox.len() >= 256) {
            post.flush(replay, st, false)?;
        }
        if take_own {
            st.events += 1;
            if let EventKind::Enter { .. } = kind {
                let cp = replay.callpath_of(loc);
                first.entry(cp).or_insert((t, p, seq));
            }
            seq += 1;
        }
    }
    Ok((first, unordered))
}

/// Rows and causes of `replay` by call path number (the serial replay's numbers).
fn encode_numbered(w: &mut Buf, replay: &Replay) {
    w.u32(replay.waits.len() as u32);
    for (&(pattern, loc, cp), &(ns, n)) in &replay.waits {
        w.u8(pattern_index(pattern));
        w.u32(loc);
        w.u32(cp);
        w.i64(ns);
        w.u64(n);
    }
    w.u32(replay.causes.len() as u32);
    for (&(pattern, waiting, cause, cp, kind), &ns) in &replay.causes {
        w.u8(pattern_index(pattern));
        w.u32(waiting);
        w.u32(cause);
        w.u32(cp);
        w.u8(kind as u8);
        w.u64(ns.to_bits());
    }
}

/// Rows of `replay` and the first entries `first` ([`replay_events`]) by call path name.
fn encode_named(w: &mut Buf, replay: &Replay, first: &FirstEntries, regions: &RegionTable) {
    w.u32(replay.waits.len() as u32);
    for (&(pattern, loc, cp), &(ns, n)) in &replay.waits {
        w.u8(Pattern::ALL
            .iter()
            .position(|&q| q == pattern)
            .expect("pattern") as u8);
        w.u32(loc);
        w.str(&replay.callpaths.name(cp, regions));
        w.i64(ns);
        w.u64(n);
    }
    w.u32(first.len() as u32);
    for (&cp, &(t, p, s)) in first {
        w.str(&replay.callpaths.name(cp, regions));
        w.i64(t);
        w.u32(p);
        w.u64(s);
    }
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
    let mut stats = Vec::new();
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
        stats.push(read_stats(&mut r)?);
    }
    // the serial merge may move receives on other grounds too (its controlled logical clock
    // over the pairs it matched): its check over the message events alone is the judge
    if unordered || moved(model) {
        let analysis =
            WaitAnalysis::compute(model, exp, window, app, false, MergeOptions::default())?;
        return Ok(ParallelResult {
            analysis,
            serial: true,
            stats,
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
            spans: Spans::default(),
        },
        serial: false,
        stats,
    })
}

/// The serial merge moves a receive (see the clock condition).
fn moved(model: &Model) -> bool {
    crate::merge::clock_condition(model, MergeOptions::default())
        .is_some_and(|c| c.report.shifted_receives > 0 || c.report.violations_after > 0)
}

/// Rank 0, with causes: every rank's rows and causes, their call paths numbered alike
/// (`callpaths`, naming `regions`), as one analysis (or the serial one).
#[allow(clippy::too_many_arguments)]
fn assemble_numbered(
    model: &Model,
    exp: &Experiment,
    window: Window,
    app: Option<u32>,
    locations: Vec<TraceLocation>,
    regions: RegionTable,
    callpaths: Callpaths,
    all: &[Vec<u8>],
) -> Result<ParallelResult, AnalysisError> {
    let mut stats = Vec::new();
    let (mut events, mut beyond, mut alone) = (0u64, false, false);
    let mut rows = Vec::new();
    let mut causes = Vec::new();
    let n_locs = locations.len() as u32;
    let n_cps = callpaths.len() as u32;
    let loc = |r: &mut Rd| -> Result<u32, AnalysisError> {
        let l = r.u32()?;
        (l < n_locs).then_some(l).ok_or_else(|| bad("location"))
    };
    let cp = |r: &mut Rd| -> Result<u32, AnalysisError> {
        let c = r.u32()?;
        (c < n_cps || c == NONE_U32)
            .then_some(c)
            .ok_or_else(|| bad("call path"))
    };
    for b in all {
        let mut r = Rd::new(b);
        events += r.u64()?;
        beyond |= r.u8()? != 0;
        alone |= r.u8()? != 0;
        for _ in 0..r.u32()? {
            rows.push(WaitRow {
                pattern: pattern_at(r.u8()?)?,
                location: loc(&mut r)?,
                callpath: cp(&mut r)?,
                wait_ns: r.i64()?,
                count: r.u64()?,
            });
        }
        for _ in 0..r.u32()? {
            causes.push(CauseRow {
                pattern: pattern_at(r.u8()?)?,
                waiting: loc(&mut r)?,
                cause: loc(&mut r)?,
                cause_callpath: cp(&mut r)?,
                kind: match r.u8()? {
                    0 => CauseKind::Direct,
                    1 => CauseKind::Propagated,
                    _ => return Err(bad("cause kind")),
                },
                delay_ns: f64::from_bits(r.u64()?),
            });
        }
        stats.push(read_stats(&mut r)?);
    }
    if alone || moved(model) {
        let analysis =
            WaitAnalysis::compute(model, exp, window, app, true, MergeOptions::default())?;
        return Ok(ParallelResult {
            analysis,
            serial: true,
            stats,
        });
    }
    rows.sort_by_key(|r| (r.pattern, r.location, r.callpath));
    causes.sort_by_key(|c| (c.pattern, c.waiting, c.cause, c.cause_callpath, c.kind));
    Ok(ParallelResult {
        analysis: WaitAnalysis {
            locations,
            regions,
            callpaths,
            rows,
            causes,
            events: events + beyond as u64,
            warnings: Vec::new(),
            found: Vec::new(),
            spans: Spans::default(),
        },
        serial: false,
        stats,
    })
}

fn pattern_index(p: Pattern) -> u8 {
    Pattern::ALL.iter().position(|&q| q == p).expect("pattern") as u8
}

fn pattern_at(i: u8) -> Result<Pattern, AnalysisError> {
    Pattern::ALL
        .get(i as usize)
        .copied()
        .ok_or_else(|| bad("pattern"))
}

/// The bytes [`stats`] writes.
const STATS_BYTES: u64 = 7 * 8;

fn stats(w: &mut Buf, s: &Stats) {
    for v in [
        s.events,
        s.remote_events,
        s.rows,
        s.causes,
        s.gathered_bytes,
        s.sent_bytes,
        s.items,
    ] {
        w.u64(v);
    }
}

fn read_stats(r: &mut Rd) -> Result<Stats, AnalysisError> {
    Ok(Stats {
        events: r.u64()?,
        remote_events: r.u64()?,
        rows: r.u64()?,
        causes: r.u64()?,
        gathered_bytes: r.u64()?,
        sent_bytes: r.u64()?,
        items: r.u64()?,
    })
}

/// Each call path the own events enter, numbered in the order of their first entry here, and
/// that entry: (time, process, position in the own stream).
fn first_entries(
    events: &[(i64, u32, u32, EventKind)],
    regions: &RegionTable,
) -> (Callpaths, Vec<(i64, u32, u64)>) {
    let mut cps = Callpaths::default();
    let mut first = Vec::new();
    let mut stacks: FastMap<u32, Vec<(u32, u32)>> = FastMap::default();
    for (seq, &(t, p, loc, kind)) in events.iter().enumerate() {
        let s = stacks.entry(loc).or_default();
        match kind {
            // as the replay nests them: the runtime's own work is a root of its own
            EventKind::Enter { region } => {
                let parent = match regions.get(region).kind {
                    RegionKind::Runtime => NONE_U32,
                    _ => s.last().map_or(NONE_U32, |f| f.1),
                };
                let cp = cps.child(parent, region);
                if cp as usize == first.len() {
                    first.push((t, p, seq as u64));
                }
                s.push((region, cp));
            }
            EventKind::Exit { region } => {
                if let Some(i) = s.iter().rposition(|f| f.0 == region) {
                    s.truncate(i);
                }
            }
            _ => {}
        }
    }
    (cps, first)
}

fn encode_callpaths(
    w: &mut Buf,
    cps: &Callpaths,
    first: &[(i64, u32, u64)],
    regions: &RegionTable,
) {
    w.u32(cps.len() as u32);
    for (cp, &(t, p, seq)) in first.iter().enumerate() {
        let (parent, region) = cps.node(cp as u32);
        let info = regions.get(region);
        w.u32(parent);
        w.str(&info.name);
        w.u8(info.kind.to_u8());
        w.str(&info.file);
        w.u32(info.line);
        w.i64(t);
        w.u32(p);
        w.u64(seq);
    }
}

/// Every block's call paths, numbered by their first entry anywhere
/// as the serial replay numbers them, on `regions` (which gets the regions it lacks).
fn number_callpaths(
    all: &[Vec<u8>],
    regions: &mut RegionTable,
) -> Result<Callpaths, AnalysisError> {
    let mut names = RegionTable::default();
    let mut union = Callpaths::default();
    let mut first: Vec<(i64, u32, u64)> = Vec::new();
    for b in all {
        let mut r = Rd::new(b);
        let mut here: Vec<u32> = Vec::new();
        for _ in 0..r.u32()? {
            let parent = r.u32()?;
            let info = RegionInfo {
                name: r.str()?,
                kind: RegionKind::from_u8(r.u8()?),
                file: r.str()?,
                line: r.u32()?,
            };
            let key = (r.i64()?, r.u32()?, r.u64()?);
            let parent = match parent {
                NONE_U32 => NONE_U32,
                p => *here.get(p as usize).ok_or_else(|| bad("call path"))?,
            };
            let cp = union.child(parent, names.intern(info));
            if cp as usize == first.len() {
                first.push(key);
            }
            first[cp as usize] = first[cp as usize].min(key);
            here.push(cp);
        }
    }
    // a call path's parent was entered before it: parents come first
    let mut order: Vec<u32> = (0..union.len() as u32).collect();
    order.sort_by_key(|&c| first[c as usize]);
    let mut new = vec![NONE_U32; order.len()];
    let mut out = Callpaths::default();
    for (i, &c) in order.iter().enumerate() {
        let (parent, region) = union.node(c);
        let parent = match parent {
            NONE_U32 => NONE_U32,
            p => new[p as usize],
        };
        if parent == NONE_U32 && union.node(c).0 != NONE_U32 {
            return Err(bad("call path order"));
        }
        new[c as usize] = out.child(parent, regions.intern(names.get(region).clone()));
        debug_assert_eq!(new[c as usize], i as u32);
    }
    Ok(out)
}

/// A block's items for the others, and its reading of theirs ([`Link`]).
struct Post<'a> {
    x: &'a dyn Exchange,
    /// The blocks whose last items came.
    ended: Vec<bool>,
}

const END: u8 = 255;

impl Post<'_> {
    /// Sends the outbox, an item list per block (and with `end`, the end to every block).
    fn flush(
        &mut self,
        replay: &mut Replay,
        st: &mut Stats,
        end: bool,
    ) -> Result<(), AnalysisError> {
        let Some(k) = &mut replay.link else {
            return Ok(());
        };
        let mut to: Vec<Buf> = (0..self.x.size()).map(|_| Buf::default()).collect();
        for (b, key, item) in k.outbox.drain(..) {
            encode_item(&mut to[b as usize], key, &item);
            st.items += 1;
        }
        for (b, mut w) in to.into_iter().enumerate() {
            if b == self.x.rank() {
                continue;
            }
            if end {
                w.u8(END);
            }
            if !w.0.is_empty() {
                st.sent_bytes += w.0.len() as u64;
                self.x.send(b, w.0)?;
            }
        }
        Ok(())
    }

    /// Reads block `from`'s items until `key` has come.
    fn fetch(
        &mut self,
        replay: &mut Replay,
        st: &mut Stats,
        key: Key,
        from: u32,
    ) -> Result<(), AnalysisError> {
        loop {
            if replay
                .link
                .as_ref()
                .is_some_and(|k| k.inbox.contains_key(&key))
            {
                return Ok(());
            }
            if self.ended[from as usize] {
                return Err(bad("an item that never came"));
            }
            // what the others wait for goes first: no block waits for one that waits for it
            self.flush(replay, st, false)?;
            self.read(replay, from)?;
        }
    }

    fn read(&mut self, replay: &mut Replay, from: u32) -> Result<(), AnalysisError> {
        let b = self.x.recv(from as usize)?;
        let k = replay.link.as_mut().expect("linked");
        let mut r = Rd::new(&b);
        while r.at < b.len() {
            match decode_item(&mut r)? {
                Some((key, item)) => {
                    k.inbox.insert(key, item);
                }
                None => self.ended[from as usize] = true,
            }
        }
        Ok(())
    }

    /// The last items, the end to every block, and every block's end read.
    fn finish(&mut self, replay: &mut Replay, st: &mut Stats) -> Result<(), AnalysisError> {
        self.flush(replay, st, true)?;
        for b in 0..self.x.size() {
            while b != self.x.rank() && !self.ended[b] {
                self.read(replay, b as u32)?;
            }
        }
        Ok(())
    }
}

fn encode_account(w: &mut Buf, a: &Account) {
    w.u32(a.time.len() as u32);
    for (&cp, &ns) in &a.time {
        w.u32(cp);
        w.i64(ns);
    }
    w.u32(a.waited.len() as u32);
    for (&cp, &ns) in &a.waited {
        w.u32(cp);
        w.i64(ns);
    }
    w.u32(a.blame.len() as u32);
    for (&(l, cp), &ns) in &a.blame {
        w.u32(l);
        w.u32(cp);
        w.u64(ns.to_bits());
    }
    w.i64(a.at);
    w.i64(a.from);
    match a.start {
        None => w.u8(0),
        Some(st) => {
            match st.sync {
                Sync::Message(id) => {
                    w.u8(1);
                    w.u64(id);
                }
                Sync::Collective(comm, k) => {
                    w.u8(2);
                    w.u32(comm);
                    w.u32(k);
                }
                Sync::Init => w.u8(3),
            }
            w.i64(st.enter);
            w.i64(st.exit);
            w.u32(st.cp);
            w.i64(st.waited_until);
        }
    }
}

fn decode_account(r: &mut Rd) -> Result<Account, AnalysisError> {
    let mut a = Account::default();
    for _ in 0..r.u32()? {
        a.time.insert(r.u32()?, r.i64()?);
    }
    for _ in 0..r.u32()? {
        a.waited.insert(r.u32()?, r.i64()?);
    }
    for _ in 0..r.u32()? {
        a.blame
            .insert((r.u32()?, r.u32()?), f64::from_bits(r.u64()?));
    }
    a.at = r.i64()?;
    a.from = r.i64()?;
    let sync = match r.u8()? {
        0 => return Ok(a),
        1 => Sync::Message(r.u64()?),
        2 => Sync::Collective(r.u32()?, r.u32()?),
        _ => Sync::Init,
    };
    a.start = Some(Start {
        sync,
        enter: r.i64()?,
        exit: r.i64()?,
        cp: r.u32()?,
        waited_until: r.i64()?,
    });
    Ok(a)
}

fn encode_item(w: &mut Buf, key: Key, item: &Item) {
    match (key, item) {
        (Key::Send(id), Item::Send(cp, a)) => {
            w.u8(0);
            w.u64(id);
            w.u32(*cp);
            encode_account(w, a);
        }
        (Key::Post(id), Item::Post(p)) => {
            w.u8(1);
            w.u64(id);
            match p {
                None => w.u8(0),
                Some((loc, t, cp, a, overtaken)) => {
                    w.u8(1);
                    w.u32(*loc);
                    w.i64(*t);
                    w.u32(*cp);
                    encode_account(w, a);
                    w.u8(*overtaken as u8);
                }
            }
        }
        (Key::Coll(comm, n, b), Item::Coll(v)) => {
            w.u8(2);
            w.u32(comm);
            w.u32(n);
            w.u32(b);
            w.u32(v.len() as u32);
            for (loc, cp, a, pairs) in v {
                w.u32(*loc);
                w.u32(*cp);
                encode_account(w, a);
                w.u32(pairs.len() as u32);
                for (rank, a) in pairs {
                    w.u32(*rank);
                    encode_account(w, a);
                }
            }
        }
        (Key::Write(loc, n), Item::Send(cp, a)) => {
            w.u8(3);
            w.u32(loc);
            w.u64(n);
            w.u32(*cp);
            encode_account(w, a);
        }
        _ => unreachable!("an item under another's key"),
    }
}

/// An item, or `None` for the end of a block's items.
fn decode_item(r: &mut Rd) -> Result<Option<(Key, Item)>, AnalysisError> {
    Ok(Some(match r.u8()? {
        0 => (
            Key::Send(r.u64()?),
            Item::Send(r.u32()?, decode_account(r)?),
        ),
        1 => {
            let id = r.u64()?;
            let p = match r.u8()? {
                0 => None,
                _ => Some((
                    r.u32()?,
                    r.i64()?,
                    r.u32()?,
                    decode_account(r)?,
                    r.u8()? != 0,
                )),
            };
            (Key::Post(id), Item::Post(p))
        }
        2 => {
            let key = Key::Coll(r.u32()?, r.u32()?, r.u32()?);
            let mut v = Vec::new();
            for _ in 0..r.u32()? {
                let (loc, cp, a) = (r.u32()?, r.u32()?, decode_account(r)?);
                let mut pairs = Vec::new();
                for _ in 0..r.u32()? {
                    pairs.push((r.u32()?, decode_account(r)?));
                }
                v.push((loc, cp, a, pairs));
            }
            (key, Item::Coll(v))
        }
        3 => (
            Key::Write(r.u32()?, r.u64()?),
            Item::Send(r.u32()?, decode_account(r)?),
        ),
        END => return Ok(None),
        _ => return Err(bad("unknown item")),
    }))
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

    fn add(
        &mut self,
        table: &RegionTable,
        t: i64,
        p: u32,
        loc: u32,
        kind: EventKind,
        number: Option<u64>,
    ) {
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
                // unmatched: sent along with a matched event of the same call
                w.u64(message.unwrap_or(u64::MAX));
                w.u64(number.expect("numbered"));
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
                match message {
                    Some(m) => {
                        w.u8(1);
                        w.u64(m.id);
                        w.i64(m.send_ns);
                        w.u32(m.sender);
                    }
                    None => w.u8(0),
                }
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
                if tag == 6 {
                    self.events.u64(number.expect("numbered"));
                }
            }
            EventKind::RecvPosted { before_ns } => {
                head(&mut self.events, 8);
                self.events.u64(before_ns);
            }
            _ => return,
        }
        self.n += 1;
    }

    /// A summary of the block's members of a collective instance, at its last member's
    /// collective event (time `t`, process `p`, location `loc`).
    fn summary(&mut self, table: &RegionTable, t: i64, p: u32, loc: u32, s: &Summary) {
        let region = self.region(table, s.region);
        let w = &mut self.events;
        w.i64(t);
        w.u32(p);
        w.u32(loc);
        w.u8(9);
        w.u32(s.comm);
        w.u32(s.instance);
        w.u32(s.members);
        w.u32(region);
        w.u32(s.root.unwrap_or(NONE_U32));
        w.u8(s.candidates.len() as u8);
        for &(l, enter) in &s.candidates {
            w.u32(l);
            w.i64(enter);
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
    out: &mut Vec<Remote>,
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
        let mut n = None;
        let kind = match r.u8()? {
            9 => {
                let (comm, instance, members) = (r.u32()?, r.u32()?, r.u32()?);
                let region = region(&mut r)?;
                let root = opt(r.u32()?);
                let mut candidates = Vec::new();
                for _ in 0..r.u8()? {
                    let l = r.u32()?;
                    if l as usize >= locations {
                        return Err(bad("collective member of an unknown location"));
                    }
                    candidates.push((l, r.i64()?));
                }
                let s = Summary {
                    comm,
                    instance,
                    members,
                    region,
                    root,
                    candidates,
                };
                out.push((t, p, loc, Given::Summary(s)));
                continue;
            }
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
                message: Some(r.u64()?).filter(|&m| m != u64::MAX),
            },
            3 => EventKind::Recv {
                peer: r.u32()?,
                tag: r.i32()?,
                bytes: r.u64()?,
                comm: opt(r.u32()?),
                message: match r.u8()? {
                    0 => None,
                    _ => Some(MessageLink {
                        id: r.u64()?,
                        send_ns: r.i64()?,
                        sender: r.u32()?,
                    }),
                },
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
            8 => EventKind::RecvPosted {
                before_ns: r.u64()?,
            },
            _ => return Err(bad("unknown boundary event")),
        };
        if let EventKind::Send { .. } | EventKind::StreamSend { .. } = kind {
            n = Some(r.u64()?);
        }
        out.push((t, p, loc, Given::Event(kind, n)));
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
