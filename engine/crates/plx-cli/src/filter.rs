//! Checks a filter file (docs/formats/filter.md) before the program runs, with the runtime's own
//! parser (runtime/src/core/filter_parse.c, compiled in by build.rs): a wrong line is reported
//! with the same words as libplx would give, and stops `plx run`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use crate::{CliError, Exit};

/// `struct plx_filter_rule` of filter_parse.h.
#[repr(C)]
struct RawRule {
    kind: c_int,
    line: u32,
    by_file: c_int,
    glob: *const c_char,
    calls: u64,
    usec: f64,
}

/// `struct plx_filter_sink`.
#[repr(C)]
struct Sink {
    rule: extern "C" fn(*mut c_void, *const RawRule),
    error: extern "C" fn(*mut c_void, *const c_char),
    ctx: *mut c_void,
}

extern "C" {
    fn plx_filter_parse(
        name: *const c_char,
        text: *const c_char,
        len: usize,
        sink: *const Sink,
    ) -> c_int;
}

extern "C" fn ignore_rule(_ctx: *mut c_void, _rule: *const RawRule) {}

extern "C" fn collect_error(ctx: *mut c_void, message: *const c_char) {
    // SAFETY: ctx is the Vec<String> check_text passed; message a NUL-terminated string.
    let errors = unsafe { &mut *ctx.cast::<Vec<String>>() };
    errors.push(
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned(),
    );
}

/// Checks the text of filter file `name`: every bad line's message, `NAME:LINE: what is wrong`.
pub fn check_text(name: &str, text: &[u8]) -> Vec<String> {
    let name = CString::new(name.replace('\0', "?")).expect("no NUL left");
    let mut errors: Vec<String> = Vec::new();
    let sink = Sink {
        rule: ignore_rule,
        error: collect_error,
        ctx: (&mut errors as *mut Vec<String>).cast(),
    };
    // SAFETY: name is NUL-terminated, text valid for its length, sink's callbacks match the C
    // declarations and ctx outlives the call.
    unsafe { plx_filter_parse(name.as_ptr(), text.as_ptr().cast(), text.len(), &sink) };
    errors
}

extern "C" fn collect_file_glob(ctx: *mut c_void, rule: *const RawRule) {
    // SAFETY: ctx is the Vec<String> file_globs passed; rule a rule of the parser's, valid for
    // the call, whose glob is NUL-terminated when not null.
    let (globs, rule) = unsafe { (&mut *ctx.cast::<Vec<String>>(), &*rule) };
    if rule.by_file != 0 && !rule.glob.is_null() {
        let glob = unsafe { CStr::from_ptr(rule.glob) };
        globs.push(glob.to_string_lossy().into_owned());
    }
}

extern "C" fn ignore_error(_ctx: *mut c_void, _message: *const c_char) {}

/// The globs of the file rules (`include file GLOB`, `exclude file GLOB`, `cputime file GLOB`)
/// of a filter's text, as the runtime's parser reads them.
pub fn file_globs(text: &[u8]) -> Vec<String> {
    let mut globs: Vec<String> = Vec::new();
    let sink = Sink {
        rule: collect_file_glob,
        error: ignore_error,
        ctx: (&mut globs as *mut Vec<String>).cast(),
    };
    // SAFETY: as in check_text.
    unsafe { plx_filter_parse(c"filter".as_ptr(), text.as_ptr().cast(), text.len(), &sink) };
    globs
}

/// The parser's message of an unknown counter with the names near it, as `--counters` gives.
fn with_counter_hint(message: String) -> String {
    const SAID: &str = "unknown counter '";
    let Some(at) = message.find(SAID) else {
        return message;
    };
    let rest = &message[at + SAID.len()..];
    let Some(name) = rest.split('\'').next() else {
        return message;
    };
    if rest[name.len()..] != *"' (docs/formats/counters.md lists the names)" {
        return message;
    }
    format!(
        "{}{}",
        &message[..at],
        crate::preflight::unknown_counter(name)
    )
}

