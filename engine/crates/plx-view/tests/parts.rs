//! The index combined from per-process parts built from each thread decoded alone: equal to the
//! merge pass's index on a synthetic multi-process trace (3 ranks of 2 threads, messages between
//! threads of different ranks, some never received); each part equal to the one the merge of its
//! process gives (lock hand-offs between 3 threads with ties in time, user events, a killed
//! process with calls still open); messages on communicators no CommDef names matched as the
//! merge matches them; nothing written beside the trace; a region without a
//! definition takes its process's merge; a trace whose clock condition needs repair falls back
//! to the merge pass.

use std::path::Path;

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::{tmp, TestDir};
use plx_view::api::{IndexSource, Via, Viewer};
use plx_view::part::PartsUsed;
use plx_view::TraceIndex;

const MESSAGES: u64 = 900;

/// 3 ranks of 2 threads: message k goes from rank k % 3 (thread k % 2) to the next rank (thread
/// (k / 2) % 2), tag k % 4, sent at 1000·(k+1) ns and received `latency(k)` later; every 50th
/// is never received (its receive would be the one of a send that is not there).
fn experiment(name: &str, latency: impl Fn(u64) -> i64) -> TestDir {
    let d = tmp(&format!("view-parts-{name}"));
    let mut w = MpiWorld::new(3);
    w.trace = true;
    w.chunk_ops = 64;
    // a routine of rank 0 alone
    w.op((0, 0), "MPI_Probe", 10, 20, None);
    for k in 0..MESSAGES {
        let (from, to) = ((k % 3) as u32, ((k + 1) % 3) as u32);
        let send = 1000 * (k + 1);
        let recv = (send as i64 + latency(k)) as u64;
        let m = Msg::new(
            (from, (k % 2) as u32),
            (to, ((k / 2) % 2) as u32),
            8 * (k + 1),
            send,
            recv,
        )
        .tag((k % 4) as i32)
        .durations(100, 200);
        if k % 50 == 49 {
            // only the send
            w.op(
                m.from,
                "MPI_Send",
                send,
                send + 100,
                Some(plx_format::Event::Send {
                    peer: to,
                    tag: 99,
                    bytes: 1,
                    comm: 0,
                    ticks: send,
                }),
            );
        } else {
            w.message(&m);
        }
    }
    w.write(&d).unwrap();
    d
}

fn ring(name: &str) -> TestDir {
    experiment(name, |k| 300 + 7 * (k % 5) as i64)
}

#[path = "fixtures/windows.rs"]
mod windows_fixture;
use windows_fixture::windows;

fn assert_same_index(a: &TraceIndex, b: &TraceIndex) {
    assert_eq!(a.events, b.events);
    assert_eq!((a.origin, a.end), (b.origin, b.end));
    assert_eq!(a.messages, b.messages);
    assert_eq!(a.pairs, b.pairs);
    assert_eq!(&a.unmatched[..], &b.unmatched[..]);
    assert_eq!(a.handoffs, b.handoffs);
    assert_eq!(
        (a.max_latency, a.min_latency, a.max_handoff),
        (b.max_latency, b.min_latency, b.max_handoff)
    );
    assert_eq!(a.regions.all(), b.regions.all());
    assert_eq!(a.user_events, b.user_events);
    assert_eq!(a.tracks.len(), b.tracks.len());
    for (x, y) in a.tracks.iter().zip(&b.tracks) {
        assert_eq!(
            (&x.label, &x.host, x.process, x.thread, x.rank, x.pid, &x.name),
            (&y.label, &y.host, y.process, y.thread, y.rank, y.pid, &y.name)
        );
        assert_eq!(x.lanes, y.lanes, "track {}", x.label);
        assert_eq!(x.markers, y.markers);
    }
}

fn used(v: &Viewer) -> &PartsUsed {
    match &v.source {
        IndexSource::Parts(u) => u,
        other => panic!("not combined from parts: {other:?}"),
    }
}

