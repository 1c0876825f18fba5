//! The one loop of every trace export: the merged stream handed to a [`Sink`], one method per kind of event.
//!
//! [`drive`] owns what every trace format needs and none should redo: the merge (with the counted
//! calls when the sink shows them), running the sink beside it on its own thread
//! ([`GlobalMerge::feed`]), each location's stack of open calls ([`Stacks`]), the names of a
//! counted call's values, and the end of the calls still open after a location's last event —
//! at that event, or, in a process that was killed, at the process's latest event and marked
//! cut (the warning said once, whatever the format). A sink only writes.
//!
//! **A window** ([`ExportInput::window`], `--window`/`--phase`): the sink gets the events at
//! or after its start and before its end. The calls open at the start are entered at the
//! start (outermost first), those open at the end exited at the end (the window's end instant,
//! not marked cut); a matched message is written when both its send and its receive are inside,
//! the others are counted ([`ExportSummary::messages_across_edges`]). The stacks follow every
//! event, inside or not.
//!
//! **Threads alone** ([`drive_alone`]): the events of one process without messages, each
//! location decoded on its own into a sink of its own, on a pool sized to the cores — the
//! same events and stacks per location as the merged stream hands them, in the location's order;
//! the caller puts the locations' rows in the merge's order (within a process, when nothing is
//! repaired: time, ticks, thread). Where that would not be the merge's stream it says so and
//! the caller drives the merge.
//!
//! **The locations** ([`Sink::location`]): the driver walks the merge's locations once, in its
//! order, between [`Sink::begin`] and [`Sink::after_locations`], before the first event, each as
//! a [`Place`] — the location, its process, and the process's grouping (is it the process's
//! first location, how many it has) — so that a sink keeps no loop over the locations of its own:
//! it writes a location's definitions (names, tracks, ids) and keeps what its events need.
//!
//! Invariants a sink may rely on: events come in global time order; at
//! [`Sink::enter`] and [`Sink::exit`] the stacks already hold the change (the entered region
//! is the innermost; the regions an exit closed are gone); at every other event they are as
//! before it; [`Sink::open_at_end`] is called once per location that has an event, in
//! location order, after the last event of the stream.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::PathBuf;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use plx_analysis::location_name::Who;
use plx_analysis::merge::{Alone, Feed, Links, LocationStream};
use plx_analysis::model::ProcessModel;
use plx_analysis::{
    EventKind, GlobalEvent, GlobalMerge, MessageLink, Model, RegionTable, TraceLocation, Window,
};
use plx_format::Warning;

use crate::nesting::Stacks;
use crate::{ExportError, ExportInput, ExportSummary};

/// What a sink method returns.
pub(crate) type Step = Result<(), SinkError>;

/// A sink's failure: writing its stream (named by [`Sink::OUTPUT`] in the message), or any other.
pub(crate) enum SinkError {
    Io(io::Error),
    Export(ExportError),
}

impl From<io::Error> for SinkError {
    fn from(e: io::Error) -> Self {
        SinkError::Io(e)
    }
}

impl From<ExportError> for SinkError {
    fn from(e: ExportError) -> Self {
        SinkError::Export(e)
    }
}

/// Where and when an event happened: a location (index into [`GlobalMerge::locations`]) and its
/// global time, ns.
#[derive(Clone, Copy)]
pub(crate) struct At {
    pub loc: u32,
    pub ns: i64,
}

/// A point-to-point message's envelope, as a send or a receive records it.
#[derive(Clone, Copy)]
pub(crate) struct Envelope {
    /// The other side, a world rank.
    pub peer: u32,
    pub tag: i32,
    pub bytes: u64,
    /// Communicator ([`Model::comms`] index), `None` without a definition.
    pub comm: Option<u32>,
}

impl Envelope {
    /// The envelope of a send or a receive (zeros for any other kind of event).
    fn of(kind: &EventKind) -> Envelope {
        match *kind {
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
                ..
            }
            | EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
                ..
            } => Envelope {
                peer,
                tag,
                bytes,
                comm,
            },
            _ => Envelope {
                peer: 0,
                tag: 0,
                bytes: 0,
                comm: None,
            },
        }
    }
}

