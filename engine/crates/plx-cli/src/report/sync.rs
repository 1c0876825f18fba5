//! `plx report --sync`: synchronization objects sorted by wait time, per location and in total
//! (text, CSV, JSON).

use std::io::{self, Write};

use plx_analysis::{GroupBy, Model, SyncRow};
use serde_json::{json, Value};

use crate::args::Format;
use crate::csv::field;
use crate::units::human_time;

fn location_label(model: &Model, r: &SyncRow) -> String {
    super::location_heading(model, r.process, r.thread)
}

fn text_table(model: &Model, rows: &[&SyncRow], out: &mut dyn Write) -> io::Result<()> {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    writeln!(out, "{}", location_label(model, first))?;
    writeln!(
        out,
        "{:>12} {:>10} {:>12} {:>12} {:>10}  object (site)",
        "wait", "acquired", "contended", "hold", "releases"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:>12} {:>10} {:>12} {:>12} {:>10}  {}{}",
            human_time(r.stat.wait_s),
            r.stat.acquisitions,
            r.stat.contended,
            if r.kind.hold_unknown() {
                "-".to_string()
            } else {
                human_time(r.stat.hold_s)
            },
            r.stat.releases,
            r.object,
            if r.site.is_empty() {
                String::new()
            } else {
                format!("  [{}]", r.site)
            }
        )?;
    }
    writeln!(out)
}

fn groups(rows: &[SyncRow]) -> Vec<Vec<&SyncRow>> {
    let mut out: Vec<Vec<&SyncRow>> = Vec::new();
    for r in rows {
        match out.last_mut() {
            Some(g) if (g[0].process, g[0].thread) == (r.process, r.thread) => g.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

fn csv_row(model: &Model, r: &SyncRow, out: &mut dyn Write) -> io::Result<()> {
    let (process, thread, host, tname) = match r.process {
        None => ("all".to_string(), "all".to_string(), String::new(), ""),
        Some(pi) => {
            let p = &model.processes[pi];
            let tname = r
                .thread
                .and_then(|th| p.threads.iter().find(|x| x.thread == th))
                .map_or("", |x| x.name.as_str());
            (
                super::pid_text(p),
                r.thread
                    .map_or_else(|| "all".to_string(), |t| t.to_string()),
                p.host.clone(),
                tname,
            )
        }
    };
    writeln!(
        out,
        "{process},{thread},{},{},{},{},{:.9},{},{},{},{},{},{}",
        field(&r.object),
        r.kind.as_str(),
        r.stat.acquisitions,
        r.stat.contended,
        r.stat.wait_s,
        if r.kind.hold_unknown() {
            String::new()
        } else {
            format!("{:.9}", r.stat.hold_s)
        },
        r.stat.releases,
        field(&r.site),
        r.id.map_or_else(String::new, |i| i.to_string()),
        field(tname),
        field(&host)
    )
}

fn json_row(model: &Model, r: &SyncRow) -> Value {
    let p = r.process.map(|pi| &model.processes[pi]);
    json!({
        "object": r.object,
        "kind": r.kind.as_str(),
        "id": r.id,
        "site": r.site,
        "pid": p.map(|p| p.pid),
        "rank": p.and_then(|p| p.rank()),
        "host": p.map(|p| p.host.clone()),
        "thread": r.thread,
        "acquisitions": r.stat.acquisitions,
        "contended": r.stat.contended,
        "wait_s": r.stat.wait_s,
        "hold_s": (!r.kind.hold_unknown()).then_some(r.stat.hold_s),
        "releases": r.stat.releases,
    })
}

/// Writes the synchronization report of `model` grouped `by`.
pub fn write(model: &Model, by: GroupBy, format: Format, out: &mut dyn Write) -> io::Result<()> {
    let (locations, totals) = model.sync_rows(by);
    match format {
        Format::Text => {
            if !model.has_sync() || totals.is_empty() {
                writeln!(
                    out,
                    "no synchronization objects measured (the program's measured threads used no pthread mutex, rwlock, condition variable, barrier, semaphore, spin lock or join)"
                )?;
                return Ok(());
            }
            for g in groups(&locations) {
                text_table(model, &g, out)?;
            }
            let t: Vec<&SyncRow> = totals.iter().collect();
            text_table(model, &t, out)?;
        }
        Format::Csv => {
            writeln!(
                out,
                "process,thread,object,kind,acquisitions,contended,wait_s,hold_s,releases,site,id,thread_name,host"
            )?;
            for r in locations.iter().chain(&totals) {
                csv_row(model, r, out)?;
            }
        }
        Format::Json => {
            let doc = json!({
                "experiment": model.dir.display().to_string(),
                "by": if by == GroupBy::Thread { "thread" } else { "process" },
                "locations": locations.iter().map(|r| json_row(model, r)).collect::<Vec<_>>(),
                "total": totals.iter().map(|r| json_row(model, r)).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
