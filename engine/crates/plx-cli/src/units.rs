//! Human-readable numbers: times in s/ms/us/ns, sizes in B/KB/MB/GB, dates from epoch nanoseconds.

/// A duration in seconds with a unit chosen by size, e.g. `1.234 s`, `12.500 ms`, `3.000 us`.
pub fn human_time(s: f64) -> String {
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if a >= 1e-6 {
        format!("{:.3} us", s * 1e6)
    } else if a == 0.0 {
        "0 s".to_string()
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

/// A size in bytes with a decimal unit (1 KB = 1000 B, as 1 MB = 1e6 B in bandwidths):
/// `0`, `512 B`, `1.5 KB`, `80.0 MB`.
pub fn human_bytes(b: f64) -> String {
    let a = b.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1e3 {
        format!("{b:.0} B")
    } else if a < 1e6 {
        format!("{:.1} KB", b / 1e3)
    } else if a < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else if a < 1e12 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} TB", b / 1e12)
    }
}

/// An optional duration, `-` when unknown.
pub fn human_opt(s: Option<f64>) -> String {
    s.map_or_else(|| "-".to_string(), human_time)
}

/// `YYYY-MM-DD HH:MM:SS UTC` of nanoseconds since the epoch.
pub fn utc_date(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(human_time(1.5), "1.500 s");
        assert_eq!(human_time(0.0125), "12.500 ms");
        assert_eq!(human_time(3e-6), "3.000 us");
        assert_eq!(human_time(4e-8), "40 ns");
        assert_eq!(human_time(0.0), "0 s");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(0.0), "0");
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1500.0), "1.5 KB");
        assert_eq!(human_bytes(80e6), "80.0 MB");
        assert_eq!(human_bytes(2.5e9), "2.5 GB");
    }

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            utc_date(1_700_000_000_000_000_000),
            "2023-11-14 22:13:20 UTC"
        );
    }
}

/// `text` left-aligned in a column of `width` characters, for any width: `{:<w$}` panics
/// ("Formatting argument out of range") past 65,535, which a region name may be.
pub struct Left<'a>(pub &'a str, pub usize);

impl std::fmt::Display for Left<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)?;
        let have = self.0.chars().count();
        for _ in have..self.1 {
            f.write_str(" ")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod left_tests {
    use super::Left;

    #[test]
    fn a_column_wider_than_65535_is_padded() {
        let name = "f".repeat(70_000);
        let s = format!("{}|", Left(&name, 70_002));
        assert_eq!(s.len(), 70_003);
        assert!(s.ends_with("ff  |"));
        assert_eq!(format!("{}|", Left("ab", 1)), "ab|");
    }
}
