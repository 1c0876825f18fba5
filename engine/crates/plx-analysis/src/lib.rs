//! Parallax analysis: the model of an experiment, callpath and flat profiles, aggregations by
//! thread or process, phases and a gprof-style call graph.
//!
//! [`Model::open`] reads an experiment with `plx-format`, maps every process's regions to one
//! [`RegionTable`] (demangled names, source locations from debug info), converts ticks to seconds
//! and, for threads without a ThreadProfile, rebuilds their profile from the trace.
#![deny(missing_docs)]

mod error;
pub mod flat;
pub mod gprof;
mod hash;
pub mod model;
pub mod rebuild;
pub mod regions;
pub mod symbols;
pub mod tree;
pub mod userstats;
pub mod views;

pub use error::AnalysisError;
pub use flat::{callpath_rows, flat_profile, CallpathRow, FlatRow};
pub use gprof::{call_graph, GprofEntry};
pub use model::{BuildOptions, Model, ProcessModel, ProfileSource, ThreadModel, ThrottledRegion};
pub use regions::{RegionInfo, RegionTable};
pub use tree::{CallTree, Node};
pub use userstats::UserStat;
pub use views::{GroupBy, Table};
