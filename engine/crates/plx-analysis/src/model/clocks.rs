//! Clock sharing: processes of one host converting their ticks with one calibration, ranks'
//! global numbering, events moved onto the global clock and numbering.

use super::*;

/// Processes of one host read one time-stamp counter: each converting it with its own
/// calibration (pairs read with some jitter) would put events of different processes out of
/// order by tens of ns — a message received "before" it was sent. They all take the map of the
/// host's first process (rank 0 when it is there) when their own measured rate agrees with it
/// within 100 ppm (the same counter).
pub(super) fn share_host_clocks(processes: &mut [ProcessModel]) {
    let mut reference: BTreeMap<String, ClockMap> = BTreeMap::new();
    for p in processes.iter_mut() {
        if p.clock != Some(ClockKind::Tsc) || p.clock_map.source != ClockSource::Calibrated {
            continue;
        }
        match reference.get(&p.host) {
            None => {
                reference.insert(p.host.clone(), p.clock_map);
            }
            Some(r) => {
                let (a, b) = (r.ticks_per_second(), p.clock_map.ticks_per_second());
                if (a - b).abs() <= a * 1e-4 {
                    p.clock_map = *r;
                }
            }
        }
    }
}

/// Rank bases per application: each application's ranks follow the previous ones'.
pub(super) fn rank_bases(exp: &Experiment) -> Vec<u32> {
    let mut bases = Vec::with_capacity(exp.apps.len());
    let mut next = 0u32;
    for a in 0..exp.apps.len() as u32 {
        bases.push(next);
        let top = exp
            .images
            .iter()
            .filter(|i| i.app == a)
            .filter_map(|i| i.process.mpi.as_ref())
            .map(|m| m.rank.max(m.size.saturating_sub(1)) + 1)
            .max();
        next += top.unwrap_or(0);
    }
    bases
}

/// An event with its world ranks (peer, root) moved by the process's rank base.
#[inline]
pub fn globalize_event(p: &ProcessModel, ev: plx_format::Event) -> plx_format::Event {
    globalize_event_by(p.rank_base, ev)
}

/// [`globalize_event`] by a rank base alone (what a thread decoding without the model holds).
#[inline]
pub(crate) fn globalize_event_by(rank_base: u32, ev: plx_format::Event) -> plx_format::Event {
    use plx_format::{Event, NONE_U32};
    if rank_base == 0 {
        return ev;
    }
    // as ProcessModel::global_rank
    let global = |r: u32| if r == NONE_U32 { r } else { r + rank_base };
    match ev {
        Event::Send {
            peer,
            tag,
            bytes,
            comm,
            ticks,
        } => Event::Send {
            peer: global(peer),
            tag,
            bytes,
            comm,
            ticks,
        },
        Event::Recv {
            peer,
            tag,
            bytes,
            comm,
            ticks,
        } => Event::Recv {
            peer: global(peer),
            tag,
            bytes,
            comm,
            ticks,
        },
        Event::Collective {
            comm,
            root,
            bytes_sent,
            bytes_recv,
            ticks,
        } => Event::Collective {
            comm,
            root: global(root),
            bytes_sent,
            bytes_recv,
            ticks,
        },
        other => other,
    }
}

/// Moves the process's own world ranks by its rank base.
pub(super) fn globalize_ranks(p: &mut ProcessModel) {
    if p.rank_base == 0 {
        return;
    }
    let base = p.rank_base;
    if let Some(m) = p.mpi.as_mut() {
        m.rank += base;
    }
    for t in &mut p.threads {
        for m in &mut t.messages {
            if let Some(peer) = m.peer.as_mut() {
                *peer += base;
            }
        }
    }
}
