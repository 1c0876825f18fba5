//! The merged trace as columns in memory — the events and messages tables of the Parquet export, and the matched enter/exit intervals — for the Python module's Arrow tables.
//!
//! Every column is a plain vector (and, where a value may be missing, a validity bitmap in
//! Arrow's layout: bit `i` of byte `i / 8`, least significant first, 1 present), so that a
//! reader hands the vectors to Arrow as they are. Names are not repeated per row: a name column
//! holds ids into a dictionary (`region_name` the region ids, into [`TraceColumns::regions`]).
//! The events are the Parquet export's rows (docs/exports/parquet.md), one per event of the
//! merged stream in its order, then an exit per call still open at the end.

use plx_analysis::merge::{ClockReport, Links, NeedsMerge};
use plx_analysis::{child_key, FastMap, GlobalMerge, MessageLink, RegionInfo, TraceLocation};
use plx_format::SyncKind;

use crate::driver::{drive, drive_alone, pool, At, Cx, Envelope, Place, Step};
use crate::rows::{location_id, location_ids, Details, Kind, RowWriter, Rows};
use crate::{ExportError, ExportInput, ExportSummary};

pub use crate::rows::{ColumnSpec, Ty, EVENT_COLUMNS, KINDS, MESSAGE_COLUMNS};

/// The values of a column and which are present.
#[derive(Debug, Default, Clone)]
pub struct Col<T> {
    /// One per row (a placeholder where the row has none).
    pub values: Vec<T>,
    /// `None` while every row has a value; else Arrow's validity bitmap.
    pub valid: Option<Vec<u8>>,
    /// Rows without a value.
    pub nulls: usize,
}

impl<T: Default + Copy> Col<T> {
    /// Appends a present value.
    #[inline]
    pub fn push(&mut self, v: T) {
        let i = self.values.len();
        self.values.push(v);
        if let Some(bits) = &mut self.valid {
            // the bitmap has a byte per 8 rows begun: a new one at a multiple of 8
            match bits.last_mut() {
                Some(last) if i % 8 != 0 => *last |= 1 << (i % 8),
                _ => bits.push(1),
            }
        }
    }

    /// Appends a value or a null.
    #[inline]
    pub fn opt(&mut self, v: Option<T>) {
        match v {
            Some(v) => self.push(v),
            None => self.null(),
        }
    }

    /// Room for `rows` rows in one allocation (a column of millions of rows is not moved to
    /// grow).
    pub fn reserve(&mut self, rows: usize) {
        self.values.reserve_exact(rows);
    }

    #[inline]
    fn null(&mut self) {
        let i = self.values.len();
        self.values.push(T::default());
        self.nulls += 1;
        match &mut self.valid {
            // bits past the last row are zero: a null's bit is one of them
            Some(bits) => {
                if i % 8 == 0 {
                    bits.push(0);
                }
            }
            None => self.first_null(i),
        }
    }

    /// The bitmap at the first null, row `i`: the rows before it present, room for as many
    /// rows as the values have.
    #[cold]
    fn first_null(&mut self, i: usize) {
        let mut b = Vec::with_capacity(self.values.capacity().div_ceil(8));
        b.resize(i / 8, 0xff);
        // the byte of row i: the rows before it in that byte present, row i not
        b.push((1u8 << (i % 8)) - 1);
        self.valid = Some(b);
    }
}

/// The events table (the Parquet export's `events.parquet` columns, names by id).
#[derive(Debug, Default)]
#[allow(missing_docs)] // the columns of docs/exports/parquet.md and docs/python.md
pub struct EventColumns {
    /// ns since [`TraceColumns::origin_ns`].
    pub time_ns: Col<i64>,
    /// Index into the merge's locations.
    pub location: Col<i32>,
    pub process: Col<i32>,
    pub rank: Col<i32>,
    pub thread: Col<i32>,
    /// Index into [`KINDS`].
    pub kind: Col<i32>,
    /// The event's region (an enter's or exit's own, else the innermost open one).
    pub region: Col<i32>,
    pub peer: Col<i32>,
    pub tag: Col<i32>,
    pub bytes: Col<i64>,
    pub bytes_recv: Col<i64>,
    pub comm: Col<i32>,
    pub root: Col<i32>,
    pub message: Col<i64>,
    /// Index into [`TraceColumns::user_events`].
    pub user_event: Col<i32>,
    pub value: Col<f64>,
    pub object: Col<i32>,
    /// [`SyncKind`] as a number (its name: `SyncKind::from_u8(k).as_str()`).
    pub sync_kind: Col<i32>,
    pub wait_ns: Col<i64>,
    /// 1: an exit that ends a call cut by its process's end (killed).
    pub truncated: Col<u8>,
}

/// One column of a table, as [`EVENT_COLUMNS`] and [`MESSAGE_COLUMNS`] type it.
#[derive(Debug)]
#[allow(missing_docs)]
pub enum Column {
    Bool(Col<u8>),
    I32(Col<i32>),
    I64(Col<i64>),
    F64(Col<f64>),
    /// A name column ([`Ty::Str`]): ids into the dictionary that [`Names`] says.
    Names(Col<i32>, Names),
    /// A name column whose ids are those of an earlier column of the table (by index), not
    /// repeated: `region_name` the names of `region`.
    NamesOf(usize, Names),
}

/// The dictionary of a name column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// [`KINDS`].
    Kinds,
    /// [`TraceColumns::regions`]' names.
    Regions,
    /// [`TraceColumns::user_events`].
    UserEvents,
    /// [`sync_kind_names`].
    SyncKinds,
}

impl Column {
    /// The type [`EVENT_COLUMNS`] and [`MESSAGE_COLUMNS`] give it.
    pub fn ty(&self) -> Ty {
        match self {
            Column::Bool(_) => Ty::Bool,
            Column::I32(_) => Ty::I32,
            Column::I64(_) => Ty::I64,
            Column::F64(_) => Ty::F64,
            Column::Names(..) | Column::NamesOf(..) => Ty::Str,
        }
    }
}

impl EventColumns {
    /// The columns in [`EVENT_COLUMNS`]' order (`region_name` the names of `region`'s ids).
    pub fn into_columns(self) -> Vec<Column> {
        use Column::*;
        let e = self;
        vec![
            I64(e.time_ns),
            I32(e.location),
            I32(e.process),
            I32(e.rank),
            I32(e.thread),
            Names(e.kind, self::Names::Kinds),
            I32(e.region),
            NamesOf(6, self::Names::Regions),
            I32(e.peer),
            I32(e.tag),
            I64(e.bytes),
            I64(e.bytes_recv),
            I32(e.comm),
            I32(e.root),
            I64(e.message),
            Names(e.user_event, self::Names::UserEvents),
            F64(e.value),
            I32(e.object),
            Names(e.sync_kind, self::Names::SyncKinds),
            I64(e.wait_ns),
            Bool(e.truncated),
        ]
    }
}

