//! `plx export`: writes an experiment in another tool's format (plx-export's formats), then the warnings and the clock condition on standard error.

use plx_analysis::MergeOptions;
use plx_export::{ExportError, ExportOptions, Partition};

use std::path::PathBuf;

use crate::args::{ExperimentArgs, PhaseArg};
use crate::CliError;

/// `--format` of `plx export`: the exporters' names, each with its one-line description.
fn export_formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        plx_export::FORMATS
            .iter()
            .map(|f| clap::builder::PossibleValue::new(f.name()).help(f.about())),
    )
}

/// `plx export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase, --window: only the events of a span of the run; the calls open at its edges
    /// are entered at its start and exited at its end, a message is written when both its send
    /// and its receive are inside (docs/commands/export.md).
    #[command(flatten)]
    pub phase: PhaseArg,
    /// The format written: another tool's (not a table's, as in the other commands).
    #[arg(long, value_name = "FORMAT", value_parser = export_formats())]
    pub format: String,
    /// Output file (`-`: standard output), or directory for the tau format; required.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Minimum latency a repaired message gets, in ns [default: the smallest transfer time
    /// observed, at most 1000].
    #[arg(long, value_name = "NS")]
    pub min_latency: Option<u64>,
    /// Leave receives that come before their send as they are (times only ClockOffset-corrected).
    #[arg(long)]
    pub no_clock_repair: bool,
    /// Write the tables as a dataset partitioned by KEY, hive-style (`events/rank=N/part-0.parquet`):
    /// `rank` (parquet format, MPI experiments).
    #[arg(long, value_name = "KEY", value_parser = ["rank"])]
    pub partition: Option<String>,
}

impl From<ExportError> for CliError {
    fn from(e: ExportError) -> Self {
        CliError::with_status(e.exit_code(), e.to_string())
    }
}

/// Runs `plx export`.
pub fn export(args: &ExportArgs) -> Result<(), CliError> {
    let options = ExportOptions {
        merge: MergeOptions {
            repair_clock: !args.no_clock_repair,
            min_latency_ns: args.min_latency,
        },
        app: args.exp.app.app.clone(),
        partition: args.partition.as_ref().map(|_| Partition::Rank),
        window: args.phase.spec().cloned(),
    };
    let (input, summary) = plx_export::export(&args.format, &args.exp.dir, &args.output, options)?;
    for w in input.model.report_warnings() {
        eprintln!("plx: warning: {w}");
    }
    for w in &summary.warnings {
        eprintln!("plx: warning: {w}");
    }
    if summary.messages_across_edges > 0 {
        eprintln!(
            "plx: {} message(s) with one end outside the window left out",
            summary.messages_across_edges
        );
    }
    if let Some(c) = &summary.clock {
        eprintln!("plx: {}", c.describe());
    }
    let what = if summary.files.len() > 1 {
        format!("{} files under", summary.files.len())
    } else {
        "".to_string()
    };
    let unit = if plx_export::find(&args.format).is_some_and(|f| f.needs_trace()) {
        "events"
    } else {
        "callpaths"
    };
    let to = if args.output.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        args.output.display().to_string()
    };
    let sep = if what.is_empty() { "" } else { " " };
    let samples = if summary.samples > 0 {
        format!(" and {} call-stack samples", summary.samples)
    } else {
        String::new()
    };
    eprintln!(
        "plx: exported {} {unit}{samples} as {} to {what}{sep}{to}",
        summary.records, args.format
    );
    Ok(())
}
