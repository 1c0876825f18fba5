//! The JSON answers of the API: an opened experiment ([`Viewer`]) and one function per endpoint.
//! Times in answers are ns from the trace's first event (`origin`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

use plx_analysis::compare::{compare, Run as CompareRun};
use plx_analysis::critpath::{profile, CriticalPath, Level, Mode};
use plx_analysis::hierarchy::process_name;
use plx_analysis::merge::MergeOptions;
use plx_analysis::messages::pairs;
use plx_analysis::timeline::{
    concurrency, histogram, queue_length, utilization, HistogramRun, Metric, Timeline,
    TimelineOptions,
};
use plx_analysis::waits::{Pattern, WaitAnalysis};
use plx_analysis::{
    call_graph, callpath_rows, flat_profile, match_messages, AnalysisError, BuildOptions, CallTree,
    FitAccumulator, GroupBy, Model, PathNames, Window,
};
use plx_format::{Direction, Experiment};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::json;

use crate::index::TraceIndex;
use crate::part::{self, PartsUsed};
use crate::query::{window, WindowQuery};
use crate::schema;
use crate::store::{self, Unusable};

/// Counter values, one per event name (`None`: not counted).
pub type Counts = Vec<Option<u64>>;

/// Where [`Viewer::index`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// Read from the index file.
    Stored(PathBuf),
    /// Combined from the parts of the processes ([`crate::part`]), built now from each thread
    /// decoded alone (nothing written).
    Parts(PartsUsed),
    /// Built by a merge pass, because the stored one was unusable (why) and the parts could not
    /// be combined (why, `None` for a session), then written to the file (or not: why).
    Built {
        /// The index file.
        path: PathBuf,
        /// Why the stored index was not used.
        unusable: Unusable,
        /// Why the parts could not be combined.
        merged: Option<String>,
        /// Why it could not be written, if so.
        unsaved: Option<String>,
    },
}

/// Where [`Viewer::open_with`] takes a missing index from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The processes' parts (built from their threads), unless they cannot be combined; else
    /// a merge pass.
    Parts,
    /// A merge pass (its index then written to the index file).
    MergePass,
}

/// An experiment (or session) opened for viewing: its model and trace index; the critical path
/// and the state timeline are computed on first request.
pub struct Viewer {
    /// Its directory.
    pub dir: PathBuf,
    /// The experiment.
    pub exp: Experiment,
    /// Its model without the profiles rebuilt from the trace (definitions, processes, ranks):
    /// enough to open, read without the trace.
    pub defs: Model,
    app: Option<String>,
    model: OnceLock<Model>,
    /// The trace index.
    pub index: TraceIndex,
    /// Where the index came from.
    pub source: IndexSource,
    critpath: OnceLock<Result<CriticalPath, String>>,
    timeline: OnceLock<Result<Timeline, String>>,
    counted: OnceLock<String>,
    waits: OnceLock<Result<Waits, String>>,
    /// Whether the waits were asked for, and the thread that replays them told
    /// ([`Viewer::replay_waits_when_asked`]).
    replay: (Mutex<Replay>, Condvar),
    /// Held by the waits' replay while it runs ([`Viewer::hold_waits`]).
    replaying: Mutex<()>,
    /// Per track: its samples at their times (a trace) or, without stamps, placed by estimate.
    placed: OnceLock<Vec<Option<Lane>>>,
    /// The send times of the matched messages received before their send, in order.
    backward: OnceLock<Vec<i64>>,
}

/// A track's call-stack samples on its strip ([`crate::samples`]).
enum Lane {
    /// Stamped: each at its time.
    Stamped(crate::samples::Stamped),
    /// No stamps (a profile): placed by estimate.
    Estimated(crate::samples::Placed),
}

/// The waits' replay on a thread of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    /// Not asked for yet.
    Idle,
    /// Asked for: the thread replays them.
    Asked,
    /// No such thread: the answer that asks replays them.
    Inline,
}

/// The waits of the trace ([`WaitAnalysis::compute_each`]) and where each lies on the timeline.
struct Waits {
    analysis: WaitAnalysis,
    /// The track of each of the analysis's locations (`None`: no track).
    track: Vec<Option<usize>>,
}

impl Viewer {
    /// Reads `dir` (keeping application `app` of a session) and indexes its trace.
    pub fn open(dir: &Path, app: Option<&str>) -> Result<Viewer, AnalysisError> {
        Self::open_with(dir, app, Via::Parts)
    }

    /// [`Viewer::open`], the index of a plain experiment taken from its process parts or not.
    pub fn open_with(dir: &Path, app: Option<&str>, via: Via) -> Result<Viewer, AnalysisError> {
        let exp = Experiment::open(dir)?;
        let opts = BuildOptions {
            rebuild_from_trace: false,
            ..BuildOptions::default()
        };
        let mut model = Model::build(&exp, opts);
        if let Some(a) = app {
            model.select_app(a)?;
        }
        if !model.processes.iter().any(|p| p.has_trace()) {
            return Err(model.no_event_trace());
        }
        let path = store::path(dir, app);
        let fp = store::fingerprint(dir, app);
        let stored = match &fp {
            Ok(fp) => store::load(&path, *fp),
            Err(e) => Err(Unusable::Damaged(format!(
                "cannot list {}: {e}",
                dir.display()
            ))),
        };
        // the merge pass's index when one is stored (an experiment whose parts cannot be
        // combined), else the parts' (a plain experiment), else a merge pass
        let (index, source) = match stored {
            Ok(ix) => (ix, IndexSource::Stored(path)),
            Err(unusable) => {
                let combined = (via == Via::Parts && app.is_none() && !Experiment::is_session(dir))
                    .then(|| part::from_parts(&exp, &model));
                match combined {
                    Some(Ok((ix, used))) => (ix, IndexSource::Parts(used)),
                    other => {
                        let merged = match other {
                            Some(Err(why)) => Some(why.0),
                            _ => None,
                        };
                        let ix = TraceIndex::build(&model, &exp)?;
                        let unsaved = match fp {
                            Ok(fp) => store::save(&ix, fp, &path).err().map(|e| e.to_string()),
                            Err(e) => Some(e.to_string()),
                        };
                        let source = IndexSource::Built {
                            path,
                            unusable,
                            merged,
                            unsaved,
                        };
                        (ix, source)
                    }
                }
            }
        };
        Ok(Viewer {
            dir: dir.to_path_buf(),
            exp,
            defs: model,
            app: app.map(str::to_string),
            model: OnceLock::new(),
            index,
            source,
            critpath: OnceLock::new(),
            timeline: OnceLock::new(),
            counted: OnceLock::new(),
            waits: OnceLock::new(),
            replay: (Mutex::new(Replay::Idle), Condvar::new()),
            replaying: Mutex::new(()),
            placed: OnceLock::new(),
            backward: OnceLock::new(),
        })
    }

    /// The model as `plx report` builds it (profiles missing from the process files rebuilt from
    /// the trace), built on first use.
    pub fn model(&self) -> &Model {
        self.model.get_or_init(|| {
            let mut m = Model::build(&self.exp, BuildOptions::default());
            if let Some(a) = &self.app {
                // the same selection succeeded on `defs`
                let _ = m.select_app(a);
            }
            m
        })
    }