/// The messages table (`messages.parquet`'s columns).
#[derive(Debug, Default)]
#[allow(missing_docs)] // the columns of docs/exports/parquet.md and docs/python.md
pub struct MessageColumns {
    pub message: Col<i64>,
    pub send_ns: Col<i64>,
    pub recv_ns: Col<i64>,
    pub sender_location: Col<i32>,
    pub sender_process: Col<i32>,
    pub sender_rank: Col<i32>,
    pub sender_thread: Col<i32>,
    pub receiver_location: Col<i32>,
    pub receiver_process: Col<i32>,
    pub receiver_rank: Col<i32>,
    pub receiver_thread: Col<i32>,
    pub bytes: Col<i64>,
    pub tag: Col<i32>,
    pub comm: Col<i32>,
}

impl MessageColumns {
    /// The columns in [`MESSAGE_COLUMNS`]' order.
    pub fn into_columns(self) -> Vec<Column> {
        use Column::*;
        let m = self;
        vec![
            I64(m.message),
            I64(m.send_ns),
            I64(m.recv_ns),
            I32(m.sender_location),
            I32(m.sender_process),
            I32(m.sender_rank),
            I32(m.sender_thread),
            I32(m.receiver_location),
            I32(m.receiver_process),
            I32(m.receiver_rank),
            I32(m.receiver_thread),
            I64(m.bytes),
            I32(m.tag),
            I32(m.comm),
        ]
    }
}

/// One row per call: an enter matched with the exit that closed it (pipit's `match_events`),
/// in the order the calls ended.
#[derive(Debug, Default)]
#[allow(missing_docs)] // the columns of docs/exports/parquet.md and docs/python.md
pub struct IntervalColumns {
    pub location: Col<i32>,
    pub process: Col<i32>,
    pub rank: Col<i32>,
    pub thread: Col<i32>,
    /// Region id (into [`TraceColumns::regions`]).
    pub region: Col<i32>,
    /// Index into [`TraceColumns::callpaths`].
    pub callpath: Col<i32>,
    /// Calls open around it (0: a root call).
    pub depth: Col<i32>,
    /// ns since the origin.
    pub start_ns: Col<i64>,
    pub end_ns: Col<i64>,
    /// 1: ended by its process's end (killed), not by an exit.
    pub truncated: Col<u8>,
}

impl IntervalColumns {
    fn reserve(&mut self, rows: usize) {
        self.location.reserve(rows);
        self.process.reserve(rows);
        self.rank.reserve(rows);
        self.thread.reserve(rows);
        self.region.reserve(rows);
        self.callpath.reserve(rows);
        self.depth.reserve(rows);
        self.start_ns.reserve(rows);
        self.end_ns.reserve(rows);
        self.truncated.reserve(rows);
    }
}

/// A distinct callpath of the intervals: its parent's index (`-1` for a root) and its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct PathNode {
    pub parent: i32,
    pub region: u32,
}

/// The merged trace's tables.
#[derive(Debug, Default)]
#[allow(missing_docs)] // the columns of docs/exports/parquet.md and docs/python.md
pub struct TraceColumns {
    /// Global ns of time 0 of every `*_ns` column.
    pub origin_ns: i64,
    pub events: EventColumns,
    pub messages: MessageColumns,
    pub intervals: IntervalColumns,
    /// The callpaths of the intervals, a parent before its children.
    pub callpaths: Vec<PathNode>,
    /// Regions by id (name, kind, source file and line).
    pub regions: Vec<RegionInfo>,
    /// The merge's locations (the `location` columns index them).
    pub locations: Vec<TraceLocation>,
    /// User event names by id.
    pub user_events: Vec<String>,
    /// The events taken, the clock condition, the warnings.
    pub summary: ExportSummary,
}

/// The names of [`SyncKind`] by number (the `sync_kind` column's values name them).
pub fn sync_kind_names() -> Vec<&'static str> {
    (0..=u8::MAX)
        .map(SyncKind::from_u8)
        .map(SyncKind::as_str)
        .collect()
}

/// The tables a pass fills (the messages always: they are few).
#[derive(Debug, Clone, Copy)]
pub struct Wanted {
    /// [`TraceColumns::events`].
    pub events: bool,
    /// [`TraceColumns::intervals`] and [`TraceColumns::callpaths`].
    pub intervals: bool,
}

/// Reads `input`'s merged trace into columns: those `wanted` (the others stay empty).
///
/// The events alone (no intervals) are read without the merge where it would place no event
/// other than by its order: each thread decoded into its own columns on the machine's cores,
/// then put in the merge's order by a k-way merge of their (time, process, ticks, thread) and
/// gathered column by column in parallel, the messages linked in that order as the merge links
/// them — the same table. So are the intervals alone of one process without messages.
/// Otherwise (a receive the clock repair moves or whose send comes after it, a region without
/// a definition, damage: [`drive_alone`], [`Links`]) through the merge: [`trace_columns_merged`].
pub fn trace_columns(input: &ExportInput, wanted: Wanted) -> Result<TraceColumns, ExportError> {
    if wanted.events && !wanted.intervals {
        if let Some(t) = events_alone(input)? {
            return Ok(t);
        }
    }
    if wanted.intervals && !wanted.events {
        if let Some(t) = intervals_alone(input)? {
            return Ok(t);
        }
    }
    trace_columns_merged(input, wanted)
}

/// [`trace_columns`] through the merge always (the table the paths without it give): the
/// events into per-location parts, with the location of each row in the stream's order
/// ([`ByLocation`]), then gathered; the intervals into their columns as the calls end
/// ([`CallSink`]).
pub fn trace_columns_merged(
    input: &ExportInput,
    wanted: Wanted,
) -> Result<TraceColumns, ExportError> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = TraceColumns::default();
    if wanted.events {
        let mut sink = Rows(ByLocation::new(|origin_ns, words| {
            ThreadRows::new(origin_ns, words)
        }));
        out.summary = drive(input, &mut sink)?;
        let by = sink.0;
        let locs = location_ids(&by.locations);
        out.events = gather_events(workers, &by.order, &by.parts, &locs);
        by.into_names(&mut out);
    }
    if wanted.intervals {
        let mut sink = Rows(CallSink {
            out: TraceColumns::default(),
            locs: Vec::new(),
            open: Vec::new(),
            paths: FastMap::default(),
        });
        let summary = drive(input, &mut sink)?;
        let events = std::mem::take(&mut out.events);
        out = TraceColumns {
            events,
            summary,
            ..sink.0.out
        };
    }
    Ok(out)
}

/// A location's part of the merged stream's rows ([`ByLocation`]).
trait Part: RowWriter {
    /// Rows (events, or intervals) so far.
    fn rows(&self) -> usize;
    /// Rows it has room for.
    fn capacity(&self) -> usize;
}

