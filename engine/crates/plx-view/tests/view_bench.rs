//! (Ignored) what `plx view` costs on a large synthetic trace, against loading the same trace's
//! Chrome JSON, in one run: `cargo test --release -p plx-view --test view_bench -- --ignored
//! --nocapture`. `PLX_VIEW_BENCH_EVENTS` sets the viewer's trace (default 100 M events; `make
//! bench` uses 20 M) and
//! `PLX_VIEW_BENCH_JSON_EVENTS` the trace of the comparison (default 2 M: its Chrome JSON is
//! parsed whole into memory, as a viewer of that format does: 143 MiB of JSON take 1.9 GiB).

use std::path::Path;
use std::time::Instant;

use plx_view::api::{IndexSource, Via, Viewer};

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

/// What one viewer run measured.
struct Run {
    events: u64,
    /// What `plx run` adds at the end of the run: the parts of every process (8 ranks) built
    /// and written, on all cores.
    parts_s: f64,
    /// What one rank's `plx run` adds: the part of one process (rank 0) built and written.
    one_part_s: f64,
    /// The first open after that: the parts read and combined.
    first_s: f64,
    /// A later open (the same).
    open_s: f64,
    /// The first open of an experiment without parts (`PLX_VIEW_INDEX=0`): they are built then.
    no_parts_s: f64,
    /// The merge pass (the fallback when the clock condition needs repair), index written.
    merge_s: f64,
    zooms: Vec<f64>,
    pans: Vec<f64>,
    /// The whole trace at 1600 columns, ms.
    widest: f64,
    largest: u64,
    parts_mib: f64,
}

fn du_mib(d: &Path) -> f64 {
    std::fs::read_dir(d)
        .map(|es| {
            es.flatten()
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum::<u64>()
        })
        .unwrap_or(0) as f64
        / (1 << 20) as f64
}

/// The first open without parts (which builds them), the parts built again as `plx run` builds
/// them, the first open after that, a later one, the merge pass; then on the last open the
/// latency of 20 zooms and 20 pans (window answer as JSON text, 1600 columns).
fn viewer(d: &Path) -> Run {
    let parts = d.join(".plx-view").join("parts");
    let (v, no_parts_s) = timed(|| Viewer::open(d, None).unwrap());
    assert!(matches!(&v.source, IndexSource::Parts(u) if u.read == 0 && u.unsaved.is_empty()));
    drop(v);
    std::fs::remove_dir_all(&parts).unwrap();
    let (done, parts_s) = timed(|| plx_view::part::prebuild(d, |_, _| true).unwrap());
    assert!(done.failed.is_empty() && !done.written.is_empty());
    let parts_mib = du_mib(&parts);
    // one rank's plx run: its own process only (rank 0, pid 5000)
    let first = plx_view::part::path(d, "node1", 5000, 0);
    assert!(first.is_file(), "{}", first.display());
    std::fs::remove_file(&first).unwrap();
    let (done, one_part_s) = timed(|| plx_view::part::prebuild(d, |_, pid| pid == 5000).unwrap());
    assert_eq!(done.written, vec![first]);
    let (v, first_s) = timed(|| Viewer::open(d, None).unwrap());
    assert!(matches!(&v.source, IndexSource::Parts(u) if u.built.is_empty()));
    drop(v);
    let (v, merge_s) = timed(|| Viewer::open_with(d, None, Via::MergePass).unwrap());
    assert!(matches!(v.source, IndexSource::Built { unsaved: None, .. }));
    drop(v);
    std::fs::remove_file(plx_view::store::path(d, None)).unwrap();
    let (v, open_s) = timed(|| Viewer::open(d, None).unwrap());
    assert!(matches!(&v.source, IndexSource::Parts(u) if u.built.is_empty()));
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
    // the widest zoom, at its slowest of 5
    let widest = (0..5)
        .map(|_| timed(|| v.window(0, span, 1600, 5000)).1 * 1e3)
        .fold(0.0, f64::max);
    Run {
        events: v.index.events,
        parts_s,
        first_s,
        open_s,
        no_parts_s,
        one_part_s,
        merge_s,
        zooms,
        pans,
        widest,
        largest: largest as u64,
        parts_mib,
    }
}

