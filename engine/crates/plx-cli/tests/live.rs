//! Killed processes: `plx report`, `plx comm` and `plx info` on threads recovered from the live
//! files the runtime leaves (synthetic, and a real program killed under libplx.so).

mod fixtures;
use fixtures::{plx, stderr, stdout, tmp};

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

use plx_format::synth::{NodeSpec, SynthProcess};
use plx_format::synth_mpi::{MpiWorld, Msg};

/// `plx ARGS` that must succeed: (stdout, stderr).
fn ok(args: &[&str]) -> (String, String) {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    (stdout(&o), stderr(&o))
}

/// main (open when killed) → solve ×2 → io ×3; main → io ×1; 1 tick = 1 ns.
const TREE: &[NodeSpec] = &[
    (None, 1, 1, 3, 0, 0),
    (Some(0), 2, 2, 3, 700, 400),
    (Some(1), 3, 3, 0, 300, 300),
    (Some(0), 3, 1, 0, 200, 200),
];

/// Process 300, killed: thread 0 left its live tree, thread 1 wrote its profile.
fn killed(d: &Path, recorded: bool) {
    let mut p = SynthProcess::new("node1", 300, &["./app"]);
    p.functions(&[(1, "main"), (2, "solve"), (3, "io"), (4, "worker")])
        .thread(0, 300, "main", 1_000)
        .thread(1, 301, "worker", 1_000)
        .profile(
            1,
            1_500,
            400,
            &[(None, 4, 1, 1, 500, 400), (Some(0), 3, 1, 0, 100, 100)],
        );
    if recorded {
        p.profile(0, 1_900, 0, TREE);
    } else {
        p.live_nodes(0, TREE);
    }
    p.write(d).unwrap();
}

const RECOVERED: &str =
    "thread 0: profile recovered from live.0.nodes (the process was killed before writing it)";

#[test]
fn report_of_a_killed_process_is_the_one_its_records_would_give() {
    let d = tmp("report");
    killed(&d, false);
    let (csv, err) = ok(&["report", d.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(
        csv,
        "process,thread,function,calls,child_calls,exclusive_s,inclusive_s,thread_name,host,cpu_s
300,0,io,4,0,0.000000500,0.000000500,main,node1,
300,0,solve,2,3,0.000000400,0.000000700,main,node1,
300,0,main,1,3,0.000000000,0.000000000,main,node1,
300,1,worker,1,1,0.000000400,0.000000500,worker,node1,
300,1,io,1,0,0.000000100,0.000000100,worker,node1,
all,all,io,5,0,0.000000600,0.000000600,,,
all,all,solve,2,3,0.000000400,0.000000700,,,
all,all,worker,1,1,0.000000400,0.000000500,,,
all,all,main,1,3,0.000000000,0.000000000,,,
"
    );
    assert!(err.contains(RECOVERED), "{err}");
    assert!(err.contains("no ProcessEnd record"), "{err}");
    let r = tmp("report-recorded");
    killed(&r, true);
    for extra in [&[][..], &["--callpath"], &["--by", "process"]] {
        let mut a = vec!["report", "--format", "csv"];
        a.extend_from_slice(extra);
        let (mut ka, mut ra) = (a.clone(), a.clone());
        ka.push(d.to_str().unwrap());
        ra.push(r.to_str().unwrap());
        assert_eq!(ok(&ka).0, ok(&ra).0, "{extra:?}");
    }
}

#[test]
fn info_lists_recovered_threads() {
    let d = tmp("info");
    killed(&d, false);
    let (out, _) = ok(&["info", d.to_str().unwrap()]);
    for line in [
        "  ended       did not finish (no ProcessEnd: killed or crashed while writing)\n",
        "         0      300  main                        -       900 ns            -        0  recovered from live file\n",
        "         1      301  worker                 400 ns       500 ns            0        0  recorded\n",
        &format!("node1.300/process.plx: {RECOVERED}\n"),
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
}

/// Ranks 0 and 1: 3 ping-pongs (8 bytes there, 16 back); rank 1 killed after its last op.
fn ping_pong(d: &Path, killed: bool) {
    let mut w = MpiWorld::new(2);
    for i in 0..3u64 {
        let t = 10_000 + i * 10_000;
        w.message(&Msg::new((0, 0), (1, 0), 8, t, t + 1_000));
        w.message(&Msg::new((1, 0), (0, 0), 16, t + 2_000, t + 3_000));
    }
    if killed {
        w.ranks[1].crashed_at = Some(40_000);
        w.ranks[1].live_files = true;
    }
    w.write(d).unwrap();
}

#[test]
fn comm_rows_of_a_killed_rank_are_exact() {
    let d = tmp("comm");
    ping_pong(&d, true);
    let dir = d.to_str().unwrap();
    let (csv, err) = ok(&["comm", dir, "--format", "csv"]);
    assert_eq!(csv, "sender,receiver,messages,bytes\n0,1,3,24\n1,0,3,48\n");
    assert!(
        err.contains("node1.1001/process.plx: thread 0: MPI message statistics recovered from live.0.mpi (the process was killed before writing them)"),
        "{err}"
    );
    // no mismatch between what rank 0 sent and rank 1 received
    assert!(!err.contains("messages from rank"), "{err}");
    let f = tmp("comm-finished");
    ping_pong(&f, false);
    assert_eq!(ok(&["comm", f.to_str().unwrap(), "--format", "csv"]).0, csv);
    let (text, _) = ok(&["report", dir]);
    assert!(
        text.contains(
            "       1.0        0          3         48 B           16         16.0           16\n"
        ),
        "{text}"
    );
}

/// A program compiled with `-finstrument-functions` calls `work()` 1000 times, then SIGKILLs
/// itself under libplx.so: its profile comes from `live.0.nodes`.
#[test]
fn killed_program_is_reported_from_its_live_file() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../build/lib/libplx.so");
    if !lib.exists() {
        eprintln!("skipped: {} not built", lib.display());
        return;
    }
    let d = tmp("real");
    let src = d.join("killed.c");
    std::fs::write(
        &src,
        "#include <signal.h>
static volatile long sink;
__attribute__((noinline)) void work(void) { sink++; }
int main(void)
{
    for (int i = 0; i < 1000; i++)
        work();
    raise(SIGKILL);
    return 0;
}
",
    )
    .unwrap();
    let exe = d.join("killed");
    let built = Command::new("cc")
        .args(["-finstrument-functions", "-g", "-O0"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("skipped: cc could not build the test program");
        return;
    }
    let exp = d.join("exp");
    let run = Command::new(&exe)
        .env("PLX_OUTPUT", &exp)
        .env("LD_PRELOAD", &lib)
        .env_remove("PLX_TRACE")
        .env_remove("PLX_FILTER")
        .env_remove("PLX_BUFFER")
        .status()
        .unwrap();
    assert_eq!(run.signal(), Some(9));
    let (csv, err) = ok(&["report", exp.to_str().unwrap(), "--format", "csv"]);
    let work: Vec<Vec<&str>> = csv
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[2] == "work")
        .collect();
    assert_eq!(work.len(), 2, "{csv}");
    for row in &work {
        assert_eq!(row[3], "1000", "{csv}");
    }
    assert_eq!(work[1][..2], ["all", "all"]);
    assert!(err.contains(RECOVERED), "{err}");
    let (info, _) = ok(&["info", exp.to_str().unwrap()]);
    assert!(info.contains("recovered from live file"), "{info}");
}