/// The merged stream's events split by location: each location's rows in its own part (as a
/// thread decoded alone keeps them: [`ThreadRows`], 14 bytes a row), and per row the location
/// it belongs to, in the stream's order (4 bytes) — so that the table's columns are written
/// once, at their final size, by [`gather_events`], as without the merge, a column without a
/// value never written. The messages (few) go to their columns directly.
struct ByLocation<P, F> {
    make: F,
    origin_ns: i64,
    parts: Vec<P>,
    /// Per row, in the stream's order: its location.
    order: Vec<u32>,
    /// Per location: (process, rank, thread).
    locs: Vec<(i32, Option<i32>, i32)>,
    messages: MessageColumns,
    regions: Vec<RegionInfo>,
    locations: Vec<TraceLocation>,
    user_events: Vec<String>,
}

impl<P: Part, F: Fn(i64, u64) -> P> ByLocation<P, F> {
    fn new(make: F) -> Self {
        ByLocation {
            make,
            origin_ns: 0,
            parts: Vec::new(),
            order: Vec::new(),
            locs: Vec::new(),
            messages: MessageColumns::default(),
            regions: Vec::new(),
            locations: Vec::new(),
            user_events: Vec::new(),
        }
    }

    /// Appends location `loc`'s rows made since it had `before`, in the stream's order.
    #[inline]
    fn ordered(&mut self, loc: u32, before: usize) {
        let n = self.parts[loc as usize].rows() - before;
        self.order.extend(std::iter::repeat_n(loc, n));
    }

    /// Its messages, names and origin into `out`.
    fn into_names(self, out: &mut TraceColumns) {
        out.origin_ns = self.origin_ns;
        out.messages = self.messages;
        out.regions = self.regions;
        out.locations = self.locations;
        out.user_events = self.user_events;
    }
}

impl<P: Part, F: Fn(i64, u64) -> P> RowWriter for ByLocation<P, F> {
    const OUTPUT: &'static str = "trace columns";

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        self.origin_ns = merge.origin_ns();
        Ok(())
    }

    /// The location's part (room for a row per event word).
    fn location(&mut self, place: &Place) -> Step {
        let l = place.location;
        self.parts.push((self.make)(self.origin_ns, place.words()));
        self.locs.push(location_id(l));
        self.locations.push(l.clone());
        Ok(())
    }

    /// Room for every part's rows in the order.
    fn after_locations(&mut self) {
        let rows: usize = self.parts.iter().map(|p| p.capacity()).sum();
        self.order.reserve_exact(rows);
    }

    fn row(&mut self, cx: &Cx, at: At, kind: Kind, region: Option<u32>, d: &Details) -> Step {
        let part = &mut self.parts[at.loc as usize];
        let before = part.rows();
        part.row(cx, at, kind, region, d)?;
        self.ordered(at.loc, before);
        Ok(())
    }

    fn message(&mut self, at: At, m: Envelope, l: MessageLink) -> Step {
        push_message(&mut self.messages, &self.locs, self.origin_ns, at, m, l);
        Ok(())
    }

    /// The names the merge gathered (it may name regions it met without a definition).
    fn end(&mut self, merge: &GlobalMerge, _summary: &mut ExportSummary) -> Step {
        self.regions = merge.regions().all().to_vec();
        self.user_events = merge.user_events().to_vec();
        Ok(())
    }
}

/// A matched message's row.
fn push_message(
    c: &mut MessageColumns,
    locs: &[(i32, Option<i32>, i32)],
    origin: i64,
    at: At,
    m: Envelope,
    l: MessageLink,
) {
    let (process, rank, thread) = locs[at.loc as usize];
    let (sp, sr, st) = locs[l.sender as usize];
    c.message.push(l.id as i64);
    c.send_ns.push(l.send_ns - origin);
    c.recv_ns.push(at.ns - origin);
    c.sender_location.push(l.sender as i32);
    c.sender_process.push(sp);
    c.sender_rank.opt(sr);
    c.sender_thread.push(st);
    c.receiver_location.push(at.loc as i32);
    c.receiver_process.push(process);
    c.receiver_rank.opt(rank);
    c.receiver_thread.push(thread);
    c.bytes.push(m.bytes as i64);
    c.tag.push(m.tag);
    c.comm.opt(m.comm.map(|c| c as i32));
}

/// The events table from each thread decoded alone ([`trace_columns`]); `None` where the merge
/// is needed.
fn events_alone(input: &ExportInput) -> Result<Option<TraceColumns>, ExportError> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = drive_alone(input, workers, true, |alone, _, words| {
        Rows(ThreadRows::new(alone.origin_ns, words))
    })?;
    let Some(run) = run else {
        return Ok(None);
    };
    let mut parts = Vec::with_capacity(run.locations.len());
    let mut keys = Vec::with_capacity(run.locations.len());
    for l in run.locations {
        let rows = l.sink.0;
        // every event handed over made one row
        if l.ticks.len() > rows.time_ns.len() {
            return Ok(None);
        }
        keys.push((l.process, l.ticks, l.thread));
        parts.push(rows);
    }
    let rows: Vec<usize> = parts.iter().map(|p| p.time_ns.len()).collect();
    let keyed: Vec<usize> = keys.iter().map(|k| k.1.len()).collect();
    let key = |l: usize, i: usize| {
        let (process, ticks, thread) = &keys[l];
        ((parts[l].time_ns[i], *process, ticks[i], *thread), l as u32)
    };
    let order = merge_order(&rows, &keyed, key);
    let alone = run.alone;
    let locs = location_ids(&alone.locations);
    let mut summary = run.summary;
    let mut messages = MessageColumns::default();
    if let Some(links) = run.links {
        let key = |l: usize, i: usize| {
            let (process, ticks, thread) = &keys[l];
            ((parts[l].time_ns[i], *process, ticks[i], *thread), l as u32)
        };
        let linked = link_messages(&parts, &keyed, key, links, &locs, alone.origin_ns);
        let Ok((clock, m, ids)) = linked else {
            return Ok(None);
        };
        for (p, ids) in parts.iter_mut().zip(ids) {
            for (at, id) in ids {
                p.details[at].1.message = id;
            }
        }
        summary.clock = clock;
        messages = m;
    }
    drop(keys);
    let events = gather_events(workers, &order, &parts, &locs);
    drop(parts);
    Ok(Some(TraceColumns {
        origin_ns: alone.origin_ns,
        events,
        messages,
        regions: alone.regions.all().to_vec(),
        locations: alone.locations,
        user_events: alone.user_events,
        summary,
        ..TraceColumns::default()
    }))
}

/// Per location, (index into its details, the message number) of its matched sends and
/// receives ([`link_messages`]).
type MessageIds = Vec<Vec<(usize, Option<i64>)>>;