#[test]
fn the_index_from_parts_equals_the_merge_pass_index() {
    let d = ring("equal");
    let parts = Viewer::open(&d, None).unwrap();
    assert_eq!(
        used(&parts),
        &PartsUsed {
            processes: 3,
            threads: 6,
            merged: 0
        }
    );
    // no merge pass: no index file
    assert!(!plx_view::store::path(&d, None).exists());

    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert!(matches!(merged.source, IndexSource::Built { .. }));
    let (a, b) = (&parts.index, &merged.index);
    assert_eq!(a.tracks.len(), 6);
    // 18 matched messages of 900 are only sends: 882 received, 18 unmatched
    assert_eq!(a.messages.len(), MESSAGES as usize);
    assert_eq!(a.messages.iter().filter(|m| m.recv.is_some()).count(), 882);
    assert_eq!(a.unmatched.len(), 18);
    // 900 sends and 882 receives, each an enter, the event and an exit; `main` entered and
    // left on each of the 6 threads; MPI_Probe on rank 0
    assert_eq!(a.events, 3 * (900 + 882) + 2 * 6 + 2);
    assert_same_index(a, b);
    assert_eq!(windows(&parts), windows(&merged));
    assert_eq!(parts.meta(), merged.meta());
    assert_eq!(parts.stats(5000, 400_000), merged.stats(5000, 400_000));
    assert_eq!(parts.region(1, 0, 7), merged.region(1, 0, 7));
}

#[test]
fn opening_writes_nothing_beside_the_trace() {
    // the parts used to be written at the open (and by plx run): 1.8 times the trace's size
    let d = ring("nothing-written");
    let before = std::fs::read_dir(&*d).unwrap().count();
    let first = Viewer::open(&d, None).unwrap();
    assert!(!d.join(".plx-view").exists());
    assert_eq!(std::fs::read_dir(&*d).unwrap().count(), before);
    let second = Viewer::open(&d, None).unwrap();
    assert_same_index(&second.index, &first.index);
    assert_eq!(windows(&second), windows(&first));
}

fn model_of(d: &Path) -> (plx_format::Experiment, plx_analysis::Model) {
    let exp = plx_format::Experiment::open(d).unwrap();
    let model = plx_analysis::Model::build(
        &exp,
        plx_analysis::BuildOptions {
            rebuild_from_trace: false,
            ..Default::default()
        },
    );
    (exp, model)
}

/// Each image's part from its threads decoded alone, and from the merge of its process.
fn both_parts(d: &Path) -> Vec<(plx_view::part::Part, plx_view::part::Part)> {
    let (exp, model) = model_of(d);
    let images: Vec<usize> = (0..exp.images.len()).collect();
    plx_view::part::build_all(&exp, &model, &images)
        .into_iter()
        .zip(&images)
        .filter_map(|(alone, &i)| {
            let merged = plx_view::part::build_merged(&exp, &model, i).unwrap();
            match (alone.unwrap(), merged) {
                (Some(a), Some(m)) => Some((a, m)),
                (None, None) => None,
                (a, m) => panic!("image {i}: {a:?} against {m:?}"),
            }
        })
        .collect()
}

/// Process 60: 3 threads taking one mutex in turn 300 times (most of it past the first batch the
/// merge decodes before it is split), releases and acquisitions of different
/// threads at the same ns (the merge orders them by ticks, then thread), a user event; process 61: killed (no end) with `main` and `work` still open on its 2 threads.
fn locks(d: &Path) {
    use plx_format::records::{Record, UserEventDef};
    use plx_format::synth::SynthProcess;
    use plx_format::{EventEncoder, NamedBy, SyncKind, NONE_U32};
    let mut p = SynthProcess::new("host", 60, &["/bin/locks"]);
    p.functions(&[(1, "main"), (2, "worker"), (3, "locked")])
        .thread(0, 60, "main", 0)
        .thread(1, 61, "w1", 0)
        .thread(2, 62, "w2", 0)
        .sync_object(0, SyncKind::Mutex, NamedBy::Init, NONE_U32, 0x4000)
        .record(Record::UserEventDef(UserEventDef {
            event_id: 5,
            name: "queue".into(),
        }));
    // thread t holds the lock in rounds r ≡ t (mod 3), from 100·r + 10 to 100·r + 110, where
    // the next holder's acquisition is, at the release's very ns
    let mut enc: Vec<EventEncoder> = (0..3).map(|_| EventEncoder::new(0)).collect();
    for (t, e) in enc.iter_mut().enumerate() {
        e.enter(if t == 0 { 1 } else { 2 }, 0);
    }
    for r in 0..300u64 {
        let t = (r % 3) as usize;
        let at = 100 * r + 10;
        enc[t]
            .acquire(0, 0, if r == 0 { 0 } else { 20 }, at)
            .enter(3, at)
            .user(5, r as f64, at + 1)
            .exit(3, at + 90)
            .release(0, 0, at + 100);
    }
    for (t, e) in enc.iter_mut().enumerate() {
        e.exit(if t == 0 { 1 } else { 2 }, 50_000);
    }
    for (t, e) in enc.iter().enumerate() {
        p.chunk(t as u32, e);
    }
    p.end(50_000, 0);
    p.write(d).unwrap();

    let mut k = SynthProcess::new("host", 61, &["/bin/killed"]);
    k.functions(&[(1, "main"), (2, "work")])
        .thread(0, 61, "main", 0)
        .thread(1, 63, "t1", 0);
    let mut m = EventEncoder::new(0);
    m.enter(1, 5).enter(2, 10).exit(2, 20).enter(2, 30);
    let mut w = EventEncoder::new(0);
    w.enter(2, 7).enter(2, 8).exit(2, 400);
    k.chunk(0, &m).chunk(1, &w);
    k.write(d).unwrap();
}

