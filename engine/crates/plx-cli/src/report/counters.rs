//! `plx report --counters`: whole-thread counter totals and the counted functions (per thread,
//! per function or callpath, per configuration and event set) as text, CSV or JSON.

use std::io::{self, Write};

use plx_analysis::counters::{CountedCall, CounterSetInfo};
use plx_analysis::Model;
use serde_json::json;

use crate::args::Format;
use crate::csv::field;

struct Row<'a> {
    process: String,
    thread: u32,
    thread_name: &'a str,
    function: String,
    callpath: String,
    set: &'a CounterSetInfo,
    call: Option<CountedCall>,
    totals: Option<&'a [u64]>,
}

fn rows<'a>(model: &'a Model, callpath: bool) -> Vec<Row<'a>> {
    let mut out = Vec::new();
    for p in &model.processes {
        let pid = super::pid_text(p);
        for tc in &p.counters.threads {
            let name = p
                .threads
                .iter()
                .find(|t| t.thread == tc.thread)
                .map_or("", |t| t.name.as_str());
            for (s, v) in &tc.totals {
                if let Some(set) = p.counters.sets.get(s) {
                    out.push(Row {
                        process: pid.clone(),
                        thread: tc.thread,
                        thread_name: name,
                        function: "(thread)".into(),
                        callpath: String::new(),
                        set,
                        call: None,
                        totals: Some(v),
                    });
                }
            }
            let mut calls: Vec<&CountedCall> = tc.calls.iter().collect();
            calls.sort_by(|a, b| {
                let ka = (
                    p.counters.sets.get(&a.set).map(|s| s.epoch),
                    model.regions.name(a.region),
                    &a.path,
                    a.set,
                );
                let kb = (
                    p.counters.sets.get(&b.set).map(|s| s.epoch),
                    model.regions.name(b.region),
                    &b.path,
                    b.set,
                );
                ka.cmp(&kb)
            });
            // per function: the callpaths of one function and set are summed
            let mut merged: Vec<CountedCall> = Vec::new();
            for c in calls {
                let key_path = if callpath { c.path.clone() } else { Vec::new() };
                match merged
                    .iter_mut()
                    .find(|m| m.set == c.set && m.region == c.region && m.path == key_path)
                {
                    Some(m) => {
                        m.calls += c.calls;
                        m.context_calls += c.context_calls;
                        for (a, b) in m.inclusive.iter_mut().zip(&c.inclusive) {
                            *a += b;
                        }
                        for (a, b) in m.exclusive.iter_mut().zip(&c.exclusive) {
                            *a += b;
                        }
                    }
                    None => merged.push(CountedCall {
                        path: key_path,
                        ..c.clone()
                    }),
                }
            }
            for c in merged {
                let Some(set) = p.counters.sets.get(&c.set) else {
                    continue;
                };
                let callpath_text = c
                    .path
                    .iter()
                    .map(|r| model.regions.name(*r))
                    .collect::<Vec<_>>()
                    .join(" => ");
                out.push(Row {
                    process: pid.clone(),
                    thread: tc.thread,
                    thread_name: name,
                    function: model.regions.name(c.region).to_string(),
                    callpath: callpath_text,
                    set,
                    call: Some(c),
                    totals: None,
                });
            }
        }
    }
    out
}

/// Every event name of the experiment, in order of first appearance.
fn event_names(model: &Model) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in &model.processes {
        for s in p.counters.sets.values() {
            for e in &s.events {
                if !names.contains(e) {
                    names.push(e.clone());
                }
            }
        }
    }
    names
}

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
    let rows = rows(model, callpath);
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
        let here = (r.process.clone(), r.thread);
        if last.as_ref() != Some(&here) {
            writeln!(
                out,
                "\ncounters of process {} thread {} \"{}\"",
                r.process, r.thread, r.thread_name
            )?;
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
            r.process,
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
                "process": r.process, "thread": r.thread, "thread_name": r.thread_name,
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
