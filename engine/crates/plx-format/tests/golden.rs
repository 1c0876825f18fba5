//! Golden experiments written by the C runtime (spec/golden/, made by make-golden.sh) decode to
//! exactly the records and events in their `.expected` dumps. `PLX_BLESS=1` rewrites the dumps
//! (only when the golden files themselves are regenerated: old files must keep decoding).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plx_format::framing::RecordIter;
use plx_format::{Record, TraceIndex};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../spec/golden")
}

fn dump(dir: &Path) -> String {
    let mut out = String::new();
    let process = dir.join("golden.1000/process.plx");
    let bytes = std::fs::read(&process).expect("golden process.plx");
    let mut records = RecordIter::new(&process, &bytes);
    for (head, payload) in records.by_ref() {
        match Record::decode(head.record_type, payload) {
            Ok(Some(r)) => writeln!(out, "{r:?}").unwrap(),
            Ok(None) => writeln!(out, "unknown record {}", head.record_type).unwrap(),
            Err(e) => writeln!(out, "bad record {}: {e:?}", head.record_type).unwrap(),
        }
    }
    assert!(
        records.warning.is_none(),
        "golden file damaged: {:?}",
        records.warning
    );
    let trace = dir.join("golden.1000/trace.plx");
    if trace.exists() {
        let mut warnings = Vec::new();
        let index = TraceIndex::scan(&trace, &mut warnings).expect("trace index");
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut reader = index.reader().expect("trace reader");
        while let Some(chunk) = reader.next_chunk() {
            let (info, events) = chunk.expect("chunk");
            writeln!(out, "chunk {:?}", info.header).unwrap();
            for e in events {
                writeln!(out, "  {e:?}").unwrap();
            }
        }
    }
    out
}

fn check(mode: &str) {
    let dir = golden_dir().join(mode);
    let got = dump(&dir);
    let expected_path = golden_dir().join(format!("{mode}.expected"));
    if std::env::var_os("PLX_BLESS").is_some() {
        std::fs::write(&expected_path, &got).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).expect("expected dump");
    assert_eq!(got, expected, "decoding of spec/golden/{mode} changed");
}

#[test]
fn golden_profile_decodes() {
    check("profile");
}

#[test]
fn golden_trace_decodes() {
    check("trace");
}