/// A call of a `counters` context that ended (right before its region's exit).
pub(crate) struct CountedCall<'a> {
    /// The process-local counter set.
    pub set: u32,
    /// The function counted.
    pub region: u32,
    /// Its entry time (the exit's when no open call of `region` is known).
    pub entry_ns: i64,
    /// The set's traced events, `(index in the set, name)`, refused ones left out.
    pub events: &'a [(usize, &'a str)],
    /// The values, by index in the set.
    pub values: [u64; 4],
}

/// What a sink may read at an event besides the event.
pub(crate) struct Cx<'a> {
    /// The regions and user events the merge has named so far (looked up only by the sinks
    /// that name them).
    regions: &'a RegionTable,
    user_events: &'a [String],
    /// The open calls of every location.
    pub stacks: &'a Stacks,
    /// The location's send events before this event, all of them (those before a window
    /// too): a send's number, as a `send_done` event names it.
    pub sends: u64,
    /// Likewise its collective events: a collective's number, as a `coll_done` event names it.
    pub colls: u64,
}

impl<'a> Cx<'a> {
    fn of(feed: &'a Feed, stacks: &'a Stacks, (sends, colls): (u64, u64)) -> Cx<'a> {
        Cx {
            regions: feed.regions(),
            user_events: feed.user_events(),
            stacks,
            sends,
            colls,
        }
    }

    /// Regions the merge has named so far.
    #[inline]
    pub fn regions(&self) -> &RegionTable {
        self.regions
    }

    /// User events the merge has named so far.
    #[inline]
    pub fn user_events(&self) -> &[String] {
        self.user_events
    }
}

/// A location of the merge as a sink defines it ([`Sink::location`]).
pub(crate) struct Place<'a> {
    /// Its index into the merge's locations ([`At::loc`]).
    pub index: u32,
    pub location: &'a TraceLocation,
    /// Its process (the model's).
    pub process: &'a ProcessModel,
    /// Is it its process's first location in the merge's order (where a format defines the
    /// process)?
    pub first_of_process: bool,
    /// The locations of its process in the merge.
    pub threads: usize,
    /// The export's window ([`ExportInput::window`]).
    pub window: Window,
}

impl Place<'_> {
    /// The process's name: `Who`'s long form, then the executable's file name
    /// (`0 (pid 1234 on node1) life`, `solver:0 (session rank 4, pid 1234 on node1)`).
    pub fn process_name(&self) -> String {
        let who = Who::location(self.location).long(None);
        match self.process.executable.rsplit('/').next() {
            Some(exe) if !exe.is_empty() => format!("{who} {exe}"),
            _ => who,
        }
    }

    /// The trace words it recorded (0 if its process has no trace): what sizes its rows.
    pub fn words(&self) -> u64 {
        thread_words(self.process, self.location.thread)
    }

    /// Its call-stack samples in the export's window (`None`: its thread has none).
    pub fn samples<'m>(&self, model: &'m Model) -> Option<crate::samples::LocationSamples<'m>> {
        crate::samples::of(model, self.location, self.window)
    }
}

/// The trace words thread `thread` of `p` recorded (0 if `p` has no trace).
fn thread_words(p: &ProcessModel, thread: u32) -> u64 {
    p.trace
        .as_ref()
        .and_then(|t| t.words_per_thread.get(&thread).copied())
        .unwrap_or(0)
}

/// The places of `locations` (a merge's, of `model`) in an export of `window`, in their order.
fn places<'a>(model: &'a Model, locations: &'a [TraceLocation], window: Window) -> Vec<Place<'a>> {
    let mut threads = vec![0usize; model.processes.len()];
    for l in locations {
        threads[l.process] += 1;
    }
    let mut seen = vec![false; model.processes.len()];
    (0..locations.len() as u32)
        .zip(locations)
        .map(|(index, l)| Place {
            index,
            location: l,
            process: &model.processes[l.process],
            first_of_process: !std::mem::replace(&mut seen[l.process], true),
            threads: threads[l.process],
            window,
        })
        .collect()
}

