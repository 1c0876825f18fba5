//! The index built once at open: per track (a thread with trace events) its regions by nesting
//! depth, each depth a sorted run of disjoint intervals with block maxima, plus the messages
//! sorted by send time and the user events.
//!
//! Invariants: within one [`Lane`] intervals are disjoint and sorted by start (hence by end);
//! `prefix[k]` is the total duration of intervals `0..k·FANOUT` (of all of them for the last);
//! level `k` (from 0) of the summaries
//! holds, per block of `FANOUT^(k+1)` consecutive intervals, the longest one's index (the first
//! of equals) and its duration.

use plx_analysis::merge::{EventKind, GlobalEvent, GlobalMerge, MergeOptions, TraceLocation};

use crate::arr::Arr;
use crate::times::{Times, TimesBuilder};
use plx_analysis::{AnalysisError, Model, RegionTable};
use plx_format::Experiment;

/// Intervals per block of the first level of maxima, blocks per block of the next.
pub const FANOUT: usize = 8;

/// One level of a lane's maxima: per block, its longest interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Level {
    /// Index of the longest interval of each block.
    pub at: Arr<u32>,
    /// Its duration.
    pub dur: Arr<i64>,
}

/// A closed region instance, global ns `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Entry.
    pub start: i64,
    /// Exit.
    pub end: i64,
    /// Global region index ([`TraceIndex::regions`]).
    pub region: u32,
}

/// The regions of one track at one nesting depth, with their level-of-detail summaries: the
/// running total of durations per block and the longest interval per block and per super
/// block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lane {
    /// Entries, sorted.
    pub start: Times,
    /// Exits, sorted.
    pub end: Times,
    /// Regions.
    pub region: Arr<u32>,
    /// `prefix[k]`: total duration of intervals `0..k·FANOUT` (`len.div_ceil(FANOUT) + 1`
    /// values, the last the total). Kept per block, not per interval: a lane's memory is
    /// written once at each open, and a sum per interval was 8 of its 28 bytes per interval.
    pub prefix: Arr<u64>,
    /// The maxima per block, level `k` of blocks of `FANOUT^(k+1)` intervals, up to the level
    /// of one block.
    pub levels: Vec<Level>,
}

/// A lane being built: intervals in the order they close at one depth, with the running total
/// per block and the first level of maxima kept as they come (no second pass over the lane).
#[derive(Debug, Clone)]
struct LaneBuilder {
    start: TimesBuilder,
    end: TimesBuilder,
    region: Vec<u32>,
    /// [`Lane::prefix`] of the blocks complete so far.
    prefix: Vec<u64>,
    /// The total duration so far.
    acc: u64,
    /// Level 0 of the maxima, the last block's so far.
    at: Vec<u32>,
    dur: Vec<i64>,
}

impl Default for LaneBuilder {
    fn default() -> Self {
        LaneBuilder {
            start: TimesBuilder::default(),
            end: TimesBuilder::default(),
            region: Vec::new(),
            prefix: vec![0],
            acc: 0,
            at: Vec::new(),
            dur: Vec::new(),
        }
    }
}