/// The messages of `parts`' rows linked as the merge links them ([`Links`]), the sends and
/// receives taken in the merged order (of each location's first `keyed` rows, by `key`): the
/// message number of each send and receive (for its row's details), a row per matched message
/// in the messages' columns (at its receive, in order), and the clock report; `Err` where the
/// merge would give another stream.
fn link_messages<K: Ord + Copy>(
    parts: &[ThreadRows],
    keyed: &[usize],
    key: impl Fn(usize, usize) -> (K, u32),
    mut links: Links,
    locs: &[(i32, Option<i32>, i32)],
    origin_ns: i64,
) -> Result<(Option<ClockReport>, MessageColumns, MessageIds), NeedsMerge> {
    let (send, recv) = (Kind::Send as u8, Kind::Recv as u8);
    // per location, its sends and receives: indices into its details (rows past the keyed
    // ones are exits of the calls open at the end, never a message)
    let ends: Vec<Vec<usize>> = parts
        .iter()
        .map(|p| {
            let is_message = |&(r, _): &(u32, Details)| {
                let k = p.kind[r as usize];
                k == send || k == recv
            };
            (0..p.details.len())
                .filter(|&j| is_message(&p.details[j]))
                .collect()
        })
        .collect();
    let n: Vec<usize> = ends.iter().map(Vec::len).collect();
    let beyond = |l: usize, e: &Vec<usize>| {
        e.last()
            .is_some_and(|&j| parts[l].details[j].0 as usize >= keyed[l])
    };
    if ends.iter().enumerate().any(|(l, e)| beyond(l, e)) {
        return Err(NeedsMerge);
    }
    let row = |l: usize, j: usize| parts[l].details[ends[l][j]].0 as usize;
    let mut next = vec![0usize; parts.len()];
    let mut ids: MessageIds = n.iter().map(|&n| Vec::with_capacity(n)).collect();
    let mut messages = MessageColumns::default();
    let mut failed = false;
    merge_runs(
        &n,
        |l, j| key(l, row(l, j)),
        |l, count| {
            for _ in 0..count {
                let j = next[l];
                next[l] += 1;
                if failed {
                    continue;
                }
                let (p, at) = (&parts[l], ends[l][j]);
                let (r, d) = p.details[at];
                let m = Envelope {
                    peer: d.peer.unwrap_or(0) as u32,
                    tag: d.tag.unwrap_or(0),
                    bytes: d.bytes.unwrap_or(0) as u64,
                    comm: d.comm,
                };
                let ns = p.time_ns[r as usize] + origin_ns;
                let who = (m.peer, m.tag, m.comm);
                let id = if p.kind[r as usize] == send {
                    links
                        .send(l as u32, ns, who)
                        .map(|id| id.map(|id| id as i64))
                } else {
                    links.recv(l as u32, ns, who).map(|link| {
                        link.map(|link| {
                            let at = At { loc: l as u32, ns };
                            push_message(&mut messages, locs, origin_ns, at, m, link);
                            link.id as i64
                        })
                    })
                };
                match id {
                    Ok(id) => ids[l].push((at, id)),
                    Err(NeedsMerge) => failed = true,
                }
            }
        },
    );
    if failed {
        return Err(NeedsMerge);
    }
    Ok((links.finish()?, messages, ids))
}

/// One location's rows decoded alone: only what varies from row to row (its location,
/// process, rank and thread are the location's), the details of the few rows that have any
/// apart. About 14 bytes a row, against the table's 104.
struct ThreadRows {
    origin_ns: i64,
    /// ns since the origin.
    time_ns: Vec<i64>,
    /// Index into [`KINDS`].
    kind: Vec<u8>,
    /// The region id, `-1` for none.
    region: Vec<i32>,
    truncated: Vec<u8>,
    /// (row, its details) of the rows with a detail column present, in row order.
    details: Vec<(u32, Details)>,
    /// Rows without a region.
    nulls: usize,
}

/// Whether a row has a value in any of the detail columns (`peer` to `wait_ns`).
fn has_details(d: &Details) -> bool {
    d.peer.is_some()
        || d.tag.is_some()
        || d.bytes.is_some()
        || d.bytes_recv.is_some()
        || d.comm.is_some()
        || d.root.is_some()
        || d.message.is_some()
        || d.user.is_some()
        || d.value.is_some()
        || d.object.is_some()
        || d.sync_kind.is_some()
        || d.wait_ns.is_some()
}

impl ThreadRows {
    /// A location's rows, room for those of `words` event words (a row per event word at
    /// most, plus its calls open at the end).
    fn new(origin_ns: i64, words: u64) -> ThreadRows {
        let rows = usize::try_from(words).unwrap_or(usize::MAX);
        ThreadRows {
            origin_ns,
            time_ns: Vec::with_capacity(rows),
            kind: Vec::with_capacity(rows),
            region: Vec::with_capacity(rows),
            truncated: Vec::with_capacity(rows),
            details: Vec::new(),
            nulls: 0,
        }
    }
}

impl Part for ThreadRows {
    fn rows(&self) -> usize {
        self.time_ns.len()
    }
    fn capacity(&self) -> usize {
        self.time_ns.capacity()
    }
}

impl RowWriter for ThreadRows {
    const OUTPUT: &'static str = "trace columns";

    fn begin(&mut self, _merge: &GlobalMerge) -> Step {
        Ok(())
    }

    fn row(&mut self, _cx: &Cx, at: At, kind: Kind, region: Option<u32>, d: &Details) -> Step {
        let row = self.time_ns.len() as u32;
        self.time_ns.push(at.ns - self.origin_ns);
        self.kind.push(kind as u8);
        self.region.push(region.map_or(-1, |r| r as i32));
        self.nulls += region.is_none() as usize;
        self.truncated.push(d.truncated as u8);
        if has_details(d) {
            self.details.push((row, *d));
        }
        Ok(())
    }

    /// Never called: a location is decoded alone only in a process without messages, and in
    /// the merged stream [`ByLocation`] keeps the messages.
    fn message(&mut self, _at: At, _m: Envelope, _link: MessageLink) -> Step {
        Ok(())
    }

    fn end(&mut self, _merge: &GlobalMerge, _summary: &mut ExportSummary) -> Step {
        Ok(())
    }
}

/// The merged order of the locations' rows: per row, the location it is the next row of. Of
/// location `l`'s `rows[l]` rows, the first `keyed[l]` are merged by `key(l, i)` ([`merge_runs`]);
/// the others follow them (its calls open at the end), location by location.
fn merge_order<K: Ord + Copy>(
    rows: &[usize],
    keyed: &[usize],
    key: impl Fn(usize, usize) -> (K, u32),
) -> Vec<u32> {
    let mut order = Vec::with_capacity(rows.iter().sum());
    merge_runs(keyed, key, |l, n| {
        order.extend(std::iter::repeat_n(l as u32, n));
    });
    for (l, (&n, &k)) in rows.iter().zip(keyed).enumerate() {
        order.extend(std::iter::repeat_n(l as u32, n - k));
    }
    order
}

