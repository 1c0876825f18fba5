//! The MPI records of `process.plx` (types 14–17: MpiInit, ClockOffset, CommDef, MessageStats) and their codecs.

/// The thread support level MPI provided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadLevel {
    /// `MPI_THREAD_SINGLE`.
    Single,
    /// `MPI_THREAD_FUNNELED`.
    Funneled,
    /// `MPI_THREAD_SERIALIZED`.
    Serialized,
    /// `MPI_THREAD_MULTIPLE`.
    Multiple,
    /// A value this reader does not know.
    Other(u32),
}

impl ThreadLevel {
    /// From the on-disk value.
    pub fn from_u32(v: u32) -> Self {
        match v {
            0 => ThreadLevel::Single,
            1 => ThreadLevel::Funneled,
            2 => ThreadLevel::Serialized,
            3 => ThreadLevel::Multiple,
            o => ThreadLevel::Other(o),
        }
    }
    /// To the on-disk value.
    pub fn to_u32(self) -> u32 {
        match self {
            ThreadLevel::Single => 0,
            ThreadLevel::Funneled => 1,
            ThreadLevel::Serialized => 2,
            ThreadLevel::Multiple => 3,
            ThreadLevel::Other(o) => o,
        }
    }
    /// A short lowercase name (`single`, `funneled`, `serialized`, `multiple`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadLevel::Single => "single",
            ThreadLevel::Funneled => "funneled",
            ThreadLevel::Serialized => "serialized",
            ThreadLevel::Multiple => "multiple",
            ThreadLevel::Other(_) => "other",
        }
    }
}

/// Record 14: MPI_Init (or MPI_Init_thread) returned; the process is a rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiInit {
    /// Rank in MPI_COMM_WORLD: the process's node.
    pub rank: u32,
    /// Size of MPI_COMM_WORLD.
    pub size: u32,
    /// Thread level provided.
    pub thread_level: ThreadLevel,
    /// When Init returned, in ticks.
    pub ticks: u64,
    /// The MPI library's version string (first line).
    pub library: String,
}

/// When a [`ClockOffset`] was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OffsetWhen {
    /// At MPI_Init.
    Init,
    /// At MPI_Finalize.
    Finalize,
    /// A value this reader does not know.
    Other(u8),
}

impl OffsetWhen {
    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => OffsetWhen::Init,
            1 => OffsetWhen::Finalize,
            o => OffsetWhen::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            OffsetWhen::Init => 0,
            OffsetWhen::Finalize => 1,
            OffsetWhen::Other(o) => o,
        }
    }
    /// `init`, `finalize` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            OffsetWhen::Init => "init",
            OffsetWhen::Finalize => "finalize",
            OffsetWhen::Other(_) => "other",
        }
    }
}

/// Record 15: this process's clock against rank 0's, measured by ping-pongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOffset {
    /// At Init or at Finalize.
    pub when: OffsetWhen,
    /// This process's `CLOCK_MONOTONIC` at the middle of the best exchange, ns.
    pub local_ns: u64,
    /// Rank 0's `CLOCK_MONOTONIC` minus this process's at that moment, ns (0 on rank 0).
    pub offset_ns: i64,
    /// Round trip of the best ping-pong, ns.
    pub rtt_ns: u64,
}

/// Record 16: a communicator, named across processes by `(ranks, ordinal)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommDef {
    /// Process-local id: 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, then in order of creation.
    pub comm: u32,
    /// Communicators with the same members this process created before it.
    pub ordinal: u32,
    /// World rank of each member in the communicator's rank order (its size is the length);
    /// empty (format version 3): the world's ranks in order, as many as the MpiInit's size
    /// (the model lists them: `plx_analysis::CommTable::intern_world`).
    pub ranks: Vec<u32>,
}

/// Direction of a [`MessageStats`] record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Sent by this thread.
    Sent,
    /// Received by this thread.
    Received,
    /// A value this reader does not know.
    Other(u8),
}

impl Direction {
    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Direction::Sent,
            1 => Direction::Received,
            o => Direction::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            Direction::Sent => 0,
            Direction::Received => 1,
            Direction::Other(o) => o,
        }
    }
    /// `sent`, `received` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
            Direction::Other(_) => "other",
        }
    }
}

/// Record 17: messages of one MPI routine, peer, direction and communicator in one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageStats {
    /// Thread index.
    pub thread: u32,
    /// The MPI routine (a RegionDef of kind 4).
    pub region: u32,
    /// The other side as a world rank, [`crate::NONE_U32`] for collectives.
    pub peer: u32,
    /// Sent or received by this thread.
    pub direction: Direction,
    /// CommDef id.
    pub comm: u32,
    /// Messages (collective calls for collectives).
    pub count: u64,
    /// Total bytes.
    pub bytes: u64,
    /// Smallest message.
    pub min_bytes: u64,
    /// Largest message.
    pub max_bytes: u64,
}

impl MessageStats {
    /// Is it a collective's (no peer)?
    pub fn is_collective(&self) -> bool {
        self.peer == crate::NONE_U32
    }
}
