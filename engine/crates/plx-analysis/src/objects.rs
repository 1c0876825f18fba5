//! What `plx run` reads of a program's ELF files before the program starts: the closure of the
//! libraries it needs (DT_NEEDED, resolved as the dynamic loader does) and the source file of
//! each of its functions (for the filter's file rules, written as the source-file list of
//! docs/formats/source-files.md).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use object::read::elf::ElfFile64;
use object::{Object, ObjectSymbol, SymbolKind};

use crate::symbols::open_debug;

/// The directories the dynamic loader searches after RUNPATH and LD_LIBRARY_PATH on this
/// platform: those of /etc/ld.so.conf (and the files it includes), then the defaults.
fn system_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut confs = vec![PathBuf::from("/etc/ld.so.conf")];
    let mut seen = HashSet::new();
    while let Some(conf) = confs.pop() {
        if !seen.insert(conf.clone()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&conf) else {
            continue;
        };
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if let Some(pattern) = line.strip_prefix("include").map(str::trim) {
                confs.extend(glob_conf(pattern));
            } else if !line.is_empty() {
                dirs.push(PathBuf::from(line));
            }
        }
    }
    for d in ["/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// The files an `include DIR/*.conf` line of ld.so.conf names (only a `*` in the last part).
fn glob_conf(pattern: &str) -> Vec<PathBuf> {
    let path = Path::new(pattern);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let (prefix, suffix) = name.split_once('*').unwrap_or((name, ""));
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with(prefix) && n.ends_with(suffix) && n.len() >= name.len() - 1
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// DT_NEEDED names and RUNPATH/RPATH directories of a 64-bit ELF file (none for anything else).
fn dynamic_of(data: &[u8], origin: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let Ok(elf) = ElfFile64::<object::Endianness>::parse(data) else {
        return (Vec::new(), Vec::new());
    };
    let endian = elf.endian();
    let Ok(table) = elf.elf_section_table().dynamic_table(endian, data) else {
        return (Vec::new(), Vec::new());
    };
    let (mut needed, mut paths) = (Vec::new(), Vec::new());
    for d in table.iter() {
        let Ok(s) = table.string(d) else { continue };
        let s = String::from_utf8_lossy(s).into_owned();
        match d.tag {
            object::elf::DT_NEEDED => needed.push(s),
            object::elf::DT_RUNPATH | object::elf::DT_RPATH => {
                let o = origin.to_string_lossy();
                paths.extend(
                    s.split(':')
                        .filter(|p| !p.is_empty())
                        .map(|p| PathBuf::from(p.replace("${ORIGIN}", &o).replace("$ORIGIN", &o))),
                );
            }
            _ => {}
        }
    }
    (needed, paths)
}

/// Every library `program` needs, directly or through another library, resolved to its file
/// (canonical path), breadth first as the dynamic loader loads them. Names no directory holds
/// are left out. `program` itself is not in the list.
pub fn needed_libraries(program: &Path) -> Vec<PathBuf> {
    let env_dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut system: Option<Vec<PathBuf>> = None;
    let mut out = Vec::new();
    let mut seen_names = HashSet::new();
    let mut queue = vec![program.to_path_buf()];
    let mut i = 0;
    while i < queue.len() {
        let file = queue[i].clone();
        i += 1;
        let Ok(data) = std::fs::read(&file) else {
            continue;
        };
        let origin = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let (needed, runpath) = dynamic_of(&data, &origin);
        for name in needed {
            if !seen_names.insert(name.clone()) {
                continue;
            }
            let found = if name.contains('/') {
                Some(PathBuf::from(&name)).filter(|p| p.is_file())
            } else {
                let system = system.get_or_insert_with(system_dirs);
                env_dirs
                    .iter()
                    .chain(runpath.iter())
                    .chain(system.iter())
                    .map(|d| d.join(&name))
                    .find(|p| is_elf64(p))
            };
            if let Some(p) = found {
                let p = std::fs::canonicalize(&p).unwrap_or(p);
                if !out.contains(&p) {
                    out.push(p.clone());
                    queue.push(p);
                }
            }
        }
    }
    out
}

/// A 64-bit ELF file (the loader skips libraries of another class in a search directory).
fn is_elf64(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 5];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == *b"\x7fELF\x02"
}

/// The functions of ELF file `path` whose source file (that of the function's first
/// instruction, from its debug information wherever it lies: in the file, compressed or not,
/// split into .dwo/.dwp files, or in a separate file found by build-id or .gnu_debuglink)
/// satisfies `wanted`: (offset in the file's address space, file), ascending. Empty when the
/// file has no debug information.
pub fn function_files(path: &Path, wanted: &dyn Fn(&str) -> bool) -> Vec<(u64, String)> {
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return Vec::new();
    };
    let Some(loader) = open_debug(path) else {
        return Vec::new();
    };
    let mut addrs: Vec<u64> = obj
        .symbols()
        .chain(obj.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0 && !s.is_undefined())
        .map(|s| s.address())
        .collect();
    addrs.sort_unstable();
    addrs.dedup();
    let mut out = Vec::new();
    for a in addrs {
        if let Ok(Some(loc)) = loader.find_location(a) {
            if let Some(file) = loc.file {
                if wanted(file) {
                    out.push((a, file.to_string()));
                }
            }
        }
    }
    out
}
