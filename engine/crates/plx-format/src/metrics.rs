//! Metric files (`DIR/metrics.<name>.plx`, file kind 3): time series from outside the program — the system monitor of `plx run --monitor`, a CSV file `plx import` added.
//!
//! One file per source: a [`MetricSource`] record first, then [`MetricDef`]s and
//! [`MetricSample`]s (records 56-58 of spec/records.toml; their structs, decoders and encoders
//! are generated into [`crate::schema`]). Read with [`read_metric_files`], written with
//! [`MetricWriter`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::framing::raw_record_bytes;
use crate::framing::{check_file_header, file_header, FileKind, RecordIter};
pub use crate::schema::{MetricDef, MetricRecord, MetricSample, MetricSource};
use crate::warning::{Warning, WarningKind};

/// What a sample's time counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// Nanoseconds of `CLOCK_MONOTONIC` on the source's host (the processes' clock there).
    Monotonic,
    /// Nanoseconds since the experiment's first traced event (the origin of every time axis).
    FirstEvent,
    /// Nanoseconds since the Unix epoch (`CLOCK_REALTIME`).
    Unix,
}

impl TimeBase {
    /// From the on-disk byte; `None` for a value this reader does not know.
    pub fn from_u8(v: u8) -> Option<TimeBase> {
        match v {
            0 => Some(TimeBase::Monotonic),
            1 => Some(TimeBase::FirstEvent),
            2 => Some(TimeBase::Unix),
            _ => None,
        }
    }

    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            TimeBase::Monotonic => 0,
            TimeBase::FirstEvent => 1,
            TimeBase::Unix => 2,
        }
    }
}

/// How a metric's values add up over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricMode {
    /// A level at the sample's time (memory in use, utilisation): an interval's value is the
    /// time-weighted mean.
    Absolute,
    /// A running total (bytes read so far): an interval's value is its increase.
    Cumulative,
}

impl MetricMode {
    /// From the on-disk byte; `None` for a value this reader does not know.
    pub fn from_u8(v: u8) -> Option<MetricMode> {
        match v {
            0 => Some(MetricMode::Absolute),
            1 => Some(MetricMode::Cumulative),
            _ => None,
        }
    }

    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            MetricMode::Absolute => 0,
            MetricMode::Cumulative => 1,
        }
    }
}

/// A metric file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricFile {
    /// The file.
    pub path: PathBuf,
    /// Its source.
    pub source: MetricSource,
    /// Its metrics, by id.
    pub metrics: Vec<MetricDef>,
    /// Per metric (by id): (time, value) in file order, time on [`MetricSource::time_base`].
    pub series: Vec<Vec<(i64, f64)>>,
}

/// `metrics.<name>.plx` → `name`.
pub fn metric_file_name(name: &str) -> Option<&str> {
    name.strip_prefix("metrics.")?.strip_suffix(".plx")
}

/// Reads every `metrics.*.plx` of `dir`, in name order; damage becomes warnings (what is
/// intact is kept).
pub fn read_metric_files(dir: &Path) -> (Vec<MetricFile>, Vec<Warning>) {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| metric_file_name(&e.file_name().to_string_lossy()).is_some())
        .map(|e| e.path())
        .collect();
    paths.sort();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    for p in paths {
        match read_metric_file(&p, &mut warnings) {
            Some(f) => files.push(f),
            None => continue,
        }
    }
    (files, warnings)
}

fn bad(path: &Path, offset: u64, what: String) -> Warning {
    Warning::at(path, offset, WarningKind::Garbage { ignored: 0 }, what)
}

