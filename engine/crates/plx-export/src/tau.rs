//! `tau`: TAU profile files (`MULTI__TIME/profile.N.0.T`), flat and callpath entries, as TAU writes them and ParaProf and Hatchet read them.
//!
//! One file per node (the MPI rank, else the process's place among the others) and thread. Like
//! TAU, every thread's profile is rooted at `.TAU application` (Hatchet takes a file's first
//! entry as the root of every `=>` callpath): its calls are 1, its subroutines the calls of the
//! thread's top-level regions, its times the thread's (whole µs: Hatchet reads the root's values
//! as integers). Then one flat entry per region (recursion counted once in inclusive time) and
//! one callpath entry per callpath node, `.TAU application => main => compute`. Times in µs.

use std::collections::BTreeMap;
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

    /// `plx report`'s names: an OpenMP construct's carries its source line
    /// (`parallel@solver.c:42`), resolved from the debug information when the experiment
    /// lacks it.
    fn needs_sources(&self) -> bool {
        true
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
                write_file(&path, |out| write_profile(model, p, t, None, out))?;
                summary.records += t.tree.nodes().len() as u64;
                summary.files.push(path);
            }
        }
        // one more metric directory per counter the run counted (MULTI__page-faults, ...)
        for event in counter_events(model) {
            let cdir = dir.join(format!("MULTI__{}", dir_name(&event)));
            std::fs::create_dir_all(&cdir).map_err(|e| ExportError::Io(cdir.clone(), e))?;
            for (node, p) in nodes(model) {
                for t in &p.threads {
                    let path = cdir.join(format!("profile.{node}.0.{}", t.thread));
                    write_file(&path, |out| write_profile(model, p, t, Some(&event), out))?;
                    summary.files.push(path);
                }
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

/// Every counter event counted (not refused) in the experiment, in order of first appearance.
fn counter_events(model: &Model) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &model.processes {
        for s in p.counters.sets.values() {
            for (e, refused) in s.events.iter().zip(&s.refused) {
                if *refused == 0 && !out.contains(e) {
                    out.push(e.clone());
                }
            }
        }
    }
    out
}

/// A metric directory's name part: the event without `/` (perf::PAGE-FAULTS stays readable).
fn dir_name(event: &str) -> String {
    event.replace('/', "_")
}

/// A thread's counts of `event`: (whole-thread total, per function (excl, incl), per callpath
/// (excl, incl)); a multiplexed set's counts are scaled to all calls (its estimate).
type Counts = (
    Option<f64>,
    BTreeMap<u32, (f64, f64)>,
    BTreeMap<Vec<u32>, (f64, f64)>,
);

fn counts(p: &ProcessModel, t: &ThreadModel, event: &str) -> Counts {
    let mut total = None;
    let mut flat: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    let mut paths: BTreeMap<Vec<u32>, (f64, f64)> = BTreeMap::new();
    let Some(tc) = p.counters.threads.iter().find(|c| c.thread == t.thread) else {
        return (total, flat, paths);
    };
    for (s, v) in &tc.totals {
        if let Some(i) = p.counters.sets[s].events.iter().position(|e| e == event) {
            total = Some(v[i] as f64);
        }
    }
    for c in &tc.calls {
        let Some(set) = p.counters.sets.get(&c.set) else {
            continue;
        };
        let Some(i) = set.events.iter().position(|e| e == event) else {
            continue;
        };
        let scale = if c.calls > 0 {
            c.context_calls as f64 / c.calls as f64
        } else {
            0.0
        };
        let (ex, inc) = (c.exclusive[i] as f64 * scale, c.inclusive[i] as f64 * scale);
        let f = flat.entry(c.region).or_default();
        f.0 += ex;
        f.1 += inc;
        if !c.path.is_empty() {
            let q = paths.entry(c.path.clone()).or_default();
            q.0 += ex;
            q.1 += inc;
        }
    }
    (total, flat, paths)
}

fn metadata(p: &ProcessModel, t: &ThreadModel, metric: &str) -> String {
    let mut attrs: Vec<(&str, String)> = vec![
        ("Metric Name", metric.to_string()),
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

/// Writes file `path` with `body`, buffered.
fn write_file(
    path: &std::path::Path,
    body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let fail = |e| ExportError::Io(path.to_path_buf(), e);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    body(&mut out).map_err(fail)?;
    std::io::Write::flush(&mut out).map_err(fail)
}

/// One thread's profile file for the time metric (`None`) or a counter: the same entries, a
/// counter's values in its unit (0 where the function was not counted). Written as it is
/// made: a callpath's name is written from the tree, so memory stays linear in the nodes
/// although the file names every callpath whole (a chain N deep: N²/2 names).
fn write_profile(
    model: &Model,
    p: &ProcessModel,
    t: &ThreadModel,
    event: Option<&str>,
    s: &mut dyn std::io::Write,
) -> std::io::Result<()> {
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
    let (ctotal, cflat, cpaths) = match event {
        Some(e) => counts(p, t, e),
        None => Default::default(),
    };
    let num = |v: f64| format!("{v:.0}");
    let (root_excl, root_incl) = match event {
        None => (root_excl, root_incl),
        Some(_) => {
            let top: f64 = roots()
                .filter_map(|n| cpaths.get(&vec![n.region]).or(cflat.get(&n.region)))
                .map(|v| v.1)
                .sum();
            let incl = ctotal.unwrap_or(top).max(top);
            ((incl - top).max(0.0), incl)
        }
    };
    let metric = event.map_or_else(|| "TIME".to_string(), xml);

    let entries = 1 + flat.len() + nodes.len();
    writeln!(
        s,
        "{entries} templated_functions_MULTI_{}",
        event.map_or_else(|| "TIME".to_string(), dir_name)
    )?;
    writeln!(
        s,
        "# Name Calls Subrs Excl Incl ProfileCalls # {}",
        metadata(p, t, &metric)
    )?;
    writeln!(
        s,
        "\"{ROOT}\" 1 {top_calls} {root_excl:.0} {root_incl:.0} 0 GROUP=\"TAU_DEFAULT\""
    )?;
    for r in &flat {
        let (ex, inc) = match event {
            None => (us(r.exclusive), us(r.inclusive)),
            Some(_) => cflat
                .get(&r.region)
                .map_or(("0".into(), "0".into()), |v| (num(v.0), num(v.1))),
        };
        writeln!(
            s,
            "\"{}\" {} {} {ex} {inc} 0 GROUP=\"{}\"",
            name(r.region),
            r.calls,
            r.child_calls,
            group(kind(r.region))
        )?;
    }
    // callpath entries in tree order: a parent precedes its children
    for (i, n) in nodes.iter().enumerate() {
        let (ex, inc) = match event {
            None => (us(n.exclusive), us(n.inclusive)),
            Some(_) => cpaths
                .get(&tree.path(i as u32))
                .map_or(("0".into(), "0".into()), |v| (num(v.0), num(v.1))),
        };
        write!(s, "\"{ROOT}")?;
        let mut result = Ok(());
        tree.for_each_in_path(i as u32, |r| {
            if result.is_ok() {
                result = write!(s, " => {}", name(r));
            }
        });
        result?;
        writeln!(
            s,
            "\" {} {} {ex} {inc} 0 GROUP=\"{}|TAU_CALLPATH\"",
            n.calls,
            n.child_calls,
            group(kind(n.region))
        )?;
    }
    writeln!(s, "0 aggregates")?;
    if !t.user_events.is_empty() {
        writeln!(s, "{} userevents", t.user_events.len())?;
        writeln!(s, "# eventname numevents max min mean sumsqr")?;
        for e in &t.user_events {
            writeln!(
                s,
                "\"{}\" {} {} {} {} {}",
                tau_name(&e.name),
                e.count,
                e.max,
                e.min,
                e.mean(),
                e.sum_squares
            )?;
        }
    }
    Ok(())
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
