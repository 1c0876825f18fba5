//! `plx display`: JPVS's processor and communication displays and IPS-2's NPT profile, as text, CSV or SVG.

use std::io::{self, Write};

use clap::ValueEnum;
use plx_analysis::timeline::{
    concurrency, gantt, messages_in, npt, queue_length, space_time, utilization, Grid, State,
    Timeline,
};
use plx_svg as svg;

use crate::args::{BinsArg, ChartFormat, ExperimentArgs, OutputArgs, PhaseArg};
use crate::chart::{bar, open_run, Run};
use crate::csv::field;
use crate::CliError;

/// The displays.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Utilization summary: per location, seconds and % computing, in MPI, waiting, idle.
    Utilization,
    /// Utilization Gantt chart: per location, its state intervals.
    Gantt,
    /// Concurrency profile: the time with k = 0..N locations computing, and its curve.
    Concurrency,
    /// Message queue length over time: messages sent and not yet received.
    Queue,
    /// Space-time diagram: a line per location, a line per message from send to receive.
    Spacetime,
    /// NPT profile: each function's normalized processor time.
    Npt,
}

/// `plx display`.
#[derive(clap::Args, Debug)]
pub struct DisplayArgs {
    /// The experiment or session (traced: plx run --trace) and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// Which display.
    #[arg(long, value_enum)]
    pub kind: Kind,
    /// --bins: of the curves over time (concurrency, queue).
    #[command(flatten)]
    pub bins: BinsArg,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<ChartFormat>,
}

/// The colours of the states in charts.
const STATES: [svg::Category<'static>; 4] = [
    svg::Category {
        name: "computing",
        color: "#2ca02c",
    },
    svg::Category {
        name: "mpi",
        color: "#d62728",
    },
    svg::Category {
        name: "wait",
        color: "#ff7f0e",
    },
    svg::Category {
        name: "idle",
        color: "#dddddd",
    },
];

/// Seconds of `ns` from the run's first event.
fn rel(tl: &Timeline, ns: i64) -> f64 {
    (ns - tl.origin_ns) as f64 * 1e-9
}