/// One trace format's writer: a method per kind of event, each a no-op unless the format shows
/// it. The methods are called by [`drive`] in stream order.
pub(crate) trait Sink {
    /// Names the output in I/O errors (`chrome output`).
    const OUTPUT: &'static str;
    /// Does it show counted calls ([`Sink::counted`])? Only then does the merge read them.
    const COUNTERS: bool = false;
    /// Does it show nonblocking completions ([`Sink::send_done`], [`Sink::recv_posted`])?
    /// Only then are they handed to it (and counted).
    const COMPLETIONS: bool = false;

    /// Does it hold events of this kind? Those it does not are neither handed to it nor counted
    /// in [`ExportSummary::records`].
    fn takes(&self, _kind: &EventKind) -> bool {
        true
    }

    /// Before the locations: headers, definitions known up front.
    fn begin(&mut self, _merge: &GlobalMerge) -> Step {
        Ok(())
    }

    /// Once per location of the merge, in its order, after [`Sink::begin`]: its definitions
    /// (with [`drive_alone`]: once, for the sink's own location).
    fn location(&mut self, _place: &Place) -> Step {
        Ok(())
    }

    /// After the locations, before the first event: the definitions that follow theirs.
    fn after_locations(&mut self, _merge: &GlobalMerge) -> Step {
        Ok(())
    }

    /// A region entered (already the innermost open call at `at.loc`).
    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step;

    /// An exit of `region`; `closed`: the calls it closed, innermost first (`region` and those
    /// opened inside it and never exited), empty when it matched no open call.
    fn exit(&mut self, cx: &Cx, at: At, region: u32, closed: &[u32]) -> Step;

