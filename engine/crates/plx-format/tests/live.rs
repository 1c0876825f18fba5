//! Live files (spec/format.md "Live files"): what a killed process leaves is read back in place of
//! the records it never wrote; records win; damaged live files give warnings, never a panic.

use std::path::{Path, PathBuf};

use plx_format::live::{
    LiveHeader, LiveKind, LiveMpiEntry, LiveSampleFrame, LiveSampleHead, LIVE_HEADER_LEN,
};
use plx_format::records::{Record, SampleTree, SampleTreeFramesItem};
use plx_format::synth::{live_tree, NodeSpec, SynthProcess};
use plx_format::writer::{live_file_bytes, live_mpi_bytes, live_nodes_bytes};
use plx_format::{
    Direction, EventEncoder, Experiment, MessageStats, ProfileNode, Warning, WarningKind, NONE_U32,
};

use plx_format::test_dir::{tmp, TestDir};

/// main (still open when killed) → compute ×2 → io ×3, main → io ×1; exclusive sum 900.
const TREE: &[NodeSpec] = &[
    (None, 1, 1, 3, 0, 0),
    (Some(0), 2, 2, 3, 700, 400),
    (Some(1), 3, 3, 0, 300, 300),
    (Some(0), 3, 1, 0, 200, 200),
];

/// Process 100, killed: thread 0 (started at 1000) left only its live tree; thread 1 wrote its
/// ThreadProfile (ending at 1500) yet its live file is still there with other numbers.
fn killed() -> SynthProcess {
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    p.functions(&[(1, "main"), (2, "compute"), (3, "io"), (4, "worker")])
        .thread(0, 100, "main", 1_000)
        .thread(1, 101, "worker", 1_100)
        .profile(1, 1_500, 50, &[(None, 4, 1, 0, 400, 400)])
        .live_nodes(0, TREE)
        .live_nodes(1, &[(None, 4, 7, 0, 9, 9)]);
    p
}

fn recovered_warnings(ws: &[Warning]) -> Vec<String> {
    ws.iter()
        .filter(|w| w.kind == WarningKind::Recovered)
        .map(|w| w.message.clone())
        .collect()
}

fn expected_nodes() -> Vec<ProfileNode> {
    TREE.iter()
        .map(|n| ProfileNode {
            parent: n.0.unwrap_or(NONE_U32),
            region: n.1,
            calls: n.2,
            child_calls: n.3,
            inclusive_ticks: n.4,
            exclusive_ticks: n.5,
        })
        .collect()
}

#[test]
fn live_tree_is_the_profile_of_a_thread_without_one() {
    let d = tmp("tree");
    let dir = killed().write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let img = &e.images[0];
    assert!(!img.finished());
    assert_eq!(
        img.live_files,
        vec![dir.join("live.0.nodes"), dir.join("live.1.nodes")]
    );
    let t0 = &img.process.threads[&0];
    let prof = t0.profile.as_ref().unwrap();
    assert_eq!(prof.nodes, expected_nodes());
    assert_eq!(t0.recovered.profile, Some(dir.join("live.0.nodes")));
    assert_eq!(t0.recovered.messages, None);
    // the latest tick known is thread 1's end (1500); the tree needs 1000 + 900
    assert_eq!(prof.end_ticks, 1_900);
    assert_eq!((prof.cpu_ns, prof.trace_events, prof.lost_nodes), (0, 0, 0));
    // records win, silently
    let t1 = &img.process.threads[&1];
    assert_eq!(t1.profile.as_ref().unwrap().nodes[0].calls, 1);
    assert_eq!(t1.recovered, Default::default());
    assert_eq!(
        recovered_warnings(&e.warnings),
        vec!["thread 0: profile recovered from live.0.nodes (the process was killed before writing it)"]
    );
    let w = e
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::Recovered)
        .unwrap();
    assert_eq!(w.path, dir.join("process.plx"));
    assert!(!e
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::NoThreadProfile));
}

