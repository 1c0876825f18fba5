//! The index of one process image ([`Part`]), built from that process's files alone — by
//! `plx run` when its program has ended, or by `plx view` for a process without one — and the
//! combination of the parts of every process into the [`TraceIndex`] of the experiment.
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
use std::path::{Path, PathBuf};

use plx_analysis::merge::{EventKind, GlobalMerge, MergeOptions, TraceLocation};
use plx_analysis::{AnalysisError, BuildOptions, Model, ProcessModel, RegionInfo, RegionTable};
use plx_format::Experiment;

use crate::arr::Arr;
use crate::index::{Builder, Handoff, Lane, Marker, Message, TraceIndex, Track};

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

/// Where the part of image `image` of process `host.pid` is kept.
pub fn path(dir: &Path, host: &str, pid: u32, image: u32) -> PathBuf {
    dir.join(crate::store::CACHE_DIR)
        .join("parts")
        .join(format!("{host}.{pid}.{image}.bin"))
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

/// The part of image `i` of `exp` (`None`: it has no trace events, or nothing measured); `model`
/// is the experiment's
/// (which says whose clock map the process shares).
pub fn build(exp: &Experiment, model: &Model, i: usize) -> Result<Option<Part>, AnalysisError> {
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
    let Some(p) = model
        .processes
        .iter_mut()
        .find(|q| (q.host.as_str(), q.pid, q.image) == (img.host.as_str(), img.pid, img.image))
    else {
        return Ok(None);
    };
    // a launcher measured by plx run (`mpirun` under `plx run -- mpirun ...`) has no track
    if !p.has_trace() || !p.measured {
        return Ok(None);
    }
    let clock = clock_key(p);
    // The merge of one process only needs to give its events in order with their
    // communicators' local ids: it is no rank (no matching pre-pass over its trace, which the
    // combination does for every rank at once), and every local id without a CommDef up to
    // LOCAL_IDS gets a stand-in index that gives the id back.
    p.mpi = None;
    let local: HashMap<u32, u32> = p.comms.iter().map(|(&l, &g)| (g, l)).collect();
    for l in 0..LOCAL_IDS {
        p.comms.entry(l).or_insert(STAND_IN | l);
    }
    let comm = move |c: Option<u32>| match c {
        Some(g) if g & STAND_IN != 0 => g & !STAND_IN,
        Some(g) => local.get(&g).copied().unwrap_or(UNKEYED),
        None => UNKEYED,
    };
    // not repaired: a process alone has nothing to repair against, and its times must be the
    // ones before any repair
    let opts = MergeOptions {
        repair_clock: false,
        ..MergeOptions::default()
    };
    let mut merge = GlobalMerge::new(&model, &one, opts)?;
    let locations: Vec<TraceLocation> = merge.locations().to_vec();
    let origin = merge.origin_ns();
    let mut b = Builder::new(locations.iter().map(|l| l.process).collect(), origin);
    let mut messages = Vec::new();
    while let Some(ev) = merge.next_event() {
        b.take(&ev);
        let (send, peer, tag, c, bytes) = match ev.kind {
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => (true, peer, tag, comm, bytes),
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => (false, peer, tag, comm, bytes),
            _ => continue,
        };
        messages.push(MessageEvent {
            time: ev.time_ns,
            track: ev.location,
            send,
            peer,
            tag,
            comm: comm(c),
            bytes,
        });
    }
    let built = b.finish(&model, &locations);
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
        host: img.host.clone(),
        pid: img.pid,
        image: img.image,
        clock,
        regions: merge.regions().all().to_vec(),
        user_events: merge.user_events().to_vec(),
        tracks,
        handoffs: built.handoffs,
        messages,
        origin,
        end: built.end,
        events: built.events,
    }))
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

