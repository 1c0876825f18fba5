//! The call-stack samples that `--samples` lists under an item (a function on the critical path, a wait's cause): their frames as text and JSON, and the refusal of a run without samples.

use std::path::Path;

use plx_analysis::sampled::{ItemSamples, SampledPath};
use plx_analysis::Model;
use serde_json::{json, Value};

use crate::{CliError, Exit};

/// `--samples=N`'s N: how many sampled paths to list under an item, at least 1.
pub fn paths_n(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("the number of sampled paths to list under each item: 1 or more".to_string()),
    }
}

/// An error unless the run has call-stack samples.
pub fn require(model: &Model, dir: &Path) -> Result<(), CliError> {
    let any = model
        .processes
        .iter()
        .any(|p| p.threads.iter().any(|t| t.samples.is_some()));
    if any {
        return Ok(());
    }
    Err(CliError::new(
        Exit::Input,
        format!(
            "{}: --samples: the run has no call-stack samples (rerun it with plx run --trace --sample)",
            dir.display()
        ),
    ))
}

/// The frames of a sampled path, ` => `-joined (`(own code)` for the measured call's own).
pub fn frames_text(model: &Model, p: &SampledPath) -> String {
    if p.frames.is_empty() {
        return "(own code)".to_string();
    }
    let names: Vec<&str> = p.frames.iter().map(|&r| model.regions.name(r)).collect();
    names.join(" => ")
}

/// The line that follows the paths shown when some are left out: `K more paths: S of M
/// samples (--samples=N for more)`; `None` when every path is shown.
pub fn rest_text(s: &ItemSamples) -> Option<String> {
    let (paths, samples, _) = s.rest;
    (paths > 0).then(|| {
        format!(
            "{paths} more path{}: {samples} of {} samples (--samples=N shows N)",
            if paths == 1 { "" } else { "s" },
            s.samples
        )
    })
}

/// `{total, timed, paths: [{frames, samples, estimated_s}], more: {paths, samples, estimated_s}}`.
pub fn json(model: &Model, s: &ItemSamples) -> Value {
    let paths: Vec<Value> = s
        .paths
        .iter()
        .map(|sp| {
            json!({
                "frames": sp.frames.iter().map(|&r| model.regions.name(r)).collect::<Vec<_>>(),
                "samples": sp.samples,
                "estimated_s": sp.estimated_ns as f64 / 1e9,
            })
        })
        .collect();
    let (more, samples, ns) = s.rest;
    json!({
        "total": s.samples,
        "timed": s.timed,
        "paths": paths,
        "more": { "paths": more, "samples": samples, "estimated_s": ns as f64 / 1e9 },
    })
}
