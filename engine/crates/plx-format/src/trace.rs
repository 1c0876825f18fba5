//! `trace.plx`: an index of chunk headers (scanned without reading events) and a streaming chunk reader.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::event::ChunkEvents;
use crate::framing::{check_file_header, frame, FileKind, Framed, FILE_HEADER_LEN};
use crate::records::{types, Calibration};
use crate::warning::{Warning, WarningKind};

/// Size of a TraceChunk's fixed fields before the events.
pub const CHUNK_HEADER_LEN: u64 = crate::schema::fixed_size::TRACE_CHUNK as u64;

/// Malformed chunks reported one by one; the rest are counted in one warning.
const MAX_CHUNK_WARNINGS: u64 = 5;

/// The fixed fields of a TraceChunk record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Thread index.
    pub thread: u32,
    /// Number of 8-byte event words.
    pub event_count: u32,
    /// Time the first event's delta counts from.
    pub base_ticks: u64,
    /// The calibration pair read when the chunk was written.
    pub calib: Calibration,
}

/// Where one complete chunk lies in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// The chunk's fixed fields.
    pub header: ChunkHeader,
    /// Offset of the record header.
    pub record_offset: u64,
    /// Offset of the first event word.
    pub events_offset: u64,
    /// The file holding it: 0 the trace file, `i` > 0 [`TraceIndex::recovered`]`[i - 1]`.
    pub source: u32,
}

/// Events recovered from a thread's `trace` live file (the process was killed with them still
/// in its buffer): one chunk of the index, read from that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredEvents {
    /// The live file.
    pub path: PathBuf,
    /// The thread.
    pub thread: u32,
    /// Event words recovered.
    pub words: u64,
}

/// The chunks of a trace file, found by walking record headers only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceIndex {
    /// The trace file.
    pub path: PathBuf,
    /// Its length.
    pub file_len: u64,
    /// Complete chunks in file order.
    pub chunks: Vec<ChunkInfo>,
    /// Event words per thread.
    pub words_per_thread: BTreeMap<u32, u64>,
    /// Records of other types (skipped).
    pub unknown_records: u64,
    /// Chunks recovered from live files, after the file's own.
    pub recovered: Vec<RecoveredEvents>,
}

fn io_warning(path: &Path, e: std::io::Error) -> Warning {
    Warning::file(path, WarningKind::MissingFile, format!("cannot read: {e}"))
}

impl TraceIndex {
    /// Scans `path`; damage is appended to `warnings`. `None` if the file cannot be opened.
    pub fn scan(path: &Path, warnings: &mut Vec<Warning>) -> Option<TraceIndex> {
        let input = match crate::input::open_regular(path) {
            Ok(i) => i,
            Err(e) => {
                warnings.push(io_warning(path, e));
                return None;
            }
        };
        // records are framed against the bytes present: a sparse file's hole ends the trace
        let file_len = input.data_end;
        if input.data_end < input.len {
            warnings.push(crate::process::hole_warning(
                path,
                input.data_end,
                input.len,
            ));
        }
        let file = input.file;
        let mut index = TraceIndex {
            path: path.to_path_buf(),
            file_len,
            chunks: Vec::new(),
            words_per_thread: BTreeMap::new(),
            unknown_records: 0,
            recovered: Vec::new(),
        };
        let mut head = [0u8; 16];
        let n = read_some_at(&file, &mut head, 0);
        if let Err(w) = check_file_header(path, &head[..n], file_len, FileKind::Trace) {
            warnings.push(w);
            return Some(index);
        }
        let mut offset = FILE_HEADER_LEN;
        let mut bad_chunks = 0u64;
        // each thread's last chunk so far (its index in `chunks`)
        let mut last_of: BTreeMap<u32, usize> = BTreeMap::new();
        loop {
            let mut rh = [0u8; 8];
            let n = read_some_at(&file, &mut rh, offset);
            let h = match frame(path, offset, &rh[..n], file_len) {
                Framed::Record(h) => h,
                Framed::End => break,
                Framed::Damage(w) => {
                    warnings.push(w);
                    break;
                }
            };
            offset = h.end();
            if h.record_type != types::TRACE_CHUNK {
                index.unknown_records += 1;
                continue;
            }
            let mut cb = [0u8; 32];
            if (h.len as u64) < CHUNK_HEADER_LEN
                || read_some_at(&file, &mut cb, h.payload_offset()) < 32
            {
                warnings.push(Warning::at(
                    path,
                    h.offset,
                    WarningKind::Malformed,
                    format!("trace chunk of {} bytes is shorter than its header", h.len),
                ));
                continue;
            }
            let header = ChunkHeader::decode(&cb);
            if CHUNK_HEADER_LEN + 8 * header.event_count as u64 != h.len as u64 {
                bad_chunks += 1;
                if bad_chunks > MAX_CHUNK_WARNINGS {
                    continue;
                }
                warnings.push(Warning::at(
                    path,
                    h.offset,
                    WarningKind::Malformed,
                    format!(
                        "trace chunk says {} events but holds {} bytes: skipped",
                        header.event_count, h.len
                    ),
                ));
                continue;
            }
            let mut info = ChunkInfo {
                header,
                record_offset: h.offset,
                events_offset: h.payload_offset() + CHUNK_HEADER_LEN,
                source: 0,
            };
            if let Some(&prev) = last_of.get(&header.thread) {
                if !written_again(&file, &index.chunks[prev], &mut info) {
                    continue;
                }
            }
            *index.words_per_thread.entry(header.thread).or_default() +=
                info.header.event_count as u64;
            last_of.insert(header.thread, index.chunks.len());
            index.chunks.push(info);
        }
        if bad_chunks > MAX_CHUNK_WARNINGS {
            warnings.push(Warning::file(
                path,
                WarningKind::Malformed,
                format!(
                    "{} more trace chunks with inconsistent lengths skipped",
                    bad_chunks - MAX_CHUNK_WARNINGS
                ),
            ));
        }
        Some(index)
    }

