//! The generated decoders (src/schema.rs), runtime/src/core/records.h, the Python table and the
//! tables of spec/format.md are exactly what scripts/gen-format.py makes from spec/records.toml.

use std::path::Path;
use std::process::Command;

#[test]
fn generated_format_files_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/gen-format.py"))
        .arg("--check")
        .output()
        .expect("python3 runs scripts/gen-format.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
