//! Time histograms: a metric in N bins per location or in total, for one run or several overlaid.

use crate::selection::Window;

use super::{State, Timeline};

/// The metrics, as `--metric` takes them.
pub const METRICS: [&str; 6] = ["cpu", "mpi", "messages", "bytes", "calls:FUNC", "time:FUNC"];

/// A metric over time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    /// Computing utilization: the fraction of each bin a location computes (summed over
    /// locations: the number of processors busy).
    Cpu,
    /// The fraction of each bin a location spends inside MPI routines.
    Mpi,
    /// Point-to-point messages sent, by send time.
    Messages,
    /// Bytes of point-to-point messages sent, by send time.
    Bytes,
    /// Calls of a function beginning in the bin.
    Calls(String),
    /// The fraction of each bin spent inside a function (outermost calls).
    Time(String),
}

impl Metric {
    /// From its name; the error lists the valid ones.
    pub fn parse(name: &str) -> Result<Metric, String> {
        let func = |f: &str, m: &str| -> Result<String, String> {
            if f.is_empty() {
                Err(format!(
                    "metric \"{name}\": name the function after the colon ({m}:FUNC)"
                ))
            } else {
                Ok(f.to_string())
            }
        };
        Ok(match name {
            "cpu" => Metric::Cpu,
            "mpi" => Metric::Mpi,
            "messages" => Metric::Messages,
            "bytes" => Metric::Bytes,
            _ => {
                if let Some(f) = name.strip_prefix("calls:") {
                    Metric::Calls(func(f, "calls")?)
                } else if let Some(f) = name.strip_prefix("time:") {
                    Metric::Time(func(f, "time")?)
                } else {
                    return Err(format!(
                        "unknown metric \"{name}\": valid metrics are {}",
                        METRICS.join(", ")
                    ));
                }
            }
        })
    }

    /// Its name as given.
    pub fn name(&self) -> String {
        match self {
            Metric::Cpu => "cpu".into(),
            Metric::Mpi => "mpi".into(),
            Metric::Messages => "messages".into(),
            Metric::Bytes => "bytes".into(),
            Metric::Calls(f) => format!("calls:{f}"),
            Metric::Time(f) => format!("time:{f}"),
        }
    }

    /// The function it follows, if any.
    pub fn function(&self) -> Option<&str> {
        match self {
            Metric::Calls(f) | Metric::Time(f) => Some(f),
            _ => None,
        }
    }

    /// What a value means, for headings.
    pub fn meaning(&self) -> String {
        match self {
            Metric::Cpu => {
                "computing utilization (fraction of the bin; in total: processors busy)".into()
            }
            Metric::Mpi => "time in MPI (fraction of the bin; in total: processors in MPI)".into(),
            Metric::Messages => "point-to-point messages sent".into(),
            Metric::Bytes => "bytes sent in point-to-point messages".into(),
            Metric::Calls(f) => format!("calls of {f} beginning in the bin"),
            Metric::Time(f) => format!("time inside {f} (fraction of the bin)"),
        }
    }
}

/// N bins of equal width over `[start, end]`, global ns; bin i is `[start + i·w, start + (i+1)·w)`,
/// and the last also holds the end itself (the last event).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// Start, global ns.
    pub start_ns: i64,
    /// End, global ns: `start + bins·width` rounded.
    pub end_ns: i64,
    /// Width of a bin, ns.
    pub width_ns: f64,
    /// Number of bins.
    pub bins: usize,
}

impl Grid {
    /// `bins` bins over `[start, end]` (at least 1 ns wide).
    pub fn over(start_ns: i64, end_ns: i64, bins: usize) -> Grid {
        let bins = bins.max(1);
        let width_ns = ((end_ns - start_ns) as f64 / bins as f64).max(1.0);
        let mut g = Grid::with_width(start_ns, width_ns, bins);
        if end_ns - start_ns >= bins as i64 {
            g.end_ns = end_ns;
        }
        g
    }

