//! `plx comm`, and the MPI parts of `plx report` and `plx info`, on synthetic MPI experiments
//! with known communication: exact CSV rows, errors, what is left out and warned about.

mod fixtures;
use fixtures::{plx, stderr, stdout, tmp};

use std::path::Path;

use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{ClockOffset, OffsetWhen, RegionKind, NONE_U32};

/// `plx ARGS` that must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// A 2-rank ping-pong of `n` iterations of 8 bytes each way (send ops 1 us, receive ops 4 us),
/// the `mpirun` that launched it (not instrumented), pids not in rank order.
fn ping_pong(d: &Path, n: u64, trace: bool) {
    let mut w = MpiWorld::new(2);
    w.trace = trace;
    w.ranks[0].pid = 501;
    w.ranks[1].pid = 500;
    for i in 0..n {
        let t = 100_000 + i * 100_000;
        w.message(&Msg::new((0, 0), (1, 0), 8, t, t + 10_000).durations(1_000, 4_000));
        w.message(&Msg::new((1, 0), (0, 0), 8, t + 20_000, t + 30_000).durations(1_000, 4_000));
    }
    w.write(d).unwrap();
    let mut m = SynthProcess::new("node1", 499, &["mpirun", "-np", "2", "./app"]);
    m.region(1, RegionKind::Runtime, "plx_symbols")
        .thread(0, 499, "main", 0)
        .profile(0, 50_000, 100, &[(None, 1, 2, 0, 300, 300)])
        .end(50_000, 0);
    m.write(d).unwrap();
}

/// 4 ranks in a ring, 3 rounds of 1 KiB with tag 7, and an allreduce.
fn ring(d: &Path, trace: bool) {
    let mut w = MpiWorld::new(4);
    w.trace = trace;
    for k in 0..3u64 {
        for r in 0..4u32 {
            let t = 10_000 + k * 10_000;
            w.message(&Msg::new((r, 0), ((r + 1) % 4, 0), 1024, t, t + 3_000).tag(7));
        }
    }
    for r in 0..4 {
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, 50_000, 60_000);
    }
    w.write(d).unwrap();
}

#[test]
fn comm_csv_ping_pong_and_ring_exact_rows() {
    let d = tmp("csv-pingpong");
    ping_pong(&d, 4, false);
    assert_eq!(
        ok(&["comm", d.to_str().unwrap(), "--format", "csv"]),
        "sender,receiver,messages,bytes\n0,1,4,32\n1,0,4,32\n"
    );
    let d = tmp("csv-ring");
    ring(&d, false);
    // the allreduce is no point-to-point message
    assert_eq!(
        ok(&["comm", d.to_str().unwrap(), "--format", "csv"]),
        "sender,receiver,messages,bytes\n0,1,3,3072\n1,2,3,3072\n2,3,3,3072\n3,0,3,3072\n"
    );
}

#[test]
fn comm_text_has_two_matrices_with_totals() {
    let d = tmp("text");
    ring(&d, false);
    let out = ok(&["comm", d.to_str().unwrap()]);
    let expected = "\
messages (rows: sender, columns: receiver)
sender\\receiver      0      1      2      3  total
0                    0      3      0      0      3
1                    0      0      3      0      3
2                    0      0      0      3      3
3                    3      0      0      0      3
total                3      3      3      3     12

bytes (rows: sender, columns: receiver)
sender\\receiver         0         1         2         3     total
0                       0   3.0 KiB         0         0   3.0 KiB
1                       0         0   3.0 KiB         0   3.0 KiB
2                       0         0         0   3.0 KiB   3.0 KiB
3                 3.0 KiB         0         0         0   3.0 KiB
total             3.0 KiB   3.0 KiB   3.0 KiB   3.0 KiB  12.0 KiB
";
    assert!(out.contains(expected), "{out}");
    assert!(out.starts_with(&format!(
        "communication matrix of {}: 4 ranks, 12 point-to-point messages, 12.0 KiB",
        d.display()
    )));
}

