//! Helpers the `plx` binary's integration tests share: a scratch directory, running `plx`,
//! its output as text.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// A fresh directory under the system's temporary directory, distinct per test binary.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "plx-cli-{}-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the `plx` binary under test.
pub fn plx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plx"))
        .args(args)
        .output()
        .expect("run plx")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
