//! `plx compare` on synthetic runs with known numbers (1 tick = 1 ns): the metric table's exact
//! values, '-' / empty / null for what a run cannot have, the per-function differences sorted and
//! exact, sessions (one column per application, `--app`), phases, and errors.

mod fixtures;

use std::path::Path;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{NamedBy, SyncKind};

/// Two ranks: a message each way, an MPI_Barrier (rank 0 waits `barrier0` ns, rank 1 50 ns);
/// `slow` adds an MPI_Allreduce at the end, a second message of 4000 bytes instead of 2000 and,
/// on rank 0, a mutex, a pthread barrier and a spin lock.
///
/// fast: rank 0 ops Send 100..200, Recv 400..500, Barrier 600..700, end 1700; rank 1 ops Recv
/// 100..300, Send 400..450, Barrier 600..650, end 1650.
/// slow: rank 0 Barrier 600..5600, Allreduce 5700..5800, end 6800; rank 1 Allreduce
/// 5700..5750, end 6750.
fn run(dir: &Path, slow: bool) {
    let mut w = MpiWorld::new(2);
    w.message(&Msg::new((0, 0), (1, 0), 1000, 100, 300).durations(100, 200));
    let back = if slow { 4000 } else { 2000 };
    w.message(&Msg::new((1, 0), (0, 0), back, 400, 500).durations(50, 100));
    let barrier0 = if slow { 5000 } else { 100 };
    w.collective(
        (0, 0),
        "MPI_Barrier",
        0,
        u32::MAX,
        0,
        0,
        600,
        600 + barrier0,
    );
    w.collective((1, 0), "MPI_Barrier", 0, u32::MAX, 0, 0, 600, 650);
    if slow {
        w.collective((0, 0), "MPI_Allreduce", 0, u32::MAX, 8, 8, 5700, 5800);
        w.collective((1, 0), "MPI_Allreduce", 0, u32::MAX, 8, 8, 5700, 5750);
    }
    std::fs::create_dir_all(dir).unwrap();
    for rank in 0..2 {
        let mut p = w.process(rank);
        if slow && rank == 0 {
            // before the closing Calibration and ProcessEnd
            let end = p.records.split_off(p.records.len() - 2);
            p.sync_object(0, SyncKind::Mutex, NamedBy::Init, u32::MAX, 0x10)
                .sync_object(1, SyncKind::Barrier, NamedBy::Init, u32::MAX, 0x20)
                .sync_object(2, SyncKind::Spin, NamedBy::Init, u32::MAX, 0x30)
                .sync_stats(0, 0, (10, 2, 300, 500, 10))
                .sync_stats(0, 1, (4, 4, 2000, 0, 4))
                .sync_stats(0, 2, (7, 1, 70, 10, 7));
            p.records.extend(end);
        }
        p.write(dir).unwrap();
    }
}

fn runs(name: &str) -> (plx_format::test_dir::TestDir, String, String) {
    let d = tmp(name);
    let fast = d.join("fast");
    let slow = d.join("slow");
    run(&fast, false);
    run(&slow, true);
    (d, fast.display().to_string(), slow.display().to_string())
}

fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn metric_table_csv_exact_values() {
    let (_d, fast, slow) = runs("csv");
    let out = ok(&["compare", &fast, &slow, "--format", "csv", "--top", "3"]);
    let expected = "\
metric,run,value
Elapsed Time,fast,0.000001700
Elapsed Time,slow,0.000006800
CPU Time,fast,0.000001675
CPU Time,slow,0.000006775
MPI Time,fast,0.000000600
MPI Time,slow,0.000005650
Barrier Wait Time,fast,0.000000150
Barrier Wait Time,slow,0.000007050
Barriers,fast,1
Barriers,slow,3
Time Per Barrier,fast,0.000000075
Time Per Barrier,slow,0.000001175
Messages,fast,2
Messages,slow,2
Bytes,fast,3000
Bytes,slow,5000
Lock Acquisitions,fast,
Lock Acquisitions,slow,10
Lock Wait Time,fast,
Lock Wait Time,slow,0.000000300
Spin Locks,fast,
Spin Locks,slow,7
Spin Time,fast,
Spin Time,slow,0.000000070
Processes,fast,2
Processes,slow,2
Calls: main,fast,2
Calls: main,slow,2
Calls: MPI_Barrier,fast,2
Calls: MPI_Barrier,slow,2
Calls: MPI_Recv,fast,2
Calls: MPI_Recv,slow,2
";
    assert_eq!(out, expected);
}

