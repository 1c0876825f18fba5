//! Output written under a temporary name beside its destination and moved into place only once
//! complete: a write that fails (disk full, a file size limit, an error) leaves no empty or
//! partial file under the name the user gave, and an earlier file there intact. A destination
//! that exists and is no regular file or directory (`/dev/null`, a FIFO, a terminal) is written
//! directly: renaming onto it would replace the device with a file.
//!
//! A writer killed midway leaves its temporary name behind: the next file or directory staged
//! in the same directory removes every `.NAME.plx-tmp-PID-START` there whose writer no longer
//! runs (and that belongs to the same user). A writer is its process id and its start time
//! (field 22 of `/proc/PID/stat`, clock ticks since boot), which no later process has: a process
//! that got the id of a dead writer neither keeps the dead writer's files nor loses its own.
//! Names of the older form `.NAME.plx-tmp-PID` are judged by the id alone.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const TEMP_MARK: &str = ".plx-tmp-";

/// The directory `dest` is written in.
fn dir_of(dest: &Path) -> PathBuf {
    match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The start time of process `pid` (clock ticks after boot), `None` when it does not run or
/// /proc cannot tell. The command name in parentheses may hold anything: the fields are read
/// after its last `)`.
fn start_time(pid: &str) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    // fields 3 (state) onwards: the start time is field 22
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// `.<name>.plx-tmp-<pid>-<start>` in the directory of `dest` (`-<start>` left out when /proc
/// cannot tell).
fn temp_name(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let me = std::process::id();
    let writer = match start_time("self") {
        Some(start) => format!("{me}-{start}"),
        None => me.to_string(),
    };
    dir_of(dest).join(format!(".{name}{TEMP_MARK}{writer}"))
}

/// The writer of a temporary name `.<name>.plx-tmp-<pid>[-<start>]`: its process id and start
/// time (`None` in the older form).
fn temp_writer(file_name: &std::ffi::OsStr) -> Option<(u32, Option<u64>)> {
    let name = file_name.to_str()?;
    let (stem, writer) = name.rsplit_once(TEMP_MARK)?;
    if !stem.starts_with('.') || stem.len() < 2 {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match writer.split_once('-') {
        Some((pid, start)) if digits(pid) && digits(start) => {
            Some((pid.parse().ok()?, Some(start.parse().ok()?)))
        }
        None if digits(writer) => Some((writer.parse().ok()?, None)),
        _ => None,
    }
}

/// Whether the writer (process `pid`, started at `start`) still runs on this machine; `true`
/// when /proc cannot tell. Shared with `plx run`, which judges the MPI clock exchange's
/// markers (`HOST.PID-START`) by it.
pub fn alive(pid: u32, start: Option<u64>) -> bool {
    if start_time("self").is_none() {
        return true;
    }
    match (start_time(&pid.to_string()), start) {
        (None, _) => false,
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
    }
}

/// Removes the temporary files and directories of dead writers in the directory of `dest`
/// (only the user's own: a shared directory may hold another user's).
pub fn remove_stale(dest: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir_of(dest)) else {
        return;
    };
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    for e in entries.flatten() {
        let Some((pid, start)) = temp_writer(&e.file_name()) else {
            continue;
        };
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if alive(pid, start) || me.is_some_and(|u| u != meta.uid()) {
            continue;
        }
        let _ = if meta.is_dir() {
            std::fs::remove_dir_all(e.path())
        } else {
            std::fs::remove_file(e.path())
        };
    }
}

/// A file being written under a temporary name; [`StagedFile::commit`] renames it to its
/// destination, dropping it uncommitted removes it.
pub struct StagedFile {
    dest: PathBuf,
    /// `None`: written directly (a device or FIFO).
    temp: Option<PathBuf>,
    out: Option<BufWriter<File>>,
    done: bool,
}

/// Whether `dest` exists as something other than a regular file or a directory.
fn is_special(dest: &Path) -> bool {
    std::fs::metadata(dest).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

impl StagedFile {
    /// Creates the temporary file beside `dest` (the same file system, so the rename is atomic).
    pub fn create(dest: &Path) -> io::Result<StagedFile> {
        let (temp, f) = if is_special(dest) {
            (None, std::fs::OpenOptions::new().write(true).open(dest)?)
        } else {
            remove_stale(dest);
            let temp = temp_name(dest);
            let f = File::create(&temp)?;
            (Some(temp), f)
        };
        Ok(StagedFile {
            dest: dest.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(1 << 16, f)),
            done: false,
        })
    }

    /// Flushes the data to the disk and renames the file to its destination.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self.out.take().expect("committed once");
        let f = out.into_inner().map_err(|e| e.into_error())?;
        if let Some(temp) = &self.temp {
            f.sync_all()?;
            drop(f);
            std::fs::rename(temp, &self.dest)?;
        }
        self.done = true;
        Ok(())
    }
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("not committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("not committed").flush()
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.done {
            // a failed flush here is of a file about to be removed
            drop(self.out.take());
            if let Some(temp) = &self.temp {
                let _ = std::fs::remove_file(temp);
            }
        }
    }
}

