//! `plx run`: finds libplx.so, sets the PLX_* environment, runs the program and passes on its status.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::Kind;
use crate::signals::signal_name;
use crate::{CliError, Exit};

/// `eprintln!` in one write: under an MPI launcher every rank's plx run shares one standard
/// error, and std's `eprintln!` writes a line in pieces, so two ranks' lines came out
/// interleaved mid-line (a write of up to PIPE_BUF bytes to a pipe is never interleaved).
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

/// `plx run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The flags setting PLX_* variables, from the runtime's option table
    /// (runtime/src/core/options.def): -o/--output, --trace, --filter, --buffer, --clock, ...
    #[command(flatten)]
    pub settings: crate::options::RunSettings,
    /// Measure into session DIR (several applications in one session): the experiment goes to
    /// DIR/APP and DIR/session.txt lists it.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub session: Option<PathBuf>,
    /// Add this run to an experiment directory that holds an earlier one (by default plx run
    /// refuses: two runs in one directory read as one experiment). The processes of one MPI
    /// job, each under its own plx run, share the directory without it.
    #[arg(long, conflicts_with = "session")]
    pub append: bool,
    /// Replace the run an experiment directory holds: everything in it is removed first. Only
    /// a directory plx run made (it holds .plx-run) is replaced.
    #[arg(long, conflicts_with_all = ["session", "append"])]
    pub force: bool,
    /// The application's name in the session [default: the program's name]; needs --session.
    #[arg(long, value_name = "NAME", requires = "session")]
    pub app: Option<String>,
    /// Sample the system while the program runs: a comma-separated list of cpu (utilisation
    /// per core and in total, %), mem (memory in use), net (bytes received and sent), disk
    /// (bytes read and written), from /proc, into DIR/metrics.monitor.HOST.plx (one monitor
    /// per host under an MPI launcher).
    #[arg(long, value_name = "LIST", value_parser = crate::monitor::parse_sources)]
    pub monitor: Option<crate::monitor::Sources>,
    /// The monitor's period in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 100, requires = "monitor",
          value_parser = clap::value_parser!(u32).range(1..=3_600_000))]
    pub monitor_period: u32,
    /// The program and its arguments (after `--`), passed on byte for byte.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD",
          value_parser = clap::value_parser!(std::ffi::OsString))]
    pub command: Vec<std::ffi::OsString>,
}

/// Directory holding libplx.so: `$PLX_LIB_DIR`, else `<dir of plx>/../lib`.
pub(crate) fn lib_dir() -> Result<PathBuf, CliError> {
    if let Some(d) = std::env::var_os("PLX_LIB_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            Exit::Environment,
            format!("cannot find the plx executable: {e}"),
        )
    })?;
    let bin = exe.parent().unwrap_or(Path::new("/"));
    Ok(bin.join("..").join("lib"))
}

pub(crate) fn absolute(p: &Path) -> Result<PathBuf, CliError> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| {
        CliError::new(
            Exit::Environment,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    Ok(cwd.join(p))
}

/// Open MPI's launcher starts the daemons of other hosts through ssh, with a fresh environment,
/// and gives the ranks there only the variables it is told to carry: plx run's own (the
/// preload, every PLX_ setting, the JVM agent) are added to `mca_base_env_list`, after any the
/// user listed; when the command line already exports variables with `-x` (which Open MPI
/// refuses to mix with that list), as more `-x NAME` arguments of the launcher instead.
/// Without them the ranks of the other hosts would run unmeasured, and the measured ranks
/// would wait for them in MPI_Init's clock exchange forever. Returns the launcher's arguments.
fn forward_to_remote_ranks(cmd: &mut Command, launcher_args: &[OsString]) -> Vec<OsString> {
    let names: Vec<String> = cmd
        .get_envs()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .filter(|k| k.starts_with("PLX_") || k == "LD_PRELOAD" || k == "JAVA_TOOL_OPTIONS")
        .collect();
    if launcher_args.iter().any(|a| a == "-x" || a == "--x") {
        let mut out = Vec::with_capacity(launcher_args.len() + 2 * names.len());
        for name in names {
            out.push(OsString::from("-x"));
            out.push(OsString::from(name));
        }
        out.extend(launcher_args.iter().cloned());
        return out;
    }
    let delimiter = std::env::var("OMPI_MCA_mca_base_env_list_delimiter")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ";".to_string());
    let mut list = std::env::var("OMPI_MCA_mca_base_env_list").unwrap_or_default();
    for name in names {
        if !list.is_empty() {
            list.push_str(&delimiter);
        }
        list.push_str(&name);
    }
    cmd.env("OMPI_MCA_mca_base_env_list", list);
    launcher_args.to_vec()
}

