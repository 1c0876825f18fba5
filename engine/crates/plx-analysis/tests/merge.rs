//! The global merge on synthetic experiments: order across threads and processes, one clock,
//! clock-condition repair, damage, bounded memory, and (ignored) the throughput benchmark.

use std::path::Path;

use plx_analysis::{clock_condition, ClockReport, EventKind, GlobalMerge, MergeOptions};
use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{ClockOffset, EventEncoder, OffsetWhen};

use plx_format::test_dir::tmp;

#[path = "fixtures/open.rs"]
mod open_fixture;
use open_fixture::open;

/// Every event as `time location kind name` (names of regions; message ids).
fn lines(d: &Path, opts: MergeOptions) -> (Vec<String>, Option<ClockReport>) {
    let (exp, model) = open(d);
    let mut m = GlobalMerge::new(&model, &exp, opts).unwrap();
    let mut out = Vec::new();
    while let Some(e) = m.next_event() {
        let loc = m.locations()[e.location as usize].label();
        let t = e.time_ns - m.origin_ns();
        let what = match e.kind {
            EventKind::Enter { region } => format!("enter {}", m.regions().name(region)),
            EventKind::Exit { region } => format!("exit {}", m.regions().name(region)),
            EventKind::User { event, value } => {
                format!("user {} {value}", m.user_events()[event as usize])
            }
            EventKind::Send { peer, message, .. } => format!("send to {peer} msg {message:?}"),
            EventKind::Recv { peer, message, .. } => {
                format!("recv from {peer} msg {:?}", message.map(|l| l.id))
            }
            EventKind::Collective { .. } => "collective".to_string(),
            EventKind::Acquire {
                object, wait_ns, ..
            } => format!("acquire {object} waited {wait_ns}"),
            EventKind::Release { object, .. } => format!("release {object}"),
            EventKind::StreamSend { end, .. } => format!("ssend {end}"),
            EventKind::StreamRecv { end, .. } => format!("srecv {end}"),
            EventKind::OmpTeam {
                region, thread_num, ..
            } => format!("team {} num {thread_num}", m.regions().name(region)),
            EventKind::Counted { set, values, .. } => format!("counted {set} {values:?}"),
            EventKind::SendDone { thread, mode, send } => {
                format!("send_done {thread} {mode} {send}")
            }
            EventKind::RecvPosted { before_ns } => format!("recv_posted {before_ns}"),
            EventKind::CollDone { thread, collective } => {
                format!("coll_done {thread} {collective}")
            }
        };
        out.push(format!("{t} {loc} {what}"));
    }
    (out, m.clock_report())
}

/// Two processes with two threads each, events interleaved, some at equal times.
#[test]
fn threads_and_processes_merge_in_time_order() {
    let d = tmp("order");
    for (pid, shift) in [(20u32, 0u64), (10, 5)] {
        let mut p = SynthProcess::new("h", pid, &["app"]);
        p.functions(&[(1, "main"), (2, "work")])
            .thread(0, pid, "main", 0)
            .thread(1, pid + 1, "worker", 0);
        // thread 1's chunk first in the file: file order must not matter across threads
        let mut w = EventEncoder::new(0);
        w.enter(2, 10 + shift).exit(2, 30 + shift);
        p.chunk(1, &w);
        let mut m = EventEncoder::new(0);
        m.enter(1, shift).enter(2, 10 + shift).exit(2, 20 + shift);
        p.chunk(0, &m);
        let mut m = EventEncoder::new(25 + shift);
        m.exit(1, 40 + shift);
        p.chunk(0, &m);
        p.end(100, 0);
        p.write(&d).unwrap();
    }
    let (got, clock) = lines(&d, MergeOptions::default());
    assert_eq!(clock, None, "no MPI: no clock condition");
    // processes in model order (pid 10, then 20): ties go to the earlier process, then thread
    let expected = [
        "0 20.0 enter main",
        "5 10.0 enter main",
        "10 20.0 enter work",
        "10 20.1 enter work",
        "15 10.0 enter work",
        "15 10.1 enter work",
        "20 20.0 exit work",
        "25 10.0 exit work",
        "30 20.1 exit work",
        "35 10.1 exit work",
        "40 20.0 exit main",
        "45 10.0 exit main",
    ];
    assert_eq!(got, expected);
}

