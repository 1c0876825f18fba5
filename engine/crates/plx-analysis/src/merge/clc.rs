//! The clock condition: which messages the matching pairs up (a pre-pass over the traces), and the controlled logical clock's report.
//!
//! The pre-pass is [`crate::matching`]'s own matching, so the merge pairs exactly the messages
//! `plx comm` does: it counts the matched messages per key (communicator, sender, receiver, tag).
//! Messages of one key are matched first send with first receive, so in the merged stream the
//! i-th send and the i-th receive of a key have a partner exactly when i < that count; the merge
//! then only queues sends that will be received and only waits for sends that will come.

use std::collections::VecDeque;
use std::fmt;

use plx_format::Warning;

use crate::hash::FastMap;
use crate::matching::{match_messages_keyed, MatchSummary};
use crate::model::Model;

/// Default minimum message latency for repairs, ns (used when no smaller transfer is observed).
pub const DEFAULT_MIN_LATENCY_NS: i64 = 1_000;

/// (communicator key as in matching, sender rank, receiver rank, tag).
pub(crate) type MsgKey = (u64, u32, u32, i32);

/// What the clock-condition check and repair found (see [`crate::merge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockReport {
    /// Messages matched in the traces.
    pub messages: u64,
    /// Matched messages whose receive event is before the send event once each rank's time is
    /// put on rank 0's clock by the ClockOffset records (before any repair).
    pub violations_before: u64,
    /// Whether the controlled logical clock was applied.
    pub repaired: bool,
    /// Minimum message latency a repaired receive is placed after its send, ns.
    pub min_latency_ns: i64,
    /// Receives moved later (with every later event of their process) to satisfy the condition.
    pub shifted_receives: u64,
    /// Largest shift of a process's clock, ns.
    pub max_shift_ns: i64,
    /// Receives still before their send in the merged stream (0 unless the traces are
    /// inconsistent, or the repair is off).
    pub violations_after: u64,
}

impl ClockReport {
    /// One line for people: `clock condition: 3 of 120 messages received before they were sent...`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "clock condition: {} of {} matched message(s) received before sent (after the ClockOffset correction)",
            self.violations_before, self.messages
        );
        if self.repaired {
            s.push_str(&format!(
                "; controlled logical clock (minimum latency {} ns): {} receive(s) moved later, largest shift {} ns",
                self.min_latency_ns, self.shifted_receives, self.max_shift_ns
            ));
        } else {
            s.push_str("; not repaired");
        }
        s.push_str(&format!("; {} violation(s) left", self.violations_after));
        s
    }
}

impl fmt::Display for ClockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The pre-pass: matched messages per key, violations before repair, the smallest transfer.
pub(crate) struct MessagePlan {
    pub matched: FastMap<MsgKey, u64>,
    pub summary: MatchSummary,
    pub messages: u64,
    pub violations_before: u64,
    /// Smallest positive (receive − send), ns, over matched messages.
    pub smallest_transfer_ns: Option<i64>,
}

impl MessagePlan {
    /// Runs the matching over the ranks' traces; `None` when no rank has a trace.
    pub fn new(model: &Model) -> Option<MessagePlan> {
        let mut matched: FastMap<MsgKey, u64> = FastMap::default();
        let (mut messages, mut before) = (0u64, 0u64);
        let mut smallest: Option<i64> = None;
        let summary = match_messages_keyed(model, |m, comm| {
            *matched
                .entry((comm, m.sender.rank, m.receiver.rank, m.tag))
                .or_default() += 1;
            messages += 1;
            // the merge's times are these, rounded the same way
            let (s, r) = (super::round_ns(m.send_ns), super::round_ns(m.recv_ns));
            if r < s {
                before += 1;
            } else if r > s {
                smallest = Some(smallest.map_or(r - s, |x: i64| x.min(r - s)));
            }
        })
        .ok()?;
        Some(MessagePlan {
            matched,
            summary,
            messages,
            violations_before: before,
            smallest_transfer_ns: smallest,
        })
    }

