//! The histograms of `plx histogram` beside the timeline's ([`crate::timeline::histogram`]): a
//! counter's counted calls over time (each call's count spread over its duration) and an
//! external metric's samples over time; and [`Binned`], the one shape all three are drawn from.

use std::path::Path;

use plx_format::{read_metric_files, Experiment, MetricMode};

use crate::external::{external_metrics, ExternalMetric};
use crate::timeline::Histogram;
use crate::{phase_window, AnalysisError, BuildOptions, EventKind, GlobalMerge, Model, PhaseSpec};

/// One bin: its edges in seconds from its run's start, and its value (NaN: none, as an
/// external metric's bin without samples).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    /// Start, s from the run's first event.
    pub start_s: f64,
    /// End, s from the run's first event.
    pub end_s: f64,
    /// The value.
    pub value: f64,
}

/// One series: a run's, or one location's of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct BinSeries {
    /// The run (its directory, or `run:application`).
    pub run: String,
    /// The location's label, `None` for the total over the run's locations.
    pub location: Option<String>,
    /// The bins, every run's as wide as the longest run's, from the run's own start.
    pub bins: Vec<Bin>,
    /// Counter histograms: the counted calls the series sums.
    pub calls: usize,
}

/// Series of bins: what every kind of histogram gives to be drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Binned {
    /// Number of bins asked for (over the longest run).
    pub bins: usize,
    /// Width of a bin, s.
    pub width_s: f64,
    /// The series.
    pub series: Vec<BinSeries>,
}

impl From<&Histogram> for Binned {
    fn from(h: &Histogram) -> Self {
        Binned {
            bins: h.bins,
            width_s: h.width_s,
            series: h
                .series
                .iter()
                .map(|s| BinSeries {
                    run: s.name.clone(),
                    location: s.location.clone(),
                    bins: s
                        .values
                        .iter()
                        .enumerate()
                        .map(|(i, &value)| {
                            let (start_s, end_s) = s.grid.edges_s(i, s.origin_ns);
                            Bin {
                                start_s,
                                end_s,
                                value,
                            }
                        })
                        .collect(),
                    calls: 0,
                })
                .collect(),
        }
    }
}

/// Whether `metric` names a counter event (`EVENT` or `EVENT:FUNC`, `_` for `-` allowed)
/// counted in any of `dirs`: `(event, function)`.
pub fn counter_metric(dirs: &[impl AsRef<Path>], metric: &str) -> Option<(String, Option<String>)> {
    let (ev, func) = match metric.split_once(':') {
        Some((e, f)) if !f.is_empty() => (e, Some(f.to_string())),
        _ => (metric, None),
    };
    let ev = counted_events(dirs)
        .into_iter()
        .find(|n| n == ev || n.replace('-', "_") == ev)?;
    Some((ev, func))
}

