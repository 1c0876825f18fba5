//! JPVS's displays from a timeline: utilization summary and Gantt chart, concurrency profile, message queue length, space-time diagram.

use crate::selection::Window;

use super::{Grid, Message, Segment, State, Timeline};

/// A location's time in each state over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct Utilization {
    /// Location label.
    pub location: String,
    /// Seconds computing, in MPI, waiting, idle ([`State::ALL`] order).
    pub seconds: [f64; 4],
}

impl Utilization {
    /// The window's length, s (the sum of the states).
    pub fn total_s(&self) -> f64 {
        self.seconds.iter().sum()
    }

    /// Percent of the window in `state`.
    pub fn percent(&self, state: State) -> f64 {
        let t = self.total_s();
        if t > 0.0 {
            100.0 * self.seconds[state as usize] / t
        } else {
            0.0
        }
    }
}

/// Per location, its time computing, in MPI, waiting and idle within the window (idle: before
/// its first event and after its last).
pub fn utilization(tl: &Timeline, window: Window) -> Vec<Utilization> {
    gantt(tl, window)
        .into_iter()
        .enumerate()
        .map(|(li, segs)| {
            let mut seconds = [0.0; 4];
            for s in segs {
                seconds[s.state as usize] += (s.end_ns - s.start_ns) as f64 * 1e-9;
            }
            Utilization {
                location: tl.locations[li].label.clone(),
                seconds,
            }
        })
        .collect()
}

/// Per location, its state intervals covering the window's span exactly (idle before its first
/// event and after its last), merged runs of one state, in time order.
pub fn gantt(tl: &Timeline, window: Window) -> Vec<Vec<Segment>> {
    let (s, e) = tl.span(window);
    tl.segments
        .iter()
        .map(|segs| {
            let mut out: Vec<Segment> = Vec::new();
            let mut push = |a: i64, b: i64, state: State| {
                let (a, b) = (a.max(s), b.min(e));
                if b <= a {
                    return;
                }
                match out.last_mut() {
                    Some(l) if l.state == state && l.end_ns == a => l.end_ns = b,
                    _ => out.push(Segment {
                        start_ns: a,
                        end_ns: b,
                        state,
                    }),
                }
            };
            let mut at = s;
            for g in segs {
                push(at, g.start_ns, State::Idle);
                push(g.start_ns, g.end_ns, g.state);
                at = at.max(g.end_ns);
            }
            push(at, e, State::Idle);
            out
        })
        .collect()
}

/// How many locations compute at each moment: `(time, k)` steps, k holding from its time until
/// the next step's, over all time (0 before the first).
pub(crate) fn computing_steps(tl: &Timeline) -> Vec<(i64, u32)> {
    let mut changes: Vec<(i64, i32)> = Vec::new();
    for segs in &tl.segments {
        for g in segs.iter().filter(|g| g.state == State::Computing) {
            changes.push((g.start_ns, 1));
            changes.push((g.end_ns, -1));
        }
    }
    changes.sort_unstable();
    let mut steps: Vec<(i64, u32)> = Vec::new();
    let mut k: i64 = 0;
    for (t, d) in changes {
        k += d as i64;
        let kk = k.max(0) as u32;
        match steps.last_mut() {
            Some(last) if last.0 == t => last.1 = kk,
            _ => steps.push((t, kk)),
        }
    }
    steps.dedup_by(|b, a| a.1 == b.1);
    steps
}

/// The concurrency profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrency {
    /// Locations.
    pub locations: usize,
    /// Seconds of the window with k = 0, 1, ..., `locations` locations computing.
    pub seconds: Vec<f64>,
    /// The bins of the curve over time.
    pub grid: Grid,
    /// Per bin, the mean number of locations computing.
    pub mean: Vec<f64>,
    /// Per bin, the most locations computing at once.
    pub max: Vec<u32>,
}

