//! `plx session`: list a session's applications, or add an older experiment to one in
//! comparison mode; and the session file's upkeep for `plx run --session`.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use plx_analysis::{BuildOptions, Model};
use plx_format::{parse_session, Experiment, SESSION_FILE};

use crate::{CliError, Exit};

/// `plx session`: `plx session DIR` is `plx session list DIR`, as every command takes the
/// directory.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SessionArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Option<SessionAction>,
    /// Session directory: lists it (as `plx session list DIR`).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `plx session` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum SessionAction {
    /// The applications of a session: name, mode, directory, processes, ranks, time shift.
    List {
        /// Session directory.
        dir: PathBuf,
    },
    /// Add an experiment measured earlier to a session, in comparison mode (its time base is
    /// shifted to start with the session's live applications) unless --live.
    Add {
        /// Session directory (created if missing).
        dir: PathBuf,
        /// The experiment to add.
        experiment: PathBuf,
        /// Its name in the session.
        #[arg(long, value_name = "NAME")]
        app: String,
        /// Keep its own time base (it ran at the same time as the others).
        #[arg(long)]
        live: bool,
    },
}

/// Runs `plx session`.
pub fn session(args: &SessionArgs) -> Result<(), CliError> {
    let action = match (&args.action, &args.dir) {
        (Some(a), _) => a,
        (None, Some(dir)) => return list(dir),
        (None, None) => {
            return Err(CliError::new(Exit::Usage, "plx session: give a session directory (plx session DIR, or plx session list DIR / add DIR EXPERIMENT --app NAME)".to_string(),
            ))
        }
    };
    match action {
        SessionAction::List { dir } => list(dir),
        SessionAction::Add {
            dir,
            experiment,
            app,
            live,
        } => {
            Experiment::open(experiment).map_err(|e| CliError::new(Exit::Input, e.to_string()))?;
            if Experiment::is_session(experiment) {
                return Err(CliError::new(
                    Exit::Input,
                    format!(
                        "{}: is a session; add its applications' directories one by one",
                        experiment.display()
                    ),
                ));
            }
            let target = std::fs::canonicalize(experiment).map_err(|e| {
                CliError::new(Exit::Input, format!("{}: {e}", experiment.display()))
            })?;
            let mode = if *live { "live" } else { "compare" };
            let what = if register(dir, app, &target.to_string_lossy(), mode)? {
                "added"
            } else {
                "is in the session already"
            };
            println!(
                "{}: {app} {what} ({mode}): {}",
                dir.display(),
                target.display()
            );
            Ok(())
        }
    }
}

fn check_name(app: &str) -> Result<(), CliError> {
    if plx_format::valid_app_name(app) {
        Ok(())
    } else {
        Err(CliError::new(
            Exit::Usage,
            format!("application name '{app}': use letters, digits, '-', '_', '.' or '+'"),
        ))
    }
}

/// `plx run --session DIR --app NAME`: the application's experiment directory `DIR/NAME`,
/// listed (live) in the session file if it is not yet. Several runs of one application (its
/// processes started apart, or every rank of an `mpirun`) share it.
pub fn join(session: &Path, app: &str) -> Result<PathBuf, CliError> {
    check_name(app)?;
    register(session, app, app, "live")?;
    Ok(session.join(app))
}

/// Takes the live application whose directory `app_dir` was out of the session file once that
/// directory is gone (a run of it whose program did not start removed it: the session would
/// name a directory that does not exist). The session file, left with no application, and
/// the session directory, left empty, go too.
pub fn leave(session: &Path, app_dir: &Path) {
    if app_dir.exists() {
        return;
    }
    let Some(app) = app_dir.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let path = session.join(SESSION_FILE);
    let Ok(mut f) = OpenOptions::new().read(true).write(true).open(&path) else {
        return;
    };
    // SAFETY: flock on a descriptor we own; released when `f` is closed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return;
    }
    let mut text = String::new();
    if f.read_to_string(&mut text).is_err() {
        return;
    }
    let line = format!("app {app} {app} live");
    let kept: Vec<&str> = text.lines().filter(|l| l.trim() != line).collect();
    if kept.len() == text.lines().count() {
        return;
    }
    if !kept.iter().any(|l| l.starts_with("app ")) {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(session);
        return;
    }
    let mut new = kept.join("\n");
    new.push('\n');
    let _ = f
        .set_len(0)
        .and_then(|_| f.seek(SeekFrom::Start(0)).map(|_| ()));
    let _ = f.write_all(new.as_bytes());
}