/// Sets variable `name` to `path` when the runtime can take it.
fn set_path(cmd: &mut Command, name: &str, path: &Path) -> Result<(), CliError> {
    crate::options::setting(name)
        .parse(&path.to_string_lossy())
        .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", path.display())))?;
    cmd.env(name, path);
    Ok(())
}

/// `YYYYMMDD-HHMMSS` in local time.
fn timestamp() -> String {
    // SAFETY: time() and localtime_r() with valid pointers to locals; localtime_r is thread-safe.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        )
    }
}

/// The default experiment directory for a program (its name's bytes as they are).
pub fn default_dir(program: &OsStr) -> PathBuf {
    let mut name = OsString::from("plx-");
    name.push(Path::new(program).file_name().unwrap_or(program));
    name.push(format!("-{}", timestamp()));
    PathBuf::from(name)
}

/// JAVA_TOOL_OPTIONS putting the agent on the command line of every JVM the command starts
/// (docs/java.md), named on the command line or not (a script that execs `java`, a launcher);
/// the user's own options come after ours. Without the agent's jar, nothing, and a warning when
/// a word of the command is a `java` executable.
fn java_tool_options(command: &[OsString], lib: &Path) -> Option<OsString> {
    let jar = lib.with_file_name("plx-agent.jar");
    if !jar.is_file() {
        let is_java = |w: &OsString| Path::new(w).file_name().is_some_and(|b| b == "java");
        if command.iter().any(is_java) {
            eprintln!(
                "plx: {} not found: Java methods are not measured (build it with make java)",
                jar.display()
            );
        }
        return None;
    }
    let mut o = OsString::from("-agentpath:");
    o.push(lib.as_os_str());
    o.push(" -javaagent:");
    o.push(jar.as_os_str());
    if let Some(old) = std::env::var_os("JAVA_TOOL_OPTIONS").filter(|v| !v.is_empty()) {
        o.push(" ");
        o.push(old);
    }
    Some(o)
}

/// A JVM using Open MPI's Java bindings (libmpi comes in through JNI, so the program links no
/// MPI): `mpi.jar` on its command line, or a rank started by Open MPI's launcher.
fn java_mpi(command: &[OsString]) -> Option<crate::mpi_detect::MpiImpl> {
    let is_java = Path::new(&command[0])
        .file_name()
        .is_some_and(|b| b == "java");
    let uses_jar = command
        .iter()
        .any(|w| w.to_string_lossy().contains("mpi.jar"));
    let under_ompi = std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some();
    (is_java && (uses_jar || under_ompi)).then_some(crate::mpi_detect::MpiImpl::OpenMpi)
}

