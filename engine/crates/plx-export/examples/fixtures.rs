//! Writes the export tests' synthetic experiments under the directory given (`threads/`, `mpi/`).
#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

fn main() {
    let dir =
        std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures".into()));
    for (name, f) in [
        ("threads", fixtures::threads as fn(&std::path::Path)),
        ("mpi", fixtures::mpi),
    ] {
        let d = dir.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        f(&d);
        eprintln!("wrote {}", d.display());
    }
}
