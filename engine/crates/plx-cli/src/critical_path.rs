//! `plx critical-path`.

use std::path::PathBuf;

use crate::CliError;

/// `plx critical-path`.
#[derive(clap::Args, Debug)]
pub struct CriticalPathArgs {
    /// Experiment or session directory.
    pub dir: PathBuf,
}

/// Runs `plx critical-path`.
pub fn critical_path(args: &CriticalPathArgs) -> Result<(), CliError> {
    Err(CliError::new(
        2,
        format!(
            "{}: plx critical-path is not available yet",
            args.dir.display()
        ),
    ))
}
