//! Rebuilds a thread's callpath profile (in ticks) and MPI message statistics from its trace events: an enter/exit stack.
//!
//! A builder may be *clipped* to a window of time ([`ProfileBuilder::clipped`]): then a call's
//! time counts only where it lies inside the window (every time is clamped to the window before
//! use, so an interval's length becomes its overlap with the window), and a call, a message, a
//! user event value, an acquisition or a release is counted only if it happens (a call, an
//! acquisition's wait: begins) inside.
//!
//! The runtime's own work (regions of kind runtime: `plx_flush`, `plx_symbols`, ...) is set
//! apart as the runtime does in a profile: its calls are children of the thread's root whatever
//! was open when they happened, and their time is taken out of every region open around them,
//! inclusive and exclusive, so that no function of the program counts it.

use plx_format::{Direction, Event, MessageStats, NONE_U32};

use crate::hash::{child_key, FastMap};

/// A callpath node in ticks with process-local region ids (like a ThreadProfile node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickNode {
    /// Parent node, [`NONE_U32`] for a root.
    pub parent: u32,
    /// Process-local region id.
    pub region: u32,
    /// Times entered.
    pub calls: u64,
    /// Calls to children.
    pub child_calls: u64,
    /// Inclusive ticks.
    pub inclusive: u64,
    /// Exclusive ticks.
    pub exclusive: u64,
    /// Inclusive CPU ns of a `cputime` function's node (NodeCpu, or the trace's CPU events).
    pub cpu_ns: Option<u64>,
}

#[derive(Clone, Copy)]
struct Frame {
    node: u32,
    enter: u64,
    child: u64,
    /// [`ProfileBuilder::apart`] when the frame was entered.
    apart: u64,
    /// A region of the runtime's own work.
    runtime: bool,
}

/// Running sums of one user event's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueSums {
    /// Number of values.
    pub count: u64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Sum.
    pub sum: f64,
    /// Sum of squares.
    pub sum_squares: f64,
}

/// One synchronization object's counts in one thread's trace (the trace's acquire and release
/// events), in the builder's time unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncTally {
    /// Process-local object id.
    pub object: u32,
    /// Object kind (SyncObject kinds: 0 mutex .. 6 thread).
    pub kind: u8,
    /// Acquisitions (locks taken, waits ended).
    pub acquisitions: u64,
    /// Acquisitions that waited (wait time above zero; the trace has no "a try failed" flag).
    pub contended: u64,
    /// Time blocked acquiring or waiting.
    pub wait: u64,
    /// Time held (mutex, rwlock, spin: from an acquire to the thread's next release of it).
    pub hold: u64,
    /// Releases, posts, signals and broadcasts.
    pub releases: u64,
}

/// Kinds that are held from their acquire to their release (mutex, rwlock, spin).
fn holds(kind: u8) -> bool {
    matches!(kind, 0 | 1 | 5)
}

/// Builds one thread's profile from its events in time order; no allocation per event once warm.
#[derive(Default)]
pub struct ProfileBuilder {
    nodes: Vec<TickNode>,
    index: FastMap<u64, u32>,
    stack: Vec<Frame>,
    /// Events seen.
    pub events: u64,
    /// Time of the first event.
    pub first_ticks: Option<u64>,
    /// Time of the last event.
    pub last_ticks: u64,
    /// Exits that matched no open region.
    pub unmatched_exits: u64,
    /// User event sums by event id.
    pub user: FastMap<u64, ValueSums>,
    /// MPI message statistics as the runtime would write them (`thread` 0; the routine is the
    /// innermost open region, [`NONE_U32`] if none); collectives give one record per direction.
    pub messages: Vec<MessageStats>,
    /// Synchronization counts per object, in order of first sight.
    pub sync: Vec<SyncTally>,
    /// Acquire times of locks not yet released: (object, time).
    held: Vec<(u32, u64)>,
    /// `[start, end)`: the window a clipped builder counts.
    clip: Option<(u64, u64)>,
    /// Enters still to come that are an OpenMP team starter's call path (an `omp_context`
    /// event announced them): frames, not calls.
    context: u32,
    /// Region ids of the runtime's own work (a handful).
    runtime: Vec<u32>,
    /// Time spent so far in the runtime's own regions, nested ones counted once.
    apart: u64,
}