/// Rank 1's clock is 3 µs behind and no ClockOffset says so: its receive of rank 0's message
/// comes 1 µs before the send. Rank 1 then sends to rank 2, whose receive is consistent before
/// the repair but not after it.
fn skewed_world(d: &Path) {
    let mut w = MpiWorld::new(3);
    w.trace = true;
    w.message(&Msg::new((0, 0), (1, 0), 8, 10_000, 9_000).durations(100, 500));
    w.message(&Msg::new((1, 0), (2, 0), 8, 12_000, 13_500).durations(100, 500));
    w.message(&Msg::new((1, 0), (0, 0), 8, 20_000, 30_000).durations(100, 500));
    w.write(d).unwrap();
}

#[test]
fn receive_before_its_send_is_repaired_and_the_shift_propagates() {
    let d = tmp("clc");
    skewed_world(&d);
    let (got, clock) = lines(&d, MergeOptions::default());
    let expected = [
        "0 0.0 enter main",
        "0 1.0 enter main",
        "0 2.0 enter main",
        "8500 1.0 enter MPI_Recv",
        "10000 0.0 enter MPI_Send",
        "10000 0.0 send to 1 msg Some(0)",
        "10100 0.0 exit MPI_Send",
        // rank 1 moved by 2 µs: send (10000) + minimum latency (1000, the cap)
        "11000 1.0 recv from 0 msg Some(0)",
        "11000 1.0 exit MPI_Recv",
        "13000 2.0 enter MPI_Recv",
        "14000 1.0 enter MPI_Send",
        "14000 1.0 send to 2 msg Some(1)",
        "14100 1.0 exit MPI_Send",
        // rank 2 moved by 1.5 µs: its receive at 13500 came before 14000 + 1000
        "15000 2.0 recv from 1 msg Some(1)",
        "15000 2.0 exit MPI_Recv",
        "16000 2.0 exit main",
        "22000 1.0 enter MPI_Send",
        "22000 1.0 send to 0 msg Some(2)",
        "22100 1.0 exit MPI_Send",
        "23100 1.0 exit main",
        "29500 0.0 enter MPI_Recv",
        "30000 0.0 recv from 1 msg Some(2)",
        "30000 0.0 exit MPI_Recv",
        "31000 0.0 exit main",
    ];
    assert_eq!(got, expected);
    let c = clock.unwrap();
    assert_eq!(
        (
            c.messages,
            c.violations_before,
            c.shifted_receives,
            c.max_shift_ns
        ),
        (3, 1, 2, 2000)
    );
    assert_eq!((c.min_latency_ns, c.violations_after), (1000, 0));
    assert!(c
        .describe()
        .contains("1 of 3 matched message(s) received before sent"));

    // the messages-only pass (plx info) finds the same numbers
    let (_, model) = open(&d);
    let cc = clock_condition(&model, MergeOptions::default()).unwrap();
    assert_eq!(cc.report, c);
    assert_eq!(cc.matching.matched, 3);
    assert!(cc.warnings.is_empty(), "{:?}", cc.warnings);
}

#[test]
fn without_repair_the_violation_stays_and_is_counted() {
    let d = tmp("no-clc");
    skewed_world(&d);
    let opts = MergeOptions {
        repair_clock: false,
        min_latency_ns: None,
    };
    let (got, clock) = lines(&d, opts);
    let c = clock.unwrap();
    assert_eq!(
        (c.violations_before, c.violations_after, c.shifted_receives),
        (1, 1, 0)
    );
    // the receive keeps its raw time and comes before its send, without a partner
    let recv = got
        .iter()
        .position(|l| l.starts_with("9000 1.0 recv"))
        .unwrap();
    let send = got
        .iter()
        .position(|l| l.starts_with("10000 0.0 send"))
        .unwrap();
    assert!(recv < send);
    assert!(got[recv].ends_with("msg None"));
    assert!(
        got[send].ends_with("msg None"),
        "its send is not linked either"
    );
    assert!(got.iter().any(|l| l == "13500 2.0 recv from 1 msg Some(0)"));
}

