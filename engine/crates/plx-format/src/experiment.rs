//! Finds the process images of an experiment directory and reads each (process data, trace index,
//! clock), with the live files a killed process left standing in for its missing records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::clock::{ClockMap, ClockSource};
use crate::live::{parse_live_name, LiveFiles, LiveKind, LIVE_HEADER_LEN};
use crate::process::ProcessData;
use crate::trace::TraceIndex;
use crate::warning::{Warning, WarningKind};
use crate::FormatError;

/// One process image: `process[.N].plx` and its `trace[.N].plx`.
#[derive(Debug, Clone)]
pub struct ProcessImage {
    /// The `<host>.<pid>` directory.
    pub dir: PathBuf,
    /// Host from the directory name.
    pub host: String,
    /// Pid from the directory name.
    pub pid: u32,
    /// 0 for `process.plx`, N for `process.N.plx`.
    pub image: u32,
    /// Decoded process records (empty if the file is missing).
    pub process: ProcessData,
    /// The trace's chunk index, if there is a trace file.
    pub trace: Option<TraceIndex>,
    /// Tick conversion for this image.
    pub clock: ClockMap,
    /// The live files of the directory (`live.<thread>.<kind>`), empty but for the directory's
    /// last image. Live files belong to the image running when the process was killed; an
    /// `exec()` without a new pid shares the directory, so they are attached to the image with
    /// the highest N. Their data is in [`ProcessData::threads`] where records were missing.
    pub live_files: Vec<PathBuf>,
    /// The application it belongs to (index into [`Experiment::apps`]).
    pub app: u32,
}

impl ProcessImage {
    /// Path of `process[.N].plx`.
    pub fn process_path(&self) -> PathBuf {
        self.dir.join(file_name("process", self.image))
    }

    /// Path of `trace[.N].plx`.
    pub fn trace_path(&self) -> PathBuf {
        self.dir.join(file_name("trace", self.image))
    }

    /// Did the image write ProcessEnd?
    pub fn finished(&self) -> bool {
        self.process.end.is_some()
    }
}

/// An experiment directory, read.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// The directory.
    pub dir: PathBuf,
    /// Process images sorted by application, host, pid, image.
    pub images: Vec<ProcessImage>,
    /// Everything damaged or missing.
    pub warnings: Vec<Warning>,
    /// The applications: one with an empty name for a plain experiment directory; those a
    /// session file lists for a session (see [`SESSION_FILE`]).
    pub apps: Vec<AppDef>,
}

/// The file that makes a directory a session: one line per application,
/// `app NAME DIR live|compare` (DIR relative to the session directory or absolute; `#` starts
/// a comment).
pub const SESSION_FILE: &str = "session.txt";

/// An application of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDef {
    /// Its name (`plx run --app NAME`); empty for a plain experiment.
    pub name: String,
    /// Its experiment directory.
    pub dir: PathBuf,
    /// Comparison mode: an older run whose time base is shifted to start with the others.
    pub compare: bool,
}

/// Is `name` usable as an application's name (and directory name)?
pub fn valid_app_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
}

/// Parses a session file's text; errors name the line.
pub fn parse_session(text: &str) -> Result<Vec<(String, PathBuf, bool)>, String> {
    let mut out: Vec<(String, PathBuf, bool)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let (name, dir, mode) = match words.as_slice() {
            ["app", name, dir] => (*name, *dir, "live"),
            ["app", name, dir, mode] => (*name, *dir, *mode),
            _ => {
                return Err(format!(
                    "line {}: expected 'app NAME DIR [live|compare]', found '{line}'",
                    i + 1
                ))
            }
        };
        let compare = match mode {
            "live" => false,
            "compare" => true,
            m => {
                return Err(format!(
                    "line {}: unknown mode '{m}' (live or compare)",
                    i + 1
                ))
            }
        };
        if !valid_app_name(name) {
            return Err(format!(
                "line {}: application name '{name}': use letters, digits, '-', '_', '.' or '+'",
                i + 1
            ));
        }
        if out.iter().any(|(n, _, _)| n == name) {
            return Err(format!("line {}: application '{name}' listed twice", i + 1));
        }
        out.push((name.to_string(), PathBuf::from(dir), compare));
    }
    Ok(out)
}

