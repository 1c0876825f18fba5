//! A call-path chain as deep as a runaway recursion leaves (hundreds of thousands of levels):
//! every command that reads the tree stays linear in its depth.

mod fixtures;

use std::time::Instant;

use fixtures::{plx, stderr, stdout, tmp};
use plx_format::synth::{NodeSpec, SynthProcess};

/// `rec` calling itself `depth` times below `main`: node i's parent is node i − 1.
fn chain(depth: u32) -> Vec<NodeSpec> {
    let d = depth as u64;
    let mut nodes: Vec<NodeSpec> = vec![(None, 1, 1, 1, 10 * d + 10, 10)];
    for i in 0..depth {
        let below = d - i as u64 - 1;
        nodes.push((Some(i), 2, 1, u64::from(below > 0), 10 * below + 10, 10));
    }
    nodes
}

fn experiment(name: &str, depth: u32) -> plx_format::test_dir::TestDir {
    let d = tmp(name);
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    p.functions(&[(1, "main"), (2, "rec")])
        .thread(0, 100, "main", 0)
        .profile(0, 10 * depth as u64 + 10, 5, &chain(depth))
        .end(10 * depth as u64 + 10, 0);
    p.write(&d).unwrap();
    d
}

/// Seconds `plx args` takes on the experiment, and its output.
fn timed(args: &[&str]) -> (f64, String) {
    let t = Instant::now();
    let o = plx(args);
    assert!(o.status.success(), "{}", stderr(&o));
    (t.elapsed().as_secs_f64(), stdout(&o))
}

#[test]
fn deep_call_path_chain_is_read_in_linear_time() {
    let small = experiment("deep-small", 25_000);
    let large = experiment("deep-large", 200_000);
    for args in [
        &["report", "--format", "csv"][..],
        &["report", "--gprof"][..],
        &["info"][..],
    ] {
        let run = |d: &std::path::Path| {
            let mut a: Vec<&str> = args.to_vec();
            a.push(d.to_str().unwrap());
            timed(&a)
        };
        let (t_small, _) = run(&small);
        let (t_large, out) = run(&large);
        // 8× the depth: linear work takes about 8× the time, quadratic 64×
        assert!(
            t_large < 20.0 * t_small.max(0.05),
            "{args:?}: depth 25k {t_small:.3} s, 200k {t_large:.3} s"
        );
        if args.len() == 3 {
            let rec = out.lines().find(|l| l.contains(",rec,")).unwrap();
            assert!(rec.contains(",200000,"), "{rec}");
        }
    }
}
