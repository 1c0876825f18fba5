//! MPI locations (rank, rank.thread) and communicators named across processes by their members
//! (an intercommunicator's: the unordered pair of its groups) and ordinal.

use std::collections::HashMap;
use std::fmt;

use plx_format::{CommDef, InterCommDef};

/// Where MPI work happens: a rank, or one thread of a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// World rank.
    pub rank: u32,
    /// Thread index, `None` for the rank as a whole.
    pub thread: Option<u32>,
}

impl Location {
    /// The rank as a whole.
    pub fn rank(rank: u32) -> Self {
        Location { rank, thread: None }
    }

    /// One thread of a rank.
    pub fn thread(rank: u32, thread: u32) -> Self {
        Location {
            rank,
            thread: Some(thread),
        }
    }

    /// The same location at rank or thread granularity.
    pub fn at(self, by_thread: bool) -> Self {
        if by_thread {
            self
        } else {
            Location::rank(self.rank)
        }
    }
}

/// `3` for a rank, `3.1` for thread 1 of rank 3.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.thread {
            Some(t) => write!(f, "{}.{}", self.rank, t),
            None => write!(f, "{}", self.rank),
        }
    }
}

/// A communicator as every member knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommInfo {
    /// `Some(0)` MPI_COMM_WORLD, `Some(1)` MPI_COMM_SELF (predefined in every process, so never
    /// confused with a created communicator of the same members); `None` for a created one.
    pub predefined: Option<u32>,
    /// World ranks of the members in the communicator's rank order; of an intercommunicator,
    /// the one of its two groups that sorts first.
    pub ranks: Vec<u32>,
    /// Communicators with the same members created before it (by each member); of an
    /// intercommunicator, intercommunicators between the same two groups.
    pub ordinal: u32,
    /// An intercommunicator's other group (the one that sorts last), in its rank order; `None`
    /// for an intracommunicator, so that the two are never one communicator.
    pub remote: Option<Vec<u32>>,
}

impl CommInfo {
    /// `MPI_COMM_WORLD`, `MPI_COMM_SELF (rank 3)`, `comm of 4 ranks [0 1 2 3] #1` or
    /// `intercomm of [0 2] and [1 3] #0`.
    pub fn describe(&self) -> String {
        let list = |ranks: &[u32]| -> String {
            let r: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
            r.join(" ")
        };
        if let Some(remote) = &self.remote {
            return format!(
                "intercomm of [{}] and [{}] #{}",
                list(&self.ranks),
                list(remote),
                self.ordinal
            );
        }
        match self.predefined {
            Some(0) => "MPI_COMM_WORLD".to_string(),
            Some(1) => format!("MPI_COMM_SELF (rank {})", self.ranks.first().unwrap_or(&0)),
            _ => {
                format!(
                    "comm of {} ranks [{}] #{}",
                    self.ranks.len(),
                    list(&self.ranks),
                    self.ordinal
                )
            }
        }
    }

    /// Whether it is an intercommunicator.
    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// World ranks of every member: the members, or both groups of an intercommunicator.
    pub fn members(&self) -> Vec<u32> {
        let mut m = self.ranks.clone();
        if let Some(remote) = &self.remote {
            m.extend_from_slice(remote);
        }
        m
    }
}

/// Communicators of all processes, one index per distinct `(ranks, ordinal)` (spec: CommDef), or
/// per distinct `({local, remote}, ordinal)` for intercommunicators (spec: InterCommDef).
#[derive(Debug, Clone, Default)]
pub struct CommTable {
    comms: Vec<CommInfo>,
    by_key: HashMap<CommInfo, u32>,
    /// CommDefs that list no ranks (the world's, format version 3) by (world size, first rank,
    /// predefined id, ordinal): found without building and hashing the list, once per process.
    worlds: HashMap<(u32, u32, Option<u32>, u32), u32>,
    /// World ranks listed for such CommDefs so far (at most [`WORLD_RANKS_LIMIT`]).
    world_listed: u64,
}

