//! The JSON API declared once (`src/schema.rs`): the viewer's `viewer/src/api_types.ts` and the
//! API table of `docs/commands/plx-view.md` are what the declarations give (`PLX_BLESS=1`
//! rewrites them), and every endpoint's answer on a synthetic MPI run reads back as its declared
//! type, unknown keys refused (the window's answer and the profile's call paths are written by
//! hand, for speed: this is what holds them to the declaration).

use std::path::{Path, PathBuf};

use plx_format::synth_mpi::{MpiWorld, Msg};
use plx_view::api::Viewer;
use plx_view::schema::{self, ENDPOINTS};
use plx_view::server::handle;
use serde::de::DeserializeOwned;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// `path`'s text equals `want`; with `PLX_BLESS=1` it is written instead.
fn check(path: &Path, want: &str) {
    if std::env::var_os("PLX_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(path, want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "{} is stale (first difference at line {}: {:?} where the declarations give {:?}): \
             PLX_BLESS=1 cargo test -p plx-view --test api_types rewrites it",
            path.display(),
            line + 1,
            have.lines().nth(line).unwrap_or(""),
            want.lines().nth(line).unwrap_or("")
        );
    }
}

#[test]
fn the_viewers_typescript_declarations_are_generated_from_the_schema() {
    check(
        &root().join("viewer/src/api_types.ts"),
        &schema::typescript(),
    );
}

const BEGIN: &str = "<!-- api-table: generated from engine/crates/plx-view/src/schema.rs by its tests/api_types.rs -->\n";
const END: &str = "<!-- /api-table -->";

#[test]
fn the_docs_api_table_is_generated_from_the_schema() {
    let path = root().join("docs/commands/plx-view.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = page.split_once(BEGIN).expect("the page's api-table marker");
    let (_, tail) = rest.split_once(END).expect("the page's /api-table marker");
    check(
        &path,
        &format!("{head}{BEGIN}{}{END}{tail}", schema::endpoint_table()),
    );
}

#[test]
fn every_endpoints_answer_is_declared() {
    let ts = schema::typescript();
    for e in ENDPOINTS {
        assert!(
            ts.contains(&format!("export interface {} ", e.answer))
                || ts.contains(&format!("export type {} ", e.answer)),
            "{}: {} is not declared",
            e.request,
            e.answer
        );
    }
    assert_eq!(ENDPOINTS.len(), 17);
}

/// Two ranks: 20 messages from rank 0 to rank 1 (sent at 1000·(k+1) ns, received 500 ns later).
fn experiment(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plx-view-types-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut w = MpiWorld::new(2);
    w.trace = true;
    for k in 0..20u64 {
        let send = 1000 * (k + 1);
        w.message(&Msg::new((0, 0), (1, 0), 8, send, send + 500).durations(100, 200));
    }
    w.write(&d).unwrap();
    d
}

/// The server's answer to `url`, read as `T` (unknown keys refused).
fn read<T: DeserializeOwned>(v: &Viewer, url: &str) -> T {
    let tok = "0123456789abcdef0123456789abcdef";
    let sep = if url.contains('?') { '&' } else { '?' };
    let a = handle(v, tok, "GET", &format!("{url}{sep}token={tok}"));
    assert_eq!(a.status, 200, "{url}");
    let body = a.body.bytes();
    serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "{url}: {e}: {}",
            String::from_utf8_lossy(&body[..body.len().min(400)])
        )
    })
}

#[test]
fn every_answer_reads_back_as_its_declared_type() {
    let d = experiment("all");
    let v = Viewer::open(&d, None).unwrap();
    v.stop_replay();
    let meta: schema::Meta = read(&v, "/api/meta");
    assert_eq!((meta.tracks.len(), meta.messages), (2, 20));
    let w: schema::WindowAnswer = read(&v, "/api/window?t0=0&t1=30000&width=100&max=5000");
    assert_eq!(w.messages.lines.len(), 20);
    assert_eq!(w.tracks[0].len(), 2);
    let w: schema::WindowAnswer = read(&v, "/api/window?t0=0&t1=30000&width=100&max=3");
    assert_eq!(w.messages.bundles.iter().map(|b| b.3).sum::<u64>(), 20);
    let r: schema::RegionDetail = read(&v, "/api/region?track=0&depth=1&index=2");
    assert_eq!(
        (r.name.as_str(), r.start, r.duration),
        ("MPI_Send", 3000, 100)
    );
    let s: schema::Stats = read(&v, "/api/stats?t0=0&t1=5500");
    assert_eq!(s.message_count, 5);
    let p: schema::ProfileAnswer = read(&v, "/api/profile");
    assert_eq!(p.tables[0].label, "total");
    assert!(p.callpaths.iter().any(|c| c.0 == ["main", "MPI_Send"]));
    let f: schema::SearchAnswer = read(&v, "/api/search?name=MPI_Recv");
    assert_eq!(f.count, 20);
    let f: schema::FlameAnswer = read(&v, "/api/flame?t0=0&t1=30000");
    assert_eq!(
        f.nodes.iter().map(|n| n.3).sum::<u64>(),
        42,
        "2 main, 40 MPI calls"
    );
    let _: schema::SampleLaneAnswer = read(&v, "/api/sample_lane?t0=0&t1=30000&width=10");
    let _: schema::SamplesAnswer = read(&v, "/api/samples");
    let waits: schema::WaitsAnswer = read(&v, "/api/waits?t0=0&t1=30000");
    assert!(matches!(waits, schema::WaitsAnswer::Waits(_)), "{waits:?}");
    let c: schema::CountersAnswer = read(&v, "/api/counters");
    assert!(matches!(c, schema::CountersAnswer::Counted(_)), "{c:?}");
    let s: schema::SeriesAnswer = read(&v, "/api/series");
    assert!(s.series.is_empty());
    let c: schema::CommAnswer = read(&v, "/api/comm");
    assert_eq!(c.pairs, [schema::Pair(0, 1, 20, 160)]);
    let _: schema::CompareAnswer = read(&v, "/api/compare");
    let cp: schema::CritPathAnswer = read(&v, "/api/critpath");
    assert!(matches!(cp, schema::CritPathAnswer::CritPath(_)), "{cp:?}");
    let ds: schema::DisplaysAnswer = read(&v, "/api/displays?bins=10");
    assert!(matches!(ds, schema::DisplaysAnswer::Displays(_)), "{ds:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_field_missing_from_the_declaration_is_refused() {
    // what holds the hand-written window answer to its declaration
    let bad = r#"{"t0":0,"t1":1,"width":1,"tracks":[],"messages":{"total":0,"unmatched":0,"backward":0,
        "lines":[],"bundles":[]},"markers":[],"markers_total":0,"handoffs":[],
        "handoffs_total":0,"extra":1}"#;
    let e = serde_json::from_str::<schema::WindowAnswer>(bad).unwrap_err();
    assert!(e.to_string().contains("unknown field `extra`"), "{e}");
}
