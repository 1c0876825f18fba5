//! `plx run`'s checks of `--counters` and `--probe` before anything is created or started, as
//! the filter file's: an unknown counter, or a probe glob that no function of the program (or
//! of the library it names) matches, stops `plx run` with the name and what is near it.

use std::ffi::{c_char, CStr, CString, OsString};
use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol, SymbolKind};
use plx_analysis::suggest::{did_you_mean, near};

use crate::{CliError, Exit};

extern "C" {
    fn plx_counter_event_valid(name: *const c_char) -> i32;
    fn plx_counter_event_name(i: usize, buf: *mut c_char, cap: usize) -> *const c_char;
    fn plx_name_qualified(name: *const c_char) -> *const c_char;
}

/// `LIB:GLOB` split at the ':' that ends LIB, as the runtime does: the first one that is not half
/// of a C++ scope `::` (`ns::Solver::step*` names no library).
fn lib_split(spec: &str) -> Option<(&str, &str)> {
    let b = spec.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b':' {
            if b.get(i + 1) == Some(&b':') {
                i += 2;
                continue;
            }
            return Some((&spec[..i], &spec[i + 1..]));
        }
        i += 1;
    }
    None
}

/// What a --probe glob is matched against besides a symbol's own name, as the runtime does
/// (runtime/src/core/names.c): a C++ name demangled, without a function template's return type
/// (`_Z5twiceIiET_S0_` is `twice<int>(int)`).
fn qualified(symbol: &str) -> Option<String> {
    let demangled = plx_analysis::symbols::demangle(symbol)?;
    let c = CString::new(demangled).ok()?;
    // SAFETY: a NUL-terminated name; the result points into it (a suffix), read before it drops.
    let q = unsafe { CStr::from_ptr(plx_name_qualified(c.as_ptr())) };
    Some(q.to_string_lossy().into_owned())
}

/// The perf names of counter_events.c.
fn counter_names() -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = [0 as c_char; 128];
    loop {
        // SAFETY: buf is writable for its length; the result is NULL or a NUL-terminated
        // string (a literal of the table, or buf).
        let p = unsafe { plx_counter_event_name(out.len(), buf.as_mut_ptr(), buf.len()) };
        if p.is_null() {
            return out;
        }
        out.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
    }
}

/// What is said of a counter name that is none: the runtime's filter parser's words, with the
/// names near it.
pub fn unknown_counter(name: &str) -> String {
    let names = counter_names();
    let hint = did_you_mean(&near(name, names.iter().map(String::as_str)), 5);
    let hint = hint.trim_start_matches(" (").trim_end_matches(')');
    let sep = if hint.is_empty() { "" } else { "; " };
    format!("unknown counter '{name}' ({hint}{sep}docs/formats/counters.md lists the names)")
}

/// Checks `--counters EVENTS` with the runtime's own table.
pub fn check_counters(events: &str) -> Result<(), CliError> {
    for ev in events.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let c = CString::new(ev)
            .map_err(|_| CliError::new(Exit::Usage, "--counters: a NUL byte".into()))?;
        // SAFETY: a NUL-terminated name.
        if unsafe { plx_counter_event_valid(c.as_ptr()) } != 0 {
            continue;
        }
        return Err(CliError::new(
            Exit::Usage,
            format!("--counters: {}", unknown_counter(ev)),
        ));
    }
    Ok(())
}

/// The function names of an ELF file's symbol table (`.symtab`, else `.dynsym`, as the
/// runtime's probes read them).
fn function_names(path: &Path) -> Vec<String> {
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return Vec::new();
    };
    let named = |s: object::Symbol| {
        (s.kind() == SymbolKind::Text && !s.is_undefined() && s.address() != 0)
            .then(|| s.name().ok().map(str::to_string))
            .flatten()
    };
    let mut names: Vec<String> = obj.symbols().filter_map(named).collect();
    if names.is_empty() {
        names = obj.dynamic_symbols().filter_map(named).collect();
    }
    names.sort_unstable();
    names.dedup();
    names
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Programs that start the program to measure rather than being it (shells, interpreters,
/// wrappers; MPI launchers and their helpers are the runtime's list, mpi_detect's): their own
/// functions are not what a glob means.
const STARTERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox", "env", "nice",
    "nohup", "time", "timeout", "taskset", "numactl", "setsid", "stdbuf", "chrt", "ionice",
    "strace", "ltrace", "valgrind", "gdb", "xargs", "perl", "ruby", "node", "java", "python",
];

fn is_starter(p: &Path) -> bool {
    let name = file_name(p);
    STARTERS.contains(&name.as_str())
        || crate::mpi_detect::launcher_kind(&name) != 0
        || name.starts_with("python")
}

