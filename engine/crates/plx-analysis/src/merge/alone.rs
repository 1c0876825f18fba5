//! Each location of a merge decoded alone, without the heap: the events of one thread with
//! the times the merge gives them before any repair of the clock condition, so that the threads
//! of a trace are read on as many cores as there are, each on its own.
//!
//! A location's events come in its own order with the kinds and global region and user event
//! numbers of [`GlobalMerge`] (through the one translation, `kind_of`), messages unlinked. What
//! needs several locations — the order of events of different threads, the matching of messages,
//! the clock condition — is the caller's: within one process the merge orders events by (time,
//! ticks, thread) when nothing is repaired.
//!
//! One difference from the merge: a region or user event id without a definition, which the
//! merge names when it first meets it (in its global order), is given as [`UNRESOLVED`] and the
//! stream says so ([`LocationStream::unresolved`]): the caller then takes the merge's path.

use std::collections::HashMap;

use super::ahead::Source;
use super::clc::{next_matched, ClockReport, KeyMemo, Messages, QueuedSend};
use super::cursor::{Head, Residency, Scan};
use super::{
    kind_of, EventKind, GlobalMerge, LocalIds, MergeOptions, MessageLink, Names, TraceLocation,
};
use crate::model::Model;
use crate::regions::RegionTable;
use crate::AnalysisError;
use plx_format::Experiment;

/// The region or user event number of an id without a definition in [`Alone`]'s streams.
pub const UNRESOLVED: u32 = u32::MAX;

/// One event of a location decoded alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AloneEvent {
    /// ns on rank 0's clock, not repaired (the merge's time of it when nothing is repaired).
    pub time_ns: i64,
    /// The thread's ticks (the merge's tie-break within a process, before the thread).
    pub ticks: u64,
    /// The event; messages unlinked.
    pub kind: EventKind,
}

/// Every location of a merge, each to be decoded on its own.
pub struct Alone {
    /// The locations, in the merge's order.
    pub locations: Vec<TraceLocation>,
    /// The merge's region table (the model's, then every region defined by a process).
    pub regions: RegionTable,
    /// The merge's user event names.
    pub user_events: Vec<String>,
    /// The first event's time, ns (the merge's origin).
    pub origin_ns: i64,
    /// One stream per location, in the same order.
    pub streams: Vec<LocationStream>,
    /// The merge's warnings from opening the traces (a trace file it could not read), after
    /// the matching's with [`Alone::linked`].
    pub warnings: Vec<plx_format::Warning>,
}

/// The messages of the locations of an [`Alone`] made with [`Alone::linked`], linked as the
/// merge links them: given the sends and receives in the merged order of the locations' events
/// decoded alone — (time, process, ticks, thread, location), the merge's order when it moves no
/// event — [`Links::send`] numbers a matched send and [`Links::recv`] pairs a receive with
/// it. Where the merge would do otherwise they say so ([`NeedsMerge`]) and the caller takes the
/// merge: a receive its send has not come before (the merge holds its process back, or gives it
/// unlinked), a receive the repair of the clock condition would move (earlier than its send's
/// time plus the minimum latency), a message of a communicator without a definition (its key is
/// the process's own id), a matched send still unreceived at the end (a warning of the merge's).
pub struct Links {
    messages: Option<Messages>,
    /// Per location: its rank when its messages take part in the matching.
    ranks: Vec<Option<u32>>,
    memo: Vec<KeyMemo>,
    repair: bool,
    min_latency: i64,
}

/// The merge would not give the stream [`Links`] is given: take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsMerge;

impl Links {
    /// Location `li`'s send at `time_ns` to `peer` with `tag` on `comm`: its message number
    /// when it is matched.
    pub fn send(
        &mut self,
        li: u32,
        time_ns: i64,
        (peer, tag, comm): (u32, i32, Option<u32>),
    ) -> Result<Option<u64>, NeedsMerge> {
        let (Some(msgs), Some(rank)) = (self.messages.as_mut(), self.ranks[li as usize]) else {
            return Ok(None);
        };
        let key = (comm.ok_or(NeedsMerge)? as u64, rank, peer, tag);
        let Messages {
            keys,
            plan,
            next_id,
            ..
        } = msgs;
        let Some(ks) = next_matched(keys, plan, key, true, &mut self.memo[li as usize]) else {
            return Ok(None);
        };
        let id = *next_id;
        *next_id += 1;
        ks.queue.push_back(QueuedSend {
            id,
            time_ns,
            location: li,
        });
        Ok(Some(id))
    }

