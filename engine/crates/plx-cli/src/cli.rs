//! The command line, declared once with clap derive (help text comes from these doc comments).

use clap::{Parser, Subcommand};

/// Parallax: measure parallel programs and analyse the experiments they leave.
#[derive(Parser, Debug)]
#[command(name = "plx", version, about)]
pub struct Cli {
    /// Threads the engine reads, decodes and analyses with [default: RAYON_NUM_THREADS, else
    /// one per core]; the output does not depend on it.
    #[arg(short = 'j', long, global = true, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a program measured (LD_PRELOAD of libplx.so) and write an experiment directory.
    Run(crate::run::RunArgs),
    /// Print profiles of an experiment: flat, callpath or call graph.
    Report(crate::report::ReportArgs),
    /// Describe what an experiment holds and what is damaged or missing.
    Info(crate::info::InfoArgs),
    /// MPI communication matrix (messages and bytes per sender and receiver), or with --fit
    /// latency and bandwidth per pair.
    Comm(crate::comm::CommArgs),
    /// The resource hierarchies: Code (module, file, function), Machine (host, process,
    /// thread) and Sync (messages; mutexes, condition variables, ... and their objects).
    Hierarchy(crate::hierarchy::HierarchyArgs),
    /// A metric (wall_time, cpu_time, calls, wait_time, hold_time, messages, bytes) for a
    /// focus (a node of each hierarchy): the total and, with a trace, a time series.
    Query(crate::query::QueryArgs),
    /// Write the experiment in another tool's format: the merged trace (one clock, the clock
    /// condition repaired) or the profiles.
    Export(crate::export::ExportArgs),
    /// Add external time series to an experiment: the columns of a CSV file, aligned to the
    /// experiment's time base.
    Import(crate::import::ImportArgs),
    /// The critical path through the program activity graph built from the trace: its length
    /// and the profile of the procedures, threads, processes or machines on it.
    CriticalPath(crate::critical_path::CriticalPathArgs),
    /// Compare runs: IPS-2's metric table (one column per experiment or application) and the
    /// per-function differences.
    Compare(crate::compare::CompareArgs),
    /// A metric over time in N bins (time histogram), per location or in total, for one run or
    /// several overlaid; text, CSV or SVG.
    Histogram(crate::histogram::HistogramArgs),
    /// The processor and communication displays: utilization summary and Gantt chart,
    /// concurrency profile, message queue length, space-time diagram; text, CSV or SVG.
    Display(crate::display::DisplayArgs),
    /// Sessions of several applications: list them, or add an older experiment in comparison
    /// mode.
    Session(crate::session::SessionArgs),
    /// The web viewer: serve an experiment's timeline, profiles, communication matrix and
    /// displays on a local address (with a random token) for a browser.
    View(crate::view::ViewArgs),
    /// Measure a process that is already running (ptrace loads the runtime into it; --probe
    /// names what to measure) until Ctrl-C, `plx detach PID`, --duration or its end.
    Attach(crate::attach::AttachArgs),
    /// Stop the `plx attach` of a process: every probe removed, the process left running.
    Detach(crate::attach::DetachArgs),
    /// Control a measured process while it runs: insert or remove probed functions, list what
    /// is probed, or reload its filter file's `counters` rules.
    Ctl(crate::ctl::CtlArgs),
    /// Wait states (late sender, wait at barrier, lock contention, ...) per location and call
    /// path, as a metric tree, and with --causes the delays that caused them.
    Waits(crate::waits::WaitsArgs),
    /// Write the man pages and the shell completions into DIR (for `make`).
    #[command(hide = true)]
    Generate(crate::generate::GenerateArgs),
}
