//! MPI analyses on synthetic MPI experiments (plx-format's synth_mpi) with known communication:
//! ranks, time in MPI, message pairs, trace matching, clock offsets, fits, damage.

use plx_analysis::matching::match_messages;
use plx_analysis::messages::{mismatches, pairs, routine_messages};
use plx_analysis::{
    AnalysisError, BuildOptions, FitAccumulator, GroupBy, Location, MatchedMessage, Mismatch,
    Model, MpiTime, PairCounter, PairStats,
};
use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{ClockOffset, CommDef, Direction, OffsetWhen, RegionKind, WarningKind, NONE_U32};

use plx_format::test_dir::tmp;

fn open(d: &std::path::Path) -> Model {
    Model::open(d, BuildOptions::default()).unwrap()
}

fn pair(s: Location, r: Location, messages: u64, bytes: u64, min: u64, max: u64) -> PairStats {
    PairStats {
        sender: s,
        receiver: r,
        messages,
        bytes,
        min_bytes: min,
        max_bytes: max,
    }
}

fn rk(r: u32) -> Location {
    Location::rank(r)
}

fn th(r: u32, t: u32) -> Location {
    Location::thread(r, t)
}

/// Every matched message, in the order found.
fn matched(m: &Model) -> (Vec<MatchedMessage>, plx_analysis::MatchSummary) {
    let mut v = Vec::new();
    let s = match_messages(m, |x| v.push(*x)).unwrap();
    (v, s)
}

/// Ranks 0 and 1 (pids in reverse order), 5 iterations of a ping-pong of 1000·(i+1) bytes:
/// every send op lasts 100 ns, every receive op 400 ns; plus `mpirun`, not instrumented.
fn ping_pong(trace: bool) -> MpiWorld {
    let mut w = MpiWorld::new(2);
    w.trace = trace;
    w.ranks[0].pid = 2001;
    w.ranks[1].pid = 2000;
    for i in 0..5u64 {
        let t = 10_000 + i * 10_000;
        let b = 1000 * (i + 1);
        w.message(&Msg::new((0, 0), (1, 0), b, t, t + 1_000).durations(100, 400));
        w.message(&Msg::new((1, 0), (0, 0), b, t + 2_000, t + 3_000).durations(100, 400));
    }
    w
}

fn mpirun(d: &std::path::Path) {
    let mut p = SynthProcess::new("node1", 1999, &["mpirun", "-np", "2", "./app"]);
    p.region(1, RegionKind::Runtime, "plx_symbols")
        .thread(0, 1999, "main", 0)
        .profile(0, 100_000, 500, &[(None, 1, 2, 0, 300, 300)])
        .end(100_000, 0);
    p.write(d).unwrap();
}

#[test]
fn ping_pong_ranks_time_in_mpi_and_pairs() {
    for trace in [false, true] {
        let d = tmp(&format!("pingpong-{trace}"));
        ping_pong(trace).write(&d).unwrap();
        mpirun(&d);
        let m = open(&d);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert!(m.has_mpi());
        let order: Vec<(Option<u32>, u32, bool)> = m
            .processes
            .iter()
            .map(|p| (p.rank(), p.pid, p.measured))
            .collect();
        assert_eq!(
            order,
            vec![
                (Some(0), 2001, true),
                (Some(1), 2000, true),
                (None, 1999, false)
            ]
        );
        let (tables, total) = m.tables(GroupBy::Thread);
        assert_eq!(tables.len(), 2, "mpirun is left out");
        for t in &tables {
            let mt = MpiTime::of(&t.tree, &m.regions);
            assert!((mt.total - 2_500e-9).abs() < 1e-15, "{trace}: {mt:?}");
            let r: Vec<(&str, u64, i64)> = mt
                .routines
                .iter()
                .map(|r| {
                    (
                        m.regions.name(r.region),
                        r.calls,
                        (r.time * 1e9).round() as i64,
                    )
                })
                .collect();
            assert_eq!(r, vec![("MPI_Recv", 5, 2_000), ("MPI_Send", 5, 500)]);
        }
        let all = MpiTime::of(&total.tree, &m.regions);
        assert!((all.total - 5_000e-9).abs() < 1e-15);
        assert_eq!(
            pairs(&m, Direction::Sent, false),
            vec![
                pair(rk(0), rk(1), 5, 15_000, 1_000, 5_000),
                pair(rk(1), rk(0), 5, 15_000, 1_000, 5_000)
            ]
        );
        assert_eq!(
            pairs(&m, Direction::Received, true),
            vec![
                pair(rk(0), th(1, 0), 5, 15_000, 1_000, 5_000),
                pair(rk(1), th(0, 0), 5, 15_000, 1_000, 5_000)
            ]
        );
        assert!(mismatches(&m).is_empty());
        let routines = routine_messages(&m.processes[0].threads);
        assert_eq!(routines.len(), 2);
        assert!((routines[0].mean_bytes() - 3_000.0).abs() < 1e-12);
    }
}