/// A directory being filled under a temporary name; [`StagedDir::commit`] moves it (or, when
/// the destination directory already exists, each of its entries) into place, dropping it
/// uncommitted removes it.
pub struct StagedDir {
    dest: PathBuf,
    temp: PathBuf,
    done: bool,
}

impl StagedDir {
    /// Creates the temporary directory beside `dest`.
    pub fn create(dest: &Path) -> io::Result<StagedDir> {
        remove_stale(dest);
        let temp = temp_name(dest);
        let _ = std::fs::remove_dir_all(&temp);
        if let Some(p) = temp.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::create_dir(&temp)?;
        Ok(StagedDir {
            dest: dest.to_path_buf(),
            temp,
            done: false,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Moves the written entries into place.
    pub fn commit(mut self) -> io::Result<()> {
        if std::fs::rename(&self.temp, &self.dest).is_err() {
            std::fs::create_dir_all(&self.dest)?;
            for e in std::fs::read_dir(&self.temp)? {
                let e = e?;
                let to = self.dest.join(e.file_name());
                if to.is_dir() && e.path().is_dir() {
                    std::fs::remove_dir_all(&to)?;
                }
                std::fs::rename(e.path(), to)?;
            }
            std::fs::remove_dir(&self.temp)?;
        }
        self.done = true;
        Ok(())
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn a_device_is_written_not_replaced() {
        let dev = Path::new("/dev/null");
        let mut f = StagedFile::create(dev).unwrap();
        f.write_all(b"discarded\n").unwrap();
        f.commit().unwrap();
        assert!(std::fs::metadata(dev).unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_fifo_is_written_not_replaced() {
        let d = plx_format::test_dir::tmp("staged-fifo");
        let fifo = d.join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut f = StagedFile::create(&fifo).unwrap();
        f.write_all(b"through the pipe").unwrap();
        f.commit().unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(
            std::fs::read_dir(&*d).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    /// A process that has ended (reaped).
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    /// An export killed midway left its temporary file forever: the next file staged in the
    /// same directory removes it (and a dead writer's directory), never a live writer's.
    #[test]
    fn stale_temporary_files_are_removed() {
        let d = plx_format::test_dir::tmp("staged-stale");
        let dead = dead_pid();
        let stale_file = d.join(format!(".old.json.plx-tmp-{dead}"));
        let stale_dir = d.join(format!(".otf2.plx-tmp-{dead}"));
        std::fs::write(&stale_file, vec![0u8; 4096]).unwrap();
        std::fs::create_dir(&stale_dir).unwrap();
        std::fs::write(stale_dir.join("traces.otf2"), "x").unwrap();
        let live = d.join(".other.json.plx-tmp-1");
        std::fs::write(&live, "init's").unwrap();
        let unrelated = d.join(".notes.plx-tmp-x1");
        std::fs::write(&unrelated, "mine").unwrap();
        let mut f = StagedFile::create(&d.join("new.json")).unwrap();
        f.write_all(b"{}").unwrap();
        f.commit().unwrap();
        assert!(!stale_file.exists() && !stale_dir.exists());
        let mut left: Vec<String> = std::fs::read_dir(&*d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![".notes.plx-tmp-x1", ".other.json.plx-tmp-1", "new.json"]
        );
    }

    /// The writer was known by its process id alone: a file of a dead writer whose id a live
    /// process got again was kept forever, and a live writer's file was removed when a dead
    /// process of its id was judged. Now the start time tells them apart.
    #[test]
    fn a_reused_process_id_neither_keeps_a_dead_writers_file_nor_removes_a_live_ones() {
        let d = plx_format::test_dir::tmp("staged-reused-pid");
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let start = start_time(&pid.to_string()).unwrap();
        // a dead writer whose id `sleep` got later (it started at another time)
        let reused = d.join(format!(".old.json.plx-tmp-{pid}-{}", start - 1));
        // the live writer itself
        let live = d.join(format!(".cur.json.plx-tmp-{pid}-{start}"));
        // a dead writer whose id no process has
        let dead = d.join(format!(".gone.otf2.plx-tmp-{}-{start}", dead_pid()));
        for f in [&reused, &live, &dead] {
            std::fs::write(f, "x").unwrap();
        }
        let mut f = StagedFile::create(&d.join("new.json")).unwrap();
        f.write_all(b"{}").unwrap();
        f.commit().unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&*d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let _ = child.kill();
        let _ = child.wait();
        let live_name = live.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(left, vec![live_name, "new.json".to_string()]);
        // this process's own name carries its start time
        let own = temp_name(&d.join("x"));
        let me = format!("{}-{}", std::process::id(), start_time("self").unwrap());
        assert!(own.to_string_lossy().ends_with(&me), "{own:?}");
    }

    extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }
}