/// Runs the command; returns the exit status plx should exit with.
pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let program = &args.command[0];
    let name = program.to_string_lossy();
    // Under a file size limit (ulimit -f) plx's own writes fail with EFBIG and are reported,
    // instead of SIGXFSZ killing plx while the program runs on; the program gets back the
    // disposition plx was started with.
    // SAFETY: installing SIG_IGN for one signal has no memory-safety preconditions.
    let xfsz = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let lib = runtime_library()?;
    let filter = filter_file(&args)?;
    preflight(&args)?;
    let dir = experiment_dir(&args)?;
    let unstarted = crate::job::Unstarted::note(&dir);
    let made = std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::new(
            Exit::Input,
            format!("{}: cannot create: {e}", dir.display()),
        )
    });
    // a session directory is shared by design; an experiment directory only by one job
    let claim = match (made, &args.session) {
        (Ok(()), Some(_)) => Ok(crate::job::Claim::First),
        (Ok(()), None) => claim_dir(&dir, &args),
        (Err(e), _) => Err(e),
    };
    let claim = match claim {
        Ok(c) => c,
        // a disk with no room left must not cost the user the program's run
        Err(e) if disk_full(&dir) => {
            unstarted.undo();
            return run_unmeasured(&args, &e.message, xfsz);
        }
        Err(e) => return Err(e),
    };
    let dir_abs = std::fs::canonicalize(&dir).unwrap_or(absolute(&dir)?);

    let mut cmd = measured_command(&args, &lib, &dir_abs, filter.as_deref())?;
    // Like a shell: a terminal's ^C / ^\ goes to the program; plx stays to report its status.
    // Ignored before the program starts (it may signal plx at once), restored in the child
    // before exec: an ignored disposition would otherwise be inherited.
    // SAFETY: installing SIG_IGN for two signals has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    terminate_forwarded();
    // SAFETY: the closure runs in the forked child before exec and only calls signal(2), which
    // is async-signal-safe; `xfsz` is a disposition signal(2) returned.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            libc::signal(libc::SIGXFSZ, xfsz);
            Ok(())
        });
    }
    let before = DirAtStart {
        entries: entries(&dir),
        id: dir_identity(&dir),
    };
    // the system monitor samples from just before the program starts until it has ended
    let monitor =
        match &args.monitor {
            Some(sources) if crate::monitor::first_on_host() => Some(
                crate::monitor::Monitor::start(&dir_abs, &sources.0, args.monitor_period)?,
            ),
            _ => None,
        };
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            // nothing ran: what this run created goes, so that the corrected rerun can use -o DIR
            if let Some(m) = monitor {
                let _ = m.stop();
            }
            unstarted.undo();
            if let Some(session) = &args.session {
                crate::session::leave(session, &dir);
            }
            let exit = if e.kind() == std::io::ErrorKind::NotFound {
                Exit::NotFound
            } else {
                Exit::CannotExecute
            };
            return Err(CliError::new(exit, format!("{name}: {e}")));
        }
    };
    let child_pid = child.id();
    forward_terminate_to(child_pid);
    let status = child
        .wait()
        .map_err(|e| CliError::new(Exit::Environment, format!("{name}: wait failed: {e}")))?;
    // a rank killed before it removed its clock-exchange marker (SIGKILL) leaves it: gone now
    crate::job::remove_dead_markers(&dir);
    // a monitor that could not write (disk full, a file size limit) leaves the experiment
    // incomplete, never the program's exit status unreported
    let monitor_failure = monitor.and_then(|m| m.stop().err()).map(|e| e.message);
    Ok(report_end(
        &name,
        status,
        &dir,
        &before,
        child_pid,
        claim == crate::job::Claim::First,
        monitor_failure,
    ))
}

/// The runtime library `plx run` preloads, found beside `plx` (or in `PLX_LIB_DIR`).
fn runtime_library() -> Result<PathBuf, CliError> {
    let lib = lib_dir()?.join("libplx.so");
    if !lib.is_file() {
        return Err(CliError::new(Exit::Environment, format!(
                "runtime library not found: {} (install it there or set PLX_LIB_DIR to its directory)",
                lib.display()
            ),
        ));
    }
    Ok(std::fs::canonicalize(&lib).unwrap_or(lib))
}

/// The filter file (`--filter`), checked and absolute.
fn filter_file(args: &RunArgs) -> Result<Option<PathBuf>, CliError> {
    let Some(f) = args.settings.get("PLX_FILTER").map(Path::new) else {
        return Ok(None);
    };
    if !f.exists() {
        return Err(CliError::new(
            Exit::Input,
            format!("{}: filter file not found", f.display()),
        ));
    }
    // a FIFO, a device or a directory is refused by the check, saying which it is
    crate::filter::check_file(f)?;
    Ok(Some(std::fs::canonicalize(f).unwrap_or(absolute(f)?)))
}

/// The experiment directory: the session's directory for this application (`--session`), else
/// `-o DIR`, else the default name after the program.
fn experiment_dir(args: &RunArgs) -> Result<PathBuf, CliError> {
    let program = &args.command[0];
    Ok(match &args.session {
        Some(session) => {
            let app = match &args.app {
                Some(a) => a.clone(),
                None => Path::new(program).file_name().map_or_else(
                    || program.to_string_lossy().to_string(),
                    |b| b.to_string_lossy().into_owned(),
                ),
            };
            crate::session::join(session, &app)?
        }
        None => args
            .settings
            .get("PLX_OUTPUT")
            .map_or_else(|| default_dir(program), PathBuf::from),
    })
}

