//! `plx compare`: IPS-2's multi-application metric table (one column per experiment, or per
//! application of a session) and the per-function differences of the last run against the
//! first, as text, CSV or JSON.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use plx_analysis::compare::{compare as compare_runs, Comparison, FunctionDiff, Run, Unit};
use plx_analysis::{BuildOptions, Model, PhaseSpec};
use serde_json::{json, Value};

use crate::args::{ExperimentsArgs, Format, OutputArgs, PhaseArg, TopArg};
use crate::csv::field;
use crate::units::human_time;
use crate::{CliError, Exit};

/// `plx compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The experiments (each one column, named after its directory; a session one column per
    /// application, `DIR:app`) and --app (that application of every session given).
    #[command(flatten)]
    pub exps: ExperimentsArgs,
    /// --phase: one phase of each run, its span in that run (needs the runs' traces).
    #[command(flatten)]
    pub phase: PhaseArg,
    /// --top: "Calls: f" rows for this many functions, by inclusive time over all runs.
    #[command(flatten)]
    pub top: TopArg,
    /// Only the per-function differences (in CSV the way to get them: the default CSV is the
    /// metric table).
    #[arg(long)]
    pub functions: bool,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

/// The functions of `plx compare`'s "Calls: f" rows without `--top`.
const COMPARE_TOP: usize = 5;

/// A column's source, for the JSON output.
struct Source {
    dir: PathBuf,
    app: Option<String>,
}

/// The last component of `dir` (of its canonical path for `.` and the like).
fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            dir.canonicalize()
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_else(|| dir.display().to_string())
}

/// The runs of the arguments: (short name, long name, model, source) per column.
fn load(args: &CompareArgs) -> Result<Vec<(String, String, Model, Source)>, CliError> {
    let opts = BuildOptions {
        rebuild_from_trace: true,
        resolve_sources: false,
    };
    let mut out = Vec::new();
    for dir in &args.exps.dirs {
        let model = Model::open(dir, opts)
            .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?;
        let short = dir_name(dir);
        let long = dir.display().to_string();
        if !model.is_session() {
            out.push((
                short,
                long,
                model,
                Source {
                    dir: dir.clone(),
                    app: None,
                },
            ));
            continue;
        }
        let apps: Vec<String> = match &args.exps.app.app {
            Some(a) => vec![a.clone()],
            None => model.apps.iter().map(|a| a.name.clone()).collect(),
        };
        for app in apps {
            let mut m = model.clone();
            m.select_app(&app)
                .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?;
            out.push((
                format!("{short}:{app}"),
                format!("{long}:{app}"),
                m,
                Source {
                    dir: dir.clone(),
                    app: Some(app),
                },
            ));
        }
    }
    Ok(out)
}

/// Column names: the short ones, or where two would be the same, the directories as given
/// (then ` #N` if still the same).
fn column_names(loaded: &[(String, String, Model, Source)]) -> Vec<String> {
    let count = |n: &str, pick: fn(&(String, String, Model, Source)) -> &str| {
        loaded.iter().filter(|l| pick(l) == n).count()
    };
    let mut names: Vec<String> = loaded
        .iter()
        .map(|l| {
            if count(&l.0, |l| &l.0) == 1 {
                l.0.clone()
            } else {
                l.1.clone()
            }
        })
        .collect();
    let given = names.clone();
    for (i, n) in names.iter_mut().enumerate() {
        if given.iter().filter(|g| *g == n).count() > 1 {
            *n = format!("{n} #{}", i + 1);
        }
    }
    names
}

