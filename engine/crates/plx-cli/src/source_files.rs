//! The source-file list `plx run` writes for the filter's file rules
//! (docs/formats/source-files.md): for the program, the ELF files its command line names (the
//! program of a launcher) and every library they need, the functions whose source file a file
//! rule matches. libplx reads it (PLX_SOURCE_FILES) and never reads debug information itself.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plx_analysis::objects::{function_files, needed_libraries};

use crate::{CliError, Exit};
use plx_analysis::glob_matches;

/// The ELF files of a command: its program and every argument naming an ELF file (the program
/// of `mpirun -np 4 ./app`), canonical, in order.
pub(crate) fn command_files(command: &[OsString]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let program = crate::mpi_detect::resolve(&command[0]);
    let args = command[1..].iter().map(|a| Some(PathBuf::from(a)));
    for p in std::iter::once(program).chain(args).flatten() {
        let is_elf = std::fs::read(&p).is_ok_and(|d| d.starts_with(b"\x7fELF"));
        if is_elf {
            let p = std::fs::canonicalize(&p).unwrap_or(p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The list's text for `command` and the globs of the filter's file rules.
pub fn list_text(command: &[OsString], globs: &[String]) -> String {
    let wanted = |file: &str| globs.iter().any(|g| glob_matches(g, file));
    let mut modules = command_files(command);
    for m in modules.clone() {
        for lib in needed_libraries(&m) {
            if !modules.contains(&lib) {
                modules.push(lib);
            }
        }
    }
    let mut text = String::from("plx-source-files 1\n");
    for m in &modules {
        let fns = function_files(m, &wanted);
        if fns.is_empty() || m.to_str().is_none_or(|s| s.contains('\n')) {
            continue;
        }
        let _ = writeln!(text, "module {}", m.display());
        for (offset, file) in fns.iter().filter(|(_, f)| !f.contains('\n')) {
            let _ = writeln!(text, "{offset:x} {file}");
        }
    }
    text
}

/// Writes the list into experiment directory `dir` when the filter has file rules; its path.
pub fn write(dir: &Path, filter: &Path, command: &[OsString]) -> Result<Option<PathBuf>, CliError> {
    let text = std::fs::read(filter).map_err(|e| {
        CliError::new(
            Exit::Input,
            format!("{}: cannot read filter file: {e}", filter.display()),
        )
    })?;
    let globs = crate::filter::file_globs(&text);
    if globs.is_empty() {
        return Ok(None);
    }
    let path = dir.join("source-files");
    plx_format::output::write_replacing(&path, list_text(command, &globs).as_bytes()).map_err(
        |e| {
            CliError::new(
                Exit::Input,
                format!("{}: cannot write: {e}", path.display()),
            )
        },
    )?;
    Ok(Some(path))
}
