//! Latency/bandwidth per sender/receiver pair (jmpi's Table 2): least squares of transfer time against message size.

use std::collections::BTreeMap;

use crate::comms::Location;
use crate::matching::MatchedMessage;

/// Running sums of one pair's (bytes, transfer ns) points, centred for accuracy (Welford).
#[derive(Debug, Clone, Default)]
struct Sums {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2_x: f64,
    m2_y: f64,
    c_xy: f64,
    total_bytes: u64,
    total_ns: f64,
    first_size: Option<u64>,
    sizes_differ: bool,
    smallest: Smallest,
}

/// The transfer times of the smallest message size seen, for their median: at most
/// [`SMALLEST_KEPT`] of them, every `stride`-th once there were more (deterministic, bounded).
#[derive(Debug, Clone, Default)]
struct Smallest {
    bytes: u64,
    seen: u64,
    stride: u64,
    times: Vec<f64>,
}

/// At most this many transfer times of a pair's smallest size are kept for its median.
const SMALLEST_KEPT: usize = 4096;

impl Smallest {
    fn add(&mut self, bytes: u64, ns: f64) {
        if self.seen == 0 || bytes < self.bytes {
            self.bytes = bytes;
            self.seen = 0;
            self.stride = 1;
            self.times.clear();
        } else if bytes > self.bytes {
            return;
        }
        if self.seen % self.stride == 0 {
            if self.times.len() == SMALLEST_KEPT {
                let mut i = 0;
                self.times.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
            if self.seen % self.stride == 0 {
                self.times.push(ns);
            }
        }
        self.seen += 1;
    }

    fn median(&self) -> Option<f64> {
        let mut t = self.times.clone();
        if t.is_empty() {
            return None;
        }
        t.sort_by(f64::total_cmp);
        let n = t.len();
        Some(if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        })
    }
}

impl Sums {
    fn add(&mut self, bytes: u64, ns: f64) {
        let x = bytes as f64;
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        let dy = ns - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.m2_x += dx * (x - self.mean_x);
        self.m2_y += dy * (ns - self.mean_y);
        self.c_xy += dx * (ns - self.mean_y);
        self.total_bytes += bytes;
        self.total_ns += ns;
        self.smallest.add(bytes, ns);
        match self.first_size {
            None => self.first_size = Some(bytes),
            Some(f) if f != bytes => self.sizes_differ = true,
            Some(_) => {}
        }
    }
}

/// The fit of one ordered pair; `None` where there is too little data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairFit {
    /// Sender.
    pub sender: Location,
    /// Receiver.
    pub receiver: Location,
    /// Matched messages.
    pub messages: u64,
    /// Start-up latency: the intercept, µs (needs two distinct sizes).
    pub latency_us: Option<f64>,
    /// Asymptotic bandwidth: 1 / slope, MB/s with 1 MB = 1e6 bytes (needs two distinct sizes
    /// and a positive slope).
    pub bandwidth_mbps: Option<f64>,
    /// Total transfer time / total bytes, µs per byte (needs bytes).
    pub time_per_byte_us: Option<f64>,
    /// Coefficient of determination of the fit (needs two distinct sizes and times that vary).
    pub r2: Option<f64>,
    /// Mean transfer time, µs.
    pub mean_transfer_us: f64,
    /// The smallest message size of the pair, bytes.
    pub smallest_bytes: u64,
    /// The median transfer time of the messages of that size, µs.
    pub smallest_median_us: Option<f64>,
    /// Was the slope of the fit zero or negative (time falling as size grows)?
    pub slope_not_positive: bool,
}

/// What is wrong with a fit that the numbers alone do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitNote {
    /// The size explains too little of the times (R² below [`MEANINGFUL_R2`]).
    LowR2,
    /// The fitted latency is below zero: physically impossible.
    NegativeLatency,
    /// The transfer time falls (or stays) as size grows: no positive bandwidth.
    NegativeBandwidth,
    /// The fitted latency is more than [`LATENCY_OVER_SMALLEST`] times the median transfer time
    /// of the smallest messages: the line does not describe the small messages.
    LatencyAboveSmallest,
}

/// A fitted latency above this many times the median transfer time of the pair's smallest
/// messages disagrees with those messages' own times.
pub const LATENCY_OVER_SMALLEST: f64 = 2.0;

impl FitNote {
    /// The short form in the CSV `note` column and the JSON `notes` list.
    pub fn code(self) -> &'static str {
        match self {
            FitNote::LowR2 => "low_r2",
            FitNote::NegativeLatency => "negative_latency",
            FitNote::NegativeBandwidth => "negative_bandwidth",
            FitNote::LatencyAboveSmallest => "latency_above_smallest",
        }
    }
}

/// Below this R² the size explains too little of the transfer times for the fitted latency and
/// bandwidth to mean anything (the times are waiting or noise, not size).
pub const MEANINGFUL_R2: f64 = 0.5;

