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
    /// Per address its regions, outermost first: one, or for JIT code with methods inlined
    /// there the compiled method then each inlined method.
    by_address: FastMap<(u32, u64), Vec<u32>>,
    /// The JVM's code ranges (JitCode records) by start, built at the first frame in no module.
    jit: Option<Vec<JitRange>>,
}

/// A frame's name: function, file, line.
type Named = (String, String, u32);

/// A JitCode range and the name its frames get.
struct JitRange {
    /// A compiled method (else code the JVM generated itself).
    method: bool,
    start: u64,
    end: u64,
    name: String,
    file: String,
    line: u32,
    /// The methods inlined at the instructions the JIT compiler recorded (JitInline), by
    /// offset in increasing order: each instruction's inlined methods, outermost first (the
    /// compiled method itself left out), with the line of their bytecode there.
    inlined: Vec<(u32, Vec<Named>)>,
}

/// `Lpkg/Outer$Inner;` → `pkg.Outer.Inner`.
fn java_class_name(sig: &str) -> String {
    let s = sig
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(sig);
    s.replace(['/', '$'], ".")
}

/// A descriptor's parameter types as the Java agent names methods (`(int, Object[])`, types
/// without their package); None when the descriptor is malformed.
fn java_parameters(desc: &str) -> Option<String> {
    let body = desc.strip_prefix('(')?.split(')').next()?;
    let mut out = Vec::new();
    let mut chars = body.chars();
    let mut dims = 0;
    while let Some(c) = chars.next() {
        let name = match c {
            '[' => {
                dims += 1;
                continue;
            }
            'L' => {
                let cls: String = chars.by_ref().take_while(|&c| c != ';').collect();
                cls.rsplit('/').next().unwrap_or("").replace('$', ".")
            }
            'Z' => "boolean".into(),
            'B' => "byte".into(),
            'C' => "char".into(),
            'S' => "short".into(),
            'I' => "int".into(),
            'J' => "long".into(),
            'F' => "float".into(),
            'D' => "double".into(),
            _ => return None,
        };
        out.push(format!("{name}{}", "[]".repeat(dims)));
        dims = 0;
    }
    Some(format!("({})", out.join(", ")))
}

/// A Java method as the agent names it: `pkg.Hot.spin(long)` from `Lpkg/Hot;` and `spin(J)J`.
fn java_method_name(class: &str, method: &str) -> String {
    let (name, desc) = method
        .find('(')
        .map_or((method, ""), |i| method.split_at(i));
    let params = java_parameters(desc).unwrap_or_default();
    format!("{}.{name}{params}", java_class_name(class))
}

impl JitRange {
    fn of(c: &plx_format::records::JitCode) -> Self {
        let name = if c.kind == 0 {
            java_method_name(&c.class, &c.method)
        } else {
            format!("[jvm: {}]", c.method)
        };
        JitRange {
            method: c.kind == 0,
            start: c.start,
            end: c.start.saturating_add(c.size),
            name,
            file: c.file.clone(),
            line: c.line,
            inlined: Vec::new(),
        }
    }

    /// The ranges of a process: each compiled method with the inlining its JitInline gives
    /// (matched by start and time; a frame naming a method no JitMethod names is left out).
    fn all(p: &plx_format::ProcessData) -> Vec<JitRange> {
        let methods: FastMap<u32, Named> = p
            .jit_methods
            .iter()
            .map(|m| {
                let name = java_method_name(&m.class, &m.method);
                (m.id, (name, m.file.clone(), m.line))
            })
            .collect();
        let mut inline: FastMap<(u64, u64), &plx_format::records::JitInline> = FastMap::default();
        for i in &p.jit_inline {
            inline.insert((i.start, i.ticks), i);
        }
        p.jit_code
            .iter()
            .map(|c| {
                let mut r = JitRange::of(c);
                if let Some(i) = inline.get(&(c.start, c.ticks)).filter(|_| c.kind == 0) {
                    r.inlined = inlined_stacks(&i.frames, &methods);
                }
                r
            })
            .collect()
    }

