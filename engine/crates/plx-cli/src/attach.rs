//! `plx attach PID` and `plx detach PID`: measuring a process that is already running (Paradyn's
//! instrumentation of running programs).
//!
//! Attach stops every thread of the process with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT, so no
//! signal is sent to it), makes one of them call the process's own `dlopen` on libplx.so and
//! then `plx_attach_start(settings, pcs, n)` (the option table's NAME=VALUE lines, and where the
//! stopped threads are so that no probe displaces bytes under one), restores that thread's
//! registers and lets the process go. Detach does the same with `plx_attach_stop()`: every
//! probe removed, the experiment finished, the process left running. libplx.so stays loaded
//! (frames entered while measured still return through its exit trampoline).

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use object::{Object, ObjectSymbol};

use crate::CliError;

/// `plx attach`.
#[derive(clap::Args, Debug)]
pub struct AttachArgs {
    /// The process to measure.
    pub pid: i32,
    /// The flags setting PLX_* variables, as for `plx run` (-o, --trace, --probe, --filter, ...).
    #[command(flatten)]
    pub settings: crate::options::RunSettings,
    /// Detach by itself after SECONDS (default: at Ctrl-C, `plx detach PID` or the process's end).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
}

/// `plx detach`.
#[derive(clap::Args, Debug)]
pub struct DetachArgs {
    /// The process a `plx attach` measures.
    pub pid: i32,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn err(msg: String) -> CliError {
    CliError::new(2, msg)
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Where `plx attach` notes its own pid for `plx detach PID`.
fn marker(pid: i32) -> PathBuf {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("plx-attach-{uid}")).join(pid.to_string())
}

/// A thread of the traced process, stopped.
struct Stopped {
    tid: i32,
    /// A signal that arrived while stopping it, given back when it is released.
    pending: i32,
}

/// Every thread of a process, stopped under ptrace until dropped.
struct World {
    pid: i32,
    threads: Vec<Stopped>,
    mem: File,
}

fn wait_stop(tid: i32) -> Result<i32, String> {
    let mut status = 0;
    // SAFETY: waitpid writes the status into a valid int.
    let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
    if r < 0 {
        return Err(os_err(&format!("waitpid {tid}")));
    }
    if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
        return Err(format!("thread {tid} ended"));
    }
    Ok(status)
}

fn tasks(pid: i32) -> Result<Vec<i32>, String> {
    let dir = format!("/proc/{pid}/task");
    let mut out: Vec<i32> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{dir}: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    out.sort_unstable();
    Ok(out)
}

