//! Helpers the `plx` binary's integration tests share: a scratch directory, running `plx`,
//! its output as text.
#![allow(dead_code)]

use std::process::{Command, Output};

#[allow(unused_imports)]
pub use plx_format::test_dir::tmp;

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
