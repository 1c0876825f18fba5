//! `chrome`: Chrome trace-event JSON for Perfetto — a track per rank and thread, nested slices, counters, message flows.
//!
//! Layout (docs/exports/chrome.md): `pid` is the MPI rank (else the OS pid), `tid` the thread
//! index; every pid and tid is below 2³¹, as Perfetto's importer reads them as 32-bit numbers
//! (a larger one becomes tid = pid). Regions are `B`/`E` slices, well nested (an exit closes
//! what was opened inside it and never exited; regions open at the end close at the thread's
//! last event). Each send and receive is a 1 µs `X` slice on a *message lane* of its thread (tid
//! [`LANE_BASE`] + thread × [`LANES`] + lane, a lane per overlap so slices never cross), which
//! carries the message's details. A matched message is a flow bound to the MPI calls' slices on
//! the threads' own tracks: `s` 1 ns after the send event, inside the call that sent it; `f` with
//! `bp: "e"` 1 ns before the receive event, inside the call that completed it (a receive is
//! recorded at its call's end). With no region open at the event the flow binds to the message
//! slice on the lane instead. A message received before its send (clocks left unrepaired,
//! `--no-clock-repair`) is not linked by the merge: the export pairs such a receive with the
//! later send of the same communicator, ranks and tag, in order, as MPI does, and draws it as a
//! flow named `message received before its send` from the receive to the send (Perfetto draws
//! a flow forward in time only), with `"received_before_send":true` in the send's arguments;
//! the number drawn and left without a flow is in `otherData` and a warning. User events are `C` counters; collectives instant
//! events. The runtime's own work (regions of kind runtime: `plx_flush`, `plx_symbols`) is
//! measurement cost, not a call of the program: its slices are on a *measurement track* of their
//! thread (tid [`MEASURE_BASE`] + thread), never nested in the program's slices. A counted call (a
//! `counters` context) is a step on a `C` track per event and thread: its inclusive count from
//! its entry, 0 from its exit.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::{self, Write};

use plx_analysis::{EventKind, GlobalMerge, MessageLink, Model, RegionTable};
use plx_format::{RegionKind, SyncKind};

use crate::driver::{drive, At, CountedCall, Cx, Envelope, Place, Sink, Step};
use crate::text::comm_token;
use crate::{stream, ExportError, ExportInput, ExportSummary, Exporter, Target};

/// The `chrome` format (docs/exports/chrome.md).
pub struct Chrome;

/// Duration of a message marker slice, ns.
pub const MARKER_NS: i64 = 1_000;
/// First tid of message lanes.
pub const LANE_BASE: u64 = 1_000_000;
/// Lanes per thread (a later lane is shared: only then can marker slices overlap).
pub const LANES: u64 = 1_000;
/// First tid of measurement tracks (above every message lane, below 2³¹).
pub const MEASURE_BASE: u64 = 2_000_000_000;
/// Added to an OS pid used as a chrome pid that collides with a rank (OS pids are below 2²²).
pub const PID_OFFSET: u64 = 1_000_000_000;
/// Category of message slices and flows.
const MESSAGE_CAT: &str = "mpi-message";

impl Exporter for Chrome {
    fn name(&self) -> &'static str {
        "chrome"
    }

    fn about(&self) -> &'static str {
        "Chrome trace-event JSON for Perfetto UI: slices per rank and thread, counters, message flows"
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = stream(target, self.name())?;
        let (files, unread) = plx_format::read_metric_files(&input.experiment.dir);
        let mut w = Writer::new(out, input, files);
        let mut n = drive(input, &mut w)?;
        // what of the external metrics could not be read is said, as the merge's own damage
        n.warnings.extend(unread);
        Ok(n)
    }
}

/// A thread's message lanes: when each lane's last marker ends.
#[derive(Default)]
struct Lanes {
    ends: Vec<i64>,
}

impl Lanes {
    /// The first lane free at `t`, taken until `t + MARKER_NS`; `(lane, new)`.
    fn take(&mut self, t: i64) -> (u64, bool) {
        if let Some(i) = self.ends.iter().position(|&e| e <= t) {
            self.ends[i] = t + MARKER_NS;
            return (i as u64, false);
        }
        if (self.ends.len() as u64) < LANES {
            self.ends.push(t + MARKER_NS);
            return (self.ends.len() as u64 - 1, true);
        }
        let last = self.ends.len() - 1;
        self.ends[last] = self.ends[last].max(t + MARKER_NS);
        (last as u64, false)
    }
}

