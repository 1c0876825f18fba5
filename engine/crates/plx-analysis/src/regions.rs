//! The experiment-wide region table: regions of all processes interned by (name, kind).

use std::collections::HashMap;

use plx_format::RegionKind;

/// One region as shown in reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    /// Display name (demangled).
    pub name: String,
    /// Kind.
    pub kind: RegionKind,
    /// Source file, empty if unknown.
    pub file: String,
    /// Source line, 0 if unknown.
    pub line: u32,
}

/// Regions of every process, one index per distinct (name, kind).
#[derive(Debug, Clone, Default)]
pub struct RegionTable {
    regions: Vec<RegionInfo>,
    by_key: HashMap<(String, RegionKind), u32>,
}

impl RegionTable {
    /// Index of the region, added if new; a known file/line fills in a missing one.
    pub fn intern(&mut self, info: RegionInfo) -> u32 {
        let key = (info.name.clone(), info.kind);
        if let Some(&i) = self.by_key.get(&key) {
            let r = &mut self.regions[i as usize];
            if r.file.is_empty() && !info.file.is_empty() {
                r.file = info.file;
                r.line = info.line;
            }
            return i;
        }
        let i = self.regions.len() as u32;
        self.regions.push(info);
        self.by_key.insert(key, i);
        i
    }

    /// The region at an index.
    pub fn get(&self, i: u32) -> &RegionInfo {
        &self.regions[i as usize]
    }

    /// Its name.
    pub fn name(&self, i: u32) -> &str {
        &self.regions[i as usize].name
    }

    /// All regions.
    pub fn all(&self) -> &[RegionInfo] {
        &self.regions
    }

    /// Index of a region by name and kind.
    pub fn find(&self, name: &str, kind: RegionKind) -> Option<u32> {
        self.by_key.get(&(name.to_string(), kind)).copied()
    }
}
