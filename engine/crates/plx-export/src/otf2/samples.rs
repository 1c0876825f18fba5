//! Call-stack samples as OTF2 calling-context samples: a `CallingContext` definition per sampled callpath (shared by every location that has it), an `InterruptGenerator` per sampling period, and a `CallingContextSample` event per sample.
//!
//! Each sample is one event whose calling context is the callpath of its innermost frame
//! (`unwindDistance` its depth: every frame new), at its time where the runtime stamped it
//! (before the location's event at or after that time), else after the location's last event
//! ([`crate::samples`]).

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

/// One location's samples as OTF2 writes them: the calling context and depth of each sampled
/// node, its interrupt generator, and how many of its stamped samples are written.
pub(super) struct LocationRefs {
    generator: u32,
    refs: HashMap<u32, (u32, u32)>,
    pub next: usize,
}

impl Events {
    /// The calling contexts of `s`'s sampled callpaths (definitions, written at the end).
    pub fn sample_refs(&mut self, s: &LocationSamples) -> LocationRefs {
        let generator = self.contexts.generator(s.period_ns);
        let mut refs: HashMap<u32, (u32, u32)> = HashMap::with_capacity(s.nodes.len());
        for n in &s.nodes {
            // a sampled node's parent has samples too (they are inclusive): defined before it
            let parent = n
                .parent
                .and_then(|p| refs.get(&p).map(|r| r.0))
                .unwrap_or(OTF2_UNDEFINED_UINT32);
            let cc = self.contexts.context(parent, n.region);
            refs.insert(n.node, (cc, n.depth));
        }
        LocationRefs {
            generator,
            refs,
            next: 0,
        }
    }

    fn sample(&mut self, loc: u32, ns: i64, (cc, depth): (u32, u32), generator: u32) -> Step {
        let w = self.writers[loc as usize];
        // SAFETY: `w` is an open event writer of the archive.
        let code = unsafe {
            OTF2_EvtWriter_CallingContextSample(
                w,
                std::ptr::null_mut(),
                ns.max(0) as u64,
                cc,
                depth,
                generator,
            )
        };
        self.archive.check(code, "writing a calling-context sample")?;
        self.counts[loc as usize] += 1;
        self.sampled += 1;
        self.last = self.last.max(ns);
        Ok(())
    }

    /// The stamped samples of location `loc` taken at or before `ns` and not yet written, so
    /// that they precede its event at `ns`.
    pub fn samples_until(
        &mut self,
        loc: u32,
        ns: i64,
        s: &LocationSamples,
        r: &mut LocationRefs,
    ) -> Step {
        while let Some(&(t, node)) = s.times.get(r.next).filter(|x| x.0 <= ns) {
            r.next += 1;
            if let Some(&cc) = r.refs.get(&node) {
                self.sample(loc, t, cc, r.generator)?;
            }
        }
        Ok(())
    }

    /// After location `at.loc`'s last event at `at.ns`: per sampled callpath a
    /// `CallingContextSample` for each of its samples without a time, then the stamped ones
    /// still to come, at their times.
    pub fn samples(&mut self, at: At, s: &LocationSamples, r: &mut LocationRefs) -> Step {
        for n in &s.nodes {
            let cc = r.refs[&n.node];
            for _ in 0..s.untimed(n) {
                self.sample(at.loc, at.ns, cc, r.generator)?;
            }
        }
        self.samples_until(at.loc, i64::MAX, s, r)
    }
}