fn file_name(stem: &str, image: u32) -> String {
    if image == 0 {
        format!("{stem}.plx")
    } else {
        format!("{stem}.{image}.plx")
    }
}

/// `process.plx` → Some(0), `process.3.plx` → Some(3).
fn image_of(name: &str, stem: &str) -> Option<u32> {
    let rest = name.strip_prefix(stem)?.strip_suffix(".plx")?;
    if rest.is_empty() {
        return Some(0);
    }
    let n: u32 = rest.strip_prefix('.')?.parse().ok()?;
    (n > 0).then_some(n)
}

/// `<host>.<pid>` → (host, pid).
fn parse_process_dir(name: &str) -> Option<(String, u32)> {
    let (host, pid) = name.rsplit_once('.')?;
    if host.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((host.to_string(), pid.parse().ok()?))
}

impl Experiment {
    /// Reads every process image under `dir`, or, when `dir` holds a [`SESSION_FILE`], under
    /// each application's directory. Errors only if a directory is unreadable or holds no
    /// `<host>.<pid>/process*.plx`, or the session file is malformed; all other damage becomes
    /// warnings.
    pub fn open(dir: &Path) -> Result<Experiment, FormatError> {
        let session = dir.join(SESSION_FILE);
        if !session.exists() {
            let (images, warnings) = Self::open_images(dir, 0)?;
            return Ok(Experiment {
                dir: dir.to_path_buf(),
                images,
                warnings,
                apps: vec![AppDef {
                    name: String::new(),
                    dir: dir.to_path_buf(),
                    compare: false,
                }],
            });
        }
        let text = crate::input::read_regular_text(&session, crate::input::TEXT_LIMIT)
            .map_err(|e| FormatError::Io(session.clone(), e))?;
        let listed =
            parse_session(&text).map_err(|m| FormatError::BadSession(session.clone(), m))?;
        if listed.is_empty() {
            return Err(FormatError::BadSession(
                session,
                "no application yet (plx run --session DIR --app NAME adds one)".to_string(),
            ));
        }
        let mut images = Vec::new();
        let mut warnings = Vec::new();
        let mut apps = Vec::new();
        let mut seen: Vec<(PathBuf, String)> = Vec::new();
        for (i, (name, adir, compare)) in listed.into_iter().enumerate() {
            let adir = if adir.is_absolute() {
                adir
            } else {
                dir.join(adir)
            };
            let real = std::fs::canonicalize(&adir).unwrap_or_else(|_| adir.clone());
            if let Some((_, other)) = seen.iter().find(|(p, _)| *p == real) {
                return Err(FormatError::BadSession(
                    session.clone(),
                    format!(
                        "applications '{other}' and '{name}' are the same directory {}",
                        adir.display()
                    ),
                ));
            }
            seen.push((real, name.clone()));
            let (imgs, w) = Self::open_images(&adir, i as u32).map_err(|e| {
                FormatError::BadSession(session.clone(), format!("application '{name}': {e}"))
            })?;
            images.extend(imgs);
            warnings.extend(w);
            apps.push(AppDef {
                name,
                dir: adir,
                compare,
            });
        }
        Ok(Experiment {
            dir: dir.to_path_buf(),
            images,
            warnings,
            apps,
        })
    }

    /// Is `dir` a session (holds a [`SESSION_FILE`])?
    pub fn is_session(dir: &Path) -> bool {
        dir.join(SESSION_FILE).exists()
    }

