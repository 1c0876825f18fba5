//! Which run an experiment directory belongs to: `plx run` marks the directory with the key of
//! its job (`.plx-run`), so that the ranks of one MPI job, each started by its own `plx run`,
//! share the directory while a later, unrelated run does not mix into it unless asked
//! (`--append`).

use std::io::Write;
use std::path::Path;

use crate::CliError;

/// The marker file in an experiment directory: the key of the job that wrote it.
pub const MARKER: &str = ".plx-run";

/// What this `plx run` is to its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The first (or only) process of its job in the directory: it reports the experiment.
    First,
    /// Another process of the same job (another rank): it stays quiet.
    SameJob,
}

/// The start time of process `pid` (clock ticks since boot), to tell a pid from its reuse.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19).map(str::to_string)
}

/// The key shared by the `plx run` processes of one job and by no other run: PLX_JOB (set by
/// plx-mpj for its ranks), the launcher's job id (PMIx namespace, Open MPI job id, Slurm job
/// step), else, for a launcher that gives
/// ranks no job id, MPICH's Hydra's control port (on the command line of every host's proxy)
/// or the launcher process that started the ranks of this host (their parent, with its start
/// time); outside a launcher, this process.
pub fn job_key() -> String {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    // a launcher of Parallax's own (plx-mpj) names its job
    if let Some(job) = var("PLX_JOB") {
        return format!("job {job}");
    }
    if let Some(ns) = var("PMIX_NAMESPACE") {
        return format!("pmix {ns}");
    }
    if let Some(id) = var("OMPI_MCA_ess_base_jobid") {
        return format!("ompi {id}");
    }
    if let (Some(job), Some(step)) = (var("SLURM_JOB_ID"), var("SLURM_STEP_ID")) {
        return format!("slurm {job}.{step}");
    }
    let pid = std::process::id();
    let ranked = [
        "PMI_RANK",
        "PMIX_RANK",
        "OMPI_COMM_WORLD_RANK",
        "MPI_LOCALRANKID",
    ]
    .iter()
    .any(|n| var(n).is_some());
    if ranked {
        // SAFETY: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() } as u32;
        // Hydra's proxy of each host names the launcher's control port: one for the job on
        // every host, where the proxies are different processes
        if let Some(port) = control_port(ppid) {
            return format!("hydra {port}");
        }
        return format!("launcher {ppid} {}", start_time(ppid).unwrap_or_default());
    }
    format!("run {pid} {}", start_time(pid).unwrap_or_default())
}

/// The `--control-port HOST:PORT` on process `pid`'s command line (MPICH's hydra_pmi_proxy).
fn control_port(pid: u32) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    control_port_of(&cmdline)
}

fn control_port_of(cmdline: &[u8]) -> Option<String> {
    let mut args = cmdline.split(|b| *b == 0);
    args.find(|a| *a == b"--control-port")?;
    args.next()
        .filter(|v| !v.is_empty())
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Does `dir` hold an experiment or anything else a run wrote (other than the marker)?
fn holds_a_run(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|es| {
        es.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name != MARKER && !name.starts_with(".plx-run.")
        })
    })
}

/// The marker's text: a regular file's first 4 KiB, never through a symlink; a FIFO or
/// device under the name is refused at once instead of blocking plx run.
fn read_marker(marker: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(marker)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text)?;
    Ok(text)
}

fn io_error(dir: &Path, e: std::io::Error) -> CliError {
    CliError::new(2, format!("{}: {e}", dir.display()))
}

/// Claims `dir` (created, possibly empty) for the job `key`: the marker is written whole
/// under a temporary name and linked into place, so that of the ranks starting at once one
/// creates it and the others read it complete. A directory holding an earlier run of another
/// job is refused unless `append`.
pub fn claim(dir: &Path, key: &str, append: bool) -> Result<Claim, CliError> {
    let marker = dir.join(MARKER);
    let temp = dir.join(format!("{MARKER}.{}", std::process::id()));
    let earlier = holds_a_run(dir);
    {
        let mut f = plx_format::output::create_replacing(&temp).map_err(|e| io_error(dir, e))?;
        f.write_all(format!("{key}\n").as_bytes())
            .map_err(|e| io_error(dir, e))?;
    }
    let linked = std::fs::hard_link(&temp, &marker);
    let claim = match linked {
        Ok(()) if !earlier || append => Ok(Claim::First),
        Ok(()) => {
            let _ = std::fs::remove_file(&marker);
            Err(refusal(dir, "an earlier run"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let theirs = read_marker(&marker).map_err(|e| io_error(&marker, e))?;
            if theirs.trim_end() == key {
                Ok(Claim::SameJob)
            } else if append {
                std::fs::rename(&temp, &marker).map_err(|e| io_error(dir, e))?;
                Ok(Claim::First)
            } else {
                Err(refusal(
                    dir,
                    &format!("the run of another job ({})", theirs.trim_end()),
                ))
            }
        }
        Err(e) => Err(io_error(dir, e)),
    };
    let _ = std::fs::remove_file(&temp);
    claim
}

fn refusal(dir: &Path, what: &str) -> CliError {
    CliError::new(
        2,
        format!(
            "{}: holds {what}; a second run there would mix both in one experiment: give another -o, remove it, or add this run to it with --append",
            dir.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use plx_format::test_dir::tmp;

    #[test]
    fn hydra_proxies_of_every_host_name_one_control_port() {
        let proxy = |id: &str| {
            format!(
                "/usr/bin/hydra_pmi_proxy\0--control-port\0hosta:45229\0--rmk\0user\0--proxy-id\0{id}\0"
            )
        };
        assert_eq!(
            control_port_of(proxy("0").as_bytes()),
            Some("hosta:45229".to_string())
        );
        assert_eq!(
            control_port_of(proxy("0").as_bytes()),
            control_port_of(proxy("1").as_bytes())
        );
        assert_eq!(control_port_of(b"mpirun\0-np\0four\0"), None);
        assert_eq!(control_port_of(b"x\0--control-port\0"), None);
    }

    #[test]
    fn one_job_shares_a_directory_another_is_refused() {
        let d = tmp("claim");
        assert_eq!(claim(&d, "pmix 7", false).unwrap(), Claim::First);
        std::fs::create_dir(d.join("h.100")).unwrap();
        assert_eq!(claim(&d, "pmix 7", false).unwrap(), Claim::SameJob);
        let e = claim(&d, "pmix 8", false).unwrap_err();
        assert!(
            e.message.contains("holds the run of another job (pmix 7)"),
            "{}",
            e.message
        );
        assert_eq!(claim(&d, "pmix 8", true).unwrap(), Claim::First);
        assert_eq!(claim(&d, "pmix 8", false).unwrap(), Claim::SameJob);
        // a directory written before markers existed, or by hand
        let d = tmp("unmarked");
        std::fs::create_dir(d.join("h.100")).unwrap();
        let e = claim(&d, "run 1", false).unwrap_err();
        assert!(e.message.contains("holds an earlier run"), "{}", e.message);
        assert!(!d.join(MARKER).exists());
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }
}
