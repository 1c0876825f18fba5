//! `plx session`.

use std::path::PathBuf;

use crate::CliError;

/// `plx session`.
#[derive(clap::Args, Debug)]
pub struct SessionArgs {
    /// Experiment or session directory.
    pub dir: PathBuf,
}

/// Runs `plx session`.
pub fn session(args: &SessionArgs) -> Result<(), CliError> {
    Err(CliError::new(
        2,
        format!("{}: plx session is not available yet", args.dir.display()),
    ))
}
