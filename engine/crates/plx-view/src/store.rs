//! The on-disk trace index: [`TraceIndex`] written once into `DIR/.plx-view/` and read back
//! into memory, so that a later `plx view` of the same experiment opens without a merge pass.
//! The file is read, never mapped: a file truncated or rewritten while `plx view` serves from it
//! changes nothing the server holds (a mapping would fault, SIGBUS, on the pages cut off).
//!
//! Layout (little-endian): a 64-byte header, the data (every array 16-byte aligned), then the
//! meta (JSON: tracks, regions, names, scalars, and per array its offset and length).
//!
//! ```text
//!  0  magic "PLXVIEW\x01"        8  version u32      12  zero u32
//! 16  fingerprint u64           24  file length u64  32  meta offset u64  40  meta length u64
//! 48  meta CRC-32 u32           52  data CRC-32 u32  56  data offset u64 (64)
//! ```
//!
//! An index is used only when all of this holds: the header's magic, version, length and
//! fingerprint (of the experiment's files: names, sizes, modification times, and the selected
//! application) match; both CRC-32s match; every array lies inside the file with the length its
//! neighbours imply; every stored index (region, track, user event, block maximum) is in range.
//! Otherwise it is rebuilt. Lengths are taken from the bytes present, so a damaged index cannot
//! make the reader allocate more than the file holds. Only a regular file is read, and not
//! through a symbolic link: a FIFO or device planted under `.plx-view/` is refused at once.

use plx_analysis::{RegionInfo, RegionTable};
use plx_format::RegionKind;
use serde_json::{json, Value};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::arr::{Arr, Bytes, Plain};
use crate::index::{
    Handoff, Lane, Level, Marker, Message, PairMessages, TraceIndex, Track, FANOUT,
};
use crate::times::{Times, SPAN};

const MAGIC: &[u8; 8] = b"PLXVIEW\x01";
/// 5: lane times in 4-byte offsets from a base per block of 64; a receive the clock repair let
/// go before its send is paired with that send.
const VERSION: u32 = 5;
const HEADER: usize = 64;
const ALIGN: u64 = 16;

/// The cache directory inside an experiment.
pub const CACHE_DIR: &str = ".plx-view";

/// Why a stored index was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// There is none.
    Missing,
    /// It was made from other files of the experiment (or another version of plx).
    Stale,
    /// It cannot be read or is inconsistent (what is wrong).
    Damaged(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Missing => write!(f, "none yet"),
            Unusable::Stale => write!(f, "stale: the experiment changed since it was written"),
            Unusable::Damaged(why) => write!(f, "damaged: {why}"),
        }
    }
}

/// Where the index of `dir` (application `app` of a session) is kept.
pub fn path(dir: &Path, app: Option<&str>) -> PathBuf {
    let name = match app {
        None => "index.bin".to_string(),
        Some(a) => format!("index-{:016x}.bin", fnv(a.as_bytes(), FNV0)),
    };
    dir.join(CACHE_DIR).join(name)
}

const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

/// A 64-bit hash of `bytes` (FNV-1a), for fingerprints.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    fnv(bytes, FNV0)
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// A hash of what the index is made from: every file under `dir` (but the cache) by relative
/// name, size and modification time; the application; the index and plx versions.
pub fn fingerprint(dir: &Path, app: Option<&str>) -> std::io::Result<u64> {
    let mut entries: Vec<(String, u64, i128)> = Vec::new();
    walk(dir, dir, 0, &mut entries)?;
    entries.sort();
    let mut h = fnv(&VERSION.to_le_bytes(), FNV0);
    h = fnv(env!("CARGO_PKG_VERSION").as_bytes(), h);
    h = fnv(app.unwrap_or("\0").as_bytes(), h);
    for (name, len, mtime) in entries {
        h = fnv(name.as_bytes(), h);
        h = fnv(&len.to_le_bytes(), h);
        h = fnv(&mtime.to_le_bytes(), h);
    }
    Ok(h)
}

fn walk(
    root: &Path,
    d: &Path,
    depth: usize,
    out: &mut Vec<(String, u64, i128)>,
) -> std::io::Result<()> {
    for e in std::fs::read_dir(d)? {
        let e = e?;
        if e.file_name() == CACHE_DIR {
            continue;
        }
        let md = e.metadata()?;
        let rel = e
            .path()
            .strip_prefix(root)
            .map_or_else(|_| e.path(), |p| p.to_path_buf());
        if md.is_dir() {
            // experiment → process directories; session → experiments → process directories
            if depth < 3 {
                walk(root, &e.path(), depth + 1, out)?;
            }
            continue;
        }
        let mtime = md
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        out.push((rel.to_string_lossy().into_owned(), md.len(), mtime));
    }
    Ok(())
}

