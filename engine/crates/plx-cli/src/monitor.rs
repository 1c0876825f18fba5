//! `plx run --monitor`: a thread of plx run sampling the system from /proc (CPU utilisation per core, memory, network and disk bytes) into `DIR/metrics.monitor.<host>.plx`.
//!
//! IPS-2's system monitors: what the machine did while the program ran, on the program's time
//! base (`CLOCK_MONOTONIC` of the host, as the processes' clocks). One monitor per host: under
//! an MPI launcher only the plx run of the host's first local rank samples.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use plx_format::{MetricMode, MetricSource, MetricWriter, TimeBase};

use crate::{CliError, Exit};

/// What can be monitored.
pub const SOURCES: [&str; 4] = ["cpu", "mem", "net", "disk"];

/// The sources a `--monitor` value names, in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources(pub Vec<String>);

/// The sources of a `--monitor` value (`cpu,mem`); errors name the unknown one.
pub fn parse_sources(text: &str) -> Result<Sources, String> {
    let mut out: Vec<String> = Vec::new();
    for s in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !SOURCES.contains(&s) {
            return Err(format!(
                "--monitor: unknown source \"{s}\" (sources: {})",
                SOURCES.join(", ")
            ));
        }
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    if out.is_empty() {
        return Err(format!("--monitor needs sources: {}", SOURCES.join(",")));
    }
    Ok(Sources(out))
}

/// Is this plx run the host's first local rank (or not under an MPI launcher)?
pub fn first_on_host() -> bool {
    for var in [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "MPI_LOCAL_RANK",
        "SLURM_LOCALID",
        "PALS_LOCAL_RANKID",
    ] {
        if let Ok(v) = std::env::var(var) {
            return v.trim() == "0";
        }
    }
    true
}

fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Per-core (and total, first) busy and all jiffies of /proc/stat.
fn cpu_times(stat: &str) -> Vec<(String, u64, u64)> {
    stat.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.to_string();
            let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal (guest is inside user)
            let all: u64 = v.iter().take(8).sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            Some((name, all - idle, all))
        })
        .collect()
}

/// Used memory: MemTotal − MemAvailable, bytes.
fn mem_used(meminfo: &str) -> Option<f64> {
    let field = |k: &str| -> Option<f64> {
        let l = meminfo.lines().find(|l| l.starts_with(k))?;
        let kb: f64 = l.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024.0)
    };
    Some(field("MemTotal:")? - field("MemAvailable:")?)
}

/// Bytes received and sent over every interface but loopback.
fn net_bytes(dev: &str) -> (f64, f64) {
    let (mut rx, mut tx) = (0.0, 0.0);
    for l in dev.lines().skip(2) {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        if name.trim() == "lo" {
            continue;
        }
        let v: Vec<f64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        rx += v.first().copied().unwrap_or(0.0);
        tx += v.get(8).copied().unwrap_or(0.0);
    }
    (rx, tx)
}

/// Bytes read and written by whole disks (those of /sys/block, partitions excluded).
fn disk_bytes(diskstats: &str, disks: &[String]) -> (f64, f64) {
    let (mut rd, mut wr) = (0.0, 0.0);
    for l in diskstats.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 || !disks.iter().any(|d| d == f[2]) {
            continue;
        }
        rd += f[5].parse::<f64>().unwrap_or(0.0) * 512.0;
        wr += f[9].parse::<f64>().unwrap_or(0.0) * 512.0;
    }
    (rd, wr)
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The running monitor; [`Monitor::stop`] takes a last sample and closes the file.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<std::io::Result<PathBuf>>>,
    /// The file's name, for the message of a write that failed.
    name: String,
}