impl World {
    fn stop(pid: i32) -> Result<World, String> {
        let mem = OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"))
            .map_err(|e| format!("/proc/{pid}/mem: {e}"))?;
        let mut w = World { pid, threads: Vec::new(), mem };
        // threads may start while we stop the others: list again until nothing is new
        loop {
            let mut new = 0;
            for tid in tasks(pid)? {
                if w.threads.iter().any(|t| t.tid == tid) {
                    continue;
                }
                // SAFETY: plain ptrace requests on a thread id; no memory is passed.
                let seized = unsafe { libc::ptrace(libc::PTRACE_SEIZE, tid, 0, 0) };
                if seized != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::ESRCH) {
                        continue; // it ended meanwhile
                    }
                    return Err(format!(
                        "cannot trace thread {tid} of process {pid}: {e} (ptrace refused: \
                         another tracer, or /proc/sys/kernel/yama/ptrace_scope)"
                    ));
                }
                // SAFETY: as above.
                unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) };
                let mut pending = 0;
                loop {
                    let status = wait_stop(tid)?;
                    if (status >> 16) == libc::PTRACE_EVENT_STOP {
                        break;
                    }
                    // a signal arrived first: keep it for the release, wait for our stop
                    pending = libc::WSTOPSIG(status);
                    // SAFETY: as above.
                    unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) };
                    // SAFETY: as above.
                    unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, 0) };
                }
                w.threads.push(Stopped { tid, pending });
                new += 1;
            }
            if new == 0 {
                return Ok(w);
            }
        }
    }

    fn regs(&self, tid: i32) -> Result<libc::user_regs_struct, String> {
        // SAFETY: user_regs_struct is plain data; PTRACE_GETREGS fills it.
        let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        // SAFETY: the thread is stopped under our ptrace; r is a valid user_regs_struct.
        if unsafe { libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut r as *mut _) } != 0 {
            return Err(os_err(&format!("registers of thread {tid}")));
        }
        Ok(r)
    }

    fn set_regs(&self, tid: i32, r: &libc::user_regs_struct) -> Result<(), String> {
        // SAFETY: the thread is stopped under our ptrace; r is a valid user_regs_struct.
        if unsafe { libc::ptrace(libc::PTRACE_SETREGS, tid, 0, r as *const _) } != 0 {
            return Err(os_err(&format!("registers of thread {tid}")));
        }
        Ok(())
    }

    /// The stopped threads' program counters.
    fn pcs(&self) -> Result<Vec<u64>, String> {
        self.threads.iter().map(|t| Ok(self.regs(t.tid)?.rip)).collect()
    }

    /// Makes thread `tid` call `func(args)` with `data` copied onto its stack (`data_arg`: the
    /// argument index that receives its address, offsets into it are added by the caller).
    /// Returns rax. The thread's registers are restored whatever happens.
    fn call(&self, tid: i32, func: u64, data: &[u8], args: [u64; 3]) -> Result<u64, String> {
        let saved = self.regs(tid)?;
        let result = self.call_inner(tid, &saved, func, data, args);
        let restored = self.set_regs(tid, &saved);
        let rax = result?;
        restored?;
        Ok(rax)
    }

    fn call_inner(
        &self,
        tid: i32,
        saved: &libc::user_regs_struct,
        func: u64,
        data: &[u8],
        args: [u64; 3],
    ) -> Result<u64, String> {
        // below the red zone (128 bytes), 16-aligned, then a return address of 0: the call ends
        // with a fault at address 0 that we catch and never deliver
        let data_at = (saved.rsp - 1024 - data.len() as u64) & !15;
        self.mem
            .write_all_at(data, data_at)
            .map_err(|e| format!("writing into process {}: {e}", self.pid))?;
        let sp = data_at - 16 - 8;
        self.mem
            .write_all_at(&0u64.to_le_bytes(), sp)
            .map_err(|e| format!("writing into process {}: {e}", self.pid))?;
        let mut r = *saved;
        r.rsp = sp;
        r.rip = func;
        let fix = |a: u64| if a == u64::MAX { data_at } else { a };
        r.rdi = fix(args[0]);
        r.rsi = fix(args[1]);
        r.rdx = fix(args[2]);
        r.rax = 0;
        r.orig_rax = u64::MAX; // not inside a system call: nothing to restart
        self.set_regs(tid, &r)?;
        let start = Instant::now();
        let mut sig = 0;
        loop {
            // SAFETY: plain ptrace request on a stopped thread.
            if unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, sig) } != 0 {
                return Err(os_err(&format!("resuming thread {tid}")));
            }
            let status = wait_stop(tid)?;
            let got = libc::WSTOPSIG(status);
            let now = self.regs(tid)?;
            if got == libc::SIGSEGV && now.rip == 0 {
                return Ok(now.rax);
            }
            if got == libc::SIGSEGV || got == libc::SIGBUS || got == libc::SIGILL {
                return Err(format!(
                    "the call into process {} faulted ({}) at {:#x}",
                    self.pid,
                    crate::signals::signal_name(got),
                    now.rip
                ));
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("the call into process {} did not return in 30 s", self.pid));
            }
            // another signal (a timer, a child): delivered to the program's handler now;
            // a stop of ours (PTRACE_EVENT_STOP) is resumed without one
            sig = if (status >> 16) == libc::PTRACE_EVENT_STOP { 0 } else { got };
        }
    }

    /// The thread that runs the calls: the main thread when it is stopped in a system call
    /// (it holds no lock of the C library there), else any thread that is.
    fn caller(&self) -> i32 {
        let in_syscall = |tid: i32| {
            std::fs::read_to_string(format!("/proc/{}/task/{tid}/syscall", self.pid))
                .map(|s| !s.starts_with("running") && !s.starts_with("-1"))
                .unwrap_or(false)
        };
        if in_syscall(self.pid) {
            return self.pid;
        }
        self.threads
            .iter()
            .map(|t| t.tid)
            .find(|&t| in_syscall(t))
            .unwrap_or(self.pid)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for t in &self.threads {
            // SAFETY: plain ptrace request; the thread goes on with its pending signal.
            unsafe { libc::ptrace(libc::PTRACE_DETACH, t.tid, 0, t.pending) };
        }
    }
}

