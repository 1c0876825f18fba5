//! Writes a synthetic traced 4-rank MPI run (ping-pong, ring, allreduce, a skewed clock, the
//! `mpirun` launcher) to the directory given: `cargo run --example synth_mpi_experiment -- DIR`.

use plx_format::synth::SynthProcess;
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::{ClockOffset, OffsetWhen, RegionKind, NONE_U32};

/// Rank 2's clock runs 1 ms behind rank 0's: its ticks are rank 0's time minus 1 ms.
const SKEW: u64 = 1_000_000;

fn local(rank: u32, global: u64) -> u64 {
    if rank == 2 {
        global - SKEW
    } else {
        global
    }
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "plx-mpi-demo".to_string());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;

    let mut w = MpiWorld::new(4);
    w.trace = true;
    // ping-pong between ranks 0 and 1: transfer time 5 us + 1 ns per byte (1000 MB/s)
    let mut t = 10_000_000;
    for bytes in [8u64, 1_000, 8_000, 64_000, 8, 1_000, 8_000, 64_000] {
        let there = t + 5_000 + bytes;
        w.message(&Msg::new((0, 0), (1, 0), bytes, t, there).durations(1_000, 3_000));
        let back = there + 2_000;
        let home = back + 5_000 + bytes;
        w.message(&Msg::new((1, 0), (0, 0), bytes, back, home).durations(1_000, 3_000));
        t = home + 100_000;
    }
    // a ring: rank r sends 4 KB to r+1 with tag 7, ten times
    for _ in 0..10 {
        for r in 0..4u32 {
            let to = (r + 1) % 4;
            let arrive = t + 5_000 + 4_096;
            w.message(
                &Msg::new((r, 0), (to, 0), 4_096, local(r, t), local(to, arrive))
                    .tag(7)
                    .durations(500, 4_000),
            );
        }
        t += 100_000;
    }
    for r in 0..4u32 {
        w.collective(
            (r, 0),
            "MPI_Allreduce",
            0,
            NONE_U32,
            8,
            8,
            local(r, t),
            local(r, t + 20_000),
        );
    }
    // every rank measures its offset to rank 0 at Init and at Finalize (rank 0: zero, no rtt)
    for (rank, r) in w.ranks.iter_mut().enumerate() {
        for (when, at) in [
            (OffsetWhen::Init, 1_000_000),
            (OffsetWhen::Finalize, t + 30_000),
        ] {
            r.offsets.push(ClockOffset {
                when,
                local_ns: local(rank as u32, at),
                offset_ns: if rank == 2 { SKEW as i64 } else { 0 },
                rtt_ns: if rank == 0 {
                    0
                } else {
                    2_000 + 500 * rank as u64
                },
            });
        }
    }
    w.write(dir)?;

    // the launcher, measured by `plx run -- mpirun ...` but not instrumented
    let mut m = SynthProcess::new("node1", 999, &["mpirun", "-np", "4", "./app"]);
    m.region(1, RegionKind::Runtime, "plx_symbols")
        .thread(0, 999, "main", 0)
        .profile(0, t + 50_000, 1_000_000, &[(None, 1, 3, 0, 40_000, 40_000)])
        .end(t + 50_000, 0);
    m.write(dir)?;
    eprintln!("wrote {}", dir.display());
    Ok(())
}
