//! `plx report --phase` (profiles rebuilt from the trace for a phase's span or a window: time inside it,
//! calls begun inside it) and `--app NAME` (one application of a session) on synthetic
//! experiments with exact times (1 tick = 1 ns); their errors.

mod fixtures;

use std::path::Path;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth::SynthProcess;
use plx_format::EventEncoder;

const MS: u64 = 1_000_000;

/// A traced process: thread 0 `main` 0..25 ms calling `work` at 2..8, 10..12 and 14..20 ms;
/// thread 1 `worker` 6..30 ms.
fn traced(exp: &Path, pid: u32) {
    let mut p = SynthProcess::new("node1", pid, &["./prog"]);
    p.functions(&[(2, "main"), (3, "work"), (4, "worker")])
        .thread(0, pid, "main", 0)
        .thread(1, pid + 1, "helper", 6 * MS);
    let mut main = EventEncoder::new(0);
    main.enter(2, 0);
    for (a, b) in [(2, 8), (10, 12), (14, 20)] {
        main.enter(3, a * MS).exit(3, b * MS);
    }
    main.exit(2, 25 * MS);
    p.chunk(0, &main);
    let mut helper = EventEncoder::new(6 * MS);
    helper.enter(4, 6 * MS).exit(4, 30 * MS);
    p.chunk(1, &helper);
    // trace mode: profiles without nodes
    p.profile(0, 25 * MS, 20 * MS, &[])
        .profile(1, 30 * MS, 24 * MS, &[]);
    p.end(30 * MS, 0);
    p.write(exp).unwrap();
}

fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn window_clips_times_and_counts_calls_begun_inside() {
    let d = tmp("window");
    traced(&d, 100);
    let dir = d.display().to_string();
    // --window START:END is the same interval as --phase START:END
    for flag in ["--phase", "--window"] {
        let out = ok(&["report", &dir, flag, "0.005:0.015", "--format", "csv"]);
        // main: 5..15 ms inside, no call begun inside, 2 calls of work begun inside (10, 14);
        // work: 5..8 + 10..12 + 14..15 = 6 ms; worker: 6..15 = 9 ms, 1 call.
        let expected = "\
process,thread,function,calls,child_calls,exclusive_s,inclusive_s,thread_name,host,cpu_s
100,0,work,2,0,0.006000000,0.006000000,main,node1,
100,0,main,0,2,0.004000000,0.010000000,main,node1,
100,1,worker,1,0,0.009000000,0.009000000,helper,node1,
all,all,worker,1,0,0.009000000,0.009000000,,,
all,all,work,2,0,0.006000000,0.006000000,,,
all,all,main,0,2,0.004000000,0.010000000,,,
";
        assert_eq!(out, expected, "{flag}");
        // open ends: from the start to 0.009 s, from 0.02 s to the end
        let head = ok(&["report", &dir, flag, ":0.009", "--format", "csv"]);
        assert!(
            head.contains("\n100,0,work,1,0,0.006000000,0.006000000,"),
            "{head}"
        );
        assert!(
            head.contains("\n100,0,main,1,1,0.003000000,0.009000000,"),
            "{head}"
        );
        let tail = ok(&["report", &dir, flag, "0.02:", "--format", "csv"]);
        assert!(
            tail.contains("\n100,0,main,0,0,0.005000000,0.005000000,"),
            "{tail}"
        );
        assert!(
            tail.contains("\n100,1,worker,0,0,0.010000000,0.010000000,"),
            "{tail}"
        );
        assert!(!tail.contains(",work,"), "{tail}");
    }
}

#[test]
fn window_flag_is_the_phase_interval_in_every_command() {
    let d = tmp("window-flag");
    traced(&d, 100);
    let dir = d.display().to_string();
    // every command that reads events takes it, with the output of the same --phase interval
    for cmd in [
        &["critical-path", &dir][..],
        &["critical-path", &dir, "--format", "csv"][..],
        &["waits", &dir, "--format", "csv"][..],
        &["comm", &dir, "--by", "thread", "--format", "csv"][..],
        &["query", &dir, "--metric", "calls", "--format", "csv"][..],
    ] {
        let w = ok(&[cmd, &["--window", "0.005:0.015"][..]].concat());
        let p = ok(&[cmd, &["--phase", "0.005:0.015"][..]].concat());
        assert_eq!(w, p, "{cmd:?}");
    }
}