/// Writes the arrays, 16-byte aligned, after the header, with a running CRC-32.
struct DataWriter<W: Write> {
    w: W,
    at: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> DataWriter<W> {
    fn put<T: Plain>(&mut self, a: &[T]) -> std::io::Result<Value> {
        let pad = (ALIGN - self.at % ALIGN) % ALIGN;
        let zeros = [0u8; ALIGN as usize];
        self.bytes(&zeros[..pad as usize])?;
        let off = self.at;
        // SAFETY: plain data: initialized bytes; the format is little-endian and so is the host
        // (the store is not used on other hosts)
        let b = unsafe {
            std::slice::from_raw_parts(a.as_ptr() as *const u8, std::mem::size_of_val(a))
        };
        self.bytes(b)?;
        Ok(json!([off, a.len()]))
    }

    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.w.write_all(b)?;
        self.crc.update(b);
        self.at += b.len() as u64;
        Ok(())
    }
}

/// Is the store usable on this host (the format is little-endian)?
pub const SUPPORTED: bool = cfg!(target_endian = "little");

/// Writes `ix` to `to` (through a temporary file renamed into place).
pub fn save(ix: &TraceIndex, fingerprint: u64, to: &Path) -> std::io::Result<()> {
    save_with(MAGIC, VERSION, fingerprint, to, |w| index_meta(ix, w))
}

type Writer<'a> = DataWriter<BufWriter<&'a mut std::fs::File>>;

fn save_with(
    magic: &[u8; 8],
    version: u32,
    fingerprint: u64,
    to: &Path,
    body: impl FnOnce(&mut Writer<'_>) -> std::io::Result<Value>,
) -> std::io::Result<()> {
    if !SUPPORTED {
        return Err(std::io::Error::other("the index file is little-endian"));
    }
    let dir = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp{}.{:?}",
        to.file_name()
            .map_or("index".into(), |n| n.to_string_lossy()),
        std::process::id(),
        std::thread::current().id()
    ));
    let result =
        write_file(magic, version, fingerprint, &tmp, body).and_then(|_| std::fs::rename(&tmp, to));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_file(
    magic: &[u8; 8],
    version: u32,
    fingerprint: u64,
    tmp: &Path,
    body: impl FnOnce(&mut Writer<'_>) -> std::io::Result<Value>,
) -> std::io::Result<()> {
    let mut f = plx_format::output::create_replacing(tmp)?;
    f.write_all(&[0u8; HEADER])?;
    let mut w = DataWriter {
        w: BufWriter::with_capacity(1 << 20, &mut f),
        at: HEADER as u64,
        crc: crc32fast::Hasher::new(),
    };
    let meta = body(&mut w)?.to_string();
    let data_crc = w.crc.clone().finalize();
    let meta_off = w.at;
    w.w.write_all(meta.as_bytes())?;
    w.w.flush()?;
    drop(w);
    let len = meta_off + meta.len() as u64;
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(magic);
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&fingerprint.to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&meta_off.to_le_bytes());
    h.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(meta.as_bytes()).to_le_bytes());
    h.extend_from_slice(&data_crc.to_le_bytes());
    h.extend_from_slice(&(HEADER as u64).to_le_bytes());
    // not synced: a file cut short or zeroed by a crash fails its length or checksums and is
    // rebuilt
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&h)?;
    Ok(())
}

fn lanes_meta<W: Write>(lanes: &[Lane], w: &mut DataWriter<W>) -> std::io::Result<Vec<Value>> {
    let mut out = Vec::new();
    for l in lanes {
        let mut levels = Vec::new();
        for v in &l.levels {
            levels.push(json!([w.put(&v.at)?, w.put(&v.dur)?]));
        }
        out.push(json!([
            times_meta(&l.start, w)?,
            times_meta(&l.end, w)?,
            w.put(&l.region)?,
            w.put(&l.prefix)?,
            levels
        ]));
    }
    Ok(out)
}

/// A lane's times: `[base, wide, off, far]` ([`Times`]'s arrays).
fn times_meta<W: Write>(t: &Times, w: &mut DataWriter<W>) -> std::io::Result<Value> {
    Ok(json!([
        w.put(&t.base)?,
        w.put(&t.wide)?,
        w.put(&t.off)?,
        w.put(&t.far)?
    ]))
}

