//! Whether `plx run` preloads the MPI wrappers: the program links an MPI library, or it is an
//! MPI launcher whose ranks inherit the environment (`plx run -- mpirun -np 4 ./app`).

use std::path::{Path, PathBuf};

const LAUNCHERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "orterun",
    "mpirun.openmpi",
    "mpiexec.openmpi",
    "mpiexec.hydra",
    "mpirun.mpich",
    "mpiexec.mpich",
    "srun",
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

/// True when the program is an MPI launcher or its dynamic section names an MPI library.
pub fn wants_mpi(program: &str) -> bool {
    let base = Path::new(program)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    if LAUNCHERS.contains(&base.as_str()) {
        return true;
    }
    let Some(path) = resolve(program) else {
        return false;
    };
    match std::fs::read(&path) {
        Ok(bytes) => links_mpi(&bytes),
        Err(_) => false,
    }
}

/// The needed-library names live in the dynamic string table: a substring test is enough.
fn links_mpi(elf: &[u8]) -> bool {
    if !elf.starts_with(b"\x7fELF") {
        return false;
    }
    [&b"libmpi.so"[..], b"libmpich.so"]
        .iter()
        .any(|needle| elf.windows(needle.len()).any(|w| w == *needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_and_linked_programs() {
        assert!(wants_mpi("mpirun"));
        assert!(wants_mpi("/usr/bin/mpiexec"));
        assert!(!wants_mpi("/bin/true"));
        assert!(links_mpi(b"\x7fELF....libmpi.so.40\0"));
        assert!(!links_mpi(b"libmpi.so.40"));
    }
}