struct Writer<'a> {
    out: &'a mut dyn Write,
    first: bool,
    origin: i64,
    /// Per location: chrome pid, tid, name prefix of its counters.
    pid: Vec<u64>,
    tid: Vec<u64>,
    counter_suffix: Vec<String>,
    /// Each location's name (`Who`'s short form, `[APP:]PROCESS.THREAD`), its tracks' prefix.
    labels: Vec<String>,
    /// Per location: the counter tracks whose step ends at a region's exit (region, track
    /// name as JSON).
    steps: Vec<Vec<(u32, String)>>,
    lanes: Vec<Lanes>,
    /// JSON strings of region and user event names, escaped once.
    region_json: Vec<String>,
    region_cat: Vec<&'static str>,
    /// Per location: the measurement track was named.
    measured: Vec<bool>,
    /// Flow events bound to a region's slice on a thread's own track.
    flows_on_slices: u64,
    /// Exits that matched no open call (dropped).
    unmatched_exits: u64,
    /// External metrics (plx run --monitor, plx import): counters of a process of their own,
    /// read at [`Sink::begin`] from these files.
    external: Vec<plx_analysis::external::ExternalMetric>,
    metric_files: Vec<plx_format::MetricFile>,
    model: &'a Model,
    /// Communicators' descriptions, by index.
    comm_names: Vec<String>,
    /// Locations' labels as JSON strings (a receive names its sender).
    senders: Vec<String>,
    /// Per location: its call-stack samples, written as the document's `samples`.
    samples: Vec<Option<crate::samples::LocationSamples<'a>>>,
    /// The `stackFrames` (by id: name, category, parent id) and `samples` entries so far.
    frames: Vec<(String, &'static str, Option<usize>)>,
    frame_index: BTreeMap<(Option<usize>, u32), usize>,
    sample_entries: Vec<String>,
    /// The samples those entries weigh.
    sampled: u64,
    /// Per location: its world rank.
    rank: Vec<Option<u32>>,
    /// The ranks of the merge's locations, and each process's chrome pid.
    ranks: BTreeSet<u64>,
    pid_of: BTreeMap<usize, u64>,
    /// Unrepaired clocks: receives the merge left unlinked, by (communicator, sender, receiver,
    /// tag), in order: the flow id each started.
    backward: HashMap<(Option<u32>, u32, u32, i32), VecDeque<u64>>,
    /// Flows started at an unlinked receive, and those ended at their send.
    backward_started: u64,
    backward_drawn: u64,
    /// Whether the merge repairs the clock condition (else unlinked receives are paired here).
    repair: bool,
}

/// First flow id of messages received before their send (above every message id).
const BACKWARD_BASE: u64 = 1 << 48;
/// Name of their flows.
const BACKWARD_NAME: &str = "message received before its send";

/// The chrome pid of the external metrics' process: above every rank and OS pid, below 2³¹.
pub const EXTERNAL_PID: u64 = 2_100_000_000;

/// µs with three decimals from ns: exact, deterministic.
fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

