//! gprof-style call graph text: per function its callers, itself and its callees.

use std::io::{self, Write};

use plx_analysis::{call_graph, Table};

use super::Report;
use crate::units::human_time;

fn graph(rep: &Report, t: &Table, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "call graph of {}", rep.label(t))?;
    writeln!(out)?;
    let entries = call_graph(&t.tree);
    if entries.is_empty() {
        writeln!(out, "  (no profile)")?;
        writeln!(out)?;
        return Ok(());
    }
    let index_of = |r: u32| {
        entries
            .iter()
            .find(|e| e.region == r)
            .map_or(0, |e| e.index)
    };
    writeln!(
        out,
        "{:<7} {:>6} {:>12} {:>12} {:>13}  name",
        "index", "%time", "self", "children", "called"
    )?;
    let sep = "-".repeat(72);
    for e in &entries {
        for a in &e.parents {
            let name = match a.region {
                Some(r) => format!("{} [{}]", rep.name(r), index_of(r)),
                None => "<spontaneous>".to_string(),
            };
            writeln!(
                out,
                "{:<7} {:>6} {:>12} {:>12} {:>13}      {}",
                "",
                "",
                human_time(a.self_s),
                human_time(a.children_s),
                format!("{}/{}", a.calls, a.total_calls),
                name
            )?;
        }
        let called = if e.recursive_calls > 0 {
            format!("{}+{}", e.calls, e.recursive_calls)
        } else {
            e.calls.to_string()
        };
        writeln!(
            out,
            "{:<7} {:>6.1} {:>12} {:>12} {:>13}  {} [{}]",
            format!("[{}]", e.index),
            e.percent,
            human_time(e.self_s),
            human_time(e.children_s),
            called,
            rep.name(e.region),
            e.index
        )?;
        for a in &e.children {
            let r = a.region.expect("a callee is a region");
            writeln!(
                out,
                "{:<7} {:>6} {:>12} {:>12} {:>13}      {} [{}]",
                "",
                "",
                human_time(a.self_s),
                human_time(a.children_s),
                format!("{}/{}", a.calls, a.total_calls),
                rep.name(r),
                index_of(r)
            )?;
        }
        writeln!(out, "{sep}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// Writes one call graph per table, then the total's.
pub fn write(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    for t in &rep.tables {
        graph(rep, t, out)?;
    }
    graph(rep, &rep.total, out)
}