/// The load base of `path` in process `pid`: its executable mapping's start less that
/// mapping's file offset (the loader maps each segment at base + p_vaddr, and p_vaddr equals
/// p_offset for the segments of shared objects). A read-only mapping of the whole file (the
/// runtime reads symbol tables that way) is not the loaded object.
fn load_base(pid: i32, path: &Path) -> Result<Option<u64>, String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| format!("/proc/{pid}/maps: {e}"))?;
    let want = path.as_os_str().as_bytes();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 6 && f[1].contains('x') && f[5].as_bytes() == want {
            let start = u64::from_str_radix(f[0].split('-').next().unwrap_or("0"), 16).ok();
            let offset = u64::from_str_radix(f[2], 16).ok();
            return Ok(start.zip(offset).map(|(s, o)| s - o));
        }
    }
    Ok(None)
}

/// The mapped file of process `pid` whose name begins with `prefix` (libc.so.6, ...).
fn mapped_file(pid: i32, prefix: &str) -> Result<Option<PathBuf>, String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| format!("/proc/{pid}/maps: {e}"))?;
    Ok(maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| Path::new(p).file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
        .map(PathBuf::from))
}

/// The address of function `name` of the shared object `path` loaded in process `pid`.
fn symbol_in(pid: i32, path: &Path, name: &str) -> Result<u64, String> {
    let base = load_base(pid, path)?
        .ok_or_else(|| format!("{} is not loaded in process {pid}", path.display()))?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    file.dynamic_symbols()
        .find(|s| s.name() == Ok(name) && s.is_definition())
        .map(|s| base + s.address())
        .ok_or_else(|| format!("{}: no symbol {name}", path.display()))
}

fn cstring(s: &OsStr) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// Loads the runtime into the stopped process and starts it. Returns plx_attach_start's code.
fn start(w: &World, lib: &Path, settings: &[u8]) -> Result<i64, String> {
    let tid = w.caller();
    if load_base(w.pid, lib)?.is_none() {
        let libc_path = mapped_file(w.pid, "libc.so")?
            .ok_or_else(|| format!("process {} has no C library loaded", w.pid))?;
        let dlopen = symbol_in(w.pid, &libc_path, "dlopen")?;
        let handle = w.call(tid, dlopen, &cstring(lib.as_os_str()), [u64::MAX, 2, 0])?;
        if handle == 0 {
            return Err(format!("dlopen of {} failed in process {}", lib.display(), w.pid));
        }
    }
    let start = symbol_in(w.pid, lib, "plx_attach_start")?;
    // settings (NUL-terminated), then the program counters, 8-aligned
    let mut data = settings.to_vec();
    data.push(0);
    while data.len() % 8 != 0 {
        data.push(0);
    }
    let pcs_offset = data.len() as u64;
    let pcs = w.pcs()?;
    for pc in &pcs {
        data.extend_from_slice(&pc.to_le_bytes());
    }
    // the pcs' address is data + offset: passed as a second call argument after the fact
    let rc = call_with_offset(w, tid, start, &data, pcs_offset, pcs.len() as u64)?;
    Ok(rc as i32 as i64)
}

fn call_with_offset(w: &World, tid: i32, func: u64, data: &[u8], off: u64, n: u64) -> Result<u64, String> {
    // the data's address is known only inside call(): place it at the same spot and compute it
    let saved = w.regs(tid)?;
    let data_at = (saved.rsp - 1024 - data.len() as u64) & !15;
    w.call(tid, func, data, [u64::MAX, data_at + off, n])
}