    /// The calls still open after the location's last event, innermost first (maybe none),
    /// ended at `at`: the location's last event, or with `cut` its killed process's latest
    /// event (the calls were cut there, not returned).
    fn open_at_end(&mut self, cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step;

    /// A user event's value.
    fn user(&mut self, _cx: &Cx, _at: At, _event: u32, _value: f64) -> Step {
        Ok(())
    }

    /// A message sent; `message`: its number when matched (its receive carries the same).
    fn send(&mut self, _cx: &Cx, _at: At, _m: Envelope, _message: Option<u64>) -> Step {
        Ok(())
    }

    /// A nonblocking send completed in the Wait/Test call open at `at`: the `send`-th send
    /// (from 0) of thread `thread` of the process; `mode` 2: a buffered one.
    fn send_done(&mut self, _cx: &Cx, _at: At, _thread: u32, _mode: u8, _send: u64) -> Step {
        Ok(())
    }

    /// A nonblocking collective completed (in the Wait/Test call open at `at.loc`): the
    /// `collective`-th collective event of process-local thread `thread`, its post.
    fn coll_done(&mut self, _cx: &Cx, _at: At, _thread: u32, _collective: u64) -> Step {
        Ok(())
    }

    /// The next receive at `at.loc` (in the Wait/Test call open there) was posted `before_ns`
    /// before `at` (by an MPI_Irecv or MPI_Start).
    fn recv_posted(&mut self, _cx: &Cx, _at: At, _before_ns: u64) -> Step {
        Ok(())
    }

    /// A message received; `link`: the matched send.
    fn recv(&mut self, _cx: &Cx, _at: At, _m: Envelope, _link: Option<MessageLink>) -> Step {
        Ok(())
    }

    /// This rank's part of a collective (`root` a world rank).
    fn collective(
        &mut self,
        _cx: &Cx,
        _at: At,
        _comm: Option<u32>,
        _root: Option<u32>,
        _bytes: (u64, u64),
    ) -> Step {
        Ok(())
    }

    /// A synchronization object taken (after `wait_ns` blocked), or a wait on it ended.
    fn acquire(&mut self, _cx: &Cx, _at: At, _object: u32, _kind: u8, _wait_ns: u64) -> Step {
        Ok(())
    }

    /// A synchronization object released, posted or signalled.
    fn release(&mut self, _cx: &Cx, _at: At, _object: u32, _kind: u8) -> Step {
        Ok(())
    }

    /// Bytes written to (`send`) or read from a traced stream socket: `(stream, end, bytes)`.
    fn stream(&mut self, _cx: &Cx, _at: At, _send: bool, _io: (u64, u64, u64)) -> Step {
        Ok(())
    }

    /// An OpenMP implicit task began: the location joined a team of `region` at `level`.
    fn omp_team(
        &mut self,
        _cx: &Cx,
        _at: At,
        _region: u32,
        _level: u32,
        _size_num: (u32, u32),
    ) -> Step {
        Ok(())
    }

    /// A counted call ended (only with [`Sink::COUNTERS`]).
    fn counted(&mut self, _cx: &Cx, _at: At, _call: &CountedCall) -> Step {
        Ok(())
    }

    /// After the stream: footers, definitions gathered on the way. `summary` holds the events
    /// taken, the clock condition and the warnings (the merge's, and the cut calls'); the sink
    /// may add to it.
    fn end(&mut self, _merge: &GlobalMerge, _summary: &mut ExportSummary) -> Step {
        Ok(())
    }
}

/// Exports `input`'s merged trace through `sink`.
pub(crate) fn drive<S: Sink>(
    input: &ExportInput,
    sink: &mut S,
) -> Result<ExportSummary, ExportError> {
    let merge = if S::COUNTERS {
        input.merge_with_counters()?
    } else {
        input.merge()?
    };
    let error = |e: SinkError| match e {
        SinkError::Io(e) => ExportError::Io(PathBuf::from(S::OUTPUT), e),
        SinkError::Export(e) => e,
    };
    let window = input.window;
    let (inside, messages_across_edges) = if window == Window::ALL {
        (None, 0)
    } else {
        let (inside, across) = messages_inside(input, window)?;
        (Some(inside), across)
    };
    sink.begin(&merge).map_err(error)?;
    let model = merge.model();
    for place in places(model, merge.locations(), window) {
        sink.location(&place).map_err(error)?;
    }
    sink.after_locations(&merge).map_err(error)?;
    let locations = merge.locations().to_vec();
    // writing runs beside the merge (on its own thread with more than one engine thread)
    let (merge, fed) = merge.feed(None, |feed| {
        let mut state = State {
            stacks: Stacks::new(locations.len()),
            last: vec![None; locations.len()],
            sends: vec![(0, 0); locations.len()],
            counted: CountedNames {
                model,
                locations: &locations,
                names: HashMap::new(),
            },
            closed: Vec::new(),
            taken: 0,
            window,
            inside,
            started: false,
        };
        while let Some(e) = feed.next_event() {
            state.event(sink, feed, e)?;
        }
        state.close_open(sink, feed, model, &locations)
    });
    let (records, cut_warnings) = fed.map_err(error)?;
    let mut summary = ExportSummary {
        records,
        files: Vec::new(),
        clock: merge.clock_report(),
        warnings: merge
            .warnings()
            .iter()
            .cloned()
            .chain(cut_warnings)
            .collect(),
        samples: 0,
        messages_across_edges,
    };
    sink.end(&merge, &mut summary).map_err(error)?;
    Ok(summary)
}

/// Hands an event to the sink's method for its kind (`closed`: the calls an exit closed; a
/// counted call is the caller's, which knows its names).
fn hand<S: Sink>(sink: &mut S, cx: &Cx, at: At, ev: EventKind, closed: &[u32]) -> Step {
    match ev {
        EventKind::Enter { region } => sink.enter(cx, at, region),
        EventKind::Exit { region } => sink.exit(cx, at, region, closed),
        EventKind::User { event, value } => sink.user(cx, at, event, value),
        EventKind::Send { message, .. } => sink.send(cx, at, Envelope::of(&ev), message),
        EventKind::Recv { message, .. } => sink.recv(cx, at, Envelope::of(&ev), message),
        EventKind::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
        } => sink.collective(cx, at, comm, root, (bytes_sent, bytes_recv)),
        EventKind::Acquire {
            object,
            kind,
            wait_ns,
            ..
        } => sink.acquire(cx, at, object, kind, wait_ns),
        EventKind::Release { object, kind } => sink.release(cx, at, object, kind),
        EventKind::StreamSend { stream, end, bytes } => {
            sink.stream(cx, at, true, (stream, end, bytes))
        }
        EventKind::StreamRecv { stream, end, bytes } => {
            sink.stream(cx, at, false, (stream, end, bytes))
        }
        EventKind::OmpTeam {
            region,
            level,
            team_size,
            thread_num,
        } => sink.omp_team(cx, at, region, level, (team_size, thread_num)),
        EventKind::SendDone { thread, mode, send } => sink.send_done(cx, at, thread, mode, send),
        EventKind::CollDone { thread, collective } => sink.coll_done(cx, at, thread, collective),
        EventKind::RecvPosted { before_ns } => sink.recv_posted(cx, at, before_ns),
        EventKind::Counted { .. } => Ok(()),
    }
}

