//! Checks a filter file (docs/formats/filter.md) before the program runs, so a wrong line is
//! reported with its file and line instead of being skipped by the runtime.

use std::path::Path;

use crate::CliError;

/// One problem: the 1-based line and what is wrong with it.
#[derive(Debug, PartialEq)]
pub struct FilterProblem {
    pub line: usize,
    pub message: String,
}

/// Checks the text of a filter file; returns every bad line.
pub fn check_text(text: &str) -> Vec<FilterProblem> {
    let mut problems = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&keyword) = words.first() else {
            continue;
        };
        let problem = match keyword {
            "include" | "exclude" | "cputime" => {
                let ok = (words.len() == 2 && words[1] != "file")
                    || (words.len() == 3 && words[1] == "file");
                if !ok {
                    Some(format!(
                        "expected '{keyword} GLOB' or '{keyword} file GLOB'"
                    ))
                } else {
                    let glob = words[words.len() - 1];
                    unclosed_bracket(glob).then(|| format!("'{glob}': a '[' is not closed"))
                }
            }
            "throttle" => {
                let ok = words.len() == 3
                    && words[1].parse::<u64>().is_ok_and(|c| c > 0)
                    && words[2].parse::<f64>().is_ok_and(|u| u > 0.0);
                (!ok)
                    .then(|| "expected 'throttle CALLS USEC' (e.g. throttle 100000 10)".to_string())
            }
            "counters" => check_counters(line.trim_start()["counters".len()..].trim()),
            other => Some(format!(
                "unknown rule '{other}' (expected include, exclude, cputime, throttle or counters)"
            )),
        };
        if let Some(message) = problem {
            problems.push(FilterProblem {
                line: i + 1,
                message,
            });
        }
    }
    problems
}

/// `counters GLOB SET [| SET ...] [every N]` (docs/formats/counters.md); event names are
/// checked by the runtime.
fn check_counters(rest: &str) -> Option<String> {
    let usage = "expected 'counters GLOB EVENT[,EVENT...] [| EVENT,... every N]'";
    let mut it = rest.splitn(2, char::is_whitespace);
    let glob = it.next().filter(|g| !g.is_empty())?;
    if unclosed_bracket(glob) {
        return Some(format!("'{glob}': a '[' is not closed"));
    }
    let mut sets = it.next().unwrap_or("").trim().to_string();
    let mut every = None;
    if let Some(at) = sets.find("every") {
        let n = sets[at + 5..].trim();
        match n.parse::<u64>() {
            Ok(v) if v > 0 => every = Some(v),
            _ => return Some("'every' takes a whole number of calls from 1 (e.g. every 100)".into()),
        }
        sets.truncate(at);
    }
    let groups: Vec<&str> = sets.split('|').map(str::trim).collect();
    if groups.iter().any(|g| g.split([',', ' ', '\t']).all(str::is_empty)) {
        return Some(if groups.len() == 1 { usage.into() } else { "an empty event set".into() });
    }
    match (groups.len() > 1, every.is_some()) {
        (true, false) => Some("several event sets need 'every N' (calls between switches)".into()),
        (false, true) => Some("'every N' needs several event sets separated by '|'".into()),
        _ => None,
    }
}

/// A `[` that opens a character class no `]` closes (the glob would match it literally).
fn unclosed_bracket(glob: &str) -> bool {
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => {
                // a ']' right after '[' (or '[!') is part of the class
                if chars.peek() == Some(&'!') {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                }
                if !chars.by_ref().any(|c| c == ']') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Reads and checks a filter file; the error names the file and each bad line.
pub fn check_file(path: &Path) -> Result<(), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            2,
            format!("{}: cannot read filter file: {e}", path.display()),
        )
    })?;
    let problems = check_text(&text);
    if problems.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = problems
        .iter()
        .map(|p| format!("{}:{}: {}", path.display(), p.line, p.message))
        .collect();
    Err(CliError::new(2, lines.join("\nplx: ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_rules_pass() {
        let text =
            "# comment\n\nexclude std::*\ninclude file */src/*  # trailing\nthrottle 1000 2.5\n";
        assert!(check_text(text).is_empty());
    }

    #[test]
    fn bad_lines_are_named() {
        let text = "exclude std::*\nexclud foo\ninclude\nexclude file a b\nthrottle 10\ncounters f*\ninclude a b\nthrottle 0 5\ninclude file\nexclude [abc\nexclude [!]x]*\n";
        let lines: Vec<usize> = check_text(text).iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(check_text("exclud foo")
            .remove(0)
            .message
            .contains("unknown rule 'exclud'"));
    }
}
