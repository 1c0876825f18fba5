//! `plx attach PID` and `plx detach PID`: measuring a process that is already running (Paradyn's
//! instrumentation of running programs).
//!
//! Attach stops every thread of the process with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT, so no
//! signal is sent to it), makes one of them call the process's own `dlopen` on libplx.so and
//! then `plx_attach_start(settings, pcs, n)` (the option table's NAME=VALUE lines, and where the
//! stopped threads are so that no probe displaces bytes under one), restores that thread's
//! registers and lets the process go. The runtime then serves its control socket (ctl.rs):
//! detach is a `detach` request on it, done by the runtime itself (every probe removed, the
//! experiment finished, the process left running). libplx.so stays loaded (frames entered while
//! measured still return through its exit trampoline).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use object::{Object, ObjectSymbol};

use crate::{CliError, Exit};

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
    CliError::new(Exit::Environment, msg)
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// A thread of the traced process, stopped.
struct Stopped {
    tid: i32,
    /// A signal that arrived while stopping it, given back when it is released.
    pending: i32,
}

/// Where an injected call's data block goes: below the stopped thread's red zone, 16-aligned.
fn data_address(saved: &libc::user_regs_struct, len: usize) -> u64 {
    (saved.rsp - 1024 - len as u64) & !15
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
        let mut w = World {
            pid,
            threads: Vec::new(),
            mem,
        };
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
        self.threads
            .iter()
            .map(|t| Ok(self.regs(t.tid)?.rip))
            .collect()
    }

    /// Makes thread `tid` call `func(args)` with `block` copied onto its stack (arguments made
    /// with AT are offsets into it). Returns rax. The thread's registers are restored whatever
    /// happens.
    fn call_block(
        &self,
        tid: i32,
        func: u64,
        block: &Block,
        args: [u64; 5],
    ) -> Result<u64, String> {
        let saved = self.regs(tid)?;
        let result = self.call_inner(tid, &saved, func, &block.bytes, args);
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
        args: [u64; 5],
    ) -> Result<u64, String> {
        // below the red zone (128 bytes), 16-aligned, then a return address of 0: the call ends
        // with a fault at address 0 that we catch and never deliver
        let data_at = data_address(saved, data.len());
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
        let fix = |a: u64| if a & AT != 0 { data_at + (a & !AT) } else { a };
        r.rdi = fix(args[0]);
        r.rsi = fix(args[1]);
        r.rdx = fix(args[2]);
        r.rcx = fix(args[3]);
        r.r8 = fix(args[4]);
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
                    "the call into process {} faulted ({}) at {:#x}{}",
                    self.pid,
                    crate::signals::signal_name(got),
                    now.rip,
                    where_in(self.pid, now.rip)
                ));
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!(
                    "the call into process {} did not return in 30 s",
                    self.pid
                ));
            }
            // another signal (a timer, a child): delivered to the program's handler now;
            // a stop of ours (PTRACE_EVENT_STOP) is resumed without one
            sig = if (status >> 16) == libc::PTRACE_EVENT_STOP {
                0
            } else {
                got
            };
        }
    }

    /// Has the main thread left the dynamic loader? (a thread pointer set, and not executing
    /// the loader's code)
    fn past_loader(&self) -> Result<bool, String> {
        let r = self.regs(self.pid)?;
        if r.fs_base == 0 {
            return Ok(false);
        }
        Ok(!where_in(self.pid, r.rip).contains("/ld-linux"))
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

/// " (FILE+0xOFFSET)": where `address` of process `pid` is, for an error message.
fn where_in(pid: i32, address: u64) -> String {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some((lo, hi)) = f.first().and_then(|r| r.split_once('-')) else {
            continue;
        };
        let (Ok(lo), Ok(hi), Some(off)) = (
            u64::from_str_radix(lo, 16),
            u64::from_str_radix(hi, 16),
            f.get(2).and_then(|o| u64::from_str_radix(o, 16).ok()),
        ) else {
            continue;
        };
        if (lo..hi).contains(&address) {
            let name = f.get(5).copied().unwrap_or("anonymous memory");
            return format!(" ({name}+{:#x})", address - lo + off);
        }
    }
    String::new()
}

