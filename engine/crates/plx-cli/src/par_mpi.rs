//! The MPI job `plx waits --parallel` runs in: libplx-par.so (Open MPI) or libplx-par-mpich.so (MPICH), chosen by the launcher's environment and loaded at run time, so that plx itself links no MPI.

use std::ffi::{c_char, c_int, c_longlong, c_void, CString};

use plx_analysis::waits::parallel::Exchange;
use plx_analysis::AnalysisError;

use crate::error::{CliError, Exit};

type Init = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type Allgather =
    unsafe extern "C" fn(*const c_void, c_longlong, *mut *mut c_void, *mut c_longlong) -> c_int;
type Free = unsafe extern "C" fn(*mut c_void);
type Send = unsafe extern "C" fn(c_int, *const c_void, c_longlong) -> c_int;
type Recv = unsafe extern "C" fn(c_int, *mut *mut c_void, *mut c_longlong) -> c_int;
type Finalize = unsafe extern "C" fn() -> c_int;
type Abort = unsafe extern "C" fn(c_int);

/// This process's place in the analysis job, and the library's calls.
pub struct Job {
    rank: usize,
    size: usize,
    allgather: Allgather,
    send: Send,
    recv: Recv,
    free: Free,
    finalize: Finalize,
    abort: Abort,
}

/// The library for the MPI that started this process: Open MPI's launcher sets
/// `OMPI_COMM_WORLD_SIZE`, MPICH's (Hydra) `PMI_SIZE`.
fn library() -> Option<&'static str> {
    let set = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
    if set("OMPI_COMM_WORLD_SIZE") {
        Some("libplx-par.so")
    } else if set("PMI_SIZE") || set("PMI_RANK") {
        Some("libplx-par-mpich.so")
    } else {
        None
    }
}

fn symbol<T: Copy>(lib: *mut c_void, name: &str) -> Result<T, CliError> {
    let c = CString::new(name).expect("no NUL");
    // SAFETY: `lib` is a handle dlopen returned; the symbol's type is the C declaration's
    let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
    if p.is_null() {
        return Err(CliError::new(
            Exit::Environment,
            format!("plx waits --parallel: {name} missing from the MPI library"),
        ));
    }
    // SAFETY: a function pointer of the C declaration's type (T is one of the types above)
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

impl Job {
    /// Joins the MPI job this process was started in (by `mpirun`).
    pub fn start() -> Result<Job, CliError> {
        let name = library().ok_or_else(|| {
            CliError::new(
                Exit::Usage,
                "plx waits --parallel runs as an MPI job: start it with mpirun, e.g. \
                 `mpirun -np 4 plx waits --parallel DIR` (Open MPI or MPICH)"
                    .to_string(),
            )
        })?;
        let path = crate::run::lib_dir()?.join(name);
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
            CliError::new(Exit::Environment, format!("{}: bad path", path.display()))
        })?;
        // SAFETY: a path; RTLD_GLOBAL as Open MPI's components resolve MPI's symbols through it
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if lib.is_null() {
            // SAFETY: dlerror's message, valid until the next dl call
            let why = unsafe { std::ffi::CStr::from_ptr(libc::dlerror() as *const c_char) };
            return Err(CliError::new(
                Exit::Environment,
                format!(
                    "plx waits --parallel: cannot load {}: {} (build it with `make runtime`)",
                    path.display(),
                    why.to_string_lossy()
                ),
            ));
        }
        let init: Init = symbol(lib, "plx_par_init")?;
        let (mut rank, mut size) = (0, 0);
        // SAFETY: two ints to fill
        if unsafe { init(&mut rank, &mut size) } != 0 || size < 1 {
            return Err(CliError::new(
                Exit::Environment,
                "plx waits --parallel: MPI_Init failed".to_string(),
            ));
        }
        Ok(Job {
            rank: rank as usize,
            size: size as usize,
            allgather: symbol(lib, "plx_par_allgather")?,
            send: symbol(lib, "plx_par_send")?,
            recv: symbol(lib, "plx_par_recv")?,
            free: symbol(lib, "plx_par_free")?,
            finalize: symbol(lib, "plx_par_finalize")?,
            abort: symbol(lib, "plx_par_abort")?,
        })
    }

    /// MPI_Finalize. The process then ends by [`end`].
    pub fn finish(self) {
        // SAFETY: after every collective call
        unsafe { (self.finalize)() };
        FINALIZED.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Ends the whole job (a rank that failed: the others would wait for it forever).
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: MPI_Abort does not return
        unsafe { (self.abort)(code) };
        std::process::exit(code)
    }
}

impl Exchange for Job {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn allgather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, AnalysisError> {
        let mut lens = vec![0 as c_longlong; self.size];
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `bytes` is readable for its length; `lens` has one entry per rank
        let rc = unsafe {
            (self.allgather)(
                bytes.as_ptr() as *const c_void,
                bytes.len() as c_longlong,
                &mut out,
                lens.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(AnalysisError::Parallel(match rc {
                -2 => "the exchange is over 2 GiB (MPI's int counts): use more analysis ranks"
                    .to_string(),
                _ => format!("MPI_Allgatherv failed ({rc})"),
            }));
        }
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        // SAFETY: the library malloc'ed `total` bytes at `out`, freed below
        let all = unsafe { std::slice::from_raw_parts(out as *const u8, total) };
        let mut parts = Vec::with_capacity(self.size);
        let mut at = 0;
        for &l in &lens {
            parts.push(all[at..at + l as usize].to_vec());
            at += l as usize;
        }
        // SAFETY: the library's buffer, not used after
        unsafe { (self.free)(out) };
        Ok(parts)
    }

    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), AnalysisError> {
        // SAFETY: `bytes` is readable for its length; the library sends a copy
        let rc = unsafe {
            (self.send)(
                to as c_int,
                bytes.as_ptr() as *const c_void,
                bytes.len() as c_longlong,
            )
        };
        match rc {
            0 => Ok(()),
            -2 => Err(AnalysisError::Parallel(
                "an exchange of over 2 GiB (MPI's int counts)".to_string(),
            )),
            _ => Err(AnalysisError::Parallel(format!("MPI_Isend failed ({rc})"))),
        }
    }

    fn recv(&self, from: usize) -> Result<Vec<u8>, AnalysisError> {
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut len: c_longlong = 0;
        // SAFETY: two out-parameters to fill
        let rc = unsafe { (self.recv)(from as c_int, &mut out, &mut len) };
        if rc != 0 {
            return Err(AnalysisError::Parallel(format!("MPI_Recv failed ({rc})")));
        }
        // SAFETY: the library malloc'ed `len` bytes at `out`, freed below
        let v = unsafe { std::slice::from_raw_parts(out as *const u8, len as usize) }.to_vec();
        // SAFETY: the library's buffer, not used after
        unsafe { (self.free)(out) };
        Ok(v)
    }
}

static FINALIZED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends a process that joined an MPI job with status `code`, its output flushed. After
/// MPI_Finalize it skips the exit handlers and library destructors (`_exit`): Open MPI's, in
/// the library loaded with dlopen, crashed a rank at its exit now and then (SIGSEGV after its
/// whole output, `plx waits --parallel` under load), turning a finished analysis into a failed
/// job.
pub fn end(code: i32) -> ! {
    if FINALIZED.load(std::sync::atomic::Ordering::SeqCst) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: _exit ends the process; every output this process writes is flushed above
        unsafe { libc::_exit(code) };
    }
    std::process::exit(code)
}
