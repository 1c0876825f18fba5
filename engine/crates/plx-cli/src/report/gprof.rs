//! gprof-style call graph text: per function its callers, itself and its callees.

use std::io::{self, Write};

use plx_analysis::gprof::Arc;
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
    // with call-stack samples: a samples column, and times estimated from them marked `~`
    let sampled = t.tree.has_samples();
    let samples = |n: u64| {
        if sampled {
            format!(" {n:>9}")
        } else {
            String::new()
        }
    };
    let time = |s: f64, estimated: bool| {
        let h = human_time(s);
        if estimated {
            format!("~{h}")
        } else {
            h
        }
    };
    // an arc no event took has no count: `-`
    let arc_calls = |a: &Arc| {
        if a.estimated && a.calls == 0 {
            "-".to_string()
        } else {
            format!("{}/{}", a.calls, a.total_calls)
        }
    };
    writeln!(
        out,
        "{:<7} {:>6} {:>12} {:>12} {:>13}{}  name",
        "index",
        "%time",
        "self",
        "children",
        "called",
        if sampled { "   samples" } else { "" }
    )?;
    let sep = "-".repeat(if sampled { 82 } else { 72 });
    for e in &entries {
        for a in &e.parents {
            let name = match a.region {
                Some(r) => format!("{} [{}]", rep.name(r), index_of(r)),
                None => "<spontaneous>".to_string(),
            };
            writeln!(
                out,
                "{:<7} {:>6} {:>12} {:>12} {:>13}{}      {}",
                "",
                "",
                time(a.self_s, a.estimated),
                time(a.children_s, a.estimated),
                arc_calls(a),
                samples(a.samples),
                name
            )?;
        }
        let called = if e.estimated && e.calls == 0 {
            "-".to_string()
        } else if e.recursive_calls > 0 {
            format!("{}+{}", e.calls, e.recursive_calls)
        } else {
            e.calls.to_string()
        };
        writeln!(
            out,
            "{:<7} {:>6.1} {:>12} {:>12} {:>13}{}  {} [{}]",
            format!("[{}]", e.index),
            e.percent,
            time(e.self_s, e.estimated),
            time(e.children_s, e.estimated),
            called,
            samples(e.samples),
            rep.name(e.region),
            e.index
        )?;
        for a in &e.children {
            let r = a.region.expect("a callee is a region");
            writeln!(
                out,
                "{:<7} {:>6} {:>12} {:>12} {:>13}{}      {} [{}]",
                "",
                "",
                time(a.self_s, a.estimated),
                time(a.children_s, a.estimated),
                arc_calls(a),
                samples(a.samples),
                rep.name(r),
                index_of(r)
            )?;
        }
        writeln!(out, "{sep}")?;
    }
    if sampled {
        writeln!(
            out,
            "~: estimated from call-stack samples (samples x period, CPU time); `-`: called only as samples saw it (no count)"
        )?;
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
