//! Golden-style tests of the analysis on synthetic experiments written with plx-format's writer.

use plx_analysis::{flat_profile, BuildOptions, GroupBy, Model, ProfileSource};
use plx_format::synth::SynthProcess;
use plx_format::{EventEncoder, Record, RegionKind, UserEventDef, WarningKind};

use plx_format::test_dir::tmp;

/// (name, calls, child_calls, exclusive ns, inclusive ns) of a flat profile, rounded to ns.
fn flat(model: &Model, tree: &plx_analysis::CallTree) -> Vec<(String, u64, u64, u64, u64)> {
    flat_profile(tree)
        .iter()
        .map(|r| {
            (
                model.regions.name(r.region).to_string(),
                r.calls,
                r.child_calls,
                (r.exclusive * 1e9).round() as u64,
                (r.inclusive * 1e9).round() as u64,
            )
        })
        .collect()
}

fn s(name: &str, c: u64, cc: u64, e: u64, i: u64) -> (String, u64, u64, u64, u64) {
    (name.to_string(), c, cc, e, i)
}

#[test]
fn recursion_inclusive_is_not_double_counted() {
    let d = tmp("recursion");
    let mut p = SynthProcess::new("h", 1, &["fib"]);
    p.functions(&[(1, "main"), (2, "fib")])
        .thread(0, 1, "main", 0)
        .profile(
            0,
            100,
            0,
            &[
                (None, 1, 1, 1, 100, 10),
                (Some(0), 2, 1, 1, 90, 30),
                (Some(1), 2, 2, 2, 60, 40),
                (Some(2), 2, 2, 0, 20, 20),
            ],
        )
        .end(100, 0);
    p.write(&d).unwrap();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    let t = &m.processes[0].threads[0];
    assert_eq!(
        flat(&m, &t.tree),
        vec![s("fib", 5, 3, 90, 90), s("main", 1, 1, 10, 100)]
    );
}

fn killed_process(d: &std::path::Path) {
    let mut p = SynthProcess::new("h", 2, &["app"]);
    p.functions(&[(1, "main"), (2, "fib"), (3, "compute")])
        .thread(0, 2, "main", 0)
        .record(Record::UserEventDef(UserEventDef {
            event_id: 0,
            name: "bytes".into(),
        }));
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 0)
        .enter(2, 10)
        .enter(2, 20)
        .exit(2, 30)
        .exit(2, 50)
        .user(0, 4.0, 55);
    p.chunk(0, &ev);
    // The next chunk starts with the runtime's flush; compute is never exited.
    let mut ev = EventEncoder::new(60);
    ev.enter(0, 60).exit(0, 65).enter(3, 70).user(0, 8.0, 100);
    p.chunk(0, &ev);
    // No ThreadProfile, no ProcessEnd: killed.
    p.write(d).unwrap();
}

#[test]
fn profile_rebuilt_from_trace_when_thread_profile_is_missing() {
    let d = tmp("rebuild");
    killed_process(&d);
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    let t = &m.processes[0].threads[0];
    assert_eq!(t.source, ProfileSource::Rebuilt);
    assert_eq!(
        flat(&m, &t.tree),
        vec![
            s("fib", 2, 1, 40, 40),
            s("compute", 1, 0, 30, 30),
            // the flush (60..65, inside main) is the runtime's: out of main's time
            s("main", 1, 2, 25, 95),
            s("plx_flush", 1, 0, 5, 5),
        ]
    );
    assert!((t.wall_s.unwrap() - 100e-9).abs() < 1e-15);
    assert_eq!(t.user_events.len(), 1);
    assert_eq!(t.user_events[0].name, "bytes");
    assert_eq!(t.user_events[0].count, 2);
    assert_eq!(t.user_events[0].mean(), 6.0);
    assert!(m
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::NoThreadProfile && w.message.contains("rebuilt")));
    assert!(m.warnings.iter().any(|w| w.kind == WarningKind::Unfinished));
}

