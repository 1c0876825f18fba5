//! `plx`: the Parallax command line (run, report, info, comm, export, hierarchy, query,
//! critical-path, compare, histogram, display, session, view).

mod attach;
mod chart;
mod cli;
mod comm;
mod compare;
mod critical_path;
mod csv;
mod ctl;
mod display;
mod experiment;
mod export;
mod filter;
mod hierarchy;
mod histogram;
mod histogram_counters;
mod histogram_external;
mod import;
mod info;
mod job;
mod monitor;
mod mpi_detect;
mod options;
mod preflight;
mod query;
mod report;
mod run;
mod session;
mod signals;
mod source_files;
mod units;
mod view;
mod waits;

use clap::Parser;

/// An error that ends plx with a message and an exit status.
#[derive(Debug)]
pub struct CliError {
    /// Exit status.
    pub code: i32,
    /// Message after `plx: `.
    pub message: String,
}

impl CliError {
    /// An error with a status and message.
    pub fn new(code: i32, message: String) -> Self {
        CliError { code, message }
    }
}

impl From<plx_analysis::AnalysisError> for CliError {
    fn from(e: plx_analysis::AnalysisError) -> Self {
        CliError::new(2, e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        // A closed pipe (`plx report | head`) ends output quietly.
        let code = if e.kind() == std::io::ErrorKind::BrokenPipe {
            0
        } else {
            1
        };
        CliError::new(code, e.to_string())
    }
}

fn main() {
    let cli = cli::Cli::parse();
    if let Some(n) = cli.jobs {
        // the first use of the global pool would make it with the default size
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.into())
            .build_global()
            .expect("the pool is made once, before any parallel work");
    }
    let result = match cli.command {
        cli::Command::Run(a) => run::run(a),
        cli::Command::Report(a) => report::report(&a).map(|()| 0),
        cli::Command::Info(a) => info::info(&a).map(|()| 0),
        cli::Command::Comm(a) => comm::comm(&a).map(|()| 0),
        cli::Command::Export(a) => export::export(&a).map(|()| 0),
        cli::Command::Import(a) => import::import(&a).map(|()| 0),
        cli::Command::Hierarchy(a) => hierarchy::hierarchy(&a).map(|()| 0),
        cli::Command::Query(a) => query::query(&a).map(|()| 0),
        cli::Command::CriticalPath(a) => critical_path::critical_path(&a).map(|()| 0),
        cli::Command::Compare(a) => compare::compare(&a).map(|()| 0),
        cli::Command::Histogram(a) => histogram::histogram(&a).map(|()| 0),
        cli::Command::Display(a) => display::display(&a).map(|()| 0),
        cli::Command::Session(a) => session::session(&a).map(|()| 0),
        cli::Command::View(a) => view::view(&a).map(|()| 0),
        cli::Command::Attach(a) => attach::attach(&a),
        cli::Command::Detach(a) => attach::detach(&a),
        cli::Command::Ctl(a) => ctl::ctl(&a),
        cli::Command::Waits(a) => waits::waits(&a).map(|()| 0),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) if e.code == 0 => {}
        Err(e) => {
            eprintln!("plx: {}", e.message);
            std::process::exit(e.code);
        }
    }
}
