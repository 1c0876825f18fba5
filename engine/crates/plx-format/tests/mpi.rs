//! Golden-style tests of the MPI records and trace events: layouts written out by hand from
//! spec/format.md, and synthetic MPI experiments (synth_mpi) read back exactly.

use plx_format::event::{enter_word, exit_word, extended_word};
use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::writer::raw_record_bytes;
use plx_format::{
    ClockOffset, CommDef, Direction, Event, Experiment, MessageStats, MpiInit, OffsetWhen, Record,
    RegionKind, ThreadLevel, WarningKind, NONE_U32,
};

use plx_format::test_dir::tmp;

/// Little-endian bytes of a list of (value, width) fields.
fn le(fields: &[(u64, usize)]) -> Vec<u8> {
    fields
        .iter()
        .flat_map(|(v, n)| v.to_le_bytes()[..*n].to_vec())
        .collect()
}

fn check(record_type: u16, payload: Vec<u8>, expected: Record) {
    let got = Record::decode(record_type, &payload).unwrap().unwrap();
    assert_eq!(got, expected);
    assert_eq!(expected.record_type(), record_type);
    let mut again = Vec::new();
    expected.encode_payload(&mut again);
    assert_eq!(again, payload, "encoding of {expected:?}");
}

#[test]
fn mpi_records_have_the_spec_layout() {
    // 14 MpiInit: rank u32, size u32, thread_level u32, ticks u64, library str
    let mut p = le(&[(2, 4), (4, 4), (3, 4), (123_456, 8), (9, 4)]);
    p.extend_from_slice(b"MPICH 4.1");
    check(
        14,
        p,
        Record::MpiInit(MpiInit {
            rank: 2,
            size: 4,
            thread_level: ThreadLevel::Multiple,
            ticks: 123_456,
            library: "MPICH 4.1".into(),
        }),
    );
    // 15 ClockOffset: when u8, local_ns u64, offset_ns i64, rtt_ns u64
    let p = le(&[(1, 1), (5_000, 8), ((-250i64) as u64, 8), (1_800, 8)]);
    check(
        15,
        p,
        Record::ClockOffset(ClockOffset {
            when: OffsetWhen::Finalize,
            local_ns: 5_000,
            offset_ns: -250,
            rtt_ns: 1_800,
        }),
    );
    // 16 CommDef: comm u32, ordinal u32, size u32, ranks u32 x size
    let p = le(&[(2, 4), (1, 4), (3, 4), (3, 4), (1, 4), (0, 4)]);
    check(
        16,
        p,
        Record::CommDef(CommDef {
            comm: 2,
            ordinal: 1,
            ranks: vec![3, 1, 0],
        }),
    );
    // 17 MessageStats: thread, region, peer u32, direction u8, comm u32, count, bytes, min, max u64
    let p = le(&[
        (1, 4),
        (5, 4),
        (0xFFFF_FFFF, 4),
        (1, 1),
        (0, 4),
        (4, 8),
        (64, 8),
        (8, 8),
        (32, 8),
    ]);
    check(
        17,
        p,
        Record::MessageStats(MessageStats {
            thread: 1,
            region: 5,
            peer: NONE_U32,
            direction: Direction::Received,
            comm: 0,
            count: 4,
            bytes: 64,
            min_bytes: 8,
            max_bytes: 32,
        }),
    );
    // RegionDef kind 4 is an MPI routine
    let mut p = le(&[(7, 4), (4, 1), (0, 1), (0xFFFF_FFFF, 4), (0, 8), (8, 4)]);
    p.extend_from_slice(b"MPI_Send");
    p.extend(le(&[(0, 4), (0, 4)]));
    match Record::decode(5, &p).unwrap().unwrap() {
        Record::RegionDef(d) => assert_eq!((d.kind, d.kind.as_str()), (RegionKind::Mpi, "mpi")),
        r => panic!("{r:?}"),
    }
}

/// Two ranks, a ping-pong of 3 iterations and a barrier, traced in chunks of 2 ops.
fn ping_pong() -> MpiWorld {
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.chunk_ops = 2;
    for i in 0..3u64 {
        let t = 1_000 + i * 1_000;
        w.message(&Msg::new((0, 0), (1, 0), 8 << i, t, t + 100).tag(i as i32));
        w.message(&Msg::new((1, 0), (0, 0), 8 << i, t + 200, t + 300).tag(i as i32));
    }
    for r in 0..2 {
        w.collective((r, 0), "MPI_Barrier", 0, NONE_U32, 0, 0, 5_000, 5_100);
    }
    w
}

