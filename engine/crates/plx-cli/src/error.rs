//! `plx`'s exit statuses, named by meaning and numbered here only (docs/commands/README.md
//! lists them), and the error that ends a command with one of them.

/// Why a command ended without doing its work: each name an exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 1: an I/O or system call failed while doing the work: the output could not be written,
    /// a signal not sent.
    Io,
    /// 2: the arguments cannot work as given: an unknown metric, counter, function or glob, a
    /// malformed `--phase` or `--focus`, flags that exclude each other, `-o` naming a
    /// directory that holds another run.
    Usage,
    /// 2: the input cannot give what was asked: an experiment, session, filter or CSV file
    /// missing, damaged or without what the command needs (no trace, no counters, no such
    /// application or phase).
    Input,
    /// 2: something plx needs around it is missing or refused: its runtime library, its own
    /// executable, /proc, a measured process's control socket, a thread.
    Environment,
    /// 3: the measurement is incomplete: the program ran, but part of what the runtime or the
    /// monitor wrote was lost (disk full, a file size limit); `plx info` says what.
    Incomplete,
    /// 126: the program was found but could not be started.
    CannotExecute,
    /// 127: the program was not found.
    NotFound,
}

impl Exit {
    /// Every kind, in the order of docs/commands/README.md's table.
    pub const ALL: [Exit; 7] = [
        Exit::Io,
        Exit::Usage,
        Exit::Input,
        Exit::Environment,
        Exit::Incomplete,
        Exit::CannotExecute,
        Exit::NotFound,
    ];

    /// The exit status.
    pub const fn code(self) -> i32 {
        match self {
            Exit::Io => 1,
            Exit::Usage | Exit::Input | Exit::Environment => 2,
            Exit::Incomplete => 3,
            Exit::CannotExecute => 126,
            Exit::NotFound => 127,
        }
    }
}

/// An error that ends plx with a message and an exit status.
#[derive(Debug)]
pub struct CliError {
    /// Exit status (0: end quietly, as on a closed output pipe).
    pub code: i32,
    /// Message after `plx: `.
    pub message: String,
}

impl CliError {
    /// An error of kind `exit` saying `message`.
    pub fn new(exit: Exit, message: String) -> Self {
        CliError {
            code: exit.code(),
            message,
        }
    }

    /// An error with the exit status another part of Parallax chose (`plx export`'s).
    pub fn with_status(code: i32, message: String) -> Self {
        CliError { code, message }
    }
}

impl From<plx_analysis::AnalysisError> for CliError {
    fn from(e: plx_analysis::AnalysisError) -> Self {
        CliError::new(Exit::Input, e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        // A closed pipe (`plx report | head`) ends output quietly.
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::with_status(0, e.to_string())
        } else {
            CliError::new(Exit::Io, e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/commands/README.md's table of exit statuses is this enum's: a row `| N | `Name` |`
    /// per kind, in order, with its number.
    #[test]
    fn exit_statuses_in_docs_are_the_enums() {
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../docs/commands/README.md");
        let text = std::fs::read_to_string(page).unwrap();
        let rows: Vec<(i32, String)> = text
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let code = cells.get(1)?.parse().ok()?;
                let name = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((code, name.to_string()))
            })
            .collect();
        let want: Vec<(i32, String)> = Exit::ALL
            .iter()
            .map(|e| (e.code(), format!("{e:?}")))
            .collect();
        assert_eq!(rows, want);
    }
}
