//! What an analysis looks at: one application of a session (its logical view) or all of them
//! (the physical view), and one phase — a user phase region by name, or an interval of time
//! given on the command line.

use std::fmt;
use std::str::FromStr;

use plx_format::RegionKind;

use crate::merge::{EventKind, GlobalMerge, MergeOptions};
use crate::{AnalysisError, Model};

/// `--phase`: a phase region's name, or `START:END` in seconds from the trace's first event
/// (either side may be empty: from the start, to the end).
#[derive(Debug, Clone, PartialEq)]
pub enum PhaseSpec {
    /// A user phase (`plx_phase_begin`/`PLX_PHASE` in plx.h) by name.
    Named(String),
    /// An interval of time, seconds from the trace's first event.
    Interval {
        /// Start, s (`None`: the beginning).
        start_s: Option<f64>,
        /// End, s (`None`: the end).
        end_s: Option<f64>,
    },
}

impl FromStr for PhaseSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.contains(':') {
            return PhaseSpec::interval(s, "phase");
        }
        if s.is_empty() {
            return Err("an empty phase: give a phase name or START:END in seconds".into());
        }
        Ok(PhaseSpec::Named(s.to_string()))
    }
}

impl PhaseSpec {
    /// `--window START:END`: an interval only, seconds from the trace's first event (either
    /// side may be empty).
    pub fn window(s: &str) -> Result<Self, String> {
        if !s.contains(':') {
            return Err(format!(
                "window '{s}': give START:END in seconds from the run's start (its first traced \
                 event), e.g. 0.5:2; a phase by name is --phase NAME"
            ));
        }
        PhaseSpec::interval(s, "window")
    }

    /// `START:END` of a `what` (phase or window) as an [`PhaseSpec::Interval`].
    fn interval(s: &str, what: &str) -> Result<Self, String> {
        let (a, b) = s.split_once(':').unwrap_or((s, ""));
        let num = |t: &str| -> Result<Option<f64>, String> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                _ => Err(format!(
                    "{what} '{s}': '{t}' is not a time in seconds (START:END, e.g. 0.5:2)"
                )),
            }
        };
        let (start_s, end_s) = (num(a)?, num(b)?);
        if let (Some(x), Some(y)) = (start_s, end_s) {
            if y <= x {
                return Err(format!("{what} '{s}': the end must come after the start"));
            }
        }
        Ok(PhaseSpec::Interval { start_s, end_s })
    }
}

impl fmt::Display for PhaseSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhaseSpec::Named(n) => write!(f, "{n}"),
            PhaseSpec::Interval { start_s, end_s } => {
                if let Some(s) = start_s {
                    write!(f, "{s}")?;
                }
                write!(f, ":")?;
                if let Some(e) = end_s {
                    write!(f, "{e}")?;
                }
                Ok(())
            }
        }
    }
}

/// A window of the merged trace's time, global ns (the time base of [`GlobalMerge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First instant inside, ns.
    pub start_ns: i64,
    /// First instant after, ns.
    pub end_ns: i64,
}

impl Window {
    /// Everything.
    pub const ALL: Window = Window {
        start_ns: i64::MIN,
        end_ns: i64::MAX,
    };

    /// Is `t` inside?
    #[inline]
    pub fn contains(&self, t: i64) -> bool {
        t >= self.start_ns && t < self.end_ns
    }

    /// Does a message sent at `send_ns` belong to the window? The one rule of every command
    /// (`plx comm`, `plx report`, `plx display`, `plx compare`): a message belongs to the window
    /// in which it was **sent**, wherever it was received (docs/phases.md).
    #[inline]
    pub fn holds_message_sent_at(&self, send_ns: i64) -> bool {
        self.contains(send_ns)
    }

    /// The part of `[a, b)` inside, as a length in ns (0 when disjoint).
    #[inline]
    pub fn overlap(&self, a: i64, b: i64) -> i64 {
        (b.min(self.end_ns) - a.max(self.start_ns)).max(0)
    }
}

