//! Metrics over time: time histograms, NPT, utilization and concurrency, message queue length and the space-time diagram.
//!
//! [`Timeline::build`] makes one pass over the merged stream ([`GlobalMerge`]: every location
//! in one time base, MPI messages matched) and keeps, per location (a thread), its **state
//! timeline**: *computing* (inside no MPI routine, no socket call and no synchronization wait),
//! *MPI* (inside an MPI routine), *wait* (inside a socket call, or blocked on a
//! synchronization object) and *idle* (before the location's first event and after its last).
//! Where the run was sampled (`PLX_CPU_SAMPLE`), it keeps per location the CPU time between
//! consecutive samples ([`CpuSpan`]), which `--metric cpu` spreads over time.
//! It also keeps every point-to-point message (send time, and receive time when matched) and,
//! when asked, the calls of one function and the intervals a location spends inside it.
//!
//! The displays are computed from it for a [`Window`] of time: [`histogram`] (IPS-2's time
//! histograms, several runs overlaid), [`utilization`], [`gantt`], [`concurrency`],
//! [`queue_length`] and [`space_time`] (JPVS's processor and communication displays); [`npt`]
//! (IPS-2's normalized processor time) makes a second pass.

mod bins;
mod cpu;
mod displays;
mod npt;
mod tracker;
mod waits;

use std::collections::HashMap;

use plx_format::{Experiment, Warning};

use crate::merge::{EventKind, GlobalMerge, MergeOptions};
use crate::selection::Window;
use crate::{AnalysisError, Model};

pub use bins::{histogram, CpuSource, Grid, Histogram, HistogramRun, Metric, Series, METRICS};
pub use cpu::CpuSpan;
pub use displays::{
    concurrency, gantt, messages_in, queue_length, space_time, utilization, Concurrency, Queue,
    Utilization,
};
pub use npt::{npt, NptRow};

use tracker::{Classes, Span, Tracked, Tracker};

/// What a location is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Running its own code: inside no MPI routine, socket call or synchronization wait.
    Computing,
    /// Inside an MPI routine.
    Mpi,
    /// Inside a socket call, or blocked acquiring a lock or waiting (condition, barrier,
    /// semaphore, join).
    Wait,
    /// Before its first event or after its last.
    Idle,
}

impl State {
    /// Every state, in display order.
    pub const ALL: [State; 4] = [State::Computing, State::Mpi, State::Wait, State::Idle];

    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            State::Computing => "computing",
            State::Mpi => "mpi",
            State::Wait => "wait",
            State::Idle => "idle",
        }
    }
}

/// An interval of one state, global ns `[start_ns, end_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Start.
    pub start_ns: i64,
    /// End.
    pub end_ns: i64,
    /// State.
    pub state: State,
}

/// A location of the timeline (a thread with trace events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineLocation {
    /// `rank.thread` or `pid.thread`, prefixed by the application in a session.
    pub label: String,
    /// Its application ([`Model::apps`] index).
    pub app: u32,
    /// Index into [`Model::processes`].
    pub process: usize,
    /// Process-local thread index.
    pub thread: u32,
    /// MPI rank, if the process is one.
    pub rank: Option<u32>,
    /// First event, global ns (`None`: no event).
    pub first_ns: Option<i64>,
    /// Last event, global ns.
    pub last_ns: Option<i64>,
}

/// A point-to-point message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Sending location (index into [`Timeline::locations`]).
    pub sender: u32,
    /// Receiving location, when the receive was matched.
    pub receiver: Option<u32>,
    /// Send time, global ns.
    pub send_ns: i64,
    /// Receive time, global ns, when matched.
    pub recv_ns: Option<i64>,
    /// Size.
    pub bytes: u64,
}

/// One function's activity per location (when [`TimelineOptions::function`] names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionActivity {
    /// Its name.
    pub name: String,
    /// Per location, the times its calls began (every call, recursive ones too).
    pub calls: Vec<Vec<i64>>,
    /// Per location, the intervals inside it (outermost calls), global ns.
    pub inside: Vec<Vec<(i64, i64)>>,
}

/// What to keep besides states and messages.
#[derive(Debug, Clone, Default)]
pub struct TimelineOptions {
    /// A function to follow: its name and its global region indices (see [`find_function`]).
    pub function: Option<(String, Vec<u32>)>,
    /// How to merge.
    pub merge: MergeOptions,
}

/// The state timelines and messages of one experiment (or session).
#[derive(Debug, Clone)]
pub struct Timeline {
    /// Locations, in the merge's order (by process, then thread).
    pub locations: Vec<TimelineLocation>,
    /// Application names ([`Model::apps`]), empty for a plain experiment.
    pub apps: Vec<String>,
    /// The trace's first event, global ns.
    pub origin_ns: i64,
    /// Its last event, global ns.
    pub end_ns: i64,
    /// Per location, its states from its first event to its last, merged runs of one state,
    /// contiguous (idle is left implicit).
    pub segments: Vec<Vec<Segment>>,
    /// Point-to-point messages in the order they were sent.
    pub messages: Vec<Message>,
    /// The followed function's activity.
    pub function: Option<FunctionActivity>,
    /// Per location, the CPU time between its consecutive CPU samples, in time order (empty:
    /// the location was not sampled).
    pub cpu: Vec<Vec<CpuSpan>>,
    /// Warnings of the merge (the model's own are in [`Model::warnings`]).
    pub warnings: Vec<Warning>,
    waits: Vec<Vec<(i64, i64)>>,
}