#[test]
fn given_minimum_latency_is_used() {
    let d = tmp("min-latency");
    skewed_world(&d);
    let opts = MergeOptions {
        repair_clock: true,
        min_latency_ns: Some(250),
    };
    let (got, clock) = lines(&d, opts);
    assert!(got.contains(&"10250 1.0 recv from 0 msg Some(0)".to_string()));
    assert_eq!(clock.unwrap().min_latency_ns, 250);
}

#[test]
fn clock_offsets_come_first_and_residual_errors_are_repaired() {
    // rank 1 is 1 ms behind, its offsets say 998 µs: a 2 µs residual error
    let d = tmp("offsets");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    let skew = 1_000_000u64;
    w.message(&Msg::new((0, 0), (1, 0), 8, 2_000_000, 2_000_500 - skew).durations(10, 10));
    w.message(&Msg::new((1, 0), (0, 0), 8, 2_100_000 - skew, 2_105_000).durations(10, 10));
    for when in [OffsetWhen::Init, OffsetWhen::Finalize] {
        w.ranks[1].offsets.push(ClockOffset {
            when,
            local_ns: if when == OffsetWhen::Init {
                100
            } else {
                1_500_000
            },
            offset_ns: 998_000,
            rtt_ns: 1_000,
        });
    }
    w.write(&d).unwrap();
    let (got, clock) = lines(&d, MergeOptions::default());
    let c = clock.unwrap();
    // after the offsets the receive is 1.5 µs early: repaired to send + 1 µs
    assert_eq!((c.violations_before, c.violations_after), (1, 0));
    assert_eq!(c.max_shift_ns, 2_500);
    let at = |s: &str| got.iter().find(|l| l.contains(s)).unwrap().clone();
    let t = |l: String| l.split(' ').next().unwrap().parse::<i64>().unwrap();
    let send = t(at("send to 1"));
    let recv = t(at("recv from 0"));
    assert_eq!(recv - send, 1_000);
    // rank 1's next send keeps its distance to the receive (local intervals kept)
    assert_eq!(t(at("send to 0")) - recv, 100_000 - 500);
}

