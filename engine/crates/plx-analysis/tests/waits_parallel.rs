//! The parallel wait-state analysis (`waits::parallel`), its processes played by threads that
//! all-gather through shared memory and send each other bytes through channels: on any number
//! of them, rank 0's rows (and causes) are the serial analysis's, in the same order, with the
//! same event count; a receive recorded before its send makes rank 0 analyse alone.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex};

use plx_analysis::waits::parallel::{compute, Exchange, ParallelResult};
use plx_analysis::{clock_condition, AnalysisError, MergeOptions, Model, WaitAnalysis, Window};
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::tmp;
use plx_format::{Experiment, NONE_U32};

#[path = "fixtures/open.rs"]
mod open_fixture;
use open_fixture::open;

/// One analysis process of `size`, all-gathering through `shared`.
struct Threads {
    rank: usize,
    size: usize,
    shared: Arc<(Mutex<Vec<Vec<u8>>>, Barrier)>,
    /// To each rank, and from each rank.
    to: Vec<Sender<Vec<u8>>>,
    from: Vec<Mutex<Receiver<Vec<u8>>>>,
}

impl Exchange for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allgather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, AnalysisError> {
        let (slots, barrier) = &*self.shared;
        slots.lock().unwrap()[self.rank] = bytes.to_vec();
        barrier.wait();
        let all = slots.lock().unwrap().clone();
        // nobody writes the next round's bytes before everyone has read this one's
        barrier.wait();
        Ok(all)
    }
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), AnalysisError> {
        self.to[to].send(bytes).unwrap();
        Ok(())
    }
    fn recv(&self, from: usize) -> Result<Vec<u8>, AnalysisError> {
        Ok(self.from[from].lock().unwrap().recv().unwrap())
    }
}

/// 9 ranks: ranks 0-3 send to ranks 4-7 (each receive posted about 1.5 µs before its send: late
/// senders, every message crossing the blocks of 2 or more analysis processes), one of them
/// by MPI_Ssend posted before its receive (a late receiver), and an allreduce rank 7 enters
/// 5 µs late; `unordered`: one receive recorded 3 µs before its send.
fn world(d: &Path, unordered: bool) {
    let n = 9u32;
    let mut w = MpiWorld::new(n);
    w.trace = true;
    w.chunk_ops = 2;
    let mut t = 50_000u64;
    for k in 0..6u64 {
        for r in 0..4 {
            let send = t + r as u64 * 53;
            let recv = if unordered && k == 3 && r == 1 {
                send - 3_000
            } else {
                send + 1_500 + r as u64 * 7
            };
            let mut m = Msg::new((r, 0), (r + 4, 0), 64, send, recv)
                .tag((k % 2) as i32)
                .durations(300, 3_000 + 100 * k);
            if r == 2 && k == 1 {
                // the receive posted 1.3 µs after the Ssend entered, which lasts 5 µs
                m = m.routines("MPI_Ssend", "MPI_Recv").durations(5_000, 200);
            }
            w.message(&m);
        }
        t += 20_000;
    }
    for r in 0..n {
        let enter = t + if r == 7 { 5_000 } else { r as u64 * 100 };
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, enter, t + 6_000);
    }
    w.write(d).unwrap();
}

