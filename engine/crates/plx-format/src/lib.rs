//! Reads and writes the Parallax experiment format defined in `spec/format.md`.
//!
//! [`Experiment::open`] reads a directory: every `<host>.<pid>/process[.N].plx` is decoded into
//! [`ProcessData`], every `trace[.N].plx` is indexed by chunk ([`TraceIndex`]) without reading
//! its events, which are then streamed one chunk at a time ([`TraceReader`], [`ChunkEvents`]).
//! Damage (truncation, garbage, missing files, unfinished processes) becomes [`Warning`]s;
//! whatever is intact is still returned. The [`live`] files a killed process left stand in for
//! the records it never wrote (profiles, message and synchronization statistics), with a warning. The [`writer`] module writes the same format;
//! [`synth`] and [`synth_mpi`] build whole synthetic experiments (MPI runs included).
#![deny(missing_docs)]

mod bytes;
pub mod clock;
pub mod cpu;
mod error;
pub mod event;
pub mod experiment;
pub mod framing;
pub mod java;
pub mod live;
pub mod mpi;
pub mod process;
pub mod records;
pub mod sync;
pub mod synth;
pub mod synth_mpi;
pub mod trace;
mod warning;
pub mod writer;

pub use bytes::ShortPayload;
pub use clock::{ClockMap, ClockSource, OffsetMap};
pub use cpu::CpuSamples;
pub use error::FormatError;
pub use event::{ChunkEvents, Event, EventEncoder};
pub use experiment::{
    parse_session, valid_app_name, AppDef, Experiment, ProcessImage, SESSION_FILE,
};
pub use framing::FileKind;
pub use java::JavaClass;
pub use live::{LiveFiles, LiveKind, LiveMpi, LiveNodes, LiveSync, LiveSyncEntry};
pub use mpi::{ClockOffset, CommDef, Direction, MessageStats, MpiInit, OffsetWhen, ThreadLevel};
pub use process::{ProcessData, Recovered, ThreadData};
pub use records::*;
pub use sync::{NamedBy, NodeCpu, SyncKind, SyncObject, SyncStats};
pub use trace::{ChunkHeader, ChunkInfo, TraceIndex, TraceReader};
pub use warning::{Warning, WarningKind};
