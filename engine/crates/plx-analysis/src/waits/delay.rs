//! Root causes of wait states (Böhme et al.'s delay analysis): each location's cumulative time by call path, its waits and what they were blamed on; the excess of a late location over a waiting one in the interval since they last synchronised, and a wait's time divided among the delays that caused it.
//!
//! Invariant: an [`Account`] only grows (times are added, never removed), so the difference of
//! two of a location's accounts taken at two instants is what the location did between them.

use std::collections::{BTreeMap, BTreeSet};

/// A location's cumulative account, or the difference of two (an interval's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Account {
    /// Time in each call path (exclusive), ns.
    pub time: BTreeMap<u32, i64>,
    /// Time spent in wait states, by the call path that waited, ns.
    pub waited: BTreeMap<u32, i64>,
    /// The location's waits by root cause: (cause location, cause call path) → ns.
    pub blame: BTreeMap<(u32, u32), f64>,
    /// An interval's: the synchronisation it begins at, as the location left it.
    pub start: Option<Start>,
    /// The time accounted up to, ns (the location's latest event then).
    pub at: i64,
    /// An interval's: the time accounted up to in the earlier account, ns (its time is what
    /// the location did after `from` and up to `at`); 0 in a cumulative account.
    pub from: i64,
}

/// Which synchronisation: both sides of one name it alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sync {
    /// A message (its number in the merged trace).
    Message(u64),
    /// A collective instance: (communicator, its number on it).
    Collective(u32, u32),
    /// MPI_Init.
    Init,
}

/// Where a location's interval begins: the exit of a synchronising routine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// The synchronisation.
    pub sync: Sync,
    /// The routine's entry, ns.
    pub enter: i64,
    /// The routine's exit, ns.
    pub exit: i64,
    /// The routine's call path.
    pub cp: u32,
    /// When the partner of the location's latest wait found while it was in the routine came
    /// (`i64::MIN`: none), ns: a routine that kept waiting (for another partner) after this
    /// synchronisation was waiting, not busy, after it.
    pub waited_until: i64,
}

impl Account {
    /// `self - earlier` (an interval's account; `earlier` taken before `self` on the same
    /// location).
    pub fn since(&self, earlier: Option<&Account>) -> Account {
        let Some(e) = earlier else {
            return self.clone();
        };
        fn sub<K: Ord + Copy, V: Copy + std::ops::Sub<Output = V> + PartialOrd + Default>(
            a: &BTreeMap<K, V>,
            b: &BTreeMap<K, V>,
        ) -> BTreeMap<K, V> {
            a.iter()
                .filter_map(|(k, &v)| {
                    let d = v - b.get(k).copied().unwrap_or_default();
                    (d > V::default()).then_some((*k, d))
                })
                .collect()
        }
        Account {
            time: sub(&self.time, &e.time),
            waited: sub(&self.waited, &e.waited),
            blame: sub(&self.blame, &e.blame),
            start: None,
            at: self.at,
            from: e.at,
        }
    }

    /// Time in call path `cp` not spent waiting, ns.
    fn busy(&self, cp: u32) -> i64 {
        self.time.get(&cp).copied().unwrap_or(0) - self.waited.get(&cp).copied().unwrap_or(0)
    }

    fn waited_total(&self) -> i64 {
        self.waited.values().sum()
    }

    /// This interval's time in its starting routine after the other location (interval
    /// `other`) left the same synchronisation: (call path, ns). Two locations leave one
    /// synchronisation at different times; their common interval begins at the earlier exit,
    /// and the later one's time in the routine after it is its own (a lag, busy).
    fn lag(&self, other: &Account) -> Option<(u32, i64)> {
        let (Some(a), Some(b)) = (self.start, other.start) else {
            return None;
        };
        let ns = a.exit - b.exit.max(a.enter);
        (a.sync == b.sync && ns > 0).then_some((a.cp, ns))
    }
}

/// Whether a cause's share came straight from the late location's own work (direct) or from
/// its own waiting, traced back to what caused that (propagated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CauseKind {
    /// The late location's excess time in a call path, not waiting.
    Direct,
    /// The late location's excess waiting, passed on to the delays that caused those waits.
    Propagated,
}

impl CauseKind {
    /// `direct` or `propagated`.
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::Direct => "direct",
            CauseKind::Propagated => "propagated",
        }
    }
}

/// One share of a wait: (cause location, cause call path, kind, ns).
pub type Share = (u32, u32, CauseKind, f64);

