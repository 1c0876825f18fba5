//! `plx critical-path`: the critical path of the trace's program activity graph (intra-, inter-application or global) and its profile by procedure, thread, process or machine, as text, CSV or JSON.

use std::io::{self, Write};

use clap::ValueEnum;
use plx_analysis::critpath::{
    imbalance, item_samples, location_name, profile, CriticalPath, Imbalance, Item, ItemKind,
    ItemSamples, Level, Mode, Segment,
};
use plx_analysis::runtime_cost::critical_path_warning;
use plx_analysis::{phase_window, MergeOptions, Model, Window};
use plx_format::RegionKind;
use serde_json::{json, Value};

use crate::args::{ExperimentArgs, Format, OutputArgs, PhaseArg, SamplesArg, TopArg};
use crate::csv::field;
use crate::units::{elide_middle, Left};
use crate::{CliError, Exit};

/// `--mode`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    /// One application in isolation (needs --app in a session of several): arcs to and from
    /// other applications ignored.
    Intra,
    /// One application and what delayed it in the others: the path begins and ends in it.
    Inter,
    /// Every application, every arc.
    Global,
}

/// `--level`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelArg {
    /// Functions (their exclusive time in the path's CPU segments) and transfers between threads.
    Procedure,
    /// Threads.
    Thread,
    /// Processes.
    Process,
    /// Machines.
    Machine,
}

/// `plx critical-path`.
#[derive(clap::Args, Debug)]
pub struct CriticalPathArgs {
    /// The experiment or session (recorded with `plx run --trace`) and --app (the
    /// application whose path is wanted).
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase: its start is the graph's initial node, its end the terminal.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// intra, inter or global [default: intra with --app, else global].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// What the profile's rows are.
    #[arg(long, value_enum, default_value_t = LevelArg::Procedure)]
    pub level: LevelArg,
    /// --top.
    #[command(flatten)]
    pub top: TopArg,
    /// Also list the path's segments (with --format csv: the segments instead of the profile).
    #[arg(long)]
    pub path: bool,
    /// Instead of the profile, each function's critical-path imbalance: its time on the path,
    /// its mean time per thread, and the excess of the one over the other, largest first
    /// (functions without an excess left out; docs/commands/plx-critical-path.md)
    #[arg(long, conflicts_with_all = ["level", "path", "samples"])]
    pub imbalance: bool,
    /// --samples.
    #[command(flatten)]
    pub sampled: SamplesArg,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

/// Everything the outputs show.
struct Report<'a> {
    args: &'a CriticalPathArgs,
    model: &'a Model,
    mode: Mode,
    level: Level,
    app: Option<u32>,
    cp: CriticalPath,
    items: Vec<Item>,
    /// With --samples, per item: what the samples say ran in it.
    sampled: Vec<Option<ItemSamples>>,
}

