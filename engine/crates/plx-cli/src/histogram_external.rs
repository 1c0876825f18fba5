//! `plx histogram --metric NAME` of an external metric (plx run --monitor, plx import): each run's series of it over time, as text, CSV or SVG.

use std::io::Write;

use plx_analysis::external::{external_metrics, ExternalMetric};
use plx_analysis::{BuildOptions, GlobalMerge, Model};
use plx_format::{read_metric_files, Experiment, MetricMode};
use plx_svg as svg;

use crate::args::ChartFormat;
use crate::chart::{bar, value};
use crate::histogram::HistogramArgs;
use crate::{CliError, Exit};

/// One run's series: (name, origin ns, the metric).
struct RunSeries {
    name: String,
    lo: f64,
    hi: f64,
    metric: ExternalMetric,
}

/// Runs the histogram of external metric `args.metric`, or fails with `unknown` (the built-in
/// metrics' error) and the external metrics the runs have.
pub fn histogram(args: &HistogramArgs, unknown: String) -> Result<(), CliError> {
    let mut runs = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for dir in &args.exps.dirs {
        let (files, _) = read_metric_files(dir);
        for f in &files {
            names.extend(f.metrics.iter().map(|m| m.name.clone()));
        }
        if !files
            .iter()
            .any(|f| f.metrics.iter().any(|m| m.name == args.metric))
        {
            continue;
        }
        let mut model = Model::open(dir, BuildOptions::default())?;
        if let Some(app) = &args.exps.app.app {
            model.select_app(app)?;
        }
        let origin = Experiment::open(dir).ok().and_then(|exp| {
            GlobalMerge::new(&model, &exp, Default::default())
                .ok()
                .map(|m| m.origin_ns())
        });
        let m = external_metrics(&model, &files, origin)
            .into_iter()
            .find(|m| m.name == args.metric)
            .expect("the name is in the files");
        let Some((first, last)) = m.span() else {
            continue;
        };
        let (lo, hi) = match &args.phase.phase {
            Some(spec) => {
                let w = plx_analysis::phase_window(&model, spec)
                    .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?;
                (
                    w.start_ns.max(first as i64) as f64,
                    w.end_ns.min(last as i64 + 1) as f64,
                )
            }
            None => (origin.map_or(first, |o| o as f64), last),
        };
        runs.push(RunSeries {
            name: dir.display().to_string(),
            lo,
            hi: hi.max(lo + 1.0),
            metric: m,
        });
    }
    if runs.is_empty() {
        names.sort();
        names.dedup();
        return Err(CliError::new(
            Exit::Usage,
            if names.is_empty() {
                format!("--metric: {unknown}")
            } else {
                format!(
                    "--metric: {unknown}, or an external metric: {}",
                    names.join(", ")
                )
            },
        ));
    }
    // every run's bins as wide as the longest window's, from its own start
    let width = runs.iter().map(|r| r.hi - r.lo).fold(0.0, f64::max) / args.bins as f64;
    let series: Vec<Vec<(f64, f64, f64)>> = runs
        .iter()
        .map(|r| {
            let n = (((r.hi - r.lo) / width).ceil() as usize).clamp(1, args.bins);
            r.metric
                .bins(r.lo, r.lo + width * n as f64, n)
                .into_iter()
                .map(|(a, b, v)| (a / 1e9, b / 1e9, v))
                .collect()
        })
        .collect();
    let m0 = &runs[0].metric;
    let how = match m0.mode {
        MetricMode::Absolute => "time-weighted mean",
        MetricMode::Cumulative => "increase per bin",
    };
    let unit = if m0.unit.is_empty() {
        String::new()
    } else {
        format!("{}, ", m0.unit)
    };
    let mut out = args.out.open()?;
    match args.out.format {
        ChartFormat::Text => {
            writeln!(
                out,
                "{}: external metric ({unit}{how}; {})",
                m0.name, m0.source
            )?;
            writeln!(
                out,
                "{} bins of {}; times in seconds from each run's first event",
                args.bins,
                crate::units::human_time(width / 1e9)
            )?;
            let max = series
                .iter()
                .flatten()
                .map(|x| x.2)
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            for (r, s) in runs.iter().zip(&series) {
                writeln!(out)?;
                writeln!(
                    out,
                    "{}: {} {}",
                    r.name,
                    if m0.mode == MetricMode::Absolute {
                        "mean"
                    } else {
                        "total"
                    },
                    value(r.metric.total(r.lo, r.hi))
                )?;
                writeln!(
                    out,
                    "{:>5}  {:>12}  {:>12}  {:>12}",
                    "bin", "start_s", "end_s", "value"
                )?;
                for (i, (a, b, v)) in s.iter().enumerate() {
                    writeln!(
                        out,
                        "{i:>5}  {a:>12.6}  {b:>12.6}  {:>12}  {}",
                        if v.is_finite() { value(*v) } else { "-".into() },
                        bar(*v, max, 40)
                    )?;
                }
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "series,location,bin,start_s,end_s,value")?;
            for (r, s) in runs.iter().zip(&series) {
                for (i, (a, b, v)) in s.iter().enumerate() {
                    let v = if v.is_finite() {
                        value(*v)
                    } else {
                        String::new()
                    };
                    writeln!(
                        out,
                        "{},total,{i},{a:.9},{b:.9},{v}",
                        crate::csv::field(&r.name)
                    )?;
                }
            }
        }
        ChartFormat::Svg => {
            let steps: Vec<svg::StepSeries> = runs
                .iter()
                .zip(&series)
                .map(|(r, s)| svg::StepSeries {
                    name: r.name.clone(),
                    points: s
                        .iter()
                        .map(|(a, _, v)| (*a, if v.is_finite() { *v } else { 0.0 }))
                        .collect(),
                    end_x: s.last().map_or(0.0, |x| x.1),
                })
                .collect();
            let fig = svg::step_plot(
                &svg::Chart {
                    title: format!("{}: external metric ({unit}{how})", m0.name),
                    x_label: "time (s from the run's first event)".into(),
                    y_label: m0.name.clone(),
                },
                &steps,
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    out.finish()?;
    Ok(())
}