    /// The process images of one experiment directory, tagged with application `app`.
    fn open_images(dir: &Path, app: u32) -> Result<(Vec<ProcessImage>, Vec<Warning>), FormatError> {
        let entries = std::fs::read_dir(dir).map_err(|e| FormatError::Io(dir.to_path_buf(), e))?;
        let mut warnings = Vec::new();
        let mut found = Vec::new();
        let mut any_process_file = false;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((host, pid)) = parse_process_dir(&name) else {
                continue;
            };
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let mut procs = BTreeSet::new();
            let mut traces = BTreeSet::new();
            let mut live = Vec::new();
            if let Ok(files) = std::fs::read_dir(&path) {
                for f in files.flatten() {
                    let fname = f.file_name().to_string_lossy().into_owned();
                    if let Some(n) = image_of(&fname, "process") {
                        procs.insert(n);
                    } else if let Some(n) = image_of(&fname, "trace") {
                        traces.insert(n);
                    } else if parse_live_name(&fname)
                        .is_some_and(|(_, kind)| LiveKind::from_name(kind).is_some())
                    {
                        live.push(f.path());
                    }
                }
            }
            live.sort();
            any_process_file |= !procs.is_empty();
            if procs.is_empty() && traces.is_empty() {
                warnings.push(Warning::file(
                    path.join("process.plx"),
                    WarningKind::MissingFile,
                    "missing: the process wrote nothing".to_string(),
                ));
                continue;
            }
            let last = procs.union(&traces).max().copied();
            for image in procs.union(&traces) {
                found.push(ImageFiles {
                    host: host.clone(),
                    pid,
                    image: *image,
                    dir: path.clone(),
                    has_proc: procs.contains(image),
                    has_trace: traces.contains(image),
                    live: if Some(*image) == last {
                        live.clone()
                    } else {
                        Vec::new()
                    },
                });
            }
        }
        if !any_process_file {
            return Err(FormatError::NotAnExperiment(dir.to_path_buf()));
        }
        found.sort_by(|a, b| (&a.host, a.pid, a.image).cmp(&(&b.host, b.pid, b.image)));
        // images read in parallel (one work item each), their warnings kept in image order
        let read: Vec<(ProcessImage, Vec<Warning>)> = {
            use rayon::prelude::*;
            found
                .into_par_iter()
                .map(|f| {
                    let mut w = Vec::new();
                    let mut img = read_image(f, &mut w);
                    img.app = app;
                    (img, w)
                })
                .collect()
        };
        let mut images = Vec::with_capacity(read.len());
        for (img, w) in read {
            images.push(img);
            warnings.extend(w);
        }
        Ok((images, warnings))
    }
}

/// The files of one process image found in its directory.
struct ImageFiles {
    host: String,
    pid: u32,
    image: u32,
    dir: PathBuf,
    has_proc: bool,
    has_trace: bool,
    live: Vec<PathBuf>,
}

