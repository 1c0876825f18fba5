//! Rebuilding a thread's profile from its trace (4 functions, 40 chunks of 2^19 words):
//! `cargo bench -p plx-analysis --bench rebuild`; the target is ≥ 10 M events/s.

use plx_analysis::{BuildOptions, Model, ProfileSource};
use plx_format::synth::SynthProcess;
use plx_format::test_dir::tmp;
use plx_format::EventEncoder;

fn main() {
    let d = tmp("throughput");
    let mut p = SynthProcess::new("h", 6, &["app"]);
    p.functions(&[(1, "main"), (2, "a"), (3, "b"), (4, "c")])
        .thread(0, 6, "main", 0);
    let chunks = 40;
    let per_chunk = 1 << 19; // words
    let mut t = 0u64;
    for _ in 0..chunks {
        let mut ev = EventEncoder::new(t);
        while ev.words().len() < per_chunk {
            let r = 2 + (t % 3) as u32;
            ev.enter(r, t + 1)
                .enter(4, t + 2)
                .exit(4, t + 5)
                .exit(r, t + 9);
            t += 10;
        }
        p.chunk(0, &ev);
    }
    p.write(&d).unwrap();
    let events = (chunks * per_chunk) as f64;
    let start = std::time::Instant::now();
    let m = Model::open(&d, BuildOptions::default()).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let rate = events / secs;
    eprintln!(
        "rebuilt {events} events in {secs:.3} s: {:.1} M events/s",
        rate / 1e6
    );
    assert_eq!(m.processes[0].threads[0].source, ProfileSource::Rebuilt);
    eprintln!(
        "rebuild: target >= 10 M events/s {}",
        if rate >= 10e6 { "met" } else { "NOT met" }
    );
    let _ = std::fs::remove_dir_all(&d);
}
