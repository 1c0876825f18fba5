//! The index of one process image ([`Part`]), built from that process's files alone at each
//! open of `plx view` (kept in memory, never written), and the combination of the parts of
//! every process into the [`TraceIndex`] of the experiment.
//!
//! [`build_all`] decodes every thread of every process on its own ([`plx_analysis::merge::Alone`]),
//! the threads shared out among the machine's cores: a thread's lanes and markers need its own
//! events only. Then each process's sends, receives, releases and acquisitions after a wait are
//! put in the order the merge of the process gives them, (time, ticks, thread), for its hand-offs
//! and its messages. [`build_merged`] gives the same part by the merge of the process alone, the
//! fallback for a process naming a region or user event it never defined.
//!
//! A part holds what needs only its process: per thread the lanes and markers, the process's
//! hand-offs, its events counted, and its sends and receives in the order the merge would give
//! them. Times are the merge's before any clock repair: the process's ticks on rank 0's clock
//! ([`plx_analysis::ProcessModel::rank0_ns`]), rounded as the merge rounds them. Regions and
//! user events are numbered in the part's own tables.
//!
//! [`combine`] does what needs several processes: it numbers regions and user events
//! experiment-wide, matches the messages (per communicator, sender, receiver and tag, the i-th
//! send with the i-th receive, as the merge's matching does) and checks the clock condition.
//! When every matched message is received after it was sent, the merge would shift no process's
//! clock, so the parts' times are the merge's times and the combined index is the merge pass's
//! index. When a receive is at or before its send, the controlled logical clock would move it and
//! every later event of its process: the combination refuses ([`NeedsMerge`]) and the caller
//! runs the merge pass.

use std::collections::{HashMap, HashSet};

use plx_analysis::merge::{
    Alone, AloneEvent, EventKind, GlobalMerge, LocationStream, MergeOptions, Sink, TraceLocation,
};
use plx_analysis::{
    AnalysisError, BuildOptions, FastMap, Model, ProcessModel, RegionInfo, RegionTable,
};
use plx_format::Experiment;

use crate::arr::Arr;
use crate::index::{Builder, Handoff, Lane, Marker, Message, TraceIndex, Track, TrackBuilder};

/// One thread of a part.
#[derive(Debug, Clone, PartialEq)]
pub struct PartTrack {
    /// Process-local thread index.
    pub thread: u32,
    /// Regions by depth; region numbers are the part's ([`Part::regions`]).
    pub lanes: Vec<Lane>,
    /// User events; event numbers are the part's ([`Part::user_events`]).
    pub markers: Vec<Marker>,
}

/// A send or a receive of a part's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageEvent {
    /// ns on rank 0's clock, before any repair.
    pub time: i64,
    /// The part's track.
    pub track: u32,
    /// A send (else a receive).
    pub send: bool,
    /// The other rank (world rank).
    pub peer: u32,
    /// Tag.
    pub tag: i32,
    /// The process-local communicator id ([`UNKEYED`] when the process has no CommDef for it).
    pub comm: u32,
    /// Bytes.
    pub bytes: u64,
}

/// [`MessageEvent::comm`] of a message on a communicator whose local id is not known (no
/// CommDef, and an id of at least [`LOCAL_IDS`]): the message cannot be matched from the part.
pub const UNKEYED: u32 = u32::MAX;

/// Local communicator ids below this are known to a part without a CommDef.
const LOCAL_IDS: u32 = 1 << 16;

/// Marks the stand-in communicator index of a local id without a CommDef (an experiment's own
/// indices are far below).
const STAND_IN: u32 = 1 << 31;

/// The index of one process image.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Host of the image.
    pub host: String,
    /// Pid.
    pub pid: u32,
    /// Exec image (0, or N of `process.N.plx`).
    pub image: u32,
    /// What the times were computed with ([`clock_key`]): the combination uses the part only
    /// when the experiment's model converts the process's ticks the same way.
    pub clock: u64,
    /// The part's region table.
    pub regions: Vec<RegionInfo>,
    /// The part's user event names.
    pub user_events: Vec<String>,
    /// Its threads with trace events, in the merge's order.
    pub tracks: Vec<PartTrack>,
    /// Hand-offs between its threads, in the merge's order (tracks are the part's).
    pub handoffs: Vec<Handoff>,
    /// Sends and receives in the merge's order.
    pub messages: Vec<MessageEvent>,
    /// The first event's time, ns.
    pub origin: i64,
    /// The last event's time (at least `origin`), ns.
    pub end: i64,
    /// Events.
    pub events: u64,
}

