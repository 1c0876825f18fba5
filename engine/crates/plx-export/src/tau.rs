//! `tau`: TAU profile files (`MULTI__TIME/profile.N.0.T`), flat and callpath entries, as TAU writes them and ParaProf and Hatchet read them.
//!
//! One file per node (the MPI rank, else the process's place among the others) and thread. Like
//! TAU, every thread's profile is rooted at `.TAU application` (Hatchet takes a file's first
//! entry as the root of every `=>` callpath): its calls are 1, its subroutines the calls of the
//! thread's top-level regions, its times the thread's (whole µs: Hatchet reads the root's values
//! as integers). Then one flat entry per region (recursion counted once in inclusive time) and
//! one callpath entry per callpath node, `.TAU application => main => compute`. Times in µs.

use std::fmt::Write as _;

use plx_analysis::{flat_profile, CallTree, Model, ProcessModel, ThreadModel};
use plx_format::RegionKind;

use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Target};

/// The `tau` format (docs/exports/tau.md).
pub struct Tau;

/// The root TAU gives every thread's profile.
pub const ROOT: &str = ".TAU application";
/// The directory of the time metric's profiles.
pub const METRIC_DIR: &str = "MULTI__TIME";

impl Exporter for Tau {
    fn name(&self) -> &'static str {
        "tau"
    }

    fn about(&self) -> &'static str {
        "TAU profiles (MULTI__TIME/profile.N.0.T) with callpaths, for ParaProf and Hatchet"
    }

    fn output(&self) -> OutputKind {
        OutputKind::Directory
    }

    fn needs_trace(&self) -> bool {
        false
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let Target::Directory(dir) = target else {
            return Err(ExportError::Usage(
                "the tau format writes a directory: give one with -o DIR".to_string(),
            ));
        };
        let metric = dir.join(METRIC_DIR);
        std::fs::create_dir_all(&metric).map_err(|e| ExportError::Io(metric.clone(), e))?;
        let model = &input.model;
        let mut summary = ExportSummary::default();
        for (node, p) in nodes(model) {
            for t in &p.threads {
                let path = metric.join(format!("profile.{node}.0.{}", t.thread));
                let text = profile_text(model, p, t);
                std::fs::write(&path, text.as_bytes())
                    .map_err(|e| ExportError::Io(path.clone(), e))?;
                summary.records += t.tree.nodes().len() as u64;
                summary.files.push(path);
            }
        }
        if summary.files.is_empty() {
            return Err(ExportError::Usage(format!(
                "{}: no measured process: nothing to export",
                model.dir.display()
            )));
        }
        Ok(summary)
    }
}

/// TAU's nodes: each MPI rank is the node of its number (the first process of a rank seen
/// twice); every other measured process gets the next number after the ranks, in model order.
pub fn nodes(model: &Model) -> Vec<(u32, &ProcessModel)> {
    let ranks = model.ranks();
    let mut next = ranks.iter().map(|(r, _)| r + 1).max().unwrap_or(0);
    let mut out: Vec<(u32, &ProcessModel)> = Vec::new();
    for p in model.processes.iter().filter(|p| p.measured) {
        match ranks.iter().find(|(_, r)| std::ptr::eq(*r, p)) {
            Some((rank, _)) => out.push((*rank, p)),
            None => {
                out.push((next, p));
                next += 1;
            }
        }
    }
    out
}

/// TAU's group of a region.
fn group(kind: RegionKind) -> &'static str {
    match kind {
        RegionKind::Mpi => "MPI",
        RegionKind::User | RegionKind::Phase => "TAU_USER",
        _ => "TAU_DEFAULT",
    }
}

/// A name as TAU quotes it: no `"`, no line breaks, no `=>` inside a name (the callpath
/// separator Hatchet splits on).
fn tau_name(name: &str) -> String {
    name.replace('"', "'")
        .replace(['\n', '\r'], " ")
        .replace("=>", "= >")
}

/// An XML attribute value of the metadata, also without `#` (Hatchet finds the column header's
/// end by it).
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('#', "&#35;")
        .replace(['\n', '\r'], " ")
}

/// µs of seconds to the ns, without trailing zeros (`6`, `0.002`, `1234.5`).
fn us(s: f64) -> String {
    let v = format!("{:.3}", s * 1e6);
    let v = v.trim_end_matches('0').trim_end_matches('.');
    if v.is_empty() || v == "-" {
        "0".to_string()
    } else {
        v.to_string()
    }
}

