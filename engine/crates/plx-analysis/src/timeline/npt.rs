//! NPT profiles (IPS-2, after Anderson and Lazowska): each function's processor time divided by the number of locations computing at the time.

use std::collections::HashMap;

use plx_format::Experiment;

use crate::merge::GlobalMerge;
use crate::selection::Window;
use crate::{AnalysisError, Model};

use super::displays::computing_steps;
use super::tracker::{Classes, Span, Tracker};
use super::{State, Timeline};

/// One function of an NPT profile.
#[derive(Debug, Clone, PartialEq)]
pub struct NptRow {
    /// The function (the innermost region open that is not a phase); `(no function)` for
    /// time outside every measured function.
    pub function: String,
    /// Normalized processor time, s: the sum over locations of the time the function runs
    /// (computing) on a location divided by the number of locations computing at that instant.
    pub npt_s: f64,
    /// Processor time, s: the sum over locations of the time it runs.
    pub processor_s: f64,
}

/// `G(t)`: the integral over the window of 1/k(s) where k(s) > 0 locations compute, as
/// breakpoints (time, G there, slope after).
struct Normalizer {
    points: Vec<(i64, f64, f64)>,
}

impl Normalizer {
    fn new(steps: &[(i64, u32)], (s, e): (i64, i64)) -> Normalizer {
        let mut times: Vec<i64> = steps.iter().map(|x| x.0).collect();
        times.push(s);
        times.push(e);
        times.sort_unstable();
        times.dedup();
        let mut points = Vec::with_capacity(times.len());
        let mut g = 0.0;
        let mut si = 0;
        let mut k = 0u32;
        let mut prev: Option<(i64, f64)> = None;
        for t in times {
            if let Some((pt, slope)) = prev {
                g += (t - pt) as f64 * slope;
            }
            while si < steps.len() && steps[si].0 <= t {
                k = steps[si].1;
                si += 1;
            }
            let slope = if k > 0 && t >= s && t < e {
                1.0 / k as f64
            } else {
                0.0
            };
            points.push((t, g, slope));
            prev = Some((t, slope));
        }
        Normalizer { points }
    }

    fn at(&self, t: i64) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        if i == 0 {
            return 0.0;
        }
        let (pt, g, slope) = self.points[i - 1];
        g + (t - pt) as f64 * slope
    }
}

/// The NPT profile over the window, by NPT (largest first): a second pass over the merged
/// stream of `model` (whose `timeline` gives how many locations compute when). The NPT of all
/// functions adds up to the time at least one location computes.
pub fn npt(
    model: &Model,
    exp: &Experiment,
    timeline: &Timeline,
    window: Window,
) -> Result<Vec<NptRow>, AnalysisError> {
    let (s, e) = timeline.span(window);
    let norm = Normalizer::new(&computing_steps(timeline), (s, e));
    let mut merge = GlobalMerge::new(model, exp, Default::default())?;
    let mut classes = Classes::new(&[]);
    let mut trackers: Vec<Tracker> = timeline.waits.iter().cloned().map(Tracker::new).collect();
    trackers.resize_with(merge.locations().len(), || Tracker::new(Vec::new()));
    // per region (None: no function): (npt ns, processor ns)
    let mut acc: HashMap<Option<u32>, (f64, f64)> = HashMap::new();
    let mut sink = |sp: Span| {
        if sp.state != State::Computing {
            return;
        }
        let (a, b) = (sp.start.max(s), sp.end.min(e));
        if b <= a {
            return;
        }
        let x = acc.entry(sp.function).or_default();
        x.0 += norm.at(b) - norm.at(a);
        x.1 += (b - a) as f64;
    };
    while let Some(ev) = merge.next_event() {
        let tr = &mut trackers[ev.location as usize];
        tr.advance(ev.time_ns, &mut sink);
        tr.apply(&ev.kind, &mut classes, merge.regions(), |_| {});
    }
    // regions of one name (a function and a user region, say) make one row
    let mut by_name: HashMap<String, (f64, f64)> = HashMap::new();
    for (f, (n, p)) in acc {
        let name = f.map_or_else(
            || "(no function)".to_string(),
            |r| merge.regions().name(r).to_string(),
        );
        let x = by_name.entry(name).or_default();
        x.0 += n;
        x.1 += p;
    }
    let mut rows: Vec<NptRow> = by_name
        .into_iter()
        .map(|(function, (n, p))| NptRow {
            function,
            npt_s: n * 1e-9,
            processor_s: p * 1e-9,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.npt_s
            .total_cmp(&a.npt_s)
            .then_with(|| a.function.cmp(&b.function))
    });
    Ok(rows)
}
