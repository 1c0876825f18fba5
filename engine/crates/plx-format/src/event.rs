//! Trace event words: bit layout, encoders, and a zero-allocation decoder over one chunk.

pub use crate::schema::subtypes::*;
pub use crate::schema::DELTA_BITS;
use crate::schema::{self, decode_extended, REGION_BITS};

/// Mask of the delta field.
pub const DELTA_MASK: u64 = (1 << DELTA_BITS) - 1;
/// Largest region id an event can carry (22 bits).
pub const MAX_REGION: u32 = (1 << REGION_BITS) - 1;
/// Payload words of the stream subtypes.
pub const STREAM_PAYLOAD_WORDS: u8 = SUBTYPE_STREAM_SEND_WORDS;
/// Payload words of the MPI subtypes (more are tolerated and skipped: later versions may add fields).
pub const MPI_PAYLOAD_WORDS: u8 = SUBTYPE_SEND_WORDS;

const KIND_ENTER: u64 = 0;
const KIND_EXIT: u64 = 1;
const KIND_EXTENDED: u64 = 2;

/// An enter word.
pub fn enter_word(region: u32, delta: u64) -> u64 {
    (KIND_ENTER << 62) | (((region & MAX_REGION) as u64) << 40) | (delta & DELTA_MASK)
}

/// An exit word.
pub fn exit_word(region: u32, delta: u64) -> u64 {
    (KIND_EXIT << 62) | (((region & MAX_REGION) as u64) << 40) | (delta & DELTA_MASK)
}

/// An extended event word; `payload_words` words of payload follow it.
pub fn extended_word(subtype: u8, payload_words: u8, delta: u64) -> u64 {
    (KIND_EXTENDED << 62)
        | (((subtype & 0x3F) as u64) << 56)
        | ((payload_words as u64) << 48)
        | (delta & DELTA_MASK)
}

pub use crate::schema::Event;

/// Decodes the little-endian event words of one chunk; allocation-free.
///
/// Stops early if an extended event's payload runs past the chunk (see [`ChunkEvents::cut_at`]).
pub struct ChunkEvents<'a> {
    bytes: &'a [u8],
    pos: usize,
    ticks: u64,
    cut_at: Option<usize>,
}

impl<'a> ChunkEvents<'a> {
    /// Events of `bytes` (8 bytes per word; a trailing partial word is ignored), starting at `base_ticks`.
    pub fn new(bytes: &'a [u8], base_ticks: u64) -> Self {
        let whole = bytes.len() & !7;
        ChunkEvents {
            bytes: &bytes[..whole],
            pos: 0,
            ticks: base_ticks,
            cut_at: None,
        }
    }

    /// Index of the word whose payload ran past the chunk, if decoding stopped early.
    pub fn cut_at(&self) -> Option<usize> {
        self.cut_at
    }

    /// Continues decoding `bytes` (a whole chunk's events) where an earlier decoder over the
    /// same bytes stopped: at byte `offset` with the running time `ticks`, both as returned by
    /// its [`ChunkEvents::position`]. Lets a caller that owns the chunk's buffer decode it in
    /// batches without keeping a borrowing iterator alive.
    pub fn resume(bytes: &'a [u8], offset: usize, ticks: u64) -> Self {
        let whole = bytes.len() & !7;
        ChunkEvents {
            bytes: &bytes[..whole],
            pos: offset.min(whole) & !7,
            ticks,
            cut_at: None,
        }
    }

    /// Byte offset of the next word to decode and the running time in ticks (see
    /// [`ChunkEvents::resume`]).
    pub fn position(&self) -> (usize, u64) {
        (self.pos, self.ticks)
    }

    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.bytes[i..i + 8]);
        u64::from_le_bytes(a)
    }
}

impl Iterator for ChunkEvents<'_> {
    type Item = Event;

    #[inline]
    fn next(&mut self) -> Option<Event> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let w = self.word(self.pos);
        self.pos += 8;
        self.ticks = self.ticks.wrapping_add(w & DELTA_MASK);
        let ticks = self.ticks;
        match w >> 62 {
            0 => Some(Event::Enter {
                region: ((w >> 40) as u32) & MAX_REGION,
                ticks,
            }),
            1 => Some(Event::Exit {
                region: ((w >> 40) as u32) & MAX_REGION,
                ticks,
            }),
            2 => {
                let subtype = ((w >> 56) & 0x3F) as u8;
                let n = ((w >> 48) & 0xFF) as usize;
                if self.pos + n * 8 > self.bytes.len() {
                    self.cut_at = Some(self.pos / 8 - 1);
                    self.pos = self.bytes.len();
                    return None;
                }
                let p = self.pos;
                self.pos += n * 8;
                let bytes = self.bytes;
                let word = |i: usize| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&bytes[p + 8 * i..p + 8 * i + 8]);
                    u64::from_le_bytes(a)
                };
                match decode_extended(subtype, n, word, ticks) {
                    Some(Event::TimeReset { ticks }) => {
                        self.ticks = ticks;
                        Some(Event::TimeReset { ticks })
                    }
                    Some(e) => Some(e),
                    None => Some(Event::Unknown { subtype, ticks }),
                }
            }
            _ => Some(Event::Unknown {
                subtype: 0xFF,
                ticks,
            }),
        }
    }
}