/// A k-way merge of sorted lists: of list `l`'s `keyed[l]` items, item `i`'s key is `key(l, i)`
/// — (time, process, ticks, thread) and the location, as the merge's heap orders events —
/// handing `run(l, n)` each run of `n` items of one list that come next, in order. A list
/// whose next key is below every other list's head goes on without a heap operation.
fn merge_runs<K: Ord + Copy>(
    keyed: &[usize],
    key: impl Fn(usize, usize) -> (K, u32),
    mut run: impl FnMut(usize, usize),
) {
    use std::cmp::Reverse;
    use std::collections::binary_heap::{BinaryHeap, PeekMut};
    let mut at = vec![0usize; keyed.len()];
    let mut heap: BinaryHeap<Reverse<(K, u32)>> = (0..keyed.len())
        .filter(|&l| keyed[l] > 0)
        .map(|l| Reverse(key(l, 0)))
        .collect();
    loop {
        // the smallest key of the other lists: the greater of the top's children (a max-heap
        // of reversed keys)
        let h = heap.as_slice();
        let next = h
            .get(1..h.len().min(3))
            .and_then(|c| c.iter().max())
            .copied();
        let Some(mut top) = heap.peek_mut() else {
            break;
        };
        let l = top.0 .1 as usize;
        let from = at[l];
        let mut i = from + 1;
        while i < keyed[l] {
            let k = key(l, i);
            if next.is_some_and(|n| Reverse(k) < n) {
                top.0 = k;
                break;
            }
            i += 1;
        }
        run(l, i - from);
        at[l] = i;
        if i == keyed[l] {
            PeekMut::pop(top);
        }
    }
}

/// A column of `parts`' values in `order` (per row its location): `get(part, i)` part's row `i`.
fn gather<P, T: Copy>(order: &[u32], parts: &[P], get: impl Fn(&P, usize) -> T) -> Vec<T> {
    let mut at = vec![0usize; parts.len()];
    let mut values = Vec::with_capacity(order.len());
    for &l in order {
        let i = &mut at[l as usize];
        values.push(get(&parts[l as usize], *i));
        *i += 1;
    }
    values
}

/// The intervals from each thread decoded alone ([`trace_columns`]): each thread's calls
/// matched on its own stack, its callpaths numbered on its own; then the intervals put in the
/// merge's order (that of the events that ended them, innermost first) and the callpaths
/// numbered in the order the merge enters them first — the same table. `None` where the merge
/// is needed.
fn intervals_alone(input: &ExportInput) -> Result<Option<TraceColumns>, ExportError> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = drive_alone(input, workers, false, |alone, _, words| {
        Rows(ThreadCalls::new(alone.origin_ns, words))
    })?;
    let Some(run) = run else {
        return Ok(None);
    };
    let mut parts = Vec::with_capacity(run.locations.len());
    let mut keys = Vec::with_capacity(run.locations.len());
    for l in run.locations {
        let calls = l.sink.0;
        // every event handed over counted once
        if l.ticks.len() > calls.events as usize {
            return Ok(None);
        }
        keys.push((l.ticks, l.thread));
        parts.push(calls);
    }
    let key = |l: usize, event: u32| {
        let (ticks, thread) = &keys[l];
        (ticks[event as usize], *thread, l as u32)
    };
    // the callpaths in the order the merge enters them first: a parent before its children
    // (entered before them on their thread), a path met on two threads numbered once
    let mut firsts: Vec<(i64, u64, u32, u32, u32)> = Vec::new();
    for (l, p) in parts.iter().enumerate() {
        for (local, &event) in p.first.iter().enumerate() {
            let (ticks, thread, l) = key(l, event);
            firsts.push((p.first_ns[local], ticks, thread, l, local as u32));
        }
    }
    firsts.sort_unstable();
    let (callpaths, global) = global_callpaths(&parts, firsts.iter().map(|f| (f.3, f.4)));
    drop(firsts);
    // the intervals ended by an event in the events' merged order, then those ended at the
    // end, location by location
    let rows: Vec<usize> = parts.iter().map(|p| p.ended.len()).collect();
    let keyed: Vec<usize> = parts
        .iter()
        .zip(&keys)
        .map(|(p, k)| p.ended.partition_point(|&e| (e as usize) < k.0.len()))
        .collect();
    let order = merge_order(&rows, &keyed, |l, i| {
        let (ticks, thread, l) = key(l, parts[l].ended[i]);
        ((parts[l as usize].end_ns[i], ticks, thread), l)
    });
    drop(keys);
    let alone = run.alone;
    let locs = location_ids(&alone.locations);
    let intervals = gather_intervals(workers, &order, &parts, &global, &locs);
    drop(parts);
    Ok(Some(TraceColumns {
        origin_ns: alone.origin_ns,
        intervals,
        callpaths,
        regions: alone.regions.all().to_vec(),
        locations: alone.locations,
        user_events: alone.user_events,
        summary: run.summary,
        ..TraceColumns::default()
    }))
}

/// The callpaths of the locations' `parts` numbered globally, a parent before its children:
/// `firsts` names each local callpath (location, local id) in the order the merged stream
/// enters it first; a path met on two threads is numbered once. Returns the callpaths and, per
/// location, per local callpath, its global index.
fn global_callpaths(
    parts: &[ThreadCalls],
    firsts: impl Iterator<Item = (u32, u32)>,
) -> (Vec<PathNode>, Vec<Vec<i32>>) {
    let mut callpaths: Vec<PathNode> = Vec::new();
    let mut ids: FastMap<u64, i32> = FastMap::default();
    let mut global: Vec<Vec<i32>> = parts.iter().map(|p| vec![-1; p.paths.len()]).collect();
    for (l, local) in firsts {
        let node = parts[l as usize].paths[local as usize];
        let parent = match node.parent {
            -1 => -1,
            p => global[l as usize][p as usize],
        };
        let next = callpaths.len() as i32;
        let key = child_key((parent >= 0).then_some(parent as u32), node.region);
        let id = *ids.entry(key).or_insert(next);
        if id == next {
            callpaths.push(PathNode {
                parent,
                region: node.region,
            });
        }
        global[l as usize][local as usize] = id;
    }
    (callpaths, global)
}

/// One location's calls matched alone: its intervals in the order they ended, their callpaths
/// numbered on this location (local ids, into `paths`).
struct ThreadCalls {
    origin_ns: i64,
    /// Events handed over so far: the index of the next one in the location's ticks.
    events: u32,
    /// The open calls, innermost last (region, entry ns, local callpath).
    open: Vec<Open>,
    /// The location's callpaths, a parent before its children (`parent` a local id).
    paths: Vec<PathNode>,
    /// Per local callpath: the event that entered it first.
    first: Vec<u32>,
    /// Per local callpath: when it was entered first (ns since the origin).
    first_ns: Vec<i64>,
    /// Local callpath by (parent, region) ([`child_key`]).
    ids: FastMap<u64, i32>,
    region: Vec<i32>,
    path: Vec<i32>,
    depth: Vec<i32>,
    /// ns since the origin.
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    truncated: Vec<u8>,
    /// Per interval: the event that ended it (past the location's last: ended at the end).
    ended: Vec<u32>,
}