    /// Location `li`'s receive at `time_ns` from `peer` with `tag` on `comm`: its send when it
    /// is matched.
    pub fn recv(
        &mut self,
        li: u32,
        time_ns: i64,
        (peer, tag, comm): (u32, i32, Option<u32>),
    ) -> Result<Option<MessageLink>, NeedsMerge> {
        let (Some(msgs), Some(rank)) = (self.messages.as_mut(), self.ranks[li as usize]) else {
            return Ok(None);
        };
        let key = (comm.ok_or(NeedsMerge)? as u64, peer, rank, tag);
        let memo = &mut self.memo[li as usize];
        let Some(ks) = next_matched(&mut msgs.keys, &msgs.plan, key, false, memo) else {
            return Ok(None);
        };
        let s = ks.queue.pop_front().ok_or(NeedsMerge)?;
        if self.repair && time_ns < s.time_ns + self.min_latency {
            return Err(NeedsMerge);
        }
        if time_ns < s.time_ns {
            msgs.report.violations_after += 1;
        }
        Ok(Some(super::link(s)))
    }

    /// Does the matching find a message received before it was sent (after the ClockOffset
    /// correction)? Its receive comes before its send in the merged order, which the merge
    /// moves or leaves unlinked: known before any event is given.
    pub fn needs_merge(&self) -> bool {
        self.messages
            .as_ref()
            .is_some_and(|m| m.report.violations_before > 0)
    }

    /// Once every event is given: the merge's report of the clock condition (nothing moved).
    pub fn finish(self) -> Result<Option<ClockReport>, NeedsMerge> {
        let Some(msgs) = self.messages else {
            return Ok(None);
        };
        if msgs.keys.values().any(|k| !k.queue.is_empty()) {
            return Err(NeedsMerge);
        }
        Ok(Some(msgs.report))
    }
}

/// What takes a location's events from [`LocationStream::drain`].
pub trait Sink {
    /// An enter (`exit` false) or exit of `region` at `time_ns` (the thread's `ticks`), as
    /// [`EventKind::Enter`] and [`EventKind::Exit`].
    fn region(&mut self, time_ns: i64, ticks: u64, exit: bool, region: u32);
    /// Any other event.
    fn other(&mut self, ev: AloneEvent);
}

/// Every event to one function ([`LocationStream::for_each`]).
struct Whole<F>(F);

impl<F: FnMut(AloneEvent)> Sink for Whole<F> {
    #[inline]
    fn region(&mut self, time_ns: i64, ticks: u64, exit: bool, region: u32) {
        (self.0)(AloneEvent {
            time_ns,
            ticks,
            kind: if exit {
                EventKind::Exit { region }
            } else {
                EventKind::Enter { region }
            },
        })
    }

    #[inline]
    fn other(&mut self, ev: AloneEvent) {
        (self.0)(ev)
    }
}

/// One location's events ([`LocationStream::for_each`]).
pub struct LocationStream {
    /// What the merge had decoded before it was split, first.
    pending: Vec<Head>,
    source: Source,
    regions: LocalIds,
    user_events: HashMap<u64, u32>,
    ns_per_tick: f64,
    unresolved: bool,
}

impl Alone {
    /// Every traced location of `model` (built from `exp`), none decoded yet; no message is
    /// matched (no matching pre-pass over the trace).
    pub fn new(model: &Model, exp: &Experiment) -> Result<Alone, AnalysisError> {
        Ok(Self::build(model, exp, super::Filter::All, None)?.0)
    }

    /// As [`Alone::new`], with the ranks' messages planned as the merge with `opts` plans them
    /// (the matching's pre-pass), to be linked in the merged order by the [`Links`].
    pub fn linked(
        model: &Model,
        exp: &Experiment,
        opts: MergeOptions,
    ) -> Result<(Alone, Links), AnalysisError> {
        Self::build(model, exp, super::Filter::All, Some(opts))
    }

    /// As [`Alone::new`], each stream with its counted calls (trace subtype 10) as
    /// [`EventKind::Counted`] right before their functions' exits (as
    /// [`GlobalMerge::with_counters`] gives them).
    pub fn with_counters(model: &Model, exp: &Experiment) -> Result<Alone, AnalysisError> {
        Ok(Self::build(model, exp, super::Filter::AllWithCounters, None)?.0)
    }

