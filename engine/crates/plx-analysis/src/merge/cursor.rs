//! One location's (thread's) events streamed from its trace file chunk by chunk: the cursor owns at most one chunk's bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use plx_format::event::{DELTA_MASK, MAX_REGION};
use plx_format::{ChunkEvents, ChunkInfo, ClockMap, Event, OffsetMap, Warning, WarningKind};

use super::LocalIds;
use crate::model::ProcessModel;

/// Events decoded per refill at most; bounds the per-location decoded state.
const BATCH: usize = 256;
/// Events decoded per refill at least (fewer make a refill's own cost show).
const MIN_BATCH: usize = 32;
/// The decoded events of every location together, bytes, as far as [`MIN_BATCH`] allows: at
/// 4,096 locations two batches of [`BATCH`] events each would hold 150 MB.
const BATCHES_BYTES: usize = 16 << 20;

/// Events per refill for `locations` locations: [`BATCHES_BYTES`] shared out, within
/// [`MIN_BATCH`]..=[`BATCH`]. Two batches a location (the merge's and the one read ahead).
pub(crate) fn batch_len(locations: usize) -> usize {
    let each = BATCHES_BYTES / (2 * locations.max(1) * std::mem::size_of::<Head>());
    each.clamp(MIN_BATCH, BATCH)
}

/// Counters of what the merge holds in memory, for the bounded-memory guarantee.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Events the merge has produced.
    pub events: u64,
    /// Chunks read from the trace files (each exactly once).
    pub chunks_loaded: u64,
    /// Chunks whose bytes are held right now (at most one per location).
    pub resident_chunks: u64,
    /// The most chunks held at once.
    pub peak_resident_chunks: u64,
    /// Bytes of chunk data held right now.
    pub resident_bytes: u64,
    /// The most chunk bytes held at once.
    pub peak_resident_bytes: u64,
}

/// The chunk counters of [`MergeStats`], shared by the merge and its read-ahead thread.
#[derive(Debug, Default)]
pub(crate) struct Residency {
    chunks_loaded: AtomicU64,
    resident_chunks: AtomicU64,
    peak_resident_chunks: AtomicU64,
    resident_bytes: AtomicU64,
    peak_resident_bytes: AtomicU64,
}

impl Residency {
    fn load(&self, bytes: u64) {
        self.chunks_loaded.fetch_add(1, Ordering::Relaxed);
        let c = self.resident_chunks.fetch_add(1, Ordering::Relaxed) + 1;
        let b = self.resident_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak_resident_chunks.fetch_max(c, Ordering::Relaxed);
        self.peak_resident_bytes.fetch_max(b, Ordering::Relaxed);
    }

    fn unload(&self, bytes: u64) {
        self.resident_chunks.fetch_sub(1, Ordering::Relaxed);
        self.resident_bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The counters, with `events` produced.
    pub fn stats(&self, events: u64) -> MergeStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        MergeStats {
            events,
            chunks_loaded: get(&self.chunks_loaded),
            resident_chunks: get(&self.resident_chunks),
            peak_resident_chunks: get(&self.peak_resident_chunks),
            resident_bytes: get(&self.resident_bytes),
            peak_resident_bytes: get(&self.peak_resident_bytes),
        }
    }
}

/// A decoded event with its times: the thread's ticks, and ns on rank 0's clock before any
/// repair of the clock condition.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    pub ticks: u64,
    pub base_ns: i64,
    /// A send's, receive's or collective's communicator key ([`crate::matching::comm_key`]),
    /// found as the event is decoded (0 for other events): the merge then looks up no
    /// per-process map per event.
    pub comm: u64,
    pub ev: Event,
}

/// What puts a process's events on the global clock, copied from its model so that events
/// decode without it (on the read-ahead thread, and with no lookup into the model per event).
#[derive(Clone)]
pub(crate) struct Clock {
    map: ClockMap,
    offsets: OffsetMap,
    shift_ns: i64,
    rank_base: u32,
    /// The process's communicators, local id → experiment index.
    comms: Arc<LocalIds>,
}

impl Clock {
    pub fn of(p: &ProcessModel, comms: Arc<LocalIds>) -> Clock {
        Clock {
            map: p.clock_map,
            offsets: p.offsets,
            shift_ns: p.shift_ns,
            rank_base: p.rank_base,
            comms,
        }
    }

    /// [`crate::matching::comm_key`] of the process's communicator `local`.
    #[inline]
    pub fn comm_key(&self, local: u32) -> u64 {
        crate::matching::key_of_comm(self.comms.get(local), local)
    }

    /// As [`ProcessModel::rank0_ns`] rounded.
    #[inline]
    fn ns(&self, ticks: u64) -> i64 {
        super::round_ns(self.offsets.to_rank0(self.map.ns(ticks)) + self.shift_ns as f64)
    }

