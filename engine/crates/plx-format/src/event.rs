//! Trace event words: bit layout, encoders, and a zero-allocation decoder over one chunk.

/// Bits of a tick delta.
pub const DELTA_BITS: u32 = 40;
/// Mask of the delta field.
pub const DELTA_MASK: u64 = (1 << DELTA_BITS) - 1;
/// Largest region id an event can carry (22 bits).
pub const MAX_REGION: u32 = (1 << 22) - 1;
/// Extended subtype: time reset (one payload word, absolute ticks).
pub const SUBTYPE_TIME_RESET: u8 = 0;
/// Extended subtype: user event (payload: event id, f64 value bits).
pub const SUBTYPE_USER: u8 = 1;
/// Extended subtype: an MPI message leaves (payload: peer | tag << 32, bytes, comm).
pub const SUBTYPE_SEND: u8 = 2;
/// Extended subtype: an MPI message arrived (payload: real sender | tag << 32, bytes, comm).
pub const SUBTYPE_RECV: u8 = 3;
/// Extended subtype: this rank's part of a collective (payload: comm | root << 32, bytes sent, bytes received).
pub const SUBTYPE_COLLECTIVE: u8 = 4;
/// Extended subtype: a synchronization object acquired (payload: object | kind << 32, wait ticks).
pub const SUBTYPE_ACQUIRE: u8 = 5;
/// Extended subtype: a synchronization object released (payload: object | kind << 32).
pub const SUBTYPE_RELEASE: u8 = 6;
/// Extended subtype: CPU time of a `cputime` function's call (payload: region, cpu ns).
pub const SUBTYPE_CPU: u8 = 7;
/// Extended subtype: bytes written to a traced stream socket (payload: stream, end offset, bytes).
pub const SUBTYPE_STREAM_SEND: u8 = 8;
/// Extended subtype: bytes read from a traced stream socket (payload: stream, end offset, bytes).
pub const SUBTYPE_STREAM_RECV: u8 = 9;
/// Payload words of the stream subtypes.
pub const STREAM_PAYLOAD_WORDS: u8 = 3;
/// Extended subtype: an OpenMP implicit task begins (the thread joins a team).
pub const SUBTYPE_OMP_TASK: u8 = 18;
/// Payload words of the MPI subtypes (more are tolerated and skipped: later versions may add fields).
pub const MPI_PAYLOAD_WORDS: u8 = 3;

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