type Row = (&'static str, String, String, i64, u64);

fn rows(a: &WaitAnalysis) -> (Vec<Row>, u64) {
    let rows = a
        .rows
        .iter()
        .map(|r| {
            (
                r.pattern.name(),
                a.locations[r.location as usize].label(),
                a.callpath_name(r.callpath),
                r.wait_ns,
                r.count,
            )
        })
        .collect();
    (rows, a.events)
}

/// Rank 0's result of `size` analysis processes, and whether it was the serial one.
fn parallel(exp: &Experiment, model: &Model, size: usize, window: Window) -> (WaitAnalysis, bool) {
    let r = parallel_with(exp, model, size, window, false);
    (r.analysis, r.serial)
}

/// Rank 0's result of `size` analysis processes (with `causes`, their causes).
fn parallel_with(
    exp: &Experiment,
    model: &Model,
    size: usize,
    window: Window,
    causes: bool,
) -> ParallelResult {
    let shared = Arc::new((Mutex::new(vec![Vec::new(); size]), Barrier::new(size)));
    // channel (i, j): from rank i to rank j
    let (mut tx, mut rx): (Vec<Vec<_>>, Vec<Vec<_>>) = (Vec::new(), Vec::new());
    for _ in 0..size {
        let (t, r): (Vec<_>, Vec<_>) = (0..size).map(|_| channel()).unzip();
        tx.push(t);
        rx.push(r);
    }
    let mut from: Vec<Vec<Mutex<Receiver<Vec<u8>>>>> = (0..size).map(|_| Vec::new()).collect();
    for row in rx {
        for (j, r) in row.into_iter().enumerate() {
            from[j].push(Mutex::new(r));
        }
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = from
            .into_iter()
            .enumerate()
            .map(|(rank, from)| {
                let x = Threads {
                    rank,
                    size,
                    shared: Arc::clone(&shared),
                    to: tx[rank].clone(),
                    from,
                };
                s.spawn(move || compute(model, exp, window, None, causes, &x).unwrap())
            })
            .collect();
        let mut out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(out[1..].iter().all(Option::is_none));
        out.remove(0).expect("rank 0's result")
    })
}

type CauseOut = (&'static str, String, String, String, &'static str, u64);

/// The causes as `plx waits --causes` prints them: names, and each delay's bits.
fn causes(a: &WaitAnalysis) -> Vec<CauseOut> {
    a.causes
        .iter()
        .map(|c| {
            (
                c.pattern.name(),
                a.locations[c.waiting as usize].label(),
                a.locations[c.cause as usize].label(),
                a.callpath_name(c.cause_callpath),
                c.kind.as_str(),
                c.delay_ns.to_bits(),
            )
        })
        .collect()
}

#[test]
fn any_number_of_analysis_processes_gives_the_serial_rows() {
    let d = tmp("waits-parallel");
    world(&d, false);
    let (exp, model) = open(&d);
    let window = Window::ALL;
    let serial =
        WaitAnalysis::compute(&model, &exp, window, None, false, MergeOptions::default()).unwrap();
    let want = rows(&serial);
    // the clock condition holds: the serial merge moves nothing
    let clock = clock_condition(&model, MergeOptions::default())
        .unwrap()
        .report;
    assert_eq!(
        (clock.messages, clock.shifted_receives),
        (24, 0),
        "{clock:?}"
    );
    let at = |p: &str| -> Vec<String> {
        want.0
            .iter()
            .filter(|r| r.0 == p)
            .map(|r| r.1.clone())
            .collect()
    };
    // the world's waits: late senders at 4-7, the late receiver, 8 ranks waiting for rank 7
    assert_eq!(at("late_sender"), ["4.0", "5.0", "6.0", "7.0"], "{want:?}");
    assert_eq!(at("late_receiver"), ["2.0"], "{want:?}");
    assert_eq!(at("wait_at_nxn").len(), 8, "{want:?}");
    for size in [1, 2, 4, 9, 12] {
        let (a, fallback) = parallel(&exp, &model, size, window);
        assert!(!fallback, "{size}");
        assert_eq!(rows(&a), want, "{size} analysis processes");
    }
}

#[test]
fn a_window_counts_the_events_the_serial_replay_counts() {
    let d = tmp("waits-parallel-window");
    world(&d, false);
    let (exp, model) = open(&d);
    let window = Window {
        start_ns: 60_000,
        end_ns: 110_000,
    };
    let serial =
        WaitAnalysis::compute(&model, &exp, window, None, false, MergeOptions::default()).unwrap();
    let (a, _) = parallel(&exp, &model, 3, window);
    assert_eq!(rows(&a), rows(&serial));
}

