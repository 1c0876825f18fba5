//! End-to-end tests of the `plx` binary on synthetic experiments: exact CSV rows, errors, `plx run`.

mod fixtures;
use fixtures::{plx, stderr, stdout, tmp};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plx_format::synth::SynthProcess;
use plx_format::{EndReason, ProcessEnd, Record, RegionKind};

/// Process 100 on node1: main (3 calls to compute/io), a worker thread; 1 tick = 1 ns.
fn golden(d: &Path) {
    let mut p = SynthProcess::new("node1", 100, &["/bin/app", "-n", "3"]);
    p.functions(&[(1, "main"), (2, "compute"), (3, "io")])
        .region(4, RegionKind::Phase, "iter")
        .thread(0, 100, "main", 0)
        .thread(1, 101, "worker", 1_000_000)
        .profile(
            0,
            10_000_000,
            8_000_000,
            &[
                (None, 1, 1, 3, 10_000_000, 1_000_000),
                (Some(0), 2, 2, 0, 6_000_000, 6_000_000),
                (Some(0), 3, 1, 0, 3_000_000, 3_000_000),
            ],
        )
        .profile(
            1,
            9_000_000,
            7_000_000,
            &[
                (None, 2, 1, 1, 8_000_000, 5_000_000),
                (Some(0), 3, 1, 0, 3_000_000, 3_000_000),
            ],
        )
        .end(10_000_000, 0);
    p.write(d).unwrap();
}

const HEADER: &str =
    "process,thread,function,calls,child_calls,exclusive_s,inclusive_s,thread_name,host";

