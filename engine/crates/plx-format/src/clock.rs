//! Tick → nanosecond conversion by the spec's Calibration rules.

use crate::records::{Calibration, ClockKind};

/// Where a [`ClockMap`]'s rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The line through the first and last calibration pairs.
    Calibrated,
    /// One pair (or none) and the ClockRate record.
    ClockRate,
    /// `clock` = 1: ticks are nanoseconds.
    Monotonic,
    /// Nothing to go by: 1 tick = 1 ns was assumed.
    Assumed,
}

/// Maps ticks of one process image to `CLOCK_MONOTONIC` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockMap {
    origin_ticks: u64,
    origin_ns: f64,
    ns_per_tick: f64,
    /// How the rate was found.
    pub source: ClockSource,
}

impl ClockMap {
    /// The map for a process: the straight line through the pairs with the smallest and largest
    /// ticks; with fewer than two distinct pairs, the measured `rate` (ticks per second), then
    /// the clock kind.
    pub fn new(pairs: &[Calibration], rate: Option<f64>, clock: Option<ClockKind>) -> Self {
        let first = pairs.iter().min_by_key(|c| c.ticks);
        let last = pairs.iter().max_by_key(|c| c.ticks);
        if let (Some(f), Some(l)) = (first, last) {
            if l.ticks > f.ticks && l.monotonic_ns > f.monotonic_ns {
                return ClockMap {
                    origin_ticks: f.ticks,
                    origin_ns: f.monotonic_ns as f64,
                    ns_per_tick: (l.monotonic_ns - f.monotonic_ns) as f64
                        / (l.ticks - f.ticks) as f64,
                    source: ClockSource::Calibrated,
                };
            }
        }
        let (origin_ticks, origin_ns) =
            first.map_or((0, 0.0), |f| (f.ticks, f.monotonic_ns as f64));
        let (ns_per_tick, source) = match (rate, clock) {
            (_, Some(ClockKind::Monotonic)) => (1.0, ClockSource::Monotonic),
            (Some(r), _) if r.is_finite() && r > 0.0 => (1e9 / r, ClockSource::ClockRate),
            _ => (1.0, ClockSource::Assumed),
        };
        ClockMap {
            origin_ticks,
            origin_ns,
            ns_per_tick,
            source,
        }
    }

    /// Nanoseconds per tick.
    pub fn ns_per_tick(&self) -> f64 {
        self.ns_per_tick
    }

    /// Ticks per second.
    pub fn ticks_per_second(&self) -> f64 {
        1e9 / self.ns_per_tick
    }

    /// `CLOCK_MONOTONIC` ns at `ticks`.
    pub fn ns(&self, ticks: u64) -> f64 {
        self.origin_ns + (ticks as f64 - self.origin_ticks as f64) * self.ns_per_tick
    }

    /// A duration of `ticks` in seconds.
    pub fn seconds(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(ticks: u64, ns: u64) -> Calibration {
        Calibration {
            ticks,
            monotonic_ns: ns,
        }
    }

    #[test]
    fn line_through_first_and_last() {
        let m = ClockMap::new(
            &[c(3000, 1500), c(1000, 500), c(2000, 900)],
            Some(1.0),
            Some(ClockKind::Tsc),
        );
        assert_eq!(m.source, ClockSource::Calibrated);
        assert_eq!(m.ns_per_tick(), 0.5);
        assert_eq!(m.ns(1000), 500.0);
        assert_eq!(m.ns(5000), 2500.0);
    }

    #[test]
    fn one_pair_uses_clock_rate() {
        let m = ClockMap::new(&[c(100, 50)], Some(2e9), Some(ClockKind::Tsc));
        assert_eq!(m.source, ClockSource::ClockRate);
        assert_eq!(m.seconds(2_000_000_000), 1.0);
        assert_eq!(m.ns(300), 150.0);
    }

    #[test]
    fn fallbacks() {
        let m = ClockMap::new(&[], None, Some(ClockKind::Monotonic));
        assert_eq!(m.source, ClockSource::Monotonic);
        let m = ClockMap::new(&[], Some(f64::NAN), None);
        assert_eq!(m.source, ClockSource::Assumed);
        assert_eq!(m.seconds(1_000_000_000), 1.0);
    }
}
