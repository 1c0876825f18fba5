//! `plx query`: a metric for a focus, as a total and (with a trace) a time series.

use std::io::Write;

use plx_analysis::query::{Focus, Metric};
use plx_analysis::BuildOptions;
use serde_json::json;

use crate::args::{BinsArg, ExperimentArgs, Format, MetricArg, OutputArgs, PhaseArg};
use crate::units::human_time;
use crate::{CliError, Exit};

/// `plx query`.
#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase: the total then comes from the trace.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// --metric: wall_time, cpu_time, calls, wait_time, hold_time, messages or bytes; a
    /// counter; an external metric.
    #[command(flatten)]
    pub metric: MetricArg,
    /// `code=/MODULE/FILE/FUNCTION,machine=/HOST/PROCESS/THREAD,sync=/CATEGORY/OBJECT`; an
    /// omitted hierarchy is its root (see docs/commands/plx-query.md).
    #[arg(long, value_name = "FOCUS")]
    pub focus: Option<String>,
    /// --bins: of the time series (with a trace).
    #[command(flatten)]
    pub bins: BinsArg,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

fn value_text(metric: Metric, v: f64) -> String {
    if metric.unit() == "s" {
        human_time(v)
    } else {
        format!("{v:.0}")
    }
}

/// Runs `plx query`.
pub fn query(args: &QueryArgs) -> Result<(), CliError> {
    let bins = args.bins.checked()?;
    let metric = match Metric::parse(&args.metric.metric) {
        Ok(m) => m,
        Err(e) => {
            let (files, unread) = plx_format::read_metric_files(&args.exp.dir);
            let names: Vec<&str> = files
                .iter()
                .flat_map(|f| f.metrics.iter().map(|m| m.name.as_str()))
                .collect();
            if names.contains(&args.metric.metric.as_str()) {
                crate::experiment::print_warnings(&unread);
                return query_external(args, &files);
            }
            return counter_query(
                args,
                if names.is_empty() {
                    e
                } else {
                    format!("{e}, or an external metric: {}", names.join(", "))
                },
            );
        }
    };
    let model = crate::experiment::open_app_warned(
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions::default(),
    )?;
    let h = model.hierarchies();
    let focus = Focus::parse(args.focus.as_deref().unwrap_or(""), &h)
        .map_err(|e| CliError::new(Exit::Usage, e))?;
    let window = match args.phase.spec() {
        Some(spec) => Some(plx_analysis::phase_window(&model, spec)?),
        None => None,
    };
    let r = model
        .query_in(metric, &focus, bins, window)
        .map_err(|e| CliError::new(Exit::Input, e))?;
    let mut out = args.out.open()?;
    match args.out.format {
        Format::Text => {
            writeln!(out, "metric {} ({})", metric.name(), metric.unit())?;
            writeln!(out, "focus  {}", r.focus)?;
            writeln!(
                out,
                "total  {} (from the {})",
                value_text(metric, r.total),
                r.source
            )?;
            if let Some(series) = &r.series {
                writeln!(out)?;
                writeln!(out, "{:>12} {:>12} {:>14}", "from", "to", metric.name())?;
                for (a, b, v) in series {
                    writeln!(
                        out,
                        "{:>12} {:>12} {:>14}",
                        human_time(*a),
                        human_time(*b),
                        value_text(metric, *v)
                    )?;
                }
            }
        }
        Format::Csv => {
            writeln!(out, "metric,focus,bin,start_s,end_s,value")?;
            let f = crate::csv::field(&r.focus);
            writeln!(out, "{},{f},total,,,{}", metric.name(), r.total)?;
            for (i, (a, b, v)) in r.series.iter().flatten().enumerate() {
                writeln!(out, "{},{f},{i},{a:.9},{b:.9},{v}", metric.name())?;
            }
        }
        Format::Json => {
            let doc = json!({
                "experiment": model.dir.display().to_string(),
                "metric": metric.name(),
                "unit": metric.unit(),
                "focus": r.focus,
                "total": r.total,
                "source": r.source,
                "series": r.series.as_ref().map(|s| s.iter().map(|(a, b, v)| json!({"start_s": a, "end_s": b, "value": v})).collect::<Vec<_>>()),
            });
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    out.finish()?;
    Ok(())
}

/// `plx query` of an external metric (plx run --monitor, plx import): its value over the
/// window (the phase's, else from the trace's first event, else from the first sample, to the
/// last sample) and per bin: a level's time-weighted mean, a running total's increase.
fn query_external(args: &QueryArgs, files: &[plx_format::MetricFile]) -> Result<(), CliError> {
    if args.focus.as_deref().is_some_and(|f| !f.trim().is_empty()) {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "{} is an external metric (of the whole run): it takes no --focus",
                args.metric.metric
            ),
        ));
    }
    let model = crate::experiment::open_app_warned(
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions::default(),
    )?;
    let origin = plx_format::Experiment::open(&args.exp.dir)
        .ok()
        .and_then(|exp| {
            plx_analysis::GlobalMerge::new(&model, &exp, Default::default())
                .ok()
                .map(|m| m.origin_ns())
        });
    let window = match args.phase.spec() {
        Some(spec) => Some(plx_analysis::phase_window(&model, spec)?),
        None => None,
    };
    let all = plx_analysis::external::external_metrics(&model, files, origin);
    let m = all
        .iter()
        .find(|m| m.name == args.metric.metric)
        .expect("the name was found in the files");
    let Some((first, last)) = m.span() else {
        return Err(CliError::new(
            Exit::Input,
            format!("{}: no samples", m.name),
        ));
    };
    let (lo, hi) = match window {
        Some(w) => (
            w.start_ns.max(i64::MIN / 2) as f64,
            w.end_ns.min(i64::MAX / 2) as f64,
        ),
        None => (origin.map_or(first, |o| o as f64), last),
    };
    let (lo, hi) = (lo.max(first.min(lo)), hi.max(lo + 1.0));
    let zero = origin.map_or(lo, |o| o as f64);
    let total = m.total(lo, hi);
    let series: Vec<(f64, f64, f64)> = m
        .bins(lo, hi, args.bins.bins)
        .into_iter()
        .map(|(a, b, v)| ((lo - zero + a) / 1e9, (lo - zero + b) / 1e9, v))
        .collect();
    let how = match m.mode {
        plx_format::MetricMode::Absolute => "time-weighted mean",
        plx_format::MetricMode::Cumulative => "increase",
    };
    let mut out = args.out.open()?;
    match args.out.format {
        Format::Text => {
            if m.unit.is_empty() {
                writeln!(out, "metric {} ({how})", m.name)?;
            } else {
                writeln!(out, "metric {} ({}, {how})", m.name, m.unit)?;
            }
            writeln!(out, "source {}", m.source)?;
            // a level has no value before its first sample: "-", never NaN
            let shown = |v: f64| {
                if v.is_finite() {
                    v.to_string()
                } else {
                    "-".into()
                }
            };
            writeln!(out, "total  {}", shown(total))?;
            writeln!(out)?;
            writeln!(out, "{:>12} {:>12} {:>14}", "from", "to", m.name)?;
            for (a, b, v) in &series {
                writeln!(
                    out,
                    "{:>12} {:>12} {:>14}",
                    human_time(*a),
                    human_time(*b),
                    shown(*v)
                )?;
            }
        }
        Format::Csv => {
            writeln!(out, "metric,focus,bin,start_s,end_s,value")?;
            let name = crate::csv::field(&m.name);
            let shown = |v: f64| {
                if v.is_finite() {
                    v.to_string()
                } else {
                    String::new()
                }
            };
            writeln!(out, "{name},,total,,,{}", shown(total))?;
            for (i, (a, b, v)) in series.iter().enumerate() {
                writeln!(out, "{name},,{i},{a:.9},{b:.9},{}", shown(*v))?;
            }
        }
        Format::Json => {
            let num = |v: f64| if v.is_finite() { json!(v) } else { json!(null) };
            let doc = json!({
                "experiment": model.dir.display().to_string(),
                "metric": m.name,
                "unit": m.unit,
                "mode": how,
                "focus": "",
                "total": num(total),
                "source": m.source,
                "series": series.iter().map(|(a, b, v)| json!({"start_s": a, "end_s": b, "value": num(*v)})).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    out.finish()?;
    Ok(())
}

/// `--metric EVENT` naming a counter of the experiment (page_faults or page-faults).
fn counter_query(args: &QueryArgs, not_a_metric: String) -> Result<(), CliError> {
    let model = crate::experiment::open_app_warned(
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions::default(),
    )?;
    let Some(event) = plx_analysis::counters::counter_event(&model, &args.metric.metric) else {
        return Err(CliError::new(
            Exit::Usage,
            format!("{not_a_metric}, or a counter the experiment counted"),
        ));
    };
    if args.phase.spec().is_some() {
        return Err(CliError::new(
            Exit::Usage,
            format!("{event} is a counter: its totals cover whole threads and calls, not --phase"),
        ));
    }
    let h = model.hierarchies();
    let focus = Focus::parse(args.focus.as_deref().unwrap_or(""), &h)
        .map_err(|e| CliError::new(Exit::Usage, e))?;
    let r = plx_analysis::counters::counter_query(&model, &event, &focus)
        .map_err(|e| CliError::new(Exit::Input, e))?;
    let mut out = args.out.open()?;
    let est = if r.estimated { " (estimate)" } else { "" };
    match args.out.format {
        Format::Text => {
            writeln!(out, "metric {event} (count)")?;
            writeln!(out, "focus  {}", focus.text)?;
            writeln!(out, "total  {:.0}{est} (from the {})", r.total, r.source)?;
        }
        Format::Csv => {
            writeln!(out, "metric,focus,bin,start_s,end_s,value")?;
            let f = crate::csv::field(&focus.text);
            writeln!(out, "{},{f},total,,,{}", crate::csv::field(&event), r.total)?;
        }
        Format::Json => {
            let doc = json!({
                "experiment": model.dir.display().to_string(),
                "metric": event, "unit": "count", "focus": focus.text, "total": r.total,
                "estimated": r.estimated, "source": r.source, "series": null,
            });
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    out.finish()?;
    Ok(())
}