#[test]
fn ring_of_four_matrix_and_matching_agree() {
    let d = tmp("ring");
    let mut w = MpiWorld::new(4);
    w.trace = true;
    for i in 0..3u64 {
        for r in 0..4u32 {
            let t = 1_000 + i * 10_000 + r as u64 * 10;
            w.message(&Msg::new((r, 0), ((r + 1) % 4, 0), 64 << r, t, t + 2_000).tag(7));
        }
    }
    w.write(&d).unwrap();
    let m = open(&d);
    let expected: Vec<PairStats> = (0..4u32)
        .map(|r| pair(rk(r), rk((r + 1) % 4), 3, 3 * (64 << r), 64 << r, 64 << r))
        .collect();
    let mut sorted = expected.clone();
    sorted.sort_by_key(|p| (p.sender, p.receiver));
    assert_eq!(pairs(&m, Direction::Sent, false), sorted);
    let mut counter = PairCounter::new(false);
    let s = match_messages(&m, |x| counter.add(x)).unwrap();
    assert_eq!(
        (s.matched, s.unmatched_sends(), s.unmatched_receives()),
        (12, 0, 0)
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(counter.pairs(), sorted);
}

#[test]
fn by_thread_pairs_come_from_matched_events_in_time_order() {
    let d = tmp("threads");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.chunk_ops = 1;
    // same communicator, pair and tag from two threads of each rank: FIFO across threads by time
    w.message(&Msg::new((0, 1), (1, 2), 10, 100, 150));
    w.message(&Msg::new((0, 0), (1, 0), 20, 200, 300));
    w.message(&Msg::new((0, 1), (1, 0), 30, 400, 500));
    w.message(&Msg::new((1, 2), (0, 0), 40, 600, 700));
    w.write(&d).unwrap();
    let m = open(&d);
    let (v, s) = matched(&m);
    assert_eq!(s.matched, 4);
    let mut got: Vec<(Location, Location, u64)> =
        v.iter().map(|x| (x.sender, x.receiver, x.bytes)).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (th(0, 0), th(1, 0), 20),
            (th(0, 1), th(1, 0), 30),
            (th(0, 1), th(1, 2), 10),
            (th(1, 2), th(0, 0), 40),
        ]
    );
    let mut c = PairCounter::new(true);
    for x in &v {
        c.add(x);
    }
    let p = c.pairs();
    assert_eq!(p.len(), 4);
    assert_eq!(p[1], pair(th(0, 1), th(1, 0), 1, 30, 30, 30));
    // message statistics know the sending thread, not the receiving one
    assert_eq!(
        pairs(&m, Direction::Sent, true),
        vec![
            pair(th(0, 0), rk(1), 1, 20, 20, 20),
            pair(th(0, 1), rk(1), 2, 40, 10, 30),
            pair(th(1, 2), rk(0), 1, 40, 40, 40),
        ]
    );
}

