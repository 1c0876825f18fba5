//! What ran during a wait and during its cause: the call-stack samples (`plx run --trace --sample`) a location took in the intervals of its waits, below the call path that waited, and those the late location took in the intervals whose excess a direct cause is, below the cause's call path, beyond the waiting location's own there ([`crate::sampled`]).

use std::collections::HashMap;

use super::{CauseEntry, CauseKind, WaitAnalysis, WaitRow};
use crate::model::Model;
use crate::sampled::{nodes_at, ranked, ranked_by, Below, ItemSamples};

impl WaitAnalysis {
    /// The samples of the waits of `rows` (an analysis made by
    /// [`WaitAnalysis::compute_spans`]; rows of one pattern and call path, at one location or
    /// several): those each location took during its waits while the call path that waited was
    /// its innermost measured call (where the samples have times; else the whole run's there),
    /// the `top` largest paths with their share of the rows' wait. `None` without such samples.
    pub fn wait_samples(
        &self,
        model: &Model,
        rows: &[&WaitRow],
        top: usize,
    ) -> Option<ItemSamples> {
        let mut paths = HashMap::new();
        let mut timed = true;
        for r in rows {
            let spans = self.spans.waits.get(&(r.pattern, r.location, r.callpath))?;
            let b = self.below(model, r.location, r.callpath)?;
            timed &= b.timed();
            b.add(spans, &mut paths);
        }
        let wait: i64 = rows.iter().map(|r| r.wait_ns).sum();
        ranked(paths, wait as f64, timed, top)
    }

    /// The samples of direct cause `c` (an analysis made by [`WaitAnalysis::compute_spans`]),
    /// the delay analysis's excess at the level of sampled paths: per wait, the samples its
    /// location took below the cause's call path inside the interval compared (where the
    /// samples have times; else the whole run's there), less the samples the waiting location
    /// took below the same call path in its own interval, path by path (positive parts; all of
    /// the late location's where none is left); each wait's delay shared out by them. The `top`
    /// largest paths; `None` for a propagated cause, or without such samples.
    pub fn cause_samples(&self, model: &Model, c: &CauseEntry, top: usize) -> Option<ItemSamples> {
        let (cause, cp) = c.cause?;
        if c.kind != CauseKind::Direct.as_str() {
            return None;
        }
        let spans = self.spans.causes.get(&(c.pattern, c.waiting, cause, cp))?;
        let late_b = self.below(model, cause, cp)?;
        let own_b = self.below(model, c.waiting, cp);
        let timed = late_b.timed() && own_b.as_ref().is_none_or(Below::timed);
        let mut out: HashMap<Vec<u32>, (u64, f64)> = HashMap::new();
        for s in spans {
            let mut late = HashMap::new();
            late_b.add(&[s.late], &mut late);
            let mut own = HashMap::new();
            if let (Some(o), Some(b)) = (s.own, &own_b) {
                b.add(&[o], &mut own);
            }
            let excess: HashMap<Vec<u32>, u64> = late
                .iter()
                .filter_map(|(p, &n)| {
                    let e = n.saturating_sub(own.get(p).copied().unwrap_or(0));
                    (e > 0).then(|| (p.clone(), e))
                })
                .collect();
            let counted = if excess.is_empty() { late } else { excess };
            let n: u64 = counted.values().sum();
            for (p, k) in counted {
                let e = out.entry(p).or_default();
                e.0 += k;
                e.1 += s.delay_ns * k as f64 / n as f64;
            }
        }
        ranked_by(out, timed, top)
    }

    /// The samples of location `loc` below call path `cp` (`None`: no such location or thread).
    fn below(&self, model: &Model, loc: u32, cp: u32) -> Option<Below> {
        let l = self.locations.get(loc as usize)?;
        let p = model.processes.get(l.process)?;
        let t = p.threads.iter().find(|t| t.thread == l.thread)?;
        let want = self.callpaths.names(cp, &self.regions);
        let at = nodes_at(model, &t.tree, &want);
        Some(Below::new(p, t, |a: Option<u32>| match a {
            Some(a) => at[a as usize],
            None => want.is_empty(),
        }))
    }
}