#[test]
fn end_is_the_latest_tick_known() {
    // thread 1's trace runs to 50_000: later than thread 0's start plus its tree
    let d = tmp("end");
    let mut p = killed();
    p.records
        .retain(|r| !matches!(r, plx_format::Record::ThreadProfile(_)));
    let mut ev = EventEncoder::new(1_100);
    ev.enter(4, 1_100).enter(3, 20_000).exit(3, 50_000);
    p.chunk(1, &ev);
    p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let threads = &e.images[0].process.threads;
    assert_eq!(threads[&0].profile.as_ref().unwrap().end_ticks, 50_000);
    // thread 1 has a trace and a live tree: the tree (exact counts) is preferred
    let t1 = threads[&1].profile.as_ref().unwrap();
    assert_eq!(t1.nodes[0].calls, 7);
    assert_eq!(t1.end_ticks, 50_000);
    assert_eq!(recovered_warnings(&e.warnings).len(), 2);
}

#[test]
fn trace_mode_thread_keeps_its_trace() {
    // a tree with the root only (trace mode keeps none) does not hide the trace's events
    let d = tmp("trace-mode");
    let mut p = SynthProcess::new("node1", 7, &["app"]);
    p.functions(&[(1, "main")]).thread(0, 7, "main", 0);
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 0);
    p.chunk(0, &ev).live_nodes(0, &[]).live_nodes(1, &[]);
    p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let threads = &e.images[0].process.threads;
    assert!(threads[&0].profile.is_none());
    assert!(e
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::NoThreadProfile
            && w.message.contains("thread 0")
            && w.message.contains("rebuilt from its trace")));
    // no trace for thread 1: its (empty) tree is all there is
    assert_eq!(threads[&1].profile.as_ref().unwrap().nodes, vec![]);
    assert_eq!(
        recovered_warnings(&e.warnings),
        vec!["thread 1: profile recovered from live.1.nodes (the process was killed before writing it)"]
    );
}

fn stats(thread: u32, region: u32, peer: u32, direction: Direction, count: u64) -> MessageStats {
    MessageStats {
        thread,
        region,
        peer,
        direction,
        comm: 0,
        count,
        bytes: 8 * count,
        min_bytes: 8,
        max_bytes: 8,
    }
}

#[test]
fn live_mpi_table_gives_message_stats_and_wins_over_partial_records() {
    let d = tmp("mpi");
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    p.functions(&[(1, "main")])
        .mpi_routines(&[(5, "MPI_Send"), (6, "MPI_Allreduce")])
        .thread(0, 100, "main", 0)
        .thread(1, 101, "worker", 0)
        .thread(2, 102, "worker", 0)
        .profile(1, 100, 10, &[(None, 1, 1, 0, 100, 100)])
        .record(plx_format::Record::MessageStats(stats(
            1,
            5,
            3,
            Direction::Sent,
            1,
        )));
    let s0 = vec![
        stats(0, 5, 1, Direction::Sent, 4),
        stats(0, 6, NONE_U32, Direction::Received, 2),
    ];
    p.live_mpi(0, &s0)
        .live_mpi(1, &[stats(1, 5, 3, Direction::Sent, 9)]);
    // thread 2: a slot marked unused holds garbage, one taken just before the kill counts nothing
    let mut slots = vec![LiveMpiEntry::EMPTY; 8];
    slots[2] = LiveMpiEntry {
        used: 0,
        ..LiveMpiEntry::from_stats(&stats(2, 5, 9, Direction::Sent, 99))
    };
    slots[3] = LiveMpiEntry::from_stats(&stats(2, 5, 1, Direction::Received, 0));
    slots[7] = LiveMpiEntry::from_stats(&stats(2, 5, 1, Direction::Sent, 3));
    p.file("live.2.mpi", live_mpi_bytes(2, &slots));
    let dir = p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let threads = &e.images[0].process.threads;
    assert_eq!(threads[&0].message_stats, s0);
    assert_eq!(threads[&0].recovered.messages, Some(dir.join("live.0.mpi")));
    assert!(threads[&0].profile.is_none());
    // the live file wins: records of a process killed while writing them may be partial
    assert_eq!(
        threads[&1].message_stats,
        vec![stats(1, 5, 3, Direction::Sent, 9)]
    );
    assert_eq!(threads[&1].recovered.messages, Some(dir.join("live.1.mpi")));
    assert_eq!(
        threads[&2].message_stats,
        vec![stats(2, 5, 1, Direction::Sent, 3)]
    );
    assert_eq!(
        recovered_warnings(&e.warnings),
        vec![
            "thread 0: MPI message statistics recovered from live.0.mpi (the process was killed before writing them)",
            "thread 1: MPI message statistics recovered from live.1.mpi (the process was killed before writing them)",
            "thread 2: MPI message statistics recovered from live.2.mpi (the process was killed before writing them)",
        ]
    );
}

