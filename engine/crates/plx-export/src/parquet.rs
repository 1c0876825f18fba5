//! `parquet`: the merged trace as Parquet tables — events, regions, locations, communicators, matched messages — for pandas, Polars, DuckDB, Spark.
//!
//! A directory of five files (docs/exports/parquet.md): `events.parquet` (one row per event of
//! the merged stream, in its order), `messages.parquet` (one row per matched message, in the
//! order of the receives), `locations.parquet`, `regions.parquet` and `comms.parquet`. Events
//! and messages are written while the merge streams, in row groups of [`ROW_GROUP`] rows, so
//! memory stays bounded whatever the trace's size; the definition tables are written at the end
//! (the merge may name regions it meets without a definition).
//!
//! Parquet's low-level column writer is used (no Arrow): every column is a plain physical type
//! (`INT32`, `INT64`, `DOUBLE`, `BYTE_ARRAY` UTF-8 strings), optional where a value does not apply
//! to every row; Snappy compression, dictionary encoding (which keeps repeated names small).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use plx_analysis::{EventKind, GlobalMerge, MessageLink};
use plx_format::SyncKind;

use crate::driver::{drive, At, Cx, Envelope, Sink, Step};
use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Partition, Target};

/// The `parquet` format (docs/exports/parquet.md).
pub struct Parquet;

/// Rows per row group of the streamed tables (events, messages): what is held in memory.
pub const ROW_GROUP: usize = 1 << 18;

/// Version of the table layout, in every file's key-value metadata (`plx.schema`).
pub const SCHEMA_VERSION: &str = "2";

impl Exporter for Parquet {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn about(&self) -> &'static str {
        "Parquet tables (events, messages, locations, regions, comms) for pandas, Polars, DuckDB"
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

/// Writes the five tables of `input`'s merged trace under `dir` (which exists): one file per
/// table, or with [`ExportOptions::partition`](crate::ExportOptions::partition) a dataset
/// partitioned by rank.
pub fn write_tables(input: &ExportInput, dir: &Path) -> Result<ExportSummary, ExportError> {
    let mut sink = ParquetSink {
        dir,
        by_rank: input.options.partition == Some(Partition::Rank),
        meta: Vec::new(),
        tables: None,
        origin: 0,
        kinds: KINDS.iter().map(|k| ByteArray::from(*k)).collect(),
        region_names: Vec::new(),
        user_names: Vec::new(),
        locs: Vec::new(),
    };
    drive(input, &mut sink)
}

/// Writes a row per event (and per matched message) as the merge streams; the definition
/// tables at the end.
struct ParquetSink<'a> {
    dir: &'a Path,
    by_rank: bool,
    meta: Vec<KeyValue>,
    /// The events and messages tables, from [`Sink::begin`].
    tables: Option<(Table, Table)>,
    origin: i64,
    /// The `kind` column's values, and region and user event names, as ByteArrays made once
    /// (cloning one shares its bytes).
    kinds: Vec<ByteArray>,
    region_names: Vec<ByteArray>,
    user_names: Vec<ByteArray>,
    /// Per location: (process, rank, thread).
    locs: Vec<(i32, Option<i32>, i32)>,
}

/// An event row's columns after its location, kind and region: each `None` but where the
/// event has it.
#[derive(Default)]
struct Details {
    peer: Option<i32>,
    tag: Option<i32>,
    bytes: Option<i64>,
    bytes_recv: Option<i64>,
    comm: Option<u32>,
    root: Option<i32>,
    message: Option<i64>,
    user: Option<ByteArray>,
    value: Option<f64>,
    object: Option<i32>,
    sync_kind: Option<u8>,
    wait_ns: Option<i64>,
    /// An exit that ends a call cut by its process's end (killed).
    truncated: bool,
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

    /// A row of the events table: the event of `kind` about `region` (its own for an enter or
    /// exit, else the innermost open one).
    fn row(&mut self, cx: &Cx, at: At, kind: usize, region: Option<u32>, d: Details) -> Step {
        let region_name = region.map(|r| {
            while self.region_names.len() <= r as usize {
                let i = self.region_names.len() as u32;
                self.region_names.push(ByteArray::from(cx.regions.name(i)));
            }
            self.region_names[r as usize].clone()
        });
        let (process, rank, thread) = self.locs[at.loc as usize];
        let (t, kind) = (at.ns - self.origin, self.kinds[kind].clone());
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
        c[15].opt(d.user);
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
}

impl Sink for ParquetSink<'_> {
    const OUTPUT: &'static str = "parquet output";

