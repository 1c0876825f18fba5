//! `plx info --format json|csv`: what `plx info` prints as text, as data (docs/commands/plx-info.md).

use std::io::{self, Write};

use plx_analysis::{Model, ProcessModel, ThreadModel};
use serde_json::{json, Value};

use crate::csv::field;
use crate::info::{
    clock_text, end_text, measured_ranks, profile_source, samples_lost, samples_stamped,
    sync_skipped, Summary,
};
use crate::report::pid_text;

/// The process's rank within its application, if it is an MPI rank.
fn own_rank(p: &ProcessModel) -> Option<u32> {
    p.mpi.as_ref().map(|m| m.rank - p.rank_base)
}

fn thread_json(p: &ProcessModel, t: &ThreadModel) -> Value {
    json!({
        "thread": t.thread,
        "tid": t.tid,
        "name": t.name,
        "cpu_s": t.cpu_s,
        "wall_s": t.wall_s,
        "trace_events": t.trace_events,
        "lost_events": t.lost_events,
        "profile": profile_source(t),
        "samples": t.samples.map(|s| json!({
            "period_ns": s.period_ns,
            "taken": s.samples,
            "stamped": samples_stamped(p, t),
            "lost": samples_lost(&s),
            "lost_tree_full": s.lost_full,
            "lost_in_loader": s.lost_loader,
            "lost_not_kept": s.lost_not_kept,
            "recovered": s.recovered,
        })),
    })
}

fn process_json(p: &ProcessModel, model: &Model) -> Value {
    json!({
        "pid": pid_text(p),
        "host": p.host,
        "measured": p.measured,
        "application": model.is_session().then(|| p.app_name(model)),
        "rank": own_rank(p),
        "session_rank": p.rank(),
        "world_size": p.mpi.as_ref().map(|m| m.size),
        "file": p.path.display().to_string(),
        "executable": p.executable,
        "argv": p.argv,
        "command_line": p.command_line(),
        "parent_pid": p.ppid,
        "start_realtime_ns": p.start_realtime_ns,
        "clock": clock_text(p),
        "clock_sync_skipped": sync_skipped(p).map(|c| json!({
            "measured_ranks": measured_ranks(c),
            "ranks": c.size,
        })),
        "sample_signals": p.sample_signals.iter().map(|c| json!({
            "reason": if c.reason == 2 { "go program" } else { "handler replaced" },
            "replaced": c.replaced,
            "signal": c.signal,
        })).collect::<Vec<_>>(),
        "jvm_code": (p.jit_code.methods + p.jit_code.generated > 0).then(|| json!({
            "compiled_methods": p.jit_code.methods,
            "freed": p.jit_code.freed,
            "generated": p.jit_code.generated,
        })),
        "ended": end_text(p),
        "written_by": (!p.version.is_empty()).then(|| format!("parallax {}", p.version)),
        "regions": p.region_count,
        "excluded_regions": p.excluded_regions,
        "threads": p.threads.iter().map(|t| thread_json(p, t)).collect::<Vec<_>>(),
    })
}

/// The JSON document: the experiment's counts, its applications, the MPI and message
/// summaries, a process per process image with its threads, and every warning.
pub fn json(model: &Model, s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({
        "experiment": model.dir.display().to_string(),
        "process_images": model.processes.len(),
        "threads": crate::info::measured_threads(model),
        "regions": model.regions.all().len(),
        "applications": s.apps,
        "mpi": s.mpi_lines,
        "messages": s.matching.as_ref().map(|m| json!({
            "matched": m.matched,
            "unmatched_sends": m.unmatched_sends(),
            "unmatched_receives": m.unmatched_receives(),
            "collectives": m.collectives,
        })),
        "processes": model.processes.iter().map(|p| process_json(p, model)).collect::<Vec<_>>(),
        "warnings": s.warnings,
    });
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::from)?;
    writeln!(out)
}

/// CSV: the threads table of every process, one row per thread.
pub fn csv(model: &Model, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "host,pid,application,rank,thread,tid,name,cpu_s,wall_s,trace_events,lost_events,profile,samples,samples_stamped,samples_lost"
    )?;
    let opt = |v: Option<String>| v.unwrap_or_default();
    for p in &model.processes {
        let app = if model.is_session() {
            p.app_name(model)
        } else {
            ""
        };
        for t in &p.threads {
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&p.host),
                field(&pid_text(p)),
                field(app),
                opt(own_rank(p).map(|r| r.to_string())),
                t.thread,
                opt(t.tid.map(|x| x.to_string())),
                field(&t.name),
                opt(t.cpu_s.map(|x| format!("{x:.9}"))),
                opt(t.wall_s.map(|x| format!("{x:.9}"))),
                opt(t.trace_events.map(|x| x.to_string())),
                t.lost_events,
                profile_source(t),
                opt(t.samples.map(|s| s.samples.to_string())),
                opt(samples_stamped(p, t).map(|n| n.to_string())),
                opt(t.samples.map(|s| samples_lost(&s).to_string()))
            )?;
        }
    }
    Ok(())
}
