//! `plx view`: an index of a trace built once at open ([`TraceIndex`]), the window queries that
//! answer at the current zoom with a level of detail ([`query`]), and the local web server that
//! serves the embedded viewer and the JSON API ([`server`]).

pub mod api;
pub mod arr;
mod error;
pub mod http;
pub mod index;
pub mod part;
pub mod query;
pub mod samples;
pub mod schema;
pub mod server;
pub mod store;
pub mod times;

pub use error::ViewError;
pub use index::{Lane, Region, TraceIndex, Track};
pub use query::{window, WindowQuery};
pub use server::{Server, ServerOptions};
