//! `plx view`: opens an experiment or session, indexes its trace and serves the web viewer on a
//! local address with a random token.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;

use plx_view::api::{IndexSource, Viewer};
use plx_view::server::{bundle, Server, ServerOptions};
use plx_view::store::Unusable;

use crate::args::ExperimentArgs;
use crate::{CliError, Exit};

/// `plx view`.
#[derive(clap::Args, Debug)]
pub struct ViewArgs {
    /// The experiment or session (traced: plx run --trace) and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// Port to listen on [default: a free one].
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Address to listen on; anything but 127.0.0.1 lets other machines in (with the token).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,
    /// Open the page in the browser ($BROWSER, else xdg-open) through a one-time URL without
    /// the token (valid once, for 30 s), which sets it as a cookie.
    #[arg(long)]
    pub open: bool,
}

/// Runs `plx view` (until interrupted).
pub fn view(args: &ViewArgs) -> Result<(), CliError> {
    if bundle().is_none() {
        return Err(CliError::new(
            Exit::Environment,
            "this plx was built without the viewer's bundle (viewer/dist/viewer.js): build it \
             with `make`, or set PLX_VIEWER_BUNDLE to a built viewer.js when running cargo"
                .to_string(),
        ));
    }
    let started = std::time::Instant::now();
    let viewer = Viewer::open(&args.exp.dir, args.exp.app.name())?;
    for w in viewer.warnings() {
        eprintln!("plx: warning: {w}");
    }
    let how = match &viewer.source {
        IndexSource::Stored(p) => format!("index read from {}", p.display()),
        IndexSource::Parts(used) => {
            for (path, why) in &used.built {
                if !matches!(why, Unusable::Missing) {
                    eprintln!("plx: note: index part {}: {why}; rebuilt", path.display());
                }
            }
            for (path, why) in &used.unsaved {
                eprintln!(
                    "plx: warning: cannot write the index part {}: {why} (the next open builds \
                     it again)",
                    path.display()
                );
            }
            let parts = used.read + used.built.len();
            match (used.read, used.built.len()) {
                (_, 0) => format!("index combined from {parts} process parts read"),
                (0, b) => format!("index combined from {b} process parts built"),
                (r, b) => format!("index combined from {parts} process parts: {r} read, {b} built"),
            }
        }
        IndexSource::Built {
            path,
            unusable,
            merged,
            unsaved,
        } => {
            if !matches!(unusable, Unusable::Missing) {
                eprintln!("plx: note: index {}: {unusable}; rebuilt", path.display());
            }
            if let Some(why) = merged {
                eprintln!("plx: note: the process parts cannot be combined ({why}): merge pass");
            }
            match unsaved {
                None => format!("index built and written to {}", path.display()),
                Some(why) => {
                    eprintln!(
                        "plx: warning: cannot write the index {}: {why} (the next open builds it \
                         again)",
                        path.display()
                    );
                    "index built".to_string()
                }
            }
        }
    };
    let mut server = Server::bind(&ServerOptions {
        bind: args.bind.clone(),
        port: args.port.unwrap_or(0),
    })
    .map_err(|e| CliError::new(Exit::Io, e.to_string()))?;
    eprintln!(
        "plx: {}: {} events on {} tracks opened in {:.2} s ({how}); Ctrl-C stops the server",
        args.exp.dir.display(),
        viewer.index.events,
        viewer.index.tracks.len(),
        started.elapsed().as_secs_f64()
    );
    let url = server.url();
    println!("{url}");
    use std::io::Write;
    std::io::stdout().flush()?;
    if args.open {
        // not the token: a command line is readable by every local user (ps); the one-time
        // address gives the browser the token as a cookie instead
        let once = server
            .one_time_url()
            .map_err(|e| CliError::new(Exit::Io, e.to_string()))?;
        let browser = std::env::var("BROWSER").unwrap_or_else(|_| "xdg-open".to_string());
        if let Err(e) = std::process::Command::new(&browser).arg(&once).spawn() {
            eprintln!("plx: warning: cannot start {browser}: {e}; open the URL yourself");
        }
    }
    server.serve(&viewer);
    Ok(())
}