    /// Every counter event of the experiment that some set counted, in order of first appearance
    /// (the columns of `plx report --counters --format csv`).
    pub fn counter_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for p in &self.model().processes {
            for s in p.counters.sets.values() {
                for e in &s.events {
                    if !names.contains(e) {
                        names.push(e.clone());
                    }
                }
            }
        }
        names
    }

    /// The counters of thread `thread` of process `process` (`None`: every thread), per event of
    /// `names`: the whole-thread totals, and per counted function its inclusive counts (over its
    /// call paths and sets, as `plx report --counters` rows).
    pub fn counters_of(
        &self,
        names: &[String],
        process: Option<usize>,
        thread: Option<u32>,
    ) -> (Counts, HashMap<u32, Counts>) {
        counters_in(self.model(), names, process, thread)
    }

    /// Warnings of the model and the merge, as text.
    pub fn warnings(&self) -> Vec<String> {
        self.defs
            .report_warnings()
            .iter()
            .map(|w| w.to_string())
            .collect()
    }

    fn rel(&self, t: i64) -> i64 {
        t - self.index.origin
    }

    /// `GET /api/meta`: tracks with their grouping, regions, user events, the span.
    pub fn meta(&self) -> schema::Meta {
        let ix = &self.index;
        let tracks: Vec<schema::TrackMeta> = ix
            .tracks
            .iter()
            .map(|t| {
                // the names of `plx hierarchy`'s Machine tree, and the application (the
                // session's name for it, else the executable's file name) for the logical view
                let p = self.defs.processes.get(t.process);
                let thread_name = p
                    .and_then(|p| p.threads.iter().find(|th| th.thread == t.thread))
                    .map_or(t.name.as_str(), |th| th.name.as_str());
                let application = match p {
                    Some(p) if t.app.is_empty() => p
                        .executable
                        .rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    _ => t.app.clone(),
                };
                schema::TrackMeta {
                    label: t.label.clone(),
                    app: t.app.clone(),
                    host: t.host.clone(),
                    pid: t.pid,
                    rank: t.rank,
                    thread: t.thread,
                    name: t.name.clone(),
                    process: t.process,
                    depth: t.lanes.len(),
                    regions: t.lanes.iter().map(|l| l.len()).sum::<usize>(),
                    process_name: process_name(&self.defs, t.process),
                    thread_name: format!("{thread_name}#{}", t.thread),
                    application,
                }
            })
            .collect();
        let regions = ix
            .regions
            .all()
            .iter()
            .map(|info| {
                schema::RegionDef(
                    info.name.clone(),
                    info.kind.as_str().to_string(),
                    info.file.clone(),
                    info.line,
                )
            })
            .collect();
        let matched = ix.messages.iter().filter(|m| m.to.is_some());
        schema::Meta {
            dir: self.dir.display().to_string(),
            span: ix.end - ix.origin,
            events: ix.events,
            tracks,
            regions,
            user_events: ix.user_events.clone(),
            messages: matched.clone().count() as u64,
            messages_backward: matched
                .filter(|m| m.recv.is_some_and(|r| r < m.send))
                .count() as u64,
            handoffs: ix.handoffs.len() as u64,
            has_mpi: self.defs.has_mpi(),
            has_counters: self
                .defs
                .processes
                .iter()
                .any(|p| !p.counters.sets.is_empty()),
        }
    }

    /// `GET /api/window?t0=&t1=&width=&max=`: see [`crate::query`]. The JSON text is written
    /// directly (the answer is the one large one, and a value tree would cost more than the
    /// query).
    pub fn window(&self, t0: i64, t1: i64, width: u32, max: usize) -> String {
        use std::fmt::Write;
        let o = self.index.origin;
        let q = WindowQuery {
            t0: o + t0,
            t1: o + t1.max(t0 + 1),
            width: width.clamp(1, 20_000),
            max_messages: max,
        };
        let a = window(&self.index, &q);
        let mut out = String::with_capacity(1 << 16);
        let _ = write!(
            out,
            "{{\"t0\":{t0},\"t1\":{},\"width\":{},\"tracks\":[",
            q.t1 - o,
            q.width
        );
        for (ti, lanes) in a.lanes.iter().enumerate() {
            let track = &self.index.tracks[ti];
            out.push_str(if ti == 0 { "[" } else { ",[" });
            for (d, la) in lanes.iter().enumerate() {
                let lane = &track.lanes[d];
                out.push_str(if d == 0 {
                    "{\"full\":["
                } else {
                    ",{\"full\":["
                });
                for (k, &i) in la.full.iter().enumerate() {
                    let r = lane.get(i);
                    let sep = if k == 0 { "" } else { "," };
                    out.push_str(sep);
                    tuple(
                        &mut out,
                        &[r.start - o, r.end - o, r.region as i64, i as i64],
                    );
                }
                out.push_str("],\"columns\":[");
                for (k, c) in la.columns.iter().enumerate() {
                    let sep = if k == 0 { "" } else { "," };
                    out.push_str(sep);
                    tuple(
                        &mut out,
                        &[
                            c.col as i64,
                            c.count as i64,
                            c.busy as i64,
                            lane.region[c.longest] as i64,
                        ],
                    );
                }
                out.push_str("]}");
            }
            out.push(']');
        }
        let m = &a.messages;
        // a message received before its send crosses the window when sent in it
        let back = self.backward.get_or_init(|| {
            let ms = self.index.messages.iter();
            ms.filter(|m| m.to.is_some() && m.recv.is_some_and(|r| r < m.send))
                .map(|m| m.send)
                .collect()
        });
        let backward = back.partition_point(|&s| s < q.t1) - back.partition_point(|&s| s < q.t0);
        let _ = write!(
            out,
            "],\"messages\":{{\"total\":{},\"unmatched\":{},\"backward\":{backward},\"lines\":[",
            m.total, m.unmatched
        );
        for (k, l) in m.lines.iter().enumerate() {
            let sep = if k == 0 { "" } else { "," };
            let to = l.to.map_or("null".to_string(), |t| t.to_string());
            let _ = write!(
                out,
                "{sep}[{},{},{},{to},{}]",
                l.send - o,
                l.recv.unwrap_or(l.send) - o,
                l.from,
                l.bytes
            );
        }
        out.push_str("],\"bundles\":[");
        for (k, b) in m.bundles.iter().enumerate() {
            let sep = if k == 0 { "" } else { "," };
            let _ = write!(
                out,
                "{sep}[{},{},{},{},{},{}]",
                b.col,
                b.from,
                b.to,
                b.count,
                b.bytes,
                b.mean_recv - o
            );
        }
        out.push_str("]},\"markers\":[");
        for (k, (t, mk)) in a.markers.iter().enumerate() {
            let sep = if k == 0 { "" } else { "," };
            // a value JSON cannot hold (NaN, infinity) is given as null
            let v = json!(mk.value);
            let _ = write!(out, "{sep}[{t},{},{},{v}]", mk.time - o, mk.event);
        }
        let _ = write!(
            out,
            "],\"markers_total\":{},\"handoffs\":[",
            a.markers_total
        );
        for (k, h) in a.handoffs.iter().enumerate() {
            let sep = if k == 0 { "" } else { "," };
            let _ = write!(
                out,
                "{sep}[{},{},{},{},{}]",
                h.release - o,
                h.acquire - o,
                h.from,
                h.to,
                h.kind
            );
        }
        let _ = write!(out, "],\"handoffs_total\":{}}}", a.handoffs_total);
        out
    }

    /// `GET /api/region?track=&depth=&index=`: a region instance, its call path and source.
    pub fn region(&self, track: usize, depth: usize, i: usize) -> Option<schema::RegionDetail> {
        let t = self.index.tracks.get(track)?;
        if i >= t.lanes.get(depth)?.len() {
            return None;
        }
        let path = self.index.call_path(track, depth, i);
        let me = *path.last()?;
        let info = self.index.regions.get(me.region);
        let names: Vec<String> = path
            .iter()
            .map(|r| self.index.regions.name(r.region).to_string())
            .collect();
        // the counters of the region's function on this thread, and the thread's totals
        let counters = self.counter_names();
        let (totals, by_region) = if counters.is_empty() {
            (Vec::new(), HashMap::new())
        } else {
            self.counters_of(&counters, Some(t.process), Some(t.thread))
        };
        let function_counters = self
            .model()
            .regions
            .find(&info.name, info.kind)
            .and_then(|r| by_region.get(&r))
            .cloned();
        Some(schema::RegionDetail {
            track: t.label.clone(),
            name: info.name.clone(),
            kind: info.kind.as_str().to_string(),
            start: self.rel(me.start),
            end: self.rel(me.end),
            duration: me.end - me.start,
            file: info.file.clone(),
            line: info.line,
            call_path: names,
            counters,
            function_counters,
            thread_counters: totals,
        })
    }

    /// `GET /api/stats?t0=&t1=`: the profile of a window (each region's time clipped to it:
    /// inclusive, exclusive, and the calls that begin in it) and its messages per pair.
    pub fn stats(&self, t0: i64, t1: i64) -> schema::Stats {
        let (a, b) = (self.index.origin + t0, self.index.origin + t1.max(t0 + 1));
        let clip = |s: i64, e: i64| (e.min(b) - s.max(a)).max(0);
        // region → (calls, inclusive, exclusive)
        let mut rows: HashMap<u32, (u64, i64, i64)> = HashMap::new();
        for t in &self.index.tracks {
            for (d, lane) in t.lanes.iter().enumerate() {
                let (lo, hi) = lane.overlapping(a, b);
                for i in lo..hi {
                    let r = lane.get(i);
                    let c = clip(r.start, r.end);
                    let e = rows.entry(r.region).or_default();
                    e.0 += u64::from(r.start >= a);
                    e.1 += c;
                    e.2 += c;
                    if d > 0 {
                        let up = &t.lanes[d - 1];
                        if let Some(p) = up.start.partition_point(|s| s <= r.start).checked_sub(1) {
                            rows.entry(up.region[p]).or_default().2 -= c;
                        }
                    }
                }
            }
        }
        let mut rows: Vec<(u32, (u64, i64, i64))> = rows.into_iter().collect();
        rows.sort_by_key(|(r, (_, _, ex))| (std::cmp::Reverse(*ex), *r));
        let profile = rows
            .iter()
            .map(|&(r, (calls, inc, ex))| {
                schema::StatsRow(self.index.regions.name(r).to_string(), calls, inc, ex)
            })
            .collect();
        let mut pairs: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
        let hi = self.index.messages.partition_point(|m| m.send < b);
        let lo = self.index.messages.partition_point(|m| m.send < a);
        for m in &self.index.messages[lo..hi] {
            if let Some(to) = m.to {
                let e = pairs.entry((m.from, to)).or_default();
                e.0 += 1;
                e.1 += m.bytes;
            }
        }
        let mut pairs: Vec<_> = pairs.into_iter().collect();
        pairs.sort();
        schema::Stats {
            t0,
            t1: b - self.index.origin,
            profile,
            messages: pairs
                .iter()
                .map(|&((f, t), (n, by))| schema::Pair(f, t, n, by))
                .collect(),
            message_count: pairs.iter().map(|(_, (n, _))| n).sum::<u64>(),
            bytes: pairs.iter().map(|(_, (_, by))| by).sum::<u64>(),
        }
    }

    /// `GET /api/counters`: the counted calls of the trace (`plx run --trace --counters`,
    /// subtype 10: the first four events of a call's set), per track: `tracks` `[{"track",
    /// "events": [names], "calls": [[start, end, region, [value per event or null]]...]}]`, a
    /// call's start and end those of the innermost instance of its region open when it was
    /// counted (right before its exit). One pass over the trace at the first request; the
    /// answer is kept.
    pub fn counters(&self) -> &str {
        self.counted.get_or_init(|| {
            let answer = match self.counted_calls() {
                Ok(c) => schema::CountersAnswer::Counted(c),
                Err(e) => schema::CountersAnswer::Failed(schema::Failed {
                    error: e.to_string(),
                }),
            };
            serde_json::to_string(&answer)
                .unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
        })
    }

    fn counted_calls(&self) -> Result<schema::Counted, AnalysisError> {
        use std::collections::BTreeMap;
        let track_of: HashMap<(usize, u32), usize> = self
            .index
            .tracks
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.process, t.thread), i))
            .collect();
        let per: BTreeMap<usize, CountedCalls> = if matches!(self.source, IndexSource::Parts(_)) {
            self.counted_alone(&track_of)?
        } else {
            self.counted_merged(&track_of)?
        };
        let tracks = per
            .into_iter()
            .map(|(track, (events, calls))| schema::CountedTrack {
                track,
                events,
                calls,
            })
            .collect();
        Ok(schema::Counted { tracks })
    }

    /// The counted calls of every location decoded alone, the locations spread over the
    /// cores (the index came from the parts: no clock repair, the merge's times are the
    /// threads' own).
    fn counted_alone(
        &self,
        track_of: &HashMap<(usize, u32), usize>,
    ) -> Result<std::collections::BTreeMap<usize, CountedCalls>, AnalysisError> {
        use plx_analysis::merge::Alone;
        use plx_analysis::EventKind;
        use rayon::prelude::*;
        let alone = Alone::with_counters(&self.defs, &self.exp)?;
        let (index, defs) = (&self.index, &self.defs);
        let work: Vec<(Option<usize>, _)> = alone
            .locations
            .iter()
            .map(|l| track_of.get(&(l.process, l.thread)).copied())
            .zip(alone.streams)
            .collect();
        let per: Vec<Option<(usize, CountedCalls)>> = work
            .into_par_iter()
            .map(|(ti, mut stream)| {
                let ti = ti?;
                let mut calls = CountedCalls::default();
                stream.for_each(|ev| {
                    if let EventKind::Counted {
                        set,
                        region,
                        values,
                    } = ev.kind
                    {
                        take_counted(
                            index, defs, &mut calls, ti, ev.time_ns, set, region, &values,
                        );
                    }
                });
                (!calls.1.is_empty()).then_some((ti, calls))
            })
            .collect();
        Ok(per.into_iter().flatten().collect())
    }

    /// The counted calls in one pass of the merge (an index that needed the clock repaired).
    fn counted_merged(
        &self,
        track_of: &HashMap<(usize, u32), usize>,
    ) -> Result<std::collections::BTreeMap<usize, CountedCalls>, AnalysisError> {
        use plx_analysis::{EventKind, GlobalMerge};
        let mut merge = GlobalMerge::with_counters(&self.defs, &self.exp, MergeOptions::default())?;
        let tracks: Vec<Option<usize>> = merge
            .locations()
            .iter()
            .map(|l| track_of.get(&(l.process, l.thread)).copied())
            .collect();
        let mut per: std::collections::BTreeMap<usize, CountedCalls> = Default::default();
        while let Some(ev) = merge.next_event() {
            let EventKind::Counted {
                set,
                region,
                values,
            } = ev.kind
            else {
                continue;
            };
            let Some(ti) = tracks.get(ev.location as usize).copied().flatten() else {
                continue;
            };
            let calls = per.entry(ti).or_default();
            take_counted(
                &self.index,
                &self.defs,
                calls,
                ti,
                ev.time_ns,
                set,
                region,
                &values,
            );
        }
        per.retain(|_, c| !c.1.is_empty());
        Ok(per)
    }

    fn replay_state(&self) -> MutexGuard<'_, Replay> {
        self.replay.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until the waits are first asked for ([`Viewer::waits_if_ready`]), then replays
    /// them; returns at once after [`Viewer::stop_replay`]. Run by the server on a thread of its
    /// own, so that the replay of the whole trace holds no answer to a zoom.
    pub fn replay_waits_when_asked(&self) {
        let mut state = self.replay_state();
        while *state == Replay::Idle {
            state = self.replay.1.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let asked = *state == Replay::Asked;
        drop(state);
        if asked {
            // an error is kept in the analysis's place and answered
            let _ = self.wait_analysis();
        }
    }

    /// No thread replays the waits (any more): the answer that asks for them replays them.
    pub fn stop_replay(&self) {
        let mut state = self.replay_state();
        if *state == Replay::Idle {
            *state = Replay::Inline;
        }
        self.replay.1.notify_all();
    }

    /// Holds the waits' replay back until the guard is dropped (it waits for the guard before it
    /// begins): a test's way to ask the server while the replay is under way.
    pub fn hold_waits(&self) -> MutexGuard<'_, ()> {
        self.replaying.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The waits when replayed; else `None`, and their replay asked for (of the thread of
    /// [`Viewer::replay_waits_when_asked`]; without one, replayed now).
    fn waits_if_replayed(&self) -> Option<Result<&Waits, String>> {
        if self.waits.get().is_some() {
            return Some(self.wait_analysis());
        }
        let mut state = self.replay_state();
        match *state {
            Replay::Inline => {
                drop(state);
                Some(self.wait_analysis())
            }
            Replay::Idle => {
                *state = Replay::Asked;
                self.replay.1.notify_all();
                None
            }
            Replay::Asked => None,
        }
    }

    /// [`Viewer::waits`] if the waits are replayed, else `{"computing": true}` (and their replay
    /// begun in the background): the server's answer, which never waits for the replay.
    pub fn waits_if_ready(&self, t0: i64, t1: i64, max: usize) -> schema::WaitsAnswer {
        match self.waits_if_replayed() {
            Some(_) => schema::WaitsAnswer::Waits(self.waits(t0, t1, max)),
            None => schema::WaitsAnswer::Computing(schema::Computing { computing: true }),
        }
    }

    /// [`Viewer::wait`] if the waits are replayed, else `Some({"computing": true})`.
    pub fn wait_if_ready(&self, id: usize) -> Option<schema::WaitAnswer> {
        match self.waits_if_replayed() {
            Some(_) => self.wait(id).map(schema::WaitAnswer::Wait),
            None => Some(schema::WaitAnswer::Computing(schema::Computing {
                computing: true,
            })),
        }
    }

    /// The waits, replayed at the first request (one pass over the merged trace, as `plx
    /// waits --causes`); the analysis is kept.
    fn wait_analysis(&self) -> Result<&Waits, String> {
        self.waits
            .get_or_init(|| {
                let _held = self.hold_waits();
                let analysis =
                    WaitAnalysis::compute_each(&self.defs, &self.exp, MergeOptions::default())
                        .map_err(|e| e.to_string())?;
                let track_of: HashMap<(usize, u32), usize> = self
                    .index
                    .tracks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ((t.process, t.thread), i))
                    .collect();
                let track = analysis
                    .locations
                    .iter()
                    .map(|l| track_of.get(&(l.process, l.thread)).copied())
                    .collect();
                Ok(Waits { analysis, track })
            })
            .as_ref()
            .map_err(|e| e.clone())
    }

    /// `GET /api/waits?t0=&t1=&max=`: the wait states (`plx waits`'s patterns) overlapping
    /// `[t0, t1)`: `patterns` (names, in metric-tree order), `total` (every wait of the run),
    /// `count` (those overlapping), `waits` `[id, track, pattern, start, end, depth]` (the
    /// `max` longest of them, in id order; `depth`: the nesting depth of the innermost region
    /// instance holding the wait's start, where it is drawn); `error` when the trace cannot
    /// be replayed.
    pub fn waits(&self, t0: i64, t1: i64, max: usize) -> schema::Waits {
        let patterns: Vec<String> = Pattern::ALL.iter().map(|p| p.name().to_string()).collect();
        let w = match self.wait_analysis() {
            Ok(w) => w,
            Err(e) => {
                return schema::Waits {
                    error: Some(e),
                    patterns,
                    total: 0,
                    count: 0,
                    waits: Vec::new(),
                }
            }
        };
        let o = self.index.origin;
        let (a, b) = (o + t0, o + t1.max(t0 + 1));
        let found = &w.analysis.found;
        let mut hit: Vec<usize> = (0..found.len())
            .filter(|&i| {
                let f = &found[i];
                w.track[f.location as usize].is_some() && f.start < b && f.start + f.wait_ns > a
            })
            .collect();
        let count = hit.len();
        if hit.len() > max {
            hit.sort_by_key(|&i| (std::cmp::Reverse(found[i].wait_ns), i));
            hit.truncate(max);
            hit.sort_unstable();
        }
        let waits = hit
            .iter()
            .map(|&i| {
                let f = &found[i];
                let ti = w.track[f.location as usize].expect("kept only with a track");
                let pattern = Pattern::ALL.iter().position(|&p| p == f.pattern);
                let depth = self.depth_at(ti, f.start);
                schema::WaitBox(i, ti, pattern, f.start - o, f.start + f.wait_ns - o, depth)
            })
            .collect();
        schema::Waits {
            error: None,
            patterns,
            total: found
                .iter()
                .filter(|f| w.track[f.location as usize].is_some())
                .count(),
            count,
            waits,
        }
    }

    /// The depth of the innermost region instance of track `ti` holding `t` (0 when none).
    fn depth_at(&self, ti: usize, t: i64) -> usize {
        let lanes = &self.index.tracks[ti].lanes;
        (0..lanes.len())
            .rev()
            .find(|&d| {
                let l = &lanes[d];
                l.start
                    .partition_point(|s| s <= t)
                    .checked_sub(1)
                    .is_some_and(|i| l.end.get(i) > t)
            })
            .unwrap_or(0)
    }

    /// `GET /api/wait?id=`: one wait of [`Viewer::waits`]: `pattern`, `group` (`mpi
    /// point-to-point`, ...), `track`, `location`, `callpath` (where it waited), `start`, `end`,
    /// `wait_ns`; `late` (`track`, `location`, `callpath`: the location it waited for, where
    /// that arrived; null when not known) and `causes` (`track`, `location`, `callpath`, `kind`
    /// direct or propagated, `delay_ns`: `plx waits --causes`'s division of this wait, the
    /// largest first). `None` for an unknown id.
    pub fn wait(&self, id: usize) -> Option<schema::WaitDetail> {
        let w = self.wait_analysis().ok()?;
        let a = &w.analysis;
        let f = a.found.get(id)?;
        let o = self.index.origin;
        let loc = |l: u32| a.locations[l as usize].label();
        let track = |l: u32| w.track[l as usize];
        let (g, sub) = f.pattern.group();
        let late = f.late.map(|(l, cp)| schema::WaitPlace {
            track: track(l),
            location: loc(l),
            callpath: a.callpath_name(cp),
        });
        let mut causes = f.causes.clone();
        causes.sort_by(|x, y| y.3.total_cmp(&x.3).then((x.0, x.1).cmp(&(y.0, y.1))));
        let causes = causes
            .iter()
            .map(|&(l, cp, kind, ns)| schema::WaitCause {
                track: track(l),
                location: loc(l),
                callpath: a.callpath_name(cp),
                kind: if kind.as_str() == "direct" {
                    schema::CauseKind::Direct
                } else {
                    schema::CauseKind::Propagated
                },
                delay_ns: ns,
            })
            .collect();
        Some(schema::WaitDetail {
            id,
            pattern: f.pattern.name().to_string(),
            group: format!("{g} {sub}"),
            track: track(f.location),
            location: loc(f.location),
            callpath: a.callpath_name(f.callpath),
            start: f.start - o,
            end: f.start + f.wait_ns - o,
            wait_ns: f.wait_ns,
            late,
            causes,
        })
    }

    /// `GET /api/series`: the external metrics (`plx run --monitor`, `plx import`) as time
    /// series on the trace's time base: per metric `name`, `unit`, `mode` (`level`: each value
    /// holds until the next sample; `total`: a running total), `source`, `host` (the host whose
    /// clock the samples came on; empty for a CSV file), `samples` `[[t, value]...]` in time
    /// order (t in ns from the first event); `warnings`: what of the files could not be read.
    pub fn series(&self) -> schema::SeriesAnswer {
        let (files, unread) = plx_format::read_metric_files(&self.dir);
        let metrics =
            plx_analysis::external::external_metrics(&self.defs, &files, Some(self.index.origin));
        // external_metrics gives each file's metrics in order: their hosts, the same way
        let hosts = files
            .iter()
            .flat_map(|f| f.metrics.iter().map(move |_| f.source.host.clone()));
        let o = self.index.origin as f64;
        let series = metrics
            .iter()
            .zip(hosts)
            .map(|(m, host)| schema::Series {
                name: m.name.clone(),
                unit: m.unit.clone(),
                mode: match m.mode {
                    plx_format::MetricMode::Absolute => schema::SeriesMode::Level,
                    plx_format::MetricMode::Cumulative => schema::SeriesMode::Total,
                },
                source: m.source.clone(),
                host,
                samples: m
                    .samples
                    .iter()
                    .map(|&(t, v)| schema::SeriesSample((t - o).round() as i64, v))
                    .collect(),
            })
            .collect();
        let warnings = unread.iter().map(|w| w.to_string()).collect();
        schema::SeriesAnswer { series, warnings }
    }

    /// `GET /api/search?name=&max=`: every instance of the regions named `name` (exactly), on
    /// every track and depth: `count`, and the first `max` as `[track, depth, index, start,
    /// end]` in track and time order.
    pub fn search(&self, name: &str, max: usize) -> schema::SearchAnswer {
        let ids: Vec<u32> = (0..self.index.regions.all().len() as u32)
            .filter(|&r| self.index.regions.name(r) == name)
            .collect();
        let mut count = 0u64;
        let mut found: Vec<schema::Found> = Vec::new();
        if !ids.is_empty() {
            for (ti, t) in self.index.tracks.iter().enumerate() {
                for (d, lane) in t.lanes.iter().enumerate() {
                    for i in 0..lane.len() {
                        if !ids.contains(&lane.region[i]) {
                            continue;
                        }
                        count += 1;
                        if found.len() < max {
                            let r = lane.get(i);
                            found.push(schema::Found(ti, d, i, self.rel(r.start), self.rel(r.end)));
                        }
                    }
                }
            }
        }
        schema::SearchAnswer {
            name: name.to_string(),
            regions: ids,
            count,
            instances: found,
        }
    }

    /// `GET /api/flame?t0=&t1=&tracks=`: the call tree of the regions overlapping `[t0, t1)` on
    /// `tracks` (every track when empty), merged over the tracks by call path: `nodes` `[parent
    /// (-1 for a root), region, inclusive ns (clipped to the interval), calls begun in it]`,
    /// parents before their children. Each track's tree is built on its own, on all cores.
    pub fn flame(&self, t0: i64, t1: i64, tracks: &[usize]) -> schema::FlameAnswer {
        use rayon::prelude::*;
        let (a, b) = (self.index.origin + t0, self.index.origin + t1.max(t0 + 1));
        let all: Vec<usize> = (0..self.index.tracks.len()).collect();
        let chosen = if tracks.is_empty() { &all[..] } else { tracks };
        // each track's tree on its own (on all cores), then merged in the tracks' order: a
        // track's nodes, taken in the order it met them, meet the merged tree's in the order
        // one pass over every track would
        let index = &self.index;
        let per: Vec<Vec<FlameNode>> = chosen
            .par_iter()
            .map(|&ti| {
                index
                    .tracks
                    .get(ti)
                    .map_or_else(Vec::new, |t| flame_of(t, a, b))
            })
            .collect();
        let nodes = merge_flames(per);
        schema::FlameAnswer {
            t0,
            t1: b - self.index.origin,
            nodes: nodes
                .iter()
                .map(|&(p, r, incl, calls)| schema::FlameNode(p, r, incl, calls))
                .collect(),
        }
    }

    /// `GET /api/samples?tracks=&t0=&t1=`: the call-stack samples (`plx run --sample`) of
    /// `tracks` (every track when empty), merged by call path: `samples` (taken on them, in the
    /// window where timed), `lost` (of the whole run), `period_ns` (each track's, `[track,
    /// ns]`), `untimed` (the tracks whose samples carry no time: a profile, counted over the
    /// whole run whatever the window), `nodes` `[parent (-1: a root), name, samples (inclusive),
    /// estimated ns (inclusive: samples × the period of each thread they came from), sampled (1:
    /// a frame known from samples only, 0: an instrumented call)]`, parents before children,
    /// only call paths with samples. With `window` (`t0`, `t1`: ns since the trace's origin) a
    /// thread whose samples the runtime stamped (a trace) counts those taken in `[t0, t1)`.
    pub fn samples(&self, tracks: &[usize], window: Option<(i64, i64)>) -> schema::SamplesAnswer {
        let model = self.model();
        let mut untimed: Vec<usize> = Vec::new();
        let all: Vec<usize> = (0..self.index.tracks.len()).collect();
        let chosen = if tracks.is_empty() { &all[..] } else { tracks };
        let mut nodes: Vec<(i64, u32, u64, u64, bool)> = Vec::new();
        let mut child: HashMap<(i64, u32), usize> = HashMap::new();
        let (mut taken, mut lost) = (0u64, 0u64);
        let mut periods: Vec<schema::TrackPeriod> = Vec::new();
        for &ti in chosen {
            let Some(t) = self.index.tracks.get(ti) else {
                continue;
            };
            let Some(th) = model
                .processes
                .get(t.process)
                .and_then(|p| p.threads.iter().find(|x| x.thread == t.thread))
            else {
                continue;
            };
            let Some(st) = &th.samples else { continue };
            lost += st.lost_full + st.lost_loader;
            periods.push(schema::TrackPeriod(ti, st.period_ns));
            let tn = th.tree.nodes();
            // each node's samples (inclusive): the stamped ones in the window, else the run's
            let timed = window.filter(|_| !th.sample_times.is_empty());
            let counts: Vec<u64> = match timed {
                Some((t0, t1)) => {
                    let p = &model.processes[t.process];
                    let (a, b) = (self.index.origin + t0, self.index.origin + t1);
                    let mut c = vec![0u64; tn.len()];
                    for s in &th.sample_times {
                        let at = crate::samples::on_timeline(
                            p.rank0_ns(s.ticks).round() as i64,
                            self.index.origin,
                            self.index.end,
                        );
                        if at < a || at >= b {
                            continue;
                        }
                        taken += 1;
                        let mut n = s.node;
                        while let Some(k) = n.filter(|&k| (k as usize) < c.len()) {
                            c[k as usize] += 1;
                            n = tn[k as usize].parent;
                        }
                    }
                    c
                }
                None => {
                    taken += st.samples;
                    if window.is_some() {
                        untimed.push(ti);
                    }
                    tn.iter().map(|n| n.samples).collect()
                }
            };
            let mut here: Vec<Option<usize>> = vec![None; tn.len()];
            for (i, n) in tn.iter().enumerate() {
                if counts[i] == 0 {
                    continue;
                }
                let parent = match n.parent {
                    None => -1,
                    Some(p) => match here.get(p as usize).copied().flatten() {
                        Some(g) => g as i64,
                        None => continue,
                    },
                };
                let k = *child.entry((parent, n.region)).or_insert_with(|| {
                    nodes.push((parent, n.region, 0, 0, true));
                    nodes.len() - 1
                });
                nodes[k].2 += counts[i];
                nodes[k].3 += counts[i] * st.period_ns;
                nodes[k].4 &= n.calls == 0;
                here[i] = Some(k);
            }
        }
        let nodes = nodes
            .iter()
            .map(|&(p, r, n, ns, sampled)| {
                schema::SampleNode(
                    p,
                    model.regions.name(r).to_string(),
                    n,
                    ns,
                    u8::from(sampled),
                )
            })
            .collect();
        schema::SamplesAnswer {
            samples: taken,
            lost,
            period_ns: periods,
            untimed,
            nodes,
        }
    }

    /// `GET /api/sample_lane?t0=&t1=&width=`: each sampled track's samples over the window.
    /// A track whose samples the runtime stamped (a trace): `{"track", "taken", "stamped" (of
    /// the run), "period_ns", "in_window" (stamped samples in `[t0, t1)`), "columns": [[column,
    /// samples, [[frame, samples]...] (the column's sampled frames, most first, at most 3)]...],
    /// "frames": [[innermost frame, call path]...]}`, each sample in the column of its time.
    /// Without stamps (a profile), estimated ([`crate::samples::place`]): `{"track", "taken",
    /// "stamped": 0, "placed" (of the run), "period_ns", "columns": [[column, samples, path]...]
    /// (`null`: more instances in the window than are placed; zoom in), "paths": [call path
    /// names]}`.
    pub fn sample_lane(&self, t0: i64, t1: i64, width: u32) -> schema::SampleLaneAnswer {
        use rayon::prelude::*;
        let model = self.model();
        let index = &self.index;
        let thread = |t: &crate::index::Track| {
            let p = model.processes.get(t.process)?;
            Some((p, p.threads.iter().find(|x| x.thread == t.thread)?))
        };
        let lanes = self.placed.get_or_init(|| {
            index
                .tracks
                .par_iter()
                .map(|t| {
                    let (p, th) = thread(t)?;
                    let st = th.samples.as_ref()?;
                    if let Some(s) =
                        crate::samples::stamped(p, th, &model.regions, (index.origin, index.end))
                    {
                        return Some(Lane::Stamped(s));
                    }
                    Some(Lane::Estimated(crate::samples::place(
                        t,
                        &index.regions,
                        &th.tree,
                        &model.regions,
                        st.samples,
                    )))
                })
                .collect()
        });
        let (a, b) = (index.origin + t0, index.origin + t1.max(t0 + 1));
        let tracks: Vec<schema::SampleTrack> = lanes
            .par_iter()
            .enumerate()
            .filter_map(|(ti, lane)| {
                let t = &index.tracks[ti];
                let period = thread(t)
                    .and_then(|(_, th)| th.samples.as_ref())
                    .map_or(0, |s| s.period_ns);
                match lane.as_ref()? {
                    Lane::Stamped(s) => {
                        let cols = crate::samples::stamped_columns(s, a, b, width);
                        let in_window: u64 = cols.iter().map(|c| c.1).sum();
                        let columns = cols
                            .iter()
                            .map(|(c, n, f)| {
                                let f = f.iter().map(|&(k, m)| schema::FrameCount(k, m)).collect();
                                schema::StampedColumn(*c, *n, f)
                            })
                            .collect();
                        let frames = s
                            .frames
                            .iter()
                            .map(|(n, p)| schema::FramePath(n.clone(), p.clone()))
                            .collect();
                        Some(schema::SampleTrack::Stamped(schema::StampedTrack {
                            track: ti,
                            taken: s.taken,
                            stamped: s.times.len() as u64,
                            period_ns: period,
                            in_window,
                            columns,
                            frames,
                        }))
                    }
                    Lane::Estimated(p) => {
                        let columns = crate::samples::columns(t, p, a, b, width).map(|c| {
                            c.iter()
                                .map(|&(c, v, path)| {
                                    let path = if path == u32::MAX { -1 } else { path as i64 };
                                    schema::EstimatedColumn(c, v, path)
                                })
                                .collect()
                        });
                        Some(schema::SampleTrack::Estimated(schema::EstimatedTrack {
                            track: ti,
                            taken: p.taken,
                            stamped: 0,
                            placed: p.placed,
                            period_ns: period,
                            columns,
                            paths: p.paths.clone(),
                        }))
                    }
                }
            })
            .collect();
        schema::SampleLaneAnswer {
            t0,
            t1: b - index.origin,
            width,
            tracks,
        }
    }

    /// `GET /api/profile`: per thread and total, the flat profile rows as `plx report` orders
    /// them, the total's call paths (for the flame graph) and its call graph (gprof's). The
    /// call paths name each path whole (N²/2 names for a chain N deep): they are serialized
    /// from the tree as the answer is written, never built.
    pub fn profile(&self) -> Profile<'_> {
        use rayon::prelude::*;
        let model = self.model();
        let (tables, total) = model.tables(GroupBy::Thread);
        let name = |r: u32| model.regions.name(r).to_string();
        let counters = self.counter_names();
        // a table's rows, each with its function's counters (when the experiment has any), and
        // the table's whole-thread counter totals
        let flat = |t: &plx_analysis::Table| -> (Vec<schema::FlatRow>, Counts) {
            let (totals, by_region) = if counters.is_empty() {
                (Vec::new(), HashMap::new())
            } else {
                counters_in(model, &counters, t.process, t.thread)
            };
            let rows = flat_profile(&t.tree)
                .iter()
                .map(|r| {
                    schema::FlatRow(
                        name(r.region),
                        r.calls,
                        r.exclusive,
                        r.inclusive,
                        r.cpu,
                        by_region.get(&r.region).cloned(),
                    )
                })
                .collect();
            (rows, totals)
        };
        let label = |t: &plx_analysis::Table| match (t.process, t.thread) {
            (Some(p), th) => {
                let p = &model.processes[p];
                let who = match p.rank() {
                    Some(r) => format!("rank {r}"),
                    None => format!("pid {}", p.pid),
                };
                let app = p.app_name(model);
                let app = if app.is_empty() {
                    String::new()
                } else {
                    format!("{app}: ")
                };
                format!("{app}{who} thread {}", th.unwrap_or(0))
            }
            _ => "total".to_string(),
        };
        let table = |label: String, t: &plx_analysis::Table| {
            let (rows, counters) = flat(t);
            schema::ProfileTable {
                label,
                rows,
                counters,
            }
        };
        // the total and every thread's table, each on its own (on all cores), in order; the
        // call graph beside them
        let all: Vec<&plx_analysis::Table> = std::iter::once(&total).chain(&tables).collect();
        let tables_on_cores = || -> Vec<schema::ProfileTable> {
            all.par_iter()
                .enumerate()
                .map(|(k, t)| {
                    let l = if k == 0 {
                        "total".to_string()
                    } else {
                        label(t)
                    };
                    table(l, t)
                })
                .collect()
        };
        let arcs = |v: &[plx_analysis::gprof::Arc]| -> Vec<String> {
            v.iter()
                .map(|a| a.region.map_or("<spontaneous>".to_string(), name))
                .collect()
        };
        let gprof = || -> Vec<schema::GprofRow> {
            call_graph(&total.tree)
                .iter()
                .map(|e| {
                    schema::GprofRow(
                        e.index,
                        name(e.region),
                        e.percent,
                        e.self_s,
                        e.children_s,
                        e.calls,
                        arcs(&e.parents),
                        arcs(&e.children),
                    )
                })
                .collect()
        };
        let (tables, gprof) = rayon::join(tables_on_cores, gprof);
        Profile {
            viewer: self,
            tables,
            gprof,
            counters,
            tree: total.tree,
        }
    }

    /// `GET /api/comm`: the matrix by rank (as `plx comm`), the matrix of each communicator
    /// (from the trace's matched messages) and the latency/bandwidth fit.
    pub fn comm(&self) -> schema::CommAnswer {
        if !self.model().has_mpi() {
            return schema::CommAnswer {
                ranks: Vec::new(),
                pairs: Vec::new(),
                communicators: Vec::new(),
                fits: Vec::new(),
            };
        }
        let ranks: Vec<u32> = self.model().ranks().iter().map(|(r, _)| *r).collect();
        let pairs = pairs(self.model(), Direction::Sent, false)
            .iter()
            .map(|p| schema::Pair(p.sender.rank, p.receiver.rank, p.messages, p.bytes))
            .collect();
        let mut fit = FitAccumulator::new(false);
        // (communicator, sender, receiver) → (messages, bytes), from the trace's matched messages
        let mut per_comm: std::collections::BTreeMap<(Option<u32>, u32, u32), (u64, u64)> =
            Default::default();
        let fits: Vec<schema::Fit> = match match_messages(self.model(), |m| {
            fit.add(m);
            let e = per_comm
                .entry((m.comm, m.sender.rank, m.receiver.rank))
                .or_default();
            e.0 += 1;
            e.1 += m.bytes;
        }) {
            Ok(_) => fit
                .fits()
                .iter()
                .map(|f| schema::Fit {
                    from: f.sender.rank,
                    to: f.receiver.rank,
                    messages: f.messages,
                    latency_us: f.latency_us,
                    bandwidth_mbps: f.bandwidth_mbps,
                    r2: f.r2,
                    mean_transfer_us: f.mean_transfer_us,
                    notes: f.notes().iter().map(|n| n.code().to_string()).collect(),
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let mut comms: Vec<schema::CommMatrix> = Vec::new();
        let mut cur: Option<(Option<u32>, Vec<schema::Pair>)> = None;
        let name = |c: Option<u32>| match c {
            Some(i) => self.model().comms.get(i).describe(),
            None => "(no communicator definition)".to_string(),
        };
        for ((c, f, t), (n, b)) in per_comm {
            if cur.as_ref().is_some_and(|(k, _)| *k != c) {
                let (k, v) = cur.take().expect("some");
                comms.push(schema::CommMatrix {
                    name: name(k),
                    pairs: v,
                });
            }
            cur.get_or_insert_with(|| (c, Vec::new()))
                .1
                .push(schema::Pair(f, t, n, b));
        }
        if let Some((k, v)) = cur {
            comms.push(schema::CommMatrix {
                name: name(k),
                pairs: v,
            });
        }
        schema::CommAnswer {
            ranks,
            pairs,
            communicators: comms,
            fits,
        }
    }

    /// `GET /api/compare`: IPS-2's metric table and the per-function differences, one column
    /// per application of a session (as `plx compare SESSION`), else the run's own column.
    pub fn compare(&self) -> schema::CompareAnswer {
        let names: Vec<String> = self
            .model()
            .apps
            .iter()
            .map(|a| a.name.clone())
            .filter(|n| !n.is_empty())
            .collect();
        let mut runs = Vec::new();
        if names.len() > 1 {
            for n in &names {
                let mut m = self.model().clone();
                if m.select_app(n).is_ok() {
                    if let Ok(r) = CompareRun::new(n.clone(), m, None) {
                        runs.push(r);
                    }
                }
            }
        } else {
            let name = self
                .dir
                .file_name()
                .map_or("run".to_string(), |n| n.to_string_lossy().into_owned());
            if let Ok(r) = CompareRun::new(name, self.model().clone(), None) {
                runs.push(r);
            }
        }
        let c = compare(&runs, 10);
        let metrics = c
            .metrics
            .iter()
            .map(|m| {
                schema::MetricRow(
                    m.metric.clone(),
                    m.unit.as_str().to_string(),
                    m.values.clone(),
                )
            })
            .collect();
        let functions = c
            .functions
            .iter()
            .take(50)
            .map(|f| {
                let incl: Vec<Option<f64>> =
                    f.runs.iter().map(|r| r.map(|x| x.inclusive_s)).collect();
                schema::FunctionRow(f.name.clone(), incl, f.inclusive_diff_s, f.inclusive_ratio)
            })
            .collect();
        schema::CompareAnswer {
            runs: c.runs,
            metrics,
            functions,
        }
    }

    /// `GET /api/critpath`: the global critical path's segments (on tracks) and its profile per
    /// level.
    pub fn critpath(&self) -> schema::CritPathAnswer {
        let cp = self.critpath.get_or_init(|| {
            CriticalPath::compute(
                self.model(),
                &self.exp,
                Window::ALL,
                Mode::Global,
                None,
                MergeOptions::default(),
            )
            .map_err(|e| e.to_string())
        });
        let cp = match cp {
            Ok(cp) => cp,
            Err(e) => return schema::CritPathAnswer::Failed(schema::Failed { error: e.clone() }),
        };
        // graph locations → tracks, by (process, thread)
        let track_of: HashMap<(usize, u32), usize> = self
            .index
            .tracks
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.process, t.thread), i))
            .collect();
        let tr = |l: u32| {
            cp.graph
                .locations
                .get(l as usize)
                .and_then(|g| track_of.get(&(g.process, g.thread)).copied())
        };
        let segments = cp
            .segments
            .iter()
            .map(|s| {
                schema::Segment(
                    s.kind.as_str().to_string(),
                    tr(s.location),
                    s.from.and_then(tr),
                    self.rel(s.start_ns),
                    self.rel(s.end_ns),
                    s.what.clone(),
                )
            })
            .collect();
        let mut levels = std::collections::BTreeMap::new();
        for (name, level) in [("procedure", Level::Procedure), ("thread", Level::Thread)] {
            if let Ok(items) = profile(
                self.model(),
                &self.exp,
                &cp.graph,
                &cp.segments,
                level,
                MergeOptions::default(),
            ) {
                let rows = items
                    .iter()
                    .map(|i| {
                        schema::CritRow(
                            i.kind.as_str().to_string(),
                            i.name.clone(),
                            i.location.clone(),
                            i.time_ns,
                        )
                    })
                    .collect();
                levels.insert(name.to_string(), rows);
            }
        }
        schema::CritPathAnswer::CritPath(schema::CritPath {
            length: cp.length_ns(),
            segments,
            profile: levels,
        })
    }

    /// `GET /api/displays?bins=N`: utilization per location, the concurrency profile, the
    /// message queue length (JPVS's displays) and the time histograms of computing threads, MPI,
    /// messages and bytes (IPS-2), from the state timeline.
    pub fn displays(&self, bins: usize) -> schema::DisplaysAnswer {
        let tl = self.timeline.get_or_init(|| {
            Timeline::build(self.model(), &self.exp, &TimelineOptions::default())
                .map_err(|e| e.to_string())
        });
        let tl = match tl {
            Ok(t) => t,
            Err(e) => return schema::DisplaysAnswer::Failed(schema::Failed { error: e.clone() }),
        };
        let bins = bins.clamp(1, 2000);
        let util = utilization(tl, Window::ALL)
            .iter()
            .map(|u| schema::Utilization(u.location.clone(), u.seconds.to_vec()))
            .collect();
        let run = [HistogramRun {
            name: "",
            timeline: tl,
            window: Window::ALL,
        }];
        let mut hists = std::collections::BTreeMap::new();
        for (name, m) in [
            ("compute", Metric::Compute),
            ("mpi", Metric::Mpi),
            ("messages", Metric::Messages),
            ("bytes", Metric::Bytes),
        ] {
            let h = histogram(&run, &m, bins, false);
            if let Some(s) = h.series.first() {
                hists.insert(
                    name.to_string(),
                    schema::Histogram {
                        values: s.values.clone(),
                        start: s.grid.start_ns - tl.origin_ns,
                        width: s.grid.width_ns,
                    },
                );
            }
        }
        let c = concurrency(tl, Window::ALL, bins);
        let q = queue_length(tl, Window::ALL, bins);
        schema::DisplaysAnswer::Displays(schema::Displays {
            states: ["computing", "mpi", "wait", "idle"]
                .map(str::to_string)
                .to_vec(),
            utilization: util,
            concurrency: schema::Concurrency {
                seconds: c.seconds,
                mean: c.mean,
                max: c.max,
                start: c.grid.start_ns - tl.origin_ns,
                width: c.grid.width_ns,
            },
            queue: schema::Queue {
                mean: q.mean,
                max: q.max,
                start: q.grid.start_ns - tl.origin_ns,
                width: q.grid.width_ns,
            },
            histograms: hists,
        })
    }
}

