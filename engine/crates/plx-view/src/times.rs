//! A sorted run of ns times held in 4 bytes each ([`Times`]): per block of [`SPAN`] values its
//! first value in full, each value as its distance from it. A block whose values lie 2^32 ns
//! (4.3 s) or more apart from its first is kept in full ("wide").
//!
//! Why: the lanes of a trace hold two times per region instance, and they are most of the
//! memory an open of `plx view` writes (the kernel's page faults on it were a quarter of the
//! open's CPU time); two 8-byte times were 16 of a lane's 20 bytes per instance.
//!
//! Invariants: `base.len() == wide.len() == off.len().div_ceil(SPAN)`; `base[b]` is value
//! `b·SPAN`; a narrow block (`wide[b] == NARROW`) holds value `i` as `base[b] + off[i]`, a wide
//! one as `far[wide[b] + i % SPAN]` (its `off` entries 0).

use crate::arr::Arr;

/// Values per block (per full-width base).
pub const SPAN: usize = 64;

/// [`Times::wide`] of a block held as distances.
const NARROW: u32 = u32::MAX;

/// A run of times (sorted in a lane, but any order is held exactly).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Times {
    /// Per block, its first value.
    pub base: Arr<i64>,
    /// Per block, [`NARROW`] or where its values begin in `far`.
    pub wide: Arr<u32>,
    /// Per value, its distance from its block's first (0 in a wide block).
    pub off: Arr<u32>,
    /// The values of the wide blocks, block after block.
    pub far: Arr<i64>,
}

impl Times {
    /// Values.
    #[inline]
    pub fn len(&self) -> usize {
        self.off.len()
    }

    /// No value?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.off.is_empty()
    }

    /// Value `i` (panics past the end).
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        let b = i / SPAN;
        let off = self.off[i];
        if self.far.is_empty() {
            // every block narrow (the usual case)
            return self.base[b].wrapping_add(off as i64);
        }
        match self.wide[b] {
            NARROW => self.base[b].wrapping_add(off as i64),
            w => self.far[w as usize + i % SPAN],
        }
    }

    /// The first index whose value fails `pred`, which holds on a prefix of the values (as
    /// [`slice::partition_point`]).
    pub fn partition_point(&self, pred: impl Fn(i64) -> bool) -> usize {
        // the blocks whose first value holds, then within the last of them
        let kb = self.base.partition_point(|&b| pred(b));
        if kb == 0 {
            return 0;
        }
        let b = kb - 1;
        let (mut lo, mut hi) = (b * SPAN + 1, (kb * SPAN).min(self.len()));
        // invariant: pred holds before lo, fails from hi on
        match self.wide[b] {
            NARROW => {
                let base = self.base[b];
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if pred(base.wrapping_add(self.off[mid] as i64)) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
            }
            w => {
                let at = w as usize;
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if pred(self.far[at + mid % SPAN]) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
            }
        }
        lo
    }

    /// The values in order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The values, in a vector.
    pub fn to_vec(&self) -> Vec<i64> {
        self.iter().collect()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        8 * self.base.len() + 4 * self.wide.len() + 4 * self.off.len() + 8 * self.far.len()
    }
}

impl Times {
    /// The times of these arrays (as [`Times`]'s fields), or what is wrong with them: their
    /// lengths disagree, a wide block's values lie outside `far`, or a block's first value is
    /// not its base.
    pub fn from_parts(
        base: Arr<i64>,
        wide: Arr<u32>,
        off: Arr<u32>,
        far: Arr<i64>,
    ) -> Result<Times, String> {
        let blocks = off.len().div_ceil(SPAN);
        if base.len() != blocks || wide.len() != blocks {
            return Err(format!(
                "{} bases and {} block kinds for {} times (expected {blocks} each)",
                base.len(),
                wide.len(),
                off.len()
            ));
        }
        for b in 0..blocks {
            let n = (off.len() - b * SPAN).min(SPAN);
            let first = match wide[b] {
                NARROW => base[b].wrapping_add(off[b * SPAN] as i64),
                w => match far.get(w as usize..w as usize + n) {
                    Some(v) => v[0],
                    None => return Err(format!("block {b}'s {n} times lie outside the wide ones")),
                },
            };
            if first != base[b] {
                return Err(format!("block {b}'s first time is not its base"));
            }
        }
        Ok(Times {
            base,
            wide,
            off,
            far,
        })
    }
}

impl From<&[i64]> for Times {
    fn from(v: &[i64]) -> Times {
        let mut b = TimesBuilder::default();
        b.reserve(v.len());
        for &t in v {
            b.push(t);
        }
        b.finish()
    }
}

