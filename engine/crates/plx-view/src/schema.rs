//! The JSON API of `plx view`, declared once: every answer's type here (serde-derived: the
//! server writes these), the endpoints in [`ENDPOINTS`]. The viewer's TypeScript declarations
//! (`viewer/src/api_types.ts`, [`typescript`]) and the API table of
//! `docs/commands/plx-view.md` ([`endpoint_table`]) are generated from them; `tests/api_types.rs`
//! fails when either file differs (`PLX_BLESS=1` rewrites them), and the viewer's type check
//! (`make viewer`) then fails on a field the page reads that the answer no longer has.
//!
//! An object is a struct, its fields the JSON keys; a tuple struct is a JSON array (a
//! TypeScript tuple, its elements labelled); a `strings!` enum is one of its strings; a
//! `union!` enum is one of its types (serde's untagged). `Option` is `null` when absent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A Rust type's TypeScript type.
pub trait Ts {
    /// The type as TypeScript writes it.
    fn ts() -> String;
}

/// A declared type's TypeScript declaration.
pub trait Decl {
    /// `export interface NAME {...}` or `export type NAME = ...;`, with its doc comment.
    fn decl() -> String;
}

macro_rules! ts_as {
    ($($t:ty => $s:literal),* $(,)?) => {
        $(impl Ts for $t {
            fn ts() -> String {
                $s.to_string()
            }
        })*
    };
}

ts_as!(
    i64 => "number", u64 => "number", u32 => "number", u8 => "number", usize => "number",
    f64 => "number", bool => "boolean", String => "string",
);

impl<T: Ts> Ts for Option<T> {
    fn ts() -> String {
        format!("{} | null", T::ts())
    }
}

impl<T: Ts> Ts for Vec<T> {
    fn ts() -> String {
        let t = T::ts();
        if t.contains(" | ") {
            format!("({t})[]")
        } else {
            format!("{t}[]")
        }
    }
}

impl<T: Ts> Ts for BTreeMap<String, T> {
    fn ts() -> String {
        format!("Record<string, {}>", T::ts())
    }
}

/// A doc comment of `lines` (rustdoc's, each with its leading space), indented by `indent`.
fn doc(lines: &[&str], indent: &str) -> String {
    match lines {
        [] => String::new(),
        [one] => format!("{indent}/**{one} */\n"),
        _ => {
            let mut s = format!("{indent}/**\n");
            for l in lines {
                s += &format!("{indent} *{l}\n");
            }
            s + &format!("{indent} */\n")
        }
    }
}

