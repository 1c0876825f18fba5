//! The CPU sampler's record of `process.plx` (type 21: CpuSamples, generated from
//! spec/records.toml).

pub use crate::schema::structs::CpuSamples;