/// The program's command, measured: the runtime (and the MPI wrappers, the JVM agent)
/// preloaded, the settings in its environment, a launcher's arguments forwarded to its ranks.
fn measured_command(
    args: &RunArgs,
    lib: &Path,
    dir_abs: &Path,
    filter: Option<&Path>,
) -> Result<Command, CliError> {
    let program = &args.command[0];
    let mut preload = OsString::from(lib.as_os_str());
    // MPI programs (and launchers, whose ranks inherit the environment) also get the wrappers
    let mpi = crate::mpi_detect::mpi_of(program).or_else(|| java_mpi(&args.command));
    if let Some(mpi) = mpi {
        let mpi_lib = lib.with_file_name(mpi.library());
        if mpi_lib.is_file() {
            preload.push(":");
            preload.push(mpi_lib.as_os_str());
        }
    }
    let java_options = java_tool_options(&args.command, lib);
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut cmd = Command::new(program);
    cmd.env("LD_PRELOAD", preload);
    if let Some(o) = java_options {
        cmd.env("JAVA_TOOL_OPTIONS", o);
    }
    // each flag's value was checked by the runtime's grammar as clap parsed it; paths go
    // absolute, within the runtime's length limit
    for (setting, value) in args.settings.iter() {
        match (setting.name, setting.kind) {
            ("PLX_OUTPUT" | "PLX_FILTER" | "PLX_SOURCE_FILES", _) => {}
            (_, Kind::Path) => set_path(&mut cmd, setting.name, &absolute(Path::new(value))?)?,
            _ => {
                cmd.env(setting.name, value);
            }
        }
    }
    set_path(&mut cmd, "PLX_OUTPUT", dir_abs)?;
    if let Some(f) = filter {
        set_path(&mut cmd, "PLX_FILTER", f)?;
        // the file rules are decided here, from debug information libplx never reads
        if let Some(list) = crate::source_files::write(dir_abs, f, &args.command)? {
            set_path(&mut cmd, "PLX_SOURCE_FILES", &list)?;
        }
    }
    // the job's name: the runtime's MPI clock exchange runs only when every rank of it is
    // measured (docs/mpi.md)
    if std::env::var_os("PLX_JOB").is_none_or(|v| v.is_empty()) {
        cmd.env("PLX_JOB", crate::job::job_key());
    }
    if mpi == Some(crate::mpi_detect::MpiImpl::OpenMpi) && crate::mpi_detect::is_launcher(program) {
        let launcher_args = forward_to_remote_ranks(&mut cmd, &args.command[1..]);
        cmd.args(launcher_args);
    } else {
        cmd.args(&args.command[1..]);
    }
    Ok(cmd)
}

/// Says how the run ended and what the experiment lacks; the exit status `plx run` returns
/// (the program's, or `Exit::Incomplete` for a successful program whose experiment is not
/// whole, outside a launcher's job).
fn report_end(
    name: &str,
    status: std::process::ExitStatus,
    dir: &Path,
    before: &DirAtStart,
    child_pid: u32,
    first: bool,
    monitor_failure: Option<String>,
) -> i32 {
    let code = if let Some(sig) = status.signal() {
        eprintln!("plx: {name} killed by signal {sig} ({})", signal_name(sig));
        128 + sig
    } else {
        status.code().unwrap_or(1)
    };
    // a directory removed (a cleanup of /tmp, rm -r by hand) or replaced while the program ran
    // took what the runtime wrote with it: never "experiment written"
    let now_id = dir_identity(dir);
    if before.id.is_some() && now_id != before.id {
        eprintln!(
            "plx: {}: {} while the program ran: the experiment written in it is lost",
            dir.display(),
            if now_id.is_none() {
                "removed"
            } else {
                "replaced by another directory"
            }
        );
        return incomplete_status(code);
    }
    // writes the runtime could not complete (disk full, ...): never a silent success
    // (the runtime has said which files on standard error)
    let mut failures = write_failures(dir, &before.entries, child_pid, first);
    if let Some(m) = monitor_failure {
        eprintln!("plx: {m}");
        failures.push(m);
    }
    if !failures.is_empty() {
        eprintln!(
            "plx: experiment written to {}, incomplete: {}; see plx info",
            dir.display(),
            failures.join("; ")
        );
        let _ = std::io::Write::flush(&mut std::io::stderr());
        return incomplete_status(code);
    }
    // one line per job: the other ranks' plx run processes write to the same directory
    if first {
        eprintln!("plx: experiment written to {}", dir.display());
    }
    code
}