#[test]
fn live_files_belong_to_the_last_image() {
    let d = tmp("exec");
    let p = killed();
    let dir = p.write(&d).unwrap();
    // the image exec() replaced: finished, no live files of its own
    let mut old = SynthProcess::new("node1", 100, &["/bin/sh"]);
    old.functions(&[(1, "main")])
        .thread(0, 100, "main", 0)
        .profile(0, 10, 5, &[(None, 1, 1, 0, 10, 10)])
        .end(10, 0);
    std::fs::rename(dir.join("process.plx"), dir.join("process.1.plx")).unwrap();
    std::fs::write(dir.join("process.plx"), old.process_bytes()).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert_eq!(e.images.len(), 2);
    assert!(e.images[0].live_files.is_empty());
    assert_eq!(
        e.images[0].process.threads[&0].recovered,
        Default::default()
    );
    assert_eq!(e.images[1].image, 1);
    assert_eq!(e.images[1].live_files.len(), 2);
    assert_eq!(
        e.images[1].process.threads[&0].recovered.profile,
        Some(dir.join("live.0.nodes"))
    );
}

/// A valid `live.0.nodes` of TREE, to damage.
fn good_nodes() -> Vec<u8> {
    live_nodes_bytes(0, 8, &live_tree(TREE))
}

/// The experiment, the damaged file's path, and its directory (removed when dropped).
fn open_damaged(name: &str, file: &str, bytes: Vec<u8>) -> (Experiment, PathBuf, TestDir) {
    let d = tmp(name);
    let mut p = killed();
    p.files.clear();
    p.file(file, bytes);
    let dir = p.write(&d).unwrap();
    (Experiment::open(&d).unwrap(), dir.join(file), d)
}

fn the_warning<'a>(e: &'a Experiment, path: &Path) -> &'a Warning {
    let ws: Vec<&Warning> = e.warnings.iter().filter(|w| w.path == path).collect();
    assert_eq!(ws.len(), 1, "{:?}", e.warnings);
    ws[0]
}

fn poke(mut b: Vec<u8>, at: usize, bytes: &[u8]) -> Vec<u8> {
    b[at..at + bytes.len()].copy_from_slice(bytes);
    b
}

/// `nodes` files are slots of a pool: the header names the owner, whatever the file's number;
/// a free slot (owner 0xFFFFFFFF) holds nothing and gives no warning.
#[test]
fn pooled_nodes_slots_belong_to_their_header_thread() {
    let (e, path, _dir) = open_damaged(
        "slot",
        "live.0.nodes",
        poke(good_nodes(), 8, &3u32.to_le_bytes()),
    );
    let img = &e.images[0];
    assert_eq!(
        img.process.threads[&3].recovered.profile,
        Some(path.clone())
    );
    let (e, path, _dir2) = open_damaged(
        "free-slot",
        "live.0.nodes",
        poke(good_nodes(), 8, &u32::MAX.to_le_bytes()),
    );
    assert!(
        e.warnings.iter().all(|w| w.path != path),
        "{:?}",
        e.warnings
    );
    assert!(e.images[0]
        .process
        .threads
        .values()
        .all(|t| t.recovered.profile.is_none()));
}