impl ThreadCalls {
    /// A location's calls, room for those of `words` event words (an interval per enter, an
    /// enter a word and its exit another).
    fn new(origin_ns: i64, words: u64) -> ThreadCalls {
        let calls = usize::try_from(words / 2).unwrap_or(usize::MAX);
        ThreadCalls {
            origin_ns,
            events: 0,
            open: Vec::new(),
            paths: Vec::new(),
            first: Vec::new(),
            first_ns: Vec::new(),
            ids: FastMap::default(),
            region: Vec::with_capacity(calls),
            path: Vec::with_capacity(calls),
            depth: Vec::with_capacity(calls),
            start_ns: Vec::with_capacity(calls),
            end_ns: Vec::with_capacity(calls),
            truncated: Vec::with_capacity(calls),
            ended: Vec::with_capacity(calls),
        }
    }
}

impl RowWriter for ThreadCalls {
    const OUTPUT: &'static str = "trace columns";

    fn begin(&mut self, _merge: &GlobalMerge) -> Step {
        Ok(())
    }

    fn row(&mut self, _cx: &Cx, _at: At, _kind: Kind, _region: Option<u32>, _d: &Details) -> Step {
        self.events += 1;
        Ok(())
    }

    /// Never called: a location is decoded alone only in a process without messages, and in
    /// the merged stream [`ByLocation`] keeps the messages.
    fn message(&mut self, _at: At, _m: Envelope, _link: MessageLink) -> Step {
        Ok(())
    }

    fn entered(&mut self, at: At, region: u32) {
        let parent = self.open.last().map_or(-1, |o| o.2);
        let next = self.paths.len() as i32;
        let key = child_key((parent >= 0).then_some(parent as u32), region);
        let path = *self.ids.entry(key).or_insert(next);
        if path == next {
            self.paths.push(PathNode { parent, region });
            self.first.push(self.events);
            self.first_ns.push(at.ns - self.origin_ns);
        }
        self.open.push((region, at.ns - self.origin_ns, path));
    }

    fn closed(&mut self, at: At, n: usize, truncated: bool) {
        for _ in 0..n {
            let Some((region, start, path)) = self.open.pop() else {
                break;
            };
            self.region.push(region as i32);
            self.path.push(path);
            self.depth.push(self.open.len() as i32);
            self.start_ns.push(start);
            self.end_ns.push(at.ns - self.origin_ns);
            self.truncated.push(truncated as u8);
            self.ended.push(self.events);
        }
    }

    fn end(&mut self, _merge: &GlobalMerge, _summary: &mut ExportSummary) -> Step {
        Ok(())
    }
}

/// The locations' intervals into one table in `order`, their callpaths made global (`global`:
/// per location, per local callpath), a column per job on `workers` threads.
fn gather_intervals(
    workers: usize,
    order: &[u32],
    parts: &[ThreadCalls],
    global: &[Vec<i32>],
    locs: &[(i32, Option<i32>, i32)],
) -> IntervalColumns {
    let n = order.len();
    let mut iv = IntervalColumns::default();
    let (location, process, rank, thread) = (
        &mut iv.location,
        &mut iv.process,
        &mut iv.rank,
        &mut iv.thread,
    );
    let (region, callpath, depth) = (&mut iv.region, &mut iv.callpath, &mut iv.depth);
    let (start_ns, end_ns, truncated) = (&mut iv.start_ns, &mut iv.end_ns, &mut iv.truncated);
    let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = vec![
        Box::new(move || *start_ns = col(gather(order, parts, |p, i| p.start_ns[i]))),
        Box::new(move || *end_ns = col(gather(order, parts, |p, i| p.end_ns[i]))),
        Box::new(move || *region = col(gather(order, parts, |p, i| p.region[i]))),
        Box::new(move || {
            let mut at = vec![0usize; parts.len()];
            *callpath = col(order
                .iter()
                .map(|&l| {
                    let i = &mut at[l as usize];
                    *i += 1;
                    global[l as usize][parts[l as usize].path[*i - 1] as usize]
                })
                .collect());
        }),
        Box::new(move || *depth = col(gather(order, parts, |p, i| p.depth[i]))),
        Box::new(move || *truncated = col(gather(order, parts, |p, i| p.truncated[i]))),
        Box::new(move || {
            *location = col(order.iter().map(|&l| l as i32).collect());
            *process = col(order.iter().map(|&l| locs[l as usize].0).collect());
            *thread = col(order.iter().map(|&l| locs[l as usize].2).collect());
            let mut c = Col::default();
            c.reserve(n);
            for &l in order {
                c.opt(locs[l as usize].1);
            }
            *rank = c;
        }),
    ];
    pool(workers, jobs, |job| job());
    iv
}

/// A column of `n` nulls: zeros allocated as such (pages the kernel maps on first touch, so
/// a column nothing is written to costs no memory).
fn nulls<T: Copy + Default>(n: usize) -> Col<T> {
    Col {
        values: vec![T::default(); n],
        valid: Some(vec![0; n.div_ceil(8)]),
        nulls: n,
    }
}

impl<T: Copy + Default> Col<T> {
    /// Row `row` of a column made by [`nulls`] given its value.
    #[inline]
    fn set(&mut self, row: usize, v: Option<T>) {
        if let (Some(v), Some(bits)) = (v, &mut self.valid) {
            self.values[row] = v;
            bits[row / 8] |= 1 << (row % 8);
            self.nulls -= 1;
        }
    }
}

/// The detail columns (`peer` to `wait_ns`) of the rows in `order`: nulls but for the rows
/// that `parts`' details name.
fn scatter_details(order: &[u32], parts: &[ThreadRows], e: &mut EventColumns) {
    let n = order.len();
    e.peer = nulls(n);
    e.tag = nulls(n);
    e.bytes = nulls(n);
    e.bytes_recv = nulls(n);
    e.comm = nulls(n);
    e.root = nulls(n);
    e.message = nulls(n);
    e.user_event = nulls(n);
    e.value = nulls(n);
    e.object = nulls(n);
    e.sync_kind = nulls(n);
    e.wait_ns = nulls(n);
    if parts.iter().all(|p| p.details.is_empty()) {
        return;
    }
    let (mut at, mut next) = (vec![0usize; parts.len()], vec![0usize; parts.len()]);
    for (row, &l) in order.iter().enumerate() {
        let l = l as usize;
        let (i, p) = (at[l], &parts[l]);
        at[l] += 1;
        let Some(&(r, d)) = p.details.get(next[l]) else {
            continue;
        };
        if r as usize != i {
            continue;
        }
        next[l] += 1;
        e.peer.set(row, d.peer);
        e.tag.set(row, d.tag);
        e.bytes.set(row, d.bytes);
        e.bytes_recv.set(row, d.bytes_recv);
        e.comm.set(row, d.comm.map(|c| c as i32));
        e.root.set(row, d.root);
        e.message.set(row, d.message);
        e.user_event.set(row, d.user.map(|u| u as i32));
        e.value.set(row, d.value);
        e.object.set(row, d.object);
        e.sync_kind.set(row, d.sync_kind.map(i32::from));
        e.wait_ns.set(row, d.wait_ns);
    }
}