/// Builds the event words of one thread's chunk from absolute times; inserts time resets as needed.
#[derive(Debug, Clone)]
pub struct EventEncoder {
    base_ticks: u64,
    last: u64,
    words: Vec<u64>,
}

impl EventEncoder {
    /// A chunk whose first delta counts from `base_ticks`.
    pub fn new(base_ticks: u64) -> Self {
        EventEncoder {
            base_ticks,
            last: base_ticks,
            words: Vec::new(),
        }
    }

    /// The chunk's base ticks.
    pub fn base_ticks(&self) -> u64 {
        self.base_ticks
    }

    fn delta(&mut self, ticks: u64) -> u64 {
        let d = ticks.wrapping_sub(self.last);
        if ticks < self.last || d > DELTA_MASK {
            self.time_reset(ticks);
            return 0;
        }
        self.last = ticks;
        d
    }

    /// Appends a time reset to `ticks`.
    pub fn time_reset(&mut self, ticks: u64) -> &mut Self {
        let p = schema::pack_time_reset(ticks);
        self.words
            .push(extended_word(SUBTYPE_TIME_RESET, p.len() as u8, 0));
        self.words.extend_from_slice(&p);
        self.last = ticks;
        self
    }

    /// Appends an enter at `ticks`.
    pub fn enter(&mut self, region: u32, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(enter_word(region, d));
        self
    }

    /// Appends an exit at `ticks`.
    pub fn exit(&mut self, region: u32, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(exit_word(region, d));
        self
    }

    /// Appends an extended event of `subtype` with its payload at `ticks`.
    fn extended(&mut self, subtype: u8, payload: &[u64], ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words
            .push(extended_word(subtype, payload.len() as u8, d));
        self.words.extend_from_slice(payload);
        self
    }

    /// Appends a user event at `ticks`.
    pub fn user(&mut self, event_id: u64, value: f64, ticks: u64) -> &mut Self {
        self.extended(SUBTYPE_USER, &schema::pack_user(event_id, value), ticks)
    }

    /// Appends an MPI send event at `ticks`.
    pub fn send(&mut self, peer: u32, tag: i32, bytes: u64, comm: u32, ticks: u64) -> &mut Self {
        self.extended(
            SUBTYPE_SEND,
            &schema::pack_send(peer, tag, bytes, comm),
            ticks,
        )
    }

    /// Appends an MPI receive event at `ticks` (`peer` is the real sender).
    pub fn recv(&mut self, peer: u32, tag: i32, bytes: u64, comm: u32, ticks: u64) -> &mut Self {
        self.extended(
            SUBTYPE_RECV,
            &schema::pack_recv(peer, tag, bytes, comm),
            ticks,
        )
    }

    /// Appends an MPI collective event at `ticks` (`root` [`crate::NONE_U32`] if none).
    pub fn collective(
        &mut self,
        comm: u32,
        root: u32,
        bytes_sent: u64,
        bytes_recv: u64,
        ticks: u64,
    ) -> &mut Self {
        let p = schema::pack_collective(comm, root, bytes_sent, bytes_recv);
        self.extended(SUBTYPE_COLLECTIVE, &p, ticks)
    }

    /// Appends a synchronization acquire (subtype 5) at `ticks` after `wait_ticks` blocked.
    pub fn acquire(&mut self, object: u32, kind: u8, wait_ticks: u64, ticks: u64) -> &mut Self {
        let p = schema::pack_acquire(object, kind, 0, wait_ticks, 0);
        self.extended(SUBTYPE_ACQUIRE, &p, ticks)
    }

    /// Appends a read-write lock's acquire for reading (subtype 5, `shared`) at `ticks` after
    /// `wait_ticks` blocked.
    pub fn read_acquire(
        &mut self,
        object: u32,
        kind: u8,
        wait_ticks: u64,
        ticks: u64,
    ) -> &mut Self {
        let p = schema::pack_acquire(object, kind, 0, wait_ticks, 1);
        self.extended(SUBTYPE_ACQUIRE, &p, ticks)
    }

