//! The locations' event sources, read ahead: with more than one engine thread, a location's next batch of events is read and decoded on a thread of its own while the merge consumes the current one.
//!
//! Each location's [`Cursor`] sits behind a mutex, with at most one batch decoded ahead: the
//! merge takes that batch when it needs the next one (or decodes it itself when the read-ahead
//! thread has not got to it yet) and asks for the one after. Whoever decodes, a location's
//! batches come from its one cursor in order, so the events, their times and the damage met are
//! the same as without reading ahead; only which thread did the work differs. A location holds
//! at most one chunk's bytes (the cursor's) and two batches (the merge's and the one ahead).

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::cursor::{batch_len, Clock, Cursor, CursorDamage, Files, Head, MergeStats, Residency};

/// A location's cursor with what it decodes by, and its batch decoded ahead.
pub(crate) struct Source {
    cursor: Cursor,
    files: Arc<Files>,
    clock: Clock,
    /// The next batch, decoded ahead; empty when there is none (yet).
    ahead: Vec<Head>,
    /// The cursor has given its last event.
    done: bool,
}

impl Source {
    pub fn new(cursor: Cursor, files: Arc<Files>, clock: Clock) -> Source {
        Source {
            cursor,
            files,
            clock,
            ahead: Vec::new(),
            done: false,
        }
    }

    fn decode(&mut self, out: &mut Vec<Head>, stats: &Residency) {
        self.cursor.fill(&self.files, &self.clock, stats, out);
        self.done = out.is_empty();
    }

    /// Every remaining event to `f` ([`Cursor::scan`]), when the source is read alone.
    pub fn scan(&mut self, stats: &Residency, f: &mut impl super::cursor::Scan) {
        if !self.done {
            self.cursor.scan(&self.files, &self.clock, stats, f);
            self.done = true;
        }
    }

    /// Has the cursor met damage (events it could not decode, events out of order, bad
    /// chunks: what the merge turns into warnings)?
    pub fn damaged(&self) -> bool {
        let d = &self.cursor.damage;
        d.unknown > 0 || d.out_of_order > 0 || !d.warnings.is_empty()
    }

    /// The batch decoded ahead, if any.
    pub fn take_ahead(&mut self) -> Vec<Head> {
        std::mem::take(&mut self.ahead)
    }
}

struct Shared {
    sources: Vec<Mutex<Source>>,
    stats: Residency,
}

impl Shared {
    fn source(&self, li: u32) -> MutexGuard<'_, Source> {
        // a panic elsewhere leaves a source whole (its fields are only ever replaced)
        self.sources[li as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// Every location's source, and the read-ahead thread when there is one.
pub(crate) struct Sources {
    shared: Arc<Shared>,
    /// Locations whose next batch to decode ahead, in the order the merge started their
    /// current one (about the order it will need them).
    requests: Option<Sender<u32>>,
    thread: Option<JoinHandle<()>>,
}

impl Sources {
    /// The sources of the locations (by index); `read_ahead`: decode ahead on a thread. Their
    /// batches are as long as [`batch_len`] gives for that many locations.
    pub fn new(mut sources: Vec<Source>, read_ahead: bool) -> Sources {
        let batch = batch_len(sources.len());
        for s in &mut sources {
            s.cursor.set_batch(batch);
        }
        let shared = Arc::new(Shared {
            sources: sources.into_iter().map(Mutex::new).collect(),
            stats: Residency::default(),
        });
        let (requests, thread) = if read_ahead {
            let (tx, rx) = channel::<u32>();
            let sh = Arc::clone(&shared);
            let thread = std::thread::Builder::new()
                .name("plx-read-ahead".into())
                .spawn(move || {
                    while let Ok(li) = rx.recv() {
                        let mut s = sh.source(li);
                        if s.ahead.is_empty() && !s.done {
                            let mut out = std::mem::take(&mut s.ahead);
                            s.decode(&mut out, &sh.stats);
                            s.ahead = out;
                        }
                    }
                })
                .ok();
            match thread {
                Some(t) => (Some(tx), Some(t)),
                // no thread to be had: every batch is decoded when needed
                None => (None, None),
            }
        } else {
            (None, None)
        };
        Sources {
            shared,
            requests,
            thread,
        }
    }

    /// Puts location `li`'s next batch into `batch` (its last one, spent, is reused); empty
    /// at the location's end.
    pub fn next_batch(&self, li: u32, batch: &mut Vec<Head>) {
        batch.clear();
        let more = {
            let mut s = self.shared.source(li);
            if !s.ahead.is_empty() {
                std::mem::swap(batch, &mut s.ahead);
            } else if !s.done {
                s.decode(batch, &self.shared.stats);
            }
            !s.done
        };
        if let (true, Some(tx)) = (more, &self.requests) {
            // the thread is gone only if it panicked: batches are then decoded when needed
            let _ = tx.send(li);
        }
    }

    /// The sources, by location (each `Some`), the read-ahead thread ended.
    pub fn into_sources(mut self) -> Vec<Option<Source>> {
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let shared = std::mem::replace(
            &mut self.shared,
            Arc::new(Shared {
                sources: Vec::new(),
                stats: Residency::default(),
            }),
        );
        match Arc::try_unwrap(shared) {
            Ok(sh) => sh
                .sources
                .into_iter()
                .map(|m| Some(m.into_inner().unwrap_or_else(|e| e.into_inner())))
                .collect(),
            Err(_) => unreachable!("the read-ahead thread, the only other owner, has ended"),
        }
    }

    /// The chunk counters, with `events` produced.
    pub fn stats(&self, events: u64) -> MergeStats {
        self.shared.stats.stats(events)
    }

    /// What went wrong in location `li`'s stream so far (taken: asked once, at the end).
    pub fn take_damage(&self, li: u32) -> CursorDamage {
        std::mem::take(&mut self.shared.source(li).cursor.damage)
    }
}

impl Drop for Sources {
    fn drop(&mut self) {
        // the thread ends when the requests do
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
