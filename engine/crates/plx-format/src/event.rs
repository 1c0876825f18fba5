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