/// A hash of how a process's ticks become the merge's ns (its clock map, clock offsets, time
/// shift and rank base) and of its rank.
pub fn clock_key(p: &ProcessModel) -> u64 {
    let s = format!(
        "{:?}|{:?}|{}|{}|{:?}",
        p.clock_map,
        p.offsets,
        p.shift_ns,
        p.rank_base,
        p.rank()
    );
    crate::store::hash(s.as_bytes())
}

/// The image whose clock map image `i` of `exp` shares in `model` (built from `exp`): the
/// model gives every process of a host read with a calibrated time-stamp counter the map of the
/// host's first such process in its order ([`ProcessModel::clock_map`]); `None` when that is
/// image `i` itself or there is none.
fn clock_reference(exp: &Experiment, model: &Model, i: usize) -> Option<usize> {
    let host = &exp.images[i].host;
    let first = model.processes.iter().find(|q| {
        q.host == *host
            && q.clock == Some(plx_format::ClockKind::Tsc)
            && q.clock_map.source == plx_format::ClockSource::Calibrated
    })?;
    image_of(exp, first).filter(|&j| j != i)
}

/// The experiment made of image `i` of `exp` and the image whose clock it shares, if another
/// (which must come first, as in `exp`); the index of image `i` in it.
fn alone(exp: &Experiment, model: &Model, i: usize) -> (Experiment, usize) {
    let images: Vec<usize> = clock_reference(exp, model, i)
        .into_iter()
        .chain([i])
        .collect();
    let one = Experiment {
        dir: exp.dir.clone(),
        images: images.iter().map(|&j| exp.images[j].clone()).collect(),
        warnings: Vec::new(),
        apps: exp.apps.clone(),
    };
    (one, images.len() - 1)
}

/// What decoding a process's part starts from: the experiment of its image alone (and the
/// image whose clock it shares), the model of that, and how its communicators' ids are kept.
struct Prepared {
    one: Experiment,
    me: usize,
    model: Model,
    clock: u64,
    comms: CommIds,
}

/// A process's communicator indices in its one-process model → its local ids
/// ([`MessageEvent::comm`]).
struct CommIds {
    local: HashMap<u32, u32>,
}

impl CommIds {
    fn of(&self, c: Option<u32>) -> u32 {
        match c {
            Some(g) if g & STAND_IN != 0 => g & !STAND_IN,
            Some(g) => self.local.get(&g).copied().unwrap_or(UNKEYED),
            None => UNKEYED,
        }
    }
}

/// The one-process model of image `i` of `exp` (`None`: it has no trace events, or nothing
/// measured); `model` is the experiment's (which says whose clock map the process shares).
fn prepare(exp: &Experiment, model: &Model, i: usize) -> Option<Prepared> {
    let (one, me) = alone(exp, model, i);
    let img = &one.images[me];
    let mut model = Model::build(
        &one,
        BuildOptions {
            rebuild_from_trace: false,
            ..BuildOptions::default()
        },
    );
    // the clock's reference (if another process) only lends its clock map: no events of it
    for q in model.processes.iter_mut() {
        if (q.host.as_str(), q.pid, q.image) != (img.host.as_str(), img.pid, img.image) {
            q.measured = false;
        }
    }
    let p = model
        .processes
        .iter_mut()
        .find(|q| (q.host.as_str(), q.pid, q.image) == (img.host.as_str(), img.pid, img.image))?;
    // a launcher measured by plx run (`mpirun` under `plx run -- mpirun ...`) has no track
    if !p.has_trace() || !p.measured {
        return None;
    }
    let clock = clock_key(p);
    // The events of one process only need to come in order with their communicators' local
    // ids: it is no rank (no matching pre-pass over its trace, which the combination does for
    // every rank at once), and every local id without a CommDef up to LOCAL_IDS gets a
    // stand-in index that gives the id back.
    p.mpi = None;
    let local: HashMap<u32, u32> = p.comms.iter().map(|(&l, &g)| (g, l)).collect();
    // built whole from sorted entries (one entry inserted at a time, the 65,536 stand-ins
    // were a fixed cost of about 2.5 ms per process at every open)
    let mut ids: Vec<(u32, u32)> = Vec::with_capacity(LOCAL_IDS as usize + p.comms.len());
    let mut defined = p.comms.range(..LOCAL_IDS).peekable();
    for l in 0..LOCAL_IDS {
        match defined.next_if(|&(&d, _)| d == l) {
            Some((&d, &g)) => ids.push((d, g)),
            None => ids.push((l, STAND_IN | l)),
        }
    }
    ids.extend(p.comms.range(LOCAL_IDS..).map(|(&l, &g)| (l, g)));
    p.comms = ids.into_iter().collect();
    Some(Prepared {
        one,
        me,
        model,
        clock,
        comms: CommIds { local },
    })
}