/// The largest filter file the runtime reads (`PLX_FILTER_MAX_BYTES` in runtime/src/core).
const FILTER_MAX_BYTES: u64 = 16 << 20;

/// Reads and checks a filter file; the error names the file and each bad line.
pub fn check_file(path: &Path) -> Result<(), CliError> {
    let text = plx_format::read_regular(path, FILTER_MAX_BYTES).map_err(|e| {
        CliError::new(
            Exit::Input,
            format!("{}: cannot read filter file: {e}", path.display()),
        )
    })?;
    let errors: Vec<String> = check_text(&path.display().to_string(), &text)
        .into_iter()
        .map(with_counter_hint)
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(CliError::new(Exit::Input, errors.join("\nplx: ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        check_text("f", text.as_bytes())
    }

    #[test]
    fn good_rules_pass() {
        let text = "# comment\n\nexclude std::*\ninclude file */src/*  # trailing\n\
                    throttle 1000 2.5\ncputime solve\r\nexclude [!]x]*\n\
                    counters solve cycles,instructions | cache-misses every 100\n\
                    counters f* perf::PAGE-FAULTS,r01c2\n";
        assert_eq!(lines(text), Vec::<String>::new());
    }

    #[test]
    fn bad_lines_are_named() {
        let text = "exclude std::*\nexclud foo\ninclude\nexclude file a b\nthrottle 10\n\
                    counters f* cycels\ninclude a b\nthrottle 0 5\ninclude file\nexclude [abc\n\
                    exclude [!]x]*\nthrottle -1 5";
        assert_eq!(
            lines(text),
            vec![
                "f:2: unknown rule 'exclud' (expected include, exclude, cputime, throttle or counters)",
                "f:3: expected 'include GLOB' or 'include file GLOB'",
                "f:4: expected 'exclude GLOB' or 'exclude file GLOB'",
                "f:5: expected 'throttle CALLS USEC' (e.g. throttle 100000 10)",
                "f:6: unknown counter 'cycels' (docs/formats/counters.md lists the names)",
                "f:7: expected 'include GLOB' or 'include file GLOB'",
                "f:8: expected 'throttle CALLS USEC' (e.g. throttle 100000 10)",
                "f:9: expected 'include GLOB' or 'include file GLOB'",
                "f:10: '[abc': a '[' is not closed",
                "f:12: expected 'throttle CALLS USEC' (e.g. throttle 100000 10)",
            ]
        );
    }

    #[test]
    fn unknown_counters_get_the_names_near() {
        let f = std::env::temp_dir().join(format!("plx-filter-hint-{}", std::process::id()));
        std::fs::write(&f, "counters f* task-clock,cycels\ncounters g* flops\n").unwrap();
        let e = check_file(&f).unwrap_err().message;
        std::fs::remove_file(&f).unwrap();
        let name = f.display();
        assert_eq!(
            e,
            format!(
                "{name}:1: unknown counter 'cycels' (did you mean cycles?; docs/formats/counters.md lists the names)\n\
                 plx: {name}:2: unknown counter 'flops' (docs/formats/counters.md lists the names)"
            )
        );
    }

    #[test]
    fn file_globs_are_those_of_file_rules() {
        let text = b"exclude f*\ninclude file */src/*.c\ncputime file *.h\nthrottle 10 1\n";
        assert_eq!(file_globs(text), vec!["*/src/*.c", "*.h"]);
    }

    #[test]
    fn long_lines_and_files_are_read_whole() {
        // a 10,000-byte glob is one word of one line, and line 20,001 is counted as such
        let long = format!("exclude {}\n", "a".repeat(10_000));
        let mut text = long.repeat(2);
        text.push_str(&"# padding\n".repeat(20_000 - 2));
        text.push_str("exclud x\n");
        assert!(text.len() > 64 * 1024);
        assert_eq!(
            lines(&text),
            vec!["f:20001: unknown rule 'exclud' (expected include, exclude, cputime, throttle or counters)"]
        );
    }
}
