//! Builders of whole synthetic process images (process.plx + trace.plx) for tests and examples.

use std::io;
use std::path::{Path, PathBuf};

use crate::event::EventEncoder;
use crate::framing::FileKind;
use crate::live::{LiveKind, LiveMpiEntry, LiveNode, LiveSyncEntry};
use crate::mpi::{ClockOffset, CommDef, MessageStats, MpiInit, OffsetWhen, ThreadLevel};
use crate::records::{
    Calibration, ClockKind, EndReason, ProcessEnd, ProcessInfo, ProfileNode, Record, RegionDef,
    RegionKind, ThreadInfo, ThreadProfile, NONE_U32,
};
use crate::sync::{NamedBy, NodeCpu, SyncKind, SyncObject, SyncStats};
use crate::writer::{chunk_bytes, live_mpi_bytes, live_nodes_bytes, live_sync_bytes, FileWriter};

/// A process image under construction. Its clock is `CLOCK_MONOTONIC` (1 tick = 1 ns) with
/// calibration pairs at tick 0 and at [`SynthProcess::end`], so times in tests are exact.
#[derive(Debug, Clone)]
pub struct SynthProcess {
    /// Host name.
    pub host: String,
    /// Pid.
    pub pid: u32,
    /// Records of process.plx in order.
    pub records: Vec<Record>,
    /// Raw bytes of trace.plx after its header (chunks), if any.
    pub trace: Option<Vec<u8>>,
    /// Other files of the process directory by name (live files), written as they are.
    pub files: Vec<(String, Vec<u8>)>,
}

/// One node of [`SynthProcess::profile`]: (parent index or `None`, region, calls, child calls, inclusive, exclusive).
pub type NodeSpec = (Option<u32>, u32, u64, u64, u64, u64);

impl SynthProcess {
    /// ProcessInfo, a Calibration at 0 and a ClockRate of 1e9; region 0 `plx_flush` defined.
    pub fn new(host: &str, pid: u32, argv: &[&str]) -> Self {
        let mut p = SynthProcess {
            host: host.to_string(),
            pid,
            records: vec![
                Record::ProcessInfo(ProcessInfo {
                    pid,
                    ppid: 1,
                    start_realtime_ns: 1_700_000_000_000_000_000,
                    clock: ClockKind::Monotonic,
                    host: host.to_string(),
                    version: "0.1.0".to_string(),
                    executable: argv.first().map_or("", |a| a).to_string(),
                    argv: argv.iter().map(|a| a.to_string()).collect(),
                }),
                Record::Calibration(Calibration {
                    ticks: 0,
                    monotonic_ns: 0,
                }),
                Record::ClockRate(1e9),
            ],
            trace: None,
            files: Vec::new(),
        };
        p.region(0, RegionKind::Runtime, "plx_flush");
        p
    }

    /// Defines a region.
    pub fn region(&mut self, id: u32, kind: RegionKind, name: &str) -> &mut Self {
        self.records.push(Record::RegionDef(RegionDef {
            region_id: id,
            kind,
            flags: 0,
            module_id: NONE_U32,
            address: 0,
            name: name.to_string(),
            file: String::new(),
            line: 0,
        }));
        self
    }

    /// Defines functions `ids[i]` named `names[i]`.
    pub fn functions(&mut self, defs: &[(u32, &str)]) -> &mut Self {
        for (id, name) in defs {
            self.region(*id, RegionKind::Function, name);
        }
        self
    }

    /// Defines MPI routines (region kind 4) `ids[i]` named `names[i]`.
    pub fn mpi_routines(&mut self, defs: &[(u32, &str)]) -> &mut Self {
        for (id, name) in defs {
            self.region(*id, RegionKind::Mpi, name);
        }
        self
    }

    /// An MpiInit record: this process is `rank` of `size` (library "synthetic MPI 1.0").
    pub fn mpi_init(
        &mut self,
        rank: u32,
        size: u32,
        thread_level: ThreadLevel,
        ticks: u64,
    ) -> &mut Self {
        self.records.push(Record::MpiInit(MpiInit {
            rank,
            size,
            thread_level,
            ticks,
            library: "synthetic MPI 1.0".to_string(),
        }));
        self
    }

    /// A CommDef: process-local id `comm`, `ordinal`, members' world ranks in order.
    pub fn comm(&mut self, comm: u32, ordinal: u32, ranks: &[u32]) -> &mut Self {
        self.records.push(Record::CommDef(CommDef {
            comm,
            ordinal,
            ranks: ranks.to_vec(),
        }));
        self
    }

