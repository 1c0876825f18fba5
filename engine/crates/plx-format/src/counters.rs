//! The counter records of `process.plx` (types 22–25: CounterSet, CounterEpoch, ThreadCounters,
//! NodeCounters; spec/format.md).

use crate::bytes::{FieldReader, Put};
use crate::records::DecodeProblem;

/// One event of a [`CounterSet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterEvent {
    /// The name as written (`page-faults`, `cycles`, `perf::PAGE-FAULTS`).
    pub name: String,
    /// 0 when counted; else the errno with which the kernel (or PAPI) refused it.
    pub refused: u32,
}

/// Record 22: an event set, defined when the configuration that names it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSet {
    /// Process-local id.
    pub set: u32,
    /// The configuration (0 the first, +1 at each reload).
    pub epoch: u32,
    /// The context (process-local index of its `counters` rule), `0xFFFFFFFF` for the
    /// whole-thread totals of `plx run --counters`.
    pub context: u32,
    /// Calls between switches of the context's sets (0: one set).
    pub every: u32,
    /// This set's place among its context's sets.
    pub position: u32,
    /// How many sets the context has.
    pub sets_in_context: u32,
    /// The context's function glob (empty for the whole-thread totals).
    pub glob: String,
    /// The events, in the order their values are written.
    pub events: Vec<CounterEvent>,
}

/// Record 23: a configuration read (the start, then each reload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterEpoch {
    /// Its number.
    pub epoch: u32,
    /// When it was read, ticks.
    pub ticks: u64,
    /// Lines of the file that were wrong (reported and left out).
    pub bad_lines: u32,
    /// Contexts it holds.
    pub contexts: u32,
    /// The file read.
    pub path: String,
}

/// Record 24: one thread's totals of the whole-thread set, from its start to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCounters {
    /// Thread index.
    pub thread: u32,
    /// The set.
    pub set: u32,
    /// One value per event of the set (0 for refused events).
    pub values: Vec<u64>,
}

/// A counted function's counts along one callpath (or, from a trace, in one thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRow {
    /// ThreadProfile node index; `0xFFFFFFFF` in trace mode (per function only).
    pub node: u32,
    /// Region.
    pub region: u32,
    /// Calls counted with this set.
    pub calls: u64,
    /// Inclusive values, one per event.
    pub inclusive: Vec<u64>,
    /// Exclusive values: inclusive minus the same events' inclusive values of the counted
    /// functions it called.
    pub exclusive: Vec<u64>,
}

/// Record 25: one thread's counted calls of one set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCounters {
    /// Thread index.
    pub thread: u32,
    /// The set.
    pub set: u32,
    /// Rows.
    pub rows: Vec<CounterRow>,
}

pub(crate) fn decode_counter_set(r: &mut FieldReader) -> Result<CounterSet, DecodeProblem> {
    let set = r.u32()?;
    let epoch = r.u32()?;
    let context = r.u32()?;
    let every = r.u32()?;
    let position = r.u32()?;
    let sets_in_context = r.u32()?;
    let glob = r.str()?;
    let n = r.u32()?;
    if n as usize > r.remaining() / 8 {
        return Err(DecodeProblem::BadCount(n as u64));
    }
    let mut events = Vec::with_capacity(n as usize);
    for _ in 0..n {
        events.push(CounterEvent {
            name: r.str()?,
            refused: r.u32()?,
        });
    }
    Ok(CounterSet {
        set,
        epoch,
        context,
        every,
        position,
        sets_in_context,
        glob,
        events,
    })
}

pub(crate) fn encode_counter_set(s: &CounterSet, out: &mut Vec<u8>) {
    out.put_u32(s.set);
    out.put_u32(s.epoch);
    out.put_u32(s.context);
    out.put_u32(s.every);
    out.put_u32(s.position);
    out.put_u32(s.sets_in_context);
    out.put_str(&s.glob);
    out.put_u32(s.events.len() as u32);
    for e in &s.events {
        out.put_str(&e.name);
        out.put_u32(e.refused);
    }
}

pub(crate) fn decode_counter_epoch(r: &mut FieldReader) -> Result<CounterEpoch, DecodeProblem> {
    Ok(CounterEpoch {
        epoch: r.u32()?,
        ticks: r.u64()?,
        bad_lines: r.u32()?,
        contexts: r.u32()?,
        path: r.str()?,
    })
}

pub(crate) fn encode_counter_epoch(e: &CounterEpoch, out: &mut Vec<u8>) {
    out.put_u32(e.epoch);
    out.put_u64(e.ticks);
    out.put_u32(e.bad_lines);
    out.put_u32(e.contexts);
    out.put_str(&e.path);
}