    /// Appends a synchronization release (subtype 6) at `ticks`.
    pub fn release(&mut self, object: u32, kind: u8, ticks: u64) -> &mut Self {
        self.extended(SUBTYPE_RELEASE, &schema::pack_release(object, kind), ticks)
    }

    /// Appends a stream send (subtype 8) at `ticks`: `bytes` written to direction `stream`,
    /// `end` bytes written to it so far.
    pub fn stream_send(&mut self, stream: u64, end: u64, bytes: u64, ticks: u64) -> &mut Self {
        let p = schema::pack_stream_send(stream, end, bytes);
        self.extended(SUBTYPE_STREAM_SEND, &p, ticks)
    }

    /// Appends a stream receive (subtype 9) at `ticks`: `bytes` read from direction `stream`,
    /// `end` bytes read from it so far.
    pub fn stream_recv(&mut self, stream: u64, end: u64, bytes: u64, ticks: u64) -> &mut Self {
        let p = schema::pack_stream_recv(stream, end, bytes);
        self.extended(SUBTYPE_STREAM_RECV, &p, ticks)
    }

    /// Appends a `recv_posted` event (subtype 29) at `ticks`: the receive it precedes was posted
    /// (MPI_Irecv entered) at `posted`.
    pub fn recv_posted(&mut self, posted: u64, ticks: u64) -> &mut Self {
        self.extended(
            SUBTYPE_RECV_POSTED,
            &schema::pack_recv_posted(posted),
            ticks,
        )
    }

    /// Appends a `coll_done` event (subtype 30) at `ticks`: the `collective`-th collective
    /// event of thread `thread` (a nonblocking one's post) completed.
    pub fn coll_done(&mut self, thread: u32, collective: u64, ticks: u64) -> &mut Self {
        self.extended(
            SUBTYPE_COLL_DONE,
            &schema::pack_coll_done(thread, collective),
            ticks,
        )
    }

    /// Appends the CPU time of a `cputime` function's call (subtype 7) at `ticks`, just before
    /// its exit.
    pub fn cpu(&mut self, region: u32, cpu_ns: u64, ticks: u64) -> &mut Self {
        self.extended(SUBTYPE_CPU, &schema::pack_cpu(region, cpu_ns), ticks)
    }

    /// Appends raw words (e.g. an unknown extended event and its payload).
    pub fn raw(&mut self, words: &[u64]) -> &mut Self {
        self.words.extend_from_slice(words);
        self
    }

