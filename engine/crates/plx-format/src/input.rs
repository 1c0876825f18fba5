//! Opening experiment files without trusting them: regular files only (a FIFO or device never
//! blocks or streams forever), and reads bounded by the bytes a file actually holds (a sparse
//! file claiming gigabytes allocates no more than its data). Every read of a file of an
//! experiment (its own files, `session.txt`, `metrics.*.plx`, the viewer's index) goes through
//! [`open_regular`]: one place decides what is refused.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::trace::read_some_at;

/// An opened regular file, its length, and where its data ends.
pub struct Input {
    /// The open file (non-blocking: only ever a regular file, where that changes nothing).
    pub file: File,
    /// Length the file claims (`st_size`).
    pub len: u64,
    /// Offset of its first hole (`len` if it has none, or the file system cannot tell): the
    /// bytes before it are all present, those after it start with zeros that were never written.
    pub data_end: u64,
}

/// The most bytes a text file of an experiment (`session.txt`, a filter copy) may hold: far
/// more than any written by `plx` (a line per application), so that a file of one endless line
/// is refused rather than read.
pub const TEXT_LIMIT: u64 = 1 << 20;

/// Reads the whole of `path`, a regular file of at most `limit` bytes (a larger one is an error
/// saying so, before anything is read). Errors carry no path: the caller names the file.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let input = open_regular(path)?;
    if input.len > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} bytes, more than the {limit} such a file may hold",
                input.len
            ),
        ));
    }
    input.read_data()
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Opens `path` for reading if it is a regular file (following a symbolic link to one). The
/// open itself never blocks (a FIFO is opened non-blocking, then refused), and a FIFO, device,
/// socket or directory is refused with an error saying which it is.
pub fn open_regular(path: &Path) -> io::Result<Input> {
    open_regular_flags(path, libc::O_NONBLOCK)
}

/// [`open_regular`] without following a symbolic link: a link at `path` fails with `ELOOP`
/// (for files a reader itself keeps, such as the viewer's index, where a link can only have
/// been planted).
pub fn open_regular_nofollow(path: &Path) -> io::Result<Input> {
    open_regular_flags(path, libc::O_NONBLOCK | libc::O_NOFOLLOW)
}

fn open_regular_flags(path: &Path, flags: libc::c_int) -> io::Result<Input> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let what = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else {
            "not a file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({what})"),
        ));
    }
    let len = meta.len();
    let data_end = next_hole(&file, 0).unwrap_or(len).min(len);
    Ok(Input {
        file,
        len,
        data_end,
    })
}

/// Offset of the first hole at or after `from` (`None` when the file system cannot tell).
fn next_hole(file: &File, from: u64) -> Option<u64> {
    // SAFETY: lseek on a descriptor we own; it only moves that descriptor's offset.
    let r = unsafe { libc::lseek(file.as_raw_fd(), from as libc::off_t, libc::SEEK_HOLE) };
    (r >= 0).then_some(r as u64)
}

/// Offset of the first data at or after `from`: `None` when there is none (the rest is a
/// hole); `from` itself when the file system cannot tell (everything counts as data).
fn next_data(file: &File, from: u64) -> Option<u64> {
    // SAFETY: as in next_hole.
    let r = unsafe { libc::lseek(file.as_raw_fd(), from as libc::off_t, libc::SEEK_DATA) };
    if r >= 0 {
        Some(r as u64)
    } else if io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
        None
    } else {
        Some(from)
    }
}

impl Input {
    /// The bytes before the first hole: never more than the file holds.
    pub fn read_data(&self) -> io::Result<Vec<u8>> {
        // read straight into the result, a piece at a time: memory follows what is read (a
        // file that shrank meanwhile gives what it still has), and a small file costs its size
        // (a scratch piece of 1 MiB each, zeroed, was most of the cost of opening thousands)
        let mut out = Vec::new();
        let mut off = 0u64;
        while off < self.data_end {
            let want = ((self.data_end - off) as usize).min(1 << 20);
            let at = out.len();
            out.resize(at + want, 0);
            let got = read_some_at(&self.file, &mut out[at..], off);
            out.truncate(at + got);
            if got == 0 {
                break;
            }
            off += got as u64;
        }
        Ok(out)
    }

    /// Calls `each(offset, bytes)` for the data of `[start, end)`, skipping holes (which read as
    /// zeros), in pieces of at most 1 MiB aligned to `align` bytes from `start`; returns the
    /// bytes visited. Memory is one piece, whatever the file claims.
    pub fn for_each_data(
        &self,
        start: u64,
        end: u64,
        align: u64,
        mut each: impl FnMut(u64, &[u8]),
    ) -> u64 {
        let end = end.min(self.len);
        let piece = (((1u64 << 20) / align).max(1) * align) as usize;
        // no bigger than the span asked for (a small file's scan zeroes no 1 MiB)
        let span = end.saturating_sub(start).div_ceil(align).max(1) * align;
        let mut buf = vec![0u8; piece.min(span as usize)];
        let mut at = start;
        let mut visited = 0;
        while at < end {
            // the piece of items holding the next data byte
            let Some(data) = next_data(&self.file, at) else {
                break;
            };
            if data >= end {
                break;
            }
            let from = start + (data - start) / align * align;
            let hole = next_hole(&self.file, data).unwrap_or(end).min(end);
            let mut off = from;
            while off < hole {
                let want = ((end - off) as usize).min(piece);
                let got = read_some_at(&self.file, &mut buf[..want], off);
                if got == 0 {
                    return visited;
                }
                each(off, &buf[..got]);
                visited += got as u64;
                off += got as u64;
            }
            at = off.max(at + 1);
        }
        visited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_fifo_without_blocking() {
        let dir = std::env::temp_dir().join(format!("plx-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("trace.plx");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo).err().unwrap();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        let e = open_regular(&dir).err().unwrap();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sparse_file_reads_only_its_data() {
        let dir = std::env::temp_dir().join(format!("plx-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, vec![7u8; 5000]).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(1 << 40).unwrap();
        let input = open_regular(&p).unwrap();
        assert_eq!(input.len, 1 << 40);
        // file systems without hole reporting say the whole file is data: then nothing is checked
        if input.data_end < input.len {
            assert!(input.data_end >= 5000 && input.data_end < 1 << 20);
            assert_eq!(input.read_data().unwrap().len() as u64, input.data_end);
            let mut sevens = 0;
            let visited = input.for_each_data(64, 1 << 40, 48, |_, b| {
                sevens += b.iter().filter(|x| **x == 7).count();
            });
            assert!(visited < 1 << 20, "visited {visited}");
            assert_eq!(sevens, 5000 - 64);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
