//! `plx info`: processes, threads, clocks, how each process ended, and every warning.

use std::io::{self, BufWriter, Write};

use plx_analysis::{BuildOptions, Model, ProcessModel, ProfileSource};
use plx_format::{ClockKind, ClockSource, EndReason};

use crate::cli::InfoArgs;
use crate::report::pid_text;
use crate::signals::signal_name;
use crate::units::{human_opt, human_time, utc_date};
use crate::CliError;

fn clock_text(p: &ProcessModel) -> String {
    let kind = match p.clock {
        Some(ClockKind::Tsc) => "tsc".to_string(),
        Some(ClockKind::Monotonic) => "monotonic".to_string(),
        Some(ClockKind::Other(k)) => format!("unknown ({k})"),
        None => "unknown".to_string(),
    };
    let how = match p.clock_source {
        ClockSource::Calibrated => "calibrated",
        ClockSource::ClockRate => "rate measured at start",
        ClockSource::Monotonic => "nanoseconds",
        ClockSource::Assumed => "assumed 1 tick = 1 ns",
    };
    format!("{kind}, {:.3} MHz ({how})", p.ticks_per_second / 1e6)
}

/// How the process ended, in words.
pub fn end_text(p: &ProcessModel) -> String {
    match p.end {
        None => "did not finish (no ProcessEnd: killed or crashed while writing)".to_string(),
        Some(e) => match e.reason {
            EndReason::Exit => format!("exited with status {}", e.status),
            EndReason::Signal => {
                format!("killed by signal {} ({})", e.status, signal_name(e.status))
            }
            EndReason::Exec => "replaced by exec()".to_string(),
            EndReason::Other(r) => format!("ended (reason {r}, status {})", e.status),
        },
    }
}

fn process(p: &ProcessModel, model: &Model, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "process {} on {}", pid_text(p), p.host)?;
    writeln!(out, "  file        {}", p.path.display())?;
    writeln!(out, "  executable  {}", p.executable)?;
    writeln!(out, "  argv        {}", p.argv.join(" "))?;
    if let Some(pp) = p.ppid {
        writeln!(out, "  parent pid  {pp}")?;
    }
    if let Some(ns) = p.start_realtime_ns {
        writeln!(out, "  started     {}", utc_date(ns))?;
    }
    writeln!(out, "  clock       {}", clock_text(p))?;
    writeln!(out, "  ended       {}", end_text(p))?;
    if !p.version.is_empty() {
        writeln!(out, "  written by  parallax {}", p.version)?;
    }
    if let Some(f) = &p.filter {
        writeln!(out, "  filter      {}", f.trim_end().replace('\n', "; "))?;
    }
    writeln!(
        out,
        "  regions     {} ({} excluded by the filter)",
        p.region_count, p.excluded_regions
    )?;
    writeln!(
        out,
        "  threads     {}\n    {:>6} {:>8}  {:<16} {:>12} {:>12} {:>12} {:>8}  profile",
        p.threads.len(),
        "thread",
        "tid",
        "name",
        "cpu",
        "wall",
        "trace events",
        "lost"
    )?;
    for t in &p.threads {
        let source = match t.source {
            ProfileSource::Recorded => "recorded",
            ProfileSource::Rebuilt => "rebuilt from trace",
            ProfileSource::None => "none",
        };
        let events = t
            .trace_events
            .map_or_else(|| "-".to_string(), |e| e.to_string());
        writeln!(
            out,
            "    {:>6} {:>8}  {:<16} {:>12} {:>12} {:>12} {:>8}  {}",
            t.thread,
            t.tid.map_or_else(|| "-".to_string(), |x| x.to_string()),
            t.name,
            human_opt(t.cpu_s),
            human_opt(t.wall_s),
            events,
            t.lost_events,
            source
        )?;
    }
    if !p.throttled.is_empty() {
        writeln!(out, "  throttled")?;
        for t in &p.throttled {
            writeln!(
                out,
                "    {} after {} calls ({})",
                model.regions.name(t.region),
                t.calls,
                human_time(t.inclusive_s)
            )?;
        }
    }
    writeln!(out)
}

/// Runs `plx info`.
pub fn info(args: &InfoArgs) -> Result<(), CliError> {
    let model = Model::open(
        &args.dir,
        BuildOptions {
            rebuild_from_trace: true,
            resolve_sources: false,
        },
    )?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    writeln!(out, "experiment {}", model.dir.display())?;
    writeln!(
        out,
        "{} process image(s), {} thread(s), {} distinct region(s)",
        model.processes.len(),
        model
            .processes
            .iter()
            .map(|p| p.threads.len())
            .sum::<usize>(),
        model.regions.all().len()
    )?;
    writeln!(out)?;
    for p in &model.processes {
        process(p, &model, &mut out)?;
    }
    let throttled: usize = model.processes.iter().map(|p| p.throttled.len()).sum();
    if model.warnings.is_empty() && throttled == 0 {
        writeln!(out, "warnings: none")?;
    } else {
        writeln!(out, "warnings:")?;
        for w in &model.warnings {
            writeln!(out, "  {w}")?;
        }
        for p in &model.processes {
            for t in &p.throttled {
                writeln!(
                    out,
                    "  {}: {} throttled after {} calls: no longer measured",
                    p.path.display(),
                    model.regions.name(t.region),
                    t.calls
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
