//! Source locations come from the module's debug info (addr2line) when the runtime left them empty.

use std::process::Command;

use plx_analysis::{BuildOptions, Model};
use plx_format::synth::SynthProcess;
use plx_format::{Module, Record, RegionDef, RegionKind};

use plx_format::test_dir::tmp;

/// Address of `sym` in `bin` per `nm`, if the tools are there.
fn nm_address(bin: &std::path::Path, sym: &str) -> Option<u64> {
    let out = Command::new("nm").arg(bin).output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let addr = f.next()?;
        let _kind = f.next()?;
        (f.next()? == sym).then(|| u64::from_str_radix(addr, 16).ok())?
    })
}

#[test]
fn file_and_line_resolved_from_debug_info() {
    let d = tmp("a2l");
    let src = d.join("prog.c");
    std::fs::write(
        &src,
        "int work(int x)\n{\n  return x * 2;\n}\nint main(void) { return work(1); }\n",
    )
    .unwrap();
    let bin = d.join("prog");
    let ok = Command::new("cc")
        .args(["-g", "-O0", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    let Some(addr) = ok.then(|| nm_address(&bin, "work")).flatten() else {
        eprintln!("no cc/nm here: skipped");
        return;
    };
    let base = 0x5555_0000_0000u64;
    let exp = d.join("exp");
    let mut p = SynthProcess::new("h", 9, &["prog"]);
    p.record(Record::Module(Module {
        module_id: 0,
        base,
        path: bin.to_string_lossy().into_owned(),
        build_id: String::new(),
    }))
    .record(Record::RegionDef(RegionDef {
        region_id: 1,
        kind: RegionKind::Function,
        flags: 0,
        module_id: 0,
        address: base + addr,
        name: "work".into(),
        file: String::new(),
        line: 0,
    }))
    .thread(0, 9, "main", 0)
    .profile(0, 10, 0, &[(None, 1, 1, 0, 10, 10)])
    .end(10, 0);
    p.write(&exp).unwrap();
    let m = Model::open(&exp, BuildOptions::default()).unwrap();
    let r = m.regions.get(1);
    assert_eq!(r.name, "work");
    assert!(r.file.ends_with("prog.c"), "{r:?}");
    assert!(r.line == 1 || r.line == 2, "{r:?}");

    // Without the module file, nothing is resolved and nothing fails.
    std::fs::remove_file(&bin).unwrap();
    let m = Model::open(&exp, BuildOptions::default()).unwrap();
    assert_eq!(m.regions.get(1).file, "");
}
