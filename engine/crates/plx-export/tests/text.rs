//! Golden tests of the `text` export: synthetic experiments → exactly the text in `tests/data/`
//! (`PLX_BLESS=1 cargo test -p plx-export --test text` rewrites them after a deliberate change).

mod fixtures;

use std::path::Path;

use plx_analysis::MergeOptions;
use plx_export::{export, ExportOptions};

fn text_of(d: &Path, opts: ExportOptions) -> String {
    let out = d.join("out.txt");
    export("text", d, &out, opts).unwrap();
    std::fs::read_to_string(out).unwrap()
}

fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.txt"));
    if std::env::var_os("PLX_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap();
    assert_eq!(got, want, "{} differs", path.display());
}

#[test]
fn threads_text_is_the_golden_text() {
    let d = fixtures::tmp("text-threads");
    fixtures::threads(&d);
    golden("threads", &text_of(&d, ExportOptions::default()));
}

#[test]
fn mpi_text_is_the_golden_text() {
    let d = fixtures::tmp("text-mpi");
    fixtures::mpi(&d);
    golden("mpi", &text_of(&d, ExportOptions::default()));
}

#[test]
fn text_is_deterministic_and_in_time_order() {
    let d = fixtures::tmp("text-order");
    fixtures::mpi(&d);
    let a = text_of(&d, ExportOptions::default());
    let b = text_of(&d, ExportOptions::default());
    assert_eq!(a, b);
    let times: Vec<i64> = a
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    // every matched receive comes at least the minimum latency after its send
    let at = |m: &str, kind: &str| -> i64 {
        a.lines()
            .find(|l| l.contains(kind) && l.ends_with(&format!("msg={m}")))
            .and_then(|l| l.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap()
    };
    for m in 0..4 {
        let m = m.to_string();
        assert!(at(&m, " recv ") >= at(&m, " send ") + 1000, "message {m}");
    }
}

#[test]
fn without_repair_the_raw_order_shows() {
    let d = fixtures::tmp("text-raw");
    fixtures::mpi(&d);
    let opts = ExportOptions {
        merge: MergeOptions {
            repair_clock: false,
            min_latency_ns: None,
        },
        ..ExportOptions::default()
    };
    let t = text_of(&d, opts);
    assert!(t.contains("        9000 1.0 recv       MPI_Recv  from=0 tag=0 bytes=8 comm=c0\n"));
    assert!(t.contains("1 violation(s) left"));
}
