//! Synthetic MPI experiments for tests and examples: ranks, communicators, messages and collectives, as profiles or traces.
//!
//! Every rank is a [`SynthProcess`] (1 tick = 1 ns) with `main` (region 1) on thread 0 and
//! `worker` (region 2) on the others; each MPI call is an *op*: an enter/exit pair of an MPI
//! routine (regions 3, 4, ... in order of first use, the same ids in every rank) around at most
//! one send, receive or collective event. [`MpiWorld::write`] derives from the ops everything
//! the runtime would write: callpath profiles (or, with a trace, trace chunks and profiles
//! without nodes), MessageStats, MpiInit, the CommDefs of MPI_COMM_WORLD and MPI_COMM_SELF.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;

use crate::event::{Event, EventEncoder};
use crate::mpi::{ClockOffset, CommDef, Direction, MessageStats, ThreadLevel};
use crate::records::{Record, ThreadProfile, NONE_U32};
use crate::synth::{NodeSpec, SynthProcess};

/// Region id of the first MPI routine.
pub const FIRST_ROUTINE: u32 = 3;

/// One point-to-point message: the sender's send op and the receiver's receive op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Sender (rank, thread).
    pub from: (u32, u32),
    /// Receiver (rank, thread).
    pub to: (u32, u32),
    /// Tag.
    pub tag: i32,
    /// Size in bytes.
    pub bytes: u64,
    /// The sender's process-local communicator id.
    pub send_comm: u32,
    /// The receiver's process-local communicator id.
    pub recv_comm: u32,
    /// The send event, in the sender's ticks; the send op is `[send_ticks, send_ticks + send_cost]`.
    pub send_ticks: u64,
    /// Duration of the send op after its event.
    pub send_cost: u64,
    /// The receive event, in the receiver's ticks; the receive op is `[recv_ticks - recv_wait, recv_ticks]`.
    pub recv_ticks: u64,
    /// Duration of the receive op before its event.
    pub recv_wait: u64,
    /// MPI routine of the send op.
    pub send_routine: String,
    /// MPI routine of the receive op.
    pub recv_routine: String,
    /// `Some(t)`: the receive was posted (MPI_Irecv) at `t`, receiver's ticks: its op holds a
    /// `recv_posted` event before the receive, as the runtime writes in the Wait completing it.
    pub recv_posted: Option<u64>,
}

impl Msg {
    /// `bytes` from `from` to `to` on MPI_COMM_WORLD with tag 0 by MPI_Send/MPI_Recv, ops of no duration.
    pub fn new(
        from: (u32, u32),
        to: (u32, u32),
        bytes: u64,
        send_ticks: u64,
        recv_ticks: u64,
    ) -> Msg {
        Msg {
            from,
            to,
            tag: 0,
            bytes,
            send_comm: 0,
            recv_comm: 0,
            send_ticks,
            send_cost: 0,
            recv_ticks,
            recv_wait: 0,
            send_routine: "MPI_Send".to_string(),
            recv_routine: "MPI_Recv".to_string(),
            recv_posted: None,
        }
    }

    /// Its receive posted by MPI_Irecv at `ticks` (receiver's ticks), completed by its op.
    pub fn posted(mut self, ticks: u64) -> Msg {
        self.recv_posted = Some(ticks);
        self
    }

    /// With tag `tag`.
    pub fn tag(mut self, tag: i32) -> Msg {
        self.tag = tag;
        self
    }

    /// On communicators with local ids `send_comm` (sender) and `recv_comm` (receiver).
    pub fn comm(mut self, send_comm: u32, recv_comm: u32) -> Msg {
        self.send_comm = send_comm;
        self.recv_comm = recv_comm;
        self
    }

    /// Ops lasting: the send `send_cost` after its event, the receive `recv_wait` before its event.
    pub fn durations(mut self, send_cost: u64, recv_wait: u64) -> Msg {
        self.send_cost = send_cost;
        self.recv_wait = recv_wait;
        self
    }

    /// By routines `send` and `recv` (e.g. MPI_Isend, MPI_Wait).
    pub fn routines(mut self, send: &str, recv: &str) -> Msg {
        self.send_routine = send.to_string();
        self.recv_routine = recv.to_string();
        self
    }
}

/// One MPI call of a thread.
#[derive(Debug, Clone, PartialEq)]
struct Op {
    thread: u32,
    region: u32,
    enter: u64,
    exit: u64,
    event: Option<Event>,
    /// A receive's post (`recv_posted` before `event`).
    posted: Option<u64>,
    seq: usize,
}

