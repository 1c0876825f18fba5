//! The records of `process.plx` (spec/format.md): one struct per record type, filled and encoded
//! by the code generated from `spec/records.toml` ([`crate::schema`]).

use crate::bytes::ShortPayload;

#[allow(unused_imports)] // empty until a record is marked rust = "struct"
pub use crate::schema::structs::*;
pub use crate::schema::{types, Record};

/// "No such index" in u32 fields (root node parent, main thread parent, no module).
pub const NONE_U32: u32 = 0xFFFF_FFFF;

/// Which clock the ticks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    /// The processor's time-stamp counter.
    Tsc,
    /// `CLOCK_MONOTONIC` nanoseconds.
    Monotonic,
    /// `CLOCK_MONOTONIC_COARSE` nanoseconds (`PLX_CLOCK=coarse`).
    MonotonicCoarse,
    /// A value this reader does not know.
    Other(u8),
}

impl ClockKind {
    /// Whether the ticks are nanoseconds (`CLOCK_MONOTONIC` or `CLOCK_MONOTONIC_COARSE`).
    pub fn is_nanoseconds(self) -> bool {
        matches!(self, ClockKind::Monotonic | ClockKind::MonotonicCoarse)
    }

    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => ClockKind::Tsc,
            1 => ClockKind::Monotonic,
            2 => ClockKind::MonotonicCoarse,
            o => ClockKind::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            ClockKind::Tsc => 0,
            ClockKind::Monotonic => 1,
            ClockKind::MonotonicCoarse => 2,
            ClockKind::Other(o) => o,
        }
    }
}

/// What a region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegionKind {
    /// A compiled function.
    Function,
    /// A user-defined region.
    User,
    /// A phase.
    Phase,
    /// The runtime's own work.
    Runtime,
    /// An MPI routine (libplx-mpi).
    Mpi,
    /// A stream socket call on a traced connection (send, recv, read, write, ...).
    Socket,
    /// An OpenMP construct (parallel, loop, sections, single, task, ...): named by the
    /// construct, `address` a code address on its source line.
    Omp,
    /// A value this reader does not know.
    Other(u8),
}

impl RegionKind {
    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => RegionKind::Function,
            1 => RegionKind::User,
            2 => RegionKind::Phase,
            3 => RegionKind::Runtime,
            4 => RegionKind::Mpi,
            5 => RegionKind::Socket,
            7 => RegionKind::Omp,
            o => RegionKind::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            RegionKind::Function => 0,
            RegionKind::User => 1,
            RegionKind::Phase => 2,
            RegionKind::Runtime => 3,
            RegionKind::Mpi => 4,
            RegionKind::Socket => 5,
            RegionKind::Omp => 7,
            RegionKind::Other(o) => o,
        }
    }
    /// A short lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            RegionKind::Function => "function",
            RegionKind::User => "user",
            RegionKind::Phase => "phase",
            RegionKind::Runtime => "runtime",
            RegionKind::Mpi => "mpi",
            RegionKind::Socket => "socket",
            RegionKind::Omp => "omp",
            RegionKind::Other(_) => "other",
        }
    }
}

impl RegionDef {
    /// Excluded by the filter (never measured).
    pub fn excluded(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// Why a process image ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// exit() or return from main.
    Exit,
    /// A fatal signal.
    Signal,
    /// exec() replaced the image.
    Exec,
    /// MPI_Abort (status: its error code).
    MpiAbort,
    /// `plx detach` ended the measurement; the process went on running.
    Detached,
    /// A value this reader does not know.
    Other(u8),
}

impl EndReason {
    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => EndReason::Exit,
            1 => EndReason::Signal,
            2 => EndReason::Exec,
            3 => EndReason::MpiAbort,
            4 => EndReason::Detached,
            o => EndReason::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            EndReason::Exit => 0,
            EndReason::Signal => 1,
            EndReason::Exec => 2,
            EndReason::MpiAbort => 3,
            EndReason::Detached => 4,
            EndReason::Other(o) => o,
        }
    }
}

