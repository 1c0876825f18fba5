//! `otf2`: an OTF2 archive (Score-P's trace format, for Vampir, Scalasca, Otf2Trace readers), written by the official OTF2 library through its Python bindings.
//!
//! Two steps (docs/exports/otf2.md): the merged trace is written as the [`parquet`](crate::Parquet)
//! tables into a temporary directory, then `python3 -m parallax.otf2_export TABLES OUT` (the
//! module of `python/parallax/`, compiled into this binary so that it always matches it) reads
//! them and writes the archive with the `otf2` PyPI package, which bundles the OTF2 library.
//! The interpreter is `$PLX_PYTHON`, else `python3` on `PATH`; it needs the modules `otf2`
//! and `pyarrow` (`pip install otf2 pyarrow`), and a clear error names what is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Target};

/// The `otf2` format (docs/exports/otf2.md).
pub struct Otf2;

/// The Python package, as in `python/parallax/`.
const PY_INIT: &str = include_str!("../../../../python/parallax/__init__.py");
const PY_EXPORT: &str = include_str!("../../../../python/parallax/otf2_export.py");

/// What each module needs, for the error when it is missing.
const MODULES: &[(&str, &str)] = &[("otf2", "pip install otf2"), ("pyarrow", "pip install pyarrow")];

impl Exporter for Otf2 {
    fn name(&self) -> &'static str {
        "otf2"
    }

    fn about(&self) -> &'static str {
        "OTF2 archive (Vampir, Scalasca) via the official OTF2 library (Python: pip install otf2 pyarrow)"
    }

    fn output(&self) -> OutputKind {
        OutputKind::Directory
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = match target {
            Target::Directory(d) => d,
            Target::Stream(_) => {
                return Err(ExportError::Usage(
                    "the otf2 format writes a directory: give one with -o DIR".into(),
                ))
            }
        };
        let python = std::env::var_os("PLX_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("python3"));
        check_python(&python)?;
        let tmp = TempDir::new(out)?;
        let tables = tmp.path.join("tables");
        let py = tmp.path.join("py");
        let pkg = py.join("parallax");
        for d in [&tables, &pkg] {
            std::fs::create_dir_all(d).map_err(|e| ExportError::Io(d.clone(), e))?;
        }
        for (name, text) in [("__init__.py", PY_INIT), ("otf2_export.py", PY_EXPORT)] {
            let p = pkg.join(name);
            std::fs::write(&p, text).map_err(|e| ExportError::Io(p.clone(), e))?;
        }
        let mut summary = crate::parquet::write_tables(input, &tables)?;
        summary.files.clear();
        let status = Command::new(&python)
            .args(["-m", "parallax.otf2_export", "--quiet"])
            .arg(&tables)
            .arg(out)
            .env("PYTHONPATH", python_path(&py))
            .stdin(Stdio::null())
            .status()
            .map_err(|e| ExportError::Io(python.clone(), e))?;
        if !status.success() {
            return Err(ExportError::Io(
                out.to_path_buf(),
                std::io::Error::other(format!(
                    "writing the OTF2 archive failed ({} -m parallax.otf2_export: {status})",
                    python.display()
                )),
            ));
        }
        Ok(summary)
    }
}

/// `dir`, then the caller's `PYTHONPATH`.
fn python_path(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        paths.extend(std::env::split_paths(&old));
    }
    std::env::join_paths(paths).unwrap_or_else(|_| dir.as_os_str().to_owned())
}

/// Errors (exit status 2) unless `python` runs and imports every module of [`MODULES`].
fn check_python(python: &Path) -> Result<(), ExportError> {
    let names: Vec<&str> = MODULES.iter().map(|(m, _)| *m).collect();
    let script = format!(
        "import importlib.util as u\nfor m in {names:?}:\n    if u.find_spec(m) is None: print(m)\n"
    );
    let out = Command::new(python)
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| {
            ExportError::Usage(format!(
                "the otf2 format runs Python 3 with the otf2 module (pip install otf2): {}: {e} \
                 (set PLX_PYTHON to the interpreter)",
                python.display()
            ))
        })?;
    if !out.status.success() {
        return Err(ExportError::Usage(format!(
            "the otf2 format runs Python 3 with the otf2 module (pip install otf2): {} failed ({})",
            python.display(),
            out.status
        )));
    }
    let missing: Vec<&str> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| MODULES.iter().find(|(m, _)| *m == l.trim()))
        .map(|(_, pip)| *pip)
        .collect();
    if !missing.is_empty() {
        let mods: Vec<&str> = missing.iter().map(|p| &p[12..]).collect();
        return Err(ExportError::Usage(format!(
            "the otf2 format needs the Python module{} {} in {}: {}",
            if mods.len() > 1 { "s" } else { "" },
            mods.join(" and "),
            python.display(),
            missing.join("; ")
        )));
    }
    Ok(())
}

/// A scratch directory for the tables, removed when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new directory beside `out` (same file system, whose space the user chose).
    fn new(out: &Path) -> Result<TempDir, ExportError> {
        let parent = out
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(std::env::temp_dir);
        let name = out.file_name().map_or_else(
            || "otf2".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let path = parent.join(format!(".{name}.plx-tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| ExportError::Io(path.clone(), e))?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
