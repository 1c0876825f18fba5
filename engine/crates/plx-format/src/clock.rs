//! Clock conversions by the spec's rules: ticks → local ns (Calibration), local ns → rank 0's (ClockOffset).

use crate::mpi::{ClockOffset, OffsetWhen};
use crate::records::{Calibration, ClockKind};

/// Where a [`ClockMap`]'s rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The line through the first and last calibration pairs.
    Calibrated,
    /// One pair (or none) and the ClockRate record.
    ClockRate,
    /// `clock` = 1 or 2 (`CLOCK_MONOTONIC`, `CLOCK_MONOTONIC_COARSE`): ticks are nanoseconds.
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
    ///
    /// `CLOCK_MONOTONIC_COARSE` ticks are nanoseconds that lag `CLOCK_MONOTONIC` by up to one
    /// kernel tick at each pair, so a line through two pairs would be off by up to a tick over
    /// the run (1.5 % for 4 ms over 0.27 s): their rate is exactly 1 and their offset the mean
    /// of the pairs' (`monotonic_ns` − `ticks`).
    pub fn new(pairs: &[Calibration], rate: Option<f64>, clock: Option<ClockKind>) -> Self {
        let first = pairs.iter().min_by_key(|c| c.ticks);
        let last = pairs.iter().max_by_key(|c| c.ticks);
        if let (Some(ClockKind::MonotonicCoarse), Some(f)) = (clock, first) {
            let lag = pairs
                .iter()
                .map(|c| c.monotonic_ns as f64 - c.ticks as f64)
                .sum::<f64>()
                / pairs.len() as f64;
            return ClockMap {
                origin_ticks: f.ticks,
                origin_ns: f.ticks as f64 + lag,
                ns_per_tick: 1.0,
                source: ClockSource::Monotonic,
            };
        }
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
            (_, Some(k)) if k.is_nanoseconds() => (1.0, ClockSource::Monotonic),
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

    /// The line [`ClockMap::ns`] follows: (origin ticks, ns at them, ns per tick).
    pub fn line(&self) -> (u64, f64, f64) {
        (self.origin_ticks, self.origin_ns, self.ns_per_tick)
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

/// The relative rate by which two hosts' `CLOCK_MONOTONIC` may drift apart: 100 ppm (quartz
/// oscillators and NTP's slewing stay well within it).
pub const MAX_DRIFT: f64 = 1e-4;

/// Maps one process's `CLOCK_MONOTONIC` ns to rank 0's: `m + offset(m)`, the offset linear
/// through the Init and Finalize ClockOffset pairs, constant with one, zero without.
///
/// A measurement is exact only to half its round trip. When the two disagree by more than the
/// drift allows, the one with the longer round trip is moved, within half its own round trip,
/// as near as it comes to the other's value widened by [`MAX_DRIFT`] over the time between
/// them (and the other's own half round trip): a round trip of 40 ms on a busy machine would
/// otherwise tilt the whole run's times by up to 20 ms.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OffsetMap {
    origin_ns: f64,
    origin_offset_ns: f64,
    slope: f64,
    /// How many pairs the map goes by (0, 1 or 2).
    pub pairs: u8,
    /// With two pairs, the offset taken at the Finalize pair (1) or the Init pair (0) in place
    /// of the measured one, and where: (which, offset ns); None when both are taken as measured.
    pub moved: Option<(u8, f64)>,
}

/// The offsets taken at measurements `a` and `b`: the one with the longer round trip moved
/// toward the other within the drift bound, never beyond half its own round trip.
fn bounded(a: &ClockOffset, b: &ClockOffset) -> (f64, f64, Option<(u8, f64)>) {
    let (oa, ob) = (a.offset_ns as f64, b.offset_ns as f64);
    let b_poorer = b.rtt_ns > a.rtt_ns;
    let (good, poor) = if b_poorer { (a, b) } else { (b, a) };
    let dt = (poor.local_ns as f64 - good.local_ns as f64).abs();
    let reach = MAX_DRIFT * dt + good.rtt_ns as f64 / 2.0;
    let (g, p) = (good.offset_ns as f64, poor.offset_ns as f64);
    let own = poor.rtt_ns as f64 / 2.0;
    let taken = p.clamp(g - reach, g + reach).clamp(p - own, p + own);
    if taken == p {
        (oa, ob, None)
    } else if b_poorer {
        (oa, taken, Some((1, taken)))
    } else {
        (taken, ob, Some((0, taken)))
    }
}

impl OffsetMap {
    /// The map of a process's ClockOffset records: the first Init pair and the last Finalize pair.
    pub fn new(offsets: &[ClockOffset]) -> Self {
        let init = offsets.iter().find(|o| o.when == OffsetWhen::Init);
        let fin = offsets
            .iter()
            .rev()
            .find(|o| o.when == OffsetWhen::Finalize);
        match (init, fin) {
            (Some(a), Some(b)) if a.local_ns != b.local_ns => {
                let (oa, ob, moved) = bounded(a, b);
                OffsetMap {
                    origin_ns: a.local_ns as f64,
                    origin_offset_ns: oa,
                    slope: (ob - oa) / (b.local_ns as f64 - a.local_ns as f64),
                    pairs: 2,
                    moved,
                }
            }
            (Some(o), _) | (None, Some(o)) => OffsetMap {
                origin_ns: o.local_ns as f64,
                origin_offset_ns: o.offset_ns as f64,
                slope: 0.0,
                pairs: 1,
                moved: None,
            },
            (None, None) => OffsetMap::default(),
        }
    }

    /// The line [`OffsetMap::offset_ns`] follows: (origin local ns, offset there, slope).
    pub fn line(&self) -> (f64, f64, f64) {
        (self.origin_ns, self.origin_offset_ns, self.slope)
    }

    /// Rank 0's clock minus this process's at local time `local_ns`.
    pub fn offset_ns(&self, local_ns: f64) -> f64 {
        self.origin_offset_ns + (local_ns - self.origin_ns) * self.slope
    }

    /// Rank 0's `CLOCK_MONOTONIC` ns at local time `local_ns`.
    pub fn to_rank0(&self, local_ns: f64) -> f64 {
        local_ns + self.offset_ns(local_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn off(when: OffsetWhen, local_ns: u64, offset_ns: i64) -> ClockOffset {
        ClockOffset {
            when,
            local_ns,
            offset_ns,
            rtt_ns: 0, // exact: taken as measured, whatever drift they imply
        }
    }

    #[test]
    fn offsets_linear_constant_or_zero() {
        let m = OffsetMap::new(&[]);
        assert_eq!((m.pairs, m.to_rank0(123.0)), (0, 123.0));
        let m = OffsetMap::new(&[off(OffsetWhen::Init, 1000, -500)]);
        assert_eq!((m.pairs, m.to_rank0(5000.0)), (1, 4500.0));
        let m = OffsetMap::new(&[off(OffsetWhen::Finalize, 1000, 70)]);
        assert_eq!(m.offset_ns(0.0), 70.0);
        // drift: offset goes from 100 at 1000 to 300 at 3000 (0.1 ns per ns), extrapolated outside
        let m = OffsetMap::new(&[
            off(OffsetWhen::Init, 1000, 100),
            off(OffsetWhen::Other(9), 2000, 9999),
            off(OffsetWhen::Finalize, 3000, 300),
        ]);
        assert_eq!(m.pairs, 2);
        assert_eq!(m.offset_ns(2000.0), 200.0);
        assert_eq!(m.offset_ns(0.0), 0.0);
        assert_eq!(m.to_rank0(5000.0), 5500.0);
    }

    fn off_rtt(when: OffsetWhen, local_ns: u64, offset_ns: i64, rtt_ns: u64) -> ClockOffset {
        ClockOffset {
            when,
            local_ns,
            offset_ns,
            rtt_ns,
        }
    }

    /// Two hosts 7 ms apart, measured 1 s apart: a measurement of a long round trip is moved
    /// within its own error toward the precise one (the drift bound around it), never further.
    #[test]
    fn poor_measurement_moved_within_its_round_trip() {
        let s = 1_000_000_000;
        // finalize's round trip 24 ms, its offset 2.8 ms off: taken as init's + 100 us of drift
        // + init's half round trip (5 us)
        let m = OffsetMap::new(&[
            off_rtt(OffsetWhen::Init, s, -7_000_000, 10_000),
            off_rtt(OffsetWhen::Finalize, 2 * s, -4_200_000, 24_000_000),
        ]);
        assert_eq!(m.moved, Some((1, -6_895_000.0)));
        assert_eq!(m.offset_ns(s as f64), -7_000_000.0);
        assert_eq!(m.offset_ns(2.0 * s as f64), -6_895_000.0);
        // init the poor one (44 ms), 18 ms off
        let m = OffsetMap::new(&[
            off_rtt(OffsetWhen::Init, s, 11_000_000, 44_000_000),
            off_rtt(OffsetWhen::Finalize, 2 * s, -7_000_000, 10_000),
        ]);
        assert_eq!(m.moved, Some((0, -6_895_000.0)));
        assert_eq!(m.offset_ns(2.0 * s as f64), -7_000_000.0);
        // moved only within its own half round trip (1 ms): 2 ms off stays 1 ms off
        let m = OffsetMap::new(&[
            off_rtt(OffsetWhen::Init, s, -7_000_000, 10_000),
            off_rtt(OffsetWhen::Finalize, 2 * s, -9_000_000, 2_000_000),
        ]);
        assert_eq!(m.moved, Some((1, -8_000_000.0)));
        // two precise measurements 50 us apart over 1 s (50 ppm): both as measured
        let m = OffsetMap::new(&[
            off_rtt(OffsetWhen::Init, s, -7_000_000, 10_000),
            off_rtt(OffsetWhen::Finalize, 2 * s, -7_050_000, 12_000),
        ]);
        assert_eq!(m.moved, None);
        assert_eq!(m.offset_ns(2.0 * s as f64), -7_050_000.0);
    }

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
        // PLX_CLOCK=coarse: nanoseconds too, whatever rate was written
        let m = ClockMap::new(&[], Some(3e9), Some(ClockKind::from_u8(2)));
        assert_eq!(m.source, ClockSource::Monotonic);
        assert_eq!(m.ns_per_tick(), 1.0);
    }

    #[test]
    fn coarse_ticks_are_nanoseconds_plus_the_mean_lag() {
        // pairs lag CLOCK_MONOTONIC by 3 and 1 ns: no rate from them (the line would say 0.9995)
        let m = ClockMap::new(
            &[c(5000, 5001), c(1000, 1003)],
            Some(1e9),
            Some(ClockKind::MonotonicCoarse),
        );
        assert_eq!(m.source, ClockSource::Monotonic);
        assert_eq!(m.ns_per_tick(), 1.0);
        assert_eq!(m.ns(1000), 1002.0);
        assert_eq!(m.ns(9000), 9002.0);
        let m = ClockMap::new(&[], Some(f64::NAN), None);
        assert_eq!(m.source, ClockSource::Assumed);
        assert_eq!(m.seconds(1_000_000_000), 1.0);
    }
}