impl ProfileBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder clipped to `[start, end)` (see the module's documentation); times are
    /// in the unit the events will carry.
    pub fn clipped(start: u64, end: u64) -> Self {
        ProfileBuilder {
            clip: Some((start, end)),
            ..Self::default()
        }
    }

    /// Sets the regions of the runtime's own work (kind runtime) apart (see the module's
    /// documentation).
    pub fn runtime_regions(mut self, ids: impl IntoIterator<Item = u32>) -> Self {
        self.runtime = ids.into_iter().collect();
        self
    }

    /// Time `t` moved into the window (unchanged when not clipped).
    #[inline]
    fn clamp(&self, t: u64) -> u64 {
        match self.clip {
            Some((s, e)) => t.clamp(s, e),
            None => t,
        }
    }

    /// Is `t` inside the window (always, when not clipped)?
    #[inline]
    fn inside(&self, t: u64) -> bool {
        self.clip.is_none_or(|(s, e)| t >= s && t < e)
    }

    #[inline]
    fn node_for(&mut self, parent: u32, region: u32) -> u32 {
        let p = (parent != NONE_U32).then_some(parent);
        let key = child_key(p, region);
        let next = self.nodes.len() as u32;
        let n = *self.index.entry(key).or_insert(next);
        if n == next {
            self.nodes.push(TickNode {
                parent,
                region,
                calls: 0,
                child_calls: 0,
                inclusive: 0,
                exclusive: 0,
                cpu_ns: None,
            });
        }
        n
    }

    #[inline]
    fn pop(&mut self, ticks: u64) {
        let f = self.stack.pop().expect("pop on a non-empty stack");
        let dur = ticks
            .saturating_sub(f.enter)
            .saturating_sub(self.apart - f.apart);
        let node = &mut self.nodes[f.node as usize];
        node.inclusive += dur;
        node.exclusive += dur.saturating_sub(f.child);
        if f.runtime {
            // taken out of the frames still open, not added to their children
            self.apart += dur;
        } else if let Some(parent) = self.stack.last_mut() {
            parent.child += dur;
        }
    }

    /// Feeds one event.
    #[inline]
    pub fn event(&mut self, ev: Event) {
        let raw = ev.ticks();
        let inside = self.inside(raw);
        let ticks = self.clamp(raw);
        self.events += 1;
        if self.first_ticks.is_none() {
            self.first_ticks = Some(ticks);
        }
        self.last_ticks = ticks;
        match ev {
            Event::Enter { region, .. } => {
                // the runtime's own work is no call the program made: a child of the root
                let runtime = self.runtime.contains(&region);
                let parent = match self.stack.last() {
                    Some(f) if !runtime => f.node,
                    _ => NONE_U32,
                };
                let n = self.node_for(parent, region);
                let call = inside && self.context == 0;
                self.context = self.context.saturating_sub(1);
                self.nodes[n as usize].calls += call as u64;
                if parent != NONE_U32 {
                    self.nodes[parent as usize].child_calls += call as u64;
                }
                self.stack.push(Frame {
                    node: n,
                    enter: ticks,
                    child: 0,
                    apart: self.apart,
                    runtime,
                });
            }
            Event::Exit { region, .. } => {
                let depth = self
                    .stack
                    .iter()
                    .rposition(|f| self.nodes[f.node as usize].region == region);
                match depth {
                    Some(d) => {
                        // Frames above the match were never exited: close them here.
                        self.unmatched_exits += (self.stack.len() - 1 - d) as u64;
                        while self.stack.len() > d {
                            self.pop(ticks);
                        }
                    }
                    None => self.unmatched_exits += 1,
                }
            }
            Event::OmpContext { count, .. } => self.context = count,
            _ if !inside && self.clip.is_some() && !matches!(ev, Event::Acquire { .. }) => {
                // outside the window: only an acquire (whose wait may reach into it) counts
                if let Event::Release { object, kind, .. } = ev {
                    self.release(object, kind, ticks, false);
                }
            }
            Event::User {
                event_id, value, ..
            } => {
                let s = self.user.entry(event_id).or_insert(ValueSums {
                    count: 0,
                    min: f64::INFINITY,
                    max: f64::NEG_INFINITY,
                    sum: 0.0,
                    sum_squares: 0.0,
                });
                s.count += 1;
                s.min = s.min.min(value);
                s.max = s.max.max(value);
                s.sum += value;
                s.sum_squares += value * value;
            }
            Event::Send {
                peer, bytes, comm, ..
            } => self.message(peer, Direction::Sent, comm, bytes),
            Event::Recv {
                peer, bytes, comm, ..
            } => self.message(peer, Direction::Received, comm, bytes),
            Event::Collective {
                comm,
                bytes_sent,
                bytes_recv,
                ..
            } => {
                self.message(NONE_U32, Direction::Sent, comm, bytes_sent);
                self.message(NONE_U32, Direction::Received, comm, bytes_recv);
            }
            Event::Acquire {
                object,
                kind,
                wait_ticks,
                ..
            } => {
                let begin = raw.saturating_sub(wait_ticks);
                let counted = self.inside(begin);
                let wait = ticks - self.clamp(begin);
                let t = self.tally(object, kind);
                t.acquisitions += counted as u64;
                t.contended += (counted && wait_ticks > 0) as u64;
                t.wait += wait;
                if holds(kind) {
                    self.held.push((object, ticks));
                }
            }
            Event::Release { object, kind, .. } => self.release(object, kind, ticks, true),
            // a clipped profile has no CPU times: the trace's CPU values are whole calls'
            Event::Cpu { .. } if self.clip.is_some() => {}
            Event::Cpu { region, cpu_ns, .. } => {
                // written just before the function's exit: its frame is the innermost of it
                if let Some(f) = self
                    .stack
                    .iter()
                    .rev()
                    .find(|f| self.nodes[f.node as usize].region == region)
                {
                    let c = &mut self.nodes[f.node as usize].cpu_ns;
                    *c = Some(c.unwrap_or(0) + cpu_ns);
                }
            }
            Event::TimeReset { .. }
            | Event::Unknown { .. }
            | Event::OmpTask { .. }
            | Event::StreamSend { .. }
            | Event::StreamRecv { .. }
            | Event::SendDone { .. }
            | Event::CollDone { .. }
            | Event::RecvPosted { .. }
            | Event::CountedCall { .. }
            | Event::CounterEpoch { .. } => {}
        }
    }

    #[cold]
    fn tally(&mut self, object: u32, kind: u8) -> &mut SyncTally {
        let i = match self.sync.iter().position(|t| t.object == object) {
            Some(i) => i,
            None => {
                self.sync.push(SyncTally {
                    object,
                    kind,
                    ..SyncTally::default()
                });
                self.sync.len() - 1
            }
        };
        &mut self.sync[i]
    }

    /// A release at `ticks` (clamped): ends the thread's latest hold of the object.
    #[cold]
    fn release(&mut self, object: u32, kind: u8, ticks: u64, counted: bool) {
        let held = self
            .held
            .iter()
            .rposition(|(o, _)| *o == object)
            .map(|i| self.held.remove(i).1);
        let t = self.tally(object, kind);
        t.releases += counted as u64;
        if let Some(since) = held {
            t.hold += ticks.saturating_sub(since);
        }
    }

    #[cold]
    fn message(&mut self, peer: u32, direction: Direction, comm: u32, bytes: u64) {
        let region = self
            .stack
            .last()
            .map_or(NONE_U32, |f| self.nodes[f.node as usize].region);
        let key = (region, peer, direction, comm);
        match self
            .messages
            .iter_mut()
            .find(|m| (m.region, m.peer, m.direction, m.comm) == key)
        {
            Some(m) => {
                m.count += 1;
                m.bytes += bytes;
                m.min_bytes = m.min_bytes.min(bytes);
                m.max_bytes = m.max_bytes.max(bytes);
            }
            None => self.messages.push(MessageStats {
                thread: 0,
                region,
                peer,
                direction,
                comm,
                count: 1,
                bytes,
                min_bytes: bytes,
                max_bytes: bytes,
            }),
        }
    }

    /// Regions still open.
    pub fn open_calls(&self) -> usize {
        self.stack.len()
    }

    /// Closes regions still open (and locks still held) at the last event's time and returns
    /// the nodes.
    pub fn finish(mut self) -> (Vec<TickNode>, Self) {
        let t = self.last_ticks;
        while !self.stack.is_empty() {
            self.pop(t);
        }
        for (object, since) in std::mem::take(&mut self.held) {
            if let Some(s) = self.sync.iter_mut().find(|s| s.object == object) {
                s.hold += t.saturating_sub(since);
            }
        }
        let nodes = std::mem::take(&mut self.nodes);
        (nodes, self)
    }
}

