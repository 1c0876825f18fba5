//! `plx display`.

use std::path::PathBuf;

use crate::CliError;

/// `plx display`.
#[derive(clap::Args, Debug)]
pub struct DisplayArgs {
    /// Experiment or session directory.
    pub dir: PathBuf,
}

/// Runs `plx display`.
pub fn display(args: &DisplayArgs) -> Result<(), CliError> {
    Err(CliError::new(
        2,
        format!("{}: plx display is not available yet", args.dir.display()),
    ))
}