impl Prepared {
    /// An empty part of this process.
    fn part(&self) -> Part {
        let img = &self.one.images[self.me];
        Part {
            host: img.host.clone(),
            pid: img.pid,
            image: img.image,
            clock: self.clock,
            regions: Vec::new(),
            user_events: Vec::new(),
            tracks: Vec::new(),
            handoffs: Vec::new(),
            messages: Vec::new(),
            origin: 0,
            end: 0,
            events: 0,
        }
    }

    /// The process's send or receive of `kind` at `time` on track `track`, if it is one.
    fn message(&self, time: i64, track: u32, kind: &EventKind) -> Option<MessageEvent> {
        match Op::of(kind)? {
            Op::Message {
                send,
                peer,
                tag,
                comm,
                bytes,
            } => Some(self.message_of(time, track, send, peer, tag, comm, bytes)),
            _ => None,
        }
    }

    /// The process's send (`send`) or receive at `time` on track `track`.
    #[allow(clippy::too_many_arguments)]
    fn message_of(
        &self,
        time: i64,
        track: u32,
        send: bool,
        peer: u32,
        tag: i32,
        c: Option<u32>,
        bytes: u64,
    ) -> MessageEvent {
        MessageEvent {
            time,
            track,
            send,
            peer,
            tag,
            comm: self.comms.of(c),
            bytes,
        }
    }
}

/// The part of image `i` of `exp` by the merge of its process alone (`None`: it has no trace
/// events, or nothing measured); `model` is the experiment's. [`build_all`] gives the same part
/// from each thread decoded alone; this is its fallback.
pub fn build_merged(
    exp: &Experiment,
    model: &Model,
    i: usize,
) -> Result<Option<Part>, AnalysisError> {
    let Some(prep) = prepare(exp, model, i) else {
        return Ok(None);
    };
    // not repaired: a process alone has nothing to repair against, and its times must be the
    // ones before any repair
    let opts = MergeOptions {
        repair_clock: false,
        ..MergeOptions::default()
    };
    let mut merge = GlobalMerge::new(&prep.model, &prep.one, opts)?;
    let locations: Vec<TraceLocation> = merge.locations().to_vec();
    let origin = merge.origin_ns();
    let mut b = Builder::new(locations.iter().map(|l| l.process).collect(), origin);
    let mut messages = Vec::new();
    while let Some(ev) = merge.next_event() {
        b.take(&ev);
        messages.extend(prep.message(ev.time_ns, ev.location, &ev.kind));
    }
    let built = b.finish(&prep.model, &locations);
    let tracks = locations
        .iter()
        .zip(built.lanes)
        .zip(built.markers)
        .map(|((l, lanes), markers)| PartTrack {
            thread: l.thread,
            lanes,
            markers,
        })
        .collect();
    Ok(Some(Part {
        regions: merge.regions().all().to_vec(),
        user_events: merge.user_events().to_vec(),
        tracks,
        handoffs: built.handoffs,
        messages,
        origin,
        end: built.end,
        events: built.events,
        ..prep.part()
    }))
}

/// An event of a thread that the process's order matters for (a send, a receive, a release,
/// an acquisition after a wait), with the merge's order key: (time, ticks, thread).
struct Ordered {
    time: i64,
    ticks: u64,
    thread: u32,
    track: u32,
    op: Op,
}

/// What an [`Ordered`] event is: of its kind, what the messages and hand-offs read (less than
/// half an [`EventKind`]'s bytes: a thread's sends and receives are kept until its process's
/// threads are decoded).
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A send (`send`) or a receive.
    Message {
        send: bool,
        peer: u32,
        tag: i32,
        comm: Option<u32>,
        bytes: u64,
    },
    /// A release of `object`.
    Release { object: u32 },
    /// An acquisition of `object` (of `kind`) after a wait.
    Acquire { object: u32, kind: u8 },
}