#[test]
fn csv_flat_by_thread_exact_rows() {
    let d = tmp("csv");
    golden(&d);
    let o = plx(&["report", d.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = format!(
        "{HEADER},cpu_s
100,0,compute,2,0,0.006000000,0.006000000,main,node1,
100,0,io,1,0,0.003000000,0.003000000,main,node1,
100,0,main,1,3,0.001000000,0.010000000,main,node1,
100,1,compute,1,1,0.005000000,0.008000000,worker,node1,
100,1,io,1,0,0.003000000,0.003000000,worker,node1,
all,all,compute,3,1,0.011000000,0.014000000,,,
all,all,io,2,0,0.006000000,0.006000000,,,
all,all,main,1,3,0.001000000,0.010000000,,,
"
    );
    assert_eq!(stdout(&o), expected);
    assert_eq!(stderr(&o), "");
}

#[test]
fn csv_callpath_by_process_exact_rows() {
    let d = tmp("csv-callpath");
    golden(&d);
    let o = plx(&[
        "report",
        d.to_str().unwrap(),
        "--format",
        "csv",
        "--callpath",
        "--by",
        "process",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = format!(
        "{HEADER},callpath,file,line,cpu_s
100,all,compute,2,0,0.006000000,0.006000000,,node1,main => compute,,0,
100,all,compute,1,1,0.005000000,0.008000000,,node1,compute,,0,
100,all,io,1,0,0.003000000,0.003000000,,node1,main => io,,0,
100,all,io,1,0,0.003000000,0.003000000,,node1,compute => io,,0,
100,all,main,1,3,0.001000000,0.010000000,,node1,main,,0,
all,all,compute,2,0,0.006000000,0.006000000,,,main => compute,,0,
all,all,compute,1,1,0.005000000,0.008000000,,,compute,,0,
all,all,io,1,0,0.003000000,0.003000000,,,main => io,,0,
all,all,io,1,0,0.003000000,0.003000000,,,compute => io,,0,
all,all,main,1,3,0.001000000,0.010000000,,,main,,0,
"
    );
    assert_eq!(stdout(&o), expected);
}

#[test]
fn text_report_names_locations_and_times() {
    let d = tmp("text");
    golden(&d);
    let o = plx(&["report", d.to_str().unwrap()]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("100.1 \"worker\" (pid 100 on node1)"));
    assert!(out.contains("cpu time 8.000 ms, wall time 10.000 ms"));
    assert!(out.contains(
        "  60.00     6.000 ms     6.000 ms          2           0     3.000 ms  compute"
    ));
    assert!(out.contains("total (all processes, all threads)"));
}

#[test]
fn json_report_has_the_documented_shape() {
    let d = tmp("json");
    golden(&d);
    let o = plx(&["report", d.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &v["processes"][0];
    assert_eq!(p["pid"], 100);
    assert_eq!(p["argv"][2], "3");
    let t = &p["threads"][1];
    assert_eq!(t["name"], "worker");
    assert_eq!(t["tid"], 101);
    assert_eq!(t["functions"][0]["function"], "compute");
    assert_eq!(t["functions"][0]["calls"], 1);
    assert_eq!(t["callpaths"][1]["callpath"][1], "io");
    assert_eq!(v["total"]["functions"][0]["calls"], 3);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
}

#[test]
fn gprof_lists_parents_and_children() {
    let d = tmp("gprof");
    golden(&d);
    let o = plx(&["report", d.to_str().unwrap(), "--gprof"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("call graph of 100.0 \"main\" (pid 100 on node1)"));
    assert!(out.contains("<spontaneous>"));
    assert!(out.contains("2/2      compute [2]"), "{out}");
}

#[test]
fn phase_must_exist() {
    let d = tmp("phase");
    golden(&d);
    let o = plx(&["report", d.to_str().unwrap(), "--phase", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "plx: no phase region named \"nope\"\n");
    // a phase is a span of time: a profile without a trace has none to give
    let o = plx(&["report", d.to_str().unwrap(), "--phase", "iter"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("rerun with `plx run --trace`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn not_an_experiment_exits_2() {
    let d = tmp("notexp");
    let o = plx(&["report", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "plx: {}: not a Parallax experiment (no <host>.<pid>/process.plx found)\n",
            d.display()
        )
    );
    let o = plx(&["info", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn damaged_experiment_prints_what_is_intact_and_warns() {
    let d = tmp("damaged");
    golden(&d);
    let mut p = SynthProcess::new("node1", 200, &["/bin/app"]);
    p.functions(&[(1, "main")])
        .thread(0, 200, "main", 0)
        .profile(0, 50, 40, &[(None, 1, 1, 0, 50, 50)])
        .end(50, 0);
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    bytes.truncate(bytes.len() - 4);
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let o = plx(&["report", d.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("200,0,main,1,0,0.000000050,0.000000050,main,node1,\n"));
    let err = stderr(&o);
    assert!(err.contains("node1.200/process.plx: offset "), "{err}");
    assert!(err.contains("4 bytes missing"), "{err}");
    assert!(err.contains("no ProcessEnd record"), "{err}");
    let o = plx(&["info", d.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("did not finish"));
}

#[test]
fn info_shows_signal_end() {
    let d = tmp("info");
    let mut p = SynthProcess::new("node1", 300, &["/bin/app"]);
    p.functions(&[(1, "main")])
        .thread(0, 300, "main", 0)
        .profile(0, 50, 40, &[(None, 1, 1, 0, 50, 50)])
        .record(Record::ProcessEnd(ProcessEnd {
            ticks: 50,
            reason: EndReason::Signal,
            status: 11,
            realtime_ns: 0,
        }));
    p.write(&d).unwrap();
    let o = plx(&["info", d.to_str().unwrap()]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("killed by signal 11 (SIGSEGV)"), "{out}");
    assert!(out.contains("process 300 (pid 300 on node1)"));
    assert!(out.contains("warnings: none"));
}

/// A directory with a loadable (empty) libplx.so, built with cc when there is one.
fn fake_lib(d: &Path) -> PathBuf {
    let lib = d.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let so = lib.join("libplx.so");
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-x", "c", "/dev/null", "-o"])
        .arg(&so)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !built {
        std::fs::write(&so, b"").unwrap();
    }
    lib
}

fn plx_env(args: &[&str], lib: Option<&Path>, cwd: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plx"));
    c.args(args).current_dir(cwd).env_remove("LD_PRELOAD");
    match lib {
        Some(l) => c.env("PLX_LIB_DIR", l),
        None => c.env("PLX_LIB_DIR", "/nonexistent-plx-lib"),
    };
    c.output().unwrap()
}

#[test]
fn run_sets_environment_and_passes_exit_status() {
    let d = tmp("run");
    let lib = fake_lib(&d);
    let filter = d.join("filter.txt");
    std::fs::write(&filter, "exclude foo\n").unwrap();
    let o = plx_env(
        &[
            "run",
            "-o",
            "exp",
            "--trace",
            "--filter",
            filter.to_str().unwrap(),
            "--buffer",
            "64K",
            "--",
            "sh",
            "-c",
            "echo \"$PLX_OUTPUT|$PLX_TRACE|$PLX_FILTER|$PLX_BUFFER|$LD_PRELOAD\"; exit 3",
        ],
        Some(&lib),
        &d,
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let exp = std::fs::canonicalize(d.join("exp")).unwrap();
    let so = std::fs::canonicalize(lib.join("libplx.so")).unwrap();
    let filter = std::fs::canonicalize(&filter).unwrap();
    assert_eq!(
        stdout(&o),
        format!(
            "{}|1|{}|65536|{}\n",
            exp.display(),
            filter.display(),
            so.display()
        )
    );
    assert!(stderr(&o).ends_with("plx: experiment written to exp\n"));
}

#[test]
fn run_reports_death_by_signal() {
    let d = tmp("run-signal");
    let lib = fake_lib(&d);
    let o = plx_env(
        &["run", "-o", "e", "--", "sh", "-c", "kill -9 $$"],
        Some(&lib),
        &d,
    );
    assert_eq!(o.status.code(), Some(137));
    assert!(stderr(&o).contains("plx: sh killed by signal 9 (SIGKILL)\n"));
}

#[test]
fn run_default_directory_and_errors() {
    let d = tmp("run-errors");
    let lib = fake_lib(&d);
    let o = plx_env(&["run", "--", "true"], Some(&lib), &d);
    assert!(o.status.success());
    let made: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("plx-true-"))
        .collect();
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].len(), "plx-true-YYYYMMDD-HHMMSS".len());

    let o = plx_env(&["run", "--", "true"], None, &d);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("runtime library not found: /nonexistent-plx-lib/libplx.so"));

    let o = plx_env(&["run", "--filter", "nofile", "--", "true"], Some(&lib), &d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "plx: nofile: filter file not found\n");

    let o = plx_env(&["run", "--buffer", "12Q", "--", "true"], Some(&lib), &d);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown unit"));

    let o = plx_env(&["run"], Some(&lib), &d);
    assert_eq!(o.status.code(), Some(2));

    let o = plx_env(&["run", "--", "/no/such/program"], Some(&lib), &d);
    assert_eq!(o.status.code(), Some(127));
}

/// The golden experiments written by the C runtime (spec/golden/): main runs fib(5) (15 calls)
/// inside the phase "compute", a worker thread fib(4) (9 calls, outside the phase's span in the
/// trace); profile and trace mode agree.
#[test]
fn runtime_golden_experiments_report_exact_calls() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../spec/golden");
    for mode in ["profile", "trace"] {
        let dir = golden.join(mode);
        let out = plx(&["report", dir.to_str().unwrap(), "--format", "csv"]);
        assert!(out.status.success(), "{mode}: {}", stderr(&out));
        let csv = stdout(&out);
        let calls = |process: &str, thread: &str, function: &str| -> u64 {
            csv.lines()
                .map(|l| l.split(',').collect::<Vec<_>>())
                .find(|f| f[0] == process && f[1] == thread && f[2] == function)
                .unwrap_or_else(|| panic!("{mode}: no row {process},{thread},{function} in\n{csv}"))
                [3]
            .parse()
            .unwrap()
        };
        assert_eq!(calls("all", "all", "fib"), 24, "{mode}");
        assert_eq!(calls("all", "all", "worker"), 1, "{mode}");
        assert_eq!(calls("all", "all", "compute"), 1, "{mode}");
        let phase = plx(&[
            "report",
            dir.to_str().unwrap(),
            "--format",
            "csv",
            "--phase",
            "compute",
        ]);
        if mode == "profile" {
            // a phase is a span of time: the profile alone has none
            assert_eq!(phase.status.code(), Some(2), "{}", stderr(&phase));
            continue;
        }
        let phase_csv = stdout(&phase);
        let fib_in_phase = phase_csv
            .lines()
            .find(|l| l.starts_with("all,all,fib,"))
            .unwrap_or_else(|| panic!("{mode}: {phase_csv}"));
        assert!(
            fib_in_phase.starts_with("all,all,fib,15,"),
            "{mode}: {fib_in_phase}"
        );
    }
}