    /// A ClockOffset to rank 0 measured at `when`.
    pub fn clock_offset(
        &mut self,
        when: OffsetWhen,
        local_ns: u64,
        offset_ns: i64,
        rtt_ns: u64,
    ) -> &mut Self {
        self.records.push(Record::ClockOffset(ClockOffset {
            when,
            local_ns,
            offset_ns,
            rtt_ns,
        }));
        self
    }

    /// A ThreadInfo (cpu at start 0).
    pub fn thread(&mut self, thread: u32, tid: u32, name: &str, start_ticks: u64) -> &mut Self {
        self.records.push(Record::ThreadInfo(ThreadInfo {
            thread,
            tid,
            parent: if thread == 0 { NONE_U32 } else { 0 },
            start_ticks,
            cpu_ns: 0,
            name: name.to_string(),
        }));
        self
    }

    /// A ThreadProfile.
    pub fn profile(
        &mut self,
        thread: u32,
        end_ticks: u64,
        cpu_ns: u64,
        nodes: &[NodeSpec],
    ) -> &mut Self {
        self.records.push(Record::ThreadProfile(ThreadProfile {
            thread,
            end_ticks,
            cpu_ns,
            trace_events: 0,
            lost_events: 0,
            lost_nodes: 0,
            nodes: nodes
                .iter()
                .map(|n| ProfileNode {
                    parent: n.0.unwrap_or(NONE_U32),
                    region: n.1,
                    calls: n.2,
                    child_calls: n.3,
                    inclusive_ticks: n.4,
                    exclusive_ticks: n.5,
                })
                .collect(),
        }));
        self
    }

    /// A `live.<thread>.nodes` file holding the tree `nodes` (as given to
    /// [`SynthProcess::profile`]), as the runtime leaves it when the process is killed: the root
    /// item, then node `i` as item `i + 1`, room for 16 more items.
    pub fn live_nodes(&mut self, thread: u32, nodes: &[NodeSpec]) -> &mut Self {
        let items = live_tree(nodes);
        let capacity = items.len() as u32 + 16;
        let bytes = live_nodes_bytes(thread, capacity, &items);
        self.file(&LiveKind::Nodes.file_name(thread), bytes)
    }

    /// A `live.<thread>.mpi` file holding `stats` (their `thread` is not used): a hash table
    /// with the entries in slots 1, 3, 5, ... and free slots around them.
    pub fn live_mpi(&mut self, thread: u32, stats: &[MessageStats]) -> &mut Self {
        let mut slots = vec![LiveMpiEntry::EMPTY; 2 * stats.len() + 2];
        for (i, s) in stats.iter().enumerate() {
            slots[2 * i + 1] = LiveMpiEntry::from_stats(s);
        }
        let bytes = live_mpi_bytes(thread, &slots);
        self.file(&LiveKind::Mpi.file_name(thread), bytes)
    }

    /// A SyncObject: object `object` of `kind` at address `0x1000 * (object + 1)`, named by
    /// `named_by` at `site` of module `module_id`.
    pub fn sync_object(
        &mut self,
        object: u32,
        kind: SyncKind,
        named_by: NamedBy,
        module_id: u32,
        site: u64,
    ) -> &mut Self {
        self.records.push(Record::SyncObject(SyncObject {
            object,
            kind,
            named_by,
            address: 0x1000 * (object as u64 + 1),
            module_id,
            site,
            name: String::new(),
        }));
        self
    }

    /// A SyncStats record: (acquisitions, contended, wait ticks, hold ticks, releases).
    pub fn sync_stats(
        &mut self,
        thread: u32,
        object: u32,
        counts: (u64, u64, u64, u64, u64),
    ) -> &mut Self {
        self.records.push(Record::SyncStats(SyncStats {
            thread,
            object,
            acquisitions: counts.0,
            contended: counts.1,
            wait_ticks: counts.2,
            hold_ticks: counts.3,
            releases: counts.4,
        }));
        self
    }

    /// A CpuSamples record: at `ticks`, (thread index, CPU ns) of each thread.
    pub fn cpu_sample(&mut self, ticks: u64, values: &[(u32, u64)]) -> &mut Self {
        self.records
            .push(Record::CpuSamples(crate::cpu::CpuSamples {
                ticks,
                values: values.to_vec(),
            }));
        self
    }

    /// A NodeCpu record: (ThreadProfile node index, CPU ns).
    pub fn node_cpu(&mut self, thread: u32, entries: &[(u32, u64)]) -> &mut Self {
        self.records.push(Record::NodeCpu(NodeCpu {
            thread,
            entries: entries.to_vec(),
        }));
        self
    }

