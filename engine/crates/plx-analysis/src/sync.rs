//! Synchronization objects and their statistics: objects named by the runtime (a Java
//! monitor's class) or by their site (init call or first use), per-thread statistics in
//! seconds, and the rows of `plx report --sync`.

use std::collections::BTreeMap;

use plx_format::{Module, NamedBy, SyncKind, SyncObject, SyncStats};

use crate::model::Model;
use crate::symbols::SymbolResolver;
use crate::views::GroupBy;

/// One synchronization object of a process.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncObjectInfo {
    /// Process-local id.
    pub id: u32,
    /// Kind.
    pub kind: SyncKind,
    /// Named by its init call or its first use.
    pub named_by: NamedBy,
    /// The object's address.
    pub address: u64,
    /// The site's runtime address (a return address), 0 if unknown.
    pub site: u64,
    /// The site's function, if known.
    pub function: Option<String>,
    /// The site's source file, empty if unknown.
    pub file: String,
    /// The site's line, 0 if unknown.
    pub line: u32,
    /// The name without its kind, unique in the process: the runtime's name of the object
    /// (a Java monitor's class: `java.util.ArrayList`), else its site's: `queue.c:97 (main)`,
    /// `main (0x5555...)` or `0x5555...` (the site's address); ` (object <id>)` is appended
    /// when two objects of the process would have the same name.
    pub name: String,
}

impl SyncObjectInfo {
    /// `mutex queue.c:97 (main)`: kind and name.
    pub fn label(&self) -> String {
        format!("{} {}", self.kind.as_str(), self.name)
    }

    /// `init at queue.c:97 (main)` or `first used at t_sync.c:30 (hammer)`; empty when the
    /// site is not known (a Java monitor's).
    pub fn site_text(&self) -> String {
        if self.site == 0 {
            return String::new();
        }
        let how = match self.named_by {
            NamedBy::Init => "init at",
            _ => "first used at",
        };
        format!("{how} {}", self.site_name())
    }

    fn site_name(&self) -> String {
        site_name(self.function.as_deref(), &self.file, self.line, self.site)
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn site_name(function: Option<&str>, file: &str, line: u32, site: u64) -> String {
    match (function, file.is_empty()) {
        (Some(f), false) => format!("{}:{line} ({f})", base_name(file)),
        (None, false) => format!("{}:{line}", base_name(file)),
        (Some(f), true) => format!("{f} ({site:#x})"),
        (None, true) => format!("{site:#x}"),
    }
}

/// One thread's statistics of one object, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SyncStat {
    /// Process-local object id.
    pub object: u32,
    /// Locks and waits taken.
    pub acquisitions: u64,
    /// Of those, the ones that had to wait.
    pub contended: u64,
    /// Seconds blocked acquiring or waiting.
    pub wait_s: f64,
    /// Seconds held.
    pub hold_s: f64,
    /// Unlocks, posts, signals and broadcasts.
    pub releases: u64,
}

impl SyncStat {
    /// Adds another's counts and times (the object is kept).
    pub fn add(&mut self, o: &SyncStat) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.wait_s += o.wait_s;
        self.hold_s += o.hold_s;
        self.releases += o.releases;
    }
}

/// The objects of a process, named (sites resolved with the modules' debug info when
/// `resolve` is set), by id.
pub fn name_objects(
    objects: &BTreeMap<u32, SyncObject>,
    modules: &BTreeMap<u32, Module>,
    resolver: &mut SymbolResolver,
    resolve: bool,
) -> Vec<SyncObjectInfo> {
    let mut out: Vec<SyncObjectInfo> = objects
        .values()
        .map(|o| {
            let loc = if resolve && o.site != 0 {
                modules
                    .get(&o.module_id)
                    .and_then(|m| resolver.locate_call_site(o.site, m))
            } else {
                None
            };
            let loc = loc.unwrap_or_default();
            let name = if o.name.is_empty() {
                site_name(loc.function.as_deref(), &loc.file, loc.line, o.site)
            } else {
                o.name.clone()
            };
            SyncObjectInfo {
                id: o.object,
                kind: o.kind,
                named_by: o.named_by,
                address: o.address,
                site: o.site,
                function: loc.function,
                file: loc.file,
                line: loc.line,
                name,
            }
        })
        .collect();
    let mut seen: BTreeMap<(SyncKind, String), usize> = BTreeMap::new();
    for o in &out {
        *seen.entry((o.kind, o.name.clone())).or_default() += 1;
    }
    for o in &mut out {
        if seen[&(o.kind, o.name.clone())] > 1 {
            // "object N", not "#N": NAME#INDEX is the notation of threads (main#0)
            o.name = format!("{} (object {})", o.name, o.id);
        }
    }
    out
}

/// A thread's SyncStats in seconds (`seconds` converts ticks).
pub fn stats_in_seconds(stats: &[SyncStats], seconds: impl Fn(u64) -> f64) -> Vec<SyncStat> {
    let mut v: Vec<SyncStat> = stats
        .iter()
        .map(|s| SyncStat {
            object: s.object,
            acquisitions: s.acquisitions,
            contended: s.contended,
            wait_s: seconds(s.wait_ticks),
            hold_s: seconds(s.hold_ticks),
            releases: s.releases,
        })
        .collect();
    v.sort_by_key(|s| s.object);
    v
}