#[test]
fn comm_by_thread_uses_matched_trace_messages() {
    let d = tmp("by-thread");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.message(&Msg::new((0, 1), (1, 2), 100, 1_000, 2_000));
    w.message(&Msg::new((0, 1), (1, 2), 300, 3_000, 4_000));
    w.message(&Msg::new((0, 0), (1, 0), 50, 5_000, 6_000));
    w.message(&Msg::new((1, 2), (0, 0), 7, 7_000, 8_000));
    w.write(&d).unwrap();
    let dir = d.to_str().unwrap();
    assert_eq!(
        ok(&["comm", dir, "--by", "thread", "--format", "csv"]),
        "sender,receiver,messages,bytes\n0.0,1.0,1,50\n0.1,1.2,2,400\n1.2,0.0,1,7\n"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["comm", dir, "--by", "thread", "--format", "json"])).unwrap();
    assert_eq!(v["by"], "thread");
    assert_eq!(v["source"], "trace");
    assert_eq!(
        v["locations"],
        serde_json::json!(["0.0", "0.1", "1.0", "1.2"])
    );
    assert_eq!(v["pairs"][1]["sender"], "0.1");
    assert_eq!(v["pairs"][1]["max_bytes"], 300);
    assert_eq!(v["matched"], 4);
    assert_eq!(v["unmatched"]["sends"], 0);
    let text = ok(&["comm", dir, "--by", "thread"]);
    assert!(
        text.contains("4 threads, 4 point-to-point messages"),
        "{text}"
    );
    assert!(
        text.contains("\n0.1                  0      0      0      2      2\n"),
        "{text}"
    );
}

/// Rank 0 → 1: sizes 0 … 100000 twice each, transfer 5 us + 1 ns per byte; 1 → 0: one size.
fn fit_experiment(d: &Path) {
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
    w.write(d).unwrap();
}

#[test]
fn comm_fit_recovers_latency_and_bandwidth() {
    let d = tmp("fit");
    fit_experiment(&d);
    let dir = d.to_str().unwrap();
    assert_eq!(
        ok(&["comm", dir, "--fit", "--format", "csv"]),
        "sender,receiver,messages,latency_us,bandwidth_MBps,time_per_byte_us,r2,note
0,1,10,5.000,1000.000,0.001225,1.000000,
1,0,2,-,-,0.125000,-,
"
    );
    let text = ok(&["comm", dir, "--fit"]);
    assert!(text.contains("12 matched messages"), "{text}");
    assert!(
        text.contains(
            "       0        1        10         5.000         1000.000        0.001225  1.000000"
        ),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["comm", dir, "--fit", "--format", "json"])).unwrap();
    assert_eq!(v["fit"][0]["messages"], 10);
    assert!((v["fit"][0]["latency_us"].as_f64().unwrap() - 5.0).abs() < 1e-9);
    assert!(v["fit"][1]["latency_us"].is_null());
}

#[test]
fn comm_fit_applies_clock_offsets() {
    // rank 1's clock is 2 ms behind: raw receive ticks precede the send ticks
    let d = tmp("fit-offsets");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    let skew = 2_000_000u64;
    for (k, b) in [1_000u64, 2_000, 3_000].iter().enumerate() {
        let t = 5_000_000 + k as u64 * 100_000;
        w.message(&Msg::new((0, 0), (1, 0), *b, t, t + 5_000 + b - skew));
    }
    for when in [OffsetWhen::Init, OffsetWhen::Finalize] {
        w.ranks[1].offsets.push(ClockOffset {
            when,
            local_ns: if when == OffsetWhen::Init {
                10
            } else {
                4_000_000
            },
            offset_ns: skew as i64,
            rtt_ns: 1_500,
        });
    }
    w.write(&d).unwrap();
    assert_eq!(
        ok(&["comm", d.to_str().unwrap(), "--fit", "--format", "csv"]),
        "sender,receiver,messages,latency_us,bandwidth_MBps,time_per_byte_us,r2,note
0,1,3,5.000,1000.000,0.003500,1.000000,
"
    );
    let info = ok(&["info", d.to_str().unwrap()]);
    assert!(
        info.contains("  clock offset to rank 0: +2000.000 us at init (rtt 1.500 us), +2000.000 us at finalize (rtt 1.500 us)\n"),
        "{info}"
    );
}