/// Runs `plx compare`.
pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let loaded = load(args)?;
    let names = column_names(&loaded);
    let mut runs = Vec::new();
    let mut sources = Vec::new();
    for ((_, _, model, source), name) in loaded.into_iter().zip(names) {
        for w in model.report_warnings() {
            eprintln!("plx: warning: {name}: {w}");
        }
        if args.phase.spec().is_some() && !model.processes.iter().any(|p| p.has_trace()) {
            return Err(CliError::new(
                Exit::Input,
                format!(
                    "{name}: --phase needs the run's trace, and there is none: rerun with \
                     `plx run --trace`"
                ),
            ));
        }
        let run = Run::new(name.clone(), model, args.phase.spec())
            .map_err(|e| CliError::new(Exit::Input, format!("{name}: {e}")))?;
        runs.push(run);
        sources.push(source);
    }
    let cmp = compare_runs(&runs, args.top.top.unwrap_or(COMPARE_TOP));
    let mut out = args.out.open()?;
    match args.out.format {
        Format::Text => text(args, &cmp, &mut out)?,
        Format::Csv => csv(args, &cmp, &mut out)?,
        Format::Json => json_out(args, &cmp, &runs, &sources, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

/// A count: whole numbers as integers, others with 2 decimals.
fn count_text(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn value_text(unit: Unit, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".to_string(),
        (Unit::Seconds, Some(s)) => human_time(s),
        (Unit::Count | Unit::Bytes, Some(c)) => count_text(c),
    }
}

/// A difference of seconds with its sign.
fn diff_text(d: f64) -> String {
    if d > 0.0 {
        format!("+{}", human_time(d))
    } else {
        human_time(d)
    }
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.3}"))
}

fn text(args: &CompareArgs, cmp: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    if let Some(p) = args.phase.spec() {
        match p {
            PhaseSpec::Named(n) => writeln!(out, "phase \"{n}\" of each run")?,
            PhaseSpec::Interval { .. } => writeln!(
                out,
                "window {p} (seconds from each run's first traced event) of each run: times \
                 inside it, calls begun inside it"
            )?,
        }
        writeln!(out)?;
    }
    if !args.functions {
        metric_table(cmp, out)?;
    }
    function_table(cmp, out)
}

fn metric_table(cmp: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let cells: Vec<Vec<String>> = cmp
        .metrics
        .iter()
        .map(|m| m.values.iter().map(|v| value_text(m.unit, *v)).collect())
        .collect();
    let first = cmp
        .metrics
        .iter()
        .map(|m| m.metric.len())
        .chain(["metric".len()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..cmp.runs.len())
        .map(|i| {
            cells
                .iter()
                .map(|row| row[i].len())
                .chain([cmp.runs[i].len(), 10])
                .max()
                .unwrap_or(10)
        })
        .collect();
    write!(out, "{:<first$}", "metric")?;
    for (name, w) in cmp.runs.iter().zip(&widths) {
        write!(out, "  {name:>w$}")?;
    }
    writeln!(out)?;
    for (m, row) in cmp.metrics.iter().zip(&cells) {
        write!(out, "{:<first$}", m.metric)?;
        for (c, w) in row.iter().zip(&widths) {
            write!(out, "  {c:>w$}")?;
        }
        writeln!(out)?;
    }
    writeln!(out)
}

fn function_table(cmp: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let (Some(first), Some(last)) = (cmp.runs.first(), cmp.runs.last()) else {
        return Ok(());
    };
    if cmp.runs.len() == 1 {
        writeln!(
            out,
            "functions of {first} (one run: nothing to compare it with)"
        )?;
    } else {
        writeln!(
            out,
            "per-function differences: inclusive time of {last} minus {first}, and their ratio"
        )?;
    }
    if cmp.functions.is_empty() {
        writeln!(out, "  (no functions)")?;
        return Ok(());
    }
    let stat_cells = |f: &FunctionDiff| -> Vec<String> {
        f.runs
            .iter()
            .flat_map(|s| match s {
                Some(s) => [
                    human_time(s.inclusive_s),
                    human_time(s.exclusive_s),
                    s.calls.to_string(),
                ],
                None => ["-".to_string(), "-".to_string(), "-".to_string()],
            })
            .chain([diff_text(f.inclusive_diff_s), ratio_text(f.inclusive_ratio)])
            .collect()
    };
    let mut heads: Vec<String> = cmp
        .runs
        .iter()
        .flat_map(|r| {
            [
                format!("{r} incl"),
                format!("{r} excl"),
                format!("{r} calls"),
            ]
        })
        .collect();
    heads.push("difference".to_string());
    heads.push("ratio".to_string());
    let rows: Vec<Vec<String>> = cmp.functions.iter().map(stat_cells).collect();
    let widths: Vec<usize> = (0..heads.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([heads[i].len(), 8])
                .max()
                .unwrap_or(8)
        })
        .collect();
    for (h, w) in heads.iter().zip(&widths) {
        write!(out, "{h:>w$} ")?;
    }
    writeln!(out, " function")?;
    for (f, row) in cmp.functions.iter().zip(&rows) {
        for (c, w) in row.iter().zip(&widths) {
            write!(out, "{c:>w$} ")?;
        }
        writeln!(out, " {}", f.label())?;
    }
    Ok(())
}

/// A CSV value in base units (seconds with 9 decimals), empty when the run cannot have it.
fn csv_value(unit: Unit, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => String::new(),
        (Unit::Seconds, Some(s)) => format!("{s:.9}"),
        (Unit::Count | Unit::Bytes, Some(c)) if c.fract() == 0.0 => format!("{c:.0}"),
        (Unit::Count | Unit::Bytes, Some(c)) => format!("{c}"),
    }
}