/// One row of `plx report --sync`: an object at a location (or in total).
#[derive(Debug, Clone, PartialEq)]
pub struct SyncRow {
    /// Index into `Model::processes`, `None` for a total row.
    pub process: Option<usize>,
    /// Thread index, `None` for a process or total row.
    pub thread: Option<u32>,
    /// Kind.
    pub kind: SyncKind,
    /// `mutex queue.c:97 (main)`.
    pub object: String,
    /// Process-local id (per-location rows), `None` in total rows.
    pub id: Option<u32>,
    /// `init at ...` / `first used at ...`.
    pub site: String,
    /// The statistics.
    pub stat: SyncStat,
}

fn by_wait(rows: &mut [SyncRow]) {
    rows.sort_by(|a, b| {
        b.stat
            .wait_s
            .partial_cmp(&a.stat.wait_s)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| b.stat.acquisitions.cmp(&a.stat.acquisitions))
            .then_with(|| a.object.cmp(&b.object))
    });
}

impl Model {
    /// Does any process have synchronization objects?
    pub fn has_sync(&self) -> bool {
        self.processes.iter().any(|p| !p.sync_objects.is_empty())
    }

    /// The rows of `plx report --sync`: per location (thread or process, each sorted by wait
    /// time), then the totals per object (objects of the same kind and name in several
    /// processes add up), sorted by wait time.
    pub fn sync_rows(&self, by: GroupBy) -> (Vec<SyncRow>, Vec<SyncRow>) {
        let mut locations = Vec::new();
        let mut totals: BTreeMap<(SyncKind, String), SyncRow> = BTreeMap::new();
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            let obj = |id: u32| p.sync_objects.iter().find(|o| o.id == id);
            let mut per_process: BTreeMap<u32, SyncStat> = BTreeMap::new();
            for t in &p.threads {
                let mut rows = Vec::new();
                for s in &t.sync {
                    per_process
                        .entry(s.object)
                        .or_insert(SyncStat {
                            object: s.object,
                            ..SyncStat::default()
                        })
                        .add(s);
                    if by == GroupBy::Thread {
                        rows.push(row(Some(pi), Some(t.thread), s, obj(s.object)));
                    }
                }
                by_wait(&mut rows);
                locations.extend(rows);
            }
            let mut rows = Vec::new();
            for s in per_process.values() {
                let r = row(Some(pi), None, s, obj(s.object));
                let tot = totals
                    .entry((r.kind, r.object.clone()))
                    .or_insert_with(|| SyncRow {
                        process: None,
                        thread: None,
                        id: None,
                        stat: SyncStat::default(),
                        ..r.clone()
                    });
                tot.stat.add(s);
                if by == GroupBy::Process {
                    rows.push(r);
                }
            }
            by_wait(&mut rows);
            locations.extend(rows);
        }
        let mut totals: Vec<SyncRow> = totals.into_values().collect();
        by_wait(&mut totals);
        (locations, totals)
    }
}

fn row(
    process: Option<usize>,
    thread: Option<u32>,
    s: &SyncStat,
    o: Option<&SyncObjectInfo>,
) -> SyncRow {
    SyncRow {
        process,
        thread,
        kind: o.map_or(SyncKind::Other(0xFF), |o| o.kind),
        object: o.map_or_else(|| format!("object {}", s.object), |o| o.label()),
        id: Some(s.object),
        site: o.map(|o| o.site_text()).unwrap_or_default(),
        stat: *s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fall_back_and_disambiguate() {
        assert_eq!(
            site_name(Some("main"), "/src/queue.c", 97, 0x10),
            "queue.c:97 (main)"
        );
        assert_eq!(site_name(None, "", 0, 0x1234), "0x1234");
        assert_eq!(site_name(Some("f"), "", 0, 0x1234), "f (0x1234)");
        let mut objs = BTreeMap::new();
        for i in 0..2 {
            objs.insert(
                i,
                SyncObject {
                    object: i,
                    kind: SyncKind::Mutex,
                    named_by: NamedBy::Init,
                    address: 0x100 + i as u64,
                    module_id: plx_format::NONE_U32,
                    site: 0xabc,
                    name: String::new(),
                },
            );
        }
        let named = name_objects(&objs, &BTreeMap::new(), &mut SymbolResolver::new(), true);
        assert_eq!(named[0].label(), "mutex 0xabc (object 0)");
        assert_eq!(named[1].site_text(), "init at 0xabc");
    }

    #[test]
    fn a_name_from_the_runtime_replaces_the_site() {
        let mut objs = BTreeMap::new();
        for (i, name) in [
            "java.lang.Object",
            "java.lang.Object",
            "java.util.ArrayList",
        ]
        .into_iter()
        .enumerate()
        {
            objs.insert(
                i as u32,
                SyncObject {
                    object: i as u32,
                    kind: SyncKind::JavaMonitor,
                    named_by: NamedBy::Use,
                    address: 0x7F00_0000_0000_0000 + i as u64,
                    module_id: plx_format::NONE_U32,
                    site: 0,
                    name: name.into(),
                },
            );
        }
        let named = name_objects(&objs, &BTreeMap::new(), &mut SymbolResolver::new(), true);
        let labels: Vec<String> = named.iter().map(SyncObjectInfo::label).collect();
        assert_eq!(
            labels,
            [
                "java-monitor java.lang.Object (object 0)",
                "java-monitor java.lang.Object (object 1)",
                "java-monitor java.util.ArrayList"
            ]
        );
        assert_eq!(named[2].site_text(), "");
    }
}