fn stop(w: &World, lib: &Path) -> Result<i64, String> {
    let f = symbol_in(w.pid, lib, "plx_attach_stop")?;
    Ok(w.call(w.caller(), f, &[], [0, 0, 0])? as i32 as i64)
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "process".into())
}

/// `plx attach PID`.
pub fn attach(a: &AttachArgs) -> Result<i32, CliError> {
    let pid = a.pid;
    if !Path::new(&format!("/proc/{pid}")).is_dir() {
        return Err(err(format!("no process {pid}")));
    }
    let lib = crate::run::lib_dir()?.join("libplx.so");
    let lib = std::fs::canonicalize(&lib)
        .map_err(|e| err(format!("runtime library not found: {} ({e})", lib.display())))?;
    let dir = a
        .settings
        .get("PLX_OUTPUT")
        .map_or_else(|| PathBuf::from(format!("plx-{}-{pid}", comm(pid))), PathBuf::from);
    std::fs::create_dir_all(&dir).map_err(|e| err(format!("{}: cannot create: {e}", dir.display())))?;
    let dir = std::fs::canonicalize(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let mut settings = OsString::from("PLX_OUTPUT=");
    settings.push(dir.as_os_str());
    for (s, v) in a.settings.iter() {
        if s.name == "PLX_OUTPUT" {
            continue;
        }
        settings.push(format!("\n{}=", s.name));
        if s.kind == crate::options::Kind::Path {
            settings.push(crate::run::absolute(Path::new(v))?.as_os_str());
        } else {
            settings.push(v);
        }
    }
    let mark = marker(pid);
    if let Some(parent) = mark.parent() {
        std::fs::create_dir_all(parent).map_err(|e| err(format!("{}: {e}", parent.display())))?;
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
    }
    let began = Instant::now();
    {
        let w = World::stop(pid).map_err(err)?;
        match start(&w, &lib, settings.as_bytes()).map_err(err)? {
            0 => {}
            -1 => return Err(err(format!("process {pid} is already measured by Parallax"))),
            -2 => return Err(err("the runtime refused the settings".into())),
            rc => return Err(err(format!("the runtime could not start in process {pid} ({rc})"))),
        }
    }
    eprintln!(
        "plx: attached to process {pid} ({}) in {:.1} ms; measuring into {} until Ctrl-C or `plx detach {pid}`",
        comm(pid),
        began.elapsed().as_secs_f64() * 1e3,
        dir.display()
    );
    std::fs::write(&mark, std::process::id().to_string())
        .map_err(|e| err(format!("{}: {e}", mark.display())))?;
    let deadline = a.duration.map(|s| began + Duration::from_secs_f64(s.max(0.0)));
    let mut alive = true;
    while !STOP.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        if !Path::new(&format!("/proc/{pid}")).is_dir() || zombie(pid) {
            alive = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(&mark);
    if alive {
        // a thread stopped inside the runtime makes the stop wait: let them run a moment
        let mut tries = 0;
        loop {
            let w = World::stop(pid).map_err(err)?;
            match stop(&w, &lib).map_err(err)? {
                -2 if tries < 500 => {}
                -2 => return Err(err(format!("process {pid}: a thread stays inside the runtime; not detached"))),
                _ => break,
            }
            drop(w);
            tries += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        eprintln!("plx: detached from process {pid}; experiment written to {}", dir.display());
    } else {
        eprintln!("plx: process {pid} ended; experiment written to {}", dir.display());
    }
    Ok(0)
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

/// `plx detach PID`: asks the `plx attach` measuring PID to detach, and waits for it.
pub fn detach(a: &DetachArgs) -> Result<i32, CliError> {
    let mark = marker(a.pid);
    let attacher: i32 = std::fs::read_to_string(&mark)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| err(format!("no `plx attach` is measuring process {}", a.pid)))?;
    // SAFETY: kill has no memory preconditions.
    if unsafe { libc::kill(attacher, libc::SIGTERM) } != 0 {
        let _ = std::fs::remove_file(&mark);
        return Err(err(format!("the `plx attach` of process {} is gone", a.pid)));
    }
    let until = Instant::now() + Duration::from_secs(60);
    while Path::new(&format!("/proc/{attacher}")).is_dir() && !zombie(attacher) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(0)
}
