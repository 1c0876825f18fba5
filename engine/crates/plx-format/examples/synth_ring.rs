//! Writes a synthetic traced MPI ring of N ranks (each sends M messages of 1 KiB to the next
//! rank, then an MPI_Allreduce; with C > 1, C - 1 more collectives follow, cycling through
//! MPI_Barrier, MPI_Allreduce, MPI_Bcast and MPI_Reduce with rank 0 as the root, each rank
//! entering up to 5 µs apart): `cargo run --release --example synth_ring -- DIR N M [C]`.
//! bench/scale.sh analyses it at 512 to 4,096 ranks.

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::NONE_U32;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "plx-ring".to_string());
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(256);
    let m: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(160);
    let c: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let mut w = MpiWorld::new(n);
    w.trace = true;
    w.chunk_ops = usize::MAX;
    let mut t = 1_000_000u64;
    for _ in 0..m {
        for r in 0..n {
            let to = (r + 1) % n;
            w.message(&Msg::new((r, 0), (to, 0), 1024, t, t + 6_000).durations(500, 4_000));
        }
        t += 20_000;
    }
    for r in 0..n {
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, t, t + 20_000);
    }
    let routines = ["MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce"];
    for k in 1..c {
        t += 40_000;
        let routine = routines[(k - 1) as usize % routines.len()];
        let root = if routine.ends_with("cast") || routine.ends_with("Reduce") {
            0
        } else {
            NONE_U32
        };
        for r in 0..n {
            // a spread of entries: every pattern has waits
            let enter = t + (r as u64 * 37 + k * 11) % 101 * 50;
            w.collective((r, 0), routine, 0, root, 8, 8, enter, t + 20_000);
        }
    }
    w.write(dir)?;
    eprintln!("wrote {} ({n} ranks, {m} messages each)", dir.display());
    Ok(())
}
