//! Live files (`live.<thread>.<kind>`, spec/format.md "Live files"): the callpath tree and the MPI
//! message statistics the runtime keeps in shared file mappings while a thread runs, so that they
//! survive a SIGKILL. A file still there after the run belongs to a thread whose records were
//! never written; [`crate::Experiment::open`] then uses it in their place.
//!
//! Every file is validated (magic, version, kind, thread, item size, count ≤ capacity, length):
//! a file that fails gives a [`Warning`] and is ignored, never a panic. Only the items in use are
//! read, not the whole (sparse, capacity-sized) file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::mpi::{Direction, MessageStats};
use crate::process::ProcessData;
use crate::records::{ProfileNode, SampleTree, SampleTreeFramesItem, ThreadProfile, NONE_U32};
use crate::schema;
use crate::sync::SyncStats;
use crate::trace::{read_some_at, TraceIndex};
use crate::warning::{Warning, WarningKind};

/// The magic of a live file.
pub const LIVE_MAGIC: &[u8; 4] = b"PLXL";
/// The live file version this crate reads and writes.
pub const LIVE_VERSION: u16 = 1;
/// Size of a live file's header.
pub const LIVE_HEADER_LEN: u64 = schema::LIVE_HEADER_SIZE as u64;
/// Size of a `nodes` item.
pub const LIVE_NODE_LEN: u16 = schema::LIVE_NODES_ITEM_SIZE as u16;
/// Size of an `mpi` item.
pub const LIVE_MPI_LEN: u16 = schema::LIVE_MPI_ITEM_SIZE as u16;
/// Size of a `sync` item.
pub const LIVE_SYNC_LEN: u16 = schema::LIVE_SYNC_ITEM_SIZE as u16;
/// Size of a `samples` item (a frame, or item 0 the head).
pub const LIVE_SAMPLES_LEN: u16 = schema::LIVE_SAMPLES_ITEM_SIZE as u16;

/// What a live file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LiveKind {
    /// `nodes`: the thread's callpath tree.
    Nodes,
    /// `mpi`: the thread's MPI message statistics (a hash table).
    Mpi,
    /// `sync`: the thread's synchronization statistics (a hash table by object address).
    Sync,
    /// `trace`: the thread's trace buffer (word 0 the base ticks, then event words).
    Trace,
    /// `samples`: the thread's call-stack samples (item 0 the head, then the SampleTree frames).
    Samples,
}

impl LiveKind {
    /// The kind's name, as in the file name and header.
    pub fn as_str(self) -> &'static str {
        match self {
            LiveKind::Nodes => "nodes",
            LiveKind::Mpi => "mpi",
            LiveKind::Sync => "sync",
            LiveKind::Trace => "trace",
            LiveKind::Samples => "samples",
        }
    }

    /// From a name; `None` for a kind this reader does not know.
    pub fn from_name(name: &str) -> Option<LiveKind> {
        match name {
            "nodes" => Some(LiveKind::Nodes),
            "mpi" => Some(LiveKind::Mpi),
            "sync" => Some(LiveKind::Sync),
            "trace" => Some(LiveKind::Trace),
            "samples" => Some(LiveKind::Samples),
            _ => None,
        }
    }

    /// Size of one item.
    pub fn item_size(self) -> u16 {
        match self {
            LiveKind::Nodes => LIVE_NODE_LEN,
            LiveKind::Mpi => LIVE_MPI_LEN,
            LiveKind::Sync => LIVE_SYNC_LEN,
            LiveKind::Trace => 8,
            LiveKind::Samples => LIVE_SAMPLES_LEN,
        }
    }

    /// Whether files of this kind are slots of a pool (`live.<slot>.<kind>`), owned by the
    /// thread their header names ([`NONE_U32`]: a free slot, holding nothing).
    pub fn pooled(self) -> bool {
        matches!(self, LiveKind::Nodes | LiveKind::Trace | LiveKind::Samples)
    }

    /// `live.<thread>.<kind>` (for a pooled kind, the slot's number).
    pub fn file_name(self, thread: u32) -> String {
        format!("live.{thread}.{}", self.as_str())
    }
}

/// `live.3.nodes` → `Some((3, "nodes"))`; `None` if the name is not a live file's.
pub fn parse_live_name(name: &str) -> Option<(u32, &str)> {
    let rest = name.strip_prefix("live.")?;
    let (thread, kind) = rest.split_once('.')?;
    if thread.is_empty() || !thread.bytes().all(|b| b.is_ascii_digit()) || kind.is_empty() {
        return None;
    }
    Some((thread.parse().ok()?, kind))
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// The 64-byte header of a live file (after its magic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveHeader {
    /// Version (1).
    pub version: u16,
    /// Size of one item.
    pub item_size: u16,
    /// Thread index.
    pub thread: u32,
    /// Items in use (an item is complete before count covers it); the capacity for `mpi`.
    pub count: u32,
    /// Items the file has room for.
    pub capacity: u32,
    /// Kind, NUL padding removed (`nodes`, `mpi`).
    pub kind: String,
}

