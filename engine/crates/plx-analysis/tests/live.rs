//! Threads of killed processes recovered from their live files: the model is the one the
//! records would have given (exact calls, child calls, inclusive and exclusive times, message
//! statistics), with the profile marked as recovered.

use std::path::Path;

use plx_analysis::messages::{mismatches, pairs};
use plx_analysis::{flat_profile, BuildOptions, CallTree, Model, ProfileSource};
use plx_format::synth::{NodeSpec, SynthProcess};
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{Direction, MessageStats, WarningKind, NONE_U32};

use plx_format::test_dir::tmp;

fn open(d: &Path) -> Model {
    Model::open(d, BuildOptions::default()).unwrap()
}

/// (name, calls, child_calls, exclusive ns, inclusive ns) of a flat profile.
fn flat(model: &Model, tree: &CallTree) -> Vec<(String, u64, u64, u64, u64)> {
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

/// main (open when killed) → solve ×2 → io ×3; main → io ×1; 1 tick = 1 ns.
const TREE: &[NodeSpec] = &[
    (None, 1, 1, 3, 0, 0),
    (Some(0), 2, 2, 3, 700, 400),
    (Some(1), 3, 3, 0, 300, 300),
    (Some(0), 3, 1, 0, 200, 200),
];

fn process(recorded: bool) -> SynthProcess {
    let mut p = SynthProcess::new("node1", 300, &["./app"]);
    p.functions(&[(1, "main"), (2, "solve"), (3, "io")])
        .thread(0, 300, "main", 1_000);
    if recorded {
        p.profile(0, 1_900, 0, TREE);
    } else {
        p.live_nodes(0, TREE);
    }
    p
}

#[test]
fn recovered_profile_is_the_one_the_record_would_give() {
    let d = tmp("tree");
    process(false).write(&d).unwrap();
    let m = open(&d);
    let t = &m.processes[0].threads[0];
    assert_eq!(t.source, ProfileSource::Recovered);
    let expected = vec![
        s("io", 4, 0, 500, 500),
        s("solve", 2, 3, 400, 700),
        s("main", 1, 3, 0, 0),
    ];
    assert_eq!(flat(&m, &t.tree), expected);
    // end: the start plus the time the tree accounts for (nothing later is known)
    assert!((t.wall_s.unwrap() - 900e-9).abs() < 1e-15);
    assert_eq!((t.cpu_s, t.trace_events), (None, None));
    assert!(m.processes[0].end.is_none());
    assert!(m.warnings.iter().any(|w| w.kind == WarningKind::Recovered
        && w.message == "thread 0: profile recovered from live.0.nodes (the process was killed before writing it)"));

    // the same tree written as a record
    let d = tmp("tree-recorded");
    process(true).write(&d).unwrap();
    let r = open(&d);
    let rt = &r.processes[0].threads[0];
    assert_eq!(rt.source, ProfileSource::Recorded);
    assert_eq!(flat(&r, &rt.tree), expected);
    assert_eq!(rt.wall_s, t.wall_s);
}

/// Ranks 0 and 1, 3 iterations of a ping-pong (8 and 16 bytes) and an allreduce; with
/// `killed`, rank 1 is killed after its last op and leaves its live files.
fn world(trace: bool, killed: bool) -> MpiWorld {
    let mut w = MpiWorld::new(2);
    w.trace = trace;
    for i in 0..3u64 {
        let t = 10_000 + i * 10_000;
        w.message(&Msg::new((0, 0), (1, 0), 8, t, t + 1_000).durations(100, 400));
        w.message(&Msg::new((1, 0), (0, 0), 16, t + 2_000, t + 3_000).durations(100, 400));
    }
    for r in 0..2 {
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, 50_000, 51_000);
    }
    if killed {
        w.ranks[1].crashed_at = Some(60_000);
        w.ranks[1].live_files = true;
    }
    w
}

#[test]
fn recovered_message_statistics_give_the_same_pairs() {
    let d = tmp("mpi-finished");
    world(false, false).write(&d).unwrap();
    let done = open(&d);
    let d = tmp("mpi-killed");
    world(false, true).write(&d).unwrap();
    let killed = open(&d);
    for side in [Direction::Sent, Direction::Received] {
        assert_eq!(pairs(&killed, side, false), pairs(&done, side, false));
    }
    assert_eq!(mismatches(&killed), vec![]);
    let (t, td) = (
        &killed.processes[1].threads[0],
        &done.processes[1].threads[0],
    );
    assert_eq!(t.source, ProfileSource::Recovered);
    assert_eq!(t.messages, td.messages);
    // the MPI routines' rows are exact; main was open at the kill: no time
    let routines = |m: &Model, tree: &CallTree| {
        let mut rows = flat(m, tree);
        rows.retain(|r| r.0 != "main");
        rows
    };
    assert_eq!(routines(&killed, &t.tree), routines(&done, &td.tree));
    assert_eq!(routines(&killed, &t.tree).len(), 3);
    assert!(flat(&killed, &t.tree).contains(&s("main", 1, 7, 0, 0)));
    let recovered: Vec<&str> = killed
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Recovered)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        recovered,
        vec![
            "thread 0: MPI message statistics recovered from live.0.mpi (the process was killed before writing them)",
            "thread 0: profile recovered from live.0.nodes (the process was killed before writing it)",
        ]
    );

    // without its tree the thread has no profile, yet its messages count
    std::fs::remove_file(d.join("node1.1001/live.0.nodes")).unwrap();
    let no_tree = open(&d);
    assert_eq!(no_tree.processes[1].threads[0].source, ProfileSource::None);
    assert_eq!(
        pairs(&no_tree, Direction::Sent, false),
        pairs(&done, Direction::Sent, false)
    );
}

#[test]
fn traced_rank_takes_its_messages_from_the_live_file() {
    // trace mode keeps no tree: the profile is rebuilt from the trace, but the message
    // statistics of the live file are exact where the trace may miss the last buffer
    let d = tmp("mpi-trace");
    let w = world(true, true);
    w.write(&d).unwrap();
    let mut p = w.process(1);
    let send = p
        .records
        .iter()
        .find_map(|r| match r {
            plx_format::Record::RegionDef(def) if def.name == "MPI_Send" => Some(def.region_id),
            _ => None,
        })
        .unwrap();
    let stats = MessageStats {
        thread: 0,
        region: send,
        peer: 0,
        direction: Direction::Sent,
        comm: 0,
        count: 5,
        bytes: 80,
        min_bytes: 16,
        max_bytes: 16,
    };
    p.live_mpi(0, &[stats]).write(&d).unwrap();
    assert!(!d.join("node1.1001/live.0.nodes").exists());
    let m = open(&d);
    let t = &m.processes[1].threads[0];
    assert_eq!(t.source, ProfileSource::Rebuilt);
    assert_eq!(t.messages.len(), 1);
    assert_eq!((t.messages[0].count, t.messages[0].bytes), (5, 80));
}
