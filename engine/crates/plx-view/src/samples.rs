//! Call-stack samples on a thread's timeline. With a trace the runtime stamps each sample with
//! its time (record SampleStamps): a stamped thread's samples are drawn at their times, each
//! naming its sampled frame ([`Stamped`]). Without stamps (a profile) a thread's samples are one
//! tree without times (record SampleTree), each sample under the instrumented call path open
//! when it was taken, and they are placed by estimate ([`place`]): a call path's own samples
//! (its samples less its instrumented callees') are shared among its instances on the track in
//! proportion to each instance's exclusive time, and each instance's share is spread evenly
//! over its span.

use std::collections::HashMap;

use plx_analysis::{CallTree, ProcessModel, RegionTable, ThreadModel};

use crate::index::Track;

/// Instances a window may overlap on one track before its samples are not placed (zoom in).
pub const MAX_INSTANCES: usize = 4_000_000;

/// A track's samples shared among its region instances.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Per depth, per instance: its estimated samples.
    pub weight: Vec<Vec<f32>>,
    /// Per depth, per instance: its call path (index into `paths`; `u32::MAX`: none).
    pub path: Vec<Vec<u32>>,
    /// The call paths' names (`main => solve`).
    pub paths: Vec<String>,
    /// Samples placed (those under a call path with exclusive time on the track).
    pub placed: f64,
    /// Samples taken on the thread.
    pub taken: u64,
}

/// The parent instance (in the lane above) of each instance of each lane of `t`.
fn parents(t: &Track) -> Vec<Vec<Option<usize>>> {
    let mut out = vec![Vec::new(); t.lanes.len()];
    for (d, pair) in t.lanes.windows(2).enumerate() {
        let (up, lane) = (&pair[0], &pair[1]);
        let mut p: Option<usize> = None;
        let mut q = 0usize;
        out[d + 1] = (0..lane.len())
            .map(|i| {
                let s = lane.start.get(i);
                while q < up.len() && up.start.get(q) <= s {
                    q += 1;
                }
                p = q
                    .checked_sub(1)
                    .filter(|&x| up.end.get(x) >= lane.end.get(i));
                p
            })
            .collect();
    }
    out
}

/// Shares the samples of `tree` (the thread's call tree with its samples folded in; regions of
/// `model_regions`) among the instances of track `t` (regions of `index_regions`).
pub fn place(
    t: &Track,
    index_regions: &RegionTable,
    tree: &CallTree,
    model_regions: &RegionTable,
    taken: u64,
) -> Placed {
    let nodes = tree.nodes();
    const ROOT: u32 = u32::MAX;
    // the instrumented call paths by (parent, name); each one's own samples
    let mut by_name: HashMap<(u32, &str), u32> = HashMap::new();
    let mut own: Vec<f64> = nodes.iter().map(|n| n.samples as f64).collect();
    for (i, n) in nodes.iter().enumerate() {
        if n.calls == 0 {
            continue;
        }
        by_name.insert(
            (n.parent.unwrap_or(ROOT), model_regions.name(n.region)),
            i as u32,
        );
        if let Some(p) = n.parent {
            own[p as usize] -= n.samples as f64;
        }
    }
    let up = parents(t);
    // each instance's call path and exclusive time
    let mut node: Vec<Vec<u32>> = Vec::with_capacity(t.lanes.len());
    let mut excl: Vec<Vec<i64>> = Vec::with_capacity(t.lanes.len());
    for (d, lane) in t.lanes.iter().enumerate() {
        let mut here = Vec::with_capacity(lane.len());
        for (i, &region) in lane.region.iter().enumerate() {
            let parent = if d == 0 {
                Some(ROOT)
            } else {
                up[d][i].map(|p| node[d - 1][p]).filter(|&p| p != ROOT)
            };
            let name = index_regions.name(region);
            here.push(
                parent
                    .and_then(|p| by_name.get(&(p, name)).copied())
                    .unwrap_or(ROOT),
            );
        }
        node.push(here);
        excl.push((0..lane.len()).map(|i| lane.dur(i)).collect());
        if d > 0 {
            for (i, parent) in up[d].iter().enumerate() {
                if let Some(p) = *parent {
                    excl[d - 1][p] -= lane.dur(i);
                }
            }
        }
    }
    let mut total = vec![0f64; nodes.len()];
    for (d, lane) in node.iter().enumerate() {
        for (i, &n) in lane.iter().enumerate() {
            if n != ROOT {
                total[n as usize] += excl[d][i].max(0) as f64;
            }
        }
    }
    let mut names: HashMap<u32, u32> = HashMap::new();
    let mut paths: Vec<String> = Vec::new();
    let mut path_of = |n: u32| -> u32 {
        *names.entry(n).or_insert_with(|| {
            let mut chain = Vec::new();
            let mut c = Some(n);
            while let Some(k) = c {
                chain.push(model_regions.name(nodes[k as usize].region));
                c = nodes[k as usize].parent;
            }
            chain.reverse();
            paths.push(chain.join(" => "));
            (paths.len() - 1) as u32
        })
    };
    let mut weight = Vec::with_capacity(node.len());
    let mut path = Vec::with_capacity(node.len());
    for (d, lane) in node.iter().enumerate() {
        let mut w = Vec::with_capacity(lane.len());
        let mut p = Vec::with_capacity(lane.len());
        for (i, &n) in lane.iter().enumerate() {
            let share = if n == ROOT || total[n as usize] <= 0.0 {
                0.0
            } else {
                own[n as usize] * excl[d][i].max(0) as f64 / total[n as usize]
            };
            w.push(share as f32);
            p.push(if share > 0.0 { path_of(n) } else { ROOT });
        }
        weight.push(w);
        path.push(p);
    }
    let placed = (0..nodes.len())
        .filter(|&n| total[n] > 0.0)
        .map(|n| own[n])
        .sum();
    Placed {
        weight,
        path,
        paths,
        placed,
        taken,
    }
}

