//! Synthetic experiments the export tests share (also used by plx-cli's export tests).
#![allow(dead_code)]

use std::path::Path;

use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{EventEncoder, Record, RegionKind, UserEventDef, NONE_U32};

#[allow(unused_imports)]
pub use plx_format::test_dir::{tmp, TestDir};

/// Process 100 on node1 traced with two threads: main runs two iterations (a phase) of
/// compute, the first with fib recursing once, and records the user event `bytes`; the worker
/// does io twice and is still in the second when its trace ends.
pub fn threads(d: &Path) {
    let mut p = SynthProcess::new("node1", 100, &["./app", "-n", "2"]);
    p.functions(&[
        (1, "main"),
        (2, "compute"),
        (3, "fib"),
        (4, "worker"),
        (5, "io"),
    ])
    .region(6, RegionKind::Phase, "iteration")
    .thread(0, 100, "main", 0)
    .thread(1, 101, "worker", 500)
    .record(Record::UserEventDef(UserEventDef {
        event_id: 0,
        name: "bytes".into(),
    }));
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(6, 100)
        .enter(2, 200)
        .enter(3, 300)
        .enter(3, 400)
        .exit(3, 600)
        .exit(3, 700)
        .exit(2, 900)
        .user(0, 4096.0, 950)
        .exit(6, 1000);
    p.chunk(0, &e);
    let mut w = EventEncoder::new(500);
    w.enter(4, 500)
        .enter(5, 600)
        .user(0, 100.0, 650)
        .exit(5, 800);
    p.chunk(1, &w);
    let mut e = EventEncoder::new(1100);
    e.enter(6, 1100)
        .enter(2, 1200)
        .exit(2, 1500)
        .user(0, 8192.0, 1600)
        .exit(6, 1700)
        .exit(1, 2000);
    p.chunk(0, &e);
    let mut w = EventEncoder::new(900);
    w.enter(5, 900).user(0, 50.0, 1900);
    p.chunk(1, &w);
    p.profile(0, 2100, 1500, &[]).profile(1, 2100, 900, &[]);
    p.end(2100, 0);
    p.write(d).unwrap();
}

/// Three traced ranks: rank 1's clock is behind, so its receive of rank 0's message comes
/// before the send (repaired, and rank 2 after it); rank 0's worker thread sends to rank 2 by
/// MPI_Isend/MPI_Wait; everyone ends with a barrier.
pub fn mpi(d: &Path) {
    let mut w = MpiWorld::new(3);
    w.trace = true;
    w.message(&Msg::new((0, 0), (1, 0), 8, 10_000, 9_000).durations(100, 500));
    w.message(
        &Msg::new((1, 0), (2, 0), 64, 12_000, 13_500)
            .tag(5)
            .durations(100, 500),
    );
    w.message(
        &Msg::new((0, 1), (2, 0), 1024, 15_000, 18_000)
            .durations(200, 1000)
            .routines("MPI_Isend", "MPI_Wait"),
    );
    w.message(&Msg::new((1, 0), (0, 0), 8, 20_000, 30_000).durations(100, 500));
    for r in 0..3u32 {
        w.collective(
            (r, 0),
            "MPI_Barrier",
            0,
            NONE_U32,
            0,
            0,
            40_000 + 10 * r as u64,
            41_000,
        );
    }
    w.write(d).unwrap();
}
