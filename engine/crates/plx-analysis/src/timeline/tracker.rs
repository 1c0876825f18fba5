//! One location's state machine over its events: computing, MPI or waiting, and the function running.

use plx_format::RegionKind;

use crate::merge::EventKind;
use crate::regions::RegionTable;

use super::State;

const MPI: u8 = 1;
const SOCKET: u8 = 2;
const PHASE: u8 = 4;
const TRACKED: u8 = 8;

/// What each global region is to the trackers, by region index; regions the merge adds while it
/// runs (named by a trace without a definition) are classified on first sight.
pub(crate) struct Classes {
    flags: Vec<u8>,
    tracked: Vec<u32>,
}

impl Classes {
    pub fn new(tracked: &[u32]) -> Classes {
        Classes {
            flags: Vec::new(),
            tracked: tracked.to_vec(),
        }
    }

    #[inline]
    pub fn of(&mut self, region: u32, table: &RegionTable) -> u8 {
        let i = region as usize;
        if i >= self.flags.len() {
            let from = self.flags.len();
            for r in from..=i {
                let kind = table.get(r as u32).kind;
                let mut f = match kind {
                    RegionKind::Mpi => MPI,
                    RegionKind::Socket => SOCKET,
                    RegionKind::Phase => PHASE,
                    _ => 0,
                };
                if self.tracked.contains(&(r as u32)) {
                    f |= TRACKED;
                }
                self.flags.push(f);
            }
        }
        self.flags[i]
    }
}

/// What a span of a location's time was: emitted by [`Tracker::advance`] for `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: i64,
    pub end: i64,
    pub state: State,
    /// The innermost region open that is not a phase (`None`: no measured function).
    pub function: Option<u32>,
}

/// A change of the tracked function's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tracked {
    /// A call began (any depth).
    Call,
    /// The outermost call began: the location is inside the function from now.
    Inside,
    /// The outermost call ended.
    Outside,
}

/// A location's open regions and synchronization waits. Invariant: `since` is the time up to
/// which spans were emitted; the state and function hold from `since` on.
pub(crate) struct Tracker {
    stack: Vec<(u32, u8)>,
    mpi: u32,
    socket: u32,
    tracked: u32,
    waiting: bool,
    /// Sorted, disjoint synchronization waits `[start, end)` of this location, global ns.
    waits: Vec<(i64, i64)>,
    next_wait: usize,
    started: bool,
    pub since: i64,
}

impl Tracker {
    pub fn new(waits: Vec<(i64, i64)>) -> Tracker {
        Tracker {
            stack: Vec::new(),
            mpi: 0,
            socket: 0,
            tracked: 0,
            waiting: false,
            waits,
            next_wait: 0,
            started: false,
            since: i64::MIN,
        }
    }

    fn state(&self) -> State {
        if self.mpi > 0 {
            State::Mpi
        } else if self.socket > 0 || self.waiting {
            State::Wait
        } else {
            State::Computing
        }
    }

    fn function(&self) -> Option<u32> {
        self.stack
            .iter()
            .rev()
            .find(|(_, f)| f & PHASE == 0)
            .map(|(r, _)| *r)
    }

    fn emit(&mut self, until: i64, sink: &mut impl FnMut(Span)) {
        if self.started && until > self.since {
            sink(Span {
                start: self.since,
                end: until,
                state: self.state(),
                function: self.function(),
            });
        }
        self.since = self.since.max(until);
    }

    /// Emits the spans up to `t`, crossing the synchronization waits' boundaries on the way;
    /// the first call starts the location at `t`.
    pub fn advance(&mut self, t: i64, sink: &mut impl FnMut(Span)) {
        while let Some(&(a, b)) = self.waits.get(self.next_wait) {
            let boundary = if self.waiting { b } else { a };
            if boundary > t {
                break;
            }
            self.emit(boundary, sink);
            if self.waiting {
                self.next_wait += 1;
            }
            self.waiting = !self.waiting;
        }
        if !self.started {
            self.started = true;
            self.since = t;
        }
        self.emit(t, sink);
    }

    /// Applies an event at the current time (after [`Tracker::advance`] to it); reports what it
    /// did to the tracked function.
    pub fn apply(
        &mut self,
        kind: &EventKind,
        classes: &mut Classes,
        table: &RegionTable,
        mut tracked: impl FnMut(Tracked),
    ) {
        match *kind {
            EventKind::Enter { region } => {
                let f = classes.of(region, table);
                self.count(f, 1);
                if f & TRACKED != 0 {
                    tracked(Tracked::Call);
                    if self.tracked == 1 {
                        tracked(Tracked::Inside);
                    }
                }
                self.stack.push((region, f));
            }
            EventKind::Exit { region } => {
                // an exit closes the latest open enter of its region, and any left open above it
                let Some(pos) = self.stack.iter().rposition(|(r, _)| *r == region) else {
                    return;
                };
                while self.stack.len() > pos {
                    let (_, f) = self.stack.pop().expect("above pos");
                    self.count(f, -1);
                    if f & TRACKED != 0 && self.tracked == 0 {
                        tracked(Tracked::Outside);
                    }
                }
            }
            _ => {}
        }
    }

    fn count(&mut self, f: u8, d: i32) {
        let bump = |c: &mut u32| *c = c.saturating_add_signed(d);
        if f & MPI != 0 {
            bump(&mut self.mpi);
        }
        if f & SOCKET != 0 {
            bump(&mut self.socket);
        }
        if f & TRACKED != 0 {
            bump(&mut self.tracked);
        }
    }
}