/// Adds `app NAME DIR MODE` to the session file under an exclusive lock, unless the
/// application is there already (then its directory must be the same). Whether it was added.
fn register(session: &Path, app: &str, dir: &str, mode: &str) -> Result<bool, CliError> {
    check_name(app)?;
    std::fs::create_dir_all(session).map_err(|e| {
        CliError::new(
            Exit::Input,
            format!("{}: cannot create: {e}", session.display()),
        )
    })?;
    let path = session.join(SESSION_FILE);
    let err = |e: std::io::Error| CliError::new(Exit::Input, format!("{}: {e}", path.display()));
    // never through a planted symlink; a FIFO or device under the name is refused, not read
    let mut f = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .map_err(err)?;
    if !f.metadata().map_err(err)?.is_file() {
        return Err(err(std::io::Error::other("not a regular file")));
    }
    // SAFETY: flock on a descriptor we own; released when `f` is closed.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    let mut text = String::new();
    f.seek(SeekFrom::Start(0)).map_err(err)?;
    f.read_to_string(&mut text).map_err(err)?;
    let apps = parse_session(&text)
        .map_err(|m| CliError::new(Exit::Input, format!("{}: {m}", path.display())))?;
    if let Some((_, d, compare)) = apps.iter().find(|(n, _, _)| n == app) {
        let same = d.to_string_lossy() == dir && *compare == (mode == "compare");
        if same {
            return Ok(false);
        }
        return Err(CliError::new(
            Exit::Input,
            format!(
                "{}: application '{app}' is already in the session (as {}); choose another name",
                path.display(),
                d.display()
            ),
        ));
    }
    if text.is_empty() {
        writeln!(
            f,
            "# Parallax session: app NAME DIR live|compare (DIR relative to this directory)"
        )
        .map_err(err)?;
    } else if !text.ends_with('\n') {
        writeln!(f).map_err(err)?;
    }
    if dir.chars().any(char::is_whitespace) {
        return Err(CliError::new(
            Exit::Usage,
            format!("{dir}: a directory with white space cannot be listed in a session"),
        ));
    }
    writeln!(f, "app {app} {dir} {mode}").map_err(err)?;
    Ok(true)
}

fn list(dir: &Path) -> Result<(), CliError> {
    if !Experiment::is_session(dir) {
        return Err(CliError::new(
            Exit::Input,
            format!(
                "{}: not a session (no {SESSION_FILE}; plx run --session {} --app NAME makes one)",
                dir.display(),
                dir.display()
            ),
        ));
    }
    let model = Model::open(dir, BuildOptions::default())?;
    let mut out = String::new();
    out.push_str(&format!(
        "{:<16} {:<8} {:>9} {:>6} {:>12}  {}\n",
        "application", "mode", "processes", "ranks", "shift_s", "directory"
    ));
    let exp = Experiment::open(dir).map_err(|e| CliError::new(Exit::Input, e.to_string()))?;
    for (i, a) in model.apps.iter().enumerate() {
        let procs: Vec<_> = model
            .processes
            .iter()
            .filter(|p| p.app == i as u32 && p.measured)
            .collect();
        let ranks = procs.iter().filter(|p| p.rank().is_some()).count();
        out.push_str(&format!(
            "{:<16} {:<8} {:>9} {:>6} {:>12.6}  {}\n",
            a.name,
            if a.compare { "compare" } else { "live" },
            procs.len(),
            ranks,
            a.shift_ns as f64 / 1e9,
            exp.apps[i].dir.display()
        ));
    }
    print!("{out}");
    Ok(())
}
