//! The OpenMP adapter's record of `process.plx` (type 48: OmpTeams).

use crate::bytes::{FieldReader, Put};
use crate::records::DecodeProblem;

/// Record 48: how many times a thread ran a parallel region as one member of one team.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OmpTeams {
    /// Thread index.
    pub thread: u32,
    /// The parallel region (a RegionDef of kind 7); [`crate::NONE_U32`] for the implicit tasks
    /// of teams past those the runtime counts one by one.
    pub region: u32,
    /// Nesting level of the team (1 = outermost).
    pub level: u32,
    /// Threads in the team.
    pub team_size: u32,
    /// The thread's OpenMP thread number in the team.
    pub thread_num: u32,
    /// Implicit tasks run with these values.
    pub count: u64,
}

pub(crate) fn decode_omp_teams(r: &mut FieldReader) -> Result<OmpTeams, DecodeProblem> {
    Ok(OmpTeams {
        thread: r.u32()?,
        region: r.u32()?,
        level: r.u32()?,
        team_size: r.u32()?,
        thread_num: r.u32()?,
        count: r.u64()?,
    })
}

pub(crate) fn encode_omp_teams(t: &OmpTeams, out: &mut Vec<u8>) {
    out.put_u32(t.thread);
    out.put_u32(t.region);
    out.put_u32(t.level);
    out.put_u32(t.team_size);
    out.put_u32(t.thread_num);
    out.put_u64(t.count);
}
