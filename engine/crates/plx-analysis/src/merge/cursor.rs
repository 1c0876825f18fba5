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
    /// The ticks whose ns are integer sums.
    exact: Exact,
}

/// Where [`Clock::ns`] is an integer sum: the ticks `lo..=hi` (none when `lo > hi`) become
/// `ticks + add` ns.
///
/// Why exact: with one ns per tick, an offset without drift and whole ns at the origins,
/// every floating-point step of the conversion (ticks, ticks minus the origin's, times 1, plus
/// the origin's ns, plus the offset, plus the shift, plus one half) adds whole numbers whose
/// sums lie within ±2^52 for these ticks, where doubles hold every integer and every half
/// exactly: no step rounds, and the rounding to whole ns gives the sum back. The common clocks
/// (`CLOCK_MONOTONIC`, and one ns per tick however calibrated) convert so without a
/// floating-point operation per event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exact {
    lo: u64,
    hi: u64,
    add: i64,
}

impl Exact {
    /// No ticks.
    const NONE: Exact = Exact {
        lo: 1,
        hi: 0,
        add: 0,
    };

    /// The exact range of the conversion by `map`, `offsets` and `shift_ns`
    /// ([`float_ns`]).
    pub(crate) fn of(map: &ClockMap, offsets: &OffsetMap, shift_ns: i64) -> Exact {
        const LIMIT: i128 = 1 << 52;
        let (origin_ticks, origin_ns, per_tick) = map.line();
        let (offset_origin, offset, slope) = offsets.line();
        let whole = |x: f64| x.fract() == 0.0 && (x.abs() as i128) < LIMIT;
        // the offset's slope 0 times a finite distance: the offset is `offset` (a zero's sign
        // changes no sum that follows)
        if per_tick != 1.0
            || slope != 0.0
            || !offset_origin.is_finite()
            || !whole(origin_ns)
            || !whole(offset)
            || (origin_ticks as i128) >= LIMIT
            || (shift_ns as i128).abs() >= LIMIT
        {
            return Exact::NONE;
        }
        // each step's value is the ticks plus one of these (ticks − origin, + origin's ns, +
        // offset, + shift), to lie strictly within ±2^52, the ticks themselves below 2^52
        let k1 = -(origin_ticks as i128);
        let k2 = k1 + origin_ns as i128;
        let k3 = k2 + offset as i128;
        let k4 = k3 + shift_ns as i128;
        let (mut lo, mut hi) = (0i128, LIMIT - 1);
        for k in [0, k1, k2, k3, k4] {
            lo = lo.max(-LIMIT + 1 - k);
            hi = hi.min(LIMIT - 1 - k);
        }
        if lo > hi {
            return Exact::NONE;
        }
        Exact {
            lo: lo as u64,
            hi: hi as u64,
            add: k4 as i64,
        }
    }
}

/// Rank 0's ns at `ticks` by `map`, `offsets` and `shift_ns`, rounded: as
/// [`ProcessModel::rank0_ns`] rounded, in floating point.
#[inline]
pub(crate) fn float_ns(map: &ClockMap, offsets: &OffsetMap, shift_ns: i64, ticks: u64) -> i64 {
    super::round_ns(offsets.to_rank0(map.ns(ticks)) + shift_ns as f64)
}

impl Clock {
    pub fn of(p: &ProcessModel, comms: Arc<LocalIds>) -> Clock {
        Clock {
            map: p.clock_map,
            offsets: p.offsets,
            shift_ns: p.shift_ns,
            rank_base: p.rank_base,
            comms,
            exact: Exact::of(&p.clock_map, &p.offsets, p.shift_ns),
        }
    }

    /// [`crate::matching::comm_key`] of the process's communicator `local`.
    #[inline]
    pub fn comm_key(&self, local: u32) -> u64 {
        crate::matching::key_of_comm(self.comms.get(local), local)
    }

