//! The tables of an experiment as record batches: what each `_native` function computes, with the engine's own analyses (the commands' numbers), nothing recomputed here.
//!
//! `trace.rs` the merged trace's tables (one merge), `profiles.rs` the callpath profiles,
//! `reports.rs` the synchronization objects, wait states and counters.

mod profiles;
mod reports;
mod samples;
mod trace;

pub use profiles::profiles;
pub use reports::{counters, processes, sync, waits};
pub use samples::samples;
pub use trace::{intervals, trace};

use plx_export::columns::Col;

/// The warnings as `plx: warning:` lines say them (without the prefix).
pub(crate) fn warnings<'a>(w: impl IntoIterator<Item = &'a plx_format::Warning>) -> Vec<String> {
    w.into_iter().map(|w| w.to_string()).collect()
}

/// A column of present values.
pub(crate) fn col<T: Copy + Default>(values: Vec<T>) -> Col<T> {
    Col {
        values,
        valid: None,
        nulls: 0,
    }
}

/// A column of values or nulls.
pub(crate) fn opt_col<T: Copy + Default>(values: impl IntoIterator<Item = Option<T>>) -> Col<T> {
    let mut c = Col::default();
    for v in values {
        c.opt(v);
    }
    c
}