impl Op {
    /// The op of an event the process's order matters for, `None` for any other.
    #[inline]
    fn of(kind: &EventKind) -> Option<Op> {
        Some(match *kind {
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => Op::Message {
                send: true,
                peer,
                tag,
                comm,
                bytes,
            },
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => Op::Message {
                send: false,
                peer,
                tag,
                comm,
                bytes,
            },
            EventKind::Release { object, .. } => Op::Release { object },
            EventKind::Acquire {
                object,
                kind,
                wait_ns,
                ..
            } if wait_ns > 0 => Op::Acquire { object, kind },
            _ => return None,
        })
    }
}

/// One thread decoded alone.
struct Decoded {
    track: TrackBuilder,
    ordered: Vec<Ordered>,
    events: u64,
    /// The latest time of its events.
    end: Option<i64>,
    unresolved: bool,
}

/// Decodes one thread (`track` of its process, thread `thread`) alone.
fn decode(mut stream: LocationStream, track: u32, thread: u32, words: u64) -> Decoded {
    let mut d = Decoding {
        track,
        thread,
        out: Decoded {
            track: TrackBuilder::with_events(words),
            ordered: Vec::new(),
            events: 0,
            end: None,
            unresolved: false,
        },
    };
    stream.drain(&mut d);
    d.out.unresolved = stream.unresolved();
    d.out
}

/// A thread being decoded.
struct Decoding {
    track: u32,
    thread: u32,
    out: Decoded,
}

impl Decoding {
    #[inline(always)]
    fn at(&mut self, t: i64) {
        let o = &mut self.out;
        o.events += 1;
        o.end = Some(o.end.map_or(t, |e| e.max(t)));
    }
}

impl Sink for Decoding {
    #[inline(always)]
    fn region(&mut self, t: i64, _ticks: u64, exit: bool, region: u32) {
        self.at(t);
        if exit {
            self.out.track.exit(t, region)
        } else {
            self.out.track.enter(t, region)
        }
    }

    fn other(&mut self, ev: AloneEvent) {
        self.at(ev.time_ns);
        self.out.track.take(ev.time_ns, &ev.kind);
        if let Some(op) = Op::of(&ev.kind) {
            self.out.ordered.push(Ordered {
                time: ev.time_ns,
                ticks: ev.ticks,
                thread: self.thread,
                track: self.track,
                op,
            });
        }
    }
}

/// `f` of each of `items`, on up to as many threads as there are cores; the results in order.
fn on_cores<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let n = items.len();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(n);
    if workers <= 1 {
        return items.into_iter().map(f).collect();
    }
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let out: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n {
                    break;
                }
                let item = items[k]
                    .lock()
                    .expect("no worker panics")
                    .take()
                    .expect("taken once");
                let r = f(item);
                *out[k].lock().expect("no worker panics") = Some(r);
            });
        }
    });
    out.into_iter()
        .map(|m| {
            m.into_inner()
                .expect("no worker panics")
                .expect("every item done")
        })
        .collect()
}

/// The parts of images `images` of `exp` (`None`: no trace events, or nothing measured):
/// every thread of every process decoded alone, the threads spread over the machine's cores,
/// then each process's events that its order matters for (messages, hand-offs) put in the
/// merge's order. Equal to [`build_merged`]'s parts; a process with a region or user event
/// without a definition is built that way.
pub fn build_all(
    exp: &Experiment,
    model: &Model,
    images: &[usize],
) -> Vec<Result<Option<Part>, AnalysisError>> {
    build_counted(exp, model, images).0
}