/// Runs `plx display`.
pub fn display(args: &DisplayArgs) -> Result<(), CliError> {
    let bins = args.bins.checked()?;
    let run = open_run(&args.exp.dir, args.exp.app.name(), args.phase.spec(), None)?;
    let mut out = args.out.open()?;
    let f = args.out.format;
    match args.kind {
        Kind::Utilization => show_utilization(&run, f, &mut out)?,
        Kind::Gantt => show_gantt(&run, f, &mut out)?,
        Kind::Concurrency => show_concurrency(&run, bins, f, &mut out)?,
        Kind::Queue => show_queue(&run, bins, f, &mut out)?,
        Kind::Spacetime => show_space_time(&run, f, &mut out)?,
        Kind::Npt => show_npt(&run, f, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

fn heading(run: &Run, what: &str, out: &mut dyn Write) -> io::Result<()> {
    let (s, e) = run.timeline.span(run.window);
    writeln!(
        out,
        "{what} of {}: {} locations, {:.6} s to {:.6} s from the first event",
        run.name,
        run.timeline.locations.len(),
        rel(&run.timeline, s),
        rel(&run.timeline, e)
    )
}

fn labels(tl: &Timeline) -> Vec<String> {
    tl.locations.iter().map(|l| l.label.clone()).collect()
}

fn show_utilization(run: &Run, f: ChartFormat, out: &mut dyn Write) -> io::Result<()> {
    let tl = &run.timeline;
    let rows = utilization(tl, run.window);
    let mut total = [0.0; 4];
    for r in &rows {
        for (t, s) in total.iter_mut().zip(r.seconds) {
            *t += s;
        }
    }
    match f {
        ChartFormat::Text => {
            heading(run, "Utilization", out)?;
            writeln!(out)?;
            write!(out, "{:<14}", "location")?;
            for s in State::ALL {
                write!(out, "  {:>11}  {:>6}", format!("{}_s", s.name()), "%")?;
            }
            writeln!(out, "  computing")?;
            let all = rows.iter().map(|r| (r.location.as_str(), r.seconds)).chain(
                // the total's percentages are of all locations' time together
                std::iter::once(("total", total)),
            );
            for (loc, secs) in all {
                let sum: f64 = secs.iter().sum();
                write!(out, "{loc:<14}")?;
                for s in secs {
                    let pct = if sum > 0.0 { 100.0 * s / sum } else { 0.0 };
                    write!(out, "  {s:>11.6}  {pct:>6.1}")?;
                }
                writeln!(out, "  {}", bar(secs[0], sum, 20))?;
            }
            let span = rows.first().map_or(0.0, |r| r.total_s());
            if rows.len() > 1 && span > 0.0 {
                writeln!(
                    out,
                    "\nmean locations computing: {:.3} of {}",
                    total[0] / span,
                    rows.len()
                )?;
            }
        }
        ChartFormat::Csv => {
            writeln!(
                out,
                "location,computing_s,mpi_s,wait_s,idle_s,computing_pct,mpi_pct,wait_pct,idle_pct"
            )?;
            let all = rows
                .iter()
                .map(|r| (r.location.as_str(), r.seconds))
                .chain(std::iter::once(("total", total)));
            for (loc, secs) in all {
                let sum: f64 = secs.iter().sum();
                write!(out, "{}", field(loc))?;
                for s in secs {
                    write!(out, ",{s:.9}")?;
                }
                for s in secs {
                    let pct = if sum > 0.0 { 100.0 * s / sum } else { 0.0 };
                    write!(out, ",{pct:.3}")?;
                }
                writeln!(out)?;
            }
        }
        ChartFormat::Svg => {
            let values: Vec<Vec<f64>> = rows.iter().map(|r| r.seconds.to_vec()).collect();
            let fig = svg::stacked_bars(
                &svg::Chart {
                    title: format!("Utilization summary: {}", run.name),
                    x_label: "seconds".into(),
                    y_label: String::new(),
                },
                &labels(tl),
                &STATES,
                &values,
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    Ok(())
}

fn show_gantt(run: &Run, f: ChartFormat, out: &mut dyn Write) -> io::Result<()> {
    let tl = &run.timeline;
    let rows = gantt(tl, run.window);
    let (s, e) = tl.span(run.window);
    match f {
        ChartFormat::Text => {
            heading(run, "Utilization Gantt chart", out)?;
            writeln!(
                out,
                "one column per {:.6} s: # computing, M mpi, w wait, . idle (the state of most of the column)\n",
                (e - s) as f64 * 1e-9 / 60.0
            )?;
            let grid = Grid::over(s, e, 60);
            for (li, segs) in rows.iter().enumerate() {
                let mut cols = vec![[0.0f64; 4]; grid.bins];
                for g in segs {
                    grid.for_each_overlap(g.start_ns, g.end_ns, |i, ns| {
                        cols[i][g.state as usize] += ns
                    });
                }
                let line: String = cols
                    .iter()
                    .map(|c| {
                        let best = (0..4)
                            .max_by(|&a, &b| c[a].total_cmp(&c[b]).then(b.cmp(&a)))
                            .unwrap_or(3);
                        ['#', 'M', 'w', '.'][best]
                    })
                    .collect();
                writeln!(
                    out,
                    "{:<14} |{line}| {} intervals",
                    tl.locations[li].label,
                    segs.len()
                )?;
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "location,state,start_s,end_s")?;
            for (li, segs) in rows.iter().enumerate() {
                for g in segs {
                    writeln!(
                        out,
                        "{},{},{:.9},{:.9}",
                        field(&tl.locations[li].label),
                        g.state.name(),
                        rel(tl, g.start_ns),
                        rel(tl, g.end_ns)
                    )?;
                }
            }
        }
        ChartFormat::Svg => {
            let intervals: Vec<svg::Interval> = rows
                .iter()
                .enumerate()
                .flat_map(|(li, segs)| {
                    segs.iter().map(move |g| svg::Interval {
                        row: li,
                        start: rel(tl, g.start_ns),
                        end: rel(tl, g.end_ns),
                        category: g.state as usize,
                    })
                })
                .collect();
            let fig = svg::gantt(
                &svg::Chart {
                    title: format!("Utilization Gantt chart: {}", run.name),
                    x_label: "time (s from the first event)".into(),
                    y_label: String::new(),
                },
                &labels(tl),
                (rel(tl, s), rel(tl, e)),
                &intervals,
                &STATES,
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    Ok(())
}

fn show_concurrency(run: &Run, bins: usize, f: ChartFormat, out: &mut dyn Write) -> io::Result<()> {
    let tl = &run.timeline;
    let c = concurrency(tl, run.window, bins);
    let span: f64 = c.seconds.iter().sum();
    match f {
        ChartFormat::Text => {
            heading(run, "Concurrency profile", out)?;
            writeln!(out, "\n{:>5}  {:>12}  {:>6}", "k", "seconds", "%")?;
            let max = c.seconds.iter().copied().fold(0.0, f64::max);
            for (k, s) in c.seconds.iter().enumerate() {
                let pct = if span > 0.0 { 100.0 * s / span } else { 0.0 };
                writeln!(out, "{k:>5}  {s:>12.6}  {pct:>6.1}  {}", bar(*s, max, 40))?;
            }
            writeln!(out, "\nlocations computing over time\n")?;
            writeln!(
                out,
                "{:>5}  {:>12}  {:>12}  {:>8}  {:>4}",
                "bin", "start_s", "end_s", "mean", "max"
            )?;
            let top = c.locations as f64;
            for i in 0..c.grid.bins {
                let (a, b) = c.grid.edges_s(i, tl.origin_ns);
                writeln!(
                    out,
                    "{i:>5}  {a:>12.6}  {b:>12.6}  {:>8.3}  {:>4}  {}",
                    c.mean[i],
                    c.max[i],
                    bar(c.mean[i], top, 40)
                )?;
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "k,seconds,fraction")?;
            for (k, s) in c.seconds.iter().enumerate() {
                let frac = if span > 0.0 { s / span } else { 0.0 };
                writeln!(out, "{k},{s:.9},{frac:.6}")?;
            }
        }
        ChartFormat::Svg => {
            let labels: Vec<String> = (0..c.seconds.len()).map(|k| k.to_string()).collect();
            let profile = svg::bars(
                &svg::Chart {
                    title: format!("Concurrency profile: {}", run.name),
                    x_label: "locations computing at once (k)".into(),
                    y_label: "seconds".into(),
                },
                &labels,
                &c.seconds,
                "#2ca02c",
            );
            let curve = svg::step_plot(
                &svg::Chart {
                    title: "Locations computing over time (mean per bin)".into(),
                    x_label: "time (s from the first event)".into(),
                    y_label: "locations".into(),
                },
                &[svg::StepSeries {
                    name: "mean computing".into(),
                    points: (0..c.grid.bins)
                        .map(|i| (c.grid.edges_s(i, tl.origin_ns).0, c.mean[i]))
                        .collect(),
                    end_x: c.grid.edges_s(c.grid.bins - 1, tl.origin_ns).1,
                }],
            );
            out.write_all(svg::document(&[profile, curve]).as_bytes())?;
        }
    }
    Ok(())
}

fn show_queue(run: &Run, bins: usize, f: ChartFormat, out: &mut dyn Write) -> io::Result<()> {
    let tl = &run.timeline;
    let q = queue_length(tl, run.window, bins);
    match f {
        ChartFormat::Text => {
            heading(run, "Message queue length", out)?;
            let (sent, unmatched) = messages_in(tl, run.window).fold((0, 0), |(n, u), m| {
                (n + 1, u + usize::from(m.receiver.is_none()))
            });
            writeln!(
                out,
                "{sent} messages sent, {unmatched} never received; queue at the end: {}\n",
                q.final_len
            )?;
            writeln!(
                out,
                "{:>5}  {:>12}  {:>12}  {:>8}  {:>6}",
                "bin", "start_s", "end_s", "mean", "max"
            )?;
            let top = q.max.iter().copied().max().unwrap_or(0) as f64;
            for i in 0..q.grid.bins {
                let (a, b) = q.grid.edges_s(i, tl.origin_ns);
                writeln!(
                    out,
                    "{i:>5}  {a:>12.6}  {b:>12.6}  {:>8.3}  {:>6}  {}",
                    q.mean[i],
                    q.max[i],
                    bar(q.max[i] as f64, top, 40)
                )?;
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "time_s,length")?;
            for &(t, l) in &q.steps {
                writeln!(out, "{:.9},{l}", rel(tl, t))?;
            }
        }
        ChartFormat::Svg => {
            let (_, e) = tl.span(run.window);
            let fig = svg::step_plot(
                &svg::Chart {
                    title: format!("Message queue length: {}", run.name),
                    x_label: "time (s from the first event)".into(),
                    y_label: "messages in flight".into(),
                },
                &[svg::StepSeries {
                    name: "queue length".into(),
                    points: q
                        .steps
                        .iter()
                        .map(|&(t, l)| (rel(tl, t), l as f64))
                        .collect(),
                    end_x: rel(tl, e),
                }],
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    Ok(())
}

fn show_space_time(run: &Run, f: ChartFormat, out: &mut dyn Write) -> io::Result<()> {
    let tl = &run.timeline;
    let msgs = space_time(tl, run.window);
    let label = |l: u32| tl.locations[l as usize].label.as_str();
    match f {
        ChartFormat::Text => {
            heading(run, "Space-time diagram", out)?;
            writeln!(out, "{} matched messages\n", msgs.len())?;
            writeln!(
                out,
                "{:<14}  {:<14}  {:>12}  {:>12}  {:>10}",
                "sender", "receiver", "send_s", "recv_s", "bytes"
            )?;
            for m in &msgs {
                writeln!(
                    out,
                    "{:<14}  {:<14}  {:>12.6}  {:>12.6}  {:>10}",
                    label(m.sender),
                    m.receiver.map_or("", label),
                    rel(tl, m.send_ns),
                    rel(tl, m.recv_ns.unwrap_or(m.send_ns)),
                    m.bytes
                )?;
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "sender,receiver,send_s,recv_s,bytes")?;
            for m in &msgs {
                writeln!(
                    out,
                    "{},{},{:.9},{:.9},{}",
                    field(label(m.sender)),
                    field(m.receiver.map_or("", label)),
                    rel(tl, m.send_ns),
                    rel(tl, m.recv_ns.unwrap_or(m.send_ns)),
                    m.bytes
                )?;
            }
        }
        ChartFormat::Svg => {
            let (s, e) = tl.span(run.window);
            let arrows: Vec<svg::Arrow> = msgs
                .iter()
                .map(|m| svg::Arrow {
                    from: m.sender as usize,
                    to: m.receiver.unwrap_or(m.sender) as usize,
                    start: rel(tl, m.send_ns),
                    end: rel(tl, m.recv_ns.unwrap_or(m.send_ns)),
                    bytes: m.bytes,
                })
                .collect();
            let fig = svg::space_time(
                &svg::Chart {
                    title: format!("Space-time diagram: {}", run.name),
                    x_label: "time (s from the first event)".into(),
                    y_label: String::new(),
                },
                &labels(tl),
                (rel(tl, s), rel(tl, e)),
                &arrows,
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    Ok(())
}

fn show_npt(run: &Run, f: ChartFormat, out: &mut dyn Write) -> Result<(), CliError> {
    let rows = npt(&run.model, &run.exp, &run.timeline, run.window)?;
    let total: f64 = rows.iter().map(|r| r.npt_s).sum();
    let pct = |v: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    match f {
        ChartFormat::Text => {
            heading(run, "NPT profile", out)?;
            writeln!(
                out,
                "normalized processor time: a function's processor time divided by the number of locations computing at the time\n"
            )?;
            writeln!(
                out,
                "{:>12}  {:>6}  {:>12}  function",
                "npt_s", "%", "processor_s"
            )?;
            for r in &rows {
                writeln!(
                    out,
                    "{:>12.6}  {:>6.2}  {:>12.6}  {}",
                    r.npt_s,
                    pct(r.npt_s),
                    r.processor_s,
                    r.function
                )?;
            }
            writeln!(out, "{total:>12.6}  {:>6.2}  {:>12}  total", 100.0, "")?;
        }
        ChartFormat::Csv => {
            writeln!(out, "function,npt_s,npt_pct,processor_s")?;
            for r in &rows {
                writeln!(
                    out,
                    "{},{:.9},{:.3},{:.9}",
                    field(&r.function),
                    r.npt_s,
                    pct(r.npt_s),
                    r.processor_s
                )?;
            }
        }
        ChartFormat::Svg => {
            let shown = &rows[..rows.len().min(30)];
            let fig = svg::bars(
                &svg::Chart {
                    title: format!("NPT profile: {}", run.name),
                    x_label: "function".into(),
                    y_label: "normalized processor time (s)".into(),
                },
                &shown.iter().map(|r| r.function.clone()).collect::<Vec<_>>(),
                &shown.iter().map(|r| r.npt_s).collect::<Vec<_>>(),
                "#1f77b4",
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    Ok(())
}
