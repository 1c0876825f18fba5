//! A message received before its send (two ranks whose clocks contradict each other: each
//! receives the other's message before sending its own, so the clock repair can place only one
//! of the two receives after its send): the server counts it in the meta and in every window
//! holding its send, gives its line back from the send, and the page draws it flagged
//! (`tests/view/backward.mjs` in Debian's headless Chromium, when it is installed).

use std::path::{Path, PathBuf};
use std::process::Command;

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_view::api::Viewer;
use plx_view::schema::{Meta, WindowAnswer};
use plx_view::server::{handle, Server, ServerOptions};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// Ranks 0 and 1 each receive at 1,000 ns the message the other sends at 3,000 ns (8 and 16
/// bytes), then 5 messages from rank 0 to rank 1 sent at 10,000·k ns, received 500 ns later.
/// The repair lets rank 0's receive go first (it stays at 1,000), places rank 1's after rank
/// 0's send (at 3,000 + the shortest latency, 500) and moves every later event of rank 1 by
/// 2,500 ns: rank 1's send comes at 5,500, 4,500 ns after rank 0 received it.
fn experiment(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plx-view-backward-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.message(&Msg::new((1, 0), (0, 0), 8, 3_000, 1_000).durations(100, 100));
    w.message(&Msg::new((0, 0), (1, 0), 16, 3_000, 1_000).durations(100, 100));
    for k in 1..=5u64 {
        w.message(&Msg::new((0, 0), (1, 0), 32, 10_000 * k, 10_000 * k + 500).durations(100, 200));
    }
    w.write(&d).unwrap();
    d
}

fn window(v: &Viewer, query: &str) -> WindowAnswer {
    let a = handle(
        v,
        TOKEN,
        "GET",
        &format!("/api/window?token={TOKEN}&{query}"),
    );
    assert_eq!(a.status, 200);
    serde_json::from_slice(&a.body.bytes()).unwrap()
}

#[test]
fn a_message_received_before_its_send_is_counted_in_the_meta_and_each_window_of_its_send() {
    let d = experiment("counts");
    let v = Viewer::open(&d, None).unwrap();
    let meta: Meta = serde_json::from_value(serde_json::to_value(v.meta()).unwrap()).unwrap();
    assert_eq!((meta.messages, meta.messages_backward), (7, 1));
    let t = |ns: i64| ns - v.index.origin;
    let back: Vec<_> = v
        .index
        .messages
        .iter()
        .filter(|m| m.recv.is_some_and(|r| r < m.send))
        .collect();
    assert_eq!(back.len(), 1);
    let (send, recv) = (t(back[0].send), t(back[0].recv.unwrap()));
    assert_eq!(send - recv, 4_500, "the clocks disagree by 4.5 µs");
    // the whole run: 7 lines, one of them back from its send
    let a = window(&v, "t0=0&t1=100000&width=500&max=5000");
    assert_eq!((a.messages.total, a.messages.backward), (7, 1));
    let drawn_back: Vec<_> = a.messages.lines.iter().filter(|l| l.1 < l.0).collect();
    assert_eq!(drawn_back.len(), 1);
    assert_eq!((drawn_back[0].0, drawn_back[0].1), (send, recv));
    // bundled (max 0): still counted
    let a = window(&v, "t0=0&t1=100000&width=500&max=0");
    assert_eq!((a.messages.total, a.messages.backward), (7, 1));
    // a window holding its receive but not its send does not hold it; one holding the send does
    let a = window(&v, &format!("t0={}&t1={}&width=100", recv - 10, send - 1));
    assert_eq!(a.messages.backward, 0);
    let a = window(&v, &format!("t0={}&t1={}&width=100", send, send + 1));
    assert_eq!(a.messages.backward, 1);
    let _ = std::fs::remove_dir_all(&d);
}

const CHROMIUM: &str = "/usr/bin/chromium";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Fails under CI (`CI` set), else says why it is skipped: as the e2e tests' `require`.
fn require(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "{what} is needed");
        eprintln!("skipped: {what} is not installed");
    }
    ok
}

#[test]
fn the_page_draws_a_message_received_before_its_send_flagged() {
    let playwright = root().join("viewer/node_modules/playwright-core");
    let node = Command::new("node").arg("--version").output().is_ok();
    if !require(Path::new(CHROMIUM).exists(), "Chromium (/usr/bin/chromium)")
        || !require(node, "Node.js")
        || !require(playwright.is_dir(), "playwright-core (make viewer)")
        || !require(
            plx_view::server::bundle().is_some(),
            "the viewer's bundle (make viewer)",
        )
    {
        return;
    }
    let d = experiment("page");
    let server = Server::bind(&ServerOptions {
        bind: "127.0.0.1".to_string(),
        port: 0,
    })
    .unwrap();
    let url = server.url();
    let dir = d.clone();
    std::thread::spawn(move || {
        let v = Viewer::open(&dir, None).unwrap();
        server.serve(&v);
    });
    let out = d.join("shots");
    std::fs::create_dir_all(&out).unwrap();
    let p = Command::new("node")
        .arg(root().join("tests/view/backward.mjs"))
        .args([url.as_str(), CHROMIUM])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&p.stdout);
    assert!(
        p.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&p.stderr)
    );
    let page: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    assert_eq!(page["errors"], serde_json::json!([]), "{page}");
    // the whole run: 7 lines, 1 flagged (the server's count), the legend saying so
    let full = &page["full"];
    assert_eq!(full["lines"], "7", "{page}");
    assert_eq!(full["backward"], "1", "{page}");
    assert_eq!(full["backwardDrawn"], "1", "{page}");
    assert_eq!(full["messagesDrawn"], "7", "{page}");
    assert_eq!(full["legend"], " 1 received before their send", "{page}");
    assert_eq!(full["legendShown"], true, "{page}");
    assert_eq!(page["server_backward"], 1);
    assert_eq!(
        page["tooltip"],
        "1 message received before its send: clocks disagree by 4.500 µs · 8 B: 1 main#0 → 0 main#0",
        "{page}"
    );
    // a window after it: none flagged, no legend
    assert_eq!(page["after"]["backward"], "0", "{page}");
    assert_eq!(page["after"]["backwardDrawn"], "0", "{page}");
    assert_eq!(page["after"]["legendShown"], false, "{page}");
    // a URL giving the window and the selection backwards opens them in order
    assert_eq!(page["restored"]["t0"], "1000", "{page}");
    assert_eq!(page["restored"]["t1"], "30000", "{page}");
    assert_eq!(page["restored"]["selection"], "1000,30000", "{page}");
    // sent in [1, 30) µs: rank 0's at 3 µs, rank 1's at 5.5 µs, rank 0's at 10 and 20 µs
    assert_eq!(page["restored"]["stats"], "4", "{page}");
    let _ = std::fs::remove_dir_all(&d);
}
