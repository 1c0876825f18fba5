//! Structured warnings about damaged or incomplete input: file, offset, kind and message.

use std::fmt;
use std::path::PathBuf;

/// What kind of problem a [`Warning`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarningKind {
    /// A record's header or payload runs past the end of the file.
    Truncated {
        /// Bytes missing to complete the record (at least; a cut header hides the payload size).
        missing: u64,
    },
    /// Bytes that cannot be records (bad magic, non-zero flags, impossible lengths).
    Garbage {
        /// Bytes ignored from the offset to the end of the file.
        ignored: u64,
    },
    /// A record whose framing is intact but whose payload does not decode.
    Malformed,
    /// An expected file is absent or unreadable.
    MissingFile,
    /// The process has no ProcessEnd record: it did not finish writing.
    Unfinished,
    /// A thread has no ThreadProfile record.
    NoThreadProfile,
    /// A thread's profile or message statistics were recovered from its live file (the process
    /// was killed before writing the records).
    Recovered,
    /// The runtime could not record some events.
    LostEvents {
        /// How many.
        count: u64,
    },
    /// Callpaths beyond the profile's capacity (their time is kept in the parent).
    LostNodes {
        /// How many.
        count: u64,
    },
    /// Clock conversion had to assume a rate.
    Clock,
    /// Trace events that do not make sense (exit without enter, ...).
    BadEvents {
        /// How many.
        count: u64,
    },
    /// MPI messages of the trace that found no partner (a send never received, or a receive
    /// whose send is not in the experiment).
    UnmatchedMessages {
        /// How many.
        count: u64,
    },
    /// The messages one rank says it sent to another differ from those the other says it received.
    MessageCountMismatch,
    /// The runtime could not write some records (disk full, ...): their data is lost.
    WriteFailed {
        /// Writes that failed.
        writes: u64,
    },
    /// Other MPI inconsistencies (a rank seen twice, an undefined communicator, ...).
    Mpi,
    /// Calls still open when the process ended, closed at its end: their time is cut there.
    OpenAtEnd {
        /// How many calls (of one thread).
        calls: u64,
    },
    /// A module's file has another build-id than the one that ran: its source locations are
    /// not resolved.
    StaleModule,
    /// The runtime's own work (flushes, symbol lookups) is a large share of a thread's time.
    RuntimeCost,
}

impl WarningKind {
    /// A short stable name, for JSON and tests.
    pub fn as_str(&self) -> &'static str {
        match self {
            WarningKind::Truncated { .. } => "truncated",
            WarningKind::Garbage { .. } => "garbage",
            WarningKind::Malformed => "malformed",
            WarningKind::MissingFile => "missing-file",
            WarningKind::Unfinished => "unfinished",
            WarningKind::NoThreadProfile => "no-thread-profile",
            WarningKind::Recovered => "recovered",
            WarningKind::LostEvents { .. } => "lost-events",
            WarningKind::LostNodes { .. } => "lost-nodes",
            WarningKind::Clock => "clock",
            WarningKind::BadEvents { .. } => "bad-events",
            WarningKind::UnmatchedMessages { .. } => "unmatched-messages",
            WarningKind::MessageCountMismatch => "message-count-mismatch",
            WarningKind::Mpi => "mpi",
            WarningKind::WriteFailed { .. } => "write-failed",
            WarningKind::StaleModule => "stale-module",
            WarningKind::OpenAtEnd { .. } => "open-at-end",
            WarningKind::RuntimeCost => "runtime-cost",
        }
    }
}

/// One problem found in an experiment; reading goes on after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// File (or directory) concerned.
    pub path: PathBuf,
    /// Byte offset in the file, where one applies.
    pub offset: Option<u64>,
    /// What happened.
    pub kind: WarningKind,
    /// Human-readable explanation.
    pub message: String,
}

impl Warning {
    /// A warning with an offset.
    pub fn at(path: impl Into<PathBuf>, offset: u64, kind: WarningKind, message: String) -> Self {
        Warning {
            path: path.into(),
            offset: Some(offset),
            kind,
            message,
        }
    }

    /// A warning about a whole file or location.
    pub fn file(path: impl Into<PathBuf>, kind: WarningKind, message: String) -> Self {
        Warning {
            path: path.into(),
            offset: None,
            kind,
            message,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: offset {}: {}", self.path.display(), o, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}
