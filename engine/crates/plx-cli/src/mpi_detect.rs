//! Which MPI wrapper library `plx run` preloads: the one for the MPI the program links, or for
//! the launcher's MPI when the program is a launcher whose ranks inherit the environment
//! (`plx run -- mpirun -np 4 ./app`). None for a program without MPI.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// An MPI implementation with a wrapper library of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MpiImpl {
    /// Open MPI: `libplx-mpi.so`.
    OpenMpi,
    /// MPICH: `libplx-mpi-mpich.so`.
    Mpich,
}

impl MpiImpl {
    /// File name of its wrapper library beside libplx.so (launchers.c: the name the runtime
    /// adds for a launcher started by a script).
    pub fn library(self) -> &'static str {
        let mpi = match self {
            MpiImpl::OpenMpi => PLX_MPI_OPEN_MPI,
            MpiImpl::Mpich => PLX_MPI_MPICH,
        };
        // SAFETY: a static NUL-terminated ASCII string of launchers.c.
        unsafe { std::ffi::CStr::from_ptr(plx_mpi_wrapper(mpi)) }
            .to_str()
            .unwrap_or_default()
    }
}

/// launchers.h's MPI implementations.
const PLX_MPI_OPEN_MPI: std::ffi::c_int = 1;
const PLX_MPI_MPICH: std::ffi::c_int = 2;

extern "C" {
    /// runtime/src/core/launchers.c: 0 none, 1 a job launcher, 2 a launcher's or Parallax's
    /// helper (compiled in by build.rs: the list the runtime uses).
    fn plx_launcher_kind(name: *const std::ffi::c_char) -> std::ffi::c_int;
    /// launchers.c: the MPI of a job launcher by its executable's file name, links followed.
    fn plx_launcher_mpi(real_name: *const std::ffi::c_char) -> std::ffi::c_int;
    /// launchers.c: the wrapper library's file name of an MPI.
    fn plx_mpi_wrapper(mpi: std::ffi::c_int) -> *const std::ffi::c_char;
}

/// A job launcher's kind (launchers.h).
const LAUNCHER_JOB: std::ffi::c_int = 1;

/// What the runtime's list says of file name `name`: 0 none, 1 a job launcher, 2 a helper.
pub(crate) fn launcher_kind(name: &str) -> std::ffi::c_int {
    let Ok(c) = std::ffi::CString::new(name) else {
        return 0;
    };
    // SAFETY: a NUL-terminated string the call only reads.
    unsafe { plx_launcher_kind(c.as_ptr()) }
}

/// Whether `program` is an MPI launcher (`mpirun`, `mpiexec.hydra`, `srun`, ...).
pub fn is_launcher(program: impl AsRef<OsStr>) -> bool {
    let program = program.as_ref();
    launcher_kind(&file_name(Path::new(program))) == LAUNCHER_JOB
}

/// The file `program` names: itself if it contains a slash, else the first match on PATH.
pub fn resolve(program: impl AsRef<OsStr>) -> Option<PathBuf> {
    let program = program.as_ref();
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// The MPI the program uses, if any.
pub fn mpi_of(program: impl AsRef<OsStr>) -> Option<MpiImpl> {
    let program = program.as_ref();
    let base = file_name(Path::new(program));
    let path = resolve(program);
    if launcher_kind(&base) == LAUNCHER_JOB {
        // the alternatives' symlinks lead to the implementation's own launcher
        let real = path
            .and_then(|p| std::fs::canonicalize(p).ok())
            .map(|p| file_name(&p))
            .unwrap_or(base);
        let c = std::ffi::CString::new(real).unwrap_or_default();
        // SAFETY: a NUL-terminated string the call only reads.
        return Some(
            if unsafe { plx_launcher_mpi(c.as_ptr()) } == PLX_MPI_MPICH {
                MpiImpl::Mpich
            } else {
                MpiImpl::OpenMpi
            },
        );
    }
    linked_mpi(&path?)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The MPI among the libraries `program` needs, directly or through another library
/// (app → libpetsc → libmpi): the dynamic sections' needed-library closure.
fn linked_mpi(program: &Path) -> Option<MpiImpl> {
    let libs = plx_analysis::objects::needed_libraries(program);
    let names: Vec<String> = libs.iter().map(|p| file_name(p)).collect();
    if names.iter().any(|n| n.starts_with("libmpich.so")) {
        Some(MpiImpl::Mpich)
    } else if names.iter().any(|n| n.starts_with("libmpi.so")) {
        Some(MpiImpl::OpenMpi)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_and_linked_programs() {
        assert!(mpi_of("mpirun").is_some());
        assert_eq!(mpi_of("/no/such/mpiexec.hydra"), Some(MpiImpl::Mpich));
        assert_eq!(mpi_of("/no/such/mpirun.openmpi"), Some(MpiImpl::OpenMpi));
        assert_eq!(mpi_of("/bin/true"), None);
    }

    /// app → libfoo.so → libNAME.so (a stand-in library of the MPI's name, so no MPI needed).
    fn through_library(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("plx-mpi-detect-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let script = format!(
            "echo 'int mpi_stand_in(void) {{ return 1; }}' > m.c && \
             cc -shared -fPIC m.c -Wl,-soname,lib{name}.so.12 -o lib{name}.so.12 && \
             ln -sf lib{name}.so.12 lib{name}.so && \
             echo 'int mpi_stand_in(void); int foo(void) {{ return mpi_stand_in(); }}' > foo.c && \
             cc -shared -fPIC foo.c -L. -l{name} -Wl,-rpath,'$ORIGIN' -o libfoo.so && \
             echo 'int foo(void); int main(void) {{ return foo(); }}' > app.c && \
             cc app.c -L. -lfoo -Wl,-rpath,'$ORIGIN' -o app"
        );
        let st = std::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success());
        dir.join("app")
    }

    #[test]
    fn mpi_linked_through_another_library() {
        let app = through_library("mpi");
        assert_eq!(mpi_of(app.to_str().unwrap()), Some(MpiImpl::OpenMpi));
        let app = through_library("mpich");
        assert_eq!(mpi_of(app.to_str().unwrap()), Some(MpiImpl::Mpich));
        let app = through_library("notmpi");
        assert_eq!(mpi_of(app.to_str().unwrap()), None);
    }
}
