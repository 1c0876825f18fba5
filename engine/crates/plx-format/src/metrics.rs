//! Metric files (`DIR/metrics.<name>.plx`, file kind 3): time series from outside the program — the system monitor of `plx run --monitor`, a CSV file `plx import` added.
//!
//! One file per source: a [`MetricSource`] record first, then [`MetricDef`]s and
//! samples (records 56-58 of spec/format.md). Read with [`read_metric_files`], written with
//! [`MetricWriter`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::bytes::FieldReader;
use crate::framing::{check_file_header, file_header, FileKind, RecordIter};
use crate::warning::{Warning, WarningKind};

/// Record type of [`MetricSource`].
pub const METRIC_SOURCE: u16 = 56;
/// Record type of [`MetricDef`].
pub const METRIC_DEF: u16 = 57;
/// Record type of a sample (a time and values of some metrics).
pub const METRIC_SAMPLE: u16 = 58;

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
    /// From the on-disk byte.
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

/// Record 56: where a metric file's series come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricSource {
    /// `monitor` or `csv`.
    pub kind: String,
    /// What was read: the monitored host's name, or the CSV file's path.
    pub origin: String,
    /// The host whose clock [`TimeBase::Monotonic`] times are on.
    pub host: String,
    /// What the samples' times count.
    pub time_base: TimeBase,
    /// The sampling period in ns; 0 when irregular.
    pub period_ns: u64,
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

/// Record 57: one metric of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDef {
    /// Id, dense from 0 in the file.
    pub id: u32,
    /// Name (`cpu.util`, `cpu3.util`, `mem.used`, `net.rx`, ..., or a CSV column's header).
    pub name: String,
    /// Unit (`%`, `bytes`, or empty).
    pub unit: String,
    /// How its values add up.
    pub mode: MetricMode,
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
    let bytes = match std::fs::read(path) {
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
        let mut r = FieldReader::new(payload);
        let short = |e: crate::ShortPayload| {
            bad(
                path,
                h.offset,
                format!(
                    "record {} too short ({} bytes needed at {})",
                    h.record_type, e.needed, e.at
                ),
            )
        };
        match h.record_type {
            METRIC_SOURCE => {
                let parsed = (|| {
                    Ok::<_, crate::ShortPayload>((r.str()?, r.str()?, r.str()?, r.u8()?, r.u64()?))
                })();
                match parsed {
                    Ok((kind, origin, host, base, period_ns)) => match TimeBase::from_u8(base) {
                        Some(time_base) => {
                            source = Some(MetricSource {
                                kind,
                                origin,
                                host,
                                time_base,
                                period_ns,
                            })
                        }
                        None => {
                            warnings.push(bad(path, h.offset, format!("unknown time base {base}")));
                            return None;
                        }
                    },
                    Err(e) => {
                        warnings.push(short(e));
                        return None;
                    }
                }
            }
            METRIC_DEF => {
                let parsed =
                    (|| Ok::<_, crate::ShortPayload>((r.u32()?, r.str()?, r.str()?, r.u8()?)))();
                match parsed {
                    Ok((id, name, unit, mode)) if id as usize == metrics.len() => {
                        let mode = if mode == 1 {
                            MetricMode::Cumulative
                        } else {
                            MetricMode::Absolute
                        };
                        metrics.push(MetricDef {
                            id,
                            name,
                            unit,
                            mode,
                        });
                        series.push(Vec::new());
                    }
                    Ok((id, ..)) => warnings.push(bad(
                        path,
                        h.offset,
                        format!("metric id {id} out of order (expected {})", metrics.len()),
                    )),
                    Err(e) => warnings.push(short(e)),
                }
            }
            METRIC_SAMPLE => {
                let parsed = (|| {
                    let t = r.i64()?;
                    let n = r.u32()?;
                    let mut v = Vec::with_capacity(n.min(4096) as usize);
                    for _ in 0..n {
                        v.push((r.u32()?, r.f64()?));
                    }
                    Ok::<_, crate::ShortPayload>((t, v))
                })();
                match parsed {
                    Ok((t, values)) => {
                        for (id, v) in values {
                            match series.get_mut(id as usize) {
                                Some(s) => s.push((t, v)),
                                None => warnings.push(bad(
                                    path,
                                    h.offset,
                                    format!("sample of undefined metric {id}"),
                                )),
                            }
                        }
                    }
                    Err(e) => warnings.push(short(e)),
                }
            }
            _ => {} // unknown records are skipped
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

/// Writes a metric file: the source, then definitions and samples as they come.
pub struct MetricWriter {
    out: BufWriter<File>,
    path: PathBuf,
    defined: u32,
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

impl MetricWriter {
    /// Creates (or replaces) `path` with its [`MetricSource`].
    pub fn create(path: &Path, source: &MetricSource) -> std::io::Result<MetricWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(&file_header(FileKind::Metrics))?;
        let mut w = MetricWriter {
            out,
            path: path.to_path_buf(),
            defined: 0,
        };
        let mut b = Vec::new();
        put_str(&mut b, &source.kind);
        put_str(&mut b, &source.origin);
        put_str(&mut b, &source.host);
        b.push(source.time_base.to_u8());
        b.extend_from_slice(&source.period_ns.to_le_bytes());
        w.record(METRIC_SOURCE, &b)?;
        Ok(w)
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(&mut self, ty: u16, payload: &[u8]) -> std::io::Result<()> {
        let mut h = [0u8; 8];
        h[..2].copy_from_slice(&ty.to_le_bytes());
        h[4..].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(payload)
    }

    /// Defines the next metric; returns its id.
    pub fn define(&mut self, name: &str, unit: &str, mode: MetricMode) -> std::io::Result<u32> {
        let id = self.defined;
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_le_bytes());
        put_str(&mut b, name);
        put_str(&mut b, unit);
        b.push(match mode {
            MetricMode::Absolute => 0,
            MetricMode::Cumulative => 1,
        });
        self.record(METRIC_DEF, &b)?;
        self.defined += 1;
        Ok(id)
    }

    /// One sample: values of some metrics at `time`.
    pub fn sample(&mut self, time: i64, values: &[(u32, f64)]) -> std::io::Result<()> {
        let mut b = Vec::with_capacity(12 + values.len() * 12);
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&(values.len() as u32).to_le_bytes());
        for (id, v) in values {
            b.extend_from_slice(&id.to_le_bytes());
            b.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        self.record(METRIC_SAMPLE, &b)
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
}
