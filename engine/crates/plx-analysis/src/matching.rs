//! Post-mortem matching of the traces' MPI sends and receives (communicator, sender, receiver, tag, FIFO), streamed rank by rank.
//!
//! Each rank's trace is read chunk by chunk; only its send and receive events are kept (sorted
//! by time, as threads' chunks interleave), then fed to per-key FIFO queues where a send meets
//! its receive. Matched messages go to a caller's sink as they are found, so memory holds one
//! rank's sends and receives plus those still waiting for their partner, never whole traces.

use std::collections::{BTreeMap, VecDeque};

use plx_format::{Event, Warning, WarningKind};

use crate::comms::Location;
use crate::hash::FastMap;
use crate::messages::PairStats;
use crate::model::{Model, ProcessModel};
use crate::AnalysisError;

/// Unmatched pairs named one by one in warnings; the rest are summed in one.
const MAX_PAIR_WARNINGS: usize = 10;

/// A message found in both traces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatchedMessage {
    /// Sending rank and thread.
    pub sender: Location,
    /// Receiving rank and thread.
    pub receiver: Location,
    /// Communicator ([`Model::comms`] index), `None` if a side had no CommDef for it.
    pub comm: Option<u32>,
    /// Tag.
    pub tag: i32,
    /// Size as sent.
    pub bytes: u64,
    /// The send event in the sender's ticks.
    pub send_ticks: u64,
    /// The receive event in the receiver's ticks.
    pub recv_ticks: u64,
    /// The send event in rank 0's `CLOCK_MONOTONIC` ns.
    pub send_ns: f64,
    /// The receive event in rank 0's `CLOCK_MONOTONIC` ns.
    pub recv_ns: f64,
}

impl MatchedMessage {
    /// Receive time minus send time, ns (rank 0's time base).
    pub fn transfer_ns(&self) -> f64 {
        self.recv_ns - self.send_ns
    }
}

/// Sends and receives of one rank pair left without a partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnmatchedPair {
    /// Sending rank.
    pub sender: u32,
    /// Receiving rank.
    pub receiver: u32,
    /// Sends never received.
    pub sends: u64,
    /// Receives whose send is not in the traces.
    pub receives: u64,
}

/// What matching found besides the matched messages.
#[derive(Debug, Clone, Default)]
pub struct MatchSummary {
    /// Messages matched.
    pub matched: u64,
    /// Unmatched sends and receives by rank pair.
    pub unmatched: Vec<UnmatchedPair>,
    /// Collective events seen (not messages).
    pub collectives: u64,
    /// Ranks of the experiment without trace events.
    pub ranks_without_trace: Vec<u32>,
    /// Unmatched messages, undefined communicators, unreadable chunks.
    pub warnings: Vec<Warning>,
}

impl MatchSummary {
    /// All unmatched sends.
    pub fn unmatched_sends(&self) -> u64 {
        self.unmatched.iter().map(|u| u.sends).sum()
    }

    /// All unmatched receives.
    pub fn unmatched_receives(&self) -> u64 {
        self.unmatched.iter().map(|u| u.receives).sum()
    }
}

/// One side of a message waiting for the other.
#[derive(Clone, Copy)]
struct Half {
    thread: u32,
    ticks: u64,
    ns: f64,
    bytes: u64,
}

#[derive(Default)]
struct Queue {
    sends: VecDeque<Half>,
    recvs: VecDeque<Half>,
}

/// (communicator: index, or 1<<32 | local id when undefined; sender; receiver; tag).
type Key = (u64, u32, u32, i32);

/// A send or receive of one rank, as read from its trace.
#[derive(Clone, Copy)]
struct Raw {
    ticks: u64,
    thread: u32,
    send: bool,
    peer: u32,
    tag: i32,
    bytes: u64,
    comm: u32,
}

/// Reads one rank's sends and receives in time order; counts collectives.
fn read_rank(p: &ProcessModel, summary: &mut MatchSummary) -> Vec<Raw> {
    let mut out = Vec::new();
    let Some(index) = &p.trace else {
        return out;
    };
    let Some(mut reader) = index.reader_or_warn(&mut summary.warnings) else {
        return out;
    };
    for info in &index.chunks {
        let thread = info.header.thread;
        match reader.read(*info) {
            Ok(events) => {
                for ev in events {
                    let ev = crate::model::globalize_event(p, ev);
                    match ev {
                        Event::Send {
                            peer,
                            tag,
                            bytes,
                            comm,
                            ticks,
                        }
                        | Event::Recv {
                            peer,
                            tag,
                            bytes,
                            comm,
                            ticks,
                        } => out.push(Raw {
                            ticks,
                            thread,
                            send: matches!(ev, Event::Send { .. }),
                            peer,
                            tag,
                            bytes,
                            comm,
                        }),
                        Event::Collective { .. } => summary.collectives += 1,
                        _ => {}
                    }
                }
            }
            Err(w) => {
                summary.warnings.push(w);
                break;
            }
        }
    }
    // Chunks of one thread are in time order, threads interleave: a stable sort by time.
    out.sort_by_key(|r| (r.ticks, r.thread));
    out
}

