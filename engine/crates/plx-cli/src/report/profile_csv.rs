//! CSV output of `plx report`'s profiles: one row per location and function (or callpath, named
//! whole or, with `--tree`, by its node's id and parent id, then its function's file and line);
//! in a session a last column names the process's application.

use std::io::{self, Write};

use plx_analysis::{callpath_rows, flat_profile, Table};

use super::Report;
use crate::csv::field;

fn location(rep: &Report, t: &Table) -> (String, String, String) {
    match t.process {
        None => ("all".into(), "all".into(), String::new()),
        Some(pi) => {
            let p = &rep.model.processes[pi];
            let th = t
                .thread
                .map_or_else(|| "all".to_string(), |x| x.to_string());
            (super::pid_text(p), th, p.host.clone())
        }
    }
}

/// CPU seconds with 9 decimals, empty when unknown.
fn cpu(c: Option<f64>) -> String {
    c.map_or_else(String::new, |c| format!("{c:.9}"))
}

/// `,SAMPLES,ESTIMATED` when the run sampled call stacks, else nothing.
fn samples_fields(rep: &Report, samples: u64, estimated: bool) -> String {
    if rep.total.tree.has_samples() {
        format!(",{samples},{}", u8::from(estimated))
    } else {
        String::new()
    }
}

/// `,APP` (the process's application, `all` for the total) in a session, else nothing.
fn app_field(rep: &Report, t: &Table) -> String {
    if !rep.model.is_session() {
        return String::new();
    }
    match t.process {
        None => ",all".to_string(),
        Some(pi) => format!(",{}", field(rep.model.processes[pi].app_name(rep.model))),
    }
}

fn table(rep: &Report, t: &Table, out: &mut dyn Write) -> io::Result<()> {
    let (process, thread, host) = location(rep, t);
    let app = app_field(rep, t);
    let tname = field(rep.thread_name(t));
    let host = field(&host);
    if rep.args.callpath {
        for r in callpath_rows(&t.tree) {
            let node = &t.tree.nodes()[r.node as usize];
            // --tree: the node's id and its parent's, linear in depth; else the whole path
            let path = if rep.args.tree {
                let parent = node.parent.map_or_else(String::new, |p| p.to_string());
                format!("{},{parent}", r.node)
            } else {
                field(&rep.path_text(&t.tree, r.node))
            };
            let info = rep.model.regions.get(node.region);
            writeln!(
                out,
                "{process},{thread},{},{},{},{:.9},{:.9},{tname},{host},{},{},{},{}{}{app}",
                field(rep.name(node.region)),
                r.calls,
                r.child_calls,
                r.exclusive,
                r.inclusive,
                path,
                field(&info.file),
                info.line,
                cpu(r.cpu),
                samples_fields(rep, r.samples, r.estimated)
            )?;
        }
    } else {
        for r in flat_profile(&t.tree) {
            writeln!(
                out,
                "{process},{thread},{},{},{},{:.9},{:.9},{tname},{host},{}{}{app}",
                field(rep.name(r.region)),
                r.calls,
                r.child_calls,
                r.exclusive,
                r.inclusive,
                cpu(r.cpu),
                samples_fields(rep, r.samples, r.estimated)
            )?;
        }
    }
    Ok(())
}

/// Writes the header, every table's rows, then the total's rows (process `all`, thread `all`).
pub fn write(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "process,thread,function,calls,child_calls,exclusive_s,inclusive_s,thread_name,host"
    )?;
    if rep.args.tree {
        write!(out, ",id,parent,file,line")?;
    } else if rep.args.callpath {
        write!(out, ",callpath,file,line")?;
    }
    write!(out, ",cpu_s")?;
    if rep.total.tree.has_samples() {
        write!(out, ",samples,estimated")?;
    }
    if rep.model.is_session() {
        write!(out, ",app")?;
    }
    writeln!(out)?;
    for t in &rep.tables {
        table(rep, t, out)?;
    }
    table(rep, &rep.total, out)
}
