//! `plx compare`.

use std::path::PathBuf;

use crate::CliError;

/// `plx compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Experiment or session directory.
    pub dir: PathBuf,
}

/// Runs `plx compare`.
pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    Err(CliError::new(
        2,
        format!("{}: plx compare is not available yet", args.dir.display()),
    ))
}