impl LiveHeader {
    /// A version-1 header of `kind` with its item size.
    pub fn new(kind: LiveKind, thread: u32, count: u32, capacity: u32) -> Self {
        LiveHeader {
            version: LIVE_VERSION,
            item_size: kind.item_size(),
            thread,
            count,
            capacity,
            kind: kind.as_str().to_string(),
        }
    }

    /// Decodes the header bytes; `None` if the magic is not `PLXL`.
    pub fn decode(b: &[u8; 64]) -> Option<Self> {
        if &b[..4] != LIVE_MAGIC {
            return None;
        }
        use schema::live_header as h;
        let kind = &b[h::KIND..h::KIND + 16];
        let end = kind.iter().position(|c| *c == 0).unwrap_or(kind.len());
        Some(LiveHeader {
            version: u16_at(b, h::VERSION),
            item_size: u16_at(b, h::ITEM_SIZE),
            thread: u32_at(b, h::THREAD),
            count: u32_at(b, h::COUNT),
            capacity: u32_at(b, h::CAPACITY),
            kind: String::from_utf8_lossy(&kind[..end]).into_owned(),
        })
    }

    /// Encodes the header (the kind is cut to 16 bytes).
    pub fn encode(&self) -> [u8; 64] {
        use schema::live_header as h;
        let mut b = [0u8; 64];
        b[h::MAGIC..h::MAGIC + 4].copy_from_slice(LIVE_MAGIC);
        b[h::VERSION..h::VERSION + 2].copy_from_slice(&self.version.to_le_bytes());
        b[h::ITEM_SIZE..h::ITEM_SIZE + 2].copy_from_slice(&self.item_size.to_le_bytes());
        b[h::THREAD..h::THREAD + 4].copy_from_slice(&self.thread.to_le_bytes());
        b[h::COUNT..h::COUNT + 4].copy_from_slice(&self.count.to_le_bytes());
        b[h::CAPACITY..h::CAPACITY + 4].copy_from_slice(&self.capacity.to_le_bytes());
        let k = self.kind.as_bytes();
        let n = k.len().min(16);
        b[h::KIND..h::KIND + n].copy_from_slice(&k[..n]);
        b
    }
}

/// One item of a `nodes` file (48 bytes). Item 0 is the tree's root, not a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveNode {
    /// Parent item (0 = the root).
    pub parent: u32,
    /// Region id.
    pub region: u32,
    /// Newest child item, [`NONE_U32`] if none.
    pub first_child: u32,
    /// Next older sibling item, [`NONE_U32`] if none.
    pub next_sibling: u32,
    /// Times entered.
    pub calls: u64,
    /// Calls made from it to measured children.
    pub child_calls: u64,
    /// Inclusive ticks of the calls that returned.
    pub inclusive_ticks: u64,
    /// Exclusive ticks of the calls that returned.
    pub exclusive_ticks: u64,
}

/// One slot of an `mpi` file's hash table (56 bytes); only slots with `used` = 1 hold data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveMpiEntry {
    /// The MPI routine (a RegionDef of kind 4).
    pub region: u32,
    /// The other side as a world rank, [`NONE_U32`] for collectives.
    pub peer: u32,
    /// CommDef id.
    pub comm: u32,
    /// 1 if the slot holds data.
    pub used: u32,
    /// Sent or received.
    pub direction: Direction,
    /// Messages (collective calls for collectives).
    pub count: u64,
    /// Total bytes.
    pub bytes: u64,
    /// Smallest message.
    pub min_bytes: u64,
    /// Largest message.
    pub max_bytes: u64,
}

impl LiveMpiEntry {
    /// An unused slot.
    pub const EMPTY: LiveMpiEntry = LiveMpiEntry {
        region: 0,
        peer: 0,
        comm: 0,
        used: 0,
        direction: Direction::Sent,
        count: 0,
        bytes: 0,
        min_bytes: 0,
        max_bytes: 0,
    };

    /// A used slot holding `s` (its thread is the file's).
    pub fn from_stats(s: &MessageStats) -> Self {
        LiveMpiEntry {
            region: s.region,
            peer: s.peer,
            comm: s.comm,
            used: 1,
            direction: s.direction,
            count: s.count,
            bytes: s.bytes,
            min_bytes: s.min_bytes,
            max_bytes: s.max_bytes,
        }
    }

