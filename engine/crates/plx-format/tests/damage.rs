//! Golden-style tests: synthetic experiments, intact and damaged, read back with their warnings.

use plx_format::event::{enter_word, exit_word, extended_word};
use plx_format::synth::SynthProcess;
use plx_format::writer::record_bytes;
use plx_format::{
    ClockSource, Event, EventEncoder, Experiment, FormatError, Record, RegionKind, WarningKind,
};

use plx_format::test_dir::tmp;

fn basic() -> SynthProcess {
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    p.functions(&[(1, "main"), (2, "work")])
        .thread(0, 100, "main", 0)
        .profile(
            0,
            1000,
            900,
            &[(None, 1, 1, 1, 1000, 400), (Some(0), 2, 1, 0, 600, 600)],
        )
        .end(1000, 0);
    p
}

#[test]
fn intact_experiment_has_no_warnings() {
    let d = tmp("intact");
    basic().write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.images.len(), 1);
    let img = &e.images[0];
    assert_eq!((img.host.as_str(), img.pid, img.image), ("node1", 100, 0));
    assert_eq!(img.process.regions.len(), 3);
    assert_eq!(img.process.regions[&0].name, "plx_flush");
    assert_eq!(
        img.process.threads[&0]
            .profile
            .as_ref()
            .unwrap()
            .nodes
            .len(),
        2
    );
    assert_eq!(img.clock.source, ClockSource::Calibrated);
    assert!(img.finished());
}

#[test]
fn truncated_last_record_keeps_the_rest() {
    let d = tmp("truncated");
    let p = basic();
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    let last = record_bytes(p.records.last().unwrap());
    let full = bytes.len();
    bytes.truncate(full - 5);
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    let img = &e.images[0];
    assert!(img.process.end.is_none());
    assert_eq!(
        img.process.threads[&0]
            .profile
            .as_ref()
            .unwrap()
            .nodes
            .len(),
        2
    );
    let w = e
        .warnings
        .iter()
        .find(|w| matches!(w.kind, WarningKind::Truncated { .. }))
        .expect("a truncation warning");
    assert_eq!(w.kind, WarningKind::Truncated { missing: 5 });
    assert_eq!(w.offset, Some((full - last.len()) as u64));
    assert!(w.path.ends_with("node1.100/process.plx"));
    assert!(e.warnings.iter().any(|w| w.kind == WarningKind::Unfinished));
}

#[test]
fn truncated_record_header() {
    let d = tmp("trunc-header");
    let p = basic();
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    bytes.extend_from_slice(&[12, 0, 0]);
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(e.images[0].finished());
    assert!(e
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::Truncated { missing: 5 }));
}

#[test]
fn garbage_tail_is_reported_and_ignored() {
    let d = tmp("garbage");
    let p = basic();
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    let at = bytes.len() as u64;
    bytes.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x55, 0x66]);
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(e.images[0].finished());
    let w = &e.warnings[0];
    assert_eq!(w.kind, WarningKind::Garbage { ignored: 10 });
    assert_eq!(w.offset, Some(at));
    assert_eq!(e.warnings.len(), 1);
}

#[test]
fn bad_magic_is_a_warning() {
    let d = tmp("magic");
    let dir = basic().write(&d).unwrap();
    std::fs::write(dir.join("process.plx"), b"ELF\x7f not ours at all").unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(matches!(e.warnings[0].kind, WarningKind::Garbage { .. }));
    assert!(e.images[0].process.info.is_none());
}

#[test]
fn unknown_record_type_is_skipped_by_length() {
    let d = tmp("unknown");
    let mut p = SynthProcess::new("node1", 100, &["/bin/app"]);
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    bytes.extend(plx_format::writer::raw_record_bytes(4000, &[9; 33]));
    p.records.clear();
    p.functions(&[(1, "after")]).end(10, 0);
    for r in &p.records {
        bytes.extend(record_bytes(r));
    }
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.images[0].process.unknown_records, 1);
    assert_eq!(e.images[0].process.regions[&1].name, "after");
}

#[test]
fn malformed_known_record_is_skipped_with_warning() {
    let d = tmp("malformed");
    let p = basic();
    let dir = p.write(&d).unwrap();
    let mut bytes = p.process_bytes();
    // A RegionDef whose name length runs past its payload.
    bytes.extend(plx_format::writer::raw_record_bytes(5, &[1, 0, 0, 0, 0, 0]));
    std::fs::write(dir.join("process.plx"), &bytes).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert_eq!(e.warnings.len(), 1);
    assert_eq!(e.warnings[0].kind, WarningKind::Malformed);
    assert!(e.images[0].finished());
}

#[test]
fn missing_trace_when_events_were_recorded() {
    let d = tmp("missing-trace");
    let mut p = basic();
    if let Some(Record::ThreadProfile(tp)) = p
        .records
        .iter_mut()
        .find(|r| matches!(r, Record::ThreadProfile(_)))
    {
        tp.trace_events = 42;
    }
    p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let w = &e.warnings[0];
    assert_eq!(w.kind, WarningKind::MissingFile);
    assert!(w.path.ends_with("trace.plx"));
    assert!(w.message.contains("42"));
}

