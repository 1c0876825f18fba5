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

use crate::index::{Handoff, Lane, Marker, Message, PairMessages, TraceIndex};

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
    let lanes = lanes(ix, &g, t1);
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

/// Tracks with more regions in the window than this are answered on several threads.
const PARALLEL_REGIONS: usize = 100_000;

/// Every lane's answer, the tracks split among the machine's cores when the window is large.
fn lanes(ix: &TraceIndex, g: &Grid, t1: i64) -> Vec<Vec<LaneAnswer>> {
    let track = |t: &crate::index::Track| -> Vec<LaneAnswer> {
        t.lanes.iter().map(|l| lane(l, g, t1)).collect()
    };
    let in_window: usize = ix
        .tracks
        .iter()
        .flat_map(|t| &t.lanes)
        .map(|l| {
            let (a, b) = l.overlapping(g.t0, t1);
            b - a
        })
        .sum();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if in_window < PARALLEL_REGIONS {
        return ix.tracks.iter().map(track).collect();
    }
    lanes_on(ix, cores, &track)
}

/// The lanes of `ix`'s tracks answered by `track` on up to `cores` threads, in track order.
fn lanes_on(
    ix: &TraceIndex,
    cores: usize,
    track: &(dyn Fn(&crate::index::Track) -> Vec<LaneAnswer> + Sync),
) -> Vec<Vec<LaneAnswer>> {
    if cores < 2 || ix.tracks.len() < 2 {
        return ix.tracks.iter().map(track).collect();
    }
    let per = ix.tracks.len().div_ceil(cores.min(ix.tracks.len()));
    std::thread::scope(|s| {
        let parts: Vec<_> = ix
            .tracks
            .chunks(per)
            .map(|ts| s.spawn(move || ts.iter().map(track).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a window query thread panicked"))
            .collect()
    })
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
        // the current column, with its longest region's duration
        let mut cur: Option<(Column, i64)> = None;
        for i in a..b {
            let (s, e) = (l.start.get(i), l.end.get(i));
            let c = g.col(s);
            if s >= g.t0 && e <= g.boundary(c + 1) && s < g.boundary(c + 1) {
                match cur.as_mut() {
                    Some((col, longest)) if col.col == c => {
                        col.count += 1;
                        col.busy += (e - s) as u64;
                        if e - s > *longest {
                            (col.longest, *longest) = (i, e - s);
                        }
                    }
                    _ => {
                        out.columns.extend(cur.take().map(|(col, _)| col));
                        cur = Some((
                            Column {
                                col: c,
                                count: 1,
                                busy: (e - s) as u64,
                                longest: i,
                            },
                            e - s,
                        ));
                    }
                }
            } else {
                out.full.push(i);
            }
        }
        out.columns.extend(cur.map(|(col, _)| col));
        return out;
    }
    // regions longer than the widest column cross a boundary; shorter ones that do contain one
    let widest = (g.span / g.w as i128) as i64 + 1;
    let mut full = Vec::new();
    l.longer_than(a, b, widest, &mut |i| full.push(i));
    if l.start.get(a) < g.t0 {
        full.push(a);
    }
    if l.end.get(b - 1) > t1 {
        full.push(b - 1);
    }
    // one search per column: `next`, the first region starting at or after the column's end.
    // Regions are disjoint and sorted, so every region before `next − 1` ends by then: the
    // column's regions below a pixel are `ia..next`, less `next − 1` if it crosses the end
    let mut ia = gallop(l.start.len(), |i| l.start.get(i), a, 1, |s| s < g.t0);
    let mut step = 1;
    for c in 0..g.w {
        let hi = g.boundary(c + 1);
        let next = gallop(l.start.len(), |i| l.start.get(i), ia, step, |s| s < hi);
        let crosses = next > 0 && l.end.get(next - 1) > hi;
        if crosses && c + 1 < g.w {
            full.push(next - 1);
        }
        let ib = if crosses && next > ia { next - 1 } else { next };
        if let Some(longest) = l.longest(ia, ib) {
            out.columns.push(Column {
                col: c,
                count: (ib - ia) as u32,
                busy: l.busy(ia, ib),
                longest,
            });
        }
        step = (next - ia).max(1);
        ia = next;
    }
    full.sort_unstable();
    full.dedup();
    out.full = full;
    out
}

/// The first index from `from` on whose value fails `pred` (true on a prefix of the `len`
/// values `v(0..len)`), found by probing `guess` places after `from`, then doubling steps from
/// there (forward or back) and bisecting: cheap when the answer is near the guess (the probes
/// near it share cache lines).
fn gallop<T: Copy>(
    len: usize,
    v: impl Fn(usize) -> T,
    from: usize,
    guess: usize,
    pred: impl Fn(T) -> bool,
) -> usize {
    if from >= len || !pred(v(from)) {
        return from;
    }
    // invariant: pred(v(lo)) holds, and hi is the end or !pred(v(hi))
    let g = from.saturating_add(guess.max(1)).min(len);
    let (mut lo, mut hi) = if g < len && pred(v(g)) {
        let (mut lo, mut step) = (g, 1usize);
        loop {
            let next = lo.saturating_add(step);
            if next >= len {
                break (lo, len);
            }
            if !pred(v(next)) {
                break (lo, next);
            }
            lo = next;
            step *= 2;
        }
    } else {
        let (mut hi, mut step) = (g, 1usize);
        loop {
            let next = hi.saturating_sub(step);
            if next <= from {
                break (from, hi);
            }
            if pred(v(next)) {
                break (next, hi);
            }
            hi = next;
            step *= 2;
        }
    };
    // bisect: pred holds at lo, fails at hi (or hi is the end)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(v(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

fn messages(ix: &TraceIndex, g: &Grid, t1: i64, max: usize) -> MessagesAnswer {
    let t0 = g.t0;
    // a message sent from `sure` on was received at or after t0 (its latency is at least
    // min_latency ≤ 0); the ones sent before may have been received before t0 and are seen one by
    // one, the others are counted from the pairs' running sums
    let sure = t0.saturating_sub(ix.min_latency).min(t1);
    let lo = ix
        .messages
        .partition_point(|m| m.send < t0.saturating_sub(ix.max_latency));
    let mid = ix.messages.partition_point(|m| m.send < sure).max(lo);
    let hi = ix.messages.partition_point(|m| m.send < t1);
    // a receive the clock repair could not put after its send (traces that contradict each
    // other) is drawn back from its send: sent inside, it crosses the window wherever it ends
    let crosses = |m: &&Message| m.to.is_some() && m.recv.is_some_and(|r| r.max(m.send) >= t0);
    let near = ix.messages[lo..mid].iter().filter(crosses);
    let in_pair = |p: &PairMessages| {
        (
            p.send.partition_point(|&s| s < sure),
            p.send.partition_point(|&s| s < t1),
        )
    };
    let mut out = MessagesAnswer {
        unmatched: (ix.unmatched.partition_point(|&s| s < t1)
            - ix.unmatched.partition_point(|&s| s < t0)) as u64,
        ..Default::default()
    };
    out.total = near.clone().count() as u64
        + ix.pairs
            .iter()
            .map(|p| {
                let (a, b) = in_pair(p);
                (b - a) as u64
            })
            .sum::<u64>();
    if out.total as usize <= max {
        out.lines = ix.messages[lo..hi]
            .iter()
            .filter(crosses)
            .copied()
            .collect();
        return out;
    }
    // (column, from, to) → (count, bytes, sum of receive times)
    let mut acc: Vec<Partial> = near
        .map(|m| {
            let to = m.to.expect("matched");
            let r = m.recv.expect("matched");
            ((g.col(m.send), m.from, to), (1, m.bytes, r as i128))
        })
        .collect();
    for p in &ix.pairs {
        let (mut i, b) = in_pair(p);
        while i < b {
            let c = g.col(p.send[i]);
            let edge = g.boundary(c + 1);
            let j = gallop(p.send.len(), |k| p.send[k], i, 1, |s| s < edge).min(b);
            acc.push((
                (c, p.from, p.to),
                (
                    (j - i) as u64,
                    p.bytes[j].wrapping_sub(p.bytes[i]),
                    p.recv[j] - p.recv[i],
                ),
            ));
            i = j;
        }
    }
    out.bundles = bundles(acc);
    out
}

/// Part of a bundle: (column, from, to) and (count, bytes, sum of receive times).
type Partial = ((u32, u32, u32), (u64, u64, i128));

/// Bundles from partial sums, merged per (column, from, to) and in that order.
fn bundles(mut acc: Vec<Partial>) -> Vec<Bundle> {
    acc.sort_unstable_by_key(|(k, _)| *k);
    let mut out: Vec<Bundle> = Vec::new();
    let mut sums: Vec<i128> = Vec::new();
    for ((col, from, to), (n, bytes, recv)) in acc {
        match out.last_mut() {
            Some(b) if (b.col, b.from, b.to) == (col, from, to) => {
                b.count += n;
                b.bytes = b.bytes.wrapping_add(bytes);
                *sums.last_mut().expect("one per bundle") += recv;
            }
            _ => {
                out.push(Bundle {
                    col,
                    from,
                    to,
                    count: n,
                    bytes,
                    mean_recv: 0,
                });
                sums.push(recv);
            }
        }
    }
    for (b, s) in out.iter_mut().zip(sums) {
        b.mean_recv = (s / b.count.max(1) as i128) as i64;
    }
    out
}

/// The messages of a window by visiting each one (what [`messages`] answers from the sums).
#[cfg(test)]
fn messages_scan(ix: &TraceIndex, g: &Grid, t1: i64, max: usize) -> MessagesAnswer {
    let lo = ix
        .messages
        .partition_point(|m| m.send < g.t0.saturating_sub(ix.max_latency));
    let hi = ix.messages.partition_point(|m| m.send < t1);
    let mut out = MessagesAnswer::default();
    let mut acc = Vec::new();
    let mut lines = Vec::new();
    for m in &ix.messages[lo..hi] {
        match (m.recv, m.to) {
            (Some(r), Some(to)) if r.max(m.send) >= g.t0 => {
                out.total += 1;
                lines.push(*m);
                acc.push(((g.col(m.send), m.from, to), (1, m.bytes, r as i128)));
            }
            (None, _) | (_, None) if m.send >= g.t0 => out.unmatched += 1,
            _ => {}
        }
    }
    if out.total as usize <= max {
        out.lines = lines;
    } else {
        out.bundles = bundles(acc);
    }
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

    #[test]
    fn messages_from_the_pair_sums_equal_a_scan() {
        // 5,000 messages among 4 tracks, latencies -40..460 ns (clocks that disagree), every
        // 13th without a receive
        let mut x = 99u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut sent: Vec<Message> = (0..5_000)
            .map(|k| {
                let send = 1_000 + 37 * k as i64 + (next() % 30) as i64;
                let lat = (next() % 500) as i64 - 40;
                let matched = k % 13 != 0;
                Message {
                    send,
                    recv: matched.then_some(send + lat),
                    from: (next() % 4) as u32,
                    to: matched.then_some((next() % 4) as u32),
                    bytes: next() % 10_000,
                }
            })
            .collect();
        sent.sort_by_key(|m| (m.send, m.from));
        let lat = sent.iter().filter_map(|m| m.recv.map(|r| r - m.send));
        let ix = TraceIndex {
            tracks: Vec::new(),
            regions: Default::default(),
            user_events: Vec::new(),
            max_latency: lat.clone().max().unwrap(),
            min_latency: lat.min().unwrap().min(0),
            pairs: PairMessages::of(&sent),
            unmatched: sent
                .iter()
                .filter(|m| m.recv.is_none())
                .map(|m| m.send)
                .collect::<Vec<i64>>()
                .into(),
            messages: sent,
            handoffs: Vec::new(),
            max_handoff: 0,
            origin: 0,
            end: 200_000,
            events: 0,
        };
        assert!(ix.min_latency < 0);
        for (t0, t1, w) in [
            (0, 200_000, 1600),
            (0, 200_000, 7),
            (50_000, 50_100, 100),
            (99_980, 120_000, 333),
            (150_000, 150_001, 1),
        ] {
            let g = Grid {
                t0,
                span: (t1 - t0) as i128,
                w,
            };
            for max in [0, 10, 100_000] {
                let (a, b) = (messages(&ix, &g, t1, max), messages_scan(&ix, &g, t1, max));
                assert_eq!(a, b, "[{t0}, {t1}) at {w}, max {max}");
                assert_eq!(
                    a.total,
                    a.lines.len() as u64 + a.bundles.iter().map(|b| b.count).sum::<u64>()
                );
            }
        }
    }

    #[test]
    fn a_message_received_before_its_send_is_counted_where_it_was_sent() {
        // two messages: one received 500 ns before its send (traces the clock repair could not
        // reconcile), one forward; the window [1000, 2000) holds both sends, the backward
        // message's receive lies before it
        let sent = vec![
            Message {
                send: 1_200,
                recv: Some(700),
                from: 0,
                to: Some(1),
                bytes: 8,
            },
            Message {
                send: 1_500,
                recv: Some(1_600),
                from: 1,
                to: Some(0),
                bytes: 16,
            },
        ];
        let ix = TraceIndex {
            tracks: Vec::new(),
            regions: Default::default(),
            user_events: Vec::new(),
            max_latency: 100,
            min_latency: -500,
            pairs: PairMessages::of(&sent),
            unmatched: Vec::<i64>::new().into(),
            messages: sent.clone(),
            handoffs: Vec::new(),
            max_handoff: 0,
            origin: 0,
            end: 3_000,
            events: 0,
        };
        let g = Grid {
            t0: 1_000,
            span: 1_000,
            w: 10,
        };
        for max in [0, 10] {
            let (a, b) = (
                messages(&ix, &g, 2_000, max),
                messages_scan(&ix, &g, 2_000, max),
            );
            assert_eq!(a, b);
            assert_eq!(a.total, 2, "max {max}");
        }
        assert_eq!(messages(&ix, &g, 2_000, 10).lines, sent);
        // a window after both ends of the backward message does not hold it
        let later = Grid {
            t0: 1_300,
            span: 700,
            w: 10,
        };
        assert_eq!(messages(&ix, &later, 2_000, 10).total, 1);
    }

    #[test]
    fn tracks_answered_on_several_threads_come_back_in_order() {
        let mut ix = TraceIndex {
            tracks: Vec::new(),
            regions: Default::default(),
            user_events: Vec::new(),
            max_latency: 0,
            min_latency: 0,
            pairs: Vec::new(),
            unmatched: Default::default(),
            messages: Vec::new(),
            handoffs: Vec::new(),
            max_handoff: 0,
            origin: 0,
            end: 100_000,
            events: 0,
        };
        for k in 0..5i64 {
            // track k: intervals of length k + 1 every 10 ns
            let iv: Vec<(i64, i64)> = (0..10_000).map(|j| (10 * j, 10 * j + k + 1)).collect();
            ix.tracks.push(crate::index::Track {
                label: format!("{k}"),
                app: String::new(),
                host: String::new(),
                process: k as usize,
                thread: 0,
                rank: None,
                pid: 0,
                name: String::new(),
                lanes: vec![Lane::from_intervals(&iv)],
                markers: Vec::new(),
            });
        }
        let g = Grid {
            t0: 0,
            span: 100_000,
            w: 700,
        };
        let track = |t: &crate::index::Track| -> Vec<LaneAnswer> {
            t.lanes.iter().map(|l| lane(l, &g, 100_000)).collect()
        };
        let one = lanes_on(&ix, 1, &track);
        assert_eq!(one.len(), 5);
        for cores in [2, 3, 8] {
            assert_eq!(lanes_on(&ix, cores, &track), one, "{cores} threads");
        }
        // track k's column summaries add up to its 10,000 intervals
        for lanes in &one {
            let a = &lanes[0];
            let n: u64 =
                a.columns.iter().map(|c| c.count as u64).sum::<u64>() + a.full.len() as u64;
            assert_eq!(n, 10_000);
        }
    }
}
