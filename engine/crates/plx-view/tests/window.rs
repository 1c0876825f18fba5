//! Window queries on a synthetic 2-rank trace whose answer is known by construction (1 tick =
//! 1 ns): rank 0 sends 1,000 messages, at 1000·(k+1) ns inside MPI_Send regions of 100 ns; rank 1
//! receives each 500 ns later inside MPI_Recv regions of 200 ns; both ranks run in `main`.

use std::io::{Read, Write};
use std::path::PathBuf;

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_view::api::Viewer;
use plx_view::query::{window, WindowQuery};
use plx_view::server::{handle, Server, ServerOptions};

const N: u64 = 1000;

/// An answer as the JSON the server writes.
fn js<T: serde::Serialize>(answer: T) -> serde_json::Value {
    serde_json::to_value(answer).unwrap()
}

fn experiment(name: &str) -> PathBuf {
    experiment_receiving_for(name, 200)
}

/// [`experiment`], each receive's region lasting `recv_ns` up to its return.
fn experiment_receiving_for(name: &str, recv_ns: u64) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plx-view-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut w = MpiWorld::new(2);
    w.trace = true;
    w.chunk_ops = 100;
    for k in 0..N {
        let send = 1000 * (k + 1);
        w.message(&Msg::new((0, 0), (1, 0), 8 * (k + 1), send, send + 500).durations(100, recv_ns));
    }
    w.write(&d).unwrap();
    d
}

fn q(v: &Viewer, t0: i64, t1: i64, width: u32, max: usize) -> plx_view::query::WindowAnswer {
    let o = v.index.origin;
    window(
        &v.index,
        &WindowQuery {
            t0: o + t0,
            t1: o + t1,
            width,
            max_messages: max,
        },
    )
}