#[test]
fn wildcard_receives_match_their_real_sender_and_tag() {
    let d = tmp("wildcard");
    let mut w = MpiWorld::new(4);
    w.trace = true;
    // rank 0 receives with MPI_ANY_SOURCE: arrivals 3, 1, 2, then 2, 3, 1
    let arrivals = [
        (3u32, 1_000u64),
        (1, 1_100),
        (2, 1_200),
        (2, 2_000),
        (3, 2_100),
        (1, 2_200),
    ];
    let mut sent_at = [0u64; 4];
    for (k, (from, at)) in arrivals.iter().enumerate() {
        let bytes = 100 * *from as u64 + k as u64;
        let t = 500 + sent_at[*from as usize];
        sent_at[*from as usize] += 1_000;
        w.message(&Msg::new((*from, 0), (0, 0), bytes, t, *at));
    }
    // rank 1 sends tag 5 then tag 6; rank 0 receives tag 6 first
    w.message(&Msg::new((1, 0), (0, 0), 55, 3_000, 3_200).tag(5));
    w.message(&Msg::new((1, 0), (0, 0), 66, 3_010, 3_100).tag(6));
    w.write(&d).unwrap();
    let m = open(&d);
    let (v, s) = matched(&m);
    assert_eq!(s.matched, 8);
    assert_eq!((s.unmatched_sends(), s.unmatched_receives()), (0, 0));
    let mut got: Vec<(u64, u32, u64, i32)> = v
        .iter()
        .map(|x| (x.recv_ticks, x.sender.rank, x.bytes, x.tag))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (1_000, 3, 300, 0),
            (1_100, 1, 101, 0),
            (1_200, 2, 202, 0),
            (2_000, 2, 203, 0),
            (2_100, 3, 304, 0),
            (2_200, 1, 105, 0),
            (3_100, 1, 66, 6),
            (3_200, 1, 55, 5),
        ]
    );
}

#[test]
fn collectives_are_not_point_to_point_messages() {
    let d = tmp("collectives");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    for r in 0..2 {
        w.collective(
            (r, 0),
            "MPI_Bcast",
            0,
            0,
            if r == 0 { 512 } else { 0 },
            if r == 0 { 0 } else { 512 },
            100,
            200,
        );
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, 300, 400);
    }
    w.message(&Msg::new((0, 0), (1, 0), 16, 500, 600));
    w.write(&d).unwrap();
    let m = open(&d);
    assert_eq!(
        pairs(&m, Direction::Sent, false),
        vec![pair(rk(0), rk(1), 1, 16, 16, 16)]
    );
    let (_, s) = matched(&m);
    assert_eq!((s.matched, s.collectives), (1, 4));
    let r = routine_messages(&m.processes[0].threads);
    let bcast = m.regions.find("MPI_Bcast", RegionKind::Mpi).unwrap();
    let b: Vec<_> = r.iter().filter(|s| s.region == Some(bcast)).collect();
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0].peer, b[0].direction, b[0].bytes),
        (None, Direction::Sent, 512)
    );
    let (tables, _) = m.tables(GroupBy::Process);
    let mt = MpiTime::of(&tables[0].tree, &m.regions);
    assert_eq!(mt.routines.len(), 3);
    assert!((mt.total - 200e-9).abs() < 1e-15);
}

#[test]
fn communicators_are_matched_by_members_and_ordinal_not_local_id() {
    let d = tmp("comms");
    let mut w = MpiWorld::new(3);
    w.trace = true;
    let sub = |comm, ranks: &[u32]| CommDef {
        comm,
        ordinal: 0,
        ranks: ranks.to_vec(),
    };
    w.ranks[0].comms.push(sub(2, &[0, 2]));
    w.ranks[1].comms.push(sub(2, &[1, 2]));
    w.ranks[2].comms.push(sub(2, &[1, 2]));
    w.ranks[2].comms.push(sub(3, &[0, 2]));
    // rank 0 sends on {0,2} then on the world, same tag; rank 2 receives the world's first
    w.message(&Msg::new((0, 0), (2, 0), 111, 100, 400).comm(2, 3));
    w.message(&Msg::new((0, 0), (2, 0), 222, 200, 300));
    w.write(&d).unwrap();
    let m = open(&d);
    // world, 3 x self, {0,2}, {1,2}
    assert_eq!(m.comms.all().len(), 6);
    assert_eq!(m.processes[0].comms[&2], m.processes[2].comms[&3]);
    let (v, s) = matched(&m);
    assert_eq!((s.matched, s.unmatched_sends()), (2, 0));
    let mut got: Vec<(u64, u64)> = v.iter().map(|x| (x.recv_ticks, x.bytes)).collect();
    got.sort();
    assert_eq!(got, vec![(300, 222), (400, 111)]);
    let sub_comm = v.iter().find(|x| x.bytes == 111).unwrap().comm.unwrap();
    assert_eq!(m.comms.get(sub_comm).describe(), "comm of 2 ranks [0 2] #0");
}