    /// The calibration pairs of every chunk (recovered ones have none).
    pub fn calibrations(&self) -> impl Iterator<Item = Calibration> + '_ {
        self.chunks
            .iter()
            .filter(|c| c.source == 0)
            .map(|c| c.header.calib)
    }

    /// Adds `words` event words of `thread` lying at `offset` in the live file `path`, counted
    /// from `base_ticks`, as the thread's last chunk.
    pub fn add_recovered(
        &mut self,
        path: &Path,
        thread: u32,
        base_ticks: u64,
        offset: u64,
        words: u32,
    ) {
        self.recovered.push(RecoveredEvents {
            path: path.to_path_buf(),
            thread,
            words: words as u64,
        });
        *self.words_per_thread.entry(thread).or_default() += words as u64;
        self.chunks.push(ChunkInfo {
            header: ChunkHeader {
                thread,
                event_count: words,
                base_ticks,
                calib: Calibration {
                    ticks: base_ticks,
                    monotonic_ns: 0,
                },
            },
            record_offset: 0,
            events_offset: offset,
            source: self.recovered.len() as u32,
        });
    }

    /// The file holding chunk `info`.
    pub fn source_path(&self, info: &ChunkInfo) -> &Path {
        match info.source {
            0 => &self.path,
            i => &self.recovered[i as usize - 1].path,
        }
    }

    /// Threads that have chunks.
    pub fn threads(&self) -> impl Iterator<Item = u32> + '_ {
        self.words_per_thread.keys().copied()
    }

    /// The latest time the trace knows: its chunks' calibration pairs and the last event of
    /// each thread's last chunk (reads one chunk per thread). `None` without chunks.
    pub fn last_ticks(&self) -> Option<u64> {
        let mut last = self.calibrations().map(|c| c.ticks).max()?;
        let mut last_chunk: BTreeMap<u32, ChunkInfo> = BTreeMap::new();
        for c in &self.chunks {
            last_chunk.insert(c.header.thread, *c);
        }
        if let Ok(mut reader) = self.reader() {
            for info in last_chunk.into_values() {
                if let Ok(events) = reader.read(info) {
                    if let Some(ev) = events.last() {
                        last = last.max(ev.ticks());
                    }
                }
            }
        }
        Some(last)
    }

    /// [`TraceIndex::reader`], or `None` after a warning naming the file when it cannot be
    /// opened.
    pub fn reader_or_warn(&self, warnings: &mut Vec<Warning>) -> Option<TraceReader<'_>> {
        match self.reader() {
            Ok(r) => Some(r),
            Err(e) => {
                warnings.push(Warning::file(
                    &self.path,
                    WarningKind::MissingFile,
                    e.to_string(),
                ));
                None
            }
        }
    }

    /// A reader streaming the chunks in file order.
    pub fn reader(&self) -> Result<TraceReader<'_>, crate::FormatError> {
        let file = crate::input::open_regular(&self.path)
            .map_err(|e| crate::FormatError::Io(self.path.clone(), e))?
            .file;
        Ok(TraceReader {
            index: self,
            files: vec![Some(file)],
            next: 0,
            buf: Vec::new(),
        })
    }
}

/// A thread's chunk `c` that begins with its previous chunk `prev` again, word for word from the
/// same base time: the runtime wrote `prev`, and the thread ended (an asynchronous
/// cancellation) before its buffer was emptied, so its end wrote those words again with what
/// came after them. `c` keeps only what came after (false: nothing, `c` is dropped); any other
/// chunk is kept as it is (true). Words are read only for a chunk whose base time and length
/// allow it: a thread's next chunk begins where its last event was, later than its base unless
/// all of `prev`'s events came at one time.
fn written_again(file: &File, prev: &ChunkInfo, c: &mut ChunkInfo) -> bool {
    let (p, h) = (prev.header, c.header);
    if h.base_ticks != p.base_ticks || h.event_count < p.event_count || p.event_count == 0 {
        return true;
    }
    let n = p.event_count as usize * 8;
    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
    if read_some_at(file, &mut a, prev.events_offset) < n
        || read_some_at(file, &mut b, c.events_offset) < n
        || a != b
    {
        return true;
    }
    let mut events = crate::event::ChunkEvents::new(&a, p.base_ticks);
    for _ in events.by_ref() {}
    let end = events.position().1;
    if end == p.base_ticks {
        // every event of `prev` at its base time (a coarse clock): a next chunk from that same
        // time may hold the same words as new events
        return true;
    }
    c.header.base_ticks = end;
    c.header.event_count -= p.event_count;
    c.events_offset += n as u64;
    c.header.event_count > 0
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many were read (short at EOF or error).
pub(crate) fn read_some_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    done
}

