//! The global definitions: strings, clock, system tree, locations, regions, groups and communicators, metrics.
//!
//! Gathered first into [`Defs`] (every string interned on the way, in the order its first user
//! is written), then written: the strings before everything that names them.

use std::collections::HashMap;

use plx_analysis::external::ExternalMetric;
use plx_analysis::{GlobalMerge, TraceLocation};

use super::archive::Archive;
use super::ffi::*;
use super::samples::Contexts;
use super::refs::{region_class, CommRefs, CounterMetrics, ExtraComm, Strings};
use crate::driver::Place;
use crate::ExportError;

/// Timestamps are nanoseconds.
const TIMER_RESOLUTION: u64 = 1_000_000_000;

/// What the event pass leaves for the definitions.
pub(super) struct Written<'a> {
    pub refs: &'a CommRefs,
    pub ctr: &'a CounterMetrics,
    /// Records per location.
    pub counts: &'a [u64],
    /// The first and last time written, ns.
    pub span: (i64, i64),
    /// The external metrics and the records of their location.
    pub external: &'a [ExternalMetric],
    pub external_events: u64,
    /// Was a call cut (the `truncated` attribute is defined)?
    pub cut: bool,
    /// The calling contexts and interrupt generators of the samples written.
    pub contexts: &'a Contexts,
}

/// The locations as the definitions name them, gathered one at a time as the driver hands
/// them over ([`Located::add`]).
#[derive(Default)]
pub(super) struct Located {
    /// The hosts, in the order of their first location.
    hosts: Vec<String>,
    /// Per process, at its first location: (process index, name, index into `hosts`).
    groups: Vec<(usize, String, usize)>,
    /// Per location: its label and process.
    labels: Vec<String>,
    process: Vec<usize>,
    /// MPI: each rank's first location (rank, location), in location order.
    rank_location: Vec<(u32, u64)>,
}

impl Located {
    /// The next location.
    pub fn add(&mut self, place: &Place) {
        let l = place.location;
        let h = host(l);
        let node = match self.hosts.iter().position(|x| x == h) {
            Some(i) => i,
            None => {
                self.hosts.push(h.to_string());
                self.hosts.len() - 1
            }
        };
        if place.first_of_process {
            self.groups.push((l.process, place.process_name(), node));
        }
        if let Some(r) = l.rank {
            if !self.rank_location.iter().any(|&(x, _)| x == r) {
                self.rank_location.push((r, place.index as u64));
            }
        }
        self.labels.push(l.label());
        self.process.push(l.process);
    }
}

/// The definitions, string references resolved.
struct Defs {
    s: Strings,
    /// System tree: the machine's name and class, the nodes' class; a node per host.
    machine: (u32, u32, u32),
    host_names: Vec<u32>,
    /// Location groups: (ref = process index, name, system tree node).
    groups: Vec<(u32, u32, u32)>,
    loc_names: Vec<u32>,
    /// Per region: (name, role, paradigm, file, line).
    regions: Vec<(u32, u8, OTF2_Paradigm, u32, u32)>,
    /// MPI: each rank's first location (rank, location), in rank order.
    rank_location: Vec<(u32, u64)>,
    /// Names of the comm-locations groups (MPI, threads, OpenMP).
    paradigm_names: (u32, u32, u32),
    /// Every communicator in reference order: (name, paradigm, members).
    comms: Vec<(u32, OTF2_Paradigm, Vec<u64>)>,
    /// User event metrics: (event, name).
    user_metrics: Vec<(u32, u32)>,
    empty: u32,
    /// External metrics: (name, unit); their location's name.
    external_names: Vec<(u32, u32)>,
    external_location: u32,
    /// Counter metric members: (name, unit); their description.
    ctr_members: Vec<(u32, u32)>,
    counters_description: u32,
    /// The `truncated` attribute: (name, description).
    truncated: (u32, u32),
    /// The interrupt generators' name.
    sampler: u32,
}