/// Checks `--probe GLOBS` against the ELF files of `command` that are programs to measure (the
/// program, the program a launcher is given; not a shell, interpreter or launcher) and the
/// libraries they need: a `GLOB` must match a function of one of those files, a `LIB:GLOB` one
/// of the libraries whose file name begins with LIB; a C++ function by its symbol or by its
/// qualified name ([`qualified`]). A command with no such file (a script, `sh -c '...'`) is not
/// checked; a LIB no needed library is (one loaded with dlopen) is not checked either, and
/// plx run says so.
pub fn check_probes(spec: &str, command: &[OsString]) -> Result<(), CliError> {
    let mut programs = crate::source_files::command_files(command);
    programs.retain(|p| !is_starter(p));
    if programs.is_empty() {
        return Ok(());
    }
    let mut libraries: Option<Vec<PathBuf>> = None;
    for tok in spec.split(',').map(|t| t.trim_start_matches(' ')) {
        if tok.is_empty() {
            continue;
        }
        let (files, glob) = match lib_split(tok) {
            None => (programs.clone(), tok),
            Some((lib, glob)) => {
                let all = libraries.get_or_insert_with(|| {
                    let mut all = programs.clone();
                    for p in &programs {
                        all.extend(plx_analysis::objects::needed_libraries(p));
                    }
                    all
                });
                let files: Vec<PathBuf> = all
                    .iter()
                    .filter(|p| file_name(p).starts_with(lib))
                    .cloned()
                    .collect();
                (files, glob)
            }
        };
        if files.is_empty() {
            // a library the program loads with dlopen is not among those it needs: not
            // checked, and not probed at start-up (it is not loaded yet)
            if let Some((lib, _)) = lib_split(tok) {
                eprintln!(
                    "plx: --probe '{tok}': no library the program needs is named {lib}*: not checked; a library loaded later with dlopen is not probed at start-up (plx ctl PID insert '{tok}' once it is loaded)"
                );
            }
            continue;
        }
        let mut names: Vec<String> = files.iter().flat_map(|f| function_names(f)).collect();
        let cxx: Vec<String> = names.iter().filter_map(|n| qualified(n)).collect();
        names.extend(cxx);
        if names.iter().any(|n| plx_analysis::glob_matches(glob, n)) {
            continue;
        }
        let hint = did_you_mean(&near(glob, names.iter().map(String::as_str)), 5);
        let of: Vec<String> = files.iter().map(|f| file_name(f)).collect();
        return Err(CliError::new(
            Exit::Usage,
            format!(
                "--probe '{tok}': no function of {} matches it{hint}",
                of.join(", ")
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lib_ends_at_a_colon_that_is_no_scope() {
        assert_eq!(lib_split("libm.so:exp"), Some(("libm.so", "exp")));
        assert_eq!(lib_split("ns::Solver::step*"), None);
        assert_eq!(lib_split("libx:ns::f*"), Some(("libx", "ns::f*")));
        assert_eq!(lib_split("solve"), None);
    }

    #[test]
    fn counters_by_the_runtime_table() {
        assert!(check_counters("task-clock, page-faults,cycles,L1-dcache-load-misses").is_ok());
        assert!(check_counters("PAPI_TOT_INS,perf::PAGE-FAULTS,r01c2").is_ok());
        assert_eq!(
            check_counters("task-clock,cycels").unwrap_err().message,
            "--counters: unknown counter 'cycels' (did you mean cycles?; docs/formats/counters.md lists the names)"
        );
        assert_eq!(
            check_counters("flops").unwrap_err().message,
            "--counters: unknown counter 'flops' (docs/formats/counters.md lists the names)"
        );
        let names = counter_names();
        assert_eq!(names.len(), 24 + 7 * 6);
        assert!(names.contains(&"LLC-load-misses".to_string()));
    }

    #[test]
    fn probes_of_the_program_and_its_libraries() {
        let ls = vec![OsString::from("/bin/ls")];
        // each glob on its own: one matching nothing is named even when another matches
        assert!(!function_names(Path::new("/bin/ls")).is_empty());
        assert!(check_probes("*", &ls).is_ok());
        assert_eq!(
            check_probes("*,no_such_fn_xyz", &ls).unwrap_err().message,
            "--probe 'no_such_fn_xyz': no function of ls matches it"
        );
        let libc = function_names(
            &plx_analysis::objects::needed_libraries(Path::new("/bin/ls"))
                .into_iter()
                .find(|p| file_name(p).starts_with("libc.so"))
                .unwrap(),
        );
        assert!(libc.iter().any(|n| n == "malloc"));
        assert!(check_probes("libc.so:malloc", &ls).is_ok());
        assert_eq!(
            check_probes("libc.so:mallocc", &ls).unwrap_err().message,
            "--probe 'libc.so:mallocc': no function of libc.so.6 matches it (did you mean malloc?)"
        );
        // a library the program does not need (dlopen), a script and a shell are not checked
        assert!(check_probes("libnotneeded:x", &ls).is_ok());
        assert!(check_probes("nothing_matches", &[OsString::from("/no/such/script")]).is_ok());
        let sh: Vec<OsString> = ["sh", "-c", "exec ./app"].map(OsString::from).to_vec();
        assert!(check_probes("work", &sh).is_ok());
    }
}