/// Streams chunks one at a time through one reused buffer: memory is one chunk, not the trace.
pub struct TraceReader<'a> {
    index: &'a TraceIndex,
    /// The trace file, then the recovered chunks' files (opened on first read).
    files: Vec<Option<File>>,
    next: usize,
    buf: Vec<u8>,
}

impl TraceReader<'_> {
    /// The next chunk in file order and a decoder over its events.
    pub fn next_chunk(&mut self) -> Option<Result<(ChunkInfo, ChunkEvents<'_>), Warning>> {
        let info = *self.index.chunks.get(self.next)?;
        self.next += 1;
        Some(self.read(info).map(|ev| (info, ev)))
    }

    /// Reads one chunk of the index (e.g. only those of chosen threads) into the reused buffer.
    pub fn read(&mut self, info: ChunkInfo) -> Result<ChunkEvents<'_>, Warning> {
        let n = info.header.event_count as usize * 8;
        self.buf.resize(n, 0);
        let i = info.source as usize;
        if self.files.len() <= i {
            self.files.resize_with(i + 1, || None);
        }
        if self.files[i].is_none() {
            self.files[i] = crate::input::open_regular(self.index.source_path(&info))
                .ok()
                .map(|x| x.file);
        }
        let got = match &self.files[i] {
            Some(f) => read_some_at(f, &mut self.buf, info.events_offset),
            None => 0,
        };
        if got < n {
            return Err(Warning::at(
                self.index.source_path(&info),
                info.record_offset,
                WarningKind::Truncated {
                    missing: (n - got) as u64,
                },
                "trace chunk could not be read back in full".to_string(),
            ));
        }
        Ok(ChunkEvents::new(&self.buf, info.header.base_ticks))
    }
}

#[cfg(test)]
mod written_again_tests {
    use super::*;
    use crate::event::{enter_word, exit_word, Event};
    use crate::framing::{file_header, FileKind};
    use crate::writer::chunk_bytes;

    fn calib(ticks: u64) -> Calibration {
        Calibration {
            ticks,
            monotonic_ns: 0,
        }
    }

    /// (thread, ticks) of every event of the trace, in file order.
    fn events(path: &Path) -> (Vec<(u32, u64)>, Vec<Warning>) {
        let mut w = Vec::new();
        let index = TraceIndex::scan(path, &mut w).unwrap();
        let mut reader = index.reader().unwrap();
        let mut out = Vec::new();
        while let Some(c) = reader.next_chunk() {
            let (info, ev) = c.unwrap();
            out.extend(ev.map(|e: Event| (info.header.thread, e.ticks())));
        }
        (out, w)
    }

    #[test]
    fn a_chunk_written_again_with_more_after_it_is_read_once() {
        let d = crate::test_dir::tmp("trace-written-again");
        let path = d.join("trace.plx");
        // thread 1: enter at 110, exit at 130 (chunk from 100), written again from 100 with an
        // exit at 150 after it (the thread's end); thread 2 between them, from the same base
        let first = [enter_word(1, 10), exit_word(1, 20)];
        let again = [enter_word(1, 10), exit_word(1, 20), exit_word(2, 20)];
        let mut bytes = file_header(FileKind::Trace).to_vec();
        bytes.extend(chunk_bytes(1, 100, calib(200), &first));
        bytes.extend(chunk_bytes(2, 100, calib(200), &first));
        bytes.extend(chunk_bytes(1, 100, calib(300), &again));
        // thread 3: the same words twice, nothing after them: the second dropped
        bytes.extend(chunk_bytes(3, 100, calib(300), &first));
        bytes.extend(chunk_bytes(3, 100, calib(300), &first));
        // thread 4: a coarse clock, every event at the base time: the same words again are new
        let still = [enter_word(1, 0), exit_word(1, 0)];
        bytes.extend(chunk_bytes(4, 100, calib(300), &still));
        bytes.extend(chunk_bytes(4, 100, calib(300), &still));
        // a new chunk from the thread's last event: kept as it is
        bytes.extend(chunk_bytes(1, 150, calib(400), &first));
        std::fs::write(&path, bytes).unwrap();
        let (got, warnings) = events(&path);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            got,
            [
                (1, 110),
                (1, 130),
                (2, 110),
                (2, 130),
                (1, 150),
                (3, 110),
                (3, 130),
                (4, 100),
                (4, 100),
                (4, 100),
                (4, 100),
                (1, 160),
                (1, 180)
            ]
        );
    }
}