/// One rank under construction.
#[derive(Debug, Clone)]
pub struct SynthRank {
    /// Host name.
    pub host: String,
    /// Pid.
    pub pid: u32,
    /// Extra communicators (beyond world and self).
    pub comms: Vec<CommDef>,
    /// ClockOffset records.
    pub offsets: Vec<ClockOffset>,
    /// `Some(t)`: the rank was killed at tick `t` (ops after it are lost; no profiles, no
    /// MessageStats, no ProcessEnd).
    pub crashed_at: Option<u64>,
    /// With `crashed_at`: the rank leaves the live files a killed runtime leaves — per thread
    /// `live.<t>.nodes` (not when traced: trace mode keeps no tree) with the ops before the
    /// crash (main still open: no time), and `live.<t>.mpi` with their message statistics.
    pub live_files: bool,
    /// Threads besides 0.
    pub threads: BTreeSet<u32>,
    ops: Vec<Op>,
}

/// A synthetic MPI job: `size` ranks on host `node1`, pid 1000 + rank.
#[derive(Debug, Clone)]
pub struct MpiWorld {
    /// The ranks by rank.
    pub ranks: Vec<SynthRank>,
    /// Write trace chunks (profiles without nodes, as `plx run --trace` does).
    pub trace: bool,
    /// Ops per trace chunk (so that matching crosses chunk boundaries).
    pub chunk_ops: usize,
    routines: Vec<String>,
    /// The routines that are socket calls (region kind 5), not MPI's.
    sockets: BTreeSet<u32>,
    seq: usize,
}

impl MpiWorld {
    /// `size` ranks, profile mode, 3 ops per trace chunk.
    pub fn new(size: u32) -> MpiWorld {
        MpiWorld {
            ranks: (0..size)
                .map(|r| SynthRank {
                    host: "node1".to_string(),
                    pid: 1000 + r,
                    comms: Vec::new(),
                    offsets: Vec::new(),
                    crashed_at: None,
                    live_files: false,
                    threads: BTreeSet::new(),
                    ops: Vec::new(),
                })
                .collect(),
            trace: false,
            chunk_ops: 3,
            routines: Vec::new(),
            sockets: BTreeSet::new(),
            seq: 0,
        }
    }

    /// The region id of an MPI routine (defined on first use).
    pub fn routine(&mut self, name: &str) -> u32 {
        let i = match self.routines.iter().position(|r| r == name) {
            Some(i) => i,
            None => {
                self.routines.push(name.to_string());
                self.routines.len() - 1
            }
        };
        FIRST_ROUTINE + i as u32
    }

    /// An MPI call of `routine` on (rank, thread) from `enter` to `exit`, around `event` if any.
    pub fn op(
        &mut self,
        (rank, thread): (u32, u32),
        routine: &str,
        enter: u64,
        exit: u64,
        event: Option<Event>,
    ) -> &mut Self {
        let region = self.routine(routine);
        self.seq += 1;
        let seq = self.seq;
        let r = &mut self.ranks[rank as usize];
        if thread != 0 {
            r.threads.insert(thread);
        }
        r.ops.push(Op {
            thread,
            region,
            enter,
            exit,
            event,
            posted: None,
            seq,
        });
        self
    }

    /// A socket call `routine` (a region of kind socket) on (rank, thread) from `enter` to
    /// `exit`, around a stream event (`Event::StreamSend`, `Event::StreamRecv`) if any.
    pub fn socket_call(
        &mut self,
        at: (u32, u32),
        routine: &str,
        enter: u64,
        exit: u64,
        event: Option<Event>,
    ) -> &mut Self {
        let region = self.routine(routine);
        self.sockets.insert(region);
        self.op(at, routine, enter, exit, event)
    }

    /// A point-to-point message: a send op on the sender, a receive op on the receiver.
    pub fn message(&mut self, m: &Msg) -> &mut Self {
        let send = Event::Send {
            peer: m.to.0,
            tag: m.tag,
            bytes: m.bytes,
            comm: m.send_comm,
            ticks: m.send_ticks,
        };
        let recv = Event::Recv {
            peer: m.from.0,
            tag: m.tag,
            bytes: m.bytes,
            comm: m.recv_comm,
            ticks: m.recv_ticks,
        };
        self.op(
            m.from,
            &m.send_routine,
            m.send_ticks,
            m.send_ticks + m.send_cost,
            Some(send),
        );
        self.op(
            m.to,
            &m.recv_routine,
            m.recv_ticks.saturating_sub(m.recv_wait),
            m.recv_ticks,
            Some(recv),
        );
        if let Some(op) = self.ranks[m.to.0 as usize].ops.last_mut() {
            op.posted = m.recv_posted;
        }
        self
    }