/// After `plx run`'s program has ended: builds the viewer's index parts of the processes it
/// started (the process directories new since `before` whose process is `child` or descends
/// from it through other new ones, and that have a trace), so that `plx view` combines them
/// instead of merging the whole trace. Each `plx run` of an MPI job (`mpirun plx run -- ...`)
/// does its own rank's, so no run needs to know it is the last. Off with `PLX_VIEW_INDEX=0`;
/// when it took more than [`INDEX_NOTE_AFTER`], one note on standard error says so.
/// Failures are warnings: `plx view` builds a missing part itself.
pub fn index_run(dir: &Path, before: &std::collections::BTreeSet<OsString>, child: u32) {
    if std::env::var("PLX_VIEW_INDEX").is_ok_and(|v| v.trim() == "0") {
        return;
    }
    // (host, pid) → (ppid, traced) of each new process directory
    let mut new: BTreeMap<(String, u32), (u32, bool)> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if before.contains(&name) {
            continue;
        }
        let name = name.to_string_lossy();
        let Some((host, pid)) = name
            .rsplit_once('.')
            .and_then(|(h, p)| Some((h.to_string(), p.parse::<u32>().ok()?)))
        else {
            continue;
        };
        let pdir = e.path();
        let traced = std::fs::read_dir(&pdir).is_ok_and(|fs| {
            fs.flatten()
                .any(|f| f.file_name().to_string_lossy().starts_with("trace"))
        });
        let data = plx_format::ProcessData::read(&pdir.join("process.plx"), &mut Vec::new());
        let ppid = data.info.map_or(0, |i| i.ppid);
        new.insert((host, pid), (ppid, traced));
    }
    // the child's host is the one of its own directory
    let Some(host) = new
        .keys()
        .find(|(_, pid)| *pid == child)
        .map(|(h, _)| h.clone())
    else {
        return;
    };
    let mut mine: BTreeSet<u32> = BTreeSet::from([child]);
    loop {
        let more: Vec<u32> = new
            .iter()
            .filter(|((h, pid), (ppid, _))| {
                *h == host && !mine.contains(pid) && mine.contains(ppid)
            })
            .map(|((_, pid), _)| *pid)
            .collect();
        if more.is_empty() {
            break;
        }
        mine.extend(more);
    }
    let traced = |h: &str, pid: u32| {
        h == host && mine.contains(&pid) && new.get(&(h.to_string(), pid)).is_some_and(|&(_, t)| t)
    };
    if !new.keys().any(|(h, pid)| traced(h, *pid)) {
        return;
    }
    let started = std::time::Instant::now();
    match plx_view::part::prebuild(dir, traced) {
        Ok(done) => {
            for f in done.failed {
                eprintln!("plx: warning: viewer index part not written: {f} (plx view builds it)");
            }
            if let Some(note) = index_note(done.written.len(), started.elapsed()) {
                eprintln!("{note}");
            }
        }
        Err(e) => eprintln!("plx: warning: viewer index not built: {e} (plx view builds it)"),
    }
}

/// How long the end-of-run indexing may take before `plx run` says what it cost.
const INDEX_NOTE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// What `plx run` says after indexing `parts` process parts in `took`: nothing when it was
/// quick (the output of short runs stays as it was), else its cost and how to turn it off.
fn index_note(parts: usize, took: std::time::Duration) -> Option<String> {
    (parts > 0 && took > INDEX_NOTE_AFTER).then(|| {
        format!(
            "plx: note: the viewer's index of {parts} process{} took {:.2} s after the program \
             ended (PLX_VIEW_INDEX=0 skips it; plx view then builds it at its first open)",
            if parts == 1 { "" } else { "es" },
            took.as_secs_f64()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn index_note_only_after_a_second() {
        assert_eq!(index_note(1, Duration::from_millis(1000)), None);
        assert_eq!(index_note(0, Duration::from_secs(5)), None);
        assert_eq!(
            index_note(1, Duration::from_millis(2340)).as_deref(),
            Some(
                "plx: note: the viewer's index of 1 process took 2.34 s after the program ended \
                 (PLX_VIEW_INDEX=0 skips it; plx view then builds it at its first open)"
            )
        );
        assert!(index_note(3, Duration::from_millis(1001))
            .is_some_and(|n| n.contains("of 3 processes took 1.00 s")));
    }
}
