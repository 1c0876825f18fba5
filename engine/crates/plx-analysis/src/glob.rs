//! The one glob grammar of the engine: the runtime's, fnmatch(3) with no flags (`*`, `?`,
//! `[...]`, `[!...]`, `\` escapes; `*` also matches `/`), for filter file rules and focus paths.

use std::ffi::CString;

/// Does `glob` contain a character fnmatch(3) treats specially?
pub fn is_glob(glob: &str) -> bool {
    glob.contains(['*', '?', '[', '\\'])
}

/// Whether `subject` matches `glob` as the runtime matches filter globs (fnmatch(3), no flags).
pub fn glob_matches(glob: &str, subject: &str) -> bool {
    let (Ok(g), Ok(s)) = (CString::new(glob), CString::new(subject)) else {
        return false;
    };
    // SAFETY: both strings are NUL-terminated.
    unsafe { libc::fnmatch(g.as_ptr(), s.as_ptr(), 0) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_grammar() {
        assert!(glob_matches("*/src/*.c", "/a/src/b/x.c"));
        assert!(!glob_matches("*/src/*.c", "/a/lib/x.c"));
        assert!(glob_matches("queue.c:1[0-9] *", "queue.c:12 (main)"));
        assert!(glob_matches("[!x]?", "ab"));
        assert!(!is_glob("queue.c:8 (main)"));
        assert!(is_glob("queue.c:8*"));
    }
}
