//! `plx histogram`.

use std::path::PathBuf;

use crate::CliError;

/// `plx histogram`.
#[derive(clap::Args, Debug)]
pub struct HistogramArgs {
    /// Experiment or session directory.
    pub dir: PathBuf,
}

/// Runs `plx histogram`.
pub fn histogram(args: &HistogramArgs) -> Result<(), CliError> {
    Err(CliError::new(
        2,
        format!("{}: plx histogram is not available yet", args.dir.display()),
    ))
}
