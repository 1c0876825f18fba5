//! Source locations from debug info (addr2line, one context per module) and C++ demangling:
//! the one place where Parallax turns code addresses into functions, files and lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use plx_format::{Module, RegionDef, RegionKind};

/// Resolves file/line of function regions; modules without a readable file or debug info are skipped.
#[derive(Default)]
pub struct SymbolResolver {
    loaders: HashMap<String, Option<addr2line::Loader>>,
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
    let own = path.to_path_buf();
    let Ok(data) = std::fs::read(path) else {
        return own;
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return own;
    };
    let has_debug = obj
        .section_by_name(".debug_info")
        .or_else(|| obj.section_by_name(".zdebug_info"))
        .is_some_and(|s| s.size() > 0);
    if has_debug {
        return own;
    }
    if let Ok(Some(id)) = obj.build_id() {
        if id.len() > 1 {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let p = PathBuf::from(format!(
                "/usr/lib/debug/.build-id/{}/{}.debug",
                &hex[..2],
                &hex[2..]
            ));
            if p.is_file() {
                return p;
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
            if c != path && std::fs::read(&c).is_ok_and(|d| crc32fast::hash(&d) == crc) {
                return c;
            }
        }
    }
    own
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

    fn loader(&mut self, module: &Module) -> Option<&addr2line::Loader> {
        self.loaders
            .entry(module.path.clone())
            .or_insert_with(|| {
                let path = Path::new(&module.path);
                if !path.is_file() {
                    return None;
                }
                open_debug(path)
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
        };
        assert_eq!(r.locate(&def, Some(&m)), None);
    }
}