/// The most world ranks listed, all worlds together, for CommDefs that list none (their size is
/// the MpiInit's, which a damaged file may claim to be anything): 2^24 ranks, 64 MiB.
pub const WORLD_RANKS_LIMIT: u64 = 1 << 24;

impl CommTable {
    /// The experiment-wide index of a process's CommDef.
    pub fn intern(&mut self, def: &CommDef) -> u32 {
        self.insert(CommInfo {
            predefined: (def.comm <= 1).then_some(def.comm),
            ranks: def.ranks.clone(),
            ordinal: def.ordinal,
            remote: None,
        })
    }

    /// The experiment-wide index of a process's InterCommDef: its two sides list the groups in
    /// opposite orders, so the pair is put in one order (the smaller group list first).
    pub fn intern_inter(&mut self, def: &InterCommDef) -> u32 {
        let split = (def.local_size as usize).min(def.ranks.len());
        let (local, remote) = def.ranks.split_at(split);
        let (a, b) = if local <= remote {
            (local, remote)
        } else {
            (remote, local)
        };
        self.insert(CommInfo {
            predefined: None,
            ranks: a.to_vec(),
            ordinal: def.ordinal,
            remote: Some(b.to_vec()),
        })
    }

    /// The experiment-wide index of a CommDef that lists no ranks: its members are the world's
    /// `size` ranks in order, numbered from `base` (an application's first rank in a session).
    /// `None` past [`WORLD_RANKS_LIMIT`].
    pub fn intern_world(&mut self, def: &CommDef, size: u32, base: u32) -> Option<u32> {
        let predefined = (def.comm <= 1).then_some(def.comm);
        let key = (size, base, predefined, def.ordinal);
        if let Some(&i) = self.worlds.get(&key) {
            return Some(i);
        }
        if self.world_listed + size as u64 > WORLD_RANKS_LIMIT {
            return None;
        }
        self.world_listed += size as u64;
        let i = self.insert(CommInfo {
            predefined,
            ranks: (0..size).map(|r| base.saturating_add(r)).collect(),
            ordinal: def.ordinal,
            remote: None,
        });
        self.worlds.insert(key, i);
        Some(i)
    }

    fn insert(&mut self, info: CommInfo) -> u32 {
        if let Some(&i) = self.by_key.get(&info) {
            return i;
        }
        let i = self.comms.len() as u32;
        self.comms.push(info.clone());
        self.by_key.insert(info, i);
        i
    }

    /// The communicator at an index.
    pub fn get(&self, i: u32) -> &CommInfo {
        &self.comms[i as usize]
    }

    /// All communicators.
    pub fn all(&self) -> &[CommInfo] {
        &self.comms
    }

