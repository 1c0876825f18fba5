//! The merged stream on a thread of its own: [`GlobalMerge::feed`] merges while its caller consumes (writes an export, builds a graph), the events handed over in batches, in order.
//!
//! The consumer sees exactly the sequential stream: the same events in the same order, the
//! regions and user events the merge has named so far (a region or user event first met in the
//! trace is named in the batch that first uses it), and the merge back at the end for its
//! warnings and counters. A consumer that stops early stops the merge where it would have
//! stopped: at the first event at or after `until`, or when the consumer returns.

use std::sync::mpsc::{sync_channel, Receiver};

use super::{GlobalEvent, GlobalMerge};
use crate::regions::{RegionInfo, RegionTable};

/// Events per batch handed from the merge to its consumer.
const BATCH: usize = 2048;
/// Batches in flight: the merge runs at most this far ahead of its consumer.
const IN_FLIGHT: usize = 4;

struct Batch {
    events: Vec<GlobalEvent>,
    /// Regions and user events the merge named since the last batch, in order.
    regions: Vec<RegionInfo>,
    user_events: Vec<String>,
}

/// The consumer's side of [`GlobalMerge::feed`]: the events in stream order, with the names
/// they refer to.
pub struct Feed<'a, 'm> {
    from: From<'a, 'm>,
    /// Events handed out.
    events: u64,
}

enum From<'a, 'm> {
    /// The merge on another thread.
    Thread {
        rx: Option<Receiver<Batch>>,
        batch: std::vec::IntoIter<GlobalEvent>,
        regions: RegionTable,
        user_events: Vec<String>,
    },
    /// The merge on this one (one engine thread).
    Here {
        merge: &'a mut GlobalMerge<'m>,
        until: Option<i64>,
        done: bool,
    },
}

impl Feed<'_, '_> {
    /// The next event of the merged stream, `None` at the end (or after the first event at or
    /// after the `until` of [`GlobalMerge::feed`]).
    #[inline]
    pub fn next_event(&mut self) -> Option<GlobalEvent> {
        let e = match &mut self.from {
            From::Here { merge, until, done } => {
                if *done {
                    return None;
                }
                let e = merge.next_event();
                *done = match e {
                    Some(e) => until.is_some_and(|u| e.time_ns >= u),
                    None => true,
                };
                e
            }
            From::Thread {
                rx,
                batch,
                regions,
                user_events,
            } => loop {
                if let Some(e) = batch.next() {
                    break Some(e);
                }
                let Some(b) = rx.as_ref().and_then(|rx| rx.recv().ok()) else {
                    *rx = None;
                    break None;
                };
                for r in b.regions {
                    regions.intern(r);
                }
                user_events.extend(b.user_events);
                *batch = b.events.into_iter();
            },
        };
        self.events += e.is_some() as u64;
        e
    }

    /// Regions, as [`GlobalMerge::regions`] at the last event handed out.
    pub fn regions(&self) -> &RegionTable {
        match &self.from {
            From::Here { merge, .. } => merge.regions(),
            From::Thread { regions, .. } => regions,
        }
    }

    /// User event names, as [`GlobalMerge::user_events`] at the last event handed out.
    pub fn user_events(&self) -> &[String] {
        match &self.from {
            From::Here { merge, .. } => merge.user_events(),
            From::Thread { user_events, .. } => user_events,
        }
    }

    /// Events handed out so far.
    pub fn events(&self) -> u64 {
        self.events
    }
}

impl<'m> GlobalMerge<'m> {
    /// Runs `consume` on the merged stream while the merge runs on another thread (with one
    /// engine thread, `-j 1`, on this one, event by event); returns the merge, exhausted or
    /// stopped where the sequential stream would be, and what `consume` returned. `until`:
    /// stop after the first event at or after this time (as a consumer that breaks there).
    pub fn feed<R>(
        mut self,
        until: Option<i64>,
        consume: impl for<'a> FnOnce(&mut Feed<'a, 'm>) -> R,
    ) -> (GlobalMerge<'m>, R) {
        if rayon::current_num_threads() < 2 {
            let r = consume(&mut Feed {
                from: From::Here {
                    merge: &mut self,
                    until,
                    done: false,
                },
                events: 0,
            });
            return (self, r);
        }
        let (tx, rx) = sync_channel::<Batch>(IN_FLIGHT);
        let mut feed = Feed {
            from: From::Thread {
                rx: Some(rx),
                batch: Vec::new().into_iter(),
                regions: self.regions.clone(),
                user_events: self.user_events.clone(),
            },
            events: 0,
        };
        let mut merge = self;
        std::thread::scope(|s| {
            let producer = s.spawn(move || {
                let (mut regions, mut users) = (merge.regions.all().len(), merge.user_events.len());
                let mut done = false;
                while !done {
                    let mut events = Vec::with_capacity(BATCH);
                    while events.len() < BATCH {
                        let Some(e) = merge.next_event() else {
                            done = true;
                            break;
                        };
                        events.push(e);
                        if until.is_some_and(|u| e.time_ns >= u) {
                            done = true;
                            break;
                        }
                    }
                    let b = Batch {
                        events,
                        regions: merge.regions.all()[regions..].to_vec(),
                        user_events: merge.user_events[users..].to_vec(),
                    };
                    (regions, users) = (merge.regions.all().len(), merge.user_events.len());
                    if tx.send(b).is_err() {
                        // the consumer is done: so is the merge
                        break;
                    }
                }
                merge
            });
            let r = consume(&mut feed);
            // the consumer may stop before the stream's end: the merge must not wait for it
            drop(feed);
            let merge = producer
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (merge, r)
        })
    }
}