impl Monitor {
    /// Starts sampling `sources` every `period_ms` into `dir`.
    pub fn start(dir: &Path, sources: &[String], period_ms: u32) -> Result<Monitor, CliError> {
        let host = hostname();
        let path = dir.join(format!("metrics.monitor.{host}.plx"));
        let src = MetricSource {
            kind: "monitor".into(),
            origin: sources.join(","),
            host: host.clone(),
            time_base: TimeBase::Monotonic,
            period_ns: period_ms as u64 * 1_000_000,
        };
        let mut w = MetricWriter::create(&path, &src).map_err(|e| {
            CliError::new(
                Exit::Input,
                format!("{}: cannot create: {e}", path.display()),
            )
        })?;
        let has = |s: &str| sources.iter().any(|x| x == s);
        let mut ids = Ids::default();
        let io = |e: std::io::Error| CliError::new(Exit::Io, format!("{}: {e}", path.display()));
        if has("cpu") {
            for (name, _, _) in cpu_times(&read("/proc/stat")) {
                let metric = if name == "cpu" {
                    "cpu.util".to_string()
                } else {
                    format!("{name}.util")
                };
                ids.cpu
                    .push(w.define(&metric, "%", MetricMode::Absolute).map_err(io)?);
            }
        }
        if has("mem") {
            ids.mem = Some(
                w.define("mem.used", "bytes", MetricMode::Absolute)
                    .map_err(io)?,
            );
        }
        if has("net") {
            ids.net = Some((
                w.define("net.rx", "bytes", MetricMode::Cumulative)
                    .map_err(io)?,
                w.define("net.tx", "bytes", MetricMode::Cumulative)
                    .map_err(io)?,
            ));
        }
        if has("disk") {
            ids.disk = Some((
                w.define("disk.read", "bytes", MetricMode::Cumulative)
                    .map_err(io)?,
                w.define("disk.write", "bytes", MetricMode::Cumulative)
                    .map_err(io)?,
            ));
        }
        let disks: Vec<String> = std::fs::read_dir("/sys/block")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let period = Duration::from_millis(period_ms.max(1) as u64);
        // the first sample here, before the program starts (a thread started under load may
        // first run after the program has): the CPU's references, the other sources' values;
        // its write error, if any, is the thread's
        let mut next = std::time::Instant::now();
        let mut refs: Vec<CpuRef> = Vec::new();
        let first = sample(&mut w, &ids, &disks, &mut refs, false);
        let thread = std::thread::Builder::new()
            .name("plx-monitor".into())
            .spawn(move || {
                first?;
                loop {
                    next += period;
                    let now = std::time::Instant::now();
                    if next <= now {
                        next = now + period; // a stall: resume a period later, no catching up
                    }
                    // sleep in slices so that stop() is prompt
                    while !flag.load(Ordering::Acquire) {
                        let now = std::time::Instant::now();
                        if now >= next {
                            break;
                        }
                        std::thread::sleep((next - now).min(Duration::from_millis(20)));
                    }
                    let last = flag.load(Ordering::Acquire);
                    sample(&mut w, &ids, &disks, &mut refs, last)?;
                    if last {
                        break;
                    }
                }
                w.flush()?;
                Ok(w.path().to_path_buf())
            })
            .map_err(|e| {
                CliError::new(
                    Exit::Environment,
                    format!("cannot start the monitor thread: {e}"),
                )
            })?;
        Ok(Monitor {
            stop,
            thread: Some(thread),
            name: format!("metrics.monitor.{host}.plx"),
        })
    }

    /// Takes the last sample and closes the file.
    pub fn stop(mut self) -> Result<(), CliError> {
        self.stop.store(true, Ordering::Release);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Ok(_))) | None => Ok(()),
            Some(Ok(Err(e))) => Err(CliError::new(
                Exit::Io,
                format!("{}: the samples from then on are lost: {e}", self.name),
            )),
            Some(Err(_)) => Err(CliError::new(
                Exit::Io,
                "monitor: the thread panicked".to_string(),
            )),
        }
    }
}

/// Metric ids of each source.
#[derive(Default)]
struct Ids {
    cpu: Vec<u32>,
    mem: Option<u32>,
    net: Option<(u32, u32)>,
    disk: Option<(u32, u32)>,
}

/// A CPU line's (the total's or a core's) reference: its busy and all jiffies at the start of
/// the interval not written yet, that start's time, and the value it last wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuRef {
    busy: u64,
    all: u64,
    t: i64,
    value: Option<f64>,
}

/// One sample of every source. CPU utilisation is that of the interval since the line's
/// reference, so it is written at the reference's time (a level holds until the next sample).
/// A line whose jiffies did not move since its reference (a period shorter than the clock
/// tick of /proc/stat, 10 ms) writes nothing and keeps its reference: its interval goes on
/// into the next sample, and its last value holds meanwhile. The last sample repeats each
/// line's last value at its own time, closing the line's last interval.
fn sample(
    w: &mut MetricWriter,
    ids: &Ids,
    disks: &[String],
    refs: &mut Vec<CpuRef>,
    last: bool,
) -> std::io::Result<()> {
    let t = now_ns();
    let mut values: Vec<(u32, f64)> = Vec::new();
    if !ids.cpu.is_empty() {
        let now: Vec<(u64, u64)> = cpu_times(&read("/proc/stat"))
            .into_iter()
            .map(|(_, busy, all)| (busy, all))
            .collect();
        let (at, closing) = cpu_values(&ids.cpu, refs, &now, t, last);
        for (time, entries) in at {
            w.sample(time, &entries)?;
        }
        values = closing;
    }
    if let Some(id) = ids.mem {
        if let Some(m) = mem_used(&read("/proc/meminfo")) {
            values.push((id, m));
        }
    }
    if let Some((rx, tx)) = ids.net {
        let (r, x) = net_bytes(&read("/proc/net/dev"));
        values.extend([(rx, r), (tx, x)]);
    }
    if let Some((rd, wr)) = ids.disk {
        let (r, x) = disk_bytes(&read("/proc/diskstats"), disks);
        values.extend([(rd, r), (wr, x)]);
    }
    if !values.is_empty() {
        w.sample(t, &values)?;
    }
    Ok(())
}