/// An answer object: a struct whose fields are its keys.
macro_rules! object {
    ($(#[doc = $d:literal])* $name:ident {
        $($(#[doc = $fd:literal])* $f:ident: $t:ty),* $(,)?
    }) => {
        $(#[doc = $d])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[doc = $fd])* pub $f: $t,)*
        }
        impl Ts for $name {
            fn ts() -> String {
                stringify!($name).to_string()
            }
        }
        impl Decl for $name {
            fn decl() -> String {
                let mut s = doc(&[$($d),*], "");
                s += concat!("export interface ", stringify!($name), " {\n");
                $(
                    s += &doc(&[$($fd),*], "  ");
                    s += &format!("  {}: {};\n", stringify!($f), <$t as Ts>::ts());
                )*
                s + "}\n"
            }
        }
    };
}

/// An answer array of fixed length: a tuple struct, its elements labelled for TypeScript.
macro_rules! tuple {
    ($(#[doc = $d:literal])* $name:ident($($l:ident: $t:ty),* $(,)?)) => {
        $(#[doc = $d])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name($(pub $t),*);
        impl Ts for $name {
            fn ts() -> String {
                stringify!($name).to_string()
            }
        }
        impl Decl for $name {
            fn decl() -> String {
                let elems: Vec<String> =
                    vec![$(format!("{}: {}", stringify!($l), <$t as Ts>::ts())),*];
                doc(&[$($d),*], "")
                    + &format!("export type {} = [{}];\n", stringify!($name), elems.join(", "))
            }
        }
    };
}

/// One of a few strings.
macro_rules! strings {
    ($(#[doc = $d:literal])* $name:ident { $($v:ident = $s:tt),* $(,)? }) => {
        $(#[doc = $d])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $(#[doc = $s] #[serde(rename = $s)] $v),*
        }
        impl Ts for $name {
            fn ts() -> String {
                stringify!($name).to_string()
            }
        }
        impl Decl for $name {
            fn decl() -> String {
                let alts: Vec<String> = vec![$(format!("{:?}", $s)),*];
                doc(&[$($d),*], "")
                    + &format!("export type {} = {};\n", stringify!($name), alts.join(" | "))
            }
        }
    };
}

/// One of a few answers, told apart by their keys.
macro_rules! union {
    ($(#[doc = $d:literal])* $name:ident { $($v:ident($t:ty)),* $(,)? }) => {
        $(#[doc = $d])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        // an answer is made once and written: its size does not matter
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $(#[allow(missing_docs)] $v($t)),*
        }
        impl Ts for $name {
            fn ts() -> String {
                stringify!($name).to_string()
            }
        }
        impl Decl for $name {
            fn decl() -> String {
                let alts: Vec<String> = vec![$(<$t as Ts>::ts()),*];
                doc(&[$($d),*], "")
                    + &format!("export type {} = {};\n", stringify!($name), alts.join(" | "))
            }
        }
    };
}

// ---- shared

object!(
    /// An answer that could not be computed (the analysis's error).
    Failed {
        /// What went wrong.
        error: String,
    }
);

object!(
    /// The answer while the waits are replayed in the background: ask again later.
    Computing {
        /// Always true.
        computing: bool,
    }
);

tuple!(
    /// Messages from one to another: tracks (`/api/stats`) or ranks (`/api/comm`).
    Pair(from: u32, to: u32, messages: u64, bytes: u64)
);

// ---- /api/meta

tuple!(
    /// A region definition, by region index.
    RegionDef(name: String, kind: String, file: String, line: u32)
);

object!(
    /// A track: one thread of one process.
    TrackMeta {
        /// Its label on the timeline.
        label: String,
        /// The application (of a session; empty otherwise).
        app: String,
        /// Its host.
        host: String,
        /// Its process id.
        pid: u32,
        /// Its MPI rank.
        rank: Option<u32>,
        /// The thread's index in its process.
        thread: u32,
        /// The thread's name.
        name: String,
        /// Its process, by index.
        process: usize,
        /// Its rows (the deepest nesting).
        depth: usize,
        /// Its region instances.
        regions: usize,
        /// `plx hierarchy`'s name of the process (`rank N` or the pid).
        process_name: String,
        /// `plx hierarchy`'s name of the thread (`NAME#INDEX`).
        thread_name: String,
        /// The application: the session's name for it, else the executable's file name (the
        /// logical view's top level).
        application: String,
    }
);

object!(
    /// `/api/meta`: what the experiment holds.
    Meta {
        /// The experiment's directory.
        dir: String,
        /// The trace's span, ns.
        span: i64,
        /// Its events.
        events: u64,
        /// Its tracks.
        tracks: Vec<TrackMeta>,
        /// The regions, by region index.
        regions: Vec<RegionDef>,
        /// The user events' names, by index.
        user_events: Vec<String>,
        /// Matched messages.
        messages: u64,
        /// Of them, those received before their send (the clocks disagree by more than the
        /// clock repair could reconcile: drawn flagged).
        messages_backward: u64,
        /// Hand-offs between threads.
        handoffs: u64,
        /// Whether the run used MPI.
        has_mpi: bool,
        /// Whether the run counted anything (`plx run --counters`).
        has_counters: bool,
    }
);

// ---- /api/window

tuple!(
    /// A region at full detail (`index`: into its lane, for `/api/region`).
    Full(start: i64, end: i64, region: u32, index: u64)
);

tuple!(
    /// The regions of one lane below a pixel of one column: how many, their time, the region of
    /// the longest.
    Col(column: u32, count: u32, busy_ns: u64, longest_region: u32)
);

object!(
    /// One lane (a depth of a track) of a window.
    LaneAnswer {
        /// Regions at full detail, in order.
        full: Vec<Full>,
        /// Columns with regions below a pixel, in order.
        columns: Vec<Col>,
    }
);

tuple!(
    /// A message drawn one by one. `recv < send`: received before its send (clocks that
    /// disagree by `send - recv`).
    Line(send: i64, recv: i64, from_track: u32, to_track: u32, bytes: u64)
);

tuple!(
    /// The messages sent in one column from one track to another.
    BundleRow(column: u32, from_track: u32, to_track: u32, count: u64, bytes: u64, mean_recv: i64)
);

object!(
    /// The messages of a window.
    WindowMessages {
        /// Matched messages whose line crosses the window.
        total: u64,
        /// Sends in the window never received.
        unmatched: u64,
        /// Of `total`, those received before their send (each sent in the window: clocks that
        /// disagree by more than the clock repair could reconcile); drawn flagged.
        backward: u64,
        /// The matched messages one by one (when `total` is at most the request's `max`).
        lines: Vec<Line>,
        /// Otherwise bundled.
        bundles: Vec<BundleRow>,
    }
);

tuple!(
    /// A user event (`value` null where JSON cannot hold it: NaN, infinity).
    MarkerRow(track: u32, time: i64, user_event: u32, value: Option<f64>)
);

tuple!(
    /// A hand-off between threads: a release and the acquisition it let go on.
    HandoffRow(release: i64, acquire: i64, from_track: u32, to_track: u32, object_kind: u8)
);

object!(
    /// `/api/window`: what a timeline of `width` columns over `[t0, t1)` shows.
    WindowAnswer {
        /// The window's start.
        t0: i64,
        /// Its end.
        t1: i64,
        /// Its columns.
        width: u32,
        /// Per track, per depth.
        tracks: Vec<Vec<LaneAnswer>>,
        /// The messages.
        messages: WindowMessages,
        /// User events in the window (the first `max`).
        markers: Vec<MarkerRow>,
        /// User events in the window.
        markers_total: u64,
        /// Hand-offs whose arc crosses the window (the first `max` by release).
        handoffs: Vec<HandoffRow>,
        /// Hand-offs whose arc crosses the window.
        handoffs_total: u64,
    }
);

// ---- /api/region

object!(
    /// `/api/region`: one region instance.
    RegionDetail {
        /// Its track's label.
        track: String,
        /// The region's name.
        name: String,
        /// Its kind.
        kind: String,
        /// Its start.
        start: i64,
        /// Its end.
        end: i64,
        /// Its duration, ns.
        duration: i64,
        /// Its source file.
        file: String,
        /// Its source line.
        line: u32,
        /// Its call path, outermost first.
        call_path: Vec<String>,
        /// The experiment's counter events (empty without counters).
        counters: Vec<String>,
        /// The region's function's inclusive counts on this thread, one per event (null: no
        /// rule counted it).
        function_counters: Option<Vec<Option<u64>>>,
        /// The thread's whole-run totals, one per event.
        thread_counters: Vec<Option<u64>>,
    }
);

// ---- /api/stats

tuple!(
    /// A region's time in an interval (each instance clipped to it) and its calls begun in it.
    StatsRow(name: String, calls: u64, inclusive_ns: i64, exclusive_ns: i64)
);

object!(
    /// `/api/stats`: the profile of an interval and its messages.
    Stats {
        /// The interval's start.
        t0: i64,
        /// Its end.
        t1: i64,
        /// Per region, by exclusive time descending.
        profile: Vec<StatsRow>,
        /// Sent in it, per pair of tracks.
        messages: Vec<Pair>,
        /// Messages sent in it.
        message_count: u64,
        /// Their bytes.
        bytes: u64,
    }
);

// ---- /api/counters

tuple!(
    /// A counted call: the innermost instance of its region open when it was counted.
    CountedCall(start: i64, end: i64, region: u32, values: Vec<Option<u64>>)
);

object!(
    /// One track's counted calls.
    CountedTrack {
        /// The track.
        track: usize,
        /// The events (the columns of `values`).
        events: Vec<String>,
        /// Its counted calls.
        calls: Vec<CountedCall>,
    }
);

object!(
    /// The counted calls of the trace.
    Counted {
        /// The tracks with counted calls.
        tracks: Vec<CountedTrack>,
    }
);

union!(
    /// `/api/counters`: the counted calls, or why they could not be read.
    CountersAnswer { Counted(Counted), Failed(Failed) }
);

// ---- /api/search

tuple!(
    /// One instance found.
    Found(track: usize, depth: usize, index: usize, start: i64, end: i64)
);

object!(
    /// `/api/search`: the instances of the regions of one name.
    SearchAnswer {
        /// The name asked for.
        name: String,
        /// The regions of that name.
        regions: Vec<u32>,
        /// Their instances.
        count: u64,
        /// The first `max` of them, in track and time order.
        instances: Vec<Found>,
    }
);

// ---- /api/flame

tuple!(
    /// A node of a call tree: its parent (-1: a root), region, inclusive ns (clipped to the
    /// interval), calls begun in the interval.
    FlameNode(parent: i64, region: u32, inclusive_ns: i64, calls: u64)
);

object!(
    /// `/api/flame`: the call tree of an interval, parents before children.
    FlameAnswer {
        /// The interval's start.
        t0: i64,
        /// Its end.
        t1: i64,
        /// The tree's nodes.
        nodes: Vec<FlameNode>,
    }
);

// ---- /api/samples

tuple!(
    /// A call path of the samples: parent (-1: a root), frame name, samples and estimated ns
    /// (inclusive), sampled (1: a frame known from samples only, 0: an instrumented call).
    SampleNode(parent: i64, name: String, samples: u64, estimated_ns: u64, sampled: u8)
);

tuple!(
    /// A track's sampling period.
    TrackPeriod(track: usize, ns: u64)
);

object!(
    /// `/api/samples`: the call-stack samples of some tracks, merged by call path.
    SamplesAnswer {
        /// Samples taken (in the window where timed).
        samples: u64,
        /// Lost in the run.
        lost: u64,
        /// Each track's period.
        period_ns: Vec<TrackPeriod>,
        /// The tracks whose samples carry no time (a profile): counted over the whole run.
        untimed: Vec<usize>,
        /// Only paths with samples, parents first.
        nodes: Vec<SampleNode>,
    }
);

// ---- /api/sample_lane

tuple!(
    /// Samples of one frame in a column (`frame` indexes `frames`).
    FrameCount(frame: u32, samples: u64)
);

tuple!(
    /// A column of stamped samples: its frames, most sampled first (at most 3).
    StampedColumn(column: u32, samples: u64, frames: Vec<FrameCount>)
);

tuple!(
    /// A frame of stamped samples.
    FramePath(frame: String, call_path: String)
);

object!(
    /// A track whose samples the runtime stamped (a trace): each in the column of its time.
    StampedTrack {
        /// The track.
        track: usize,
        /// Samples taken in the run.
        taken: u64,
        /// Of them, stamped.
        stamped: u64,
        /// Its period.
        period_ns: u64,
        /// Stamped samples in `[t0, t1)`.
        in_window: u64,
        /// Columns with samples.
        columns: Vec<StampedColumn>,
        /// The frames the columns name.
        frames: Vec<FramePath>,
    }
);

tuple!(
    /// A column of estimated samples, with the call path of its largest share (`path`
    /// indexes `paths`; -1: none).
    EstimatedColumn(column: u32, samples: f64, path: i64)
);

object!(
    /// A track without stamps (a profile): its samples placed by estimate under its calls.
    EstimatedTrack {
        /// The track.
        track: usize,
        /// Samples taken in the run.
        taken: u64,
        /// Always 0.
        stamped: u64,
        /// The samples under instrumented calls, of the run.
        placed: f64,
        /// Its period.
        period_ns: u64,
        /// Columns with samples (null: more instances in the window than are placed; zoom in).
        columns: Option<Vec<EstimatedColumn>>,
        /// The call paths' names.
        paths: Vec<String>,
    }
);

union!(
    /// A sampled track's samples over the window.
    SampleTrack { Stamped(StampedTrack), Estimated(EstimatedTrack) }
);

object!(
    /// `/api/sample_lane`: each sampled track's samples over the window's columns.
    SampleLaneAnswer {
        /// The window's start.
        t0: i64,
        /// Its end.
        t1: i64,
        /// Its columns.
        width: u32,
        /// The sampled tracks.
        tracks: Vec<SampleTrack>,
    }
);

// ---- /api/waits, /api/wait

tuple!(
    /// A wait: `pattern` indexes `patterns`, `depth` is that of the innermost region holding
    /// its start (where it is drawn).
    WaitBox(id: usize, track: usize, pattern: Option<usize>, start: i64, end: i64, depth: usize)
);

object!(
    /// The wait states overlapping a window.
    Waits {
        /// Why the trace could not be replayed (null: it was).
        error: Option<String>,
        /// The patterns' names, in `plx waits`' order.
        patterns: Vec<String>,
        /// Waits of the run.
        total: usize,
        /// Of them, those overlapping the window.
        count: usize,
        /// The longest of those (the request's `max`), in id order.
        waits: Vec<WaitBox>,
    }
);

union!(
    /// `/api/waits`.
    WaitsAnswer { Computing(Computing), Waits(Waits) }
);

object!(
    /// Where a location waited, or what it waited for.
    WaitPlace {
        /// Its track (null: none).
        track: Option<usize>,
        /// Its location.
        location: String,
        /// Its call path.
        callpath: String,
    }
);

strings!(
    /// How a cause delayed a wait.
    CauseKind { Direct = "direct", Propagated = "propagated" }
);

object!(
    /// One cause of a wait (`plx waits --causes`).
    WaitCause {
        /// Its track (null: none).
        track: Option<usize>,
        /// Its location.
        location: String,
        /// Its call path.
        callpath: String,
        /// Direct or propagated.
        kind: CauseKind,
        /// Its share of the wait, ns.
        delay_ns: f64,
    }
);

object!(
    /// One wait.
    WaitDetail {
        /// Its id.
        id: usize,
        /// Its pattern.
        pattern: String,
        /// Its pattern's group (`mpi point-to-point`, ...).
        group: String,
        /// Its track (null: none).
        track: Option<usize>,
        /// Its location.
        location: String,
        /// Where it waited.
        callpath: String,
        /// Its start.
        start: i64,
        /// Its end.
        end: i64,
        /// Its length.
        wait_ns: i64,
        /// The location waited for, where that arrived (null: not known).
        late: Option<WaitPlace>,
        /// Its causes, the largest first (they sum to `wait_ns`).
        causes: Vec<WaitCause>,
    }
);

union!(
    /// `/api/wait`.
    WaitAnswer { Computing(Computing), Wait(WaitDetail) }
);

// ---- /api/series

strings!(
    /// `level`: each value holds until the next sample; `total`: a running total.
    SeriesMode { Level = "level", Total = "total" }
);

tuple!(
    /// A sample of a series (`t`: ns from the first event).
    SeriesSample(t: i64, value: f64)
);

object!(
    /// An external metric as a time series.
    Series {
        /// Its name.
        name: String,
        /// Its unit.
        unit: String,
        /// How its values read.
        mode: SeriesMode,
        /// Its source.
        source: String,
        /// The host whose clock the samples came on (empty for a CSV file).
        host: String,
        /// In time order.
        samples: Vec<SeriesSample>,
    }
);

object!(
    /// `/api/series`: the external metrics (`plx run --monitor`, `plx import`).
    SeriesAnswer {
        /// The series.
        series: Vec<Series>,
        /// What of the metric files could not be read.
        warnings: Vec<String>,
    }
);

// ---- /api/profile

tuple!(
    /// A flat profile row, as `plx report` orders them (`counts`: one per counter event, null
    /// without counters).
    FlatRow(
        name: String,
        calls: u64,
        exclusive_s: f64,
        inclusive_s: f64,
        cpu_s: Option<f64>,
        counts: Option<Vec<Option<u64>>>,
    )
);

object!(
    /// One flat profile: the total, or one thread's.
    ProfileTable {
        /// `total`, or the thread.
        label: String,
        /// Its rows.
        rows: Vec<FlatRow>,
        /// The whole-thread counter totals, one per event.
        counters: Vec<Option<u64>>,
    }
);

tuple!(
    /// A call path of the total, named whole.
    CallpathRow(path: Vec<String>, calls: u64, exclusive_s: f64, inclusive_s: f64)
);

tuple!(
    /// An entry of the total's call graph (as `plx report --gprof`).
    GprofRow(
        index: usize,
        name: String,
        percent: f64,
        self_s: f64,
        children_s: f64,
        calls: u64,
        callers: Vec<String>,
        callees: Vec<String>,
    )
);

object!(
    /// `/api/profile`: the flat profiles, the total's call paths and call graph.
    ProfileAnswer {
        /// The total's call paths (the answer is written as it is made: N²/2 names for a chain
        /// N deep are never held).
        callpaths: Vec<CallpathRow>,
        /// The counter events (the columns of `counts`).
        counters: Vec<String>,
        /// The call graph.
        gprof: Vec<GprofRow>,
        /// The total first, then one per thread.
        tables: Vec<ProfileTable>,
    }
);

// ---- /api/comm

object!(
    /// The messages of one communicator.
    CommMatrix {
        /// The communicator.
        name: String,
        /// Per pair of ranks.
        pairs: Vec<Pair>,
    }
);

object!(
    /// The latency/bandwidth fit of one pair (as `plx comm --fit --format json`).
    Fit {
        /// The sender's rank.
        from: u32,
        /// The receiver's rank.
        to: u32,
        /// Messages fitted.
        messages: u64,
        /// The latency, µs.
        latency_us: Option<f64>,
        /// The bandwidth, MB/s.
        bandwidth_mbps: Option<f64>,
        /// The fit's R².
        r2: Option<f64>,
        /// The mean transfer time, µs.
        mean_transfer_us: f64,
        /// What is doubtful about the fit.
        notes: Vec<String>,
    }
);

object!(
    /// `/api/comm`: the matrices and fits.
    CommAnswer {
        /// The ranks.
        ranks: Vec<u32>,
        /// The matrix by rank (as `plx comm`).
        pairs: Vec<Pair>,
        /// Each communicator's (from the trace's matched messages).
        communicators: Vec<CommMatrix>,
        /// The fits.
        fits: Vec<Fit>,
    }
);

// ---- /api/compare

tuple!(
    /// A metric of IPS-2's table, one value per run.
    MetricRow(metric: String, unit: String, values: Vec<Option<f64>>)
);

tuple!(
    /// A function's inclusive seconds per run, last − first, last / first.
    FunctionRow(
        name: String,
        inclusive_s: Vec<Option<f64>>,
        difference_s: f64,
        ratio: Option<f64>,
    )
);

object!(
    /// `/api/compare`: IPS-2's comparison (as `plx compare`).
    CompareAnswer {
        /// One per application of a session, else the run's own.
        runs: Vec<String>,
        /// The metrics.
        metrics: Vec<MetricRow>,
        /// The functions that differ most.
        functions: Vec<FunctionRow>,
    }
);

// ---- /api/critpath

tuple!(
    /// A segment of the critical path (`what`: the region or the transfer).
    Segment(
        kind: String,
        track: Option<usize>,
        from_track: Option<usize>,
        start: i64,
        end: i64,
        what: String,
    )
);

tuple!(
    /// An item of the critical path's profile.
    CritRow(kind: String, name: String, location: Option<String>, ns: i64)
);

object!(
    /// The global critical path.
    CritPath {
        /// Its length, ns.
        length: i64,
        /// Its segments.
        segments: Vec<Segment>,
        /// Its profile per level (`procedure`, `thread`).
        profile: BTreeMap<String, Vec<CritRow>>,
    }
);

union!(
    /// `/api/critpath`.
    CritPathAnswer { CritPath(CritPath), Failed(Failed) }
);

// ---- /api/displays

tuple!(
    /// A location's seconds computing, in MPI, waiting, idle.
    Utilization(location: String, seconds: Vec<f64>)
);

object!(
    /// The concurrency profile.
    Concurrency {
        /// Seconds with k threads computing, per k.
        seconds: Vec<f64>,
        /// Per bin, the mean.
        mean: Vec<f64>,
        /// Per bin, the most.
        max: Vec<u32>,
        /// The first bin's start.
        start: i64,
        /// A bin's width, ns.
        width: f64,
    }
);

object!(
    /// The message queue length.
    Queue {
        /// Per bin, the mean.
        mean: Vec<f64>,
        /// Per bin, the most.
        max: Vec<i64>,
        /// The first bin's start.
        start: i64,
        /// A bin's width, ns.
        width: f64,
    }
);

object!(
    /// A time histogram (the totals of `plx histogram --metric ...`).
    Histogram {
        /// Per bin.
        values: Vec<f64>,
        /// The first bin's start.
        start: i64,
        /// A bin's width, ns.
        width: f64,
    }
);

object!(
    /// JPVS's displays and IPS-2's histograms, from the state timeline.
    Displays {
        /// The states of `utilization`.
        states: Vec<String>,
        /// Per location.
        utilization: Vec<Utilization>,
        /// The concurrency profile.
        concurrency: Concurrency,
        /// The message queue length.
        queue: Queue,
        /// `compute`, `mpi`, `messages`, `bytes`.
        histograms: BTreeMap<String, Histogram>,
    }
);

union!(
    /// `/api/displays`.
    DisplaysAnswer { Displays(Displays), Failed(Failed) }
);

/// An endpoint of the API.
pub struct Endpoint {
    /// Its path and parameters.
    pub request: &'static str,
    /// Its answer's type.
    pub answer: &'static str,
    /// What it answers.
    pub doc: &'static str,
}

/// Every endpoint (`docs/commands/plx-view.md`'s table).
pub const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        request: "/api/meta",
        answer: "Meta",
        doc: "the tracks with their grouping, the regions, the user events, the span",
    },
    Endpoint {
        request: "/api/window?t0=&t1=&width=&max=",
        answer: "WindowAnswer",
        doc: "the window query above (`width` 1–20000, default 1000; `max` messages one by one, default 5000)",
    },
    Endpoint {
        request: "/api/region?track=&depth=&index=",
        answer: "RegionDetail",
        doc: "one region instance (`index` from `full`), its call path and source; 404 for none",
    },
    Endpoint {
        request: "/api/stats?t0=&t1=",
        answer: "Stats",
        doc: "the interval's profile (each instance's time clipped to it) and its messages",
    },
    Endpoint {
        request: "/api/profile",
        answer: "ProfileAnswer",
        doc: "per thread and total, the flat profile (built on all cores), the total's call paths and call graph",
    },
    Endpoint {
        request: "/api/search?name=&max=",
        answer: "SearchAnswer",
        doc: "every instance of the regions named `name` (exactly; percent-encoded) on every track and depth, the first `max` (default 100000)",
    },
    Endpoint {
        request: "/api/flame?t0=&t1=&tracks=",
        answer: "FlameAnswer",
        doc: "the call tree of the regions overlapping `[t0, t1)` on `tracks` (comma-separated indices, the commas plain or `%2C`; every track when absent), merged by call path; each track's tree built on its own, on all cores, then merged in track order",
    },
    Endpoint {
        request: "/api/sample_lane?t0=&t1=&width=",
        answer: "SampleLaneAnswer",
        doc: "per sampled track, its samples over the window's `width` columns (as `/api/window`'s)",
    },
    Endpoint {
        request: "/api/samples?tracks=&t0=&t1=",
        answer: "SamplesAnswer",
        doc: "the call-stack samples of `tracks` (as `/api/flame`'s) merged by call path; with `t0`/`t1` a stamped thread's samples taken in `[t0, t1)`, else the whole run's",
    },
    Endpoint {
        request: "/api/waits?t0=&t1=&max=",
        answer: "WaitsAnswer",
        doc: "`Computing` while the waits are replayed (the first request begins the replay, in the background); then the wait states overlapping `[t0, t1)` (`max` default 5000)",
    },
    Endpoint {
        request: "/api/wait?id=",
        answer: "WaitAnswer",
        doc: "`Computing` while the waits are replayed; then one wait; 404 for an unknown id",
    },
    Endpoint {
        request: "/api/counters",
        answer: "CountersAnswer",
        doc: "the counted calls of the trace per track; read at the first request (every thread decoded alone, on all cores; the merge when the clock needed repair) and kept",
    },
    Endpoint {
        request: "/api/series",
        answer: "SeriesAnswer",
        doc: "the external metrics (`plx run --monitor`, `plx import`)",
    },
    Endpoint {
        request: "/api/comm",
        answer: "CommAnswer",
        doc: "the matrix by rank (as `plx comm`), per communicator, and the fits",
    },
    Endpoint {
        request: "/api/compare",
        answer: "CompareAnswer",
        doc: "IPS-2's comparison (as `plx compare`): one column per application of a session, else the run's own",
    },
    Endpoint {
        request: "/api/critpath",
        answer: "CritPathAnswer",
        doc: "the global critical path's segments and its profile per level",
    },
    Endpoint {
        request: "/api/displays?bins=N",
        answer: "DisplaysAnswer",
        doc: "utilization per location, the concurrency profile, the message queue length and the time histograms of computing threads, MPI, messages and bytes",
    },
];

/// Every declaration, in the order written to the TypeScript file.
fn declarations() -> Vec<String> {
    vec![
        Failed::decl(),
        Computing::decl(),
        Pair::decl(),
        RegionDef::decl(),
        TrackMeta::decl(),
        Meta::decl(),
        Full::decl(),
        Col::decl(),
        LaneAnswer::decl(),
        Line::decl(),
        BundleRow::decl(),
        WindowMessages::decl(),
        MarkerRow::decl(),
        HandoffRow::decl(),
        WindowAnswer::decl(),
        RegionDetail::decl(),
        StatsRow::decl(),
        Stats::decl(),
        CountedCall::decl(),
        CountedTrack::decl(),
        Counted::decl(),
        CountersAnswer::decl(),
        Found::decl(),
        SearchAnswer::decl(),
        FlameNode::decl(),
        FlameAnswer::decl(),
        SampleNode::decl(),
        TrackPeriod::decl(),
        SamplesAnswer::decl(),
        FrameCount::decl(),
        StampedColumn::decl(),
        FramePath::decl(),
        StampedTrack::decl(),
        EstimatedColumn::decl(),
        EstimatedTrack::decl(),
        SampleTrack::decl(),
        SampleLaneAnswer::decl(),
        WaitBox::decl(),
        Waits::decl(),
        WaitsAnswer::decl(),
        WaitPlace::decl(),
        CauseKind::decl(),
        WaitCause::decl(),
        WaitDetail::decl(),
        WaitAnswer::decl(),
        SeriesMode::decl(),
        SeriesSample::decl(),
        Series::decl(),
        SeriesAnswer::decl(),
        FlatRow::decl(),
        ProfileTable::decl(),
        CallpathRow::decl(),
        GprofRow::decl(),
        ProfileAnswer::decl(),
        CommMatrix::decl(),
        Fit::decl(),
        CommAnswer::decl(),
        MetricRow::decl(),
        FunctionRow::decl(),
        CompareAnswer::decl(),
        Segment::decl(),
        CritRow::decl(),
        CritPath::decl(),
        CritPathAnswer::decl(),
        Utilization::decl(),
        Concurrency::decl(),
        Queue::decl(),
        Histogram::decl(),
        Displays::decl(),
        DisplaysAnswer::decl(),
    ]
}

/// `viewer/src/api_types.ts`: the TypeScript declarations of every answer.
pub fn typescript() -> String {
    let mut s = String::from(
        "// GENERATED by plx-view's tests/api_types.rs from engine/crates/plx-view/src/schema.rs: do not edit\n\
         // (PLX_BLESS=1 cargo test -p plx-view --test api_types rewrites it).\n\
         //\n\
         // The answers of plx view's JSON API. Times are integer ns from the trace's first event.\n",
    );
    for d in declarations() {
        s.push('\n');
        s += &d;
    }
    s
}

/// The API table of `docs/commands/plx-view.md` (between its `api-table` markers).
pub fn endpoint_table() -> String {
    let mut s =
        String::from("| endpoint | answer (`viewer/src/api_types.ts`) | what |\n|---|---|---|\n");
    for e in ENDPOINTS {
        s += &format!("| `{}` | `{}` | {} |\n", e.request, e.answer, e.doc);
    }
    s
}
