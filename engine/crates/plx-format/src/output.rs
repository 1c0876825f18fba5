//! Creating files inside an experiment directory, which other users may be able to write: a
//! file is only ever created new (`O_CREAT | O_EXCL | O_NOFOLLOW`), never opened through a name
//! someone else could have planted (a symlink to their victim, or a file of theirs).

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates `path` for writing (mode 0644); fails with `AlreadyExists` when the name exists,
/// a symlink included, whatever it points to.
pub fn create_new(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
}

/// Creates `path` new, replacing the name if it holds a file or a symlink (the name goes; what
/// a symlink points to is never touched). A directory is left and refused.
pub fn create_replacing(path: &Path) -> io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a directory is in the way",
            ))
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(_) => {}
    }
    create_new(path)
}

/// Writes `bytes` to `path` whole or not at all: into a new temporary file beside it (named
/// `.NAME.tmp-PID`), renamed into place, so readers see the old file or the new one.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = create_replacing(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_symlink_is_replaced_and_its_target_left_alone() {
        let dir = crate::test_dir::tmp("output-symlink");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let name = dir.join("source-files");
        std::os::unix::fs::symlink(&victim, &name).unwrap();
        let err = create_new(&name).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        write_replacing(&name, b"ours").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&name).unwrap(), b"ours");
        assert!(!std::fs::symlink_metadata(&name).unwrap().is_symlink());
        std::os::unix::fs::symlink(&victim, dir.join("m")).unwrap();
        drop(create_replacing(&dir.join("m")).unwrap());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }
}
