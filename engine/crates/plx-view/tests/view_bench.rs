//! (Ignored) what `plx view` costs on a large synthetic trace, against loading the same trace's
//! Chrome JSON, in one run: `cargo test --release -p plx-view --test view_bench -- --ignored
//! --nocapture`. `PLX_VIEW_BENCH_EVENTS` sets the viewer's trace (default 100 M events) and
//! `PLX_VIEW_BENCH_JSON_EVENTS` the trace of the comparison (default 2 M: its Chrome JSON is
//! parsed whole into memory, as a viewer of that format does: 143 MiB of JSON take 1.9 GiB).

use std::path::Path;
use std::time::Instant;

use plx_view::api::Viewer;

#[path = "../../plx-analysis/tests/fixtures/bench_world.rs"]
mod bench_world;
use bench_world::{peak_rss_kb, work};

/// 8 ranks of 2 threads calling `work` → `leaf`; every 16th iteration thread 0 sends to the next
/// rank and receives from the previous one.
fn world(d: &Path, per_thread: u64) -> u64 {
    bench_world::world(d, 8, 2, per_thread, |s, enc| {
        let at = s.at;
        if s.i % 16 == 0 && s.thread == 0 {
            let (next, prev) = ((s.rank + 1) % s.ranks, (s.rank + s.ranks - 1) % s.ranks);
            enc.enter(4, at + 1)
                .send(next, 0, 64, 0, at + 2)
                .exit(4, at + 3)
                .enter(5, at + 4)
                .recv(prev, 0, 64, 0, at + 502)
                .exit(5, at + 503);
            (510, 6)
        } else {
            work(enc, at)
        }
    })
}

use plx_format::test_dir::tmp;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

/// Open time and the latency of 20 zooms and 20 pans (window answer as JSON text, 1600 columns).
fn viewer(d: &Path) -> (u64, f64, Vec<f64>, Vec<f64>, u64) {
    let (v, open_s) = timed(|| Viewer::open(d, None).unwrap());
    let span = v.index.end - v.index.origin;
    let mut zooms = Vec::new();
    let (mut t0, mut t1) = (0i64, span);
    let mut largest = 0usize;
    for i in 0..20 {
        // zoom in towards the middle by half, then back out from the tenth on
        let w = t1 - t0;
        let mid = t0 + w / 2;
        let nw = if i < 10 { w / 2 } else { w * 2 };
        t0 = (mid - nw / 2).max(0);
        t1 = t0 + nw;
        let (text, s) = timed(|| v.window(t0, t1, 1600, 5000));
        largest = largest.max(text.len());
        zooms.push(s * 1e3);
    }
    let mut pans = Vec::new();
    let w = span / 8;
    for i in 0..20 {
        let t0 = (i as i64) * (span - w) / 19;
        let (text, s) = timed(|| v.window(t0, t0 + w, 1600, 5000));
        largest = largest.max(text.len());
        pans.push(s * 1e3);
    }
    (v.index.events, open_s, zooms, pans, largest as u64)
}

fn stats(ms: &[f64]) -> String {
    let mut v = ms.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!(
        "median {:.1} ms, max {:.1} ms",
        v[v.len() / 2],
        v[v.len() - 1]
    )
}

#[test]
#[ignore]
fn open_and_query_latency_against_chrome_json() {
    let small = env("PLX_VIEW_BENCH_JSON_EVENTS", 2_000_000);
    let large = env("PLX_VIEW_BENCH_EVENTS", 100_000_000);

    // the comparison on one trace: plx view's open against parsing the Chrome JSON export
    let d = tmp("small");
    let (written, gen_s) = timed(|| world(&d, small / 16));
    let (events, open_s, zooms, pans, largest) = viewer(&d);
    assert_eq!(events, written);
    let json = d.join("trace.json");
    let (_, export_s) = timed(|| {
        plx_export::export("chrome", &d, &json, Default::default()).unwrap();
    });
    let json_bytes = std::fs::metadata(&json).unwrap().len();
    let rss0 = peak_rss_kb();
    let (doc, parse_s) = timed(|| {
        let f = std::io::BufReader::new(std::fs::File::open(&json).unwrap());
        serde_json::from_reader::<_, serde_json::Value>(f).unwrap()
    });
    let rss1 = peak_rss_kb();
    assert!(doc.is_object() || doc.is_array());
    drop(doc);
    eprintln!(
        "view-bench: {events} events (16 tracks, written in {gen_s:.1} s): plx view opens in \
{open_s:.2} s ({:.1} M events/s); zooms {}; pans {}; largest answer {} KiB; the Chrome JSON \
({:.0} MiB, exported in {export_s:.1} s) parses in {parse_s:.2} s ({:.1}x plx view's open), \
peak RSS {} MiB -> {} MiB",
        events as f64 / open_s / 1e6,
        stats(&zooms),
        stats(&pans),
        largest / 1024,
        json_bytes as f64 / (1 << 20) as f64,
        parse_s / open_s,
        rss0 / 1024,
        rss1 / 1024,
    );
    let _ = std::fs::remove_dir_all(&d);

    if large > small {
        let d = tmp("large");
        let (written, gen_s) = timed(|| world(&d, large / 16));
        let rss0 = peak_rss_kb();
        let (events, open_s, zooms, pans, largest) = viewer(&d);
        assert_eq!(events, written);
        eprintln!(
            "view-bench: {events} events (16 tracks, written in {gen_s:.1} s): plx view opens in \
{open_s:.2} s ({:.1} M events/s); zooms {}; pans {}; largest answer {} KiB; peak RSS {} MiB",
            events as f64 / open_s / 1e6,
            stats(&zooms),
            stats(&pans),
            largest / 1024,
            peak_rss_kb().max(rss0) / 1024,
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
