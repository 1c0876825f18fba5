//! `plx ctl PID reload`: makes a program running under `plx run` re-read the `counters` rules
//! of its filter file, by sending it the reload signal it was started with.

use crate::CliError;

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
    let env = std::fs::read(&path)
        .map_err(|e| CliError::new(2, format!("process {}: cannot read {path}: {e}", pid)))?;
    let var = |name: &str| {
        env.split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    if var("PLX_OUTPUT").is_none() {
        return Err(CliError::new(
            2,
            format!("process {} is not running under `plx run`", pid),
        ));
    }
    if var("PLX_FILTER").is_none() {
        return Err(CliError::new(
            2,
            format!(
                "process {} has no filter file to re-read (plx run --filter)",
                pid
            ),
        ));
    }
    let Some(sig) = signal_of(var("PLX_COUNTERS_SIGNAL").as_deref().unwrap_or("USR1")) else {
        return Err(CliError::new(
            2,
            format!(
                "process {} was started with --reload-signal none: it cannot reload",
                pid
            ),
        ));
    };
    // SAFETY: kill(2) has no memory-safety preconditions.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(CliError::new(
            1,
            format!("process {}: {}", pid, std::io::Error::last_os_error()),
        ));
    }
    println!("process {}: reload requested (signal {sig})", pid);
    Ok(())
}