fn markers_meta<W: Write>(markers: &[Marker], w: &mut DataWriter<W>) -> std::io::Result<Value> {
    let time: Vec<i64> = markers.iter().map(|m| m.time).collect();
    let event: Vec<u32> = markers.iter().map(|m| m.event).collect();
    let value: Vec<f64> = markers.iter().map(|m| m.value).collect();
    Ok(json!([w.put(&time)?, w.put(&event)?, w.put(&value)?]))
}

fn handoffs_meta<W: Write>(h: &[Handoff], w: &mut DataWriter<W>) -> std::io::Result<Value> {
    Ok(json!([
        w.put(&h.iter().map(|h| h.release).collect::<Vec<i64>>())?,
        w.put(&h.iter().map(|h| h.acquire).collect::<Vec<i64>>())?,
        w.put(&h.iter().map(|h| h.from).collect::<Vec<u32>>())?,
        w.put(&h.iter().map(|h| h.to).collect::<Vec<u32>>())?,
        w.put(&h.iter().map(|h| h.kind as u32).collect::<Vec<u32>>())?,
    ]))
}

fn regions_meta(regions: &[RegionInfo]) -> Vec<Value> {
    regions
        .iter()
        .map(|r| json!([r.name, r.kind.to_u8(), r.file, r.line]))
        .collect()
}

fn index_meta<W: Write>(ix: &TraceIndex, w: &mut DataWriter<W>) -> std::io::Result<Value> {
    let mut tracks = Vec::new();
    for t in &ix.tracks {
        tracks.push(json!({
            "label": t.label, "app": t.app, "host": t.host, "process": t.process,
            "thread": t.thread, "rank": t.rank, "pid": t.pid, "name": t.name,
            "lanes": lanes_meta(&t.lanes, w)?,
            "markers": markers_meta(&t.markers, w)?,
        }));
    }
    let m = &ix.messages;
    let messages = json!([
        w.put(&m.iter().map(|m| m.send).collect::<Vec<i64>>())?,
        w.put(
            &m.iter()
                .map(|m| m.recv.unwrap_or(i64::MIN))
                .collect::<Vec<i64>>()
        )?,
        w.put(&m.iter().map(|m| m.from).collect::<Vec<u32>>())?,
        w.put(
            &m.iter()
                .map(|m| m.to.unwrap_or(u32::MAX))
                .collect::<Vec<u32>>()
        )?,
        w.put(&m.iter().map(|m| m.bytes).collect::<Vec<u64>>())?,
    ]);
    let mut pairs = Vec::new();
    for p in &ix.pairs {
        pairs.push(json!([
            p.from,
            p.to,
            w.put(&p.send)?,
            w.put(&p.bytes)?,
            w.put(&p.recv)?
        ]));
    }
    let handoffs = handoffs_meta(&ix.handoffs, w)?;
    let unmatched = w.put(&ix.unmatched)?;
    Ok(json!({
        "origin": ix.origin, "end": ix.end, "events": ix.events,
        "max_latency": ix.max_latency, "min_latency": ix.min_latency,
        "max_handoff": ix.max_handoff, "regions": regions_meta(ix.regions.all()),
        "user_events": ix.user_events,
        "tracks": tracks, "messages": messages, "pairs": pairs, "handoffs": handoffs,
        "unmatched": unmatched,
    }))
}