/// A thread's stamped samples (a trace), in time order.
#[derive(Debug, Clone)]
pub struct Stamped {
    /// Each sample's time, global ns (as the index's), sorted.
    pub times: Vec<i64>,
    /// Each sample's frame (index into `frames`).
    pub frame: Vec<u32>,
    /// The sampled frames: `(name of the innermost frame, its call path from the root)`.
    pub frames: Vec<(String, String)>,
    /// Samples taken on the thread (stamped or not).
    pub taken: u64,
}

/// Samples in one column of the window: `(column, samples, its frames with their samples, most
/// first, at most [`FRAMES_PER_COLUMN`])`.
pub type StampedColumn = (u32, u64, Vec<(u32, u64)>);

/// The frames a column of stamped samples names (the most sampled first).
pub const FRAMES_PER_COLUMN: usize = 3;

/// The time at which the timeline draws a sample taken at `at` (global ns): the run's span is
/// its events' (`[origin, end)`), so a sample taken before the first event or after the last (a
/// thread's exit after its last measured call) is drawn at the run's edge, never left out.
pub fn on_timeline(at: i64, origin: i64, end: i64) -> i64 {
    at.clamp(origin, (end - 1).max(origin))
}

/// The stamped samples of thread `th` of process `p` (`regions`: the model's), `None` when it
/// has none (not sampled, or a profile); each at its time on the timeline of `[origin, end)`
/// ([`on_timeline`]).
pub fn stamped(
    p: &ProcessModel,
    th: &ThreadModel,
    regions: &RegionTable,
    (origin, end): (i64, i64),
) -> Option<Stamped> {
    let taken = th.samples?.samples;
    if th.sample_times.is_empty() {
        return None;
    }
    let mut order: Vec<(i64, u32)> = Vec::with_capacity(th.sample_times.len());
    let mut index: HashMap<Option<u32>, u32> = HashMap::new();
    let mut frames: Vec<(String, String)> = Vec::new();
    for s in &th.sample_times {
        let f = *index.entry(s.node).or_insert_with(|| {
            frames.push(match s.node {
                Some(n) => {
                    let path: Vec<&str> =
                        th.tree.path(n).iter().map(|&r| regions.name(r)).collect();
                    (
                        path.last().copied().unwrap_or("?").to_string(),
                        path.join(" => "),
                    )
                }
                None => ("(thread root)".to_string(), String::new()),
            });
            (frames.len() - 1) as u32
        });
        order.push((
            on_timeline(p.rank0_ns(s.ticks).round() as i64, origin, end),
            f,
        ));
    }
    order.sort_by_key(|x| x.0);
    Some(Stamped {
        times: order.iter().map(|x| x.0).collect(),
        frame: order.iter().map(|x| x.1).collect(),
        frames,
        taken,
    })
}