#[test]
fn a_receive_before_its_send_makes_rank_0_analyse_alone() {
    let d = tmp("waits-parallel-unordered");
    world(&d, true);
    let (exp, model) = open(&d);
    let serial = WaitAnalysis::compute(
        &model,
        &exp,
        Window::ALL,
        None,
        false,
        MergeOptions::default(),
    )
    .unwrap();
    let (a, fallback) = parallel(&exp, &model, 3, Window::ALL);
    assert!(fallback);
    assert_eq!(rows(&a), rows(&serial));
}

#[test]
fn the_causes_are_computed_by_every_block_and_are_the_serial_ones() {
    let d = tmp("waits-parallel-causes");
    world(&d, false);
    let (exp, model) = open(&d);
    let serial = WaitAnalysis::compute(
        &model,
        &exp,
        Window::ALL,
        None,
        true,
        MergeOptions::default(),
    )
    .unwrap();
    let want = causes(&serial);
    // late senders at 4-7 blamed on 0-3 (on 2 also its time in the MPI_Ssend of their
    // previous message after 6 had left the receive), the late receiver 2 on 6, 8 ranks
    // waiting for 7
    assert_eq!(want.len(), 24, "{want:#?}");
    for size in [1, 2, 3, 4, 9, 12] {
        let r = parallel_with(&exp, &model, size, Window::ALL, true);
        assert!(!r.serial, "{size}");
        assert_eq!(
            rows(&r.analysis),
            rows(&serial),
            "{size} analysis processes"
        );
        assert_eq!(causes(&r.analysis), want, "{size} analysis processes");
        // each block found its own locations' causes: the 9 ranks' rows are split among them
        let found: Vec<u64> = r.stats.iter().map(|s| s.causes).collect();
        assert_eq!(found.iter().sum::<u64>(), want.len() as u64, "{found:?}");
        // every one of the 9 ranks has causes of its waits: each block found some
        let busy = r.stats.iter().filter(|s| s.causes > 0).count();
        assert_eq!(busy, size.min(9), "{found:?}");
        // what the blocks sent each other: nothing with one, items with more
        let items: u64 = r.stats.iter().map(|s| s.items).sum();
        assert_eq!(items == 0, size == 1, "{:?}", r.stats);
    }
}

/// 8 ranks: rank r (0-3) MPI_Ssends to rank r + 4, whose receive was posted by MPI_Irecv
/// 1.3 µs after the Ssend entered and completed by an MPI_Wait entered 3 µs after it: each
/// sender waits for the post (late receiver 1.3 µs), not for the Wait's entry.
fn irecv_world(d: &Path) {
    let mut w = MpiWorld::new(8);
    w.trace = true;
    w.chunk_ops = 2;
    for r in 0..4u32 {
        let send = 50_000 + r as u64 * 10_000;
        let posted = send + 1_300;
        w.op((r + 4, 0), "MPI_Irecv", posted, posted + 100, None);
        w.message(
            &Msg::new((r, 0), (r + 4, 0), 64, send, send + 3_200)
                .routines("MPI_Ssend", "MPI_Wait")
                .durations(5_000, 200)
                .posted(posted),
        );
    }
    w.write(d).unwrap();
}

#[test]
fn a_late_receiver_waits_for_the_post_of_an_irecv_in_another_block() {
    let d = tmp("waits-parallel-irecv");
    irecv_world(&d);
    let (exp, model) = open(&d);
    for causes in [false, true] {
        let serial = WaitAnalysis::compute(
            &model,
            &exp,
            Window::ALL,
            None,
            causes,
            MergeOptions::default(),
        )
        .unwrap();
        let want = rows(&serial);
        let late: Vec<i64> = want
            .0
            .iter()
            .filter(|r| r.0 == "late_receiver")
            .map(|r| r.3)
            .collect();
        // each of the 4 senders waited from its entry to the post, 1.3 µs
        assert_eq!(late, [1_300; 4], "{want:?}");
        for size in [2, 3, 4] {
            let r = parallel_with(&exp, &model, size, Window::ALL, causes);
            assert!(!r.serial, "{size} processes: rank 0 analysed alone");
            assert_eq!(rows(&r.analysis), want, "{size} processes, causes {causes}");
        }
    }
}