impl Run {
    fn line(&self, gen_s: f64) -> String {
        format!(
            "{} events (8 processes, 16 tracks, written in {gen_s:.1} s): end of one rank's plx run \
(its process's part built and written) {:.2} s; parts of all 8 processes at once (on every \
core, {:.0} MiB written) {:.2} s; plx view's first open \
after it (parts read, combined) {:.2} s, later opens {:.2} s; first open without parts (built \
then) {:.2} s; merge pass (fallback, index written) {:.2} s; widest zoom {:.1} ms; zooms {}; \
pans {}; largest answer {} KiB",
            self.events,
            self.one_part_s,
            self.parts_mib,
            self.parts_s,
            self.first_s,
            self.open_s,
            self.no_parts_s,
            self.merge_s,
            self.widest,
            stats(&self.zooms),
            stats(&self.pans),
            self.largest / 1024
        )
    }
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
    let run = viewer(&d);
    assert_eq!(run.events, written);
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
        "view-bench: {}; the Chrome JSON ({:.0} MiB, exported in {export_s:.1} s) parses in \
{parse_s:.2} s ({:.1}x plx view's first open, {:.1}x a later one), peak RSS {} MiB -> {} MiB",
        run.line(gen_s),
        json_bytes as f64 / (1 << 20) as f64,
        parse_s / run.first_s,
        parse_s / run.open_s,
        rss0 / 1024,
        rss1 / 1024,
    );
    let _ = std::fs::remove_dir_all(&d);

    if large > small {
        let d = tmp("large");
        let (written, gen_s) = timed(|| world(&d, large / 16));
        let rss0 = peak_rss_kb();
        let run = viewer(&d);
        assert_eq!(run.events, written);
        eprintln!(
            "view-bench: {}; peak RSS {} MiB",
            run.line(gen_s),
            peak_rss_kb().max(rss0) / 1024,
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// (Ignored) where a later open and the widest zoom spend their time, on the experiment
/// `PLX_VIEW_BENCH_DIR` (written there first if absent, `PLX_VIEW_BENCH_EVENTS` events).
#[test]
#[ignore]
fn breakdown() {
    let Ok(d) = std::env::var("PLX_VIEW_BENCH_DIR") else {
        return;
    };
    let d = std::path::PathBuf::from(d);
    if !d.exists() {
        std::fs::create_dir_all(&d).unwrap();
        world(&d, env("PLX_VIEW_BENCH_EVENTS", 20_000_000) / 16);
        Viewer::open_with(&d, None, Via::MergePass).unwrap();
    }
    // builds and writes the index if there is none (or it is stale)
    Viewer::open_with(&d, None, Via::MergePass).unwrap();
    let (exp, a) = timed(|| plx_format::Experiment::open(&d).unwrap());
    let (model, b) = timed(|| plx_analysis::Model::build(&exp, Default::default()));
    let (fp, c) = timed(|| plx_view::store::fingerprint(&d, None).unwrap());
    let (ix, e) = timed(|| plx_view::store::load(&plx_view::store::path(&d, None), fp).unwrap());
    let span = ix.end - ix.origin;
    let q = plx_view::WindowQuery {
        t0: ix.origin,
        t1: ix.end,
        width: 1600,
        max_messages: 5000,
    };
    let (_, f) = timed(|| plx_view::window(&ix, &q));
    let (_, g) = timed(|| plx_view::window(&ix, &q));
    let (v, h) = timed(|| Viewer::open(&d, None).unwrap());
    let (_, i) = timed(|| v.window(0, span, 1600, 5000));
    let w = span / 8;
    let pans: Vec<f64> = (0..20)
        .map(|k| {
            let t0 = (k as i64) * (span - w) / 19;
            let q = plx_view::WindowQuery {
                t0: ix.origin + t0,
                t1: ix.origin + t0 + w,
                width: 1600,
                max_messages: 5000,
            };
            timed(|| plx_view::window(&ix, &q)).1 * 1e3
        })
        .collect();
    eprintln!("breakdown: pans (query only) {}", stats(&pans));
    if std::env::var("PLX_VIEW_BENCH_MEMORY").is_ok() {
        // the same queries on the index the merge pass builds in memory
        let mem = plx_view::TraceIndex::build(&model, &exp).unwrap();
        let w1 = (0..3)
            .map(|_| timed(|| plx_view::window(&mem, &q)).1 * 1e3)
            .fold(f64::MAX, f64::min);
        let w2 = (0..3)
            .map(|_| timed(|| plx_view::window(&ix, &q)).1 * 1e3)
            .fold(f64::MAX, f64::min);
        eprintln!("breakdown: widest query, best of 3: in memory {w1:.1} ms, mapped {w2:.1} ms");
    }
    eprintln!(
        "breakdown: experiment {a:.3} s, model {b:.3} s, fingerprint {c:.3} s, index load {e:.3} s; \
window query {:.1} ms then {:.1} ms; Viewer::open {h:.3} s, window as JSON {:.1} ms",
        f * 1e3,
        g * 1e3,
        i * 1e3
    );
}