impl PairFit {
    /// Do the fitted latency and bandwidth mean something: a fit (two sizes or more) whose R²
    /// is at least [`MEANINGFUL_R2`]?
    pub fn meaningful(&self) -> bool {
        self.r2.is_some_and(|r| r >= MEANINGFUL_R2) && self.notes().is_empty()
    }

    /// Everything wrong with the fit, in a fixed order; empty for a sound fit or for no fit.
    pub fn notes(&self) -> Vec<FitNote> {
        let mut notes = Vec::new();
        let Some(latency) = self.latency_us else {
            return notes;
        };
        if self.r2.is_some_and(|r| r < MEANINGFUL_R2) {
            notes.push(FitNote::LowR2);
        }
        if latency < 0.0 {
            notes.push(FitNote::NegativeLatency);
        }
        if self.slope_not_positive {
            notes.push(FitNote::NegativeBandwidth);
        }
        if self
            .smallest_median_us
            .is_some_and(|m| latency > LATENCY_OVER_SMALLEST * m)
        {
            notes.push(FitNote::LatencyAboveSmallest);
        }
        notes
    }
}

/// Collects matched messages per ordered (sender, receiver) pair and fits each.
#[derive(Debug, Clone, Default)]
pub struct FitAccumulator {
    by_thread: bool,
    pairs: BTreeMap<(Location, Location), Sums>,
}

impl FitAccumulator {
    /// Pairs of ranks, or of threads (`rank.thread`) with `by_thread`.
    pub fn new(by_thread: bool) -> Self {
        FitAccumulator {
            by_thread,
            pairs: BTreeMap::new(),
        }
    }

    /// Adds one message: its size and transfer time (receive − send, rank 0's time base).
    pub fn add(&mut self, m: &MatchedMessage) {
        let key = (m.sender.at(self.by_thread), m.receiver.at(self.by_thread));
        self.pairs
            .entry(key)
            .or_default()
            .add(m.bytes, m.transfer_ns());
    }

    /// Adds a point directly (bytes, transfer ns).
    pub fn add_point(&mut self, sender: Location, receiver: Location, bytes: u64, ns: f64) {
        self.pairs
            .entry((sender, receiver))
            .or_default()
            .add(bytes, ns);
    }