/// The locations' rows into one table in `order`, each column written once at its final
/// size, a column (or group) per job on `workers` threads.
fn gather_events(
    workers: usize,
    order: &[u32],
    parts: &[ThreadRows],
    locs: &[(i32, Option<i32>, i32)],
) -> EventColumns {
    let n = order.len();
    let mut e = EventColumns::default();
    let (time_ns, kind, region, truncated) =
        (&mut e.time_ns, &mut e.kind, &mut e.region, &mut e.truncated);
    let (location, process, rank, thread) =
        (&mut e.location, &mut e.process, &mut e.rank, &mut e.thread);
    let mut details = EventColumns::default();
    let d = &mut details;
    let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = vec![
        Box::new(move || *time_ns = col(gather(order, parts, |p, i| p.time_ns[i]))),
        Box::new(move || {
            let nulls_in: usize = parts.iter().map(|p| p.nulls).sum();
            let values = gather(order, parts, |p, i| p.region[i].max(0));
            *region = if nulls_in == 0 {
                col(values)
            } else {
                let mut bits = vec![0u8; n.div_ceil(8)];
                let present = gather(order, parts, |p, i| p.region[i] >= 0);
                for (row, &p) in present.iter().enumerate() {
                    bits[row / 8] |= (p as u8) << (row % 8);
                }
                Col {
                    values,
                    valid: Some(bits),
                    nulls: nulls_in,
                }
            };
        }),
        Box::new(move || *kind = col(gather(order, parts, |p, i| p.kind[i] as i32))),
        Box::new(move || *truncated = col(gather(order, parts, |p, i| p.truncated[i]))),
        Box::new(move || {
            *location = col(order.iter().map(|&l| l as i32).collect());
            *process = col(order.iter().map(|&l| locs[l as usize].0).collect());
            *thread = col(order.iter().map(|&l| locs[l as usize].2).collect());
            *rank = if locs.iter().all(|l| l.1.is_none()) {
                nulls(n)
            } else {
                let mut c = Col::default();
                c.reserve(n);
                for &l in order {
                    c.opt(locs[l as usize].1);
                }
                c
            };
        }),
        Box::new(move || scatter_details(order, parts, d)),
    ];
    pool(workers, jobs, |job| job());
    e.peer = details.peer;
    e.tag = details.tag;
    e.bytes = details.bytes;
    e.bytes_recv = details.bytes_recv;
    e.comm = details.comm;
    e.root = details.root;
    e.message = details.message;
    e.user_event = details.user_event;
    e.value = details.value;
    e.object = details.object;
    e.sync_kind = details.sync_kind;
    e.wait_ns = details.wait_ns;
    e
}

/// A column of present values.
fn col<T>(values: Vec<T>) -> Col<T> {
    Col {
        values,
        valid: None,
        nulls: 0,
    }
}

/// A call open at a location: its region, entry ns and callpath index.
type Open = (u32, i64, i32);

/// The intervals through the merge, written into their columns as the calls end (every
/// interval column has a value in every row: nothing to leave unwritten, so no parts to gather).
struct CallSink {
    out: TraceColumns,
    /// Per location: (process, rank, thread).
    locs: Vec<(i32, Option<i32>, i32)>,
    /// Per location, its open calls, innermost last.
    open: Vec<Vec<Open>>,
    /// Callpath index by (parent callpath, region) ([`child_key`]).
    paths: FastMap<u64, i32>,
}

impl RowWriter for CallSink {
    const OUTPUT: &'static str = "trace columns";

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        self.out.origin_ns = merge.origin_ns();
        // an interval per enter, an enter a word and its exit another: every column in one
        // allocation
        let words: u64 = merge
            .model()
            .processes
            .iter()
            .filter(|p| p.measured)
            .filter_map(|p| p.trace.as_ref())
            .flat_map(|t| t.words_per_thread.values())
            .sum();
        let rows = usize::try_from(words).unwrap_or(usize::MAX);
        self.out.intervals.reserve(rows / 2);
        Ok(())
    }

    fn location(&mut self, place: &Place) -> Step {
        self.locs.push(location_id(place.location));
        self.open.push(Vec::new());
        self.out.locations.push(place.location.clone());
        Ok(())
    }

    fn row(&mut self, _cx: &Cx, _at: At, _kind: Kind, _region: Option<u32>, _d: &Details) -> Step {
        Ok(())
    }

    fn message(&mut self, at: At, m: Envelope, l: MessageLink) -> Step {
        let origin = self.out.origin_ns;
        push_message(&mut self.out.messages, &self.locs, origin, at, m, l);
        Ok(())
    }

    /// The call's callpath (made at its first call), on the location's stack.
    fn entered(&mut self, at: At, region: u32) {
        let stack = &self.open[at.loc as usize];
        let node = PathNode {
            parent: stack.last().map_or(-1, |o| o.2),
            region,
        };
        let next = self.out.callpaths.len() as i32;
        let key = child_key((node.parent >= 0).then_some(node.parent as u32), region);
        let path = *self.paths.entry(key).or_insert(next);
        if path == next {
            self.out.callpaths.push(node);
        }
        self.open[at.loc as usize].push((region, at.ns, path));
    }

    /// An interval per call ended, innermost first.
    fn closed(&mut self, at: At, n: usize, truncated: bool) {
        let (process, rank, thread) = self.locs[at.loc as usize];
        let stack = &mut self.open[at.loc as usize];
        let iv = &mut self.out.intervals;
        for _ in 0..n {
            let Some((region, start, path)) = stack.pop() else {
                break;
            };
            iv.location.push(at.loc as i32);
            iv.process.push(process);
            iv.rank.opt(rank);
            iv.thread.push(thread);
            iv.region.push(region as i32);
            iv.callpath.push(path);
            iv.depth.push(stack.len() as i32);
            iv.start_ns.push(start - self.out.origin_ns);
            iv.end_ns.push(at.ns - self.out.origin_ns);
            iv.truncated.push(truncated as u8);
        }
    }

    /// The names the merge gathered (it may name regions it met without a definition).
    fn end(&mut self, merge: &GlobalMerge, _summary: &mut ExportSummary) -> Step {
        self.out.regions = merge.regions().all().to_vec();
        self.out.user_events = merge.user_events().to_vec();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns in memory are the declared ones, in order, of the declared types (a name
    /// column a dictionary), every one there.
    #[test]
    fn the_columns_in_memory_are_the_declared_ones() {
        let types = |c: Vec<Column>| c.iter().map(Column::ty).collect::<Vec<_>>();
        let declared = |s: &[ColumnSpec]| s.iter().map(|c| c.1).collect::<Vec<_>>();
        assert_eq!(
            types(EventColumns::default().into_columns()),
            declared(EVENT_COLUMNS)
        );
        assert_eq!(
            types(MessageColumns::default().into_columns()),
            declared(MESSAGE_COLUMNS)
        );
        assert_eq!(EVENT_COLUMNS.len(), 21);
        assert_eq!(MESSAGE_COLUMNS.len(), 14);
    }

    #[test]
    fn a_validity_bitmap_made_at_a_first_null_has_no_bits_past_the_rows() {
        let mut c = Col::<i32>::default();
        for i in 0..9 {
            c.push(i);
        }
        assert!(c.valid.is_none());
        c.opt(None);
        c.opt(Some(10));
        c.opt(None);
        assert_eq!(c.values, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 0]);
        assert_eq!(c.nulls, 2);
        // rows 0..8 present, 9 null, 10 present, 11 null: least significant bit first
        assert_eq!(c.valid, Some(vec![0xff, 0b0000_0101]));
    }

    #[test]
    fn a_first_null_at_a_byte_boundary_then_values_into_the_next_byte() {
        let mut c = Col::<i64>::default();
        for i in 0..8 {
            c.push(i);
        }
        c.opt(None);
        for i in 9..17 {
            c.push(i);
        }
        assert_eq!(c.nulls, 1);
        // rows 0..7 present, 8 null, 9..15 present, 16 present (a third byte)
        assert_eq!(c.valid, Some(vec![0xff, 0b1111_1110, 0b0000_0001]));
    }

    #[test]
    fn a_column_of_nulls_only() {
        let mut c = Col::<f64>::default();
        for _ in 0..17 {
            c.opt(None);
        }
        assert_eq!(c.nulls, 17);
        assert_eq!(c.valid, Some(vec![0, 0, 0]));
    }
}

