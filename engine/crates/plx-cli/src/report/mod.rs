//! `plx report`: builds the model, groups it into tables and prints them as text, CSV or JSON.
//! One file per part of the report (the profiles, the gprof call graph, the MPI sections,
//! synchronization objects, counters), each writing its formats.

mod counters;
mod gprof;
mod mpi;
mod profile_csv;
mod profile_json;
mod profile_text;
mod sync;

use std::io::{self, Write};

use plx_analysis::{
    phase_window, BuildOptions, CallTree, GroupBy, Model, PhaseSpec, ProcessModel, Table,
};

use crate::args::{ByArg, ByChoice, ExperimentArgs, Format, OutputArgs, PhaseArg};
use crate::{CliError, Exit};

/// `--by` of `plx report`: one table per ...
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// One table per thread, then the total.
    Thread,
    /// One table per process (an MPI rank; `rank` is taken for it too), then the total.
    #[value(alias = "rank")]
    Process,
}

impl ByChoice for By {
    const DEFAULT: &'static str = "thread";
}

/// `plx report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase: the profiles are rebuilt from the trace for the phase's span: time inside it,
    /// calls begun inside it, in every thread.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// --by: one table per thread or per process.
    #[command(flatten)]
    pub by: ByArg<By>,
    /// Rows are callpaths instead of functions.
    #[arg(long, conflicts_with = "gprof")]
    pub callpath: bool,
    /// With --callpath: each row names its callpath node's id, its parent's id (none for a
    /// root) and its own function instead of the whole path, so the output grows linearly
    /// with the call depth. Ids are per table; a parent's id is smaller than its children's.
    #[arg(long, requires = "callpath", conflicts_with = "counters")]
    pub tree: bool,
    /// gprof-style call graph (text and json).
    #[arg(long)]
    pub gprof: bool,
    /// Synchronization objects (mutexes, rwlocks, condition variables, barriers, semaphores,
    /// spin locks, joined threads) sorted by wait time, instead of the profile.
    #[arg(long)]
    pub sync: bool,
    /// Counters instead of the profile: each thread's totals (`plx run --counters`) and the
    /// counted functions of the filter's `counters` contexts (inclusive, exclusive, and the
    /// estimate of a multiplexed set), per configuration; --callpath splits them by callpath.
    #[arg(long, conflicts_with_all = ["sync", "gprof"])]
    pub counters: bool,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

/// What every output format needs.
pub struct Report<'a> {
    /// The model.
    pub model: &'a Model,
    /// Per-location tables.
    pub tables: Vec<Table>,
    /// The total over everything.
    pub total: Table,
    /// The options.
    pub args: &'a ReportArgs,
    /// The MPI sections, when the experiment has MPI data.
    pub mpi: Option<mpi::MpiReport>,
}

impl Report<'_> {
    /// The table's heading: its location's long name ([`location_heading`]), or `total`.
    pub fn label(&self, t: &Table) -> String {
        location_heading(self.model, t.process, t.thread)
    }

    /// The thread's name, or empty.
    pub fn thread_name(&self, t: &Table) -> &str {
        match (t.process, t.thread) {
            (Some(pi), Some(th)) => self.model.processes[pi]
                .threads
                .iter()
                .find(|x| x.thread == th)
                .map_or("", |x| x.name.as_str()),
            _ => "",
        }
    }

    /// Region name.
    pub fn name(&self, r: u32) -> &str {
        self.model.regions.name(r)
    }

    /// The names of node `node`'s callpath joined by ` => `.
    pub fn path_text(&self, tree: &CallTree, node: u32) -> String {
        let mut text = String::new();
        tree.for_each_in_path(node, |r| {
            if !text.is_empty() {
                text.push_str(" => ");
            }
            text.push_str(self.name(r));
        });
        text
    }

    /// [`Report::path_text`] written to `out` as it is walked (nothing the length of the path
    /// is built).
    pub fn write_path(&self, tree: &CallTree, node: u32, out: &mut dyn Write) -> io::Result<()> {
        let mut first = true;
        let mut result = Ok(());
        tree.for_each_in_path(node, |r| {
            if result.is_ok() {
                let sep: &[u8] = if first { b"" } else { b" => " };
                first = false;
                result = out
                    .write_all(sep)
                    .and_then(|_| out.write_all(self.name(r).as_bytes()));
            }
        });
        result
    }
}

