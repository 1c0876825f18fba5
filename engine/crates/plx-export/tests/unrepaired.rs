//! `--no-clock-repair`: a message received before its send (rank 1 receives rank 0's message at
//! 9,000 ns, sent at 10,000: tests/fixtures `mpi`) is written by every trace format, as both its
//! events, and said.

mod fixtures;

use std::process::Command;

use plx_analysis::MergeOptions;
use plx_export::{export, ExportOptions};

fn unrepaired() -> ExportOptions {
    ExportOptions {
        merge: MergeOptions {
            repair_clock: false,
            min_latency_ns: None,
        },
        ..ExportOptions::default()
    }
}

#[test]
fn otf2_writes_a_message_received_before_its_send() {
    let d = fixtures::tmp("unrepaired-otf2");
    fixtures::mpi(&d);
    let out = d.join("otf2");
    let (_, summary) = export("otf2", &d, &out, unrepaired()).unwrap();
    let p = Command::new("otf2-print")
        .arg(out.join("traces.otf2"))
        .output()
        .expect("otf2-print (the OTF2 tools) runs");
    let text = String::from_utf8_lossy(&p.stdout);
    let err = String::from_utf8_lossy(&p.stderr);
    assert!(p.status.success(), "{err}");
    let n = |k: &str| text.lines().filter(|l| l.starts_with(k)).count();
    // the four messages, both ends each (the MPI_Isend's an MPI_ISEND record, its MPI_Wait's
    // receive an MPI_RECV: this synthetic trace has no send_done or recv_posted)
    assert_eq!(
        (n("MPI_SEND "), n("MPI_ISEND "), n("MPI_RECV ")),
        (3, 1, 4),
        "{text}"
    );
    // rank 1's receive at 9,000 ns, before rank 0's send at 10,000, as the clocks say
    let at = |k: &str, loc: &str| {
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.len() > 2 && w[0] == k && w[1] == loc)
            .map(|w| w[2].parse::<i64>().unwrap())
            .unwrap()
    };
    assert_eq!(
        (at("MPI_RECV", "2"), at("MPI_SEND", "0")),
        (9000, 10000),
        "{text}"
    );
    // said once, as the clock condition of every format
    let clock = summary.clock.expect("an MPI run's clock condition");
    assert_eq!(clock.violations_after, 1);
}

#[test]
fn parquet_holds_both_ends_of_a_message_received_before_its_send() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let d = fixtures::tmp("unrepaired-parquet");
    fixtures::mpi(&d);
    let out = d.join("pq");
    export("parquet", &d, &out, unrepaired()).unwrap();
    let file = std::fs::File::open(out.join("events.parquet")).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let (mut sends, mut recvs) = (Vec::new(), Vec::new());
    for row in reader.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        let field = |n: &str| {
            row.get_column_iter()
                .find(|(name, _)| name.as_str() == n)
                .map(|(_, f)| f.to_string().trim_matches('"').to_string())
                .unwrap()
        };
        match field("kind").as_str() {
            "send" => sends.push(field("time_ns")),
            "recv" => recvs.push(field("time_ns")),
            _ => {}
        }
    }
    assert_eq!(sends, ["10000", "12000", "15000", "20000"]);
    assert_eq!(recvs, ["9000", "13500", "18000", "30000"]);
}
