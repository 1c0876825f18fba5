//! The window query: what a timeline of `width` pixel columns over `[t0, t1)` shows.
//!
//! The window is cut into `width` columns at integer boundaries `b_c = t0 + (t1 − t0)·c / width`.
//! Per track and depth, a region that lies inside one column (`b_c ≤ start`, `end ≤ b_{c+1}`,
//! `start < b_{c+1}`) is below a pixel: it is only counted in its column's summary (how many,
//! how long in total, and the longest one, which names what dominates). Every other region
//! overlapping the window (it crosses a boundary or an edge of the window) comes at full detail;
//! there are at most `width + 1` of them per lane. So an answer's size depends on the width and
//! the number of lanes, never on the number of events in the window.
//!
//! Messages whose line crosses the window (sent before its end, received at or after its
//! start) come at full detail when there are at most `max_messages`; otherwise bundled by
//! sender, receiver and the column of the send (clamped to the window), each bundle with its
//! count and bytes, so the counts still add up to the messages in the window.

use crate::index::{Handoff, Lane, Marker, Message, TraceIndex};

/// What the browser asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowQuery {
    /// Window start, global ns.
    pub t0: i64,
    /// Window end, global ns (greater than `t0`).
    pub t1: i64,
    /// Pixel columns (at least 1).
    pub width: u32,
    /// Most messages (and markers) given one by one.
    pub max_messages: usize,
}

/// The regions below a pixel of one column of one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Column.
    pub col: u32,
    /// Regions inside it.
    pub count: u32,
    /// Their total time, ns.
    pub busy: u64,
    /// The longest of them (index into the lane).
    pub longest: usize,
}

/// One lane's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaneAnswer {
    /// Regions at full detail (indices into the lane, in order).
    pub full: Vec<usize>,
    /// Columns that have regions below a pixel, in order.
    pub columns: Vec<Column>,
}

/// Messages sent in one column from one track to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bundle {
    /// Column of the sends (clamped to the window).
    pub col: u32,
    /// Sender track.
    pub from: u32,
    /// Receiver track.
    pub to: u32,
    /// Messages.
    pub count: u64,
    /// Bytes.
    pub bytes: u64,
    /// Their mean receive time, global ns.
    pub mean_recv: i64,
}

/// The messages of a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessagesAnswer {
    /// Matched messages whose line crosses the window.
    pub total: u64,
    /// Sends in the window without a matched receive.
    pub unmatched: u64,
    /// The matched messages one by one (when `total ≤ max_messages`).
    pub lines: Vec<Message>,
    /// Otherwise bundled.
    pub bundles: Vec<Bundle>,
}

/// The answer to a [`WindowQuery`].
#[derive(Debug, Clone, Default)]
pub struct WindowAnswer {
    /// Per track, per depth.
    pub lanes: Vec<Vec<LaneAnswer>>,
    /// Messages.
    pub messages: MessagesAnswer,
    /// User events in the window (the first `max_messages` in time order, with their track).
    pub markers: Vec<(u32, Marker)>,
    /// User events in the window.
    pub markers_total: u64,
    /// Hand-offs whose arc crosses the window (the first `max_messages` by release).
    pub handoffs: Vec<Handoff>,
    /// Hand-offs whose arc crosses the window.
    pub handoffs_total: u64,
}

/// Column boundaries of a query.
struct Grid {
    t0: i64,
    span: i128,
    w: u32,
}

impl Grid {
    fn boundary(&self, c: u32) -> i64 {
        self.t0 + (self.span * c as i128 / self.w as i128) as i64
    }

    /// The column holding `t` (clamped to the window).
    fn col(&self, t: i64) -> u32 {
        if t <= self.t0 {
            return 0;
        }
        let mut c =
            (((t - self.t0) as i128 * self.w as i128) / self.span).min(self.w as i128 - 1) as u32;
        while c + 1 < self.w && self.boundary(c + 1) <= t {
            c += 1;
        }
        while c > 0 && self.boundary(c) > t {
            c -= 1;
        }
        c
    }
}

/// Above this many regions of a lane in the window, the answer uses the lane's block maxima
/// instead of visiting each region.
const SCAN_PER_COLUMN: usize = 4;