#[test]
fn a_world_written_without_its_ranks_is_the_world_written_with_them() {
    // the runtime writes the world's CommDef without its list (format version 3), an older
    // file with it: both are one MPI_COMM_WORLD, and messages on it match across them
    let d = tmp("world-list");
    let mut w = MpiWorld::new(3);
    w.trace = true;
    w.ranks[1].comms.push(CommDef {
        comm: 0,
        ordinal: 0,
        ranks: vec![0, 1, 2],
    });
    w.message(&Msg::new((0, 0), (1, 0), 64, 100, 400));
    w.message(&Msg::new((1, 0), (2, 0), 32, 500, 900));
    w.write(&d).unwrap();
    let e = plx_format::Experiment::open(&d).unwrap();
    assert!(e.images[0].process.comms[&0].ranks.is_empty());
    assert_eq!(e.images[1].process.comms[&0].ranks, vec![0, 1, 2]);
    let m = open(&d);
    // the world and 3 x self
    assert_eq!(m.comms.all().len(), 4);
    let world = m.processes[0].comms[&0];
    assert!((0..3).all(|r| m.processes[r].comms[&0] == world));
    assert_eq!(m.comms.get(world).ranks, vec![0, 1, 2]);
    assert_eq!(m.comms.get(world).describe(), "MPI_COMM_WORLD");
    let (v, s) = matched(&m);
    assert_eq!((s.matched, s.unmatched_sends()), (2, 0));
    assert!(v.iter().all(|x| x.comm == Some(world)));
}

/// Rank 0 sends sizes 0..100000 twice each to rank 1; transfers take 5 us + 1 ns per byte
/// (bandwidth 1000 MB/s); one size only back.
fn fit_world() -> MpiWorld {
    let mut w = MpiWorld::new(2);
    w.trace = true;
    let mut t = 1_000_000;
    for _ in 0..2 {
        for b in [0u64, 100, 1_000, 10_000, 100_000] {
            w.message(&Msg::new((0, 0), (1, 0), b, t, t + 5_000 + b));
            t += 200_000;
        }
    }
    w.message(&Msg::new((1, 0), (0, 0), 64, t, t + 9_000));
    w.message(&Msg::new((1, 0), (0, 0), 64, t + 20_000, t + 27_000));
    w
}

#[test]
fn fit_recovers_latency_and_bandwidth() {
    let d = tmp("fit");
    fit_world().write(&d).unwrap();
    let m = open(&d);
    let mut f = FitAccumulator::new(false);
    match_messages(&m, |x| f.add(x)).unwrap();
    let fits = f.fits();
    assert_eq!(fits.len(), 2);
    let a = fits[0];
    assert_eq!((a.sender, a.receiver, a.messages), (rk(0), rk(1), 10));
    assert!((a.latency_us.unwrap() - 5.0).abs() < 1e-9, "{a:?}");
    assert!((a.bandwidth_mbps.unwrap() - 1000.0).abs() < 1e-6, "{a:?}");
    assert!((a.r2.unwrap() - 1.0).abs() < 1e-12);
    // (10 x 5000 ns + 222200 ns) / 222200 bytes
    let tpb = (50_000.0 + 222_200.0) / 222_200.0 / 1e3;
    assert!((a.time_per_byte_us.unwrap() - tpb).abs() < 1e-15);
    let b = fits[1];
    assert_eq!((b.sender, b.messages), (rk(1), 2));
    assert_eq!((b.latency_us, b.bandwidth_mbps, b.r2), (None, None, None));
    assert!((b.mean_transfer_us - 8.0).abs() < 1e-12);
}