/// The mapped file of process `pid` whose name begins with `prefix` (libc.so.6, ...).
fn mapped_file(pid: i32, prefix: &str) -> Result<Option<PathBuf>, String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| format!("/proc/{pid}/maps: {e}"))?;
    Ok(maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
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

/// Loads the runtime into the stopped process and starts it. Returns plx_attach_start's code.
fn start(w: &World, lib: &Path, settings: &[u8]) -> Result<i64, String> {
    let tid = w.caller();
    if load_base(w.pid, lib)?.is_none() {
        let libc_path = mapped_file(w.pid, "libc.so")?
            .ok_or_else(|| format!("process {} has no C library loaded", w.pid))?;
        let dlopen = symbol_in(w.pid, &libc_path, "dlopen")?;
        let mut block = Block::default();
        let path = block.string(lib.as_os_str().as_bytes());
        let handle = w.call_block(tid, dlopen, &block, [path, 2, 0, 0, 0])?;
        if handle == 0 {
            return Err(format!(
                "dlopen of {} failed in process {}",
                lib.display(),
                w.pid
            ));
        }
    }
    let start = symbol_in(w.pid, lib, "plx_attach_start")?;
    let mut block = Block::default();
    let settings_at = block.string(settings);
    let (pcs_at, n) = block.pcs(&w.pcs()?);
    let rc = w.call_block(tid, start, &block, [settings_at, pcs_at, n, 0, 0])?;
    Ok(rc as i32 as i64)
}

/// Data copied onto the calling thread's stack for an injected call; arguments refer to its
/// parts by offset (marked with AT), made addresses once its place is known.
#[derive(Default)]
struct Block {
    bytes: Vec<u8>,
}

/// An offset into a Block, marked so call_block can tell it from a plain value.
const AT: u64 = 1 << 63;

impl Block {
    fn align(&mut self) {
        while self.bytes.len() % 8 != 0 {
            self.bytes.push(0);
        }
    }
    fn string(&mut self, s: &[u8]) -> u64 {
        self.align();
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        AT | at
    }
    fn pcs(&mut self, pcs: &[u64]) -> (u64, u64) {
        self.align();
        let at = self.bytes.len() as u64;
        for pc in pcs {
            self.bytes.extend_from_slice(&pc.to_le_bytes());
        }
        (AT | at, pcs.len() as u64)
    }
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
    let lib = std::fs::canonicalize(&lib).map_err(|e| {
        err(format!(
            "runtime library not found: {} ({e})",
            lib.display()
        ))
    })?;
    let dir = a.settings.get("PLX_OUTPUT").map_or_else(
        || PathBuf::from(format!("plx-{}-{pid}", comm(pid))),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir)
        .map_err(|e| err(format!("{}: cannot create: {e}", dir.display())))?;
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
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_stop_signal as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            on_stop_signal as *const () as libc::sighandler_t,
        );
    }
    let began = Instant::now();
    // a process just started may still be in its dynamic loader (no C library mapped yet):
    // give it a moment to get to its own code
    while mapped_file(pid, "libc.so").map_err(err)?.is_none()
        && began.elapsed() < Duration::from_secs(2)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    {
        // the main thread may still be in the dynamic loader (no thread pointer yet, or the
        // loader's own code): a dlopen made there faults; let it reach the program
        let w = loop {
            let w = World::stop(pid).map_err(err)?;
            if w.past_loader().map_err(err)? || began.elapsed() > Duration::from_secs(5) {
                break w;
            }
            drop(w);
            std::thread::sleep(Duration::from_millis(5));
        };
        match start(&w, &lib, settings.as_bytes()).map_err(err)? {
            0 => {}
            -1 => {
                return Err(err(format!(
                    "process {pid} is already measured by Parallax"
                )))
            }
            -2 => return Err(err("the runtime refused the settings".into())),
            rc => {
                return Err(err(format!(
                    "the runtime could not start in process {pid} ({rc})"
                )))
            }
        }
    }
    eprintln!(
        "plx: attached to process {pid} ({}) in {:.1} ms; measuring into {} until Ctrl-C or `plx detach {pid}`",
        comm(pid),
        began.elapsed().as_secs_f64() * 1e3,
        dir.display()
    );
    if crate::ctl::socket_of(pid)?.is_none() {
        return Err(err(format!(
            "process {pid}: the runtime opened no control socket (see its warning); it measures \
             until it ends"
        )));
    }
    let deadline = a
        .duration
        .map(|s| began + Duration::from_secs_f64(s.max(0.0)));
    let mut detached_by_other = false;
    while !STOP.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        if !Path::new(&format!("/proc/{pid}")).is_dir() || zombie(pid) {
            eprintln!(
                "plx: process {pid} ended; experiment written to {}",
                dir.display()
            );
            return Ok(0);
        }
        // an error here is the process ending meanwhile: the next turn sees it
        if let Ok(None) = crate::ctl::socket_of(pid) {
            detached_by_other = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !detached_by_other {
        detach_now(pid)?;
    }
    eprintln!(
        "plx: detached from process {pid}; experiment written to {}",
        dir.display()
    );
    Ok(0)
}

/// Asks the runtime of `pid` to detach over its control socket; done when it replies.
fn detach_now(pid: i32) -> Result<(), CliError> {
    match crate::ctl::request(pid, "detach") {
        Ok(_) => Ok(()),
        // it ended, or was detached, meanwhile: nothing left to do
        Err(_) if crate::ctl::socket_of(pid).ok().flatten().is_none() => Ok(()),
        Err(e) => Err(e),
    }
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// `plx detach PID`: the runtime of the process removes every probe and finishes the experiment
/// (over its control socket); the process goes on unmeasured.
pub fn detach(a: &DetachArgs) -> Result<i32, CliError> {
    crate::ctl::request(a.pid, "detach")?;
    Ok(0)
}
