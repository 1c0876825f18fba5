//! MPI message statistics: sender/receiver pairs from MessageStats, sizes per routine and peer, the sent/received cross-check.

use std::collections::BTreeMap;

use plx_format::{Direction, Warning, WarningKind};

use crate::comms::Location;
use crate::model::{Model, ProcessModel, ThreadModel};

/// One MessageStats record of a thread, with its routine as a global region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageStat {
    /// The MPI routine (global region), `None` if the message was outside any region.
    pub region: Option<u32>,
    /// The other side as a world rank, `None` for collectives.
    pub peer: Option<u32>,
    /// Sent or received by the thread.
    pub direction: Direction,
    /// Process-local communicator id (see [`ProcessModel::comms`]).
    pub comm: u32,
    /// Messages (collective calls for collectives).
    pub count: u64,
    /// Total bytes.
    pub bytes: u64,
    /// Smallest message.
    pub min_bytes: u64,
    /// Largest message.
    pub max_bytes: u64,
}

impl MessageStat {
    /// Mean size in bytes (0 with no messages).
    pub fn mean_bytes(&self) -> f64 {
        mean(self.bytes, self.count)
    }

    fn merge(&mut self, o: &MessageStat) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            self.min_bytes = o.min_bytes;
            self.max_bytes = o.max_bytes;
        } else {
            self.min_bytes = self.min_bytes.min(o.min_bytes);
            self.max_bytes = self.max_bytes.max(o.max_bytes);
        }
        self.count += o.count;
        self.bytes += o.bytes;
    }
}

fn mean(bytes: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        bytes as f64 / count as f64
    }
}

/// Point-to-point messages from one location to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairStats {
    /// Sender.
    pub sender: Location,
    /// Receiver.
    pub receiver: Location,
    /// Messages.
    pub messages: u64,
    /// Total bytes.
    pub bytes: u64,
    /// Smallest message.
    pub min_bytes: u64,
    /// Largest message.
    pub max_bytes: u64,
}

impl PairStats {
    /// Mean size in bytes.
    pub fn mean_bytes(&self) -> f64 {
        mean(self.bytes, self.messages)
    }

    fn add(&mut self, count: u64, bytes: u64, min: u64, max: u64) {
        if count == 0 {
            return;
        }
        if self.messages == 0 {
            self.min_bytes = min;
            self.max_bytes = max;
        } else {
            self.min_bytes = self.min_bytes.min(min);
            self.max_bytes = self.max_bytes.max(max);
        }
        self.messages += count;
        self.bytes += bytes;
    }
}

fn valid_peer(p: &ProcessModel, peer: u32) -> bool {
    // peers are model ranks: the process's own world starts at its rank base
    p.mpi
        .as_ref()
        .is_none_or(|m| peer >= p.rank_base && peer - p.rank_base < m.size)
}

/// Point-to-point pairs as one side counts them: `Sent` (each rank's direction-0 statistics: the
/// rank, or with `by_thread` the sending thread, to the peer rank) or `Received` (direction 1:
/// the peer rank to the receiving rank or thread). Collectives are not messages here.
pub fn pairs(model: &Model, side: Direction, by_thread: bool) -> Vec<PairStats> {
    let mut out: BTreeMap<(Location, Location), PairStats> = BTreeMap::new();
    for (rank, p) in model.ranks() {
        for t in &p.threads {
            let me = Location::thread(rank, t.thread).at(by_thread);
            for s in t.messages.iter().filter(|s| s.direction == side) {
                let Some(peer) = s.peer.filter(|&r| valid_peer(p, r)) else {
                    continue;
                };
                let (sender, receiver) = if side == Direction::Sent {
                    (me, Location::rank(peer))
                } else {
                    (Location::rank(peer), me)
                };
                out.entry((sender, receiver))
                    .or_insert(PairStats {
                        sender,
                        receiver,
                        messages: 0,
                        bytes: 0,
                        min_bytes: 0,
                        max_bytes: 0,
                    })
                    .add(s.count, s.bytes, s.min_bytes, s.max_bytes);
            }
        }
    }
    out.into_values().filter(|p| p.messages > 0).collect()
}

/// Message statistics of some threads merged per routine, peer and direction (communicators
/// merged), by routine then peer; collectives (peer `None`) included.
pub fn routine_messages<'a>(
    threads: impl IntoIterator<Item = &'a ThreadModel>,
) -> Vec<MessageStat> {
    let mut out: BTreeMap<(Option<u32>, Option<u32>, Direction), MessageStat> = BTreeMap::new();
    for t in threads {
        for s in &t.messages {
            out.entry((s.region, s.peer, s.direction))
                .or_insert(MessageStat {
                    count: 0,
                    bytes: 0,
                    comm: s.comm,
                    ..*s
                })
                .merge(s);
        }
    }
    out.into_values().collect()
}

/// Sent and received counts of a pair of ranks that disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// Sending rank.
    pub sender: u32,
    /// Receiving rank.
    pub receiver: u32,
    /// Messages the sender says it sent.
    pub sent: u64,
    /// Messages the receiver says it received.
    pub received: u64,
}

/// Pairs of ranks (both in the experiment) whose sent and received message counts differ.
pub fn mismatches(model: &Model) -> Vec<Mismatch> {
    let ranks: Vec<u32> = model.ranks().iter().map(|(r, _)| *r).collect();
    let mut counts: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for p in pairs(model, Direction::Sent, false) {
        counts
            .entry((p.sender.rank, p.receiver.rank))
            .or_default()
            .0 += p.messages;
    }
    for p in pairs(model, Direction::Received, false) {
        counts
            .entry((p.sender.rank, p.receiver.rank))
            .or_default()
            .1 += p.messages;
    }
    counts
        .into_iter()
        .filter(|((s, r), (sent, recv))| {
            sent != recv && ranks.binary_search(s).is_ok() && ranks.binary_search(r).is_ok()
        })
        .map(|((sender, receiver), (sent, received))| Mismatch {
            sender,
            receiver,
            sent,
            received,
        })
        .collect()
}

/// Warnings about the MPI data of a model: ranks seen twice, and sent/received count mismatches.
pub fn mpi_warnings(model: &Model) -> Vec<Warning> {
    let mut out = Vec::new();
    let ranked: Vec<&ProcessModel> = model
        .processes
        .iter()
        .filter(|p| p.rank().is_some())
        .collect();
    for w in ranked.windows(2) {
        if w[0].rank() == w[1].rank() {
            out.push(Warning::file(
                &w[1].path,
                WarningKind::Mpi,
                format!(
                    "rank {} seen again (pid {}; first pid {}): this process is left out of message analyses",
                    w[1].rank().unwrap_or(0),
                    w[1].pid,
                    w[0].pid
                ),
            ));
        }
    }
    let unfinished = |rank: u32| {
        model
            .ranks()
            .iter()
            .any(|(r, p)| *r == rank && p.end.is_none())
    };
    for m in mismatches(model) {
        let mut why = Vec::new();
        for r in [m.sender, m.receiver] {
            if unfinished(r) {
                why.push(format!("rank {r} did not finish"));
            }
        }
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(", "))
        };
        out.push(Warning::file(
            &model.dir,
            WarningKind::MessageCountMismatch,
            format!(
                "messages from rank {} to rank {}: {} sent, {} received{why}",
                m.sender, m.receiver, m.sent, m.received
            ),
        ));
    }
    out
}