    /// The tables hold region, MPI and synchronization events (not stream bytes, not OpenMP
    /// team records).
    fn takes(&self, kind: &EventKind) -> bool {
        !matches!(
            kind,
            EventKind::StreamSend { .. } | EventKind::StreamRecv { .. } | EventKind::OmpTeam { .. }
        )
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
        self.locs = merge
            .locations()
            .iter()
            .map(|l| (l.process as i32, l.rank.map(|r| r as i32), l.thread as i32))
            .collect();
        Ok(())
    }

    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        self.row(cx, at, K_ENTER, Some(region), Details::default())
    }

    fn exit(&mut self, cx: &Cx, at: At, region: u32, _closed: &[u32]) -> Step {
        self.row(cx, at, K_EXIT, Some(region), Details::default())
    }

    /// An exit row per call still open, innermost first, `truncated` where it was cut.
    fn open_at_end(&mut self, cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        for &r in calls {
            let d = Details {
                truncated: cut,
                ..Details::default()
            };
            self.row(cx, at, K_EXIT, Some(r), d)?;
        }
        Ok(())
    }

    fn user(&mut self, cx: &Cx, at: At, event: u32, value: f64) -> Step {
        while self.user_names.len() <= event as usize {
            let i = self.user_names.len();
            self.user_names.push(ByteArray::from(cx.user_events[i].as_str()));
        }
        let d = Details {
            user: Some(self.user_names[event as usize].clone()),
            value: Some(value),
            ..Details::default()
        };
        self.row(cx, at, K_USER, cx.stacks.top(at.loc), d)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, message: Option<u64>) -> Step {
        let d = Details {
            peer: Some(m.peer as i32),
            tag: Some(m.tag),
            bytes: Some(m.bytes as i64),
            comm: m.comm,
            message: message.map(|m| m as i64),
            ..Details::default()
        };
        self.row(cx, at, K_SEND, cx.stacks.top(at.loc), d)
    }

    fn recv(&mut self, cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        if let Some(l) = link {
            self.message(at, m, l)?;
        }
        let d = Details {
            peer: Some(m.peer as i32),
            tag: Some(m.tag),
            bytes: Some(m.bytes as i64),
            comm: m.comm,
            message: link.map(|l| l.id as i64),
            ..Details::default()
        };
        self.row(cx, at, K_RECV, cx.stacks.top(at.loc), d)
    }

    fn collective(
        &mut self,
        cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        (sent, received): (u64, u64),
    ) -> Step {
        let d = Details {
            comm,
            root: root.map(|r| r as i32),
            bytes: Some(sent as i64),
            bytes_recv: Some(received as i64),
            ..Details::default()
        };
        self.row(cx, at, K_COLLECTIVE, cx.stacks.top(at.loc), d)
    }

    fn acquire(&mut self, cx: &Cx, at: At, object: u32, kind: u8, wait_ns: u64) -> Step {
        let d = Details {
            object: Some(object as i32),
            sync_kind: Some(kind),
            wait_ns: Some(wait_ns as i64),
            ..Details::default()
        };
        self.row(cx, at, K_ACQUIRE, cx.stacks.top(at.loc), d)
    }

    fn release(&mut self, cx: &Cx, at: At, object: u32, kind: u8) -> Step {
        let d = Details {
            object: Some(object as i32),
            sync_kind: Some(kind),
            ..Details::default()
        };
        self.row(cx, at, K_RELEASE, cx.stacks.top(at.loc), d)
    }

    /// The streamed tables' last rows and footers, then the definition tables.
    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        let (events, messages) = self.tables.take().expect("begin() made the tables");
        let (dir, meta) = (self.dir, &self.meta);
        summary.files = events.finish()?;
        summary.files.extend(messages.finish()?);
        let files = &mut summary.files;
        files.extend(write_locations(merge, dir, meta, self.layout(LOCATION_KEY))?);
        files.extend(write_regions(merge, dir, meta, self.layout(None))?);
        files.extend(write_comms(merge, dir, meta, self.layout(None))?);
        Ok(())
    }
}