#[cfg(test)]
mod alone_tests {
    use super::*;
    use crate::ExportOptions;
    use plx_analysis::MergeOptions;
    use plx_format::synth_mpi::{MpiWorld, Msg};
    use plx_format::NONE_U32;

    /// Three traced ranks exchanging four messages (one from rank 0's second thread by
    /// MPI_Isend/MPI_Wait), then a barrier every rank leaves at 41,000 ns (a tie between
    /// processes); the first message received at `first_recv` ns, sent at 10,000.
    fn world(d: &std::path::Path, first_recv: u64) {
        let mut w = MpiWorld::new(3);
        w.trace = true;
        w.message(&Msg::new((0, 0), (1, 0), 8, 10_000, first_recv).durations(100, 500));
        w.message(
            &Msg::new((1, 0), (2, 0), 64, 12_000, 13_500)
                .tag(5)
                .durations(100, 500),
        );
        w.message(
            &Msg::new((0, 1), (2, 0), 1024, 15_000, 18_000)
                .durations(200, 1000)
                .routines("MPI_Isend", "MPI_Wait"),
        );
        w.message(&Msg::new((1, 0), (0, 0), 8, 20_000, 30_000).durations(100, 500));
        for r in 0..3u32 {
            let at = 40_000 + 10 * r as u64;
            w.collective((r, 0), "MPI_Barrier", 0, NONE_U32, 0, 0, at, 41_000);
        }
        w.write(d).unwrap();
    }

    fn input(d: &std::path::Path, repair_clock: bool) -> ExportInput {
        let merge = MergeOptions {
            repair_clock,
            min_latency_ns: None,
        };
        let options = ExportOptions {
            merge,
            ..ExportOptions::default()
        };
        ExportInput::open(d, options, false, true).unwrap()
    }

    /// The k-way merge of sorted lists (one, two, three, five lists: the heap's top with one
    /// child, two children, a deeper heap) gives every item in key order.
    #[test]
    fn merge_runs_gives_the_items_of_sorted_lists_in_key_order() {
        let lists: Vec<Vec<i64>> = vec![
            vec![1, 2, 3, 10, 11, 40],
            vec![4, 5, 12, 13, 14, 15, 16],
            vec![0, 6, 7, 8, 9, 41, 42],
            vec![17],
            vec![18, 19, 20, 43],
        ];
        for k in [1, 2, 3, 5] {
            let keyed: Vec<usize> = lists[..k].iter().map(Vec::len).collect();
            let order = merge_order(&keyed, &keyed, |l, i| (lists[l][i], l as u32));
            let mut at = vec![0; k];
            let merged: Vec<i64> = order
                .iter()
                .map(|&l| {
                    at[l as usize] += 1;
                    lists[l as usize][at[l as usize] - 1]
                })
                .collect();
            let mut sorted: Vec<i64> = lists[..k].concat();
            sorted.sort();
            assert_eq!(merged, sorted, "{k} lists");
        }
    }

    const EVENTS: Wanted = Wanted {
        events: true,
        intervals: false,
    };

    /// The events, messages, locations and clock report, as text to compare.
    fn table(t: &TraceColumns) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}",
            t.events, t.messages, t.locations, t.summary.clock, t.summary.warnings, t.origin_ns
        )
    }

    /// Several processes whose messages the merge places by their time alone: the events are
    /// read without the merge, the same table as the merge's (messages numbered and linked).
    #[test]
    fn the_events_of_ranks_with_messages_are_read_without_the_merge_the_same() {
        let d = plx_format::test_dir::tmp("alone-ranks");
        world(&d, 11_500);
        let input = input(&d, true);
        let alone = events_alone(&input)
            .unwrap()
            .expect("read without the merge");
        let merged = trace_columns_merged(&input, EVENTS).unwrap();
        assert_eq!(table(&alone), table(&merged));
        assert_eq!(alone.events.time_ns.values.len(), 41);
        assert_eq!(alone.messages.message.values, [0, 1, 2, 3]);
        assert_eq!(
            alone.messages.recv_ns.values,
            [11_500, 13_500, 18_000, 30_000]
        );
        let clock = alone.summary.clock.expect("a clock report");
        assert_eq!((clock.messages, clock.shifted_receives), (4, 0));
    }

    /// A receive before its send: repaired (moved with its process's later events), or not
    /// repaired (before its send, unlinked); a receive at its send's very time, which the repair
    /// moves by the minimum latency and which stays without it: the merge's table, in each.
    #[test]
    fn a_receive_the_merge_moves_or_leaves_before_its_send_takes_the_merge() {
        for (first_recv, repair, alone, shifted) in [
            (9_000, true, false, 2),
            (9_000, false, false, 0),
            (10_000, true, false, 2),
            (10_000, false, true, 0),
        ] {
            let d = plx_format::test_dir::tmp("alone-repair");
            world(&d, first_recv);
            let input = input(&d, repair);
            let case = format!("received at {first_recv}, repair {repair}");
            assert_eq!(events_alone(&input).unwrap().is_some(), alone, "{case}");
            let t = trace_columns(&input, EVENTS).unwrap();
            let merged = trace_columns_merged(&input, EVENTS).unwrap();
            assert_eq!(table(&t), table(&merged), "{case}");
            let clock = t.summary.clock.expect("a clock report");
            assert_eq!(clock.shifted_receives, shifted, "{case}");
        }
    }
}
