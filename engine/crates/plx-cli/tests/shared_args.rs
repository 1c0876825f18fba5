//! The flags every reading command shares (src/args.rs, docs/commands/README.md): `-o FILE`
//! on every table command, `--format json|csv` on `plx info` and `plx hierarchy`, the one
//! `--phase` parser of the charts, the `--by` words, on a synthetic experiment.

mod fixtures;

use std::path::Path;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth::SynthProcess;
use plx_format::EventEncoder;

const MS: u64 = 1_000_000;

/// One traced process, pid 300 on node1: thread 0 `main` 0..20 ms calling `work` at 2..8 ms;
/// thread 1 `helper` 5..15 ms.
fn traced(exp: &Path) {
    let mut p = SynthProcess::new("node1", 300, &["./prog", "a b"]);
    p.functions(&[(2, "main"), (3, "work"), (4, "helper")])
        .thread(0, 300, "main", 0)
        .thread(1, 301, "helper", 5 * MS);
    let mut main = EventEncoder::new(0);
    main.enter(2, 0)
        .enter(3, 2 * MS)
        .exit(3, 8 * MS)
        .exit(2, 20 * MS);
    p.chunk(0, &main);
    let mut helper = EventEncoder::new(5 * MS);
    helper.enter(4, 5 * MS).exit(4, 15 * MS);
    p.chunk(1, &helper);
    p.profile(0, 20 * MS, 20 * MS, &[])
        .profile(1, 15 * MS, 10 * MS, &[]);
    p.end(20 * MS, 0);
    p.write(exp).unwrap();
}

fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn info_prints_its_threads_as_csv_and_json() {
    let d = tmp("shared-info");
    traced(&d);
    let dir = d.display().to_string();
    let csv = ok(&["info", &dir, "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "host,pid,application,rank,thread,tid,name,cpu_s,wall_s,trace_events,lost_events,profile,\
         samples,samples_stamped,samples_lost"
    );
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[1].starts_with("node1,300,,,0,300,main,"), "{csv}");
    assert!(rows[2].starts_with("node1,300,,,1,301,helper,"), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["info", &dir, "--format", "json"]))
        .expect("plx info --format json is JSON");
    assert_eq!(json["process_images"], 1);
    assert_eq!(json["threads"], 2);
    let p = &json["processes"][0];
    assert_eq!(p["pid"], "300");
    assert_eq!(p["host"], "node1");
    assert_eq!(p["argv"], serde_json::json!(["./prog", "a b"]));
    assert_eq!(p["command_line"], "./prog 'a b'");
    assert_eq!(p["ended"], "exited with status 0");
    assert_eq!(p["threads"][1]["name"], "helper");
    assert_eq!(p["threads"][1]["tid"], 301);
    // not sampled, not an MPI rank: no samples, no skipped clock exchange; empty in the CSV
    assert_eq!(p["threads"][0]["samples"], serde_json::Value::Null);
    assert_eq!(p["clock_sync_skipped"], serde_json::Value::Null);
    assert!(rows[1].ends_with(",,"), "{csv}");
    // the text says the same
    let text = ok(&["info", &dir]);
    assert!(text.contains("  argv        ./prog 'a b'\n"), "{text}");
    assert!(
        text.contains("  ended       exited with status 0\n"),
        "{text}"
    );
}

#[test]
fn hierarchy_prints_csv() {
    let d = tmp("shared-hierarchy");
    traced(&d);
    let dir = d.display().to_string();
    let csv = ok(&["hierarchy", &dir, "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "hierarchy,depth,name,aliases");
    // the text's tree, a row per node in the same order
    let text = ok(&["hierarchy", &dir]);
    let names: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.trim_start().to_string())
        .collect();
    assert_eq!(rows.len() - 1, names.len(), "{csv}\n{text}");
    assert!(rows.contains(&"Machine,1,node1,"), "{csv}");
    assert!(rows.contains(&"Machine,3,300.1,helper;1;helper#1"), "{csv}");
}

/// `-o FILE` writes what standard output would get, on every table command.
#[test]
fn every_table_command_writes_to_o_file() {
    let d = tmp("shared-out");
    traced(&d);
    let dir = d.display().to_string();
    for args in [
        &["report", &dir][..],
        &["info", &dir, "--format", "json"][..],
        &["hierarchy", &dir, "--format", "csv"][..],
        &["query", &dir, "--metric", "calls"][..],
        &["critical-path", &dir, "--format", "csv"][..],
        &["compare", &dir, &dir][..],
        &["display", &dir, "--kind", "utilization"][..],
        &["histogram", &dir, "--metric", "compute", "--bins", "4"][..],
    ] {
        let want = ok(args);
        let file = d.join("out.txt");
        let _ = std::fs::remove_file(&file);
        let mut with_o: Vec<&str> = args.to_vec();
        let f = file.display().to_string();
        with_o.extend(["-o", &f]);
        assert_eq!(ok(&with_o), "", "{args:?}: standard output stays empty");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), want, "{args:?}");
    }
}

