//! External metrics (the system monitor of `plx run --monitor`, CSV files of `plx import`): their samples on the experiment's time base, and their value over time bins.
//!
//! Times become rank 0's `CLOCK_MONOTONIC` ns, the base of the merge and of every series:
//! a monitor's `CLOCK_MONOTONIC` through the ClockOffset of a process on its host; Unix times
//! through the earliest process's start (its `CLOCK_REALTIME` and its first tick); times from
//! the first event by adding the merge's origin.

use plx_format::{MetricFile, MetricMode, TimeBase};

use crate::Model;

/// One external metric, its samples on rank 0's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalMetric {
    /// Its name.
    pub name: String,
    /// Its unit (may be empty).
    pub unit: String,
    /// How values add up over an interval.
    pub mode: MetricMode,
    /// The source (`monitor` or `csv`) and what it read.
    pub source: String,
    /// (ns on rank 0's clock, value), in time order.
    pub samples: Vec<(f64, f64)>,
    /// The last sample closes the series (the monitor's repeats the last interval's value at
    /// its own time); else (a CSV file's last line) a level's last value holds one more
    /// sampling interval.
    pub last_closes: bool,
}

/// The experiment's external metrics, their times on rank 0's clock; `origin_ns` is the
/// merge's origin (the first event), needed for CSV times counted from it (`None`: such
/// files are placed from 0).
pub fn external_metrics(
    model: &Model,
    files: &[MetricFile],
    origin_ns: Option<i64>,
) -> Vec<ExternalMetric> {
    let measured: Vec<_> = model.processes.iter().filter(|p| p.measured).collect();
    // Unix → rank 0: the earliest process's start, on both clocks
    let unix_to_rank0 = measured
        .iter()
        .filter_map(|p| Some((p.start_realtime_ns?, p.rank0_ns(p.start_ticks()?))))
        .min_by_key(|(rt, _)| *rt)
        .map(|(rt, r0)| r0 - rt as f64);
    let mut out = Vec::new();
    for f in files {
        let src = &f.source;
        let to_rank0 = |t: i64| -> f64 {
            let t = t as f64;
            match src.time_base {
                TimeBase::Monotonic => measured
                    .iter()
                    .find(|p| p.host == src.host)
                    .map_or(t, |p| p.offsets.to_rank0(t) + p.shift_ns as f64),
                TimeBase::FirstEvent => t + origin_ns.unwrap_or(0) as f64,
                TimeBase::Unix => t + unix_to_rank0.unwrap_or(0.0),
            }
        };
        for (m, series) in f.metrics.iter().zip(&f.series) {
            let mut samples: Vec<(f64, f64)> =
                series.iter().map(|&(t, v)| (to_rank0(t), v)).collect();
            samples.sort_by(|a, b| a.0.total_cmp(&b.0));
            out.push(ExternalMetric {
                name: m.name.clone(),
                unit: m.unit.clone(),
                mode: m.mode,
                source: format!("{} {}", src.kind, src.origin),
                samples,
                last_closes: src.kind != "csv",
            });
        }
    }
    out
}

impl ExternalMetric {
    /// Where a level's last value stops holding: one more of its sampling intervals (the time
    /// between its last two samples) after it; `None` for a single sample (it holds to the end
    /// of any range asked about), a running total, or a series its last sample closes.
    fn last_holds_until(&self) -> Option<f64> {
        match (self.mode, self.samples.as_slice()) {
            (MetricMode::Absolute, [.., (t0, _), (t1, _)]) if !self.last_closes => {
                Some(t1 + (t1 - t0))
            }
            _ => None,
        }
    }