/// 12 ranks, 7 collective instances on the world, every rank's exit 6 µs after the instance's
/// start: a barrier rank 10 enters 5 µs late, an allreduce rank 3 enters 4 µs late, a
/// broadcast whose root 5 enters 4 µs late, a reduce whose root 2 enters 2 µs before every
/// other member, a barrier rank 0 enters 3 µs late, a broadcast whose root 9 enters first
/// (no wait), and one whose root 6 enters after ranks 0-5 and before 7-11 (neither the latest
/// nor the earliest). The entry of rank r in each: [`coll_enter`].
fn collective_world(d: &Path) {
    let mut w = MpiWorld::new(12);
    w.trace = true;
    w.chunk_ops = 2;
    for (k, &(routine, root)) in COLLECTIVES.iter().enumerate() {
        let t = coll_start(k);
        for r in 0..12 {
            let root = root.unwrap_or(NONE_U32);
            w.collective(
                (r, 0),
                routine,
                0,
                root,
                8,
                8,
                t + coll_enter(k, r),
                t + 6_000,
            );
        }
    }
    w.write(d).unwrap();
}

const COLLECTIVES: [(&str, Option<u32>); 7] = [
    ("MPI_Barrier", None),
    ("MPI_Allreduce", None),
    ("MPI_Bcast", Some(5)),
    ("MPI_Reduce", Some(2)),
    ("MPI_Barrier", None),
    ("MPI_Bcast", Some(9)),
    ("MPI_Bcast", Some(6)),
];

fn coll_start(k: usize) -> u64 {
    50_000 + k as u64 * 30_000
}

/// Rank r's entry into collective k, after the instance's start.
fn coll_enter(k: usize, r: u32) -> u64 {
    let r = r as u64;
    match k {
        0 if r == 10 => 5_000,
        0 => r * 100,
        1 if r == 3 => 4_000,
        1 => (11 - r) * 50,
        2 if r == 5 => 4_000,
        2 => r * 30,
        3 if r == 2 => 0,
        3 => 2_000 + (r * 7 % 5) * 100,
        4 if r == 0 => 3_000,
        4 => r * 100,
        5 if r == 9 => 0,
        5 => 100 + r * 100,
        _ if r == 6 => 650,
        _ => r * 100 + (r / 7) * 1_000,
    }
}