#[test]
fn time_reset_events_restart_the_delta_base() {
    let d = tmp("reset");
    let mut p = SynthProcess::new("h", 3, &["app"]);
    p.functions(&[(1, "main"), (2, "wait")])
        .thread(0, 3, "main", 0);
    let big = 1u64 << 41; // beyond a 40-bit delta: the encoder writes a time reset
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 0)
        .enter(2, 10)
        .exit(2, big + 10)
        .exit(1, big + 20);
    assert_eq!(ev.words().len(), 6);
    p.chunk(0, &ev);
    p.write(&d).unwrap();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    let t = &m.processes[0].threads[0];
    assert_eq!(
        flat(&m, &t.tree),
        vec![s("wait", 1, 0, big, big), s("main", 1, 1, 20, big + 20)]
    );
}

#[test]
fn grouping_by_process_and_total() {
    let d = tmp("group");
    for pid in [10, 11] {
        let mut p = SynthProcess::new("h", pid, &["app"]);
        p.functions(&[(1, "main"), (2, "work")])
            .thread(0, pid, "main", 0)
            .thread(1, pid + 100, "worker", 0)
            .profile(
                0,
                100,
                0,
                &[(None, 1, 1, 1, 100, 40), (Some(0), 2, 1, 0, 60, 60)],
            )
            .profile(1, 100, 0, &[(None, 2, 3, 0, 50, 50)])
            .end(100, 0);
        p.write(&d).unwrap();
    }
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    let (tables, total) = m.tables(GroupBy::Process);
    assert_eq!(tables.len(), 2);
    assert_eq!(
        flat(&m, &tables[0].tree),
        vec![s("work", 4, 0, 110, 110), s("main", 1, 1, 40, 100)]
    );
    assert_eq!(
        flat(&m, &total.tree),
        vec![s("work", 8, 0, 220, 220), s("main", 2, 2, 80, 200)]
    );
    let (tables, _) = m.tables(GroupBy::Thread);
    assert_eq!(tables.len(), 4);
}

#[test]
fn phase_regions_are_found_by_name() {
    let d = tmp("phase");
    let mut p = SynthProcess::new("h", 4, &["app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .region(3, RegionKind::Phase, "iter")
        .thread(0, 4, "main", 0)
        .profile(
            0,
            100,
            0,
            &[
                (None, 1, 1, 2, 100, 20),
                (Some(0), 3, 2, 2, 50, 10),
                (Some(1), 2, 2, 0, 40, 40),
                (Some(0), 2, 1, 0, 30, 30),
            ],
        )
        .end(100, 0);
    p.write(&d).unwrap();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    // a phase is a span of time (Model::windowed); here only its name is looked up
    assert_eq!(m.regions.name(m.phase("iter").unwrap()), "iter");
    assert!(m.phase("nope").is_err());
    assert!(m.phase("work").is_err());
}

#[test]
fn mangled_names_are_demangled() {
    let d = tmp("demangle");
    let mut p = SynthProcess::new("h", 5, &["app"]);
    p.functions(&[(1, "_ZN2ns3fooEi")])
        .thread(0, 5, "main", 0)
        .profile(0, 10, 0, &[(None, 1, 1, 0, 10, 10)])
        .end(10, 0);
    p.write(&d).unwrap();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    assert_eq!(m.regions.name(1), "ns::foo(int)");
}

#[test]
fn trace_mode_profile_without_nodes_is_rebuilt_from_trace() {
    // With --trace the runtime writes ThreadProfiles without nodes: the trace holds the profile.
    let d = tmp("trace-mode");
    let mut p = SynthProcess::new("h", 7, &["app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .thread(0, 7, "main", 0)
        .profile(0, 100, 80, &[]);
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 0).enter(2, 10).exit(2, 70).exit(1, 90);
    p.chunk(0, &ev).end(100, 0);
    p.write(&d).unwrap();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let t = &m.processes[0].threads[0];
    assert_eq!(t.source, ProfileSource::Rebuilt);
    assert_eq!(
        flat(&m, &t.tree),
        vec![s("work", 1, 0, 60, 60), s("main", 1, 1, 30, 90)]
    );
    assert!((t.cpu_s.unwrap() - 80e-9).abs() < 1e-15);
    assert!((t.wall_s.unwrap() - 100e-9).abs() < 1e-15);
}
