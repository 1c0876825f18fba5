//! Call-stack samples (SampleTree records) folded into a thread's callpath tree: each sampled
//! frame becomes a node under the instrumented callpath that was open when it was taken, named
//! by the symbol resolver, its times estimated as samples × period; counts stay the events'.

use super::*;
use plx_format::records::SampleTree;
use plx_format::Recovered;

/// What a thread's samples were: taken, and lost (for `plx info`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleStats {
    /// Sampling period, ns of the thread's CPU time per sample.
    pub period_ns: u64,
    /// Samples taken (each in the tree).
    pub samples: u64,
    /// Samples lost: the thread's sample tree was full.
    pub lost_full: u64,
    /// Samples lost: the thread was in the dynamic loader.
    pub lost_loader: u64,
    /// The samples come from the thread's live file: its process was killed before writing them.
    pub recovered: bool,
    /// Samples lost with the killed process: the runtime kept their frames in memory only (the
    /// disk had no room to grow the live file).
    pub lost_not_kept: u64,
}

impl SampleStats {
    pub(super) fn of(t: &SampleTree, recovered: &Recovered) -> Self {
        SampleStats {
            period_ns: t.period_ns,
            samples: t.samples,
            lost_full: t.lost_full,
            lost_loader: t.lost_loader,
            recovered: recovered.samples.is_some(),
            lost_not_kept: recovered.samples_not_kept,
        }
    }

    /// Samples lost, for every reason.
    pub fn lost(&self) -> u64 {
        self.lost_full + self.lost_loader + self.lost_not_kept
    }
}

/// Names code addresses of one process once each: (module id, address) → global region.
#[derive(Default)]
pub(super) struct FrameNames {
    by_address: FastMap<(u32, u64), u32>,
}

impl FrameNames {
    fn region(
        &mut self,
        module: u32,
        address: u64,
        img: &ProcessImage,
        table: &mut RegionTable,
        resolver: &mut SymbolResolver,
    ) -> u32 {
        if let Some(&r) = self.by_address.get(&(module, address)) {
            return r;
        }
        let m = img.process.modules.get(&module);
        let loc = m.and_then(|m| resolver.locate_call_site(address, m));
        let (name, file) = match (loc, m) {
            (Some(l), _) if l.function.is_some() => (l.function.unwrap_or_default(), l.file),
            // no symbol: the module, one region for all its unnamed code
            (_, Some(m)) => (
                format!("[{}]", m.path.rsplit('/').next().unwrap_or(&m.path)),
                String::new(),
            ),
            (_, None) => ("[unknown]".to_string(), String::new()),
        };
        let r = table.intern(RegionInfo {
            name,
            kind: RegionKind::Function,
            file,
            line: 0, // the sample's line is a call site, not the function's
        });
        self.by_address.insert((module, address), r);
        r
    }
}

/// A frame that is a region open when sampled (the runtime's trace mode), not code.
const REGION_MODULE: u32 = 0xFFFF_FFFE;

/// A call-stack sample with its time (the runtime stamps each sample in trace mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedSample {
    /// When it was taken, ticks of the thread's process ([`super::ProcessModel::rank0_ns`]).
    pub ticks: u64,
    /// The tree node whose own sample it is (`None`: the thread's root).
    pub node: Option<u32>,
}

/// What the samples of a thread's stamps hold: each in order, its frame's tree node; the stamps
/// whose frame is not in the tree (left out, or past its end) are counted, not kept.
pub(super) fn timed_samples(
    stamps: &[(u64, u32)],
    frame_nodes: &[Option<Option<u32>>],
) -> (Vec<TimedSample>, u64) {
    let mut out = Vec::with_capacity(stamps.len());
    let mut bad = 0;
    for &(ticks, f) in stamps {
        match frame_nodes.get(f as usize).copied().flatten() {
            Some(node) => out.push(TimedSample { ticks, node }),
            None => bad += 1,
        }
    }
    (out, bad)
}

/// Adds `st`'s frames to `tree`; `map` gives the tree node of each ThreadProfile node. Returns
/// how many frames were left out for naming a parent or node that does not exist, and per
/// frame its tree node (`None`: left out; `Some(None)`: the thread's root).
#[allow(clippy::too_many_arguments)]
pub(super) fn fold_samples(
    tree: &mut CallTree,
    map: &[u32],
    st: &SampleTree,
    img: &ProcessImage,
    rmap: &mut RegionMap,
    table: &mut RegionTable,
    resolver: &mut SymbolResolver,
    names: &mut FrameNames,
) -> (u64, Vec<Option<Option<u32>>>) {
    let period = st.period_ns as f64 * 1e-9;
    let n = st.frames.len();
    // per frame: its tree node (None: left out; the thread root for an address-0 frame there)
    // and the tree node it hangs under (None: the thread's root)
    let mut node_of: Vec<Option<Option<u32>>> = vec![None; n];
    let mut parent_frame: Vec<Option<usize>> = vec![None; n];
    let mut anchor_of: Vec<Option<u32>> = vec![None; n];
    let mut region = vec![false; n];
    let mut bad = 0u64;
    for (i, f) in st.frames.iter().enumerate() {
        let (parent, anchor) = if f.parent == NONE_U32 {
            let anchor = if f.node == NONE_U32 {
                None
            } else if let Some(&a) = map.get(f.node as usize) {
                Some(a)
            } else {
                bad += 1;
                continue;
            };
            (anchor, anchor)
        } else {
            let p = f.parent as usize;
            match node_of
                .get(..i)
                .and_then(|done| done.get(p))
                .copied()
                .flatten()
            {
                Some(Some(pn)) => {
                    parent_frame[i] = Some(p);
                    (Some(pn), anchor_of[p])
                }
                _ => {
                    bad += 1;
                    continue;
                }
            }
        };
        let region_frame = f.module == REGION_MODULE;
        node_of[i] = Some(if f.address == 0 && f.parent == NONE_U32 && !region_frame {
            anchor // the instrumented call's own code
        } else if region_frame {
            let Ok(local) = u32::try_from(f.address) else {
                bad += 1;
                continue;
            };
            Some(tree.child(parent, rmap.global(local, table)))
        } else {
            let region = names.region(f.module, f.address, img, table, resolver);
            Some(tree.child(parent, region))
        });
        // frames below a region frame hang under it
        anchor_of[i] = if region_frame {
            node_of[i].flatten()
        } else {
            anchor
        };
        region[i] = region_frame;
    }
    for (i, f) in st.frames.iter().enumerate() {
        let Some(here) = node_of[i] else { continue };
        if f.samples == 0 {
            continue;
        }
        let own = region[i] || (f.address == 0 && f.parent == NONE_U32);
        if !own {
            let secs = f.samples as f64 * period;
            if let Some(h) = here {
                tree.add(h, 0, 0, 0.0, secs);
            }
            // the sampled frames from this one up: inclusive estimates and samples
            let mut k = Some(i);
            while let Some(j) = k.filter(|&j| !region[j]) {
                if let Some(Some(node)) = node_of[j] {
                    tree.add(node, 0, 0, secs, 0.0);
                    tree.add_samples(node, f.samples);
                }
                k = parent_frame[j];
            }
            if let Some(a) = anchor_of[i] {
                tree.take_exclusive(a, secs);
            }
        }
        // the instrumented callpath it hangs under, up to the thread's root: samples only
        let mut up = anchor_of[i];
        while let Some(a) = up {
            tree.add_samples(a, f.samples);
            up = tree.nodes()[a as usize].parent;
        }
    }
    (bad, node_of)
}