fn read_metric_file(path: &Path, warnings: &mut Vec<Warning>) -> Option<MetricFile> {
    let bytes = match crate::input::open_regular(path).and_then(|i| i.read_data()) {
        Ok(b) => b,
        Err(e) => {
            warnings.push(Warning::file(
                path.to_path_buf(),
                WarningKind::MissingFile,
                format!("cannot read: {e}"),
            ));
            return None;
        }
    };
    if let Err(w) = check_file_header(path, &bytes, bytes.len() as u64, FileKind::Metrics) {
        warnings.push(w);
        return None;
    }
    let mut source = None;
    let mut metrics: Vec<MetricDef> = Vec::new();
    let mut series: Vec<Vec<(i64, f64)>> = Vec::new();
    let mut it = RecordIter::new(path, &bytes);
    for (h, payload) in &mut it {
        let rec = match MetricRecord::decode(h.record_type, payload) {
            Ok(Some(rec)) => rec,
            Ok(None) => continue, // a record type this reader does not know
            Err(e) => {
                warnings.push(bad(
                    path,
                    h.offset,
                    format!("bad record {}: {e}", h.record_type),
                ));
                if h.record_type == crate::schema::types::METRIC_SOURCE {
                    return None;
                }
                continue;
            }
        };
        match rec {
            MetricRecord::MetricSource(s) => source = Some(s),
            MetricRecord::MetricDef(d) if d.id as usize == metrics.len() => {
                metrics.push(d);
                series.push(Vec::new());
            }
            MetricRecord::MetricDef(d) => warnings.push(bad(
                path,
                h.offset,
                format!(
                    "metric id {} out of order (expected {})",
                    d.id,
                    metrics.len()
                ),
            )),
            MetricRecord::MetricSample(s) => {
                for (id, v) in s.entries {
                    match series.get_mut(id as usize) {
                        Some(x) => x.push((s.time, v)),
                        None => warnings.push(bad(
                            path,
                            h.offset,
                            format!("sample of undefined metric {id}"),
                        )),
                    }
                }
            }
        }
    }
    if let Some(w) = it.warning.take() {
        warnings.push(w);
    }
    let Some(source) = source else {
        warnings.push(bad(path, 16, "no MetricSource record first".to_string()));
        return None;
    };
    Some(MetricFile {
        path: path.to_path_buf(),
        source,
        metrics,
        series,
    })
}

/// Writes a metric file: the source, then definitions and samples as they come, to a file
/// (the default) or any other writer (a file staged under a temporary name).
pub struct MetricWriter<W: Write = BufWriter<File>> {
    out: W,
    path: PathBuf,
    defined: u32,
}

impl MetricWriter {
    /// Creates (or replaces: [`crate::output::create_replacing`]) `path` with its
    /// [`MetricSource`].
    pub fn create(path: &Path, source: &MetricSource) -> std::io::Result<MetricWriter> {
        MetricWriter::new(
            BufWriter::new(crate::output::create_replacing(path)?),
            path,
            source,
        )
    }
}

impl<W: Write> MetricWriter<W> {
    /// Writes the file header and its [`MetricSource`] to `out`, the file `path` is to be.
    pub fn new(mut out: W, path: &Path, source: &MetricSource) -> std::io::Result<MetricWriter<W>> {
        out.write_all(&file_header(FileKind::Metrics))?;
        let mut w = MetricWriter {
            out,
            path: path.to_path_buf(),
            defined: 0,
        };
        w.record(&MetricRecord::MetricSource(source.clone()))?;
        Ok(w)
    }