/// Where the calls still open at the end of one process's threads are closed, given each
/// thread's last event: `None` for a process that finished (its runtime closed them at its end
/// and said so in OpenAtEnd records; anything left ends at its thread's last event); for a
/// process killed (no ProcessEnd), the latest event of the whole process, so that a thread
/// blocked until the kill is not shown as 0 s. Calls closed there are cut (truncated). Every
/// reader (the profile rebuild, the exports, `plx view`) ends them by this rule.
pub fn killed_end<T: Ord>(finished: bool, lasts: impl IntoIterator<Item = T>) -> Option<T> {
    if finished {
        None
    } else {
        lasts.into_iter().max()
    }
}

/// What every reader says of the `calls` calls of `thread` that [`killed_end`] closed at the
/// latest event of its killed process (`path`: the file the warning is about).
pub fn killed_warning(path: &std::path::Path, thread: u32, calls: usize) -> plx_format::Warning {
    plx_format::Warning::file(
        path,
        plx_format::WarningKind::OpenAtEnd {
            calls: calls as u64,
        },
        format!(
            "thread {thread}: {calls} calls still open when the process was killed, closed at its last event (truncated)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_process_ends_open_calls_at_its_latest_event() {
        assert_eq!(killed_end(false, [5u64, 60_000_000, 7]), Some(60_000_000));
        assert_eq!(killed_end(true, [5u64, 60_000_000, 7]), None);
        assert_eq!(killed_end::<u64>(false, []), None);
    }

    fn enter(region: u32, ticks: u64) -> Event {
        Event::Enter { region, ticks }
    }
    fn exit(region: u32, ticks: u64) -> Event {
        Event::Exit { region, ticks }
    }

    #[test]
    fn nested_calls_and_open_regions() {
        let mut b = ProfileBuilder::new();
        for e in [
            enter(1, 0),
            enter(2, 10),
            exit(2, 30),
            enter(2, 40),
            exit(2, 50),
            enter(3, 60),
        ] {
            b.event(e);
        }
        b.event(Event::User {
            event_id: 0,
            value: 4.0,
            ticks: 100,
        });
        let (nodes, b) = b.finish();
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes[0].inclusive, 100);
        assert_eq!(nodes[0].exclusive, 100 - 30 - 40);
        assert_eq!(nodes[0].child_calls, 3);
        assert_eq!(nodes[1].calls, 2);
        assert_eq!(nodes[1].inclusive, 30);
        assert_eq!(nodes[2].inclusive, 40);
        assert_eq!(b.user[&0].count, 1);
    }

    #[test]
    fn runtime_work_is_set_apart() {
        // main 0..100 > f 10..90; a flush (region 0) 20..30 inside f, another 95..99 inside
        // main; a symbol lookup (region 1) 40..45 inside f with a flush 41..43 inside it
        let mut b = ProfileBuilder::new().runtime_regions([0, 1]);
        for e in [
            enter(2, 0),
            enter(3, 10),
            enter(0, 20),
            exit(0, 30),
            enter(1, 40),
            enter(0, 41),
            exit(0, 43),
            exit(1, 45),
            exit(3, 90),
            enter(0, 95),
            exit(0, 99),
            exit(2, 100),
        ] {
            b.event(e);
        }
        let (nodes, _) = b.finish();
        let node = |parent: u32, region: u32| {
            *nodes
                .iter()
                .find(|n| n.parent == parent && n.region == region)
                .unwrap()
        };
        let main = node(NONE_U32, 2);
        let f = node(0, 3);
        let flush = node(NONE_U32, 0);
        let symbols = node(NONE_U32, 1);
        assert_eq!(nodes.len(), 4, "{nodes:?}");
        assert_eq!(
            (main.inclusive, main.exclusive, main.child_calls),
            (100 - 19, 20 - 4, 1)
        );
        assert_eq!(
            (f.inclusive, f.exclusive, f.child_calls),
            (80 - 15, 80 - 15, 0)
        );
        assert_eq!((flush.calls, flush.inclusive, flush.exclusive), (3, 16, 16));
        assert_eq!(
            (symbols.calls, symbols.inclusive, symbols.exclusive),
            (1, 3, 3)
        );
        assert_eq!(flush.child_calls + symbols.child_calls, 0);
    }

    #[test]
    fn recursion_makes_nested_nodes() {
        let mut b = ProfileBuilder::new();
        for e in [enter(1, 0), enter(1, 10), exit(1, 20), exit(1, 30)] {
            b.event(e);
        }
        let (nodes, _) = b.finish();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[1].parent, 0);
        assert_eq!(nodes[0].inclusive, 30);
        assert_eq!(nodes[0].exclusive, 20);
    }

    #[test]
    fn messages_counted_under_the_open_routine() {
        let mut b = ProfileBuilder::new();
        let send = |bytes, ticks| Event::Send {
            peer: 1,
            tag: 0,
            bytes,
            comm: 0,
            ticks,
        };
        for e in [
            enter(1, 0),
            enter(7, 1),
            send(8, 2),
            exit(7, 3),
            enter(7, 4),
            send(32, 5),
            exit(7, 6),
            Event::Collective {
                comm: 0,
                root: NONE_U32,
                bytes_sent: 4,
                bytes_recv: 12,
                ticks: 7,
            },
        ] {
            b.event(e);
        }
        let (_, b) = b.finish();
        assert_eq!(b.messages.len(), 3);
        let m = b.messages[0];
        assert_eq!((m.region, m.peer, m.count, m.bytes), (7, 1, 2, 40));
        assert_eq!((m.min_bytes, m.max_bytes), (8, 32));
        assert_eq!(b.messages[1].region, 1);
        assert_eq!(b.messages[2].direction, Direction::Received);
        assert_eq!(b.messages[2].bytes, 12);
    }

    #[test]
    fn cpu_events_go_to_the_open_call() {
        let mut b = ProfileBuilder::new();
        for e in [
            enter(1, 0),
            enter(2, 10),
            Event::Cpu {
                region: 2,
                cpu_ns: 7,
                ticks: 19,
            },
            exit(2, 20),
            enter(2, 30),
            Event::Cpu {
                region: 2,
                cpu_ns: 5,
                ticks: 39,
            },
            exit(2, 40),
            exit(1, 50),
        ] {
            b.event(e);
        }
        let (nodes, _) = b.finish();
        assert_eq!(nodes[0].cpu_ns, None);
        assert_eq!(nodes[1].cpu_ns, Some(12));
    }

    #[test]
    fn unmatched_exit_is_counted() {
        let mut b = ProfileBuilder::new();
        b.event(exit(5, 3));
        b.event(enter(1, 4));
        b.event(enter(2, 5));
        b.event(exit(1, 9));
        let (nodes, b) = b.finish();
        assert_eq!(b.unmatched_exits, 2);
        assert_eq!(nodes[0].inclusive, 5);
        assert_eq!(nodes[1].inclusive, 4);
    }

    #[test]
    fn clipped_builder_counts_time_inside_and_calls_begun_inside() {
        // window [10, 30): main 0..50, a 5..15 (begins before), a 20..40 (ends after), b 32..34
        let mut b = ProfileBuilder::clipped(10, 30);
        for e in [
            enter(1, 0),
            enter(2, 5),
            exit(2, 15),
            enter(2, 20),
            exit(2, 40),
            enter(3, 32),
            exit(3, 34),
            exit(1, 50),
        ] {
            b.event(e);
        }
        let (nodes, b) = b.finish();
        assert_eq!(nodes[0].calls, 0);
        assert_eq!(nodes[0].inclusive, 20);
        assert_eq!(nodes[0].exclusive, 20 - 5 - 10);
        assert_eq!(nodes[0].child_calls, 1);
        assert_eq!((nodes[1].calls, nodes[1].inclusive), (1, 15));
        assert_eq!((nodes[2].calls, nodes[2].inclusive), (0, 0));
        assert_eq!((b.first_ticks, b.last_ticks), (Some(10), 30));
    }

    #[test]
    fn clipped_sync_counts_waits_begun_inside_and_holds_inside() {
        let acquire = |object, kind, wait_ticks, ticks| Event::Acquire {
            object,
            kind,
            holder: 0,
            wait_ticks,
            shared: 0,
            ticks,
        };
        let release = |object, kind, ticks| Event::Release {
            object,
            kind,
            ticks,
        };
        let mut b = ProfileBuilder::clipped(100, 200);
        for e in [
            // mutex 0: waited 90..110 (begins outside), held 110..150
            acquire(0, 0, 20, 110),
            release(0, 0, 150),
            // barrier 1: waited 180..230 (begins inside, ends outside)
            release(1, 3, 180),
            acquire(1, 3, 50, 230),
        ] {
            b.event(e);
        }
        let (_, b) = b.finish();
        let m = b.sync[0];
        assert_eq!((m.acquisitions, m.wait, m.hold, m.releases), (0, 10, 40, 1));
        let bar = b.sync[1];
        assert_eq!((bar.acquisitions, bar.contended, bar.wait), (1, 1, 20));
        assert_eq!((bar.releases, bar.hold), (1, 0));
    }
}
