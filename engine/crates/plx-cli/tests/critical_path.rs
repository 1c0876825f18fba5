//! `plx critical-path` on synthetic experiments: the text, CSV and JSON outputs, --path,
//! --top, --phase, and its errors.

mod fixtures;

use std::path::Path;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth::SynthProcess;
use plx_format::{EventEncoder, RegionKind};

/// A client (app A) sends a request over a stream to a server (app B) that serves it 1 ms
/// and replies; the client prepares and finishes 1 ms each; the server warms up 5 ms first.
fn session(d: &Path) {
    std::fs::write(d.join("session.txt"), "app A client\napp B server\n").unwrap();
    let proc_ = |pid: u32, exe: &str, f: [&str; 2]| {
        let mut p = SynthProcess::new("host", pid, &[exe]);
        p.functions(&[(1, "main"), (2, f[0]), (3, f[1])])
            .region(8, RegionKind::Socket, "send")
            .region(9, RegionKind::Socket, "recv")
            .thread(0, pid, "main", 0);
        p
    };
    let mut a = proc_(100, "/bin/client", ["prepare", "finish"]);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 0)
        .exit(2, 1_000_000)
        .enter(8, 1_000_000)
        .stream_send(1, 100, 100, 1_000_000)
        .exit(8, 1_000_050)
        .enter(9, 1_000_050)
        .stream_recv(2, 50, 50, 6_000_300)
        .exit(9, 6_000_300)
        .enter(3, 6_000_300)
        .exit(3, 7_000_300)
        .exit(1, 7_000_300);
    a.chunk(0, &e).end(7_000_300, 0);
    a.write(&d.join("client")).unwrap();
    let mut b = proc_(200, "/bin/server", ["warmup", "serve"]);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 0)
        .exit(2, 5_000_000)
        .enter(9, 5_000_000)
        .stream_recv(1, 100, 100, 5_000_100)
        .exit(9, 5_000_100)
        .enter(3, 5_000_100)
        .exit(3, 6_000_100)
        .enter(8, 6_000_100)
        .stream_send(2, 50, 50, 6_000_100)
        .exit(8, 6_000_150)
        .exit(1, 6_000_200);
    b.chunk(0, &e).end(6_000_200, 0);
    b.write(&d.join("server")).unwrap();
}

fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn inter_application_text_csv_and_json() {
    let d = tmp("cp-session");
    session(&d);
    let dir = d.to_str().unwrap();
    let text = ok(&[
        "critical-path",
        dir,
        "--app",
        "A",
        "--mode",
        "inter",
        "--level",
        "process",
    ]);
    let want = "\
Process-level Inter-Application Critical Path (A)
item                     time s    %time
TOTAL LENGTH           0.003000
CPU: A:100             0.002000    66.66
CPU: B:200             0.001000    33.33
Msg: B:200->A:100      0.000000     0.01
Msg: A:100->B:200      0.000000     0.00
";
    assert_eq!(text, want);

    let csv = ok(&[
        "critical-path",
        dir,
        "--app",
        "A",
        "--mode",
        "inter",
        "--format",
        "csv",
        "--top",
        "2",
    ]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            "level,kind,name,location,time_s,percent",
            "procedure,total,TOTAL LENGTH,ALL,0.003000300,100.00",
            "procedure,cpu,finish,A:100.0,0.001000000,33.33",
            "procedure,cpu,prepare,A:100.0,0.001000000,33.33",
        ]
    );

    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "critical-path",
        dir,
        "--app",
        "A",
        "--format",
        "json",
        "--path",
    ]))
    .unwrap();
    assert_eq!(json["mode"], "intra");
    assert_eq!(json["app"], "A");
    // the wait for B's reply is not counted: only its last 200 ns in recv
    assert_eq!(json["total_length_s"], 0.00200025);
    let items = json["items"].as_array().unwrap();
    let recv = items.iter().find(|i| i["name"] == "recv").unwrap();
    assert_eq!(recv["time_s"], 0.0000002);
    let path = json["path"].as_array().unwrap();
    assert!(path.iter().all(|s| s["kind"] == "cpu"), "{path:?}");

    // global, machine level: one host, all the time
    let g = ok(&[
        "critical-path",
        dir,
        "--level",
        "machine",
        "--format",
        "csv",
    ]);
    assert!(
        g.contains("machine,total,TOTAL LENGTH,ALL,0.007000300,100.00\n"),
        "{g}"
    );
    assert!(g.contains("machine,cpu,CPU: host,host,0.007000"), "{g}");

    // the path as CSV
    let p = ok(&[
        "critical-path",
        dir,
        "--app",
        "A",
        "--mode",
        "inter",
        "--path",
        "--format",
        "csv",
    ]);
    let rows: Vec<&str> = p.lines().collect();
    assert_eq!(rows[0], "kind,location,from,start_s,end_s,time_s,what");
    assert_eq!(
        rows[2],
        "msg,B:200.0,A:100.0,0.005000000,0.005000100,0.000000100,stream"
    );
}

#[test]
fn a_phase_interval_limits_the_path() {
    let d = tmp("cp-phase");
    session(&d);
    let dir = d.to_str().unwrap();
    let csv = ok(&[
        "critical-path",
        dir,
        "--app",
        "B",
        "--phase",
        "0.001:0.002",
        "--format",
        "csv",
    ]);
    assert!(
        csv.contains("procedure,cpu,warmup,B:200.0,0.001000000,100.00"),
        "{csv}"
    );
}

#[test]
fn errors_are_clear() {
    let d = tmp("cp-errors");
    session(&d);
    let dir = d.to_str().unwrap();
    let o = plx(&["critical-path", dir, "--mode", "inter"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("--mode inter needs --app NAME in a session of several applications (A, B)"),
        "{}",
        stderr(&o)
    );
    let o = plx(&["critical-path", dir, "--app", "C"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no application named \"C\": the session has A, B"),
        "{}",
        stderr(&o)
    );
    let o = plx(&["critical-path", dir, "--level", "loop"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid value 'loop' for '--level"));

    // a profile without a trace
    let p = tmp("cp-no-trace");
    let mut s = SynthProcess::new("host", 7, &["/bin/x"]);
    s.functions(&[(1, "main")])
        .thread(0, 7, "main", 0)
        .profile(0, 100, 50, &[(None, 1, 1, 0, 100, 100)])
        .end(100, 0);
    s.write(&p).unwrap();
    let o = plx(&["critical-path", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("rerun with `plx run --trace`"),
        "{}",
        stderr(&o)
    );
}