    /// The methods inlined at `pc` (in this range): those of the first recorded instruction at
    /// or after it; none when no instruction after it was recorded.
    fn inlined_at(&self, pc: u64) -> &[Named] {
        let off = pc.saturating_sub(self.start);
        let i = self.inlined.partition_point(|(o, _)| u64::from(*o) < off);
        self.inlined.get(i).map_or(&[], |(_, m)| &m[..])
    }
}

/// JitInline frames (runs of one offset, innermost first, the compiled method last) as
/// (offset, inlined methods outermost first) in increasing offset order.
fn inlined_stacks(
    frames: &[plx_format::records::JitInlineFrame],
    methods: &FastMap<u32, Named>,
) -> Vec<(u32, Vec<Named>)> {
    let mut out: Vec<(u32, Vec<Named>)> = Vec::new();
    let mut k = 0;
    while k < frames.len() {
        let off = frames[k].offset;
        let run = frames[k..].iter().take_while(|f| f.offset == off).count();
        let stack = &frames[k..k + run];
        // the last is the compiled method itself; the others from the outermost in
        let inl: Option<Vec<Named>> = stack[..run - 1]
            .iter()
            .rev()
            .map(|f| {
                methods.get(&f.method).map(|(n, file, first)| {
                    (
                        n.clone(),
                        file.clone(),
                        if f.line > 0 { f.line } else { *first },
                    )
                })
            })
            .collect();
        if let Some(inl) = inl {
            out.push((off, inl));
        }
        k += run;
    }
    out.sort_by_key(|(o, _)| *o);
    out.dedup_by_key(|(o, _)| *o);
    out
}

