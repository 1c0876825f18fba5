//! What ran during a wait's cause: the call-stack samples (`plx run --trace --sample`) that the late location took in the intervals whose excess the direct cause is, below the cause's call path ([`crate::sampled`]).

use std::collections::HashMap;

use super::{CauseEntry, CauseKind, WaitAnalysis};
use crate::model::Model;
use crate::sampled::{below, nodes_at, own_samples, ranked, ItemSamples};

impl WaitAnalysis {
    /// The samples of direct cause `c` (an analysis made by [`WaitAnalysis::compute_spans`]):
    /// those its location took while the cause's call path was its innermost measured call,
    /// inside the intervals whose excess caused the waits (where the samples have times; else
    /// the whole run's there), its `top` largest paths with their share of the delay. `None`
    /// for a propagated cause, or without such samples.
    pub fn cause_samples(&self, model: &Model, c: &CauseEntry, top: usize) -> Option<ItemSamples> {
        let (cause, cp) = c.cause?;
        if c.kind != CauseKind::Direct.as_str() {
            return None;
        }
        let spans = self.spans.get(&(c.pattern, c.waiting, cause, cp))?;
        let l = self.locations.get(cause as usize)?;
        let p = model.processes.get(l.process)?;
        let t = p.threads.iter().find(|t| t.thread == l.thread)?;
        let (own, timed) = own_samples(p, t, spans);
        let want = self.callpaths.names(cp, &self.regions);
        let at = nodes_at(model, &t.tree, &want);
        let anchored = |a: Option<u32>| match a {
            Some(a) => at[a as usize],
            None => want.is_empty(),
        };
        let mut paths = HashMap::new();
        below(&t.tree, &own, anchored, &mut paths);
        ranked(paths, c.delay_ns, timed, top)
    }
}
