//! `otf2`: an OTF2 archive (Score-P's trace format, for Vampir, Scalasca, otf2-print), written by the official OTF2 C library.
//!
//! The merged stream is written event by event through the library's event writers (one per
//! location), then the definitions (docs/exports/otf2.md has the mapping). The archive is laid
//! out as Score-P lays it out: `OUT/traces.otf2` (the anchor file), `OUT/traces.def` (global
//! definitions) and `OUT/traces/` (per location `N.evt` and `N.def`).

mod ffi;

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use plx_analysis::{EventKind, GlobalMerge};
use plx_format::{RegionKind, SyncKind};

use crate::nesting::Stacks;
use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Target};
use ffi::*;

/// The `otf2` format (docs/exports/otf2.md).
pub struct Otf2;

/// Timestamps are nanoseconds.
const TIMER_RESOLUTION: u64 = 1_000_000_000;

/// The archive's name: `traces.otf2`, `traces.def`, `traces/`, as Score-P names them.
const ARCHIVE_NAME: &str = "traces";

impl Exporter for Otf2 {
    fn name(&self) -> &'static str {
        "otf2"
    }

    fn about(&self) -> &'static str {
        "OTF2 archive (Vampir, Scalasca, otf2-print), written with the official OTF2 library"
    }

    fn output(&self) -> OutputKind {
        OutputKind::Directory
    }

    fn needs_sources(&self) -> bool {
        true
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = match target {
            Target::Directory(d) => d,
            Target::Stream(_) => {
                return Err(ExportError::Usage(
                    "the otf2 format writes a directory: give one with -o DIR".into(),
                ))
            }
        };
        write_archive(input, out)
    }
}

/// An open archive, closed when dropped (on an error too, so the library frees its buffers).
struct Archive {
    raw: *mut OTF2_Archive,
    out: PathBuf,
}

impl Archive {
    fn open(out: &Path) -> Result<Archive, ExportError> {
        // the library will not write over an archive: remove what an earlier export left
        for name in ["traces", "traces.otf2", "traces.def"] {
            let p = out.join(name);
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else if p.exists() {
                std::fs::remove_file(&p)
            } else {
                Ok(())
            };
            r.map_err(|e| ExportError::Io(p.clone(), e))?;
        }
        let path = cstring(&out.to_string_lossy());
        let name = cstring(ARCHIVE_NAME);
        // SAFETY: both strings outlive the call; the library copies them.
        let raw = unsafe {
            OTF2_Archive_Open(
                path.as_ptr(),
                name.as_ptr(),
                OTF2_FILEMODE_WRITE,
                OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                OTF2_CHUNK_SIZE_MIN,
                OTF2_SUBSTRATE_POSIX,
                OTF2_COMPRESSION_NONE,
            )
        };
        if raw.is_null() {
            return Err(ExportError::Io(
                out.to_path_buf(),
                std::io::Error::other("the OTF2 library could not create the archive"),
            ));
        }
        let a = Archive {
            raw,
            out: out.to_path_buf(),
        };
        static FLUSH: OTF2_FlushCallbacks = OTF2_FlushCallbacks {
            otf2_pre_flush: Some(pre_flush),
            otf2_post_flush: None,
        };
        static MEMORY: OTF2_MemoryCallbacks = OTF2_MemoryCallbacks {
            otf2_allocate: Some(allocate_chunk),
            otf2_free_all: Some(free_chunks),
        };
        let creator = cstring(concat!("Parallax plx ", env!("CARGO_PKG_VERSION")));
        // SAFETY: `raw` is open; FLUSH is static; the creator is copied.
        unsafe {
            a.check(
                OTF2_Archive_SetFlushCallbacks(raw, &FLUSH, ptr::null_mut()),
                "flush callbacks",
            )?;
            a.check(
                OTF2_Archive_SetMemoryCallbacks(raw, &MEMORY, ptr::null_mut()),
                "memory callbacks",
            )?;
            a.check(
                OTF2_Archive_SetSerialCollectiveCallbacks(raw),
                "collective callbacks",
            )?;
            a.check(OTF2_Archive_SetCreator(raw, creator.as_ptr()), "creator")?;
            a.check(OTF2_Archive_OpenEvtFiles(raw), "event files")?;
        }
        Ok(a)
    }

    /// An error about the archive.
    fn fail(&self, what: &str) -> ExportError {
        ExportError::Io(
            self.out.clone(),
            std::io::Error::other(format!("OTF2 library: {what}")),
        )
    }

    /// An error naming the library's code unless `code` is success.
    fn check(&self, code: OTF2_ErrorCode, what: &str) -> Result<(), ExportError> {
        if code == OTF2_SUCCESS {
            return Ok(());
        }
        // SAFETY: the library returns static strings for every code.
        let (name, desc) = unsafe {
            let n = OTF2_Error_GetName(code);
            let d = OTF2_Error_GetDescription(code);
            let s = |p: *const std::os::raw::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            (s(n), s(d))
        };
        Err(ExportError::Io(
            self.out.clone(),
            std::io::Error::other(format!("OTF2 library: {what}: {name} ({desc})")),
        ))
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once here.
        unsafe {
            OTF2_Archive_Close(self.raw);
        }
    }
}

/// Every full buffer is written to its file.
extern "C" fn pre_flush(
    _user: *mut std::os::raw::c_void,
    _file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    _caller: *mut std::os::raw::c_void,
    _last: bool,
) -> OTF2_FlushType {
    OTF2_FLUSH
}