    /// A `live.<thread>.sync` file holding `stats` (their `thread` is not used; object `o` at
    /// address `0x1000 * (o + 1)`, not held): entries in slots 1, 3, 5, ...
    pub fn live_sync(&mut self, thread: u32, stats: &[SyncStats]) -> &mut Self {
        let mut slots = vec![LiveSyncEntry::default(); 2 * stats.len() + 2];
        for (i, s) in stats.iter().enumerate() {
            slots[2 * i + 1] = LiveSyncEntry::from_stats(0x1000 * (s.object as u64 + 1), s);
        }
        let bytes = live_sync_bytes(thread, &slots);
        self.file(&LiveKind::Sync.file_name(thread), bytes)
    }

    /// A file of the process directory with these bytes (e.g. a damaged live file).
    pub fn file(&mut self, name: &str, bytes: Vec<u8>) -> &mut Self {
        self.files.retain(|(n, _)| n != name);
        self.files.push((name.to_string(), bytes));
        self
    }

    /// Any record.
    pub fn record(&mut self, rec: Record) -> &mut Self {
        self.records.push(rec);
        self
    }

    /// A closing Calibration at `ticks` and ProcessEnd (exit status).
    pub fn end(&mut self, ticks: u64, status: i32) -> &mut Self {
        self.records.push(Record::Calibration(Calibration {
            ticks,
            monotonic_ns: ticks,
        }));
        self.records.push(Record::ProcessEnd(ProcessEnd {
            ticks,
            reason: EndReason::Exit,
            status,
            realtime_ns: 0,
        }));
        self
    }

    /// Appends a trace chunk for `thread` with the encoder's words.
    pub fn chunk(&mut self, thread: u32, events: &EventEncoder) -> &mut Self {
        let base = events.base_ticks();
        let bytes = chunk_bytes(
            thread,
            base,
            Calibration {
                ticks: base,
                monotonic_ns: base,
            },
            events.words(),
        );
        self.trace.get_or_insert_with(Vec::new).extend(bytes);
        self
    }

    /// The bytes of process.plx.
    pub fn process_bytes(&self) -> Vec<u8> {
        let mut w = FileWriter::new(Vec::new(), FileKind::Process).expect("Vec write");
        for r in &self.records {
            w.record(r).expect("Vec write");
        }
        w.finish().expect("Vec write")
    }

    /// The bytes of trace.plx, if there is a trace.
    pub fn trace_bytes(&self) -> Option<Vec<u8>> {
        self.trace.as_ref().map(|t| {
            let mut w = FileWriter::new(Vec::new(), FileKind::Trace).expect("Vec write");
            w.raw_bytes(t).expect("Vec write");
            w.finish().expect("Vec write")
        })
    }

    /// The `<host>.<pid>` directory under `exp`.
    pub fn dir(&self, exp: &Path) -> PathBuf {
        exp.join(format!("{}.{}", self.host, self.pid))
    }

    /// Writes `<exp>/<host>.<pid>/process.plx` (and trace.plx); returns the process directory.
    pub fn write(&self, exp: &Path) -> io::Result<PathBuf> {
        let dir = self.dir(exp);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("process.plx"), self.process_bytes())?;
        if let Some(t) = self.trace_bytes() {
            std::fs::write(dir.join("trace.plx"), t)?;
        }
        for (name, bytes) in &self.files {
            std::fs::write(dir.join(name), bytes)?;
        }
        Ok(dir)
    }
}

/// The items of a live `nodes` file for a tree given as to [`SynthProcess::profile`]: item 0 the
/// root, node `i` as item `i + 1` (parent `None` → item 0), children linked newest first as the
/// runtime links them; the root's `child_calls` counts the calls of the top-level nodes.
pub fn live_tree(nodes: &[NodeSpec]) -> Vec<LiveNode> {
    let mut items = vec![LiveNode {
        parent: NONE_U32,
        region: NONE_U32,
        first_child: NONE_U32,
        next_sibling: NONE_U32,
        ..LiveNode::default()
    }];
    for (i, n) in nodes.iter().enumerate() {
        let parent = n.0.map_or(0, |p| p + 1);
        let item = i as u32 + 1;
        let sibling = items
            .get(parent as usize)
            .map_or(NONE_U32, |p| p.first_child);
        if let Some(p) = items.get_mut(parent as usize) {
            p.first_child = item;
        }
        if parent == 0 {
            items[0].child_calls += n.2;
        }
        items.push(LiveNode {
            parent,
            region: n.1,
            first_child: NONE_U32,
            next_sibling: sibling,
            calls: n.2,
            child_calls: n.3,
            inclusive_ticks: n.4,
            exclusive_ticks: n.5,
        });
    }
    items
}