/// A table's heading: the long name of process `pi` or of its thread `thread`
/// ([`plx_analysis::location_name::Who::long`]: `0.1 "worker" (pid 1234 on node1)`), or
/// `total (all processes, all threads)`.
pub fn location_heading(model: &Model, pi: Option<usize>, thread: Option<u32>) -> String {
    let Some(pi) = pi else {
        return "total (all processes, all threads)".to_string();
    };
    let p = &model.processes[pi];
    let name = |th: u32| {
        p.threads
            .iter()
            .find(|x| x.thread == th)
            .map_or("", |x| x.name.as_str())
    };
    plx_analysis::location_name::Who::process(model, p).long(thread.map(|th| (th, name(th))))
}

/// `1234`, or `1234.2` for the second exec image.
pub fn pid_text(p: &plx_analysis::ProcessModel) -> String {
    p.pid_text()
}

/// The model of `dir` as the options select it: one application (`--app`), and with `--phase`
/// rebuilt from the trace for the phase's span (docs/phases.md).
pub fn open_model(
    dir: &std::path::Path,
    app: Option<&str>,
    phase: Option<&PhaseSpec>,
    opts: BuildOptions,
) -> Result<Model, CliError> {
    let model = crate::experiment::open_app(dir, app, opts)?;
    let Some(spec) = phase else {
        return Ok(model);
    };
    if let PhaseSpec::Named(n) = spec {
        model.phase(n)?;
    }
    if !model.processes.iter().any(ProcessModel::has_trace) {
        return Err(CliError::new(
            Exit::Input,
            format!(
                "{}: --phase {spec} rebuilds the profiles from the trace, and there is \
                 none: rerun with `plx run --trace`",
                dir.display()
            ),
        ));
    }
    let window = phase_window(&model, spec)?;
    Ok(model.windowed(window)?)
}

/// Runs `plx report`.
pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    let model = open_model(
        &args.exp.dir,
        args.exp.app.name(),
        args.phase.spec(),
        BuildOptions::default(),
    )?;
    let by = match args.by.by {
        By::Thread => GroupBy::Thread,
        By::Process => GroupBy::Process,
    };
    if args.gprof && args.out.format == Format::Csv {
        return Err(CliError::new(
            Exit::Usage,
            "--gprof prints text or json, not csv".to_string(),
        ));
    }
    if args.counters {
        let mut out = args.out.open()?;
        if !counters::write(&model, args.out.format, args.callpath, &mut out)? {
            return Err(CliError::new(
                Exit::Input,
                format!(
                    "{}: no counters were measured: rerun with `plx run --counters EVENTS` or \
                     `counters` rules in the filter file (docs/counters.md)",
                    args.exp.dir.display()
                ),
            ));
        }
        out.finish()?;
        return Ok(());
    }
    if args.sync {
        if args.gprof || args.callpath {
            return Err(CliError::new(
                Exit::Usage,
                "--sync lists synchronization objects: it takes no --gprof or --callpath"
                    .to_string(),
            ));
        }
        crate::experiment::print_warnings(model.report_warnings());
        let mut out = args.out.open()?;
        sync::write(&model, by, args.out.format, &mut out)?;
        out.finish()?;
        return Ok(());
    }
    let (tables, total) = model.tables(by);
    let mpi = mpi::MpiReport::new(&model, &tables, by == GroupBy::Thread);
    let rep = Report {
        model: &model,
        tables,
        total,
        args,
        mpi,
    };
    crate::experiment::print_warnings(model.report_warnings());
    let mut out = args.out.open()?;
    match (args.out.format, args.gprof) {
        (Format::Text, true) => gprof::write(&rep, &mut out)?,
        (Format::Text, false) => profile_text::write(&rep, &mut out)?,
        (Format::Csv, _) => profile_csv::write(&rep, &mut out)?,
        (Format::Json, _) => profile_json::write(&rep, &mut out)?,
    }
    out.finish()?;
    Ok(())
}