/// One decoded event, with its absolute time in ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// A region was entered.
    Enter {
        /// Region id.
        region: u32,
        /// Absolute ticks.
        ticks: u64,
    },
    /// A region was left.
    Exit {
        /// Region id.
        region: u32,
        /// Absolute ticks.
        ticks: u64,
    },
    /// Later deltas count from `ticks`.
    TimeReset {
        /// Absolute ticks.
        ticks: u64,
    },
    /// A user event value.
    User {
        /// User event id.
        event_id: u64,
        /// Its value.
        value: f64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// An MPI message left this thread (subtype 2).
    Send {
        /// Receiver, a world rank.
        peer: u32,
        /// Tag.
        tag: i32,
        /// Message size.
        bytes: u64,
        /// Process-local communicator id (CommDef).
        comm: u32,
        /// Absolute ticks.
        ticks: u64,
    },
    /// An MPI message arrived in this thread (subtype 3).
    Recv {
        /// The real sender, a world rank (wildcards resolved).
        peer: u32,
        /// Tag.
        tag: i32,
        /// Message size.
        bytes: u64,
        /// Process-local communicator id (CommDef).
        comm: u32,
        /// Absolute ticks.
        ticks: u64,
    },
    /// This rank's part of a collective (subtype 4).
    Collective {
        /// Process-local communicator id (CommDef).
        comm: u32,
        /// Root as a world rank, [`crate::NONE_U32`] if none.
        root: u32,
        /// Bytes this rank sent.
        bytes_sent: u64,
        /// Bytes this rank received.
        bytes_recv: u64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// A synchronization object taken, or a wait on one ended (subtype 5).
    Acquire {
        /// Process-local object id (SyncObject).
        object: u32,
        /// Object kind (SyncObject kinds: 0 mutex .. 6 thread).
        kind: u8,
        /// Ticks spent blocked before it.
        wait_ticks: u64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// A synchronization object released, posted or signalled (subtype 6).
    Release {
        /// Process-local object id (SyncObject).
        object: u32,
        /// Object kind.
        kind: u8,
        /// Absolute ticks.
        ticks: u64,
    },
    /// CPU time of one call of a function selected by the filter rule `cputime`, at its exit
    /// (subtype 7).
    Cpu {
        /// The function's region.
        region: u32,
        /// Inclusive CPU time of the call in ns.
        cpu_ns: u64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// Bytes written to a traced stream socket (subtype 8): one direction of a TCP connection.
    StreamSend {
        /// The direction's id: the same in the writer's and the reader's process (spec:
        /// "Stream subtypes").
        stream: u64,
        /// Bytes written to this direction so far, this write included.
        end: u64,
        /// Bytes this write moved.
        bytes: u64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// Bytes read from a traced stream socket (subtype 9).
    StreamRecv {
        /// The direction's id (as its writer's [`Event::StreamSend`]).
        stream: u64,
        /// Bytes read from this direction so far, this read included.
        end: u64,
        /// Bytes this read moved.
        bytes: u64,
        /// Absolute ticks.
        ticks: u64,
    },
    /// An OpenMP implicit task begins on this thread (subtype 18): it is thread `thread_num`
    /// of a team of `team_size` at nesting `level` running parallel region `region`.
    OmpTask {
        /// The OpenMP thread number within the team.
        thread_num: u32,
        /// Threads in the team.
        team_size: u32,
        /// Nesting level (1 = outermost parallel region).
        level: u32,
        /// The parallel region (a RegionDef of kind 7).
        region: u32,
        /// Absolute ticks.
        ticks: u64,
    },
    /// An extended event this reader does not know (skipped by its payload count).
    Unknown {
        /// Extended subtype, or 0xFF for word kind 3.
        subtype: u8,
        /// Absolute ticks.
        ticks: u64,
    },
}

impl Event {
    /// The event's absolute time in ticks.
    #[inline]
    pub fn ticks(&self) -> u64 {
        match *self {
            Event::Enter { ticks, .. }
            | Event::Exit { ticks, .. }
            | Event::TimeReset { ticks }
            | Event::User { ticks, .. }
            | Event::Send { ticks, .. }
            | Event::Recv { ticks, .. }
            | Event::Collective { ticks, .. }
            | Event::Acquire { ticks, .. }
            | Event::Release { ticks, .. }
            | Event::Cpu { ticks, .. }
            | Event::StreamSend { ticks, .. }
            | Event::StreamRecv { ticks, .. }
            | Event::OmpTask { ticks, .. }
            | Event::Unknown { ticks, .. } => ticks,
        }
    }
}

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
                match (subtype, n) {
                    (SUBTYPE_TIME_RESET, 1) => {
                        self.ticks = self.word(p);
                        Some(Event::TimeReset { ticks: self.ticks })
                    }
                    (SUBTYPE_USER, 2) => Some(Event::User {
                        event_id: self.word(p),
                        value: f64::from_bits(self.word(p + 8)),
                        ticks,
                    }),
                    (SUBTYPE_SEND | SUBTYPE_RECV, n) if n >= MPI_PAYLOAD_WORDS as usize => {
                        let w0 = self.word(p);
                        let peer = w0 as u32;
                        let tag = (w0 >> 32) as u32 as i32;
                        let bytes = self.word(p + 8);
                        let comm = self.word(p + 16) as u32;
                        Some(if subtype == SUBTYPE_SEND {
                            Event::Send {
                                peer,
                                tag,
                                bytes,
                                comm,
                                ticks,
                            }
                        } else {
                            Event::Recv {
                                peer,
                                tag,
                                bytes,
                                comm,
                                ticks,
                            }
                        })
                    }
                    (SUBTYPE_COLLECTIVE, n) if n >= MPI_PAYLOAD_WORDS as usize => {
                        let w0 = self.word(p);
                        Some(Event::Collective {
                            comm: w0 as u32,
                            root: (w0 >> 32) as u32,
                            bytes_sent: self.word(p + 8),
                            bytes_recv: self.word(p + 16),
                            ticks,
                        })
                    }
                    (SUBTYPE_ACQUIRE, n) if n >= 2 => {
                        let w0 = self.word(p);
                        Some(Event::Acquire {
                            object: w0 as u32,
                            kind: (w0 >> 32) as u8,
                            wait_ticks: self.word(p + 8),
                            ticks,
                        })
                    }
                    (SUBTYPE_RELEASE, n) if n >= 1 => {
                        let w0 = self.word(p);
                        Some(Event::Release {
                            object: w0 as u32,
                            kind: (w0 >> 32) as u8,
                            ticks,
                        })
                    }
                    (SUBTYPE_STREAM_SEND | SUBTYPE_STREAM_RECV, n)
                        if n >= STREAM_PAYLOAD_WORDS as usize =>
                    {
                        let (stream, end, bytes) =
                            (self.word(p), self.word(p + 8), self.word(p + 16));
                        Some(if subtype == SUBTYPE_STREAM_SEND {
                            Event::StreamSend {
                                stream,
                                end,
                                bytes,
                                ticks,
                            }
                        } else {
                            Event::StreamRecv {
                                stream,
                                end,
                                bytes,
                                ticks,
                            }
                        })
                    }
                    (SUBTYPE_CPU, n) if n >= 2 => Some(Event::Cpu {
                        region: self.word(p) as u32,
                        cpu_ns: self.word(p + 8),
                        ticks,
                    }),
                    (SUBTYPE_OMP_TASK, n) if n >= 2 => {
                        let (w0, w1) = (self.word(p), self.word(p + 8));
                        Some(Event::OmpTask {
                            thread_num: w0 as u32,
                            team_size: (w0 >> 32) as u32,
                            level: w1 as u32,
                            region: (w1 >> 32) as u32,
                            ticks,
                        })
                    }
                    _ => Some(Event::Unknown { subtype, ticks }),
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
        self.words.push(extended_word(SUBTYPE_TIME_RESET, 1, 0));
        self.words.push(ticks);
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

    /// Appends a user event at `ticks`.
    pub fn user(&mut self, event_id: u64, value: f64, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(extended_word(SUBTYPE_USER, 2, d));
        self.words.push(event_id);
        self.words.push(value.to_bits());
        self
    }

    fn message(&mut self, subtype: u8, peer: u32, tag: i32, bytes: u64, comm: u32, ticks: u64) {
        let d = self.delta(ticks);
        self.words
            .push(extended_word(subtype, MPI_PAYLOAD_WORDS, d));
        self.words.push(peer as u64 | ((tag as u32 as u64) << 32));
        self.words.push(bytes);
        self.words.push(comm as u64);
    }

    /// Appends an MPI send event at `ticks`.
    pub fn send(&mut self, peer: u32, tag: i32, bytes: u64, comm: u32, ticks: u64) -> &mut Self {
        self.message(SUBTYPE_SEND, peer, tag, bytes, comm, ticks);
        self
    }

    /// Appends an MPI receive event at `ticks` (`peer` is the real sender).
    pub fn recv(&mut self, peer: u32, tag: i32, bytes: u64, comm: u32, ticks: u64) -> &mut Self {
        self.message(SUBTYPE_RECV, peer, tag, bytes, comm, ticks);
        self
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
        let d = self.delta(ticks);
        self.words
            .push(extended_word(SUBTYPE_COLLECTIVE, MPI_PAYLOAD_WORDS, d));
        self.words.push(comm as u64 | ((root as u64) << 32));
        self.words.push(bytes_sent);
        self.words.push(bytes_recv);
        self
    }

    /// Appends a synchronization acquire (subtype 5) at `ticks` after `wait_ticks` blocked.
    pub fn acquire(&mut self, object: u32, kind: u8, wait_ticks: u64, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(extended_word(SUBTYPE_ACQUIRE, 2, d));
        self.words.push(object as u64 | ((kind as u64) << 32));
        self.words.push(wait_ticks);
        self
    }

    /// Appends a synchronization release (subtype 6) at `ticks`.
    pub fn release(&mut self, object: u32, kind: u8, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(extended_word(SUBTYPE_RELEASE, 1, d));
        self.words.push(object as u64 | ((kind as u64) << 32));
        self
    }

    /// Appends a stream send (subtype 8) at `ticks`: `bytes` written to direction `stream`,
    /// `end` bytes written to it so far.
    pub fn stream_send(&mut self, stream: u64, end: u64, bytes: u64, ticks: u64) -> &mut Self {
        self.stream(SUBTYPE_STREAM_SEND, stream, end, bytes, ticks)
    }

    /// Appends a stream receive (subtype 9) at `ticks`: `bytes` read from direction `stream`,
    /// `end` bytes read from it so far.
    pub fn stream_recv(&mut self, stream: u64, end: u64, bytes: u64, ticks: u64) -> &mut Self {
        self.stream(SUBTYPE_STREAM_RECV, stream, end, bytes, ticks)
    }

    fn stream(&mut self, subtype: u8, stream: u64, end: u64, bytes: u64, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words
            .push(extended_word(subtype, STREAM_PAYLOAD_WORDS, d));
        self.words.extend_from_slice(&[stream, end, bytes]);
        self
    }

    /// Appends the CPU time of a `cputime` function's call (subtype 7) at `ticks`, just before
    /// its exit.
    pub fn cpu(&mut self, region: u32, cpu_ns: u64, ticks: u64) -> &mut Self {
        let d = self.delta(ticks);
        self.words.push(extended_word(SUBTYPE_CPU, 2, d));
        self.words.push(region as u64);
        self.words.push(cpu_ns);
        self
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