/// Appends `[a,b,...]` in decimal: the window answer's bulk, written without the formatting
/// machinery.
fn tuple(out: &mut String, values: &[i64]) {
    out.push('[');
    for (k, &v) in values.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut x = v.unsigned_abs();
        loop {
            at -= 1;
            buf[at] = b'0' + (x % 10) as u8;
            x /= 10;
            if x == 0 {
                break;
            }
        }
        if v < 0 {
            out.push('-');
        }
        // ASCII digits
        out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
    }
    out.push(']');
}

/// `GET /api/profile`'s answer (see [`Viewer::profile`]): [`schema::ProfileAnswer`], its
/// `callpaths` written from `tree` as the answer is written (`tests/api_types.rs` reads the
/// answer back as the declared type).
pub struct Profile<'a> {
    viewer: &'a Viewer,
    tables: Vec<schema::ProfileTable>,
    gprof: Vec<schema::GprofRow>,
    counters: Vec<String>,
    tree: CallTree,
}

/// The tree's callpaths, `[[path names], calls, exclusive_s, inclusive_s]` each.
struct Callpaths<'a>(&'a Profile<'a>);

impl Serialize for Callpaths<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tree = &self.0.tree;
        let rows = callpath_rows(tree);
        let mut seq = s.serialize_seq(Some(rows.len()))?;
        for r in &rows {
            let path = PathNames {
                tree,
                node: r.node,
                regions: &self.0.viewer.model().regions,
            };
            seq.serialize_element(&(path, r.calls, r.exclusive, r.inclusive))?;
        }
        seq.end()
    }
}