    /// As [`ProcessModel::rank0_ns`] rounded ([`float_ns`]; an integer sum where that is
    /// exact, [`Exact`]).
    #[inline]
    fn ns(&self, ticks: u64) -> i64 {
        let e = self.exact;
        if ticks >= e.lo && ticks <= e.hi {
            return ticks as i64 + e.add;
        }
        float_ns(&self.map, &self.offsets, self.shift_ns, ticks)
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

/// What takes the events of [`Cursor::scan`], monomorphised into its loop: the enters and
/// exits (most of a trace's words) inline, the other events out of line.
pub(crate) trait Scan {
    /// An enter (`exit` false) or exit: the thread's ticks, ns as in [`Head::base_ns`], the
    /// process-local region.
    fn region(&mut self, ticks: u64, ns: i64, exit: bool, region: u32);
    /// Any other event the cursor yields.
    fn other(&mut self, h: Head);
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
    /// The current chunk's event bytes (while none is loaded, the last one's or none: the
    /// buffer is read over by the next chunk, not zeroed first).
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
    pub fn scan(&mut self, files: &Files, clock: &Clock, stats: &Residency, f: &mut impl Scan) {
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
                    f.region(
                        t,
                        clock.ns(t),
                        w >> 62 == 1,
                        ((w >> 40) as u32) & MAX_REGION,
                    );
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
                    f.other(clock.head(t, ev));
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
        // only bytes past the last chunk's are zeroed before they are read over
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plx_format::mpi::{ClockOffset, OffsetWhen};
    use plx_format::{Calibration, ClockKind};

    fn clock(map: ClockMap, offsets: OffsetMap, shift_ns: i64) -> Clock {
        Clock {
            map,
            offsets,
            shift_ns,
            rank_base: 0,
            comms: Arc::new(LocalIds::default()),
            exact: Exact::of(&map, &offsets, shift_ns),
        }
    }

    fn pair(ticks: u64, monotonic_ns: u64) -> Calibration {
        Calibration {
            ticks,
            monotonic_ns,
        }
    }

    fn offset(when: OffsetWhen, local_ns: u64, offset_ns: i64) -> ClockOffset {
        ClockOffset {
            when,
            local_ns,
            offset_ns,
            rtt_ns: 0,
        }
    }

    /// The ticks around each end of the exact range and of ±2^52 and 2^53 (every one of the
    /// ticks `around`'s distance away), and pseudo-random ones of every magnitude.
    fn ticks(c: &Clock) -> Vec<u64> {
        let mut at = vec![0, c.exact.lo, c.exact.hi, 1 << 52, 1 << 53, u64::MAX];
        at.push(c.map.line().0);
        let mut v = Vec::new();
        for a in at {
            for d in 0..=64u64 {
                v.push(a.wrapping_add(d));
                v.push(a.wrapping_sub(d));
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for bits in 1..=64u32 {
            for _ in 0..200 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                v.push(if bits == 64 { x } else { x >> (64 - bits) });
            }
        }
        v
    }

    /// The exact range gives what the floating point gives, tick for tick; how many ticks
    /// it took.
    fn same(c: &Clock) -> usize {
        let mut exact = 0;
        for t in ticks(c) {
            let want = float_ns(&c.map, &c.offsets, c.shift_ns, t);
            assert_eq!(c.ns(t), want, "ticks {t}, {:?}", c.exact);
            exact += usize::from(t >= c.exact.lo && t <= c.exact.hi);
        }
        exact
    }

    #[test]
    fn exact_conversion_equals_the_floating_point() {
        let init = |local, off| offset(OffsetWhen::Init, local, off);
        let fin = |local, off| offset(OffsetWhen::Finalize, local, off);
        let cal = |pairs: &[Calibration]| ClockMap::new(pairs, None, Some(ClockKind::Tsc));
        let mono = ClockMap::new(&[], None, Some(ClockKind::Monotonic));
        let big = 1u64 << 52;
        // one ns per tick, calibrated or by the clock's kind, with offsets without drift and
        // shifts: exact over the ticks below about 2^52
        for (map, offsets, shift) in [
            (mono, OffsetMap::default(), 0),
            (
                cal(&[pair(0, 0), pair(1000, 1000)]),
                OffsetMap::default(),
                0,
            ),
            (
                cal(&[
                    pair(77, 3_600_000_000_123),
                    pair(1_000_077, 3_600_001_000_123),
                ]),
                OffsetMap::new(&[init(3_600_000_000_000, -1_234_567)]),
                -5_000,
            ),
            (
                mono,
                OffsetMap::new(&[init(1_000, 40), fin(9_000_000, 40)]),
                123_456_789,
            ),
            (
                cal(&[pair(5, big - 1_000), pair(10, big - 995)]),
                OffsetMap::new(&[fin(7, -3)]),
                -2,
            ),
        ] {
            let c = clock(map, offsets, shift);
            assert!(c.exact.lo <= c.exact.hi, "{:?}", c.exact);
            assert!(same(&c) > 1000, "{:?}", c.exact);
        }
        // the exact range ends where a step would reach 2^52
        let c = clock(mono, OffsetMap::default(), 10);
        assert_eq!((c.exact.lo, c.exact.hi, c.exact.add), (0, big - 11, 10));
        let c = clock(mono, OffsetMap::default(), -10);
        assert_eq!((c.exact.lo, c.exact.hi, c.exact.add), (0, big - 1, -10));
        // a rate, a drift, a shift of 2^52 or a fraction of a ns: the floating point for all
        for (map, offsets, shift) in [
            (cal(&[pair(0, 0), pair(3, 1)]), OffsetMap::default(), 0),
            (
                mono,
                OffsetMap::new(&[init(1_000, 40), fin(9_000_000, 45)]),
                0,
            ),
            (mono, OffsetMap::default(), 1 << 52),
            (
                ClockMap::new(
                    &[pair(10, 11), pair(20, 22)],
                    None,
                    Some(ClockKind::MonotonicCoarse),
                ),
                OffsetMap::default(),
                0,
            ),
        ] {
            let c = clock(map, offsets, shift);
            assert_eq!(c.exact, Exact::NONE);
            assert_eq!(same(&c), 0);
        }
    }
}