/// `s`'s samples in `[a, b)` cut into `width` columns (as [`columns`]): each column with samples.
pub fn stamped_columns(s: &Stamped, a: i64, b: i64, width: u32) -> Vec<StampedColumn> {
    let w = width.max(1) as i64;
    let span = (b - a).max(1);
    let lo = s.times.partition_point(|&t| t < a);
    let hi = s.times.partition_point(|&t| t < b);
    let mut out: Vec<StampedColumn> = Vec::new();
    for i in lo..hi {
        let c =
            (((s.times[i] - a) as i128 * w as i128 / span as i128) as i64).clamp(0, w - 1) as u32;
        if out.last().is_none_or(|x| x.0 != c) {
            out.push((c, 0, Vec::new()));
        }
        let col = out.last_mut().expect("pushed");
        col.1 += 1;
        match col.2.iter_mut().find(|x| x.0 == s.frame[i]) {
            Some(x) => x.1 += 1,
            None => col.2.push((s.frame[i], 1)),
        }
    }
    for col in &mut out {
        col.2.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        col.2.truncate(FRAMES_PER_COLUMN);
    }
    out
}

/// `p`'s samples over `[a, b)` cut into `width` columns (as the window query's: column `c` from
/// `a + (b − a)·c / width`): `[column, estimated samples, call path of the largest share]` of
/// each column with samples; `None` when the window overlaps more than [`MAX_INSTANCES`] of
/// the track's instances.
pub fn columns(t: &Track, p: &Placed, a: i64, b: i64, width: u32) -> Option<Vec<(u32, f64, u32)>> {
    let w = width.max(1) as i64;
    let span = (b - a).max(1);
    let bound = |c: i64| a + (span as i128 * c as i128 / w as i128) as i64;
    let col = |x: i64| (((x - a) as i128 * w as i128 / span as i128) as i64).clamp(0, w - 1);
    let ranges: Vec<(usize, usize)> = t.lanes.iter().map(|l| l.overlapping(a, b)).collect();
    if ranges.iter().map(|(lo, hi)| hi - lo).sum::<usize>() > MAX_INSTANCES {
        return None;
    }
    let mut sum = vec![0f64; w as usize];
    let mut best = vec![(0f64, u32::MAX); w as usize];
    for (d, lane) in t.lanes.iter().enumerate() {
        let (lo, hi) = ranges[d];
        for i in lo..hi {
            let share = p.weight[d][i] as f64;
            if share <= 0.0 {
                continue;
            }
            let (s, e) = (lane.start.get(i), lane.end.get(i));
            let dur = (e - s).max(1) as f64;
            let (cs, ce) = (s.max(a), e.min(b).max(s.max(a) + 1));
            for c in col(cs)..=col(ce - 1) {
                let part = (ce.min(bound(c + 1)) - cs.max(bound(c))).max(0) as f64;
                let x = share * if e > s { part / dur } else { 1.0 };
                if x <= 0.0 {
                    continue;
                }
                sum[c as usize] += x;
                if x > best[c as usize].0 {
                    best[c as usize] = (x, p.path[d][i]);
                }
            }
        }
    }
    Some(
        sum.iter()
            .enumerate()
            .filter(|(_, &v)| v > 0.0)
            .map(|(c, &v)| (c as u32, v, best[c].1))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Lane;
    use plx_analysis::RegionInfo;
    use plx_format::RegionKind;

    fn table(names: &[&str]) -> RegionTable {
        let mut t = RegionTable::default();
        for n in names {
            t.intern(RegionInfo {
                name: n.to_string(),
                kind: RegionKind::Function,
                file: String::new(),
                line: 0,
            });
        }
        t
    }

    #[test]
    fn own_samples_shared_by_exclusive_time_and_spread_over_columns() {
        // A [0, 100) calls B twice, [10, 30) and [50, 70); A has 10 samples, 6 of them in B
        // (4 of those in a sampled frame f below B)
        let model = table(&["f", "B", "A"]);
        let mut tree = CallTree::new();
        let a = tree.child(None, 2);
        tree.add(a, 1, 2, 1e-7, 6e-8);
        tree.add_samples(a, 10);
        let b = tree.child(Some(a), 1);
        tree.add(b, 2, 0, 4e-8, 4e-8);
        tree.add_samples(b, 6);
        let f = tree.child(Some(b), 0);
        tree.add_samples(f, 4);
        // the index's table names the same regions with other ids
        let index = table(&["A", "B"]);
        let track = Track {
            label: String::new(),
            app: String::new(),
            host: String::new(),
            process: 0,
            thread: 0,
            rank: None,
            pid: 0,
            name: String::new(),
            lanes: vec![
                Lane::from_regions(&[(0, 100, 0)]),
                Lane::from_regions(&[(10, 30, 1), (50, 70, 1)]),
            ],
            markers: Vec::new(),
        };
        let p = place(&track, &index, &tree, &model, 12);
        // A's own 4 over its 60 ns of exclusive time, B's 6 over its two calls of 20 ns each
        assert_eq!(p.weight, vec![vec![4.0], vec![3.0, 3.0]]);
        assert_eq!(p.placed, 10.0);
        assert_eq!(p.taken, 12);
        let cols = columns(&track, &p, 0, 100, 10).expect("few instances");
        let v: Vec<(u32, f64)> = cols.iter().map(|&(c, v, _)| (c, v)).collect();
        let want: Vec<(u32, f64)> = (0..10)
            .map(|c| (c, 0.4 + if [1, 2, 5, 6].contains(&c) { 1.5 } else { 0.0 }))
            .collect();
        assert_eq!(v.len(), want.len());
        for ((c, x), (wc, wx)) in v.iter().zip(&want) {
            assert_eq!(c, wc);
            assert!((x - wx).abs() < 1e-9, "column {c}: {x} against {wx}");
        }
        assert_eq!(p.paths[cols[1].2 as usize], "A => B");
        assert_eq!(p.paths[cols[0].2 as usize], "A");
    }

    #[test]
    fn a_sample_outside_the_events_span_is_drawn_at_its_edge() {
        // the run's events span [100, 200): a sample after the last event is in the last ns
        assert_eq!(on_timeline(250, 100, 200), 199);
        assert_eq!(on_timeline(40, 100, 200), 100);
        assert_eq!(on_timeline(150, 100, 200), 150);
        assert_eq!(on_timeline(7, 100, 100), 100);
    }

    #[test]
    fn stamped_samples_fall_in_the_column_of_their_time() {
        // frames 0 (f) and 1 (g); samples at 0, 5, 9, 10, 25, 99, 100 ns over [0, 100) in 10
        let s = Stamped {
            times: vec![0, 5, 9, 10, 25, 99, 100],
            frame: vec![0, 1, 1, 0, 0, 1, 0],
            frames: vec![
                ("f".into(), "main => f".into()),
                ("g".into(), "main => g".into()),
            ],
            taken: 8,
        };
        let cols = stamped_columns(&s, 0, 100, 10);
        assert_eq!(
            cols,
            vec![
                (0, 3, vec![(1, 2), (0, 1)]),
                (1, 1, vec![(0, 1)]),
                (2, 1, vec![(0, 1)]),
                (9, 1, vec![(1, 1)]),
            ]
        );
        // a window of one sample's column: the one sample at 25
        assert_eq!(
            stamped_columns(&s, 20, 30, 1000),
            vec![(500, 1, vec![(0, 1)])]
        );
        assert!(stamped_columns(&s, 101, 200, 10).is_empty());
    }
}
