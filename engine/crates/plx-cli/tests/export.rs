//! `plx export` end to end: Chrome JSON checked by Perfetto's rules and against `plx report`,
//! TAU profiles checked against `plx report` and read by Hatchet (when installed), errors,
//! damaged experiments, and the clock condition in `plx info`.

mod fixtures;
use fixtures::{plx, stderr};

#[path = "../../plx-export/tests/fixtures/mod.rs"]
mod export_fixtures;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "plx failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn report_json(d: &Path) -> Value {
    serde_json::from_str(&ok(&plx(&["report", s(d), "--format", "json"]))).unwrap()
}

/// Calls per function over all locations, as `plx report` counts them.
fn report_calls(d: &Path) -> BTreeMap<String, u64> {
    let r = report_json(d);
    r["total"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["function"].as_str().unwrap().to_string(),
                f["calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn chrome(d: &Path) -> Value {
    let out = d.join("trace.json");
    let o = plx(&["export", s(d), "--format", "chrome", "-o", s(&out)]);
    ok(&o);
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).expect("valid JSON")
}

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// Perfetto's rules for the JSON: every pid and tid below 2³¹ (Perfetto reads 32-bit numbers),
/// on each (pid, tid) B/E properly nested and balanced, X slices only on message lanes and never
/// overlapping there, every `s` with exactly one `f` (same id and cat, `bp: "e"`, not earlier),
/// both strictly inside a slice of their track. Returns the number of B slices per name.
fn check_chrome(doc: &Value) -> BTreeMap<String, u64> {
    check_chrome_flows(doc).0
}

/// A chrome track: (pid, tid).
type Track = (u64, u64);

/// [`check_chrome`], and the flows bound to a `B`/`E` slice of a thread's own track, per name
/// of that slice and flow phase (`s` or `f`).
fn check_chrome_flows(doc: &Value) -> (BTreeMap<String, u64>, BTreeMap<(String, String), u64>) {
    assert_eq!(doc["displayTimeUnit"], "ns");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut stacks: HashMap<(u64, u64), Vec<(String, f64)>> = HashMap::new();
    let mut slices: HashMap<(u64, u64), Vec<(f64, f64)>> = HashMap::new();
    let mut flows: HashMap<u64, Vec<&Value>> = HashMap::new();
    let mut named_threads: HashMap<(u64, u64), String> = HashMap::new();
    let mut named_processes = HashMap::new();
    let mut counts = BTreeMap::new();
    let mut last_ts: HashMap<(u64, u64), f64> = HashMap::new();
    // flows bound to the innermost open B slice: (key, stack depth) -> (phase, ts)
    let mut bound: HashMap<(Track, usize), Vec<(String, f64)>> = HashMap::new();
    let mut on_slices = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(
            key.0 < 1 << 31 && key.1 < 1 << 31,
            "pid or tid past 32 bits: {e}"
        );
        if ph != "M" {
            let ts = num(e, "ts");
            let last = last_ts.entry(key).or_insert(f64::MIN);
            assert!(ts >= *last, "time goes back on {key:?}: {e}");
            *last = ts;
        }
        match ph {
            "M" => match e["name"].as_str().unwrap() {
                "thread_name" => {
                    named_threads.insert(key, e["args"]["name"].as_str().unwrap().to_string());
                }
                "process_name" => {
                    named_processes.insert(key.0, e["args"]["name"].to_string());
                }
                "process_sort_index" | "thread_sort_index" => {
                    assert!(e["args"]["sort_index"].is_u64())
                }
                other => panic!("metadata {other}"),
            },
            "B" => {
                assert!(
                    key.1 < 1_000_000 || key.1 >= 2_000_000_000,
                    "B on a message lane"
                );
                let name = e["name"].as_str().unwrap().to_string();
                *counts.entry(name.clone()).or_default() += 1;
                stacks.entry(key).or_default().push((name, num(e, "ts")));
            }
            "E" => {
                let stack = stacks.entry(key).or_default();
                let depth = stack.len();
                let (name, start) = stack.pop().unwrap_or_else(|| panic!("E without B: {e}"));
                assert_eq!(e["name"].as_str().unwrap(), name, "improperly nested: {e}");
                let end = num(e, "ts");
                assert!(end >= start);
                for (fph, ts) in bound.remove(&(key, depth)).unwrap_or_default() {
                    assert!(ts < end, "flow past its slice {name}: {e}");
                    *on_slices.entry((name.clone(), fph)).or_default() += 1;
                }
            }
            "X" => {
                assert!(key.1 >= 1_000_000, "X on a thread track: {e}");
                let (ts, dur) = (num(e, "ts"), num(e, "dur"));
                assert!(dur >= 1.0, "message slices last 1 us: {e}");
                let lane = slices.entry(key).or_default();
                if let Some(&(_, end)) = lane.last() {
                    assert!(ts >= end, "overlapping X slices on {key:?}: {e}");
                }
                lane.push((ts, ts + dur));
                assert_eq!(e["cat"], "mpi-message");
            }
            "s" | "f" => {
                flows.entry(e["id"].as_u64().unwrap()).or_default().push(e);
                // bound to the slice of its track that contains it: on a thread's track the
                // innermost open B slice (checked at its E), on a lane the last X
                let ts = num(e, "ts");
                if key.1 < 1_000_000 {
                    let stack = stacks.get(&key).map_or(&[][..], |s| &s[..]);
                    let &(_, start) = stack.last().expect("flow outside every slice");
                    assert!(start < ts, "flow at its slice's start: {e}");
                    bound
                        .entry((key, stack.len()))
                        .or_default()
                        .push((ph.to_string(), ts));
                } else {
                    let lane = slices.get(&key).expect("flow on a lane with slices");
                    let &(start, end) = lane.last().unwrap();
                    assert!(start <= ts && ts < end, "flow outside its slice: {e}");
                }
            }
            "C" => assert!(e["args"]["value"].is_number()),
            "i" => assert_eq!(e["s"], "t"),
            other => panic!("unexpected phase {other}"),
        }
        if ph != "M" {
            assert!(named_threads.contains_key(&key), "track not named: {e}");
            assert!(
                named_processes.contains_key(&key.0),
                "process not named: {e}"
            );
        }
    }
    for (k, s) in &stacks {
        assert!(s.is_empty(), "unbalanced B on {k:?}: {s:?}");
    }
    for (id, f) in &flows {
        assert_eq!(f.len(), 2, "flow {id}: {f:?}");
        let (a, b) = (f[0], f[1]);
        assert_eq!((a["ph"].as_str(), b["ph"].as_str()), (Some("s"), Some("f")));
        assert_eq!(a["cat"], b["cat"]);
        assert_eq!(b["bp"], "e");
        assert!(num(b, "ts") >= num(a, "ts"), "flow {id} goes back in time");
    }
    assert!(bound.is_empty(), "flows in slices never closed: {bound:?}");
    (counts, on_slices)
}

