//! Parallax exports: an experiment's merged trace or its profiles written in other tools' formats.
//!
//! One module per format, each an [`Exporter`]; [`FORMATS`] lists them, and is the one place the
//! `--format` values come from. Trace formats read the experiment through the global merge
//! ([`plx_analysis::GlobalMerge`]: every thread of every process in time order on rank 0's clock,
//! the clock condition repaired), one event at a time; profile formats read the model's callpath
//! trees.
//!
//! Adding a format is one module implementing [`Exporter`] and its name in the `formats!` line
//! below (plus its page under `docs/exports/`). A trace format's `export` hands a sink (a
//! `driver::Sink`: one method per kind of event) to `driver::drive`, which owns the merge, the
//! call stacks and the end of the calls still open; `text.rs` is the smallest to copy.
#![deny(missing_docs)]

mod counted;
mod driver;
mod error;
mod input;
mod nesting;
mod rows;
pub mod samples;
mod staged;

pub mod columns;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use plx_analysis::ClockReport;
use plx_format::Warning;

pub use error::ExportError;
pub use input::{ExportInput, ExportOptions, Partition};
pub use staged::{alive as writer_alive, StagedDir, StagedFile};

/// Declares the format modules and [`FORMATS`], in the order `--format` lists them.
macro_rules! formats {
    ($($module:ident :: $exporter:ident),* $(,)?) => {
        $(mod $module;)*
        $(pub use $module::$exporter;)*
        /// Every export format, in the order `--format` lists them.
        pub static FORMATS: &[&dyn Exporter] = &[$(&$module::$exporter),*];
    };
}

formats!(
    text::Text,
    chrome::Chrome,
    tau::Tau,
    sddf::Sddf,
    parquet::Parquet,
    otf2::Otf2,
);

/// Where an exporter writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// One file (or standard output with `-o -`).
    File,
    /// A directory of files (created if missing).
    Directory,
}

/// The destination handed to an [`Exporter`].
pub enum Target<'a> {
    /// A byte stream: the file, or standard output.
    Stream(&'a mut dyn Write),
    /// A directory that exists.
    Directory(&'a Path),
}

/// What an export did.
#[derive(Debug, Clone, Default)]
pub struct ExportSummary {
    /// Events written (trace formats), or profile entries (profile formats).
    pub records: u64,
    /// Files written under a directory target.
    pub files: Vec<PathBuf>,
    /// The clock condition, for trace formats of MPI experiments.
    pub clock: Option<ClockReport>,
    /// Warnings of the merge (the model's own are in [`ExportInput::model`]).
    pub warnings: Vec<Warning>,
    /// Call-stack samples written (formats that carry them).
    pub samples: u64,
    /// With a window: matched messages with one end inside it and the other outside, left out
    /// (a message is written when both its send and its receive are inside).
    pub messages_across_edges: u64,
}

/// One output format.
pub trait Exporter: Sync {
    /// The `--format` value.
    fn name(&self) -> &'static str;
    /// One line for `--help` and the docs.
    fn about(&self) -> &'static str;
    /// A file or a directory; most formats write one file.
    fn output(&self) -> OutputKind {
        OutputKind::File
    }
    /// Does it read the event trace (else the profiles)? Most do.
    fn needs_trace(&self) -> bool {
        true
    }
    /// Does it name regions' source files and lines (resolved from the debug information when
    /// the experiment lacks them)? Few do: the resolution reads every executable's symbols.
    fn needs_sources(&self) -> bool {
        false
    }
    /// Can it write its tables partitioned ([`ExportOptions::partition`])?
    fn partitions(&self) -> bool {
        false
    }
    /// Writes the export of `input` to `target` (of this exporter's [`OutputKind`]).
    fn export(&self, input: &ExportInput, target: Target<'_>)
        -> Result<ExportSummary, ExportError>;
}

/// The exporter named `name`.
pub fn find(name: &str) -> Option<&'static dyn Exporter> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

/// The names of all formats, in [`FORMATS`] order.
pub fn names() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name()).collect()
}

/// Exports the experiment in `dir` as `format` to `out` (a file, `-` for standard output, or a
/// directory for directory formats). Also returns the input, for its model's warnings.
pub fn export(
    format: &str,
    dir: &Path,
    out: &Path,
    options: ExportOptions,
) -> Result<(ExportInput, ExportSummary), ExportError> {
    let exporter = find(format).ok_or_else(|| ExportError::UnknownFormat(format.to_string()))?;
    let stdout = out == Path::new("-");
    if stdout && exporter.output() == OutputKind::Directory {
        return Err(ExportError::Usage(format!(
            "the {format} format writes a directory: give one with -o DIR"
        )));
    }
    if options.partition.is_some() && !exporter.partitions() {
        return Err(ExportError::Usage(format!(
            "--partition: the {format} format writes no partitioned tables (parquet does)"
        )));
    }
    if options.window.is_some() && !exporter.needs_trace() {
        return Err(ExportError::Usage(format!(
            "--phase/--window: the {format} format holds profiles of the whole run; a window \
             is exported by the trace formats"
        )));
    }
    let input = ExportInput::open(
        dir,
        options,
        !exporter.needs_trace(),
        exporter.needs_sources(),
    )?;
    let summary = match exporter.output() {
        OutputKind::Directory => {
            let io = |e| ExportError::Io(out.to_path_buf(), e);
            let staged = StagedDir::create(out).map_err(io)?;
            let mut s = exporter.export(&input, Target::Directory(staged.path()))?;
            let temp = staged.path().to_path_buf();
            staged.commit().map_err(io)?;
            for f in &mut s.files {
                if let Ok(rest) = f.strip_prefix(&temp) {
                    *f = out.join(rest);
                }
            }
            s
        }
        OutputKind::File if stdout => {
            let stdout = std::io::stdout();
            let mut w = BufWriter::with_capacity(1 << 16, stdout.lock());
            let s = exporter.export(&input, Target::Stream(&mut w))?;
            w.flush()
                .map_err(|e| ExportError::Io(out.to_path_buf(), e))?;
            s
        }
        OutputKind::File => {
            let io = |e| ExportError::Io(out.to_path_buf(), e);
            let mut w = StagedFile::create(out).map_err(io)?;
            let mut s = exporter.export(&input, Target::Stream(&mut w))?;
            w.commit().map_err(io)?;
            s.files.push(out.to_path_buf());
            s
        }
    };
    Ok((input, summary))
}

/// The stream of a file exporter's target.
fn stream<'a>(target: Target<'a>, format: &str) -> Result<&'a mut dyn Write, ExportError> {
    match target {
        Target::Stream(w) => Ok(w),
        Target::Directory(d) => Err(ExportError::Usage(format!(
            "the {format} format writes one file, not a directory ({})",
            d.display()
        ))),
    }
}

/// Synchronization, stream and OpenMP team events: in the merged stream, but only the text
/// export (Chrome's acquire/release markers, OTF2's thread teams) shows them.
pub(crate) fn is_sync_or_stream(kind: &plx_analysis::EventKind) -> bool {
    use plx_analysis::EventKind;
    matches!(
        kind,
        EventKind::Acquire { .. }
            | EventKind::Release { .. }
            | EventKind::StreamSend { .. }
            | EventKind::StreamRecv { .. }
            | EventKind::OmpTeam { .. }
    )
}