#[test]
fn damaged_live_files_are_ignored_with_a_warning() {
    let good = good_nodes();
    let in_use = LIVE_HEADER_LEN as usize + 5 * 48;
    let nodes = "live.0.nodes";
    let huge = poke(good.clone(), 12, &u32::MAX.to_le_bytes());
    let huge = poke(huge, 16, &u32::MAX.to_le_bytes());
    let cases = [
        (
            "magic",
            nodes,
            poke(good.clone(), 0, b"XLPX"),
            ("garbage", 0),
            "live file has a bad magic (not PLXL): ignored",
        ),
        (
            "truncated",
            nodes,
            good[..in_use - 50].to_vec(),
            ("truncated", 64 + 3 * 48),
            "live file truncated: 5 items in use, 3 in the file (50 bytes missing): ignored",
        ),
        (
            "overfull",
            nodes,
            poke(good.clone(), 12, &9u32.to_le_bytes()),
            ("malformed", 12),
            "live file count 9 exceeds its capacity 8: ignored",
        ),
        (
            "huge",
            nodes,
            huge,
            ("truncated", 64 + 8 * 48),
            "live file truncated: 4294967295 items in use, 8 in the file \
             (206158429776 bytes missing): ignored",
        ),
        (
            "version",
            nodes,
            poke(good.clone(), 4, &7u16.to_le_bytes()),
            ("garbage", 4),
            "live file version 7, this reader knows 1: ignored",
        ),
        (
            "item-size",
            nodes,
            poke(good.clone(), 6, &40u16.to_le_bytes()),
            ("malformed", 6),
            "live file has 40-byte items, nodes are 48: ignored",
        ),
        (
            "kind",
            "live.0.mpi",
            good.clone(),
            ("malformed", 20),
            "live file says kind \"nodes\", its name \"mpi\": ignored",
        ),
        (
            "empty",
            nodes,
            Vec::new(),
            ("truncated", 0),
            "live file header truncated (0 of 64 bytes): ignored",
        ),
        (
            "short-header",
            nodes,
            good[..40].to_vec(),
            ("truncated", 0),
            "live file header truncated (40 of 64 bytes): ignored",
        ),
    ];
    for (name, file, bytes, (kind, offset), message) in cases {
        let (e, path, _d) = open_damaged(name, file, bytes);
        let w = the_warning(&e, &path);
        assert_eq!(
            (w.kind.as_str(), w.offset, w.message.as_str()),
            (kind, Some(offset), message),
            "{name}"
        );
        // nothing recovered: thread 0 has no profile, as without the file
        let t0 = &e.images[0].process.threads[&0];
        assert!(t0.profile.is_none(), "{name}");
        assert!(recovered_warnings(&e.warnings).is_empty(), "{name}");
        assert!(
            e.warnings
                .iter()
                .any(|w| w.kind == WarningKind::NoThreadProfile && w.message.contains("thread 0")),
            "{name}"
        );
    }
}

#[test]
fn garbage_inside_a_valid_live_file_does_not_panic() {
    // parents pointing anywhere, a kind of another reader, a directory named like a live file
    let mut items = live_tree(TREE);
    items[2].parent = 77;
    items[3].parent = NONE_U32;
    items[4].exclusive_ticks = u64::MAX;
    let (e, _, _d) = open_damaged(
        "garbage-items",
        "live.0.nodes",
        live_nodes_bytes(0, 8, &items),
    );
    let nodes = &e.images[0].process.threads[&0]
        .profile
        .as_ref()
        .unwrap()
        .nodes;
    assert_eq!(nodes[1].parent, 76);
    assert_eq!(nodes[2].parent, NONE_U32);
    let other = live_file_bytes(&LiveHeader::new(LiveKind::Mpi, 0, 0, 0), &[]);
    let (e, dir, _d) = open_damaged("unknown-kind", "live.0.future", other);
    assert!(e.images[0].live_files.is_empty());
    assert!(e.warnings.iter().all(|w| w.path != dir));
    std::fs::create_dir(dir.with_file_name("live.5.nodes")).unwrap();
    let e = Experiment::open(dir.parent().unwrap().parent().unwrap()).unwrap();
    let odd = dir.with_file_name("live.5.nodes");
    assert!(e.warnings.iter().any(|w| w.path == odd), "{:?}", e.warnings);
}

fn sample_frame(parent: u32, node: u32, address: u64, samples: u64) -> LiveSampleFrame {
    LiveSampleFrame {
        parent,
        node,
        module: 0,
        address,
        samples,
    }
}

/// A `live.<thread>.samples` file: the head, then `frames`, room for 8 more.
fn live_samples_bytes(thread: u32, head: LiveSampleHead, frames: &[LiveSampleFrame]) -> Vec<u8> {
    let count = frames.len() as u32 + 1;
    let mut items = head.encode().to_vec();
    items.extend(frames.iter().flat_map(|f| f.encode()));
    live_file_bytes(
        &LiveHeader::new(LiveKind::Samples, thread, count, count + 8),
        &items,
    )
}