/// `--phase` is one parser in every command: the same message for the same bad value, from
/// the charts too (they parsed it by hand and said `plx: --phase: ...`).
#[test]
fn phase_is_parsed_once_for_every_command() {
    let d = tmp("shared-phase");
    traced(&d);
    let dir = d.display().to_string();
    let mut messages = Vec::new();
    for cmd in [
        &["report"][..],
        &["display", "--kind", "utilization"][..],
        &["histogram", "--metric", "compute"][..],
    ] {
        let mut a = cmd.to_vec();
        a.extend([dir.as_str(), "--phase", "0.5:0.1"]);
        let o = plx(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let e = stderr(&o);
        assert!(
            e.contains("invalid value '0.5:0.1' for '--phase <NAME|START:END>'"),
            "{a:?}: {e}"
        );
        messages.push(e.lines().next().unwrap().to_string());
    }
    assert!(messages.windows(2).all(|w| w[0] == w[1]), "{messages:?}");
    // and a good window is a window in the charts as in report: 5..15 ms in 2 bins, both
    // threads computing all of it
    let out = ok(&[
        "histogram",
        &dir,
        "--metric",
        "compute",
        "--bins",
        "2",
        "--phase",
        "0.005:0.015",
        "--format",
        "csv",
    ]);
    let rows: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1)
        .collect();
    assert_eq!(
        rows,
        [
            "total,0,0.005000000,0.010000000,2",
            "total,1,0.010000000,0.015000000,2"
        ],
        "{out}"
    );
}

/// `--by` words: `process` and `rank` are one for report and comm, `thread` and `location`
/// one for histogram.
#[test]
fn by_words_mean_the_same_in_every_command() {
    let d = tmp("shared-by");
    traced(&d);
    let dir = d.display().to_string();
    assert_eq!(
        ok(&["report", &dir, "--by", "rank", "--format", "csv"]),
        ok(&["report", &dir, "--by", "process", "--format", "csv"])
    );
    let h = |by: &str| {
        ok(&[
            "histogram",
            &dir,
            "--metric",
            "compute",
            "--bins",
            "2",
            "--by",
            by,
            "--format",
            "csv",
        ])
    };
    assert_eq!(h("location"), h("thread"));
    assert_eq!(h("thread").lines().count(), 1 + 2 * 2, "{}", h("thread"));
}

/// `plx query --focus machine=` takes a location in any form the commands print (one parser,
/// plx_analysis::location_name): `300.1` (histogram, display), `node1:prog[300.1]` (the
/// critical path's form before it printed `300.1`), the same as the Machine path of thread 1.
#[test]
fn query_focus_takes_a_location_in_every_printed_form() {
    let d = tmp("shared-location");
    traced(&d);
    let dir = d.display().to_string();
    let calls = |focus: &str| {
        let out = ok(&[
            "query", &dir, "--metric", "calls", "--focus", focus, "--format", "csv",
        ]);
        out.lines()
            .nth(1)
            .unwrap()
            .rsplit(',')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(calls("machine=/node1/300/300.1"), "1");
    assert_eq!(calls("machine=/node1/300/main#0"), "2");
    for name in ["300.1", "node1:prog[300.1]", "rank 300 thread 1"] {
        assert_eq!(calls(&format!("machine={name}")), "1", "{name}");
    }
    assert_eq!(calls("machine=300.0"), "2");
    assert_eq!(calls("machine=300"), "3");
    let o = plx(&[
        "query",
        &dir,
        "--metric",
        "calls",
        "--focus",
        "machine=301.0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("focus machine=301.0: no location 301.0 in the experiment"),
        "{}",
        stderr(&o)
    );
}

/// The critical path names locations in the same form as the other commands: `300.1`.
#[test]
fn critical_path_prints_the_canonical_location_name() {
    let d = tmp("shared-critpath");
    traced(&d);
    let dir = d.display().to_string();
    let csv = ok(&[
        "critical-path",
        &dir,
        "--level",
        "thread",
        "--format",
        "csv",
    ]);
    assert!(
        csv.lines()
            .any(|l| l.starts_with("thread,cpu,CPU: 300.0,300.0,")),
        "{csv}"
    );
}