fn read_image(files: ImageFiles, warnings: &mut Vec<Warning>) -> ProcessImage {
    let ImageFiles {
        host,
        pid,
        image,
        dir,
        has_proc,
        has_trace,
        live,
    } = files;
    let ppath = dir.join(file_name("process", image));
    let tpath = dir.join(file_name("trace", image));
    let mut process = if has_proc {
        ProcessData::read(&ppath, warnings)
    } else {
        warnings.push(Warning::file(
            &ppath,
            WarningKind::MissingFile,
            "missing: only the trace is left (regions have no names)".to_string(),
        ));
        ProcessData {
            path: ppath.clone(),
            ..ProcessData::default()
        }
    };
    let mut trace = if has_trace {
        TraceIndex::scan(&tpath, warnings)
    } else {
        let recorded: u64 = process
            .threads
            .values()
            .filter_map(|t| t.profile.as_ref())
            .map(|p| p.trace_events)
            .sum();
        if recorded > 0 {
            warnings.push(Warning::file(
                &tpath,
                WarningKind::MissingFile,
                format!("missing: the profiles say {recorded} trace events were recorded"),
            ));
        }
        None
    };
    if !live.is_empty() {
        let files = LiveFiles::read(&live, warnings);
        // a trace buffer's events follow the thread's chunks (the runtime zeroes a buffer it
        // has written, and marks one being written with base 0: those are in the trace file
        // if its write completed)
        for lt in &files.trace {
            let th = lt.header.thread;
            match trace.as_mut() {
                Some(t) if lt.base_ticks != 0 => {
                    t.add_recovered(&lt.path, th, lt.base_ticks, LIVE_HEADER_LEN + 8, lt.words)
                }
                _ => warnings.push(Warning::file(
                    &lt.path,
                    WarningKind::Truncated {
                        missing: lt.words as u64 * 8,
                    },
                    format!(
                        "thread {th}: {} trace event words were being written when the process was killed: those the trace file took are kept, the others are lost",
                        lt.words
                    ),
                )),
            }
        }
        files.recover_into(&mut process, trace.as_ref());
    }
    let mut pairs = process.calibrations.clone();
    if let Some(t) = &trace {
        pairs.extend(t.calibrations());
    }
    let clock = ClockMap::new(
        &pairs,
        process.clock_rate,
        process.info.as_ref().map(|i| i.clock),
    );
    if clock.source == ClockSource::Assumed {
        warnings.push(Warning::file(
            &ppath,
            WarningKind::Clock,
            "no calibration and no clock rate: assuming 1 tick = 1 ns".to_string(),
        ));
    }
    calibration_warnings(&ppath, &pairs, &process, &clock, warnings);
    let img = ProcessImage {
        dir,
        host,
        pid,
        image,
        process,
        trace,
        clock,
        live_files: live,
        app: 0,
    };
    thread_warnings(&img, warnings);
    img
}

/// Calibration pairs that contradict the run (damaged or forged records showed 1,000 ticks as
/// 200 s): a run longer by the calibrated clock than by the wall clock (from `ProcessInfo`'s
/// `start_realtime_ns` to `ProcessEnd`'s `realtime_ns`; in a file without them, to the last
/// write of the process file, its modification time) by more than a second; and a rate more
/// than 5 % from the one measured at start (`ClockRate`) unless the calibrated run agrees with
/// the wall clock (the start's short measurement is the one to doubt then: 64 ranks on 2 cores
/// measured 51,382 MHz for a 2,596 MHz clock). The file's own records come first: a copied
/// experiment has a new modification time.
fn calibration_warnings(
    ppath: &Path,
    pairs: &[crate::records::Calibration],
    process: &ProcessData,
    clock: &ClockMap,
    warnings: &mut Vec<Warning>,
) {
    if clock.source != ClockSource::Calibrated {
        return;
    }
    let warn = |m: String| Warning::file(ppath, WarningKind::Clock, m);
    let run = calibrated_run(ppath, pairs, process, clock).filter(|(_, wall_s)| *wall_s >= 0.0);
    let agrees = run.is_some_and(|(run_s, wall_s)| (run_s - wall_s).abs() <= 1.0 + 0.1 * wall_s);
    if let Some(rate) = process.clock_rate.filter(|r| r.is_finite() && *r > 0.0) {
        let calibrated = clock.ticks_per_second();
        if (calibrated / rate - 1.0).abs() > 0.05 && !agrees {
            warnings.push(warn(format!(
                "the calibration records give {:.6} MHz but the clock rate measured at start is {:.6} MHz: times may be wrong",
                calibrated / 1e6,
                rate / 1e6
            )));
        }
    }
    if let Some((run_s, wall_s)) = run.filter(|(run_s, wall_s)| *run_s > wall_s + 1.0) {
        let by = if ended_realtime(process).is_some() {
            "it ended"
        } else {
            "its file was last written"
        };
        warnings.push(warn(format!(
            "by its calibration records the process ran {run_s:.3} s, but {by} {wall_s:.3} s after it started: times may be wrong"
        )));
    }
}

/// The wall-clock time of the process's end, ns since the epoch, from its own end record.
fn ended_realtime(process: &ProcessData) -> Option<u64> {
    process
        .end
        .as_ref()
        .map(|e| e.realtime_ns)
        .filter(|&ns| ns > 0)
}