impl<'a> Writer<'a> {
    fn new(
        out: &'a mut dyn Write,
        input: &'a ExportInput,
        metric_files: Vec<plx_format::MetricFile>,
    ) -> Writer<'a> {
        Writer {
            out,
            first: true,
            origin: 0,
            pid: Vec::new(),
            tid: Vec::new(),
            counter_suffix: Vec::new(),
            labels: Vec::new(),
            steps: Vec::new(),
            lanes: Vec::new(),
            region_json: Vec::new(),
            region_cat: Vec::new(),
            measured: Vec::new(),
            flows_on_slices: 0,
            unmatched_exits: 0,
            external: Vec::new(),
            metric_files,
            model: &input.model,
            comm_names: input.model.comms.all().iter().map(|c| c.describe()).collect(),
            senders: Vec::new(),
            samples: Vec::new(),
            frames: Vec::new(),
            frame_index: BTreeMap::new(),
            sample_entries: Vec::new(),
            sampled: 0,
            rank: Vec::new(),
            ranks: BTreeSet::new(),
            pid_of: BTreeMap::new(),
            backward: HashMap::new(),
            backward_started: 0,
            backward_drawn: 0,
            repair: input.options.merge.repair_clock,
        }
    }

    /// The `samples` entries of location `li`: each stamped sample at its time (weight 1), and
    /// per sampled callpath its innermost frame's samples without a time at `t` (its last
    /// event) as the weight.
    fn location_samples(&mut self, regions: &RegionTable, li: u32, t: i64) {
        let Some(s) = self.samples.get(li as usize).and_then(|s| s.as_ref()) else {
            return;
        };
        let (pid, tid) = (self.pid[li as usize], self.tid[li as usize]);
        let mut ids: BTreeMap<u32, usize> = BTreeMap::new();
        for n in &s.nodes {
            let parent = n.parent.and_then(|p| ids.get(&p).copied());
            let next = self.frames.len();
            let id = *self.frame_index.entry((parent, n.region)).or_insert(next);
            if id == next {
                let cat = if n.estimated {
                    "sampled"
                } else {
                    regions.get(n.region).kind.as_str()
                };
                self.frames.push((json_str(regions.name(n.region)), cat, parent));
            }
            ids.insert(n.node, id);
            let untimed = s.untimed(n);
            if untimed > 0 {
                self.sampled += untimed;
                self.sample_entries.push(format!(
                    "{{\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":\"cpu-clock\",\"sf\":\"{id}\",\"weight\":{},\"args\":{{\"period_ns\":{}}}}}",
                    us(t - self.origin),
                    untimed,
                    s.period_ns
                ));
            }
        }
        for &(ns, node) in &s.times {
            let Some(id) = ids.get(&node) else { continue };
            self.sampled += 1;
            self.sample_entries.push(format!(
                "{{\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":\"cpu-clock\",\"sf\":\"{id}\",\"weight\":1,\"args\":{{\"period_ns\":{}}}}}",
                us(ns - self.origin),
                s.period_ns
            ));
        }
    }

    /// `"stackFrames"` and `"samples"`, each entry a line, when any location has samples.
    fn write_samples(&mut self) -> io::Result<()> {
        if self.sample_entries.is_empty() {
            return Ok(());
        }
        self.out.write_all(b"\"stackFrames\":{\n")?;
        for (i, (name, cat, parent)) in self.frames.iter().enumerate() {
            let sep = if i == 0 { "" } else { ",\n" };
            let parent = parent.map_or(String::new(), |p| format!(",\"parent\":\"{p}\""));
            write!(self.out, "{sep}\"{i}\":{{\"name\":{name},\"category\":\"{cat}\"{parent}}}")?;
        }
        self.out.write_all(b"\n},\n\"samples\":[\n")?;
        self.out.write_all(self.sample_entries.join(",\n").as_bytes())?;
        self.out.write_all(b"\n],\n")
    }

    /// A communicator's description as a JSON string (`c3`, `?` without a definition).
    fn comm_name(&self, c: Option<u32>) -> String {
        let name = c
            .and_then(|c| self.comm_names.get(c as usize).cloned())
            .unwrap_or_else(|| comm_token(c));
        json_str(&name)
    }

    fn event(&mut self, body: std::fmt::Arguments) -> io::Result<()> {
        if self.first {
            self.first = false;
        } else {
            self.out.write_all(b",\n")?;
        }
        self.out.write_fmt(body)
    }

    /// Location `p`'s tables, and its metadata events: its process's name and sort index at
    /// the process's first location, its thread's.
    fn place(&mut self, p: &Place) -> io::Result<()> {
        let l = p.location;
        if p.first_of_process {
            // pid: the rank, else the OS pid (moved out of the ranks' range if it collides)
            let pid = match l.rank {
                Some(r) => r as u64,
                None if self.ranks.contains(&(l.pid as u64)) => l.pid as u64 + PID_OFFSET,
                None => l.pid as u64,
            };
            self.pid_of.insert(l.process, pid);
            self.event(format_args!(
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                json_str(&p.process_name())
            ))?;
            self.event(format_args!(
                "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{}}}}}",
                l.process
            ))?;
        }
        let (pid, tid) = (self.pid_of[&l.process], l.thread as u64);
        let label = l.label();
        self.pid.push(pid);
        self.tid.push(tid);
        self.counter_suffix.push(if p.threads > 1 {
            format!(" ({label})")
        } else {
            String::new()
        });
        self.senders.push(json_str(&label));
        self.steps.push(Vec::new());
        self.lanes.push(Lanes::default());
        self.measured.push(false);
        self.rank.push(l.rank);
        self.samples.push(p.samples(self.model));
        let name = if l.name.is_empty() {
            label.clone()
        } else {
            format!("{label} \"{}\"", l.name)
        };
        self.labels.push(label);
        self.track(pid, tid, &name, 2 * tid)
    }

    /// A track's metadata: its name and sort index (a thread's `2 × thread`, its message lanes'
    /// and measurement track's `2 × thread + 1`, right below it).
    fn track(&mut self, pid: u64, tid: u64, name: &str, sort_index: u64) -> io::Result<()> {
        self.event(format_args!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
            json_str(name)
        ))?;
        self.event(format_args!(
            "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{sort_index}}}}}"
        ))
    }

    /// The tid of lane `lane` of location `li` (named on first use, right below its thread).
    fn lane(&mut self, li: u32, t: i64) -> io::Result<u64> {
        let (lane, new) = self.lanes[li as usize].take(t);
        let (pid, thread) = (self.pid[li as usize], self.tid[li as usize]);
        let tid = LANE_BASE + thread * LANES + lane;
        if new {
            let label = &self.labels[li as usize];
            let name = if lane == 0 {
                format!("{label} messages")
            } else {
                format!("{label} messages {}", lane + 1)
            };
            self.track(pid, tid, &name, 2 * thread + 1)?;
        }
        Ok(tid)
    }

    fn region(&mut self, regions: &RegionTable, r: u32) -> (&str, &'static str) {
        while self.region_json.len() <= r as usize {
            let i = self.region_json.len() as u32;
            self.region_json.push(json_str(regions.name(i)));
            self.region_cat.push(regions.get(i).kind.as_str());
        }
        (&self.region_json[r as usize], self.region_cat[r as usize])
    }

    fn is_runtime(&mut self, regions: &RegionTable, r: u32) -> bool {
        self.region(regions, r).1 == RegionKind::Runtime.as_str()
    }

    fn slice(&mut self, regions: &RegionTable, ph: char, li: u32, t: i64, r: u32) -> io::Result<()> {
        self.slice_with(regions, ph, li, t, r, false)
    }

    /// A slice's begin or end; `truncated`: an end where the call was cut (still open when its
    /// process was killed), `"args":{"truncated":true}`.
    fn slice_with(
        &mut self,
        regions: &RegionTable,
        ph: char,
        li: u32,
        t: i64,
        r: u32,
        truncated: bool,
    ) -> io::Result<()> {
        let (pid, mut tid) = (self.pid[li as usize], self.tid[li as usize]);
        if self.is_runtime(regions, r) {
            let thread = tid;
            tid = MEASURE_BASE + thread;
            if !std::mem::replace(&mut self.measured[li as usize], true) {
                let name = format!("{} measurement", self.labels[li as usize]);
                self.track(pid, tid, &name, 2 * thread + 1)?;
            }
        }
        let ts = us(t - self.origin);
        let (name, cat) = self.region(regions, r);
        let args = if truncated {
            ",\"args\":{\"truncated\":true}"
        } else {
            ""
        };
        let body = format!(
            "{{\"ph\":\"{ph}\",\"name\":{name},\"cat\":\"{cat}\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}{args}}}"
        );
        self.event(format_args!("{body}"))
    }

    /// A message marker slice on a lane, and its flow event when the message is matched: bound
    /// to the innermost open region's slice on the thread's own track (the MPI call), 1 ns after
    /// a send and 1 ns before a receive (recorded at its call's end) so that it lies strictly
    /// inside; to the marker slice when no region's slice holds that instant.
    fn marker(
        &mut self,
        cx: &Cx,
        li: u32,
        t: i64,
        name: &str,
        args: &str,
        flow: Option<(char, u64)>,
    ) -> io::Result<()> {
        let tid = self.lane(li, t)?;
        let pid = self.pid[li as usize];
        let ts = us(t - self.origin);
        self.event(format_args!(
            "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{MESSAGE_CAT}\",\"ts\":{ts},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
            json_str(name),
            us(MARKER_NS)
        ))?;
        let Some((ph, id)) = flow else { return Ok(()) };
        // inside the call: 1 ns after a send's event (at its entry), before a receive's (at its end)
        let at = if (ph == 's') != (id >= BACKWARD_BASE) {
            t + 1
        } else {
            t - 1
        };
        let flow_name = if id >= BACKWARD_BASE {
            BACKWARD_NAME
        } else {
            "message"
        };
        let (tid, at) = match cx.stacks.innermost(li) {
            Some((_, entry)) if at > entry => {
                self.flows_on_slices += 1;
                (self.tid[li as usize], at)
            }
            _ => (tid, t + 1),
        };
        let ts = us(at - self.origin);
        let bp = if ph == 'f' { ",\"bp\":\"e\"" } else { "" };
        self.event(format_args!(
            "{{\"ph\":\"{ph}\",\"id\":{id},\"name\":\"{flow_name}\",\"cat\":\"{MESSAGE_CAT}\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}{bp}}}"
        ))
    }

    fn step(&mut self, li: u32, t: i64, name: &str, v: u64) -> io::Result<()> {
        let (pid, tid) = (self.pid[li as usize], self.tid[li as usize]);
        self.event(format_args!(
            "{{\"ph\":\"C\",\"name\":{name},\"cat\":\"counters\",\"ts\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"value\":{v}}}}}",
            us(t - self.origin)
        ))
    }

    /// The counter steps of the regions in `closed` (all with `None`) end at `t`.
    fn end_steps(&mut self, li: u32, t: i64, closed: Option<&[u32]>) -> io::Result<()> {
        let l = li as usize;
        if self.steps[l].is_empty() {
            return Ok(());
        }
        let (end, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.steps[l])
            .into_iter()
            .partition(|(r, _)| closed.is_none_or(|c| c.contains(r)));
        self.steps[l] = keep;
        for (_, name) in end {
            self.step(li, t, &name, 0)?;
        }
        Ok(())
    }

    /// Each external metric as a counter track of the process "external metrics": one counter
    /// event per sample, at its time on the trace's time base.
    fn external_counters(&mut self) -> io::Result<()> {
        if self.external.is_empty() {
            return Ok(());
        }
        let ext = std::mem::take(&mut self.external);
        self.event(format_args!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{EXTERNAL_PID},\"tid\":0,\"args\":{{\"name\":\"external metrics\"}}}}"
        ))?;
        for m in &ext {
            let name = if m.unit.is_empty() {
                json_str(&m.name)
            } else {
                json_str(&format!("{} ({})", m.name, m.unit))
            };
            for &(t, v) in &m.samples {
                let ts = us(t.round() as i64 - self.origin);
                self.event(format_args!(
                    "{{\"ph\":\"C\",\"name\":{name},\"cat\":\"external\",\"ts\":{ts},\"pid\":{EXTERNAL_PID},\"tid\":0,\"args\":{{\"value\":{v}}}}}"
                ))?;
            }
        }
        Ok(())
    }
}

