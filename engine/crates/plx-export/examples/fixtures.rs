//! Writes the export tests' synthetic experiments under the directory given (`threads/`, `mpi/`).
#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let dir =
        std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures".into()));
    for (name, f) in [
        ("threads", common::threads as fn(&std::path::Path)),
        ("mpi", common::mpi),
    ] {
        let d = dir.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        f(&d);
        eprintln!("wrote {}", d.display());
    }
}