impl Serialize for Profile<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("callpaths", &Callpaths(self))?;
        map.serialize_entry("counters", &self.counters)?;
        map.serialize_entry("gprof", &self.gprof)?;
        map.serialize_entry("tables", &self.tables)?;
        map.end()
    }
}

/// [`Viewer::counters_of`] in `model`.
fn counters_in(
    model: &Model,
    names: &[String],
    process: Option<usize>,
    thread: Option<u32>,
) -> (Counts, HashMap<u32, Counts>) {
    let mut totals: Vec<Option<u64>> = vec![None; names.len()];
    let mut by_region: HashMap<u32, Vec<Option<u64>>> = HashMap::new();
    let add = |slot: &mut Option<u64>, v: u64| *slot = Some(slot.unwrap_or(0) + v);
    for (pi, p) in model.processes.iter().enumerate() {
        if process.is_some_and(|x| x != pi) {
            continue;
        }
        for tc in &p.counters.threads {
            if thread.is_some_and(|t| t != tc.thread) {
                continue;
            }
            // the event's column, when the set counted it
            let column = |set: u32, i: usize| {
                let s = p.counters.sets.get(&set)?;
                if s.refused.get(i).copied().unwrap_or(1) != 0 {
                    return None;
                }
                names.iter().position(|n| *n == s.events[i])
            };
            for (set, values) in &tc.totals {
                for (i, v) in values.iter().enumerate() {
                    if let Some(c) = column(*set, i) {
                        add(&mut totals[c], *v);
                    }
                }
            }
            for call in &tc.calls {
                let row = by_region
                    .entry(call.region)
                    .or_insert_with(|| vec![None; names.len()]);
                for (i, v) in call.inclusive.iter().enumerate() {
                    if let Some(c) = column(call.set, i) {
                        add(&mut row[c], *v);
                    }
                }
            }
        }
    }
    (totals, by_region)
}

