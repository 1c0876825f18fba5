//! `parquet`: the merged trace as Parquet tables — events, regions, locations, communicators, matched messages, wait states — for pandas, Polars, DuckDB, Spark.
//!
//! A directory of nine files (docs/exports/parquet.md): `events.parquet` (one row per event of
//! the merged stream, in its order, then an exit per call still open at the end, `truncated`
//! where its process was killed), `messages.parquet` (one row per matched message, in the
//! order of the receives), `locations.parquet`, `regions.parquet`, `comms.parquet`,
//! `waits.parquet` and `wait_causes.parquet` (`plx waits`' rows and `plx waits --causes`', from
//! a second replay), `samples.parquet` (a row per callpath that call-stack samples were taken
//! in, [`crate::samples`]) and `sample_times.parquet`. Events and messages are written
//! while the merge streams, in row groups of [`ROW_GROUP`] rows, so memory stays bounded
//! whatever the trace's size; the locations table gets its rows as the driver hands the
//! locations over, before the first event, the other definition tables are written at the end
//! (the merge may name regions it meets without a definition).
//!
//! Parquet's low-level column writer is used (no Arrow, [`table`]): every column is a plain
//! physical type (`BOOLEAN`, `INT32`, `INT64`, `DOUBLE`, `BYTE_ARRAY` UTF-8 strings), optional
//! where a value does not apply to every row; Snappy compression, dictionary encoding (which
//! keeps repeated names small).

mod table;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use parquet::data_type::ByteArray;
use parquet::file::metadata::KeyValue;

use plx_analysis::{GlobalMerge, MessageLink, Model, WaitAnalysis, Window};
use plx_format::SyncKind;

use crate::driver::{drive, At, Cx, Envelope, Place, Step};
use crate::rows::{
    location_id, Details, LocationId, Kind, RowWriter, Rows, EVENT_COLUMNS, KINDS, MESSAGE_COLUMNS,
};
use crate::samples::LocationSamples;
use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Partition, Target};
use table::{ColumnSpec, Layout, Table, Ty};

/// The `parquet` format (docs/exports/parquet.md).
pub struct Parquet;

/// Rows per row group of the streamed tables (events, messages): what is held in memory.
pub const ROW_GROUP: usize = 1 << 18;

/// Version of the table layout, in every file's key-value metadata (`plx.schema`).
pub const SCHEMA_VERSION: &str = "4";

impl Exporter for Parquet {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn about(&self) -> &'static str {
        "Parquet tables (events, messages, locations, regions, comms, waits, wait causes, samples) for pandas, \
         Polars, DuckDB"
    }

    fn output(&self) -> OutputKind {
        OutputKind::Directory
    }

    fn partitions(&self) -> bool {
        true
    }

    /// The regions table's `file` and `line`, as the OTF2 export's region definitions have them.
    fn needs_sources(&self) -> bool {
        true
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let dir = match target {
            Target::Directory(d) => d,
            Target::Stream(_) => {
                return Err(ExportError::Usage(
                    "the parquet format writes a directory: give one with -o DIR".into(),
                ))
            }
        };
        write_tables(input, dir)
    }
}

/// Writes the nine tables of `input`'s merged trace under `dir` (which exists): one file per
/// table, or with [`ExportOptions::partition`](crate::ExportOptions::partition) a dataset
/// partitioned by rank.
pub fn write_tables(input: &ExportInput, dir: &Path) -> Result<ExportSummary, ExportError> {
    let mut sink = Rows(ParquetSink {
        dir,
        by_rank: input.options.partition == Some(Partition::Rank),
        meta: Vec::new(),
        tables: None,
        origin: 0,
        kinds: KINDS.iter().map(|k| ByteArray::from(*k)).collect(),
        region_names: Vec::new(),
        user_names: Vec::new(),
        locs: Vec::new(),
        locations: None,
        model: &input.model,
        samples: Vec::new(),
    });
    let mut summary = drive(input, &mut sink)?;
    summary.files.extend(write_waits(input, dir, &sink.0.meta)?);
    Ok(summary)
}