/// How a table is laid out: one file `NAME.parquet`, or a dataset directory `NAME/` of
/// hive-style partitions `NAME/KEY=VALUE/part-N.parquet` by the value of one column (left out
/// of the files: readers take it from the directory names), `NAME/part-0.parquet` for a table
/// without a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Single,
    /// (partition key, index of its column)
    ByKey((&'static str, usize)),
}

/// The partition key of each table partitioned by rank (`None`: a table of the whole run).
const EVENT_KEY: Option<(&str, usize)> = Some(("rank", 3));
const MESSAGE_KEY: Option<(&str, usize)> = Some(("receiver_rank", 9));
const LOCATION_KEY: Option<(&str, usize)> = Some(("rank", 3));

/// The directory name of a null key: the Hive convention, read back as null by Spark, DuckDB
/// and Polars.
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Rows buffered over all partitions of a dataset before every partition is written out (each
/// partition also writes a part when it holds [`ROW_GROUP`] rows): bounds memory whatever the
/// number of ranks.
pub const DATASET_BUFFER: usize = 1 << 20;

const K_ENTER: usize = 0;
const K_EXIT: usize = 1;
const K_USER: usize = 2;
const K_SEND: usize = 3;
const K_RECV: usize = 4;
const K_COLLECTIVE: usize = 5;
const K_ACQUIRE: usize = 6;
const K_RELEASE: usize = 7;
/// The `kind` column's values, as the text export names them.
const KINDS: [&str; 8] = [
    "enter",
    "exit",
    "user",
    "send",
    "recv",
    "collective",
    "acquire",
    "release",
];

/// A column's physical type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Bool,
    I32,
    I64,
    F64,
    Str,
}

/// (name, type, optional).
type ColumnSpec = (&'static str, Ty, bool);

const EVENT_COLUMNS: &[ColumnSpec] = &[
    ("time_ns", Ty::I64, false),
    ("location", Ty::I32, false),
    ("process", Ty::I32, false),
    ("rank", Ty::I32, true),
    ("thread", Ty::I32, false),
    ("kind", Ty::Str, false),
    ("region", Ty::I32, true),
    ("region_name", Ty::Str, true),
    ("peer", Ty::I32, true),
    ("tag", Ty::I32, true),
    ("bytes", Ty::I64, true),
    ("bytes_recv", Ty::I64, true),
    ("comm", Ty::I32, true),
    ("root", Ty::I32, true),
    ("message", Ty::I64, true),
    ("user_event", Ty::Str, true),
    ("value", Ty::F64, true),
    ("object", Ty::I32, true),
    ("sync_kind", Ty::Str, true),
    ("wait_ns", Ty::I64, true),
    ("truncated", Ty::Bool, false),
];

const MESSAGE_COLUMNS: &[ColumnSpec] = &[
    ("message", Ty::I64, false),
    ("send_ns", Ty::I64, false),
    ("recv_ns", Ty::I64, false),
    ("sender_location", Ty::I32, false),
    ("sender_process", Ty::I32, false),
    ("sender_rank", Ty::I32, true),
    ("sender_thread", Ty::I32, false),
    ("receiver_location", Ty::I32, false),
    ("receiver_process", Ty::I32, false),
    ("receiver_rank", Ty::I32, true),
    ("receiver_thread", Ty::I32, false),
    ("bytes", Ty::I64, false),
    ("tag", Ty::I32, false),
    ("comm", Ty::I32, true),
];

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

fn write_locations(
    merge: &GlobalMerge,
    dir: &Path,
    meta: &[KeyValue],
    layout: Layout,
) -> Result<Vec<PathBuf>, ExportError> {
    let model = merge.model();
    let mut t = Table::create(dir, "locations", LOCATION_COLUMNS, meta, layout)?;
    for (i, l) in merge.locations().iter().enumerate() {
        let p = &model.processes[l.process];
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
        t.row(l.rank.map(|r| r as i32))?;
    }
    t.finish()
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

/// A column's values of the current row group; `def` holds definition levels of an optional
/// column (1 present, 0 null), whose values hold only the present ones.
struct Column {
    data: Data,
    def: Option<Vec<i16>>,
}

enum Data {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<ByteArray>),
}

/// A Rust type of column values: the vector of `Data` holding it.
trait Value: Sized {
    fn values(data: &mut Data) -> Option<&mut Vec<Self>>;
}

macro_rules! value_of {
    ($($t:ty => $variant:ident),*) => {$(
        impl Value for $t {
            #[inline]
            fn values(data: &mut Data) -> Option<&mut Vec<Self>> {
                match data {
                    Data::$variant(d) => Some(d),
                    _ => None,
                }
            }
        }
    )*};
}
value_of!(bool => Bool, i32 => I32, i64 => I64, f64 => F64, ByteArray => Str);

impl Column {
    fn new(ty: Ty, optional: bool) -> Column {
        let data = match ty {
            Ty::Bool => Data::Bool(Vec::new()),
            Ty::I32 => Data::I32(Vec::new()),
            Ty::I64 => Data::I64(Vec::new()),
            Ty::F64 => Data::F64(Vec::new()),
            Ty::Str => Data::Str(Vec::new()),
        };
        Column {
            data,
            def: optional.then(Vec::new),
        }
    }

    #[inline]
    fn level(&mut self, present: bool) {
        if let Some(d) = &mut self.def {
            d.push(present as i16);
        }
    }

    /// Appends a present value to the row.
    #[inline]
    fn val<T: Value>(&mut self, v: T) {
        self.opt(Some(v));
    }

    /// Appends a value or a null (an optional column) to the row.
    #[inline]
    fn opt<T: Value>(&mut self, v: Option<T>) {
        self.level(v.is_some());
        let values = T::values(&mut self.data).expect("column type");
        if let Some(v) = v {
            values.push(v);
        }
    }

    fn clear(&mut self) {
        match &mut self.data {
            Data::Bool(d) => d.clear(),
            Data::I32(d) => d.clear(),
            Data::I64(d) => d.clear(),
            Data::F64(d) => d.clear(),
            Data::Str(d) => d.clear(),
        }
        if let Some(d) = &mut self.def {
            d.clear();
        }
    }
}

/// Rows of a file not yet written: a column per spec entry (the key column too, unwritten).
struct Rows {
    cols: Vec<Column>,
    rows: usize,
    /// Part files written (partitions).
    parts: u32,
}

impl Rows {
    fn new(spec: &[ColumnSpec]) -> Rows {
        let cols = spec.iter().map(|(_, ty, o)| Column::new(*ty, *o)).collect();
        Rows {
            cols,
            rows: 0,
            parts: 0,
        }
    }
}

/// A table being written: one file a row group at a time, or partitions buffered per key.
struct Table {
    name: String,
    spec: &'static [ColumnSpec],
    meta: Vec<KeyValue>,
    /// The file (single) or the table's directory (a dataset).
    path: PathBuf,
    layout: Layout,
    /// Single: the open file and its rows.
    writer: Option<SerializedFileWriter<File>>,
    single: Rows,
    /// ByKey: rows per key value, and their total.
    parts: std::collections::BTreeMap<Option<i32>, Rows>,
    buffered: usize,
    files: Vec<PathBuf>,
}

fn pq_err(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> ExportError + '_ {
    move |e| {
        let e = match e {
            parquet::errors::ParquetError::External(b) => match b.downcast::<std::io::Error>() {
                Ok(io) => *io,
                Err(b) => std::io::Error::other(b),
            },
            e => std::io::Error::other(e),
        };
        ExportError::Io(path.to_path_buf(), e)
    }
}

/// A Parquet writer of `spec` but column `skip` to a new file `path`.
fn open_file(
    path: &Path,
    name: &str,
    spec: &[ColumnSpec],
    skip: Option<usize>,
    meta: &[KeyValue],
) -> Result<SerializedFileWriter<File>, ExportError> {
    let mut schema = format!("message {name} {{\n");
    for (i, (col, ty, optional)) in spec.iter().enumerate() {
        if Some(i) == skip {
            continue;
        }
        let rep = if *optional { "optional" } else { "required" };
        let ty = match ty {
            Ty::Bool => "boolean",
            Ty::I32 => "int32",
            Ty::I64 => "int64",
            Ty::F64 => "double",
            Ty::Str => "binary",
        };
        let ann = if ty == "binary" { " (STRING)" } else { "" };
        schema.push_str(&format!("  {rep} {ty} {col}{ann};\n"));
    }
    schema.push('}');
    let schema =
        Arc::new(parquet::schema::parser::parse_message_type(&schema).expect("the schemas parse"));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("parallax plx {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(meta.to_vec()))
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .build();
    let file = File::create(path).map_err(|e| ExportError::Io(path.to_path_buf(), e))?;
    SerializedFileWriter::new(file, schema, Arc::new(props)).map_err(pq_err(path))
}

/// Writes `rows` as one row group of `writer` (but column `skip`) and empties them.
fn write_group(
    writer: &mut SerializedFileWriter<File>,
    path: &Path,
    rows: &mut Rows,
    skip: Option<usize>,
) -> Result<(), ExportError> {
    if rows.rows == 0 {
        return Ok(());
    }
    let err = pq_err(path);
    let mut rg = writer.next_row_group().map_err(&err)?;
    for (i, col) in rows.cols.iter_mut().enumerate() {
        if Some(i) != skip {
            let mut w = rg
                .next_column()
                .map_err(&err)?
                .expect("a writer per column");
            let def = col.def.as_deref();
            match &col.data {
                Data::Bool(v) => w.typed::<BoolType>().write_batch(v, def, None),
                Data::I32(v) => w.typed::<Int32Type>().write_batch(v, def, None),
                Data::I64(v) => w.typed::<Int64Type>().write_batch(v, def, None),
                Data::F64(v) => w.typed::<DoubleType>().write_batch(v, def, None),
                Data::Str(v) => w.typed::<ByteArrayType>().write_batch(v, def, None),
            }
            .map_err(&err)?;
            w.close().map_err(&err)?;
        }
        col.clear();
    }
    rg.close().map_err(&err)?;
    rows.rows = 0;
    Ok(())
}

impl Table {
    fn create(
        dir: &Path,
        name: &str,
        spec: &'static [ColumnSpec],
        meta: &[KeyValue],
        layout: Layout,
    ) -> Result<Table, ExportError> {
        let (path, writer) = match layout {
            Layout::Single => {
                let path = dir.join(format!("{name}.parquet"));
                let w = open_file(&path, name, spec, None, meta)?;
                (path, Some(w))
            }
            Layout::ByKey(_) => (dir.join(name), None),
        };
        Ok(Table {
            name: name.to_string(),
            spec,
            meta: meta.to_vec(),
            path,
            layout,
            writer,
            single: Rows::new(spec),
            parts: Default::default(),
            buffered: 0,
            files: Vec::new(),
        })
    }

    /// The columns to push the next row's values to: those of partition `key`'s.
    #[inline]
    fn cols(&mut self, key: Option<i32>) -> &mut [Column] {
        match self.layout {
            Layout::Single => &mut self.single.cols,
            Layout::ByKey(_) => {
                let spec = self.spec;
                &mut self.parts.entry(key).or_insert_with(|| Rows::new(spec)).cols
            }
        }
    }

    /// Ends a row of partition `key` (every column has had its value pushed); writes a full
    /// row group, or a dataset's partitions when it holds [`DATASET_BUFFER`] rows.
    #[inline]
    fn row(&mut self, key: Option<i32>) -> Result<(), ExportError> {
        let (key_name, skip) = match self.layout {
            Layout::Single => {
                self.single.rows += 1;
                if self.single.rows == ROW_GROUP {
                    let w = self.writer.as_mut().expect("a single file is open");
                    write_group(w, &self.path, &mut self.single, None)?;
                }
                return Ok(());
            }
            Layout::ByKey(k) => k,
        };
        let part = self.parts.get_mut(&key).expect("cols() made the partition");
        part.rows += 1;
        self.buffered += 1;
        if part.rows == ROW_GROUP {
            self.buffered -= part.rows;
            let f = self.write_part(key_name, skip, key)?;
            self.files.push(f);
        }
        if self.buffered >= DATASET_BUFFER {
            self.write_parts()?;
        }
        Ok(())
    }

    /// Writes partition `key`'s rows as its next part file.
    fn write_part(
        &mut self,
        key_name: &str,
        skip: usize,
        key: Option<i32>,
    ) -> Result<PathBuf, ExportError> {
        let value = key.map_or(NULL_PARTITION.to_string(), |k| k.to_string());
        let dir = self.path.join(format!("{key_name}={value}"));
        let rows = self.parts.get_mut(&key).expect("a partition");
        let path = dir.join(format!("part-{}.parquet", rows.parts));
        std::fs::create_dir_all(&dir).map_err(|e| ExportError::Io(dir.clone(), e))?;
        let mut w = open_file(&path, &self.name, self.spec, Some(skip), &self.meta)?;
        write_group(&mut w, &path, rows, Some(skip))?;
        w.close().map_err(pq_err(&path))?;
        rows.parts += 1;
        Ok(path)
    }

    /// Writes every partition's buffered rows.
    fn write_parts(&mut self) -> Result<(), ExportError> {
        let Layout::ByKey((key_name, skip)) = self.layout else {
            return Ok(());
        };
        let keys: Vec<Option<i32>> = self
            .parts
            .iter()
            .filter(|(_, r)| r.rows > 0)
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            let f = self.write_part(key_name, skip, k)?;
            self.files.push(f);
        }
        self.buffered = 0;
        Ok(())
    }

    /// Writes what is left and the footers: the files written.
    fn finish(mut self) -> Result<Vec<PathBuf>, ExportError> {
        if let Some(mut w) = self.writer.take() {
            write_group(&mut w, &self.path, &mut self.single, None)?;
            w.close().map_err(pq_err(&self.path))?;
            return Ok(vec![self.path]);
        }
        self.write_parts()?;
        Ok(self.files)
    }
}
