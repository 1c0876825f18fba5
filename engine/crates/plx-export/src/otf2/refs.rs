//! The references the events and definitions share: strings, communicators (the experiment's and those it lacks), counter metrics, and the OTF2 class of each region.

use std::collections::HashMap;
use std::ffi::CString;

use plx_format::RegionKind;

use super::archive::cstring;
use super::ffi::*;

/// The string definitions, each written once.
pub(super) struct Strings {
    pub ids: HashMap<String, u32>,
    pub order: Vec<CString>,
}

impl Strings {
    pub fn new() -> Strings {
        Strings {
            ids: HashMap::new(),
            order: Vec::new(),
        }
    }

    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.order.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.order.push(cstring(s));
        i
    }
}

/// (collective operation, region role) of an MPI routine, from its name without `MPI_`
/// (nonblocking `MPI_Ibcast` as `MPI_Bcast`).
pub(super) fn collective_of(routine: &str) -> Option<(u8, u8)> {
    let base = routine.strip_prefix("MPI_")?;
    // nonblocking: MPI_Ibcast, MPI_Iallreduce (the blocking name capitalised after the I)
    blocking_collective(base).or_else(|| blocking_collective(&nonblocking_base(base)?))
}

/// Whether an MPI routine posts a nonblocking collective (MPI_Ibarrier, MPI_Iallreduce, ...).
/// (The wait-state analysis's rule: one list of the routines.)
pub(super) fn is_nonblocking_collective(routine: &str) -> bool {
    plx_analysis::waits::replay::posts_collective(routine)
}

/// The blocking routine's name (without `MPI_`) of a nonblocking one's (`Iallreduce`).
fn nonblocking_base(base: &str) -> Option<String> {
    let rest = base.strip_prefix('I')?;
    let mut c = rest.chars();
    let first = c.next()?;
    first
        .is_ascii_lowercase()
        .then(|| format!("{}{}", first.to_ascii_uppercase(), c.as_str()))
}