fn metadata(p: &ProcessModel, t: &ThreadModel) -> String {
    let mut attrs: Vec<(&str, String)> = vec![
        ("Metric Name", "TIME".to_string()),
        ("Node Name", p.host.clone()),
        ("pid", p.pid.to_string()),
        ("Executable", p.executable.clone()),
        ("Command Line", p.argv.join(" ")),
        ("Thread Name", t.name.clone()),
        ("Parallax Version", p.version.clone()),
    ];
    if let Some(tid) = t.tid {
        attrs.push(("tid", tid.to_string()));
    }
    if let Some(m) = &p.mpi {
        attrs.push(("MPI Rank", m.rank.to_string()));
        attrs.push(("MPI Size", m.size.to_string()));
    }
    let mut s = String::from("<metadata>");
    for (k, v) in attrs {
        let _ = write!(
            s,
            "<attribute><name>{}</name><value>{}</value></attribute>",
            xml(k),
            xml(&v)
        );
    }
    s.push_str("</metadata>");
    s
}

/// The text of one thread's profile file.
pub fn profile_text(model: &Model, p: &ProcessModel, t: &ThreadModel) -> String {
    let tree: &CallTree = &t.tree;
    let nodes = tree.nodes();
    let flat = flat_profile(tree);
    let name = |r: u32| tau_name(model.regions.name(r));
    let kind = |r: u32| model.regions.get(r).kind;
    let roots = || nodes.iter().filter(|n| n.parent.is_none());
    let top_calls: u64 = roots().map(|n| n.calls).sum();
    let top_time: f64 = roots().map(|n| n.inclusive).sum();
    // the root's values are integers (whole µs, rounded up: never less than its children)
    let root_incl = (top_time.max(t.wall_s.unwrap_or(0.0)) * 1e6).ceil();
    let root_excl = (root_incl - top_time * 1e6).round().max(0.0);

    let mut s = String::new();
    let entries = 1 + flat.len() + nodes.len();
    let _ = writeln!(s, "{entries} templated_functions_MULTI_TIME");
    let _ = writeln!(
        s,
        "# Name Calls Subrs Excl Incl ProfileCalls # {}",
        metadata(p, t)
    );
    let _ = writeln!(
        s,
        "\"{ROOT}\" 1 {top_calls} {root_excl:.0} {root_incl:.0} 0 GROUP=\"TAU_DEFAULT\""
    );
    for r in &flat {
        let _ = writeln!(
            s,
            "\"{}\" {} {} {} {} 0 GROUP=\"{}\"",
            name(r.region),
            r.calls,
            r.child_calls,
            us(r.exclusive),
            us(r.inclusive),
            group(kind(r.region))
        );
    }
    // callpath entries in tree order: a parent precedes its children
    let mut paths: Vec<String> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let path = match n.parent {
            Some(parent) => format!("{} => {}", paths[parent as usize], name(n.region)),
            None => format!("{ROOT} => {}", name(n.region)),
        };
        let _ = writeln!(
            s,
            "\"{path}\" {} {} {} {} 0 GROUP=\"{}|TAU_CALLPATH\"",
            n.calls,
            n.child_calls,
            us(n.exclusive),
            us(n.inclusive),
            group(kind(n.region))
        );
        paths.push(path);
    }
    let _ = writeln!(s, "0 aggregates");
    if !t.user_events.is_empty() {
        let _ = writeln!(s, "{} userevents", t.user_events.len());
        let _ = writeln!(s, "# eventname numevents max min mean sumsqr");
        for e in &t.user_events {
            let _ = writeln!(
                s,
                "\"{}\" {} {} {} {} {}",
                tau_name(&e.name),
                e.count,
                e.max,
                e.min,
                e.mean(),
                e.sum_squares
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_as_tau_writes_them() {
        assert_eq!(tau_name("a\"b => c"), "a'b = > c");
        assert_eq!(xml("<a & #1>"), "&lt;a &amp; &#35;1&gt;");
        assert_eq!(us(0.0), "0");
        assert_eq!(us(0.000_006), "6");
        assert_eq!(us(2e-9), "0.002");
        assert_eq!(us(1.2345), "1234500");
    }
}
