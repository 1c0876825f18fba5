//! Hostile input: files that claim more than they hold (sparse files), files that are not files
//! (FIFOs), and random damage to every reader. The reader stays bounded in memory and time, never
//! blocks, never panics, and says what it ignored.

use std::path::Path;
use std::time::{Duration, Instant};

use plx_format::live::{LiveHeader, LiveKind};
use plx_format::synth::{live_tree, NodeSpec, SynthProcess};
use plx_format::writer::raw_record_bytes;
use plx_format::{EventEncoder, Experiment, WarningKind};

use plx_format::test_dir::tmp;

const TREE: &[NodeSpec] = &[
    (None, 1, 1, 3, 0, 0),
    (Some(0), 2, 2, 3, 700, 400),
    (Some(1), 3, 3, 0, 300, 300),
];

/// A killed process: thread 0 left only its live tree.
fn killed() -> SynthProcess {
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    p.functions(&[(1, "main"), (2, "compute"), (3, "io")])
        .thread(0, 100, "main", 1_000);
    p
}

/// Makes `path` `len` bytes long without writing: the rest is a hole.
fn extend_sparse(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

/// Does this file system report holes (SEEK_HOLE)? Where it does not, a sparse file reads as
/// its zeros and the framing checks bound the reader instead.
fn reports_holes(dir: &Path) -> bool {
    let p = dir.join("probe");
    std::fs::write(&p, [1u8; 4096]).unwrap();
    extend_sparse(&p, 1 << 30);
    let mut used = 0u64;
    for b in std::fs::read_dir(dir).unwrap().flatten() {
        use std::os::unix::fs::MetadataExt;
        if b.path() == p {
            used = b.metadata().unwrap().blocks() * 512;
        }
    }
    std::fs::remove_file(&p).unwrap();
    used < 1 << 20
}

#[test]
fn sparse_live_file_claiming_2_pow_32_items_allocates_only_what_is_present() {
    let d = tmp("sparse-live");
    let mut p = killed();
    let tree = live_tree(TREE);
    // the header claims every item of its capacity in use: 206 GB of nodes
    let mut bytes = LiveHeader::new(LiveKind::Nodes, 0, u32::MAX, u32::MAX)
        .encode()
        .to_vec();
    bytes.extend(tree.iter().flat_map(|n| n.encode()));
    p.file("live.0.nodes", bytes);
    let dir = p.write(&d).unwrap();
    extend_sparse(&dir.join("live.0.nodes"), 64 + u32::MAX as u64 * 48);
    let holes = reports_holes(&d);
    let t = Instant::now();
    let e = Experiment::open(&d).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    if !holes {
        return;
    }
    let nodes = &e.images[0].process.threads[&0]
        .profile
        .as_ref()
        .unwrap()
        .nodes;
    // the present items are the tree (and zero items up to the end of the written page)
    assert!(
        nodes.len() >= TREE.len() && nodes.len() < 4096 / 48,
        "{}",
        nodes.len()
    );
    assert_eq!(
        nodes.iter().take(3).map(|n| n.region).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let w: Vec<_> = e
        .warnings
        .iter()
        .filter(|w| w.path.ends_with("live.0.nodes"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", e.warnings);
    assert_eq!(w[0].kind.as_str(), "truncated");
    assert!(
        w[0].message
            .starts_with("live file says 4294967295 items in use, "),
        "{}",
        w[0].message
    );
}

#[test]
fn sparse_live_hash_table_skips_its_holes() {
    let d = tmp("sparse-mpi");
    let mut p = killed();
    // an mpi table claiming 2^32 - 1 slots, one used slot written at the start
    let mut slot = [0u8; 56];
    slot[0..4].copy_from_slice(&7u32.to_le_bytes());
    slot[12..16].copy_from_slice(&1u32.to_le_bytes());
    slot[24..32].copy_from_slice(&3u64.to_le_bytes());
    let h = LiveHeader::new(LiveKind::Mpi, 0, u32::MAX, u32::MAX);
    let mut bytes = h.encode().to_vec();
    bytes.extend_from_slice(&slot);
    p.file("live.0.mpi", bytes);
    let dir = p.write(&d).unwrap();
    extend_sparse(&dir.join("live.0.mpi"), 64 + u32::MAX as u64 * 56);
    if !reports_holes(&d) {
        return;
    }
    let t = Instant::now();
    let e = Experiment::open(&d).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let stats = &e.images[0].process.threads[&0].message_stats;
    assert_eq!(stats.len(), 1);
    assert_eq!((stats[0].region, stats[0].count), (7, 3));
}

#[test]
fn sparse_process_and_trace_files_are_read_up_to_their_hole() {
    let d = tmp("sparse-files");
    let mut p = killed();
    let mut ev = EventEncoder::new(1_000);
    ev.enter(1_000, 1).exit(1_500, 1);
    p.profile(0, 2_000, 10, &[(None, 1, 1, 0, 500, 500)])
        .chunk(0, &ev)
        .end(2_000, 0);
    let dir = p.write(&d).unwrap();
    // a trace chunk whose header claims 2^29 events (4 GiB) in a file that is a hole after it
    let mut chunk = raw_record_bytes(32, &[0u8; 32]);
    let claimed: u32 = 32 + 8 * ((1u32 << 29) - 5);
    chunk[4..8].copy_from_slice(&claimed.to_le_bytes());
    chunk[8 + 4..8 + 8].copy_from_slice(&((1u32 << 29) - 5).to_le_bytes());
    let trace = dir.join("trace.plx");
    let mut t = std::fs::read(&trace).unwrap();
    let chunk_at = t.len() as u64;
    t.extend_from_slice(&chunk);
    std::fs::write(&trace, &t).unwrap();
    extend_sparse(&trace, chunk_at + 8 + claimed as u64);
    let proc_len = std::fs::metadata(dir.join("process.plx")).unwrap().len();
    extend_sparse(&dir.join("process.plx"), 1 << 40);
    if !reports_holes(&d) {
        return;
    }
    let t = Instant::now();
    let e = Experiment::open(&d).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let img = &e.images[0];
    assert!(img.process.end.is_some());
    let trace = img.trace.as_ref().unwrap();
    assert_eq!(trace.chunks.len(), 1);
    let holes: Vec<_> = e
        .warnings
        .iter()
        .filter(|w| w.message.starts_with("a hole (bytes never written)"))
        .collect();
    assert_eq!(holes.len(), 2, "{:?}", e.warnings);
    let pw = holes
        .iter()
        .find(|w| w.path.ends_with("process.plx"))
        .unwrap();
    assert!(pw.offset.unwrap() >= proc_len, "{pw:?}");
    assert_eq!(pw.kind.as_str(), "garbage");
    assert!(e
        .warnings
        .iter()
        .any(|w| w.path.ends_with("trace.plx") && w.kind.as_str() == "truncated"));
}

#[test]
fn a_fifo_in_place_of_trace_plx_is_refused_without_blocking() {
    let d = tmp("fifo");
    let mut p = killed();
    p.profile(0, 2_000, 10, &[(None, 1, 1, 0, 500, 500)])
        .end(2_000, 0);
    let dir = p.write(&d).unwrap();
    for name in ["trace.plx", "live.0.nodes"] {
        let c = std::ffi::CString::new(dir.join(name).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let d2 = d.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(Experiment::open(&d2).map(|e| e.warnings));
    });
    let warnings = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("Experiment::open blocked on a FIFO")
        .unwrap();
    let msgs: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    for name in ["trace.plx", "live.0.nodes"] {
        let w = warnings
            .iter()
            .find(|w| w.path.ends_with(name))
            .unwrap_or_else(|| panic!("no warning for {name}: {msgs:?}"));
        assert_eq!(w.kind, WarningKind::MissingFile);
        assert!(
            w.message.ends_with("not a regular file (a FIFO)"),
            "{}",
            w.message
        );
    }
}
