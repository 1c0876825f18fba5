//! `plx histogram`: a metric over time in N bins (IPS-2's time histogram), runs overlaid: the
//! timeline's metrics, a counter's counted calls, an external metric (each computed by
//! plx-analysis), all drawn by one renderer as a text table, CSV or SVG.

use std::io::{self, Write};

use clap::ValueEnum;
use plx_analysis::histograms::{
    counter_histogram, counter_metric, external_histogram, external_names, Binned, CounterRun,
    ExternalRun,
};
use plx_analysis::timeline::{histogram as make_histogram, CpuSource, HistogramRun, Metric};
use plx_analysis::AnalysisError;
use plx_svg as svg;

use crate::args::{
    BinsArg, ByArg, ByChoice, ChartFormat, ExperimentsArgs, MetricArg, OutputArgs, PhaseArg,
};
use crate::chart::{bar, open_run, value};
use crate::csv::field;
use crate::{CliError, Exit};

/// `--by` of `plx histogram`: a series per thread or one per run.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistBy {
    /// One series per thread (location) of each run (`location` is taken for it too).
    #[value(alias = "location")]
    Thread,
    /// One series per run (per application of a session): the sum over its locations.
    Total,
}

impl ByChoice for HistBy {
    const DEFAULT: &'static str = "total";
}

/// `plx histogram`.
#[derive(clap::Args, Debug)]
pub struct HistogramArgs {
    /// The experiments or sessions (traced: plx run --trace; each run, and each application
    /// of a session, a series of its own, timed from its own first event) and --app.
    #[command(flatten)]
    pub exps: ExperimentsArgs,
    /// --phase.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// --metric: cpu (CPU utilization from CPU samples, plx run --cpu-sample; locations
    /// without samples as compute), compute (computing utilization from the trace's states:
    /// outside MPI, sockets and waits), mpi (time in MPI), messages and bytes (sent),
    /// calls:FUNC (calls beginning in the bin), time:FUNC (time inside FUNC); a counter of
    /// the runs' counters contexts, EVENT or EVENT:FUNC (its counted calls' counts, each
    /// spread over its call's time); an external metric's name.
    #[command(flatten)]
    pub metric: MetricArg,
    /// --bins: over the longest run's span.
    #[command(flatten)]
    pub bins: BinsArg,
    /// --by: one series per thread, or per run.
    #[command(flatten)]
    pub by: ByArg<HistBy>,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<ChartFormat>,
}

/// Runs `plx histogram`.
pub fn histogram(args: &HistogramArgs) -> Result<(), CliError> {
    args.bins.checked()?;
    let chart = match Metric::parse(&args.metric.metric) {
        Ok(metric) => timeline_chart(args, &metric)?,
        Err(e) => match counter_metric(&args.exps.dirs, &args.metric.metric) {
            Some((event, func)) => counter_chart(args, &event, func.as_deref())?,
            None => external_chart(args, e)?,
        },
    };
    let mut out = args.out.open()?;
    match args.out.format {
        ChartFormat::Text => text(&chart, &mut out)?,
        ChartFormat::Csv => csv(&chart, &mut out)?,
        ChartFormat::Svg => out.write_all(svg_chart(&chart).to_svg().as_bytes())?,
    }
    out.finish()?;
    Ok(())
}

/// A histogram as it is drawn: the numbers from plx-analysis, the words around them.
struct Chart {
    /// The text's lines before the bins' size.
    header: Vec<String>,
    /// The SVG's title and y axis.
    title: String,
    y_label: String,
    binned: Binned,
    /// Per series, the text after `RUN: `.
    summaries: Vec<String>,
    /// `--metric cpu`: per series where its values come from (a CSV column).
    sources: Option<Vec<String>>,
}

/// `total` or `location L`.
fn location_words(location: Option<&str>) -> String {
    location.map_or_else(|| "total".to_string(), |l| format!("location {l}"))
}

