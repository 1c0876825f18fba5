//! Golden experiments (spec/golden/, made by make-golden.sh) decode to exactly the records and
//! events of their `.expected` dumps. The dump is the schema's language-neutral text
//! (`Record::dump`, `Event::dump`); runtime/tests/plx_check.c prints the same from the same
//! schema and is compared with the same files (ctest golden_*). `PLX_BLESS=1` rewrites the dumps
//! (only when the golden files themselves are regenerated: old files must keep decoding).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plx_format::framing::RecordIter;
use plx_format::schema::{fixed_size, types};
use plx_format::{ChunkEvents, ChunkHeader, Record, TraceIndex};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../spec/golden")
}

fn dump_process(path: &Path, out: &mut String) {
    let bytes = std::fs::read(path).expect("golden process.plx");
    let mut records = RecordIter::new(path, &bytes);
    for (head, payload) in records.by_ref() {
        match Record::decode(head.record_type, payload) {
            Ok(Some(r)) => {
                r.dump(out);
                out.push('\n');
            }
            Ok(None) => writeln!(
                out,
                "unknown record {} ({} bytes)",
                head.record_type,
                payload.len()
            )
            .unwrap(),
            Err(_) => writeln!(out, "bad record {}", head.record_type).unwrap(),
        }
    }
    assert!(records.warning.is_none(), "{:?}", records.warning);
}

fn dump_trace(path: &Path, out: &mut String) {
    let mut warnings = Vec::new();
    TraceIndex::scan(path, &mut warnings).expect("trace index");
    assert!(warnings.is_empty(), "{warnings:?}");
    let bytes = std::fs::read(path).unwrap();
    let mut records = RecordIter::new(path, &bytes);
    for (head, payload) in records.by_ref() {
        if head.record_type != types::TRACE_CHUNK || payload.len() < fixed_size::TRACE_CHUNK {
            writeln!(
                out,
                "unknown record {} ({} bytes)",
                head.record_type,
                payload.len()
            )
            .unwrap();
            continue;
        }
        let (fixed, events) = payload.split_at(fixed_size::TRACE_CHUNK);
        let h = ChunkHeader::decode(fixed.try_into().unwrap());
        writeln!(
            out,
            "chunk thread={} event_count={} base_ticks={} calib_ticks={} calib_monotonic_ns={}",
            h.thread, h.event_count, h.base_ticks, h.calib.ticks, h.calib.monotonic_ns
        )
        .unwrap();
        let n = (h.event_count as usize).min(events.len() / 8);
        for e in ChunkEvents::new(&events[..n * 8], h.base_ticks) {
            out.push_str("  ");
            e.dump(out);
            out.push('\n');
        }
    }
    assert!(records.warning.is_none(), "{:?}", records.warning);
}

fn dump(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("golden experiment")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        writeln!(out, "process {name}").unwrap();
        dump_process(&dir.join(&name).join("process.plx"), &mut out);
        let trace = dir.join(&name).join("trace.plx");
        if trace.exists() {
            dump_trace(&trace, &mut out);
        }
    }
    out
}

/// Every `spec/golden/NAME.expected` against the dump of `spec/golden/NAME/`.
#[test]
fn every_golden_experiment_decodes_to_its_dump() {
    let mut names: Vec<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".expected").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 2, "golden experiments: {names:?}");
    let mut changed = Vec::new();
    for name in &names {
        let got = dump(&golden_dir().join(name));
        let expected_path = golden_dir().join(format!("{name}.expected"));
        if std::env::var_os("PLX_BLESS").is_some() {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).expect("expected dump");
        if got != expected {
            let line = got
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(expected.lines().count()));
            changed.push(format!(
                "spec/golden/{name}: first difference at line {}",
                line + 1
            ));
        }
    }
    assert!(changed.is_empty(), "{changed:#?}");
}

/// Together the golden experiments hold every record type and every event subtype of the schema.
#[test]
fn golden_experiments_cover_every_record_and_subtype() {
    let mut seen = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(golden_dir()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "expected") {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let first = line.split_whitespace().next().unwrap_or("");
                seen.insert(
                    if first == "chunk" {
                        "TraceChunk"
                    } else {
                        first
                    }
                    .to_owned(),
                );
            }
        }
    }
    let missing: Vec<&str> = plx_format::schema::RECORD_NAMES
        .iter()
        .map(|(_, n)| *n)
        .chain(plx_format::schema::SUBTYPE_NAMES.iter().map(|(_, n)| *n))
        .filter(|n| !seen.contains(*n))
        .collect();
    assert!(missing.is_empty(), "no golden experiment holds {missing:?}");
}
