//! `plx --jobs N`: the engine's output (standard output, standard error, files written) is the
//! same byte for byte with one thread as with several, on a traced multi-rank experiment.

mod fixtures;
use fixtures::{plx, stderr, tmp};

use std::path::Path;

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_format::NONE_U32;

/// 48 traced ranks of two threads: rings between threads with varied tags and sizes, an
/// allreduce, and rank 7 killed before its last receives (unmatched sends, warnings).
fn world(d: &Path) {
    let n = 48u32;
    let mut w = MpiWorld::new(n);
    w.trace = true;
    let mut t = 100_000u64;
    for k in 0..12u64 {
        for r in 0..n {
            let (from, to) = if k % 2 == 0 {
                ((r, 0), ((r + 1) % n, 0))
            } else {
                ((r, 1), ((r + 5) % n, 1))
            };
            let bytes = 64 << (r % 7);
            let m = Msg::new(
                from,
                to,
                bytes,
                t + r as u64 * 37,
                t + 9_000 + r as u64 * 11,
            )
            .tag((k % 3) as i32)
            .durations(300 + r as u64, 2_000);
            w.message(&m);
        }
        t += 20_000;
    }
    for r in 0..n {
        w.collective((r, 0), "MPI_Allreduce", 0, NONE_U32, 8, 8, t, t + 5_000);
    }
    w.ranks[7].crashed_at = Some(t - 60_000);
    w.write(d).unwrap();
}

/// Standard output and error of `plx -j JOBS ARGS` (success or not).
fn run(jobs: &str, args: &[&str]) -> (Vec<u8>, String) {
    let mut all = vec!["--jobs", jobs];
    all.extend_from_slice(args);
    let o = plx(&all);
    let err = format!("{}\nexit {:?}", stderr(&o), o.status.code());
    (o.stdout, err)
}

/// Every file under `dir`, relative path and bytes, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn one_thread_and_several_give_the_same_bytes() {
    let d = tmp("jobs");
    let exp = d.join("exp");
    world(&exp);
    let e = exp.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["report", e],
        &["report", e, "--callpath", "--format", "csv"],
        &["info", e],
        &["comm", e],
        &["comm", e, "--by", "thread", "--format", "csv"],
        &["comm", e, "--fit", "--format", "csv"],
        &["critical-path", e],
        // a window ending mid-trace: the merge beside the graph stops where the graph does
        &["critical-path", e, "--phase", "0.0001:0.0002", "--path"],
        &["critical-path", e, "--level", "thread", "--format", "csv"],
        &["export", e, "--format", "text", "-o", "-"],
        // written beside the merge, as the text export is
        &["export", e, "--format", "chrome", "-o", "-"],
    ];
    for args in commands {
        let one = run("1", args);
        assert!(one.1.ends_with("exit Some(0)"), "plx {args:?}: {}", one.1);
        assert!(!one.0.is_empty(), "plx {args:?} printed nothing");
        for jobs in ["2", "5"] {
            assert!(
                one == run(jobs, args),
                "plx -j {jobs} {args:?} differs from -j 1"
            );
        }
    }
    // the rank-partitioned Parquet dataset: the same files with the same bytes
    let mut written = Vec::new();
    for jobs in ["1", "3"] {
        let out = d.join(format!("pq{jobs}"));
        let o = run(
            jobs,
            &[
                "export",
                e,
                "--format",
                "parquet",
                "--partition",
                "rank",
                "-o",
                out.to_str().unwrap(),
            ],
        );
        assert!(o.1.ends_with("exit Some(0)"), "{}", o.1);
        written.push(files(&out));
    }
    assert_eq!(
        written[0].len(),
        48 * 3 + 6,
        "events, messages and locations per rank; regions, comms, waits, wait_causes, samples \
         and sample_times"
    );
    assert!(written[0] == written[1], "parquet -j 3 differs from -j 1");
    // the OTF2 archive, written beside the merge: the same files with the same bytes, but for
    // the anchor file's trace id (random, as the OTF2 library makes it for every archive)
    let mut archives = Vec::new();
    for jobs in ["1", "3"] {
        let out = d.join(format!("otf2-{jobs}"));
        let o = run(
            jobs,
            &["export", e, "--format", "otf2", "-o", out.to_str().unwrap()],
        );
        assert!(o.1.ends_with("exit Some(0)"), "{}", o.1);
        let mut f = files(&out);
        f.retain(|(name, _)| name != "traces.otf2");
        archives.push(f);
    }
    assert!(
        archives[0].len() >= 4,
        "definitions and event files: {:?}",
        archives[0].iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert!(archives[0] == archives[1], "otf2 -j 3 differs from -j 1");
}

#[test]
fn jobs_must_be_a_positive_count() {
    let o = plx(&["--jobs", "0", "info", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--jobs"), "{}", stderr(&o));
}