#[test]
fn each_thread_decoded_alone_gives_the_part_of_its_process_merge() {
    let d = tmp("view-parts-alone");
    locks(&d);
    let parts = both_parts(&d);
    assert_eq!(parts.len(), 2);
    for (alone, merged) in &parts {
        assert_eq!(alone, merged, "{}.{}", alone.host, alone.pid);
    }
    let (locks, killed) = (&parts[0].0, &parts[1].0);
    // at a tie the merge gives the thread of the lower number first: the release comes before
    // the acquisition from thread 0 to 1 and from 1 to 2, and after it from 2 to 0, where the
    // acquisition pairs with the release of the round before (thread 1's)
    let pairs: Vec<(u32, u32, i64)> = locks
        .handoffs
        .iter()
        .map(|h| (h.from, h.to, h.acquire - h.release))
        .collect();
    assert_eq!(pairs.len(), 299);
    for (i, p) in pairs.iter().enumerate() {
        let want = match i % 3 {
            0 => (0, 1, 0),
            1 => (1, 2, 0),
            _ => (1, 0, 100),
        };
        assert_eq!(*p, want, "hand-off {i}");
    }
    // 300 values of the user event, 100 on each thread
    let markers: Vec<usize> = locks.tracks.iter().map(|t| t.markers.len()).collect();
    assert_eq!(markers, [100, 100, 100]);
    // the killed process's open calls closed at its latest event (400 ns)
    let outer = &killed.tracks[0].lanes[0];
    assert_eq!((outer.start.get(0), outer.end.get(0)), (5, 400));
    let v = Viewer::open(&d, None).unwrap();
    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert_same_index(&v.index, &merged.index);
    assert_eq!(windows(&v), windows(&merged));
}

#[test]
fn a_thread_with_damage_decodes_alone_as_its_merge_does() {
    use plx_format::event::extended_word;
    use plx_format::synth::SynthProcess;
    use plx_format::EventEncoder;
    let d = tmp("view-parts-damage");
    let mut p = SynthProcess::new("host", 80, &["/bin/damaged"]);
    p.functions(&[(1, "main"), (2, "step")])
        .thread(0, 80, "main", 0)
        .thread(1, 81, "t1", 0);
    // 300 calls of step (past the first batch the merge decodes before it is split: what follows
    // is read by the streams' own loop), a time reset back (after 20,000 ns to 5: the thread's
    // time does not go back, the enter is taken at 20,000), an unknown word, then an extended
    // event whose 5 payload words are missing
    let mut m = EventEncoder::new(0);
    m.enter(1, 0);
    for k in 0..300 {
        m.enter(2, 10 + 60 * k).exit(2, 40 + 60 * k);
    }
    m.enter(2, 19_990)
        .exit(2, 20_000)
        .enter(2, 5)
        .exit(2, 20_030)
        .raw(&[3 << 62])
        .exit(1, 20_040)
        .raw(&[extended_word(9, 5, 1)]);
    let mut w = EventEncoder::new(0);
    w.enter(1, 3).exit(1, 60);
    p.chunk(0, &m).chunk(1, &w).end(20_040, 0);
    p.write(&d).unwrap();
    let parts = both_parts(&d);
    assert_eq!(parts.len(), 1);
    let (alone, merged) = &parts[0];
    assert_eq!(alone, merged);
    let lanes = &alone.tracks[0].lanes;
    assert_eq!((lanes[0].start.get(0), lanes[0].end.get(0)), (0, 20_040));
    let steps: Vec<(i64, i64)> = (299..302)
        .map(|i| (lanes[1].start.get(i), lanes[1].end.get(i)))
        .collect();
    assert_eq!(
        steps,
        [(17_950, 17_980), (19_990, 20_000), (20_000, 20_030)]
    );
    // the enters and exits; the time reset, the unknown word and the cut event are no events
    assert_eq!(alone.events, 2 + 2 * 302 + 2);
}

