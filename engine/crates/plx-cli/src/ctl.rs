//! `plx ctl PID ...`: requests to the runtime of a measured process over its control socket
//! (`ctl.sock` in its directory of the experiment, mode 0600, made by the runtime when probes or
//! `plx attach` are in use), and `reload` by the reload signal for a process without one.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use crate::{CliError, Exit};

/// The signal of a PLX_COUNTERS_SIGNAL value (options.def: USR1, USR2 or none); None for none.
fn signal_of(value: &str) -> Option<i32> {
    match value {
        "USR2" => Some(libc::SIGUSR2),
        "none" => None,
        _ => Some(libc::SIGUSR1),
    }
}

/// Sends process `pid` its reload signal (read from its environment).
pub fn reload(pid: i32) -> Result<(), CliError> {
    let path = format!("/proc/{}/environ", pid);
    let env = std::fs::read(&path).map_err(|e| {
        CliError::new(
            Exit::Environment,
            format!("process {}: cannot read {path}: {e}", pid),
        )
    })?;
    let var = |name: &str| {
        env.split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    if var("PLX_OUTPUT").is_none() {
        return Err(CliError::new(
            Exit::Usage,
            format!("process {} is not running under `plx run`", pid),
        ));
    }
    if var("PLX_FILTER").is_none() {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "process {} has no filter file to re-read (plx run --filter)",
                pid
            ),
        ));
    }
    let Some(sig) = signal_of(var("PLX_COUNTERS_SIGNAL").as_deref().unwrap_or("USR1")) else {
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "process {} was started with --reload-signal none: it cannot reload",
                pid
            ),
        ));
    };
    // SAFETY: kill(2) has no memory-safety preconditions.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(CliError::new(
            Exit::Io,
            format!("process {}: {}", pid, std::io::Error::last_os_error()),
        ));
    }
    println!("process {}: reload requested (signal {sig})", pid);
    Ok(())
}

/// `plx ctl`.
#[derive(clap::Args, Debug)]
pub struct CtlArgs {
    /// The process: measured by `plx run --probe` or `plx attach` (reload: also by `plx run
    /// --filter` with `counters` rules, through its reload signal).
    pub pid: i32,
    /// insert GLOBS... (probe more functions), remove GLOBS... (stop measuring them), list,
    /// reload (re-read the filter file's `counters` rules).
    #[arg(value_parser = ["insert", "remove", "list", "reload"])]
    pub action: String,
    /// Function globs (GLOB or LIB:GLOB, as --probe).
    pub globs: Vec<String>,
}

/// `plx ctl PID insert|remove|list|reload`: one request on the process's control socket; the
/// runtime does the change itself (every other thread stopped while entries are rewritten).
/// `reload` of a process without a socket sends it its reload signal instead.
pub fn ctl(a: &CtlArgs) -> Result<i32, CliError> {
    let pid = a.pid;
    let cmd = match a.action.as_str() {
        "reload" => {
            if !a.globs.is_empty() {
                return Err(CliError::new(
                    Exit::Usage,
                    "plx ctl reload: takes no functions".into(),
                ));
            }
            if socket_of(pid)?.is_none() {
                return reload(pid).map(|()| 0);
            }
            "reload".to_string()
        }
        "list" => "list".to_string(),
        act => {
            if a.globs.is_empty() {
                return Err(CliError::new(
                    Exit::Usage,
                    format!("plx ctl {act}: name the functions (globs)"),
                ));
            }
            format!("{act} {}", a.globs.join(","))
        }
    };
    print!("{}", request(pid, &cmd)?);
    Ok(0)
}

/// The control socket of process `pid`: the listening Unix socket named `ctl.sock` among its
/// own descriptors (/proc/PID/fd, then /proc/net/unix for the name it was bound to). A name
/// bound through the runtime's /proc/self/fd/N (a long experiment path) is reached through
/// /proc/PID/fd/N. None when the process has none (not measured, or detached).
pub fn socket_of(pid: i32) -> Result<Option<PathBuf>, CliError> {
    let fd_dir = format!("/proc/{pid}/fd");
    let entries = match std::fs::read_dir(&fd_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::new(Exit::Usage, format!("no process {pid}")))
        }
        Err(e) => {
            return Err(CliError::new(
                Exit::Environment,
                format!("process {pid}: cannot read {fd_dir}: {e} (another user's process?)"),
            ))
        }
    };
    let inodes: HashSet<String> = entries
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_string)
        })
        .collect();
    if inodes.is_empty() {
        return Ok(None);
    }
    let table = std::fs::read_to_string("/proc/net/unix")
        .map_err(|e| CliError::new(Exit::Environment, format!("/proc/net/unix: {e}")))?;
    const LISTENING: u32 = 0x10000; // __SO_ACCEPTCON
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || !inodes.contains(f[6]) || !f[7].ends_with("/ctl.sock") {
            continue;
        }
        if u32::from_str_radix(f[3], 16).map_or(true, |flags| flags & LISTENING == 0) {
            continue;
        }
        let path = match f[7].strip_prefix("/proc/self/") {
            Some(rest) => format!("/proc/{pid}/{rest}"),
            None => f[7].to_string(),
        };
        return Ok(Some(PathBuf::from(path)));
    }
    Ok(None)
}

/// Sends `cmd` to the runtime of `pid` and returns its reply; a reply beginning with "error: "
/// is an error (exit status 2).
pub fn request(pid: i32, cmd: &str) -> Result<String, CliError> {
    let path = socket_of(pid)?.ok_or_else(|| {
        CliError::new(
            Exit::Usage,
            format!("process {pid} is not measured by Parallax (it has no control socket)"),
        )
    })?;
    let fail =
        |e: std::io::Error| CliError::new(Exit::Environment, format!("{}: {e}", path.display()));
    let mut s = UnixStream::connect(&path).map_err(fail)?;
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(fail)?;
    s.write_all(format!("{cmd}\n").as_bytes()).map_err(fail)?;
    s.shutdown(Shutdown::Write).map_err(fail)?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).map_err(fail)?;
    if let Some(msg) = reply.strip_prefix("error: ") {
        return Err(CliError::new(Exit::Usage, msg.trim_end().to_string()));
    }
    Ok(reply) // `list` of no probe: empty
}