/// One track's counted calls: the events seen (columns), the calls.
type CountedCalls = (Vec<String>, Vec<schema::CountedCall>);

/// One counted call of track `ti` at `at` (global ns): its values by column (a column
/// added for an event first seen), its start and end those of the innermost instance of
/// its region open at `at`.
#[allow(clippy::too_many_arguments)]
fn take_counted(
    index: &TraceIndex,
    defs: &Model,
    (events, calls): &mut CountedCalls,
    ti: usize,
    at: i64,
    set: u32,
    region: u32,
    values: &[u64],
) {
    let t = &index.tracks[ti];
    let Some(s) = defs
        .processes
        .get(t.process)
        .and_then(|p| p.counters.sets.get(&set))
    else {
        return;
    };
    // the call: the innermost instance of its region open at the event (at or before
    // its exit)
    let call = t.lanes.iter().rev().find_map(|lane| {
        let i = lane.start.partition_point(|x| x <= at).checked_sub(1)?;
        (lane.end.get(i) >= at && lane.region[i] == region).then(|| lane.get(i))
    });
    let (start, end) = call.map_or((at, at), |r| (r.start, r.end));
    let mut vals: Vec<Option<u64>> = vec![None; events.len()];
    for (i, (name, &refused)) in s.events.iter().zip(&s.refused).enumerate().take(4) {
        if refused != 0 {
            continue;
        }
        let col = match events.iter().position(|e| e == name) {
            Some(c) => c,
            None => {
                events.push(name.clone());
                vals.push(None);
                events.len() - 1
            }
        };
        vals[col] = values.get(i).copied();
    }
    let o = index.origin;
    calls.push(schema::CountedCall(start - o, end - o, region, vals));
}