#[test]
fn comm_by_thread_and_fit_need_a_trace() {
    let d = tmp("needs-trace");
    ping_pong(&d, 2, false);
    for extra in [&["--by", "thread"][..], &["--fit"][..]] {
        let mut args = vec!["comm", d.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = plx(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert_eq!(
            stderr(&o),
            format!(
                "plx: {}: no trace: this needs the MPI ranks' traces; rerun with `plx run --trace`\n",
                d.display()
            )
        );
        assert_eq!(stdout(&o), "");
    }
}

#[test]
fn comm_without_mpi_says_so() {
    let d = tmp("no-mpi");
    let mut p = SynthProcess::new("node1", 7, &["app"]);
    p.functions(&[(1, "main")])
        .thread(0, 7, "main", 0)
        .profile(0, 100, 50, &[(None, 1, 1, 0, 100, 100)])
        .end(100, 0);
    p.write(&d).unwrap();
    let dir = d.to_str().unwrap();
    let o = plx(&["comm", dir]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), format!("no MPI messages in {dir}\n"));
    for extra in [&["--fit"][..], &["--by", "thread"][..]] {
        let mut args = vec!["comm", dir];
        args.extend_from_slice(extra);
        let o = plx(&args);
        assert!(o.status.success(), "{extra:?}");
        assert_eq!(stdout(&o), format!("no MPI messages in {dir}\n"));
    }
    let o = plx(&["comm", dir, "--format", "csv"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "sender,receiver,messages,bytes\n");
    assert_eq!(stderr(&o), format!("plx: no MPI messages in {dir}\n"));
}

#[test]
fn report_has_mpi_sections_by_rank() {
    let d = tmp("report");
    ping_pong(&d, 4, false);
    let dir = d.to_str().unwrap();
    let text = ok(&["report", dir]);
    assert!(text.starts_with(
        "not measured (no instrumented code): process 499 (node1) mpirun -np 2 ./app\n\n0.0 \"main\" (pid 501 on node1)\n"
    ), "{text}");
    assert!(!text.contains("plx_symbols"), "{text}");
    let rank1 = text.find("\n1.0 \"main\" (pid 500 on node1)").unwrap();
    assert!(text.find("\n0.0 \"main\" (pid 501 on node1)").unwrap() < rank1);
    // each rank: 4 sends of 1 us, 4 receives of 4 us; wall 431 and 422 us
    assert!(
        text.contains(
            "time in MPI
  location                          MPI time  % of wall
  0.0 \"main\" (pid 501 on node1)    20.000 us       4.64
  1.0 \"main\" (pid 500 on node1)    20.000 us       4.74
  all                              40.000 us       4.69

  MPI routine                   calls         time  % of MPI time
  MPI_Recv                          8    32.000 us          80.00
  MPI_Send                          8     8.000 us          20.00

messages (point-to-point, as counted by the senders; sizes in bytes)
    sender receiver   messages        bytes     min size    mean size     max size
       0.0        1          4         32 B            8          8.0            8
       1.0        0          4         32 B            8          8.0            8
"
        ),
        "{text}"
    );
    let by_process = ok(&["report", dir, "--by", "process"]);
    assert!(
        by_process.contains("  1 (pid 500 on node1)    20.000 us       4.74\n"),
        "{by_process}"
    );
    assert!(
        by_process.contains("         1        0          4         32 B"),
        "{by_process}"
    );

    let csv = ok(&["report", dir, "--format", "csv"]);
    assert!(
        csv.contains("501,0,MPI_Recv,4,0,0.000016000,0.000016000,main,node1,\n"),
        "{csv}"
    );
    assert!(
        csv.contains("all,all,MPI_Send,8,0,0.000008000,0.000008000,,,\n"),
        "{csv}"
    );
    assert!(!csv.contains("499,"), "{csv}");

    let v: serde_json::Value =
        serde_json::from_str(&ok(&["report", dir, "--format", "json"])).unwrap();
    let procs = v["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 2);
    assert_eq!(procs[0]["rank"], 0);
    assert_eq!(procs[0]["pid"], 501);
    assert_eq!(procs[0]["mpi"]["size"], 2);
    assert_eq!(procs[0]["mpi"]["library"], "synthetic MPI 1.0");
    assert_eq!(procs[0]["mpi"]["messages"][0]["routine"], "MPI_Send");
    assert_eq!(procs[0]["mpi"]["messages"][0]["peer"], 1);
    assert_eq!(procs[0]["mpi"]["messages"][0]["count"], 4);
    let t = &procs[0]["threads"][0]["mpi"];
    assert!((t["time_s"].as_f64().unwrap() - 20e-6).abs() < 1e-15);
    assert_eq!(t["routines"][0]["routine"], "MPI_Recv");
    assert_eq!(v["mpi"]["ranks"], 2);
    assert_eq!(v["mpi"]["messages"][1]["sender"], 1);
    assert_eq!(v["mpi"]["messages"][1]["sender_thread"], 0);
    assert_eq!(v["mpi"]["messages"][1]["bytes"], 32);
    assert_eq!(v["not_measured"][0]["pid"], 499);
}

#[test]
fn report_without_mpi_has_no_mpi_sections() {
    let d = tmp("report-no-mpi");
    let mut p = SynthProcess::new("node1", 7, &["app"]);
    p.functions(&[(1, "main")])
        .thread(0, 7, "main", 0)
        .profile(0, 100, 50, &[(None, 1, 1, 0, 100, 100)])
        .end(100, 0);
    p.write(&d).unwrap();
    let text = ok(&["report", d.to_str().unwrap()]);
    assert!(!text.contains("MPI"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["report", d.to_str().unwrap(), "--format", "json"])).unwrap();
    assert!(v.get("mpi").is_none());
    assert!(v["processes"][0]["mpi"].is_null());
    assert!(v["processes"][0]["rank"].is_null());
}

#[test]
fn info_shows_ranks_and_mpi_warnings() {
    let d = tmp("info");
    let mut w = MpiWorld::new(3);
    w.trace = true;
    for k in 0..4u64 {
        let t = 1_000 + k * 1_000;
        w.message(&Msg::new((0, 0), (2, 0), 64, t, t + 100));
        w.message(&Msg::new((1, 0), (0, 0), 64, t + 200, t + 300));
    }
    w.ranks[2].crashed_at = Some(2_500);
    w.write(&d).unwrap();
    let mut m = SynthProcess::new("node1", 999, &["mpirun", "-np", "3", "./app"]);
    m.thread(0, 999, "main", 0)
        .profile(0, 100, 100, &[])
        .end(100, 0);
    m.write(&d).unwrap();
    let out = ok(&["info", d.to_str().unwrap()]);
    for line in [
        "MPI: 3 rank(s) of a world of 3, 4 communicator(s), 3 rank(s) traced\n",
        "1 process(es) not measured (no instrumented code)\n",
        "messages in the traces: 6 matched, 2 sends never received, 0 receives without a send, 0 collective events\n",
        "process 0 (pid 1000 on node1)\n  rank        0 of 3 (thread level single)\n  MPI library synthetic MPI 1.0\n  communicators 2\n",
        "process 999 (pid 999 on node1): not measured (no instrumented code)\n",
        "node1.1002/process.plx: rank 2: no ProcessEnd record: the process did not finish writing\n",
        ": messages from rank 0 to rank 2: 4 sent, 2 received (rank 2 did not finish)\n",
        ": unmatched messages from rank 0 to rank 2: 2 sends were never received (rank 2 did not finish)\n",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    // the process list: ranks by rank, then the launcher
    let order: Vec<&str> = out.lines().filter(|l| l.starts_with("process ")).collect();
    assert_eq!(order.len(), 4);
    assert!(order[2].starts_with("process 2 (pid 1002 on node1)"));
    assert!(order[3].starts_with("process 999"));
    // and plx comm by rank warns about the mismatch too
    let o = plx(&["comm", d.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "sender,receiver,messages,bytes\n0,2,4,256\n1,0,4,256\n"
    );
    assert!(stderr(&o).contains("messages from rank 0 to rank 2: 4 sent, 2 received"));
}

#[test]
fn comm_by_thread_with_a_rank_without_trace() {
    let d = tmp("half-traced");
    ping_pong(&d, 3, true);
    std::fs::remove_file(d.join("node1.500/trace.plx")).unwrap();
    let dir = d.to_str().unwrap();
    let o = plx(&["comm", dir, "--by", "thread"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("no matched MPI messages in {dir} (6 sends and receives without a partner)\n")
    );
    let err = stderr(&o);
    assert!(
        err.contains("unmatched messages from rank 0 to rank 1: 3 sends were never received (rank 1 has no trace)"),
        "{err}"
    );
    assert!(
        err.contains("unmatched messages from rank 1 to rank 0: 3 receives have no matching send (rank 1 has no trace)"),
        "{err}"
    );
    // by rank, the message statistics still give the matrix
    assert_eq!(
        ok(&["comm", dir, "--format", "csv"]),
        "sender,receiver,messages,bytes\n0,1,3,24\n1,0,3,24\n"
    );
}

#[test]
fn warnings_about_processes_not_measured_stay_in_info() {
    let d = tmp("launcher-killed");
    ping_pong(&d, 1, false);
    // an mpirun that never wrote its ProcessEnd (nor a profile)
    let mut m = SynthProcess::new("node1", 498, &["mpirun", "-np", "2", "./app"]);
    m.region(1, RegionKind::Runtime, "plx_symbols")
        .thread(0, 498, "main", 0);
    m.write(&d).unwrap();
    let dir = d.to_str().unwrap();
    let o = plx(&["report", dir]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["report", dir, "--format", "json"])).unwrap();
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
    assert_eq!(stderr(&plx(&["comm", dir])), "");
    let info = ok(&["info", dir]);
    assert!(
        info.contains("node1.498/process.plx: no ProcessEnd record"),
        "{info}"
    );
    assert!(info.contains("process 498 (pid 498 on node1): not measured (no instrumented code)\n"));
}

#[test]
fn comm_fit_says_when_it_is_meaningless() {
    // transfer times that do not grow with the size (a receiver that waits): R² near 0
    let d = tmp("fit-meaningless");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    for (k, (b, dt)) in [
        (8u64, 90_000u64),
        (1_000, 1_000),
        (2_000, 95_000),
        (3_000, 2_000),
        (4_000, 91_000),
    ]
    .iter()
    .enumerate()
    {
        let t = 5_000_000 + k as u64 * 200_000;
        w.message(&Msg::new((0, 0), (1, 0), *b, t, t + dt));
    }
    w.write(&d).unwrap();
    let dir = d.to_str().unwrap();
    let text = ok(&["comm", dir, "--fit"]);
    let note = text
        .lines()
        .find(|l| l.starts_with("note: 0 -> 1: R2 = "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        note.ends_with(
            " < 0.5: message size explains little of the transfer times (waiting or noise), so that latency and bandwidth mean nothing"
        ),
        "{note}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["comm", dir, "--fit", "--format", "json"])).unwrap();
    assert_eq!(v["fit"][0]["meaningful"], false);
    assert!(v["fit"][0]["r2"].as_f64().unwrap() < 0.5);
    // a fit that holds has no note
    let d = tmp("fit-good");
    fit_experiment(&d);
    let text = ok(&["comm", d.to_str().unwrap(), "--fit"]);
    assert!(!text.contains("note:"), "{text}");
}

#[test]
fn launcher_and_its_forked_helpers_are_one_not_measured_line() {
    // mpirun forks helpers (its daemons) that keep its command line: one line, not one each
    let d = tmp("launcher-helpers");
    ping_pong(&d, 1, false);
    for pid in [497u32, 498] {
        let mut m = SynthProcess::new("node1", pid, &["mpirun", "-np", "2", "./app"]);
        m.region(1, RegionKind::Runtime, "plx_symbols")
            .thread(0, pid, "main", 0)
            .profile(0, 50_000, 100, &[(None, 1, 2, 0, 300, 300)])
            .end(50_000, 0);
        m.write(&d).unwrap();
    }
    let text = ok(&["report", d.to_str().unwrap()]);
    assert!(
        text.starts_with(
            "not measured (no instrumented code): processes 497, 498, 499 (node1) mpirun -np 2 ./app\n\n0.0 \"main\" (pid 501 on node1)\n"
        ),
        "{text}"
    );
}

#[test]
fn comm_fit_flags_negative_latency_and_latency_above_the_smallest_messages() {
    // 0 -> 1: small messages instant, large ones slow: intercept below zero.
    // 1 -> 0: three 8-byte messages of 1 us, four large ones of 10 us + 0.1 ns per byte:
    // intercept 3.8 us, above twice the small messages' 1 us.
    let d = tmp("fit-impossible");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    let mut t = 1_000_000u64;
    for (b, dt) in [(0u64, 0u64), (1_000, 0), (10_000, 5_000), (20_000, 15_000)] {
        w.message(&Msg::new((0, 0), (1, 0), b, t, t + dt));
        t += 200_000;
    }
    let mut slow = vec![(8u64, 1_000u64); 3];
    for b in [65_536u64, 131_072, 262_144, 524_288] {
        slow.push((b, 10_000 + b / 10));
    }
    for (b, dt) in slow {
        w.message(&Msg::new((1, 0), (0, 0), b, t, t + dt));
        t += 200_000;
    }
    w.write(&d).unwrap();
    let dir = d.to_str().unwrap();
    let csv = ok(&["comm", dir, "--fit", "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[1].starts_with("0,1,4,-") && rows[1].ends_with(",negative_latency"),
        "{csv}"
    );
    assert!(
        rows[2].starts_with("1,0,7,3.797,") && rows[2].ends_with(",latency_above_smallest"),
        "{csv}"
    );
    let text = ok(&["comm", dir, "--fit"]);
    assert!(
        text.contains("note: 0 -> 1: the fitted latency -"),
        "{text}"
    );
    assert!(
        text.contains(" us is negative, which no network gives: the line does not describe these messages (waiting or noise in the transfer times)"),
        "{text}"
    );
    assert!(
        text.contains(" us is more than 2 x the median transfer time of the smallest (8 bytes) messages, 1.000 us: the line does not describe the small messages"),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["comm", dir, "--fit", "--format", "json"])).unwrap();
    assert_eq!(
        v["fit"][0]["notes"],
        serde_json::json!(["negative_latency"])
    );
    assert_eq!(v["fit"][0]["meaningful"], false);
    assert_eq!(
        v["fit"][1]["notes"],
        serde_json::json!(["latency_above_smallest"])
    );
    assert_eq!(v["fit"][1]["smallest_bytes"], 8);
    assert_eq!(v["fit"][1]["smallest_median_us"], 1.0);
}