/// [`build_all`], with how many processes were built by [`build_merged`].
fn build_counted(
    exp: &Experiment,
    model: &Model,
    images: &[usize],
) -> (Vec<Result<Option<Part>, AnalysisError>>, usize) {
    // each process's model and streams
    let setups: Vec<Result<Option<(Prepared, Alone)>, AnalysisError>> =
        on_cores(images.to_vec(), |i| {
            let Some(prep) = prepare(exp, model, i) else {
                return Ok(None);
            };
            let alone = Alone::new(&prep.model, &prep.one)?;
            Ok(Some((prep, alone)))
        });
    // every thread of every process
    let mut work = Vec::new();
    let mut setups: Vec<Result<Option<(Prepared, Alone)>, AnalysisError>> = setups;
    for (k, s) in setups.iter_mut().enumerate() {
        if let Ok(Some((_, alone))) = s {
            let threads: Vec<u32> = alone.locations.iter().map(|l| l.thread).collect();
            let trace = exp.images[images[k]].trace.as_ref();
            for (li, stream) in std::mem::take(&mut alone.streams).into_iter().enumerate() {
                // the thread's event words: at least its events
                let words = trace
                    .and_then(|t| t.words_per_thread.get(&threads[li]).copied())
                    .unwrap_or(0);
                work.push((k, li as u32, threads[li], words, stream));
            }
        }
    }
    let mut decoded: Vec<(usize, Decoded)> = on_cores(work, |(k, li, thread, words, stream)| {
        (k, decode(stream, li, thread, words))
    });
    // per process: the order of its threads' ordered events, then its tracks closed and sealed
    let mut finishing = Vec::new();
    let mut parts: Vec<Result<Option<Part>, AnalysisError>> = Vec::with_capacity(setups.len());
    let mut merged = 0;
    for (k, (s, &i)) in setups.into_iter().zip(images).enumerate() {
        let (prep, alone) = match s {
            Ok(Some(x)) => x,
            Ok(None) => {
                parts.push(Ok(None));
                continue;
            }
            Err(e) => {
                parts.push(Err(e));
                continue;
            }
        };
        let mine: Vec<Decoded> = decoded
            .iter_mut()
            .filter(|(dk, _)| *dk == k)
            .map(|(_, d)| std::mem::replace(d, Decoded::empty()))
            .collect();
        if mine.iter().any(|d| d.unresolved) {
            merged += 1;
            parts.push(build_merged(exp, model, i));
            continue;
        }
        let last: Vec<Option<i64>> = mine.iter().map(|d| d.track.last).collect();
        let killed = plx_analysis::merge::killed_ends(&prep.model, &alone.locations, &last);
        let events: u64 = mine.iter().map(|d| d.events).sum();
        let end = mine
            .iter()
            .filter_map(|d| d.end)
            .fold(alone.origin_ns, i64::max);
        let mut each: Vec<Vec<Ordered>> = Vec::with_capacity(mine.len());
        for (d, kill) in mine.into_iter().zip(killed) {
            each.push(d.ordered);
            finishing.push((parts.len(), d.track, kill));
        }
        let mut ordered = concat(each);
        // stable: a thread's events of one key keep their order
        ordered.sort_by_key(|o| (o.time, o.ticks, o.thread));
        let mut handoffs = crate::index::Handoffs::default();
        let mut messages = Vec::with_capacity(ordered.len());
        for o in &ordered {
            match o.op {
                Op::Message {
                    send,
                    peer,
                    tag,
                    comm,
                    bytes,
                } => messages.push(prep.message_of(o.time, o.track, send, peer, tag, comm, bytes)),
                Op::Release { object } => handoffs.release(0, o.track, o.time, object),
                Op::Acquire { object, kind } => handoffs.acquire(0, o.track, o.time, object, kind),
            }
        }
        parts.push(Ok(Some(Part {
            regions: alone.regions.all().to_vec(),
            user_events: alone.user_events,
            tracks: alone
                .locations
                .iter()
                .map(|l| PartTrack {
                    thread: l.thread,
                    lanes: Vec::new(),
                    markers: Vec::new(),
                })
                .collect(),
            handoffs: handoffs.found,
            messages,
            origin: alone.origin_ns,
            end,
            events,
            ..prep.part()
        })));
    }
    let sealed = on_cores(finishing, |(p, tb, kill)| (p, tb.finish(kill)));
    let mut next_track = vec![0usize; parts.len()];
    for (p, (lanes, markers)) in sealed {
        if let Ok(Some(part)) = &mut parts[p] {
            let t = &mut part.tracks[next_track[p]];
            next_track[p] += 1;
            (t.lanes, t.markers) = (lanes, markers);
        }
    }
    (parts, merged)
}

/// The vectors one after the other; the one vector that is not empty as it is (a process
/// whose one thread sends, receives and synchronizes, as most MPI programs' main thread).
fn concat<T>(mut each: Vec<Vec<T>>) -> Vec<T> {
    each.retain(|v| !v.is_empty());
    if each.len() <= 1 {
        return each.pop().unwrap_or_default();
    }
    let mut all = Vec::with_capacity(each.iter().map(Vec::len).sum());
    for v in each {
        all.extend(v);
    }
    all
}

