//! The crate's one error type.

use std::fmt;

/// Why an analysis could not be made.
#[derive(Debug)]
pub enum AnalysisError {
    /// The experiment could not be read.
    Format(plx_format::FormatError),
    /// `--phase NAME` names no phase region.
    NoSuchPhase(String),
    /// An analysis needs a trace and no MPI rank of the experiment has one.
    NoTrace(std::path::PathBuf),
    /// An analysis needs an event trace and no process of the experiment has one.
    NoEventTrace(std::path::PathBuf),
    /// The run was traced, but every trace event was lost (a full disk, a file-size limit):
    /// the directory and the events lost.
    TraceLost(std::path::PathBuf, u64),
    /// `--app NAME` names no application of the session (name, what there is).
    NoSuchApp(String, String),
    /// The parallel analysis failed (its exchange between the analysis ranks).
    Parallel(String),
    /// `--window`/`--phase START:END` lies after the trace (the whole message).
    EmptyWindow(String),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Format(e) => e.fmt(f),
            AnalysisError::NoSuchPhase(p) => write!(f, "no phase region named \"{p}\""),
            AnalysisError::NoSuchApp(a, there) => {
                write!(f, "no application named \"{a}\": {there}")
            }
            AnalysisError::Parallel(m) => write!(f, "parallel analysis: {m}"),
            AnalysisError::EmptyWindow(m) => f.write_str(m),
            AnalysisError::NoTrace(d) => write!(
                f,
                "{}: no trace: this needs the MPI ranks' traces; rerun with `plx run --trace`",
                d.display()
            ),
            AnalysisError::NoEventTrace(d) => write!(
                f,
                "{}: no trace: this needs an event trace; rerun with `plx run --trace`",
                d.display()
            ),
            AnalysisError::TraceLost(d, n) => write!(
                f,
                "{}: no trace events: the run was traced, but its {n} events were lost (`plx info` says why)",
                d.display()
            ),
        }
    }
}

impl std::error::Error for AnalysisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalysisError::Format(e) => Some(e),
            AnalysisError::NoSuchPhase(_)
            | AnalysisError::NoSuchApp(..)
            | AnalysisError::Parallel(_)
            | AnalysisError::EmptyWindow(_)
            | AnalysisError::NoTrace(_)
            | AnalysisError::NoEventTrace(_)
            | AnalysisError::TraceLost(..) => None,
        }
    }
}

impl From<plx_format::FormatError> for AnalysisError {
    fn from(e: plx_format::FormatError) -> Self {
        AnalysisError::Format(e)
    }
}