    /// The fits by sender, then receiver.
    pub fn fits(&self) -> Vec<PairFit> {
        self.pairs
            .iter()
            .map(|(&(sender, receiver), s)| {
                let regression = s.sizes_differ && s.m2_x > 0.0;
                let slope = if regression {
                    Some(s.c_xy / s.m2_x)
                } else {
                    None
                };
                PairFit {
                    sender,
                    receiver,
                    messages: s.n,
                    latency_us: slope.map(|b| (s.mean_y - b * s.mean_x) / 1e3),
                    bandwidth_mbps: slope.filter(|b| *b > 0.0).map(|b| 1e3 / b),
                    time_per_byte_us: (s.total_bytes > 0)
                        .then(|| s.total_ns / s.total_bytes as f64 / 1e3),
                    r2: slope
                        .filter(|_| s.m2_y > 0.0)
                        .map(|_| (s.c_xy * s.c_xy / (s.m2_x * s.m2_y)).min(1.0)),
                    mean_transfer_us: if s.n > 0 { s.mean_y / 1e3 } else { 0.0 },
                    smallest_bytes: s.smallest.bytes,
                    smallest_median_us: s.smallest.median().map(|m| m / 1e3),
                    slope_not_positive: slope.is_some_and(|b| b <= 0.0),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_latency_and_bandwidth_exactly() {
        // t = 5 us + bytes / (1000 MB/s) = 5000 ns + 1 ns per byte
        let mut f = FitAccumulator::new(false);
        let (a, b) = (Location::rank(0), Location::rank(1));
        for bytes in [0u64, 1_000, 10_000, 100_000, 1_000_000, 8, 8] {
            f.add_point(a, b, bytes, 5_000.0 + bytes as f64);
        }
        f.add_point(b, a, 64, 7_000.0);
        f.add_point(b, a, 64, 9_000.0);
        let fits = f.fits();
        let x = fits[0];
        assert_eq!(x.messages, 7);
        assert!((x.latency_us.unwrap() - 5.0).abs() < 1e-9);
        assert!((x.bandwidth_mbps.unwrap() - 1000.0).abs() < 1e-9);
        assert!((x.r2.unwrap() - 1.0).abs() < 1e-12);
        let total: u64 = 1_111_016;
        let expect = (7.0 * 5000.0 + total as f64) / total as f64 / 1e3;
        assert!((x.time_per_byte_us.unwrap() - expect).abs() < 1e-15);
        // one size only: no regression, still a time per byte
        let y = fits[1];
        assert_eq!((y.sender, y.messages), (b, 2));
        assert_eq!((y.latency_us, y.bandwidth_mbps, y.r2), (None, None, None));
        assert_eq!(y.time_per_byte_us, Some(8_000.0 / 64.0 / 1e3));
        assert_eq!(y.mean_transfer_us, 8.0);
    }

    #[test]
    fn noisy_fit_has_r2_below_one() {
        let mut f = FitAccumulator::new(false);
        let (a, b) = (Location::rank(0), Location::rank(1));
        for (bytes, ns) in [(0u64, 10.0), (100, 120.0), (200, 190.0), (300, 330.0)] {
            f.add_point(a, b, bytes, ns);
        }
        let x = f.fits()[0];
        assert!(x.r2.unwrap() < 1.0 && x.r2.unwrap() > 0.9);
        assert!(x.bandwidth_mbps.unwrap() > 0.0);
        assert!(x.meaningful());
    }

    #[test]
    fn fit_of_times_size_does_not_explain_is_not_meaningful() {
        let mut f = FitAccumulator::new(false);
        let (a, b) = (Location::rank(0), Location::rank(1));
        for (bytes, ns) in [
            (0u64, 900.0),
            (100, 10.0),
            (200, 1000.0),
            (300, 20.0),
            (400, 950.0),
        ] {
            f.add_point(a, b, bytes, ns);
        }
        let x = f.fits()[0];
        assert!(x.r2.unwrap() < 0.1, "{:?}", x.r2);
        assert!(!x.meaningful());
        assert_eq!(x.notes(), vec![FitNote::LowR2]);
    }

    fn fit_of(points: &[(u64, f64)]) -> PairFit {
        let mut f = FitAccumulator::new(false);
        let (a, b) = (Location::rank(0), Location::rank(1));
        for &(bytes, ns) in points {
            f.add_point(a, b, bytes, ns);
        }
        f.fits()[0]
    }

    #[test]
    fn sound_fit_has_no_note() {
        // 2 us + 1 ns per byte, smallest (8 bytes) at 2.008 us: latency 2 us, no note
        let x = fit_of(&[
            (8, 2_008.0),
            (8, 2_008.0),
            (1_000, 3_000.0),
            (100_000, 102_000.0),
        ]);
        assert!((x.latency_us.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(x.smallest_bytes, 8);
        assert_eq!(x.smallest_median_us, Some(2.008));
        assert!(x.notes().is_empty());
        assert!(x.meaningful());
    }

    #[test]
    fn negative_latency_is_flagged() {
        // small messages fast, large ones slower than the line through them: intercept -5 us
        let x = fit_of(&[
            (0, 0.0),
            (1_000, 0.0),
            (10_000, 5_000.0),
            (20_000, 15_000.0),
        ]);
        assert!(x.latency_us.unwrap() < 0.0, "{x:?}");
        assert!(x.r2.unwrap() > MEANINGFUL_R2);
        assert_eq!(x.notes(), vec![FitNote::NegativeLatency]);
        assert!(!x.meaningful());
    }

    #[test]
    fn falling_time_is_a_negative_bandwidth() {
        let x = fit_of(&[(8, 10_000.0), (1_000, 8_000.0), (10_000, 6_000.0)]);
        assert_eq!(x.bandwidth_mbps, None);
        assert_eq!(x.notes(), vec![FitNote::NegativeBandwidth]);
    }

    #[test]
    fn latency_far_above_the_smallest_messages_is_flagged() {
        // the 8-byte messages take 1 us; the large ones 10 us + 0.1 ns per byte (another
        // protocol) lift the intercept to 3.8 us
        let mut points = vec![(8u64, 1_000.0); 3];
        for b in [65_536u64, 131_072, 262_144, 524_288] {
            points.push((b, 10_000.0 + b as f64 * 0.1));
        }
        let x = fit_of(&points);
        assert_eq!(x.smallest_median_us, Some(1.0));
        assert!((x.latency_us.unwrap() - 3.797).abs() < 1e-3, "{x:?}");
        assert!(x.r2.unwrap() > MEANINGFUL_R2, "{x:?}");
        assert_eq!(x.notes(), vec![FitNote::LatencyAboveSmallest]);
        // at most twice the smallest's median: sound
        let y = fit_of(&[
            (8, 1_000.0),
            (8, 1_000.0),
            (1_000, 2_000.0),
            (2_000, 3_000.0),
        ]);
        assert!((y.latency_us.unwrap() - 1.0).abs() < 0.05, "{y:?}");
        assert!(y.notes().is_empty());
    }

    #[test]
    fn smallest_size_median_is_bounded_and_follows_a_smaller_size() {
        let mut s = Smallest::default();
        for i in 0..100_000u64 {
            s.add(64, (i % 7) as f64);
        }
        assert!(s.times.len() <= SMALLEST_KEPT);
        assert_eq!(s.median(), Some(3.0));
        s.add(1_000, 1e9);
        s.add(8, 5.0);
        s.add(8, 9.0);
        assert_eq!((s.bytes, s.median()), (8, Some(7.0)));
    }
}