impl Decoded {
    fn empty() -> Decoded {
        Decoded {
            track: TrackBuilder::default(),
            ordered: Vec::new(),
            events: 0,
            end: None,
            unresolved: false,
        }
    }
}

/// The part of image `i` of `exp` ([`build_all`] of it alone).
pub fn build(exp: &Experiment, model: &Model, i: usize) -> Result<Option<Part>, AnalysisError> {
    build_all(exp, model, &[i])
        .pop()
        .expect("one image, one part")
}

/// Why parts could not be combined: the merge pass is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsMerge(pub String);

impl std::fmt::Display for NeedsMerge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The processes of `model` a trace index has tracks for, in the merge's order.
pub fn traced(model: &Model) -> Vec<usize> {
    (0..model.processes.len())
        .filter(|&i| {
            let p = &model.processes[i];
            p.measured && p.has_trace()
        })
        .collect()
}

/// A message's matching key: communicator, sender rank, receiver rank, tag.
type Key = (u64, u32, u32, i32);

/// The receives `recvs` matched in order with the sends `sends` (indices into `messages`) of
/// the same key; a receive at or before its send is an error (the merge pass repairs it).
fn pair_messages(
    messages: &mut [Message],
    sends: &FastMap<Key, Vec<usize>>,
    recvs: &FastMap<Key, Vec<(i64, u32)>>,
) -> Result<(), NeedsMerge> {
    for (key, rs) in recvs {
        let Some(ss) = sends.get(key) else { continue };
        for (&(time, track), &si) in rs.iter().zip(ss) {
            let m = &mut messages[si];
            if time <= m.send {
                return Err(NeedsMerge(format!(
                    "a message from rank {} to rank {} is received ({time} ns) at or before it was \
                     sent ({} ns): the clock condition needs the merge pass's repair",
                    key.1, key.2, m.send
                )));
            }
            m.recv = Some(time);
            m.to = Some(track);
        }
    }
    Ok(())
}

/// The index of `model`'s trace from the part of each of its traced processes ([`traced`], in
/// that order), or why the merge pass is needed.
pub fn combine(model: &Model, parts: Vec<Part>) -> Result<TraceIndex, NeedsMerge> {
    let procs = traced(model);
    if procs.len() != parts.len() {
        return Err(NeedsMerge(format!(
            "{} parts for {} traced processes",
            parts.len(),
            procs.len()
        )));
    }
    if parts.is_empty() {
        return Err(NeedsMerge("no process has trace events".to_string()));
    }
    let mut regions: RegionTable = model.regions.clone();
    let mut user_events: Vec<String> = Vec::new();
    let mut tracks: Vec<Track> = Vec::new();
    let mut handoffs: Vec<Handoff> = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    // the merge's matching takes part for the first process of each rank
    let matching: HashSet<*const ProcessModel> = model
        .ranks()
        .iter()
        .map(|(_, p)| *p as *const ProcessModel)
        .collect();
    // keyed by a multiply per word (a message's key hashed by SipHash was 5 % of an open's
    // CPU time at 100 M events)
    let mut sends: FastMap<Key, Vec<usize>> = FastMap::default();
    let mut recvs: FastMap<Key, Vec<(i64, u32)>> = FastMap::default();
    let (mut origin, mut end, mut events) = (i64::MAX, i64::MIN, 0u64);
    for (&pi, part) in procs.iter().zip(parts) {
        let p = &model.processes[pi];
        if (part.host.as_str(), part.pid, part.image) != (p.host.as_str(), p.pid, p.image) {
            return Err(NeedsMerge(format!(
                "part {}.{}.{} given for process {}.{}.{}",
                part.host, part.pid, part.image, p.host, p.pid, p.image
            )));
        }
        if part.clock != clock_key(p) {
            return Err(NeedsMerge(format!(
                "the part of {}.{} was computed on another clock",
                p.host, p.pid
            )));
        }
        let base = tracks.len() as u32;
        let map: Vec<u32> = part
            .regions
            .iter()
            .map(|r| regions.intern(r.clone()))
            .collect();
        let same = map.iter().enumerate().all(|(i, &g)| g as usize == i);
        let events_map: Vec<u32> = part
            .user_events
            .iter()
            .map(|n| match user_events.iter().position(|u| u == n) {
                Some(i) => i as u32,
                None => {
                    user_events.push(n.clone());
                    (user_events.len() - 1) as u32
                }
            })
            .collect();
        for pt in part.tracks {
            let l = TraceLocation::of(model, pi, pt.thread);
            let mut t = Track::of(&l);
            t.lanes = if same {
                pt.lanes
            } else {
                pt.lanes
                    .into_iter()
                    .map(|mut lane| {
                        let region: Vec<u32> =
                            lane.region.iter().map(|&r| map[r as usize]).collect();
                        lane.region = Arr::from(region);
                        lane
                    })
                    .collect()
            };
            t.markers = pt
                .markers
                .iter()
                .map(|m| Marker {
                    event: events_map[m.event as usize],
                    ..*m
                })
                .collect();
            tracks.push(t);
        }
        handoffs.extend(part.handoffs.iter().map(|h| Handoff {
            from: h.from + base,
            to: h.to + base,
            ..*h
        }));
        // the rank whose messages are matched, if the process takes part in the matching
        let rank = p
            .rank()
            .filter(|_| matching.contains(&(p as *const ProcessModel)));
        let keyed = |m: &MessageEvent| -> Result<Option<Key>, NeedsMerge> {
            let Some(rank) = rank else {
                return Ok(None);
            };
            if m.comm == UNKEYED {
                return Err(NeedsMerge(format!(
                    "rank {rank} sends or receives on a communicator without a CommDef"
                )));
            }
            let comm = plx_analysis::matching::key_of_comm(p.comms.get(&m.comm).copied(), m.comm);
            Ok(Some(if m.send {
                (comm, rank, m.peer, m.tag)
            } else {
                (comm, m.peer, rank, m.tag)
            }))
        };
        messages.reserve(part.messages.iter().filter(|m| m.send).count());
        for m in &part.messages {
            let key = keyed(m)?;
            if m.send {
                if let Some(k) = key {
                    sends.entry(k).or_default().push(messages.len());
                }
                messages.push(Message {
                    send: m.time,
                    recv: None,
                    from: base + m.track,
                    to: None,
                    bytes: m.bytes,
                });
            } else if let Some(k) = key {
                recvs.entry(k).or_default().push((m.time, base + m.track));
            }
        }
        origin = origin.min(part.origin);
        end = end.max(part.end);
        events += part.events;
    }
    pair_messages(&mut messages, &sends, &recvs)?;
    Ok(TraceIndex::assemble(
        tracks,
        regions,
        user_events,
        messages,
        handoffs,
        origin,
        end.max(origin),
        events,
    ))
}