#[test]
fn a_region_without_a_definition_takes_the_merge_of_its_process() {
    use plx_format::synth::SynthProcess;
    use plx_format::EventEncoder;
    let d = tmp("view-parts-undefined");
    let mut p = SynthProcess::new("host", 70, &["/bin/undefined"]);
    p.functions(&[(1, "main")]).thread(0, 70, "main", 0);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(77, 10)
        .exit(77, 20)
        .enter(78, 30)
        .user(9, 2.5, 35)
        .exit(78, 40)
        .exit(1, 50);
    p.chunk(0, &e).end(50, 0);
    p.write(&d).unwrap();
    let v = Viewer::open(&d, None).unwrap();
    assert_eq!(
        used(&v),
        &PartsUsed {
            processes: 1,
            threads: 1,
            merged: 1
        }
    );
    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert_same_index(&v.index, &merged.index);
    let names: Vec<&str> = v
        .index
        .regions
        .all()
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert!(names.ends_with(&["region 77", "region 78"]), "{names:?}");
    assert_eq!(v.index.user_events, ["event 9"]);
}

#[test]
fn a_receive_before_its_send_needs_the_merge_pass() {
    // message 10 is received 50 ns before it was sent: the merge moves it and the rest of its
    // process, which per-process parts cannot
    let d = experiment("clock", |k| if k == 10 { -50 } else { 400 });
    let v = Viewer::open(&d, None).unwrap();
    match &v.source {
        IndexSource::Built { merged, .. } => {
            let why = merged.as_deref().unwrap();
            assert!(
                why.contains("from rank 1 to rank 2") && why.contains("clock condition"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    // the merge pass's index is written and read from then on
    assert!(matches!(
        Viewer::open(&d, None).unwrap().source,
        IndexSource::Stored(_)
    ));
    // the repaired receive is after its send
    assert!(v
        .index
        .messages
        .iter()
        .all(|m| m.recv.is_none_or(|r| r > m.send)));
}

#[test]
fn a_part_numbering_its_regions_otherwise_is_renumbered() {
    let d = ring("renumbered");
    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    let (exp, model) = model_of(&d);
    let mut parts: Vec<plx_view::part::Part> = plx_view::part::build_all(&exp, &model, &[0, 1, 2])
        .into_iter()
        .map(|p| p.unwrap().unwrap())
        .collect();
    // rank 1's table in reverse order, its lanes' regions renumbered to match
    let p1 = &mut parts[1];
    let n = p1.regions.len() as u32;
    p1.regions.reverse();
    for t in &mut p1.tracks {
        for lane in &mut t.lanes {
            let region: Vec<u32> = lane.region.iter().map(|&r| n - 1 - r).collect();
            lane.region = region.into();
        }
    }
    let ix = plx_view::part::combine(&model, parts).unwrap();
    assert_eq!(ix.tracks[2].label, "1.0");
    assert_same_index(&ix, &merged.index);
}

#[test]
fn messages_on_communicators_without_a_definition_are_matched_from_the_parts() {
    // 40 messages on local id 5 and 40 on 700, which no CommDef names: the merge keys them
    // by their local ids (every one matched), and so must the parts
    let d = tmp("view-parts-undefined-comm");
    let mut w = MpiWorld::new(2);
    w.trace = true;
    for k in 0..80u64 {
        let comm = if k < 40 { (5, 5) } else { (700, 700) };
        let send = 1000 * (k + 1);
        w.message(
            &Msg::new((0, 0), (1, 0), 8, send, send + 300)
                .comm(comm.0, comm.1)
                .durations(100, 200),
        );
    }
    w.write(&d).unwrap();
    let parts = Viewer::open(&d, None).unwrap();
    assert_eq!(
        used(&parts),
        &PartsUsed {
            processes: 2,
            threads: 2,
            merged: 0
        }
    );
    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    let (a, b) = (&parts.index, &merged.index);
    assert_eq!(a.messages.len(), 80);
    assert_eq!(b.messages.iter().filter(|m| m.recv.is_some()).count(), 80);
    assert_same_index(a, b);
}
