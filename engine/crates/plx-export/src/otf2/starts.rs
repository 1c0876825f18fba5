//! The persistent receives each MPI_Start and MPI_Startall started, found by a first pass over the merge (the trace holds a receive's post only in the call that completes it).

use std::collections::VecDeque;

use plx_analysis::{EventKind, GlobalMerge};

use super::events::posting_call;

/// Per location, the MPI_Start and MPI_Startall calls that started receives: (entry time,
/// receives started), in time order, each taken once as the export's stream enters it.
#[derive(Default)]
pub(super) struct Starts {
    per_location: Vec<VecDeque<(i64, u32)>>,
}

/// A call that posts receives: MPI_Irecv (one), MPI_Start and MPI_Startall (persistent ones).
fn posting(name: &str) -> Option<bool> {
    match name {
        "MPI_Irecv" => Some(false),
        "MPI_Start" | "MPI_Startall" => Some(true),
        _ => None,
    }
}

impl Starts {
    /// Does the export need the first pass (a region named MPI_Start or MPI_Startall)?
    pub fn needed(model: &plx_analysis::Model) -> bool {
        let regions = &model.regions;
        regions.all().iter().any(|r| matches!(r.name.as_str(), "MPI_Start" | "MPI_Startall"))
    }

    /// The pass: each receive's post (its `recv_posted`) is paired with its posting call as
    /// the export pairs it ([`posting_call`]); those of starts are counted.
    pub fn find(mut merge: GlobalMerge) -> Starts {
        let n = merge.locations().len();
        // per location: the posting calls not yet paired (entry, start?, receives)
        let mut calls: Vec<Vec<(i64, bool, u32)>> = vec![Vec::new(); n];
        let mut roles: Vec<Option<Option<bool>>> = Vec::new();
        while let Some(e) = merge.next_event() {
            let li = e.location as usize;
            match e.kind {
                EventKind::Enter { region } => {
                    let r = region as usize;
                    if roles.len() <= r {
                        roles.resize(r + 1, None);
                    }
                    let role = *roles[r].get_or_insert_with(|| posting(merge.regions().name(region)));
                    if let Some(start) = role {
                        calls[li].push((e.time_ns, start, 0));
                    }
                }
                EventKind::RecvPosted { before_ns } => {
                    let p = e.time_ns - before_ns as i64;
                    let q = &mut calls[li];
                    let Some(i) = posting_call(q, |c| c.0, p) else {
                        continue;
                    };
                    if q[i].1 {
                        q[i].2 += 1;
                    } else {
                        q.remove(i);
                    }
                }
                _ => {}
            }
        }
        let per_location = calls
            .into_iter()
            .map(|q| q.into_iter().filter(|c| c.1 && c.2 > 0).map(|c| (c.0, c.2)).collect())
            .collect();
        Starts { per_location }
    }

    /// The receives started by the start entered at `at_ns` on location `li`.
    pub fn take(&mut self, li: usize, at_ns: i64) -> u32 {
        let Some(q) = self.per_location.get_mut(li) else {
            return 0;
        };
        while q.front().is_some_and(|&(t, _)| t < at_ns) {
            q.pop_front();
        }
        match q.front() {
            Some(&(t, k)) if t == at_ns => {
                q.pop_front();
                k
            }
            _ => 0,
        }
    }
}