fn damaged(why: impl Into<String>) -> Unusable {
    Unusable::Damaged(why.into())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads the index at `from` made with `fingerprint`, checking it as the module says.
pub fn load(from: &Path, fingerprint: u64) -> Result<TraceIndex, Unusable> {
    let (map, meta, data_end) = open_checked(from, MAGIC, VERSION, fingerprint)?;
    Reader {
        map: &map,
        data_end,
    }
    .index(&meta)
}

/// The file at `from` read into memory, its header and checksums checked: the bytes, the
/// meta, where the data ends.
fn open_checked(
    from: &Path,
    magic: &[u8; 8],
    version: u32,
    fingerprint: u64,
) -> Result<(Arc<Bytes>, Value, usize), Unusable> {
    if !SUPPORTED {
        return Err(Unusable::Missing);
    }
    let f = open_regular(from)?;
    let size = f
        .metadata()
        .map_err(|e| damaged(format!("cannot read: {e}")))?
        .len();
    let mut h = [0u8; HEADER];
    if size < HEADER as u64 || read_fully(&f, &mut h, 0)? < HEADER || &h[..8] != magic {
        return Err(damaged("no index header"));
    }
    if u32_at(&h, 8) != version {
        return Err(Unusable::Stale);
    }
    if u64_at(&h, 16) != fingerprint {
        return Err(Unusable::Stale);
    }
    if u64_at(&h, 24) != size {
        return Err(damaged(format!(
            "{size} bytes, the header says {}",
            u64_at(&h, 24)
        )));
    }
    let len = usize::try_from(size).map_err(|_| damaged("larger than memory"))?;
    let mut bytes =
        Bytes::zeroed(len).ok_or_else(|| damaged(format!("cannot allocate {len} bytes")))?;
    let got = read_fully(&f, bytes.as_mut_slice(), 0)?;
    if got != len {
        return Err(damaged(format!(
            "{got} bytes read of {len}: cut while read"
        )));
    }
    let b: &[u8] = &bytes;
    let (meta_off, meta_len) = (u64_at(b, 32), u64_at(b, 40));
    let data_off = u64_at(b, 56);
    if data_off != HEADER as u64
        || meta_off < data_off
        || meta_off.checked_add(meta_len) != Some(b.len() as u64)
    {
        return Err(damaged("the header's sections do not fit the file"));
    }
    let meta = &b[meta_off as usize..];
    if crc32fast::hash(meta) != u32_at(b, 48) {
        return Err(damaged("the meta's checksum does not match"));
    }
    if crc32fast::hash(&b[HEADER..meta_off as usize]) != u32_at(b, 52) {
        return Err(damaged("the data's checksum does not match"));
    }
    let meta: Value =
        serde_json::from_slice(meta).map_err(|e| damaged(format!("meta is not JSON: {e}")))?;
    let data_end = meta_off as usize;
    Ok((Arc::new(bytes), meta, data_end))
}

/// Opens `from` to read if it is a regular file reached without a symbolic link: a FIFO would
/// block the open (or the first read) forever, a device give endless bytes. `Missing` when
/// there is none.
fn open_regular(from: &Path) -> Result<std::fs::File, Unusable> {
    match plx_format::open_regular_nofollow(from) {
        Ok(input) => Ok(input.file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Unusable::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Err(damaged("a symbolic link, not followed"))
        }
        Err(e) => Err(damaged(format!("cannot open: {e}"))),
    }
}

/// Reads `f` from `at` into `buf` until it is full or the file ends: the bytes read.
fn read_fully(f: &std::fs::File, buf: &mut [u8], at: u64) -> Result<usize, Unusable> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(damaged(format!("cannot read: {e}"))),
        }
    }
    Ok(got)
}

struct Reader<'a> {
    map: &'a Arc<Bytes>,
    data_end: usize,
}

fn int(v: &Value, what: &str) -> Result<i64, Unusable> {
    v.as_i64()
        .or_else(|| v.as_u64().and_then(|u| i64::try_from(u).ok()))
        .ok_or_else(|| damaged(format!("{what} is not an integer")))
}

fn text(v: &Value, what: &str) -> Result<String, Unusable> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| damaged(format!("{what} is not text")))
}

fn list<'v>(v: &'v Value, what: &str) -> Result<&'v Vec<Value>, Unusable> {
    v.as_array()
        .ok_or_else(|| damaged(format!("{what} is not a list")))
}

