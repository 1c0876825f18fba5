//! The MPI sections of `plx report`: time in MPI per location and routine, messages per sender and receiver (text and JSON).

use std::io::{self, Write};

use plx_analysis::messages::{pairs, routine_messages};
use plx_analysis::{Model, MpiTime, PairStats, ProcessModel, Table, ThreadModel};
use plx_format::Direction;
use serde_json::{json, Value};

use super::Report;
use crate::units::{human_bytes, human_time};

/// The MPI data of a report (only when the experiment has some).
pub struct MpiReport {
    /// Time in MPI of each table, in the order of `Report::tables`.
    pub times: Vec<MpiTime>,
    /// All tables together.
    pub total: MpiTime,
    /// Point-to-point messages as the senders count them (sender thread with `--by thread`).
    pub pairs: Vec<PairStats>,
}

impl MpiReport {
    /// The MPI sections of tables grouped `by_thread` or by process; `None` without MPI data.
    pub fn new(model: &Model, tables: &[Table], by_thread: bool) -> Option<MpiReport> {
        if !model.has_mpi() {
            return None;
        }
        let times: Vec<MpiTime> = tables
            .iter()
            .map(|t| MpiTime::of(&t.tree, &model.regions))
            .collect();
        let mut total = MpiTime::default();
        for t in &times {
            total.merge(t, &model.regions);
        }
        Some(MpiReport {
            times,
            total,
            pairs: pairs(model, Direction::Sent, by_thread),
        })
    }
}

fn percent(part: f64, whole: Option<f64>) -> Option<f64> {
    whole.filter(|w| *w > 0.0).map(|w| 100.0 * part / w)
}

fn pct_text(p: Option<f64>) -> String {
    p.map_or_else(|| "-".to_string(), |p| format!("{p:.2}"))
}

/// Σ MPI time / Σ wall time of the tables: the share of all locations' time spent in MPI.
fn total_percent(rep: &Report, m: &MpiReport) -> Option<f64> {
    let wall: f64 = rep.tables.iter().filter_map(|t| t.wall_s).sum();
    percent(m.total.total, Some(wall))
}

/// Writes "time in MPI" and "messages" after the profiles.
pub fn write_text(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    let Some(m) = &rep.mpi else {
        return Ok(());
    };
    let labels: Vec<String> = rep.tables.iter().map(|t| rep.label(t)).collect();
    let w = labels.iter().map(|l| l.len()).max().unwrap_or(0).max(8);
    writeln!(out, "time in MPI")?;
    writeln!(
        out,
        "  {:<w$} {:>12} {:>10}",
        "location", "MPI time", "% of wall"
    )?;
    for ((t, l), mt) in rep.tables.iter().zip(&labels).zip(&m.times) {
        writeln!(
            out,
            "  {:<w$} {:>12} {:>10}",
            l,
            human_time(mt.total),
            pct_text(percent(mt.total, t.wall_s))
        )?;
    }
    writeln!(
        out,
        "  {:<w$} {:>12} {:>10}",
        "all",
        human_time(m.total.total),
        pct_text(total_percent(rep, m))
    )?;
    writeln!(out)?;
    if !m.total.is_empty() {
        writeln!(
            out,
            "  {:<24} {:>10} {:>12} {:>14}",
            "MPI routine", "calls", "time", "% of MPI time"
        )?;
        for r in &m.total.routines {
            writeln!(
                out,
                "  {:<24} {:>10} {:>12} {:>14}",
                rep.name(r.region),
                r.calls,
                human_time(r.time),
                pct_text(percent(r.time, Some(m.total.total)))
            )?;
        }
        writeln!(out)?;
    }
    writeln!(
        out,
        "messages (point-to-point, as counted by the senders; sizes in bytes)"
    )?;
    if m.pairs.is_empty() {
        writeln!(out, "  (none)")?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "  {:>8} {:>8} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "sender", "receiver", "messages", "bytes", "min size", "mean size", "max size"
    )?;
    for p in &m.pairs {
        writeln!(
            out,
            "  {:>8} {:>8} {:>10} {:>12} {:>12} {:>12} {:>12}",
            p.sender.to_string(),
            p.receiver.to_string(),
            p.messages,
            human_bytes(p.bytes as f64),
            p.min_bytes,
            format!("{:.1}", p.mean_bytes()),
            p.max_bytes
        )?;
    }
    writeln!(out)
}

fn time_json(rep: &Report, mt: &MpiTime, wall: Option<f64>) -> Value {
    json!({
        "time_s": mt.total,
        "percent_of_wall": percent(mt.total, wall),
        "routines": mt.routines.iter().map(|r| json!({
            "routine": rep.name(r.region), "calls": r.calls, "time_s": r.time,
        })).collect::<Vec<_>>(),
    })
}

fn messages_json<'a>(rep: &Report, threads: impl IntoIterator<Item = &'a ThreadModel>) -> Value {
    routine_messages(threads)
        .iter()
        .map(|s| {
            json!({
                "routine": s.region.map(|r| rep.name(r)),
                "peer": s.peer,
                "direction": s.direction.as_str(),
                "count": s.count,
                "bytes": s.bytes,
                "min_bytes": s.min_bytes,
                "mean_bytes": s.mean_bytes(),
                "max_bytes": s.max_bytes,
            })
        })
        .collect()
}

/// The `mpi` object of a process (with its table's time when grouped by process).
pub fn process_json(rep: &Report, p: &ProcessModel, table: Option<usize>) -> Option<Value> {
    let m = rep.mpi.as_ref()?;
    let mut obj = match table {
        Some(i) => time_json(rep, &m.times[i], rep.tables[i].wall_s),
        None => json!({}),
    };
    if let Some(init) = &p.mpi {
        obj["rank"] = json!(init.rank);
        obj["size"] = json!(init.size);
        obj["thread_level"] = json!(init.thread_level.as_str());
        obj["library"] = json!(init.library);
    }
    obj["messages"] = messages_json(rep, &p.threads);
    Some(obj)
}

/// The `mpi` object of a thread's table.
pub fn thread_json(rep: &Report, t: &ThreadModel, table: usize) -> Option<Value> {
    let m = rep.mpi.as_ref()?;
    let mut obj = time_json(rep, &m.times[table], rep.tables[table].wall_s);
    obj["messages"] = messages_json(rep, [t]);
    Some(obj)
}

/// The top-level `mpi` object: all locations' time, routines and the message pairs.
pub fn total_json(rep: &Report) -> Option<Value> {
    let m = rep.mpi.as_ref()?;
    let mut obj = time_json(rep, &m.total, None);
    obj["percent_of_wall"] = json!(total_percent(rep, m));
    obj["ranks"] = json!(rep.model.ranks().len());
    obj["communicators"] = json!(rep.model.comms.all().len());
    obj["messages"] = m
        .pairs
        .iter()
        .map(|p| {
            json!({
                "sender": p.sender.rank, "sender_thread": p.sender.thread,
                "receiver": p.receiver.rank, "messages": p.messages, "bytes": p.bytes,
                "min_bytes": p.min_bytes, "mean_bytes": p.mean_bytes(), "max_bytes": p.max_bytes,
            })
        })
        .collect();
    Some(obj)
}
