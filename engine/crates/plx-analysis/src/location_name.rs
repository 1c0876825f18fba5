//! Location names: one parser for every form in which the commands name a location (a thread
//! of a process) or a process — `0.1`, `vm:0.1` (an application's), `host:prog[0.1]`,
//! `rank 0`, `rank0`, `rank 0 thread 1`, `1234:1.0` (an exec image) — and the canonical form
//! it prints, [`crate::TraceLocation::label`]'s: `[APP:]PROCESS[.THREAD]`, PROCESS the rank
//! within its application, else the pid (`PID:IMAGE` for a later exec image).

use std::fmt;

/// A location or process as named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationName {
    /// The application, in a session.
    pub app: Option<String>,
    /// The host, when the name gave it (`host:prog[...]`).
    pub host: Option<String>,
    /// The rank within its application, else the pid.
    pub process: u32,
    /// The exec image of the pid (`PID:IMAGE`).
    pub image: Option<u32>,
    /// The thread's process-local index; `None` names the process.
    pub thread: Option<u32>,
}

fn number(s: &str, what: &str) -> Result<u32, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("\"{s}\" is not a {what} number"))
}

impl std::str::FromStr for LocationName {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = |why: String| {
            format!(
                "location \"{text}\": {why} (a location is RANK.THREAD, APP:RANK.THREAD, \
                 HOST:PROGRAM[RANK.THREAD], rank RANK [thread THREAD] or PID:IMAGE.THREAD)"
            )
        };
        let t = text.trim();
        // HOST:PROGRAM[INNER]
        if let Some(inner) = t.strip_suffix(']') {
            let (outer, inner) = inner
                .split_once('[')
                .ok_or_else(|| bad("a ] without [".into()))?;
            let host = outer.split_once(':').map_or(outer, |(h, _)| h);
            let mut l: LocationName = inner.parse().map_err(|_| bad(inner.to_string()))?;
            l.host = Some(host.to_string());
            return Ok(l);
        }
        // rank R [thread T], rankR
        if let Some(rest) = t.strip_prefix("rank") {
            let mut words = rest.split_whitespace();
            let process = number(words.next().unwrap_or(""), "rank").map_err(bad)?;
            let thread = match (words.next(), words.next(), words.next()) {
                (None, _, _) => None,
                (Some("thread"), Some(n), None) => Some(number(n, "thread").map_err(bad)?),
                _ => return Err(bad("after the rank only `thread N` may follow".into())),
            };
            return Ok(LocationName {
                app: None,
                host: None,
                process,
                image: None,
                thread,
            });
        }
        // [APP:]P[.T], PID:IMAGE[.T] (a numeric prefix is a pid)
        let (prefix, own) = match t.rsplit_once(':') {
            Some((p, o)) => (Some(p), o),
            None => (None, t),
        };
        let (p, thread) = match own.split_once('.') {
            Some((p, th)) => (p, Some(number(th, "thread").map_err(bad)?)),
            None => (own, None),
        };
        let p = number(p, "process").map_err(bad)?;
        Ok(match prefix {
            Some(pid) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
                LocationName {
                    app: None,
                    host: None,
                    process: number(pid, "pid").map_err(bad)?,
                    image: Some(p),
                    thread,
                }
            }
            Some("") => return Err(bad("an empty application name".into())),
            app => LocationName {
                app: app.map(str::to_string),
                host: None,
                process: p,
                image: None,
                thread,
            },
        })
    }
}

impl fmt::Display for LocationName {
    /// The canonical form, `[APP:]PROCESS[.THREAD]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(a) = &self.app {
            write!(f, "{a}:")?;
        }
        write!(f, "{}", self.process)?;
        if let Some(i) = self.image {
            write!(f, ":{i}")?;
        }
        if let Some(t) = self.thread {
            write!(f, ".{t}")?;
        }
        Ok(())
    }
}

impl LocationName {
    /// The paths of the Machine hierarchy (`/HOST/PROCESS/THREAD`) it may name, most likely
    /// first: its number as a rank (`rank N`), then as a pid.
    pub fn machine_paths(&self) -> Vec<String> {
        let host = self.host.as_deref().unwrap_or("*");
        let app = self.app.as_ref().map_or(String::new(), |a| format!("{a}:"));
        let thread = self.thread.map_or(String::new(), |t| format!("/{t}"));
        let processes = match self.image {
            Some(i) => vec![format!("{app}{}.{i}", self.process)],
            None => vec![
                format!("{app}rank {}", self.process),
                format!("{app}{}", self.process),
            ],
        };
        processes
            .into_iter()
            .map(|p| format!("/{host}/{p}{thread}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> String {
        s.parse::<LocationName>().unwrap().to_string()
    }

    /// The forms the commands print name one location: `rank 0` (plx hierarchy, plx query),
    /// `0.0` (plx histogram, display, comm), `vm:life[0.0]` (plx critical-path).
    #[test]
    fn every_printed_form_parses_to_the_canonical_one() {
        assert_eq!(canonical("0.0"), "0.0");
        assert_eq!(canonical("rank 0 thread 0"), "0.0");
        assert_eq!(canonical("vm:life[0.0]"), "0.0");
        assert_eq!(canonical("rank 3"), "3");
        assert_eq!(canonical("rank3"), "3");
        assert_eq!(canonical("vm:life[3]"), "3");
        assert_eq!(canonical("solver:2.1"), "solver:2.1");
        assert_eq!(canonical("node1:prog[solver:2.1]"), "solver:2.1");
        assert_eq!(canonical("1234:1.0"), "1234:1.0");
        let l: LocationName = "vm:life[0.1]".parse().unwrap();
        assert_eq!(l.host.as_deref(), Some("vm"));
        assert_eq!(l.machine_paths(), ["/vm/rank 0/1", "/vm/0/1"]);
        let l: LocationName = "solver:2".parse().unwrap();
        assert_eq!(l.machine_paths(), ["/*/solver:rank 2", "/*/solver:2"]);
        let l: LocationName = "1234:1.0".parse().unwrap();
        assert_eq!(l.machine_paths(), ["/*/1234.1/0"]);
    }

    #[test]
    fn malformed_names_say_what_a_location_is() {
        for bad in [
            "",
            "x.0",
            "0.x",
            "rank",
            "rank 0 thread",
            "rank 0 proc 1",
            ":0.0",
            "a[0.0",
        ] {
            let e = bad.parse::<LocationName>().unwrap_err();
            assert!(e.contains("a location is RANK.THREAD"), "{bad}: {e}");
        }
    }
}