/// Divides a wait of `wait_ns` between the delays of late location `late` (its interval account
/// `late_acc`) over the waiting location's (`waiter_acc`), both since they last synchronised:
/// the late location's excess busy time in each call path is a direct cause (the time either spent
/// in the routine where the interval began, after the other left it, counts as its busy time
/// there: [`Account::lag`]); its excess waiting is propagated to the root causes its own waits were blamed on in the interval (to its waiting
/// call paths where those have none). Shares are proportional to the excesses and sum to
/// `wait_ns`; without any excess (clocks, or work the interval does not show) the whole wait
/// is a direct cause at `arrival_cp`, the late location's call path when it arrived.
pub fn divide(
    wait_ns: i64,
    late: u32,
    arrival_cp: u32,
    late_acc: &Account,
    waiter_acc: &Account,
) -> Vec<Share> {
    let (late_lag, own_lag) = (late_acc.lag(waiter_acc), waiter_acc.lag(late_acc));
    let lag = |l: Option<(u32, i64)>, cp: u32| l.filter(|x| x.0 == cp).map_or(0, |x| x.1);
    let mut direct: Vec<(u32, i64)> = Vec::new();
    let cps: BTreeSet<u32> = late_acc
        .time
        .keys()
        .copied()
        .chain(late_lag.map(|x| x.0))
        .collect();
    for cp in cps {
        let e = late_acc.busy(cp) + lag(late_lag, cp) - waiter_acc.busy(cp) - lag(own_lag, cp);
        if e > 0 {
            direct.push((cp, e));
        }
    }
    let prop = (late_acc.waited_total() - waiter_acc.waited_total()).max(0);
    let total: i64 = direct.iter().map(|d| d.1).sum::<i64>() + prop;
    let w = wait_ns as f64;
    if total <= 0 {
        return vec![(late, arrival_cp, CauseKind::Direct, w)];
    }
    let share = |e: i64| e as f64 * w / total as f64;
    let mut out: Vec<Share> = direct
        .iter()
        .map(|&(cp, e)| (late, cp, CauseKind::Direct, share(e)))
        .collect();
    if prop > 0 {
        let p = share(prop);
        let blamed: f64 = late_acc.blame.values().sum();
        if blamed > 0.0 {
            for (&(loc, cp), &b) in &late_acc.blame {
                out.push((loc, cp, CauseKind::Propagated, p * b / blamed));
            }
        } else {
            let waited = late_acc.waited_total() as f64;
            for (&cp, &ns) in &late_acc.waited {
                out.push((late, cp, CauseKind::Propagated, p * ns as f64 / waited));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(time: &[(u32, i64)], waited: &[(u32, i64)], blame: &[((u32, u32), f64)]) -> Account {
        Account {
            time: time.iter().copied().collect(),
            waited: waited.iter().copied().collect(),
            blame: blame.iter().copied().collect(),
            start: None,
            at: 0,
            from: 0,
        }
    }

    #[test]
    fn excess_in_one_call_path_takes_the_whole_wait() {
        // late: 300 in work (7), 50 in main (1); waiter: 50 in main
        let late = acc(&[(7, 300), (1, 50)], &[], &[]);
        let waiter = acc(&[(1, 50)], &[], &[]);
        assert_eq!(
            divide(280, 3, 9, &late, &waiter),
            vec![(3, 7, CauseKind::Direct, 280.0)]
        );
    }

    #[test]
    fn shares_are_proportional_to_the_excesses() {
        let late = acc(&[(7, 300), (8, 100)], &[], &[]);
        let waiter = acc(&[(7, 100)], &[], &[]);
        assert_eq!(
            divide(150, 3, 9, &late, &waiter),
            vec![
                (3, 7, CauseKind::Direct, 100.0),
                (3, 8, CauseKind::Direct, 50.0)
            ]
        );
    }

    #[test]
    fn the_late_locations_waiting_is_propagated_to_its_causes() {
        // late waited 200 in its recv (5), blamed on location 4's work (7)
        let late = acc(&[(5, 250)], &[(5, 200)], &[((4, 7), 200.0)]);
        let waiter = acc(&[], &[], &[]);
        assert_eq!(
            divide(125, 3, 9, &late, &waiter),
            vec![
                (3, 5, CauseKind::Direct, 25.0),
                (4, 7, CauseKind::Propagated, 100.0)
            ]
        );
    }

    #[test]
    fn no_excess_blames_the_arrival() {
        let a = acc(&[(1, 10)], &[], &[]);
        assert_eq!(
            divide(5, 2, 6, &a, &a),
            vec![(2, 6, CauseKind::Direct, 5.0)]
        );
    }

    #[test]
    fn the_later_exit_of_the_same_synchronisation_is_busy_in_its_routine() {
        // late left the routine (call path 5, entered at 0) at 20, the waiter at 10: the late
        // one's 10 after the waiter's exit is its excess there, beside its 30 of work (7)
        let start = |sync, exit| {
            Some(Start {
                sync,
                enter: 0,
                exit,
                cp: 5,
                waited_until: i64::MIN,
            })
        };
        let mut late = acc(&[(7, 30)], &[], &[]);
        late.start = start(Sync::Message(1), 20);
        let mut waiter = acc(&[], &[], &[]);
        waiter.start = start(Sync::Message(1), 10);
        assert_eq!(
            divide(80, 3, 9, &late, &waiter),
            vec![
                (3, 5, CauseKind::Direct, 20.0),
                (3, 7, CauseKind::Direct, 60.0)
            ]
        );
        // not the same synchronisation: no common exit to compare
        waiter.start = start(Sync::Collective(0, 1), 10);
        assert_eq!(
            divide(80, 3, 9, &late, &waiter),
            vec![(3, 7, CauseKind::Direct, 80.0)]
        );
    }

    #[test]
    fn since_subtracts_and_drops_what_did_not_grow() {
        let a = acc(&[(1, 10), (2, 5)], &[(2, 3)], &[((0, 1), 3.0)]);
        let b = acc(&[(1, 4), (2, 5)], &[(2, 1)], &[((0, 1), 3.0)]);
        assert_eq!(a.since(Some(&b)), acc(&[(1, 6)], &[(2, 2)], &[]));
        assert_eq!(a.since(None), a);
    }
}
