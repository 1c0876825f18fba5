//! `--window`: every trace format exports the same span of the synthetic MPI run
//! (tests/fixtures `mpi`, whose text export is tests/data/mpi.txt): the window [12 µs, 19.5 µs)
//! after the first event. Inside it: rank 2's MPI_Recv (13,000 ns) and MPI_Wait (18,500 ns),
//! rank 1's MPI_Send of message 1 (14,000) received by rank 2 at 15,000, and the worker's
//! MPI_Isend (15,000) of message 2, received at 19,500, at the window's end: outside. The four
//! `main`/`worker` calls open at 12 µs are entered there; at 19.5 µs they and rank 2's
//! MPI_Wait are open, and exited there.

mod fixtures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use plx_analysis::PhaseSpec;
use plx_export::{export, ExportOptions, ExportSummary};

const WINDOW: &str = "0.000012:0.0000195";

fn windowed() -> ExportOptions {
    ExportOptions {
        window: Some(PhaseSpec::window(WINDOW).unwrap()),
        ..ExportOptions::default()
    }
}

/// The window's export as `format`: (the experiment's directory, kept while it lives; the
/// output; the summary).
fn run(format: &str, name: &str) -> (fixtures::TestDir, PathBuf, ExportSummary) {
    let d = fixtures::tmp(name);
    fixtures::mpi(&d);
    let out = d.join(format!("out.{format}"));
    let (_, summary) = export(format, &d, &out, windowed()).unwrap();
    (d, out, summary)
}

fn count<'a>(words: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for w in words {
        *m.entry(w.to_string()).or_insert(0) += 1;
    }
    m
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|&(k, n)| (k.to_string(), n)).collect()
}

#[test]
fn text_export_of_a_window() {
    let (_d, out, summary) = run("text", "window-text");
    let text = std::fs::read_to_string(out).unwrap();
    let events: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        events,
        [
            "       12000 0.0 enter      main",
            "       12000 0.1 enter      worker",
            "       12000 1.0 enter      main",
            "       12000 2.0 enter      main",
            "       13000 2.0 enter      MPI_Recv",
            "       14000 1.0 enter      MPI_Send",
            "       14000 1.0 send       MPI_Send  to=2 tag=5 bytes=64 comm=c0 msg=1",
            "       14100 1.0 exit       MPI_Send",
            "       15000 0.1 enter      MPI_Isend",
            "       15000 2.0 recv       MPI_Recv  from=1.0 tag=5 bytes=64 comm=c0 msg=1",
            "       15000 2.0 exit       MPI_Recv",
            "       15200 0.1 exit       MPI_Isend",
            "       18500 2.0 enter      MPI_Wait",
        ]
    );
    // the text format says what is open at the end in comments, as for a whole run
    for l in [
        "# window: 12000 to 19500 ns: the calls open at its start entered there, those open at its end ended there; messages with both ends inside\n",
        "# 0.0: 1 calls still open (main), ended at 19500, the window's end\n",
        "# 0.1: 1 calls still open (worker), ended at 19500, the window's end\n",
        "# 1.0: 1 calls still open (main), ended at 19500, the window's end\n",
        "# 2.0: 2 calls still open (MPI_Wait < main), ended at 19500, the window's end\n",
        "# 13 events\n",
    ] {
        assert!(text.contains(l), "{l}{text}");
    }
    assert_eq!(summary.records, 13);
    assert_eq!(summary.messages_across_edges, 1);
}

#[test]
fn chrome_export_of_a_window() {
    let (_d, out, summary) = run("chrome", "window-chrome");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let phases = count(events.iter().filter_map(|e| e["ph"].as_str()));
    let slices = |ph: &str| {
        count(
            events
                .iter()
                .filter(|e| e["ph"] == ph)
                .filter_map(|e| e["name"].as_str()),
        )
    };
    // 8 calls: the 4 open at the start, MPI_Recv, MPI_Send, MPI_Isend, MPI_Wait (open at the
    // end); each begins and ends
    assert_eq!(slices("B"), slices("E"));
    assert_eq!(
        slices("B"),
        counts(&[
            ("MPI_Isend", 1),
            ("MPI_Recv", 1),
            ("MPI_Send", 1),
            ("MPI_Wait", 1),
            ("main", 3),
            ("worker", 1)
        ])
    );
    // one message: its flow's start and end
    assert_eq!(phases.get("s"), Some(&1), "{phases:?}");
    assert_eq!(phases.get("f"), Some(&1), "{phases:?}");
    assert_eq!(summary.messages_across_edges, 1);
}

#[test]
fn otf2_export_of_a_window_as_otf2_print_reads_it() {
    let (_d, out, summary) = run("otf2", "window-otf2");
    let p = Command::new("otf2-print")
        .arg(out.join("traces.otf2"))
        .output()
        .expect("otf2-print (the OTF2 tools) runs");
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let text = String::from_utf8(p.stdout).unwrap();
    let kinds = count(
        text.lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_') && w.len() > 2),
    );
    let want = counts(&[
        ("ENTER", 8),
        ("LEAVE", 8),
        ("MPI_SEND", 1),
        ("MPI_ISEND", 0),
        ("MPI_RECV", 1),
    ]);
    for (k, n) in &want {
        assert_eq!(
            kinds.get(k).copied().unwrap_or(0),
            *n,
            "{k}: {kinds:?}\n{text}"
        );
    }
    assert_eq!(summary.messages_across_edges, 1);
}

#[test]
fn parquet_export_of_a_window() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let (_d, out, summary) = run("parquet", "window-parquet");
    let file = std::fs::File::open(Path::new(&out).join("events.parquet")).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let mut kinds = BTreeMap::new();
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        for (name, field) in row.get_column_iter() {
            if name == "kind" {
                *kinds
                    .entry(field.to_string().trim_matches('"').to_string())
                    .or_insert(0) += 1;
            }
        }
    }
    assert_eq!(
        kinds,
        counts(&[("enter", 8), ("exit", 8), ("recv", 1), ("send", 1)])
    );
    assert_eq!(summary.messages_across_edges, 1);
}

#[test]
fn a_window_needs_a_trace_format() {
    let d = fixtures::tmp("window-tau");
    fixtures::mpi(&d);
    let Err(e) = export("tau", &d, &d.join("tau"), windowed()) else {
        panic!("a tau export of a window");
    };
    assert!(e.to_string().contains("--phase/--window"), "{e}");
}
