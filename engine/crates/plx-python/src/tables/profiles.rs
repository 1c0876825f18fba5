//! `plx report --callpath`'s rows (with each function's file and line), every thread's and the total's, with one table of their callpaths.

use std::collections::HashMap;

use plx_analysis::{callpath_rows, BuildOptions, GroupBy, Model};
use plx_export::columns::Col;

use std::path::Path;

use crate::arrow::{Array, Batch};
use crate::Tables;

use super::{col, warnings};

/// `plx report --callpath`: a row per thread and callpath, then the total's rows (process and
/// thread null), in the report's order; each row's callpath an id into the `callpaths` table
/// (parent id, function, depth), shared by every thread.
pub fn profiles(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let (tables, total) = model.tables(GroupBy::Thread);
    let names = model.regions.all();
    // distinct callpaths over every table: (parent id, region) -> id
    let mut ids: HashMap<(i32, u32), i32> = HashMap::new();
    let (mut parent, mut region, mut depth) = (Vec::new(), Vec::new(), Vec::new());
    let mut cols = ProfileCols::default();
    let samples = total.tree.has_samples();
    for (ti, t) in tables.iter().chain([&total]).enumerate() {
        let nodes = t.tree.nodes();
        let mut gid = vec![-1i32; nodes.len()];
        // a parent's node id is smaller than its children's
        for (i, n) in nodes.iter().enumerate() {
            let p = n.parent.map_or(-1, |p| gid[p as usize]);
            let next = region.len() as i32;
            let id = *ids.entry((p, n.region)).or_insert(next);
            if id == next {
                parent.push(p);
                region.push(n.region as i32);
                depth.push(if p < 0 { 0 } else { depth[p as usize] + 1 });
            }
            gid[i] = id;
        }
        let p = t.process.map(|pi| &model.processes[pi]);
        let tname = match (p, t.thread) {
            (Some(p), Some(th)) => p
                .threads
                .iter()
                .find(|x| x.thread == th)
                .map_or("", |x| x.name.as_str()),
            _ => "",
        };
        for r in callpath_rows(&t.tree) {
            let id = gid[r.node as usize];
            cols.node.opt(
                t.process
                    .map(|pi| model.processes[pi].rank().map_or(pi as i32, |r| r as i32)),
            );
            cols.process.push(p.map(|p| p.pid_text()));
            cols.pid.opt(p.map(|p| p.pid as i64));
            cols.thread.opt(t.thread.map(|t| t as i32));
            cols.thread_name.push(tname.to_string());
            cols.host.push(p.map_or(String::new(), |p| p.host.clone()));
            cols.callpath.push(id);
            cols.function.push(region[id as usize]);
            cols.depth.push(depth[id as usize]);
            cols.calls.push(r.calls as i64);
            cols.child_calls.push(r.child_calls as i64);
            cols.exclusive_s.push(r.exclusive);
            cols.inclusive_s.push(r.inclusive);
            cols.cpu_s.opt(r.cpu);
            cols.samples.push(r.samples as i64);
            cols.estimated.push(r.estimated as u8);
            cols.total.push((ti == tables.len()) as u8);
        }
    }
    let fnames: Vec<&str> = names.iter().map(|r| r.name.as_str()).collect();
    let files: Vec<&str> = names.iter().map(|r| r.file.as_str()).collect();
    let c = cols;
    let lines: Vec<i32> = c
        .function
        .iter()
        .map(|&r| names[r as usize].line as i32)
        .collect();
    let mut b = Batch::default();
    b.add("node", Array::fixed(c.node))
        .add(
            "process",
            Array::strings(c.process.iter().map(|s| s.as_deref())),
        )
        .add("pid", Array::fixed(c.pid))
        .add("thread", Array::fixed(c.thread))
        .add("thread_name", Array::texts(&c.thread_name))
        .add("host", Array::texts(&c.host))
        .add("callpath", Array::values(c.callpath))
        .add(
            "function",
            Array::dictionary(col(c.function.clone()), &fnames),
        )
        .add("depth", Array::values(c.depth))
        .add("file", Array::dictionary(col(c.function), &files))
        .add("line", Array::values(lines))
        .add("calls", Array::values(c.calls))
        .add("child_calls", Array::values(c.child_calls))
        .add("exclusive_s", Array::values(c.exclusive_s))
        .add("inclusive_s", Array::values(c.inclusive_s))
        .add("cpu_s", Array::fixed(c.cpu_s));
    if samples {
        b.add("samples", Array::values(c.samples))
            .add("estimated", Array::boolean(col(c.estimated)));
    }
    b.add("total", Array::boolean(col(c.total)));
    let mut p = Batch::default();
    p.add("parent", Array::values(parent))
        .add("function", Array::dictionary(col(region), &fnames))
        .add("depth", Array::values(depth));
    Ok(Tables {
        batches: vec![("profiles", b), ("callpaths", p)],
        warnings: warnings(model.report_warnings()),
        numbers: Vec::new(),
    })
}

#[derive(Default)]
struct ProfileCols {
    node: Col<i32>,
    process: Vec<Option<String>>,
    pid: Col<i64>,
    thread: Col<i32>,
    thread_name: Vec<String>,
    host: Vec<String>,
    callpath: Vec<i32>,
    function: Vec<i32>,
    depth: Vec<i32>,
    calls: Vec<i64>,
    child_calls: Vec<i64>,
    exclusive_s: Vec<f64>,
    inclusive_s: Vec<f64>,
    cpu_s: Col<f64>,
    samples: Vec<i64>,
    estimated: Vec<u8>,
    total: Vec<u8>,
}
