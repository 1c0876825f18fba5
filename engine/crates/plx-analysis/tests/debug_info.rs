//! The one address resolver (plx_analysis::symbols, ::objects) on the forms debug information
//! takes: in the file, zlib- and zstd-compressed, split DWARF (.dwo), a separate file found by
//! .gnu_debuglink; and the needed-library closure (app → libfoo → libbar).

use std::path::{Path, PathBuf};
use std::process::Command;

use plx_analysis::objects::{function_files, needed_libraries};
use plx_analysis::symbols::{debug_file, SymbolResolver};
use plx_format::{Module, RegionDef, RegionKind};

const SOURCE: &str =
    "int twice(int x)\n{\n    return x * 2;\n}\n\nint main(void) { return twice(1); }\n";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plx-debug-info-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sh(dir: &Path, cmd: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds twice.c with `flags` in a fresh directory; (directory, executable).
fn build(name: &str, flags: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    std::fs::write(dir.join("twice.c"), SOURCE).unwrap();
    sh(&dir, &format!("cc -O0 {flags} twice.c -o app"));
    (dir.clone(), dir.join("app"))
}

fn address_of(exe: &Path, name: &str) -> u64 {
    let out = Command::new("nm").arg(exe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.ends_with(&format!(" T {name}")))
        .unwrap_or_else(|| panic!("{name} not in nm {}", exe.display()));
    u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
}

/// The source file and line of `twice` as the resolver finds them, and function_files' answer.
type Resolved = (Option<(String, u32)>, Vec<(u64, String)>);

fn resolve(exe: &Path) -> Resolved {
    let def = RegionDef {
        region_id: 2,
        kind: RegionKind::Function,
        flags: 0,
        module_id: 0,
        address: address_of(exe, "twice"),
        name: "twice".into(),
        file: String::new(),
        line: 0,
    };
    let m = Module {
        module_id: 0,
        base: 0,
        path: exe.display().to_string(),
        build_id: String::new(),
    };
    let loc = SymbolResolver::new().locate(&def, Some(&m));
    let fns = function_files(exe, &|f: &str| f.ends_with("/twice.c"));
    (loc, fns)
}

fn check(name: &str, flags: &str) -> PathBuf {
    let (dir, exe) = build(name, flags);
    let src = dir.join("twice.c").display().to_string();
    let (loc, fns) = resolve(&exe);
    assert_eq!(loc, Some((src.clone(), 2)), "{flags}");
    let twice = address_of(&exe, "twice");
    let main = address_of(&exe, "main");
    let mut want = vec![(twice, src.clone()), (main, src)];
    want.sort();
    assert_eq!(fns, want, "{flags}");
    exe
}

#[test]
fn plain_debug_info() {
    let exe = check("plain", "-g");
    assert_eq!(debug_file(&exe), exe);
}

#[test]
fn zlib_compressed_sections() {
    check("zlib", "-g -gz=zlib");
}

#[test]
fn zstd_compressed_sections() {
    check("zstd", "-g -Wl,--compress-debug-sections=zstd");
}

#[test]
fn split_dwarf_dwo() {
    let exe = check("dwo", "-g -gsplit-dwarf");
    assert!(std::fs::read_dir(exe.parent().unwrap()).unwrap().any(|e| e
        .unwrap()
        .path()
        .extension()
        .is_some_and(|x| x == "dwo")));
}

#[test]
fn split_dwarf_dwp() {
    // the .dwo files packed into app.dwp beside the executable (llvm-dwp: GNU dwp 2.38 crashes
    // on GCC 11's DWARF 5), then removed; the line table stays in the executable
    let (dir, exe) = build("dwp", "-g -gsplit-dwarf");
    sh(&dir, "llvm-dwp -e app -o app.dwp && rm -f *.dwo");
    let (loc, fns) = resolve(&exe);
    assert_eq!(loc, Some((dir.join("twice.c").display().to_string(), 2)));
    assert_eq!(fns.len(), 2);
}

#[test]
fn gnu_debuglink() {
    let (dir, exe) = build("debuglink", "-g");
    sh(
        &dir,
        "objcopy --only-keep-debug app app.debug && strip --strip-debug app && \
         objcopy --add-gnu-debuglink=app.debug app",
    );
    assert_eq!(debug_file(&exe), dir.join("app.debug"));
    let (loc, fns) = resolve(&exe);
    assert_eq!(loc, Some((dir.join("twice.c").display().to_string(), 2)));
    assert_eq!(fns.len(), 2);
    // a debug file whose CRC is not the link's is not used
    sh(&dir, "cp app.debug saved && echo x >> app.debug");
    assert_eq!(debug_file(&exe), exe);
    assert_eq!(resolve(&exe), (None, Vec::new()));
}

#[test]
fn no_debug_info_lists_nothing() {
    let (_, exe) = build("stripped", "-g0");
    assert_eq!(resolve(&exe), (None, Vec::new()));
}

#[test]
fn needed_closure_goes_through_libraries() {
    let dir = scratch("closure");
    std::fs::write(dir.join("bar.c"), "int bar(void) { return 7; }\n").unwrap();
    std::fs::write(
        dir.join("foo.c"),
        "int bar(void);\nint foo(void) { return bar(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("app.c"),
        "int foo(void);\nint main(void) { return foo(); }\n",
    )
    .unwrap();
    sh(
        &dir,
        "mkdir -p lib && cc -shared -fPIC bar.c -o lib/libbar.so && \
         cc -shared -fPIC foo.c -Llib -lbar -Wl,-rpath,'$ORIGIN' -o lib/libfoo.so && \
         cc app.c -Llib -lfoo -Wl,-rpath,'$ORIGIN/lib' -o app",
    );
    let libs = needed_libraries(&dir.join("app"));
    let lib = std::fs::canonicalize(dir.join("lib")).unwrap();
    assert_eq!(libs[0], lib.join("libfoo.so"));
    assert!(libs.contains(&lib.join("libbar.so")), "{libs:?}");
    let libc = libs
        .iter()
        .find(|p| p.to_string_lossy().contains("libc.so"))
        .cloned();
    assert!(libc.is_some(), "{libs:?}");
    // each once
    let mut dedup = libs.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), libs.len());
}
