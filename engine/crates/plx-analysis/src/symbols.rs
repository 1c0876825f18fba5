//! Source locations from debug info (addr2line, one context per module) and C++ demangling:
//! the one place where Parallax turns code addresses into functions, files and lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use plx_format::{Module, RegionDef, RegionKind};

/// Resolves file/line of function regions; modules without a readable file or debug info are
/// skipped, and so are modules whose file is no longer the one that ran (another build-id).
#[derive(Default)]
pub struct SymbolResolver {
    loaders: HashMap<(String, String), Option<addr2line::Loader>>,
    stale: Vec<StaleModule>,
}

/// A module whose file on disk has another build-id than the one loaded at run time (rebuilt
/// or replaced since): its source locations are not resolved rather than resolved wrongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleModule {
    /// The module's file.
    pub path: String,
    /// Build-id recorded at run time.
    pub recorded: String,
    /// Build-id of the file now (empty: it has none).
    pub found: String,
}

/// A C++ name demangled, or `None` if it is not a mangled name.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    sym.demangle().ok()
}

/// Where a code address is: function, source file and line, as far as known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeLocation {
    /// Function (demangled; the innermost inlined one), if known.
    pub function: Option<String>,
    /// Source file, empty if unknown.
    pub file: String,
    /// Line, 0 if unknown.
    pub line: u32,
}

/// Where the debug information of ELF file `path` is, as GDB and perf look for it: the file
/// itself when it has a .debug_info section (compressed or not; a split-DWARF skeleton's units
/// lead to their .dwo files or the .dwp beside it), else the file its build-id names under
/// /usr/lib/debug/.build-id, else the file its .gnu_debuglink names (beside it, in .debug/ beside
/// it, or under /usr/lib/debug) whose CRC matches. The file itself when none is found.
pub fn debug_file(path: &Path) -> PathBuf {
    debug_file_of_build(path, "").unwrap_or_else(|_| path.to_path_buf())
}

fn build_id_path(hex: &str) -> PathBuf {
    PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ))
}

