//! `plx import`: a CSV file's columns as external time series of an experiment (`DIR/metrics.csv-<name>.plx`).
//!
//! The CSV (RFC 4180, read by the `csv` crate: quoted fields may hold commas) is checked whole
//! before anything is written: a header naming distinct columns, the time column among them,
//! the same number of fields on every line, every field a number (an empty field: the column's
//! previous value holds), times never decreasing. An error names the file and the line. The
//! metric file is written under a temporary name and renamed into place once complete.

use std::path::Path;

use plx_format::{Experiment, MetricMode, MetricSource, MetricWriter, TimeBase};

use std::path::PathBuf;

use crate::{CliError, Exit};
use clap::ValueEnum;

/// `plx import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// The CSV file: a header line naming the columns, then one line per sample; every column
    /// but the time column becomes a metric.
    #[arg(long, value_name = "FILE")]
    pub csv: PathBuf,
    /// The column holding each sample's time.
    #[arg(long, value_name = "NAME")]
    pub time_column: String,
    /// The time column's unit.
    #[arg(long, value_enum, default_value_t = TimeUnit::S)]
    pub time_unit: TimeUnit,
    /// What the times count from: first-event (the experiment's first traced event, the origin
    /// of plx query and plx histogram), unix (the Unix epoch, e.g. a logger's timestamps) or
    /// monotonic (CLOCK_MONOTONIC of the host the experiment ran on).
    #[arg(long, value_enum, default_value_t = TimeOrigin::FirstEvent)]
    pub time_origin: TimeOrigin,
}

/// `plx import --time-unit`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

/// `plx import --time-origin`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOrigin {
    /// The experiment's first traced event.
    FirstEvent,
    /// The Unix epoch.
    Unix,
    /// CLOCK_MONOTONIC of the experiment's host.
    Monotonic,
}

/// A parsed CSV: metric names, then per line (time ns, values by column, None before a
/// column's first value).
struct Table {
    names: Vec<String>,
    rows: Vec<(i64, Vec<Option<f64>>)>,
}

/// The header's column names, checked: each named, none twice.
fn header_names(
    at: &dyn Fn(u64, String) -> String,
    line: u64,
    header: &::csv::StringRecord,
) -> Result<Vec<String>, String> {
    let cols: Vec<String> = header.iter().map(str::to_string).collect();
    for (i, c) in cols.iter().enumerate() {
        if c.is_empty() {
            return Err(at(line, format!("column {} has no name", i + 1)));
        }
        if cols[..i].contains(c) {
            return Err(at(line, format!("column \"{c}\" twice")));
        }
    }
    Ok(cols)
}

fn parse_csv(path: &Path, data: &[u8], time_column: &str, unit: TimeUnit) -> Result<Table, String> {
    let at = |line: u64, what: String| format!("{}:{line}: {what}", path.display());
    let csv_error = |e: ::csv::Error| match e.position() {
        Some(p) => at(p.line(), e.kind_text()),
        None => format!("{}: {e}", path.display()),
    };
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(data);
    let mut records = reader.records();
    let (hl, header) = loop {
        match records.next() {
            None => {
                return Err(format!(
                    "{}: empty file (a header line is needed)",
                    path.display()
                ))
            }
            Some(r) => {
                let r = r.map_err(csv_error)?;
                if r.iter().any(|f| !f.is_empty()) {
                    break (r.position().map_or(1, |p| p.line()), r);
                }
            }
        }
    };
    let cols = header_names(&at, hl, &header)?;
    let tcol = cols.iter().position(|c| c == time_column).ok_or_else(|| {
        at(
            hl,
            format!("no column \"{time_column}\" (columns: {})", cols.join(", ")),
        )
    })?;
    if cols.len() < 2 {
        return Err(at(hl, "no column besides the time column".to_string()));
    }
    let scale = match unit {
        TimeUnit::S => 1e9,
        TimeUnit::Ms => 1e6,
        TimeUnit::Us => 1e3,
        TimeUnit::Ns => 1.0,
    };
    let mut rows = Vec::new();
    let mut last: Option<i64> = None;
    let mut held: Vec<Option<f64>> = vec![None; cols.len()];
    for r in records {
        let r = r.map_err(csv_error)?;
        let n = r.position().map_or(0, |p| p.line());
        if r.iter().all(str::is_empty) && r.len() <= 1 {
            continue;
        }
        if r.len() != cols.len() {
            return Err(at(
                n,
                format!("{} field(s), the header has {}", r.len(), cols.len()),
            ));
        }
        for (i, f) in r.iter().enumerate() {
            if f.is_empty() {
                continue;
            }
            match f.parse::<f64>() {
                Ok(v) if v.is_finite() => held[i] = Some(v),
                _ => {
                    return Err(at(
                        n,
                        format!("column \"{}\": \"{f}\" is not a number", cols[i]),
                    ))
                }
            }
        }
        if r[tcol].is_empty() {
            return Err(at(n, format!("no time (column \"{time_column}\")")));
        }
        let t = (held[tcol].expect("read above") * scale).round() as i64;
        if last.is_some_and(|p| t < p) {
            return Err(at(
                n,
                format!("time {} before the previous line's", &r[tcol]),
            ));
        }
        last = Some(t);
        let values = (0..cols.len())
            .filter(|&i| i != tcol)
            .map(|i| held[i])
            .collect();
        rows.push((t, values));
    }
    if rows.is_empty() {
        return Err(format!(
            "{}: no samples after the header (line {hl})",
            path.display()
        ));
    }
    let names = cols
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i != tcol)
        .map(|(_, c)| c)
        .collect();
    Ok(Table { names, rows })
}