impl Reader<'_> {
    /// The array described by `[offset, length]`, which must have `want` elements if given.
    fn arr<T: Plain>(
        &self,
        v: &Value,
        want: Option<usize>,
        what: &str,
    ) -> Result<Arr<T>, Unusable> {
        let off = int(&v[0], what)?;
        let len = int(&v[1], what)?;
        let bad = || damaged(format!("{what}: array [{off}, {len}] outside the data"));
        let (off, len) = (
            usize::try_from(off).map_err(|_| bad())?,
            usize::try_from(len).map_err(|_| bad())?,
        );
        if want.is_some_and(|w| w != len) {
            return Err(damaged(format!(
                "{what}: {len} elements, expected {want:?}"
            )));
        }
        // bounded by the bytes present: the length is checked against the data before use
        let end = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|n| n.checked_add(off))
            .ok_or_else(bad)?;
        if off < HEADER || end > self.data_end {
            return Err(bad());
        }
        Arr::shared(self.map, off, len).ok_or_else(bad)
    }

    /// The times described by `[base, wide, off, far]`, `want` of them if given.
    fn times(&self, v: &Value, want: Option<usize>, what: &str) -> Result<Times, Unusable> {
        let off: Arr<u32> = self.arr(&v[2], want, what)?;
        let blocks = Some(off.len().div_ceil(SPAN));
        Times::from_parts(
            self.arr(&v[0], blocks, what)?,
            self.arr(&v[1], blocks, what)?,
            off,
            self.arr(&v[3], None, what)?,
        )
        .map_err(|e| damaged(format!("{what}: {e}")))
    }

    fn owned<T: Plain>(
        &self,
        v: &Value,
        want: Option<usize>,
        what: &str,
    ) -> Result<Vec<T>, Unusable> {
        Ok(self.arr::<T>(v, want, what)?.to_vec())
    }

    fn index(&self, m: &Value) -> Result<TraceIndex, Unusable> {
        let regions = region_table(&m["regions"])?;
        let nregions = regions.all().len() as u32;
        let user_events = names(&m["user_events"])?;
        let ntracks = list(&m["tracks"], "tracks")?.len() as u32;
        let mut tracks = Vec::new();
        for t in list(&m["tracks"], "tracks")? {
            let lanes = self.lanes(&t["lanes"], nregions)?;
            let markers = self.markers(&t["markers"], user_events.len() as u32)?;
            let rank = match &t["rank"] {
                Value::Null => None,
                v => Some(u32::try_from(int(v, "rank")?).map_err(|_| damaged("rank"))?),
            };
            tracks.push(Track {
                label: text(&t["label"], "track label")?,
                app: text(&t["app"], "track app")?,
                host: text(&t["host"], "track host")?,
                process: usize::try_from(int(&t["process"], "process")?)
                    .map_err(|_| damaged("process"))?,
                thread: u32::try_from(int(&t["thread"], "thread")?)
                    .map_err(|_| damaged("thread"))?,
                rank,
                pid: u32::try_from(int(&t["pid"], "pid")?).map_err(|_| damaged("pid"))?,
                name: text(&t["name"], "track name")?,
                lanes,
                markers,
            });
        }

        let ms = &m["messages"];
        let send: Vec<i64> = self.owned(&ms[0], None, "message sends")?;
        let n = send.len();
        let recv: Vec<i64> = self.owned(&ms[1], Some(n), "message receives")?;
        let from: Vec<u32> = self.owned(&ms[2], Some(n), "message senders")?;
        let to: Vec<u32> = self.owned(&ms[3], Some(n), "message receivers")?;
        let bytes: Vec<u64> = self.owned(&ms[4], Some(n), "message bytes")?;
        in_range(&from, ntracks, "sender")?;
        let messages: Vec<Message> = (0..n)
            .map(|i| Message {
                send: send[i],
                recv: (recv[i] != i64::MIN).then_some(recv[i]),
                from: from[i],
                to: (to[i] != u32::MAX).then_some(to[i]),
                bytes: bytes[i],
            })
            .collect();
        if messages.iter().any(|m| m.to.is_some_and(|t| t >= ntracks)) {
            return Err(damaged("a receiver is out of range"));
        }
        let mut pairs = Vec::new();
        for p in list(&m["pairs"], "pairs")? {
            let send: Arr<i64> = self.arr(&p[2], None, "pair sends")?;
            let n = send.len();
            let pm = PairMessages {
                from: u32::try_from(int(&p[0], "pair sender")?).map_err(|_| damaged("pair"))?,
                to: u32::try_from(int(&p[1], "pair receiver")?).map_err(|_| damaged("pair"))?,
                bytes: self.arr(&p[3], Some(n + 1), "pair bytes")?,
                recv: self.arr(&p[4], Some(n + 1), "pair receives")?,
                send,
            };
            in_range(&[pm.from, pm.to], ntracks, "pair track")?;
            pairs.push(pm);
        }
        let handoffs = self.handoffs(&m["handoffs"], ntracks)?;
        Ok(TraceIndex {
            tracks,
            regions,
            user_events,
            messages,
            max_latency: int(&m["max_latency"], "max_latency")?,
            min_latency: int(&m["min_latency"], "min_latency")?,
            pairs,
            unmatched: self.arr(&m["unmatched"], None, "unmatched sends")?,
            handoffs,
            max_handoff: int(&m["max_handoff"], "max_handoff")?,
            origin: int(&m["origin"], "origin")?,
            end: int(&m["end"], "end")?,
            events: int(&m["events"], "events")? as u64,
        })
    }

    /// A track's lanes, their regions below `nregions`.
    fn lanes(&self, v: &Value, nregions: u32) -> Result<Vec<Lane>, Unusable> {
        let mut lanes = Vec::new();
        for l in list(v, "lanes")? {
            let start = self.times(&l[0], None, "lane starts")?;
            let n = start.len();
            let mut levels = Vec::new();
            // level k has a block of FANOUT^(k+1) per FANOUT^(k+1) intervals, up to one block
            let (mut size, mut blocks) = (1usize, n);
            for v in list(&l[4], "levels")? {
                if blocks <= 1 {
                    return Err(damaged("a lane has more levels than intervals need"));
                }
                size *= FANOUT;
                blocks = blocks.div_ceil(FANOUT);
                let level = Level {
                    at: self.arr(&v[0], Some(blocks), "block maxima")?,
                    dur: self.arr(&v[1], Some(blocks), "block maxima's durations")?,
                };
                if let Some(j) = (0..blocks).find(|&j| {
                    let at = level.at[j] as usize;
                    at < j * size || at >= ((j + 1) * size).min(n)
                }) {
                    return Err(damaged(format!("block maximum {j} lies outside its block")));
                }
                levels.push(level);
            }
            if blocks > 1 {
                return Err(damaged("a lane has fewer levels than its intervals need"));
            }
            let lane = Lane {
                end: self.times(&l[1], Some(n), "lane ends")?,
                region: self.arr(&l[2], Some(n), "lane regions")?,
                prefix: self.arr(&l[3], Some(n.div_ceil(FANOUT) + 1), "lane sums")?,
                levels,
                start,
            };
            in_range(&lane.region, nregions, "region")?;
            lanes.push(lane);
        }
        Ok(lanes)
    }

    /// A track's markers, their user events below `nevents`.
    fn markers(&self, mk: &Value, nevents: u32) -> Result<Vec<Marker>, Unusable> {
        let time: Vec<i64> = self.owned(&mk[0], None, "marker times")?;
        let event: Vec<u32> = self.owned(&mk[1], Some(time.len()), "marker events")?;
        let value: Vec<f64> = self.owned(&mk[2], Some(time.len()), "marker values")?;
        in_range(&event, nevents, "user event")?;
        Ok((0..time.len())
            .map(|i| Marker {
                time: time[i],
                event: event[i],
                value: value[i],
            })
            .collect())
    }

    /// Hand-offs between tracks below `ntracks`.
    fn handoffs(&self, h: &Value, ntracks: u32) -> Result<Vec<Handoff>, Unusable> {
        let release: Vec<i64> = self.owned(&h[0], None, "hand-off releases")?;
        let n = release.len();
        let acquire: Vec<i64> = self.owned(&h[1], Some(n), "hand-off acquisitions")?;
        let from: Vec<u32> = self.owned(&h[2], Some(n), "hand-off senders")?;
        let to: Vec<u32> = self.owned(&h[3], Some(n), "hand-off receivers")?;
        let kind: Vec<u32> = self.owned(&h[4], Some(n), "hand-off kinds")?;
        in_range(&from, ntracks, "hand-off track")?;
        in_range(&to, ntracks, "hand-off track")?;
        in_range(&kind, 256, "hand-off kind")?;
        Ok((0..n)
            .map(|i| Handoff {
                release: release[i],
                acquire: acquire[i],
                from: from[i],
                to: to[i],
                kind: kind[i] as u8,
            })
            .collect())
    }
}

fn in_range(v: &[u32], n: u32, what: &str) -> Result<(), Unusable> {
    match v.iter().find(|&&x| x >= n) {
        Some(x) => Err(damaged(format!("{what} {x} out of range (< {n})"))),
        None => Ok(()),
    }
}

/// The region table listed in the meta (each region once).
fn region_table(v: &Value) -> Result<RegionTable, Unusable> {
    let mut regions = RegionTable::default();
    for (i, r) in list(v, "regions")?.iter().enumerate() {
        let kind = u8::try_from(int(&r[1], "region kind")?)
            .map_err(|_| damaged("region kind out of range"))?;
        let got = regions.intern(RegionInfo {
            name: text(&r[0], "region name")?,
            kind: RegionKind::from_u8(kind),
            file: text(&r[2], "region file")?,
            line: u32::try_from(int(&r[3], "region line")?)
                .map_err(|_| damaged("region line out of range"))?,
        });
        if got as usize != i {
            return Err(damaged("a region is listed twice"));
        }
    }
    Ok(regions)
}

fn names(v: &Value) -> Result<Vec<String>, Unusable> {
    list(v, "user events")?
        .iter()
        .map(|v| text(v, "user event"))
        .collect()
}