/// The global region indices of a function (or any region) named `name`: an error lists the
/// names near it (a typo away, or containing it), if any.
pub fn find_function(model: &Model, name: &str) -> Result<Vec<u32>, String> {
    let all = model.regions.all();
    let found: Vec<u32> = (0..all.len() as u32)
        .filter(|&i| all[i as usize].name == name)
        .collect();
    if !found.is_empty() {
        return Ok(found);
    }
    let near = crate::suggest::near(name, all.iter().map(|r| r.name.as_str()));
    Err(format!(
        "{}: no function named \"{name}\"{}",
        model.dir.display(),
        crate::suggest::did_you_mean(&near, 10)
    ))
}

impl Timeline {
    /// One pass over the merged stream of `model` (built from `exp`). Errors with
    /// [`AnalysisError::NoEventTrace`] when no process has a trace.
    pub fn build(
        model: &Model,
        exp: &Experiment,
        opts: &TimelineOptions,
    ) -> Result<Timeline, AnalysisError> {
        let mut merge = GlobalMerge::new(model, exp, opts.merge)?;
        let mut warnings = Vec::new();
        let waits = waits::sync_waits(model, merge.locations(), &mut warnings);
        let cpu = cpu::cpu_spans(model, merge.locations());
        let locations: Vec<TimelineLocation> = merge
            .locations()
            .iter()
            .map(|l| TimelineLocation {
                label: l.label(),
                app: model.processes[l.process].app,
                process: l.process,
                thread: l.thread,
                rank: l.rank,
                first_ns: None,
                last_ns: None,
            })
            .collect();
        let n = locations.len();
        let tracked: &[u32] = opts.function.as_ref().map_or(&[], |(_, r)| r.as_slice());
        let mut classes = Classes::new(tracked);
        let mut trackers: Vec<Tracker> = waits.iter().cloned().map(Tracker::new).collect();
        let mut tl = Timeline {
            locations,
            apps: model.apps.iter().map(|a| a.name.clone()).collect(),
            origin_ns: merge.origin_ns(),
            end_ns: merge.origin_ns(),
            segments: vec![Vec::new(); n],
            messages: Vec::new(),
            function: opts.function.as_ref().map(|(name, _)| FunctionActivity {
                name: name.clone(),
                calls: vec![Vec::new(); n],
                inside: vec![Vec::new(); n],
            }),
            cpu,
            warnings: Vec::new(),
            waits: Vec::new(),
        };
        // message id → index into tl.messages
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        let mut open_inside: Vec<Option<i64>> = vec![None; n];
        while let Some(ev) = merge.next_event() {
            let li = ev.location as usize;
            let t = ev.time_ns;
            let loc = &mut tl.locations[li];
            loc.first_ns.get_or_insert(t);
            loc.last_ns = Some(t);
            tl.end_ns = tl.end_ns.max(t);
            let segs = &mut tl.segments[li];
            trackers[li].advance(t, &mut |s: Span| push_segment(segs, s));
            let func = &mut tl.function;
            let open = &mut open_inside[li];
            trackers[li].apply(&ev.kind, &mut classes, merge.regions(), |what| {
                let Some(f) = func.as_mut() else { return };
                match what {
                    Tracked::Call => f.calls[li].push(t),
                    Tracked::Inside => *open = Some(t),
                    Tracked::Outside => {
                        if let Some(a) = open.take() {
                            f.inside[li].push((a, t));
                        }
                    }
                }
            });
            match ev.kind {
                EventKind::Send { bytes, message, .. } => {
                    if let Some(id) = message {
                        by_id.insert(id, tl.messages.len());
                    }
                    tl.messages.push(Message {
                        sender: li as u32,
                        receiver: None,
                        send_ns: t,
                        recv_ns: None,
                        bytes,
                    });
                }
                EventKind::Recv {
                    bytes,
                    message: Some(link),
                    ..
                } => {
                    let m = match by_id.remove(&link.id) {
                        Some(i) => &mut tl.messages[i],
                        None => {
                            tl.messages.push(Message {
                                sender: link.sender,
                                receiver: None,
                                send_ns: link.send_ns,
                                recv_ns: None,
                                bytes,
                            });
                            tl.messages.last_mut().expect("pushed")
                        }
                    };
                    m.receiver = Some(li as u32);
                    m.recv_ns = Some(t);
                }
                _ => {}
            }
        }
        // a function still open at a location's end is inside it up to its last event
        if let Some(f) = tl.function.as_mut() {
            for (li, open) in open_inside.into_iter().enumerate() {
                if let (Some(a), Some(b)) = (open, tl.locations[li].last_ns) {
                    f.inside[li].push((a, b));
                }
            }
        }
        warnings.extend(merge.warnings().iter().cloned());
        tl.warnings = warnings;
        tl.waits = waits;
        Ok(tl)
    }

    /// The part of `window` the trace covers: `[start, end]` in global ns (the end inclusive:
    /// the last event belongs to it).
    pub fn span(&self, window: Window) -> (i64, i64) {
        let s = self.origin_ns.max(window.start_ns);
        let e = self.end_ns.min(window.end_ns);
        (s, e.max(s))
    }

    /// Is this a session (its locations belong to named applications)?
    pub fn is_session(&self) -> bool {
        self.apps.iter().any(|a| !a.is_empty())
    }
}

fn push_segment(segs: &mut Vec<Segment>, s: Span) {
    if let Some(last) = segs.last_mut() {
        if last.state == s.state && last.end_ns == s.start {
            last.end_ns = s.end;
            return;
        }
    }
    segs.push(Segment {
        start_ns: s.start,
        end_ns: s.end,
        state: s.state,
    });
}
