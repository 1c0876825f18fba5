//! Matching throughput on a 4-rank ring of 250 000 rounds (1 M messages, 2 M events):
//! `cargo bench -p plx-analysis --bench matching`.

use plx_analysis::matching::match_messages;
use plx_analysis::{BuildOptions, FitAccumulator, Model};
use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::test_dir::tmp;

fn main() {
    let d = tmp("throughput");
    let mut w = MpiWorld::new(4);
    w.trace = true;
    w.chunk_ops = 4096;
    for k in 0..250_000u64 {
        for r in 0..4u32 {
            let t = 1_000 + k * 1_000;
            w.message(&Msg::new((r, 0), ((r + 1) % 4, 0), 8, t, t + 500).tag((k % 3) as i32));
        }
    }
    w.write(&d).unwrap();
    let m = Model::open(
        &d,
        BuildOptions {
            rebuild_from_trace: false,
            resolve_sources: false,
        },
    )
    .unwrap();
    let start = std::time::Instant::now();
    let mut f = FitAccumulator::new(false);
    let s = match_messages(&m, |x| f.add(x)).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(s.matched, 1_000_000);
    eprintln!(
        "matched {} messages in {secs:.3} s: {:.1} M messages/s",
        s.matched,
        s.matched as f64 / secs / 1e6
    );
}
