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
    /// Code the run meant to measure that was not (a Java class the agent could not rewrite).
    Unmeasured,
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
            WarningKind::Unmeasured => "unmeasured",
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

/// More warnings of one kind than this, from more than one file, are one line in
/// [`summary_lines`].
pub const SHOWN: usize = 3;

/// Warnings as a terminal shows them (`plx report`, `plx info`): each on its line, except a
/// kind that more than [`SHOWN`] warnings from several files share (the same cut call in each
/// of 100 forked children): one line, at its first warning's place, with the count, the files
/// and the first [`SHOWN`] in full. `plx info --format json` lists each.
pub fn summary_lines<'a>(warnings: impl IntoIterator<Item = &'a Warning>) -> Vec<String> {
    let all: Vec<&Warning> = warnings.into_iter().collect();
    let mut kinds: Vec<(&str, Vec<&Warning>)> = Vec::new();
    for w in &all {
        let k = w.kind.as_str();
        match kinds.iter_mut().find(|(n, _)| *n == k) {
            Some((_, v)) => v.push(w),
            None => kinds.push((k, vec![w])),
        }
    }
    let grouped = |k: &str| {
        kinds
            .iter()
            .find(|(n, _)| *n == k)
            .is_some_and(|(_, v)| v.len() > SHOWN && v.iter().any(|w| w.path != v[0].path))
    };
    let mut out = Vec::new();
    let mut said: Vec<&str> = Vec::new();
    for w in &all {
        let k = w.kind.as_str();
        if !grouped(k) {
            out.push(w.to_string());
            continue;
        }
        if said.contains(&k) {
            continue;
        }
        said.push(k);
        let v = &kinds.iter().find(|(n, _)| *n == k).expect("kind").1;
        let mut files: Vec<&std::path::Path> = v.iter().map(|w| w.path.as_path()).collect();
        files.sort();
        files.dedup();
        let first: Vec<String> = v.iter().take(SHOWN).map(|w| w.to_string()).collect();
        out.push(format!(
            "{} {k} warnings in {} files, the first {SHOWN}: {} (`plx info --format json` lists each)",
            v.len(),
            files.len(),
            first.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod summary_tests {
    use super::{summary_lines, Warning, WarningKind};

    fn cut(process: u32) -> Warning {
        Warning::file(
            format!("e/h.{process}/process.plx"),
            WarningKind::OpenAtEnd { calls: 1 },
            "thread 0: 1 calls still open when the process ended, closed at its end (truncated)"
                .to_string(),
        )
    }

    #[test]
    fn a_hundred_forked_childrens_cut_calls_are_one_line() {
        let mut ws: Vec<Warning> = (1..=100).map(cut).collect();
        ws.insert(
            1,
            Warning::file("e/h.1/trace.plx", WarningKind::Clock, "a clock".to_string()),
        );
        let lines = summary_lines(&ws);
        assert_eq!(
            lines,
            vec![
                "100 open-at-end warnings in 100 files, the first 3: \
                 e/h.1/process.plx: thread 0: 1 calls still open when the process ended, closed at its end (truncated); \
                 e/h.2/process.plx: thread 0: 1 calls still open when the process ended, closed at its end (truncated); \
                 e/h.3/process.plx: thread 0: 1 calls still open when the process ended, closed at its end (truncated) \
                 (`plx info --format json` lists each)"
                    .to_string(),
                "e/h.1/trace.plx: a clock".to_string(),
            ]
        );
        // three, or many of one file (one process's threads), stay as they are
        assert_eq!(summary_lines(&ws[..4]).len(), 4);
        let one: Vec<Warning> = (0..5).map(|_| cut(7)).collect();
        assert_eq!(summary_lines(&one).len(), 5);
    }
}