#[test]
fn counts_at_each_zoom_level() {
    let d = experiment("zoom");
    let v = Viewer::open(&d, None).unwrap();
    let ix = &v.index;
    assert_eq!(ix.tracks.len(), 2);
    assert_eq!(ix.tracks[0].lanes.len(), 2, "main, then MPI_Send");
    assert_eq!(ix.tracks[0].lanes[1].len(), N as usize);
    assert_eq!(ix.tracks[1].lanes[1].len(), N as usize);
    assert_eq!(ix.tracks[0].lanes[1].start.get(0) - ix.origin, 1000);
    assert_eq!(ix.tracks[1].lanes[1].start.get(0) - ix.origin, 1300);
    assert_eq!(ix.messages.len(), N as usize);

    // 1 µs per pixel: every send region lies inside its own column
    let a = q(&v, 0, 1_024_000, 1024, 5000);
    assert_eq!(a.lanes[0][0].full.len(), 1, "main crosses every column");
    assert!(a.lanes[0][1].full.is_empty());
    assert_eq!(a.lanes[0][1].columns.len(), N as usize);
    assert!(a.lanes[0][1]
        .columns
        .iter()
        .all(|c| c.count == 1 && c.busy == 100));
    assert_eq!(a.messages.total, N);
    assert_eq!(a.messages.lines.len(), N as usize);

    // 5.12 µs per pixel (blocks, not a scan): boundaries 5120·c fall strictly inside a send
    // region for c ≡ 9 or 17 (mod 25), c < 196: 16 regions at full detail, 984 in 196 columns
    let a = q(&v, 0, 1_024_000, 200, 5000);
    let send = &a.lanes[0][1];
    assert_eq!(send.full.len(), 16);
    assert_eq!(send.columns.len(), 196);
    assert_eq!(
        send.columns.iter().map(|c| c.count as u64).sum::<u64>(),
        984
    );
    assert_eq!(send.columns.iter().map(|c| c.busy).sum::<u64>(), 98_400);
    // fewer lines allowed than messages: bundles per send column, adding up to all of them
    let a = q(&v, 0, 1_024_000, 200, 100);
    assert!(a.messages.lines.is_empty());
    assert_eq!(a.messages.bundles.len(), 196);
    assert_eq!(a.messages.bundles.iter().map(|b| b.count).sum::<u64>(), N);
    assert_eq!(
        a.messages.bundles.iter().map(|b| b.bytes).sum::<u64>(),
        8 * N * (N + 1) / 2
    );

    // 5 ns per pixel over 5 µs: 5 send regions at full detail, nothing summarized
    let a = q(&v, 100_000, 105_000, 1000, 5000);
    assert_eq!(a.lanes[0][1].full.len(), 5);
    assert!(a.lanes[0][1].columns.is_empty());
    assert_eq!(
        a.lanes[1][1].full.len(),
        5,
        "receives at 100.3, ..., 104.3 µs"
    );
    assert_eq!(a.messages.total, 5);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn region_details_stats_and_the_token() {
    let d = experiment("api");
    let v = Viewer::open(&d, None).unwrap();
    let r = js(v.region(0, 1, 3).unwrap());
    assert_eq!(r["name"], "MPI_Send");
    assert_eq!(r["duration"], 100);
    assert_eq!(r["start"], 4000);
    assert_eq!(r["call_path"], serde_json::json!(["main", "MPI_Send"]));
    // the window [100 µs, 110 µs): 10 sends of 100 ns, 10 messages of 8·(k+1) bytes
    let s = js(v.stats(100_000, 110_000));
    assert_eq!(s["message_count"], 10);
    assert_eq!(s["bytes"], (100..110).map(|k| 8 * k).sum::<u64>());
    let send = s["profile"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[0] == "MPI_Send")
        .unwrap();
    assert_eq!(send[1], 10, "calls");
    assert_eq!(send[2], 1000, "inclusive ns");

    let tok = "0123456789abcdef0123456789abcdef";
    assert_eq!(handle(&v, tok, "GET", "/api/meta").status, 403);
    assert_eq!(handle(&v, tok, "GET", "/api/meta?token=0123").status, 403);
    let ok = handle(&v, tok, "GET", &format!("/api/meta?token={tok}"));
    assert_eq!(ok.status, 200);
    let meta: serde_json::Value = serde_json::from_slice(&ok.body.bytes()).unwrap();
    assert_eq!(meta["tracks"].as_array().unwrap().len(), 2);
    assert_eq!(meta["messages"], N);
    assert_eq!(
        handle(&v, tok, "GET", &format!("/etc/passwd?token={tok}")).status,
        404
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_backwards_or_non_finite_window_or_a_bad_number_is_refused_with_400() {
    let d = experiment("backwards");
    let v = Viewer::open(&d, None).unwrap();
    let tok = "0123456789abcdef0123456789abcdef";
    let ask = |path: &str, query: &str| {
        let a = handle(&v, tok, "GET", &format!("{path}?token={tok}&{query}"));
        (a.status, String::from_utf8(a.body.bytes()).unwrap())
    };
    for path in [
        "/api/window",
        "/api/stats",
        "/api/flame",
        "/api/sample_lane",
        "/api/samples",
        "/api/waits",
    ] {
        assert_eq!(
            ask(path, "t0=5&t1=1"),
            (
                400,
                "bad window: t1=1 is not after t0=5 (a window [t0, t1) needs t0 < t1)\n".into()
            ),
            "{path}"
        );
        assert_eq!(ask(path, "t0=5&t1=5").0, 400, "{path}: an empty window");
        assert_eq!(
            ask(path, "t0=NaN&t1=100"),
            (
                400,
                "bad window: t0=NaN is not a whole number of ns\n".into()
            ),
            "{path}"
        );
        assert_eq!(
            ask(path, "t0=0&t1=Infinity").1,
            "bad window: t1=Infinity is not a whole number of ns\n",
            "{path}"
        );
        // the run's end where t1 is absent: t0 after it is backwards
        assert_eq!(ask(path, "t0=2000000").0, 400, "{path}");
    }
    // a numeric parameter that is no whole number, or below its least, is refused too (was:
    // read as its default, or clamped: `search?max=-1` answered `count 2, instances []`)
    for (path, query, said) in [
        (
            "/api/window",
            "width=abc",
            "width=abc is not a whole number",
        ),
        ("/api/window", "max=1.5", "max=1.5 is not a whole number"),
        ("/api/search", "name=f&max=-1", "max=-1 is less than 0"),
        ("/api/displays", "bins=-1", "bins=-1 is less than 1"),
        (
            "/api/region",
            "track=x&depth=0&index=0",
            "track=x is not a whole number",
        ),
        (
            "/api/flame",
            "tracks=a",
            "tracks holds a, not a track (0 to 1)",
        ),
        (
            "/api/flame",
            "tracks=0,99",
            "tracks holds 99, not a track (0 to 1)",
        ),
    ] {
        assert_eq!(
            ask(path, query),
            (400, format!("bad parameter: {said}\n")),
            "{path}?{query}"
        );
    }
    assert_eq!(ask("/api/flame", "tracks=0%2C1").0, 200);
    // a window forwards is answered
    assert_eq!(ask("/api/window", "t0=1&t1=5").0, 200);
    let (status, body) = ask("/api/stats", "t0=100000&t1=110000");
    assert_eq!(status, 200);
    let s: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(s["message_count"], 10);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn search_finds_every_instance_and_the_flame_graph_clips_to_the_interval() {
    let d = experiment("search");
    let v = Viewer::open(&d, None).unwrap();
    // every MPI_Send of rank 0 and every MPI_Recv of rank 1, in time order on their track
    let s = js(v.search("MPI_Send", 10));
    assert_eq!(s["count"], N);
    let first = s["instances"].as_array().unwrap();
    assert_eq!(first.len(), 10, "the first max");
    assert_eq!(first[3], serde_json::json!([0, 1, 3, 4000, 4100]));
    assert_eq!(js(v.search("MPI_Recv", 5000))["count"], N);
    assert_eq!(js(v.search("main", 5000))["count"], 2);
    assert_eq!(js(v.search("MPI_", 5000))["count"], 0, "names match whole");
    // over HTTP, the name percent-encoded
    let tok = "0123456789abcdef0123456789abcdef";
    let a = handle(
        &v,
        tok,
        "GET",
        &format!("/api/search?token={tok}&name=MPI%5FSend&max=0"),
    );
    let a: serde_json::Value = serde_json::from_slice(&a.body.bytes()).unwrap();
    assert_eq!(a["count"], N);
    assert_eq!(a["instances"], serde_json::json!([]));

    // [100 µs, 110.05 µs) on rank 0: main clipped to the interval, 10 sends begun in it and
    // half of the 11th (100 ns regions at 1000·(k+1))
    let f = js(v.flame(100_000, 110_050, &[0]));
    let nodes = f["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "main and main → MPI_Send");
    assert_eq!(nodes[0][0], -1);
    assert_eq!(nodes[0][2], 10_050);
    assert_eq!(nodes[0][3], 0, "main begun before");
    assert_eq!(nodes[1][0], 0);
    assert_eq!(nodes[1][2], 10 * 100 + 50);
    assert_eq!(nodes[1][3], 11);
    // both ranks: main is one node (merged by path), with a child per region
    let f = js(v.flame(100_000, 110_050, &[]));
    let nodes = f["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[0][2], 2 * 10_050);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_request_without_the_token_gets_403_over_http() {
    let d = experiment("http");
    let server = Server::bind(&ServerOptions {
        bind: "127.0.0.1".to_string(),
        port: 0,
    })
    .unwrap();
    let addr = server.addr.clone();
    let token = server.token().to_string();
    assert!(server.url().starts_with("http://127.0.0.1:"));
    assert_eq!(token.len(), 32);
    let dir = d.clone();
    std::thread::spawn(move || {
        let v = Viewer::open(&dir, None).unwrap();
        server.serve(&v);
    });
    let get = |path: &str| -> String {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    assert!(get("/api/meta").starts_with("HTTP/1.1 403"));
    let ok = get(&format!(
        "/api/window?token={token}&t0=0&t1=1024000&width=1024"
    ));
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("\"total\":1000"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn idle_connections_and_endless_heads_leave_the_server_answering() {
    let d = experiment("limits");
    let mut server = Server::bind(&ServerOptions {
        bind: "127.0.0.1".to_string(),
        port: 0,
    })
    .unwrap();
    server.limits.connections = 4;
    let addr = server.addr.clone();
    let token = server.token().to_string();
    let dir = d.clone();
    std::thread::spawn(move || {
        let v = Viewer::open(&dir, None).unwrap();
        server.serve(&v);
    });
    let ask = |head: &str| -> String {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        // the server may answer and close before all of an oversized head is sent
        let _ = s.write_all(head.as_bytes());
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    };
    let meta = format!("GET /api/meta?token={token} HTTP/1.1\r\nHost: {addr}\r\n");
    // 20 connections that send nothing: each new one beyond 4 closes the oldest
    let mut idle: Vec<std::net::TcpStream> = (0..20)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    let ok = ask(&format!("{meta}Connection: close\r\n\r\n"));
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
    let mut closed = 0;
    for s in idle.iter_mut().take(16) {
        s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        closed += matches!(s.read(&mut [0u8; 1]), Ok(0)) as usize;
    }
    assert_eq!(closed, 16);
    // a line over 8 KiB, a head over 64 KiB: 431
    let long = ask(&format!("{meta}X-Long: {}\r\n\r\n", "a".repeat(8 * 1024)));
    assert!(
        long.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{long}"
    );
    let many = ask(&format!(
        "{meta}{}\r\n",
        "X-Many: 0123456789\r\n".repeat(4000)
    ));
    assert!(many.starts_with("HTTP/1.1 431 "), "{many}");
    // a body: 413; not HTTP: 400
    let body = ask(&format!("{meta}Content-Length: 5\r\n\r\nhello"));
    assert!(body.starts_with("HTTP/1.1 413 "), "{body}");
    assert!(ask("hello\r\n\r\n").starts_with("HTTP/1.1 400 "));
    // two requests on one connection, the second after the first's answer
    let two = ask(&format!("{meta}\r\n{meta}Connection: close\r\n\r\n"));
    assert_eq!(two.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{two}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_window_answer_is_valid_json_with_every_message() {
    let d = experiment("json");
    let v = Viewer::open(&d, None).unwrap();
    for max in [5000, 10] {
        let a: serde_json::Value = serde_json::from_str(&v.window(0, 1_024_000, 200, max)).unwrap();
        assert_eq!(a["messages"]["total"], N);
        let tracks = a["tracks"].as_array().unwrap();
        assert_eq!(tracks.len(), 2);
        assert_eq!(tracks[0][1]["full"].as_array().unwrap().len(), 16);
        assert_eq!(tracks[0][1]["columns"].as_array().unwrap().len(), 196);
        let lines = a["messages"]["lines"].as_array().unwrap().len() as u64;
        let bundled: u64 = a["messages"]["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[3].as_u64().unwrap())
            .sum();
        assert_eq!(lines + bundled, N);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn displays_comparison_matrices_and_profiles_count_exactly() {
    let d = experiment("displays");
    let v = Viewer::open(&d, None).unwrap();
    let a = js(v.displays(50));
    let sent: f64 = a["histograms"]["messages"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert_eq!(sent, N as f64);
    let bytes: f64 = a["histograms"]["bytes"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert_eq!(bytes, (8 * N * (N + 1) / 2) as f64);
    assert_eq!(a["utilization"].as_array().unwrap().len(), 2);
    let c = js(v.compare());
    assert_eq!(c["runs"].as_array().unwrap().len(), 1);
    let messages = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "Messages")
        .unwrap();
    assert_eq!(messages[2][0], N as f64);
    let comm = js(v.comm());
    assert_eq!(
        comm["pairs"],
        serde_json::json!([[0, 1, N, 8 * N * (N + 1) / 2]])
    );
    assert_eq!(comm["communicators"][0]["name"], "MPI_COMM_WORLD");
    assert_eq!(comm["communicators"][0]["pairs"], comm["pairs"]);
    // the profile of rank 1: main from 0 to 1,001,500 ns (its last receive ends at 1,000,500)
    // less its 1,000 MPI_Recv of 200 ns
    let p = serde_json::to_value(v.profile()).unwrap();
    let rank1 = &p["tables"][2];
    assert_eq!(rank1["label"], "rank 1 thread 0");
    let row = |i: usize| {
        let r = &rank1["rows"][i];
        (
            r[0].clone(),
            r[1].as_u64().unwrap(),
            (r[2].as_f64().unwrap() * 1e9).round(),
        )
    };
    assert_eq!(row(0), ("main".into(), 1, 801_500.0));
    assert_eq!(row(1), ("MPI_Recv".into(), N, 200_000.0));
    let send = p["gprof"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[1] == "MPI_Send")
        .unwrap();
    assert_eq!(send[5], N);
    assert_eq!(send[6], serde_json::json!(["main"]));
    let _ = std::fs::remove_dir_all(&d);
}

/// Main holds a mutex for 500 µs; the worker, waiting for it, gets it 10 ns after the release;
/// main joins the worker, which ends at 700.03 µs (the critpath test's lock world).
#[test]
fn a_lock_handoff_and_a_join_are_arcs_between_threads() {
    use plx_format::synth::SynthProcess;
    use plx_format::{EventEncoder, NamedBy, SyncKind, NONE_U32};
    let d = std::env::temp_dir().join(format!("plx-view-{}-lock", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut p = SynthProcess::new("host", 50, &["/bin/locks"]);
    p.functions(&[(1, "main"), (2, "worker"), (3, "locked")])
        .thread(0, 50, "main", 0)
        .thread(1, 51, "worker", 100)
        .sync_object(0, SyncKind::Mutex, NamedBy::Init, NONE_U32, 0x4000)
        .sync_object(1, SyncKind::Thread, NamedBy::Use, NONE_U32, 0x5000);
    let mut m = EventEncoder::new(0);
    m.enter(1, 0)
        .acquire(0, 0, 0, 10)
        .enter(3, 10)
        .exit(3, 500_010)
        .release(0, 0, 500_010)
        .acquire(1, 6, 150_030, 700_040)
        .exit(1, 700_100);
    let mut w = EventEncoder::new(100);
    w.enter(2, 100)
        .acquire(0, 0, 499_820, 500_020)
        .release(0, 0, 700_020)
        .exit(2, 700_030)
        .release(1, 6, 700_030);
    p.chunk(0, &m).chunk(1, &w).end(700_100, 0);
    p.write(&d).unwrap();
    let v = Viewer::open(&d, None).unwrap();
    let h: Vec<(i64, i64, u32, u32, u8)> = v
        .index
        .handoffs
        .iter()
        .map(|h| {
            (
                h.release - v.index.origin,
                h.acquire - v.index.origin,
                h.from,
                h.to,
                h.kind,
            )
        })
        .collect();
    assert_eq!(
        h,
        [(500_010, 500_020, 0, 1, 0), (700_030, 700_040, 1, 0, 6)]
    );
    let a: serde_json::Value = serde_json::from_str(&v.window(600_000, 700_100, 100, 10)).unwrap();
    assert_eq!(
        a["handoffs_total"], 1,
        "only the join crosses [600, 700.1) µs"
    );
    assert_eq!(
        a["handoffs"][0],
        serde_json::json!([700_030, 700_040, 1, 0, 6])
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_zoom_answers_while_the_waits_are_replayed() {
    // each receive begins 300 ns before its send: 1,000 late-sender waits of 300 ns
    let d = experiment_receiving_for("waits-meanwhile", 800);
    let server = Server::bind(&ServerOptions {
        bind: "127.0.0.1".to_string(),
        port: 0,
    })
    .unwrap();
    let addr = server.addr.clone();
    let token = server.token().to_string();
    let v: &'static Viewer = Box::leak(Box::new(Viewer::open(&d, None).unwrap()));
    // the replay cannot finish while this is held
    let held = v.hold_waits();
    std::thread::spawn(move || server.serve(v));
    let get = |path: &str| -> String {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        write!(
            s,
            "GET {path}{}token={token} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
            if path.contains('?') { '&' } else { '?' }
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out.split_once("\r\n\r\n").unwrap().1.to_string()
    };
    assert_eq!(get("/api/waits?t0=0&t1=1024000"), r#"{"computing":true}"#);
    assert_eq!(get("/api/wait?id=0"), r#"{"computing":true}"#);
    // the replay under way (held): a zoom and the metadata are answered meanwhile
    let a: serde_json::Value =
        serde_json::from_str(&get("/api/window?t0=0&t1=1024000&width=1024")).unwrap();
    assert_eq!(a["messages"]["total"], N);
    let m: serde_json::Value = serde_json::from_str(&get("/api/meta")).unwrap();
    assert_eq!(m["events"].as_u64().unwrap(), v.index.events);
    assert_eq!(get("/api/waits?t0=0&t1=1024000"), r#"{"computing":true}"#);
    drop(held);
    // replayed once, in the background: then the answer is the analysis's
    let start = std::time::Instant::now();
    let ready = loop {
        let w: serde_json::Value =
            serde_json::from_str(&get("/api/waits?t0=0&t1=1024000")).unwrap();
        if w.get("computing").is_none() {
            break w;
        }
        assert!(start.elapsed().as_secs() < 20, "the waits never came");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(ready, js(v.waits(0, 1_024_000, 5000)));
    assert_eq!(ready["total"], N);
    assert_eq!(ready["count"], N);
    let late = ready["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|p| p == "late_sender")
        .unwrap();
    for w in ready["waits"].as_array().unwrap() {
        assert_eq!(w[2], late);
        assert_eq!(w[4].as_i64().unwrap() - w[3].as_i64().unwrap(), 300);
    }
    let _ = std::fs::remove_dir_all(&d);
}
