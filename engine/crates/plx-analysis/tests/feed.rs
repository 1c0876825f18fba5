//! The merge on several threads (its read-ahead, `GlobalMerge::feed`) gives the stream of one
//! thread: the same events in the same order, the same names, clock report, warnings and
//! counters, and a feed that stops at a time stops the merge where a loop breaking there would.

use std::path::Path;

use plx_analysis::{ClockReport, EventKind, GlobalEvent, GlobalMerge, MergeOptions, Model};
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::{tmp, TestDir};
use plx_format::{Experiment, Warning, NONE_U32};

/// 12 ranks of two threads in small chunks (a batch per chunk), messages around rings of
/// threads; every fifth message received 3 µs before it was sent (the repair shifts its
/// receiver); rank 5 dies before its last receives (unmatched sends, warnings).
fn world(d: &Path) {
    let n = 12u32;
    let mut w = MpiWorld::new(n);
    w.trace = true;
    w.chunk_ops = 2;
    let mut t = 50_000u64;
    for k in 0..20u64 {
        for r in 0..n {
            let th = (k % 2) as u32;
            let send = t + r as u64 * 53;
            let recv = if (k + r as u64) % 5 == 0 {
                send - 3_000
            } else {
                send + 4_000 + r as u64 * 7
            };
            let m = Msg::new((r, th), ((r + 1 + th) % n, th), 256, send, recv)
                .tag((k % 4) as i32)
                .durations(200, 1_000);
            w.message(&m);
        }
        t += 15_000;
    }
    for r in 0..n {
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, t, t + 4_000);
    }
    w.ranks[5].crashed_at = Some(t - 40_000);
    w.write(d).unwrap();
}

#[path = "fixtures/open.rs"]
mod open_fixture;
use open_fixture::open;

/// What a consumer sees: the events, each enter's and exit's region name as named when it
/// came, and afterwards the merge's clock report, warnings and event count.
#[derive(Debug, PartialEq)]
struct Seen {
    events: Vec<GlobalEvent>,
    names: Vec<String>,
    clock: Option<ClockReport>,
    warnings: Vec<Warning>,
    counted: u64,
}

fn name(kind: &EventKind, regions: &plx_analysis::RegionTable) -> Option<String> {
    match *kind {
        EventKind::Enter { region } | EventKind::Exit { region } => {
            Some(regions.name(region).to_string())
        }
        _ => None,
    }
}

/// The stream pulled with `next_event`, up to and including the first event at or after `until`.
fn pulled(exp: &Experiment, model: &Model, until: Option<i64>) -> Seen {
    let mut m = GlobalMerge::new(model, exp, MergeOptions::default()).unwrap();
    let (mut events, mut names) = (Vec::new(), Vec::new());
    while let Some(e) = m.next_event() {
        events.push(e);
        names.extend(name(&e.kind, m.regions()));
        if until.is_some_and(|u| e.time_ns >= u) {
            break;
        }
    }
    Seen {
        events,
        names,
        clock: m.clock_report(),
        warnings: m.warnings().to_vec(),
        counted: m.stats().events,
    }
}

/// The stream through `GlobalMerge::feed`.
fn fed(exp: &Experiment, model: &Model, until: Option<i64>) -> Seen {
    let m = GlobalMerge::new(model, exp, MergeOptions::default()).unwrap();
    let (m, (events, names)) = m.feed(until, |feed| {
        let (mut events, mut names) = (Vec::new(), Vec::new());
        while let Some(e) = feed.next_event() {
            events.push(e);
            names.extend(name(&e.kind, feed.regions()));
        }
        assert_eq!(feed.events(), events.len() as u64);
        (events, names)
    });
    Seen {
        events,
        names,
        clock: m.clock_report(),
        warnings: m.warnings().to_vec(),
        counted: m.stats().events,
    }
}

/// The world in a fresh directory named `name` (removed when the first item is dropped), its
/// whole stream on one thread, and the time of its middle event.
fn world_and_middle(name: &str) -> (TestDir, Experiment, Model, Seen, i64) {
    let d = tmp(name);
    world(&d);
    let (exp, model) = open(&d);
    let all = on_threads(1, || pulled(&exp, &model, None));
    let mid = all.events[all.events.len() / 2].time_ns;
    (d, exp, model, all, mid)
}

