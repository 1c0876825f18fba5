//! Synchronization waits per location, read from the trace's acquire events (the merged stream leaves them out).

use plx_format::{Event, Warning};

use crate::merge::{round_ns, TraceLocation};
use crate::model::Model;

/// For each location (in `locations` order), its waits `[start, end)` in global ns, sorted and
/// disjoint: an acquire event that waited `wait_ticks` ends a wait that began that long before.
/// Only processes with synchronization objects are read. Times are the process's own on rank
/// 0's clock, without the shift the merge may give an MPI process to repair the clock condition.
pub(crate) fn sync_waits(
    model: &Model,
    locations: &[TraceLocation],
    warnings: &mut Vec<Warning>,
) -> Vec<Vec<(i64, i64)>> {
    let mut out = vec![Vec::new(); locations.len()];
    for (pi, p) in model.processes.iter().enumerate() {
        if p.sync_objects.is_empty() {
            continue;
        }
        let Some(index) = p.trace.as_ref() else {
            continue;
        };
        let Some(mut reader) = index.reader_or_warn(warnings) else {
            continue;
        };
        for info in &index.chunks {
            let thread = info.header.thread;
            let Some(li) = locations
                .iter()
                .position(|l| l.process == pi && l.thread == thread)
            else {
                continue;
            };
            let Ok(events) = reader.read(*info) else {
                // the merge reports the damage
                break;
            };
            for ev in events {
                if let Event::Acquire {
                    wait_ticks, ticks, ..
                } = ev
                {
                    if wait_ticks > 0 {
                        let a = round_ns(p.rank0_ns(ticks.saturating_sub(wait_ticks)));
                        let b = round_ns(p.rank0_ns(ticks));
                        if b > a {
                            out[li].push((a, b));
                        }
                    }
                }
            }
        }
    }
    for w in &mut out {
        w.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(w.len());
        for &(a, b) in w.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *w = merged;
    }
    out
}
