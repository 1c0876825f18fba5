//! Which run an experiment directory belongs to: `plx run` marks the directory with the key of
//! its job (`.plx-run`), so that the ranks of one MPI job, each started by its own `plx run`,
//! share the directory while a later, unrelated run does not mix into it unless asked
//! (`--append`).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{CliError, Exit};

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

/// Was this process started as a rank of a launcher's job (`mpirun ... plx run`): a rank
/// variable of Open MPI, MPICH's Hydra or PMIx in its environment.
pub fn is_rank() -> bool {
    [
        "PMI_RANK",
        "PMIX_RANK",
        "OMPI_COMM_WORLD_RANK",
        "MPI_LOCALRANKID",
    ]
    .iter()
    .any(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty()))
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
    if is_rank() {
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
    CliError::new(Exit::Input, format!("{}: {e}", dir.display()))
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
    CliError::new(Exit::Usage, format!(
            "{}: holds {what}; a second run there would mix both in one experiment: give another -o, replace it with --force, or add this run to it with --append",
            dir.display()
        ),
    )
}

/// An exclusive lock on a directory (flock), released when dropped.
pub struct DirLock {
    _held: std::fs::File,
}

impl DirLock {
    fn take(dir: &Path) -> Result<DirLock, CliError> {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(dir).map_err(|e| io_error(dir, e))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io_error(dir, std::io::Error::last_os_error()));
        }
        Ok(DirLock { _held: f })
    }
}

/// `plx run --force`: empties `dir` when it holds the run of another job than `key`. Only a
/// directory plx run made (its marker) is emptied; anything else is refused. The lock returned
/// is to be held until [`claim`]: the ranks of one job, each with its own `plx run --force`,
/// empty the directory once (the first), the others then find their own job's marker.
pub fn replace(dir: &Path, key: &str) -> Result<DirLock, CliError> {
    let lock = DirLock::take(dir)?;
    let marker = dir.join(MARKER);
    match std::fs::read_to_string(&marker) {
        Ok(theirs) if theirs.trim_end() == key => {}
        Ok(theirs) => {
            // emptied under a running job, its experiment would be lost (or mixed with this
            // run's) while its plx run says it was written
            if let Some(pid) = still_running(dir, theirs.trim_end()) {
                return Err(CliError::new(Exit::Usage, format!(
                    "{}: the run it holds is still going (process {pid}): --force replaces only a run that has ended; give another -o, or wait for it to end",
                    dir.display()
                )));
            }
            for e in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))?.flatten() {
                let path = e.path();
                let gone = match e.file_type() {
                    Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                    _ => std::fs::remove_file(&path),
                };
                gone.map_err(|e| io_error(&path, e))?;
            }
        }
        Err(_) if !holds_a_run(dir) => {}
        Err(_) => {
            return Err(CliError::new(Exit::Usage, format!(
                    "{}: not an experiment directory of plx run (no {MARKER} in it): --force replaces only those; give another -o or remove it yourself",
                    dir.display()
                ),
            ))
        }
    }
    Ok(lock)
}

/// A process of the run `dir` holds (its marker `key`) that still runs on this host: the
/// `plx run` or the launcher the key names (pid and start time), or a measured process whose
/// directory still holds the files its runtime removes at its end (live files, the room kept
/// for its last records).
fn still_running(dir: &Path, key: &str) -> Option<u32> {
    let mut words = key.split(' ');
    if let (Some("run" | "launcher"), Some(pid), Some(start)) =
        (words.next(), words.next(), words.next())
    {
        if let Ok(pid) = pid.parse::<u32>() {
            if !start.is_empty() && start_time(pid).as_deref() == Some(start) {
                return Some(pid);
            }
        }
    }
    let host = crate::monitor::hostname();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        let Some((h, pid)) = name.to_str().and_then(|n| n.rsplit_once('.')) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if h != host || !Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let running = std::fs::read_dir(e.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|f| {
                let n = f.file_name();
                let n = n.to_string_lossy();
                n.starts_with("live.") || n == ".plx-reserve"
            });
        if running {
            return Some(pid);
        }
    }
    None
}

/// What `plx run` creates for its experiment before the program starts, to be removed when
/// the program cannot be started: the directories it made and the files it put in the
/// experiment directory (marker, source-file list, the monitor's file).
pub struct Unstarted {
    dir: PathBuf,
    /// The outermost directory `create_dir_all` is to make (None: `dir` existed).
    first_made: Option<PathBuf>,
    before: BTreeSet<OsString>,
}

impl Unstarted {
    /// Notes what exists before `dir` is created.
    pub fn note(dir: &Path) -> Unstarted {
        let mut first_made = None;
        let mut d = Some(dir);
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            first_made = Some(p.to_path_buf());
            d = p.parent();
        }
        let before = std::fs::read_dir(dir)
            .map(|es| es.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        Unstarted {
            dir: dir.to_path_buf(),
            first_made,
            before,
        }
    }