#[test]
fn every_collective_pattern_is_the_serial_one_from_per_block_summaries() {
    let d = tmp("waits-parallel-collectives");
    collective_world(&d);
    let (exp, model) = open(&d);
    // the waits of each instance, from the entries: the late member's entry minus each
    // waiting member's
    let enter = |k: usize, r: u32| coll_enter(k, r) as i64;
    let all_but = |k: usize, late: u32| -> i64 {
        (0..12)
            .filter(|&r| r != late)
            .map(|r| enter(k, late) - enter(k, r))
            .sum()
    };
    let want_totals = [
        ("wait_at_barrier", all_but(0, 10) + all_but(4, 0), 12),
        ("wait_at_nxn", all_but(1, 3), 11),
        (
            "late_broadcast",
            all_but(2, 5) + (0..6).map(|r| 650 - enter(6, r)).sum::<i64>(),
            12,
        ),
        (
            "early_reduce",
            (0..12)
                .filter(|&r| r != 2)
                .map(|r| enter(3, r))
                .max()
                .unwrap(),
            1,
        ),
    ];
    assert_eq!(want_totals[0].1, 49_400 + 26_400);
    for causes in [false, true] {
        let serial = WaitAnalysis::compute(
            &model,
            &exp,
            Window::ALL,
            None,
            causes,
            MergeOptions::default(),
        )
        .unwrap();
        let want = rows(&serial);
        for &(pattern, total, n) in &want_totals {
            let of: Vec<&Row> = want.0.iter().filter(|r| r.0 == pattern).collect();
            assert_eq!(of.len(), n, "{pattern}: {want:?}");
            assert_eq!(of.iter().map(|r| r.3).sum::<i64>(), total, "{pattern}");
        }
        // 12 + 11 + 12 + 1 rows, nothing else (the broadcast whose root came first: none)
        assert_eq!(want.0.len(), 36, "{want:?}");
        let want_causes = causes.then(|| self::causes(&serial));
        if let Some(c) = &want_causes {
            // each wait blamed on its instance's late rank: one row per waiting location and
            // late rank (the first barrier's 11 for rank 10, the broadcasts' 11 for root 5 and 6
            // for root 6), and the second barrier's, whose interval reaches back to the
            // allreduce (a broadcast and a reduce begin none), by rank 0's main and MPI_Reduce
            // and, where the waiter waited less than rank 0 in root 5's broadcast, by root 5
            // (propagated): 29 rows
            assert_eq!(c.len(), 11 + 11 + 17 + 1 + 29, "{c:#?}");
        }
        for size in [1, 2, 3, 4, 5, 12] {
            let r = parallel_with(&exp, &model, size, Window::ALL, causes);
            assert!(!r.serial, "{size}");
            assert_eq!(rows(&r.analysis), want, "{size} processes, causes {causes}");
            if let Some(c) = &want_causes {
                assert_eq!(&self::causes(&r.analysis), c, "{size} processes");
            }
            // each block replayed, of the others, one summary per instance and other block
            // (not their 3 events per member), and sent each other block at most 70 bytes an
            // instance with the regions the summaries name
            for s in &r.stats {
                assert_eq!(
                    s.remote_events,
                    7 * (size as u64 - 1),
                    "{size}: {:?}",
                    r.stats
                );
                if !causes {
                    assert!(
                        s.sent_bytes <= (size as u64 - 1) * (7 * 74 + 120),
                        "{size}: {:?}",
                        r.stats
                    );
                }
            }
        }
    }
}

/// 8 ranks: rank r (0-3) connects to rank r + 4 (a traced stream each way is not needed: one
/// direction, stream 1000 + r), whose accept began 1.5 µs + 10r ns before the connect, then
/// writes 64 bytes 3 times, each read entered 1 µs + 10r ns before its write; before each
/// write the writer computes in main.
fn stream_world(d: &Path) {
    let mut w = MpiWorld::new(8);
    w.trace = true;
    w.chunk_ops = 2;
    for r in 0..4u32 {
        let stream = 1000 + r as u64;
        let (reader, lag) = (r + 4, 10 * r as u64);
        let t = 50_000 + r as u64 * 1_000;
        let connect = t + 1_500;
        w.socket_call(
            (reader, 0),
            "accept",
            connect - 1_500 - lag,
            connect + 300,
            Some(stream_event(false, stream, 0, connect + 300)),
        );
        w.socket_call(
            (r, 0),
            "connect",
            connect,
            connect + 200,
            Some(stream_event(true, stream, 0, connect + 200)),
        );
        for k in 0..3u64 {
            let write = t + 10_000 + k * 10_000;
            let end = 64 * (k + 1);
            w.socket_call(
                (r, 0),
                "send",
                write,
                write + 300,
                Some(stream_event(true, stream, end, write + 300)),
            );
            w.socket_call(
                (reader, 0),
                "recv",
                write - 1_000 - lag,
                write + 500,
                Some(stream_event(false, stream, end, write + 500)),
            );
        }
    }
    w.write(d).unwrap();
}