/// A [`Times`] being filled one value at a time.
#[derive(Debug, Clone, Default)]
pub struct TimesBuilder {
    base: Vec<i64>,
    wide: Vec<u32>,
    off: Vec<u32>,
    far: Vec<i64>,
    /// The last block's base, and whether it is held as distances.
    cur: i64,
    narrow: bool,
}

impl TimesBuilder {
    /// Room for `n` values (not for wide blocks), `Err` when refused.
    pub fn try_reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.off.try_reserve_exact(n)?;
        self.base.try_reserve_exact(n.div_ceil(SPAN))?;
        self.wide.try_reserve_exact(n.div_ceil(SPAN))
    }

    /// Room for `n` values, as far as given.
    pub fn reserve(&mut self, n: usize) {
        let _ = self.try_reserve(n);
    }

    /// Values.
    pub fn len(&self) -> usize {
        self.off.len()
    }

    /// No value?
    pub fn is_empty(&self) -> bool {
        self.off.is_empty()
    }

    /// One more value.
    #[inline(always)]
    pub fn push(&mut self, t: i64) {
        if self.off.len() % SPAN == 0 {
            self.base.push(t);
            self.wide.push(NARROW);
            self.cur = t;
            self.narrow = true;
            self.off.push(0);
            return;
        }
        let d = t.wrapping_sub(self.cur);
        if self.narrow && (d as u64) >> 32 == 0 {
            self.off.push(d as u32);
        } else {
            self.far_one(t);
        }
    }

    /// A value of a wide block, or the one that makes the last block wide.
    #[cold]
    #[inline(never)]
    fn far_one(&mut self, t: i64) {
        if self.narrow {
            self.widen(self.base.len() - 1);
            self.narrow = false;
        }
        self.far.push(t);
        self.off.push(0);
    }

    /// Block `b` (the last) held in full from here.
    #[cold]
    fn widen(&mut self, b: usize) {
        let base = self.base[b];
        self.wide[b] = u32::try_from(self.far.len()).expect("fewer than 2^32 times");
        for o in &mut self.off[b * SPAN..] {
            self.far.push(base.wrapping_add(*o as i64));
            *o = 0;
        }
    }

    /// The last value pushed.
    pub fn last(&self) -> Option<i64> {
        let i = self.off.len().checked_sub(1)?;
        let b = i / SPAN;
        Some(match self.wide[b] {
            NARROW => self.base[b].wrapping_add(self.off[i] as i64),
            w => self.far[w as usize + i % SPAN],
        })
    }

    /// The times.
    pub fn finish(self) -> Times {
        Times {
            base: self.base.into(),
            wide: self.wide.into(),
            off: self.off.into(),
            far: self.far.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_far_apart_are_held_whole_and_read_back_exactly() {
        // 1,200 values 3 ns apart, the first i64::MIN, a jump of 2^32 ns at value 1,020, the
        // last i64::MAX
        let mut v: Vec<i64> = (0..1_200).map(|i| 1_000_000 + 3 * i).collect();
        v[0] = i64::MIN;
        for x in &mut v[1_020..] {
            *x += 1 << 32;
        }
        v.push(i64::MAX);
        let t = Times::from(&v[..]);
        assert_eq!(t.to_vec(), v);
        assert_eq!(t.len(), 1_201);
        // blocks 0 (i64::MIN), 15 (values 960..1023, the jump at 1,020) and 18 (1,152..1,200,
        // i64::MAX) held whole
        let wide: Vec<usize> = (0..t.wide.len()).filter(|&b| t.wide[b] != NARROW).collect();
        assert_eq!(wide, vec![0, 15, 18]);
        assert_eq!(t.far.len(), 64 + 64 + 49);
        for probe in [
            i64::MIN,
            0,
            1_000_003,
            1_000_004,
            1_003_057,
            1_003_060 + (1 << 32),
            1_003_061 + (1 << 32),
            i64::MAX,
        ] {
            let want = v.partition_point(|&x| x < probe);
            assert_eq!(t.partition_point(|x| x < probe), want, "{probe}");
            let want = v.partition_point(|&x| x <= probe);
            assert_eq!(t.partition_point(|x| x <= probe), want, "{probe}");
        }
        // 4 bytes a value when narrow
        let n = Times::from(&v[1..901]);
        assert_eq!(n.bytes(), 4 * 900 + 12 * 15);
        assert!(Times::default().is_empty());
        assert_eq!(Times::default().partition_point(|_| true), 0);
    }
}
