//! `plx histogram --metric EVENT[:FUNC]` of a counter: the counted calls' inclusive counts over time (each call's count spread over its duration), per location or in total.

use std::io::Write;
use std::path::Path;

use plx_analysis::{BuildOptions, EventKind, GlobalMerge, Model};
use plx_format::Experiment;
use plx_svg as svg;

use crate::args::ChartFormat;
use crate::chart::{bar, value};
use crate::histogram::{HistBy, HistogramArgs};
use crate::{CliError, Exit};

/// A counted call: its location, its span (ns on the merge's time base) and its count.
struct Call {
    location: usize,
    start: i64,
    end: i64,
    count: u64,
}

/// One run's counted calls of the event.
struct RunCalls {
    name: String,
    locations: Vec<String>,
    lo: i64,
    hi: i64,
    calls: Vec<Call>,
}

/// Whether `metric` names a counter event (`EVENT` or `EVENT:FUNC`, `_` for `-` allowed) of any
/// run: `(event, function)`.
pub fn counter_metric(
    dirs: &[std::path::PathBuf],
    metric: &str,
) -> Option<(String, Option<String>)> {
    let (ev, func) = match metric.split_once(':') {
        Some((e, f)) if !f.is_empty() => (e, Some(f.to_string())),
        _ => (metric, None),
    };
    let names = event_names(dirs);
    let ev = names
        .into_iter()
        .find(|n| n == ev || n.replace('-', "_") == ev)?;
    Some((ev, func))
}

/// The counted (not refused) events of the runs' counters contexts.
fn event_names(dirs: &[std::path::PathBuf]) -> Vec<String> {
    let mut names = Vec::new();
    for d in dirs {
        let Ok(model) = Model::open(d, BuildOptions::default()) else {
            continue;
        };
        for p in &model.processes {
            for s in p.counters.sets.values().filter(|s| s.context.is_some()) {
                for (e, &refused) in s.events.iter().zip(&s.refused) {
                    if refused == 0 && !names.contains(e) {
                        names.push(e.clone());
                    }
                }
            }
        }
    }
    names
}

fn read_run(
    dir: &Path,
    args: &HistogramArgs,
    event: &str,
    func: Option<&str>,
) -> Result<RunCalls, CliError> {
    let exp = Experiment::open(dir)
        .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?;
    let mut model = Model::build(&exp, BuildOptions::default());
    if let Some(app) = &args.exps.app.app {
        model.select_app(app)?;
    }
    let mut merge = GlobalMerge::with_counters(&model, &exp, Default::default())?;
    let locs = merge.locations().to_vec();
    // per location: the open regions and their entry times
    let mut open: Vec<Vec<(u32, i64)>> = vec![Vec::new(); locs.len()];
    let mut calls = Vec::new();
    let (lo, mut hi) = (merge.origin_ns(), merge.origin_ns());
    while let Some(e) = merge.next_event() {
        let l = e.location as usize;
        hi = hi.max(e.time_ns);
        match e.kind {
            EventKind::Enter { region } => open[l].push((region, e.time_ns)),
            EventKind::Exit { region } => {
                if let Some(k) = open[l].iter().rposition(|&(r, _)| r == region) {
                    open[l].truncate(k);
                }
            }
            EventKind::Counted {
                set,
                region,
                values,
            } => {
                if func.is_some_and(|f| merge.regions().name(region) != f) {
                    continue;
                }
                let Some(s) = model.processes[locs[l].process].counters.sets.get(&set) else {
                    continue;
                };
                let Some(i) = s
                    .events
                    .iter()
                    .take(4)
                    .position(|n| n == event)
                    .filter(|&i| s.refused[i] == 0)
                else {
                    continue;
                };
                let start = open[l]
                    .iter()
                    .rev()
                    .find(|&&(r, _)| r == region)
                    .map_or(e.time_ns, |&(_, t)| t);
                calls.push(Call {
                    location: l,
                    start,
                    end: e.time_ns,
                    count: values[i],
                });
            }
            _ => {}
        }
    }
    let (lo, hi) = match &args.phase.phase {
        Some(spec) => {
            let w = plx_analysis::phase_window(&model, spec)
                .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?;
            (w.start_ns.max(lo), w.end_ns.min(hi + 1))
        }
        None => (lo, hi + 1),
    };
    Ok(RunCalls {
        name: dir.display().to_string(),
        locations: locs.iter().map(|l| l.label()).collect(),
        lo,
        hi: hi.max(lo + 1),
        calls,
    })
}

/// The count of each bin `[lo + i·width, lo + (i+1)·width)`: each call's count shared among the
/// bins its span overlaps, in proportion to the overlap (a call of no duration counts in the
/// bin of its end).
fn bins(calls: &[&Call], lo: i64, width: f64, n: usize) -> Vec<f64> {
    let mut v = vec![0.0; n];
    let bin_of = |t: f64| (((t - lo as f64) / width).floor().max(0.0) as usize).min(n - 1);
    for c in calls {
        let (a, b) = (c.start as f64, c.end as f64);
        let hi = lo as f64 + width * n as f64;
        if b < lo as f64 || a >= hi {
            continue;
        }
        if b <= a {
            v[bin_of(b)] += c.count as f64;
            continue;
        }
        let (ca, cb) = (a.max(lo as f64), b.min(hi));
        for (i, x) in v
            .iter_mut()
            .enumerate()
            .take(bin_of(cb) + 1)
            .skip(bin_of(ca))
        {
            let (s, e) = (
                lo as f64 + width * i as f64,
                lo as f64 + width * (i + 1) as f64,
            );
            let overlap = (e.min(cb) - s.max(ca)).max(0.0);
            *x += c.count as f64 * overlap / (b - a);
        }
    }
    v
}

