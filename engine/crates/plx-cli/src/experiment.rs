//! The prologue of the commands that read an experiment: open it as a model and keep the
//! application `--app` names.

use std::path::Path;

use plx_analysis::{BuildOptions, Model};

use crate::CliError;

/// The model of experiment `dir` built with `opts`, reduced to application `app` when given.
pub fn open_app(dir: &Path, app: Option<&str>, opts: BuildOptions) -> Result<Model, CliError> {
    let mut model = Model::open(dir, opts)?;
    if let Some(a) = app {
        model.select_app(a)?;
    }
    Ok(model)
}
