//! What `plx histogram` and `plx display` share: reading one run's timeline, and the small
//! text helpers.

use std::path::Path;

use plx_analysis::timeline::{find_function, Timeline, TimelineOptions};
use plx_analysis::{phase_window, AnalysisError, BuildOptions, Model, PhaseSpec, Window};
use plx_format::Experiment;

use crate::{CliError, Exit};

/// One experiment read and passed over once.
pub(crate) struct Run {
    pub name: String,
    pub exp: Experiment,
    pub model: Model,
    pub timeline: Timeline,
    pub window: Window,
}

/// Reads `dir`, keeps application `app`, finds the phase's window and builds the timeline
/// (following `function`); warnings go to standard error.
pub(crate) fn open_run(
    dir: &Path,
    app: Option<&str>,
    phase: Option<&PhaseSpec>,
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
        return Err(model.no_event_trace().into());
    }
    let function = match function {
        Some(f) => Some((
            f.to_string(),
            find_function(&model, f).map_err(|e| CliError::new(Exit::Usage, e))?,
        )),
        None => None,
    };
    let window = match phase {
        Some(spec) => phase_window(&model, spec)
            .map_err(|e| CliError::new(Exit::Input, format!("{}: {e}", dir.display())))?,
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