/// Answers `q` from `ix`.
pub fn window(ix: &TraceIndex, q: &WindowQuery) -> WindowAnswer {
    let t1 = q.t1.max(q.t0 + 1);
    let g = Grid {
        t0: q.t0,
        span: (t1 - q.t0) as i128,
        w: q.width.max(1),
    };
    let lanes = ix
        .tracks
        .iter()
        .map(|t| t.lanes.iter().map(|l| lane(l, &g, t1)).collect())
        .collect();
    let (markers, markers_total) = markers(ix, q.t0, t1, q.max_messages);
    let lo = ix
        .handoffs
        .partition_point(|h| h.release < q.t0.saturating_sub(ix.max_handoff));
    let hi = ix.handoffs.partition_point(|h| h.release < t1);
    let crossing = ix.handoffs[lo..hi].iter().filter(|h| h.acquire >= q.t0);
    WindowAnswer {
        handoffs_total: crossing.clone().count() as u64,
        handoffs: crossing.take(q.max_messages).copied().collect(),
        lanes,
        messages: messages(ix, &g, t1, q.max_messages),
        markers,
        markers_total,
    }
}

fn lane(l: &Lane, g: &Grid, t1: i64) -> LaneAnswer {
    let (a, b) = l.overlapping(g.t0, t1);
    lane_with(l, g, t1, b - a <= SCAN_PER_COLUMN * g.w as usize)
}

/// The answer of one lane by visiting each region in the window (`scan`) or from the block
/// maxima: the two give the same answer.
fn lane_with(l: &Lane, g: &Grid, t1: i64, scan: bool) -> LaneAnswer {
    let (a, b) = l.overlapping(g.t0, t1);
    let mut out = LaneAnswer::default();
    if a == b {
        return out;
    }
    if scan {
        let mut cur: Option<Column> = None;
        for i in a..b {
            let (s, e) = (l.start[i], l.end[i]);
            let c = g.col(s);
            if s >= g.t0 && e <= g.boundary(c + 1) && s < g.boundary(c + 1) {
                match cur.as_mut() {
                    Some(col) if col.col == c => {
                        col.count += 1;
                        col.busy += (e - s) as u64;
                        if l.dur(i) > l.dur(col.longest) {
                            col.longest = i;
                        }
                    }
                    _ => {
                        out.columns.extend(cur.take());
                        cur = Some(Column {
                            col: c,
                            count: 1,
                            busy: (e - s) as u64,
                            longest: i,
                        });
                    }
                }
            } else {
                out.full.push(i);
            }
        }
        out.columns.extend(cur);
        return out;
    }
    // regions longer than the widest column cross a boundary; shorter ones that do contain one
    let widest = (g.span / g.w as i128) as i64 + 1;
    let mut full = Vec::new();
    l.longer_than(a, b, widest, &mut |i| full.push(i));
    // columns go left to right: each search starts where the previous one ended
    let mut at = a;
    for c in 1..g.w {
        let bc = g.boundary(c);
        at = gallop(&l.start, at, |s| s < bc);
        if at > 0 && l.start[at - 1] < bc && l.end[at - 1] > bc {
            full.push(at - 1);
        }
    }
    if l.start[a] < g.t0 {
        full.push(a);
    }
    if l.end[b - 1] > t1 {
        full.push(b - 1);
    }
    full.sort_unstable();
    full.dedup();
    out.full = full;
    let (mut ia, mut by_start, mut by_end) = (a, a, a);
    for c in 0..g.w {
        let (lo, hi) = (g.boundary(c), g.boundary(c + 1));
        ia = gallop(&l.start, ia, |s| s < lo);
        by_start = gallop(&l.start, by_start.max(ia), |s| s < hi);
        by_end = gallop(&l.end, by_end, |e| e <= hi);
        let ib = by_start.min(by_end).min(b);
        if let Some(longest) = l.longest(ia, ib) {
            out.columns.push(Column {
                col: c,
                count: (ib - ia) as u32,
                busy: l.busy(ia, ib),
                longest,
            });
        }
    }
    out
}

/// The first index from `from` on whose value fails `pred` (true on a prefix of `v`), found by
/// doubling steps from `from` then bisecting: cheap when the answer is near `from`.
fn gallop<T: Copy>(v: &[T], from: usize, pred: impl Fn(T) -> bool) -> usize {
    if from >= v.len() || !pred(v[from]) {
        return from;
    }
    // pred(v[lo]) holds; find hi with !pred(v[hi]) or the end
    let (mut lo, mut step) = (from, 1usize);
    let hi = loop {
        let next = lo + step;
        if next >= v.len() {
            break v.len();
        }
        if !pred(v[next]) {
            break next;
        }
        lo = next;
        step *= 2;
    };
    lo + 1 + v[lo + 1..hi].partition_point(|&x| pred(x))
}

