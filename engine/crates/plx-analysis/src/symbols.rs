//! Source locations from debug info (addr2line, one context per module) and C++ demangling.

use std::collections::HashMap;

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

impl SymbolResolver {
    /// A resolver with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn loader(&mut self, module: &Module) -> Option<&addr2line::Loader> {
        self.loaders
            .entry(module.path.clone())
            .or_insert_with(|| {
                if !std::path::Path::new(&module.path).is_file() {
                    return None;
                }
                addr2line::Loader::new(&module.path).ok()
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
