//! Location names: the one way every command names a location or a process ([`Who`]: a short
//! form, `[APP:]PROCESS[.THREAD]`, and a long one for headings, the short form with the thread's
//! name, the pid and the host), and one parser for every form in which the commands name a location (a thread
//! of a process) or a process — `0.1`, `vm:0.1` (an application's), `host:prog[0.1]`,
//! `rank 0`, `rank0`, `rank 0 thread 1`, `1234:1.0` (an exec image) — and the canonical form
//! it prints, [`crate::TraceLocation::label`]'s: `[APP:]PROCESS[.THREAD]`, PROCESS the rank
//! within its application, else the pid (`PID:IMAGE` for a later exec image).

use std::fmt;

use crate::model::{Model, ProcessModel};
use crate::TraceLocation;

/// A process as the commands name it: built from a process of the model ([`Who::process`]) or
/// a location of the merge ([`Who::location`]), printed short ([`Who::short`]) or long
/// ([`Who::long`]). Every command's tables, headings and hierarchy nodes name locations with
/// it, so one location has one name everywhere.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The application's name in a session, else empty.
    pub app: &'a str,
    /// The rank within its application, if an MPI rank.
    pub rank: Option<u32>,
    /// The session-wide rank, when it differs from `rank` (a session's later application).
    pub session_rank: Option<u32>,
    /// Pid.
    pub pid: u32,
    /// Exec image (0, or N of `process.N.plx`).
    pub image: u32,
    /// Host.
    pub host: &'a str,
}

impl<'a> Who<'a> {
    /// Process `p` of `model`.
    pub fn process(model: &'a Model, p: &'a ProcessModel) -> Who<'a> {
        Who {
            app: p.app_name(model),
            rank: p.rank().map(|r| r - p.rank_base),
            session_rank: p.rank().filter(|_| p.rank_base > 0),
            pid: p.pid,
            image: p.image,
            host: &p.host,
        }
    }

    /// The process of a merged trace's location.
    pub fn location(l: &'a TraceLocation) -> Who<'a> {
        Who {
            app: &l.app,
            rank: l.rank.map(|r| r - l.rank_base),
            session_rank: l.rank.filter(|_| l.rank_base > 0),
            pid: l.pid,
            image: l.image,
            host: &l.host,
        }
    }

    /// `[APP:]PROCESS[.THREAD]`: PROCESS the rank within its application, else the pid
    /// (`PID:IMAGE` for a later exec image); `thread` the process-local index (`None`: the
    /// process). `0.1`, `solver:2`, `25259.0`.
    pub fn short(&self, thread: Option<u32>) -> String {
        let mut s = String::new();
        if !self.app.is_empty() {
            s.push_str(self.app);
            s.push(':');
        }
        match (self.rank, self.image) {
            (Some(r), _) => s.push_str(&r.to_string()),
            (None, 0) => s.push_str(&self.pid.to_string()),
            (None, i) => s.push_str(&format!("{}:{i}", self.pid)),
        }
        if let Some(t) = thread {
            s.push_str(&format!(".{t}"));
        }
        s
    }

    /// The short form, the thread's name, then the pid and host: `0.1 "worker" (pid 1234 on
    /// node1)`, `0 (pid 1234 on node1)`, `solver:0 (session rank 4, pid 1234 on node1)`.
    pub fn long(&self, thread: Option<(u32, &str)>) -> String {
        let mut s = self.short(thread.map(|(t, _)| t));
        if let Some((_, name)) = thread {
            s.push_str(&format!(" \"{name}\""));
        }
        let session = self
            .session_rank
            .map_or(String::new(), |r| format!("session rank {r}, "));
        let pid = match self.image {
            0 => self.pid.to_string(),
            i => format!("{}:{i}", self.pid),
        };
        s.push_str(&format!(" ({session}pid {pid} on {})", self.host));
        s
    }
}

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
    /// first: its number as a rank, then as a pid (the nodes are named by [`Who::short`]; the
    /// thread by its index, which every thread node also answers to).
    pub fn machine_paths(&self) -> Vec<String> {
        let host = self.host.as_deref().unwrap_or("*");
        let app = self.app.as_ref().map_or(String::new(), |a| format!("{a}:"));
        let thread = self.thread.map_or(String::new(), |t| format!("/{t}"));
        let processes = match self.image {
            Some(i) => vec![format!("{app}{}:{i}", self.process)],
            None => vec![format!("{app}{}", self.process)],
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
        assert_eq!(l.machine_paths(), ["/vm/0/1"]);
        let l: LocationName = "solver:2".parse().unwrap();
        assert_eq!(l.machine_paths(), ["/*/solver:2"]);
        let l: LocationName = "1234:1.0".parse().unwrap();
        assert_eq!(l.machine_paths(), ["/*/1234:1/0"]);
    }

    /// The short form is what the parser reads back; the long one starts with it.
    #[test]
    fn short_and_long_forms() {
        let mut w = Who {
            app: "",
            rank: Some(0),
            session_rank: None,
            pid: 1234,
            image: 0,
            host: "node1",
        };
        assert_eq!(w.short(Some(1)), "0.1");
        assert_eq!(w.short(None), "0");
        assert_eq!(
            w.long(Some((1, "worker"))),
            "0.1 \"worker\" (pid 1234 on node1)"
        );
        assert_eq!(w.long(None), "0 (pid 1234 on node1)");
        w.app = "solver";
        w.session_rank = Some(4);
        assert_eq!(w.short(Some(0)), "solver:0.0");
        assert_eq!(w.long(None), "solver:0 (session rank 4, pid 1234 on node1)");
        let w = Who {
            app: "",
            rank: None,
            session_rank: None,
            image: 1,
            host: "h",
            ..w
        };
        assert_eq!(w.short(Some(0)), "1234:1.0");
        assert_eq!(w.long(None), "1234:1 (pid 1234:1 on h)");
        for s in ["0.1", "solver:0.0", "1234:1.0"] {
            assert_eq!(canonical(s), s);
        }
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
