//! The argument groups the reading commands share, each flag declared once here (as ripgrep's
//! `flags/defs.rs`, and `plx run`'s settings in runtime/src/core/options.def) and flattened
//! into each command's own Args: the experiments read (directory, `--app`), the part of the run
//! (`--phase`), and the output (`--format`, `-o`). docs/commands/README.md lists them.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use plx_analysis::PhaseSpec;

use crate::{CliError, Exit};

/// `--app`: one application of a session.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AppArg {
    /// Only application NAME of a session (its logical view) [default: every application, the
    /// physical view].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
}

impl AppArg {
    /// The application named, if any.
    pub fn name(&self) -> Option<&str> {
        self.app.as_deref()
    }
}

/// `--phase` or `--window`: a span of the run's time (docs/phases.md).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PhaseArg {
    /// Only a phase of the run (docs/phases.md): the phase region NAME's span (from its first
    /// begin to its last end, any thread) or START:END in seconds from the trace's first event
    /// (either end may be empty); needs a trace.
    #[arg(long, value_name = "NAME|START:END")]
    pub phase: Option<PhaseSpec>,
    /// Only the window from START to END seconds after the run's start, its first traced event
    /// (either end may be empty; e.g. 0.5:2, 1.5:); a time inside is counted, a message when
    /// it was sent inside (plx export: when both its ends are inside; docs/phases.md); needs a
    /// trace.
    #[arg(long, value_name = "START:END", value_parser = PhaseSpec::window,
          conflicts_with = "phase")]
    pub window: Option<PhaseSpec>,
}

impl PhaseArg {
    /// The span asked for: `--phase`, or `--window` as an interval.
    pub fn spec(&self) -> Option<&PhaseSpec> {
        self.phase.as_ref().or(self.window.as_ref())
    }
}

/// One experiment or session read: its directory and `--app`.
#[derive(clap::Args, Debug)]
pub struct ExperimentArgs {
    /// Experiment or session directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// --app.
    #[command(flatten)]
    pub app: AppArg,
}

/// Several experiments or sessions read side by side, and `--app`.
#[derive(clap::Args, Debug)]
pub struct ExperimentsArgs {
    /// Experiment or session directories: each experiment is a run of its own, and each
    /// application of a session.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// --app.
    #[command(flatten)]
    pub app: AppArg,
}

/// The value of `--by` a command takes: its own choice of the shared words (`thread`, `process`,
/// `total`; docs/commands/README.md), and its default.
pub trait ByChoice: ValueEnum + Clone + Send + Sync + 'static {
    /// The default's name, as written on the command line.
    const DEFAULT: &'static str;
}

/// `--by`: what one table, matrix row or series is.
#[derive(clap::Args, Debug)]
pub struct ByArg<B: ByChoice> {
    /// What one table, matrix row or series is: one per thread (location), per process (MPI
    /// rank) or per run; the same words in every command.
    #[arg(long, value_name = "BY", default_value = B::DEFAULT,
          value_parser = clap::builder::EnumValueParser::<B>::new())]
    pub by: B,
}

/// `--bins`: the bins of a series over time.
#[derive(clap::Args, Debug)]
pub struct BinsArg {
    /// Number of bins of the series over time, over the run's span (several runs: the longest
    /// run's); 1 to 100000.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub bins: usize,
}

/// The most bins a series over time takes (a bin per pixel of a wide chart and more).
pub const MAX_BINS: usize = 100_000;

impl BinsArg {
    /// The number of bins, checked: at least 1 and at most [`MAX_BINS`].
    pub fn checked(&self) -> Result<usize, CliError> {
        let bins = self.bins;
        if bins == 0 {
            return Err(CliError::new(
                Exit::Usage,
                "--bins 0: give at least 1 bin".to_string(),
            ));
        }
        if bins > MAX_BINS {
            return Err(CliError::new(
                Exit::Usage,
                format!("--bins {bins}: at most {MAX_BINS} bins"),
            ));
        }
        Ok(bins)
    }
}

