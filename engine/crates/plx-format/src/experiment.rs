//! Finds the process images of an experiment directory and reads each (process data, trace index,
//! clock), with the live files a killed process left standing in for its missing records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::clock::{ClockMap, ClockSource};
use crate::live::{parse_live_name, LiveFiles, LiveKind};
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
    /// Process images sorted by host, pid, image.
    pub images: Vec<ProcessImage>,
    /// Everything damaged or missing.
    pub warnings: Vec<Warning>,
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
    /// Reads every process image under `dir`. Errors only if `dir` is unreadable or holds no
    /// `<host>.<pid>/process*.plx`; all other damage becomes warnings.
    pub fn open(dir: &Path) -> Result<Experiment, FormatError> {
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
        let images = found
            .into_iter()
            .map(|f| read_image(f, &mut warnings))
            .collect();
        Ok(Experiment {
            dir: dir.to_path_buf(),
            images,
            warnings,
        })
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
    let trace = if has_trace {
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
        LiveFiles::read(&live, warnings).recover_into(&mut process, trace.as_ref());
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
    let img = ProcessImage {
        dir,
        host,
        pid,
        image,
        process,
        trace,
        clock,
        live_files: live,
    };
    thread_warnings(&img, warnings);
    img
}

fn thread_warnings(img: &ProcessImage, warnings: &mut Vec<Warning>) {
    let ppath = img.process_path();
    let mut threads: BTreeSet<u32> = img.process.threads.keys().copied().collect();
    if let Some(t) = &img.trace {
        threads.extend(t.threads());
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
            Some(p) => {
                if p.lost_events > 0 {
                    warnings.push(Warning::file(
                        &ppath,
                        WarningKind::LostEvents {
                            count: p.lost_events,
                        },
                        format!("thread {th}: {} trace events lost", p.lost_events),
                    ));
                }
                if p.lost_nodes > 0 {
                    warnings.push(Warning::file(
                        &ppath,
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