/// The name of code at `pc` in no module: the JitCode ranges that held it over the run. One
/// method: its name, file and first line. Several (the JVM freed code and reused its place;
/// samples carry no time to say which ran): all their names, so no frame gets a wrong one.
/// Code the JVM generated itself is never freed but nests (a blob of adapters, each adapter):
/// the innermost range names it, the first recorded of equal ones. See [`jit_names`] for the
/// methods inlined there.
fn jit_name(ranges: &[JitRange], pc: u64) -> Option<Named> {
    let holds = |r: &&JitRange| r.start <= pc && pc < r.end;
    let mut found: Vec<&JitRange> = ranges.iter().filter(holds).filter(|r| r.method).collect();
    if found.is_empty() {
        // the same piece told twice (as made, then again at the JVM's start): its first name
        let smallest = ranges
            .iter()
            .filter(holds)
            .min_by_key(|r| r.end - r.start)?;
        return Some((smallest.name.clone(), smallest.file.clone(), smallest.line));
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found.dedup_by(|a, b| a.name == b.name);
    match found.as_slice() {
        [] => None,
        [one] => Some((one.name.clone(), one.file.clone(), one.line)),
        many => Some((
            format!(
                "[jit: {}]",
                many.iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            String::new(),
            0,
        )),
    }
}

/// The names of code at `pc` in no module, outermost first: as [`jit_name`], followed, where one
/// compiled method held it, by the methods inlined at that instruction.
fn jit_names(ranges: &[JitRange], pc: u64) -> Option<Vec<Named>> {
    let first = jit_name(ranges, pc)?;
    let mut held = ranges
        .iter()
        .filter(|r| r.method && r.start <= pc && pc < r.end);
    let one = held.next();
    let same = one.is_some_and(|o| held.all(|r| r.name == o.name));
    let mut out = vec![first];
    if let (Some(r), true) = (one, same) {
        // the last code recorded at the address: its inlining (code freed and compiled again
        // in place has the same method's)
        let last = ranges
            .iter()
            .rev()
            .find(|r| r.method && r.start <= pc && pc < r.end)
            .unwrap_or(r);
        out.extend(last.inlined_at(pc).iter().cloned());
    }
    Some(out)
}

impl FrameNames {
    fn region(
        &mut self,
        module: u32,
        address: u64,
        img: &ProcessImage,
        table: &mut RegionTable,
        resolver: &mut SymbolResolver,
    ) -> Vec<u32> {
        if let Some(r) = self.by_address.get(&(module, address)) {
            return r.clone();
        }
        let m = img.process.modules.get(&module);
        // the function the code is in, then the functions inlined there (outermost first)
        let mut native: Vec<Named> = m
            .map(|m| resolver.locate_call_frames(address, m))
            .unwrap_or_default()
            .into_iter()
            .map(|l| (l.function.unwrap_or_default(), l.file, 0))
            .collect();
        let mut jit = if m.is_none() && !img.process.jit_code.is_empty() {
            let ranges = self.jit.get_or_insert_with(|| JitRange::all(&img.process));
            jit_names(ranges, address.wrapping_sub(1))
        } else {
            None
        };
        let inlined = if native.is_empty() {
            jit.as_mut().map(|j| j.split_off(1)).unwrap_or_default()
        } else {
            native.split_off(1)
        };
        let loc = native.into_iter().next();
        let jit = jit.and_then(|j| j.into_iter().next());
        // the sample's line is a call site, not the function's: 0, but for JIT code the
        // method's first line (as the Java agent's regions have)
        let (name, file, line) = match (loc, m, jit) {
            (Some(l), _, _) => l,
            // no symbol: the module, one region for all its unnamed code
            (_, Some(m), _) => (
                format!("[{}]", m.path.rsplit('/').next().unwrap_or(&m.path)),
                String::new(),
                0,
            ),
            (_, None, Some(j)) => j,
            (_, None, None) => ("[unknown]".to_string(), String::new(), 0),
        };
        let regions: Vec<u32> = std::iter::once((name, file, line))
            .chain(inlined)
            .map(|(name, file, line)| {
                table.intern(RegionInfo {
                    name,
                    kind: RegionKind::Function,
                    file,
                    line,
                })
            })
            .collect();
        self.by_address.insert((module, address), regions.clone());
        regions
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
    // per frame the nodes above its own that it stands for (the compiled method and the
    // methods inlined down to the innermost, whose node is node_of)
    let mut outer_nodes: Vec<Vec<u32>> = vec![Vec::new(); n];
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
            let regions = names.region(f.module, f.address, img, table, resolver);
            let mut at = parent;
            for (k, &r) in regions.iter().enumerate() {
                let c = tree.child(at, r);
                if k + 1 < regions.len() {
                    outer_nodes[i].push(c);
                }
                at = Some(c);
            }
            at
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
                    for &o in outer_nodes[j].iter().chain(std::iter::once(&node)) {
                        tree.add(o, 0, 0, secs, 0.0);
                        tree.add_samples(o, f.samples);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use plx_format::records::JitCode;

    fn code(start: u64, size: u64, kind: u32, class: &str, method: &str) -> JitRange {
        JitRange::of(&JitCode {
            start,
            size,
            ticks: 0,
            kind,
            line: 7,
            class: class.into(),
            method: method.into(),
            file: "pkg/Hot.java".into(),
        })
    }

    #[test]
    fn jit_frames_named_like_the_agents_methods() {
        let r = [
            code(
                0x1000,
                0x100,
                0,
                "Lpkg/Hot$In;",
                "spin([[JLjava/lang/String;I)J",
            ),
            code(0x2000, 0x100, 1, "", "Interpreter"),
        ];
        assert_eq!(
            jit_name(&r, 0x1000),
            Some((
                "pkg.Hot.In.spin(long[][], String, int)".into(),
                "pkg/Hot.java".into(),
                7
            ))
        );
        assert_eq!(jit_name(&r, 0x20ff).unwrap().0, "[jvm: Interpreter]");
        assert_eq!(jit_name(&r, 0x1100), None);
        assert_eq!(jit_name(&r, 0xfff), None);
    }

    #[test]
    fn a_frame_in_compiled_code_names_the_methods_inlined_at_the_next_recorded_instruction() {
        use plx_format::records::JitInlineFrame;
        let names = |v: Option<Vec<Named>>| -> Vec<(String, u32)> {
            v.unwrap_or_default()
                .into_iter()
                .map(|(n, _, l)| (n, l))
                .collect()
        };
        let methods: FastMap<u32, Named> = [
            (0, ("A.a()".to_string(), "A.java".to_string(), 10)),
            (1, ("B.b(int)".to_string(), "B.java".to_string(), 20)),
            (2, ("C.c()".to_string(), "C.java".to_string(), 30)),
        ]
        .into_iter()
        .collect();
        let f = |offset, method, line| JitInlineFrame {
            offset,
            method,
            line,
        };
        let mut a = code(0x1000, 0x100, 0, "LA;", "a()V");
        // at 0x40 b inlined into a (b at line 22, line 0: its first line); at 0x20 c into b
        // into a; at 0x60 a alone; the JVM's order is not the addresses'
        a.inlined = inlined_stacks(
            &[
                f(0x40, 1, 22),
                f(0x40, 0, 12),
                f(0x20, 2, 0),
                f(0x20, 1, 21),
                f(0x20, 0, 11),
                f(0x60, 0, 13),
            ],
            &methods,
        );
        let r = [a];
        assert_eq!(
            names(jit_names(&r, 0x1010)),
            [
                ("A.a()".into(), 7),
                ("B.b(int)".into(), 21),
                ("C.c()".into(), 30)
            ]
        );
        assert_eq!(names(jit_names(&r, 0x1020)).len(), 3);
        assert_eq!(
            names(jit_names(&r, 0x1021)),
            [("A.a()".into(), 7), ("B.b(int)".into(), 22)]
        );
        assert_eq!(names(jit_names(&r, 0x1050)), [("A.a()".into(), 7)]);
        // past the last recorded instruction: the compiled method alone
        assert_eq!(names(jit_names(&r, 0x1080)), [("A.a()".into(), 7)]);
        // code two methods held: neither's inlining
        let mut b = code(0x1000, 0x100, 0, "LB;", "b(I)V");
        b.inlined = inlined_stacks(&[f(0x40, 2, 31), f(0x40, 1, 20)], &methods);
        let [a] = r;
        let both = [a, b];
        assert_eq!(
            names(jit_names(&both, 0x1030)),
            [("[jit: A.a() | B.b(int)]".into(), 0)]
        );
    }

    #[test]
    fn reused_jit_code_is_named_by_every_method_that_held_it() {
        // a method freed, another compiled over part of its place, the first compiled again
        let r = [
            code(0x1000, 0x100, 0, "LA;", "a()V"),
            code(0x1080, 0x100, 0, "LB;", "b(I)V"),
            code(0x1000, 0x100, 0, "LA;", "a()V"),
        ];
        assert_eq!(jit_name(&r, 0x1010).unwrap().0, "A.a()");
        assert_eq!(jit_name(&r, 0x1090).unwrap().0, "[jit: A.a() | B.b(int)]");
        assert_eq!(jit_name(&r, 0x1100).unwrap().0, "B.b(int)");
    }

    #[test]
    fn nested_jvm_code_named_by_the_innermost_range() {
        let r = [
            code(0x1000, 0x1000, 1, "", "I2C/C2I adapters"),
            code(0x1100, 0x40, 1, "", "I2C/C2I adapters(0xb)"),
            code(0x3000, 0x40, 1, "", "Interpreter"),
            code(0x3000, 0x40, 0, "LA;", "a()V"),
        ];
        assert_eq!(
            jit_name(&r, 0x1110).unwrap().0,
            "[jvm: I2C/C2I adapters(0xb)]"
        );
        assert_eq!(jit_name(&r, 0x1010).unwrap().0, "[jvm: I2C/C2I adapters]");
        let twice = [
            code(0x1100, 0x40, 1, "", "adapter(0xb)"),
            code(0x1100, 0x40, 1, "", "adapter"),
        ];
        assert_eq!(jit_name(&twice, 0x1100).unwrap().0, "[jvm: adapter(0xb)]");
        // a compiled method where the JVM's own code was: the method
        assert_eq!(jit_name(&r, 0x3010).unwrap().0, "A.a()");
    }
}
