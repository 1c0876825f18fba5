//! The crate's one error type: failures that stop reading altogether.

use std::fmt;
use std::path::PathBuf;

/// Why an experiment or file could not be read at all (damage inside files gives warnings instead).
#[derive(Debug)]
pub enum FormatError {
    /// The directory holds no `<host>.<pid>/process.plx`.
    NotAnExperiment(PathBuf),
    /// An I/O error on a path.
    Io(PathBuf, std::io::Error),
    /// A session file that cannot be read as one (the path and what is wrong).
    BadSession(PathBuf, String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::NotAnExperiment(p) => write!(
                f,
                "{}: not a Parallax experiment (no <host>.<pid>/process.plx found)",
                p.display()
            ),
            FormatError::Io(p, e) => write!(f, "{}: {}", p.display(), e),
            FormatError::BadSession(p, m) => write!(f, "{}: {}", p.display(), m),
        }
    }
}

impl std::error::Error for FormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Io(_, e) => Some(e),
            FormatError::NotAnExperiment(_) | FormatError::BadSession(..) => None,
        }
    }
}