    /// The MessageStats record the runtime would have written for this slot in `thread`.
    pub fn to_stats(&self, thread: u32) -> MessageStats {
        MessageStats {
            thread,
            region: self.region,
            peer: self.peer,
            direction: self.direction,
            comm: self.comm,
            count: self.count,
            bytes: self.bytes,
            min_bytes: self.min_bytes,
            max_bytes: self.max_bytes,
        }
    }
}

/// One frame of a `samples` file (32 bytes): item `i > 0` is frame `i − 1` of the thread's
/// SampleTree, with the same fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveSampleFrame {
    /// Calling frame (a frame index, not an item), [`NONE_U32`] for an outermost frame.
    pub parent: u32,
    /// Outermost frames: the ThreadProfile node open when sampled, [`NONE_U32`] the root.
    pub node: u32,
    /// Module record of `address`, [`NONE_U32`] when none was recorded yet when sampled.
    pub module: u32,
    /// Return address, or the interrupted instruction's + 1.
    pub address: u64,
    /// Samples whose innermost frame this is.
    pub samples: u64,
}

/// Item 0 of a `samples` file: the totals of the thread's SampleTree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveSampleHead {
    /// The sampling period, ns of the thread's CPU time.
    pub period_ns: u64,
    /// Samples taken (each counted in a frame).
    pub samples: u64,
    /// Samples lost: the tree was full.
    pub lost_full: u64,
    /// Samples lost: the thread was in the dynamic loader.
    pub lost_loader: u64,
}

/// One slot of a `sync` file's hash table (64 bytes); only slots with `used` = 1 hold data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveSyncEntry {
    /// The object's address (the table's key).
    pub address: u64,
    /// SyncObject id.
    pub object: u32,
    /// 1 if the slot holds data.
    pub used: u16,
    /// Holds in progress by this thread (recursive locks, readers).
    pub depth: u16,
    /// Locks and waits taken.
    pub acquisitions: u64,
    /// Of those, the ones that had to wait.
    pub contended: u64,
    /// Ticks blocked.
    pub wait_ticks: u64,
    /// Ticks held by holds that ended.
    pub hold_ticks: u64,
    /// Unlocks, posts, signals and broadcasts.
    pub releases: u64,
    /// When the hold in progress began (meaningful while `depth` > 0).
    pub hold_start: u64,
}

impl LiveSyncEntry {
    /// A used slot holding `s`, not held (its thread is the file's).
    pub fn from_stats(address: u64, s: &SyncStats) -> Self {
        LiveSyncEntry {
            address,
            object: s.object,
            used: 1,
            depth: 0,
            acquisitions: s.acquisitions,
            contended: s.contended,
            wait_ticks: s.wait_ticks,
            hold_ticks: s.hold_ticks,
            releases: s.releases,
            hold_start: 0,
        }
    }

    /// The SyncStats record the runtime would have written at `now` for this slot in `thread`
    /// (a hold still in progress counts up to `now`, as the runtime counts it at the end).
    pub fn to_stats(&self, thread: u32, now: u64) -> SyncStats {
        let open = if self.depth > 0 {
            now.saturating_sub(self.hold_start)
        } else {
            0
        };
        SyncStats {
            thread,
            object: self.object,
            acquisitions: self.acquisitions,
            contended: self.contended,
            wait_ticks: self.wait_ticks,
            hold_ticks: self.hold_ticks.saturating_add(open),
            releases: self.releases,
        }
    }
}

/// A `live.<thread>.sync` file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSync {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: LiveHeader,
    /// The slots with `used` = 1, in table order.
    pub entries: Vec<LiveSyncEntry>,
}

impl LiveSync {
    /// The SyncStats records the thread would have written at `now`, one per used slot.
    pub fn sync_stats(&self, now: u64) -> Vec<SyncStats> {
        self.entries
            .iter()
            // object u32::MAX: a joined thread's entry, its statistics already in a record
            .filter(|e| e.object != u32::MAX)
            .map(|e| e.to_stats(self.header.thread, now))
            .collect()
    }
}

/// A `live.<thread>.nodes` file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveNodes {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: LiveHeader,
    /// The items in use: the root (item 0), then the callpath nodes.
    pub items: Vec<LiveNode>,
}

impl LiveNodes {
    /// Does the tree hold any callpath (an item besides the root)?
    pub fn has_callpaths(&self) -> bool {
        self.items.len() > 1
    }

