//! x
#![deny(missing_docs)]
