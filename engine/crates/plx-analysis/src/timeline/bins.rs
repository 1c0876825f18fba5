//! Time histograms: a metric in N bins per location or in total, for one run or several overlaid.

use crate::selection::Window;

use super::{State, Timeline};

/// The metrics, as `--metric` takes them.
pub const METRICS: [&str; 7] = [
    "cpu",
    "mpi",
    "messages",
    "bytes",
    "compute",
    "calls:FUNC",
    "time:FUNC",
];

/// A metric over time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    /// CPU utilization: the fraction of each bin a location was on a CPU, from the CPU
    /// sampler's samples (each thread's CPU time between two samples spread evenly over that
    /// interval; summed over locations: processors busy). A location without samples, and the
    /// parts of a location's time before its first sample or after its last, count as
    /// [`Metric::Compute`].
    Cpu,
    /// Computing utilization from the trace's states: the fraction of each bin a location is
    /// inside no MPI routine, socket call or synchronization wait (summed over locations: the
    /// number of threads computing). A stopped, descheduled or spinning thread computes.
    Compute,
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
            "compute" => Metric::Compute,
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
            Metric::Compute => "compute".into(),
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
                "CPU utilization (fraction of the bin on a CPU; in total: processors busy)".into()
            }
            Metric::Compute => "computing utilization from trace states (fraction of the bin \
                                outside MPI, sockets and waits; in total: threads computing)"
                .into(),
            Metric::Mpi => "time in MPI (fraction of the bin; in total: threads in MPI)".into(),
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

/// Where the values of `--metric cpu` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuSource {
    /// CPU samples, for every location.
    Samples,
    /// Trace states (no location has CPU samples): the values of [`Metric::Compute`].
    States,
    /// CPU samples for some locations, trace states for the others.
    Mixed,
}

impl CpuSource {
    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            CpuSource::Samples => "samples",
            CpuSource::States => "states",
            CpuSource::Mixed => "mixed",
        }
    }

    /// What it means, for headings.
    pub fn meaning(self) -> &'static str {
        match self {
            CpuSource::Samples => "CPU samples",
            CpuSource::States => {
                "trace states (no CPU samples in the run: the values of --metric compute)"
            }
            CpuSource::Mixed => {
                "CPU samples where a location has them, trace states (as --metric compute) elsewhere"
            }
        }
    }

    fn of(sampled: usize, total: usize) -> CpuSource {
        if sampled == 0 {
            CpuSource::States
        } else if sampled == total {
            CpuSource::Samples
        } else {
            CpuSource::Mixed
        }
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
    /// For [`Metric::Cpu`]: where its locations' values come from.
    pub cpu_source: Option<CpuSource>,
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
    /// For [`Metric::Cpu`]: where the values of all its locations come from.
    pub cpu_source: Option<CpuSource>,
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
        let source_of = |locs: &[usize]| {
            (*metric == Metric::Cpu).then(|| {
                let sampled = locs.iter().filter(|&&li| !tl.cpu[li].is_empty()).count();
                CpuSource::of(sampled, locs.len())
            })
        };
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
                        cpu_source: source_of(&[li]),
                    });
                }
            } else {
                let mut total = vec![0.0; bins];
                let cpu_source = source_of(&locs);
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
                    cpu_source,
                });
            }
        }
    }
    let cpu_source = (*metric == Metric::Cpu).then(|| {
        let all = runs.iter().flat_map(|r| r.timeline.cpu.iter());
        let sampled = all.clone().filter(|c| !c.is_empty()).count();
        CpuSource::of(sampled, all.count())
    });
    Histogram {
        metric: metric.clone(),
        bins,
        width_s: width_ns * 1e-9,
        series,
        cpu_source,
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
        Metric::Cpu if !tl.cpu[li].is_empty() => {
            let spans = &tl.cpu[li];
            for c in spans {
                grid.add_span(&mut v, c.start_ns.max(s), c.end_ns.min(e), c.rate() * frac);
            }
            // before the first sample and after the last: the trace's states
            let (first, last) = (spans[0].start_ns, spans[spans.len() - 1].end_ns);
            for seg in tl.segments[li]
                .iter()
                .filter(|g| g.state == State::Computing)
            {
                span(&mut v, seg.start_ns, seg.end_ns.min(first));
                span(&mut v, seg.start_ns.max(last), seg.end_ns);
            }
        }
        Metric::Cpu | Metric::Compute | Metric::Mpi => {
            let want = if *metric == Metric::Mpi {
                State::Mpi
            } else {
                State::Computing
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