fn on_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn the_merged_stream_is_the_same_on_any_number_of_threads() {
    let d = tmp("feed-threads");
    world(&d);
    let (exp, model) = open(&d);
    let one = on_threads(1, || pulled(&exp, &model, None));
    let clock = one.clock.unwrap();
    assert!(
        clock.shifted_receives > 0,
        "the repair moved receives: {clock:?}"
    );
    assert!(
        !one.warnings.is_empty(),
        "rank 5's unmatched sends are warned about"
    );
    assert_eq!(one.counted, one.events.len() as u64);
    assert!(one.names.iter().any(|n| n == "MPI_Allreduce"));
    for threads in [1, 2, 4] {
        assert!(
            on_threads(threads, || pulled(&exp, &model, None)) == one,
            "pulled on {threads} threads (read ahead with more than one)"
        );
        assert!(
            on_threads(threads, || fed(&exp, &model, None)) == one,
            "fed on {threads} threads"
        );
    }
}

#[test]
fn a_feed_until_a_time_stops_where_a_loop_breaking_there_does() {
    let (_dir, exp, model, all, mid) = world_and_middle("feed-until");
    let first_after = all.events.iter().position(|e| e.time_ns >= mid).unwrap();
    let part = on_threads(1, || pulled(&exp, &model, Some(mid)));
    assert_eq!(part.events, all.events[..=first_after]);
    assert_eq!(part.counted, first_after as u64 + 1);
    for threads in [1, 2, 3] {
        assert!(
            on_threads(threads, || fed(&exp, &model, Some(mid))) == part,
            "fed until {mid} on {threads} threads"
        );
    }
}

/// An event without its message link (a replay links none), its region by name.
fn unlinked(e: &GlobalEvent, regions: &plx_analysis::RegionTable) -> (i64, u32, String) {
    let kind = match e.kind {
        EventKind::Send {
            peer,
            tag,
            bytes,
            comm,
            ..
        } => format!("send {peer} {tag} {bytes} {comm:?}"),
        EventKind::Recv {
            peer,
            tag,
            bytes,
            comm,
            ..
        } => format!("recv {peer} {tag} {bytes} {comm:?}"),
        ref k => match name(k, regions) {
            Some(n) => format!(
                "{} {n}",
                if matches!(k, EventKind::Enter { .. }) {
                    "enter"
                } else {
                    "exit"
                }
            ),
            None => format!("{k:?}"),
        },
    };
    (e.time_ns, e.location, kind)
}

#[test]
fn each_location_replayed_alone_is_what_the_merge_gave_it() {
    let (_dir, exp, model, all, mid) = world_and_middle("feed-replay");
    for until in [None, Some(mid)] {
        for threads in [1, 2] {
            on_threads(threads, || {
                // the first pass, keeping its plan (fed: the merge on its own thread with 2)
                let mut m = GlobalMerge::new(&model, &exp, MergeOptions::default()).unwrap();
                m.keep_replay_plan();
                let mut given = Vec::new();
                let (mut m, ()) = m.feed(until, |feed| {
                    while let Some(e) = feed.next_event() {
                        given.push(unlinked(&e, feed.regions()));
                        if until.is_some_and(|u| e.time_ns >= u) {
                            break;
                        }
                    }
                });
                let plan = m.take_replay_plan();
                assert!(
                    m.clock_report().unwrap().shifted_receives > 0,
                    "the repair shifted receives before the stop"
                );
                // each location alone, from a fresh merge
                let mut r = GlobalMerge::new(&model, &exp, MergeOptions::default()).unwrap();
                let mut replayed = Vec::new();
                for li in 0..r.locations().len() as u32 {
                    let mut events = Vec::new();
                    r.replay_location(li, &plan, |e| events.push(e));
                    replayed.extend(events.iter().map(|e| unlinked(e, r.regions())));
                }
                let mut by_location = given.clone();
                by_location.sort_by_key(|e| e.1); // stable: each location's order kept
                assert_eq!(replayed, by_location, "until {until:?}, {threads} threads");
                assert_eq!(
                    replayed.len(),
                    if until.is_some() {
                        all.events.iter().position(|e| e.time_ns >= mid).unwrap() + 1
                    } else {
                        all.events.len()
                    }
                );
            });
        }
    }
}
