//! `plx import`: a CSV file's columns as external time series of an experiment (`DIR/metrics.csv-<name>.plx`).
//!
//! The CSV is checked whole before anything is written: a header naming distinct columns, the
//! time column among them, the same number of fields on every line, every field a number (an
//! empty field: no value of that column at that time), times never decreasing. An error names
//! the file and the line.

use std::path::Path;

use plx_format::{Experiment, MetricMode, MetricSource, MetricWriter, TimeBase};

use crate::cli::{ImportArgs, TimeOrigin, TimeUnit};
use crate::CliError;

/// A parsed CSV: metric names, then per line (time ns, values by column, None when empty).
struct Table {
    names: Vec<String>,
    rows: Vec<(i64, Vec<Option<f64>>)>,
}

fn parse_csv(path: &Path, text: &str, time_column: &str, unit: TimeUnit) -> Result<Table, String> {
    let at = |line: usize, what: String| format!("{}:{line}: {what}", path.display());
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let (hl, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| format!("{}: empty file (a header line is needed)", path.display()))?;
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    for (i, c) in cols.iter().enumerate() {
        if c.is_empty() {
            return Err(at(hl, format!("column {} has no name", i + 1)));
        }
        if cols[..i].contains(c) {
            return Err(at(hl, format!("column \"{c}\" twice")));
        }
    }
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
    for (n, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != cols.len() {
            return Err(at(
                n,
                format!("{} field(s), the header has {}", fields.len(), cols.len()),
            ));
        }
        let mut values = Vec::with_capacity(cols.len() - 1);
        let mut time = None;
        for (i, f) in fields.iter().enumerate() {
            let v = if f.is_empty() {
                None
            } else {
                match f.parse::<f64>() {
                    Ok(v) if v.is_finite() => Some(v),
                    _ => {
                        return Err(at(
                            n,
                            format!("column \"{}\": \"{f}\" is not a number", cols[i]),
                        ))
                    }
                }
            };
            if i == tcol {
                let v = v.ok_or_else(|| at(n, format!("no time (column \"{time_column}\")")))?;
                time = Some((v * scale).round() as i64);
            } else {
                values.push(v);
            }
        }
        let t = time.expect("the time column was read");
        if let Some(p) = last {
            if t < p {
                return Err(at(
                    n,
                    format!("time {} before the previous line's", fields[tcol]),
                ));
            }
        }
        last = Some(t);
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

/// Runs `plx import`.
pub fn import(args: &ImportArgs) -> Result<(), CliError> {
    let exp = Experiment::open(&args.dir).map_err(|e| CliError::new(2, e.to_string()))?;
    let Some(first) = exp.images.first() else {
        return Err(CliError::new(
            2,
            format!("{}: no measured process in it", args.dir.display()),
        ));
    };
    let host = first.host.clone();
    let text = std::fs::read_to_string(&args.csv)
        .map_err(|e| CliError::new(2, format!("{}: {e}", args.csv.display())))?;
    let table = parse_csv(&args.csv, &text, &args.time_column, args.time_unit)
        .map_err(|e| CliError::new(2, e))?;
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
                2,
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
    let io = |e: std::io::Error| CliError::new(1, format!("{}: {e}", path.display()));
    let mut w = MetricWriter::create(&path, &source).map_err(io)?;
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
    w.flush().map_err(io)?;
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
        parse_csv(Path::new("x.csv"), text, "t", TimeUnit::S)
    }

    #[test]
    fn good_csv() {
        let t = parse("t,power,temp\n0,10,40\n0.5,,41\n\n1.5,12,42\n").unwrap();
        assert_eq!(t.names, vec!["power", "temp"]);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[1], (500_000_000, vec![None, Some(41.0)]));
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