fn values(r: &mut FieldReader, n: u32) -> Result<Vec<u64>, DecodeProblem> {
    (0..n).map(|_| Ok(r.u64()?)).collect()
}

pub(crate) fn decode_thread_counters(r: &mut FieldReader) -> Result<ThreadCounters, DecodeProblem> {
    let thread = r.u32()?;
    let set = r.u32()?;
    let n = r.u32()?;
    if n as usize > r.remaining() / 8 {
        return Err(DecodeProblem::BadCount(n as u64));
    }
    Ok(ThreadCounters {
        thread,
        set,
        values: values(r, n)?,
    })
}

pub(crate) fn encode_thread_counters(t: &ThreadCounters, out: &mut Vec<u8>) {
    out.put_u32(t.thread);
    out.put_u32(t.set);
    out.put_u32(t.values.len() as u32);
    for v in &t.values {
        out.put_u64(*v);
    }
}

pub(crate) fn decode_node_counters(r: &mut FieldReader) -> Result<NodeCounters, DecodeProblem> {
    let thread = r.u32()?;
    let set = r.u32()?;
    let n = r.u32()?;
    let count = r.u32()?;
    let row_bytes = 16 + 16 * n as usize;
    if n > 64 || count as usize > r.remaining() / row_bytes {
        return Err(DecodeProblem::BadCount(count as u64));
    }
    let mut rows = Vec::with_capacity(count as usize);
    for _ in 0..count {
        rows.push(CounterRow {
            node: r.u32()?,
            region: r.u32()?,
            calls: r.u64()?,
            inclusive: values(r, n)?,
            exclusive: values(r, n)?,
        });
    }
    Ok(NodeCounters { thread, set, rows })
}

pub(crate) fn encode_node_counters(c: &NodeCounters, out: &mut Vec<u8>) {
    out.put_u32(c.thread);
    out.put_u32(c.set);
    let n = c.rows.first().map_or(0, |r| r.inclusive.len());
    out.put_u32(n as u32);
    out.put_u32(c.rows.len() as u32);
    for row in &c.rows {
        out.put_u32(row.node);
        out.put_u32(row.region);
        out.put_u64(row.calls);
        for v in row.inclusive.iter().chain(&row.exclusive) {
            out.put_u64(*v);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::records::{types, Record};
    use crate::{CounterEpoch, CounterEvent, CounterRow, CounterSet, NodeCounters, ThreadCounters};

    fn round_trip(r: Record) {
        let mut p = Vec::new();
        r.encode_payload(&mut p);
        assert_eq!(Record::decode(r.record_type(), &p).unwrap().unwrap(), r);
        // a payload cut short is an error, never a wrong record
        assert!(Record::decode(r.record_type(), &p[..p.len() - 1]).is_err());
    }

    #[test]
    fn counter_records_round_trip() {
        round_trip(Record::CounterSet(CounterSet {
            set: 3,
            epoch: 1,
            context: 2,
            every: 10,
            position: 1,
            sets_in_context: 2,
            glob: "solve*".into(),
            events: vec![
                CounterEvent {
                    name: "page-faults".into(),
                    refused: 0,
                },
                CounterEvent {
                    name: "cycles".into(),
                    refused: 2,
                },
            ],
        }));
        round_trip(Record::CounterEpoch(CounterEpoch {
            epoch: 1,
            ticks: 123_456,
            bad_lines: 0,
            contexts: 4,
            path: "/tmp/app.filter".into(),
        }));
        round_trip(Record::ThreadCounters(ThreadCounters {
            thread: 2,
            set: 0,
            values: vec![13_439_701, 546, 25],
        }));
        round_trip(Record::NodeCounters(NodeCounters {
            thread: 0,
            set: 3,
            rows: vec![CounterRow {
                node: 6,
                region: 9,
                calls: 50,
                inclusive: vec![32_147, 7],
                exclusive: vec![30_000, 7],
            }],
        }));
        assert_eq!(types::NODE_COUNTERS, 25);
    }

    #[test]
    fn node_counters_layout_matches_the_spec() {
        // thread 1, set 2, 1 event, 1 row: node 0, region 5, calls 3, inclusive 40, exclusive 30
        let mut p = Vec::new();
        for v in [1u32, 2, 1, 1, 0, 5] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        for v in [3u64, 40, 30] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        let Some(Record::NodeCounters(n)) = Record::decode(25, &p).unwrap() else {
            panic!("not NodeCounters");
        };
        assert_eq!((n.thread, n.set), (1, 2));
        assert_eq!(
            n.rows,
            vec![CounterRow {
                node: 0,
                region: 5,
                calls: 3,
                inclusive: vec![40],
                exclusive: vec![30],
            }]
        );
    }
}
