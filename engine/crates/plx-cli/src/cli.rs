//! The command line, declared once with clap derive (help text comes from these doc comments).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

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
    Run(RunArgs),
    /// Print profiles of an experiment: flat, callpath or call graph.
    Report(ReportArgs),
    /// Describe what an experiment holds and what is damaged or missing.
    Info(InfoArgs),
    /// MPI communication matrix (messages and bytes per sender and receiver), or with --fit
    /// latency and bandwidth per pair.
    Comm(CommArgs),
    /// The resource hierarchies: Code (module, file, function), Machine (host, process,
    /// thread) and Sync (messages; mutexes, condition variables, ... and their objects).
    Hierarchy(HierarchyArgs),
    /// A metric (wall_time, cpu_time, calls, wait_time, hold_time, messages, bytes) for a
    /// focus (a node of each hierarchy): the total and, with a trace, a time series.
    Query(QueryArgs),
    /// Write the experiment in another tool's format: the merged trace (one clock, the clock
    /// condition repaired) or the profiles.
    Export(ExportArgs),
    /// Add external time series to an experiment: the columns of a CSV file, aligned to the
    /// experiment's time base.
    Import(ImportArgs),
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
}

/// `plx run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The flags setting PLX_* variables, from the runtime's option table
    /// (runtime/src/core/options.def): -o/--output, --trace, --filter, --buffer, --clock, ...
    #[command(flatten)]
    pub settings: crate::options::RunSettings,
    /// Measure into session DIR (several applications in one session): the experiment goes to
    /// DIR/APP and DIR/session.txt lists it.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub session: Option<PathBuf>,
    /// Add this run to an experiment directory that holds an earlier one (by default plx run
    /// refuses: two runs in one directory read as one experiment). The processes of one MPI
    /// job, each under its own plx run, share the directory without it.
    #[arg(long, conflicts_with = "session")]
    pub append: bool,
    /// Replace the run an experiment directory holds: everything in it is removed first. Only
    /// a directory plx run made (it holds .plx-run) is replaced.
    #[arg(long, conflicts_with_all = ["session", "append"])]
    pub force: bool,
    /// The application's name in the session [default: the program's name]; needs --session.
    #[arg(long, value_name = "NAME", requires = "session")]
    pub app: Option<String>,
    /// Sample the system while the program runs: a comma-separated list of cpu (utilisation
    /// per core and in total, %), mem (memory in use), net (bytes received and sent), disk
    /// (bytes read and written), from /proc, into DIR/metrics.monitor.HOST.plx (one monitor
    /// per host under an MPI launcher).
    #[arg(long, value_name = "LIST", value_parser = crate::monitor::parse_sources)]
    pub monitor: Option<crate::monitor::Sources>,
    /// The monitor's period in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 100, requires = "monitor",
          value_parser = clap::value_parser!(u32).range(1..=3_600_000))]
    pub monitor_period: u32,
    /// The program and its arguments (after `--`), passed on byte for byte.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD",
          value_parser = clap::value_parser!(std::ffi::OsString))]
    pub command: Vec<std::ffi::OsString>,
}

/// Grouping of `plx report` tables.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// One table per thread, then the total.
    Thread,
    /// One table per process, then the total.
    Process,
}

/// Output format.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned tables for people.
    Text,
    /// One JSON object.
    Json,
    /// Comma-separated rows, a header first (the columns are on each command's page).
    Csv,
}

/// `plx report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Group by thread or process.
    #[arg(long, value_enum, default_value_t = By::Thread)]
    pub by: By,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// A phase: a span of the run's time, the phase region NAME's (from its first begin to its
    /// last end, any thread) or START:END (seconds from the trace's first event, either end may
    /// be empty); the profiles are rebuilt from the trace for it — time inside it, calls begun
    /// inside it, in every thread (docs/phases.md).
    #[arg(long, value_name = "NAME|START:END")]
    pub phase: Option<plx_analysis::PhaseSpec>,
    /// One application of a session (its logical view); without it every process of every
    /// application (the physical view).
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// Synchronization objects (mutexes, rwlocks, condition variables, barriers, semaphores,
    /// spin locks, joined threads) sorted by wait time, instead of the profile.
    #[arg(long)]
    pub sync: bool,
    /// Counters instead of the profile: each thread's totals (`plx run --counters`) and the
    /// counted functions of the filter's `counters` contexts (inclusive, exclusive, and the
    /// estimate of a multiplexed set), per configuration; --callpath splits them by callpath.
    #[arg(long, conflicts_with_all = ["sync", "gprof"])]
    pub counters: bool,
}