    /// As [`ProcessModel::rank0_ns`] rounded, and [`crate::model::globalize_event`].
    #[inline]
    fn head(&self, ticks: u64, ev: Event) -> Head {
        let comm = match ev {
            Event::Send { comm, .. }
            | Event::Recv { comm, .. }
            | Event::Collective { comm, .. } => self.comm_key(comm),
            _ => 0,
        };
        Head {
            ticks,
            base_ns: self.ns(ticks),
            comm,
            ev: crate::model::globalize_event_by(self.rank_base, ev),
        }
    }
}

/// An event [`Cursor::scan`] gives.
pub(crate) enum Scanned {
    /// An enter or exit: the thread's ticks, ns as in [`Head::base_ns`], the process-local
    /// region.
    Region {
        ticks: u64,
        ns: i64,
        exit: bool,
        region: u32,
    },
    /// Any other event the cursor yields.
    Other(Head),
}

/// The trace files of a process image: the trace, then the files of its recovered chunks.
pub(crate) struct Files {
    pub path: PathBuf,
    pub files: Vec<File>,
}

/// Which events a cursor yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    /// Enter, exit, user, send, receive, collective, acquire, release, stream send and
    /// receive.
    All,
    /// Send and receive only.
    Messages,
    /// As [`Filter::All`], with the counted calls (trace subtype 10).
    AllWithCounters,
}

/// What went wrong in a location's stream (turned into warnings by the merge).
#[derive(Debug, Default)]
pub(crate) struct CursorDamage {
    pub unknown: u64,
    /// Bit s set: extended subtype s was skipped (bit 63: word kind 3).
    pub unknown_subtypes: u64,
    pub out_of_order: u64,
    pub warnings: Vec<Warning>,
}

/// A thread's chunks, in file order (= time order for one thread), decoded lazily.
pub(crate) struct Cursor {
    thread: u32,
    chunks: Vec<ChunkInfo>,
    next_chunk: usize,
    /// The current chunk's event bytes; empty when no chunk is loaded.
    buf: Vec<u8>,
    loaded: bool,
    exhausted_chunk: bool,
    pos: usize,
    ticks: u64,
    filter: Filter,
    /// Events per [`Cursor::fill`].
    batch: usize,
    last_ticks: u64,
    pub damage: CursorDamage,
}

impl Cursor {
    pub fn new(thread: u32, chunks: Vec<ChunkInfo>, filter: Filter) -> Cursor {
        Cursor {
            thread,
            chunks,
            next_chunk: 0,
            buf: Vec::new(),
            loaded: false,
            exhausted_chunk: false,
            pos: 0,
            ticks: 0,
            filter,
            batch: BATCH,
            last_ticks: 0,
            damage: CursorDamage::default(),
        }
    }

    /// Events per [`Cursor::fill`] from now on ([`batch_len`]).
    pub fn set_batch(&mut self, events: usize) {
        self.batch = events.max(1);
    }

    /// Decodes the next batch of events into `out` (cleared first; a thread's time does not go
    /// back, a decoded event that does is given its predecessor's ticks and counted), loading
    /// the next chunk when the current one is done. Empty at the end of the thread's chunks.
    pub fn fill(&mut self, files: &Files, clock: &Clock, stats: &Residency, out: &mut Vec<Head>) {
        out.clear();
        let (path, files) = (files.path.as_path(), files.files.as_slice());
        loop {
            if !self.loaded && !self.load(files, path, stats) {
                return;
            }
            // the chunk's bytes are taken out while they are decoded (the decoder borrows them)
            let buf = std::mem::take(&mut self.buf);
            let mut it = ChunkEvents::resume(&buf, self.pos, self.ticks);
            while out.len() < self.batch {
                let Some(ev) = it.next() else {
                    self.exhausted_chunk = true;
                    break;
                };
                if !self.keeps(&ev) {
                    continue;
                }
                let t = self.in_order(ev.ticks());
                out.push(clock.head(t, ev));
            }
            if let Some(w) = it.cut_at() {
                self.cut_warning(path, w);
            }
            (self.pos, self.ticks) = it.position();
            self.buf = buf;
            if self.exhausted_chunk {
                self.unload(stats);
            }
            if !out.is_empty() {
                return;
            }
        }
    }