fn timeline_chart(args: &HistogramArgs, metric: &Metric) -> Result<Chart, CliError> {
    let mut runs = Vec::new();
    for dir in &args.exps.dirs {
        runs.push(open_run(
            dir,
            args.exps.app.name(),
            args.phase.spec(),
            metric.function(),
        )?);
    }
    // two runs of one name (a/x and b/x) are told apart by their paths
    for i in 0..runs.len() {
        if runs.iter().filter(|r| r.name == runs[i].name).count() > 1 {
            runs[i].name = args.exps.dirs[i].display().to_string();
        }
    }
    let inputs: Vec<HistogramRun<'_>> = runs
        .iter()
        .map(|r| HistogramRun {
            name: &r.name,
            timeline: &r.timeline,
            window: r.window,
        })
        .collect();
    let h = make_histogram(
        &inputs,
        metric,
        args.bins.bins,
        args.by.by == HistBy::Thread,
    );
    let mut header = vec![format!("{}: {}", h.metric.name(), h.metric.meaning())];
    if let Some(src) = h.cpu_source {
        header.push(format!("source: {}", src.meaning()));
    }
    let summaries = h
        .series
        .iter()
        .map(|s| {
            let total: f64 = s.values.iter().sum();
            let sum = match h.metric {
                Metric::Messages | Metric::Bytes | Metric::Calls(_) => {
                    format!("total {}", value(total))
                }
                _ => format!("mean {:.4}", total / s.values.len().max(1) as f64),
            };
            let from = match (h.cpu_source, s.cpu_source) {
                (Some(CpuSource::Mixed), Some(src)) => format!(" (from {})", src.name()),
                _ => String::new(),
            };
            format!("{}, {sum}{from}", location_words(s.location.as_deref()))
        })
        .collect();
    let sources = h.cpu_source.map(|_| {
        h.series
            .iter()
            .map(|s| s.cpu_source.map_or(String::new(), |c| c.name().to_string()))
            .collect()
    });
    Ok(Chart {
        header,
        title: format!("{}: {}", h.metric.name(), h.metric.meaning()),
        y_label: h.metric.name(),
        binned: Binned::from(&h),
        summaries,
        sources,
    })
}

/// `DIR: message` of an error reading run `dir` (the experiment's own errors name their file).
fn in_run(dir: &std::path::Path) -> impl Fn(AnalysisError) -> CliError + '_ {
    move |e| match e {
        AnalysisError::Format(_) => CliError::new(Exit::Input, format!("{}: {e}", dir.display())),
        e => e.into(),
    }
}

/// `DIR: message` of a phase that cannot be found in run `dir`.
fn phase_in_run(dir: &std::path::Path) -> impl Fn(AnalysisError) -> CliError + '_ {
    move |e| CliError::new(Exit::Input, format!("{}: {e}", dir.display()))
}

fn counter_chart(args: &HistogramArgs, event: &str, func: Option<&str>) -> Result<Chart, CliError> {
    let mut runs = Vec::new();
    for dir in &args.exps.dirs {
        let mut run =
            CounterRun::read(dir, args.exps.app.name(), event, func).map_err(in_run(dir))?;
        if let Some(p) = args.phase.spec() {
            run.clip(p).map_err(phase_in_run(dir))?;
        }
        runs.push(run);
    }
    let binned = counter_histogram(&runs, args.bins.bins, args.by.by == HistBy::Thread);
    let what = match func {
        Some(f) => format!("{event}:{f}"),
        None => event.to_string(),
    };
    let meaning = format!(
        "counter {event}{}: the counted calls' inclusive counts, each spread over its call's time (a multiplexed set: only the calls it covered)",
        func.map_or(String::new(), |f| format!(" of {f}"))
    );
    let summaries = binned
        .series
        .iter()
        .map(|s| {
            let total: f64 = s.bins.iter().map(|b| b.value).sum();
            format!(
                "{}, total {} in {} counted calls",
                location_words(s.location.as_deref()),
                value(total),
                s.calls
            )
        })
        .collect();
    Ok(Chart {
        header: vec![format!("{what}: {meaning}")],
        title: format!("{what}: counter"),
        y_label: what,
        binned,
        summaries,
        sources: None,
    })
}