/// Runs the histogram of counter `event` (of the calls of `func` only, when given).
pub fn histogram(args: &HistogramArgs, event: &str, func: Option<&str>) -> Result<(), CliError> {
    let mut runs = Vec::new();
    for dir in &args.exps.dirs {
        runs.push(read_run(dir, args, event, func)?);
    }
    let width = runs
        .iter()
        .map(|r| (r.hi - r.lo) as f64)
        .fold(0.0, f64::max)
        / args.bins as f64;
    // (run, location or None for the total, bins)
    let mut series: Vec<(usize, Option<usize>, Vec<f64>)> = Vec::new();
    for (k, r) in runs.iter().enumerate() {
        let n = (((r.hi - r.lo) as f64 / width).ceil() as usize).clamp(1, args.bins);
        if args.by == HistBy::Thread {
            for l in 0..r.locations.len() {
                let calls: Vec<&Call> = r.calls.iter().filter(|c| c.location == l).collect();
                if !calls.is_empty() {
                    series.push((k, Some(l), bins(&calls, r.lo, width, n)));
                }
            }
        } else {
            let calls: Vec<&Call> = r.calls.iter().collect();
            series.push((k, None, bins(&calls, r.lo, width, n)));
        }
    }
    let what = match func {
        Some(f) => format!("{event}:{f}"),
        None => event.to_string(),
    };
    let meaning = format!(
        "counter {event}{}: the counted calls' inclusive counts, each spread over its call's time (a multiplexed set: only the calls it covered)",
        func.map_or(String::new(), |f| format!(" of {f}"))
    );
    let edges = |k: usize, i: usize| {
        let lo = runs[k].lo as f64;
        (
            (width * i as f64) / 1e9,
            (width * (i + 1) as f64).min((runs[k].hi as f64) - lo) / 1e9,
        )
    };
    let loc_name = |k: usize, l: Option<usize>| {
        l.map_or_else(|| "total".to_string(), |l| runs[k].locations[l].clone())
    };
    let mut out = args.out.open()?;
    match args.out.format {
        ChartFormat::Text => {
            writeln!(out, "{what}: {meaning}")?;
            writeln!(
                out,
                "{} bins of {}; times in seconds from each run's first event",
                args.bins,
                crate::units::human_time(width / 1e9)
            )?;
            let max = series
                .iter()
                .flat_map(|s| s.2.iter().copied())
                .fold(0.0, f64::max);
            for (k, l, v) in &series {
                writeln!(out)?;
                let calls = runs[*k]
                    .calls
                    .iter()
                    .filter(|c| l.is_none_or(|l| c.location == l))
                    .count();
                writeln!(
                    out,
                    "{}: {}, total {} in {calls} counted calls",
                    runs[*k].name,
                    l.map_or_else(
                        || "total".to_string(),
                        |l| format!("location {}", runs[*k].locations[l])
                    ),
                    value(v.iter().sum())
                )?;
                writeln!(
                    out,
                    "{:>5}  {:>12}  {:>12}  {:>12}",
                    "bin", "start_s", "end_s", "value"
                )?;
                for (i, x) in v.iter().enumerate() {
                    let (a, b) = edges(*k, i);
                    writeln!(
                        out,
                        "{i:>5}  {a:>12.6}  {b:>12.6}  {:>12}  {}",
                        value(*x),
                        bar(*x, max, 40)
                    )?;
                }
            }
        }
        ChartFormat::Csv => {
            writeln!(out, "series,location,bin,start_s,end_s,value")?;
            for (k, l, v) in &series {
                for (i, x) in v.iter().enumerate() {
                    let (a, b) = edges(*k, i);
                    writeln!(
                        out,
                        "{},{},{i},{a:.9},{b:.9},{}",
                        crate::csv::field(&runs[*k].name),
                        crate::csv::field(&loc_name(*k, *l)),
                        value(*x)
                    )?;
                }
            }
        }
        ChartFormat::Svg => {
            let steps: Vec<svg::StepSeries> = series
                .iter()
                .map(|(k, l, v)| svg::StepSeries {
                    name: match l {
                        Some(_) => format!("{} {}", runs[*k].name, loc_name(*k, *l)),
                        None => runs[*k].name.clone(),
                    },
                    points: v
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (edges(*k, i).0, *x))
                        .collect(),
                    end_x: edges(*k, v.len().saturating_sub(1)).1,
                })
                .collect();
            let fig = svg::step_plot(
                &svg::Chart {
                    title: format!("{what}: counter"),
                    x_label: "time (s from the run's first event)".into(),
                    y_label: what.clone(),
                },
                &steps,
            );
            out.write_all(fig.to_svg().as_bytes())?;
        }
    }
    out.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_count_is_shared_by_the_bins_it_overlaps() {
        let c = Call {
            location: 0,
            start: 50,
            end: 250,
            count: 100,
        };
        let z = Call {
            location: 0,
            start: 399,
            end: 399,
            count: 7,
        };
        // bins of 100 ns from 0: 25 in [0,100)... the call spans 50..250: 25, 50, 25
        assert_eq!(bins(&[&c, &z], 0, 100.0, 4), vec![25.0, 50.0, 25.0, 7.0]);
    }
}