    /// The nodes as a ThreadProfile holds them: item `i > 0` is node `i − 1`, and a parent of 0
    /// (the root) is [`NONE_U32`]. A parent that does not precede its node is kept as it is
    /// (readers show such nodes as roots).
    pub fn profile_nodes(&self) -> Vec<ProfileNode> {
        self.items
            .iter()
            .skip(1)
            .map(|n| ProfileNode {
                parent: match n.parent {
                    0 | NONE_U32 => NONE_U32,
                    p => p - 1,
                },
                region: n.region,
                calls: n.calls,
                child_calls: n.child_calls,
                inclusive_ticks: n.inclusive_ticks,
                exclusive_ticks: n.exclusive_ticks,
            })
            .collect()
    }

    /// Ticks the thread must have run for, by its tree: the sum of the exclusive times (the
    /// exclusive time of one call excludes its measured children, so no two overlap).
    pub fn elapsed_lower_bound(&self) -> u64 {
        self.items
            .iter()
            .skip(1)
            .fold(0u64, |t, n| t.saturating_add(n.exclusive_ticks))
    }
}

/// A `live.<thread>.mpi` file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveMpi {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: LiveHeader,
    /// The slots with `used` = 1, in table order.
    pub entries: Vec<LiveMpiEntry>,
}

impl LiveMpi {
    /// The MessageStats records the thread would have written: one per used slot that counted
    /// a message (a slot taken just before the kill may count none yet).
    pub fn message_stats(&self) -> Vec<MessageStats> {
        self.entries
            .iter()
            .filter(|e| e.count > 0)
            .map(|e| e.to_stats(self.header.thread))
            .collect()
    }
}

/// The live files of one process image, by thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveFiles {
    /// `live.<thread>.nodes` files that passed validation.
    pub nodes: BTreeMap<u32, LiveNodes>,
    /// `live.<thread>.mpi` files that passed validation.
    pub mpi: BTreeMap<u32, LiveMpi>,
    /// `live.<thread>.sync` files that passed validation.
    pub sync: BTreeMap<u32, LiveSync>,
    /// `live.<slot>.trace` files of threads that had events in their buffer.
    pub trace: Vec<LiveTrace>,
    /// `live.<slot>.samples` files that passed validation, by the thread owning each.
    pub samples: BTreeMap<u32, LiveSamples>,
}

/// A `live.<slot>.samples` file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSamples {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: LiveHeader,
    /// Item 0: the totals.
    pub head: LiveSampleHead,
    /// The frames the file holds (items 1 to count − 1).
    pub frames: Vec<LiveSampleFrame>,
}

impl LiveSamples {
    /// The SampleTree the thread would have written, of the frames the file holds.
    pub fn sample_tree(&self) -> SampleTree {
        SampleTree {
            thread: self.header.thread,
            period_ns: self.head.period_ns,
            samples: self.frame_samples(),
            lost_full: self.head.lost_full,
            lost_loader: self.head.lost_loader,
            frames: self
                .frames
                .iter()
                .map(|f| SampleTreeFramesItem {
                    parent: f.parent,
                    node: f.node,
                    module: f.module,
                    address: f.address,
                    samples: f.samples,
                })
                .collect(),
        }
    }

    /// Samples the head counts that no frame of the file holds: taken in frames the runtime
    /// kept in memory only (the disk had no room to grow the file), lost with the process.
    pub fn not_kept(&self) -> u64 {
        self.head.samples.saturating_sub(self.frame_samples())
    }

    fn frame_samples(&self) -> u64 {
        self.frames
            .iter()
            .fold(0u64, |n, f| n.saturating_add(f.samples))
    }
}

/// A `live.<slot>.trace` file, read: the events its thread had not yet written as a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTrace {
    /// The file.
    pub path: PathBuf,
    /// Its header (the owning thread).
    pub header: LiveHeader,
    /// Ticks the first event's delta counts from; 0: the events were being written as a chunk
    /// when the process died (those the trace file took are there, the others are lost).
    pub base_ticks: u64,
    /// Event words from word 1 on, up to the last event.
    pub words: u32,
}

/// The number of words of `w` holding events: the events up to the last that has a non-zero
/// word (the runtime zeroes what it has written as a chunk; no event word is zero after it).
pub fn live_trace_words(w: &[u64]) -> usize {
    let Some(last) = w.iter().rposition(|x| *x != 0) else {
        return 0;
    };
    let mut i = 0;
    while i <= last {
        let word = w[i];
        // kind 2: an extended event, its payload word count in 8 bits
        let payload = if word >> schema::KIND_SHIFT == 2 {
            ((word >> schema::WORDS_SHIFT) & 0xff) as usize
        } else {
            0
        };
        i += 1 + payload;
    }
    i.min(w.len())
}