#[test]
fn metric_table_text_shows_dash_for_missing_rows() {
    let (_d, fast, slow) = runs("text");
    let out = ok(&["compare", &fast, &slow, "--top", "1"]);
    let line = |m: &str| -> Vec<String> {
        let l = out
            .lines()
            .find(|l| l.starts_with(m))
            .unwrap_or_else(|| panic!("no row {m} in\n{out}"));
        l[m.len()..]
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    assert!(out.starts_with("metric"), "{out}");
    assert_eq!(line("metric"), ["fast", "slow"]);
    assert_eq!(line("Elapsed Time"), ["1.700 us", "6.800 us"]);
    assert_eq!(line("Lock Acquisitions"), ["-", "10"]);
    assert_eq!(line("Spin Time"), ["-", "70 ns"]);
    assert_eq!(line("Time Per Barrier"), ["75 ns", "1.175 us"]);
    assert_eq!(line("Calls: main"), ["2", "2"]);
    assert!(!out.contains("Calls: MPI_Barrier"), "--top 1: {out}");
}

#[test]
fn per_function_differences_sorted_and_exact() {
    let (_d, fast, slow) = runs("functions");
    let out = ok(&["compare", &fast, &slow, "--format", "csv", "--functions"]);
    let expected = "\
function,run,inclusive_s,exclusive_s,calls,inclusive_diff_s,inclusive_ratio,kind
main,fast,0.000003350,0.000002750,2,0.000010200,4.044776119,function
main,slow,0.000013550,0.000007900,2,0.000010200,4.044776119,function
MPI_Barrier,fast,0.000000150,0.000000150,2,0.000004900,33.666666667,mpi
MPI_Barrier,slow,0.000005050,0.000005050,2,0.000004900,33.666666667,mpi
MPI_Allreduce,fast,,,,0.000000150,,mpi
MPI_Allreduce,slow,0.000000150,0.000000150,2,0.000000150,,mpi
MPI_Recv,fast,0.000000300,0.000000300,2,0.000000000,1.000000000,mpi
MPI_Recv,slow,0.000000300,0.000000300,2,0.000000000,1.000000000,mpi
MPI_Send,fast,0.000000150,0.000000150,2,0.000000000,1.000000000,mpi
MPI_Send,slow,0.000000150,0.000000150,2,0.000000000,1.000000000,mpi
";
    assert_eq!(out, expected);
    // the text lists the same order, '-' for the run without MPI_Allreduce
    let text = ok(&["compare", &fast, &slow, "--functions"]);
    let names: Vec<&str> = text
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(
        names,
        [
            "main",
            "MPI_Barrier",
            "MPI_Allreduce",
            "MPI_Recv",
            "MPI_Send"
        ],
        "{text}"
    );
    let allreduce = text
        .lines()
        .find(|l| l.ends_with(" MPI_Allreduce"))
        .unwrap();
    assert!(allreduce.trim_start().starts_with("- "), "{allreduce}");
    assert!(!text.contains("Elapsed Time"), "--functions only: {text}");
}

#[test]
fn json_has_nulls_for_missing_rows() {
    let (_d, fast, slow) = runs("json");
    let out = ok(&["compare", &fast, &slow, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = |m: &str| {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == m)
            .unwrap_or_else(|| panic!("no {m}"))
            .clone()
    };
    assert_eq!(row("Spin Locks")["values"], serde_json::json!([null, 7]));
    assert_eq!(row("Bytes")["values"], serde_json::json!([3000, 5000]));
    assert_eq!(row("Bytes")["unit"], "bytes");
    assert_eq!(doc["runs"][1]["name"], "slow");
    assert_eq!(doc["functions"][0]["function"], "main");
    assert_eq!(doc["functions"][2]["runs"][0], serde_json::Value::Null);
}

#[test]
fn a_run_without_mpi_shows_dash_in_mpi_rows() {
    let (d, fast, _) = runs("nompi");
    let plain = d.join("plain");
    let mut p = plx_format::synth::SynthProcess::new("node1", 77, &["./plain"]);
    p.functions(&[(1, "main")])
        .thread(0, 77, "main", 0)
        .profile(0, 1000, 400, &[(None, 1, 1, 0, 1000, 1000)]);
    p.end(1000, 0);
    p.write(&plain).unwrap();
    let out = ok(&["compare", &fast, plain.to_str().unwrap(), "--format", "csv"]);
    for m in [
        "MPI Time",
        "Messages",
        "Bytes",
        "Barriers",
        "Barrier Wait Time",
        "Time Per Barrier",
    ] {
        assert!(out.contains(&format!("\n{m},plain,\n")), "{m}: {out}");
    }
    assert!(out.contains("\nElapsed Time,plain,0.000001000\n"), "{out}");
    assert!(out.contains("\nCPU Time,plain,0.000000400\n"), "{out}");
}

fn session(d: &Path) -> String {
    let s = d.join("sess");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(
        s.join("session.txt"),
        "app fast ../fast live\napp slow ../slow compare\n",
    )
    .unwrap();
    s.display().to_string()
}

#[test]
fn a_session_gives_one_column_per_application() {
    let (d, fast, slow) = runs("session");
    let s = session(&d);
    let plain = ok(&["compare", &fast, &slow, "--format", "csv"]);
    let sess = ok(&["compare", &s, "--format", "csv"]);
    let renamed = sess
        .replace(",sess:fast,", ",fast,")
        .replace(",sess:slow,", ",slow,");
    assert_eq!(renamed, plain, "session columns:\n{sess}");
    let one = ok(&["compare", &s, &fast, "--app", "slow", "--format", "csv"]);
    assert!(
        one.contains("\nBytes,sess:slow,5000\nBytes,fast,3000\n"),
        "{one}"
    );
    // the same run twice: columns numbered
    let twice = ok(&["compare", &fast, &fast, "--format", "csv"]);
    assert!(
        twice.contains(&format!("\nBytes,{fast} #1,3000\nBytes,{fast} #2,3000\n")),
        "{twice}"
    );
    let o = plx(&["compare", &s, "--app", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no application named \"nosuch\": the session has fast, slow"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn phase_needs_a_trace_and_valid_text() {
    let (_d, fast, slow) = runs("phase-errors");
    let o = plx(&["compare", &fast, &slow, "--phase", "0:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fast: --phase needs the run's trace"),
        "{}",
        stderr(&o)
    );
    let o = plx(&["compare", &fast, "--phase", "x:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'x' is not a time in seconds"),
        "{}",
        stderr(&o)
    );
}

/// The same runs traced: the window 0.0000005:0.000001 (500..1000 ns after the first event)
/// holds rank 0's MPI_Barrier 600..700 (fast) / 600..1000 of 600..5600 (slow).
#[test]
fn phase_window_limits_every_run() {
    let d = tmp("phase-window");
    for (name, slow) in [("fast", false), ("slow", true)] {
        let mut w = MpiWorld::new(2);
        w.trace = true;
        w.message(&Msg::new((0, 0), (1, 0), 1000, 100, 300).durations(100, 200));
        let barrier0 = if slow { 5000 } else { 100 };
        w.collective(
            (0, 0),
            "MPI_Barrier",
            0,
            u32::MAX,
            0,
            0,
            600,
            600 + barrier0,
        );
        w.collective((1, 0), "MPI_Barrier", 0, u32::MAX, 0, 0, 600, 650);
        w.write(&d.join(name)).unwrap();
    }
    let fast = d.join("fast").display().to_string();
    let slow = d.join("slow").display().to_string();
    let out = ok(&[
        "compare",
        &fast,
        &slow,
        "--phase",
        "0.0000005:0.000001",
        "--format",
        "csv",
    ]);
    for line in [
        "Elapsed Time,fast,0.000000500",
        "Elapsed Time,slow,0.000000500",
        "CPU Time,fast,",
        "MPI Time,fast,0.000000150",
        "MPI Time,slow,0.000000450",
        "Barrier Wait Time,slow,0.000000450",
        "Barriers,slow,1",
        "Messages,fast,0",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing in\n{out}");
    }
}

/// A traced process whose phase `solve` runs `from..to` ns inside main 0..10000, with `work`
/// called once in it.
fn phased(dir: &Path, from: u64, to: u64) {
    let mut p = plx_format::synth::SynthProcess::new("node1", 10, &["./phased"]);
    p.functions(&[(2, "main"), (3, "work")])
        .region(4, plx_format::RegionKind::Phase, "solve")
        .thread(0, 10, "main", 0);
    let mut e = plx_format::EventEncoder::new(0);
    e.enter(2, 0)
        .enter(4, from)
        .enter(3, from + 10)
        .exit(3, to - 10)
        .exit(4, to)
        .exit(2, 10_000);
    p.chunk(0, &e);
    p.profile(0, 10_000, 5_000, &[]);
    p.end(10_000, 0);
    p.write(dir).unwrap();
}

#[test]
fn named_phase_is_each_runs_own_span() {
    let d = tmp("named-phase");
    phased(&d.join("one"), 1000, 3000);
    phased(&d.join("two"), 5000, 9000);
    let (one, two) = (d.join("one"), d.join("two"));
    let out = ok(&[
        "compare",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--phase",
        "solve",
        "--format",
        "csv",
        "--top",
        "1",
    ]);
    for line in [
        // the phase's window ends just after its last exit (phase_window: exit + 1 ns)
        "Elapsed Time,one,0.000002001",
        "Elapsed Time,two,0.000004001",
        "CPU Time,one,",
        "MPI Time,one,",
        "Calls: main,one,0",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing in\n{out}");
    }
    let f = ok(&[
        "compare",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--phase",
        "solve",
        "--format",
        "csv",
        "--functions",
    ]);
    assert!(
        f.contains("\nwork,one,0.000001980,0.000001980,1,0.000002000,2.010101010,function\n"),
        "{f}"
    );
    // plx report gives the phase the same meaning, and the same numbers
    let r = ok(&[
        "report",
        one.to_str().unwrap(),
        "--phase",
        "solve",
        "--format",
        "csv",
    ]);
    assert!(
        r.contains("\nall,all,work,1,0,0.000001980,0.000001980,,,\n"),
        "{r}"
    );
    assert!(r.contains("\nall,all,main,0,1,"), "{r}");
    let o = plx(&["compare", one.to_str().unwrap(), "--phase", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("one: no phase region named \"nosuch\""),
        "{}",
        stderr(&o)
    );
}

/// A process whose phase `solve` (one enter, 1000..3000 ns) calls the function `solve` `calls`
/// times, 100 ns each, inside main 0..10000.
fn phase_and_function_named_solve(dir: &Path, calls: u64) {
    let mut p = plx_format::synth::SynthProcess::new("node1", 10, &["./solver"]);
    p.functions(&[(2, "main"), (3, "solve")])
        .region(4, plx_format::RegionKind::Phase, "solve")
        .thread(0, 10, "main", 0);
    let mut e = plx_format::EventEncoder::new(0);
    e.enter(2, 0).enter(4, 1000);
    for k in 0..calls {
        e.enter(3, 1100 + k * 200).exit(3, 1200 + k * 200);
    }
    e.exit(4, 3000).exit(2, 10_000);
    p.chunk(0, &e);
    p.profile(0, 10_000, 5_000, &[]);
    p.end(10_000, 0);
    p.write(dir).unwrap();
}

#[test]
fn a_phase_and_a_function_of_the_same_name_stay_apart() {
    let d = tmp("phase-and-function");
    phase_and_function_named_solve(&d.join("one"), 3);
    phase_and_function_named_solve(&d.join("two"), 5);
    let (one, two) = (d.join("one"), d.join("two"));
    let (one, two) = (one.to_str().unwrap(), two.to_str().unwrap());
    let f = ok(&["compare", one, two, "--format", "csv", "--functions"]);
    for line in [
        "solve,one,0.000000300,0.000000300,3,0.000000200,1.666666667,function",
        "solve,two,0.000000500,0.000000500,5,0.000000200,1.666666667,function",
        "solve,one,0.000002000,0.000001700,1,0.000000000,1.000000000,phase",
        "solve,two,0.000002000,0.000001500,1,0.000000000,1.000000000,phase",
    ] {
        assert!(f.lines().any(|l| l == line), "{line} missing in\n{f}");
    }
    let m = ok(&["compare", one, two, "--format", "csv", "--top", "3"]);
    for line in [
        "Calls: solve (phase),one,1",
        "Calls: solve (phase),two,1",
        "Calls: solve,one,3",
        "Calls: solve,two,5",
    ] {
        assert!(m.lines().any(|l| l == line), "{line} missing in\n{m}");
    }
    let text = ok(&["compare", one, two, "--functions"]);
    assert!(
        text.lines().any(|l| l.ends_with("  solve (phase)")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.ends_with("  solve")), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["compare", one, two, "--format", "json"])).unwrap();
    let kinds: Vec<(&str, &str)> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["function"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .filter(|(n, _)| *n == "solve")
        .collect();
    assert_eq!(kinds, [("solve", "function"), ("solve", "phase")]);
}
