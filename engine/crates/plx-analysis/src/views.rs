//! Aggregations of the model: one table per thread or per process, then the total over everything.

use crate::model::Model;
use crate::tree::CallTree;
use crate::userstats::{merge_stats, UserStat};
use crate::AnalysisError;
use plx_format::RegionKind;

/// How to group locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// One table per thread.
    Thread,
    /// One table per process image.
    Process,
}

/// One table's location and data.
#[derive(Debug, Clone)]
pub struct Table {
    /// Index into `Model::processes`, `None` for the total.
    pub process: Option<usize>,
    /// Thread index, `None` for a process or the total.
    pub thread: Option<u32>,
    /// Callpath tree of the location.
    pub tree: CallTree,
    /// CPU seconds (threads summed), if known.
    pub cpu_s: Option<f64>,
    /// Wall seconds (the longest thread), if known.
    pub wall_s: Option<f64>,
    /// User event statistics.
    pub user_events: Vec<UserStat>,
}

fn sum_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0.0) + v))
}

fn max_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.map_or(v, |a: f64| a.max(v))))
}

impl Model {
    /// The global region index of phase `name`, or an error if no process defines it.
    pub fn phase(&self, name: &str) -> Result<u32, AnalysisError> {
        self.regions
            .find(name, RegionKind::Phase)
            .ok_or_else(|| AnalysisError::NoSuchPhase(name.to_string()))
    }

    /// Tables grouped `by`, then the total; trees limited to `phase` subtrees if given.
    pub fn tables(&self, by: GroupBy, phase: Option<u32>) -> (Vec<Table>, Table) {
        let limit = |t: &CallTree| match phase {
            Some(p) => t.subtrees_of(p),
            None => t.clone(),
        };
        let mut tables = Vec::new();
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            match by {
                GroupBy::Thread => {
                    for t in &p.threads {
                        tables.push(Table {
                            process: Some(pi),
                            thread: Some(t.thread),
                            tree: limit(&t.tree),
                            cpu_s: t.cpu_s,
                            wall_s: t.wall_s,
                            user_events: t.user_events.clone(),
                        });
                    }
                }
                GroupBy::Process => {
                    let mut tree = CallTree::new();
                    for t in &p.threads {
                        tree.merge(&limit(&t.tree));
                    }
                    tables.push(Table {
                        process: Some(pi),
                        thread: None,
                        tree,
                        cpu_s: sum_opt(p.threads.iter().map(|t| t.cpu_s)),
                        wall_s: max_opt(p.threads.iter().map(|t| t.wall_s)),
                        user_events: merge_stats(
                            p.threads.iter().map(|t| t.user_events.as_slice()),
                        ),
                    });
                }
            }
        }
        let mut total = CallTree::new();
        for t in &tables {
            total.merge(&t.tree);
        }
        let total = Table {
            process: None,
            thread: None,
            tree: total,
            cpu_s: sum_opt(tables.iter().map(|t| t.cpu_s)),
            wall_s: max_opt(tables.iter().map(|t| t.wall_s)),
            user_events: merge_stats(tables.iter().map(|t| t.user_events.as_slice())),
        };
        (tables, total)
    }
}
