//! Which MPI wrapper library `plx run` preloads: the one for the MPI the program links, or for
//! the launcher's MPI when the program is a launcher whose ranks inherit the environment
//! (`plx run -- mpirun -np 4 ./app`). None for a program without MPI.

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
    /// File name of its wrapper library beside libplx.so.
    pub fn library(self) -> &'static str {
        match self {
            MpiImpl::OpenMpi => "libplx-mpi.so",
            MpiImpl::Mpich => "libplx-mpi-mpich.so",
        }
    }
}

const LAUNCHERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "orterun",
    "srun",
    "mpirun.openmpi",
    "mpiexec.openmpi",
    "mpiexec.hydra",
    "mpirun.mpich",
    "mpiexec.mpich",
];

/// The file `program` names: itself if it contains a slash, else the first match on PATH.
pub fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// The MPI the program uses, if any.
pub fn mpi_of(program: &str) -> Option<MpiImpl> {
    let base = file_name(Path::new(program));
    let path = resolve(program);
    if LAUNCHERS.contains(&base.as_str()) {
        // the alternatives' symlinks lead to the implementation's own launcher
        let real = path
            .and_then(|p| std::fs::canonicalize(p).ok())
            .map(|p| file_name(&p))
            .unwrap_or(base);
        return Some(if real.contains("mpich") || real.contains("hydra") {
            MpiImpl::Mpich
        } else {
            MpiImpl::OpenMpi
        });
    }
    std::fs::read(path?)
        .ok()
        .and_then(|bytes| linked_mpi(&bytes))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The needed-library names live in the dynamic string table: a substring test is enough.
fn linked_mpi(elf: &[u8]) -> Option<MpiImpl> {
    if !elf.starts_with(b"\x7fELF") {
        return None;
    }
    let has = |needle: &[u8]| elf.windows(needle.len()).any(|w| w == needle);
    if has(b"libmpich.so") {
        Some(MpiImpl::Mpich)
    } else if has(b"libmpi.so") {
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
        assert_eq!(
            linked_mpi(b"\x7fELF....libmpi.so.40\0"),
            Some(MpiImpl::OpenMpi)
        );
        assert_eq!(
            linked_mpi(b"\x7fELF....libmpich.so.12\0"),
            Some(MpiImpl::Mpich)
        );
        assert_eq!(linked_mpi(b"libmpi.so.40"), None);
    }
}
