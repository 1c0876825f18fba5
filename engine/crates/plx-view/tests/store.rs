//! The on-disk index: a second open reads it and answers every window as the merge pass's
//! index does; a damaged, truncated or stale index is rebuilt.

use std::path::{Path, PathBuf};

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::{tmp, TestDir};
use plx_view::api::{IndexSource, Via, Viewer};
use plx_view::store::Unusable;

/// 3 ranks in a ring: 600 messages of growing size, sends 100 ns, receives 200 ns.
fn experiment(name: &str) -> TestDir {
    let d = tmp(&format!("view-store-{name}"));
    let mut w = MpiWorld::new(3);
    w.trace = true;
    w.chunk_ops = 100;
    for k in 0..600u64 {
        let (from, to) = ((k % 3) as u32, ((k + 1) % 3) as u32);
        let send = 1000 * (k + 1);
        w.message(
            &Msg::new(
                (from, 0),
                (to, 0),
                8 * (k + 1),
                send,
                send + 300 + 7 * (k % 5),
            )
            .durations(100, 200),
        );
    }
    w.write(&d).unwrap();
    d
}

fn index_file(d: &Path) -> PathBuf {
    plx_view::store::path(d, None)
}

#[path = "fixtures/windows.rs"]
mod windows_fixture;
use windows_fixture::windows;

#[test]
fn a_second_open_reads_the_index_and_answers_the_same_windows() {
    let d = experiment("same");
    let first = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert!(matches!(
        &first.source,
        IndexSource::Built {
            unusable: Unusable::Missing,
            unsaved: None,
            ..
        }
    ));
    assert!(index_file(&d).is_file());
    let second = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert_eq!(second.source, IndexSource::Stored(index_file(&d)));
    assert_eq!(second.index.events, first.index.events);
    assert_eq!(second.index.messages, first.index.messages);
    assert_eq!(second.index.messages.len(), 600);
    assert_eq!(second.index.pairs, first.index.pairs);
    assert_eq!(second.index.pairs.len(), 3);
    for (a, b) in second.index.tracks.iter().zip(&first.index.tracks) {
        assert_eq!(a.lanes, b.lanes);
        assert_eq!(a.label, b.label);
    }
    assert_eq!(second.meta(), first.meta());
    let (a, b) = (windows(&first), windows(&second));
    assert_eq!(a, b);
    // the whole window bundles all 600 messages when only 10 may be drawn one by one
    let whole: serde_json::Value = serde_json::from_str(&b[1]).unwrap();
    assert_eq!(whole["messages"]["total"], 600);
    let bundled: u64 = whole["messages"]["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[3].as_u64().unwrap())
        .sum();
    assert_eq!(bundled, 600);
    assert_eq!(second.region(1, 1, 5), first.region(1, 1, 5));
    assert_eq!(second.stats(5000, 90_000), first.stats(5000, 90_000));
}

fn reopened_because(d: &Path) -> (Unusable, Viewer) {
    let v = Viewer::open_with(d, None, Via::MergePass).unwrap();
    match &v.source {
        IndexSource::Built {
            unusable, unsaved, ..
        } => {
            assert_eq!(unsaved, &None);
            (unusable.clone(), v)
        }
        other => panic!("index used: {other:?}"),
    }
}

#[test]
fn a_damaged_truncated_or_stale_index_is_rebuilt() {
    let d = experiment("damaged");
    let want = windows(&Viewer::open_with(&d, None, Via::MergePass).unwrap());
    let f = index_file(&d);
    let good = std::fs::read(&f).unwrap();

    // one byte of a lane's data flipped
    let mut bad = good.clone();
    bad[200] ^= 0x40;
    std::fs::write(&f, &bad).unwrap();
    let (why, v) = reopened_because(&d);
    assert_eq!(
        why,
        Unusable::Damaged("the data's checksum does not match".into())
    );
    assert_eq!(windows(&v), want);
    // the rebuilt index was written again and is used
    assert!(matches!(
        Viewer::open_with(&d, None, Via::MergePass).unwrap().source,
        IndexSource::Stored(_)
    ));

    // cut short: the header's length is not the file's
    std::fs::write(&f, &good[..good.len() / 2]).unwrap();
    let (why, v) = reopened_because(&d);
    assert!(
        matches!(&why, Unusable::Damaged(w) if w.contains("the header says")),
        "{why:?}"
    );
    assert_eq!(windows(&v), want);

    // not an index at all
    std::fs::write(&f, b"hello").unwrap();
    let (why, _) = reopened_because(&d);
    assert_eq!(why, Unusable::Damaged("no index header".into()));

    // the experiment changed since (a trace file touched): stale
    let trace = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir() && e.file_name() != ".plx-view")
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .find(|e| e.file_name().to_string_lossy().starts_with("trace"))
        .unwrap()
        .path();
    let t = std::fs::File::options().write(true).open(&trace).unwrap();
    t.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(t);
    let (why, v) = reopened_because(&d);
    assert_eq!(why, Unusable::Stale);
    assert_eq!(windows(&v), want);
}

