//! The MPI records of `process.plx` (types 14–17: MpiInit, ClockOffset, CommDef, MessageStats) and their codecs.

pub use crate::schema::structs::{ClockOffset, CommDef, MessageStats, MpiInit};

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

impl MessageStats {
    /// Is it a collective's (no peer)?
    pub fn is_collective(&self) -> bool {
        self.peer == crate::NONE_U32
    }
}
