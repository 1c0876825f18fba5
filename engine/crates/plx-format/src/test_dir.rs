//! Scratch directories for tests and benchmarks (with the `synth` feature): fresh, uniquely
//! named under the system's temporary directory, removed when dropped.

use std::ops::Deref;
use std::path::Path;

/// A directory that is removed with everything in it when dropped; derefs to its path.
#[derive(Debug)]
pub struct TestDir(tempfile::TempDir);

impl Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// A fresh empty directory whose name starts with `plx-NAME-`.
pub fn tmp(name: &str) -> TestDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("plx-{name}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("a temporary directory for {name}: {e}"));
    TestDir(dir)
}
