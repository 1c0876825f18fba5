//! `plx report --counters`: whole-thread counter totals and the counted functions (per thread,
//! per function or callpath, per configuration and event set) as text, CSV or JSON.

use std::io::{self, Write};

use plx_analysis::counters::{event_names, report_rows, CounterRow as Row};
use plx_analysis::location_name::Who;
use plx_analysis::Model;
use serde_json::json;

use crate::args::Format;
use crate::csv::field;

/// Writes the counters report; an experiment without counters says so (exit status 2).
pub fn write(
    model: &Model,
    format: Format,
    callpath: bool,
    out: &mut dyn Write,
) -> io::Result<bool> {
    if model.processes.iter().all(|p| p.counters.is_empty()) {
        return Ok(false);
    }
    let rows = report_rows(model, callpath);
    match format {
        Format::Text => text(model, &rows, out)?,
        Format::Csv => csv(model, &rows, callpath, out)?,
        Format::Json => jsonw(model, &rows, out)?,
    }
    Ok(true)
}

fn refused_text(model: &Model) -> Vec<String> {
    let mut v = Vec::new();
    for p in &model.processes {
        for (n, e) in p.counters.refused() {
            let s = format!(
                "{n} (errno {e}: {})",
                std::io::Error::from_raw_os_error(e as i32)
            );
            if !v.contains(&s) {
                v.push(s);
            }
        }
    }
    v
}

fn text(model: &Model, rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    let refused = refused_text(model);
    if !refused.is_empty() {
        writeln!(out, "refused (not counted): {}", refused.join(", "))?;
    }
    let mut last = None;
    for r in rows {
        let here = (r.process.pid_text(), r.thread);
        if last.as_ref() != Some(&here) {
            let who = Who::process(model, r.process).long(Some((r.thread, r.thread_name)));
            writeln!(out, "\ncounters of {who}")?;
            writeln!(
                out,
                "{:>5} {:>4} {:>9} {:>9}  {:<20} {:>16} {:>16} {:>18}  function",
                "epoch", "set", "calls", "of", "event", "inclusive", "exclusive", "estimate"
            )?;
            last = Some(here);
        }
        let label = if r.callpath.is_empty() {
            r.function.clone()
        } else {
            r.callpath.clone()
        };
        for (i, ev) in r.set.events.iter().enumerate() {
            if r.set.refused[i] != 0 {
                continue;
            }
            match (r.call.as_ref(), r.totals) {
                (_, Some(t)) => writeln!(
                    out,
                    "{:>5} {:>4} {:>9} {:>9}  {:<20} {:>16} {:>16} {:>18}  {label}",
                    "-", r.set.set, "", "", ev, t[i], "", ""
                )?,
                (Some(c), None) => {
                    let est = if r.set.multiplexed() {
                        format!("~{:.0} (est.)", c.estimate(i))
                    } else {
                        String::new()
                    };
                    writeln!(
                        out,
                        "{:>5} {:>4} {:>9} {:>9}  {:<20} {:>16} {:>16} {:>18}  {label}",
                        r.set.epoch,
                        r.set.set,
                        c.calls,
                        c.context_calls,
                        ev,
                        c.inclusive[i],
                        c.exclusive[i],
                        est
                    )?
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn csv(model: &Model, rows: &[Row], callpath: bool, out: &mut dyn Write) -> io::Result<()> {
    let names = event_names(model);
    write!(out, "process,thread,thread_name,epoch,set,function")?;
    if callpath {
        write!(out, ",callpath")?;
    }
    write!(out, ",calls,context_calls,estimated")?;
    for n in &names {
        write!(
            out,
            ",{},{}:exclusive,{}:estimate",
            field(n),
            field(n),
            field(n)
        )?;
    }
    writeln!(out)?;
    for r in rows {
        let epoch = if r.totals.is_some() {
            String::new()
        } else {
            r.set.epoch.to_string()
        };
        write!(
            out,
            "{},{},{},{epoch},{},{}",
            r.process.pid_text(),
            r.thread,
            field(r.thread_name),
            r.set.set,
            field(&r.function)
        )?;
        if callpath {
            write!(out, ",{}", field(&r.callpath))?;
        }
        match r.call.as_ref() {
            Some(c) => write!(
                out,
                ",{},{},{}",
                c.calls,
                c.context_calls,
                u8::from(r.set.multiplexed())
            )?,
            None => write!(out, ",,,0")?,
        }
        for n in &names {
            let i = r
                .set
                .events
                .iter()
                .position(|e| e == n)
                .filter(|i| r.set.refused[*i] == 0);
            match (i, r.call.as_ref(), r.totals) {
                (Some(i), _, Some(t)) => write!(out, ",{},,", t[i])?,
                (Some(i), Some(c), None) => write!(
                    out,
                    ",{},{},{:.1}",
                    c.inclusive[i],
                    c.exclusive[i],
                    c.estimate(i)
                )?,
                _ => write!(out, ",,,")?,
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn jsonw(model: &Model, rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    let mut sets = Vec::new();
    for p in &model.processes {
        for s in p.counters.sets.values() {
            sets.push(json!({
                "process": super::pid_text(p), "set": s.set, "epoch": s.epoch,
                "context": s.glob, "every": s.every, "position": s.position,
                "sets_in_context": s.sets_in_context, "events": s.events, "refused": s.refused,
            }));
        }
    }
    let items: Vec<_> = rows
        .iter()
        .map(|r| {
            let events: serde_json::Map<String, serde_json::Value> = r
                .set
                .events
                .iter()
                .enumerate()
                .filter(|(i, _)| r.set.refused[*i] == 0)
                .map(|(i, e)| {
                    let v = match (r.call.as_ref(), r.totals) {
                        (_, Some(t)) => json!({"total": t[i]}),
                        (Some(c), None) => json!({
                            "inclusive": c.inclusive[i], "exclusive": c.exclusive[i],
                            "estimate": c.estimate(i), "estimated": r.set.multiplexed(),
                        }),
                        _ => json!(null),
                    };
                    (e.clone(), v)
                })
                .collect();
            json!({
                "process": r.process.pid_text(), "thread": r.thread, "thread_name": r.thread_name,
                "function": r.function, "callpath": r.callpath, "set": r.set.set,
                "epoch": r.set.epoch, "calls": r.call.as_ref().map(|c| c.calls),
                "context_calls": r.call.as_ref().map(|c| c.context_calls), "events": events,
            })
        })
        .collect();
    serde_json::to_writer_pretty(
        &mut *out,
        &json!({"sets": sets, "rows": items, "refused": refused_text(model)}),
    )?;
    writeln!(out)
}
