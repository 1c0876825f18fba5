//! A bounded, deterministic fuzz run over every reader (process.plx records of every kind,
//! trace.plx chunks and events, live nodes, mpi and sync files) and what is built on them (the
//! model, its profiles, call graphs, synchronization rows and the global merge of the trace):
//! thousands of mutated experiments, each read without a panic and in bounded time and memory.
//! Seeds are fixed, so a failure names the iteration that reproduces it.

use std::path::Path;
use std::time::{Duration, Instant};

use plx_analysis::{
    call_graph, flat_profile, BuildOptions, GlobalMerge, GroupBy, MergeOptions, Model,
};
use plx_format::synth::SynthProcess;
use plx_format::{
    Direction, EventEncoder, Experiment, MessageStats, NamedBy, RegionKind, SyncKind, SyncStats,
    ThreadLevel,
};

use plx_format::test_dir::tmp;

/// A process with every kind of record, a trace of two threads and the three live files.
fn sample() -> SynthProcess {
    let mut p = SynthProcess::new("h", 1, &["app", "x"]);
    p.functions(&[(1, "main"), (2, "f"), (3, "g")])
        .mpi_routines(&[(10, "MPI_Send"), (11, "MPI_Recv")])
        .region(4, RegionKind::Phase, "p")
        .mpi_init(0, 2, ThreadLevel::Single, 5)
        .comm(1, 0, &[0, 1])
        .thread(0, 1, "main", 0)
        .thread(1, 2, "w", 5)
        .sync_object(0, SyncKind::Mutex, NamedBy::Init, 0, 0x400)
        .sync_stats(0, 0, (4, 1, 30, 40, 4))
        .cpu_sample(50, &[(1, 10), (2, 20)])
        .node_cpu(0, &[(0, 70)])
        .profile(
            0,
            100,
            50,
            &[
                (None, 1, 1, 2, 100, 40),
                (Some(0), 2, 2, 1, 50, 30),
                (Some(1), 3, 1, 0, 20, 20),
                (Some(0), 4, 1, 0, 10, 10),
            ],
        )
        .live_nodes(1, &[(None, 1, 1, 1, 9, 4), (Some(0), 2, 1, 0, 5, 5)])
        .live_mpi(
            1,
            &[MessageStats {
                thread: 1,
                region: 10,
                peer: 1,
                direction: Direction::Sent,
                comm: 1,
                count: 2,
                bytes: 64,
                min_bytes: 32,
                max_bytes: 32,
            }],
        )
        .live_sync(
            1,
            &[SyncStats {
                thread: 1,
                object: 0,
                acquisitions: 3,
                contended: 1,
                wait_ticks: 7,
                hold_ticks: 9,
                releases: 3,
            }],
        );
    let mut a = EventEncoder::new(0);
    a.enter(1, 1)
        .enter(4, 2)
        .enter(2, 3)
        .user(0, 1.5, 4)
        .acquire(0, 0, 2, 6)
        .release(0, 0, 8)
        .send(1, 7, 32, 1, 9)
        .cpu(2, 5, 10)
        .exit(2, 11)
        .exit(4, 12)
        .exit(1, 20);
    let mut b = EventEncoder::new(5);
    b.enter(1, 6)
        .recv(0, 7, 32, 1, 12)
        .stream_send(3, 1, 100, 13)
        .enter(3, 14)
        .exit(3, 15)
        .exit(1, 16);
    p.chunk(0, &a).chunk(1, &b).chunk(0, &a);
    p.end(100, 0);
    p
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Values that break length and count fields.
const INTERESTING: [u32; 8] = [0, 1, 7, 0x7f, 0xffff, 0x7fff_ffff, 0xffff_fffe, 0xffff_ffff];

/// One random mutation of `b`.
fn mutate(b: &mut Vec<u8>, r: &mut Rng) {
    if b.is_empty() {
        b.push(r.next() as u8);
        return;
    }
    match r.below(7) {
        0 => {
            let i = r.below(b.len());
            b[i] ^= 1 << r.below(8);
        }
        1 => {
            let i = r.below(b.len());
            b[i] = r.next() as u8;
        }
        2 => {
            // a length or count field: an aligned u32 set to an interesting value
            let i = r.below(b.len() / 4) * 4;
            let v = INTERESTING[r.below(INTERESTING.len())].to_le_bytes();
            let n = (b.len() - i).min(4);
            b[i..i + n].copy_from_slice(&v[..n]);
        }
        3 => {
            let at = r.below(b.len() + 1);
            b.truncate(at);
        }
        4 => {
            let at = r.below(b.len() + 1);
            let n = 1 + r.below(16);
            let ins: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
            b.splice(at..at, ins);
        }
        5 => {
            let at = r.below(b.len());
            let n = (1 + r.below(32)).min(b.len() - at);
            b.drain(at..at + n);
        }
        _ => {
            // a slice repeated (records or events duplicated)
            let at = r.below(b.len());
            let n = (1 + r.below(64)).min(b.len() - at);
            let dup = b[at..at + n].to_vec();
            let to = r.below(b.len() + 1);
            b.splice(to..to, dup);
        }
    }
}

/// Everything a command would do with the experiment.
fn analyse(d: &Path) {
    let _ = Experiment::open(d);
    let Ok(m) = Model::open(d, BuildOptions::default()) else {
        return;
    };
    for by in [GroupBy::Thread, GroupBy::Process] {
        let (tables, total) = m.tables(by, None);
        for t in tables.iter().chain(Some(&total)) {
            let _ = flat_profile(&t.tree);
            let _ = call_graph(&t.tree);
        }
        let _ = m.sync_rows(by);
    }
    if let Ok(exp) = Experiment::open(d) {
        if let Ok(mut merge) = GlobalMerge::new(&m, &exp, MergeOptions::default()) {
            let mut n = 0;
            while merge.next_event().is_some() {
                n += 1;
                assert!(n < 1_000_000, "a merge of a few events did not end");
            }
        }
    }
}

#[test]
fn mutated_experiments_are_read_without_panic() {
    let d = tmp("mutate");
    let p = sample();
    let dir = p.write(&d).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    assert_eq!(
        files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        [
            "live.1.mpi",
            "live.1.nodes",
            "live.1.sync",
            "process.plx",
            "trace.plx"
        ]
    );
    analyse(&d);
    let start = Instant::now();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut iterations = 0;
    // a fixed number of iterations, cut short on a slow machine (the run is bounded in time)
    while iterations < 1500 && start.elapsed() < Duration::from_secs(8) {
        let which = r.below(files.len());
        let mut bytes = files[which].1.clone();
        for _ in 0..1 + r.below(4) {
            mutate(&mut bytes, &mut r);
        }
        std::fs::write(dir.join(&files[which].0), &bytes).unwrap();
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(|| analyse(&d));
        assert!(
            outcome.is_ok(),
            "iteration {iterations}: mutated {} panicked",
            files[which].0
        );
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "iteration {iterations}: mutated {} took {:?}",
            files[which].0,
            t.elapsed()
        );
        std::fs::write(dir.join(&files[which].0), &files[which].1).unwrap();
        iterations += 1;
    }
    eprintln!("{iterations} mutated experiments read");
    assert!(iterations >= 100, "only {iterations} iterations");
}