/// The matched messages with both ends in `window` (their numbers), and how many have one end
/// inside and the other outside: one pass of the merge up to the window's end.
fn messages_inside(
    input: &ExportInput,
    window: Window,
) -> Result<(HashSet<u64>, u64), ExportError> {
    let mut merge = input.merge()?;
    let (mut sent, mut both, mut received_only) = (HashSet::new(), HashSet::new(), 0u64);
    while let Some(e) = merge.next_event() {
        if e.time_ns >= window.end_ns {
            break;
        }
        if !window.contains(e.time_ns) {
            continue;
        }
        match e.kind {
            EventKind::Send {
                message: Some(id), ..
            } => {
                sent.insert(id);
            }
            EventKind::Recv {
                message: Some(link),
                ..
            } => {
                if window.contains(link.send_ns) {
                    both.insert(link.id);
                } else {
                    received_only += 1;
                }
            }
            _ => {}
        }
    }
    let sent_only = sent.iter().filter(|id| !both.contains(id)).count() as u64;
    Ok((both, sent_only + received_only))
}

/// The names of a counted call's values: per (process, counter set), its traced events.
struct CountedNames<'m> {
    model: &'m Model,
    locations: &'m [TraceLocation],
    names: HashMap<(usize, u32), Vec<(usize, &'m str)>>,
}

impl<'m> CountedNames<'m> {
    fn of(&mut self, loc: u32, set: u32) -> &[(usize, &'m str)] {
        let process = self.locations[loc as usize].process;
        let model = self.model;
        self.names
            .entry((process, set))
            .or_insert_with(|| crate::counted::traced_events(model, process, set))
    }
}

/// What the driver keeps while the stream passes.
struct State<'m> {
    stacks: Stacks,
    /// Per location: the time of its last event.
    last: Vec<Option<i64>>,
    /// Per location: its send and collective events so far ([`Cx::sends`], [`Cx::colls`]).
    sends: Vec<(u64, u64)>,
    counted: CountedNames<'m>,
    /// The calls the current exit closed.
    closed: Vec<u32>,
    /// Events handed to the sink.
    taken: u64,
    /// The span written.
    window: Window,
    /// With a window: the messages written (both ends inside).
    inside: Option<HashSet<u64>>,
    /// Has the stream reached the window's start (the calls open there entered)?
    started: bool,
}