fn stream_event(write: bool, stream: u64, end: u64, ticks: u64) -> plx_format::Event {
    let bytes = end.min(64);
    match write {
        true => plx_format::Event::StreamSend {
            stream,
            end,
            bytes,
            ticks,
        },
        false => plx_format::Event::StreamRecv {
            stream,
            end,
            bytes,
            ticks,
        },
    }
}

#[test]
fn a_stream_between_blocks_is_analysed_in_parallel_with_its_causes() {
    let d = tmp("waits-parallel-streams");
    stream_world(&d);
    let (exp, model) = open(&d);
    for causes in [false, true] {
        let serial = WaitAnalysis::compute(
            &model,
            &exp,
            Window::ALL,
            None,
            causes,
            MergeOptions::default(),
        )
        .unwrap();
        let want = rows(&serial);
        let of = |p: &str| -> Vec<(String, i64, u64)> {
            want.0
                .iter()
                .filter(|r| r.0 == p)
                .map(|r| (r.1.clone(), r.3, r.4))
                .collect()
        };
        // each reader: its accept waited for the connect, each of its 3 reads for a write
        let at = |r: i64| format!("{}.0", r + 4);
        let connects: Vec<_> = (0..4).map(|r| (at(r), 1_500 + 10 * r, 1)).collect();
        let reads: Vec<_> = (0..4).map(|r| (at(r), 3 * (1_000 + 10 * r), 3)).collect();
        assert_eq!(of("late_connect"), connects, "{want:?}");
        assert_eq!(of("stream_wait"), reads, "{want:?}");
        let want_causes = causes.then(|| self::causes(&serial));
        if let Some(c) = &want_causes {
            // every wait blamed on its writer (rank r for reader r + 4), at its call paths
            assert!(!c.is_empty());
            for row in c {
                let waiting: u32 = row.1.split('.').next().unwrap().parse().unwrap();
                assert_eq!(row.2, format!("{}.0", waiting - 4), "{c:#?}");
            }
        }
        for size in [1, 2, 3, 4, 8] {
            let r = parallel_with(&exp, &model, size, Window::ALL, causes);
            assert!(
                !r.serial,
                "{size} processes, causes {causes}: rank 0 analysed alone"
            );
            assert_eq!(rows(&r.analysis), want, "{size} processes, causes {causes}");
            if let Some(c) = &want_causes {
                assert_eq!(&self::causes(&r.analysis), c, "{size} processes");
            }
            if size == 2 {
                // a stream's writes go to its reader's block alone: the writers' block gets
                // nothing, the readers' the 4 writers' connect and 3 writes, 3 events each
                let got: Vec<u64> = r.stats.iter().map(|s| s.remote_events).collect();
                assert_eq!(got, [0, 48], "{:?}", r.stats);
                // with causes, each write's place and account: 16 items
                let items: Vec<u64> = r.stats.iter().map(|s| s.items).collect();
                assert_eq!(items, [if causes { 16 } else { 0 }, 0], "{:?}", r.stats);
            }
        }
    }
}

/// 6 ranks, two nonblocking collectives on the world (posts of 100 ns), each completed in a
/// Wait ending 10 µs after the instance's start plus 10 ns a rank: an MPI_Iallreduce rank 4
/// posts 5 µs late (the others at 100 ns a rank, entering MPI_Wait 300 ns after the post), then
/// an MPI_Ibcast whose root 1 posts 3 µs late (the others at 50 ns a rank, entering
/// MPI_Waitall 300 ns after the post). Before each post rank r computes in main.
fn nonblocking_world(d: &Path) {
    let mut w = MpiWorld::new(6);
    w.trace = true;
    w.chunk_ops = 2;
    for (k, &(routine, root, late, at, wait)) in NONBLOCKING.iter().enumerate() {
        let t = 50_000 + k as u64 * 30_000;
        for r in 0..6 {
            let post = t + if r == late {
                at
            } else {
                r as u64 * 100 / (k as u64 + 1)
            };
            w.collective((r, 0), routine, 0, root, 8, 8, post, post + 100);
            let done = plx_format::Event::CollDone {
                thread: 0,
                collective: k as u64,
                ticks: t + 10_000 + r as u64 * 10,
            };
            let from = if r == late { post + 100 } else { post + 300 };
            w.op((r, 0), wait, from, t + 10_000 + r as u64 * 10, Some(done));
        }
    }
    w.write(d).unwrap();
}