/// Writes the global definitions of the archive.
pub(super) fn write(
    archive: &Archive,
    merge: &GlobalMerge,
    at: &Located,
    w: &Written,
) -> Result<(), ExportError> {
    // SAFETY: the archive is open; the writer is the library's.
    let g = unsafe { OTF2_Archive_GetGlobalDefWriter(archive.raw) };
    if g.is_null() {
        return Err(archive.fail("no global definition writer"));
    }
    let d = Defs::gather(merge, at, w);
    let wr = DefWriter { g, archive };
    wr.clock_and_strings(merge, w, &d)?;
    wr.system_and_locations(&at.process, w, &d)?;
    wr.regions(&d)?;
    wr.calling_contexts(w.contexts, &d)?;
    wr.comms(&d)?;
    wr.metrics(merge, w, &d)?;
    if w.cut {
        wr.truncated_attribute(&d)?;
    }
    Ok(())
}

/// A host's name in the system tree (`localhost` for none).
fn host(l: &TraceLocation) -> &str {
    if l.host.is_empty() {
        "localhost"
    } else {
        &l.host
    }
}

impl Defs {
    fn gather(merge: &GlobalMerge, at: &Located, w: &Written) -> Defs {
        let mut s = Strings::new();
        let machine = (s.id("machine"), s.id("machine"), s.id("node"));
        let host_names = at.hosts.iter().map(|h| s.id(h)).collect();
        // location groups: one per process that has a location, ref = process index
        let groups = (at.groups.iter())
            .map(|(p, name, host)| (*p as u32, s.id(name), 1 + *host as u32))
            .collect();
        let loc_names = at.labels.iter().map(|l| s.id(l)).collect();
        let regions = merge
            .regions()
            .all()
            .iter()
            .map(|r| {
                let (role, paradigm) = region_class(&r.name, r.kind);
                // MPI routines name the file "MPI", as Score-P's do: Scalasca's analyser and
                // Cube classify a region as MPI by it
                let file = if paradigm == OTF2_PARADIGM_MPI {
                    s.id("MPI")
                } else if r.file.is_empty() {
                    OTF2_UNDEFINED_UINT32
                } else {
                    s.id(&r.file)
                };
                (s.id(&r.name), role, paradigm, file, r.line)
            })
            .collect();
        let mut rank_location = at.rank_location.clone();
        rank_location.sort_unstable();
        let mpi_locations = s.id("MPI ranks");
        let threads_name = s.id("threads");
        let mut d = Defs {
            s,
            machine,
            host_names,
            groups,
            loc_names,
            regions,
            rank_location,
            paradigm_names: (mpi_locations, threads_name, 0),
            comms: Vec::new(),
            user_metrics: Vec::new(),
            empty: 0,
            external_names: Vec::new(),
            external_location: 0,
            ctr_members: Vec::new(),
            counters_description: 0,
            truncated: (0, 0),
            sampler: 0,
        };
        if !w.contexts.generators.is_empty() {
            d.sampler = d.s.id("cpu-clock");
        }
        d.gather_comms(merge, &at.process, w.refs);
        d.paradigm_names.2 = d.s.id("OpenMP threads");
        d.gather_metrics(merge, w);
        if w.cut {
            d.truncated = (
                d.s.id("truncated"),
                d.s.id("the call was still open when its process was killed: left at the process's latest event"),
            );
        }
        d
    }