/// `--top`: only the largest rows.
#[derive(clap::Args, Debug)]
pub struct TopArg {
    /// Only the N largest rows [default: every row; plx compare: the "Calls: f" rows of the 5
    /// functions of largest inclusive time over all runs].
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

/// `--samples[=N]`: what ran, by call-stack samples.
#[derive(clap::Args, Debug)]
pub struct SamplesArg {
    /// What ran, by call-stack samples (a run with `plx run --trace --sample`): the N sampled
    /// call paths that ran most under each item (plx critical-path: under each function on
    /// the path, procedure level; plx waits: under each call path that waited, during its
    /// waits, and under each direct cause, in the intervals whose excess caused the waits,
    /// beyond the waiting location's own there; it implies --causes). N with `=`, at least 1
    /// [default N: 3].
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        require_equals = true,
        value_parser = crate::sampled::paths_n,
        default_missing_value = "3"
    )]
    pub samples: Option<usize>,
}

/// `--metric`: the metric a command measures.
#[derive(clap::Args, Debug)]
pub struct MetricArg {
    /// The metric: a built-in one (plx query: wall_time, cpu_time, calls, wait_time,
    /// hold_time, messages, bytes; plx histogram: cpu, compute, mpi, messages, bytes,
    /// calls:FUNC, time:FUNC), a counter of the runs (EVENT, or EVENT:FUNC in plx histogram)
    /// or an external metric's name (plx run --monitor, plx import).
    #[arg(long, value_name = "METRIC")]
    pub metric: String,
}

/// Output format of the commands that print tables (text, JSON or CSV).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned tables for people.
    Text,
    /// One JSON object.
    Json,
    /// Comma-separated rows, a header first (the columns are on each command's page).
    Csv,
}

/// Output format of the commands that draw charts (`plx histogram`, `plx display`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartFormat {
    /// Tables for people, with small ASCII bars.
    Text,
    /// Comma-separated rows, a header first.
    Csv,
    /// An SVG chart.
    Svg,
}

/// `--format F` (text by default) and `-o FILE`; `F` is [`Format`] or [`ChartFormat`].
#[derive(clap::Args, Debug)]
pub struct OutputArgs<F>
where
    F: ValueEnum + Clone + Send + Sync + 'static,
{
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = clap::builder::EnumValueParser::<F>::new())]
    pub format: F,
    /// Write to FILE instead of standard output (`-`: standard output); FILE appears complete
    /// or not at all (written under a temporary name, renamed at the end).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl<F: ValueEnum + Clone + Send + Sync + 'static> OutputArgs<F> {
    /// The output stream; [`Output::finish`] completes it.
    pub fn open(&self) -> Result<Output, CliError> {
        output(self.output.as_deref())
    }
}

/// Where a command's output goes: the file of `-o`, written under a temporary name and renamed
/// when complete ([`Output::finish`]; a failure leaves no partial file), or standard output.
pub enum Output {
    File(plx_export::StagedFile),
    Stdout(BufWriter<io::Stdout>),
}

impl Output {
    /// Completes the output: flushed, and the file moved into place.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Output::File(f) => f.commit(),
            Output::Stdout(mut w) => w.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::File(f) => f.write(buf),
            Output::Stdout(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Stdout(w) => w.flush(),
        }
    }
}

/// The output stream: the file `path` (`-` for standard output), else standard output.
pub fn output(path: Option<&Path>) -> Result<Output, CliError> {
    match path {
        Some(p) if p != Path::new("-") => {
            let f = plx_export::StagedFile::create(p)
                .map_err(|e| CliError::new(Exit::Io, format!("{}: {e}", p.display())))?;
            Ok(Output::File(f))
        }
        _ => Ok(Output::Stdout(BufWriter::new(io::stdout()))),
    }
}