/// The runtime's buffer flush (region 0) inside `work` is on the thread's measurement track,
/// not a slice nested in `work`.
#[test]
fn chrome_puts_the_runtimes_work_on_a_measurement_track() {
    let d = export_fixtures::tmp("chrome-measurement");
    let mut p = plx_format::synth::SynthProcess::new("node1", 7, &["./app"]);
    p.functions(&[(2, "main"), (3, "work")])
        .thread(0, 7, "main", 0);
    let mut e = plx_format::EventEncoder::new(0);
    e.enter(2, 0).enter(3, 100);
    p.chunk(0, &e);
    let mut e = plx_format::EventEncoder::new(200);
    e.enter(0, 200).exit(0, 230).exit(3, 400).exit(2, 500);
    p.chunk(0, &e);
    p.profile(0, 500, 0, &[]).end(500, 0);
    p.write(&d).unwrap();
    let doc = chrome(&d);
    check_chrome(&doc);
    let events = doc["traceEvents"].as_array().unwrap();
    let track = |name: &str| -> Vec<(String, u64)> {
        events
            .iter()
            .filter(|e| e["name"] == name && (e["ph"] == "B" || e["ph"] == "E"))
            .map(|e| {
                (
                    e["ph"].as_str().unwrap().to_string(),
                    e["tid"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let m = 2_000_000_000u64;
    assert_eq!(track("plx_flush"), [("B".into(), m), ("E".into(), m)]);
    assert_eq!(track("work"), [("B".into(), 0), ("E".into(), 0)]);
    assert!(events.iter().any(|e| e["ph"] == "M"
        && e["tid"] == m
        && e["args"]["name"]
            .as_str()
            .is_some_and(|n| n.ends_with(".0 measurement"))));
}

#[test]
fn chrome_json_follows_perfettos_rules_and_counts_plx_reports_calls() {
    for (name, make) in [
        ("chrome-threads", export_fixtures::threads as fn(&Path)),
        ("chrome-mpi", export_fixtures::mpi),
    ] {
        let d = export_fixtures::tmp(name);
        make(&d);
        let doc = chrome(&d);
        let slices = check_chrome(&doc);
        assert_eq!(slices, report_calls(&d), "{name}");
    }
    let d = export_fixtures::tmp("chrome-mpi-flows");
    export_fixtures::mpi(&d);
    let doc = chrome(&d);
    let events = doc["traceEvents"].as_array().unwrap();
    let flows = events.iter().filter(|e| e["ph"] == "s").count();
    assert_eq!(flows, 4, "every matched message is a flow");
    let counters = events.iter().filter(|e| e["ph"] == "C").count();
    assert_eq!(counters, 0);
    assert!(doc["otherData"]["clock_condition"]
        .as_str()
        .unwrap()
        .contains("0 violation(s) left"));
    let d = export_fixtures::tmp("chrome-threads-counters");
    export_fixtures::threads(&d);
    let doc = chrome(&d);
    let names: Vec<&str> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // named after their location, PID.THREAD (no MPI: the process is its pid)
    let pid = names[0]
        .strip_prefix("bytes (")
        .and_then(|n| n.split_once('.'))
        .map(|(p, _)| p)
        .unwrap();
    assert!(pid.parse::<u32>().is_ok(), "{names:?}");
    assert_eq!(
        names,
        [
            format!("bytes ({pid}.1)"),
            format!("bytes ({pid}.0)"),
            format!("bytes ({pid}.0)"),
            format!("bytes ({pid}.1)")
        ]
    );
}

/// Message flows start and end on the MPI calls' slices of the ranks' own thread tracks (they
/// were bound to synthetic lanes), and the measurement tracks' tids fit in 32 bits (they were
/// 2³² + thread, which Perfetto folds onto tid = pid).
#[test]
fn chrome_flows_bind_to_the_mpi_calls_slices_on_32_bit_tids() {
    let d = export_fixtures::tmp("chrome-flows-bound");
    export_fixtures::mpi(&d);
    let doc = chrome(&d);
    let (_, on_slices) = check_chrome_flows(&doc);
    let want: BTreeMap<(String, String), u64> = [
        (("MPI_Isend", "s"), 1),
        (("MPI_Send", "s"), 3),
        (("MPI_Recv", "f"), 3),
        (("MPI_Wait", "f"), 1),
    ]
    .into_iter()
    .map(|((n, p), c)| ((n.to_string(), p.to_string()), c))
    .collect();
    assert_eq!(on_slices, want);
    assert_eq!(doc["otherData"]["flows_on_thread_slices"], 8);
    let tids: std::collections::BTreeSet<u64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tids.into_iter().collect::<Vec<_>>(), [0, 1]);
}

/// With --no-clock-repair the message received before its send (rank 1's clock is behind) is
/// not linked by the merge, and the chrome export left its flow out (it said so): it is drawn
/// now, as a flow named for what it is from the receive to the send, the send marked.
#[test]
fn chrome_no_clock_repair_draws_messages_received_before_their_send() {
    let d = export_fixtures::tmp("chrome-no-repair");
    export_fixtures::mpi(&d);
    let out = d.join("trace.json");
    let o = plx(&[
        "export",
        s(&d),
        "--format",
        "chrome",
        "--no-clock-repair",
        "-o",
        s(&out),
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("plx: warning: ")
            && stderr(&o).contains(": 1 of 4 matched message(s) are received before their send on the unrepaired clocks: the chrome export draws 1 as a flow named 'message received before its send' from the receive to the send\n"),
        "{}",
        stderr(&o)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    let (_, on_slices) = check_chrome_flows(&doc);
    assert_eq!(on_slices.values().sum::<u64>(), 8, "{on_slices:?}");
    assert_eq!(doc["otherData"]["messages_without_flow"], 0);
    assert_eq!(doc["otherData"]["messages_received_before_send_drawn"], 1);
    let events = doc["traceEvents"].as_array().unwrap();
    let flows: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
        .collect();
    let backward: Vec<&&Value> = flows
        .iter()
        .filter(|e| e["name"] == "message received before its send")
        .collect();
    // its start on the receiver (rank 1), its end on the sender (rank 0), later
    assert_eq!(backward.len(), 2, "{backward:?}");
    assert_eq!(
        (&backward[0]["ph"], &backward[1]["ph"]),
        (&json!("s"), &json!("f"))
    );
    assert_eq!(backward[0]["id"], backward[1]["id"]);
    assert!(num(backward[0], "ts") < num(backward[1], "ts"));
    let marked: Vec<&Value> = events
        .iter()
        .filter(|e| e["args"]["received_before_send"] == true)
        .collect();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0]["pid"], backward[1]["pid"]);
    assert_ne!(backward[0]["pid"], backward[1]["pid"]);
    assert_eq!(flows.len(), 8);
    // the repaired export draws all 4 as messages
    let doc = chrome(&d);
    assert_eq!(doc["otherData"]["messages_without_flow"], 0);
    assert_eq!(doc["otherData"]["messages_received_before_send_drawn"], 0);
}

/// One profile file: its entries by name → (calls, subrs, excl, incl, group).
type TauEntries = BTreeMap<String, (u64, u64, f64, f64, String)>;

fn parse_tau(text: &str) -> (TauEntries, Vec<String>) {
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    let (n, rest) = first.split_once(' ').unwrap();
    assert_eq!(rest, "templated_functions_MULTI_TIME");
    let n: usize = n.parse().unwrap();
    let header = lines.next().unwrap();
    assert!(header.starts_with("# Name Calls Subrs Excl Incl ProfileCalls # <metadata>"));
    assert!(header.contains("<attribute><name>Metric Name</name><value>TIME</value></attribute>"));
    let mut entries = BTreeMap::new();
    for _ in 0..n {
        let l = lines.next().unwrap();
        let (name, rest) = l[1..].split_once("\" ").unwrap();
        let f: Vec<&str> = rest.split(' ').collect();
        assert_eq!(f.len(), 6, "{l}");
        assert_eq!(f[4], "0");
        let group = f[5].strip_prefix("GROUP=\"").unwrap().trim_end_matches('"');
        entries.insert(
            name.to_string(),
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                group.to_string(),
            ),
        );
    }
    assert_eq!(lines.next(), Some("0 aggregates"));
    let mut events = Vec::new();
    if let Some(l) = lines.next() {
        let k: usize = l.strip_suffix(" userevents").unwrap().parse().unwrap();
        assert_eq!(
            lines.next(),
            Some("# eventname numevents max min mean sumsqr")
        );
        for _ in 0..k {
            events.push(lines.next().unwrap().to_string());
        }
    }
    assert_eq!(lines.next(), None);
    (entries, events)
}

/// (node, thread) → callpath (names from the root) → (calls, inclusive µs), from `plx report`.
type Callpaths = BTreeMap<(u32, u32), BTreeMap<Vec<String>, (u64, f64)>>;

fn report_callpaths(d: &Path) -> Callpaths {
    let r = report_json(d);
    let procs = r["processes"].as_array().unwrap();
    let mut next = procs
        .iter()
        .filter_map(|p| p["rank"].as_u64())
        .max()
        .map_or(0, |m| m as u32 + 1);
    let mut out = BTreeMap::new();
    for p in procs {
        let node = match p["rank"].as_u64() {
            Some(r) => r as u32,
            None => {
                next += 1;
                next - 1
            }
        };
        for t in p["threads"].as_array().unwrap() {
            let th = t["thread"].as_u64().unwrap() as u32;
            let mut m = BTreeMap::new();
            for c in t["callpaths"].as_array().unwrap() {
                let path: Vec<String> = c["callpath"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect();
                m.insert(
                    path,
                    (
                        c["calls"].as_u64().unwrap(),
                        c["inclusive_s"].as_f64().unwrap() * 1e6,
                    ),
                );
            }
            out.insert((node, th), m);
        }
    }
    out
}

fn tau(d: &Path) -> std::path::PathBuf {
    let out = d.join("tau");
    let o = plx(&["export", s(d), "--format", "tau", "-o", s(&out)]);
    ok(&o);
    assert!(stderr(&o).contains("files under"), "{}", stderr(&o));
    out
}

#[test]
fn tau_profiles_hold_plx_reports_callpaths() {
    for (name, make) in [
        ("tau-threads", export_fixtures::threads as fn(&Path)),
        ("tau-mpi", export_fixtures::mpi),
    ] {
        let d = export_fixtures::tmp(name);
        make(&d);
        let out = tau(&d);
        let want = report_callpaths(&d);
        for ((node, thread), paths) in &want {
            let f = out.join(format!("MULTI__TIME/profile.{node}.0.{thread}"));
            let (entries, events) = parse_tau(&std::fs::read_to_string(&f).unwrap());
            let root = &entries[".TAU application"];
            assert_eq!(root.0, 1);
            let mut callpaths = 0;
            for (path, (calls, incl)) in paths {
                let key = format!(".TAU application => {}", path.join(" => "));
                let e = entries
                    .get(&key)
                    .unwrap_or_else(|| panic!("{key} in {f:?}"));
                assert_eq!(e.0, *calls, "{key}");
                assert!((e.3 - incl).abs() < 1e-3, "{key}: {} vs {incl}", e.3);
                assert!(e.4.ends_with("|TAU_CALLPATH"));
                callpaths += 1;
            }
            assert_eq!(
                entries.keys().filter(|k| k.contains(" => ")).count(),
                callpaths
            );
            if name == "tau-threads" {
                assert_eq!(events.len(), 1, "{events:?}");
                assert!(events[0].starts_with("\"bytes\" 2 "));
            }
        }
        if name == "tau-mpi" {
            let (e, _) =
                parse_tau(&std::fs::read_to_string(out.join("MULTI__TIME/profile.2.0.0")).unwrap());
            assert_eq!(e["MPI_Wait"].4, "MPI");
            assert_eq!(e["main"].4, "TAU_DEFAULT");
        }
    }
}

/// Reads a TAU directory with Hatchet; prints one JSON object per node of the graph frame.
const HATCHET: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
import hatchet as ht
gf = ht.GraphFrame.from_tau(sys.argv[1])
df = gf.dataframe.reset_index()
rows = []
for _, r in df.iterrows():
    rows.append({
        "rank": int(r["rank"]) if "rank" in df.columns else 0,
        "thread": int(r["thread"]) if "thread" in df.columns else 0,
        "path": [n.frame["name"] for n in r["node"].path()],
        "calls": float(r["Calls"]),
        "incl_us": float(r["time (inc)"]),
    })
print(json.dumps(rows))
"#;

fn hatchet_available() -> bool {
    Command::new("python3")
        .args(["-c", "import hatchet"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn hatchet_reads_the_tau_export_with_plx_reports_numbers() {
    if !hatchet_available() {
        eprintln!(
            "SKIPPED: python3 cannot import hatchet (pip install llnl-hatchet) — TAU export not checked by Hatchet"
        );
        return;
    }
    for (name, make) in [
        ("hatchet-threads", export_fixtures::threads as fn(&Path)),
        ("hatchet-mpi", export_fixtures::mpi),
    ] {
        let d = export_fixtures::tmp(name);
        make(&d);
        let out = tau(&d);
        let o = Command::new("python3")
            .args(["-c", HATCHET, s(&out)])
            .output()
            .unwrap();
        assert!(o.status.success(), "hatchet: {}", stderr(&o));
        let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
        let want = report_callpaths(&d);
        let mut seen = 0;
        for r in &rows {
            let path: Vec<String> = r["path"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect();
            assert_eq!(path[0], ".TAU application");
            if path.len() == 1 {
                continue;
            }
            let loc = (
                r["rank"].as_u64().unwrap() as u32,
                r["thread"].as_u64().unwrap() as u32,
            );
            let calls = num(r, "calls");
            let got = want.get(&loc).and_then(|m| m.get(&path[1..]));
            match got {
                Some((c, incl)) => {
                    assert_eq!(calls, *c as f64, "{name} {loc:?} {path:?}");
                    assert!(
                        (num(r, "incl_us") - incl).abs() < 1e-3,
                        "{name} {loc:?} {path:?}"
                    );
                    seen += 1;
                }
                // hatchet fills callpaths a location lacks with zeros
                None => assert_eq!(calls, 0.0, "{name} {loc:?} {path:?} not in plx report"),
            }
        }
        let total: usize = want.values().map(|m| m.len()).sum();
        assert_eq!(
            seen, total,
            "{name}: every callpath of plx report is in Hatchet's frame"
        );
    }
}

#[test]
fn export_errors_are_usage_errors() {
    let d = export_fixtures::tmp("errors");
    export_fixtures::threads(&d);
    let o = plx(&["export", s(&d), "--format", "vampir", "-o", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("text, chrome, tau, sddf"),
        "{}",
        stderr(&o)
    );
    let o = plx(&["export", s(&d), "--format", "tau", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("writes a directory"), "{}", stderr(&o));
    let o = plx(&["export", "/nonexistent", "--format", "text", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let o = plx(&["export", s(&d), "--format", "text"]);
    assert_eq!(o.status.code(), Some(2), "-o is required");
    // a profile-only experiment has no trace for the trace formats, but a TAU profile
    let p = export_fixtures::tmp("errors-profile");
    let mut sp = plx_format::synth::SynthProcess::new("h", 7, &["app"]);
    sp.functions(&[(1, "main")])
        .thread(0, 7, "main", 0)
        .profile(0, 10, 0, &[(None, 1, 1, 0, 10, 10)])
        .end(10, 0);
    sp.write(&p).unwrap();
    let o = plx(&["export", s(&p), "--format", "chrome", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no trace"), "{}", stderr(&o));
    ok(&plx(&[
        "export",
        s(&p),
        "--format",
        "tau",
        "-o",
        s(&p.join("tau")),
    ]));
    let o = plx(&[
        "export",
        s(&d),
        "--format",
        "text",
        "-o",
        "/nonexistent/dir/x.txt",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn text_to_standard_output_and_the_clock_condition_on_standard_error() {
    let d = export_fixtures::tmp("stdout");
    export_fixtures::mpi(&d);
    let o = plx(&["export", s(&d), "--format", "text", "-o", "-"]);
    let out = ok(&o);
    assert!(out.starts_with("# Parallax events in global time order\n"));
    assert!(
        stderr(&o).contains("plx: clock condition: 1 of 4 matched message(s) received before sent")
    );
    let o = plx(&[
        "export",
        s(&d),
        "--format",
        "text",
        "-o",
        "-",
        "--no-clock-repair",
    ]);
    assert!(ok(&o).contains("; not repaired; 1 violation(s) left"));
    let o = plx(&[
        "export",
        s(&d),
        "--format",
        "text",
        "-o",
        "-",
        "--min-latency",
        "10",
    ]);
    assert!(ok(&o).contains("       10010 1.0 recv "));
}

#[test]
fn damaged_experiment_is_exported_as_far_as_intact() {
    let d = export_fixtures::tmp("damaged");
    export_fixtures::mpi(&d);
    // rank 2's trace loses its end: the last chunk is cut
    let trace = d.join("node1.1002/trace.plx");
    let len = std::fs::metadata(&trace).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&trace)
        .unwrap()
        .set_len(len - 20)
        .unwrap();
    let o = plx(&[
        "export",
        s(&d),
        "--format",
        "chrome",
        "-o",
        s(&d.join("t.json")),
    ]);
    ok(&o);
    let err = stderr(&o);
    assert!(err.contains("plx: warning:"), "{err}");
    assert!(
        err.contains("truncated") || err.contains("runs past"),
        "{err}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("t.json")).unwrap()).unwrap();
    check_chrome(&doc);
}

#[test]
fn info_reports_the_clock_condition() {
    let d = export_fixtures::tmp("info-clock");
    export_fixtures::mpi(&d);
    let out = ok(&plx(&["info", s(&d)]));
    assert!(
        out.contains("clock condition: 1 of 4 matched message(s) received before sent (after the ClockOffset correction); controlled logical clock (minimum latency 1000 ns): 2 receive(s) moved later, largest shift 2000 ns; 0 violation(s) left"),
        "{out}"
    );
    let d = export_fixtures::tmp("info-no-mpi");
    export_fixtures::threads(&d);
    assert!(!ok(&plx(&["info", s(&d)])).contains("clock condition"));
}

/// `plx args` with writes limited to `limit` bytes per file (a full disk, as the process sees
/// it: write fails with EFBIG).
fn plx_with_file_limit(args: &[&str], limit: u64) -> Output {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(env!("CARGO_BIN_EXE_plx"));
    c.args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("run plx")
}

#[test]
fn export_that_fails_leaves_no_partial_output() {
    let d = export_fixtures::tmp("export-fails");
    export_fixtures::threads(&d);
    let out = d.join("trace.json");
    std::fs::write(&out, "earlier").unwrap();
    let o = plx_with_file_limit(&["export", s(&d), "--format", "chrome", "-o", s(&out)], 300);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("File too large"), "{}", stderr(&o));
    // the earlier file is intact, and no temporary file is left beside it
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier");
    let left: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("plx-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // a directory format likewise leaves no directory
    let tau = d.join("tau");
    let o = plx_with_file_limit(&["export", s(&d), "--format", "tau", "-o", s(&tau)], 100);
    assert!(!o.status.success());
    assert!(!tau.exists());
    // and with room, the same export succeeds
    ok(&plx(&[
        "export",
        s(&d),
        "--format",
        "chrome",
        "-o",
        s(&out),
    ]));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(doc["traceEvents"].as_array().unwrap().len() > 10);
}