impl LiveFiles {
    /// Reads the live files among `paths` (others, and kinds this reader does not know, are
    /// skipped); damaged files give warnings and are left out.
    pub fn read(paths: &[PathBuf], warnings: &mut Vec<Warning>) -> LiveFiles {
        let mut live = LiveFiles::default();
        for path in paths {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some((thread, kind)) = parse_live_name(name) else {
                continue;
            };
            match LiveKind::from_name(kind) {
                Some(LiveKind::Nodes) => {
                    let mut items = Vec::new();
                    let header = read_live(path, LiveKind::Nodes, thread, warnings, |b| {
                        items.push(LiveNode::decode(b))
                    });
                    if let Some(header) = header {
                        live.nodes.insert(
                            header.thread,
                            LiveNodes {
                                path: path.clone(),
                                header,
                                items,
                            },
                        );
                    }
                }
                Some(LiveKind::Mpi) => {
                    let mut entries = Vec::new();
                    let header = read_live(path, LiveKind::Mpi, thread, warnings, |b| {
                        let e = LiveMpiEntry::decode(b);
                        if e.used == 1 {
                            entries.push(e);
                        }
                    });
                    if let Some(header) = header {
                        live.mpi.insert(
                            thread,
                            LiveMpi {
                                path: path.clone(),
                                header,
                                entries,
                            },
                        );
                    }
                }
                Some(LiveKind::Sync) => {
                    let mut entries = Vec::new();
                    let header = read_live(path, LiveKind::Sync, thread, warnings, |b| {
                        let e = LiveSyncEntry::decode(b);
                        if e.used == 1 {
                            entries.push(e);
                        }
                    });
                    if let Some(header) = header {
                        live.sync.insert(
                            thread,
                            LiveSync {
                                path: path.clone(),
                                header,
                                entries,
                            },
                        );
                    }
                }
                Some(LiveKind::Samples) => {
                    let mut items = Vec::new();
                    let header = read_live(path, LiveKind::Samples, thread, warnings, |b| {
                        items.push(b.to_vec())
                    });
                    if let (Some(header), Some((head, frames))) = (header, items.split_first()) {
                        live.samples.insert(
                            header.thread,
                            LiveSamples {
                                path: path.clone(),
                                header,
                                head: LiveSampleHead::decode(head),
                                frames: frames.iter().map(|b| LiveSampleFrame::decode(b)).collect(),
                            },
                        );
                    }
                }
                Some(LiveKind::Trace) => {
                    let mut words = Vec::new();
                    let header = read_live(path, LiveKind::Trace, thread, warnings, |b| {
                        words.push(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                    });
                    if let (Some(header), Some((&base_ticks, events))) =
                        (header, words.split_first())
                    {
                        let n = live_trace_words(events);
                        if n > 0 {
                            live.trace.push(LiveTrace {
                                path: path.clone(),
                                header,
                                base_ticks,
                                words: n as u32,
                            });
                        }
                    }
                }
                None => {}
            }
        }
        live
    }

    /// Reads every live file of a directory.
    pub fn read_dir(dir: &Path, warnings: &mut Vec<Warning>) -> LiveFiles {
        let paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|es| es.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        Self::read(&paths, warnings)
    }

    /// No live file at all?
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.mpi.is_empty()
            && self.sync.is_empty()
            && self.trace.is_empty()
            && self.samples.is_empty()
    }