/// Values of metrics, by metric id.
type Values = Vec<(u32, f64)>;

/// The CPU lines' values of a sample at `t` with jiffies `now`: (time, values) in time order,
/// each line's value at its reference's time, and (when `last`) every line's last value, to
/// be written at `t`. Moves each reference its value was written for to `t`; the first sample
/// (or a change in the number of lines) sets the references and has no values.
fn cpu_values(
    ids: &[u32],
    refs: &mut Vec<CpuRef>,
    now: &[(u64, u64)],
    t: i64,
    last: bool,
) -> (Vec<(i64, Values)>, Values) {
    let mut at: std::collections::BTreeMap<i64, Values> = Default::default();
    let mut closing = Vec::new();
    if refs.len() != now.len() {
        *refs = now
            .iter()
            .map(|&(busy, all)| CpuRef {
                busy,
                all,
                t,
                value: None,
            })
            .collect();
    } else {
        for (&id, (r, &(busy, all))) in ids.iter().zip(refs.iter_mut().zip(now)) {
            let d = all.saturating_sub(r.all);
            if d > 0 {
                let v = 100.0 * busy.saturating_sub(r.busy) as f64 / d as f64;
                at.entry(r.t).or_default().push((id, v));
                *r = CpuRef {
                    busy,
                    all,
                    t,
                    value: Some(v),
                };
            }
            if last {
                closing.extend(r.value.map(|v| (id, v)));
            }
        }
    }
    (at.into_iter().collect(), closing)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core whose jiffies did not move in a period keeps its reference: its next value is
    /// that of the whole interval, at the reference's time, and the last sample closes every
    /// line with its last value, also one that did not move in the last period.
    #[test]
    fn cpu_lines_without_a_tick_keep_their_interval() {
        let ids = [0, 1];
        let mut refs = Vec::new();
        let (at, closing) = cpu_values(&ids, &mut refs, &[(0, 0), (0, 0)], 100, false);
        assert!(at.is_empty() && closing.is_empty());
        // core 1 had no tick over [100, 200)
        let (at, closing) = cpu_values(&ids, &mut refs, &[(1, 2), (0, 0)], 200, false);
        assert_eq!(at, vec![(100, vec![(0, 50.0)])]);
        assert!(closing.is_empty());
        // core 1's value is that of [100, 300), at 100
        let (at, _) = cpu_values(&ids, &mut refs, &[(3, 4), (1, 4)], 300, false);
        assert_eq!(at, vec![(100, vec![(1, 25.0)]), (200, vec![(0, 100.0)])]);
        // no tick on either core in the last period: both closed with their last value
        let (at, closing) = cpu_values(&ids, &mut refs, &[(3, 4), (1, 4)], 305, true);
        assert!(at.is_empty());
        assert_eq!(closing, vec![(0, 100.0), (1, 25.0)]);
        // a tick on core 0 only: its value at 300 and at 310, core 1's last at 310
        let (at, closing) = cpu_values(&ids, &mut refs, &[(3, 5), (1, 4)], 310, true);
        assert_eq!(at, vec![(300, vec![(0, 0.0)])]);
        assert_eq!(closing, vec![(0, 0.0), (1, 25.0)]);
    }

    #[test]
    fn proc_parsers() {
        let stat = "cpu  10 0 10 70 10 0 0 0 0 0\ncpu0 5 0 5 35 5 0 0 0 0 0\nintr 1\n";
        assert_eq!(
            cpu_times(stat),
            vec![("cpu".into(), 20, 100), ("cpu0".into(), 10, 50)]
        );
        let mem = "MemTotal:       1000 kB\nMemFree: 10 kB\nMemAvailable:    400 kB\n";
        assert_eq!(mem_used(mem), Some(600.0 * 1024.0));
        let dev = "h1\nh2\n    lo: 99 0 0 0 0 0 0 0 99 0 0 0 0 0 0 0\n  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n";
        assert_eq!(net_bytes(dev), (100.0, 200.0));
        let ds =
            "   8       0 sda 10 0 4 0 20 0 8 0 0 0 0\n   8       1 sda1 10 0 4 0 20 0 8 0 0 0 0\n";
        assert_eq!(disk_bytes(ds, &["sda".to_string()]), (2048.0, 4096.0));
        assert!(parse_sources("cpu,net,cpu").unwrap().0 == vec!["cpu", "net"]);
        assert!(parse_sources("gpu")
            .unwrap_err()
            .contains("unknown source \"gpu\""));
    }
}