/// Writes a row per location before the events, a row per event (and per matched message) as
/// the merge streams; the other definition tables at the end.
struct ParquetSink<'a> {
    dir: &'a Path,
    by_rank: bool,
    meta: Vec<KeyValue>,
    /// The events and messages tables, from [`RowWriter::begin`].
    tables: Option<(Table, Table)>,
    origin: i64,
    /// The `kind` column's values, and region and user event names, as ByteArrays made once
    /// (cloning one shares its bytes).
    kinds: Vec<ByteArray>,
    region_names: Vec<ByteArray>,
    user_names: Vec<ByteArray>,
    /// Per location: (process, rank, thread).
    locs: Vec<LocationId>,
    /// The locations table, a row per [`RowWriter::location`].
    locations: Option<Table>,
    model: &'a Model,
    /// Per location: its call-stack samples, written at the end.
    samples: Vec<Option<LocationSamples<'a>>>,
}

impl ParquetSink<'_> {
    fn layout(&self, key: Option<(&'static str, usize)>) -> Layout {
        match key {
            Some(k) if self.by_rank => Layout::ByKey(k),
            _ => Layout::Single,
        }
    }

    fn tables(&mut self) -> &mut (Table, Table) {
        self.tables.as_mut().expect("begin() made the tables")
    }

    /// The name of user event `event`, made once.
    fn user_name(&mut self, cx: &Cx, event: u32) -> ByteArray {
        while self.user_names.len() <= event as usize {
            let i = self.user_names.len();
            self.user_names.push(ByteArray::from(cx.user_events()[i].as_str()));
        }
        self.user_names[event as usize].clone()
    }
}

impl RowWriter for ParquetSink<'_> {
    const OUTPUT: &'static str = "parquet output";

    /// A row of the events table: the event of `kind` about `region` (its own for an enter or
    /// exit, else the innermost open one).
    fn row(&mut self, cx: &Cx, at: At, kind: Kind, region: Option<u32>, d: &Details) -> Step {
        let region_name = region.map(|r| {
            while self.region_names.len() <= r as usize {
                let i = self.region_names.len() as u32;
                self.region_names.push(ByteArray::from(cx.regions().name(i)));
            }
            self.region_names[r as usize].clone()
        });
        let user = d.user.map(|u| self.user_name(cx, u));
        let (process, rank, thread) = self.locs[at.loc as usize];
        let (t, kind) = (at.ns - self.origin, self.kinds[kind as usize].clone());
        let events = &mut self.tables().0;
        let c = events.cols(rank);
        c[0].val(t);
        c[1].val(at.loc as i32);
        c[2].val(process);
        c[3].opt(rank);
        c[4].val(thread);
        c[5].val(kind);
        c[6].opt(region.map(|r| r as i32));
        c[7].opt(region_name);
        c[8].opt(d.peer);
        c[9].opt(d.tag);
        c[10].opt(d.bytes);
        c[11].opt(d.bytes_recv);
        c[12].opt(d.comm.map(|c| c as i32));
        c[13].opt(d.root);
        c[14].opt(d.message);
        c[15].opt(user);
        c[16].opt(d.value);
        c[17].opt(d.object);
        c[18].opt(d.sync_kind.map(|k| ByteArray::from(SyncKind::from_u8(k).as_str())));
        c[19].opt(d.wait_ns);
        c[20].val(d.truncated);
        Ok(events.row(rank)?)
    }

    /// A row of the messages table: the matched message `link` received at `at`.
    fn message(&mut self, at: At, m: Envelope, link: MessageLink) -> Step {
        let (process, rank, thread) = self.locs[at.loc as usize];
        let (sp, sr, st) = self.locs[link.sender as usize];
        let origin = self.origin;
        let messages = &mut self.tables().1;
        let c = messages.cols(rank);
        c[0].val(link.id as i64);
        c[1].val(link.send_ns - origin);
        c[2].val(at.ns - origin);
        c[3].val(link.sender as i32);
        c[4].val(sp);
        c[5].opt(sr);
        c[6].val(st);
        c[7].val(at.loc as i32);
        c[8].val(process);
        c[9].opt(rank);
        c[10].val(thread);
        c[11].val(m.bytes as i64);
        c[12].val(m.tag);
        c[13].opt(m.comm.map(|c| c as i32));
        Ok(messages.row(rank)?)
    }

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        if self.by_rank && !merge.model().has_mpi() {
            return Err(ExportError::Usage(format!(
                "--partition rank: {} is not an MPI experiment (it has no ranks)",
                merge.model().dir.display()
            ))
            .into());
        }
        self.origin = merge.origin_ns();
        self.meta = common_metadata(merge);
        let (dir, meta) = (self.dir, &self.meta);
        let events = Table::create(dir, "events", EVENT_COLUMNS, meta, self.layout(EVENT_KEY))?;
        let messages =
            Table::create(dir, "messages", MESSAGE_COLUMNS, meta, self.layout(MESSAGE_KEY))?;
        self.tables = Some((events, messages));
        let layout = self.layout(LOCATION_KEY);
        self.locations = Some(Table::create(dir, "locations", LOCATION_COLUMNS, meta, layout)?);
        Ok(())
    }

    /// A row of the locations table.
    fn location(&mut self, place: &Place) -> Step {
        let (i, l, p) = (place.index, place.location, place.process);
        self.locs.push(location_id(l));
        self.samples.push(place.samples(self.model));
        let t = self.locations.as_mut().expect("begin() made the tables");
        let c = t.cols(l.rank.map(|r| r as i32));
        c[0].val(i as i32);
        c[1].val(ByteArray::from(l.label().as_str()));
        c[2].val(l.process as i32);
        c[3].opt(l.rank.map(|r| r as i32));
        c[4].val(ByteArray::from(l.host.as_str()));
        c[5].val(l.pid as i64);
        c[6].val(l.image as i32);
        c[7].val(ByteArray::from(p.executable.as_str()));
        c[8].val(l.thread as i32);
        c[9].val(ByteArray::from(l.name.as_str()));
        c[10].opt(p.start_realtime_ns.map(|n| n as i64));
        Ok(t.row(l.rank.map(|r| r as i32))?)
    }

    /// The streamed tables' last rows and footers, then the definition tables.
    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        let (events, messages) = self.tables.take().expect("begin() made the tables");
        let (dir, meta) = (self.dir, &self.meta);
        summary.files = events.finish()?;
        summary.files.extend(messages.finish()?);
        let files = &mut summary.files;
        let locations = self.locations.take().expect("begin() made the tables");
        files.extend(locations.finish()?);
        files.extend(write_regions(merge, dir, meta, self.layout(None))?);
        files.extend(write_comms(merge, dir, meta, self.layout(None))?);
        // one row per sampled callpath, and one per stamped sample: one file each also when
        // partitioned
        let at = (&self.samples[..], &self.locs[..]);
        let (sample_files, samples) = write_samples(merge, at, dir, meta, Layout::Single)?;
        files.extend(sample_files);
        summary.samples = samples;
        Ok(())
    }
}


