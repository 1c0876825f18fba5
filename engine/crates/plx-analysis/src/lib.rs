//! Parallax analysis: the model of an experiment, callpath and flat profiles, aggregations by
//! thread or process, phases, a gprof-style call graph, and MPI: time in MPI, message matrices,
//! trace message matching and latency/bandwidth fits.
//!
//! [`Model::open`] reads an experiment with `plx-format`, maps every process's regions to one
//! [`RegionTable`] (demangled names, source locations from debug info), converts ticks to seconds
//! and, for threads without a ThreadProfile (nor a tree recovered from a live file), rebuilds
//! their profile from the trace. MPI ranks come first, by rank; communicators of all ranks are
//! interned in one [`CommTable`].
#![deny(missing_docs)]

pub mod comms;
pub mod compare;
pub mod counters;
pub mod critpath;
mod error;
pub mod external;
pub mod fit;
pub mod flat;
pub mod glob;
pub mod gprof;
mod hash;
pub mod hierarchy;
pub mod histograms;
pub mod location_name;
pub mod matching;
pub mod merge;
pub mod messages;
pub mod model;
pub mod mpitime;
pub mod objects;
pub mod query;
pub mod rebuild;
pub mod regions;
pub mod runtime_cost;
pub mod sampled;
pub mod selection;
pub mod suggest;
pub mod symbols;
pub mod sync;
pub mod timeline;
pub mod tree;
pub mod userstats;
pub mod views;
pub mod waits;

pub use comms::{CommInfo, CommTable, Location};
pub use error::AnalysisError;
pub use fit::{FitAccumulator, FitNote, PairFit};
pub use flat::{callpath_rows, flat_profile, CallpathRow, FlatRow};
pub use glob::glob_matches;
pub use gprof::{call_graph, GprofEntry};
pub use hash::{child_key, FastMap};
pub use matching::{match_messages, MatchSummary, MatchedMessage, PairCounter, UnmatchedPair};
pub use merge::{
    clock_condition, ClockCondition, ClockReport, EventKind, GlobalEvent, GlobalMerge,
    MergeOptions, MergeStats, MessageLink, ReplayPlan, TraceLocation,
};
pub use messages::{MessageStat, Mismatch, PairStats};
pub use model::{
    shell_words, AppModel, BuildOptions, Model, ProcessModel, ProfileSource, SampleStats,
    ThreadModel, ThrottledRegion, TimedSample,
};
pub use mpitime::{MpiTime, RoutineTime};
pub use regions::{RegionInfo, RegionTable};
pub use selection::{phase_window, PhaseSpec, Window};
pub use sync::{SyncObjectInfo, SyncRow, SyncStat};
pub use tree::{CallTree, Node, PathNames};
pub use userstats::UserStat;
pub use views::{GroupBy, Table};
pub use waits::{CauseKind, Pattern, WaitAnalysis};