    /// A collective call of `routine` on (rank, thread) over `[enter, exit]`, its event at `exit`.
    #[allow(clippy::too_many_arguments)]
    pub fn collective(
        &mut self,
        at: (u32, u32),
        routine: &str,
        comm: u32,
        root: u32,
        bytes_sent: u64,
        bytes_recv: u64,
        enter: u64,
        exit: u64,
    ) -> &mut Self {
        let ev = Event::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
            ticks: exit,
        };
        self.op(at, routine, enter, exit, Some(ev))
    }

    /// The [`SynthProcess`] of one rank, ready to write.
    pub fn process(&self, rank: u32) -> SynthProcess {
        let r = &self.ranks[rank as usize];
        let size = self.ranks.len() as u32;
        let crash = r.crashed_at.unwrap_or(u64::MAX);
        let mut ops: Vec<&Op> = r.ops.iter().filter(|o| o.exit <= crash).collect();
        ops.sort_by_key(|o| (o.enter, o.seq));
        let end = r.ops.iter().map(|o| o.exit).max().unwrap_or(0) + 1000;
        let level = if r.threads.is_empty() {
            ThreadLevel::Single
        } else {
            ThreadLevel::Multiple
        };

        let mut p = SynthProcess::new(&r.host, r.pid, &["./app", "--ranks"]);
        p.functions(&[(1, "main"), (2, "worker")]);
        let routines: Vec<(u32, &str)> = self
            .routines
            .iter()
            .enumerate()
            .map(|(i, n)| (FIRST_ROUTINE + i as u32, n.as_str()))
            .filter(|(id, _)| !self.sockets.contains(id))
            .collect();
        p.mpi_routines(&routines);
        for &id in &self.sockets {
            let name = &self.routines[(id - FIRST_ROUTINE) as usize];
            p.region(id, crate::records::RegionKind::Socket, name);
        }
        p.thread(0, r.pid, "main", 0);
        for t in &r.threads {
            p.thread(*t, r.pid + 100 * t, "worker", 0);
        }
        p.mpi_init(rank, size, level, 1);
        // the world lists no ranks, as the runtime writes it (format version 3)
        p.comm(0, 0, &[]);
        p.comm(1, 0, &[rank]);
        for c in &r.comms {
            p.record(Record::CommDef(c.clone()));
        }
        for o in &r.offsets {
            p.record(Record::ClockOffset(*o));
        }

        let threads: Vec<u32> = std::iter::once(0)
            .chain(r.threads.iter().copied())
            .collect();
        if self.trace {
            let close_at = r.crashed_at.is_none().then_some(end);
            self.write_chunks(&mut p, &threads, &ops, close_at);
        }
        if r.crashed_at.is_some() {
            for &t in threads.iter().filter(|_| r.live_files) {
                let mine: Vec<&&Op> = ops.iter().filter(|o| o.thread == t).collect();
                if !self.trace {
                    p.live_nodes(t, &tree(t, &mine, None));
                }
                let stats = message_stats(t, &mine);
                if !stats.is_empty() {
                    p.live_mpi(t, &stats);
                }
            }
            return p;
        }
        for &t in &threads {
            let mine: Vec<&&Op> = ops.iter().filter(|o| o.thread == t).collect();
            if self.trace {
                // trace mode: no nodes; the events recorded are counted
                let events: usize = 2 + mine
                    .iter()
                    .map(|o| 2 + o.event.is_some() as usize + o.posted.is_some() as usize)
                    .sum::<usize>();
                p.record(Record::ThreadProfile(ThreadProfile {
                    thread: t,
                    end_ticks: end,
                    cpu_ns: end / 2,
                    trace_events: events as u64,
                    lost_events: 0,
                    lost_nodes: 0,
                    nodes: Vec::new(),
                }));
            } else {
                p.profile(t, end, end / 2, &tree(t, &mine, Some(end)));
            }
            for s in message_stats(t, &mine) {
                p.record(Record::MessageStats(s));
            }
        }
        p.end(end, 0);
        p
    }

    fn write_chunks(
        &self,
        p: &mut SynthProcess,
        threads: &[u32],
        ops: &[&Op],
        close_at: Option<u64>,
    ) {
        let mut chunks: Vec<(u64, u32, EventEncoder)> = Vec::new();
        for &t in threads {
            let root = if t == 0 { 1 } else { 2 };
            let mine: Vec<&&Op> = ops.iter().filter(|o| o.thread == t).collect();
            let mut enc = EventEncoder::new(0);
            enc.enter(root, 0);
            let mut in_chunk = 0;
            for o in mine {
                if in_chunk == self.chunk_ops.max(1) {
                    chunks.push((enc.base_ticks(), t, enc));
                    enc = EventEncoder::new(o.enter);
                    in_chunk = 0;
                }
                enc.enter(o.region, o.enter);
                if let (Some(posted), Some(e)) = (o.posted, &o.event) {
                    enc.recv_posted(posted, e.ticks());
                }
                match o.event {
                    Some(Event::Send {
                        peer,
                        tag,
                        bytes,
                        comm,
                        ticks,
                    }) => {
                        enc.send(peer, tag, bytes, comm, ticks);
                    }
                    Some(Event::Recv {
                        peer,
                        tag,
                        bytes,
                        comm,
                        ticks,
                    }) => {
                        enc.recv(peer, tag, bytes, comm, ticks);
                    }
                    Some(Event::Collective {
                        comm,
                        root,
                        bytes_sent,
                        bytes_recv,
                        ticks,
                    }) => {
                        enc.collective(comm, root, bytes_sent, bytes_recv, ticks);
                    }
                    Some(Event::CollDone {
                        thread,
                        collective,
                        ticks,
                    }) => {
                        enc.coll_done(thread, collective, ticks);
                    }
                    Some(Event::StreamSend {
                        stream,
                        end,
                        bytes,
                        ticks,
                    }) => {
                        enc.stream_send(stream, end, bytes, ticks);
                    }
                    Some(Event::StreamRecv {
                        stream,
                        end,
                        bytes,
                        ticks,
                    }) => {
                        enc.stream_recv(stream, end, bytes, ticks);
                    }
                    _ => {}
                }
                enc.exit(o.region, o.exit);
                in_chunk += 1;
            }
            // a killed rank's main stays open: its last chunk ends with its last op
            if let Some(end) = close_at {
                enc.exit(root, end);
            }
            chunks.push((enc.base_ticks(), t, enc));
        }
        chunks.sort_by_key(|(base, t, _)| (*base, *t));
        for (_, t, enc) in &chunks {
            p.chunk(*t, enc);
        }
    }

    /// Writes every rank's `<host>.<pid>/` under `dir`.
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        for rank in 0..self.ranks.len() as u32 {
            self.process(rank).write(dir)?;
        }
        Ok(())
    }
}