fn messages(ix: &TraceIndex, g: &Grid, t1: i64, max: usize) -> MessagesAnswer {
    let lo = ix
        .messages
        .partition_point(|m| m.send < g.t0.saturating_sub(ix.max_latency));
    let hi = ix.messages.partition_point(|m| m.send < t1);
    let mut out = MessagesAnswer::default();
    // sends are in time order, so their columns never decrease: the bundles of one column are
    // complete when the next column begins
    let mut column: Vec<Bundle> = Vec::new();
    let mut recv_sums: Vec<i128> = Vec::new();
    let flush = |column: &mut Vec<Bundle>, sums: &mut Vec<i128>, out: &mut Vec<Bundle>| {
        for (mut b, s) in column.drain(..).zip(sums.drain(..)) {
            b.mean_recv = (s / b.count as i128) as i64;
            out.push(b);
        }
    };
    let mut bundled: Vec<Bundle> = Vec::new();
    let add =
        |m: &Message, column: &mut Vec<Bundle>, sums: &mut Vec<i128>, out: &mut Vec<Bundle>| {
            let (col, from, to, recv) = (
                g.col(m.send),
                m.from,
                m.to.expect("matched"),
                m.recv.expect("matched"),
            );
            if column.first().is_some_and(|b| b.col != col) {
                flush(column, sums, out);
            }
            match column.iter().position(|b| b.from == from && b.to == to) {
                Some(i) => {
                    column[i].count += 1;
                    column[i].bytes += m.bytes;
                    sums[i] += recv as i128;
                }
                None => {
                    column.push(Bundle {
                        col,
                        from,
                        to,
                        count: 1,
                        bytes: m.bytes,
                        mean_recv: 0,
                    });
                    sums.push(recv as i128);
                }
            }
        };
    let mut lines: Vec<Message> = Vec::new();
    let mut bundling = false;
    for m in &ix.messages[lo..hi] {
        match (m.recv, m.to) {
            (Some(r), Some(_)) if r >= g.t0 => {
                out.total += 1;
                if bundling {
                    add(m, &mut column, &mut recv_sums, &mut bundled);
                } else if lines.len() < max {
                    lines.push(*m);
                } else {
                    bundling = true;
                    for l in lines.drain(..).chain(std::iter::once(*m)) {
                        add(&l, &mut column, &mut recv_sums, &mut bundled);
                    }
                }
            }
            (None, _) if m.send >= g.t0 => out.unmatched += 1,
            _ => {}
        }
    }
    flush(&mut column, &mut recv_sums, &mut bundled);
    out.lines = lines;
    out.bundles = bundled;
    out
}

fn markers(ix: &TraceIndex, t0: i64, t1: i64, max: usize) -> (Vec<(u32, Marker)>, u64) {
    let mut all: Vec<(u32, Marker)> = Vec::new();
    let mut total = 0u64;
    for (ti, t) in ix.tracks.iter().enumerate() {
        let a = t.markers.partition_point(|m| m.time < t0);
        let b = t.markers.partition_point(|m| m.time < t1);
        total += (b - a) as u64;
        all.extend(t.markers[a..b].iter().take(max).map(|m| (ti as u32, *m)));
    }
    all.sort_by_key(|(t, m)| (m.time, *t));
    all.truncate(max);
    (all, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_and_block_maxima_give_the_same_answer() {
        // 20,000 nested-free intervals of lengths 0..300 with gaps 0..50 (zero-length ones, ones
        // ending on a boundary, long ones among them)
        let mut iv = Vec::new();
        let (mut t, mut x) = (1_000i64, 12345u64);
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let d = ((x >> 33) % 300) as i64 * if (x >> 20) % 97 == 0 { 40 } else { 1 };
            let gap = ((x >> 45) % 50) as i64;
            iv.push((t, t + d));
            t += d + gap;
        }
        let l = Lane::from_intervals(&iv);
        for (t0, t1, w) in [
            (0, t, 1000),
            (0, t, 37),
            (5_000, 900_000, 1600),
            (1_000, 1_100, 100),
            (777_777, 800_001, 3),
            (t / 2, t / 2 + 1, 1),
        ] {
            let g = Grid {
                t0,
                span: (t1 - t0) as i128,
                w,
            };
            let scan = lane_with(&l, &g, t1, true);
            let blocks = lane_with(&l, &g, t1, false);
            assert_eq!(scan, blocks, "[{t0}, {t1}) at {w}");
            let (a, b) = l.overlapping(t0, t1);
            let counted: u64 = scan.columns.iter().map(|c| c.count as u64).sum();
            assert_eq!(
                scan.full.len() as u64 + counted,
                (b - a) as u64,
                "every region once"
            );
        }
    }
}