    /// The words so far.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn decodes_enter_exit_and_deltas() {
        let mut e = EventEncoder::new(1000);
        e.enter(5, 1010).exit(5, 1050).user(3, 2.5, 1060);
        let b = bytes(e.words());
        let ev: Vec<Event> = ChunkEvents::new(&b, 1000).collect();
        assert_eq!(
            ev,
            vec![
                Event::Enter {
                    region: 5,
                    ticks: 1010
                },
                Event::Exit {
                    region: 5,
                    ticks: 1050
                },
                Event::User {
                    event_id: 3,
                    value: 2.5,
                    ticks: 1060
                }
            ]
        );
    }

    #[test]
    fn time_reset_sets_absolute_ticks() {
        let mut e = EventEncoder::new(0);
        e.enter(1, 10).exit(1, (1u64 << 41) + 7);
        let b = bytes(e.words());
        let ev: Vec<Event> = ChunkEvents::new(&b, 0).collect();
        assert_eq!(
            ev[1],
            Event::TimeReset {
                ticks: (1u64 << 41) + 7
            }
        );
        assert_eq!(ev[2].ticks(), (1u64 << 41) + 7);
    }

    #[test]
    fn unknown_subtype_skipped_by_payload_count() {
        let words = [
            extended_word(17, 3, 5),
            0xFFFF_FFFF_FFFF_FFFF,
            1,
            2,
            enter_word(4, 1),
        ];
        let b = bytes(&words);
        let ev: Vec<Event> = ChunkEvents::new(&b, 100).collect();
        assert_eq!(
            ev,
            vec![
                Event::Unknown {
                    subtype: 17,
                    ticks: 105
                },
                Event::Enter {
                    region: 4,
                    ticks: 106
                }
            ]
        );
    }

    #[test]
    fn mpi_events_round_trip() {
        let mut e = EventEncoder::new(0);
        e.enter(7, 10)
            .send(3, -5, 1 << 40, 2, 11)
            .exit(7, 12)
            .recv(0xFFFF_FFFE, i32::MAX, 0, 0, 20)
            .collective(1, crate::NONE_U32, 8, 32, 30);
        let b = bytes(e.words());
        let ev: Vec<Event> = ChunkEvents::new(&b, 0).collect();
        assert_eq!(
            ev[1],
            Event::Send {
                peer: 3,
                tag: -5,
                bytes: 1 << 40,
                comm: 2,
                ticks: 11
            }
        );
        assert_eq!(
            ev[3],
            Event::Recv {
                peer: 0xFFFF_FFFE,
                tag: i32::MAX,
                bytes: 0,
                comm: 0,
                ticks: 20
            }
        );
        assert_eq!(
            ev[4],
            Event::Collective {
                comm: 1,
                root: crate::NONE_U32,
                bytes_sent: 8,
                bytes_recv: 32,
                ticks: 30
            }
        );
    }

    #[test]
    fn mpi_event_layout_is_the_spec_s() {
        // send to rank 1, tag 7, 64 bytes, comm 0, 5 ticks after base; hand-encoded per spec/format.md
        let words = [
            (2u64 << 62) | (2 << 56) | (3 << 48) | 5,
            1 | (7 << 32),
            64,
            0,
            (2u64 << 62) | (4 << 56) | (3 << 48) | 1,
            3 | (0xFFFF_FFFFu64 << 32),
            16,
            48,
        ];
        let b = bytes(&words);
        let ev: Vec<Event> = ChunkEvents::new(&b, 100).collect();
        assert_eq!(
            ev,
            vec![
                Event::Send {
                    peer: 1,
                    tag: 7,
                    bytes: 64,
                    comm: 0,
                    ticks: 105
                },
                Event::Collective {
                    comm: 3,
                    root: crate::NONE_U32,
                    bytes_sent: 16,
                    bytes_recv: 48,
                    ticks: 106
                }
            ]
        );
        let mut e = EventEncoder::new(100);
        e.send(1, 7, 64, 0, 105)
            .collective(3, crate::NONE_U32, 16, 48, 106);
        assert_eq!(e.words(), &words);
    }

    #[test]
    fn mpi_events_with_extra_or_missing_words() {
        // a later version's 4th word is skipped; a short payload makes the event unknown
        let words = [
            extended_word(SUBTYPE_RECV, 4, 1),
            2 | (9 << 32),
            8,
            0,
            0xABCD,
            extended_word(SUBTYPE_SEND, 2, 1),
            1,
            8,
            enter_word(1, 1),
        ];
        let b = bytes(&words);
        let ev: Vec<Event> = ChunkEvents::new(&b, 0).collect();
        assert_eq!(
            ev,
            vec![
                Event::Recv {
                    peer: 2,
                    tag: 9,
                    bytes: 8,
                    comm: 0,
                    ticks: 1
                },
                Event::Unknown {
                    subtype: SUBTYPE_SEND,
                    ticks: 2
                },
                Event::Enter {
                    region: 1,
                    ticks: 3
                }
            ]
        );
    }

    #[test]
    fn resumed_decoding_equals_one_pass() {
        let mut e = EventEncoder::new(1000);
        e.enter(1, 1001)
            .send(2, 3, 64, 0, 1002)
            .time_reset(5000)
            .user(7, 1.5, 5003)
            .exit(1, 5004);
        let b = bytes(e.words());
        let all: Vec<Event> = ChunkEvents::new(&b, 1000).collect();
        let mut got = Vec::new();
        let (mut pos, mut ticks) = (0, 1000);
        loop {
            let mut it = ChunkEvents::resume(&b, pos, ticks);
            let Some(ev) = it.next() else { break };
            got.push(ev);
            (pos, ticks) = it.position();
        }
        assert_eq!(got, all);
        assert_eq!(pos, b.len());
    }

    #[test]
    fn payload_past_chunk_stops_decoding() {
        let words = [enter_word(1, 1), extended_word(1, 2, 0), 7];
        let b = bytes(&words);
        let mut it = ChunkEvents::new(&b, 0);
        assert!(matches!(it.next(), Some(Event::Enter { .. })));
        assert!(it.next().is_none());
        assert_eq!(it.cut_at(), Some(1));
    }

    #[test]
    fn max_region_round_trips() {
        let w = enter_word(MAX_REGION, DELTA_MASK);
        let b = bytes(&[w]);
        let ev: Vec<Event> = ChunkEvents::new(&b, 0).collect();
        assert_eq!(
            ev,
            vec![Event::Enter {
                region: MAX_REGION,
                ticks: DELTA_MASK
            }]
        );
    }
}