/// Rows and columns of `plx comm`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommBy {
    /// One per rank, from the message statistics of the profiles.
    Rank,
    /// One per thread, `rank.thread`, from the trace's matched messages (needs --trace).
    Thread,
}

/// `plx comm`.
#[derive(clap::Args, Debug)]
pub struct CommArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Only application NAME of a session (its logical view) [default: every application].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// Rows and columns per rank, or per thread (needs a trace).
    #[arg(long, value_enum, default_value_t = CommBy::Rank)]
    pub by: CommBy,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Start-up latency, asymptotic bandwidth and time per byte per sender/receiver pair,
    /// fitted to the trace's matched messages (needs a trace).
    #[arg(long)]
    pub fit: bool,
    /// Only messages sent inside a phase: a phase region's name (from its first enter to its
    /// last exit) or START:END in seconds from the trace's first event (needs a trace).
    #[arg(long, value_name = "P")]
    pub phase: Option<plx_analysis::PhaseSpec>,
}

/// `plx hierarchy`.
#[derive(clap::Args, Debug)]
pub struct HierarchyArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Only application NAME of a session (its logical view) [default: every application].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `plx import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// The CSV file: a header line naming the columns, then one line per sample; every column
    /// but the time column becomes a metric.
    #[arg(long, value_name = "FILE")]
    pub csv: PathBuf,
    /// The column holding each sample's time.
    #[arg(long, value_name = "NAME")]
    pub time_column: String,
    /// The time column's unit.
    #[arg(long, value_enum, default_value_t = TimeUnit::S)]
    pub time_unit: TimeUnit,
    /// What the times count from: first-event (the experiment's first traced event, the origin
    /// of plx query and plx histogram), unix (the Unix epoch, e.g. a logger's timestamps) or
    /// monotonic (CLOCK_MONOTONIC of the host the experiment ran on).
    #[arg(long, value_enum, default_value_t = TimeOrigin::FirstEvent)]
    pub time_origin: TimeOrigin,
}

/// `plx import --time-unit`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

/// `plx import --time-origin`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOrigin {
    /// The experiment's first traced event.
    FirstEvent,
    /// The Unix epoch.
    Unix,
    /// CLOCK_MONOTONIC of the experiment's host.
    Monotonic,
}

/// `plx query`.
#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Only application NAME of a session (its logical view) [default: every application].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// wall_time, cpu_time, calls, wait_time, hold_time, messages or bytes.
    #[arg(long, value_name = "METRIC")]
    pub metric: String,
    /// `code=/MODULE/FILE/FUNCTION,machine=/HOST/PROCESS/THREAD,sync=/CATEGORY/OBJECT`; an
    /// omitted hierarchy is its root (see docs/commands/plx-query.md).
    #[arg(long, value_name = "FOCUS")]
    pub focus: Option<String>,
    /// Bins of the time series (with a trace).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub bins: usize,
    /// Only a phase: a phase region's name (from its first enter to its last exit) or
    /// START:END in seconds from the trace's first event; the total then comes from the trace.
    #[arg(long, value_name = "P")]
    pub phase: Option<plx_analysis::PhaseSpec>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `plx info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Only application NAME of a session (its logical view) [default: every application].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
}

/// `--format` of `plx export`: the exporters' names, each with its one-line description.
fn export_formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        plx_export::FORMATS
            .iter()
            .map(|f| clap::builder::PossibleValue::new(f.name()).help(f.about())),
    )
}

/// `plx export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Only application NAME of a session (its logical view) [default: every application].
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// Output format.
    #[arg(long, value_name = "FORMAT", value_parser = export_formats())]
    pub format: String,
    /// Output file (`-`: standard output), or directory for the tau format.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Minimum latency a repaired message gets, in ns [default: the smallest transfer time
    /// observed, at most 1000].
    #[arg(long, value_name = "NS")]
    pub min_latency: Option<u64>,
    /// Leave receives that come before their send as they are (times only ClockOffset-corrected).
    #[arg(long)]
    pub no_clock_repair: bool,
    /// Write the tables as a dataset partitioned by KEY, hive-style (`events/rank=N/part-0.parquet`):
    /// `rank` (parquet format, MPI experiments).
    #[arg(long, value_name = "KEY", value_parser = ["rank"])]
    pub partition: Option<String>,
}