/// What a CSV reading error says, without its position (given before it).
trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for ::csv::Error {
    fn kind_text(&self) -> String {
        match self.kind() {
            ::csv::ErrorKind::Utf8 { err, .. } => {
                format!("field {} is not UTF-8 text", err.field() + 1)
            }
            ::csv::ErrorKind::Io(e) => e.to_string(),
            _ => self.to_string(),
        }
    }
}

/// The bytes of the CSV file: a regular file only (a FIFO or a device would block or never end).
fn read_csv_file(path: &Path) -> Result<Vec<u8>, CliError> {
    let err = |what: String| CliError::new(Exit::Input, format!("{}: {what}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file".to_string()));
    }
    std::fs::read(path).map_err(|e| err(e.to_string()))
}

/// Runs `plx import`.
pub fn import(args: &ImportArgs) -> Result<(), CliError> {
    let exp = Experiment::open(&args.dir).map_err(|e| CliError::new(Exit::Input, e.to_string()))?;
    let Some(first) = exp.images.first() else {
        return Err(CliError::new(
            Exit::Input,
            format!("{}: no measured process in it", args.dir.display()),
        ));
    };
    let host = first.host.clone();
    let data = read_csv_file(&args.csv)?;
    let table = parse_csv(&args.csv, &data, &args.time_column, args.time_unit)
        .map_err(|e| CliError::new(Exit::Input, e))?;
    let stem: String = args
        .csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = args.dir.join(format!("metrics.csv-{stem}.plx"));
    // one name, one metric: the other metric files' names are taken
    let (others, _) = plx_format::read_metric_files(&args.dir);
    for f in others.iter().filter(|f| f.path != path) {
        if let Some(m) = f.metrics.iter().find(|m| table.names.contains(&m.name)) {
            return Err(CliError::new(
                Exit::Input,
                format!(
                    "{}: column \"{}\" is already a metric of {} (rename the column)",
                    args.csv.display(),
                    m.name,
                    f.path.display()
                ),
            ));
        }
    }
    let source = MetricSource {
        kind: "csv".into(),
        origin: std::fs::canonicalize(&args.csv)
            .unwrap_or_else(|_| args.csv.clone())
            .display()
            .to_string(),
        host,
        time_base: match args.time_origin {
            TimeOrigin::FirstEvent => TimeBase::FirstEvent,
            TimeOrigin::Unix => TimeBase::Unix,
            TimeOrigin::Monotonic => TimeBase::Monotonic,
        },
        period_ns: 0,
    };
    let io = |e: std::io::Error| CliError::new(Exit::Io, format!("{}: {e}", path.display()));
    // a failed write leaves no partial file under the final name, and an earlier import intact
    let staged = plx_export::StagedFile::create(&path).map_err(io)?;
    let mut w = MetricWriter::new(staged, &path, &source).map_err(io)?;
    let mut ids = Vec::new();
    for n in &table.names {
        ids.push(w.define(n, "", MetricMode::Absolute).map_err(io)?);
    }
    let mut values = Vec::new();
    for (t, row) in &table.rows {
        values.clear();
        values.extend(
            ids.iter()
                .zip(row)
                .filter_map(|(&id, v)| v.map(|v| (id, v))),
        );
        w.sample(*t, &values).map_err(io)?;
    }
    w.into_inner().commit().map_err(io)?;
    eprintln!(
        "plx: imported {} sample(s) of {} metric(s) ({}) from {} into {}",
        table.rows.len(),
        table.names.len(),
        table.names.join(", "),
        args.csv.display(),
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Table, String> {
        parse_csv(Path::new("x.csv"), text.as_bytes(), "t", TimeUnit::S)
    }

    #[test]
    fn good_csv() {
        let t = parse("t,power,temp\n0,10,40\n0.5,,41\n\n1.5,12,42\n").unwrap();
        assert_eq!(t.names, vec!["power", "temp"]);
        assert_eq!(t.rows.len(), 3);
        // an empty field: the column's previous value holds
        assert_eq!(t.rows[1], (500_000_000, vec![Some(10.0), Some(41.0)]));
        assert_eq!(t.rows[2], (1_500_000_000, vec![Some(12.0), Some(42.0)]));
    }

    /// A header quoted as RFC 4180 has it (a comma inside a name) was refused; trailing empty
    /// fields lost the column's value; the last line was kept only by luck of the split.
    #[test]
    fn quoted_header_and_trailing_empty_fields() {
        let t = parse("t,\"temp, C\",fan\r\n0,10,1000\r\n0.5,30,\r\n1.0,50,\r\n").unwrap();
        assert_eq!(t.names, vec!["temp, C", "fan"]);
        assert_eq!(
            t.rows,
            vec![
                (0, vec![Some(10.0), Some(1000.0)]),
                (500_000_000, vec![Some(30.0), Some(1000.0)]),
                (1_000_000_000, vec![Some(50.0), Some(1000.0)]),
            ]
        );
        // before a column's first value it has none
        let t = parse("t,a,b\n0,,1\n1,2,\n").unwrap();
        assert_eq!(t.rows[0].1, vec![None, Some(1.0)]);
        assert_eq!(t.rows[1].1, vec![Some(2.0), Some(1.0)]);
        assert_eq!(
            parse("t,a\n0,\"1,5\"\n").err().unwrap(),
            "x.csv:2: column \"a\": \"1,5\" is not a number"
        );
        assert_eq!(
            parse_csv(Path::new("x.csv"), b"t,a\n0,\xff\n", "t", TimeUnit::S)
                .err()
                .unwrap(),
            "x.csv:2: field 2 is not UTF-8 text"
        );
    }

    #[test]
    fn bad_csv_names_file_and_line() {
        assert_eq!(
            parse("t,a\n0,1\n1,2,3\n").err().unwrap(),
            "x.csv:3: 3 field(s), the header has 2"
        );
        assert_eq!(
            parse("t,a\n0,1\n1,abc\n").err().unwrap(),
            "x.csv:3: column \"a\": \"abc\" is not a number"
        );
        assert_eq!(
            parse("time,a\n0,1\n").err().unwrap(),
            "x.csv:1: no column \"t\" (columns: time, a)"
        );
        assert_eq!(
            parse("t,a\n2,1\n1,1\n").err().unwrap(),
            "x.csv:3: time 1 before the previous line's"
        );
        assert_eq!(
            parse("t,a,a\n").err().unwrap(),
            "x.csv:1: column \"a\" twice"
        );
        assert_eq!(
            parse("t,a\n").err().unwrap(),
            "x.csv: no samples after the header (line 1)"
        );
        assert_eq!(
            parse("t,a\n,1\n").err().unwrap(),
            "x.csv:2: no time (column \"t\")"
        );
    }
}
