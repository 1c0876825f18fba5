//! The CPU sampler's record of `process.plx` (type 21: CpuSamples).

/// Record 21: one sample of the CPU sampler — every measured thread alive at `ticks` and its
/// CPU time (`PLX_CPU_SAMPLE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSamples {
    /// When the sample was taken, ticks.
    pub ticks: u64,
    /// (thread index, CPU ns of the thread's clock).
    pub values: Vec<(u32, u64)>,
}