    /// Removes what this run created. A new directory in the experiment directory is a
    /// process of another `plx run` of the job (this one started none): then nothing is.
    pub fn undo(self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let new: Vec<_> = entries
            .flatten()
            .filter(|e| !self.before.contains(&e.file_name()))
            .collect();
        if new.iter().any(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
            return;
        }
        for e in &new {
            let _ = std::fs::remove_file(e.path());
        }
        let Some(top) = self.first_made else { return };
        let mut d = Some(self.dir.as_path());
        while let Some(p) = d {
            if std::fs::remove_dir(p).is_err() || p == top {
                break;
            }
            d = p.parent();
        }
    }
}

/// The clock exchange's markers in `DIR/.plx-mpi/JOB/` (runtime/src/adapters/mpi/mpi_job.c:
/// `HOST.PID-START`, or `HOST.PID-START.done`) whose writer, a process of this host, no longer
/// runs (a rank killed by SIGKILL before it decided never removes its own), removed; then each
/// job's directory and `.plx-mpi` when empty. Markers of other hosts and of processes that
/// still run stay: removing a dead rank's marker changes no decision a live rank takes (a
/// count short of the job's size skips the exchange, as a rank that died makes it skip).
pub fn remove_dead_markers(dir: &Path) {
    let top = dir.join(".plx-mpi");
    let Ok(jobs) = std::fs::read_dir(&top) else {
        return;
    };
    let host = crate::monitor::hostname();
    for job in jobs.flatten() {
        if !job.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(markers) = std::fs::read_dir(job.path()) else {
            continue;
        };
        for m in markers.flatten() {
            let name = m.file_name();
            let Some((h, pid, start)) = name.to_str().and_then(marker_writer) else {
                continue;
            };
            if h == host && !plx_export::writer_alive(pid, start) {
                let _ = std::fs::remove_file(m.path());
            }
        }
        let _ = std::fs::remove_dir(job.path());
    }
    let _ = std::fs::remove_dir(&top);
}

/// The writer of marker `name`: its host, process id and start time (`None`: unknown, 0 in the
/// name when the runtime could not read it).
fn marker_writer(name: &str) -> Option<(&str, u32, Option<u64>)> {
    let name = name.strip_suffix(".done").unwrap_or(name);
    let (host, writer) = name.rsplit_once('.')?;
    let (pid, start) = match writer.split_once('-') {
        Some((pid, start)) => (pid, Some(start.parse::<u64>().ok()?)),
        None => (writer, None),
    };
    Some((host, pid.parse().ok()?, start.filter(|&s| s != 0)))
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

    /// A run whose program did not start left its -o directory behind, and the corrected
    /// rerun was refused as "another job": only what the run created goes.
    #[test]
    fn an_unstarted_run_leaves_nothing() {
        let d = tmp("unstarted");
        let dir = d.join("a/b/exp");
        let u = Unstarted::note(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        claim(&dir, "run 1", false).unwrap();
        std::fs::write(dir.join("source-files"), "x").unwrap();
        u.undo();
        assert!(!d.join("a").exists());
        // a directory that was there stays, with what was in it
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes"), "mine").unwrap();
        let u = Unstarted::note(&dir);
        claim(&dir, "run 2", false).unwrap_err();
        let u2 = Unstarted::note(&dir);
        u.undo();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // another plx run of the job started its process: nothing is removed
        std::fs::remove_file(dir.join("notes")).unwrap();
        claim(&dir, "job 3", false).unwrap();
        std::fs::create_dir(dir.join("h.100")).unwrap();
        u2.undo();
        assert!(dir.join(MARKER).exists() && dir.join("h.100").exists());
    }

    #[test]
    fn force_replaces_only_another_jobs_experiment() {
        let d = tmp("force");
        claim(&d, "run 1", false).unwrap();
        std::fs::create_dir(d.join("h.100")).unwrap();
        std::fs::write(d.join("h.100/process.plx"), "x").unwrap();
        // the same job's marker: nothing removed (the other ranks of a job that replaced it)
        drop(replace(&d, "run 1").unwrap());
        assert!(d.join("h.100/process.plx").exists());
        let lock = replace(&d, "run 2").unwrap();
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        assert_eq!(claim(&d, "run 2", false).unwrap(), Claim::First);
        drop(lock);
        // not made by plx run
        let d = tmp("force-not-mine");
        std::fs::write(d.join("thesis.tex"), "x").unwrap();
        let e = replace(&d, "run 2").err().unwrap();
        assert_eq!(
            e.message,
            format!("{}: not an experiment directory of plx run (no .plx-run in it): --force replaces only those; give another -o or remove it yourself", d.display())
        );
        assert!(d.join("thesis.tex").exists());
    }

    #[test]
    fn markers_name_their_writer() {
        assert_eq!(
            marker_writer("node1.cluster.4242-777"),
            Some(("node1.cluster", 4242, Some(777)))
        );
        assert_eq!(
            marker_writer("node1.4242-777.done"),
            Some(("node1", 4242, Some(777)))
        );
        assert_eq!(marker_writer("node1.4242"), Some(("node1", 4242, None)));
        assert_eq!(marker_writer("node1.4242-0"), Some(("node1", 4242, None)));
        assert_eq!(marker_writer("node1.x-1"), None);
        assert_eq!(marker_writer("nohost"), None);
    }
}
