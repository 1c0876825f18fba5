//! Writes a small synthetic experiment (two threads, a phase, recursion, a user event, a trace
//! of a killed second process) to the directory given: `cargo run --example synth_experiment -- DIR`.

use plx_format::synth::SynthProcess;
use plx_format::{EventEncoder, Record, RegionKind, Throttled, UserEventDef, UserEventStats};

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "plx-demo".to_string());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;

    let mut p = SynthProcess::new("node1", 4242, &["./solver", "-n", "64"]);
    p.functions(&[(1, "main"), (2, "solve"), (3, "fib"), (4, "write_output")])
        .region(5, RegionKind::Phase, "iteration")
        .functions(&[(6, "_ZN6solver4stepEi")])
        .record(Record::UserEventDef(UserEventDef {
            event_id: 0,
            name: "message size".into(),
        }))
        .thread(0, 4242, "main", 0)
        .thread(1, 4243, "worker", 1_000_000)
        .profile(
            0,
            2_500_000_000,
            2_400_000_000,
            &[
                (None, 1, 1, 3, 2_500_000_000, 100_000_000),
                (Some(0), 5, 10, 10, 2_000_000_000, 50_000_000),
                (Some(1), 6, 10, 10, 1_950_000_000, 450_000_000),
                (Some(2), 3, 10, 20, 1_500_000_000, 900_000_000),
                (Some(3), 3, 20, 0, 600_000_000, 600_000_000),
                (Some(0), 4, 1, 0, 400_000_000, 400_000_000),
                (Some(0), 0, 2, 0, 300_000, 300_000),
            ],
        )
        .profile(
            1,
            2_400_000_000,
            2_100_000_000,
            &[
                (None, 2, 1, 1, 2_399_000_000, 1_799_000_000),
                (Some(0), 3, 4, 0, 600_000_000, 600_000_000),
            ],
        )
        .record(Record::UserEventStats(UserEventStats {
            thread: 0,
            event_id: 0,
            count: 10,
            min: 1024.0,
            max: 65536.0,
            sum: 200_704.0,
            sum_squares: 9.4e9,
        }))
        .record(Record::Throttled(Throttled {
            region_id: 3,
            calls: 100_000,
            inclusive_ticks: 1_000_000,
        }))
        .end(2_500_000_000, 0);
    p.write(dir)?;

    // A child killed by SIGKILL: no ThreadProfile, no ProcessEnd; its trace is all that is left.
    let mut k = SynthProcess::new("node1", 4250, &["./solver", "--child"]);
    k.functions(&[(1, "main"), (2, "solve")])
        .thread(0, 4250, "main", 0);
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 1_000)
        .enter(2, 5_000)
        .exit(2, 805_000)
        .enter(2, 900_000);
    k.chunk(0, &ev);
    k.write(dir)?;
    eprintln!("wrote {}", dir.display());
    Ok(())
}