/// The partition key of each table partitioned by rank (`None`: a table of the whole run).
const EVENT_KEY: Option<(&str, usize)> = Some(("rank", 3));
const MESSAGE_KEY: Option<(&str, usize)> = Some(("receiver_rank", 9));
const LOCATION_KEY: Option<(&str, usize)> = Some(("rank", 3));

const LOCATION_COLUMNS: &[ColumnSpec] = &[
    ("location", Ty::I32, false),
    ("label", Ty::Str, false),
    ("process", Ty::I32, false),
    ("rank", Ty::I32, true),
    ("host", Ty::Str, false),
    ("pid", Ty::I64, false),
    ("image", Ty::I32, false),
    ("executable", Ty::Str, false),
    ("thread", Ty::I32, false),
    ("thread_name", Ty::Str, false),
    ("start_realtime_ns", Ty::I64, true),
];

const REGION_COLUMNS: &[ColumnSpec] = &[
    ("region", Ty::I32, false),
    ("name", Ty::Str, false),
    ("kind", Ty::Str, false),
    ("file", Ty::Str, false),
    ("line", Ty::I32, false),
];

const COMM_COLUMNS: &[ColumnSpec] = &[
    ("comm", Ty::I32, false),
    ("name", Ty::Str, false),
    ("predefined", Ty::I32, true),
    ("size", Ty::I32, false),
    ("ranks", Ty::Str, false),
    ("ordinal", Ty::I32, false),
];

const SAMPLE_COLUMNS: &[ColumnSpec] = &[
    ("location", Ty::I32, false),
    ("process", Ty::I32, false),
    ("rank", Ty::I32, true),
    ("thread", Ty::I32, false),
    ("node", Ty::I32, false),
    ("parent", Ty::I32, true),
    ("depth", Ty::I32, false),
    ("region", Ty::I32, false),
    ("region_name", Ty::Str, false),
    ("callpath", Ty::Str, false),
    ("estimated", Ty::Bool, false),
    ("samples", Ty::I64, false),
    ("self_samples", Ty::I64, false),
    ("period_ns", Ty::I64, false),
    ("estimated_s", Ty::F64, false),
    ("estimated_self_s", Ty::F64, false),
];

