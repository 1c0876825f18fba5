//! User event statistics: count, min, max, mean and standard deviation, mergeable across threads.

/// Statistics of one user event in one location.
#[derive(Debug, Clone, PartialEq)]
pub struct UserStat {
    /// Event name.
    pub name: String,
    /// Number of values.
    pub count: u64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sum.
    pub sum: f64,
    /// Sum of squares.
    pub sum_squares: f64,
}

impl UserStat {
    /// Mean value (0 with no values).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation.
    pub fn std_dev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let m = self.mean();
        (self.sum_squares / self.count as f64 - m * m)
            .max(0.0)
            .sqrt()
    }

    /// Adds another location's values of the same event.
    pub fn merge(&mut self, o: &UserStat) {
        self.count += o.count;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_squares += o.sum_squares;
    }
}

/// Merges lists of statistics by event name, keeping first-seen order.
pub fn merge_stats<'a>(lists: impl IntoIterator<Item = &'a [UserStat]>) -> Vec<UserStat> {
    let mut out: Vec<UserStat> = Vec::new();
    for list in lists {
        for s in list {
            match out.iter_mut().find(|o| o.name == s.name) {
                Some(o) => o.merge(s),
                None => out.push(s.clone()),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_std_dev() {
        let s = UserStat {
            name: "x".into(),
            count: 4,
            min: 2.0,
            max: 8.0,
            sum: 20.0,
            sum_squares: 4.0 + 16.0 + 36.0 + 64.0,
        };
        assert_eq!(s.mean(), 5.0);
        assert!((s.std_dev() - 5.0f64.sqrt()).abs() < 1e-12);
        let m = merge_stats([std::slice::from_ref(&s), std::slice::from_ref(&s)]);
        assert_eq!(m[0].count, 8);
        assert_eq!(m[0].mean(), 5.0);
    }
}