    /// Whether the cursor yields `ev` (by its [`Filter`]; unknown events are counted).
    #[inline]
    fn keeps(&mut self, ev: &Event) -> bool {
        match (ev, self.filter) {
            // CPU and counter events are not part of the merged stream (profiles read
            // them, and the counter records hold every counted call) unless asked for
            // (exports that show counters), nor the notes that a worker's next enters
            // are its team starter's path
            (Event::CountedCall { .. }, Filter::AllWithCounters) => true,
            (
                Event::TimeReset { .. }
                | Event::Cpu { .. }
                | Event::OmpContext { .. }
                | Event::CountedCall { .. }
                | Event::CounterEpoch { .. },
                _,
            ) => false,
            (Event::Unknown { subtype, .. }, _) => {
                self.damage.unknown += 1;
                self.damage.unknown_subtypes |= 1 << (*subtype).min(63);
                false
            }
            (_, Filter::All | Filter::AllWithCounters) => true,
            (Event::Send { .. } | Event::Recv { .. }, Filter::Messages) => true,
            (_, Filter::Messages) => false,
        }
    }

    /// A thread's time does not go back: `ticks`, or its predecessor's when earlier (counted).
    #[inline]
    fn in_order(&mut self, ticks: u64) -> u64 {
        let mut t = ticks;
        if t < self.last_ticks {
            self.damage.out_of_order += 1;
            t = self.last_ticks;
        }
        self.last_ticks = t;
        t
    }

    /// The warning for an extended event at word `w` of the current chunk whose payload runs
    /// past it.
    fn cut_warning(&mut self, path: &Path, w: usize) {
        let info = self.chunks[self.next_chunk - 1];
        self.damage.warnings.push(Warning::at(
            path,
            info.events_offset + 8 * w as u64,
            WarningKind::Malformed,
            format!(
                "thread {}: extended event's payload runs past its chunk: rest of chunk skipped",
                self.thread
            ),
        ));
    }

    /// Every remaining event to `f`, the same events with the same times as [`Cursor::fill`]
    /// gives, an enter or exit without building a [`Head`] (the words of most of a trace,
    /// decoded here in a loop of their own).
    pub fn scan(
        &mut self,
        files: &Files,
        clock: &Clock,
        stats: &Residency,
        f: &mut impl FnMut(Scanned),
    ) {
        let (path, fs) = (files.path.as_path(), files.files.as_slice());
        loop {
            if !self.loaded && !self.load(fs, path, stats) {
                return;
            }
            let buf = std::mem::take(&mut self.buf);
            let whole = buf.len() & !7;
            let (mut pos, mut ticks) = (self.pos, self.ticks);
            while pos < whole {
                let w = u64::from_le_bytes(buf[pos..pos + 8].try_into().expect("8 bytes"));
                if w >> 62 <= 1 {
                    pos += 8;
                    ticks = ticks.wrapping_add(w & DELTA_MASK);
                    let t = self.in_order(ticks);
                    f(Scanned::Region {
                        ticks: t,
                        ns: clock.ns(t),
                        exit: w >> 62 == 1,
                        region: ((w >> 40) as u32) & MAX_REGION,
                    });
                    continue;
                }
                let mut it = ChunkEvents::resume(&buf, pos, ticks);
                let Some(ev) = it.next() else {
                    if let Some(w) = it.cut_at() {
                        self.cut_warning(path, w);
                    }
                    break;
                };
                (pos, ticks) = it.position();
                if self.keeps(&ev) {
                    let t = self.in_order(ev.ticks());
                    f(Scanned::Other(clock.head(t, ev)));
                }
            }
            (self.pos, self.ticks) = (pos, ticks);
            self.buf = buf;
            self.exhausted_chunk = true;
            self.unload(stats);
        }
    }

    /// Reads the next chunk's bytes into the buffer. False when there is none (or it cannot be
    /// read: the rest of the thread is lost, with a warning).
    fn load(&mut self, files: &[File], path: &Path, stats: &Residency) -> bool {
        let Some(info) = self.chunks.get(self.next_chunk).copied() else {
            self.buf = Vec::new();
            return false;
        };
        self.next_chunk += 1;
        let n = info.header.event_count as usize * 8;
        self.buf.resize(n, 0);
        let read = match files.get(info.source as usize) {
            Some(file) => file.read_exact_at(&mut self.buf, info.events_offset),
            None => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        if let Err(e) = read {
            self.damage.warnings.push(Warning::at(
                path,
                info.record_offset,
                WarningKind::Truncated { missing: n as u64 },
                format!(
                    "thread {}: trace chunk could not be read back ({e}): the thread's later events are left out",
                    self.thread
                ),
            ));
            self.next_chunk = self.chunks.len();
            self.buf = Vec::new();
            return false;
        }
        self.loaded = true;
        self.exhausted_chunk = false;
        self.pos = 0;
        self.ticks = info.header.base_ticks;
        stats.load(n as u64);
        true
    }

    fn unload(&mut self, stats: &Residency) {
        if self.loaded {
            stats.unload(self.buf.len() as u64);
            self.loaded = false;
            self.buf.clear();
        }
    }
}