/// Why a record's payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeProblem {
    /// A field ran past the payload.
    Short(ShortPayload),
    /// A count field is larger than the payload could hold.
    BadCount(u64),
    /// An enumerated field holds a value this reader does not know (`rust_checked` in the
    /// schema).
    BadValue(u64),
}

impl From<ShortPayload> for DecodeProblem {
    fn from(s: ShortPayload) -> Self {
        DecodeProblem::Short(s)
    }
}

impl std::fmt::Display for DecodeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeProblem::Short(s) => write!(
                f,
                "field at payload offset {} needs {} bytes past the payload",
                s.at, s.needed
            ),
            DecodeProblem::BadCount(n) => write!(f, "count {n} does not fit in the payload"),
            DecodeProblem::BadValue(v) => write!(f, "unknown value {v} of an enumerated field"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::Put;
    use crate::cpu::CpuSamples;
    use crate::mpi::{self, ClockOffset, CommDef, MessageStats, MpiInit};
    use crate::sync::{NodeCpu, SyncObject, SyncStats};

    fn round_trip(r: Record) {
        let mut p = Vec::new();
        r.encode_payload(&mut p);
        let back = Record::decode(r.record_type(), &p).unwrap().unwrap();
        assert_eq!(back, r);
        if !p.is_empty() {
            assert!(Record::decode(r.record_type(), &p[..p.len() - 1]).is_err());
        }
    }

    #[test]
    fn every_record_round_trips() {
        round_trip(Record::ProcessInfo(ProcessInfo {
            pid: 42,
            ppid: 1,
            start_realtime_ns: 1_700_000_000_000_000_000,
            clock: ClockKind::Tsc,
            host: "node1".into(),
            version: "0.1.0".into(),
            executable: "/bin/app".into(),
            argv: vec!["app".into(), "-n".into(), "3".into()],
        }));
        round_trip(Record::Calibration(Calibration {
            ticks: 5,
            monotonic_ns: 7,
        }));
        round_trip(Record::ClockRate(2.5e9));
        round_trip(Record::Module(Module {
            module_id: 0,
            base: 0x5555_0000,
            path: "/bin/app".into(),
            build_id: "8f2a".into(),
        }));
        round_trip(Record::RegionDef(RegionDef {
            region_id: 3,
            kind: RegionKind::Phase,
            flags: 1,
            module_id: NONE_U32,
            address: 0,
            name: "solve".into(),
            file: "a.c".into(),
            line: 12,
        }));
        round_trip(Record::ThreadInfo(ThreadInfo {
            thread: 1,
            tid: 43,
            parent: 0,
            start_ticks: 100,
            cpu_ns: 5,
            name: "worker".into(),
        }));
        round_trip(Record::ThreadName(ThreadName {
            thread: 1,
            name: "io".into(),
        }));
        round_trip(Record::ThreadProfile(ThreadProfile {
            thread: 0,
            end_ticks: 1000,
            cpu_ns: 900,
            trace_events: 4,
            lost_events: 0,
            lost_nodes: 0,
            nodes: vec![ProfileNode {
                parent: NONE_U32,
                region: 1,
                calls: 1,
                child_calls: 0,
                inclusive_ticks: 10,
                exclusive_ticks: 10,
            }],
        }));
        round_trip(Record::UserEventDef(UserEventDef {
            event_id: 0,
            name: "bytes".into(),
        }));
        round_trip(Record::UserEventStats(UserEventStats {
            thread: 0,
            event_id: 0,
            count: 2,
            min: 1.0,
            max: 3.0,
            sum: 4.0,
            sum_squares: 10.0,
        }));
        round_trip(Record::Throttled(Throttled {
            region_id: 2,
            calls: 100_000,
            inclusive_ticks: 5,
        }));
        round_trip(Record::ProcessEnd(ProcessEnd {
            ticks: 9,
            reason: EndReason::Signal,
            status: 11,
            realtime_ns: 1_700_000_000_000_000_000,
        }));
        round_trip(Record::Filter("exclude=foo".into()));
        round_trip(Record::RegionDef(RegionDef {
            region_id: 7,
            kind: RegionKind::Mpi,
            flags: 0,
            module_id: NONE_U32,
            address: 0,
            name: "MPI_Send".into(),
            file: String::new(),
            line: 0,
        }));
        round_trip(Record::MpiInit(MpiInit {
            rank: 3,
            size: 8,
            thread_level: mpi::ThreadLevel::Multiple,
            ticks: 12_345,
            library: "Open MPI v4.1.4".into(),
        }));
        round_trip(Record::ClockOffset(ClockOffset {
            when: mpi::OffsetWhen::Finalize,
            local_ns: 1_000_000,
            offset_ns: -42_000,
            rtt_ns: 3_100,
        }));
        round_trip(Record::CommDef(CommDef {
            comm: 2,
            ordinal: 1,
            ranks: vec![4, 0, 2],
        }));
        round_trip(Record::MessageStats(MessageStats {
            thread: 1,
            region: 7,
            peer: 2,
            direction: mpi::Direction::Received,
            comm: 0,
            count: 10,
            bytes: 80,
            min_bytes: 8,
            max_bytes: 8,
        }));
    }

    #[test]
    fn sync_records_round_trip() {
        use crate::sync::{NamedBy, SyncKind};
        round_trip(Record::SyncObject(SyncObject {
            object: 3,
            kind: SyncKind::Barrier,
            named_by: NamedBy::Use,
            address: 0x7fff_0000_1000,
            module_id: 0,
            site: 0x5555_1234,
            name: "java.util.ArrayList".into(),
        }));
        round_trip(Record::SyncStats(SyncStats {
            thread: 2,
            object: 3,
            acquisitions: 100,
            contended: 7,
            wait_ticks: 1234,
            hold_ticks: 999,
            releases: 100,
        }));
        round_trip(Record::NodeCpu(NodeCpu {
            thread: 1,
            entries: vec![(0, 5), (4, 1_000_000)],
        }));
        let mut p = Vec::new();
        p.put_u32(1);
        p.put_u32(u32::MAX);
        assert!(matches!(
            Record::decode(types::NODE_CPU, &p),
            Err(DecodeProblem::BadCount(_))
        ));
        round_trip(Record::CpuSamples(CpuSamples {
            ticks: 123_456_789,
            values: vec![(0, 5_000_000), (3, 7)],
        }));
        round_trip(Record::CpuSamples(CpuSamples {
            ticks: 1,
            values: vec![],
        }));
        let mut p = Vec::new();
        p.put_u64(1);
        p.put_u32(u32::MAX);
        assert!(matches!(
            Record::decode(types::CPU_SAMPLES, &p),
            Err(DecodeProblem::BadCount(_))
        ));
    }

    #[test]
    fn coarse_clock_is_nanoseconds() {
        assert_eq!(ClockKind::from_u8(2), ClockKind::MonotonicCoarse);
        assert_eq!(ClockKind::MonotonicCoarse.to_u8(), 2);
        assert!(ClockKind::from_u8(1).is_nanoseconds());
        assert!(ClockKind::from_u8(2).is_nanoseconds());
        assert!(!ClockKind::from_u8(0).is_nanoseconds());
        assert!(!ClockKind::from_u8(3).is_nanoseconds());
    }

    #[test]
    fn unknown_type_decodes_to_none() {
        assert_eq!(Record::decode(999, &[1, 2, 3]).unwrap(), None);
    }

    #[test]
    fn huge_comm_size_is_rejected_without_allocating() {
        let mut p = Vec::new();
        p.put_u32(2);
        p.put_u32(0);
        p.put_u32(u32::MAX);
        p.put_u32(0);
        assert!(matches!(
            Record::decode(types::COMM_DEF, &p),
            Err(DecodeProblem::BadCount(_))
        ));
    }

    #[test]
    fn huge_node_count_is_rejected_without_allocating() {
        let mut p = Vec::new();
        p.put_u32(0);
        for _ in 0..5 {
            p.put_u64(0);
        }
        p.put_u32(u32::MAX);
        assert!(matches!(
            Record::decode(types::THREAD_PROFILE, &p),
            Err(DecodeProblem::BadCount(_))
        ));
    }
}