/// The time spent with k = 0..N locations computing over the window, and per bin the mean
/// and the most computing at once.
pub fn concurrency(tl: &Timeline, window: Window, bins: usize) -> Concurrency {
    let (s, e) = tl.span(window);
    let grid = Grid::over(s, e, bins);
    let n = tl.locations.len();
    let mut c = Concurrency {
        locations: n,
        seconds: vec![0.0; n + 1],
        grid,
        mean: vec![0.0; grid.bins],
        max: vec![0; grid.bins],
    };
    let steps = computing_steps(tl);
    let mut piece = |a: i64, b: i64, k: u32| {
        let (a, b) = (a.max(s), b.min(e));
        if b <= a {
            return;
        }
        c.seconds[(k as usize).min(n)] += (b - a) as f64 * 1e-9;
        grid.add_span(&mut c.mean, a, b, k as f64 / grid.width_ns);
        grid.for_each_overlap(a, b, |i, _| c.max[i] = c.max[i].max(k));
    };
    let mut at = (s, 0u32);
    for &(t, k) in &steps {
        piece(at.0, t, at.1);
        at = (t.max(at.0), k);
    }
    piece(at.0, e, at.1);
    c
}

/// The message queue: messages sent and not yet received.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    /// The queue's length from each time on, global ns: the first step is the window's start.
    pub steps: Vec<(i64, i64)>,
    /// The length at the window's end (unmatched sends stay in the queue).
    pub final_len: i64,
    /// The bins of the curve.
    pub grid: Grid,
    /// Per bin, the longest queue.
    pub max: Vec<i64>,
    /// Per bin, the mean length.
    pub mean: Vec<f64>,
}

/// The queue length over the window: +1 at each send, −1 at its matched receive.
pub fn queue_length(tl: &Timeline, window: Window, bins: usize) -> Queue {
    let (s, e) = tl.span(window);
    let grid = Grid::over(s, e, bins);
    let mut changes: Vec<(i64, i64)> = Vec::with_capacity(2 * tl.messages.len());
    for m in &tl.messages {
        changes.push((m.send_ns, 1));
        if let Some(r) = m.recv_ns {
            changes.push((r, -1));
        }
    }
    // at one instant, sends first: a message received when sent was in the queue for no time
    changes.sort_unstable_by_key(|&(t, d)| (t, -d));
    let mut q = Queue {
        steps: vec![(s, 0)],
        final_len: 0,
        grid,
        max: vec![0; grid.bins],
        mean: vec![0.0; grid.bins],
    };
    let mut len = 0i64;
    for (t, d) in changes {
        len += d;
        if t > e {
            break;
        }
        let at = t.max(s);
        match q.steps.last_mut() {
            Some(last) if last.0 == at => last.1 = len,
            _ => q.steps.push((at, len)),
        }
    }
    q.steps.dedup_by(|b, a| a.1 == b.1);
    q.final_len = q.steps.last().map_or(0, |l| l.1);
    for (i, &(t, l)) in q.steps.iter().enumerate() {
        let next = q.steps.get(i + 1).map_or(e, |n| n.0);
        if let Some(b) = grid.index(t) {
            q.max[b] = q.max[b].max(l);
        }
        grid.add_span(&mut q.mean, t, next, l as f64 / grid.width_ns);
        grid.for_each_overlap(t, next, |b, _| q.max[b] = q.max[b].max(l));
    }
    q
}

/// The messages of the window, matched or not, in send order: those sent inside it
/// ([`Window::holds_message_sent_at`], the rule of every command).
pub fn messages_in(tl: &Timeline, window: Window) -> impl Iterator<Item = &Message> {
    tl.messages
        .iter()
        .filter(move |m| window.holds_message_sent_at(m.send_ns))
}

/// The matched messages of the window ([`messages_in`]), in send order: the space-time
/// diagram's lines (a line may end after the window).
pub fn space_time(tl: &Timeline, window: Window) -> Vec<Message> {
    messages_in(tl, window)
        .filter(|m| m.receiver.is_some() && m.recv_ns.is_some())
        .copied()
        .collect()
}
