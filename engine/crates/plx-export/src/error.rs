//! The crate's one error type.

use std::fmt;
use std::path::PathBuf;

use plx_analysis::AnalysisError;

/// Why an export could not be made.
#[derive(Debug)]
pub enum ExportError {
    /// The experiment could not be read or lacks what the format needs (a trace).
    Analysis(AnalysisError),
    /// No format of that name.
    UnknownFormat(String),
    /// The arguments do not fit the format (e.g. a directory format to standard output).
    Usage(String),
    /// Writing the output failed.
    Io(PathBuf, std::io::Error),
}

impl ExportError {
    /// The exit status `plx export` ends with: 2 for what the user asked wrong, 1 for I/O.
    pub fn exit_code(&self) -> i32 {
        match self {
            ExportError::Io(_, e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            ExportError::Io(..) => 1,
            _ => 2,
        }
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Analysis(e) => e.fmt(f),
            ExportError::UnknownFormat(name) => write!(
                f,
                "unknown export format \"{name}\" (formats: {})",
                crate::names().join(", ")
            ),
            ExportError::Usage(m) => f.write_str(m),
            ExportError::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportError::Analysis(e) => Some(e),
            ExportError::Io(_, e) => Some(e),
            ExportError::UnknownFormat(_) | ExportError::Usage(_) => None,
        }
    }
}

impl From<AnalysisError> for ExportError {
    fn from(e: AnalysisError) -> Self {
        ExportError::Analysis(e)
    }
}

impl From<plx_format::FormatError> for ExportError {
    fn from(e: plx_format::FormatError) -> Self {
        ExportError::Analysis(AnalysisError::Format(e))
    }
}
