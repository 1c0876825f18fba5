//! One window, one set of messages: for the same phase every command counts the messages sent
//! inside it (docs/phases.md), whichever side of the window they were received on.

mod fixtures;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth_mpi::{MpiWorld, Msg};

fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Two ranks, six messages (ns, one tag each) around the window 10..20 us: three are sent inside
/// it (B received inside, C after, F inside), A is received inside but sent before, D spans
/// the window, E is sent and received after.
fn crossing(dir: &std::path::Path) {
    let mut w = MpiWorld::new(2);
    w.trace = true;
    for (tag, from, to, bytes, send, recv) in [
        (1, 0, 1, 100, 2_000, 30_000),  // D
        (2, 0, 1, 200, 5_000, 12_000),  // A
        (3, 0, 1, 300, 11_000, 13_000), // B
        (4, 1, 0, 400, 15_000, 25_000), // C
        (5, 0, 1, 500, 18_000, 19_000), // F
        (6, 1, 0, 600, 22_000, 24_000), // E
    ] {
        w.message(&Msg::new((from, 0), (to, 0), bytes, send, recv).tag(tag));
    }
    w.write(dir).unwrap();
}

#[test]
fn every_command_counts_the_messages_sent_in_the_window() {
    counts_the_messages_sent_in("--phase");
}

#[test]
fn every_command_counts_the_messages_sent_in_a_window_flag() {
    counts_the_messages_sent_in("--window");
}

/// The same window given as `flag START:END` (`--phase` or `--window`).
fn counts_the_messages_sent_in(flag: &str) {
    let d = tmp(&format!("window-messages{flag}"));
    crossing(&d);
    let dir = d.to_str().unwrap();
    // the window is relative to the first traced event: find it from the whole queue curve
    let queue = ok(&["display", dir, "--kind", "queue", "--format", "csv"]);
    assert!(
        queue.starts_with("time_s,length\n0.000000000,0\n"),
        "{queue}"
    );
    let first_send_s: f64 = queue
        .lines()
        .nth(2)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let origin_ns = 2_000.0 - first_send_s * 1e9;
    let phase = format!(
        "{:.9}:{:.9}",
        (10_000.0 - origin_ns) / 1e9,
        (20_000.0 - origin_ns) / 1e9
    );
    let window = [flag, phase.as_str()];

    // plx comm: the matrix
    let comm = ok(&[&["comm", dir, "--format", "csv"][..], &window].concat());
    assert_eq!(
        comm,
        "sender,receiver,messages,bytes\n0,1,2,800\n1,0,1,400\n"
    );
    // the space-time diagram: B, C, F (C's line ends after the window)
    let st = ok(&[
        &["display", dir, "--kind", "spacetime", "--format", "csv"][..],
        &window,
    ]
    .concat());
    let rows: Vec<&str> = st.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{st}");
    let bytes: Vec<&str> = rows.iter().map(|r| r.rsplit(',').next().unwrap()).collect();
    assert_eq!(bytes, ["300", "400", "500"], "{st}");
    let text = ok(&[&["display", dir, "--kind", "spacetime"][..], &window].concat());
    assert!(text.contains("\n3 matched messages\n"), "{text}");
    // the queue display's header
    let q = ok(&[&["display", dir, "--kind", "queue"][..], &window].concat());
    assert!(q.contains("\n3 messages sent, 0 never received; "), "{q}");
    // plx report's messages
    let r: serde_json::Value =
        serde_json::from_str(&ok(
            &[&["report", dir, "--format", "json"][..], &window].concat()
        ))
        .unwrap();
    let sent: u64 = r["mpi"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(sent, 3, "{}", r["mpi"]["messages"]);
    // plx histogram's messages over the window (by send time)
    let h = ok(&[
        &[
            "histogram",
            dir,
            "--metric",
            "messages",
            "--bins",
            "4",
            "--format",
            "csv",
        ][..],
        &window,
    ]
    .concat());
    let total: f64 = h
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some("total"))
        .map(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(total, 3.0, "{h}");
    // plx compare's Messages row
    let c = ok(&[&["compare", dir, "--format", "csv"][..], &window].concat());
    assert!(
        c.lines()
            .any(|l| l.starts_with("Messages,") && l.ends_with(",3")),
        "{c}"
    );
    assert!(
        c.lines()
            .any(|l| l.starts_with("Bytes,") && l.ends_with(",1200")),
        "{c}"
    );
}