#[test]
fn live_samples_are_the_sample_tree_of_a_thread_without_one() {
    // thread 0 left only its live samples: 12 taken, 10 of them in the frames the file holds
    // (2 in frames the disk had no room for); thread 1 wrote its SampleTree, its file is stale
    let d = tmp("samples");
    let head = LiveSampleHead {
        period_ns: 1_000_000,
        samples: 12,
        lost_full: 1,
        lost_loader: 2,
    };
    let frames = [
        sample_frame(NONE_U32, NONE_U32, 0x1000, 0),
        sample_frame(0, 0, 0x1100, 9),
        sample_frame(0, 0, 0x1200, 1),
    ];
    let written = SampleTree {
        thread: 1,
        period_ns: 1_000_000,
        samples: 4,
        lost_full: 0,
        lost_loader: 0,
        frames: vec![SampleTreeFramesItem {
            parent: NONE_U32,
            node: NONE_U32,
            module: 0,
            address: 0x2000,
            samples: 4,
        }],
    };
    let mut p = killed();
    p.file("live.0.samples", live_samples_bytes(0, head, &frames))
        .file("live.1.samples", live_samples_bytes(1, head, &frames))
        .record(Record::SampleTree(written.clone()));
    let dir = p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let img = &e.images[0];
    let t0 = &img.process.threads[&0];
    let tree = t0.sample_tree.as_ref().unwrap();
    assert_eq!(
        (
            tree.thread,
            tree.period_ns,
            tree.samples,
            tree.lost_full,
            tree.lost_loader
        ),
        (0, 1_000_000, 10, 1, 2)
    );
    let got: Vec<_> = tree
        .frames
        .iter()
        .map(|f| (f.parent, f.node, f.module, f.address, f.samples))
        .collect();
    assert_eq!(
        got,
        vec![
            (NONE_U32, NONE_U32, 0, 0x1000, 0),
            (0, 0, 0, 0x1100, 9),
            (0, 0, 0, 0x1200, 1)
        ]
    );
    assert_eq!(t0.recovered.samples, Some(dir.join("live.0.samples")));
    assert_eq!(t0.recovered.samples_not_kept, 2);
    let t1 = &img.process.threads[&1];
    assert_eq!(t1.sample_tree.as_ref(), Some(&written));
    assert_eq!(t1.recovered.samples, None);
    assert!(recovered_warnings(&e.warnings).contains(
        &"thread 0: call-stack samples recovered from live.0.samples (the process was killed \
          before writing them); 2 samples the runtime kept in memory only (no room on the disk \
          to grow the file) were lost"
            .to_string()
    ));
}

#[test]
fn live_samples_files_are_pool_slots_owned_by_their_header_thread() {
    // a short thread's end gives its samples file back for the next thread: the file's name is
    // the slot's number, its header's thread the owner; a free slot (no owner) holds nothing
    let d = tmp("samples-pool");
    let head = LiveSampleHead {
        period_ns: 1_000_000,
        samples: 3,
        lost_full: 0,
        lost_loader: 0,
    };
    let frames = [sample_frame(NONE_U32, NONE_U32, 0x1000, 3)];
    let mut p = killed();
    p.file("live.0.samples", live_samples_bytes(7, head, &frames))
        .file(
            "live.1.samples",
            live_samples_bytes(NONE_U32, head, &frames),
        );
    let dir = p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let img = &e.images[0];
    let t7 = &img.process.threads[&7];
    assert_eq!(
        t7.sample_tree.as_ref().map(|t| (t.thread, t.samples)),
        Some((7, 3))
    );
    assert_eq!(t7.recovered.samples, Some(dir.join("live.0.samples")));
    assert!(
        img.process
            .threads
            .values()
            .filter(|t| t.sample_tree.is_some())
            .count()
            == 1
    );
    assert!(
        !e.warnings
            .iter()
            .any(|w| w.path.ends_with("live.1.samples")),
        "{:?}",
        e.warnings
    );
}