#[test]
fn window_errors() {
    let d = tmp("window-errors");
    traced(&d, 100);
    let dir = d.display().to_string();
    for (bad, says) in [
        (
            "solve",
            "window 'solve': give START:END in seconds from the run's start",
        ),
        ("a:1", "window 'a:1': 'a' is not a time in seconds"),
        ("2:1", "window '2:1': the end must come after the start"),
    ] {
        let o = plx(&["report", &dir, &format!("--window={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains(says), "{bad}: {}", stderr(&o));
    }
    let o = plx(&["report", &dir, "--window", "0:1", "--phase", "0:2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("'--window <START:END>' cannot be used with '--phase <NAME|START:END>'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn window_text_says_what_it_is_and_has_no_cpu_time() {
    let d = tmp("window-text");
    traced(&d, 100);
    let out = ok(&["report", d.to_str().unwrap(), "--phase", "0.005:0.015"]);
    assert!(
        out.starts_with("window from 0.005 s after the trace's first event to 0.015 s:"),
        "{out}"
    );
    assert!(out.contains("cpu time -, wall time 10.000 ms"), "{out}");
    let json = ok(&[
        "report",
        d.to_str().unwrap(),
        "--phase",
        "0.005:0.015",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["phase"], "0.005:0.015");
    assert_eq!(
        doc["processes"][0]["threads"][0]["cpu_s"],
        serde_json::Value::Null
    );
}

#[test]
fn phase_errors() {
    let d = tmp("phase-errors");
    traced(&d, 100);
    let dir = d.display().to_string();
    for (bad, says) in [
        ("a:1", "'a' is not a time in seconds"),
        ("2:1", "the end must come after the start"),
        ("-1:2", "'-1' is not a time in seconds"),
    ] {
        let o = plx(&["report", &dir, &format!("--phase={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains(says), "{bad}: {}", stderr(&o));
    }
    // a profile without a trace
    let p = tmp("phase-no-trace");
    let mut s = SynthProcess::new("node1", 5, &["./p"]);
    s.functions(&[(2, "main")]).thread(0, 5, "main", 0).profile(
        0,
        10,
        5,
        &[(None, 2, 1, 0, 10, 10)],
    );
    s.end(10, 0);
    s.write(&p).unwrap();
    let o = plx(&["report", p.to_str().unwrap(), "--phase", "0:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--phase 0:1 rebuilds the profiles from the trace, and there is none"),
        "{}",
        stderr(&o)
    );
}

/// A session of two applications: `a` (pid 100, traced) and `b` (pid 200, traced).
fn session(d: &Path) -> String {
    traced(&d.join("a"), 100);
    traced(&d.join("b"), 200);
    let s = d.join("sess");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(
        s.join("session.txt"),
        "app a ../a live\napp b ../b compare\n",
    )
    .unwrap();
    s.display().to_string()
}

#[test]
fn app_selects_one_application() {
    let d = tmp("app");
    let s = session(&d);
    let only_b = ok(&[
        "report", &s, "--app", "b", "--format", "csv", "--by", "process",
    ]);
    let procs: Vec<&str> = only_b
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert!(procs.iter().all(|p| *p == "200" || *p == "all"), "{only_b}");
    assert!(
        only_b.lines().next().unwrap().ends_with(",cpu_s,app"),
        "{only_b}"
    );
    assert!(only_b.contains("\n200,all,worker,1,0,0.024000000,0.024000000,,node1,,b\n"));
    // the window of one application counts from its own first event
    let w = ok(&[
        "report",
        &s,
        "--app",
        "b",
        "--phase",
        "0.005:0.015",
        "--format",
        "csv",
    ]);
    assert!(
        w.contains("\n200,0,work,2,0,0.006000000,0.006000000,main,node1,,b\n"),
        "{w}"
    );
    // the physical view: both, labelled by application
    let all = ok(&["report", &s]);
    assert!(all.contains("a:100.0 \"main\" (pid 100 on node1)"), "{all}");
    assert!(
        all.contains("b:200.1 \"helper\" (pid 200 on node1)"),
        "{all}"
    );
    let o = plx(&["report", &s, "--app", "c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no application named \"c\": the session has a, b"),
        "{}",
        stderr(&o)
    );
    let plain = d.join("a").display().to_string();
    let o = plx(&["report", &plain, "--app", "a"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a session"), "{}", stderr(&o));
}

#[test]
fn named_phase_is_a_span_and_needs_the_trace() {
    // --phase NAME is the phase's span of time (docs/phases.md): a profile alone has none
    let d = tmp("named");
    let mut s = SynthProcess::new("node1", 5, &["./p"]);
    s.functions(&[(2, "main"), (3, "f")])
        .region(4, plx_format::RegionKind::Phase, "solve")
        .thread(0, 5, "main", 0)
        .profile(
            0,
            100,
            50,
            &[
                (None, 2, 1, 2, 100, 40),
                (Some(0), 4, 1, 1, 50, 20),
                (Some(1), 3, 1, 0, 30, 30),
                (Some(0), 3, 1, 0, 10, 10),
            ],
        );
    s.end(100, 0);
    s.write(&d).unwrap();
    let o = plx(&["report", d.to_str().unwrap(), "--phase", "solve"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--phase solve rebuilds the profiles from the trace, and there is none: rerun with \
             `plx run --trace`"
        ),
        "{}",
        stderr(&o)
    );
    let o = plx(&["report", d.to_str().unwrap(), "--phase", "nope"]);
    assert!(
        stderr(&o).contains("no phase region named \"nope\""),
        "{}",
        stderr(&o)
    );
}

/// A traced thread holding a mutex 4..9 ms after waiting 2..4 ms, and waiting at a barrier
/// 12..20 ms: the window 0.003:0.015 holds 1 ms of the first wait (begun outside: not counted),
/// 5 ms of the hold, the barrier wait's first 3 ms (begun inside: counted).
#[test]
fn window_limits_sync_statistics() {
    use plx_format::{NamedBy, SyncKind};
    let d = tmp("window-sync");
    let mut p = SynthProcess::new("node1", 300, &["./sync"]);
    p.functions(&[(2, "main")])
        .region(3, plx_format::RegionKind::Phase, "setup")
        .thread(0, 300, "main", 0)
        .sync_object(0, SyncKind::Mutex, NamedBy::Init, u32::MAX, 0x10)
        .sync_object(1, SyncKind::Barrier, NamedBy::Init, u32::MAX, 0x20);
    let mut e = EventEncoder::new(0);
    e.enter(2, 0)
        .acquire(0, 0, 2 * MS, 4 * MS)
        .release(0, 0, 9 * MS)
        .release(1, 3, 12 * MS)
        .acquire(1, 3, 8 * MS, 20 * MS)
        .exit(2, 25 * MS);
    p.chunk(0, &e);
    p.profile(0, 25 * MS, 20 * MS, &[])
        .sync_stats(0, 0, (1, 1, 2 * MS, 5 * MS, 1))
        .sync_stats(0, 1, (1, 1, 8 * MS, 0, 1));
    p.end(25 * MS, 0);
    p.write(&d).unwrap();
    let out = ok(&[
        "report",
        d.to_str().unwrap(),
        "--sync",
        "--phase",
        "0.003:0.015",
        "--format",
        "csv",
    ]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("300,0,"))
        .map(|l| l.split(',').collect())
        .collect();
    // process,thread,object,kind,acquisitions,contended,wait_s,hold_s,releases,...
    let row = |kind: &str| {
        rows.iter()
            .find(|r| r[3] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {out}"))
            .clone()
    };
    assert_eq!(
        row("mutex")[4..9],
        ["0", "0", "0.001000000", "0.005000000", "1"],
        "{out}"
    );
    assert_eq!(
        row("barrier")[4..9],
        ["1", "1", "0.003000000", "0.000000000", "1"],
        "{out}"
    );
    // the whole run: the recorded statistics
    let all = ok(&["report", d.to_str().unwrap(), "--sync", "--format", "csv"]);
    assert!(
        all.contains(",mutex,1,1,0.002000000,0.005000000,1,"),
        "{all}"
    );
    // a phase region is a span like any window; one that never ran has none
    let o = plx(&["report", d.to_str().unwrap(), "--sync", "--phase", "setup"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the phase never ran"), "{}", stderr(&o));
}
