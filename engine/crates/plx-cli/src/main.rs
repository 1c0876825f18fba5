//! `plx`: the Parallax command line (run, report, info, comm, export, hierarchy, query,
//! critical-path, compare, histogram, display, session, view).

mod args;
mod attach;
mod chart;
mod cli;
mod comm;
mod compare;
mod critical_path;
mod csv;
mod ctl;
mod display;
mod error;
mod experiment;
mod export;
mod filter;
mod generate;
mod hierarchy;
mod histogram;
mod import;
mod info;
mod info_data;
mod job;
mod monitor;
mod mpi_detect;
mod options;
mod par_mpi;
mod preflight;
mod query;
mod report;
mod run;
mod sampled;
mod session;
mod signals;
mod source_files;
mod units;
mod view;
mod waits;

use clap::Parser;

pub use error::{CliError, Exit};

fn main() {
    let cli = cli::Cli::parse();
    if let Some(n) = cli.jobs {
        // the first use of the global pool would make it with the default size
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.into())
            .build_global()
            .expect("the pool is made once, before any parallel work");
    }
    // a file size limit (ulimit -f) makes a write fail (EFBIG), an error that names the file
    // and leaves no partial output, instead of SIGXFSZ killing plx midway; plx run keeps the
    // disposition it was started with, for the program (run.rs)
    if !matches!(cli.command, cli::Command::Run(_)) {
        // SAFETY: setting one signal's disposition to SIG_IGN has no memory-safety preconditions.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
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
        cli::Command::Generate(a) => generate::generate(&a).map(|()| 0),
    };
    match result {
        Ok(code) => par_mpi::end(code),
        Err(e) if e.code == 0 => par_mpi::end(0),
        Err(e) => {
            eprintln!("plx: {}", e.message);
            par_mpi::end(e.code);
        }
    }
}