/// The status of a run whose experiment is not whole: `Exit::Incomplete` for a program that
/// exited 0, else the program's. A rank's plx run (`mpirun ... plx run`) keeps the program's 0:
/// a launcher aborts the whole job on one rank's nonzero status, and its SIGTERM would cut the
/// other ranks' programs, and what they still write, short.
fn incomplete_status(code: i32) -> i32 {
    if code == 0 && !crate::job::is_rank() {
        Exit::Incomplete.code()
    } else {
        code
    }
}

/// The program's process while plx run waits for it (0: not started yet), and a SIGTERM that
/// came before it was known.
static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static TERM_PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_terminate(sig: libc::c_int) {
    let pid = CHILD.load(std::sync::atomic::Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe; the pid is the program's, never 0 or -1.
        unsafe { libc::kill(pid, sig) };
    } else {
        TERM_PENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A SIGTERM to plx run (a launcher aborting its job: Open MPI's mpirun, when another rank's
/// plx run exited 3) goes to the program, and plx run stays to report how it ended and what was
/// lost: each rank's own line is printed, never cut by the abort. The handler is reset by the
/// program's exec.
fn terminate_forwarded() {
    // SAFETY: the handler only loads an atomic and calls kill(2), both async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            on_terminate as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// The program is process `pid`: a SIGTERM from now on goes to it, and one that came before.
fn forward_terminate_to(pid: u32) {
    CHILD.store(pid as i32, std::sync::atomic::Ordering::SeqCst);
    if TERM_PENDING.swap(false, std::sync::atomic::Ordering::SeqCst) {
        // SAFETY: kill(2) of the program's own process id.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
}

/// The checks of --counters and --probe (an unknown event, a glob matching nothing).
fn preflight(args: &RunArgs) -> Result<(), CliError> {
    if let Some(events) = args.settings.get("PLX_COUNTERS") {
        crate::preflight::check_counters(&events.to_string_lossy())?;
    }
    if let Some(globs) = args.settings.get("PLX_PROBE") {
        crate::preflight::check_probes(&globs.to_string_lossy(), &args.command)?;
    }
    Ok(())
}

/// Claims experiment directory `dir` for this job; with --force, first empties it of another
/// job's run (under a lock held until the claim is made).
/// Has the file system `dir` is (or would be) on no block or no inode left for its user?
fn disk_full(dir: &Path) -> bool {
    let Some(existing) = dir.ancestors().find(|a| a.exists()) else {
        return false;
    };
    let Ok(path) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: statvfs writes a struct statvfs through the pointer, which has room for one.
    if unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    st.f_bavail == 0 || (st.f_files > 0 && st.f_favail == 0)
}

/// The program run as it is, unmeasured, when the experiment could not even be begun (a full
/// disk): its output and status are the user's; plx exits 3 where it would have exited 0.
/// `xfsz`: the SIGXFSZ disposition plx was started with, the program's.
fn run_unmeasured(args: &RunArgs, why: &str, xfsz: libc::sighandler_t) -> Result<i32, CliError> {
    eprintln!("plx: {why}: the disk is full; the program runs unmeasured");
    let program = &args.command[0];
    let mut cmd = Command::new(program);
    cmd.args(&args.command[1..]);
    // SAFETY: the closure runs in the forked child before exec and only calls signal(2), which
    // is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, xfsz);
            Ok(())
        });
    }
    let status = cmd.status().map_err(|e| {
        CliError::new(
            Exit::NotFound,
            format!("{}: {e}", program.to_string_lossy()),
        )
    })?;
    let code = match status.signal() {
        Some(sig) => 128 + sig,
        None => status.code().unwrap_or(1),
    };
    Ok(incomplete_status(code))
}

fn claim_dir(dir: &Path, args: &RunArgs) -> Result<crate::job::Claim, CliError> {
    let key = crate::job::job_key();
    let _lock = match args.force {
        true => Some(crate::job::replace(dir, &key)?),
        false => None,
    };
    crate::job::claim(dir, &key, args.append)
}

/// The names in `dir`.
fn entries(dir: &Path) -> std::collections::BTreeSet<OsString> {
    std::fs::read_dir(dir)
        .map(|es| es.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

/// The experiment directory as the program started: its entries and its device and inode.
struct DirAtStart {
    entries: std::collections::BTreeSet<OsString>,
    id: Option<(u64, u64)>,
}

/// The directory's device and inode, `None` when it is not there.
fn dir_identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// What the WriteFailures records of the process directories this run's program made say
/// (never another rank's plx run's: each names only its own, [`own_dirs`]).
fn write_failures(
    dir: &Path,
    before: &std::collections::BTreeSet<OsString>,
    child: u32,
    first: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut found = Vec::new();
    for name in entries(dir).difference(before) {
        let pdir = dir.join(name);
        let Ok(files) = std::fs::read_dir(&pdir) else {
            continue;
        };
        let mut procs: Vec<PathBuf> = files
            .flatten()
            .map(|f| f.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("process") && n.ends_with(".plx"))
            })
            .collect();
        procs.sort();
        let mut ppid = None;
        let mut lines = Vec::new();
        for p in procs {
            // a disk full before the process began leaves not even the record of the failures
            if std::fs::metadata(&p).is_ok_and(|m| m.len() == 0) {
                lines.push(format!(
                    "{}/{}: empty: nothing of the process could be written (a full disk or a file size limit)",
                    name.to_string_lossy(),
                    p.file_name().unwrap_or_default().to_string_lossy()
                ));
                continue;
            }
            let data = plx_format::ProcessData::read(&p, &mut Vec::new());
            ppid = ppid.or(data.info.as_ref().map(|i| i.ppid));
            for w in &data.write_failures {
                let err = std::io::Error::from_raw_os_error(w.error).to_string();
                lines.push(format!(
                    "{}/{}: {} writes ({} bytes) failed ({})",
                    name.to_string_lossy(),
                    if w.file == 1 {
                        "trace.plx"
                    } else {
                        "process.plx"
                    },
                    w.writes,
                    w.bytes,
                    err.split(" (os error").next().unwrap_or_default()
                ));
            }
        }
        found.push((name.clone(), ppid, lines));
    }
    let parents: Vec<(OsString, Option<u32>)> =
        found.iter().map(|(n, p, _)| (n.clone(), *p)).collect();
    let own = own_dirs(&parents, child, first);
    for (name, _, lines) in found {
        if own.contains(&name) {
            out.extend(lines);
        }
    }
    out
}

/// Which of the process directories `HOST.PID` (with the parent each recorded, if any) this
/// run's program made: on this host, the program's own (`child`) and those of processes whose
/// recorded parent is one of them, transitively. Other ranks' plx run processes write into the
/// same directory at the same time; each names only its own. A directory whose process could
/// record nothing (a disk full from its start) is this run's when it is `child`'s, else when this
/// run is the first of its job (`first`), so that it is named once.
fn own_dirs(dirs: &[(OsString, Option<u32>)], child: u32, first: bool) -> BTreeSet<OsString> {
    let host = crate::monitor::hostname();
    let pid_of = |name: &OsString| {
        let name = name.to_str()?;
        let (h, pid) = name.rsplit_once('.')?;
        (h == host).then(|| pid.parse::<u32>().ok()).flatten()
    };
    let mut pids: BTreeSet<u32> = BTreeSet::from([child]);
    loop {
        let more: Vec<u32> = dirs
            .iter()
            .filter_map(|(n, ppid)| Some((pid_of(n)?, (*ppid)?)))
            .filter(|(pid, ppid)| pids.contains(ppid) && !pids.contains(pid))
            .map(|(pid, _)| pid)
            .collect();
        if more.is_empty() {
            break;
        }
        pids.extend(more);
    }
    dirs.iter()
        .filter(|(n, ppid)| match pid_of(n) {
            Some(pid) if pids.contains(&pid) => true,
            _ => ppid.is_none() && first,
        })
        .map(|(n, _)| n.clone())
        .collect()
}