/// `sample_times.parquet`: a row per stamped sample (a trace), apart from the callpath rows of
/// `samples.parquet` so that no sum over a file counts a sample twice.
const SAMPLE_TIME_COLUMNS: &[ColumnSpec] = &[
    ("location", Ty::I32, false),
    ("process", Ty::I32, false),
    ("rank", Ty::I32, true),
    ("thread", Ty::I32, false),
    ("time_ns", Ty::I64, false),
    ("node", Ty::I32, false),
    ("callpath", Ty::Str, false),
];

const WAIT_COLUMNS: &[ColumnSpec] = &[
    ("pattern", Ty::Str, false),
    ("location", Ty::Str, false),
    ("callpath", Ty::Str, false),
    ("wait_s", Ty::F64, false),
    ("count", Ty::I64, false),
];

/// `wait_causes`: `plx waits --causes`' rows.
const CAUSE_COLUMNS: &[ColumnSpec] = &[
    ("pattern", Ty::Str, false),
    ("waiting_location", Ty::Str, false),
    ("cause_location", Ty::Str, true),
    ("cause_callpath", Ty::Str, true),
    ("delay_s", Ty::F64, false),
    ("kind", Ty::Str, false),
];

/// Key-value metadata of every file: the time base.
fn common_metadata(merge: &GlobalMerge) -> Vec<KeyValue> {
    let base = if merge.model().has_mpi() {
        "rank 0's CLOCK_MONOTONIC, ClockOffset-corrected"
    } else {
        "CLOCK_MONOTONIC"
    };
    vec![
        KeyValue::new("plx.schema".into(), SCHEMA_VERSION.to_string()),
        KeyValue::new("plx.origin_ns".into(), merge.origin_ns().to_string()),
        KeyValue::new("plx.clock".into(), base.to_string()),
        KeyValue::new("plx.time_unit".into(), "ns since plx.origin_ns".to_string()),
    ]
}

fn write_regions(
    merge: &GlobalMerge,
    dir: &Path,
    meta: &[KeyValue],
    layout: Layout,
) -> Result<Vec<PathBuf>, ExportError> {
    let mut t = Table::create(dir, "regions", REGION_COLUMNS, meta, layout)?;
    for (i, r) in merge.regions().all().iter().enumerate() {
        let c = t.cols(None);
        c[0].val(i as i32);
        c[1].val(ByteArray::from(r.name.as_str()));
        c[2].val(ByteArray::from(r.kind.as_str()));
        c[3].val(ByteArray::from(r.file.as_str()));
        c[4].val(r.line as i32);
        t.row(None)?;
    }
    t.finish()
}

fn write_comms(
    merge: &GlobalMerge,
    dir: &Path,
    meta: &[KeyValue],
    layout: Layout,
) -> Result<Vec<PathBuf>, ExportError> {
    let mut t = Table::create(dir, "comms", COMM_COLUMNS, meta, layout)?;
    for (i, info) in merge.model().comms.all().iter().enumerate() {
        let members = info.members();
        let ranks: Vec<String> = members.iter().map(|r| r.to_string()).collect();
        let c = t.cols(None);
        c[0].val(i as i32);
        c[1].val(ByteArray::from(info.describe().as_str()));
        c[2].opt(info.predefined.map(|p| p as i32));
        c[3].val(members.len() as i32);
        c[4].val(ByteArray::from(ranks.join(" ").as_str()));
        c[5].val(info.ordinal as i32);
        t.row(None)?;
    }
    t.finish()
}