/// Chunks an event writer holds before the library writes them to its file: memory stays
/// bounded per location (the library's default pool is 128 MiB per writer, kept until closed).
const EVENT_CHUNKS: usize = 1;

/// The chunks of one writer's buffer (`perBufferData`): pointer and size of each.
type Chunks = Vec<(*mut u8, usize)>;

/// A chunk for a writer; for an event writer none past [`EVENT_CHUNKS`], upon which the library
/// flushes the buffer to its file and frees its chunks ([`free_chunks`]).
extern "C" fn allocate_chunk(
    _user: *mut std::os::raw::c_void,
    file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    per_buffer: *mut *mut std::os::raw::c_void,
    chunk_size: u64,
) -> *mut std::os::raw::c_void {
    // SAFETY: the library hands the same writable slot for every call of one buffer; it holds
    // null or the Chunks this function boxed.
    unsafe {
        if (*per_buffer).is_null() {
            *per_buffer = Box::into_raw(Box::<Chunks>::default()).cast();
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        if file_type == OTF2_FILETYPE_EVENTS && chunks.len() >= EVENT_CHUNKS {
            return ptr::null_mut();
        }
        let Ok(layout) = std::alloc::Layout::from_size_align(chunk_size as usize, 64) else {
            return ptr::null_mut();
        };
        let p = std::alloc::alloc(layout);
        if !p.is_null() {
            chunks.push((p, chunk_size as usize));
        }
        p.cast()
    }
}

/// Frees every chunk of a buffer (and, at the last call, its list).
extern "C" fn free_chunks(
    _user: *mut std::os::raw::c_void,
    _file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    per_buffer: *mut *mut std::os::raw::c_void,
    last: bool,
) {
    // SAFETY: as in allocate_chunk; each chunk was allocated there with this layout.
    unsafe {
        if (*per_buffer).is_null() {
            return;
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        for (p, size) in chunks.drain(..) {
            std::alloc::dealloc(p, std::alloc::Layout::from_size_align_unchecked(size, 64));
        }
        if last {
            drop(Box::from_raw((*per_buffer).cast::<Chunks>()));
            *per_buffer = ptr::null_mut();
        }
    }
}

/// A C string of `s` (an interior NUL, impossible in the experiment's names, becomes `?`).
fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).expect("no NUL left")
}

/// The string definitions, each written once.
struct Strings {
    ids: HashMap<String, u32>,
    order: Vec<CString>,
}

impl Strings {
    fn new() -> Strings {
        Strings {
            ids: HashMap::new(),
            order: Vec::new(),
        }
    }

    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.order.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.order.push(cstring(s));
        i
    }
}

