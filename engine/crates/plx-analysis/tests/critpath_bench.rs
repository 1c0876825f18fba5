//! (Ignored) throughput and memory of the critical path against the merge alone, on one
//! synthetic trace in one run: `cargo test --release -p plx-analysis --test critpath_bench --
//! --ignored --nocapture` (`PLX_CP_EVENTS=N` for another total; default 12.8 M events).

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use plx_analysis::critpath::{profile, CriticalPath, Level, Mode};
use plx_analysis::{BuildOptions, GlobalMerge, MergeOptions, Model, Window};
use plx_format::mpi::ThreadLevel;
use plx_format::synth::SynthProcess;
use plx_format::writer::FileWriter;
use plx_format::{
    Calibration, EventEncoder, Experiment, FileKind, NamedBy, Record, SyncKind, ThreadProfile,
    NONE_U32,
};

/// Peak resident set size of this process, from /proc (kB).
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|v| v.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

/// `ranks` ranks of 2 threads, `per_thread` events each: calls of `work` → `leaf`; every 16th
/// iteration thread 0 sends to the next rank and receives from the previous one and releases a
/// mutex that thread 1 then acquires after a wait (a communication point every ~70 events).
fn world(d: &Path, ranks: u32, per_thread: u64) -> u64 {
    const WORDS: usize = 1 << 17;
    let mut total = 0;
    for r in 0..ranks {
        let pid = 7000 + r;
        let mut p = SynthProcess::new("node1", pid, &["cpbench"]);
        p.functions(&[(1, "main"), (2, "work"), (3, "leaf")])
            .mpi_routines(&[(4, "MPI_Send"), (5, "MPI_Recv")])
            .mpi_init(r, ranks, ThreadLevel::Multiple, 1)
            .comm(0, 0, &(0..ranks).collect::<Vec<_>>())
            .thread(0, pid, "main", 0)
            .thread(1, pid + 1, "worker", 0)
            .sync_object(0, SyncKind::Mutex, NamedBy::Init, NONE_U32, 0x10);
        let dir = p.dir(d);
        std::fs::create_dir_all(&dir).unwrap();
        let file = std::fs::File::create(dir.join("trace.plx")).unwrap();
        let mut w = FileWriter::new(BufWriter::new(file), FileKind::Trace).unwrap();
        let mut end = 0;
        for t in 0..2u32 {
            let mut enc = EventEncoder::new(0);
            let (mut n, mut at, mut i) = (1u64, 0u64, 0u64);
            enc.enter(1, 0);
            while n < per_thread - 1 {
                if enc.words().len() >= WORDS - 32 {
                    let base = enc.base_ticks();
                    let calib = Calibration {
                        ticks: base,
                        monotonic_ns: base,
                    };
                    w.chunk(t, base, calib, enc.words()).unwrap();
                    enc = EventEncoder::new(at);
                }
                if i % 16 == 0 && t == 0 {
                    let (next, prev) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
                    enc.enter(4, at + 1)
                        .send(next, 0, 64, 0, at + 2)
                        .exit(4, at + 3)
                        .enter(5, at + 4)
                        .recv(prev, 0, 64, 0, at + 502)
                        .exit(5, at + 503)
                        .release(0, 0, at + 505);
                    at += 510;
                    n += 7;
                } else if i % 16 == 0 {
                    enc.acquire(0, 0, 400, at + 508).release(0, 0, at + 509);
                    at += 510;
                    n += 2;
                } else {
                    enc.enter(2, at + 1)
                        .enter(3, at + 3)
                        .exit(3, at + 6)
                        .exit(2, at + 8);
                    at += 10;
                    n += 4;
                }
                i += 1;
            }
            enc.exit(1, at + 1);
            n += 1;
            let base = enc.base_ticks();
            let calib = Calibration {
                ticks: base,
                monotonic_ns: base,
            };
            w.chunk(t, base, calib, enc.words()).unwrap();
            end = at + 2;
            total += n;
        }
        w.finish().unwrap();
        for t in 0..2 {
            p.record(Record::ThreadProfile(ThreadProfile {
                thread: t,
                end_ticks: end,
                cpu_ns: 0,
                trace_events: 0,
                lost_events: 0,
                lost_nodes: 0,
                nodes: Vec::new(),
            }));
        }
        p.end(end, 0);
        std::fs::write(dir.join("process.plx"), p.process_bytes()).unwrap();
    }
    total
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plx-cpbench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
#[ignore]
fn critical_path_throughput() {
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
