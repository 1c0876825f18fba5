//! The runtime's own cost (regions of kind runtime: `plx_flush`, `plx_symbols`) against each
//! thread's time and against a critical path: above [`RUNTIME_SHARE`] it is inside the measured
//! times of the functions it interrupted, and a warning names it and the remedy.

use plx_format::{RegionKind, Warning, WarningKind};

use crate::flat::flat_profile;
use crate::location_name::Who;
use crate::model::{Model, ThreadModel};

/// The share of a thread's wall time (or of a critical path) above which the runtime's own
/// time is reported.
pub const RUNTIME_SHARE: f64 = 0.05;

/// Below this many seconds of the runtime's own time a thread is not reported, whatever the
/// share.
pub const RUNTIME_FLOOR_S: f64 = 0.001;

/// The first sight of a program's functions (`plx_symbols`, reading symbol tables) is a
/// start-up cost that dominates any short program: alone it is reported from this many
/// seconds on.
pub const SYMBOLS_FLOOR_S: f64 = 0.05;

/// The runtime region of first sights.
const SYMBOLS: &str = "plx_symbols";

/// What to do about the runtime's own time, with the option names of `plx run` and the filter
/// file; `hottest` is the function called most, with its calls.
pub fn remedy(hottest: Option<(&str, u64)>) -> String {
    let exclude = match hottest {
        Some((name, calls)) => format!(
            "exclude the tiny function called most ({name}, {calls} calls: `exclude {name}` in a filter file, plx run --filter FILE)"
        ),
        None => "exclude the tiny functions called most (`exclude NAME` in a filter file, plx run --filter FILE)".to_string(),
    };
    format!(
        "remedy: a larger trace buffer (plx run --buffer SIZE or PLX_BUFFER), {exclude}, or throttle them (`throttle CALLS USEC` in the filter file)"
    )
}

/// One thread's runtime time and its parts, and the function it called most.
struct ThreadCost {
    runtime_s: f64,
    parts: Vec<(String, f64)>,
    hottest: Option<(String, u64)>,
}

fn thread_cost(model: &Model, t: &ThreadModel) -> ThreadCost {
    let mut c = ThreadCost {
        runtime_s: 0.0,
        parts: Vec::new(),
        hottest: None,
    };
    for r in flat_profile(&t.tree) {
        let info = model.regions.get(r.region);
        match info.kind {
            // exclusive: the runtime's regions may nest in one another
            RegionKind::Runtime if r.exclusive > 0.0 => {
                c.runtime_s += r.exclusive;
                c.parts.push((info.name.clone(), r.exclusive));
            }
            RegionKind::Function if c.hottest.as_ref().is_none_or(|h| r.calls > h.1) => {
                c.hottest = Some((info.name.clone(), r.calls));
            }
            _ => {}
        }
    }
    c
}

/// One warning per process whose threads spent more than [`RUNTIME_SHARE`] of their wall time
/// in the runtime's own work (at least [`RUNTIME_FLOOR_S`] of it besides `plx_symbols`, or
/// [`SYMBOLS_FLOOR_S`] of `plx_symbols`): the worst thread, how many others, and the remedy.
pub fn runtime_cost_warnings(model: &Model) -> Vec<Warning> {
    let mut out = Vec::new();
    for p in model.processes.iter().filter(|p| p.measured) {
        let mut worst: Option<(f64, &ThreadModel, ThreadCost)> = None;
        let mut over = 0usize;
        for t in &p.threads {
            let Some(wall) = t.wall_s.filter(|w| *w > 0.0) else {
                continue;
            };
            let c = thread_cost(model, t);
            let symbols: f64 = c.parts.iter().filter(|p| p.0 == SYMBOLS).map(|p| p.1).sum();
            let enough = c.runtime_s - symbols >= RUNTIME_FLOOR_S || symbols >= SYMBOLS_FLOOR_S;
            if !enough || c.runtime_s <= RUNTIME_SHARE * wall {
                continue;
            }
            over += 1;
            let share = c.runtime_s / wall;
            if worst.as_ref().is_none_or(|w| share > w.0) {
                worst = Some((share, t, c));
            }
        }
        let Some((share, t, c)) = worst else {
            continue;
        };
        let parts: Vec<String> = c
            .parts
            .iter()
            .map(|(n, s)| format!("{n} {s:.6} s"))
            .collect();
        let others = match over - 1 {
            0 => String::new(),
            1 => " (and above 5 % in 1 other thread)".to_string(),
            n => format!(" (and above 5 % in {n} other threads)"),
        };
        out.push(Warning::file(
            &p.path,
            WarningKind::RuntimeCost,
            format!(
                "the runtime's own work ({}) is {:.1} % of {}'s time{others}: it lies inside the measured times of the functions it interrupted; {}",
                parts.join(", "),
                share * 100.0,
                Who::process(model, p).short(Some(t.thread)),
                remedy(c.hottest.as_ref().map(|(n, k)| (n.as_str(), *k)))
            ),
        ));
    }
    out
}

/// The warning for a critical path of `length_ns` on which the runtime's regions (`name`,
/// time ns) lie for more than [`RUNTIME_SHARE`] of it; `None` below.
pub fn critical_path_warning(length_ns: i64, runtime: &[(String, i64)]) -> Option<String> {
    let total: i64 = runtime.iter().map(|r| r.1).sum();
    if length_ns <= 0 || (total as f64) <= RUNTIME_SHARE * length_ns as f64 {
        return None;
    }
    let parts: Vec<String> = runtime
        .iter()
        .filter(|r| r.1 > 0)
        .map(|(n, t)| format!("{n} {:.6} s", *t as f64 * 1e-9))
        .collect();
    Some(format!(
        "the runtime's own work ({}) is {:.1} % of the critical path: the path runs through the measurement itself; {}",
        parts.join(", "),
        total as f64 * 100.0 / length_ns as f64,
        remedy(None)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_path_share() {
        let rt = vec![("plx_flush".to_string(), 540_000_000)];
        let w = critical_path_warning(1_000_000_000, &rt).unwrap();
        assert!(
            w.starts_with(
                "the runtime's own work (plx_flush 0.540000 s) is 54.0 % of the critical path: "
            ),
            "{w}"
        );
        assert!(w.contains("plx run --buffer SIZE or PLX_BUFFER"), "{w}");
        assert_eq!(
            critical_path_warning(1_000_000_000, &[("plx_flush".into(), 50_000_000)]),
            None
        );
        assert_eq!(critical_path_warning(0, &rt), None);
    }
}