#[test]
fn clock_offsets_put_receives_after_their_sends() {
    // rank 1's clock is 1 ms behind rank 0's: a receive 10 us after the send has raw ticks
    // ~1 ms before it
    let skew = 1_000_000u64;
    let world = |offsets: &[(OffsetWhen, u64, i64)]| {
        let mut w = MpiWorld::new(2);
        w.trace = true;
        for k in 0..3u64 {
            let t = 2_000_000 + k * 100_000;
            w.message(&Msg::new((0, 0), (1, 0), 8, t, t + 10_000 - skew));
        }
        for (when, local_ns, offset_ns) in offsets {
            w.ranks[1].offsets.push(ClockOffset {
                when: *when,
                local_ns: *local_ns,
                offset_ns: *offset_ns,
                rtt_ns: 4_000,
            });
        }
        w
    };
    let transfers = |w: MpiWorld, name: &str| -> Vec<f64> {
        let d = tmp(name);
        w.write(&d).unwrap();
        let (v, _) = matched(&open(&d));
        v.iter().map(|x| x.transfer_ns()).collect()
    };
    let raw = transfers(world(&[]), "offsets-none");
    assert!(raw.iter().all(|t| *t == 10_000.0 - skew as f64), "{raw:?}");
    let fixed = transfers(
        world(&[
            (OffsetWhen::Init, 500_000, skew as i64),
            (OffsetWhen::Finalize, 3_000_000, skew as i64),
        ]),
        "offsets-constant",
    );
    assert_eq!(fixed, vec![10_000.0; 3]);
    // drift: the offset grows from 1 ms at local 0 by 1 ns per 10 us (one pair per end)
    let drift = transfers(
        world(&[
            (OffsetWhen::Init, 0, skew as i64),
            (OffsetWhen::Finalize, 10_000_000, skew as i64 + 1_000),
        ]),
        "offsets-drift",
    );
    for (k, t) in drift.iter().enumerate() {
        let local = (2_000_000 + k as u64 * 100_000 + 10_000 - skew) as f64;
        let expect = 10_000.0 + local * 1e-4;
        assert!((t - expect).abs() < 1e-6, "{k}: {t} vs {expect}");
        assert!(*t > 0.0);
    }
}

#[test]
fn crashed_rank_leaves_unmatched_sends_and_count_mismatches() {
    let d = tmp("crash");
    let mut w = MpiWorld::new(3);
    w.trace = true;
    for k in 0..5u64 {
        let t = 1_000 + k * 1_000;
        w.message(&Msg::new((1, 0), (2, 0), 32, t, t + 100));
        w.message(&Msg::new((0, 0), (1, 0), 16, t + 200, t + 300));
    }
    // rank 2 is killed after its third receive: no ThreadProfile, no MessageStats, no ProcessEnd
    w.ranks[2].crashed_at = Some(3_500);
    w.write(&d).unwrap();
    let m = open(&d);
    let unfinished: Vec<&str> = m
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Unfinished)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        unfinished,
        vec!["rank 2: no ProcessEnd record: the process did not finish writing"]
    );
    // rank 2's receives are derived from its trace
    assert_eq!(
        mismatches(&m),
        vec![Mismatch {
            sender: 1,
            receiver: 2,
            sent: 5,
            received: 3
        }]
    );
    let mm: Vec<&str> = m
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::MessageCountMismatch)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        mm,
        vec!["messages from rank 1 to rank 2: 5 sent, 3 received (rank 2 did not finish)"]
    );
    let (_, s) = matched(&m);
    assert_eq!(s.matched, 8);
    assert_eq!(s.unmatched_sends(), 2);
    assert_eq!(s.unmatched_receives(), 0);
    assert_eq!(s.unmatched[0].sender, 1);
    assert_eq!(
        s.warnings[0].message,
        "unmatched messages from rank 1 to rank 2: 2 sends were never received (rank 2 did not finish)"
    );
    assert_eq!(
        s.warnings[0].kind,
        WarningKind::UnmatchedMessages { count: 2 }
    );
}

#[test]
fn matching_needs_a_trace() {
    let d = tmp("notrace");
    ping_pong(false).write(&d).unwrap();
    let m = open(&d);
    let e = match_messages(&m, |_| {}).unwrap_err();
    assert!(matches!(e, AnalysisError::NoTrace(_)));
    assert!(
        e.to_string().contains("rerun with `plx run --trace`"),
        "{e}"
    );
}

#[test]
fn experiments_without_mpi_are_unchanged() {
    let d = tmp("nompi");
    let mut p = SynthProcess::new("h", 5, &["app"]);
    p.functions(&[(1, "main")])
        .thread(0, 5, "main", 0)
        .profile(0, 100, 50, &[(None, 1, 1, 0, 100, 100)])
        .end(100, 0);
    p.write(&d).unwrap();
    let m = open(&d);
    assert!(!m.has_mpi());
    assert!(m.processes[0].measured);
    assert!(pairs(&m, Direction::Sent, false).is_empty());
    assert!(matches!(
        match_messages(&m, |_| {}),
        Err(AnalysisError::NoTrace(_))
    ));
}
