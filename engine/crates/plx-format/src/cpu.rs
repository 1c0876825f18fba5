//! The CPU sampler's record of `process.plx` (type 21: CpuSamples).

use crate::bytes::{FieldReader, Put};
use crate::records::DecodeProblem;

/// Record 21: one sample of the CPU sampler — every measured thread alive at `ticks` and its
/// CPU time (`PLX_CPU_SAMPLE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSamples {
    /// When the sample was taken, ticks.
    pub ticks: u64,
    /// (thread index, CPU ns of the thread's clock).
    pub values: Vec<(u32, u64)>,
}

pub(crate) fn decode_cpu_samples(r: &mut FieldReader) -> Result<CpuSamples, DecodeProblem> {
    let ticks = r.u64()?;
    let n = r.u32()?;
    if n as usize > r.remaining() / 12 {
        return Err(DecodeProblem::BadCount(n as u64));
    }
    let mut values = Vec::with_capacity(n as usize);
    for _ in 0..n {
        values.push((r.u32()?, r.u64()?));
    }
    Ok(CpuSamples { ticks, values })
}

pub(crate) fn encode_cpu_samples(c: &CpuSamples, out: &mut Vec<u8>) {
    out.put_u64(c.ticks);
    out.put_u32(c.values.len() as u32);
    for (thread, ns) in &c.values {
        out.put_u32(*thread);
        out.put_u64(*ns);
    }
}
