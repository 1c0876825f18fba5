//! The index combined from per-process parts: equal to the merge pass's index on a synthetic
//! multi-process trace (3 ranks of 2 threads, messages between threads of different ranks, some
//! never received); a second open reads the parts; a damaged or stale part is rebuilt; parts
//! written beforehand (as `plx run` writes them) are read; a trace whose clock condition needs
//! repair falls back to the merge pass.

use std::path::{Path, PathBuf};

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::{tmp, TestDir};
use plx_view::api::{IndexSource, Via, Viewer};
use plx_view::part::PartsUsed;
use plx_view::store::Unusable;
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

fn parts_dir(d: &Path) -> PathBuf {
    d.join(".plx-view").join("parts")
}

fn part_files(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(parts_dir(d))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
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
    let u = used(&parts);
    assert_eq!(u.read, 0);
    assert_eq!(u.built.len(), 3);
    assert!(u.built.iter().all(|(_, why)| *why == Unusable::Missing));
    assert!(u.unsaved.is_empty());
    assert_eq!(part_files(&d).len(), 3);
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
fn a_second_open_reads_the_parts() {
    let d = ring("second");
    let first = Viewer::open(&d, None).unwrap();
    let second = Viewer::open(&d, None).unwrap();
    let u = used(&second);
    assert_eq!((u.read, u.built.len()), (3, 0));
    assert_same_index(&second.index, &first.index);
    assert_eq!(windows(&second), windows(&first));
}

#[test]
fn parts_written_before_the_first_open_are_read() {
    let d = ring("prebuilt");
    // as plx run does for its own processes once they have ended: here every process
    let done = plx_view::part::prebuild(&d, |_, _| true).unwrap();
    assert_eq!(done.written.len(), 3);
    assert!(done.failed.is_empty());
    assert_eq!(part_files(&d), {
        let mut w = done.written.clone();
        w.sort();
        w
    });
    let v = Viewer::open(&d, None).unwrap();
    let u = used(&v);
    assert_eq!((u.read, u.built.len()), (3, 0));
    let merged = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert_same_index(&v.index, &merged.index);

    // one process only (pid 1001, rank 1): the two others are built at the open
    let d = ring("prebuilt-one");
    let done = plx_view::part::prebuild(&d, |_, pid| pid == 1001).unwrap();
    assert_eq!(done.written.len(), 1);
    let v = Viewer::open(&d, None).unwrap();
    let u = used(&v);
    assert_eq!((u.read, u.built.len()), (1, 2));
    assert_same_index(&v.index, &merged.index);
}

#[test]
fn a_damaged_or_stale_part_is_rebuilt() {
    let d = ring("damaged");
    let want = Viewer::open(&d, None).unwrap();
    let want_windows = windows(&want);
    let files = part_files(&d);
    let f = &files[1];
    let good = std::fs::read(f).unwrap();

    // one byte of its data flipped
    let mut bad = good.clone();
    bad[200] ^= 0x40;
    std::fs::write(f, &bad).unwrap();
    let v = Viewer::open(&d, None).unwrap();
    let u = used(&v);
    assert_eq!(u.read, 2);
    assert_eq!(
        u.built,
        vec![(
            f.clone(),
            Unusable::Damaged("the data's checksum does not match".into())
        )]
    );
    assert_same_index(&v.index, &want.index);
    assert_eq!(windows(&v), want_windows);
    // written again: read at the next open
    assert_eq!(used(&Viewer::open(&d, None).unwrap()).read, 3);

    // cut short
    std::fs::write(f, &good[..good.len() / 3]).unwrap();
    let v = Viewer::open(&d, None).unwrap();
    let u = used(&v);
    assert_eq!(u.built.len(), 1);
    assert!(
        matches!(&u.built[0].1, Unusable::Damaged(w) if w.contains("the header says")),
        "{:?}",
        u.built
    );
    assert_eq!(windows(&v), want_windows);

    // an index file is not a part
    let _ = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    std::fs::copy(plx_view::store::path(&d, None), f).unwrap();
    std::fs::remove_file(plx_view::store::path(&d, None)).unwrap();
    let v = Viewer::open(&d, None).unwrap();
    assert_eq!(
        used(&v).built,
        vec![(f.clone(), Unusable::Damaged("no index header".into()))]
    );

    // a process's trace file touched: that process's part is stale, the others are read
    let pdir = d.join("node1.1002");
    let trace = pdir.join("trace.plx");
    let t = std::fs::File::options().write(true).open(&trace).unwrap();
    t.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(t);
    let v = Viewer::open(&d, None).unwrap();
    let u = used(&v);
    assert_eq!(u.read, 2);
    assert_eq!(
        u.built,
        vec![(plx_view::part::path(&d, "node1", 1002, 0), Unusable::Stale)]
    );
    assert_eq!(windows(&v), want_windows);
}

#[test]
fn a_fifo_as_a_part_is_not_read_but_rebuilt() {
    // opening a FIFO for reading waits for a writer: plx view hung at its open
    let d = ring("fifo");
    let want = Viewer::open(&d, None).unwrap();
    let f = part_files(&d)[2].clone();
    std::fs::remove_file(&f).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&f)
        .status()
        .unwrap()
        .success());
    let (tx, rx) = std::sync::mpsc::channel();
    let dir = d.to_path_buf();
    std::thread::spawn(move || {
        let v = Viewer::open(&dir, None).unwrap();
        let _ = tx.send((used(&v).clone(), windows(&v)));
    });
    let (u, w) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the open returned within 60 s");
    assert_eq!(u.read, 2);
    assert_eq!(
        u.built,
        vec![(
            f.clone(),
            Unusable::Damaged("cannot open: not a regular file (a FIFO)".into())
        )]
    );
    assert_eq!(w, windows(&want));
    assert!(std::fs::symlink_metadata(&f).unwrap().is_file());
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
    plx_view::part::prebuild(&d, |_, _| true).unwrap();
    let files = part_files(&d);
    let mut parts = Vec::new();
    for (f, pid) in files.iter().zip([1000, 1001, 1002]) {
        let fp = plx_view::store::process_fingerprint(&d.join(format!("node1.{pid}")), 0).unwrap();
        parts.push(plx_view::store::load_part(f, fp).unwrap());
    }
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
    let exp = plx_format::Experiment::open(&d).unwrap();
    let model = plx_analysis::Model::build(
        &exp,
        plx_analysis::BuildOptions {
            rebuild_from_trace: false,
            ..Default::default()
        },
    );
    let refs: Vec<&plx_view::part::Part> = parts.iter().collect();
    let ix = plx_view::part::combine(&model, &refs).unwrap();
    assert_eq!(ix.tracks[2].label, "1.0");
    assert_same_index(&ix, &merged.index);
}
