//! What every exporter reads: the experiment as read, its model, and the merge options.

use std::path::Path;

use plx_analysis::{
    phase_window, BuildOptions, GlobalMerge, MergeOptions, Model, PhaseSpec, Window,
};
use plx_format::Experiment;

use crate::ExportError;

/// Options common to all exports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportOptions {
    /// How trace formats merge the threads (clock-condition repair, minimum latency).
    pub merge: MergeOptions,
    /// Only this application of a session (its logical view); `None`: every process.
    pub app: Option<String>,
    /// A table format's tables as datasets partitioned by this key (formats that
    /// [`partition`](crate::Exporter::partitions)); `None`: one file per table.
    pub partition: Option<Partition>,
    /// Only this span of the run (`--phase` or `--window`, docs/phases.md); `None`: all of it.
    pub window: Option<PhaseSpec>,
}

/// What a partitioned export splits its tables by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// The MPI rank (hive-style `rank=N` directories).
    Rank,
}

/// An experiment opened for export.
pub struct ExportInput {
    /// The experiment as read (definitions of regions and user events per process).
    pub experiment: Experiment,
    /// Its model: processes, threads, regions, communicators, profiles.
    pub model: Model,
    /// The options.
    pub options: ExportOptions,
    /// The span exported ([`ExportOptions::window`] in the merge's time; [`Window::ALL`]
    /// without one).
    pub window: Window,
}

impl ExportInput {
    /// Reads the experiment in `dir`. With `profiles`, threads without a ThreadProfile get
    /// theirs rebuilt from the trace (profile formats need them; trace formats do not). With
    /// `sources`, regions without a source file and line get them from the executables' debug
    /// information. An experiment with call-stack samples gets its profiles rebuilt too: its
    /// samples hang under the calls the trace opened, as `plx report` shows them.
    pub fn open(
        dir: &Path,
        options: ExportOptions,
        profiles: bool,
        sources: bool,
    ) -> Result<Self, ExportError> {
        let experiment = Experiment::open(dir)?;
        let sampled = experiment
            .images
            .iter()
            .any(|i| i.process.threads.values().any(|t| t.sample_tree.is_some()));
        let mut model = Model::build(
            &experiment,
            BuildOptions {
                rebuild_from_trace: profiles || sampled,
                resolve_sources: sources,
            },
        );
        if let Some(app) = &options.app {
            model.select_app(app)?;
        }
        let window = match &options.window {
            Some(spec) => phase_window(&model, spec)?,
            None => Window::ALL,
        };
        Ok(ExportInput {
            experiment,
            model,
            options,
            window,
        })
    }

    /// The merged stream of the traces (an error when there is no trace).
    pub fn merge(&self) -> Result<GlobalMerge<'_>, ExportError> {
        Ok(GlobalMerge::new(
            &self.model,
            &self.experiment,
            self.options.merge,
        )?)
    }

    /// As [`ExportInput::merge`], with the counted calls (exports that show counters).
    pub fn merge_with_counters(&self) -> Result<GlobalMerge<'_>, ExportError> {
        Ok(GlobalMerge::with_counters(
            &self.model,
            &self.experiment,
            self.options.merge,
        )?)
    }
}