/// [`debug_file`] for the module that ran with build-id `want` (hex; empty: not recorded, any
/// file goes). When the file at `path` now has another build-id, the debug file of `want` under
/// /usr/lib/debug/.build-id if there is one, else `Err(the file's build-id)`.
pub fn debug_file_of_build(path: &Path, want: &str) -> Result<PathBuf, String> {
    let own = path.to_path_buf();
    // a module path is data from the experiment: only a regular file is read
    let Ok(data) = plx_format::read_regular(path, u64::MAX) else {
        return Ok(own);
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return Ok(own);
    };
    if !want.is_empty() {
        let found: String = match obj.build_id() {
            Ok(Some(id)) => id.iter().map(|b| format!("{b:02x}")).collect(),
            _ => String::new(),
        };
        if found != want {
            // a recorded id is data from a file: only plain hex names a path
            let hex = want.len() > 2 && want.bytes().all(|b| b.is_ascii_hexdigit());
            return match hex.then(|| build_id_path(want)) {
                Some(p) if p.is_file() => Ok(p),
                _ => Err(found),
            };
        }
    }
    let has_debug = obj
        .section_by_name(".debug_info")
        .or_else(|| obj.section_by_name(".zdebug_info"))
        .is_some_and(|s| s.size() > 0);
    if has_debug {
        return Ok(own);
    }
    if let Ok(Some(id)) = obj.build_id() {
        if id.len() > 1 {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let p = build_id_path(&hex);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    if let Ok(Some((name, crc))) = obj.gnu_debuglink() {
        let name = Path::new(std::str::from_utf8(name).unwrap_or(""));
        let dir = path.parent().unwrap_or(Path::new("/"));
        let abs_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let candidates = [
            dir.join(name),
            dir.join(".debug").join(name),
            Path::new("/usr/lib/debug")
                .join(abs_dir.strip_prefix("/").unwrap_or(&abs_dir))
                .join(name),
        ];
        for c in candidates {
            if c != path
                && plx_format::read_regular(&c, u64::MAX).is_ok_and(|d| crc32fast::hash(&d) == crc)
            {
                return Ok(c);
            }
        }
    }
    Ok(own)
}

/// An addr2line context for ELF file `path`, on its debug information wherever it lies
/// ([`debug_file`]); `None` when no file can be read.
pub fn open_debug(path: &Path) -> Option<addr2line::Loader> {
    addr2line::Loader::new(debug_file(path)).ok()
}

impl SymbolResolver {
    /// A resolver with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks `module`'s file against its recorded build-id without reading its debug info (for
    /// readers that resolve no source locations but report stale modules).
    pub fn check_build(&mut self, module: &Module) {
        let path = Path::new(&module.path);
        if module.build_id.is_empty() || !path.is_file() {
            return;
        }
        if let Err(found) = debug_file_of_build(path, &module.build_id) {
            let stale = StaleModule {
                path: module.path.clone(),
                recorded: module.build_id.clone(),
                found,
            };
            if !self.stale.contains(&stale) {
                self.stale.push(stale);
            }
        }
    }

    /// Modules found rebuilt since the run, each once, since the last call.
    pub fn take_stale(&mut self) -> Vec<StaleModule> {
        std::mem::take(&mut self.stale)
    }

    fn loader(&mut self, module: &Module) -> Option<&addr2line::Loader> {
        let Self { loaders, stale } = self;
        loaders
            .entry((module.path.clone(), module.build_id.clone()))
            .or_insert_with(|| {
                let path = Path::new(&module.path);
                if !path.is_file() {
                    return None;
                }
                match debug_file_of_build(path, &module.build_id) {
                    Ok(file) => addr2line::Loader::new(file).ok(),
                    Err(found) => {
                        stale.push(StaleModule {
                            path: module.path.clone(),
                            recorded: module.build_id.clone(),
                            found,
                        });
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The call site of return address `ret` (runtime address) in `module`: the location of
    /// the call instruction (`ret - 1`), the innermost inlined function first. `None` when the
    /// module's file or debug info cannot be read.
    pub fn locate_call_site(&mut self, ret: u64, module: &Module) -> Option<CodeLocation> {
        let loader = self.loader(module)?;
        let probe = ret.wrapping_sub(module.base).wrapping_sub(1);
        let mut out = CodeLocation::default();
        if let Ok(mut frames) = loader.find_frames(probe) {
            if let Ok(Some(f)) = frames.next() {
                out.function = f
                    .function
                    .as_ref()
                    .and_then(|n| n.demangle().ok())
                    .map(|n| n.into_owned());
                if let Some(loc) = f.location {
                    out.file = loc.file.unwrap_or_default().to_string();
                    out.line = loc.line.unwrap_or(0);
                }
            }
        }
        if out.function.is_none() {
            out.function = loader
                .find_symbol(probe)
                .map(|n| demangle(n).unwrap_or_else(|| n.to_string()));
        }
        if out.file.is_empty() {
            if let Ok(Some(loc)) = loader.find_location(probe) {
                out.file = loc.file.unwrap_or_default().to_string();
                out.line = loc.line.unwrap_or(0);
            }
        }
        (out.function.is_some() || !out.file.is_empty()).then_some(out)
    }

    /// The functions at the call site of return address `ret` (runtime address) in `module`,
    /// the function the code belongs to first, then those inlined into it down to the
    /// innermost: each with the file its frame's location is in (line 0). Empty when the
    /// module's file or debug info cannot be read or names no function there; one entry, named
    /// by the symbol table, where the debug info has no function for it.
    pub fn locate_call_frames(&mut self, ret: u64, module: &Module) -> Vec<CodeLocation> {
        let Some(loader) = self.loader(module) else {
            return Vec::new();
        };
        let probe = ret.wrapping_sub(module.base).wrapping_sub(1);
        let mut out = Vec::new();
        if let Ok(mut frames) = loader.find_frames(probe) {
            while let Ok(Some(f)) = frames.next() {
                let Some(name) = f.function.as_ref().and_then(|n| n.demangle().ok()) else {
                    break; // a frame without a name ends what can be told
                };
                out.push(CodeLocation {
                    function: Some(name.into_owned()),
                    file: f
                        .location
                        .and_then(|l| l.file)
                        .unwrap_or_default()
                        .to_string(),
                    line: 0,
                });
            }
        }
        out.reverse();
        if out.is_empty() {
            if let Some(n) = loader.find_symbol(probe) {
                let file = loader
                    .find_location(probe)
                    .ok()
                    .flatten()
                    .and_then(|l| l.file)
                    .unwrap_or_default()
                    .to_string();
                out.push(CodeLocation {
                    function: Some(demangle(n).unwrap_or_else(|| n.to_string())),
                    file,
                    line: 0,
                });
            }
        }
        out
    }

    /// File and line of `def` from its module's debug info, if it can be found.
    pub fn locate(&mut self, def: &RegionDef, module: Option<&Module>) -> Option<(String, u32)> {
        let code = matches!(def.kind, RegionKind::Function | RegionKind::Omp);
        if !code || !def.file.is_empty() || def.address == 0 {
            return None;
        }
        let module = module?;
        let loader = self.loader(module)?;
        let probe = def.address.wrapping_sub(module.base);
        let loc = loader.find_location(probe).ok()??;
        let file = loc.file?.to_string();
        Some((file, loc.line.unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_only() {
        assert_eq!(demangle("_ZN3foo3barEv").as_deref(), Some("foo::bar()"));
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("_Znotvalid!!"), None);
    }

    #[test]
    fn missing_module_is_skipped() {
        let mut r = SymbolResolver::new();
        let def = RegionDef {
            region_id: 1,
            kind: RegionKind::Function,
            flags: 0,
            module_id: 0,
            address: 0x1234,
            name: "f".into(),
            file: String::new(),
            line: 0,
        };
        let m = Module {
            module_id: 0,
            base: 0,
            path: "/nonexistent/module.so".into(),
            build_id: String::new(),
        };
        assert_eq!(r.locate(&def, Some(&m)), None);
    }
}