    /// The writer, everything written handed to it (not flushed).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(&mut self, rec: &MetricRecord) -> std::io::Result<()> {
        let mut payload = Vec::with_capacity(64);
        rec.encode_payload(&mut payload);
        self.out
            .write_all(&raw_record_bytes(rec.record_type(), &payload))
    }

    /// Defines the next metric; returns its id.
    pub fn define(&mut self, name: &str, unit: &str, mode: MetricMode) -> std::io::Result<u32> {
        let id = self.defined;
        self.record(&MetricRecord::MetricDef(MetricDef {
            id,
            name: name.to_owned(),
            unit: unit.to_owned(),
            mode,
        }))?;
        self.defined += 1;
        Ok(id)
    }

    /// One sample: values of some metrics at `time`.
    pub fn sample(&mut self, time: i64, values: &[(u32, f64)]) -> std::io::Result<()> {
        self.record(&MetricRecord::MetricSample(MetricSample {
            time,
            entries: values.to_vec(),
        }))
    }

    /// Writes what is buffered (each sample reaches the file whole).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_file_reads_back() {
        let dir = std::env::temp_dir().join(format!("plx-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("metrics.t.plx");
        let src = MetricSource {
            kind: "csv".into(),
            origin: "x.csv".into(),
            host: "h".into(),
            time_base: TimeBase::FirstEvent,
            period_ns: 0,
        };
        let mut w = MetricWriter::create(&path, &src).unwrap();
        let a = w.define("power", "W", MetricMode::Absolute).unwrap();
        let b = w.define("bytes", "bytes", MetricMode::Cumulative).unwrap();
        w.sample(0, &[(a, 10.0), (b, 0.0)]).unwrap();
        w.sample(1_000, &[(a, 12.5), (b, 4096.0)]).unwrap();
        w.flush().unwrap();
        drop(w);
        let (files, warnings) = read_metric_files(&dir);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(files.len(), 1);
        let f = &files[0];
        assert_eq!(f.source, src);
        assert_eq!(f.metrics[1].mode, MetricMode::Cumulative);
        assert_eq!(f.series[0], vec![(0, 10.0), (1_000, 12.5)]);
        assert_eq!(f.series[1], vec![(0, 0.0), (1_000, 4096.0)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A metric file whose records are given as (type, payload).
    fn file_of(dir: &Path, records: &[(u16, Vec<u8>)]) {
        std::fs::create_dir_all(dir).unwrap();
        let mut b = file_header(FileKind::Metrics).to_vec();
        for (ty, payload) in records {
            b.extend_from_slice(&raw_record_bytes(*ty, payload));
        }
        std::fs::write(dir.join("metrics.t.plx"), b).unwrap();
    }

    fn source_payload(time_base: u8) -> Vec<u8> {
        let mut p = Vec::new();
        for s in ["csv", "x.csv", "h"] {
            p.extend_from_slice(&(s.len() as u32).to_le_bytes());
            p.extend_from_slice(s.as_bytes());
        }
        p.push(time_base);
        p.extend_from_slice(&0u64.to_le_bytes());
        p
    }

    fn def_payload(id: u32, mode: u8) -> Vec<u8> {
        let mut p = id.to_le_bytes().to_vec();
        p.extend_from_slice(&1u32.to_le_bytes());
        p.push(b'w');
        p.extend_from_slice(&0u32.to_le_bytes());
        p.push(mode);
        p
    }

    #[test]
    fn unknown_time_base_leaves_the_file_unread() {
        let dir = std::env::temp_dir().join(format!("plx-metrics-tb-{}", std::process::id()));
        file_of(&dir, &[(56, source_payload(7))]);
        let (files, warnings) = read_metric_files(&dir);
        assert!(files.is_empty());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = warnings[0].to_string();
        assert!(w.contains("metrics.t.plx"), "{w}");
        assert!(w.contains("bad record 56: unknown value 7"), "{w}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_mode_skips_the_metric_and_its_samples() {
        let dir = std::env::temp_dir().join(format!("plx-metrics-mode-{}", std::process::id()));
        let mut sample = 5i64.to_le_bytes().to_vec();
        sample.extend_from_slice(&1u32.to_le_bytes());
        sample.extend_from_slice(&0u32.to_le_bytes());
        sample.extend_from_slice(&2.5f64.to_le_bytes());
        file_of(
            &dir,
            &[
                (56, source_payload(1)),
                (57, def_payload(0, 9)),
                (58, sample),
            ],
        );
        let (files, warnings) = read_metric_files(&dir);
        assert_eq!(files.len(), 1);
        assert!(files[0].metrics.is_empty());
        let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("bad record 57: unknown value 9"), "{w:?}");
        assert!(w[1].contains("sample of undefined metric 0"), "{w:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