/// `samples.parquet`: a row per callpath of each location's tree that call-stack samples were
/// taken in (`samples`, with the locations' ids `locs`), in location order, each tree's in its order (a parent before its children);
/// `sample_times.parquet`: where the runtime stamped them (a trace), a row per sample in time
/// order, its time and the callpath of its innermost frame. Returns the files and the samples
/// the callpath rows hold.
fn write_samples(
    merge: &GlobalMerge,
    (samples_of, locs): (&[Option<LocationSamples>], &[LocationId]),
    dir: &Path,
    meta: &[KeyValue],
    layout: Layout,
) -> Result<(Vec<PathBuf>, u64), ExportError> {
    let mut samples = 0;
    let mut t = Table::create(dir, "samples", SAMPLE_COLUMNS, meta, layout)?;
    let mut times = Table::create(dir, "sample_times", SAMPLE_TIME_COLUMNS, meta, layout)?;
    let regions = merge.regions();
    let origin = merge.origin_ns();
    for (li, (s, &(process, rank, thread))) in samples_of.iter().zip(locs).enumerate() {
        let Some(s) = s else { continue };
        // a stamp names a frame of the thread's last tree (one whose write was lost, none)
        let in_tree: HashSet<u32> = s.nodes.iter().map(|n| n.node).collect();
        let path = |node: u32| -> String {
            let names: Vec<&str> = s.path(node).iter().map(|&r| regions.name(r)).collect();
            names.join(" => ")
        };
        for n in &s.nodes {
            let c = t.cols(rank);
            c[0].val(li as i32);
            c[1].val(process);
            c[2].opt(rank);
            c[3].val(thread);
            c[4].val(n.node as i32);
            c[5].opt(n.parent.map(|p| p as i32));
            c[6].val(n.depth as i32);
            c[7].val(n.region as i32);
            c[8].val(ByteArray::from(regions.name(n.region)));
            c[9].val(ByteArray::from(path(n.node).as_str()));
            c[10].val(n.estimated);
            c[11].val(n.samples as i64);
            c[12].val(n.self_samples as i64);
            c[13].val(s.period_ns as i64);
            c[14].val(s.seconds(n.samples));
            c[15].val(s.seconds(n.self_samples));
            t.row(rank)?;
            // (with a window, the samples counted are those stamped inside it, below)
            if !s.windowed() {
                samples += n.self_samples;
            }
        }
        for &(ns, node) in &s.times {
            if !in_tree.contains(&node) {
                continue;
            }
            let c = times.cols(rank);
            c[0].val(li as i32);
            c[1].val(process);
            c[2].opt(rank);
            c[3].val(thread);
            c[4].val(ns - origin);
            c[5].val(node as i32);
            c[6].val(ByteArray::from(path(node).as_str()));
            times.row(rank)?;
            if s.windowed() {
                samples += 1;
            }
        }
    }
    let mut files = t.finish()?;
    files.extend(times.finish()?);
    Ok((files, samples))
}

/// The wait states of the exported processes (`plx waits`' rows, in its order: pattern,
/// location label, call path, seconds, count) and their causes (`plx waits --causes`' rows,
/// in its order, the waits with no partner last), from a replay of its own.
fn write_waits(
    input: &ExportInput,
    dir: &Path,
    meta: &[KeyValue],
) -> Result<Vec<PathBuf>, ExportError> {
    let a = WaitAnalysis::compute(
        &input.model,
        &input.experiment,
        Window::ALL,
        None,
        true,
        input.options.merge,
    )?;
    let label = |l: u32| ByteArray::from(a.locations[l as usize].label().as_str());
    let mut t = Table::create(dir, "waits", WAIT_COLUMNS, meta, Layout::Single)?;
    for r in &a.rows {
        let c = t.cols(None);
        c[0].val(ByteArray::from(r.pattern.name()));
        c[1].val(label(r.location));
        c[2].val(ByteArray::from(a.callpath_name(r.callpath).as_str()));
        c[3].val(r.wait_ns as f64 / 1e9);
        c[4].val(r.count as i64);
        t.row(None)?;
    }
    let mut files = t.finish()?;
    let mut t = Table::create(dir, "wait_causes", CAUSE_COLUMNS, meta, Layout::Single)?;
    for e in a.cause_table() {
        let c = t.cols(None);
        c[0].val(ByteArray::from(e.pattern.name()));
        c[1].val(label(e.waiting));
        c[2].opt(e.cause.map(|(l, _)| label(l)));
        c[3].opt(e.cause.map(|(_, cp)| ByteArray::from(a.callpath_name(cp).as_str())));
        c[4].val(e.delay_ns / 1e9);
        c[5].val(ByteArray::from(e.kind));
        t.row(None)?;
    }
    files.extend(t.finish()?);
    Ok(files)
}
