//! Human-readable numbers: times in s/ms/us/ns, sizes in B/KiB/MiB/GiB, dates from epoch nanoseconds.

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

/// A size in bytes in powers of 1024, as `plx run`'s sizes are read (`--buffer 4K` is 4096
/// bytes): `0`, `512 B`, `1.5 KiB`, `80.0 MiB`.
pub fn human_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    let a = b.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < K {
        format!("{b:.0} B")
    } else if a < K * K {
        format!("{:.1} KiB", b / K)
    } else if a < K * K * K {
        format!("{:.1} MiB", b / (K * K))
    } else if a < K * K * K * K {
        format!("{:.1} GiB", b / (K * K * K))
    } else {
        format!("{:.1} TiB", b / (K * K * K * K))
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
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_bytes(80.0 * 1048576.0), "80.0 MiB");
        assert_eq!(human_bytes(2.5 * 1073741824.0), "2.5 GiB");
        assert_eq!(human_bytes(1000.0), "1000 B");
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

/// `name` in at most `max` characters (`max` >= 5): a longer one keeps its first and last
/// characters around "..." (a C++ template's name and its arguments' ends stay readable).
pub fn elide_middle(name: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = name.chars().count();
    if n <= max {
        return std::borrow::Cow::Borrowed(name);
    }
    let keep = max - 3;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut s: String = name.chars().take(head).collect();
    s.push_str("...");
    s.extend(name.chars().skip(n - tail));
    std::borrow::Cow::Owned(s)
}

#[cfg(test)]
mod elide_tests {
    use super::elide_middle;

    #[test]
    fn a_long_name_keeps_its_ends() {
        assert_eq!(elide_middle("abcdefghij", 10), "abcdefghij");
        assert_eq!(elide_middle("abcdefghijk", 10), "abcd...ijk");
        assert_eq!(elide_middle("äöüäöüäöüäöü", 9), "äöü...äöü");
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