/// The index of `model`'s trace from the part of each of its traced processes ([`traced`], in
/// that order), or why the merge pass is needed.
pub fn combine(model: &Model, parts: &[&Part]) -> Result<TraceIndex, NeedsMerge> {
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
    type Key = (u64, u32, u32, i32);
    let mut sends: HashMap<Key, Vec<usize>> = HashMap::new();
    let mut recvs: HashMap<Key, Vec<(i64, u32)>> = HashMap::new();
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
        for pt in &part.tracks {
            let l = TraceLocation::of(model, pi, pt.thread);
            let mut t = Track::of(&l);
            t.lanes = if same {
                pt.lanes.clone()
            } else {
                pt.lanes
                    .iter()
                    .map(|lane| {
                        let mut lane = lane.clone();
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
        let rank = p.rank();
        let keyed = |m: &MessageEvent| -> Result<Option<Key>, NeedsMerge> {
            let (Some(rank), true) = (rank, matching.contains(&(p as *const ProcessModel))) else {
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
    for (key, rs) in &recvs {
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
    /// Parts read from their files.
    pub read: usize,
    /// Parts built now, each with why its file was not used.
    pub built: Vec<(PathBuf, crate::store::Unusable)>,
    /// Parts that could not be written, and why.
    pub unsaved: Vec<(PathBuf, String)>,
}

/// The image of `exp` that process `p` of its model was built from.
fn image_of(exp: &Experiment, p: &ProcessModel) -> Option<usize> {
    exp.images
        .iter()
        .position(|i| (i.host.as_str(), i.pid, i.image) == (p.host.as_str(), p.pid, p.image))
}

/// A part built (or why not: an error, `None` without trace events), and why it could not be
/// written, if so.
type BuiltPart = (Result<Option<Part>, AnalysisError>, Option<String>);

/// Builds the parts of images `todo` of `exp` on up to as many threads as there are cores:
/// each written to `paths` with its fingerprint; the parts, or why one could not be built.
fn build_many(
    exp: &Experiment,
    model: &Model,
    todo: &[(usize, PathBuf, Option<u64>)],
) -> Vec<BuiltPart> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<BuiltPart>>> = Mutex::new((0..todo.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(todo.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some((i, path, fp)) = todo.get(k) else {
                    break;
                };
                let part = build(exp, model, *i);
                let unsaved = match (&part, fp) {
                    (Ok(Some(p)), Some(fp)) => crate::store::save_part(p, *fp, path)
                        .err()
                        .map(|e| e.to_string()),
                    (Ok(Some(_)), None) => Some("the process directory cannot be listed".into()),
                    _ => None,
                };
                out.lock().expect("no worker panics")[k] = Some((part, unsaved));
            });
        }
    });
    out.into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every item done"))
        .collect()
}

/// The index of `model` (built from `exp` in `dir`) from the parts of its traced processes:
/// each read from its file, or built now (in parallel) and written, then combined; or why the
/// merge pass is needed.
pub fn from_parts(
    dir: &Path,
    exp: &Experiment,
    model: &Model,
) -> Result<(TraceIndex, PartsUsed), NeedsMerge> {
    let procs = traced(model);
    let mut used = PartsUsed::default();
    let mut parts: Vec<Option<Part>> = Vec::with_capacity(procs.len());
    let mut todo = Vec::new();
    let mut why = Vec::new();
    for &pi in &procs {
        let p = &model.processes[pi];
        let Some(i) = image_of(exp, p) else {
            return Err(NeedsMerge(format!(
                "process {}.{} has no image",
                p.host, p.pid
            )));
        };
        let img = &exp.images[i];
        let path = path(dir, &img.host, img.pid, img.image);
        let fp = crate::store::process_fingerprint(&img.dir, img.image).ok();
        let loaded = match fp {
            // a part computed on another clock (its host's reference process had not ended
            // when it was built) is stale
            Some(fp) => crate::store::load_part(&path, fp).and_then(|part| {
                if part.clock == clock_key(p) {
                    Ok(part)
                } else {
                    Err(crate::store::Unusable::Stale)
                }
            }),
            None => Err(crate::store::Unusable::Damaged(format!(
                "cannot list {}",
                img.dir.display()
            ))),
        };
        match loaded {
            Ok(part) => {
                used.read += 1;
                parts.push(Some(part));
            }
            Err(u) => {
                todo.push((i, path.clone(), fp));
                why.push((parts.len(), path, u));
                parts.push(None);
            }
        }
    }
    let built = build_many(exp, model, &todo);
    for ((slot, path, u), (part, unsaved)) in why.into_iter().zip(built) {
        match part {
            Ok(Some(part)) => parts[slot] = Some(part),
            Ok(None) => return Err(NeedsMerge(format!("{} has no trace", path.display()))),
            Err(e) => return Err(NeedsMerge(e.to_string())),
        }
        if let Some(w) = unsaved {
            used.unsaved.push((path.clone(), w));
        }
        used.built.push((path, u));
    }
    let parts: Vec<&Part> = parts
        .iter()
        .map(|p| p.as_ref().expect("read or built"))
        .collect();
    let ix = combine(model, &parts)?;
    Ok((ix, used))
}

/// How long [`prebuild`] waits for the process whose clock map its processes share to end.
const REFERENCE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What [`prebuild`] did.
#[derive(Debug, Default)]
pub struct Prebuilt {
    /// Parts written.
    pub written: Vec<PathBuf>,
    /// Images without trace events (no part).
    pub untraced: usize,
    /// What could not be built or written.
    pub failed: Vec<String>,
}

/// Builds and writes the parts of the images of the experiment `dir` that `pick` chooses (by
/// host and pid), in parallel: `plx run` calls it for its own processes once they have ended.
pub fn prebuild(dir: &Path, pick: impl Fn(&str, u32) -> bool) -> Result<Prebuilt, AnalysisError> {
    let opts = BuildOptions {
        rebuild_from_trace: false,
        ..BuildOptions::default()
    };
    let mut exp = Experiment::open(dir)?;
    let mut model = Model::build(&exp, opts);
    // A process shares its host's reference clock map, final once that process has ended
    // (under `mpirun plx run` it is another rank's; the processes picked have ended): wait for
    // it a little, else the part is computed on its map so far and `plx view` rebuilds it.
    let unfinished: Vec<PathBuf> = (0..exp.images.len())
        .filter(|&i| pick(&exp.images[i].host, exp.images[i].pid))
        .filter_map(|i| clock_reference(&exp, &model, i))
        .filter(|&j| !exp.images[j].finished() && !pick(&exp.images[j].host, exp.images[j].pid))
        .map(|j| exp.images[j].process_path())
        .collect();
    if !unfinished.is_empty() {
        let deadline = std::time::Instant::now() + REFERENCE_WAIT;
        while std::time::Instant::now() < deadline
            && !unfinished.iter().all(|f| {
                plx_format::ProcessData::read(f, &mut Vec::new())
                    .end
                    .is_some()
            })
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        exp = Experiment::open(dir)?;
        model = Model::build(&exp, opts);
    }
    let mut todo = Vec::new();
    for (i, img) in exp.images.iter().enumerate() {
        if !pick(&img.host, img.pid) {
            continue;
        }
        let fp = crate::store::process_fingerprint(&img.dir, img.image).ok();
        todo.push((i, path(dir, &img.host, img.pid, img.image), fp));
    }
    let mut done = Prebuilt::default();
    for ((_, path, _), (part, unsaved)) in todo.iter().zip(build_many(&exp, &model, &todo)) {
        match (part, unsaved) {
            (Ok(Some(_)), None) => done.written.push(path.clone()),
            (Ok(Some(_)), Some(w)) => done.failed.push(format!("{}: {w}", path.display())),
            (Ok(None), _) => done.untraced += 1,
            (Err(e), _) => done.failed.push(format!("{}: {e}", path.display())),
        }
    }
    Ok(done)
}
