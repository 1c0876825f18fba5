//! `plx generate DIR` (hidden): the man pages and the bash, zsh and fish completions, made from
//! the same clap declarations as `--help`; `make` writes them under build/share and
//! `make install` installs them from there.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

use crate::{CliError, Exit};

/// `plx generate`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Directory to write into (created): man/man1/plx.1 and plx-COMMAND.1 per command,
    /// bash-completion/completions/plx, zsh/site-functions/_plx, fish/vendor_completions.d/plx.fish.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Where each shell looks for a command's completions, under a prefix's share/.
pub const COMPLETIONS: [(Shell, &str); 3] = [
    (Shell::Bash, "bash-completion/completions/plx"),
    (Shell::Zsh, "zsh/site-functions/_plx"),
    (Shell::Fish, "fish/vendor_completions.d/plx.fish"),
];

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |e| CliError::new(Exit::Io, format!("{}: {e}", path.display()))
}

/// Runs `plx generate`.
pub fn generate(args: &GenerateArgs) -> Result<(), CliError> {
    let man = args.dir.join("man/man1");
    std::fs::create_dir_all(&man).map_err(io_error(&man))?;
    clap_mangen::generate_to(crate::cli::Cli::command(), &man).map_err(io_error(&man))?;
    for (shell, file) in COMPLETIONS {
        let path = args.dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        let mut text = Vec::new();
        clap_complete::generate(shell, &mut crate::cli::Cli::command(), "plx", &mut text);
        std::fs::write(&path, text).map_err(io_error(&path))?;
    }
    Ok(())
}
