//! The crate's one error type.

use std::fmt;

/// Why the viewer could not open an experiment or serve it.
#[derive(Debug)]
pub enum ViewError {
    /// Reading or analysing the experiment failed.
    Analysis(plx_analysis::AnalysisError),
    /// The listening socket could not be opened (address, reason).
    Bind(String, String),
    /// No random token could be drawn.
    Random(String),
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewError::Analysis(e) => e.fmt(f),
            ViewError::Bind(addr, why) => write!(f, "cannot listen on {addr}: {why}"),
            ViewError::Random(why) => write!(f, "cannot draw a random token: {why}"),
        }
    }
}

impl std::error::Error for ViewError {}

impl From<plx_analysis::AnalysisError> for ViewError {
    fn from(e: plx_analysis::AnalysisError) -> Self {
        ViewError::Analysis(e)
    }
}