    /// `bins` bins of `width_ns` from `start_ns`.
    pub fn with_width(start_ns: i64, width_ns: f64, bins: usize) -> Grid {
        let bins = bins.max(1);
        Grid {
            start_ns,
            end_ns: start_ns + (width_ns * bins as f64).round() as i64,
            width_ns,
            bins,
        }
    }

    /// The bin holding instant `t` (the grid's end belongs to the last), `None` outside.
    #[inline]
    pub fn index(&self, t: i64) -> Option<usize> {
        if t < self.start_ns || t > self.end_ns {
            return None;
        }
        let x = (t - self.start_ns) as f64;
        Some(((x / self.width_ns) as usize).min(self.bins - 1))
    }

    /// Adds `v` to the bin of instant `t`.
    #[inline]
    pub fn add_point(&self, values: &mut [f64], t: i64, v: f64) {
        if let Some(i) = self.index(t) {
            values[i] += v;
        }
    }

    /// Adds `weight` × (ns of `[a, b)` inside each bin) to the bins.
    pub fn add_span(&self, values: &mut [f64], a: i64, b: i64, weight: f64) {
        let w = self.width_ns;
        let x0 = (a.max(self.start_ns) - self.start_ns) as f64;
        let x1 = (b.min(self.end_ns) - self.start_ns) as f64;
        if x1 <= x0 {
            return;
        }
        let first = ((x0 / w) as usize).min(self.bins - 1);
        let last = ((x1 / w) as usize).min(self.bins - 1);
        for (i, slot) in values.iter_mut().enumerate().take(last + 1).skip(first) {
            let s = i as f64 * w;
            // the last bin reaches the grid's end whatever the rounding of its width
            let e = if i + 1 == self.bins {
                x1.max(s + w)
            } else {
                s + w
            };
            let overlap = x1.min(e) - x0.max(s);
            if overlap > 0.0 {
                *slot += overlap * weight;
            }
        }
    }

    /// Calls `f(bin, overlap ns)` for every bin `[a, b)` overlaps.
    pub fn for_each_overlap(&self, a: i64, b: i64, mut f: impl FnMut(usize, f64)) {
        let mut ones = vec![0.0; self.bins];
        self.add_span(&mut ones, a, b, 1.0);
        for (i, v) in ones.into_iter().enumerate() {
            if v > 0.0 {
                f(i, v);
            }
        }
    }

    /// Bin `i`'s start and end, seconds from `origin_ns`.
    pub fn edges_s(&self, i: usize, origin_ns: i64) -> (f64, f64) {
        let s = (self.start_ns - origin_ns) as f64 + i as f64 * self.width_ns;
        (s * 1e-9, (s + self.width_ns) * 1e-9)
    }
}

/// One run given to [`histogram`].
#[derive(Debug, Clone, Copy)]
pub struct HistogramRun<'a> {
    /// The run's name (its series are named after it, or after its applications).
    pub name: &'a str,
    /// Its timeline.
    pub timeline: &'a Timeline,
    /// The window of time shown.
    pub window: Window,
}

/// One curve of a histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The run, or `run:application` (the application alone for a session given alone).
    pub name: String,
    /// The location's label, `None` for the total over the series' locations.
    pub location: Option<String>,
    /// Its bins.
    pub grid: Grid,
    /// Its run's first event, global ns: times are shown from it.
    pub origin_ns: i64,
    /// One value per bin.
    pub values: Vec<f64>,
}

/// A time histogram: one series per run (per application of a session), or per location.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// The metric.
    pub metric: Metric,
    /// Number of bins.
    pub bins: usize,
    /// Width of a bin, s: the longest run's window divided by the bins (runs overlaid share it).
    pub width_s: f64,
    /// The series.
    pub series: Vec<Series>,
}