#[test]
fn unmatched_receive_does_not_hold_its_process_back() {
    // rank 2 receives from rank 3, which is not in the experiment
    let d = tmp("unmatched");
    let mut w = MpiWorld::new(4);
    w.trace = true;
    w.message(&Msg::new((3, 0), (2, 0), 8, 900, 1_000));
    w.message(&Msg::new((0, 0), (2, 0), 8, 5_000, 6_000));
    w.write(&d).unwrap();
    std::fs::remove_dir_all(d.join("node1.1003")).unwrap();
    let (got, clock) = lines(&d, MergeOptions::default());
    let times: Vec<i64> = got
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{got:#?}");
    assert!(got.contains(&"1000 2.0 recv from 3 msg None".to_string()));
    let c = clock.unwrap();
    assert_eq!((c.messages, c.violations_after), (1, 0));
}

#[test]
fn message_to_itself_received_before_sent_does_not_stall_the_stream() {
    // rank 0's thread 1 sends to rank 0's thread 0, whose receive has the same tick and sorts
    // first; rank 1 works on meanwhile
    let d = tmp("self");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.message(&Msg::new((0, 1), (0, 0), 8, 1_000, 1_000));
    w.message(&Msg::new((1, 0), (0, 0), 8, 2_000, 5_000));
    w.write(&d).unwrap();
    let (got, clock) = lines(&d, MergeOptions::default());
    let times: Vec<i64> = got
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{got:#?}");
    assert!(got.contains(&"1000 0.0 recv from 0 msg None".to_string()));
    assert!(got.contains(&"1000 0.1 send to 0 msg None".to_string()));
    assert!(
        got.contains(&"5000 0.0 recv from 1 msg Some(0)".to_string()),
        "{got:#?}"
    );
    let c = clock.unwrap();
    assert_eq!((c.messages, c.violations_after), (2, 1));
}

#[test]
fn merge_holds_at_most_one_chunk_per_thread() {
    let d = tmp("memory");
    let mut p = SynthProcess::new("h", 30, &["app"]);
    p.functions(&[(1, "main"), (2, "work")]);
    let threads = 3u32;
    let chunks = 200u64;
    for t in 0..threads {
        p.thread(t, 30 + t, "t", 0);
    }
    // chunks of the three threads interleaved in the file, 50 events each
    for c in 0..chunks {
        for t in 0..threads {
            let base = c * 1000;
            let mut e = EventEncoder::new(base);
            for i in 0..25 {
                let at = base + 10 * i + t as u64;
                e.enter(2, at).exit(2, at + 5);
            }
            p.chunk(t, &e);
        }
    }
    p.write(&d).unwrap();
    let (exp, model) = open(&d);
    let mut m = GlobalMerge::new(&model, &exp, MergeOptions::default()).unwrap();
    let mut last = i64::MIN;
    let mut n = 0u64;
    while let Some(e) = m.next_event() {
        assert!(e.time_ns >= last);
        last = e.time_ns;
        n += 1;
        let s = m.stats();
        assert!(s.resident_chunks <= threads as u64, "{s:?}");
    }
    let s = m.stats();
    assert_eq!(n, threads as u64 * chunks * 50);
    assert_eq!(s.events, n);
    assert_eq!(
        s.chunks_loaded,
        threads as u64 * chunks,
        "each chunk read once"
    );
    assert!(s.peak_resident_chunks <= threads as u64, "{s:?}");
    assert!(s.peak_resident_bytes <= threads as u64 * 50 * 8, "{s:?}");
    assert_eq!(s.resident_chunks, 0);
}

#[test]
fn truncated_trace_is_merged_as_far_as_intact() {
    let d = tmp("truncated");
    let mut p = SynthProcess::new("h", 40, &["app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .thread(0, 40, "main", 0);
    for c in 0..3u64 {
        let mut e = EventEncoder::new(c * 100);
        e.enter(2, c * 100 + 1).exit(2, c * 100 + 2);
        p.chunk(0, &e);
    }
    p.write(&d).unwrap();
    let trace = d.join("h.40/trace.plx");
    let len = std::fs::metadata(&trace).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&trace)
        .unwrap();
    f.set_len(len - 5).unwrap();
    let (got, _) = lines(&d, MergeOptions::default());
    assert_eq!(got.len(), 4, "two intact chunks: {got:?}");
    let (exp, _) = open(&d);
    assert!(exp
        .warnings
        .iter()
        .any(|w| w.message.contains("truncated") || w.message.contains("missing")));
}

#[test]
fn no_trace_is_an_error() {
    let d = tmp("no-trace");
    let mut p = SynthProcess::new("h", 50, &["app"]);
    p.functions(&[(1, "main")])
        .thread(0, 50, "main", 0)
        .profile(0, 10, 0, &[(None, 1, 1, 0, 10, 10)])
        .end(10, 0);
    p.write(&d).unwrap();
    let (exp, model) = open(&d);
    let e = GlobalMerge::new(&model, &exp, MergeOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("no trace"), "{e}");
}

/// Acquire, release and the stream events go through the merge (they were dropped before the
/// critical path needed them); a wait in ticks becomes ns by the process's clock.
#[test]
fn sync_and_stream_events_are_in_the_merged_stream() {
    let d = tmp("sync-stream");
    let mut p = SynthProcess::new("h", 10, &["app"]);
    p.functions(&[(1, "main"), (2, "worker")])
        .thread(0, 10, "main", 0)
        .thread(1, 11, "worker", 0);
    let mut m = EventEncoder::new(0);
    m.enter(1, 0)
        .release(3, 0, 10)
        .stream_send(0xabc, 100, 100, 20)
        .exit(1, 50);
    p.chunk(0, &m);
    let mut w = EventEncoder::new(0);
    w.enter(2, 5)
        .acquire(3, 0, 7, 12)
        .stream_recv(0xabc, 60, 60, 30)
        .exit(2, 40);
    p.chunk(1, &w);
    p.end(100, 0);
    p.write(&d).unwrap();
    let (got, _) = lines(&d, MergeOptions::default());
    assert_eq!(
        got,
        [
            "0 10.0 enter main",
            "5 10.1 enter worker",
            "10 10.0 release 3",
            "12 10.1 acquire 3 waited 7",
            "20 10.0 ssend 100",
            "30 10.1 srecv 60",
            "40 10.1 exit worker",
            "50 10.0 exit main",
        ]
    );
}