impl State<'_> {
    /// Keeps the stacks, then hands the event to the sink if it takes it.
    fn event<S: Sink>(&mut self, sink: &mut S, feed: &Feed, e: GlobalEvent) -> Step {
        let at = At {
            loc: e.location,
            ns: e.time_ns,
        };
        self.last[at.loc as usize] = Some(at.ns);
        if at.ns >= self.window.end_ns {
            return Ok(());
        }
        if at.ns >= self.window.start_ns && !self.started {
            self.open_at_start(sink, feed)?;
        }
        match e.kind {
            EventKind::Enter { region } => self.stacks.enter(at.loc, region, at.ns),
            EventKind::Exit { region } => {
                self.closed.clear();
                self.stacks.exit(at.loc, region, &mut self.closed);
            }
            _ => {}
        }
        let sends = self.sends[at.loc as usize];
        match e.kind {
            EventKind::Send { .. } => self.sends[at.loc as usize].0 += 1,
            EventKind::Collective { .. } => self.sends[at.loc as usize].1 += 1,
            _ => {}
        }
        // a send's completion and a receive's post go to the sinks that show them (OTF2's
        // nonblocking records); the others neither write nor count them
        if (!S::COMPLETIONS
            && matches!(
                e.kind,
                EventKind::SendDone { .. }
                    | EventKind::CollDone { .. }
                    | EventKind::RecvPosted { .. }
            ))
            || !sink.takes(&e.kind)
            || !self.started
            || !self.message_inside(&e.kind)
        {
            return Ok(());
        }
        self.taken += 1;
        let cx = Cx::of(feed, &self.stacks, sends);
        match e.kind {
            EventKind::Counted {
                set,
                region,
                values,
            } => {
                let call = CountedCall {
                    set,
                    region,
                    entry_ns: self.stacks.entry(at.loc, region).unwrap_or(at.ns),
                    events: self.counted.of(at.loc, set),
                    values,
                };
                sink.counted(&cx, at, &call)
            }
            kind => hand(sink, &cx, at, kind, &self.closed),
        }
    }

    /// Is the event no message, or one written (with a window: both ends inside)?
    fn message_inside(&self, kind: &EventKind) -> bool {
        let id = match *kind {
            EventKind::Send { message, .. } => message,
            EventKind::Recv { message, .. } => message.map(|l| l.id),
            _ => None,
        };
        match (&self.inside, id) {
            (Some(inside), Some(id)) => inside.contains(&id),
            _ => true,
        }
    }

    /// At the window's start: the calls open there entered at it, outermost first.
    fn open_at_start<S: Sink>(&mut self, sink: &mut S, feed: &Feed) -> Step {
        self.started = true;
        let at_start = self.window.start_ns;
        for loc in 0..self.last.len() as u32 {
            let mut open = self.stacks.close_all(loc);
            while let Some(region) = open.pop() {
                self.stacks.enter(loc, region, at_start);
                if !sink.takes(&EventKind::Enter { region }) {
                    continue;
                }
                self.taken += 1;
                let cx = Cx::of(feed, &self.stacks, self.sends[loc as usize]);
                sink.enter(&cx, At { loc, ns: at_start }, region)?;
            }
        }
        Ok(())
    }

    /// Ends the calls still open after each location's last event: there, or, in a killed
    /// process, at the process's latest event, cut there (a warning per location with cut
    /// calls). Returns the events taken and those warnings.
    fn close_open<S: Sink>(
        mut self,
        sink: &mut S,
        feed: &Feed,
        model: &Model,
        locations: &[TraceLocation],
    ) -> Result<(u64, Vec<Warning>), SinkError> {
        if !self.started {
            self.open_at_start(sink, feed)?;
        }
        let killed = plx_analysis::merge::killed_ends(model, locations, &self.last);
        let mut warnings = Vec::new();
        for (li, own) in self.last.iter().enumerate() {
            let Some(own) = *own else { continue };
            let open = self.stacks.close_all(li as u32);
            let cx = Cx::of(feed, &self.stacks, self.sends[li]);
            let end = (own, killed[li], self.window);
            let at = (model, locations, li as u32);
            close_location(sink, &cx, at, end, &open, &mut warnings)?;
        }
        Ok((self.taken, warnings))
    }
}

/// Ends location `li`'s calls still `open` after its last event (`own`, ns): there, or in a
/// killed process (`killed`: its latest event) there and cut, a warning said for them; within
/// the window.
fn close_location<S: Sink>(
    sink: &mut S,
    cx: &Cx,
    (model, locations, li): (&Model, &[TraceLocation], u32),
    (own, killed, window): (i64, Option<i64>, Window),
    open: &[u32],
    warnings: &mut Vec<Warning>,
) -> Step {
    let ends = killed.map_or(own, |k| k.max(own));
    // a location that goes on past the window's end: its calls end there, not cut
    let cut = killed.filter(|_| ends < window.end_ns);
    if cut.is_some() && !open.is_empty() {
        let l = &locations[li as usize];
        warnings.push(plx_analysis::rebuild::killed_warning(
            &model.processes[l.process].path,
            l.thread,
            open.len(),
        ));
    }
    let at = At {
        loc: li,
        ns: ends.clamp(window.start_ns, window.end_ns),
    };
    sink.open_at_end(cx, at, open, cut.is_some())
}

