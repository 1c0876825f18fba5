//! What `plx histogram` and `plx display` share: the output format and options, reading one
//! run's timeline, the output stream, and the small text and CSV helpers.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use plx_analysis::timeline::{find_function, Timeline, TimelineOptions};
use plx_analysis::{phase_window, AnalysisError, BuildOptions, Model, PhaseSpec, Window};
use plx_format::Experiment;

use crate::{CliError, Exit};

/// Output of `plx histogram` and `plx display`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartFormat {
    /// Tables for people, with small ASCII bars.
    Text,
    /// Comma-separated rows.
    Csv,
    /// An SVG chart.
    Svg,
}

/// The options `plx histogram` and `plx display` share.
#[derive(clap::Args, Debug)]
pub struct ChartOpts {
    /// Only this phase: a phase region's name, or START:END in seconds from the first event.
    #[arg(long, value_name = "P")]
    pub phase: Option<String>,
    /// Only this application of a session.
    #[arg(long, value_name = "A")]
    pub app: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ChartFormat::Text)]
    pub format: ChartFormat,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// One experiment read and passed over once.
pub(crate) struct Run {
    pub name: String,
    pub exp: Experiment,
    pub model: Model,
    pub timeline: Timeline,
    pub window: Window,
}

/// The most bins a histogram or display takes (a bin per pixel of a wide chart and more).
pub(crate) const MAX_BINS: usize = 100_000;

/// `--bins N` must be at least 1 and at most [`MAX_BINS`].
pub(crate) fn check_bins(bins: usize) -> Result<(), CliError> {
    if bins == 0 {
        return Err(CliError::new(
            Exit::Usage,
            "--bins 0: give at least 1 bin".to_string(),
        ));
    }
    if bins > MAX_BINS {
        return Err(CliError::new(
            Exit::Usage,
            format!("--bins {bins}: at most {MAX_BINS} bins"),
        ));
    }
    Ok(())
}

/// Reads `dir`, keeps application `app`, finds the phase's window and builds the timeline
/// (following `function`); warnings go to standard error.
pub(crate) fn open_run(
    dir: &Path,
    app: Option<&str>,
    phase: Option<&str>,
    function: Option<&str>,
) -> Result<Run, CliError> {
    let exp = Experiment::open(dir).map_err(AnalysisError::from)?;
    let mut model = Model::build(
        &exp,
        BuildOptions {
            rebuild_from_trace: false,
            resolve_sources: false,
        },
    );
    if let Some(a) = app {
        model
            .select_app(a)
            .map_err(|e| CliError::new(Exit::Usage, format!("{}: {e}", dir.display())))?;
    }
    if !model.processes.iter().any(|p| p.has_trace()) {
        return Err(AnalysisError::NoEventTrace(dir.to_path_buf()).into());
    }
    let function = match function {
        Some(f) => Some((
            f.to_string(),
            find_function(&model, f).map_err(|e| CliError::new(Exit::Usage, e))?,
        )),
        None => None,
    };
    let window = match phase {
        Some(p) => {
            let spec: PhaseSpec = p
                .parse()
                .map_err(|e: String| CliError::new(Exit::Usage, format!("--phase: {e}")))?;
            phase_window(&model, &spec)
                .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?
        }
        None => Window::ALL,
    };
    let timeline = Timeline::build(
        &model,
        &exp,
        &TimelineOptions {
            function,
            ..Default::default()
        },
    )?;
    for w in model.report_warnings() {
        eprintln!("plx: warning: {w}");
    }
    for w in &timeline.warnings {
        eprintln!("plx: warning: {w}");
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Run {
        name,
        exp,
        model,
        timeline,
        window,
    })
}

/// Where a chart goes: the file of `-o`, written under a temporary name and renamed when
/// complete ([`Output::finish`]; a failure leaves no partial file), or standard output.
pub(crate) enum Output {
    File(plx_export::StagedFile),
    Stdout(BufWriter<io::Stdout>),
}

impl Output {
    /// Completes the output: flushed, and the file moved into place.
    pub(crate) fn finish(self) -> io::Result<()> {
        match self {
            Output::File(f) => f.commit(),
            Output::Stdout(mut w) => w.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::File(f) => f.write(buf),
            Output::Stdout(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Stdout(w) => w.flush(),
        }
    }
}

/// The output stream: the file of `-o` (`-` for standard output), else standard output.
pub(crate) fn output(path: Option<&Path>) -> Result<Output, CliError> {
    match path {
        Some(p) if p != Path::new("-") => {
            let f = plx_export::StagedFile::create(p)
                .map_err(|e| CliError::new(Exit::Io, format!("{}: {e}", p.display())))?;
            Ok(Output::File(f))
        }
        _ => Ok(Output::Stdout(BufWriter::new(io::stdout()))),
    }
}

/// A value: whole numbers without decimals, others with 6.
pub(crate) fn value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}

/// A bar of `#` for `v` out of `max`, at most `width` long.
pub(crate) fn bar(v: f64, max: f64, width: usize) -> String {
    if max <= 0.0 || v <= 0.0 {
        return String::new();
    }
    let n = ((v / max) * width as f64).round() as usize;
    "#".repeat(n.clamp(1, width))
}
