//! Compiles the runtime's option table and grammars (runtime/src/core/options.c), its filter
//! parser (filter_parse.c), counter table, the names globs match (names.c) and the launchers (launchers.c) into plx: `plx
//! run` checks values, filter files and --probe globs with the very code libplx uses. Only these standalone files: plx never links libplx.so itself.

use std::path::PathBuf;

fn main() {
    let core = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("../../../runtime/src/core");
    let sources = [
        "options.c",
        "filter_parse.c",
        "counter_events.c",
        "names.c",
        "launchers.c",
    ];
    let headers = [
        "options.h",
        "options.def",
        "filter_parse.h",
        "counter_events.h",
        "names.h",
        "launchers.h",
    ];
    cc::Build::new()
        .files(sources.iter().map(|f| core.join(f)))
        .include(&core)
        .define("_GNU_SOURCE", None)
        .flag("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .compile("plx_grammar");
    for f in sources.iter().chain(headers.iter()) {
        println!("cargo:rerun-if-changed={}", core.join(f).display());
    }
}
