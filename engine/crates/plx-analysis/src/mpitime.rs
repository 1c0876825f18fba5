//! Time in MPI from a callpath tree: outermost MPI routines' inclusive time, split by routine.

use plx_format::RegionKind;

use crate::regions::RegionTable;
use crate::tree::CallTree;

/// One MPI routine's share of a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutineTime {
    /// Global region of the routine.
    pub region: u32,
    /// Calls, all of them (also those inside another MPI routine).
    pub calls: u64,
    /// Inclusive seconds of its calls that are not inside another MPI routine.
    pub time: f64,
}

/// Time in MPI of one location (or a total).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MpiTime {
    /// Seconds in MPI: inclusive time of MPI routines not nested in another MPI routine.
    pub total: f64,
    /// Routines by time descending, then name; their times add up to `total`.
    pub routines: Vec<RoutineTime>,
}

impl MpiTime {
    /// Time in MPI of a tree.
    pub fn of(tree: &CallTree, regions: &RegionTable) -> MpiTime {
        let nodes = tree.nodes();
        let is_mpi: Vec<bool> = nodes
            .iter()
            .map(|n| regions.get(n.region).kind == RegionKind::Mpi)
            .collect();
        // Parents precede children: one pass finds the nodes with an MPI ancestor.
        let mut inside = vec![false; nodes.len()];
        let mut out = MpiTime::default();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                inside[i] = inside[p as usize] || is_mpi[p as usize];
            }
            if !is_mpi[i] {
                continue;
            }
            let time = if inside[i] { 0.0 } else { n.inclusive };
            out.total += time;
            match out.routines.iter_mut().find(|r| r.region == n.region) {
                Some(r) => {
                    r.calls += n.calls;
                    r.time += time;
                }
                None => out.routines.push(RoutineTime {
                    region: n.region,
                    calls: n.calls,
                    time,
                }),
            }
        }
        out.sort(regions);
        out
    }

    /// Adds another location's times (routines by global region).
    pub fn merge(&mut self, o: &MpiTime, regions: &RegionTable) {
        self.total += o.total;
        for r in &o.routines {
            match self.routines.iter_mut().find(|x| x.region == r.region) {
                Some(x) => {
                    x.calls += r.calls;
                    x.time += r.time;
                }
                None => self.routines.push(r.clone()),
            }
        }
        self.sort(regions);
    }

    fn sort(&mut self, regions: &RegionTable) {
        self.routines.sort_by(|a, b| {
            b.time
                .partial_cmp(&a.time)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| regions.name(a.region).cmp(regions.name(b.region)))
        });
    }

    /// Is there any MPI routine?
    pub fn is_empty(&self) -> bool {
        self.routines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regions::RegionInfo;

    fn region(t: &mut RegionTable, name: &str, kind: RegionKind) -> u32 {
        t.intern(RegionInfo {
            name: name.into(),
            kind,
            file: String::new(),
            line: 0,
        })
    }

    #[test]
    fn nested_mpi_time_is_counted_once() {
        let mut regions = RegionTable::default();
        let main = region(&mut regions, "main", RegionKind::Function);
        let send = region(&mut regions, "MPI_Send", RegionKind::Mpi);
        let sendrecv = region(&mut regions, "MPI_Sendrecv", RegionKind::Mpi);
        let work = region(&mut regions, "work", RegionKind::Function);
        // main(10) -> MPI_Sendrecv(4) -> MPI_Send(1); main -> work(3) -> MPI_Send(2)
        let mut t = CallTree::new();
        let m = t.child(None, main);
        t.add(m, 1, 2, 10.0, 3.0);
        let sr = t.child(Some(m), sendrecv);
        t.add(sr, 2, 2, 4.0, 3.0);
        let s1 = t.child(Some(sr), send);
        t.add(s1, 2, 0, 1.0, 1.0);
        let w = t.child(Some(m), work);
        t.add(w, 1, 1, 3.0, 1.0);
        let s2 = t.child(Some(w), send);
        t.add(s2, 5, 0, 2.0, 2.0);
        let mt = MpiTime::of(&t, &regions);
        assert_eq!(mt.total, 6.0);
        assert_eq!(
            mt.routines,
            vec![
                RoutineTime {
                    region: sendrecv,
                    calls: 2,
                    time: 4.0
                },
                RoutineTime {
                    region: send,
                    calls: 7,
                    time: 2.0
                }
            ]
        );
        let mut sum = MpiTime::default();
        sum.merge(&mt, &regions);
        sum.merge(&mt, &regions);
        assert_eq!(sum.total, 12.0);
        assert_eq!(sum.routines[1].calls, 14);
    }
}