    /// Per communicator, its name and members (indices into its paradigm's comm-locations
    /// group): the experiment's, then those the events needed (`process`: per location, its
    /// process).
    fn gather_comms(&mut self, merge: &GlobalMerge, process: &[usize], refs: &CommRefs) {
        let rank_index: HashMap<u32, u64> = self
            .rank_location
            .iter()
            .enumerate()
            .map(|(i, &(r, _))| (r, i as u64))
            .collect();
        for c in merge.model().comms.all() {
            let members = c
                .members()
                .iter()
                .filter_map(|r| rank_index.get(r).copied())
                .collect();
            self.comms
                .push((self.s.id(&c.describe()), OTF2_PARADIGM_MPI, members));
        }
        let process_name = |s: &Strings, groups: &[(u32, u32, u32)], p: usize| {
            groups
                .iter()
                .find(|g| g.0 == p as u32)
                .map(|g| s.order[g.1 as usize].to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        for x in &refs.extra {
            let def = match *x {
                ExtraComm::Unknown => (
                    self.s.id("unknown communicator (world ranks)"),
                    OTF2_PARADIGM_MPI,
                    (0..self.rank_location.len() as u64).collect(),
                ),
                ExtraComm::OmpTeam(p, region, level, ref members) => {
                    let name = format!(
                        "OpenMP teams of {} (level {level}) in {}",
                        merge.regions().name(region),
                        process_name(&self.s, &self.groups, p)
                    );
                    (self.s.id(&name), OTF2_PARADIGM_OPENMP, members.clone())
                }
                ExtraComm::Threads(p) => {
                    let name = process_name(&self.s, &self.groups, p);
                    let members = (0..process.len() as u64)
                        .filter(|&i| process[i as usize] == p)
                        .collect();
                    let name = self.s.id(&format!("threads of {name}"));
                    (name, OTF2_PARADIGM_PTHREAD, members)
                }
            };
            self.comms.push(def);
        }
    }

    /// Every user event's metric (references dense from 0, as readers want), the external
    /// metrics' and the counters'.
    fn gather_metrics(&mut self, merge: &GlobalMerge, w: &Written) {
        let s = &mut self.s;
        self.user_metrics = (0..merge.user_events().len())
            .map(|i| (i as u32, s.id(&merge.user_events()[i])))
            .collect();
        self.empty = s.id("");
        self.external_names = w
            .external
            .iter()
            .map(|m| (s.id(&m.name), s.id(&m.unit)))
            .collect();
        self.external_location = s.id("external metrics");
        self.ctr_members = w
            .ctr
            .members
            .iter()
            .map(|m| (s.id(m), s.id(crate::counted::unit(m))))
            .collect();
        self.counters_description = s.id("per counted call: the function's inclusive count");
    }
}

/// The global definition writer, its errors named after the archive.
struct DefWriter<'a> {
    g: *mut OTF2_GlobalDefWriter,
    archive: &'a Archive,
}

// SAFETY (every library call below): `g` is the archive's open global definition writer; every
// array passed outlives its call.
impl DefWriter<'_> {
    fn check(&self, code: OTF2_ErrorCode, what: &str) -> Result<(), ExportError> {
        self.archive.check(code, what)
    }

    /// The clock (its offset the merge's origin, the first event, as the other exports'
    /// times, or the first call-stack sample stamped before it), then every string.
    fn clock_and_strings(&self, merge: &GlobalMerge, w: &Written, d: &Defs) -> Result<(), ExportError> {
        let (first, last) = w.span;
        let realtime = merge
            .model()
            .processes
            .iter()
            .filter_map(|p| p.start_realtime_ns)
            .min()
            .unwrap_or(OTF2_UNDEFINED_UINT64);
        let (start, length) = (first.max(0) as u64, (last - first).max(0) as u64);
        self.check(
            unsafe {
                OTF2_GlobalDefWriter_WriteClockProperties(self.g, TIMER_RESOLUTION, start, length, realtime)
            },
            "clock properties",
        )?;
        for (i, c) in d.s.order.iter().enumerate() {
            let code = unsafe { OTF2_GlobalDefWriter_WriteString(self.g, i as u32, c.as_ptr()) };
            self.check(code, "string")?;
        }
        Ok(())
    }

