//! Call-stack samples as OTF2 calling-context samples: a `CallingContext` definition per sampled callpath (shared by every location that has it), an `InterruptGenerator` per sampling period, and a `CallingContextSample` event per sample.
//!
//! The runtime keeps no time of a sample ([`crate::samples`]): a location's samples are its
//! last records, at the time of its last event, each sample one event whose calling context
//! is the callpath of its innermost frame (`unwindDistance` its depth: every frame new).

use std::collections::HashMap;

use super::events::Events;
use super::ffi::*;
use crate::driver::{At, Step};
use crate::samples::LocationSamples;

/// The calling contexts and interrupt generators the events named, for the definitions.
#[derive(Default)]
pub(super) struct Contexts {
    /// Per reference: (region, parent reference or `OTF2_UNDEFINED_UINT32` for a root).
    pub contexts: Vec<(u32, u32)>,
    index: HashMap<(u32, u32), u32>,
    /// Per reference: the period, ns of CPU time.
    pub generators: Vec<u64>,
}

impl Contexts {
    fn context(&mut self, parent: u32, region: u32) -> u32 {
        let next = self.contexts.len() as u32;
        let r = *self.index.entry((parent, region)).or_insert(next);
        if r == next {
            self.contexts.push((region, parent));
        }
        r
    }

    fn generator(&mut self, period_ns: u64) -> u32 {
        match self.generators.iter().position(|&p| p == period_ns) {
            Some(i) => i as u32,
            None => {
                self.generators.push(period_ns);
                self.generators.len() as u32 - 1
            }
        }
    }
}

impl Events {
    /// The samples of location `at.loc`, at `at.ns`: for each sampled callpath, a
    /// `CallingContextSample` per sample whose innermost frame it is.
    pub fn samples(&mut self, at: At, s: &LocationSamples) -> Step {
        let generator = self.contexts.generator(s.period_ns);
        let mut refs: HashMap<u32, u32> = HashMap::with_capacity(s.nodes.len());
        let w = self.writers[at.loc as usize];
        let t = at.ns.max(0) as u64;
        for n in &s.nodes {
            // a sampled node's parent has samples too (they are inclusive): defined before it
            let parent = n
                .parent
                .and_then(|p| refs.get(&p).copied())
                .unwrap_or(OTF2_UNDEFINED_UINT32);
            let cc = self.contexts.context(parent, n.region);
            refs.insert(n.node, cc);
            for _ in 0..n.self_samples {
                // SAFETY: `w` is an open event writer of the archive.
                let code = unsafe {
                    OTF2_EvtWriter_CallingContextSample(
                        w,
                        std::ptr::null_mut(),
                        t,
                        cc,
                        n.depth,
                        generator,
                    )
                };
                self.archive.check(code, "writing a calling-context sample")?;
            }
            self.counts[at.loc as usize] += n.self_samples;
            self.sampled += n.self_samples;
        }
        if s.nodes.iter().any(|n| n.self_samples > 0) {
            self.last = self.last.max(at.ns);
        }
        Ok(())
    }
}