/// Runs `plx critical-path`.
pub fn critical_path(args: &CriticalPathArgs) -> Result<(), CliError> {
    let (exp, model) =
        crate::experiment::open_traced(&args.exp.dir, args.sampled.samples.is_some())?;
    let several = model.apps.len() > 1;
    let app = crate::experiment::app_index(&model, args.exp.app.name())?;
    let mode = match (args.mode, app) {
        (Some(ModeArg::Global), _) | (None, None) => Mode::Global,
        (Some(ModeArg::Intra), _) | (None, Some(_)) => Mode::Intra,
        (Some(ModeArg::Inter), _) => Mode::Inter,
    };
    if mode != Mode::Global && app.is_none() && several {
        let names: Vec<&str> = model.apps.iter().map(|a| a.name.as_str()).collect();
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "--mode {} needs --app NAME in a session of several applications ({})",
                mode.as_str(),
                names.join(", ")
            ),
        ));
    }
    // one application: intra and inter are the global path (and say so)
    let app = app.or((!several).then_some(0));
    let mode = if several { mode } else { Mode::Global };
    let window = match args.phase.spec() {
        Some(p) => phase_window(&model, p)?,
        None => Window::ALL,
    };
    let opts = MergeOptions::default();
    let cp = CriticalPath::compute(&model, &exp, window, mode, app, opts)?;
    for w in &cp.graph.warnings {
        eprintln!("plx: warning: {w}");
    }
    if let Some(p) = cp.path.as_ref().filter(|p| p.cycles_broken > 0) {
        eprintln!(
            "plx: warning: {} dependence(s) ignored to break cycles in the activity graph (clocks that contradict the order of events)",
            p.cycles_broken
        );
    }
    if cp.path.is_none() {
        return Err(CliError::new(
            Exit::Input,
            format!(
                "{}: no critical path: no traced thread{} has events{}",
                args.exp.dir.display(),
                app.filter(|_| several).map_or(String::new(), |a| format!(
                    " of application {}",
                    model.apps[a as usize].name
                )),
                if args.phase.spec().is_some() {
                    " in the phase"
                } else {
                    " (rerun it with plx run --trace)"
                }
            ),
        ));
    }
    if args.imbalance {
        let mut rows = imbalance(&model, &exp, &cp.graph, &cp.segments, opts)?;
        if let Some(n) = args.top.top {
            rows.truncate(n);
        }
        let mut out = args.out.open()?;
        imbalance_out(&rows, cp.length_ns(), args.out.format, &mut out)?;
        out.finish()?;
        return Ok(());
    }
    let level = match args.level {
        LevelArg::Procedure => Level::Procedure,
        LevelArg::Thread => Level::Thread,
        LevelArg::Process => Level::Process,
        LevelArg::Machine => Level::Machine,
    };
    if args.sampled.samples.is_some() && level != Level::Procedure {
        return Err(CliError::new(
            Exit::Usage,
            "--samples lists the sampled call paths under each function: it needs --level procedure"
                .to_string(),
        ));
    }
    let mut items = profile(&model, &exp, &cp.graph, &cp.segments, level, opts)?;
    if level == Level::Procedure {
        runtime_on_path(&model, &cp, &items);
    }
    if let Some(n) = args.top.top {
        items.truncate(n);
    }
    let sampled = match args.sampled.samples {
        Some(n) => sampled_items(&model, &cp, &items, n, &args.exp.dir)?,
        None => Vec::new(),
    };
    let rep = Report {
        args,
        model: &model,
        mode,
        level,
        app,
        cp,
        items,
        sampled,
    };
    let mut out = args.out.open()?;
    match args.out.format {
        Format::Text => text(&rep, &mut out)?,
        Format::Csv if args.path => path_csv(&rep, &mut out)?,
        Format::Csv => csv(&rep, &mut out)?,
        Format::Json => json(&rep, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

/// Per item, its `top` sampled call paths (--samples); an error when the run has no samples.
fn sampled_items(
    model: &Model,
    cp: &CriticalPath,
    items: &[Item],
    top: usize,
    dir: &std::path::Path,
) -> Result<Vec<Option<ItemSamples>>, CliError> {
    crate::sampled::require(model, dir)?;
    Ok(items
        .iter()
        .map(|i| item_samples(model, &cp.graph, &cp.segments, i, top))
        .collect())
}

/// Warns when the runtime's own regions (`plx_flush`, `plx_symbols`) are more than a few
/// percent of the path (the procedure level's CPU rows name them).
fn runtime_on_path(model: &Model, cp: &CriticalPath, items: &[Item]) {
    let Some(path) = cp.path.as_ref() else {
        return;
    };
    let runtime: Vec<(String, i64)> = items
        .iter()
        .filter(|i| i.kind == ItemKind::Cpu)
        .filter(|i| {
            model
                .regions
                .all()
                .iter()
                .any(|r| r.kind == RegionKind::Runtime && r.name == i.name)
        })
        .map(|i| (i.name.clone(), i.time_ns))
        .collect();
    if let Some(w) = critical_path_warning(path.length_ns, &runtime) {
        eprintln!("plx: warning: {w}");
    }
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// `--imbalance`: per function its time on the path, its mean per thread and the excess.
fn imbalance_out(
    rows: &[Imbalance],
    length_ns: i64,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    let s = |ns: f64| ns / 1e9;
    match format {
        Format::Text => {
            writeln!(
                out,
                "Critical-Path Imbalance (path length {:.6} s)",
                secs(length_ns)
            )?;
            let w = rows
                .iter()
                .map(|r| elide_middle(&r.name, NAME_COLUMN).chars().count())
                .max()
                .unwrap_or(0)
                .max("function".len());
            writeln!(
                out,
                "{:<w$}  {:>12}  {:>12}  {:>12}",
                "function", "path s", "mean s", "imbalance s"
            )?;
            for r in rows {
                writeln!(
                    out,
                    "{:<w$}  {:>12.6}  {:>12.6}  {:>12.6}",
                    elide_middle(&r.name, NAME_COLUMN),
                    secs(r.path_ns),
                    s(r.mean_ns),
                    s(r.imbalance_ns)
                )?;
            }
            Ok(())
        }
        Format::Csv => {
            writeln!(out, "function,path_s,mean_s,imbalance_s")?;
            for r in rows {
                writeln!(
                    out,
                    "{},{:.9},{:.9},{:.9}",
                    field(&r.name),
                    secs(r.path_ns),
                    s(r.mean_ns),
                    s(r.imbalance_ns)
                )?;
            }
            Ok(())
        }
        Format::Json => {
            let v: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({
                        "function": r.name,
                        "path_s": secs(r.path_ns),
                        "mean_s": s(r.mean_ns),
                        "imbalance_s": s(r.imbalance_ns),
                    })
                })
                .collect();
            let doc = json!({"total_length_s": secs(length_ns), "imbalance": v});
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
        }
    }
}

fn percent(rep: &Report, ns: i64) -> f64 {
    let total = rep.cp.length_ns();
    if total > 0 {
        ns as f64 * 100.0 / total as f64
    } else {
        0.0
    }
}

/// `Procedure-level Inter-Application Critical Path (client)`.
fn title(rep: &Report) -> String {
    let level = match rep.level {
        Level::Procedure => "Procedure",
        Level::Thread => "Thread",
        Level::Process => "Process",
        Level::Machine => "Machine",
    };
    let mode = match rep.mode {
        Mode::Intra => "Intra-Application",
        Mode::Inter => "Inter-Application",
        Mode::Global => "Global",
    };
    let app = rep
        .app
        .map(|a| rep.model.apps[a as usize].name.as_str())
        .filter(|n| !n.is_empty() && rep.mode != Mode::Global)
        .map_or(String::new(), |n| format!(" ({n})"));
    format!("{level}-level {mode} Critical Path{app}")
}

/// The text's function (item) column: at most this many characters.
const NAME_COLUMN: usize = 60;

fn loc_text(item: &Item) -> &str {
    item.location.as_deref().unwrap_or("ALL")
}

fn seg_loc(rep: &Report, s: &Segment) -> (String, String) {
    let name = |l: u32| {
        location_name(
            rep.model,
            &rep.cp.graph.locations[l as usize],
            Level::Thread,
        )
    };
    (name(s.location), s.from.map_or(String::new(), name))
}

fn text(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", title(rep))?;
    let total = rep.cp.length_ns();
    let procedure = rep.level == Level::Procedure;
    // a name longer than the column (a C++ template's, hundreds of characters) is elided in
    // its middle: CSV and JSON carry it whole
    let names: Vec<std::borrow::Cow<str>> = rep
        .items
        .iter()
        .map(|i| elide_middle(&i.name, NAME_COLUMN))
        .collect();
    let lw = if procedure {
        rep.items
            .iter()
            .map(|i| loc_text(i).len())
            .max()
            .unwrap_or(3)
            .max("location".len())
    } else {
        0
    };
    let nw = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max("TOTAL LENGTH".len())
        .max("item".len());
    // Left pads: a region name may be longer than `{:<w$}` allows
    if procedure {
        writeln!(
            out,
            "{}  {}  {:>12}  {:>7}",
            Left("location", lw),
            Left("function", nw),
            "time s",
            "%time"
        )?;
        writeln!(
            out,
            "{}  {}  {:>12.6}",
            Left("", lw),
            Left("TOTAL LENGTH", nw),
            secs(total)
        )?;
    } else {
        writeln!(
            out,
            "{}  {:>12}  {:>7}",
            Left("item", nw),
            "time s",
            "%time"
        )?;
        writeln!(out, "{}  {:>12.6}", Left("TOTAL LENGTH", nw), secs(total))?;
    }
    for (k, (i, name)) in rep.items.iter().zip(&names).enumerate() {
        let p = percent(rep, i.time_ns);
        if procedure {
            writeln!(
                out,
                "{}  {}  {:>12.6}  {p:>7.2}",
                Left(loc_text(i), lw),
                Left(name, nw),
                secs(i.time_ns)
            )?;
        } else {
            writeln!(
                out,
                "{}  {:>12.6}  {p:>7.2}",
                Left(name, nw),
                secs(i.time_ns)
            )?;
        }
        if let Some(Some(s)) = rep.sampled.get(k) {
            for sp in &s.paths {
                writeln!(
                    out,
                    "{}  {}  {:>12}  {:>7.2}  {} of {} samples: {}",
                    Left("", lw),
                    Left("", nw),
                    format!("~{:.6}", secs(sp.estimated_ns)),
                    percent(rep, sp.estimated_ns),
                    sp.samples,
                    s.samples,
                    crate::sampled::frames_text(rep.model, sp)
                )?;
            }
            if let Some(rest) = crate::sampled::rest_text(s) {
                writeln!(
                    out,
                    "{}  {}  {:>12}  {:>7.2}  {rest}",
                    Left("", lw),
                    Left("", nw),
                    format!("~{:.6}", secs(s.rest.2)),
                    percent(rep, s.rest.2),
                )?;
            }
        }
    }
    if rep.args.path {
        let origin = rep.cp.graph.origin_ns;
        writeln!(out)?;
        writeln!(
            out,
            "path ({} segments; times in s since the first event):",
            rep.cp.segments.len()
        )?;
        writeln!(
            out,
            "{:>12}  {:>12}  {:>12}  {:<5} location / what",
            "start", "end", "time", "kind"
        )?;
        for s in &rep.cp.segments {
            let (to, from) = seg_loc(rep, s);
            let whence = if from.is_empty() {
                to
            } else {
                format!("{from} -> {to}")
            };
            writeln!(
                out,
                "{:>12.6}  {:>12.6}  {:>12.6}  {:<5} {whence}  {}",
                secs(s.start_ns - origin),
                secs(s.end_ns - origin),
                secs(s.length_ns()),
                s.kind.as_str(),
                s.what
            )?;
        }
    }
    Ok(())
}

fn csv(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    let level = rep.level.as_str();
    writeln!(out, "level,kind,name,location,time_s,percent")?;
    writeln!(
        out,
        "{level},total,TOTAL LENGTH,ALL,{:.9},100.00",
        secs(rep.cp.length_ns())
    )?;
    for (k, i) in rep.items.iter().enumerate() {
        writeln!(
            out,
            "{level},{},{},{},{:.9},{:.2}",
            i.kind.as_str(),
            field(&i.name),
            field(loc_text(i)),
            secs(i.time_ns),
            percent(rep, i.time_ns)
        )?;
        // --samples: a `sampled` row per path below the function, named from the function
        if let Some(Some(s)) = rep.sampled.get(k) {
            for sp in &s.paths {
                writeln!(
                    out,
                    "{level},sampled,{},{},{:.9},{:.2}",
                    field(&format!(
                        "{} => {}",
                        i.name,
                        crate::sampled::frames_text(rep.model, sp)
                    )),
                    field(loc_text(i)),
                    secs(sp.estimated_ns),
                    percent(rep, sp.estimated_ns)
                )?;
            }
        }
    }
    Ok(())
}

fn path_csv(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    let origin = rep.cp.graph.origin_ns;
    writeln!(out, "kind,location,from,start_s,end_s,time_s,what")?;
    for s in &rep.cp.segments {
        let (to, from) = seg_loc(rep, s);
        writeln!(
            out,
            "{},{},{},{:.9},{:.9},{:.9},{}",
            s.kind.as_str(),
            field(&to),
            field(&from),
            secs(s.start_ns - origin),
            secs(s.end_ns - origin),
            secs(s.length_ns()),
            field(&s.what)
        )?;
    }
    Ok(())
}

fn json(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    let origin = rep.cp.graph.origin_ns;
    let items: Vec<Value> = rep
        .items
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let mut v = json!({
                "kind": i.kind.as_str(),
                "name": i.name,
                "location": loc_text(i),
                "time_s": secs(i.time_ns),
                "percent": percent(rep, i.time_ns),
            });
            if let Some(Some(s)) = rep.sampled.get(k) {
                v["samples"] = crate::sampled::json(rep.model, s);
            }
            v
        })
        .collect();
    let path = rep.cp.path.as_ref();
    let mut doc = json!({
        "title": title(rep),
        "level": rep.level.as_str(),
        "mode": rep.mode.as_str(),
        "app": rep.app.map(|a| rep.model.apps[a as usize].name.clone()).filter(|n| !n.is_empty()),
        "phase": rep.args.phase.spec().map(|p| p.to_string()),
        "total_length_s": secs(rep.cp.length_ns()),
        // an application's own span for its path (intra, inter), the whole run's otherwise
        "elapsed_s": secs(match (rep.app, rep.mode) {
            (Some(a), Mode::Intra | Mode::Inter) => rep.cp.graph.app_elapsed_ns(a),
            _ => rep.cp.graph.elapsed_ns(),
        }),
        "items": items,
        "graph": {
            "events": rep.cp.graph.events,
            "nodes": rep.cp.graph.nodes.len(),
            "path_arcs": path.map_or(0, |p| p.arcs.len()),
            "cycles_broken": path.map_or(0, |p| p.cycles_broken),
        },
    });
    if rep.args.path {
        let segs: Vec<Value> = rep
            .cp
            .segments
            .iter()
            .map(|s| {
                let (to, from) = seg_loc(rep, s);
                json!({
                    "kind": s.kind.as_str(),
                    "location": to,
                    "from": (!from.is_empty()).then_some(from),
                    "start_s": secs(s.start_ns - origin),
                    "end_s": secs(s.end_ns - origin),
                    "time_s": secs(s.length_ns()),
                    "what": s.what,
                })
            })
            .collect();
        doc["path"] = Value::Array(segs);
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