    /// `linked`: the merge's options, its messages planned for the [`Links`].
    fn build(
        model: &Model,
        exp: &Experiment,
        filter: super::Filter,
        linked: Option<MergeOptions>,
    ) -> Result<(Alone, Links), AnalysisError> {
        let opts = linked.unwrap_or(MergeOptions {
            repair_clock: false,
            ..MergeOptions::default()
        });
        let mut m = GlobalMerge::build_with(model, Some(exp), opts, filter, linked.is_some())?;
        let links = Links {
            messages: m.messages.take(),
            ranks: m
                .locs
                .iter()
                .map(|l| &m.states[l.slot as usize])
                .map(|s| s.rank.filter(|_| s.matching))
                .collect(),
            memo: vec![KeyMemo::default(); m.locs.len()],
            repair: m.repair,
            min_latency: m.min_latency,
        };
        let mut sources = std::mem::replace(
            &mut m.sources,
            super::ahead::Sources::new(Vec::new(), false),
        )
        .into_sources();
        let mut streams = Vec::with_capacity(m.locs.len());
        for (li, loc) in m.locs.iter_mut().enumerate() {
            let mut source = sources[li].take().expect("one per location");
            let mut pending = std::mem::take(&mut loc.batch).split_off(loc.at as usize);
            pending.extend(source.take_ahead());
            let slot = loc.slot as usize;
            let p = &model.processes[m.slots[slot].model_index];
            streams.push(LocationStream {
                pending,
                source,
                regions: m.region_maps[m.states[slot].regions as usize].clone(),
                user_events: m.slots[slot].user_events.clone(),
                ns_per_tick: p.clock_map.ns_per_tick(),
                unresolved: false,
            });
        }
        let alone = Alone {
            locations: std::mem::take(&mut m.locations),
            regions: m.regions.clone(),
            user_events: m.user_events.clone(),
            origin_ns: m.origin_ns,
            streams,
            warnings: m.warnings.clone(),
        };
        Ok((alone, links))
    }
}

/// A stream's names: an id without a definition is [`UNRESOLVED`].
struct Known<'a> {
    regions: &'a LocalIds,
    user_events: &'a HashMap<u64, u32>,
    ns_per_tick: f64,
    unresolved: &'a mut bool,
}

impl Names for Known<'_> {
    #[inline]
    fn region(&mut self, local: u32) -> u32 {
        self.regions.get(local).unwrap_or_else(|| {
            *self.unresolved = true;
            UNRESOLVED
        })
    }

    fn user_event(&mut self, id: u64) -> u32 {
        self.user_events.get(&id).copied().unwrap_or_else(|| {
            *self.unresolved = true;
            UNRESOLVED
        })
    }

    fn ns_per_tick(&self) -> f64 {
        self.ns_per_tick
    }
}

/// A [`Sink`] taking a cursor's events, with the stream's names.
struct Scanning<'a, 'n, S> {
    sink: &'a mut S,
    names: Known<'n>,
}

impl<S: Sink> Scan for Scanning<'_, '_, S> {
    #[inline(always)]
    fn region(&mut self, ticks: u64, ns: i64, exit: bool, region: u32) {
        let region = self.names.region(region);
        self.sink.region(ns, ticks, exit, region)
    }

    #[inline(never)]
    fn other(&mut self, h: Head) {
        self.sink.other(AloneEvent {
            time_ns: h.base_ns,
            ticks: h.ticks,
            kind: kind_of(&h, &mut self.names),
        })
    }
}

impl LocationStream {
    /// Gives each of the location's events to `f`, in order (once: the stream is then spent).
    pub fn for_each(&mut self, f: impl FnMut(AloneEvent)) {
        self.drain(&mut Whole(f))
    }

    /// Gives each of the location's events to `sink`, in order (once: the stream is then
    /// spent): the enters and exits (most of a trace) to [`Sink::region`], the others to
    /// [`Sink::other`].
    pub fn drain(&mut self, sink: &mut impl Sink) {
        let stats = Residency::default();
        let mut names = Known {
            regions: &self.regions,
            user_events: &self.user_events,
            ns_per_tick: self.ns_per_tick,
            unresolved: &mut self.unresolved,
        };
        for h in std::mem::take(&mut self.pending) {
            sink.other(AloneEvent {
                time_ns: h.base_ns,
                ticks: h.ticks,
                kind: kind_of(&h, &mut names),
            });
        }
        self.source.scan(&stats, &mut Scanning { sink, names });
    }

    /// Did the stream meet damage that the merge would warn of (events it could not decode,
    /// events out of order, bad chunks)? Read once the stream is spent.
    pub fn damaged(&self) -> bool {
        self.source.damaged()
    }

    /// A region or user event id without a definition was met ([`UNRESOLVED`] given for it).
    pub fn unresolved(&self) -> bool {
        self.unresolved
    }
}
