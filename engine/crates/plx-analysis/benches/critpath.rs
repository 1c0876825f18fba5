//! Throughput and memory of the critical path against the merge alone, on one synthetic trace in
//! one run: `cargo bench -p plx-analysis --bench critpath` (`PLX_CP_EVENTS=N` for another total;
//! default 12.8 M events).

use std::path::Path;
use std::time::Instant;

use plx_analysis::critpath::{profile, CriticalPath, Level, Mode};
use plx_analysis::{BuildOptions, GlobalMerge, MergeOptions, Model, Window};
use plx_format::Experiment;

#[path = "fixtures/bench_world.rs"]
mod bench_world;
use bench_world::{peak_rss_kb, ring, work};

/// `ranks` ranks of 2 threads, `per_thread` events each: calls of `work` → `leaf`; every 16th
/// iteration thread 0 sends to the next rank and receives from the previous one and releases a
/// mutex that thread 1 then acquires after a wait (a communication point every ~70 events).
fn world(d: &Path, ranks: u32, per_thread: u64) -> u64 {
    bench_world::world(d, ranks, 2, per_thread, |s, enc| {
        let at = s.at;
        if s.i % 16 == 0 && s.thread == 0 {
            ring(s, enc);
            enc.release(0, 0, at + 505);
            (510, 7)
        } else if s.i % 16 == 0 {
            enc.acquire(0, 0, 400, at + 508).release(0, 0, at + 509);
            (510, 2)
        } else {
            work(enc, at)
        }
    })
}

use plx_format::test_dir::tmp;

fn main() {
    let total: u64 = std::env::var("PLX_CP_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12_800_000);
    let d = tmp("throughput");
    let written = world(&d, 8, total / 16);
    let exp = Experiment::open(&d).unwrap();
    let model = Model::build(
        &exp,
        BuildOptions {
            rebuild_from_trace: false,
            resolve_sources: false,
        },
    );
    let opts = MergeOptions::default();

    let rss0 = peak_rss_kb();
    let t = Instant::now();
    let mut m = GlobalMerge::new(&model, &exp, opts).unwrap();
    let mut n = 0u64;
    while m.next_event().is_some() {
        n += 1;
    }
    let merge_s = t.elapsed().as_secs_f64();
    drop(m);
    let rss_merge = peak_rss_kb();

    let t = Instant::now();
    let cp = CriticalPath::compute(&model, &exp, Window::ALL, Mode::Global, None, opts).unwrap();
    let build_s = t.elapsed().as_secs_f64();
    let items = profile(&model, &exp, &cp.graph, &cp.segments, Level::Thread, opts).unwrap();
    let cp_s = t.elapsed().as_secs_f64();
    let rss_cp = peak_rss_kb();
    let t = Instant::now();
    let procs = profile(
        &model,
        &exp,
        &cp.graph,
        &cp.segments,
        Level::Procedure,
        opts,
    )
    .unwrap();
    let proc_s = t.elapsed().as_secs_f64();
    let rss_proc = peak_rss_kb();

    let path = cp.path.as_ref().unwrap();
    eprintln!(
        "critical-path: {n} events, {} locations, {} graph nodes, path of {} arcs ({} ms long); \
merge alone {merge_s:.2} s = {:.1} M events/s; graph + path + thread profile {cp_s:.2} s \
({build_s:.2} s graph and path) = {:.1} M events/s ({:.2} of the merge's rate); procedure \
profile (second pass) {proc_s:.2} s = {:.1} M events/s; peak RSS {} MiB before, {} MiB after \
the merge, {} MiB after the critical path, {} MiB after the procedure profile",
        cp.graph.locations.len(),
        cp.graph.nodes.len(),
        path.arcs.len(),
        cp.length_ns() / 1_000_000,
        n as f64 / merge_s / 1e6,
        n as f64 / cp_s / 1e6,
        merge_s / cp_s,
        n as f64 / proc_s / 1e6,
        rss0 / 1024,
        rss_merge / 1024,
        rss_cp / 1024,
        rss_proc / 1024,
    );
    assert_eq!(n, written);
    assert_eq!(cp.graph.events, written);
    assert!(!items.is_empty() && !procs.is_empty());
    assert!(cp.length_ns() <= cp.graph.elapsed_ns());
    let _ = std::fs::remove_dir_all(&d);
}