/// The histogram of external metric of `--metric`, or the error `unknown` (the built-in
/// metrics' error) with the external metrics the runs have.
fn external_chart(args: &HistogramArgs, unknown: String) -> Result<Chart, CliError> {
    let mut runs = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for dir in &args.exps.dirs {
        names.extend(external_names(dir));
        let Some(mut run) = ExternalRun::read(dir, args.exps.app.name(), &args.metric.metric)?
        else {
            continue;
        };
        if let Some(p) = args.phase.spec() {
            run.clip(p).map_err(phase_in_run(dir))?;
        }
        runs.push(run);
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
    let binned = external_histogram(&runs, args.bins.bins);
    let m0 = &runs[0].metric;
    let level = runs[0].is_level();
    let how = if level {
        "time-weighted mean"
    } else {
        "increase per bin"
    };
    let unit = if m0.unit.is_empty() {
        String::new()
    } else {
        format!("{}, ", m0.unit)
    };
    let summaries = runs
        .iter()
        .map(|r| {
            let what = if level { "mean" } else { "total" };
            format!("{what} {}", value(r.total()))
        })
        .collect();
    Ok(Chart {
        header: vec![format!(
            "{}: external metric ({unit}{how}; {})",
            m0.name, m0.source
        )],
        title: format!("{}: external metric ({unit}{how})", m0.name),
        y_label: m0.name.clone(),
        binned,
        summaries,
        sources: None,
    })
}

/// A bin's value as text, `none` where it has none.
fn value_or(v: f64, none: &str) -> String {
    if v.is_finite() {
        value(v)
    } else {
        none.to_string()
    }
}

fn text(c: &Chart, out: &mut dyn Write) -> io::Result<()> {
    for line in &c.header {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "{} bins of {}; times in seconds from each run's first event",
        c.binned.bins,
        crate::units::human_time(c.binned.width_s)
    )?;
    let max = c
        .binned
        .series
        .iter()
        .flat_map(|s| s.bins.iter().map(|b| b.value))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    for (s, summary) in c.binned.series.iter().zip(&c.summaries) {
        writeln!(out)?;
        writeln!(out, "{}: {summary}", s.run)?;
        writeln!(
            out,
            "{:>5}  {:>12}  {:>12}  {:>12}",
            "bin", "start_s", "end_s", "value"
        )?;
        for (i, b) in s.bins.iter().enumerate() {
            writeln!(
                out,
                "{i:>5}  {:>12.6}  {:>12.6}  {:>12}  {}",
                b.start_s,
                b.end_s,
                value_or(b.value, "-"),
                bar(b.value, max, 40)
            )?;
        }
    }
    Ok(())
}

/// CSV rows; `--metric cpu` adds a `source` column (samples, states or mixed: where the
/// series' values come from).
fn csv(c: &Chart, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "series,location,bin,start_s,end_s,value{}",
        if c.sources.is_some() { ",source" } else { "" }
    )?;
    for (k, s) in c.binned.series.iter().enumerate() {
        let loc = s.location.as_deref().unwrap_or("total");
        let source = match &c.sources {
            Some(src) if !src[k].is_empty() => format!(",{}", src[k]),
            _ => String::new(),
        };
        for (i, b) in s.bins.iter().enumerate() {
            writeln!(
                out,
                "{},{},{i},{:.9},{:.9},{}{source}",
                field(&s.run),
                field(loc),
                b.start_s,
                b.end_s,
                value_or(b.value, "")
            )?;
        }
    }
    Ok(())
}

/// The step plot of the histogram: one polyline per series.
fn svg_chart(c: &Chart) -> svg::Figure {
    let series: Vec<svg::StepSeries> = c
        .binned
        .series
        .iter()
        .map(|s| svg::StepSeries {
            name: match &s.location {
                Some(l) => format!("{} {l}", s.run),
                None => s.run.clone(),
            },
            points: s
                .bins
                .iter()
                .map(|b| (b.start_s, if b.value.is_finite() { b.value } else { 0.0 }))
                .collect(),
            end_x: s.bins.last().map_or(0.0, |b| b.end_s),
        })
        .collect();
    svg::step_plot(
        &svg::Chart {
            title: c.title.clone(),
            x_label: "time (s from the run's first event)".into(),
            y_label: c.y_label.clone(),
        },
        &series,
    )
}