/// (routine, root, late rank, its post after the start, completing call).
const NONBLOCKING: [(&str, u32, u32, u64, &str); 2] = [
    ("MPI_Iallreduce", NONE_U32, 4, 5_000, "MPI_Wait"),
    ("MPI_Ibcast", 1, 1, 3_000, "MPI_Waitall"),
];

#[test]
fn nonblocking_collectives_wait_in_their_completion_in_any_number_of_blocks() {
    let d = tmp("waits-parallel-nonblocking");
    nonblocking_world(&d);
    let (exp, model) = open(&d);
    for causes in [false, true] {
        let serial = WaitAnalysis::compute(
            &model,
            &exp,
            Window::ALL,
            None,
            causes,
            MergeOptions::default(),
        )
        .unwrap();
        let want = rows(&serial);
        // each other rank's completing call waits from its entry (its post + 300) to the late
        // rank's post
        let waits = |pattern: &str, call: &str| -> Vec<(String, i64)> {
            want.0
                .iter()
                .filter(|r| r.0 == pattern && r.2 == format!("main => {call}"))
                .map(|r| (r.1.clone(), r.3))
                .collect()
        };
        let nxn: Vec<(String, i64)> = [0u32, 1, 2, 3, 5]
            .iter()
            .map(|&r| (format!("{r}.0"), 5_000 - (r as i64 * 100 + 300)))
            .collect();
        let bcast: Vec<(String, i64)> = [0u32, 2, 3, 4, 5]
            .iter()
            .map(|&r| (format!("{r}.0"), 3_000 - (r as i64 * 50 + 300)))
            .collect();
        assert_eq!(waits("wait_at_nxn", "MPI_Wait"), nxn, "{want:?}");
        assert_eq!(waits("late_broadcast", "MPI_Waitall"), bcast, "{want:?}");
        assert_eq!(want.0.len(), 10, "{want:?}");
        let want_causes = causes.then(|| self::causes(&serial));
        if let Some(c) = &want_causes {
            // each wait by its late rank's main (its extra time before the post), directly;
            // rank 0's broadcast wait also by root 1's 10 ns in the Iallreduce's MPI_Wait
            // after rank 0 left it (where their interval begins), in proportion: under 10
            let late = |p: &str| if p == "wait_at_nxn" { "4.0" } else { "1.0" };
            assert!(
                c.iter().all(|x| x.4 == "direct" && x.2 == late(x.0)),
                "{c:#?}"
            );
            let main: Vec<&str> = c.iter().filter(|x| x.3 == "main").map(|x| x.0).collect();
            assert_eq!(main.len(), 10, "{c:#?}");
            let lag: Vec<_> = c.iter().filter(|x| x.3 != "main").collect();
            assert_eq!(lag.len(), 1, "{c:#?}");
            assert_eq!(
                (lag[0].1.as_str(), lag[0].3.as_str()),
                ("0.0", "main => MPI_Wait")
            );
            let ns = f64::from_bits(lag[0].5);
            assert!(ns > 0.0 && ns < 10.0, "{c:#?}");
        }
        for size in [1, 2, 3, 6] {
            let r = parallel_with(&exp, &model, size, Window::ALL, causes);
            assert!(!r.serial, "{size}");
            assert_eq!(rows(&r.analysis), want, "{size} processes, causes {causes}");
            if let Some(c) = &want_causes {
                assert_eq!(&self::causes(&r.analysis), c, "{size} processes");
            }
        }
    }
}