/// The callpath tree of one thread's ops: `main` (thread 0) or `worker` from 0 to `end` (`None`:
/// still open, so no time) with one child per MPI routine.
fn tree(thread: u32, ops: &[&&Op], end: Option<u64>) -> Vec<NodeSpec> {
    let root = if thread == 0 { 1 } else { 2 };
    let in_ops: u64 = ops.iter().map(|o| o.exit - o.enter).sum();
    let (incl, excl) = end.map_or((0, 0), |e| (e, e - in_ops));
    let mut nodes = vec![(None, root, 1, ops.len() as u64, incl, excl)];
    let mut by_region: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for o in ops {
        let e = by_region.entry(o.region).or_default();
        e.0 += 1;
        e.1 += o.exit - o.enter;
    }
    for (region, (calls, time)) in by_region {
        nodes.push((Some(0), region, calls, 0, time, time));
    }
    nodes
}

/// MessageStats of one thread's ops, as the runtime aggregates them (collectives: one record of
/// bytes sent, one of bytes received, `count` = calls).
fn message_stats(thread: u32, ops: &[&&Op]) -> Vec<MessageStats> {
    let mut out: Vec<MessageStats> = Vec::new();
    let mut add = |region, peer, direction, comm, bytes: u64| match out
        .iter_mut()
        .find(|s| (s.region, s.peer, s.direction, s.comm) == (region, peer, direction, comm))
    {
        Some(s) => {
            s.count += 1;
            s.bytes += bytes;
            s.min_bytes = s.min_bytes.min(bytes);
            s.max_bytes = s.max_bytes.max(bytes);
        }
        None => out.push(MessageStats {
            thread,
            region,
            peer,
            direction,
            comm,
            count: 1,
            bytes,
            min_bytes: bytes,
            max_bytes: bytes,
        }),
    };
    for o in ops {
        match o.event {
            Some(Event::Send {
                peer, bytes, comm, ..
            }) => add(o.region, peer, Direction::Sent, comm, bytes),
            Some(Event::Recv {
                peer, bytes, comm, ..
            }) => add(o.region, peer, Direction::Received, comm, bytes),
            Some(Event::Collective {
                comm,
                bytes_sent,
                bytes_recv,
                ..
            }) => {
                add(o.region, NONE_U32, Direction::Sent, comm, bytes_sent);
                add(o.region, NONE_U32, Direction::Received, comm, bytes_recv);
            }
            _ => {}
        }
    }
    out
}