#[test]
fn a_consistent_looking_index_with_an_index_out_of_range_is_refused() {
    let d = experiment("range");
    let _ = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    let f = index_file(&d);
    let mut b = std::fs::read(&f).unwrap();
    // rewrite the meta so the first lane's regions point past the region table, with checksums
    // recomputed: only the range checks can catch it
    let meta_off = u64::from_le_bytes(b[32..40].try_into().unwrap()) as usize;
    let mut meta: serde_json::Value = serde_json::from_slice(&b[meta_off..]).unwrap();
    let regions = meta["regions"].as_array_mut().unwrap();
    regions.truncate(1);
    let text = meta.to_string();
    b.truncate(meta_off);
    b.extend_from_slice(text.as_bytes());
    let len = b.len() as u64;
    b[24..32].copy_from_slice(&len.to_le_bytes());
    b[40..48].copy_from_slice(&(text.len() as u64).to_le_bytes());
    b[48..52].copy_from_slice(&crc32fast::hash(text.as_bytes()).to_le_bytes());
    std::fs::write(&f, &b).unwrap();
    let (why, v) = reopened_because(&d);
    assert!(
        matches!(&why, Unusable::Damaged(w) if w.contains("region") && w.contains("out of range")),
        "{why:?}"
    );
    assert!(v.index.regions.all().len() > 1);
}

/// `open` on another thread, failing the test if it has not returned within a minute (a FIFO
/// opened for reading waits for a writer forever).
fn open_bounded(d: &Path) -> Viewer {
    let (tx, rx) = std::sync::mpsc::channel();
    let dir = d.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(reopened_because(&dir));
    });
    let (why, v) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the open returned within 60 s");
    assert!(matches!(&why, Unusable::Damaged(_)), "{why:?}");
    v
}

#[test]
fn a_fifo_or_a_symbolic_link_as_the_index_is_not_read_but_replaced() {
    let d = experiment("fifo");
    let want = windows(&Viewer::open_with(&d, None, Via::MergePass).unwrap());
    let f = index_file(&d);
    std::fs::remove_file(&f).unwrap();
    let st = std::process::Command::new("mkfifo")
        .arg(&f)
        .status()
        .unwrap();
    assert!(st.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let dir = d.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(reopened_because(&dir).0);
    });
    let why = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the open returned within 60 s");
    assert_eq!(
        why,
        Unusable::Damaged("cannot open: not a regular file (a FIFO)".into())
    );
    // the rebuilt index took the FIFO's place
    assert!(std::fs::symlink_metadata(&f).unwrap().is_file());

    // a symbolic link to a good index (another experiment's, say) is not followed
    let good = f.with_file_name("elsewhere.bin");
    std::fs::rename(&f, &good).unwrap();
    std::os::unix::fs::symlink(&good, &f).unwrap();
    let v = open_bounded(&d);
    assert!(matches!(
        &v.source,
        IndexSource::Built { unusable: Unusable::Damaged(w), .. } if w == "a symbolic link, not followed"
    ));
    assert_eq!(windows(&v), want);
    assert!(std::fs::symlink_metadata(&f).unwrap().is_file());
}

#[test]
fn an_index_truncated_while_served_changes_no_answer() {
    // the index used to be mapped: cutting the file under a running plx view made the next
    // query touch pages past its end (SIGBUS, the server killed)
    let d = experiment("truncated");
    let want = windows(&Viewer::open_with(&d, None, Via::MergePass).unwrap());
    let served = Viewer::open_with(&d, None, Via::MergePass).unwrap();
    assert_eq!(served.source, IndexSource::Stored(index_file(&d)));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(index_file(&d))
        .unwrap();
    f.set_len(0).unwrap();
    assert_eq!(windows(&served), want);
    assert_eq!(served.region(1, 1, 5).unwrap().duration, 100);
}
