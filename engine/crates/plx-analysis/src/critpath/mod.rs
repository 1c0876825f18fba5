//! Critical path analysis on the program activity graph (IPS-2 and Yang & Miller): intra-application, inter-application and global.
//!
//! [`Graph::build`] reads the merged trace once and makes a node at each thread's
//! communication points only: its start and end, MPI sends, receive completions (with the
//! entry of the enclosing MPI or socket routine as the wait's start), a collective's arrival
//! (the routine's entry) and departure, stream writes and reads, lock acquisitions that waited
//! (with the wait's start), releases, and a thread's creation (a node of the creating thread
//! at the new thread's start). Remote arcs: a matched message from its send; a stream read
//! from the write holding its last byte; an acquisition from the latest release of the same
//! object by another thread (a join from the joined thread's end); a collective departure
//! from a virtual node at the instance's last arrival (the k-th collective on a communicator
//! at each member); a thread's start from its creator.
//!
//! [`Graph::longest_path`] diffuses path lengths forward in topological order and walks back
//! from the terminal node (see [`longest`] for the weights and [`Mode`] for the three kinds
//! of path); [`segments`] and [`profile`] turn the path into IPS-2's critical-path profile,
//! and [`item_samples`] says which sampled call paths ran in a function's time on it.

mod graph;
pub mod longest;
mod profile;
mod samples;

pub use graph::{ArcKind, Graph, Node, NodeKind, NONE};
pub use longest::{LongestPath, Mode, PathArc};
pub use profile::{
    imbalance, location_name, profile, segments, Imbalance, Item, ItemKind, Level, Segment,
};
pub use samples::{item_samples, ItemSamples, SampledPath, NO_FUNCTION};

use plx_format::Experiment;

use crate::merge::MergeOptions;
use crate::model::Model;
use crate::selection::Window;
use crate::AnalysisError;

/// A critical path and what it is made of.
#[derive(Debug, Clone)]
pub struct CriticalPath {
    /// The graph it runs through.
    pub graph: Graph,
    /// The path (`None`: the view has no thread end, e.g. an empty window).
    pub path: Option<LongestPath>,
    /// Its segments in path order.
    pub segments: Vec<Segment>,
}

impl CriticalPath {
    /// Builds the graph of `model`'s trace inside `window` and finds the path of `mode` for
    /// application `app` (index into [`Model::apps`]; `None`: every application).
    pub fn compute(
        model: &Model,
        exp: &Experiment,
        window: Window,
        mode: Mode,
        app: Option<u32>,
        opts: MergeOptions,
    ) -> Result<CriticalPath, AnalysisError> {
        let graph = Graph::build(model, exp, window, opts)?;
        let path = graph.longest_path(mode, app);
        let segments = path
            .as_ref()
            .map(|p| segments(&graph, p))
            .unwrap_or_default();
        Ok(CriticalPath {
            graph,
            path,
            segments,
        })
    }

    /// The path's length, ns (0 without a path).
    pub fn length_ns(&self) -> i64 {
        self.path.as_ref().map_or(0, |p| p.length_ns)
    }
}