/// A node of a flame graph: (parent index, -1 for a root; region; inclusive ns; calls begun).
type FlameNode = (i64, u32, i64, u64);

/// The tracks' trees ([`flame_of`]) merged by call path in the tracks' order: a track's nodes,
/// taken in the order it met them, meet the merged tree's in the order one pass over every
/// track would.
fn merge_flames(per: Vec<Vec<FlameNode>>) -> Vec<FlameNode> {
    let mut nodes: Vec<FlameNode> = Vec::new();
    let mut child: HashMap<(i64, u32), usize> = HashMap::new();
    for local in per {
        let mut to_global: Vec<usize> = Vec::with_capacity(local.len());
        for (p, r, incl, calls) in local {
            let parent = if p < 0 {
                -1
            } else {
                to_global[p as usize] as i64
            };
            let k = *child.entry((parent, r)).or_insert_with(|| {
                nodes.push((parent, r, 0, 0));
                nodes.len() - 1
            });
            nodes[k].2 += incl;
            nodes[k].3 += calls;
            to_global.push(k);
        }
    }
    nodes
}

/// The call tree of track `t`'s regions overlapping `[a, b)` (global ns), its nodes in the order
/// met (depth by depth, each in time order), parents before children.
fn flame_of(t: &crate::index::Track, a: i64, b: i64) -> Vec<FlameNode> {
    let mut nodes: Vec<FlameNode> = Vec::new();
    let mut child: HashMap<(i64, u32), usize> = HashMap::new();
    // the node of each instance of the depth above that overlaps the interval
    let mut above: (usize, Vec<usize>) = (0, Vec::new());
    for (d, lane) in t.lanes.iter().enumerate() {
        let (lo, hi) = lane.overlapping(a, b);
        let mut here = Vec::with_capacity(hi - lo);
        // the instances' parents only move forward (both lanes sorted by start): one walk
        // over the lane above, not a search per instance; runs of one call path share a node
        let up = d.checked_sub(1).map(|u| &t.lanes[u]);
        let mut p: Option<usize> = None;
        let mut last: Option<((i64, u32), usize)> = None;
        for i in lo..hi {
            let r = lane.get(i);
            let parent = match up {
                None => -1,
                Some(up) => {
                    // the last instance above starting at or before this one
                    let q = match p {
                        None => up.start.partition_point(|s| s <= r.start),
                        Some(x) => {
                            let mut q = x + 1;
                            while q < up.len() && up.start.get(q) <= r.start {
                                q += 1;
                            }
                            q
                        }
                    };
                    p = q.checked_sub(1);
                    match p {
                        Some(p) if p >= above.0 && p - above.0 < above.1.len() => {
                            above.1[p - above.0] as i64
                        }
                        _ => -1,
                    }
                }
            };
            let key = (parent, r.region);
            let k = match last {
                Some((lk, k)) if lk == key => k,
                _ => *child.entry(key).or_insert_with(|| {
                    nodes.push((parent, r.region, 0, 0));
                    nodes.len() - 1
                }),
            };
            last = Some((key, k));
            nodes[k].2 += (r.end.min(b) - r.start.max(a)).max(0);
            nodes[k].3 += u64::from(r.start >= a);
            here.push(k);
        }
        above = (lo, here);
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Lane, Track};

    /// Nested regions of `depth` levels over `[0, span)`, pseudo-random (a linear congruential
    /// generator from `seed`): each level's regions lie inside the level above's, 3 regions.
    fn track(seed: u64, span: i64, depth: usize) -> Track {
        let mut x = seed;
        let mut next = move |n: i64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as i64) % n.max(1)
        };
        let mut lanes: Vec<Vec<(i64, i64, u32)>> = vec![vec![(0, span, 0)]];
        for _ in 1..depth {
            let mut here = Vec::new();
            for &(s, e, _) in lanes.last().expect("a level") {
                let mut t = s + next(20);
                while t < e - 2 {
                    let len = 1 + next((e - t - 1).min(400));
                    here.push((t, t + len, next(3) as u32));
                    t += len + next(30);
                }
            }
            lanes.push(here);
        }
        Track {
            label: String::new(),
            app: String::new(),
            host: String::new(),
            process: 0,
            thread: 0,
            rank: None,
            pid: 0,
            name: String::new(),
            lanes: lanes.iter().map(|l| Lane::from_regions(l)).collect(),
            markers: Vec::new(),
        }
    }

    /// The flame graph of `tracks` in one pass, a parent found by a search per instance.
    fn one_pass(tracks: &[Track], a: i64, b: i64) -> Vec<FlameNode> {
        let mut nodes: Vec<FlameNode> = Vec::new();
        let mut child: HashMap<(i64, u32), usize> = HashMap::new();
        for t in tracks {
            let mut above: (usize, Vec<usize>) = (0, Vec::new());
            for (d, lane) in t.lanes.iter().enumerate() {
                let (lo, hi) = lane.overlapping(a, b);
                let mut here = Vec::new();
                for i in lo..hi {
                    let r = lane.get(i);
                    let parent = if d == 0 {
                        -1
                    } else {
                        let up = &t.lanes[d - 1];
                        match up.start.partition_point(|s| s <= r.start).checked_sub(1) {
                            Some(p) if p >= above.0 && p - above.0 < above.1.len() => {
                                above.1[p - above.0] as i64
                            }
                            _ => -1,
                        }
                    };
                    let k = *child.entry((parent, r.region)).or_insert_with(|| {
                        nodes.push((parent, r.region, 0, 0));
                        nodes.len() - 1
                    });
                    nodes[k].2 += (r.end.min(b) - r.start.max(a)).max(0);
                    nodes[k].3 += u64::from(r.start >= a);
                    here.push(k);
                }
                above = (lo, here);
            }
        }
        nodes
    }

    #[test]
    fn flame_per_track_merged_equals_one_pass_over_every_track() {
        let tracks: Vec<Track> = (0..5).map(|k| track(k + 1, 100_000, 5)).collect();
        let regions: usize = tracks
            .iter()
            .flat_map(|t| t.lanes.iter().map(|l| l.len()))
            .sum();
        assert!(regions > 5_000, "{regions}");
        for (a, b) in [
            (0, 100_000),
            (12_345, 54_321),
            (99_000, 99_500),
            (50_000, 50_001),
        ] {
            let merged = merge_flames(tracks.iter().map(|t| flame_of(t, a, b)).collect());
            let want = one_pass(&tracks, a, b);
            assert!(!want.is_empty());
            assert_eq!(merged, want, "[{a}, {b})");
        }
    }
}
