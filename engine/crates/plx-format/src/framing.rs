//! File header and record framing: walks records of a file, classifying damage as warnings.

use std::path::Path;

use crate::warning::{Warning, WarningKind};

/// The file magic.
pub const MAGIC: &[u8; 4] = b"PLX1";
/// The format version this crate writes; it reads every version from 1 up to it.
pub const VERSION: u16 = crate::schema::FORMAT_VERSION;
/// Size of the file header.
pub const FILE_HEADER_LEN: u64 = 16;
/// Size of a record header.
pub const RECORD_HEADER_LEN: u64 = 8;

/// Kind of file, from the file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `process.plx`.
    Process = 1,
    /// `trace.plx`.
    Trace = 2,
    /// `metrics.<name>.plx` (external time series, [`crate::metrics`]).
    Metrics = 3,
}

/// The 16-byte file header for a kind.
pub fn file_header(kind: FileKind) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..4].copy_from_slice(MAGIC);
    h[4..6].copy_from_slice(&VERSION.to_le_bytes());
    h[6..8].copy_from_slice(&(kind as u16).to_le_bytes());
    h
}

/// Checks a file header; `Err` is the warning to report (the file is then skipped).
pub fn check_file_header(
    path: &Path,
    head: &[u8],
    file_len: u64,
    kind: FileKind,
) -> Result<(), Warning> {
    if head.len() < 16 {
        return Err(Warning::at(
            path,
            0,
            WarningKind::Truncated {
                missing: 16 - head.len() as u64,
            },
            format!("file header truncated ({} of 16 bytes)", head.len()),
        ));
    }
    if &head[..4] != MAGIC {
        return Err(Warning::at(
            path,
            0,
            WarningKind::Garbage { ignored: file_len },
            "bad magic: not a Parallax file".to_string(),
        ));
    }
    let version = u16::from_le_bytes([head[4], head[5]]);
    let k = u16::from_le_bytes([head[6], head[7]]);
    if k != kind as u16 {
        return Err(Warning::at(
            path,
            6,
            WarningKind::Garbage { ignored: file_len },
            format!("file kind {k}, expected {}", kind as u16),
        ));
    }
    if !(1..=VERSION).contains(&version) {
        return Err(Warning::at(
            path,
            4,
            WarningKind::Garbage { ignored: file_len },
            format!("format version {version}, this reader knows 1 to {VERSION}"),
        ));
    }
    Ok(())
}

/// A record header as found at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Offset of the record header in the file.
    pub offset: u64,
    /// Record type.
    pub record_type: u16,
    /// Flags (zero in version 1).
    pub flags: u16,
    /// Payload length.
    pub len: u32,
}

impl RecordHeader {
    /// Offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        self.offset + RECORD_HEADER_LEN
    }
    /// Offset of the next record.
    pub fn end(&self) -> u64 {
        self.payload_offset() + self.len as u64
    }
}

/// What the bytes at a record boundary hold.
pub enum Framed {
    /// A complete record.
    Record(RecordHeader),
    /// Clean end of file.
    End,
    /// Damage: reading this file stops here.
    Damage(Warning),
}

/// Classifies the record header bytes `head` (up to 8) found at `offset` of a file of `file_len` bytes.
pub fn frame(path: &Path, offset: u64, head: &[u8], file_len: u64) -> Framed {
    let left = file_len - offset;
    if left == 0 {
        return Framed::End;
    }
    if left < RECORD_HEADER_LEN {
        return Framed::Damage(Warning::at(
            path,
            offset,
            WarningKind::Truncated {
                missing: RECORD_HEADER_LEN - left,
            },
            format!(
                "truncated record header ({left} of 8 bytes; at least {} bytes missing)",
                RECORD_HEADER_LEN - left
            ),
        ));
    }
    let h = RecordHeader {
        offset,
        record_type: u16::from_le_bytes([head[0], head[1]]),
        flags: u16::from_le_bytes([head[2], head[3]]),
        len: u32::from_le_bytes([head[4], head[5], head[6], head[7]]),
    };
    if h.flags != 0 || h.record_type == 0 {
        return Framed::Damage(Warning::at(
            path,
            offset,
            WarningKind::Garbage { ignored: left },
            format!(
                "garbage (record type {}, flags {:#x}): {} bytes ignored",
                h.record_type, h.flags, left
            ),
        ));
    }
    if h.end() > file_len {
        let missing = h.end() - file_len;
        return Framed::Damage(Warning::at(
            path,
            offset,
            WarningKind::Truncated { missing },
            format!(
                "truncated record (type {}, {} byte payload): {} bytes missing",
                h.record_type, h.len, missing
            ),
        ));
    }
    Framed::Record(h)
}

/// Walks the records of an in-memory file, collecting damage warnings.
pub struct RecordIter<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    offset: u64,
    done: bool,
    /// Damage found (at most one: reading stops at it).
    pub warning: Option<Warning>,
}

impl<'a> RecordIter<'a> {
    /// Starts after the (already checked) file header.
    pub fn new(path: &'a Path, bytes: &'a [u8]) -> Self {
        RecordIter {
            path,
            bytes,
            offset: FILE_HEADER_LEN,
            done: bytes.len() < FILE_HEADER_LEN as usize,
            warning: None,
        }
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = (RecordHeader, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let len = self.bytes.len() as u64;
        let o = self.offset as usize;
        let head = &self.bytes[o..(o + 8).min(self.bytes.len())];
        match frame(self.path, self.offset, head, len) {
            Framed::Record(h) => {
                self.offset = h.end();
                let p = &self.bytes[h.payload_offset() as usize..h.end() as usize];
                Some((h, p))
            }
            Framed::End => {
                self.done = true;
                None
            }
            Framed::Damage(w) => {
                self.done = true;
                self.warning = Some(w);
                None
            }
        }
    }
}

/// The bytes of one record of any type with the given payload.
pub fn raw_record_bytes(record_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + payload.len());
    v.extend_from_slice(&record_type.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(payload);
    v
}