    /// The steps of the metric: (from, to, value at from, value at to) ns; a level's last
    /// value holds until [`Self::last_holds_until`] or `hi`.
    fn steps(&self, hi: f64) -> impl Iterator<Item = (f64, f64, f64, f64)> + '_ {
        let last = match (self.mode, self.samples.last()) {
            (MetricMode::Absolute, Some(&(t, v)))
                if !self.last_closes || self.samples.len() == 1 =>
            {
                Some((t, self.last_holds_until().unwrap_or(hi.max(t)), v, v))
            }
            _ => None,
        };
        self.samples
            .windows(2)
            .map(|w| (w[0].0, w[1].0, w[0].1, w[1].1))
            .chain(last)
    }

    /// The value over each of `bins` equal bins of [`lo`, `hi`) ns: for a level, the
    /// time-weighted mean of the step function the samples make (each value holds until the
    /// next sample, the last for one more sampling interval; nothing before the first), `NaN`
    /// in a bin no sample covers; for a running total, its increase inside the bin (spread
    /// evenly between consecutive samples).
    pub fn bins(&self, lo: f64, hi: f64, bins: usize) -> Vec<(f64, f64, f64)> {
        let bins = bins.max(1);
        let width = (hi - lo) / bins as f64;
        let mut acc = vec![0.0; bins];
        let mut covered = vec![0.0; bins];
        for (t0, t1, v0, v1) in self.steps(hi) {
            if t1 <= t0 {
                continue;
            }
            // the interval [t0, t1) against each bin it overlaps
            let first = (((t0 - lo) / width).floor().max(0.0)) as usize;
            for (b, (a, c)) in acc
                .iter_mut()
                .zip(covered.iter_mut())
                .enumerate()
                .skip(first)
            {
                let (b0, b1) = (lo + b as f64 * width, lo + (b + 1) as f64 * width);
                if b0 >= t1 {
                    break;
                }
                let overlap = t1.min(b1) - t0.max(b0);
                if overlap <= 0.0 {
                    continue;
                }
                match self.mode {
                    MetricMode::Absolute => {
                        *a += v0 * overlap;
                        *c += overlap;
                    }
                    MetricMode::Cumulative => {
                        *a += (v1 - v0) * overlap / (t1 - t0);
                        *c += overlap;
                    }
                }
            }
        }
        (0..bins)
            .map(|b| {
                let v = match self.mode {
                    MetricMode::Absolute if covered[b] > 0.0 => acc[b] / covered[b],
                    MetricMode::Absolute => f64::NAN,
                    MetricMode::Cumulative => acc[b],
                };
                (b as f64 * width, (b + 1) as f64 * width, v)
            })
            .collect()
    }

    /// Over [`lo`, `hi`): a level's time-weighted mean, a running total's increase.
    pub fn total(&self, lo: f64, hi: f64) -> f64 {
        self.bins(lo, hi, 1)[0].2
    }

    /// The time the metric covers, ns: from its first sample to its last, or to where a level's
    /// last value stops holding.
    pub fn span(&self) -> Option<(f64, f64)> {
        let last = self.samples.last()?.0;
        Some((
            self.samples.first()?.0,
            self.last_holds_until().unwrap_or(last),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(mode: MetricMode, samples: Vec<(f64, f64)>) -> ExternalMetric {
        ExternalMetric {
            name: "m".into(),
            unit: String::new(),
            mode,
            source: "csv x".into(),
            samples,
            last_closes: false,
        }
    }

    #[test]
    fn levels_are_time_weighted_means() {
        // 10 over [0, 100), 20 over [100, 200)
        let m = metric(
            MetricMode::Absolute,
            vec![(0.0, 10.0), (100.0, 20.0), (200.0, 0.0)],
        );
        let b = m.bins(0.0, 200.0, 4);
        assert_eq!(
            b.iter().map(|x| x.2).collect::<Vec<_>>(),
            vec![10.0, 10.0, 20.0, 20.0]
        );
        assert_eq!(m.total(0.0, 200.0), 15.0);
        assert_eq!(m.total(50.0, 150.0), 15.0);
        assert!(m.bins(400.0, 500.0, 1)[0].2.is_nan());
        assert!(m.bins(-100.0, 0.0, 1)[0].2.is_nan());
    }

    /// The last sample of a level holds for one more sampling interval (it was dropped: it
    /// held for no time), a single sample until the end of the range.
    #[test]
    fn last_sample_of_a_level_counts() {
        let m = metric(
            MetricMode::Absolute,
            vec![(0.0, 10.0), (100.0, 30.0), (200.0, 50.0)],
        );
        assert_eq!(m.span(), Some((0.0, 300.0)));
        let b = m.bins(0.0, 300.0, 3);
        assert_eq!(
            b.iter().map(|x| x.2).collect::<Vec<_>>(),
            vec![10.0, 30.0, 50.0]
        );
        assert_eq!(m.total(0.0, 300.0), 30.0);
        assert!(m.bins(300.0, 400.0, 1)[0].2.is_nan());
        let one = metric(MetricMode::Absolute, vec![(50.0, 7.0)]);
        assert_eq!(one.span(), Some((50.0, 50.0)));
        assert_eq!(one.total(0.0, 400.0), 7.0);
        // the monitor's last sample closes its series
        let closed = ExternalMetric {
            last_closes: true,
            ..m
        };
        assert_eq!(closed.span(), Some((0.0, 200.0)));
        assert_eq!(closed.total(0.0, 300.0), 20.0);
    }

    #[test]
    fn running_totals_give_increases() {
        // 1000 bytes over [0, 100), 3000 over [100, 200)
        let m = metric(
            MetricMode::Cumulative,
            vec![(0.0, 0.0), (100.0, 1000.0), (200.0, 4000.0)],
        );
        let b = m.bins(0.0, 200.0, 4);
        assert_eq!(
            b.iter().map(|x| x.2).collect::<Vec<_>>(),
            vec![500.0, 500.0, 1500.0, 1500.0]
        );
        assert_eq!(m.total(0.0, 200.0), 4000.0);
    }
}
