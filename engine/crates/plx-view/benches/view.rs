//! What `plx view` costs on a large synthetic trace, against loading the same trace's Chrome
//! JSON, in one run: `cargo bench -p plx-view --bench view [-- NAME...]` (NAME: a part of a
//! measurement's name, `open_and_query`, `breakdown`, `open_only`, `endpoints`, `answers`; every one when
//! none is named; `real_trace` only with `PLX_VIEW_BENCH_REAL=DIR`: the same measurements as
//! `open_and_query` on a real experiment, bench/view_run.sh's). `PLX_VIEW_BENCH_EVENTS` sets the viewer's traces (events, comma-separated;
//! default 100 M; `make bench` uses 20 M and 100 M) and
//! `PLX_VIEW_BENCH_JSON_EVENTS` the trace of the comparison (default 2 M: its Chrome JSON is
//! parsed whole into memory, as a viewer of that format does: 143 MiB of JSON take 1.9 GiB).

use std::path::Path;
use std::time::Instant;

use plx_view::api::{IndexSource, Via, Viewer};

#[path = "../../plx-analysis/benches/fixtures/bench_world.rs"]
mod bench_world;
use bench_world::{peak_rss_kb, ring, selected, work};

/// 8 ranks of 2 threads calling `work` → `leaf`; every 16th iteration thread 0 sends to the next
/// rank and receives from the previous one.
fn world(d: &Path, per_thread: u64) -> u64 {
    bench_world::world(d, 8, 2, per_thread, |s, enc| {
        if s.i % 16 == 0 && s.thread == 0 {
            ring(s, enc)
        } else {
            work(enc, s.at)
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

/// CPU seconds (user and system, every thread) this process has used so far, from
/// `/proc/self/stat` (in clock ticks of 10 ms).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // the fields after the command name (which may hold spaces) in parentheses
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
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
    /// The first open of the experiment as `plx run --trace` leaves it (nothing prepared).
    first_s: f64,
    /// The CPU seconds of the first open (every thread).
    first_cpu_s: f64,
    /// Later opens (the same work: nothing is kept between opens), each.
    later_s: Vec<f64>,
    /// The merge pass (the fallback when the clock condition needs repair), index written.
    merge_s: f64,
    /// The merge pass's index file, bytes.
    merge_index: u64,
    zooms: Vec<f64>,
    pans: Vec<f64>,
    /// The whole trace at 1600 columns, ms.
    widest: f64,
    largest: u64,
    /// The experiment's bytes on disk (every file) after the opens, and of them under
    /// `.plx-view/` (any index).
    disk: u64,
    index: u64,
}

/// Bytes of the files under `d`, recursively.
fn du(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .map(|es| {
            es.flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => du(&e.path()),
                    _ => e.metadata().map_or(0, |m| m.len()),
                })
                .sum::<u64>()
        })
        .unwrap_or(0)
}

/// Zooms and pans measured, each: 5 rounds of 10 zooms in and 10 out, 5 sweeps of 20 pans.
const ZOOMS: usize = 100;

/// The first open of the experiment as written (nothing prepared), two later opens, the
/// bytes on disk, the merge pass (its index then removed); on the last open the latency of
/// [`ZOOMS`] zooms and as many pans (window answer as JSON text, 1600 columns).
fn viewer(d: &Path) -> Run {
    let cpu0 = cpu_s();
    let (v, first_s) = timed(|| Viewer::open(d, None).unwrap());
    let first_cpu_s = cpu_s() - cpu0;
    assert!(matches!(&v.source, IndexSource::Parts(u) if u.merged == 0));
    drop(v);
    let mut later_s = Vec::new();
    for _ in 0..2 {
        let (v, s) = timed(|| Viewer::open(d, None).unwrap());
        assert!(matches!(&v.source, IndexSource::Parts(_)));
        later_s.push(s);
    }
    let (disk, index) = (du(d), du(&d.join(".plx-view")));
    let (v, merge_s) = timed(|| Viewer::open_with(d, None, Via::MergePass).unwrap());
    assert!(matches!(v.source, IndexSource::Built { unsaved: None, .. }));
    drop(v);
    let merge_index = du(&d.join(".plx-view"));
    std::fs::remove_dir_all(d.join(".plx-view")).unwrap();
    let v = Viewer::open(d, None).unwrap();
    let span = v.index.end - v.index.origin;
    let mut zooms = Vec::new();
    let (mut t0, mut t1) = (0i64, span);
    let mut largest = 0usize;
    for i in 0..ZOOMS {
        // zoom in towards the middle by half 10 times, then back out 10 times, over and over
        let w = t1 - t0;
        let mid = t0 + w / 2;
        let nw = if i % 20 < 10 { w / 2 } else { w * 2 };
        t0 = (mid - nw / 2).max(0);
        t1 = t0 + nw;
        let (text, s) = timed(|| v.window(t0, t1, 1600, 5000));
        largest = largest.max(text.len());
        zooms.push(s * 1e3);
    }
    let mut pans = Vec::new();
    let w = span / 8;
    for i in 0..ZOOMS {
        let t0 = ((i % 20) as i64) * (span - w) / 19;
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
        first_s,
        first_cpu_s,
        later_s,
        merge_s,
        merge_index,
        zooms,
        pans,
        widest,
        largest: largest as u64,
        disk,
        index,
    }
}

impl Run {
    /// The figures of a trace of `events` events, `what` (its processes and tracks).
    fn line(&self, what: &str) -> String {
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        format!(
            "{} events ({what}): plx view's first open \
(nothing prepared) {:.2} s ({:.1} M events/s; {:.2} s of CPU), later opens {}; experiment {:.0} MiB on disk, \
{:.2} bytes/event, index kept {} bytes ({:.3} bytes/event); merge pass (fallback) {:.2} s, its index \
{:.0} MiB; \
widest zoom {:.1} ms; zooms {}; pans {}; largest answer {} KiB",
            self.events,
            self.first_s,
            self.events as f64 / self.first_s / 1e6,
            self.first_cpu_s,
            self.later_s
                .iter()
                .map(|s| format!("{s:.2} s"))
                .collect::<Vec<_>>()
                .join(", "),
            mib(self.disk),
            self.disk as f64 / self.events as f64,
            self.index,
            self.index as f64 / self.events as f64,
            self.merge_s,
            mib(self.merge_index),
            self.widest,
            stats(&self.zooms),
            stats(&self.pans),
            self.largest / 1024
        )
    }
}

fn synthetic(gen_s: f64) -> String {
    format!("8 processes, 16 tracks, written in {gen_s:.1} s")
}

/// `open_and_query`'s measurements on the experiment `PLX_VIEW_BENCH_REAL` names (a real run;
/// its `.plx-view` is removed after the merge pass, as for the synthetic ones).
fn real_trace(d: &Path) {
    let run = viewer(d);
    let v = Viewer::open(d, None).unwrap();
    let what = format!("{}, {} tracks", d.display(), v.index.tracks.len());
    eprintln!(
        "view-bench: {}; peak RSS {} MiB",
        run.line(&what),
        peak_rss_kb() / 1024
    );
}

fn stats(ms: &[f64]) -> String {
    let mut v = ms.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // nearest rank
    let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    format!(
        "p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms (of {})",
        at(0.5),
        at(0.95),
        at(0.99),
        v.len()
    )
}

fn open_and_query_latency_against_chrome_json() {
    let small = env("PLX_VIEW_BENCH_JSON_EVENTS", 2_000_000);
    let large: Vec<u64> = std::env::var("PLX_VIEW_BENCH_EVENTS")
        .unwrap_or_else(|_| "100000000".into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();

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
{parse_s:.2} s ({:.1}x plx view's first open), peak RSS {} MiB -> {} MiB",
        run.line(&synthetic(gen_s)),
        json_bytes as f64 / (1 << 20) as f64,
        parse_s / run.first_s,
        rss0 / 1024,
        rss1 / 1024,
    );
    let _ = std::fs::remove_dir_all(&d);

    for &large in large.iter().filter(|&&n| n > small) {
        let d = tmp("large");
        let (written, gen_s) = timed(|| world(&d, large / 16));
        let rss0 = peak_rss_kb();
        let run = viewer(&d);
        assert_eq!(run.events, written);
        eprintln!(
            "view-bench: {}; peak RSS {} MiB",
            run.line(&synthetic(gen_s)),
            peak_rss_kb().max(rss0) / 1024,
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// The experiment `PLX_VIEW_BENCH_DIR` names (`None`: not set), written there first if absent
/// (`PLX_VIEW_BENCH_EVENTS` events, default 20 M; `true`: just written).
fn bench_dir() -> Option<(std::path::PathBuf, bool)> {
    let d = std::path::PathBuf::from(std::env::var("PLX_VIEW_BENCH_DIR").ok()?);
    let made = !d.exists();
    if made {
        std::fs::create_dir_all(&d).unwrap();
        world(&d, env("PLX_VIEW_BENCH_EVENTS", 20_000_000) / 16);
    }
    Some((d, made))
}

/// where a later open and the widest zoom spend their time, on the experiment
/// `PLX_VIEW_BENCH_DIR` (written there first if absent, `PLX_VIEW_BENCH_EVENTS` events).
fn breakdown() {
    let Some((d, made)) = bench_dir() else {
        return;
    };
    if made {
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

/// the open alone, 3 times, of the experiment `PLX_VIEW_BENCH_DIR` (written there
/// first if absent, `PLX_VIEW_BENCH_EVENTS` events): for profiling the open.
fn open_only() {
    let Some((d, _)) = bench_dir() else {
        return;
    };
    for _ in 0..3 {
        let (v, s) = timed(|| Viewer::open(&d, None).unwrap());
        eprintln!("open-only: {} events opened in {s:.3} s", v.index.events);
    }
}

/// the answers that scan whole ranges, on the experiment `PLX_VIEW_BENCH_DIR`
/// (written there first if absent, `PLX_VIEW_BENCH_EVENTS` events, default 20 M): the model
/// `/api/profile` needs (built at its first request), `/api/profile` serialized, `/api/counters`
/// (its first request) and `/api/flame` of the whole run on every track, each with the CPU
/// seconds it used (every thread) and a checksum of its answer (equal before and after a change
/// of how it is computed).
fn endpoints() {
    let Some((d, _)) = bench_dir() else {
        return;
    };
    let v = Viewer::open(&d, None).unwrap();
    let span = v.index.end - v.index.origin;
    let sum = |s: &str| crc32fast::hash(s.as_bytes());
    let cpu = |f: &mut dyn FnMut() -> String| {
        let c0 = cpu_s();
        let (text, s) = timed(f);
        (sum(&text), text.len(), s, cpu_s() - c0)
    };
    let line = |what: &str, (crc, len, s, c): (u32, usize, f64, f64)| {
        eprintln!("endpoints: {what}: {s:.3} s wall, {c:.2} s CPU, {len} bytes, crc32 {crc:08x}")
    };
    line(
        "model (first /api/profile)",
        cpu(&mut || format!("{}", v.model().processes.len())),
    );
    line(
        "/api/profile",
        cpu(&mut || serde_json::to_string(&v.profile()).unwrap()),
    );
    line("/api/counters", cpu(&mut || v.counters().to_string()));
    line(
        "/api/flame whole run",
        cpu(&mut || serde_json::to_string(&v.flame(0, span, &[])).unwrap()),
    );
    line(
        "/api/flame half, tracks 0-3",
        cpu(&mut || {
            serde_json::to_string(&v.flame(span / 4, 3 * span / 4, &[0, 1, 2, 3])).unwrap()
        }),
    );
    eprintln!("endpoints: {} events", v.index.events);
}

/// A checksum of the answers read from the index the open builds, on the experiment
/// `PLX_VIEW_BENCH_DIR` (written there first if absent, `PLX_VIEW_BENCH_EVENTS` events, default
/// 20 M): `/api/meta`, the windows of [`viewer`]'s zooms and pans (1600 columns), `/api/stats` and
/// `/api/flame` of the whole run and of a quarter, `/api/search` of each region and `/api/region`
/// of instances spread over every lane; each as a crc32, then one of them all (equal before and
/// after a change of how the open computes the index).
fn answers() {
    let Some((d, _)) = bench_dir() else {
        return;
    };
    let v = Viewer::open(&d, None).unwrap();
    let span = v.index.end - v.index.origin;
    let mut all = crc32fast::Hasher::new();
    let mut part = |what: &str, text: String| {
        all.update(text.as_bytes());
        eprintln!(
            "answers: {what}: {} bytes, crc32 {:08x}",
            text.len(),
            crc32fast::hash(text.as_bytes())
        );
    };
    part("meta", serde_json::to_string(&v.meta()).unwrap());
    let (mut t0, mut t1) = (0i64, span);
    let mut zooms = String::new();
    for i in 0..ZOOMS {
        let w = t1 - t0;
        let mid = t0 + w / 2;
        let nw = if i % 20 < 10 { w / 2 } else { w * 2 };
        t0 = (mid - nw / 2).max(0);
        t1 = t0 + nw;
        zooms.push_str(&v.window(t0, t1, 1600, 5000));
    }
    part("100 zooms", zooms);
    let w = span / 8;
    let pans: String = (0..ZOOMS)
        .map(|i| {
            let t0 = ((i % 20) as i64) * (span - w) / 19;
            v.window(t0, t0 + w, 1600, 5000)
        })
        .collect();
    part("100 pans", pans);
    for (a, b) in [(0, span), (span / 4, span / 2)] {
        part(
            &format!("stats {a}..{b}"),
            serde_json::to_string(&v.stats(a, b)).unwrap(),
        );
        part(
            &format!("flame {a}..{b}"),
            serde_json::to_string(&v.flame(a, b, &[])).unwrap(),
        );
    }
    let names: Vec<String> = v
        .index
        .regions
        .all()
        .iter()
        .map(|r| r.name.clone())
        .collect();
    for n in names {
        part(
            &format!("search {n}"),
            serde_json::to_string(&v.search(&n, 100)).unwrap(),
        );
    }
    let mut regions = String::new();
    for (ti, t) in v.index.tracks.iter().enumerate() {
        for (depth, lane) in t.lanes.iter().enumerate() {
            let n = lane.len();
            for k in 0..16 {
                let i = n * k / 16;
                if let Some(r) = v.region(ti, depth, i) {
                    regions.push_str(&serde_json::to_string(&r).unwrap());
                }
            }
            if let Some(r) = v.region(ti, depth, n.saturating_sub(1)) {
                regions.push_str(&serde_json::to_string(&r).unwrap());
            }
        }
    }
    part("regions", regions);
    eprintln!(
        "answers: {} events, all answers crc32 {:08x}",
        v.index.events,
        all.finalize()
    );
}

fn main() {
    if selected("open_and_query_latency_against_chrome_json") {
        open_and_query_latency_against_chrome_json();
    }
    if selected("breakdown") {
        breakdown();
    }
    if selected("open_only") {
        open_only();
    }
    if selected("endpoints") {
        endpoints();
    }
    if selected("answers") {
        answers();
    }
    if let Some(d) = std::env::var_os("PLX_VIEW_BENCH_REAL") {
        if selected("real_trace") {
            real_trace(Path::new(&d));
        }
    }
}