    /// The system tree (the machine, a node per host), a location group per process, a
    /// location per thread, and the external metrics' location.
    /// (`process`: per location, its process.)
    fn system_and_locations(
        &self,
        process: &[usize],
        w: &Written,
        d: &Defs,
    ) -> Result<(), ExportError> {
        let (g, undef) = (self.g, OTF2_UNDEFINED_UINT32);
        let (name, class, node_class) = d.machine;
        self.check(
            unsafe { OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, name, class, undef) },
            "system tree",
        )?;
        for (i, &h) in d.host_names.iter().enumerate() {
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + i as u32, h, node_class, 0) },
                "system tree",
            )?;
        }
        for &(r, name, node) in &d.groups {
            let kind = OTF2_LOCATION_GROUP_TYPE_PROCESS;
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteLocationGroup(g, r, name, kind, node, undef) },
                "location group",
            )?;
        }
        for (i, &p) in process.iter().enumerate() {
            let (name, kind, group) = (d.loc_names[i], OTF2_LOCATION_TYPE_CPU_THREAD, p as u32);
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteLocation(g, i as u64, name, kind, w.counts[i], group) },
                "location",
            )?;
        }
        if !w.external.is_empty() {
            let (name, kind) = (d.external_location, OTF2_LOCATION_TYPE_METRIC);
            let group = process.first().map_or(0, |&p| p as u32);
            let at = process.len() as u64;
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteLocation(g, at, name, kind, w.external_events, group) },
                "location",
            )?;
        }
        Ok(())
    }

    /// The samples' interrupt generators (the CPU-time period each) and calling contexts.
    fn calling_contexts(&self, c: &Contexts, d: &Defs) -> Result<(), ExportError> {
        for (i, &period) in c.generators.iter().enumerate() {
            let (mode, base) = (OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL);
            // SAFETY: the writer is open; the name was written with the strings.
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteInterruptGenerator(self.g, i as u32, d.sampler, mode, base, -9, period) },
                "an interrupt generator",
            )?;
        }
        for (i, &(region, parent)) in c.contexts.iter().enumerate() {
            let source = OTF2_UNDEFINED_UINT32;
            // SAFETY: the writer is open; the region and parent are defined before it.
            self.check(
                unsafe { OTF2_GlobalDefWriter_WriteCallingContext(self.g, i as u32, region, source, parent) },
                "a calling context",
            )?;
        }
        Ok(())
    }

    fn regions(&self, d: &Defs) -> Result<(), ExportError> {
        for (i, &(name, role, paradigm, file, line)) in d.regions.iter().enumerate() {
            let code = unsafe {
                OTF2_GlobalDefWriter_WriteRegion(
                    self.g,
                    i as u32,
                    name,
                    name,
                    d.empty,
                    role,
                    paradigm,
                    OTF2_REGION_FLAG_NONE,
                    file,
                    line,
                    line,
                )
            };
            self.check(code, "region")?;
        }
        Ok(())
    }

    /// A group of `members` (`kind`: comm-locations, or a communicator's comm group).
    fn group(
        &self,
        r: u32,
        name: u32,
        kind: u8,
        paradigm: OTF2_Paradigm,
        members: &[u64],
    ) -> Result<(), ExportError> {
        let code = unsafe {
            OTF2_GlobalDefWriter_WriteGroup(
                self.g,
                r,
                name,
                kind,
                paradigm,
                OTF2_GROUP_FLAG_NONE,
                members.len() as u32,
                members.as_ptr(),
            )
        };
        self.check(code, "group")
    }

    /// A comm-locations group per paradigm (MPI: each rank's first location, in rank order;
    /// threads and OpenMP: every location), then per communicator a group of members (indices
    /// into its paradigm's) and the communicator.
    fn comms(&self, d: &Defs) -> Result<(), ExportError> {
        let uses = |p| d.comms.iter().any(|c| c.1 == p);
        let every: Vec<u64> = (0..d.loc_names.len() as u64).collect();
        let mpi: Vec<u64> = d.rank_location.iter().map(|&(_, l)| l).collect();
        let (mpi_name, threads_name, omp_name) = d.paradigm_names;
        let mut group = 0u32;
        for (paradigm, name, members) in [
            (OTF2_PARADIGM_MPI, mpi_name, &mpi),
            (OTF2_PARADIGM_PTHREAD, threads_name, &every),
            (OTF2_PARADIGM_OPENMP, omp_name, &every),
        ] {
            if uses(paradigm) {
                self.group(group, name, OTF2_GROUP_TYPE_COMM_LOCATIONS, paradigm, members)?;
                group += 1;
            }
        }
        for (c, (name, paradigm, members)) in d.comms.iter().enumerate() {
            self.group(group, *name, OTF2_GROUP_TYPE_COMM_GROUP, *paradigm, members)?;
            let code = unsafe {
                OTF2_GlobalDefWriter_WriteComm(
                    self.g,
                    c as u32,
                    *name,
                    group,
                    OTF2_UNDEFINED_UINT32,
                    OTF2_COMM_FLAG_NONE,
                )
            };
            self.check(code, "communicator")?;
            group += 1;
        }
        Ok(())
    }

    /// A metric member.
    fn member(
        &self,
        r: u32,
        (name, description, unit): (u32, u32, u32),
        (kind, mode, ty): (u8, u8, OTF2_Type),
    ) -> Result<(), ExportError> {
        let code = unsafe {
            OTF2_GlobalDefWriter_WriteMetricMember(
                self.g,
                r,
                name,
                description,
                kind,
                mode,
                ty,
                OTF2_BASE_DECIMAL,
                0,
                unit,
            )
        };
        self.check(code, "metric member")
    }

    /// A metric class of `members`.
    fn class(&self, r: u32, members: &[u32], occurrence: u8) -> Result<(), ExportError> {
        let code = unsafe {
            OTF2_GlobalDefWriter_WriteMetricClass(
                self.g,
                r,
                members.len() as u8,
                members.as_ptr(),
                occurrence,
                OTF2_RECORDER_KIND_ABSTRACT,
            )
        };
        self.check(code, "metric class")
    }

    /// The counters' members and classes (docs/exports/otf2.md), then a member and a class per
    /// user event, then per external metric.
    fn metrics(&self, merge: &GlobalMerge, w: &Written, d: &Defs) -> Result<(), ExportError> {
        let (nm, nc) = (w.ctr.members.len() as u32, w.ctr.classes.len() as u32);
        let counter = (OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64);
        for (m, &(name, unit)) in d.ctr_members.iter().enumerate() {
            self.member(m as u32, (name, d.counters_description, unit), counter)?;
        }
        for (c, members) in w.ctr.classes.iter().enumerate() {
            self.class(c as u32, members, OTF2_METRIC_SYNCHRONOUS)?;
        }
        let user = (OTF2_METRIC_TYPE_USER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE);
        for &(m, name) in &d.user_metrics {
            self.member(nm + m, (name, d.empty, d.empty), user)?;
            self.class(nc + m, &[nm + m], OTF2_METRIC_SYNCHRONOUS_STRICT)?;
        }
        let base = merge.user_events().len() as u32;
        for (k, (m, &(name, unit))) in w.external.iter().zip(&d.external_names).enumerate() {
            let (member, id) = (nm + base + k as u32, nc + base + k as u32);
            let mode = match m.mode {
                plx_format::MetricMode::Absolute => OTF2_METRIC_ABSOLUTE_POINT,
                plx_format::MetricMode::Cumulative => OTF2_METRIC_ACCUMULATED_START,
            };
            self.member(member, (name, d.empty, unit), (OTF2_METRIC_TYPE_OTHER, mode, OTF2_TYPE_DOUBLE))?;
            self.class(id, &[member], OTF2_METRIC_SYNCHRONOUS_STRICT)?;
        }
        Ok(())
    }

    /// The attribute a cut call's leave carries ([`super::events::TRUNCATED`]).
    fn truncated_attribute(&self, d: &Defs) -> Result<(), ExportError> {
        let (name, description) = d.truncated;
        let code = unsafe {
            OTF2_GlobalDefWriter_WriteAttribute(
                self.g,
                super::events::TRUNCATED,
                name,
                description,
                OTF2_TYPE_UINT8,
            )
        };
        self.check(code, "attribute")
    }
}