/// The counted (not refused) events of the runs' counters contexts.
fn counted_events(dirs: &[impl AsRef<Path>]) -> Vec<String> {
    let mut names = Vec::new();
    for d in dirs {
        let Ok(model) = Model::open(d.as_ref(), BuildOptions::default()) else {
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

/// A counted call: its location, its span (ns on the merge's time base) and its count.
#[derive(Debug, Clone, Copy)]
struct Call {
    location: usize,
    start: i64,
    end: i64,
    count: u64,
}

/// One run's counted calls of an event.
pub struct CounterRun {
    /// The run's name (its directory).
    pub name: String,
    locations: Vec<String>,
    lo: i64,
    hi: i64,
    calls: Vec<Call>,
    model: Model,
}

impl CounterRun {
    /// Reads the counted calls of `event` (of function `func` only, when given) in `dir`,
    /// application `app` of a session only when given.
    pub fn read(
        dir: &Path,
        app: Option<&str>,
        event: &str,
        func: Option<&str>,
    ) -> Result<CounterRun, AnalysisError> {
        let exp = Experiment::open(dir)?;
        let mut model = Model::build(&exp, BuildOptions::default());
        if let Some(app) = app {
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
        Ok(CounterRun {
            name: dir.display().to_string(),
            locations: locs.iter().map(|l| l.label()).collect(),
            lo,
            hi: hi + 1,
            calls,
            model,
        })
    }

    /// Limits the run to a phase's span.
    pub fn clip(&mut self, phase: &PhaseSpec) -> Result<(), AnalysisError> {
        let w = phase_window(&self.model, phase)?;
        self.lo = w.start_ns.max(self.lo);
        self.hi = w.end_ns.min(self.hi);
        Ok(())
    }

    fn hi(&self) -> i64 {
        self.hi.max(self.lo + 1)
    }
}

/// The count of each bin `[lo + i·width, lo + (i+1)·width)`: each call's count shared among the
/// bins its span overlaps, in proportion to the overlap (a call of no duration counts in the
/// bin of its end).
fn spread(calls: &[&Call], lo: i64, width: f64, n: usize) -> Vec<f64> {
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

/// The counter histogram of `runs` in `bins` bins over the longest: a series per run, or per
/// location with counted calls (`per_location`).
pub fn counter_histogram(runs: &[CounterRun], bins: usize, per_location: bool) -> Binned {
    let width = runs
        .iter()
        .map(|r| (r.hi() - r.lo) as f64)
        .fold(0.0, f64::max)
        / bins as f64;
    let mut series = Vec::new();
    for r in runs {
        let n = (((r.hi() - r.lo) as f64 / width).ceil() as usize).clamp(1, bins);
        let span = (r.hi() - r.lo) as f64;
        let edges = |v: Vec<f64>| -> Vec<Bin> {
            v.into_iter()
                .enumerate()
                .map(|(i, value)| Bin {
                    start_s: (width * i as f64) / 1e9,
                    end_s: (width * (i + 1) as f64).min(span) / 1e9,
                    value,
                })
                .collect()
        };
        let groups: Vec<(Option<usize>, Vec<&Call>)> = if per_location {
            (0..r.locations.len())
                .map(|l| {
                    (
                        Some(l),
                        r.calls.iter().filter(|c| c.location == l).collect(),
                    )
                })
                .filter(|(_, c): &(_, Vec<&Call>)| !c.is_empty())
                .collect()
        } else {
            vec![(None, r.calls.iter().collect())]
        };
        for (l, calls) in groups {
            series.push(BinSeries {
                run: r.name.clone(),
                location: l.map(|l| r.locations[l].clone()),
                bins: edges(spread(&calls, r.lo, width, n)),
                calls: calls.len(),
            });
        }
    }
    Binned {
        bins,
        width_s: width / 1e9,
        series,
    }
}

/// The external metrics `dir` holds, by name (every file's, unread ones left out).
pub fn external_names(dir: &Path) -> Vec<String> {
    let (files, _) = read_metric_files(dir);
    files
        .iter()
        .flat_map(|f| f.metrics.iter().map(|m| m.name.clone()))
        .collect()
}

/// One run's series of an external metric.
pub struct ExternalRun {
    /// The run's name (its directory).
    pub name: String,
    /// The metric, its samples on rank 0's clock.
    pub metric: ExternalMetric,
    lo: f64,
    hi: f64,
    first: f64,
    last: f64,
    model: Model,
}

impl ExternalRun {
    /// Reads external metric `name` of `dir` (application `app` of a session only, when
    /// given); `None` when the run has no such metric or no sample of it.
    pub fn read(
        dir: &Path,
        app: Option<&str>,
        name: &str,
    ) -> Result<Option<ExternalRun>, AnalysisError> {
        let (files, _) = read_metric_files(dir);
        if !files
            .iter()
            .any(|f| f.metrics.iter().any(|m| m.name == name))
        {
            return Ok(None);
        }
        let mut model = Model::open(dir, BuildOptions::default())?;
        if let Some(app) = app {
            model.select_app(app)?;
        }
        let origin = Experiment::open(dir).ok().and_then(|exp| {
            GlobalMerge::new(&model, &exp, Default::default())
                .ok()
                .map(|m| m.origin_ns())
        });
        let metric = external_metrics(&model, &files, origin)
            .into_iter()
            .find(|m| m.name == name)
            .expect("the name is in the files");
        let Some((first, last)) = metric.span() else {
            return Ok(None);
        };
        Ok(Some(ExternalRun {
            name: dir.display().to_string(),
            metric,
            lo: origin.map_or(first, |o| o as f64),
            hi: last,
            first,
            last,
            model,
        }))
    }

    /// Limits the run to a phase's span.
    pub fn clip(&mut self, phase: &PhaseSpec) -> Result<(), AnalysisError> {
        let w = phase_window(&self.model, phase)?;
        self.lo = w.start_ns.max(self.first as i64) as f64;
        self.hi = w.end_ns.min(self.last as i64 + 1) as f64;
        Ok(())
    }

    fn hi(&self) -> f64 {
        self.hi.max(self.lo + 1.0)
    }

    /// The metric's total over the run's span: the time-weighted mean of a level, the
    /// increase of a cumulative count.
    pub fn total(&self) -> f64 {
        self.metric.total(self.lo, self.hi())
    }

    /// Whether the metric is a level (its bins are means) rather than a count.
    pub fn is_level(&self) -> bool {
        self.metric.mode == MetricMode::Absolute
    }
}

/// The external metric's histogram of `runs` in `bins` bins, every run's as wide as the
/// longest run's, from its own start: a series per run.
pub fn external_histogram(runs: &[ExternalRun], bins: usize) -> Binned {
    let width = runs.iter().map(|r| r.hi() - r.lo).fold(0.0, f64::max) / bins as f64;
    let series = runs
        .iter()
        .map(|r| {
            let n = (((r.hi() - r.lo) / width).ceil() as usize).clamp(1, bins);
            BinSeries {
                run: r.name.clone(),
                location: None,
                bins: r
                    .metric
                    .bins(r.lo, r.lo + width * n as f64, n)
                    .into_iter()
                    .map(|(a, b, value)| Bin {
                        start_s: a / 1e9,
                        end_s: b / 1e9,
                        value,
                    })
                    .collect(),
                calls: 0,
            }
        })
        .collect();
    Binned {
        bins,
        width_s: width / 1e9,
        series,
    }
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
        assert_eq!(spread(&[&c, &z], 0, 100.0, 4), vec![25.0, 50.0, 25.0, 7.0]);
    }
}