fn csv(args: &CompareArgs, cmp: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    if args.functions {
        writeln!(
            out,
            "function,run,inclusive_s,exclusive_s,calls,inclusive_diff_s,inclusive_ratio,kind"
        )?;
        for f in &cmp.functions {
            let ratio = f
                .inclusive_ratio
                .map_or_else(String::new, |r| format!("{r:.9}"));
            for (run, s) in cmp.runs.iter().zip(&f.runs) {
                let (i, e, c) = match s {
                    Some(s) => (
                        format!("{:.9}", s.inclusive_s),
                        format!("{:.9}", s.exclusive_s),
                        s.calls.to_string(),
                    ),
                    None => Default::default(),
                };
                writeln!(
                    out,
                    "{},{},{i},{e},{c},{:.9},{ratio},{}",
                    field(&f.name),
                    field(run),
                    f.inclusive_diff_s,
                    f.kind.as_str()
                )?;
            }
        }
        return Ok(());
    }
    writeln!(out, "metric,run,value")?;
    for m in &cmp.metrics {
        for (run, v) in cmp.runs.iter().zip(&m.values) {
            writeln!(
                out,
                "{},{},{}",
                field(&m.metric),
                field(run),
                csv_value(m.unit, *v)
            )?;
        }
    }
    Ok(())
}

/// Whole counts as JSON integers, the rest as numbers, `null` when the run cannot have it.
fn json_value(unit: Unit, v: Option<f64>) -> Value {
    match (unit, v) {
        (Unit::Count | Unit::Bytes, Some(c)) if c.fract() == 0.0 && c >= 0.0 => json!(c as u64),
        (_, v) => json!(v),
    }
}

fn json_out(
    args: &CompareArgs,
    cmp: &Comparison,
    runs: &[Run],
    sources: &[Source],
    out: &mut dyn Write,
) -> io::Result<()> {
    let run_objs: Vec<Value> = runs
        .iter()
        .zip(sources)
        .map(|(r, s)| {
            json!({
                "name": r.name,
                "dir": s.dir.display().to_string(),
                "app": s.app,
                "window_ns": r.window.map(|w| json!({
                    "start": (w.start_ns != i64::MIN).then_some(w.start_ns),
                    "end": (w.end_ns != i64::MAX).then_some(w.end_ns),
                })),
            })
        })
        .collect();
    let functions: Vec<Value> = cmp
        .functions
        .iter()
        .map(|f| {
            json!({
                "function": f.name,
                "kind": f.kind.as_str(),
                "runs": f.runs.iter().map(|s| s.map(|s| json!({
                    "inclusive_s": s.inclusive_s,
                    "exclusive_s": s.exclusive_s,
                    "calls": s.calls,
                }))).collect::<Vec<_>>(),
                "inclusive_diff_s": f.inclusive_diff_s,
                "inclusive_ratio": f.inclusive_ratio,
            })
        })
        .collect();
    let mut doc = json!({
        "runs": run_objs,
        "phase": args.phase.spec().map(|p| p.to_string()),
        "functions": functions,
    });
    if !args.functions {
        doc["metrics"] = cmp
            .metrics
            .iter()
            .map(|m| {
                json!({
                    "metric": m.metric,
                    "unit": m.unit.as_str(),
                    "values": m.values.iter().map(|v| json_value(m.unit, *v)).collect::<Vec<_>>(),
                })
            })
            .collect();
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
