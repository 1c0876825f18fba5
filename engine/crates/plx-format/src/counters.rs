//! The counter records of `process.plx` (types 22–25: CounterSet, CounterEpoch, ThreadCounters,
//! NodeCounters; decoded by the code generated from spec/records.toml).

pub use crate::schema::structs::{CounterEpoch, CounterEvent, CounterSet, ThreadCounters};

use crate::records::NodeCounters;

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