/// (collective operation, region role) of an MPI routine, from its name without `MPI_`
/// (nonblocking `MPI_Ibcast` as `MPI_Bcast`).
fn collective_of(routine: &str) -> Option<(u8, u8)> {
    let base = routine.strip_prefix("MPI_")?;
    let find = |b: &str| -> Option<(u8, u8)> {
        Some(match b {
            "Barrier" => (OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER),
            "Bcast" => (OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Scatter" => (OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Scatterv" => (OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL),
            "Gather" => (OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Gatherv" => (OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Reduce" => (OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE),
            "Allgather" => (OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Allgatherv" => (OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Allreduce" => (OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoall" => (OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoallv" => (OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Alltoallw" => (OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Reduce_scatter" => (
                OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
                OTF2_REGION_ROLE_COLL_ALL2ALL,
            ),
            "Reduce_scatter_block" => (
                OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
                OTF2_REGION_ROLE_COLL_ALL2ALL,
            ),
            "Scan" => (OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_ALL2ALL),
            "Exscan" => (OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_ALL2ALL),
            _ => return None,
        })
    };
    // nonblocking: MPI_Ibcast, MPI_Iallreduce (the blocking name capitalised after the I)
    find(base).or_else(|| {
        let rest = base.strip_prefix('I')?;
        let mut c = rest.chars();
        let first = c.next()?.to_ascii_uppercase();
        find(&format!("{first}{}", c.as_str()))
    })
}

/// Point-to-point MPI routines (sends, receives, their completions and probes).
fn is_point_to_point(routine: &str) -> bool {
    const P2P: &[&str] = &[
        "Send", "Recv", "Isend", "Irecv", "Bsend", "Ssend", "Rsend", "Ibsend", "Issend", "Irsend",
        "Sendrecv", "Wait", "Test", "Probe", "Iprobe", "Start", "Mprobe", "Mrecv", "Imrecv",
        "Improbe",
    ];
    routine
        .strip_prefix("MPI_")
        .is_some_and(|b| P2P.iter().any(|p| b.starts_with(p)))
}

/// (role, paradigm) of a region.
fn region_class(name: &str, kind: RegionKind) -> (u8, OTF2_Paradigm) {
    match kind {
        RegionKind::Mpi => {
            let role = match collective_of(name) {
                Some((_, role)) => role,
                None if is_point_to_point(name) => OTF2_REGION_ROLE_POINT2POINT,
                None => OTF2_REGION_ROLE_FUNCTION,
            };
            (role, OTF2_PARADIGM_MPI)
        }
        RegionKind::User | RegionKind::Phase => (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER),
        RegionKind::Runtime => (
            OTF2_REGION_ROLE_FUNCTION,
            OTF2_PARADIGM_MEASUREMENT_SYSTEM,
        ),
        _ => (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER),
    }
}

/// Communicator references: the experiment's communicators keep their index; the others (one
/// for events without a communicator definition, a thread contingent per process) follow in
/// the order of their first use, so that the references are dense as readers require.
struct CommRefs {
    /// Per communicator: world rank → rank in it.
    local: Vec<HashMap<u32, u32>>,
    /// The references after the experiment's communicators, in order.
    extra: Vec<ExtraComm>,
    unknown: Option<u32>,
    threads: Vec<Option<u32>>,
    /// OpenMP teams: (process, parallel region, level) → reference.
    omp: HashMap<(usize, u32, u32), u32>,
}

/// A communicator the experiment does not define.
#[derive(Clone)]
enum ExtraComm {
    /// "unknown communicator (world ranks)".
    Unknown,
    /// The threads of a process (ThreadWait and ThreadEnd name it).
    Threads(usize),
    /// The OpenMP teams of a parallel region at a nesting level in a process: (process,
    /// region, level, the locations that joined one).
    OmpTeam(usize, u32, u32, Vec<u64>),
}

impl CommRefs {
    fn next(&mut self, c: ExtraComm) -> u32 {
        self.extra.push(c);
        (self.local.len() + self.extra.len() - 1) as u32
    }

    /// The team communicator of `region` at `level` in `process`, `location` one of its members.
    fn omp_team(&mut self, process: usize, region: u32, level: u32, location: u64) -> u32 {
        let r = match self.omp.get(&(process, region, level)) {
            Some(&r) => r,
            None => {
                let r = self.next(ExtraComm::OmpTeam(process, region, level, Vec::new()));
                self.omp.insert((process, region, level), r);
                r
            }
        };
        if let ExtraComm::OmpTeam(.., members) = &mut self.extra[r as usize - self.local.len()] {
            if let Err(i) = members.binary_search(&location) {
                members.insert(i, location);
            }
        }
        r
    }

    fn thread_contingent(&mut self, process: usize) -> u32 {
        match self.threads[process] {
            Some(r) => r,
            None => {
                let r = self.next(ExtraComm::Threads(process));
                self.threads[process] = Some(r);
                r
            }
        }
    }

    /// (communicator ref, the rank of world rank `r` in it).
    fn comm(&mut self, comm: Option<u32>, r: u32) -> (u32, u32) {
        match comm {
            Some(c) if (c as usize) < self.local.len() => {
                (c, self.local[c as usize].get(&r).copied().unwrap_or(r))
            }
            _ => {
                let u = match self.unknown {
                    Some(u) => u,
                    None => {
                        let u = self.next(ExtraComm::Unknown);
                        self.unknown = Some(u);
                        u
                    }
                };
                (u, r)
            }
        }
    }
}

/// Counter metrics: a member per event name, a class per list of events a counted call carries
/// (docs/exports/otf2.md). They come first in their reference spaces (members, and metrics),
/// before the user events' and the external metrics'.
#[derive(Default)]
struct CounterMetrics {
    /// Member names, by member reference.
    members: Vec<String>,
    /// Per class (metric reference): its members.
    classes: Vec<Vec<u32>>,
    /// (process, set) → (class, the set's event indices the class's members are).
    of: HashMap<(usize, u32), (u32, Vec<usize>)>,
}

impl CounterMetrics {
    fn new(model: &plx_analysis::Model) -> CounterMetrics {
        let mut m = CounterMetrics::default();
        for (p, pm) in model.processes.iter().enumerate() {
            for s in pm.counters.sets.values().filter(|s| s.context.is_some()) {
                let events = crate::counted::traced_events(model, p, s.set);
                if events.is_empty() {
                    continue;
                }
                let members: Vec<u32> = events
                    .iter()
                    .map(|&(_, name)| match m.members.iter().position(|x| x == name) {
                        Some(i) => i as u32,
                        None => {
                            m.members.push(name.to_string());
                            m.members.len() as u32 - 1
                        }
                    })
                    .collect();
                let class = match m.classes.iter().position(|c| *c == members) {
                    Some(c) => c as u32,
                    None => {
                        m.classes.push(members);
                        m.classes.len() as u32 - 1
                    }
                };
                let idx = events.iter().map(|&(i, _)| i).collect();
                m.of.insert((p, s.set), (class, idx));
            }
        }
        m
    }
}

/// Writes the archive of `input`'s merged trace into `out` (which exists).
fn write_archive(input: &ExportInput, out: &Path) -> Result<ExportSummary, ExportError> {
    let merge = input.merge_with_counters()?;
    let ctr = CounterMetrics::new(merge.model());
    let ctr_classes = ctr.classes.len() as u32;
    let archive = Archive::open(out)?;
    let a = archive.raw;
    let nloc = merge.locations().len();
    let mut writers = Vec::with_capacity(nloc);
    for li in 0..nloc {
        // SAFETY: the event files are open; the library owns the writer until closed.
        let w = unsafe { OTF2_Archive_GetEvtWriter(a, li as u64) };
        if w.is_null() {
            return Err(archive.fail("no event writer"));
        }
        writers.push(w);
    }
    let process_of: Vec<usize> = merge.locations().iter().map(|l| l.process).collect();
    let comms = merge.model().comms.all();
    let mut refs = CommRefs {
        local: comms
            .iter()
            .map(|c| {
                // an intercommunicator is written as the communicator of both its groups
                // (docs/exports/otf2.md): its peers are ranks of that group
                c.members()
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| (r, i as u32))
                    .collect()
            })
            .collect(),
        extra: Vec::new(),
        unknown: None,
        threads: vec![None; merge.model().processes.len()],
        omp: HashMap::new(),
    };
    // OpenMP: per location, the team joined whose parallel region's enter is to come, and the
    // teams open (the stack depth of their region's frame, the team, whether it forked it)
    let mut omp_pending: Vec<Option<(u32, u32, bool)>> = vec![None; nloc];
    let mut omp_open: Vec<Vec<(usize, u32, bool)>> = vec![Vec::new(); nloc];
    // collective operation per region (looked up once per region)
    let mut ops: Vec<Option<Option<u8>>> = Vec::new();
    // lock acquisitions so far per (process, object); the order of the one each location holds
    let mut lock_order: HashMap<(usize, u32), u32> = HashMap::new();
    let mut held: HashMap<(usize, u32), u32> = HashMap::new();
    let mut metrics_used: Vec<bool> = Vec::new();
    let mut stacks = Stacks::new(nloc);
    let mut closed = Vec::new();
    let mut counts = vec![0u64; nloc];
    let (mut first, mut last) = (None::<i64>, 0i64);
    let null = ptr::null_mut();
    let mut n = 0u64;
    // a matched receive's sender: its location's world rank
    let sender_rank: Vec<Option<u32>> = merge.locations().iter().map(|l| l.rank).collect();
    // each location's last event, ns: where the regions still open after it are left
    let mut own_last = vec![None::<i64>; nloc];
    let locations = merge.locations().to_vec();
    let mut cut_warnings = Vec::new();
    let model = merge.model();

    // writing runs beside the merge (on its own thread with more than one engine thread)
    let (merge, written) = merge.feed(None, |feed| -> Result<(), ExportError> {
    while let Some(e) = feed.next_event() {
        let regions = feed.regions();
        let li = e.location as usize;
        let w = writers[li];
        let t = e.time_ns.max(0) as u64;
        own_last[li] = Some(e.time_ns);
        // SAFETY (every call below): `w` is an open event writer of this archive.
        let (code, records) = unsafe {
            match e.kind {
                EventKind::Enter { region } => {
                    stacks.enter(e.location, region);
                    if let Some((r, team, forked)) = omp_pending[li] {
                        if r == region {
                            omp_open[li].push((stacks.depth(e.location), team, forked));
                            omp_pending[li] = None;
                        }
                    }
                    (OTF2_EvtWriter_Enter(w, null, t, region), 1)
                }
                EventKind::Exit { region } => {
                    closed.clear();
                    stacks.exit(e.location, region, &mut closed);
                    let mut code = OTF2_EvtWriter_Leave(w, null, t, region);
                    let mut records = 1;
                    // a team ends with its region's frame: the thread leaves it, and the one
                    // that forked it joins the team
                    while let Some(&(d, team, forked)) = omp_open[li].last() {
                        if code != OTF2_SUCCESS || d <= stacks.depth(e.location) {
                            break;
                        }
                        omp_open[li].pop();
                        code = OTF2_EvtWriter_ThreadTeamEnd(w, null, t, team);
                        records += 1;
                        if forked && code == OTF2_SUCCESS {
                            code = OTF2_EvtWriter_ThreadJoin(w, null, t, OTF2_PARADIGM_OPENMP);
                            records += 1;
                        }
                    }
                    (code, records)
                }
                EventKind::OmpTeam {
                    region,
                    level,
                    team_size,
                    thread_num,
                } => {
                    let team = refs.omp_team(process_of[li], region, level, li as u64);
                    let forked = thread_num == 0;
                    omp_pending[li] = Some((region, team, forked));
                    let mut code = OTF2_SUCCESS;
                    let mut records = 0;
                    if forked {
                        code = OTF2_EvtWriter_ThreadFork(w, null, t, OTF2_PARADIGM_OPENMP, team_size);
                        records += 1;
                    }
                    if code == OTF2_SUCCESS {
                        code = OTF2_EvtWriter_ThreadTeamBegin(w, null, t, team);
                        records += 1;
                    }
                    (code, records)
                }
                EventKind::Send {
                    peer,
                    tag,
                    bytes,
                    comm,
                    ..
                } => {
                    let (c, to) = refs.comm(comm, peer);
                    (
                        OTF2_EvtWriter_MpiSend(w, null, t, to, c, tag as u32, bytes),
                        1,
                    )
                }
                EventKind::Recv {
                    peer,
                    tag,
                    bytes,
                    comm,
                    message,
                } => {
                    // the sender's world rank: the matched send's location's, else the record's
                    let from = message
                        .and_then(|m| sender_rank[m.sender as usize])
                        .unwrap_or(peer);
                    let (c, from) = refs.comm(comm, from);
                    (
                        OTF2_EvtWriter_MpiRecv(w, null, t, from, c, tag as u32, bytes),
                        1,
                    )
                }
                EventKind::Collective {
                    comm,
                    root,
                    bytes_sent,
                    bytes_recv,
                } => {
                    let op = stacks.top(e.location).and_then(|r| {
                        let r = r as usize;
                        if ops.len() <= r {
                            ops.resize(r + 1, None);
                        }
                        *ops[r].get_or_insert_with(|| {
                            collective_of(regions.name(r as u32)).map(|(op, _)| op)
                        })
                    });
                    let (c, root) = match root {
                        Some(r) => refs.comm(comm, r),
                        None => (refs.comm(comm, 0).0, OTF2_COLLECTIVE_ROOT_NONE),
                    };
                    let b = OTF2_EvtWriter_MpiCollectiveBegin(w, null, t);
                    let code = if b != OTF2_SUCCESS {
                        b
                    } else {
                        OTF2_EvtWriter_MpiCollectiveEnd(
                            w,
                            null,
                            t,
                            op.unwrap_or(OTF2_COLLECTIVE_OP_BARRIER),
                            c,
                            root,
                            bytes_sent,
                            bytes_recv,
                        )
                    };
                    (code, 2)
                }
                EventKind::User { event, value } => {
                    let m = event as usize;
                    if metrics_used.len() <= m {
                        metrics_used.resize(m + 1, false);
                    }
                    metrics_used[m] = true;
                    let v = OTF2_MetricValue {
                        floating_point: value,
                    };
                    (
                        OTF2_EvtWriter_Metric(
                            w,
                            null,
                            t,
                            ctr_classes + event,
                            1,
                            &OTF2_TYPE_DOUBLE,
                            &v,
                        ),
                        1,
                    )
                }
                EventKind::Counted { set, values, .. } => match ctr.of.get(&(process_of[li], set)) {
                    Some((class, idx)) => {
                        let types = vec![OTF2_TYPE_UINT64; idx.len()];
                        let vs: Vec<OTF2_MetricValue> = idx
                            .iter()
                            .map(|&i| OTF2_MetricValue {
                                unsigned_int: values[i],
                            })
                            .collect();
                        (
                            OTF2_EvtWriter_Metric(
                                w,
                                null,
                                t,
                                *class,
                                idx.len() as u8,
                                types.as_ptr(),
                                vs.as_ptr(),
                            ),
                            1,
                        )
                    }
                    None => (OTF2_SUCCESS, 0),
                },
                EventKind::Acquire { object, kind, .. } => match SyncKind::from_u8(kind) {
                    SyncKind::Mutex | SyncKind::RwLock | SyncKind::Spin => {
                        let o = lock_order.entry((process_of[li], object)).or_insert(0);
                        *o += 1;
                        held.insert((li, object), *o);
                        (
                            OTF2_EvtWriter_ThreadAcquireLock(
                                w,
                                null,
                                t,
                                OTF2_PARADIGM_PTHREAD,
                                object,
                                held[&(li, object)],
                            ),
                            1,
                        )
                    }
                    SyncKind::Thread => {
                        let c = refs.thread_contingent(process_of[li]);
                        (OTF2_EvtWriter_ThreadWait(w, null, t, c, object as u64), 1)
                    }
                    _ => (OTF2_SUCCESS, 0),
                },
                EventKind::Release { object, kind } => match SyncKind::from_u8(kind) {
                    SyncKind::Mutex | SyncKind::RwLock | SyncKind::Spin => {
                        // the acquisition this location holds (another thread may have taken
                        // the lock since: the merge orders an unlock after the next lock when
                        // their clocks say so)
                        let o = held.remove(&(li, object)).unwrap_or_else(|| {
                            lock_order
                                .get(&(process_of[li], object))
                                .copied()
                                .unwrap_or(0)
                        });
                        (
                            OTF2_EvtWriter_ThreadReleaseLock(
                                w,
                                null,
                                t,
                                OTF2_PARADIGM_PTHREAD,
                                object,
                                o,
                            ),
                            1,
                        )
                    }
                    SyncKind::Thread => {
                        let c = refs.thread_contingent(process_of[li]);
                        (OTF2_EvtWriter_ThreadEnd(w, null, t, c, object as u64), 1)
                    }
                    _ => (OTF2_SUCCESS, 0),
                },
                EventKind::StreamSend { .. } | EventKind::StreamRecv { .. } => (OTF2_SUCCESS, 0),
            }
        };
        archive.check(code, "writing an event")?;
        if records > 0 {
            counts[li] += records;
            n += 1;
            first.get_or_insert(e.time_ns);
            last = e.time_ns;
        }
    }
    // regions still open are left at their location's last event, or, in a killed process,
    // at the process's latest event (cut there)
    let killed = plx_analysis::merge::killed_ends(model, &locations, &own_last);
    for li in 0..nloc {
        let Some(own) = own_last[li] else { continue };
        let t = killed[li].map_or(own, |k| k.max(own));
        let open = stacks.close_all(li as u32);
        if killed[li].is_some() && !open.is_empty() {
            let l = &locations[li];
            cut_warnings.push(plx_analysis::rebuild::killed_warning(
                &model.processes[l.process].path,
                l.thread,
                open.len(),
            ));
        }
        for r in open {
            // SAFETY: the location's writer is open.
            let code = unsafe { OTF2_EvtWriter_Leave(writers[li], null, t.max(0) as u64, r) };
            archive.check(code, "writing an event")?;
            counts[li] += 1;
            n += 1;
            last = last.max(t);
        }
    }
    Ok(())
    });
    written?;
    // external metrics (plx run --monitor, plx import): one metric location, after the threads
    let (files, unread) = plx_format::read_metric_files(&input.experiment.dir);
    let external =
        plx_analysis::external::external_metrics(&input.model, &files, Some(merge.origin_ns()));
    let mut external_events = 0u64;
    if !external.is_empty() {
        // SAFETY: the event files are open.
        let w = unsafe { OTF2_Archive_GetEvtWriter(a, nloc as u64) };
        if w.is_null() {
            return Err(archive.fail("no event writer for the external metrics"));
        }
        let base = ctr_classes + merge.user_events().len() as u32;
        let mut all: Vec<(u64, u32, f64)> = external
            .iter()
            .enumerate()
            .flat_map(|(k, m)| {
                m.samples
                    .iter()
                    .map(move |&(t, v)| (t.max(0.0).round() as u64, base + k as u32, v))
            })
            .collect();
        all.sort_by_key(|x| (x.0, x.1));
        for (t, metric, v) in all {
            let v = OTF2_MetricValue { floating_point: v };
            // SAFETY: `w` is open; the value and type outlive the call.
            let code =
                unsafe { OTF2_EvtWriter_Metric(w, null, t, metric, 1, &OTF2_TYPE_DOUBLE, &v) };
            archive.check(code, "writing an external metric")?;
            external_events += 1;
        }
        writers.push(w);
    }
    for w in writers {
        // SAFETY: each writer is closed once, before its file container.
        archive.check(unsafe { OTF2_Archive_CloseEvtWriter(a, w) }, "closing events")?;
    }
    // SAFETY: every writer of the event files is closed.
    archive.check(unsafe { OTF2_Archive_CloseEvtFiles(a) }, "event files")?;
    // an empty local definition file per location, as Score-P writes them
    // SAFETY: the definition files are opened, each writer closed before them.
    unsafe {
        archive.check(OTF2_Archive_OpenDefFiles(a), "definition files")?;
        for li in 0..nloc {
            let d = OTF2_Archive_GetDefWriter(a, li as u64);
            if !d.is_null() {
                archive.check(OTF2_Archive_CloseDefWriter(a, d), "local definitions")?;
            }
        }
        archive.check(OTF2_Archive_CloseDefFiles(a), "definition files")?;
    }
    let origin = merge.origin_ns();
    // the clock's offset is the merge's origin (the first event), as the other exports' times
    let span = (origin, last.max(first.unwrap_or(origin)));
    let external = (external, external_events);
    write_definitions(
        &archive,
        &merge,
        &refs,
        (&ctr, &metrics_used),
        &counts,
        span,
        &external,
    )?;
    let summary = ExportSummary {
        records: n,
        files: Vec::new(),
        clock: merge.clock_report(),
        warnings: merge
            .warnings()
            .iter()
            .cloned()
            .chain(cut_warnings)
            .chain(unread)
            .collect(),
    };
    drop(archive);
    Ok(summary)
}

/// The global definitions: strings, clock, system tree, locations, regions, groups and
/// communicators, metrics.
fn write_definitions(
    archive: &Archive,
    merge: &GlobalMerge,
    refs: &CommRefs,
    (ctr, metrics_used): (&CounterMetrics, &[bool]),
    counts: &[u64],
    (first, last): (i64, i64),
    (external, external_events): &(Vec<plx_analysis::external::ExternalMetric>, u64),
) -> Result<(), ExportError> {
    // SAFETY: the archive is open; the writer is the library's.
    let g = unsafe { OTF2_Archive_GetGlobalDefWriter(archive.raw) };
    if g.is_null() {
        return Err(archive.fail("no global definition writer"));
    }
    let model = merge.model();
    let locations = merge.locations();
    let mut s = Strings::new();
    let undef = OTF2_UNDEFINED_UINT32;

    // the definitions, recorded first (strings interned on the way), written after the strings
    let machine_name = s.id("machine");
    let machine_class = s.id("machine");
    let node_class = s.id("node");
    let mut hosts: Vec<&str> = Vec::new();
    let mut host_names = Vec::new();
    for l in locations {
        let h = if l.host.is_empty() { "localhost" } else { &l.host };
        if !hosts.contains(&h) {
            hosts.push(h);
            host_names.push(s.id(h));
        }
    }
    let node_of = |host: &str| {
        let h = if host.is_empty() { "localhost" } else { host };
        1 + hosts.iter().position(|&x| x == h).unwrap_or(0) as u32
    };
    // location groups: one per process that has a location, ref = process index
    let mut groups: Vec<(u32, u32, u32)> = Vec::new(); // (ref, name, node)
    let mut seen = vec![false; model.processes.len()];
    for l in locations {
        if !seen[l.process] {
            seen[l.process] = true;
            let p = &model.processes[l.process];
            let name = match l.rank {
                Some(r) => format!("rank {}", r - l.rank_base),
                None => {
                    let exe = Path::new(&p.executable)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    if exe.is_empty() {
                        format!("process {}", l.pid)
                    } else {
                        format!("process {} {exe}", l.pid)
                    }
                }
            };
            groups.push((l.process as u32, s.id(&name), node_of(&l.host)));
        }
    }
    let loc_names: Vec<u32> = locations.iter().map(|l| s.id(&l.label())).collect();
    let regions: Vec<(u32, u8, OTF2_Paradigm, u32, u32)> = merge
        .regions()
        .all()
        .iter()
        .map(|r| {
            let (role, paradigm) = region_class(&r.name, r.kind);
            let file = if r.file.is_empty() {
                undef
            } else {
                s.id(&r.file)
            };
            (s.id(&r.name), role, paradigm, file, r.line)
        })
        .collect();

    // MPI: the comm-locations group (each rank's first location, in rank order), then per
    // communicator a group of members (indices into it) and the communicator
    let mut rank_location: Vec<(u32, u64)> = Vec::new();
    for (i, l) in locations.iter().enumerate() {
        if let Some(r) = l.rank {
            if !rank_location.iter().any(|&(x, _)| x == r) {
                rank_location.push((r, i as u64));
            }
        }
    }
    rank_location.sort_unstable();
    let rank_index: HashMap<u32, u64> = rank_location
        .iter()
        .enumerate()
        .map(|(i, &(r, _))| (r, i as u64))
        .collect();
    let mpi_locations = s.id("MPI ranks");
    let threads_name = s.id("threads");
    // every communicator in reference order: (name, paradigm, members)
    let mut comm_defs: Vec<(u32, OTF2_Paradigm, Vec<u64>)> = Vec::new();
    for c in model.comms.all() {
        let members = c
            .members()
            .iter()
            .filter_map(|r| rank_index.get(r).copied())
            .collect();
        comm_defs.push((s.id(&c.describe()), OTF2_PARADIGM_MPI, members));
    }
    let process_name = |s: &Strings, p: usize| {
        groups
            .iter()
            .find(|g| g.0 == p as u32)
            .map(|g| s.order[g.1 as usize].to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    for x in &refs.extra {
        comm_defs.push(match *x {
            ExtraComm::Unknown => (
                s.id("unknown communicator (world ranks)"),
                OTF2_PARADIGM_MPI,
                (0..rank_location.len() as u64).collect(),
            ),
            ExtraComm::OmpTeam(p, region, level, ref members) => {
                let name = format!(
                    "OpenMP teams of {} (level {level}) in {}",
                    merge.regions().name(region),
                    process_name(&s, p)
                );
                (s.id(&name), OTF2_PARADIGM_OPENMP, members.clone())
            }
            ExtraComm::Threads(p) => {
                let name = process_name(&s, p);
                let members = (0..locations.len() as u64)
                    .filter(|&i| locations[i as usize].process == p)
                    .collect();
                (
                    s.id(&format!("threads of {name}")),
                    OTF2_PARADIGM_PTHREAD,
                    members,
                )
            }
        });
    }
    let any_threads = comm_defs.iter().any(|c| c.1 == OTF2_PARADIGM_PTHREAD);
    let any_omp = comm_defs.iter().any(|c| c.1 == OTF2_PARADIGM_OPENMP);
    let omp_name = s.id("OpenMP threads");
    let thread_locations: Vec<u64> = (0..locations.len() as u64).collect();
    // every user event's metric (references dense from 0, as readers want), used or not
    let _ = metrics_used;
    let metric_names: Vec<(u32, u32)> = (0..merge.user_events().len())
        .map(|i| (i as u32, s.id(&merge.user_events()[i])))
        .collect();
    let empty = s.id("");
    let external_names: Vec<(u32, u32)> = external
        .iter()
        .map(|m| (s.id(&m.name), s.id(&m.unit)))
        .collect();
    let external_location = s.id("external metrics");
    let ctr_members: Vec<(u32, u32)> = ctr
        .members
        .iter()
        .map(|m| (s.id(m), s.id(crate::counted::unit(m))))
        .collect();
    let counters_description = s.id("per counted call: the function's inclusive count");
    let (nm, nc) = (ctr.members.len() as u32, ctr.classes.len() as u32);

    let realtime = model
        .processes
        .iter()
        .filter_map(|p| p.start_realtime_ns)
        .min()
        .unwrap_or(OTF2_UNDEFINED_UINT64);
    let check = |code, what| archive.check(code, what);
    // SAFETY: `g` is the archive's global definition writer; every array outlives its call.
    unsafe {
        check(
            OTF2_GlobalDefWriter_WriteClockProperties(
                g,
                TIMER_RESOLUTION,
                first.max(0) as u64,
                (last - first).max(0) as u64,
                realtime,
            ),
            "clock properties",
        )?;
        for (i, c) in s.order.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteString(g, i as u32, c.as_ptr()),
                "string",
            )?;
        }
        check(
            OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine_name, machine_class, undef),
            "system tree",
        )?;
        for (i, &h) in host_names.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + i as u32, h, node_class, 0),
                "system tree",
            )?;
        }
        for &(r, name, node) in &groups {
            check(
                OTF2_GlobalDefWriter_WriteLocationGroup(
                    g,
                    r,
                    name,
                    OTF2_LOCATION_GROUP_TYPE_PROCESS,
                    node,
                    undef,
                ),
                "location group",
            )?;
        }
        for (i, l) in locations.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteLocation(
                    g,
                    i as u64,
                    loc_names[i],
                    OTF2_LOCATION_TYPE_CPU_THREAD,
                    counts[i],
                    l.process as u32,
                ),
                "location",
            )?;
        }
        if !external.is_empty() {
            check(
                OTF2_GlobalDefWriter_WriteLocation(
                    g,
                    locations.len() as u64,
                    external_location,
                    OTF2_LOCATION_TYPE_METRIC,
                    *external_events,
                    locations.first().map_or(0, |l| l.process as u32),
                ),
                "location",
            )?;
        }
        for (i, &(name, role, paradigm, file, line)) in regions.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteRegion(
                    g,
                    i as u32,
                    name,
                    name,
                    empty,
                    role,
                    paradigm,
                    OTF2_REGION_FLAG_NONE,
                    file,
                    line,
                    line,
                ),
                "region",
            )?;
        }
        // a comm-locations group per paradigm (MPI: each rank's first location, in rank order;
        // threads: every location), then per communicator a group of members (indices into
        // its paradigm's) and the communicator
        let mut group = 0u32;
        let mut paradigm_group = |paradigm, name, members: &[u64]| -> Result<(), ExportError> {
            check(
                OTF2_GlobalDefWriter_WriteGroup(
                    g,
                    group,
                    name,
                    OTF2_GROUP_TYPE_COMM_LOCATIONS,
                    paradigm,
                    OTF2_GROUP_FLAG_NONE,
                    members.len() as u32,
                    members.as_ptr(),
                ),
                "group",
            )?;
            group += 1;
            Ok(())
        };
        let mpi_members: Vec<u64> = rank_location.iter().map(|&(_, l)| l).collect();
        if comm_defs.iter().any(|c| c.1 == OTF2_PARADIGM_MPI) {
            paradigm_group(OTF2_PARADIGM_MPI, mpi_locations, &mpi_members)?;
        }
        if any_threads {
            paradigm_group(OTF2_PARADIGM_PTHREAD, threads_name, &thread_locations)?;
        }
        if any_omp {
            paradigm_group(OTF2_PARADIGM_OPENMP, omp_name, &thread_locations)?;
        }
        for (c, (name, paradigm, members)) in comm_defs.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteGroup(
                    g,
                    group,
                    *name,
                    OTF2_GROUP_TYPE_COMM_GROUP,
                    *paradigm,
                    OTF2_GROUP_FLAG_NONE,
                    members.len() as u32,
                    members.as_ptr(),
                ),
                "group",
            )?;
            check(
                OTF2_GlobalDefWriter_WriteComm(
                    g,
                    c as u32,
                    *name,
                    group,
                    undef,
                    OTF2_COMM_FLAG_NONE,
                ),
                "communicator",
            )?;
            group += 1;
        }
        for (m, &(name, unit)) in ctr_members.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteMetricMember(
                    g,
                    m as u32,
                    name,
                    counters_description,
                    OTF2_METRIC_TYPE_OTHER,
                    OTF2_METRIC_ABSOLUTE_POINT,
                    OTF2_TYPE_UINT64,
                    OTF2_BASE_DECIMAL,
                    0,
                    unit,
                ),
                "metric member",
            )?;
        }
        for (c, members) in ctr.classes.iter().enumerate() {
            check(
                OTF2_GlobalDefWriter_WriteMetricClass(
                    g,
                    c as u32,
                    members.len() as u8,
                    members.as_ptr(),
                    OTF2_METRIC_SYNCHRONOUS,
                    OTF2_RECORDER_KIND_ABSTRACT,
                ),
                "metric class",
            )?;
        }
        for &(m, name) in &metric_names {
            let (member, class) = (nm + m, nc + m);
            check(
                OTF2_GlobalDefWriter_WriteMetricMember(
                    g,
                    member,
                    name,
                    empty,
                    OTF2_METRIC_TYPE_USER,
                    OTF2_METRIC_ABSOLUTE_POINT,
                    OTF2_TYPE_DOUBLE,
                    OTF2_BASE_DECIMAL,
                    0,
                    empty,
                ),
                "metric member",
            )?;
            check(
                OTF2_GlobalDefWriter_WriteMetricClass(
                    g,
                    class,
                    1,
                    &member,
                    OTF2_METRIC_SYNCHRONOUS_STRICT,
                    OTF2_RECORDER_KIND_ABSTRACT,
                ),
                "metric class",
            )?;
        }
        let base = merge.user_events().len() as u32;
        for (k, (m, &(name, unit))) in external.iter().zip(&external_names).enumerate() {
            let (member, id) = (nm + base + k as u32, nc + base + k as u32);
            let mode = match m.mode {
                plx_format::MetricMode::Absolute => OTF2_METRIC_ABSOLUTE_POINT,
                plx_format::MetricMode::Cumulative => OTF2_METRIC_ACCUMULATED_START,
            };
            check(
                OTF2_GlobalDefWriter_WriteMetricMember(
                    g,
                    member,
                    name,
                    empty,
                    OTF2_METRIC_TYPE_OTHER,
                    mode,
                    OTF2_TYPE_DOUBLE,
                    OTF2_BASE_DECIMAL,
                    0,
                    unit,
                ),
                "metric member",
            )?;
            check(
                OTF2_GlobalDefWriter_WriteMetricClass(
                    g,
                    id,
                    1,
                    &member,
                    OTF2_METRIC_SYNCHRONOUS_STRICT,
                    OTF2_RECORDER_KIND_ABSTRACT,
                ),
                "metric class",
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives_and_roles() {
        assert_eq!(
            collective_of("MPI_Allreduce"),
            Some((OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL))
        );
        assert_eq!(collective_of("MPI_Ibcast").unwrap().0, OTF2_COLLECTIVE_OP_BCAST);
        assert_eq!(
            collective_of("MPI_Iallreduce").unwrap().0,
            OTF2_COLLECTIVE_OP_ALLREDUCE
        );
        assert_eq!(collective_of("MPI_Isend"), None);
        assert_eq!(
            region_class("MPI_Irecv", RegionKind::Mpi),
            (OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI)
        );
        assert_eq!(
            region_class("main", RegionKind::Function),
            (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER)
        );
    }
}
