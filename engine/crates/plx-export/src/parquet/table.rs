//! A Parquet table written with the low-level column writer: one file a row group at a time, or a dataset partitioned by one column's value.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use super::ROW_GROUP;
use crate::ExportError;

/// How a table is laid out: one file `NAME.parquet`, or a dataset directory `NAME/` of
/// hive-style partitions `NAME/KEY=VALUE/part-N.parquet` by the value of one column (left out
/// of the files: readers take it from the directory names), `NAME/part-0.parquet` for a table
/// without a key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    Single,
    /// (partition key, index of its column)
    ByKey((&'static str, usize)),
}

/// The directory name of a null key: the Hive convention, read back as null by Spark, DuckDB
/// and Polars.
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Rows buffered over all partitions of a dataset before every partition is written out (each
/// partition also writes a part when it holds [`ROW_GROUP`] rows): bounds memory whatever the
/// number of ranks.
pub(super) const DATASET_BUFFER: usize = 1 << 20;

/// A column's physical type ([`crate::rows::Ty`]: the events and messages tables' types are
/// declared there).
pub(super) use crate::rows::Ty;

/// (name, type, optional).
pub(super) use crate::rows::ColumnSpec;

/// A column's values of the current row group; `def` holds definition levels of an optional
/// column (1 present, 0 null), whose values hold only the present ones.
pub(super) struct Column {
    data: Data,
    def: Option<Vec<i16>>,
}

pub(super) enum Data {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<ByteArray>),
}

/// A Rust type of column values: the vector of `Data` holding it.
pub(super) trait Value: Sized {
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
    pub fn val<T: Value>(&mut self, v: T) {
        self.opt(Some(v));
    }

    /// Appends a value or a null (an optional column) to the row.
    #[inline]
    pub fn opt<T: Value>(&mut self, v: Option<T>) {
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
pub(super) struct Table {
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
    pub fn create(
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
    pub fn cols(&mut self, key: Option<i32>) -> &mut [Column] {
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
    pub fn row(&mut self, key: Option<i32>) -> Result<(), ExportError> {
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
    pub fn finish(mut self) -> Result<Vec<PathBuf>, ExportError> {
        if let Some(mut w) = self.writer.take() {
            write_group(&mut w, &self.path, &mut self.single, None)?;
            w.close().map_err(pq_err(&self.path))?;
            return Ok(vec![self.path]);
        }
        self.write_parts()?;
        Ok(self.files)
    }
}