    /// Puts the live data in place of the records `process` lacks (noted in
    /// [`crate::Recovered`]):
    ///
    /// * a thread with no ThreadProfile but a `nodes` file gets the live tree as its profile,
    ///   unless the tree holds no callpath and the trace has events for the thread (trace mode
    ///   keeps no tree: the trace is the profile);
    /// * a thread with an `mpi` file gets its used slots as MessageStats, in place of any
    ///   records (one record per entry: a process killed while writing them leaves only some);
    /// * likewise a thread with a `sync` file gets its used slots as SyncStats (a hold still in
    ///   progress counts up to the latest time known for the process);
    /// * a thread with no SampleTree but a `samples` file gets the file's tree.
    ///
    /// `nodes` files of threads that have a ThreadProfile are ignored (the process was killed
    /// after writing it, before removing the file). Returns the threads recovered, by kind.
    pub fn recover_into(
        &self,
        process: &mut ProcessData,
        trace: Option<&TraceIndex>,
    ) -> Vec<(u32, LiveKind)> {
        let mut done = Vec::new();
        let traced =
            |th: u32| trace.is_some_and(|t| t.words_per_thread.get(&th).is_some_and(|w| *w > 0));
        let profiles: Vec<&LiveNodes> = self
            .nodes
            .iter()
            .filter(|(th, live)| {
                process.threads.get(th).is_none_or(|d| d.profile.is_none())
                    && (live.has_callpaths() || !traced(**th))
            })
            .map(|(_, live)| live)
            .collect();
        if !profiles.is_empty() {
            let latest = latest_ticks(process, trace);
            for live in profiles {
                let th = live.header.thread;
                let data = process.thread_mut(th);
                let info = data.info.as_ref();
                let end_ticks = match info {
                    Some(i) => latest.max(i.start_ticks.saturating_add(live.elapsed_lower_bound())),
                    None => latest,
                };
                data.profile = Some(ThreadProfile {
                    thread: th,
                    end_ticks,
                    cpu_ns: info.map_or(0, |i| i.cpu_ns),
                    trace_events: 0,
                    lost_events: 0,
                    lost_nodes: 0,
                    nodes: live.profile_nodes(),
                });
                data.recovered.profile = Some(live.path.clone());
                done.push((th, LiveKind::Nodes));
            }
        }
        // MessageStats are one record per entry, so a process killed while writing them leaves
        // only some: a live file that is still there holds them all, and wins over the records.
        for (th, live) in &self.mpi {
            let stats = live.message_stats();
            if stats.is_empty() {
                continue;
            }
            let data = process.thread_mut(*th);
            data.message_stats = stats;
            data.recovered.messages = Some(live.path.clone());
            done.push((*th, LiveKind::Mpi));
        }
        // SyncStats likewise: the live file, when it is still there, wins over the records of
        // the objects it holds (a joined thread's object was written at its join).
        if !self.sync.is_empty() {
            let latest = latest_ticks(process, trace);
            for (th, live) in &self.sync {
                let data = process.thread_mut(*th);
                let stats = live.sync_stats(latest);
                data.sync_stats
                    .retain(|r| !stats.iter().any(|s| s.object == r.object));
                data.sync_stats.extend(stats);
                data.recovered.sync = Some(live.path.clone());
                done.push((*th, LiveKind::Sync));
            }
        }
        for (th, live) in &self.samples {
            let data = process.thread_mut(*th);
            if data.sample_tree.is_some() {
                continue; // written before the process was killed: the record is whole
            }
            data.sample_tree = Some(live.sample_tree());
            data.recovered.samples = Some(live.path.clone());
            data.recovered.samples_not_kept = live.not_kept();
            done.push((*th, LiveKind::Samples));
        }
        done
    }
}

/// The latest time the process's records and trace know: calibrations, trace events, thread
/// starts, the recorded profiles' ends, MPI_Init, ProcessEnd.
fn latest_ticks(p: &ProcessData, trace: Option<&TraceIndex>) -> u64 {
    let mut t = p.calibrations.iter().map(|c| c.ticks).max().unwrap_or(0);
    if let Some(last) = trace.and_then(|x| x.last_ticks()) {
        t = t.max(last);
    }
    for d in p.threads.values() {
        if let Some(i) = &d.info {
            t = t.max(i.start_ticks);
        }
        if let (Some(prof), None) = (&d.profile, &d.recovered.profile) {
            t = t.max(prof.end_ticks);
        }
    }
    if let Some(m) = &p.mpi {
        t = t.max(m.ticks);
    }
    if let Some(e) = &p.end {
        t = t.max(e.ticks);
    }
    t
}

/// Checks a live file's header against what its name says and the file's length: `Err` is the
/// warning to report (the file is then ignored). On success, the byte length of the items in use.
pub fn check_live_header(
    path: &Path,
    head: &[u8],
    file_len: u64,
    kind: LiveKind,
    thread: u32,
) -> Result<(LiveHeader, u64), Warning> {
    let ignored = |offset: u64, kind: WarningKind, what: String| {
        Err(Warning::at(
            path,
            offset,
            kind,
            format!("live file {what}: ignored"),
        ))
    };
    let Ok(h) = <&[u8; 64]>::try_from(head) else {
        return ignored(
            0,
            WarningKind::Truncated {
                missing: LIVE_HEADER_LEN - (head.len() as u64).min(LIVE_HEADER_LEN),
            },
            format!("header truncated ({} of 64 bytes)", head.len()),
        );
    };
    let Some(h) = LiveHeader::decode(h) else {
        return ignored(
            0,
            WarningKind::Garbage { ignored: file_len },
            "has a bad magic (not PLXL)".to_string(),
        );
    };
    if h.version != LIVE_VERSION {
        return ignored(
            4,
            WarningKind::Garbage { ignored: file_len },
            format!("version {}, this reader knows {LIVE_VERSION}", h.version),
        );
    }
    if h.kind != kind.as_str() {
        return ignored(
            20,
            WarningKind::Malformed,
            format!("says kind \"{}\", its name \"{}\"", h.kind, kind.as_str()),
        );
    }
    if h.thread != thread && !kind.pooled() {
        return ignored(
            8,
            WarningKind::Malformed,
            format!("says thread {}, its name {thread}", h.thread),
        );
    }
    if h.item_size != kind.item_size() {
        return ignored(
            6,
            WarningKind::Malformed,
            format!(
                "has {}-byte items, {} are {}",
                h.item_size,
                kind.as_str(),
                kind.item_size()
            ),
        );
    }
    if h.count > h.capacity {
        return ignored(
            12,
            WarningKind::Malformed,
            format!("count {} exceeds its capacity {}", h.count, h.capacity),
        );
    }
    let items_len = h.count as u64 * h.item_size as u64;
    let need = LIVE_HEADER_LEN + items_len;
    if file_len < need {
        let whole = file_len.saturating_sub(LIVE_HEADER_LEN) / h.item_size as u64;
        return ignored(
            LIVE_HEADER_LEN + whole * h.item_size as u64,
            WarningKind::Truncated {
                missing: need - file_len,
            },
            format!(
                "truncated: {} items in use, {} in the file ({} bytes missing)",
                h.count,
                whole,
                need - file_len
            ),
        );
    }
    Ok((h, items_len))
}