/// The histogram of `metric` over the runs: each run (each application of a session) a series
/// of `bins` bins from the start of its own window, all as wide as the longest window's bins;
/// one series per location with `by_location`. A run's timelines must have been built with the
/// metric's function (see [`super::TimelineOptions`]).
pub fn histogram(
    runs: &[HistogramRun<'_>],
    metric: &Metric,
    bins: usize,
    by_location: bool,
) -> Histogram {
    let bins = bins.max(1);
    let longest = runs
        .iter()
        .map(|r| {
            let (s, e) = r.timeline.span(r.window);
            e - s
        })
        .max()
        .unwrap_or(0);
    let width_ns = (longest as f64 / bins as f64).max(1.0);
    let mut series = Vec::new();
    for run in runs {
        let tl = run.timeline;
        let (s, e) = tl.span(run.window);
        let grid = if e - s == longest {
            Grid::over(s, e, bins)
        } else {
            Grid::with_width(s, width_ns, bins)
        };
        let values_of = |li: usize| location_values(tl, li, metric, &grid, (s, e));
        // a session's applications are series of their own; a plain run is one
        let groups: Vec<(String, Vec<usize>)> = if tl.is_session() {
            (0..tl.apps.len() as u32)
                .map(|a| {
                    let name = if runs.len() == 1 {
                        tl.apps[a as usize].clone()
                    } else {
                        format!("{}:{}", run.name, tl.apps[a as usize])
                    };
                    let locs = (0..tl.locations.len())
                        .filter(|&i| tl.locations[i].app == a)
                        .collect();
                    (name, locs)
                })
                .filter(|(_, l): &(String, Vec<usize>)| !l.is_empty())
                .collect()
        } else {
            vec![(run.name.to_string(), (0..tl.locations.len()).collect())]
        };
        for (name, locs) in groups {
            if by_location {
                for li in locs {
                    series.push(Series {
                        name: name.clone(),
                        location: Some(tl.locations[li].label.clone()),
                        grid,
                        origin_ns: tl.origin_ns,
                        values: values_of(li),
                    });
                }
            } else {
                let mut total = vec![0.0; bins];
                for li in locs {
                    for (t, v) in total.iter_mut().zip(values_of(li)) {
                        *t += v;
                    }
                }
                series.push(Series {
                    name,
                    location: None,
                    grid,
                    origin_ns: tl.origin_ns,
                    values: total,
                });
            }
        }
    }
    Histogram {
        metric: metric.clone(),
        bins,
        width_s: width_ns * 1e-9,
        series,
    }
}

/// The metric's bins for one location, counting only what lies in `[s, e]`.
fn location_values(
    tl: &Timeline,
    li: usize,
    metric: &Metric,
    grid: &Grid,
    (s, e): (i64, i64),
) -> Vec<f64> {
    let mut v = vec![0.0; grid.bins];
    let frac = 1.0 / grid.width_ns;
    let span = |v: &mut Vec<f64>, a: i64, b: i64| grid.add_span(v, a.max(s), b.min(e), frac);
    let point = |v: &mut Vec<f64>, t: i64, x: f64| {
        if t >= s && t <= e {
            grid.add_point(v, t, x);
        }
    };
    match metric {
        Metric::Cpu | Metric::Mpi => {
            let want = if *metric == Metric::Cpu {
                State::Computing
            } else {
                State::Mpi
            };
            for seg in tl.segments[li].iter().filter(|g| g.state == want) {
                span(&mut v, seg.start_ns, seg.end_ns);
            }
        }
        Metric::Messages | Metric::Bytes => {
            for m in tl.messages.iter().filter(|m| m.sender as usize == li) {
                let x = if *metric == Metric::Messages {
                    1.0
                } else {
                    m.bytes as f64
                };
                point(&mut v, m.send_ns, x);
            }
        }
        Metric::Calls(_) => {
            if let Some(f) = &tl.function {
                for &t in &f.calls[li] {
                    point(&mut v, t, 1.0);
                }
            }
        }
        Metric::Time(_) => {
            if let Some(f) = &tl.function {
                for &(a, b) in &f.inside[li] {
                    span(&mut v, a, b);
                }
            }
        }
    }
    v
}
