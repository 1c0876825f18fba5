//! Latency/bandwidth per sender/receiver pair (jmpi's Table 2): least squares of transfer time against message size.

use std::collections::BTreeMap;

use crate::comms::Location;
use crate::matching::MatchedMessage;

/// Running sums of one pair's (bytes, transfer ns) points, centred for accuracy (Welford).
#[derive(Debug, Clone, Copy, Default)]
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
}

/// Below this R² the size explains too little of the transfer times for the fitted latency and
/// bandwidth to mean anything (the times are waiting or noise, not size).
pub const MEANINGFUL_R2: f64 = 0.5;

impl PairFit {
    /// Do the fitted latency and bandwidth mean something: a fit (two sizes or more) whose R²
    /// is at least [`MEANINGFUL_R2`]?
    pub fn meaningful(&self) -> bool {
        self.r2.is_some_and(|r| r >= MEANINGFUL_R2)
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
    }
}