/// The run's length by the calibrated clock (first calibration to the process's end) and by
/// the wall clock (its start to its end record's time, else to its process file's last write),
/// in seconds; None when unknown.
fn calibrated_run(
    ppath: &Path,
    pairs: &[crate::records::Calibration],
    process: &ProcessData,
    clock: &ClockMap,
) -> Option<(f64, f64)> {
    let first = pairs.iter().map(|c| c.ticks).min()?;
    let last = pairs
        .iter()
        .map(|c| c.ticks)
        .chain(process.end.as_ref().map(|e| e.ticks))
        .max()?;
    let info = process.info.as_ref()?;
    let end_s = match ended_realtime(process) {
        Some(ns) => ns as f64 * 1e-9,
        None => std::fs::metadata(ppath)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())?
            .as_secs_f64(),
    };
    let run_s = last.saturating_sub(first) as f64 * clock.ns_per_tick() * 1e-9;
    let wall_s = end_s - info.start_realtime_ns as f64 * 1e-9;
    Some((run_s, wall_s))
}

fn thread_warnings(img: &ProcessImage, warnings: &mut Vec<Warning>) {
    let ppath = img.process_path();
    process_warnings(img, &ppath, warnings);
    let mut threads: BTreeSet<u32> = img.process.threads.keys().copied().collect();
    if let Some(t) = &img.trace {
        threads.extend(t.threads());
        for r in &t.recovered {
            warnings.push(Warning::file(
                &t.path,
                WarningKind::Recovered,
                format!(
                    "thread {}: {} trace event words recovered from {} (the process was killed before writing them)",
                    r.thread,
                    r.words,
                    file_name_of(&r.path)
                ),
            ));
        }
    }
    for th in threads {
        let data = img.process.threads.get(&th);
        if let Some(path) = data.and_then(|d| d.recovered.messages.as_ref()) {
            warnings.push(Warning::file(
                &ppath,
                WarningKind::Recovered,
                format!(
                    "thread {th}: MPI message statistics recovered from {} (the process was killed before writing them)",
                    file_name_of(path)
                ),
            ));
        }
        if let Some(path) = data.and_then(|d| d.recovered.sync.as_ref()) {
            warnings.push(Warning::file(
                &ppath,
                WarningKind::Recovered,
                format!(
                    "thread {th}: synchronization statistics recovered from {} (the process was killed before writing them all)",
                    file_name_of(path)
                ),
            ));
        }
        if let Some(d) = data.filter(|d| d.recovered.samples.is_some()) {
            let path = d.recovered.samples.as_deref().unwrap_or(Path::new(""));
            let lost = match d.recovered.samples_not_kept {
                0 => String::new(),
                n => format!(
                    "; {n} samples the runtime kept in memory only (no room on the disk to grow the file) were lost"
                ),
            };
            warnings.push(Warning::file(
                &ppath,
                WarningKind::Recovered,
                format!(
                    "thread {th}: call-stack samples recovered from {} (the process was killed before writing them){lost}",
                    file_name_of(path)
                ),
            ));
        }
        if let Some(path) = data.and_then(|d| d.recovered.profile.as_ref()) {
            warnings.push(Warning::file(
                &ppath,
                WarningKind::Recovered,
                format!(
                    "thread {th}: profile recovered from {} (the process was killed before writing it)",
                    file_name_of(path)
                ),
            ));
            continue;
        }
        let profile = data.and_then(|d| d.profile.as_ref());
        match profile {
            Some(p) => profile_warnings(img, th, p, &ppath, warnings),
            None => {
                let words = img
                    .trace
                    .as_ref()
                    .and_then(|t| t.words_per_thread.get(&th).copied())
                    .unwrap_or(0);
                let msg = if words > 0 {
                    format!("thread {th} has no ThreadProfile: profile rebuilt from its trace ({words} event words)")
                } else {
                    format!("thread {th} has no ThreadProfile and no trace: no profile")
                };
                warnings.push(Warning::file(&ppath, WarningKind::NoThreadProfile, msg));
            }
        }
    }
}