/// How [`from_parts`] got its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartsUsed {
    /// Processes (parts).
    pub processes: usize,
    /// Threads decoded.
    pub threads: usize,
    /// Processes built by the merge of their own events (a region or user event without a
    /// definition), not thread by thread.
    pub merged: usize,
}

/// The image of `exp` that process `p` of its model was built from.
fn image_of(exp: &Experiment, p: &ProcessModel) -> Option<usize> {
    exp.images
        .iter()
        .position(|i| (i.host.as_str(), i.pid, i.image) == (p.host.as_str(), p.pid, p.image))
}

/// The index of `model` (built from `exp`) from the parts of its traced processes, built now
/// from each thread decoded alone on all cores ([`build_all`]) and combined; or why the merge
/// pass is needed. Nothing is read from or written to disk but the trace.
pub fn from_parts(exp: &Experiment, model: &Model) -> Result<(TraceIndex, PartsUsed), NeedsMerge> {
    let procs = traced(model);
    let mut images = Vec::with_capacity(procs.len());
    for &pi in &procs {
        let p = &model.processes[pi];
        match image_of(exp, p) {
            Some(i) => images.push(i),
            None => {
                return Err(NeedsMerge(format!(
                    "process {}.{} has no image",
                    p.host, p.pid
                )))
            }
        }
    }
    let mut used = PartsUsed::default();
    let mut parts = Vec::with_capacity(images.len());
    let (built, merged) = build_counted(exp, model, &images);
    used.merged = merged;
    for (part, &i) in built.into_iter().zip(&images) {
        let img = &exp.images[i];
        match part {
            Ok(Some(part)) => {
                used.processes += 1;
                used.threads += part.tracks.len();
                parts.push(part);
            }
            Ok(None) => return Err(NeedsMerge(format!("{} has no trace", img.dir.display()))),
            Err(e) => return Err(NeedsMerge(e.to_string())),
        }
    }
    let ix = combine(model, parts)?;
    Ok((ix, used))
}
