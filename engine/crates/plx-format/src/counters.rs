//! The counter records of `process.plx` (types 22–25: CounterSet, CounterEpoch, ThreadCounters,
//! NodeCounters; decoded by the code generated from spec/records.toml).

use crate::records::NodeCounters;

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

impl NodeCounters {
    /// The inclusive values, one per event of the set.
    pub fn inclusive(&self) -> &[u64] {
        &self.values[..self.values.len() / 2]
    }

    /// The exclusive values: inclusive minus the same events' inclusive values of the counted
    /// functions it called.
    pub fn exclusive(&self) -> &[u64] {
        &self.values[self.values.len() / 2..]
    }
}

#[cfg(test)]
mod tests {
    use crate::records::{types, Record};
    use crate::{CounterEpoch, CounterEvent, CounterSet, NodeCounters, ThreadCounters};

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
            node: 6,
            region: 9,
            calls: 50,
            values: vec![32_147, 7, 30_000, 7],
        }));
        assert_eq!(types::NODE_COUNTERS, 25);
    }

    #[test]
    fn node_counters_layout_matches_the_spec() {
        // thread 1, set 2, node 0, region 5, calls 3, 1 event: inclusive 40, exclusive 30
        let mut p = Vec::new();
        for v in [1u32, 2, 0, 5] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        p.extend_from_slice(&3u64.to_le_bytes());
        p.extend_from_slice(&2u32.to_le_bytes());
        for v in [40u64, 30] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        let Some(Record::NodeCounters(n)) = Record::decode(25, &p).unwrap() else {
            panic!("not NodeCounters");
        };
        assert_eq!(
            (n.thread, n.set, n.node, n.region, n.calls),
            (1, 2, 0, 5, 3)
        );
        assert_eq!((n.inclusive(), n.exclusive()), (&[40u64][..], &[30u64][..]));
    }
}
