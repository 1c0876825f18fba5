//! The prologue of the commands that read an experiment: open it as a model and keep the
//! application `--app` names.

use std::path::Path;

use plx_analysis::{AnalysisError, BuildOptions, Model};
use plx_format::{Experiment, Warning};

use crate::{CliError, Exit};

/// The model of experiment `dir` built with `opts`, reduced to application `app` when given.
pub fn open_app(dir: &Path, app: Option<&str>, opts: BuildOptions) -> Result<Model, CliError> {
    let mut model = Model::open(dir, opts)?;
    if let Some(a) = app {
        model.select_app(a)?;
    }
    Ok(model)
}

/// Says on stderr what could not be read (`plx: warning: ...`, the lines `plx report` prints),
/// so that no reader answers from part of an experiment without saying so.
/// A kind shared by many processes' warnings is one line (plx_format::summary_lines).
pub fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a Warning>) {
    for w in plx_format::summary_lines(warnings) {
        eprintln!("plx: warning: {w}");
    }
}

/// [`open_app`], then its warnings printed ([`print_warnings`]).
pub fn open_app_warned(
    dir: &Path,
    app: Option<&str>,
    opts: BuildOptions,
) -> Result<Model, CliError> {
    let model = open_app(dir, app, opts)?;
    print_warnings(model.report_warnings());
    Ok(model)
}

/// The index of application `name` in the whole model (the commands that replay every
/// application and keep one's results: critical-path, waits), or the error naming those there.
pub fn app_index(model: &Model, name: Option<&str>) -> Result<Option<u32>, CliError> {
    let Some(name) = name else {
        return Ok(None);
    };
    if let Some(i) = model.apps.iter().position(|a| a.name == name) {
        return Ok(Some(i as u32));
    }
    let names: Vec<&str> = model
        .apps
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let there = if names.is_empty() {
        "this is one experiment, not a session".to_string()
    } else {
        format!("the session has {}", names.join(", "))
    };
    Err(AnalysisError::NoSuchApp(name.to_string(), there).into())
}

/// The experiment `dir` and its whole model, for the commands that replay the trace of every
/// application (critical-path, waits): refused without a trace, its warnings printed. With
/// `profiles` the threads' profiles are rebuilt from the trace (call-stack samples then hang
/// under the calls the trace opened, as `plx report` shows them).
pub fn open_traced(dir: &Path, profiles: bool) -> Result<(Experiment, Model), CliError> {
    let exp = Experiment::open(dir).map_err(AnalysisError::from)?;
    let model = Model::build(
        &exp,
        BuildOptions {
            rebuild_from_trace: profiles,
            resolve_sources: true,
        },
    );
    if !model.processes.iter().any(|p| p.has_trace()) {
        // (for what ran, by call-stack samples: the rerun needs both)
        if profiles {
            return Err(CliError::new(
                Exit::Input,
                format!(
                    "{}: no trace: --samples needs an event trace and call-stack samples; rerun with `plx run --trace --sample`",
                    dir.display()
                ),
            ));
        }
        return Err(model.no_event_trace().into());
    }
    print_warnings(model.report_warnings());
    Ok((exp, model))
}