#[test]
fn synthetic_mpi_experiment_reads_back() {
    let d = tmp("pingpong");
    ping_pong().write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.images.len(), 2);
    let img = &e.images[1];
    let p = &img.process;
    assert_eq!(p.mpi.as_ref().map(|m| (m.rank, m.size)), Some((1, 2)));
    // the world lists no ranks (format version 3): the model lists them
    assert!(p.comms[&0].ranks.is_empty());
    assert_eq!(p.comms[&1].ranks, vec![1]);
    assert_eq!(p.regions[&3].name, "MPI_Send");
    assert_eq!(p.regions[&3].kind, RegionKind::Mpi);
    let stats = &p.threads[&0].message_stats;
    let sent = stats
        .iter()
        .find(|s| s.direction == Direction::Sent && s.peer == 0)
        .unwrap();
    assert_eq!(
        (sent.count, sent.bytes, sent.min_bytes, sent.max_bytes),
        (3, 56, 8, 32)
    );
    let barrier: Vec<_> = stats.iter().filter(|s| s.peer == NONE_U32).collect();
    assert_eq!(barrier.len(), 2);

    let index = img.trace.as_ref().unwrap();
    assert!(index.chunks.len() >= 3, "ops split over chunks");
    let mut reader = index.reader().unwrap();
    let mut mpi = Vec::new();
    while let Some(chunk) = reader.next_chunk() {
        let (_, events) = chunk.unwrap();
        mpi.extend(events.filter(|e| {
            matches!(
                e,
                Event::Send { .. } | Event::Recv { .. } | Event::Collective { .. }
            )
        }));
    }
    assert_eq!(
        mpi,
        vec![
            Event::Recv {
                peer: 0,
                tag: 0,
                bytes: 8,
                comm: 0,
                ticks: 1_100
            },
            Event::Send {
                peer: 0,
                tag: 0,
                bytes: 8,
                comm: 0,
                ticks: 1_200
            },
            Event::Recv {
                peer: 0,
                tag: 1,
                bytes: 16,
                comm: 0,
                ticks: 2_100
            },
            Event::Send {
                peer: 0,
                tag: 1,
                bytes: 16,
                comm: 0,
                ticks: 2_200
            },
            Event::Recv {
                peer: 0,
                tag: 2,
                bytes: 32,
                comm: 0,
                ticks: 3_100
            },
            Event::Send {
                peer: 0,
                tag: 2,
                bytes: 32,
                comm: 0,
                ticks: 3_200
            },
            Event::Collective {
                comm: 0,
                root: NONE_U32,
                bytes_sent: 0,
                bytes_recv: 0,
                ticks: 5_100
            },
        ]
    );
}

#[test]
fn unknown_subtypes_between_mpi_events_are_skipped() {
    let d = tmp("unknown-subtype");
    let mut p = SynthProcess::new("h", 7, &["app"]);
    p.functions(&[(1, "main")])
        .mpi_routines(&[(2, "MPI_Send")])
        .thread(0, 7, "main", 0);
    let mut ev = plx_format::EventEncoder::new(0);
    ev.raw(&[enter_word(1, 0), enter_word(2, 5)])
        .raw(&[extended_word(2, 3, 1), 1 | (3 << 32), 100, 0])
        .raw(&[extended_word(40, 2, 1), 0xdead, 0xbeef, exit_word(2, 1)])
        .raw(&[extended_word(3, 1, 1), 42])
        .raw(&[exit_word(1, 1)]);
    p.chunk(0, &ev);
    p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let index = e.images[0].trace.as_ref().unwrap();
    let mut reader = index.reader().unwrap();
    let (_, events) = reader.next_chunk().unwrap().unwrap();
    let events: Vec<Event> = events.collect();
    assert_eq!(
        events,
        vec![
            Event::Enter {
                region: 1,
                ticks: 0
            },
            Event::Enter {
                region: 2,
                ticks: 5
            },
            Event::Send {
                peer: 1,
                tag: 3,
                bytes: 100,
                comm: 0,
                ticks: 6
            },
            Event::Unknown {
                subtype: 40,
                ticks: 7
            },
            Event::Exit {
                region: 2,
                ticks: 8
            },
            // a receive with a short payload is not a receive
            Event::Unknown {
                subtype: 3,
                ticks: 9
            },
            Event::Exit {
                region: 1,
                ticks: 10
            },
        ]
    );
}

#[test]
fn damaged_mpi_records_are_warned_about_and_skipped() {
    let d = tmp("damaged");
    let mut p = SynthProcess::new("h", 8, &["app"]);
    p.mpi_init(0, 1, ThreadLevel::Single, 5)
        .comm(0, 0, &[0])
        .thread(0, 8, "main", 0)
        .profile(0, 100, 50, &[])
        .end(100, 0);
    let dir = p.write(&d).unwrap();
    // a CommDef saying 1000 members but holding one, appended after ProcessEnd
    let mut bytes = p.process_bytes();
    bytes.extend(raw_record_bytes(
        16,
        &le(&[(2, 4), (0, 4), (1000, 4), (0, 4)]),
    ));
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    let w = &e.warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, WarningKind::Malformed);
    assert!(w[0].message.contains("type 16"), "{}", w[0].message);
    let p = &e.images[0].process;
    assert_eq!(p.comms.len(), 1);
    assert_eq!(p.mpi.as_ref().unwrap().library, "synthetic MPI 1.0");
}
