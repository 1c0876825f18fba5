//! Per-location stacks of open regions, closing them as the profile rebuild does: well-nested slices for formats that need them.
//!
//! An exit closes the innermost open region with its id, and with it every region opened inside
//! that was never exited (as [`plx_analysis::rebuild::ProfileBuilder`] counts them, so slices
//! and `plx report`'s calls agree); an exit matching no open region is dropped.

/// Open regions per location with their entry times, innermost last.
pub(crate) struct Stacks {
    stacks: Vec<Vec<(u32, i64)>>,
    /// Exits that matched no open region, dropped.
    pub unmatched_exits: u64,
    /// Regions closed by an exit of an enclosing region (never exited themselves).
    pub implicit_exits: u64,
}

impl Stacks {
    pub fn new(locations: usize) -> Stacks {
        Stacks {
            stacks: vec![Vec::new(); locations],
            unmatched_exits: 0,
            implicit_exits: 0,
        }
    }

    pub fn enter(&mut self, loc: u32, region: u32, ns: i64) {
        self.stacks[loc as usize].push((region, ns));
    }

    /// Closes `region` at `loc`: appends the regions closed, innermost first, to `closed`
    /// (empty when the exit matches nothing).
    pub fn exit(&mut self, loc: u32, region: u32, closed: &mut Vec<u32>) {
        let s = &mut self.stacks[loc as usize];
        match s.iter().rposition(|&(r, _)| r == region) {
            Some(d) => {
                self.implicit_exits += (s.len() - 1 - d) as u64;
                closed.extend(s.drain(d..).rev().map(|(r, _)| r));
            }
            None => self.unmatched_exits += 1,
        }
    }

    /// Regions open at `loc`.
    pub fn depth(&self, loc: u32) -> usize {
        self.stacks[loc as usize].len()
    }

    /// The innermost open region at `loc`.
    pub fn top(&self, loc: u32) -> Option<u32> {
        self.stacks[loc as usize].last().map(|&(r, _)| r)
    }

    /// The innermost open region at `loc` and its entry time.
    pub fn innermost(&self, loc: u32) -> Option<(u32, i64)> {
        self.stacks[loc as usize].last().copied()
    }

    /// The entry time of the innermost open call of `region` at `loc`.
    pub fn entry(&self, loc: u32, region: u32) -> Option<i64> {
        let s = &self.stacks[loc as usize];
        s.iter().rev().find(|&&(r, _)| r == region).map(|&(_, t)| t)
    }

    /// Closes everything still open at `loc`, innermost first.
    pub fn close_all(&mut self, loc: u32) -> Vec<u32> {
        let v = std::mem::take(&mut self.stacks[loc as usize]);
        v.into_iter().rev().map(|(r, _)| r).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_closes_frames_opened_inside() {
        let mut s = Stacks::new(1);
        let mut closed = Vec::new();
        s.enter(0, 1, 10);
        s.enter(0, 2, 20);
        s.enter(0, 3, 30);
        assert_eq!(s.entry(0, 2), Some(20));
        assert_eq!(s.innermost(0), Some((3, 30)));
        s.exit(0, 2, &mut closed);
        assert_eq!(closed, vec![3, 2]);
        assert_eq!(s.implicit_exits, 1);
        closed.clear();
        s.exit(0, 9, &mut closed);
        assert!(closed.is_empty());
        assert_eq!(s.unmatched_exits, 1);
        assert_eq!(s.top(0), Some(1));
        assert_eq!(s.close_all(0), vec![1]);
        assert_eq!(s.top(0), None);
    }
}
