//! `plx histogram`: a metric over time in N bins (IPS-2's time histogram), runs overlaid, as a text table, CSV or SVG.

use std::io::{self, Write};

use clap::ValueEnum;
use plx_analysis::timeline::{
    histogram as make_histogram, CpuSource, Histogram, HistogramRun, Metric,
};
use plx_svg as svg;

use crate::args::{ChartFormat, ExperimentsArgs, OutputArgs, PhaseArg};
use crate::chart::{bar, check_bins, open_run, value};
use crate::csv::field;
use crate::CliError;

/// `--by` of `plx histogram`: a series per thread or one per run.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistBy {
    /// One series per thread (location) of each run (`location` is taken for it too).
    #[value(alias = "location")]
    Thread,
    /// One series per run (per application of a session): the sum over its locations.
    Total,
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
    /// The metric: cpu (CPU utilization from CPU samples, plx run --cpu-sample; locations
    /// without samples as compute), compute (computing utilization from the trace's states:
    /// outside MPI, sockets and waits), mpi (time in MPI), messages and bytes (sent),
    /// calls:FUNC (calls beginning in the bin), time:FUNC (time inside FUNC); a counter of
    /// the runs' counters contexts, EVENT or EVENT:FUNC (its counted calls' counts, each
    /// spread over its call's time); an external metric's name.
    #[arg(long, value_name = "M")]
    pub metric: String,
    /// Number of bins (over the longest run's span).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub bins: usize,
    /// One series per thread, or per run.
    #[arg(long, value_enum, default_value_t = HistBy::Total)]
    pub by: HistBy,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<ChartFormat>,
}

/// Runs `plx histogram`.
pub fn histogram(args: &HistogramArgs) -> Result<(), CliError> {
    check_bins(args.bins)?;
    let metric = match Metric::parse(&args.metric) {
        Ok(m) => m,
        Err(e) => {
            if let Some((event, func)) =
                crate::histogram_counters::counter_metric(&args.exps.dirs, &args.metric)
            {
                return crate::histogram_counters::histogram(args, &event, func.as_deref());
            }
            return crate::histogram_external::histogram(args, e);
        }
    };
    let mut runs = Vec::new();
    for dir in &args.exps.dirs {
        runs.push(open_run(
            dir,
            args.exps.app.name(),
            args.phase.phase.as_ref(),
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
    let h = make_histogram(&inputs, &metric, args.bins, args.by == HistBy::Thread);
    let mut out = args.out.open()?;
    match args.out.format {
        ChartFormat::Text => text(&h, &mut out)?,
        ChartFormat::Csv => csv(&h, &mut out)?,
        ChartFormat::Svg => out.write_all(chart(&h).to_svg().as_bytes())?,
    }
    out.finish()?;
    Ok(())
}

fn series_title(s: &plx_analysis::timeline::Series) -> String {
    match &s.location {
        Some(l) => format!("{} {l}", s.name),
        None => s.name.clone(),
    }
}

fn text(h: &Histogram, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}: {}", h.metric.name(), h.metric.meaning())?;
    if let Some(src) = h.cpu_source {
        writeln!(out, "source: {}", src.meaning())?;
    }
    writeln!(
        out,
        "{} bins of {}; times in seconds from each run's first event",
        h.bins,
        crate::units::human_time(h.width_s)
    )?;
    let max = h
        .series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    for s in &h.series {
        let total: f64 = s.values.iter().sum();
        writeln!(out)?;
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
        writeln!(
            out,
            "{}: {}, {sum}{from}",
            s.name,
            s.location
                .as_ref()
                .map_or_else(|| "total".to_string(), |l| format!("location {l}"))
        )?;
        writeln!(
            out,
            "{:>5}  {:>12}  {:>12}  {:>12}",
            "bin", "start_s", "end_s", "value"
        )?;
        for (i, v) in s.values.iter().enumerate() {
            let (a, b) = s.grid.edges_s(i, s.origin_ns);
            writeln!(
                out,
                "{i:>5}  {a:>12.6}  {b:>12.6}  {:>12}  {}",
                value(*v),
                bar(*v, max, 40)
            )?;
        }
    }
    Ok(())
}

/// CSV rows; `--metric cpu` adds a `source` column (samples, states or mixed: where the
/// series' values come from).
fn csv(h: &Histogram, out: &mut dyn Write) -> io::Result<()> {
    let with_source = h.cpu_source.is_some();
    writeln!(
        out,
        "series,location,bin,start_s,end_s,value{}",
        if with_source { ",source" } else { "" }
    )?;
    for s in &h.series {
        let loc = s.location.as_deref().unwrap_or("total");
        let source = match s.cpu_source {
            Some(src) if with_source => format!(",{}", src.name()),
            _ => String::new(),
        };
        for (i, v) in s.values.iter().enumerate() {
            let (a, b) = s.grid.edges_s(i, s.origin_ns);
            writeln!(
                out,
                "{},{},{i},{a:.9},{b:.9},{}{source}",
                field(&s.name),
                field(loc),
                value(*v)
            )?;
        }
    }
    Ok(())
}

/// The step plot of the histogram: one polyline per series.
fn chart(h: &Histogram) -> svg::Figure {
    let series: Vec<svg::StepSeries> = h
        .series
        .iter()
        .map(|s| {
            let points = (0..s.values.len())
                .map(|i| (s.grid.edges_s(i, s.origin_ns).0, s.values[i]))
                .collect();
            svg::StepSeries {
                name: series_title(s),
                points,
                end_x: s
                    .grid
                    .edges_s(s.values.len().saturating_sub(1), s.origin_ns)
                    .1,
            }
        })
        .collect();
    svg::step_plot(
        &svg::Chart {
            title: format!("{}: {}", h.metric.name(), h.metric.meaning()),
            x_label: "time (s from the run's first event)".into(),
            y_label: h.metric.name(),
        },
        &series,
    )
}