/// The window of `phase` in the merged trace of `model`: an interval relative to the trace's
/// first event, or from the first enter of the named phase region to its last exit (over all
/// threads). Errors when the phase region does not exist or never ran in the trace.
pub fn phase_window(model: &Model, phase: &PhaseSpec) -> Result<Window, AnalysisError> {
    let exp = plx_format::Experiment::open(&model.dir)?;
    let mut merge = GlobalMerge::new(model, &exp, MergeOptions::default())?;
    let origin = merge.origin_ns();
    match phase {
        PhaseSpec::Interval { start_s, end_s } => {
            let w = Window {
                start_ns: start_s.map_or(i64::MIN, |s| origin + (s * 1e9).round() as i64),
                end_ns: end_s.map_or(i64::MAX, |e| origin + (e * 1e9).round() as i64),
            };
            match traced_end_ns(model) {
                Some(end) if w.start_ns > end => Err(AnalysisError::EmptyWindow(format!(
                    "{}: no traced event is in the window: it begins {} s after the trace's \
                     first event, and the traced processes ended {:.6} s after it",
                    model.dir.display(),
                    start_s.unwrap_or(0.0),
                    (end - origin) as f64 / 1e9
                ))),
                _ => Ok(w),
            }
        }
        PhaseSpec::Named(name) => {
            let region = merge
                .regions()
                .find(name, RegionKind::Phase)
                .ok_or_else(|| AnalysisError::NoSuchPhase(name.clone()))?;
            let (mut first, mut last) = (None::<i64>, None::<i64>);
            while let Some(ev) = merge.next_event() {
                match ev.kind {
                    EventKind::Enter { region: r } if r == region => {
                        first.get_or_insert(ev.time_ns);
                    }
                    EventKind::Exit { region: r } if r == region => last = Some(ev.time_ns),
                    _ => {}
                }
            }
            match first {
                Some(s) => Ok(Window {
                    start_ns: s,
                    end_ns: last.map_or(i64::MAX, |e| e + 1),
                }),
                None => Err(AnalysisError::NoSuchPhase(format!(
                    "{name}\" in the trace (the phase never ran in a traced thread)"
                ))),
            }
        }
    }
}

/// When the last traced process ended (its ProcessEnd record), global ns; `None` when one of
/// them did not finish writing (its end is not known).
fn traced_end_ns(model: &Model) -> Option<i64> {
    let mut end = None::<i64>;
    for p in model
        .processes
        .iter()
        .filter(|p| p.measured && p.has_trace())
    {
        let t = p.rank0_ns(p.end.as_ref()?.ticks).round() as i64;
        end = Some(end.map_or(t, |e| e.max(t)));
    }
    end
}

impl Model {
    /// The logical view of application `name`: only its processes are kept, their ranks
    /// numbered from 0 as the application numbered them. Errors name the applications there
    /// are.
    pub fn select_app(&mut self, name: &str) -> Result<(), AnalysisError> {
        let Some(app) = self.apps.iter().position(|a| a.name == name) else {
            let names: Vec<&str> = self
                .apps
                .iter()
                .map(|a| a.name.as_str())
                .filter(|n| !n.is_empty())
                .collect();
            return Err(AnalysisError::NoSuchApp(
                name.to_string(),
                if names.is_empty() {
                    "this is one experiment, not a session".to_string()
                } else {
                    format!("the session has {}", names.join(", "))
                },
            ));
        };
        self.processes.retain(|p| p.app == app as u32);
        // its communicators only
        let keep: std::collections::BTreeSet<u32> = self
            .processes
            .iter()
            .flat_map(|p| p.comms.values().copied())
            .collect();
        let renumber = self.comms.retain(&keep);
        for p in &mut self.processes {
            for g in p.comms.values_mut() {
                *g = renumber[g];
            }
        }
        // the logical view: the application's own ranks (0, 1, ...) again
        let base = self.processes.first().map_or(0, |p| p.rank_base);
        if base > 0 {
            let mut comms = std::collections::BTreeSet::new();
            for p in &mut self.processes {
                p.rank_base = 0;
                if let Some(m) = p.mpi.as_mut() {
                    m.rank -= base;
                }
                for t in &mut p.threads {
                    for m in &mut t.messages {
                        if let Some(peer) = m.peer.as_mut() {
                            *peer = peer.saturating_sub(base);
                        }
                    }
                }
                comms.extend(p.comms.values().copied());
            }
            self.comms.lower_ranks(&comms, base);
        }
        Ok(())
    }

    /// Is this a session of several applications (or one named one)?
    pub fn is_session(&self) -> bool {
        self.apps.iter().any(|a| !a.name.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_phases() {
        assert_eq!(
            "solve".parse::<PhaseSpec>().unwrap(),
            PhaseSpec::Named("solve".into())
        );
        assert_eq!(
            "0.5:2".parse::<PhaseSpec>().unwrap(),
            PhaseSpec::Interval {
                start_s: Some(0.5),
                end_s: Some(2.0)
            }
        );
        assert_eq!(
            ":3".parse::<PhaseSpec>().unwrap(),
            PhaseSpec::Interval {
                start_s: None,
                end_s: Some(3.0)
            }
        );
        assert!("2:1".parse::<PhaseSpec>().is_err());
        assert!("a:1".parse::<PhaseSpec>().is_err());
        assert!("".parse::<PhaseSpec>().is_err());
    }

    #[test]
    fn window_overlap() {
        let w = Window {
            start_ns: 10,
            end_ns: 20,
        };
        assert_eq!(w.overlap(0, 15), 5);
        assert_eq!(w.overlap(12, 30), 8);
        assert_eq!(w.overlap(20, 30), 0);
        assert!(w.contains(10) && !w.contains(20));
    }
}