/// Matches the sends and receives of every rank's trace, calling `sink` for each message found.
/// Errors with [`AnalysisError::NoTrace`] when no rank has a trace.
pub fn match_messages(
    model: &Model,
    mut sink: impl FnMut(&MatchedMessage),
) -> Result<MatchSummary, AnalysisError> {
    match_messages_keyed(model, |m, _| sink(m))
}

/// The communicator part of a matching key: the experiment-wide index of a process-local
/// communicator id, or `1 << 32 | local id` when the process has no CommDef for it.
pub(crate) fn comm_key(p: &ProcessModel, comm: u32) -> u64 {
    key_of_comm(p.comms.get(&comm).copied(), comm)
}

/// [`comm_key`] from what the process's map gives for `local`: its experiment-wide index, or
/// none. The one rule of every matching key (the merge's, plx view's index parts').
#[inline]
pub fn key_of_comm(global: Option<u32>, local: u32) -> u64 {
    match global {
        Some(g) => g as u64,
        None => (1u64 << 32) | local as u64,
    }
}

/// The experiment-wide communicator of a [`comm_key`]: `None` for a local id without a CommDef.
#[inline]
pub(crate) fn comm_of_key(key: u64) -> Option<u32> {
    (key < 1 << 32).then_some(key as u32)
}

/// [`match_messages`], also giving the sink each message's communicator key ([`comm_key`]):
/// messages of one (communicator key, sender, receiver, tag) are matched first send with first
/// receive, so counting them per key says which sends and receives found a partner.
pub(crate) fn match_messages_keyed(
    model: &Model,
    mut sink: impl FnMut(&MatchedMessage, u64),
) -> Result<MatchSummary, AnalysisError> {
    let ranks = model.ranks();
    if !ranks.iter().any(|(_, p)| p.has_trace()) {
        return Err(AnalysisError::NoTrace(model.dir.clone()));
    }
    let mut summary = MatchSummary::default();
    let mut queues: FastMap<Key, Queue> = FastMap::default();
    // ranks are read (decoded) in parallel a window at a time, then matched in rank order:
    // the pairs, the sink's calls and the warnings do not depend on the threads, and memory
    // holds one window's sends and receives
    let window = 4 * rayon::current_num_threads();
    for batch in ranks.chunks(window) {
        let read: Vec<(Vec<Raw>, MatchSummary)> = {
            use rayon::prelude::*;
            batch
                .par_iter()
                .map(|(_, p)| {
                    let mut s = MatchSummary::default();
                    let raws = if p.has_trace() {
                        read_rank(p, &mut s)
                    } else {
                        Vec::new()
                    };
                    (raws, s)
                })
                .collect()
        };
        for (&(rank, p), (raws, s)) in batch.iter().zip(read) {
            if !p.has_trace() {
                summary.ranks_without_trace.push(rank);
                continue;
            }
            summary.warnings.extend(s.warnings);
            summary.collectives += s.collectives;
            let mut undefined: Vec<u32> = Vec::new();
            for raw in raws {
                let comm = comm_key(p, raw.comm);
                if comm >> 32 != 0 && !undefined.contains(&raw.comm) {
                    undefined.push(raw.comm);
                }
                let (sender, receiver) = if raw.send {
                    (rank, raw.peer)
                } else {
                    (raw.peer, rank)
                };
                let half = Half {
                    thread: raw.thread,
                    ticks: raw.ticks,
                    ns: p.rank0_ns(raw.ticks),
                    bytes: raw.bytes,
                };
                let q = queues.entry((comm, sender, receiver, raw.tag)).or_default();
                let (mine, theirs) = if raw.send {
                    (&mut q.sends, &mut q.recvs)
                } else {
                    (&mut q.recvs, &mut q.sends)
                };
                let Some(other) = theirs.pop_front() else {
                    mine.push_back(half);
                    continue;
                };
                let (s, r) = if raw.send {
                    (half, other)
                } else {
                    (other, half)
                };
                summary.matched += 1;
                sink(
                    &MatchedMessage {
                        sender: Location::thread(sender, s.thread),
                        receiver: Location::thread(receiver, r.thread),
                        comm: (comm >> 32 == 0).then_some(comm as u32),
                        tag: raw.tag,
                        bytes: s.bytes,
                        send_ticks: s.ticks,
                        recv_ticks: r.ticks,
                        send_ns: s.ns,
                        recv_ns: r.ns,
                    },
                    comm,
                );
            }
            for c in undefined {
                summary.warnings.push(Warning::file(
                &p.path,
                WarningKind::Mpi,
                format!("rank {rank}: messages on communicator {c}, which has no CommDef: matched by its local id"),
            ));
            }
        }
    }
    let mut left: BTreeMap<(u32, u32), UnmatchedPair> = BTreeMap::new();
    for ((_, sender, receiver, _), q) in queues {
        if q.sends.is_empty() && q.recvs.is_empty() {
            continue;
        }
        let u = left.entry((sender, receiver)).or_insert(UnmatchedPair {
            sender,
            receiver,
            sends: 0,
            receives: 0,
        });
        u.sends += q.sends.len() as u64;
        u.receives += q.recvs.len() as u64;
    }
    summary.unmatched = left.into_values().collect();
    unmatched_warnings(model, &ranks, &mut summary);
    Ok(summary)
}

