//! Writes the format (file header, records, trace chunks) to any `Write`; used by tests and tools.

use std::io::{self, Write};

use crate::framing::{file_header, FileKind};
use crate::live::{LiveHeader, LiveKind, LiveMpiEntry, LiveNode, LiveSyncEntry};
use crate::records::{types, Calibration, Record};
use crate::trace::{ChunkHeader, CHUNK_HEADER_LEN};

/// The bytes of one whole record (header and payload).
pub fn record_bytes(rec: &Record) -> Vec<u8> {
    let mut payload = Vec::new();
    rec.encode_payload(&mut payload);
    raw_record_bytes(rec.record_type(), &payload)
}

pub use crate::framing::raw_record_bytes;

/// The bytes of one TraceChunk record.
pub fn chunk_bytes(thread: u32, base_ticks: u64, calib: Calibration, words: &[u64]) -> Vec<u8> {
    let header = ChunkHeader {
        thread,
        event_count: words.len() as u32,
        base_ticks,
        calib,
    };
    let mut payload = Vec::with_capacity(CHUNK_HEADER_LEN as usize + 8 * words.len());
    payload.extend_from_slice(&header.encode());
    for w in words {
        payload.extend_from_slice(&w.to_le_bytes());
    }
    raw_record_bytes(types::TRACE_CHUNK, &payload)
}

/// The bytes of a live file: the header, `items` as they are, then zeros up to
/// `header.capacity` items of `header.item_size` bytes (the runtime's file has that length).
pub fn live_file_bytes(header: &LiveHeader, items: &[u8]) -> Vec<u8> {
    let room = header.capacity as usize * header.item_size as usize;
    let mut v = Vec::with_capacity(64 + room.max(items.len()));
    v.extend_from_slice(&header.encode());
    v.extend_from_slice(items);
    v.resize(64 + room.max(items.len()), 0);
    v
}

/// A `live.<thread>.nodes` file as a killed runtime leaves it: `nodes` in use (item 0 the root),
/// room for `capacity` (at least `nodes.len()`).
pub fn live_nodes_bytes(thread: u32, capacity: u32, nodes: &[LiveNode]) -> Vec<u8> {
    let count = nodes.len() as u32;
    let header = LiveHeader::new(LiveKind::Nodes, thread, count, capacity.max(count));
    let items: Vec<u8> = nodes.iter().flat_map(|n| n.encode()).collect();
    live_file_bytes(&header, &items)
}

/// A `live.<thread>.mpi` file: the hash table `slots`, used or not (count = capacity = slots).
pub fn live_mpi_bytes(thread: u32, slots: &[LiveMpiEntry]) -> Vec<u8> {
    let n = slots.len() as u32;
    let header = LiveHeader::new(LiveKind::Mpi, thread, n, n);
    let items: Vec<u8> = slots.iter().flat_map(|e| e.encode()).collect();
    live_file_bytes(&header, &items)
}

/// A `live.<thread>.sync` file: the hash table `slots`, used or not (count = capacity = slots).
pub fn live_sync_bytes(thread: u32, slots: &[LiveSyncEntry]) -> Vec<u8> {
    let n = slots.len() as u32;
    let header = LiveHeader::new(LiveKind::Sync, thread, n, n);
    let items: Vec<u8> = slots.iter().flat_map(|e| e.encode()).collect();
    live_file_bytes(&header, &items)
}

/// Writes one file: the header on creation, then records in order.
pub struct FileWriter<W: Write> {
    out: W,
}

impl<W: Write> FileWriter<W> {
    /// Starts a file of `kind` by writing its header.
    pub fn new(mut out: W, kind: FileKind) -> io::Result<Self> {
        out.write_all(&file_header(kind))?;
        Ok(FileWriter { out })
    }

    /// Appends a record.
    pub fn record(&mut self, rec: &Record) -> io::Result<&mut Self> {
        self.out.write_all(&record_bytes(rec))?;
        Ok(self)
    }

    /// Appends a record of any type (e.g. one unknown to readers).
    pub fn raw_record(&mut self, record_type: u16, payload: &[u8]) -> io::Result<&mut Self> {
        self.out
            .write_all(&raw_record_bytes(record_type, payload))?;
        Ok(self)
    }

    /// Appends bytes as they are (e.g. garbage, or part of a record).
    pub fn raw_bytes(&mut self, bytes: &[u8]) -> io::Result<&mut Self> {
        self.out.write_all(bytes)?;
        Ok(self)
    }

    /// Appends a trace chunk.
    pub fn chunk(
        &mut self,
        thread: u32,
        base_ticks: u64,
        calib: Calibration,
        words: &[u64],
    ) -> io::Result<&mut Self> {
        self.out
            .write_all(&chunk_bytes(thread, base_ticks, calib, words))?;
        Ok(self)
    }

    /// Flushes and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::RecordIter;
    use std::path::Path;

    #[test]
    fn written_records_frame_back() {
        let mut w = FileWriter::new(Vec::new(), FileKind::Process).unwrap();
        w.record(&Record::ClockRate(1e9)).unwrap();
        w.raw_record(200, &[1, 2, 3]).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(&bytes[..4], b"PLX1");
        let recs: Vec<_> = RecordIter::new(Path::new("x"), &bytes).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].0.record_type, 3);
        assert_eq!(recs[1].0.record_type, 200);
        assert_eq!(recs[1].1, &[1, 2, 3]);
    }
}