/// Calls `f` on each item on `workers` threads (at most one per item; the caller's thread
/// alone when 1), the results in the items' order.
pub(crate) fn pool<T: Send, R: Send>(
    workers: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    let workers = workers.clamp(1, n.max(1));
    if workers == 1 {
        return items.into_iter().map(f).collect();
    }
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let results: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let item = items[i].lock().expect("no worker panics").take();
                let r = f(item.expect("each item taken once"));
                *results[i].lock().expect("no worker panics") = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no worker panics")
                .expect("every item done")
        })
        .collect()
}

/// One location of [`drive_alone`], decoded: its sink, and what the rows' order needs.
pub(crate) struct AloneLocation<S> {
    pub sink: S,
    /// The thread's ticks at each event handed to the sink, in order (the merge's tie-break
    /// within a process after the time; its time is the sink's).
    pub ticks: Vec<u64>,
    /// Its thread.
    pub thread: u32,
    /// Its process ([`TraceLocation::process`]: the merge's tie-break after the time).
    pub process: u32,
}

/// What [`drive_alone`] gives: a sink per location, its names.
pub(crate) struct AloneRun<S> {
    /// The merge's locations, regions, user events and origin (its streams spent).
    pub alone: Alone,
    /// One per location, in the merge's order.
    pub locations: Vec<AloneLocation<S>>,
    /// The events taken and the warnings (no clock report: the caller's, from the links).
    pub summary: ExportSummary,
    /// With `messages`: the processes' messages, to be linked in the merged order.
    pub links: Option<Links>,
}

/// [`drive`] with every location decoded alone, each into its own sink (`make(alone, location,
/// its event words)`), on `workers` threads: the same events handed over with the same stacks, but
/// each location's in its own order, then its calls open at the end (a location's events
/// before its end in both). Only where that is the merge's stream split by location: `None`
/// (the caller takes [`drive`]) with a window, counted calls, a region or user event without a
/// definition (named in the merge's order), damage (the merge's warnings), or a location whose
/// events are not in (time, ticks) order; without `messages`, also with more than one process
/// or a message (matched only by the merge: the merge's order within a process, when nothing is
/// repaired, is (time, ticks, thread)). With `messages` the sends and receives are handed over
/// unlinked, the processes' messages planned ([`AloneRun::links`]): the caller links them in
/// the merged order and takes [`drive`] where the merge would move an event ([`Links`]). Each
/// sink has its [`Sink::location`] before its events.
pub(crate) fn drive_alone<S: Sink + Send>(
    input: &ExportInput,
    workers: usize,
    messages: bool,
    make: impl Fn(&Alone, u32, u64) -> S + Sync,
) -> Result<Option<AloneRun<S>>, ExportError> {
    if S::COUNTERS || input.window != Window::ALL {
        return Ok(None);
    }
    let (mut alone, links) = if messages {
        let (alone, links) = Alone::linked(&input.model, &input.experiment, input.options.merge)?;
        if links.needs_merge() {
            return Ok(None);
        }
        (alone, Some(links))
    } else {
        (Alone::new(&input.model, &input.experiment)?, None)
    };
    let Some(first) = alone.locations.first() else {
        return Ok(None);
    };
    if !messages && alone.locations.iter().any(|l| l.process != first.process) {
        return Ok(None);
    }
    let model = &input.model;
    let streams = std::mem::take(&mut alone.streams);
    let items: Vec<(u32, LocationStream)> = (0..streams.len() as u32).zip(streams).collect();
    let at = places(model, &alone.locations, input.window);
    let decoded = pool(workers, items, |(li, stream)| {
        let place = &at[li as usize];
        let mut sink = make(&alone, li, place.words());
        sink.location(place)?;
        decode_alone(&alone, li, stream, sink, messages)
    });
    let mut done = Vec::with_capacity(decoded.len());
    for d in decoded {
        match d.map_err(|e| sink_error::<S>(e))? {
            Some(d) => done.push(d),
            None => return Ok(None),
        }
    }
    // the calls still open at the end, location by location (as the merge's end)
    let last: Vec<Option<i64>> = done.iter().map(|d| d.last).collect();
    let killed = plx_analysis::merge::killed_ends(model, &alone.locations, &last);
    let mut warnings = alone.warnings.clone();
    let mut taken = 0;
    let mut locations = Vec::with_capacity(done.len());
    for (li, mut d) in done.into_iter().enumerate() {
        taken += d.ticks.len() as u64;
        if let Some(own) = d.last {
            let open = d.stacks.close_all(li as u32);
            let cx = Cx {
                regions: &alone.regions,
                user_events: &alone.user_events,
                stacks: &d.stacks,
                sends: 0,
                colls: 0,
            };
            let at = (model, &alone.locations[..], li as u32);
            close_location(
                &mut d.sink,
                &cx,
                at,
                (own, killed[li], Window::ALL),
                &open,
                &mut warnings,
            )
            .map_err(sink_error::<S>)?;
        }
        locations.push(AloneLocation {
            sink: d.sink,
            ticks: d.ticks,
            thread: alone.locations[li].thread,
            process: alone.locations[li].process as u32,
        });
    }
    let summary = ExportSummary {
        records: taken,
        files: Vec::new(),
        clock: None,
        warnings,
        samples: 0,
        messages_across_edges: 0,
    };
    Ok(Some(AloneRun {
        alone,
        locations,
        summary,
        links,
    }))
}