    /// Keeps the communicators `keep` only, renumbered in their order; returns old → new.
    pub fn retain(
        &mut self,
        keep: &std::collections::BTreeSet<u32>,
    ) -> std::collections::BTreeMap<u32, u32> {
        let mut map = std::collections::BTreeMap::new();
        let mut comms = Vec::new();
        for &i in keep {
            map.insert(i, comms.len() as u32);
            comms.push(self.comms[i as usize].clone());
        }
        self.comms = comms;
        self.by_key = self
            .comms
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), i as u32))
            .collect();
        map
    }

    /// Takes `base` off the member ranks of the communicators `which` (an application's
    /// logical view numbers its ranks from 0 again).
    pub fn lower_ranks(&mut self, which: &std::collections::BTreeSet<u32>, base: u32) {
        for &i in which {
            let c = &mut self.comms[i as usize];
            for r in c.ranks.iter_mut().chain(c.remote.iter_mut().flatten()) {
                *r = r.saturating_sub(base);
            }
        }
        self.by_key = self
            .comms
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), i as u32))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(comm: u32, ordinal: u32, ranks: &[u32]) -> CommDef {
        CommDef {
            comm,
            ordinal,
            ranks: ranks.to_vec(),
        }
    }

    #[test]
    fn same_members_and_ordinal_are_one_communicator() {
        let mut t = CommTable::default();
        let world = t.intern(&def(0, 0, &[0, 1, 2]));
        // rank 0 created {0,1} as its 2nd communicator, rank 1 as its 3rd: same ordinal, same comm
        let a = t.intern(&def(2, 0, &[0, 1]));
        let b = t.intern(&def(3, 0, &[0, 1]));
        assert_eq!(a, b);
        assert_ne!(t.intern(&def(4, 1, &[0, 1])), a);
        // a duplicate of the world is not the world
        assert_ne!(t.intern(&def(2, 0, &[0, 1, 2])), world);
        assert_eq!(t.intern(&def(0, 0, &[0, 1, 2])), world);
        assert_eq!(t.get(world).describe(), "MPI_COMM_WORLD");
        assert_eq!(t.get(a).describe(), "comm of 2 ranks [0 1] #0");
        assert_eq!(Location::thread(3, 1).to_string(), "3.1");
        assert_eq!(Location::thread(3, 1).at(false), Location::rank(3));
    }

    #[test]
    fn a_world_that_lists_no_ranks_is_the_world_that_lists_them() {
        let mut t = CommTable::default();
        let listed = t.intern(&def(0, 0, &[0, 1, 2]));
        assert_eq!(t.intern_world(&def(0, 0, &[]), 3, 0), Some(listed));
        assert_eq!(t.intern_world(&def(0, 0, &[]), 3, 0), Some(listed));
        // a duplicate of the world written so is a duplicate, not the world
        let dup = t.intern_world(&def(2, 0, &[]), 3, 0).unwrap();
        assert_ne!(dup, listed);
        assert_eq!(t.get(dup).describe(), "comm of 3 ranks [0 1 2] #0");
        // a session's second application numbers its world from its first rank
        let second = t.intern_world(&def(0, 0, &[]), 2, 3).unwrap();
        assert_eq!(t.get(second).ranks, vec![3, 4]);
        // a damaged MpiInit claiming 2^32 - 1 ranks lists none (nor allocates for them)
        assert_eq!(t.intern_world(&def(0, 0, &[]), u32::MAX, 0), None);
        assert_eq!(
            t.intern_world(&def(0, 0, &[]), WORLD_RANKS_LIMIT as u32, 0),
            None,
            "the worlds listed so far count against the limit"
        );
        assert_eq!(t.all().len(), 3);
    }

    fn inter(comm: u32, ordinal: u32, local: &[u32], remote: &[u32]) -> InterCommDef {
        InterCommDef {
            comm,
            ordinal,
            local_size: local.len() as u32,
            ranks: [local, remote].concat(),
        }
    }

    #[test]
    fn both_sides_of_an_intercommunicator_are_one_communicator() {
        let mut t = CommTable::default();
        let half = t.intern(&def(2, 0, &[0, 2]));
        // each side lists its own group first
        let a = t.intern_inter(&inter(3, 0, &[0, 2], &[1, 3]));
        let b = t.intern_inter(&inter(3, 0, &[1, 3], &[0, 2]));
        assert_eq!(a, b);
        // never the intracommunicator of the same members, nor a later one of the same groups
        assert_ne!(a, half);
        assert_ne!(t.intern_inter(&inter(4, 1, &[1, 3], &[0, 2])), a);
        // the group's rank order matters, as for intracommunicators
        assert_ne!(t.intern_inter(&inter(5, 0, &[2, 0], &[1, 3])), a);
        assert_eq!(t.get(a).describe(), "intercomm of [0 2] and [1 3] #0");
        assert!(t.get(a).is_inter() && !t.get(half).is_inter());
        assert_eq!(t.get(a).members(), vec![0, 2, 1, 3]);
        let keep: std::collections::BTreeSet<u32> = [a].into();
        t.lower_ranks(&keep, 1);
        assert_eq!(t.get(a).describe(), "intercomm of [0 1] and [0 2] #0");
    }
}