impl Lane {
    /// Intervals.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// No interval?
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Interval `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Region {
        Region {
            start: self.start.get(i),
            end: self.end.get(i),
            region: self.region[i],
        }
    }

    /// Its duration, ns.
    #[inline]
    pub fn dur(&self, i: usize) -> i64 {
        self.end.get(i) - self.start.get(i)
    }

    /// Total duration of intervals `a..b`: the blocks inside it from the running total, the
    /// intervals of the blocks cut at either end one by one (fewer than [`FANOUT`] each).
    pub fn busy(&self, a: usize, b: usize) -> u64 {
        let scan =
            |i: usize, j: usize| (i..j).fold(0u64, |acc, k| acc.wrapping_add(self.dur(k) as u64));
        let (ka, kb) = (a.div_ceil(FANOUT), b / FANOUT);
        if a >= b {
            0
        } else if ka >= kb {
            scan(a, b)
        } else {
            self.prefix[kb]
                .wrapping_sub(self.prefix[ka])
                .wrapping_add(scan(a, ka * FANOUT))
                .wrapping_add(scan(kb * FANOUT, b))
        }
    }

    /// Indices of the intervals overlapping `[t0, t1)`: `end > t0` and `start < t1`.
    pub fn overlapping(&self, t0: i64, t1: i64) -> (usize, usize) {
        let a = self.end.partition_point(|e| e <= t0);
        let b = self.start.partition_point(|s| s < t1);
        (a, b.max(a))
    }

    /// The interval containing `t` strictly inside (`start < t < end`).
    pub fn containing(&self, t: i64) -> Option<usize> {
        let i = self.start.partition_point(|s| s < t).checked_sub(1)?;
        (self.end.get(i) > t).then_some(i)
    }

    /// The largest block that begins at `i` and ends by `b`: (its size, level), the level
    /// `None` for the single interval.
    fn block_at(&self, i: usize, b: usize) -> (usize, Option<usize>) {
        let (mut size, mut level) = (1usize, None);
        for k in 0..self.levels.len() {
            let s = size * FANOUT;
            if i % s != 0 || i + s > b {
                break;
            }
            (size, level) = (s, Some(k));
        }
        (size, level)
    }

    /// Index of the longest interval of `a..b` (the first of equals), `None` when empty.
    pub fn longest(&self, a: usize, b: usize) -> Option<usize> {
        let mut best: Option<(i64, usize)> = None;
        let mut i = a;
        while i < b {
            let (size, level) = self.block_at(i, b);
            let (d, at) = match level {
                Some(k) => {
                    let l = &self.levels[k];
                    let j = i / size;
                    (l.dur[j], l.at[j] as usize)
                }
                None => (self.dur(i), i),
            };
            if best.is_none_or(|(bd, _)| d > bd) {
                best = Some((d, at));
            }
            i += size;
        }
        best.map(|(_, at)| at)
    }

    /// Calls `f` with each index of `a..b` whose interval lasts more than `min` ns, in order.
    pub fn longer_than(&self, a: usize, b: usize, min: i64, f: &mut impl FnMut(usize)) {
        let mut i = a;
        'next: while i < b {
            // the largest block from i whose longest is short enough is skipped whole
            let (mut size, mut k) = self.block_at(i, b);
            while let Some(level) = k {
                if self.levels[level].dur[i / size] <= min {
                    i += size;
                    continue 'next;
                }
                size /= FANOUT;
                k = level.checked_sub(1);
            }
            if self.dur(i) > min {
                f(i);
            }
            i += 1;
        }
    }

    /// A sealed lane of the intervals `[start, end)` (sorted, disjoint), region 0 each.
    #[cfg(test)]
    pub(crate) fn from_intervals(iv: &[(i64, i64)]) -> Lane {
        let iv: Vec<(i64, i64, u32)> = iv.iter().map(|&(s, e)| (s, e, 0)).collect();
        Lane::from_regions(&iv)
    }

    /// A sealed lane of the regions `(start, end, region)` (sorted, disjoint).
    #[cfg(test)]
    pub(crate) fn from_regions(iv: &[(i64, i64, u32)]) -> Lane {
        let mut l = LaneBuilder::default();
        for &(start, end, region) in iv {
            l.push(Region { start, end, region });
        }
        l.seal()
    }
}

impl LaneBuilder {
    /// Room for `n` intervals, as far as given (refused: the lane grows as it fills).
    fn reserve(&mut self, n: usize) {
        let blocks = n.div_ceil(FANOUT);
        let _ = self
            .start
            .try_reserve(n)
            .and_then(|_| self.end.try_reserve(n))
            .and_then(|_| self.region.try_reserve_exact(n))
            .and_then(|_| self.prefix.try_reserve_exact(blocks + 1))
            .and_then(|_| self.at.try_reserve_exact(blocks))
            .and_then(|_| self.dur.try_reserve_exact(blocks));
    }

    #[inline(always)]
    fn push(&mut self, r: Region) {
        let i = self.region.len();
        let d = r.end.wrapping_sub(r.start);
        self.start.push(r.start);
        self.end.push(r.end);
        self.region.push(r.region);
        self.acc = self.acc.wrapping_add(d as u64);
        // the longest of each FANOUT intervals (the first of equals)
        if i % FANOUT == 0 {
            self.at.push(i as u32);
            self.dur.push(d);
        } else {
            let last = self.dur.len() - 1;
            if d > self.dur[last] {
                (self.at[last], self.dur[last]) = (i as u32, d);
            }
        }
        if (i + 1) % FANOUT == 0 {
            self.prefix.push(self.acc);
        }
    }

    fn seal(self) -> Lane {
        let n = self.region.len();
        let mut prefix = self.prefix;
        if n % FANOUT != 0 {
            prefix.push(self.acc);
        }
        // level k of the maxima from level k − 1
        let (mut at, mut dur) = (self.at, self.dur);
        let mut levels: Vec<Level> = Vec::new();
        if n > 1 {
            while at.len() > 1 {
                let blocks = at.len().div_ceil(FANOUT);
                let mut next_at = Vec::with_capacity(blocks);
                let mut next_dur = Vec::with_capacity(blocks);
                for c in 0..blocks {
                    let mut best = c * FANOUT;
                    for j in best + 1..((c + 1) * FANOUT).min(at.len()) {
                        if dur[j] > dur[best] {
                            best = j;
                        }
                    }
                    next_at.push(at[best]);
                    next_dur.push(dur[best]);
                }
                levels.push(Level {
                    at: at.into(),
                    dur: dur.into(),
                });
                (at, dur) = (next_at, next_dur);
            }
            levels.push(Level {
                at: at.into(),
                dur: dur.into(),
            });
        }
        Lane {
            start: self.start.finish(),
            end: self.end.finish(),
            region: self.region.into(),
            prefix: prefix.into(),
            levels,
        }
    }
}

/// A user event's value at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker {
    /// Global ns.
    pub time: i64,
    /// Index into [`TraceIndex::user_events`].
    pub event: u32,
    /// Value.
    pub value: f64,
}

/// A point-to-point message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Send time, global ns.
    pub send: i64,
    /// Receive time (`None`: no receive matched it).
    pub recv: Option<i64>,
    /// Sending track.
    pub from: u32,
    /// Receiving track.
    pub to: Option<u32>,
    /// Bytes.
    pub bytes: u64,
}

/// The matched messages from one track to another in send order, with running sums so that
/// the messages sent in any interval are counted and summed by two searches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairMessages {
    /// Sending track.
    pub from: u32,
    /// Receiving track.
    pub to: u32,
    /// Send times, sorted.
    pub send: Arr<i64>,
    /// `bytes[i]`: bytes of messages `0..i` (`len + 1` values).
    pub bytes: Arr<u64>,
    /// `recv[i]`: sum of the receive times of messages `0..i` (`len + 1` values).
    pub recv: Arr<i128>,
}

impl PairMessages {
    /// The pairs of `messages` (sorted by send), ordered by (sender, receiver).
    pub(crate) fn of(messages: &[Message]) -> Vec<PairMessages> {
        // (sender, receiver) → sends, running bytes, running receive times
        type Sums = (Vec<i64>, Vec<u64>, Vec<i128>);
        let mut by: std::collections::BTreeMap<(u32, u32), Sums> = Default::default();
        for m in messages {
            if let (Some(to), Some(r)) = (m.to, m.recv) {
                let e = by
                    .entry((m.from, to))
                    .or_insert_with(|| (Vec::new(), vec![0], vec![0]));
                e.0.push(m.send);
                let (b, rs) = (*e.1.last().expect("one"), *e.2.last().expect("one"));
                e.1.push(b.wrapping_add(m.bytes));
                e.2.push(rs + r as i128);
            }
        }
        by.into_iter()
            .map(|((from, to), (send, bytes, recv))| PairMessages {
                from,
                to,
                send: send.into(),
                bytes: bytes.into(),
                recv: recv.into(),
            })
            .collect()
    }
}

/// A synchronization object handed from one thread to another: a release, then an acquisition
/// that had waited for it (a lock hand-off, a semaphore post, a join of the ended thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handoff {
    /// The release, global ns.
    pub release: i64,
    /// The acquisition that ended the wait.
    pub acquire: i64,
    /// Releasing track.
    pub from: u32,
    /// Acquiring track.
    pub to: u32,
    /// Object kind (SyncObject kinds: 0 mutex .. 6 thread).
    pub kind: u8,
}

/// One thread with trace events.
#[derive(Debug, Clone)]
pub struct Track {
    /// `rank.thread` or `pid.thread` (with `app:` in a session).
    pub label: String,
    /// Application name (empty outside a session).
    pub app: String,
    /// Host.
    pub host: String,
    /// Index into [`Model::processes`].
    pub process: usize,
    /// Process-local thread index.
    pub thread: u32,
    /// MPI rank.
    pub rank: Option<u32>,
    /// Pid.
    pub pid: u32,
    /// Thread name.
    pub name: String,
    /// Regions by depth (0: outermost).
    pub lanes: Vec<Lane>,
    /// User events in time order.
    pub markers: Vec<Marker>,
}

impl Track {
    /// The track of a merge's location, without events yet.
    pub(crate) fn of(l: &TraceLocation) -> Track {
        Track {
            label: l.label(),
            app: l.app.clone(),
            host: l.host.clone(),
            process: l.process,
            thread: l.thread,
            rank: l.rank,
            pid: l.pid,
            name: l.name.clone(),
            lanes: Vec::new(),
            markers: Vec::new(),
        }
    }
}

/// One track's lanes and markers, built from its events in its order.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrackBuilder {
    building: Vec<LaneBuilder>,
    /// Open regions: (region, entry).
    stack: Vec<(u32, i64)>,
    /// The latest event's time (`None` before the first).
    pub last: Option<i64>,
    markers: Vec<Marker>,
    /// Region instances the track can hold at most (half its events), reserved for each of its
    /// first [`RESERVED_DEPTHS`] lanes when the lane begins (0: nothing reserved).
    reserve: usize,
}

/// Lanes (from depth 0) whose arrays are reserved whole when they begin.
///
/// Why: a lane's arrays growing by doubling copy each element about once more and touch twice
/// the memory (the kernel's page faults were 40 % of an open's CPU time on 20 M events, of them
/// 43 % in the copies). Reserved memory that is never written is never touched, so reserving
/// the track's bound costs address space, not memory; only the outer lanes are reserved, which
/// bounds the mappings made per track.
const RESERVED_DEPTHS: usize = 4;

impl TrackBuilder {
    /// A builder of a track of `events` events at most.
    pub(crate) fn with_events(events: u64) -> TrackBuilder {
        TrackBuilder {
            reserve: usize::try_from(events / 2).unwrap_or(usize::MAX),
            ..TrackBuilder::default()
        }
    }

    /// One event of the track at `t` (what is not a region or a user event only counts as its
    /// latest time).
    #[inline]
    pub(crate) fn take(&mut self, t: i64, kind: &EventKind) {
        match *kind {
            EventKind::Enter { region } => self.enter(t, region),
            EventKind::Exit { region } => self.exit(t, region),
            EventKind::User { event, value } => {
                self.last = Some(t);
                self.markers.push(Marker {
                    time: t,
                    event,
                    value,
                })
            }
            _ => self.last = Some(t),
        }
    }

    /// An entry into `region` at `t`.
    #[inline(always)]
    pub(crate) fn enter(&mut self, t: i64, region: u32) {
        self.last = Some(t);
        self.stack.push((region, t));
    }

    /// An exit from `region` at `t`: it closes the region's innermost open instance (and
    /// whatever was left open inside it).
    #[inline(always)]
    pub(crate) fn exit(&mut self, t: i64, region: u32) {
        self.last = Some(t);
        let st = &mut self.stack;
        // the innermost open region, most often
        if let Some(&(r, s)) = st.last() {
            if r == region {
                st.pop();
                close(&mut self.building, self.reserve, st.len(), r, s, t);
                return;
            }
        }
        if let Some(pos) = st.iter().rposition(|&(r, _)| r == region) {
            while st.len() > pos {
                let (r, s) = st.pop().expect("nonempty");
                close(&mut self.building, self.reserve, st.len(), r, s, t);
            }
        }
    }

    /// Closes what is still open (at the track's last event, or at `killed`, its killed
    /// process's latest event, when later) and seals the lanes.
    pub(crate) fn finish(mut self, killed: Option<i64>) -> (Vec<Lane>, Vec<Marker>) {
        let last = self.last.unwrap_or(i64::MIN);
        let end = killed.map_or(last, |k| k.max(last));
        while let Some((r, s)) = self.stack.pop() {
            close(
                &mut self.building,
                self.reserve,
                self.stack.len(),
                r,
                s,
                end.max(s),
            );
        }
        (
            self.building.into_iter().map(LaneBuilder::seal).collect(),
            self.markers,
        )
    }
}

/// Pairs the releases and acquisitions of one process's synchronization objects into
/// hand-offs, given in the process's order.
#[derive(Debug, Default)]
pub(crate) struct Handoffs {
    /// (process, object) → the latest release: (time, track).
    released: std::collections::HashMap<(usize, u32), (i64, u32)>,
    /// The hand-offs found, in order.
    pub found: Vec<Handoff>,
}

impl Handoffs {
    /// An event at `t` of track `track` of process `process`.
    #[inline]
    pub(crate) fn take(&mut self, process: usize, track: u32, t: i64, kind: &EventKind) {
        match *kind {
            EventKind::Release { object, .. } => self.release(process, track, t, object),
            EventKind::Acquire {
                object,
                kind,
                wait_ns,
                ..
            } if wait_ns > 0 => self.acquire(process, track, t, object, kind),
            _ => {}
        }
    }

    /// A release of `object` at `t` by track `track` of process `process`.
    pub(crate) fn release(&mut self, process: usize, track: u32, t: i64, object: u32) {
        self.released.insert((process, object), (t, track));
    }

    /// An acquisition of `object` (of `kind`) after a wait, at `t` by track `track` of process
    /// `process`.
    pub(crate) fn acquire(&mut self, process: usize, track: u32, t: i64, object: u32, kind: u8) {
        if let Some(&(rt, from)) = self.released.get(&(process, object)) {
            if from != track && rt <= t {
                self.found.push(Handoff {
                    release: rt,
                    acquire: t,
                    from,
                    to: track,
                    kind,
                });
            }
        }
    }
}

/// What a stream of merged events gives each track, apart from messages: the lanes, markers and
/// hand-offs (in the stream's order), the events counted and the last time.
pub(crate) struct Built {
    pub lanes: Vec<Vec<Lane>>,
    pub markers: Vec<Vec<Marker>>,
    pub handoffs: Vec<Handoff>,
    pub events: u64,
    pub end: i64,
}

/// Turns merged events into lanes, markers and hand-offs. Everything it keeps is per track or
/// per process, so a stream of one process's events gives that process's part of the index
/// exactly as the global stream does, as long as the process's events come in the same order
/// at the same times.
pub(crate) struct Builder {
    /// Track → its process (hand-offs pair a release and an acquisition of one process).
    process: Vec<usize>,
    tracks: Vec<TrackBuilder>,
    handoffs: Handoffs,
    events: u64,
    end: i64,
}

impl Builder {
    pub(crate) fn new(process: Vec<usize>, origin: i64) -> Builder {
        let n = process.len();
        Builder {
            process,
            tracks: vec![TrackBuilder::default(); n],
            handoffs: Handoffs::default(),
            events: 0,
            end: origin,
        }
    }

    /// One event of the stream (messages are the caller's).
    pub(crate) fn take(&mut self, ev: &GlobalEvent) {
        self.events += 1;
        let li = ev.location as usize;
        let t = ev.time_ns;
        self.end = self.end.max(t);
        self.tracks[li].take(t, &ev.kind);
        self.handoffs.take(self.process[li], li as u32, t, &ev.kind);
    }

    /// Closes what is still open (regions open at a track's end last until its last event,
    /// or, in a killed process, until the process's latest event: cut there) and seals the
    /// lanes. `model` and `locations`: the merge's the events came from.
    pub(crate) fn finish(self, model: &Model, locations: &[TraceLocation]) -> Built {
        let last: Vec<Option<i64>> = self.tracks.iter().map(|t| t.last).collect();
        let killed = plx_analysis::merge::killed_ends(model, locations, &last);
        let (lanes, markers) = self
            .tracks
            .into_iter()
            .zip(killed)
            .map(|(t, k)| t.finish(k))
            .unzip();
        Built {
            lanes,
            markers,
            handoffs: self.handoffs.found,
            events: self.events,
            end: self.end,
        }
    }
}

/// Everything the window queries read.
#[derive(Debug, Clone)]
pub struct TraceIndex {
    /// Tracks in the merge's order (by process, then thread).
    pub tracks: Vec<Track>,
    /// Region definitions.
    pub regions: RegionTable,
    /// User event names.
    pub user_events: Vec<String>,
    /// Messages sorted by send time.
    pub messages: Vec<Message>,
    /// Longest send-to-receive time of a matched message, ns.
    pub max_latency: i64,
    /// Shortest send-to-receive time of a matched message (negative when clocks disagree), ns.
    pub min_latency: i64,
    /// The matched messages per (sender, receiver), the summaries of the widest windows.
    pub pairs: Vec<PairMessages>,
    /// Send times of the messages without a matched receive, sorted.
    pub unmatched: Arr<i64>,
    /// Hand-offs sorted by release.
    pub handoffs: Vec<Handoff>,
    /// Longest release-to-acquire time of a hand-off, ns.
    pub max_handoff: i64,
    /// First event, global ns.
    pub origin: i64,
    /// Last event, global ns.
    pub end: i64,
    /// Events read.
    pub events: u64,
}

impl TraceIndex {
    /// One pass over the merged trace of `model` (built from `exp`).
    pub fn build(model: &Model, exp: &Experiment) -> Result<TraceIndex, AnalysisError> {
        let mut merge = GlobalMerge::new(model, exp, MergeOptions::default())?;
        let mut tracks: Vec<Track> = merge.locations().iter().map(Track::of).collect();
        let origin = merge.origin_ns();
        let mut b = Builder::new(tracks.iter().map(|t| t.process).collect(), origin);
        let mut sends: std::collections::HashMap<u64, usize> = Default::default();
        let mut messages: Vec<Message> = Vec::new();
        // receives the clock repair let go before their send (traces that contradict each
        // other): the merge gives them and the next send of their (communicator, sender,
        // receiver, tag) unlinked; here they are paired, in that order, and kept as messages
        // received before their send
        let rank: Vec<Option<u32>> = merge
            .locations()
            .iter()
            .map(|l| model.processes.get(l.process).and_then(|p| p.rank()))
            .collect();
        type Key = (Option<u32>, u32, u32, i32);
        let mut released: std::collections::HashMap<Key, std::collections::VecDeque<(i64, u32)>> =
            Default::default();
        while let Some(ev) = merge.next_event() {
            b.take(&ev);
            let li = ev.location as usize;
            let t = ev.time_ns;
            match ev.kind {
                EventKind::Send {
                    bytes,
                    message,
                    peer,
                    tag,
                    comm,
                } => {
                    if let Some(id) = message {
                        sends.insert(id, messages.len());
                    }
                    let early = match (message, rank[li]) {
                        (None, Some(me)) => released
                            .get_mut(&(comm, me, peer, tag))
                            .and_then(|q| q.pop_front()),
                        _ => None,
                    };
                    messages.push(Message {
                        send: t,
                        recv: early.map(|(r, _)| r),
                        from: li as u32,
                        to: early.map(|(_, to)| to),
                        bytes,
                    });
                }
                EventKind::Recv {
                    message: None,
                    peer,
                    tag,
                    comm,
                    ..
                } => {
                    if let Some(me) = rank[li] {
                        released
                            .entry((comm, peer, me, tag))
                            .or_default()
                            .push_back((t, li as u32));
                    }
                }
                EventKind::Recv {
                    bytes,
                    message: Some(link),
                    ..
                } => {
                    let i = match sends.remove(&link.id) {
                        Some(i) => i,
                        None => {
                            messages.push(Message {
                                send: link.send_ns,
                                recv: None,
                                from: link.sender,
                                to: None,
                                bytes,
                            });
                            messages.len() - 1
                        }
                    };
                    messages[i].recv = Some(t);
                    messages[i].to = Some(li as u32);
                }
                _ => {}
            }
        }
        let built = b.finish(model, merge.locations());
        for ((t, lanes), markers) in tracks.iter_mut().zip(built.lanes).zip(built.markers) {
            t.lanes = lanes;
            t.markers = markers;
        }
        Ok(TraceIndex::assemble(
            tracks,
            merge.regions().clone(),
            merge.user_events().to_vec(),
            messages,
            built.handoffs,
            origin,
            built.end,
            built.events,
        ))
    }

    /// The index of these tracks and events: messages sorted by send (then sender: a
    /// sender's messages of one time keep the order given) with their per-pair sums, hand-offs
    /// sorted by release (then releasing track, the same way).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        tracks: Vec<Track>,
        regions: RegionTable,
        user_events: Vec<String>,
        mut messages: Vec<Message>,
        mut handoffs: Vec<Handoff>,
        origin: i64,
        end: i64,
        events: u64,
    ) -> TraceIndex {
        messages.sort_by_key(|m| (m.send, m.from));
        let max_latency = messages
            .iter()
            .filter_map(|m| m.recv.map(|r| r - m.send))
            .max()
            .unwrap_or(0)
            .max(0);
        let min_latency = messages
            .iter()
            .filter_map(|m| m.recv.map(|r| r - m.send))
            .min()
            .unwrap_or(0)
            .min(0);
        let pairs = PairMessages::of(&messages);
        let unmatched: Vec<i64> = messages
            .iter()
            .filter(|m| m.to.is_none() || m.recv.is_none())
            .map(|m| m.send)
            .collect();
        handoffs.sort_by_key(|h| (h.release, h.from));
        let max_handoff = handoffs
            .iter()
            .map(|h| h.acquire - h.release)
            .max()
            .unwrap_or(0);
        TraceIndex {
            tracks,
            handoffs,
            max_handoff,
            regions,
            user_events,
            messages,
            max_latency,
            min_latency,
            pairs,
            unmatched: unmatched.into(),
            origin,
            end,
            events,
        }
    }

    /// The regions of track `t` enclosing interval `i` of lane `depth`, outermost first, then
    /// the interval itself.
    pub fn call_path(&self, t: usize, depth: usize, i: usize) -> Vec<Region> {
        let track = &self.tracks[t];
        let me = track.lanes[depth].get(i);
        let mut path: Vec<Region> = (0..depth)
            .filter_map(|d| {
                let lane = &track.lanes[d];
                let j = lane
                    .start
                    .partition_point(|s| s <= me.start)
                    .checked_sub(1)?;
                (lane.end.get(j) >= me.end).then(|| lane.get(j))
            })
            .collect();
        path.push(me);
        path
    }
}

#[inline(always)]
fn close(
    lanes: &mut Vec<LaneBuilder>,
    reserve: usize,
    depth: usize,
    region: u32,
    start: i64,
    end: i64,
) {
    if lanes.len() <= depth {
        open_lanes(lanes, reserve, depth);
    }
    lanes[depth].push(Region { start, end, region });
}

/// Lanes up to `depth`.
#[cold]
#[inline(never)]
fn open_lanes(lanes: &mut Vec<LaneBuilder>, reserve: usize, depth: usize) {
    while lanes.len() <= depth {
        let mut l = LaneBuilder::default();
        if lanes.len() < RESERVED_DEPTHS && reserve > 0 {
            // refused (strict overcommit, a small address space): the lane grows as it fills
            l.reserve(reserve);
        }
        lanes.push(l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(iv: &[(i64, i64)]) -> Lane {
        Lane::from_intervals(iv)
    }

    #[test]
    fn longest_and_longer_than_agree_with_a_scan() {
        // 10,000 intervals of pseudo-random lengths 1..=97, gaps of 3
        let mut iv = Vec::new();
        let mut t = 0;
        let mut x: u64 = 7;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let d = 1 + (x >> 33) as i64 % 97;
            iv.push((t, t + d));
            t += d + 3;
        }
        let l = lane(&iv);
        for &(a, b) in &[(0, 10_000), (5, 4_200), (4_096, 8_192), (63, 65), (7, 7)] {
            let scan = (a..b).max_by_key(|&i| (l.dur(i), std::cmp::Reverse(i)));
            assert_eq!(l.longest(a, b), scan, "{a}..{b}");
            let sum: u64 = (a..b).map(|i| l.dur(i) as u64).sum();
            assert_eq!(l.busy(a, b), sum, "{a}..{b}");
            for min in [0, 50, 95, 96, 97] {
                let mut got = Vec::new();
                l.longer_than(a, b, min, &mut |i| got.push(i));
                let want: Vec<usize> = (a..b).filter(|&i| l.dur(i) > min).collect();
                assert_eq!(got, want, "{a}..{b} > {min}");
            }
        }
        // one running total per block of FANOUT intervals, and one for all of them
        assert_eq!(l.prefix.len(), 1_251);
        for (a, b) in [
            (0, 1),
            (3, 5),
            (7, 9),
            (8, 16),
            (9, 15),
            (1, 9_999),
            (9_992, 10_000),
        ] {
            let sum: u64 = (a..b).map(|i| l.dur(i) as u64).sum();
            assert_eq!(l.busy(a, b), sum, "{a}..{b}");
        }
        assert_eq!(
            l.busy(0, 10_000),
            iv.iter().map(|(s, e)| (e - s) as u64).sum::<u64>()
        );
        assert_eq!(l.overlapping(0, 1), (0, 1));
        assert_eq!(
            l.containing(iv[10].0 + 1),
            (iv[10].1 - iv[10].0 > 1).then_some(10)
        );
    }
}