    /// The minimum latency for repairs: `given`, else the smallest observed transfer capped at
    /// [`DEFAULT_MIN_LATENCY_NS`] (a repair never asks more of a message than the fastest
    /// consistent one achieved).
    pub fn min_latency(&self, given: Option<u64>) -> i64 {
        match given {
            Some(ns) => ns.min(i64::MAX as u64) as i64,
            None => self
                .smallest_transfer_ns
                .map_or(DEFAULT_MIN_LATENCY_NS, |s| s.min(DEFAULT_MIN_LATENCY_NS)),
        }
    }
}

/// A send waiting in the stream for its receive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueuedSend {
    pub id: u64,
    pub time_ns: i64,
    pub location: u32,
}

/// Per key: how many sends and receives the stream has seen, the sends not yet received, and
/// sends to leave unlinked (their receive was given up on, see `GlobalMerge::release`).
#[derive(Default)]
pub(crate) struct KeyState {
    pub sends_seen: u64,
    pub recvs_seen: u64,
    pub queue: VecDeque<QueuedSend>,
    pub orphaned_sends: u64,
    /// The process slot blocked on this key, if any.
    pub waiting: Option<u32>,
    /// Messages of the key the matching paired (the plan's count, looked up once per key).
    pub matched: u64,
}

/// Every key's [`KeyState`]: an index from key to slot, and the states in one vector.
#[derive(Default)]
pub(crate) struct KeyTable {
    index: FastMap<MsgKey, u32>,
    states: Vec<KeyState>,
}

impl KeyTable {
    /// The state of `key`, if the stream has met it.
    pub fn get_mut(&mut self, key: &MsgKey) -> Option<&mut KeyState> {
        let i = *self.index.get(key)?;
        Some(&mut self.states[i as usize])
    }

    /// Every key's state.
    pub fn values(&self) -> impl Iterator<Item = &KeyState> {
        self.states.iter()
    }
}

/// A location's last send key and last receive key with their slots in the [`KeyTable`]: a
/// rank that sends to the same peer again finds the key's state without a hash lookup (with
/// thousands of ranks, the lookup was a cache miss per message).
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyMemo {
    send: Option<(MsgKey, u32)>,
    recv: Option<(MsgKey, u32)>,
}

/// Counts the next send (`send`) or receive of `key`; the key's state when that one has a
/// partner. `memo` is the location's (see [`KeyMemo`]).
pub(crate) fn next_matched<'a>(
    keys: &'a mut KeyTable,
    plan: &MessagePlan,
    key: MsgKey,
    send: bool,
    memo: &mut KeyMemo,
) -> Option<&'a mut KeyState> {
    let last = if send { &mut memo.send } else { &mut memo.recv };
    let slot = match *last {
        Some((k, i)) if k == key => i,
        _ => {
            let KeyTable { index, states } = keys;
            let i = *index.entry(key).or_insert_with(|| {
                states.push(KeyState {
                    matched: plan.matched.get(&key).copied().unwrap_or(0),
                    ..KeyState::default()
                });
                states.len() as u32 - 1
            });
            *last = Some((key, i));
            i
        }
    };
    let ks = &mut keys.states[slot as usize];
    let seen = if send {
        &mut ks.sends_seen
    } else {
        &mut ks.recvs_seen
    };
    *seen += 1;
    (*seen - 1 < ks.matched).then_some(ks)
}

/// The stream's message state: one [`KeyState`] per key, the plan, counters.
pub(crate) struct Messages {
    pub plan: MessagePlan,
    pub keys: KeyTable,
    pub next_id: u64,
    pub report: ClockReport,
}

impl Messages {
    pub fn new(plan: MessagePlan, repair: bool, min_latency: Option<u64>) -> Messages {
        let report = ClockReport {
            messages: plan.messages,
            violations_before: plan.violations_before,
            repaired: repair,
            min_latency_ns: if repair {
                plan.min_latency(min_latency)
            } else {
                0
            },
            ..ClockReport::default()
        };
        Messages {
            plan,
            keys: KeyTable::default(),
            next_id: 0,
            report,
        }
    }

    /// The warnings of the matching pre-pass.
    pub fn warnings(&self) -> &[Warning] {
        &self.plan.summary.warnings
    }
}
