//! Text output of `plx report`: one aligned table per location, user events, MPI sections, throttled regions.

use std::io::{self, Write};

use plx_analysis::{callpath_rows, flat_profile, PhaseSpec, Table};

use super::Report;
use crate::units::{human_opt, human_time};

struct Row {
    exclusive: f64,
    inclusive: f64,
    calls: u64,
    child_calls: u64,
    cpu: Option<f64>,
    samples: u64,
    estimated: bool,
    name: Name,
}

/// A row's name: a region's, or a callpath's (written from the tree when printed, never held:
/// the paths of a chain N deep are N²/2 names).
enum Name {
    Region(u32),
    Path(u32),
}

/// The trace events lost of a thread's table (0 for the tables of a process or of all).
fn lost_events(rep: &Report, t: &Table) -> u64 {
    match (t.process, t.thread) {
        (Some(p), Some(th)) => rep.model.processes[p]
            .threads
            .iter()
            .find(|x| x.thread == th)
            .map_or(0, |x| x.lost_events),
        _ => 0,
    }
}

fn rows(rep: &Report, t: &Table) -> Vec<Row> {
    if rep.args.callpath {
        callpath_rows(&t.tree)
            .into_iter()
            .map(|r| Row {
                exclusive: r.exclusive,
                inclusive: r.inclusive,
                calls: r.calls,
                child_calls: r.child_calls,
                cpu: r.cpu,
                samples: r.samples,
                estimated: r.estimated,
                name: Name::Path(r.node),
            })
            .collect()
    } else {
        flat_profile(&t.tree)
            .into_iter()
            .map(|r| Row {
                exclusive: r.exclusive,
                inclusive: r.inclusive,
                calls: r.calls,
                child_calls: r.child_calls,
                cpu: r.cpu,
                samples: r.samples,
                estimated: r.estimated,
                name: Name::Region(r.region),
            })
            .collect()
    }
}

fn table(rep: &Report, t: &Table, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", rep.label(t))?;
    writeln!(
        out,
        "cpu time {}, wall time {}",
        human_opt(t.cpu_s),
        human_opt(t.wall_s)
    )?;
    let rows = rows(rep, t);
    if rows.is_empty() {
        match lost_events(rep, t) {
            0 => writeln!(out, "  (no profile)")?,
            n => writeln!(
                out,
                "  (no profile: {n} trace events lost, the profile with them; see plx info)"
            )?,
        }
        writeln!(out)?;
        return Ok(());
    }
    let total: f64 = rows.iter().map(|r| r.exclusive).sum();
    // the CPU column only when some function of the report has a CPU time (filter: cputime)
    let with_cpu = rep.total.tree.has_cpu();
    let cpu_head = if with_cpu {
        format!(" {:>12}", "cpu")
    } else {
        String::new()
    };
    // the samples column only when the run sampled call stacks (plx run --sample); times
    // estimated from samples are marked `~`
    let with_samples = rep.total.tree.has_samples();
    let samples_head = if with_samples {
        format!(" {:>9}", "samples")
    } else {
        String::new()
    };
    // --tree: a callpath row is its node's id, its parent's and its own name
    let tree_head = if rep.args.tree {
        format!("  {:>8} {:>8}", "id", "parent")
    } else {
        String::new()
    };
    writeln!(
        out,
        "{:>7} {:>12} {:>12}{cpu_head}{samples_head} {:>10} {:>11} {:>12}{tree_head}  name",
        "%time", "exclusive", "inclusive", "calls", "child calls", "incl/call"
    )?;
    for r in &rows {
        let pct = if total > 0.0 {
            100.0 * r.exclusive / total
        } else {
            0.0
        };
        let per_call = if r.calls > 0 {
            human_time(r.inclusive / r.calls as f64)
        } else {
            "-".to_string()
        };
        let cpu = if with_cpu {
            format!(" {:>12}", human_opt(r.cpu))
        } else {
            String::new()
        };
        let samples = if with_samples {
            format!(" {:>9}", r.samples)
        } else {
            String::new()
        };
        let mark = |s: String| if r.estimated { format!("~{s}") } else { s };
        write!(
            out,
            "{:>7.2} {:>12} {:>12}{cpu}{samples} {:>10} {:>11} {:>12}  ",
            pct,
            mark(human_time(r.exclusive)),
            mark(human_time(r.inclusive)),
            r.calls,
            r.child_calls,
            per_call,
        )?;
        match r.name {
            Name::Region(region) => out.write_all(rep.name(region).as_bytes())?,
            Name::Path(node) if rep.args.tree => {
                let n = &t.tree.nodes()[node as usize];
                let parent = n.parent.map_or_else(|| "-".to_string(), |p| p.to_string());
                write!(out, "{node:>8} {parent:>8}  {}", rep.name(n.region))?;
            }
            Name::Path(node) => rep.write_path(&t.tree, node, out)?,
        }
        writeln!(out)?;
    }
    if !t.user_events.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "  {:<24} {:>10} {:>14} {:>14} {:>14} {:>14}",
            "user event", "count", "min", "max", "mean", "std dev"
        )?;
        for s in &t.user_events {
            writeln!(
                out,
                "  {:<24} {:>10} {:>14.6} {:>14.6} {:>14.6} {:>14.6}",
                s.name,
                s.count,
                s.min,
                s.max,
                s.mean(),
                s.std_dev()
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// Writes all tables, the total, and throttled regions.
pub fn write(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    match rep.args.phase.spec() {
        Some(PhaseSpec::Named(p)) => {
            writeln!(
                out,
                "phase \"{p}\": from its first begin to its last end, every thread"
            )?;
            writeln!(out)?;
        }
        Some(PhaseSpec::Interval { start_s, end_s }) => {
            let from = start_s.map_or_else(
                || "the trace's first event".to_string(),
                |s| format!("{s} s after the trace's first event"),
            );
            let to = end_s.map_or_else(|| "its end".to_string(), |e| format!("{e} s"));
            writeln!(
                out,
                "window from {from} to {to}: times inside it, calls begun inside it; no CPU time"
            )?;
            writeln!(out)?;
        }
        None => {}
    }
    // one line per command: a launcher's forked helpers (mpirun's daemons) share its command
    let mut unmeasured: Vec<((&str, String), Vec<String>)> = Vec::new();
    for p in rep.model.processes.iter().filter(|p| !p.measured) {
        let key = (p.host.as_str(), p.argv.join(" "));
        match unmeasured.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pids)) => pids.push(super::pid_text(p)),
            None => unmeasured.push((key, vec![super::pid_text(p)])),
        }
    }
    for ((host, argv), pids) in &unmeasured {
        if let [pid] = pids.as_slice() {
            writeln!(
                out,
                "not measured (no instrumented code): process {pid} ({host}) {argv}"
            )?;
        } else {
            writeln!(
                out,
                "not measured (no instrumented code): processes {} ({host}) {argv}",
                pids.join(", ")
            )?;
        }
    }
    if rep.model.processes.iter().any(|p| !p.measured) {
        writeln!(out)?;
    }
    for t in &rep.tables {
        table(rep, t, out)?;
    }
    table(rep, &rep.total, out)?;
    super::mpi::write_text(rep, out)?;
    for p in &rep.model.processes {
        if p.throttled.is_empty() {
            continue;
        }
        writeln!(
            out,
            "throttled regions of {}: no longer measured after",
            plx_analysis::location_name::Who::process(rep.model, p).long(None)
        )?;
        for t in &p.throttled {
            writeln!(
                out,
                "  {:>10} calls {:>12}  {}",
                t.calls,
                human_time(t.inclusive_s),
                rep.name(t.region)
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}