#[test]
fn not_an_experiment() {
    let d = tmp("not-exp");
    std::fs::create_dir_all(d.join("somedir")).unwrap();
    std::fs::write(d.join("x.txt"), "hi").unwrap();
    let err = Experiment::open(&d).unwrap_err();
    assert!(matches!(err, FormatError::NotAnExperiment(_)));
    assert!(err
        .to_string()
        .ends_with("not a Parallax experiment (no <host>.<pid>/process.plx found)"));
}

#[test]
fn exec_images_are_separate() {
    let d = tmp("exec");
    let p = basic();
    let dir = p.write(&d).unwrap();
    std::fs::write(dir.join("process.1.plx"), p.process_bytes()).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert_eq!(e.images.len(), 2);
    assert_eq!(e.images[1].image, 1);
    assert!(e.images[1].process_path().ends_with("process.1.plx"));
}

#[test]
fn trace_streams_chunks_and_skips_unknown_subtypes() {
    let d = tmp("trace");
    let mut p = SynthProcess::new("h", 7, &["a"]);
    p.region(1, RegionKind::Function, "f")
        .thread(0, 7, "main", 0);
    let mut ev = EventEncoder::new(100);
    // The raw unknown event carries a delta of 5 the encoder does not know about.
    ev.enter(1, 110)
        .raw(&[extended_word(33, 2, 5), 1, 2])
        .exit(1, 130);
    p.chunk(0, &ev);
    let mut ev2 = EventEncoder::new(200);
    ev2.user(0, 1.5, 210);
    p.chunk(1, &ev2);
    p.end(300, 0);
    p.write(&d).unwrap();
    let e = Experiment::open(&d).unwrap();
    let idx = e.images[0].trace.as_ref().unwrap();
    assert_eq!(idx.chunks.len(), 2);
    assert_eq!(idx.words_per_thread[&0], 5);
    let mut r = idx.reader().unwrap();
    let (info, events) = r.next_chunk().unwrap().unwrap();
    assert_eq!(info.header.thread, 0);
    let evs: Vec<Event> = events.collect();
    assert_eq!(
        evs,
        vec![
            Event::Enter {
                region: 1,
                ticks: 110
            },
            Event::Unknown {
                subtype: 33,
                ticks: 115
            },
            Event::Exit {
                region: 1,
                ticks: 135
            }
        ]
    );
    let (_, events) = r.next_chunk().unwrap().unwrap();
    assert_eq!(events.count(), 1);
    assert!(r.next_chunk().is_none());
}

#[test]
fn truncated_trace_chunk_keeps_earlier_chunks() {
    let d = tmp("trace-trunc");
    let mut p = basic();
    let mut ev = EventEncoder::new(0);
    ev.enter(1, 1).exit(1, 2);
    p.chunk(0, &ev).chunk(0, &ev);
    let dir = p.write(&d).unwrap();
    let mut t = p.trace_bytes().unwrap();
    t.truncate(t.len() - 3);
    std::fs::write(dir.join("trace.plx"), &t).unwrap();
    let e = Experiment::open(&d).unwrap();
    assert_eq!(e.images[0].trace.as_ref().unwrap().chunks.len(), 1);
    let w = &e.warnings[0];
    assert_eq!(w.kind, WarningKind::Truncated { missing: 3 });
    assert!(w.path.ends_with("trace.plx"));
}

#[test]
fn raw_words_decode_as_spec_says() {
    // region 5 enter after 7 ticks, exit after 3 more.
    assert_eq!(enter_word(5, 7), (5u64 << 40) | 7);
    assert_eq!(exit_word(5, 3), (1u64 << 62) | (5u64 << 40) | 3);
}

#[test]
fn many_malformed_chunks_give_few_warnings() {
    let d = tmp("many-bad-chunks");
    let p = basic();
    let dir = p.write(&d).unwrap();
    let mut w =
        plx_format::writer::FileWriter::new(Vec::new(), plx_format::FileKind::Trace).unwrap();
    for _ in 0..20 {
        // event_count 9 but only 2 words.
        let mut payload = plx_format::ChunkHeader {
            thread: 0,
            event_count: 9,
            base_ticks: 0,
            calib: plx_format::Calibration {
                ticks: 0,
                monotonic_ns: 0,
            },
        }
        .encode()
        .to_vec();
        payload.extend_from_slice(&[0u8; 16]);
        w.raw_record(32, &payload).unwrap();
    }
    std::fs::write(dir.join("trace.plx"), w.finish().unwrap()).unwrap();
    let e = Experiment::open(&d).unwrap();
    let n = e
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Malformed)
        .count();
    assert_eq!(n, 6);
    assert!(e
        .warnings
        .iter()
        .any(|w| w.message.starts_with("15 more trace chunks")));
}