impl Sink for Writer<'_> {
    const OUTPUT: &'static str = "chrome output";
    const COUNTERS: bool = true;

    /// Stream bytes and OpenMP teams have no Chrome shape here.
    fn takes(&self, kind: &EventKind) -> bool {
        !matches!(
            kind,
            EventKind::StreamSend { .. } | EventKind::StreamRecv { .. } | EventKind::OmpTeam { .. }
        )
    }

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        self.origin = merge.origin_ns();
        self.ranks = merge.locations().iter().filter_map(|l| l.rank.map(u64::from)).collect();
        self.external = plx_analysis::external::external_metrics(
            self.model,
            &self.metric_files,
            Some(merge.origin_ns()),
        );
        self.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(())
    }

    fn location(&mut self, place: &Place) -> Step {
        Ok(self.place(place)?)
    }

    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        Ok(self.slice(cx.regions(), 'B', at.loc, at.ns, region)?)
    }

    fn exit(&mut self, cx: &Cx, at: At, _region: u32, closed: &[u32]) -> Step {
        self.unmatched_exits += closed.is_empty() as u64;
        for &r in closed {
            self.slice(cx.regions(), 'E', at.loc, at.ns, r)?;
        }
        Ok(self.end_steps(at.loc, at.ns, Some(closed))?)
    }

    /// The slices end, `"args":{"truncated":true}` where they were cut; the location's
    /// samples are kept for the document's `samples`.
    fn open_at_end(&mut self, cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        for &r in calls {
            self.slice_with(cx.regions(), 'E', at.loc, at.ns, r, cut)?;
        }
        self.location_samples(cx.regions(), at.loc, at.ns);
        Ok(self.end_steps(at.loc, at.ns, None)?)
    }

    fn user(&mut self, cx: &Cx, at: At, event: u32, value: f64) -> Step {
        let li = at.loc as usize;
        let name = format!("{}{}", cx.user_events()[event as usize], self.counter_suffix[li]);
        let (pid, tid) = (self.pid[li], self.tid[li]);
        let v = if value.is_finite() {
            format!("{value}")
        } else {
            "null".to_string()
        };
        Ok(self.event(format_args!(
            "{{\"ph\":\"C\",\"name\":{},\"ts\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"value\":{v}}}}}",
            json_str(&name),
            us(at.ns - self.origin)
        ))?)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, message: Option<u64>) -> Step {
        let id = message.map_or("null".to_string(), |m| m.to_string());
        // a send whose receive went before it, unlinked: the flow that receive started ends here
        let backward = match (message, self.rank[at.loc as usize], self.repair) {
            (None, Some(r), false) => self
                .backward
                .get_mut(&(m.comm, r, m.peer, m.tag))
                .and_then(|q| q.pop_front()),
            _ => None,
        };
        let mut args = format!(
            "\"to\":{},\"tag\":{},\"bytes\":{},\"comm\":{},\"message\":{id}",
            m.peer,
            m.tag,
            m.bytes,
            self.comm_name(m.comm)
        );
        if backward.is_some() {
            self.backward_drawn += 1;
            args.push_str(",\"received_before_send\":true");
        }
        let flow = message.map(|m| ('s', m)).or(backward.map(|b| ('f', b)));
        let name = format!("send to {}", m.peer);
        Ok(self.marker(cx, at.loc, at.ns, &name, &args, flow)?)
    }

    fn recv(&mut self, cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        let id = link.map_or("null".to_string(), |l| l.id.to_string());
        let from = match link {
            Some(l) => self.senders[l.sender as usize].clone(),
            None => m.peer.to_string(),
        };
        let latency = link.map_or("null".to_string(), |l| us(at.ns - l.send_ns));
        let args = format!(
            "\"from\":{from},\"tag\":{},\"bytes\":{},\"comm\":{},\"message\":{id},\"latency_us\":{latency}",
            m.tag,
            m.bytes,
            self.comm_name(m.comm)
        );
        let mut flow = link.map(|l| ('f', l.id));
        if let (None, Some(r), false) = (link, self.rank[at.loc as usize], self.repair) {
            // unlinked on unrepaired clocks: its send may come later
            let id = BACKWARD_BASE + self.backward_started;
            self.backward_started += 1;
            self.backward
                .entry((m.comm, m.peer, r, m.tag))
                .or_default()
                .push_back(id);
            flow = Some(('s', id));
        }
        let name = format!("recv from {}", m.peer);
        Ok(self.marker(cx, at.loc, at.ns, &name, &args, flow)?)
    }

    fn collective(
        &mut self,
        _cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        (sent, received): (u64, u64),
    ) -> Step {
        let (pid, tid) = (self.pid[at.loc as usize], self.tid[at.loc as usize]);
        let root = root.map_or("null".to_string(), |r| r.to_string());
        Ok(self.event(format_args!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"collective\",\"cat\":\"mpi-collective\",\"ts\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"comm\":{},\"root\":{root},\"bytes_sent\":{sent},\"bytes_received\":{received}}}}}",
            us(at.ns - self.origin),
            self.comm_name(comm)
        ))?)
    }

    fn acquire(&mut self, _cx: &Cx, at: At, object: u32, kind: u8, wait_ns: u64) -> Step {
        let (pid, tid) = (self.pid[at.loc as usize], self.tid[at.loc as usize]);
        let kind = SyncKind::from_u8(kind).as_str();
        Ok(self.event(format_args!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"acquire {kind} {object}\",\"cat\":\"sync\",\"ts\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"object\":{object},\"kind\":\"{kind}\",\"wait_us\":{}}}}}",
            us(at.ns - self.origin),
            us(wait_ns as i64)
        ))?)
    }

    fn release(&mut self, _cx: &Cx, at: At, object: u32, kind: u8) -> Step {
        let (pid, tid) = (self.pid[at.loc as usize], self.tid[at.loc as usize]);
        let kind = SyncKind::from_u8(kind).as_str();
        Ok(self.event(format_args!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"release {kind} {object}\",\"cat\":\"sync\",\"ts\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"object\":{object},\"kind\":\"{kind}\"}}}}",
            us(at.ns - self.origin)
        ))?)
    }

    /// Per traced event of its set, a counter step: its count from the call's entry, 0 from
    /// the region's exit ([`Writer::end_steps`]).
    fn counted(&mut self, _cx: &Cx, at: At, call: &CountedCall) -> Step {
        let l = at.loc as usize;
        for &(i, name) in call.events {
            let name = json_str(&format!("{name}{}", self.counter_suffix[l]));
            self.step(at.loc, call.entry_ns, &name, call.values[i])?;
            self.steps[l].push((call.region, name));
        }
        Ok(())
    }

    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        self.external_counters()?;
        summary.samples = self.sampled;
        let clock = &summary.clock;
        let mut other = serde_json::Map::new();
        other.insert("generator".into(), "plx export --format chrome".into());
        other.insert(
            "experiment".into(),
            merge.model().dir.display().to_string().into(),
        );
        other.insert(
            "time_origin_ns".into(),
            serde_json::Value::from(merge.origin_ns()),
        );
        if let Some(c) = clock {
            other.insert("clock_condition".into(), c.describe().into());
        }
        other.insert(
            "exits_without_enter".into(),
            serde_json::Value::from(self.unmatched_exits),
        );
        other.insert(
            "flows_on_thread_slices".into(),
            serde_json::Value::from(self.flows_on_slices),
        );
        // receives left before their send in the merged stream are not linked to it: on
        // unrepaired clocks each paired here with its later send is drawn all the same
        let backward = clock.as_ref().map_or(0, |c| c.violations_after);
        let without = backward.saturating_sub(self.backward_drawn);
        other.insert(
            "messages_without_flow".into(),
            serde_json::Value::from(without),
        );
        other.insert(
            "messages_received_before_send_drawn".into(),
            serde_json::Value::from(self.backward_drawn),
        );
        if let Some(c) = clock.as_ref().filter(|c| c.violations_after > 0) {
            let drawn = if self.backward_drawn > 0 {
                format!(
                    "the chrome export draws {} as a flow named '{BACKWARD_NAME}' from the receive to the send",
                    self.backward_drawn
                )
            } else {
                String::new()
            };
            let left = if without > 0 {
                format!(
                    "{}the chrome export draws {without} as send and receive slices without a flow arrow{}",
                    if drawn.is_empty() { "" } else { ", and " },
                    if c.repaired { "" } else { " (export without --no-clock-repair to draw them)" }
                )
            } else {
                String::new()
            };
            summary.warnings.push(plx_format::Warning {
                path: merge.model().dir.clone(),
                offset: None,
                kind: plx_format::WarningKind::Clock,
                message: format!(
                    "{} of {} matched message(s) are received before their send on the {} clocks: {drawn}{left}",
                    c.violations_after,
                    c.messages,
                    if c.repaired { "repaired" } else { "unrepaired" },
                ),
            });
        }
        self.out.write_all(b"\n],\n")?;
        self.write_samples()?;
        Ok(writeln!(
            self.out,
            "\"otherData\":{}}}",
            serde_json::Value::Object(other)
        )?)
    }
}