fn sink_error<S: Sink>(e: SinkError) -> ExportError {
    match e {
        SinkError::Io(e) => ExportError::Io(PathBuf::from(S::OUTPUT), e),
        SinkError::Export(e) => e,
    }
}

/// A location decoded alone, before its calls open at the end are ended.
struct Decoded<S> {
    sink: S,
    ticks: Vec<u64>,
    stacks: Stacks,
    last: Option<i64>,
}

/// Location `li`'s events through `sink` as [`State::event`] hands them (no window; with
/// `messages` the sends and receives unlinked): `None` where the merge is needed ([`drive_alone`]).
fn decode_alone<S: Sink>(
    alone: &Alone,
    li: u32,
    mut stream: LocationStream,
    mut sink: S,
    messages: bool,
) -> Result<Option<Decoded<S>>, SinkError> {
    let mut stacks = Stacks::new(alone.locations.len());
    let (mut closed, mut ticks) = (Vec::new(), Vec::new());
    let (mut last, mut fine, mut failed) = (None::<(i64, u64)>, true, None);
    stream.for_each(|e| {
        if !fine || failed.is_some() {
            return;
        }
        if last.is_some_and(|l| (e.time_ns, e.ticks) < l) {
            fine = false;
            return;
        }
        last = Some((e.time_ns, e.ticks));
        let at = At {
            loc: li,
            ns: e.time_ns,
        };
        match e.kind {
            EventKind::Enter { region } => stacks.enter(li, region, at.ns),
            EventKind::Exit { region } => {
                closed.clear();
                stacks.exit(li, region, &mut closed);
            }
            EventKind::Send { .. } | EventKind::Recv { .. } if messages => {}
            // as the driver, to the sinks that show them
            EventKind::SendDone { .. }
            | EventKind::CollDone { .. }
            | EventKind::RecvPosted { .. }
                if messages && !S::COMPLETIONS => {}
            EventKind::Send { .. }
            | EventKind::Recv { .. }
            | EventKind::SendDone { .. }
            | EventKind::CollDone { .. }
            | EventKind::RecvPosted { .. } => {
                fine = false;
                return;
            }
            _ => {}
        }
        if !S::COMPLETIONS
            && matches!(
                e.kind,
                EventKind::SendDone { .. }
                    | EventKind::CollDone { .. }
                    | EventKind::RecvPosted { .. }
            )
        {
            return;
        }
        if !sink.takes(&e.kind) {
            return;
        }
        ticks.push(e.ticks);
        let cx = Cx {
            regions: &alone.regions,
            user_events: &alone.user_events,
            stacks: &stacks,
            sends: 0,
            colls: 0,
        };
        if let Err(x) = hand(&mut sink, &cx, at, e.kind, &closed) {
            failed = Some(x);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if !fine || stream.unresolved() || stream.damaged() {
        return Ok(None);
    }
    Ok(Some(Decoded {
        sink,
        ticks,
        stacks,
        last: last.map(|l| l.0),
    }))
}
