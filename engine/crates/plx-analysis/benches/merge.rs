//! Merge + match + profile throughput: `cargo bench -p plx-analysis --bench merge`. 8 ranks × 2
//! threads (16 locations), 3.2 M events each (51.2 M); `PLX_MERGE_EVENTS=200000000` for another
//! total.

use std::path::Path;

use plx_analysis::{EventKind, GlobalMerge, MergeOptions};
use plx_format::test_dir::tmp;

#[path = "fixtures/bench_world.rs"]
mod bench_world;
use bench_world::{peak_rss_kb, ring, thread_cpu_s, work};
#[path = "../tests/fixtures/open.rs"]
mod open_fixture;
use open_fixture::open;

/// `ranks` traced ranks of `threads` threads, each thread `per_thread` events: calls of `work`
/// → `leaf`, and every 64th iteration thread 0 sends to the next rank and receives from the
/// previous one (every rank runs the same schedule: sends at T, receives at T + 500).
fn big_world(d: &Path, ranks: u32, threads: u32, per_thread: u64) -> u64 {
    bench_world::world(d, ranks, threads, per_thread, |s, enc| {
        if s.thread == 0 && s.i % 64 == 0 {
            ring(s, enc)
        } else {
            work(enc, s.at)
        }
    })
}

fn main() {
    use plx_analysis::rebuild::ProfileBuilder;
    use plx_format::Event;
    let d = tmp("throughput");
    let total: u64 = std::env::var("PLX_MERGE_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(51_200_000);
    let written = big_world(&d, 8, 2, total / 16);
    let rss_before = peak_rss_kb();
    let cpu_start = thread_cpu_s();
    let start = std::time::Instant::now();
    let (exp, model) = open(&d);
    let mut m = GlobalMerge::new(&model, &exp, MergeOptions::default()).unwrap();
    let prepass = start.elapsed().as_secs_f64();
    let mut builders: Vec<ProfileBuilder> = (0..m.locations().len())
        .map(|_| ProfileBuilder::new())
        .collect();
    let origin = m.origin_ns();
    let mut n = 0u64;
    while let Some(e) = m.next_event() {
        n += 1;
        let ticks = (e.time_ns - origin) as u64;
        let ev = match e.kind {
            EventKind::Enter { region } => Event::Enter { region, ticks },
            EventKind::Exit { region } => Event::Exit { region, ticks },
            _ => continue,
        };
        builders[e.location as usize].event(ev);
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = thread_cpu_s() - cpu_start;
    let calls: u64 = builders
        .into_iter()
        .map(|b| b.finish().0.iter().map(|n| n.calls).sum::<u64>())
        .sum();
    let clock = m.clock_report().unwrap();
    let stats = m.stats();
    eprintln!(
        "merge+match+profile: {n} events, {} locations, {secs:.2} s wall ({prepass:.2} s opening and matching), {cpu:.2} s CPU: {:.1} M events/s per CPU second ({:.1} M/s wall, one thread); {} messages matched, {} violations; peak chunks held {} ({} KiB); peak RSS {} MiB (before: {} MiB)",
        m.locations().len(),
        n as f64 / cpu / 1e6,
        n as f64 / secs / 1e6,
        clock.messages,
        clock.violations_before,
        stats.peak_resident_chunks,
        stats.peak_resident_bytes / 1024,
        peak_rss_kb() / 1024,
        rss_before / 1024
    );
    assert_eq!(n, written);
    assert!(calls > 0);
    assert_eq!(clock.violations_after, 0);
    assert!(stats.peak_resident_chunks <= 16);
    let _ = std::fs::remove_dir_all(&d);
}
