//! Counted calls in the trace exports: a [`EventKind::Counted`](plx_analysis::EventKind)'s
//! values named after its set's events.

use plx_analysis::Model;

/// The events a counted call carries values of: the set's first four (the trace keeps four per
/// call, spec/format.md subtype 10), refused ones left out; `(index in the set, name)`.
pub(crate) fn traced_events(model: &Model, process: usize, set: u32) -> Vec<(usize, &str)> {
    let Some(s) = model
        .processes
        .get(process)
        .and_then(|p| p.counters.sets.get(&set))
    else {
        return Vec::new();
    };
    s.events
        .iter()
        .zip(&s.refused)
        .enumerate()
        .take(4)
        .filter(|(_, (_, &refused))| refused == 0)
        .map(|(i, (name, _))| (i, name.as_str()))
        .collect()
}

/// The unit of an event's counts: nanoseconds for the clocks, else a count.
pub(crate) fn unit(event: &str) -> &'static str {
    match event {
        "task-clock" | "cpu-clock" => "ns",
        _ => "#",
    }
}
