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

impl SymbolResolver {
    /// A resolver with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// File and line of `def` from its module's debug info, if it can be found.
    pub fn locate(&mut self, def: &RegionDef, module: Option<&Module>) -> Option<(String, u32)> {
        if def.kind != RegionKind::Function || !def.file.is_empty() || def.address == 0 {
            return None;
        }
        let module = module?;
        let loader = self
            .loaders
            .entry(module.path.clone())
            .or_insert_with(|| {
                if !std::path::Path::new(&module.path).is_file() {
                    return None;
                }
                addr2line::Loader::new(&module.path).ok()
            })
            .as_ref()?;
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