/// Reads and validates one live file: its header, and `each` called with every item in use
/// that the file holds. Memory is bounded by the bytes present, whatever the header claims: a
/// `nodes` tree is read up to its first hole (items are appended, so a prefix is a tree; the
/// rest gives a warning), a hash table's holes are skipped (unused slots read as zeros).
fn read_live(
    path: &Path,
    kind: LiveKind,
    thread: u32,
    warnings: &mut Vec<Warning>,
    mut each: impl FnMut(&[u8]),
) -> Option<LiveHeader> {
    let input = match crate::input::open_regular(path) {
        Ok(i) => i,
        Err(e) => {
            warnings.push(Warning::file(
                path,
                WarningKind::MissingFile,
                format!("cannot read live file: {e}"),
            ));
            return None;
        }
    };
    let mut head = [0u8; 64];
    let n = read_some_at(&input.file, &mut head, 0);
    let (header, items_len) = match check_live_header(path, &head[..n], input.len, kind, thread) {
        Ok(x) => x,
        Err(w) => {
            warnings.push(w);
            return None;
        }
    };
    if kind.pooled() && header.thread == NONE_U32 {
        return None; // a free slot: its last owner's data is in the records
    }
    let size = kind.item_size() as u64;
    let mut end = LIVE_HEADER_LEN + items_len;
    if kind == LiveKind::Nodes && input.data_end < end {
        let whole = input.data_end.saturating_sub(LIVE_HEADER_LEN) / size;
        end = LIVE_HEADER_LEN + whole * size;
        warnings.push(Warning::at(
            path,
            end,
            WarningKind::Truncated {
                missing: (header.count as u64 - whole) * size,
            },
            format!(
                "live file says {} items in use, {whole} are present (the rest is a hole, never written): {whole} kept",
                header.count
            ),
        ));
    }
    let visited = input.for_each_data(LIVE_HEADER_LEN, end, size, |_, bytes| {
        bytes.chunks_exact(size as usize).for_each(&mut each)
    });
    if kind == LiveKind::Nodes && visited < end - LIVE_HEADER_LEN {
        warnings.push(Warning::at(
            path,
            LIVE_HEADER_LEN + visited,
            WarningKind::Truncated {
                missing: end - LIVE_HEADER_LEN - visited,
            },
            "live file could not be read in full".to_string(),
        ));
    }
    Some(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_live_name("live.3.nodes"), Some((3, "nodes")));
        assert_eq!(parse_live_name("live.12.mpi"), Some((12, "mpi")));
        assert_eq!(parse_live_name("live..mpi"), None);
        assert_eq!(parse_live_name("live.x.mpi"), None);
        assert_eq!(parse_live_name("live.3"), None);
        assert_eq!(parse_live_name("process.plx"), None);
        assert_eq!(LiveKind::Mpi.file_name(4), "live.4.mpi");
    }

    #[test]
    fn items_round_trip() {
        let h = LiveHeader::new(LiveKind::Nodes, 2, 5, 9);
        assert_eq!(LiveHeader::decode(&h.encode()), Some(h));
        let n = LiveNode {
            parent: 1,
            region: 7,
            first_child: NONE_U32,
            next_sibling: 3,
            calls: 10,
            child_calls: 4,
            inclusive_ticks: 100,
            exclusive_ticks: 60,
        };
        assert_eq!(LiveNode::decode(&n.encode()), n);
        let e = LiveMpiEntry {
            region: 3,
            peer: NONE_U32,
            comm: 2,
            used: 1,
            direction: Direction::Received,
            count: 5,
            bytes: 40,
            min_bytes: 8,
            max_bytes: 8,
        };
        assert_eq!(LiveMpiEntry::decode(&e.encode()), e);
        let s = LiveSyncEntry {
            address: 0x7fff_1234,
            object: 4,
            used: 1,
            depth: 2,
            acquisitions: 10,
            contended: 3,
            wait_ticks: 50,
            hold_ticks: 70,
            releases: 8,
            hold_start: 1000,
        };
        assert_eq!(LiveSyncEntry::decode(&s.encode()), s);
        let st = s.to_stats(3, 1500);
        assert_eq!((st.thread, st.object, st.hold_ticks), (3, 4, 570));
        assert_eq!(parse_live_name("live.2.sync"), Some((2, "sync")));
        assert_eq!(LiveKind::from_name("sync"), Some(LiveKind::Sync));
    }

    #[test]
    fn live_trace_words_end_at_the_last_event() {
        let enter = 5u64; // kind 0, region 0, delta 5
        let exit = (1u64 << 62) | 7;
        let ext = (2u64 << 62) | (2u64 << 48); // two payload words
        assert_eq!(live_trace_words(&[0, 0, 0]), 0);
        assert_eq!(live_trace_words(&[enter, exit, 0, 0]), 2);
        // an extended event's zero payload words are its own, not the end
        assert_eq!(live_trace_words(&[enter, ext, 0, 0, 0, 0]), 4);
        // a zero event word (enter of region 0 after no time) followed by events is kept
        assert_eq!(live_trace_words(&[0, exit, 0]), 2);
    }

    #[test]
    fn header_checks() {
        let p = Path::new("live.1.nodes");
        let good = LiveHeader::new(LiveKind::Nodes, 1, 3, 4).encode();
        let len = 64 + 4 * 48;
        let (h, items) = check_live_header(p, &good, len, LiveKind::Nodes, 1).unwrap();
        assert_eq!((h.count, items), (3, 3 * 48));
        let kind_of = |head: &[u8], len: u64, kind: LiveKind, thread: u32| {
            check_live_header(p, head, len, kind, thread)
                .unwrap_err()
                .kind
                .as_str()
        };
        assert_eq!(kind_of(&good[..10], 10, LiveKind::Nodes, 1), "truncated");
        assert_eq!(kind_of(&good, len, LiveKind::Mpi, 1), "malformed");
        // a pooled kind's file is a slot: its thread is the header's, whatever the name says
        assert_eq!(
            check_live_header(p, &good, len, LiveKind::Nodes, 2).map(|(h, _)| h.thread),
            Ok(1)
        );
        let sync = LiveHeader::new(LiveKind::Sync, 1, 3, 4).encode();
        assert_eq!(kind_of(&sync, 64 + 4 * 64, LiveKind::Sync, 2), "malformed");
        assert_eq!(
            kind_of(&good, 64 + 2 * 48 + 5, LiveKind::Nodes, 1),
            "truncated"
        );
        let mut bad = good;
        bad[0] = b'X';
        assert_eq!(kind_of(&bad, len, LiveKind::Nodes, 1), "garbage");
        let mut bad = good;
        bad[4] = 2;
        assert_eq!(kind_of(&bad, len, LiveKind::Nodes, 1), "garbage");
        let mut bad = good;
        bad[6] = 40;
        assert_eq!(kind_of(&bad, len, LiveKind::Nodes, 1), "malformed");
        let over = LiveHeader::new(LiveKind::Nodes, 1, 5, 4).encode();
        assert_eq!(kind_of(&over, u64::MAX, LiveKind::Nodes, 1), "malformed");
        // a huge count with a matching capacity is refused by the length, not allocated
        let huge = LiveHeader::new(LiveKind::Nodes, 1, u32::MAX, u32::MAX).encode();
        assert_eq!(kind_of(&huge, len, LiveKind::Nodes, 1), "truncated");
    }

    #[test]
    fn profile_nodes_and_time_bound() {
        let node = |parent, region, exclusive_ticks| LiveNode {
            parent,
            region,
            exclusive_ticks,
            ..LiveNode::default()
        };
        let live = LiveNodes {
            path: PathBuf::from("live.0.nodes"),
            header: LiveHeader::new(LiveKind::Nodes, 0, 5, 8),
            items: vec![
                node(NONE_U32, NONE_U32, 0),
                node(0, 1, 0), // main, still open
                node(1, 2, 30),
                node(1, 3, 50),
                node(3, 2, 10),
            ],
        };
        let nodes = live.profile_nodes();
        let parents: Vec<u32> = nodes.iter().map(|n| n.parent).collect();
        assert_eq!(parents, vec![NONE_U32, 0, 0, 2]);
        assert_eq!(nodes[3].region, 2);
        assert_eq!(live.elapsed_lower_bound(), 90);
        assert!(live.has_callpaths());
    }
}
