//! `plx view`: opens an experiment or session, indexes its trace and serves the web viewer on a
//! local address with a random token.

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
            let n = |k: usize, one: &str, many: &str| {
                format!("{k} {}", if k == 1 { one } else { many })
            };
            let built = format!(
                "index built from {} of {}",
                n(used.threads, "thread", "threads"),
                n(used.processes, "process", "processes")
            );
            match used.merged {
                0 => built,
                m => format!(
                    "{built}; {} merged: a region or user event without a definition",
                    n(m, "process", "processes")
                ),
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