fn unmatched_warnings(model: &Model, ranks: &[(u32, &ProcessModel)], summary: &mut MatchSummary) {
    let why = |rank: u32| -> Option<String> {
        match ranks.iter().find(|(r, _)| *r == rank) {
            None => Some(format!("rank {rank} is not in the experiment")),
            Some((_, p)) if !p.has_trace() => Some(format!("rank {rank} has no trace")),
            Some((_, p)) if p.end.is_none() => Some(format!("rank {rank} did not finish")),
            Some(_) => None,
        }
    };
    let mut named = 0;
    let (mut rest_sends, mut rest_recvs) = (0u64, 0u64);
    for u in &summary.unmatched {
        for (count, what) in [
            (u.sends, "sends were never received"),
            (u.receives, "receives have no matching send"),
        ] {
            if count == 0 {
                continue;
            }
            if named == MAX_PAIR_WARNINGS {
                if what.starts_with("sends") {
                    rest_sends += count;
                } else {
                    rest_recvs += count;
                }
                continue;
            }
            named += 1;
            let reasons: Vec<String> = [u.sender, u.receiver].into_iter().filter_map(why).collect();
            let reasons = if reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", reasons.join(", "))
            };
            summary.warnings.push(Warning::file(
                &model.dir,
                WarningKind::UnmatchedMessages { count },
                format!(
                    "unmatched messages from rank {} to rank {}: {count} {what}{reasons}",
                    u.sender, u.receiver
                ),
            ));
        }
    }
    if rest_sends + rest_recvs > 0 {
        summary.warnings.push(Warning::file(
            &model.dir,
            WarningKind::UnmatchedMessages {
                count: rest_sends + rest_recvs,
            },
            format!(
                "unmatched messages of other rank pairs: {rest_sends} sends never received, {rest_recvs} receives without a send"
            ),
        ));
    }
}

/// Sums matched messages per (sender, receiver) location, by thread or by rank.
#[derive(Debug, Clone, Default)]
pub struct PairCounter {
    by_thread: bool,
    pairs: BTreeMap<(Location, Location), PairStats>,
}

impl PairCounter {
    /// Counts at thread (`rank.thread`) or rank granularity.
    pub fn new(by_thread: bool) -> Self {
        PairCounter {
            by_thread,
            pairs: BTreeMap::new(),
        }
    }

    /// Counts one message.
    pub fn add(&mut self, m: &MatchedMessage) {
        let (s, r) = (m.sender.at(self.by_thread), m.receiver.at(self.by_thread));
        let p = self.pairs.entry((s, r)).or_insert(PairStats {
            sender: s,
            receiver: r,
            messages: 0,
            bytes: 0,
            min_bytes: m.bytes,
            max_bytes: m.bytes,
        });
        p.messages += 1;
        p.bytes += m.bytes;
        p.min_bytes = p.min_bytes.min(m.bytes);
        p.max_bytes = p.max_bytes.max(m.bytes);
    }

    /// The pairs by sender, then receiver.
    pub fn pairs(self) -> Vec<PairStats> {
        self.pairs.into_values().collect()
    }
}
