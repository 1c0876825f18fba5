//! `plx query`: a metric for a focus, as a total and (with a trace) a time series.

use std::io::{BufWriter, Write};

use plx_analysis::query::{Focus, Metric};
use plx_analysis::BuildOptions;
use serde_json::json;

use crate::cli::{Format, QueryArgs};
use crate::units::human_time;
use crate::CliError;

fn value_text(metric: Metric, v: f64) -> String {
    if metric.unit() == "s" {
        human_time(v)
    } else {
        format!("{v:.0}")
    }
}

/// Runs `plx query`.
pub fn query(args: &QueryArgs) -> Result<(), CliError> {
    let metric = Metric::parse(&args.metric).map_err(|e| CliError::new(2, e))?;
    if args.bins == 0 {
        return Err(CliError::new(2, "--bins must be at least 1".to_string()));
    }
    let model =
        crate::experiment::open_app(&args.dir, args.app.as_deref(), BuildOptions::default())?;
    let h = model.hierarchies();
    let focus =
        Focus::parse(args.focus.as_deref().unwrap_or(""), &h).map_err(|e| CliError::new(2, e))?;
    let window = match &args.phase {
        Some(spec) => Some(plx_analysis::phase_window(&model, spec)?),
        None => None,
    };
    let r = model
        .query_in(metric, &focus, args.bins, window)
        .map_err(|e| CliError::new(2, e))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => {
            writeln!(out, "metric {} ({})", metric.name(), metric.unit())?;
            writeln!(out, "focus  {}", r.focus)?;
            writeln!(
                out,
                "total  {} (from the {})",
                value_text(metric, r.total),
                r.source
            )?;
            if let Some(series) = &r.series {
                writeln!(out)?;
                writeln!(out, "{:>12} {:>12} {:>14}", "from", "to", metric.name())?;
                for (a, b, v) in series {
                    writeln!(
                        out,
                        "{:>12} {:>12} {:>14}",
                        human_time(*a),
                        human_time(*b),
                        value_text(metric, *v)
                    )?;
                }
            }
        }
        Format::Csv => {
            writeln!(out, "metric,focus,bin,start_s,end_s,value")?;
            let f = crate::report::csv::field(&r.focus);
            writeln!(out, "{},{f},total,,,{}", metric.name(), r.total)?;
            for (i, (a, b, v)) in r.series.iter().flatten().enumerate() {
                writeln!(out, "{},{f},{i},{a:.9},{b:.9},{v}", metric.name())?;
            }
        }
        Format::Json => {
            let doc = json!({
                "experiment": model.dir.display().to_string(),
                "metric": metric.name(),
                "unit": metric.unit(),
                "focus": r.focus,
                "total": r.total,
                "source": r.source,
                "series": r.series.as_ref().map(|s| s.iter().map(|(a, b, v)| json!({"start_s": a, "end_s": b, "value": v})).collect::<Vec<_>>()),
            });
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}