/// The warnings of a process image as a whole: writes the runtime could not complete, the
/// clock offset not measured, calls open at its end.
fn process_warnings(img: &ProcessImage, ppath: &Path, warnings: &mut Vec<Warning>) {
    for w in &img.process.write_failures {
        let err = std::io::Error::from_raw_os_error(w.error);
        warnings.push(Warning::file(
            img.dir.join(file_name(
                if w.file == 1 { "trace" } else { "process" },
                img.image,
            )),
            WarningKind::WriteFailed { writes: w.writes },
            format!(
                "the runtime could not complete {} writes ({} bytes of whole records): {}; what they held is lost, the rest of the file is kept",
                w.writes,
                w.bytes,
                err.to_string().split(" (os error").next().unwrap_or_default()
            ),
        ));
    }
    if let Some(c) = &img.process.clock_sync_skipped {
        let marked = match c.marked {
            0 => "it is not known which other ranks are measured (PLX_JOB unset)".to_string(),
            n => format!("{n} of its {} ranks are measured", c.size),
        };
        warnings.push(Warning::file(
            ppath,
            WarningKind::Clock,
            format!(
                "no clock offset to rank 0 measured: {marked}, and the exchange needs every rank; this rank's times stay on its host's clock"
            ),
        ));
    }
    for o in &img.process.open_at_end {
        warnings.push(Warning::file(
            ppath,
            WarningKind::OpenAtEnd {
                calls: u64::from(o.frames),
            },
            format!(
                "thread {}: {} calls still open when the process ended, closed at its end (truncated)",
                o.thread, o.frames
            ),
        ));
    }
}

/// The warnings of thread `th`'s profile `p`: trace event words missing from the file, events
/// or calls lost, callpaths beyond the profile's capacity.
fn profile_warnings(
    img: &ProcessImage,
    th: u32,
    p: &crate::records::ThreadProfile,
    ppath: &Path,
    warnings: &mut Vec<Warning>,
) {
    // the profile counts the event words its thread wrote to the trace: fewer in
    // the file means the trace lost them (cut, or damaged chunks skipped)
    if let Some(t) = &img.trace {
        let words = t.words_per_thread.get(&th).copied().unwrap_or(0);
        if p.trace_events > words {
            let lost = p.trace_events - words;
            warnings.push(Warning::file(
                &t.path,
                WarningKind::LostEvents { count: lost },
                format!(
                    "thread {th}: {lost} of the {} trace event words its profile says were written are not in the file",
                    p.trace_events
                ),
            ));
        }
    }
    if p.lost_events > 0 {
        warnings.push(Warning::file(
            ppath,
            WarningKind::LostEvents {
                count: p.lost_events,
            },
            // without a trace what the runtime could not record were calls
            if img.trace.is_some() {
                format!(
                    "thread {th}: {} trace events lost (beyond the depth limit PLX_MAX_DEPTH, a full table, or trace chunks not written)",
                    p.lost_events
                )
            } else {
                format!(
                    "thread {th}: {} calls not measured (beyond the depth limit PLX_MAX_DEPTH, or a full table)",
                    p.lost_events
                )
            },
        ));
    }
    if p.lost_nodes > 0 {
        warnings.push(Warning::file(
            ppath,
            WarningKind::LostNodes {
                count: p.lost_nodes,
            },
            format!(
                "thread {th}: {} callpaths beyond the profile's capacity (time kept in their parents)",
                p.lost_nodes
            ),
        ));
    }
}

fn file_name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(image_of("process.plx", "process"), Some(0));
        assert_eq!(image_of("process.12.plx", "process"), Some(12));
        assert_eq!(image_of("process.0.plx", "process"), None);
        assert_eq!(image_of("process.x.plx", "process"), None);
        assert_eq!(image_of("trace.plx", "process"), None);
        assert_eq!(
            parse_process_dir("node1.cluster.42"),
            Some(("node1.cluster".into(), 42))
        );
        assert_eq!(parse_process_dir("node1"), None);
        assert_eq!(parse_process_dir(".42"), None);
    }
}
