//! Synchronization objects, CPU time of `cputime` functions, resource hierarchies and metric ×
//! focus queries on synthetic experiments (1 tick = 1 ns, exact numbers).

use std::path::Path;

use plx_analysis::query::{Focus, Metric};
use plx_analysis::{flat_profile, BuildOptions, GroupBy, Model};
use plx_format::synth::SynthProcess;
use plx_format::{EventEncoder, NamedBy, SyncKind, SyncStats, WarningKind, NONE_U32};

use plx_format::test_dir::tmp;

fn open(d: &Path) -> Model {
    Model::open(d, BuildOptions::default()).unwrap()
}

/// main (region 1) → work (2), worker thread: work; a mutex (init) and a barrier (use); work's
/// CPU time from NodeCpu.
fn profile_experiment(d: &Path, live: bool) {
    let mut p = SynthProcess::new("node1", 100, &["app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .thread(0, 1000, "main", 0)
        .thread(1, 1001, "worker", 10)
        .sync_object(0, SyncKind::Mutex, NamedBy::Init, NONE_U32, 0x4010)
        .sync_object(1, SyncKind::Barrier, NamedBy::Use, NONE_U32, 0x4020)
        .profile(
            0,
            1_000,
            900,
            &[(None, 1, 1, 1, 1_000, 400), (Some(0), 2, 3, 0, 600, 600)],
        )
        .profile(1, 1_000, 500, &[(None, 2, 2, 0, 800, 800)])
        .node_cpu(0, &[(1, 450)])
        .node_cpu(1, &[(0, 700)])
        .sync_stats(0, 0, (10, 2, 300, 50, 10))
        .sync_stats(1, 0, (5, 1, 100, 20, 5))
        .sync_stats(1, 1, (4, 4, 40, 0, 4));
    if live {
        // the process was killed while writing SyncStats: the live file holds them all
        p.live_sync(
            1,
            &[
                SyncStats {
                    thread: 1,
                    object: 0,
                    acquisitions: 6,
                    contended: 1,
                    wait_ticks: 120,
                    hold_ticks: 25,
                    releases: 6,
                },
                SyncStats {
                    thread: 1,
                    object: 1,
                    acquisitions: 5,
                    contended: 5,
                    wait_ticks: 50,
                    hold_ticks: 0,
                    releases: 5,
                },
            ],
        );
    }
    p.end(1_000, 0);
    p.write(d).unwrap();
}

#[test]
fn objects_are_named_and_stats_aggregated() {
    let d = tmp("stats");
    profile_experiment(&d, false);
    let m = open(&d);
    let p = &m.processes[0];
    assert_eq!(p.sync_objects.len(), 2);
    assert_eq!(p.sync_objects[0].label(), "mutex 0x4010");
    assert_eq!(p.sync_objects[0].site_text(), "init at 0x4010");
    assert_eq!(p.sync_objects[1].site_text(), "first used at 0x4020");
    let (loc, tot) = m.sync_rows(GroupBy::Thread);
    assert_eq!(loc.len(), 3);
    assert_eq!(tot.len(), 2);
    // sorted by wait: mutex (400 ns) before barrier (40 ns)
    assert_eq!(tot[0].object, "mutex 0x4010");
    assert_eq!(tot[0].stat.acquisitions, 15);
    assert_eq!(tot[0].stat.contended, 3);
    assert_eq!((tot[0].stat.wait_s * 1e9).round(), 400.0);
    assert_eq!((tot[0].stat.hold_s * 1e9).round(), 70.0);
    assert_eq!(tot[0].stat.releases, 15);
    assert_eq!(tot[1].kind, SyncKind::Barrier);
    let (loc, _) = m.sync_rows(GroupBy::Process);
    assert_eq!(loc.len(), 2);
    assert!(loc.iter().all(|r| r.thread.is_none()));
}

#[test]
fn live_sync_file_wins_over_records() {
    let d = tmp("live");
    profile_experiment(&d, true);
    let m = open(&d);
    let t1 = &m.processes[0].threads[1];
    assert_eq!(t1.sync.len(), 2);
    assert_eq!(t1.sync[0].acquisitions, 6);
    assert_eq!(t1.sync[1].acquisitions, 5);
    assert!(m
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::Recovered && w.message.contains("live.1.sync")));
}

#[test]
fn node_cpu_gives_cpu_time_per_function_and_query() {
    let d = tmp("cpu");
    profile_experiment(&d, false);
    let m = open(&d);
    let (_, total) = m.tables(GroupBy::Thread, None);
    let rows = flat_profile(&total.tree);
    let work = rows
        .iter()
        .find(|r| m.regions.name(r.region) == "work")
        .unwrap();
    assert_eq!((work.cpu.unwrap() * 1e9).round(), 1150.0);
    let main = rows
        .iter()
        .find(|r| m.regions.name(r.region) == "main")
        .unwrap();
    assert_eq!(main.cpu, None);

    let h = m.hierarchies();
    let q = |metric: &str, focus: &str| {
        let f = Focus::parse(focus, &h).unwrap();
        m.query(Metric::parse(metric).unwrap(), &f, 4).unwrap()
    };
    assert_eq!((q("cpu_time", "code=/work").total * 1e9).round(), 1150.0);
    let r = q("cpu_time", "code=/work,machine=/node1/100/worker");
    assert_eq!((r.total * 1e9).round(), 700.0);
    assert_eq!(r.series, None);
    assert_eq!(q("calls", "code=/work,machine=/node1/100/1").total, 2.0);
    assert_eq!(
        q("calls", "code=/work,machine=/node1/100/main#0").total,
        3.0
    );
    assert_eq!((q("wall_time", "code=/work").total * 1e9).round(), 1400.0);
    assert_eq!((q("wall_time", "").total * 1e9).round(), 1800.0);
    assert_eq!(
        (q("wait_time", "sync=/Mutex/0x4010").total * 1e9).round(),
        400.0
    );
    assert_eq!((q("hold_time", "sync=/Mutex").total * 1e9).round(), 70.0);
    assert_eq!(
        (q("wait_time", "sync=/Barrier/1").total * 1e9).round(),
        40.0
    );

    let bad = |metric: &str, focus: &str| {
        Metric::parse(metric)
            .and_then(|mt| Focus::parse(focus, &h).and_then(|f| m.query(mt, &f, 4)))
            .unwrap_err()
    };
    assert!(bad("bogus", "").contains("wall_time, cpu_time"));
    assert!(bad("calls", "code=/nope").contains("\"nope\""));
    assert!(bad("calls", "machine=/node1/999").contains("valid are 100"));
    assert!(bad("calls", "where=/x").contains("code, machine, sync"));
    assert!(bad("cpu_time", "code=/main").contains("cputime"));
    assert!(bad("wait_time", "code=/work").contains("needs a trace"));
    assert!(bad("messages", "sync=/Mutex").contains("messages"));
}

#[test]
fn trace_cpu_events_sync_events_and_series() {
    let d = tmp("trace");
    let mut p = SynthProcess::new("node1", 200, &["app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .thread(0, 2000, "main", 0)
        .sync_object(0, SyncKind::Mutex, NamedBy::Use, NONE_U32, 0x10);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 100)
        .acquire(0, 0, 20, 120)
        .release(0, 0, 150)
        .cpu(2, 80, 199)
        .exit(2, 200)
        .enter(2, 600)
        .cpu(2, 90, 699)
        .exit(2, 700)
        .exit(1, 1000);
    p.chunk(0, &e);
    p.profile(0, 1_000, 0, &[]);
    p.end(1_000, 0);
    p.write(&d).unwrap();
    let m = open(&d);
    let h = m.hierarchies();
    let q = |metric: &str, focus: &str| {
        let f = Focus::parse(focus, &h).unwrap();
        m.query(Metric::parse(metric).unwrap(), &f, 2).unwrap()
    };
    let c = q("cpu_time", "code=/work");
    assert_eq!((c.total * 1e9).round(), 170.0);
    let s = c.series.unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].2 * 1e9).round(), 80.0);
    assert_eq!((s[1].2 * 1e9).round(), 90.0);
    let calls = q("calls", "code=/work").series.unwrap();
    assert_eq!(
        calls.iter().map(|b| b.2).collect::<Vec<_>>(),
        vec![1.0, 1.0]
    );
    let w = q("wait_time", "code=/work");
    assert_eq!(w.source, "trace");
    assert_eq!((w.total * 1e9).round(), 20.0);
    let hold = q("hold_time", "code=/work");
    assert_eq!((hold.total * 1e9).round(), 30.0);
    let wall = q("wall_time", "code=/work").series.unwrap();
    assert_eq!((wall[0].2 * 1e9).round(), 100.0);
    assert_eq!((wall[1].2 * 1e9).round(), 100.0);
}