/// (collective operation, region role) of a blocking collective routine named without `MPI_`.
fn blocking_collective(b: &str) -> Option<(u8, u8)> {
    {
        Some(match b {
            "Barrier" => (OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER),
            "Bcast" => (OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Scatter" => (OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Scatterv" => (OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Gather" => (OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Gatherv" => (OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Reduce" => (OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Allgather" => (OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Allgatherv" => (OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Allreduce" => (OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoall" => (OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoallv" => (OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoallw" => (OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Reduce_scatter" => (
                OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
                OTF2_REGION_ROLE_COLL_ALL2ALL,
            ),
            "Reduce_scatter_block" => (
                OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
                OTF2_REGION_ROLE_COLL_ALL2ALL,
            ),
            "Scan" => (OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Exscan" => (OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_ALL2ALL),
            _ => return None,
        })
    }
}

/// Point-to-point MPI routines (sends, receives, their completions and probes).
pub(super) fn is_point_to_point(routine: &str) -> bool {
    const P2P: &[&str] = &[
        "Send", "Recv", "Isend", "Irecv", "Bsend", "Ssend", "Rsend", "Ibsend", "Issend", "Irsend",
        "Sendrecv", "Wait", "Test", "Probe", "Iprobe", "Start", "Mprobe", "Mrecv", "Imrecv",
        "Improbe",
    ];
    routine
        .strip_prefix("MPI_")
        .is_some_and(|b| P2P.iter().any(|p| b.starts_with(p)))
}

/// (role, paradigm) of a region.
pub(super) fn region_class(name: &str, kind: RegionKind) -> (u8, OTF2_Paradigm) {
    match kind {
        RegionKind::Mpi => {
            let role = match collective_of(name) {
                Some((_, role)) => role,
                None if is_point_to_point(name) => OTF2_REGION_ROLE_POINT2POINT,
                None => OTF2_REGION_ROLE_FUNCTION,
            };
            (role, OTF2_PARADIGM_MPI)
        }
        RegionKind::User | RegionKind::Phase => (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER),
        RegionKind::Runtime => (
            OTF2_REGION_ROLE_FUNCTION,
            OTF2_PARADIGM_MEASUREMENT_SYSTEM,
        ),
        _ => (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER),
    }
}

/// Communicator references: the experiment's communicators keep their index; the others (one
/// for events without a communicator definition, a thread contingent per process) follow in
/// the order of their first use, so that the references are dense as readers require.
pub(super) struct CommRefs {
    /// Per communicator: world rank → rank in it.
    pub local: Vec<HashMap<u32, u32>>,
    /// The references after the experiment's communicators, in order.
    pub extra: Vec<ExtraComm>,
    pub unknown: Option<u32>,
    pub threads: Vec<Option<u32>>,
    /// OpenMP teams: (process, parallel region, level) → reference.
    pub omp: HashMap<(usize, u32, u32), u32>,
}

/// A communicator the experiment does not define.
#[derive(Clone)]
pub(super) enum ExtraComm {
    /// "unknown communicator (world ranks)".
    Unknown,
    /// The threads of a process (ThreadWait and ThreadEnd name it).
    Threads(usize),
    /// The OpenMP teams of a parallel region at a nesting level in a process: (process,
    /// region, level, the locations that joined one).
    OmpTeam(usize, u32, u32, Vec<u64>),
}

impl CommRefs {
    /// The experiment's communicators, none of the others yet.
    pub fn new(model: &plx_analysis::Model) -> CommRefs {
        CommRefs {
            local: model
                .comms
                .all()
                .iter()
                .map(|c| {
                    // an intercommunicator is written as the communicator of both its groups
                    // (docs/exports/otf2.md): its peers are ranks of that group
                    c.members()
                        .into_iter()
                        .enumerate()
                        .map(|(i, r)| (r, i as u32))
                        .collect()
                })
                .collect(),
            extra: Vec::new(),
            unknown: None,
            threads: vec![None; model.processes.len()],
            omp: HashMap::new(),
        }
    }

    fn next(&mut self, c: ExtraComm) -> u32 {
        self.extra.push(c);
        (self.local.len() + self.extra.len() - 1) as u32
    }

    /// The team communicator of `region` at `level` in `process`, `location` one of its members.
    pub fn omp_team(&mut self, process: usize, region: u32, level: u32, location: u64) -> u32 {
        let r = match self.omp.get(&(process, region, level)) {
            Some(&r) => r,
            None => {
                let r = self.next(ExtraComm::OmpTeam(process, region, level, Vec::new()));
                self.omp.insert((process, region, level), r);
                r
            }
        };
        if let ExtraComm::OmpTeam(.., members) = &mut self.extra[r as usize - self.local.len()] {
            if let Err(i) = members.binary_search(&location) {
                members.insert(i, location);
            }
        }
        r
    }

    pub fn thread_contingent(&mut self, process: usize) -> u32 {
        match self.threads[process] {
            Some(r) => r,
            None => {
                let r = self.next(ExtraComm::Threads(process));
                self.threads[process] = Some(r);
                r
            }
        }
    }

    /// (communicator ref, the rank of world rank `r` in it).
    pub fn comm(&mut self, comm: Option<u32>, r: u32) -> (u32, u32) {
        match comm {
            Some(c) if (c as usize) < self.local.len() => {
                (c, self.local[c as usize].get(&r).copied().unwrap_or(r))
            }
            _ => {
                let u = match self.unknown {
                    Some(u) => u,
                    None => {
                        let u = self.next(ExtraComm::Unknown);
                        self.unknown = Some(u);
                        u
                    }
                };
                (u, r)
            }
        }
    }
}

/// Counter metrics: a member per event name, a class per list of events a counted call carries
/// (docs/exports/otf2.md). They come first in their reference spaces (members, and metrics),
/// before the user events' and the external metrics'.
#[derive(Default)]
pub(super) struct CounterMetrics {
    /// Member names, by member reference.
    pub members: Vec<String>,
    /// Per class (metric reference): its members.
    pub classes: Vec<Vec<u32>>,
    /// (process, set) → (class, the set's event indices the class's members are).
    pub of: HashMap<(usize, u32), (u32, Vec<usize>)>,
}

impl CounterMetrics {
    pub fn new(model: &plx_analysis::Model) -> CounterMetrics {
        let mut m = CounterMetrics::default();
        for (p, pm) in model.processes.iter().enumerate() {
            for s in pm.counters.sets.values().filter(|s| s.context.is_some()) {
                let events = crate::counted::traced_events(model, p, s.set);
                if events.is_empty() {
                    continue;
                }
                let members: Vec<u32> = events
                    .iter()
                    .map(|&(_, name)| match m.members.iter().position(|x| x == name) {
                        Some(i) => i as u32,
                        None => {
                            m.members.push(name.to_string());
                            m.members.len() as u32 - 1
                        }
                    })
                    .collect();
                let class = match m.classes.iter().position(|c| *c == members) {
                    Some(c) => c as u32,
                    None => {
                        m.classes.push(members);
                        m.classes.len() as u32 - 1
                    }
                };
                let idx = events.iter().map(|&(i, _)| i).collect();
                m.of.insert((p, s.set), (class, idx));
            }
        }
        m
    }
}

