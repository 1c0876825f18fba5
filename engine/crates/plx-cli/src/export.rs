//! `plx export`: writes an experiment in another tool's format (plx-export's formats), then the warnings and the clock condition on standard error.

use plx_analysis::MergeOptions;
use plx_export::{ExportError, ExportOptions, Partition};

use crate::cli::ExportArgs;
use crate::CliError;

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
        app: args.app.clone(),
        partition: args.partition.as_ref().map(|_| Partition::Rank),
    };
    let (input, summary) = plx_export::export(&args.format, &args.dir, &args.output, options)?;
    for w in input.model.report_warnings() {
        eprintln!("plx: warning: {w}");
    }
    for w in &summary.warnings {
        eprintln!("plx: warning: {w}");
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
    eprintln!(
        "plx: exported {} {unit} as {} to {what}{sep}{to}",
        summary.records, args.format
    );
    Ok(())
}
