//! The tables of an experiment as record batches: what each `_native` function computes, with the engine's own analyses (the commands' numbers), nothing recomputed here.

use std::collections::HashMap;
use std::path::Path;

use plx_analysis::{
    callpath_rows, BuildOptions, GroupBy, MergeOptions, Model, WaitAnalysis, Window,
};
use plx_export::columns::{sync_kind_names, trace_columns, Col, KINDS};
use plx_export::{ExportInput, ExportOptions};
use plx_format::Experiment;

use crate::arrow::{Array, Batch};
use crate::Tables;

fn warnings<'a>(w: impl IntoIterator<Item = &'a plx_format::Warning>) -> Vec<String> {
    w.into_iter().map(|w| w.to_string()).collect()
}

fn col<T: Copy + Default>(values: Vec<T>) -> Col<T> {
    Col {
        values,
        valid: None,
        nulls: 0,
    }
}

fn opt_col<T: Copy + Default>(values: impl IntoIterator<Item = Option<T>>) -> Col<T> {
    let mut c = Col::default();
    for v in values {
        c.opt(v);
    }
    c
}

/// `plx export --format parquet`'s tables, and the matched intervals, from one merge.
pub fn trace(dir: &Path) -> Result<Tables, String> {
    let input =
        ExportInput::open(dir, ExportOptions::default(), false, true).map_err(|e| e.to_string())?;
    let t = trace_columns(&input).map_err(|e| e.to_string())?;
    let mut out = Tables {
        warnings: warnings(
            input
                .model
                .report_warnings()
                .into_iter()
                .chain(&t.summary.warnings),
        ),
        numbers: vec![("origin_ns", t.origin_ns)],
        ..Tables::default()
    };
    let names: Vec<&str> = t.regions.iter().map(|r| r.name.as_str()).collect();
    let e = t.events;
    let mut b = Batch::default();
    b.add("time_ns", Array::fixed(e.time_ns))
        .add("location", Array::fixed(e.location))
        .add("process", Array::fixed(e.process))
        .add("rank", Array::fixed(e.rank))
        .add("thread", Array::fixed(e.thread))
        .add("kind", Array::dictionary(e.kind, &KINDS))
        .add("region", Array::fixed(e.region.clone()))
        .add("region_name", Array::dictionary(e.region, &names))
        .add("peer", Array::fixed(e.peer))
        .add("tag", Array::fixed(e.tag))
        .add("bytes", Array::fixed(e.bytes))
        .add("bytes_recv", Array::fixed(e.bytes_recv))
        .add("comm", Array::fixed(e.comm))
        .add("root", Array::fixed(e.root))
        .add("message", Array::fixed(e.message))
        .add(
            "user_event",
            Array::dictionary(e.user_event, &t.user_events),
        )
        .add("value", Array::fixed(e.value))
        .add("object", Array::fixed(e.object))
        .add(
            "sync_kind",
            Array::dictionary(e.sync_kind, &sync_kind_names()),
        )
        .add("wait_ns", Array::fixed(e.wait_ns))
        .add("truncated", Array::boolean(e.truncated));
    out.batches.push(("events", b));

    // the intervals: callpaths named once each (a dictionary), a parent's text before its child's
    let mut texts: Vec<String> = Vec::with_capacity(t.callpaths.len());
    for p in &t.callpaths {
        let name = names[p.region as usize];
        let text = match p.parent {
            -1 => name.to_string(),
            i => format!("{} => {name}", texts[i as usize]),
        };
        texts.push(text);
    }
    let iv = t.intervals;
    let secs = |c: &Col<i64>| col(c.values.iter().map(|&n| n as f64 / 1e9).collect::<Vec<_>>());
    let (start_s, end_s) = (secs(&iv.start_ns), secs(&iv.end_ns));
    let duration_s = col(iv
        .start_ns
        .values
        .iter()
        .zip(&iv.end_ns.values)
        .map(|(s, e)| (e - s) as f64 / 1e9)
        .collect::<Vec<_>>());
    let mut b = Batch::default();
    b.add("location", Array::fixed(iv.location))
        .add("process", Array::fixed(iv.process))
        .add("rank", Array::fixed(iv.rank))
        .add("thread", Array::fixed(iv.thread))
        .add("region", Array::dictionary(iv.region.clone(), &names))
        .add("region_id", Array::fixed(iv.region))
        .add("callpath", Array::dictionary(iv.callpath, &texts))
        .add("depth", Array::fixed(iv.depth))
        .add("start_ns", Array::fixed(iv.start_ns))
        .add("end_ns", Array::fixed(iv.end_ns))
        .add("start_s", Array::fixed(start_s))
        .add("end_s", Array::fixed(end_s))
        .add("duration_s", Array::fixed(duration_s))
        .add("truncated", Array::boolean(iv.truncated));
    out.batches.push(("intervals", b));

    let m = t.messages;
    let mut b = Batch::default();
    b.add("message", Array::fixed(m.message))
        .add("send_ns", Array::fixed(m.send_ns))
        .add("recv_ns", Array::fixed(m.recv_ns))
        .add("sender_location", Array::fixed(m.sender_location))
        .add("sender_process", Array::fixed(m.sender_process))
        .add("sender_rank", Array::fixed(m.sender_rank))
        .add("sender_thread", Array::fixed(m.sender_thread))
        .add("receiver_location", Array::fixed(m.receiver_location))
        .add("receiver_process", Array::fixed(m.receiver_process))
        .add("receiver_rank", Array::fixed(m.receiver_rank))
        .add("receiver_thread", Array::fixed(m.receiver_thread))
        .add("bytes", Array::fixed(m.bytes))
        .add("tag", Array::fixed(m.tag))
        .add("comm", Array::fixed(m.comm));
    out.batches.push(("messages", b));

    let model = &input.model;
    let locs = &t.locations;
    let mut b = Batch::default();
    b.add("location", Array::values((0..locs.len() as i32).collect()))
        .add("label", Array::texts(locs.iter().map(|l| l.label())))
        .add(
            "process",
            Array::values(locs.iter().map(|l| l.process as i32).collect()),
        )
        .add(
            "rank",
            Array::fixed(opt_col(locs.iter().map(|l| l.rank.map(|r| r as i32)))),
        )
        .add("host", Array::texts(locs.iter().map(|l| l.host.as_str())))
        .add(
            "pid",
            Array::values(locs.iter().map(|l| l.pid as i64).collect()),
        )
        .add(
            "image",
            Array::values(locs.iter().map(|l| l.image as i32).collect()),
        )
        .add(
            "executable",
            Array::texts(
                locs.iter()
                    .map(|l| model.processes[l.process].executable.as_str()),
            ),
        )
        .add(
            "thread",
            Array::values(locs.iter().map(|l| l.thread as i32).collect()),
        )
        .add(
            "thread_name",
            Array::texts(locs.iter().map(|l| l.name.as_str())),
        )
        .add(
            "start_realtime_ns",
            Array::fixed(opt_col(locs.iter().map(|l| {
                model.processes[l.process]
                    .start_realtime_ns
                    .map(|n| n as i64)
            }))),
        );
    out.batches.push(("locations", b));

    let regs = &t.regions;
    let mut b = Batch::default();
    b.add("region", Array::values((0..regs.len() as i32).collect()))
        .add("name", Array::texts(names.iter()))
        .add("kind", Array::texts(regs.iter().map(|r| r.kind.as_str())))
        .add("file", Array::texts(regs.iter().map(|r| r.file.as_str())))
        .add(
            "line",
            Array::values(regs.iter().map(|r| r.line as i32).collect()),
        );
    out.batches.push(("regions", b));

    let comms = model.comms.all();
    let members: Vec<Vec<u32>> = comms.iter().map(|c| c.members()).collect();
    let mut b = Batch::default();
    b.add("comm", Array::values((0..comms.len() as i32).collect()))
        .add("name", Array::texts(comms.iter().map(|c| c.describe())))
        .add(
            "predefined",
            Array::fixed(opt_col(
                comms.iter().map(|c| c.predefined.map(|p| p as i32)),
            )),
        )
        .add(
            "size",
            Array::values(members.iter().map(|m| m.len() as i32).collect()),
        )
        .add(
            "ranks",
            Array::texts(members.iter().map(|m| {
                m.iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })),
        )
        .add(
            "ordinal",
            Array::values(comms.iter().map(|c| c.ordinal as i32).collect()),
        );
    out.batches.push(("comms", b));
    Ok(out)
}

/// `1234`, or `1234.2` for a later exec image (plx report's process column).
fn pid_text(p: &plx_analysis::ProcessModel) -> String {
    if p.image == 0 {
        p.pid.to_string()
    } else {
        format!("{}.{}", p.pid, p.image)
    }
}

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
            cols.process.push(p.map(pid_text));
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
    let c = cols;
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
        .add("function", Array::dictionary(col(c.function), &fnames))
        .add("depth", Array::values(c.depth))
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

/// `plx report --sync`: a row per thread and object (each thread's sorted by wait time), then
/// a row per object in total (process and thread null).
pub fn sync(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let (locations, totals) = model.sync_rows(GroupBy::Thread);
    let rows: Vec<_> = locations.iter().chain(&totals).collect();
    let proc_of = |r: &&plx_analysis::SyncRow| r.process.map(|pi| &model.processes[pi]);
    let tname = |r: &&plx_analysis::SyncRow| {
        proc_of(r)
            .zip(r.thread)
            .and_then(|(p, th)| p.threads.iter().find(|x| x.thread == th))
            .map_or(String::new(), |x| x.name.clone())
    };
    let mut b = Batch::default();
    b.add(
        "process",
        Array::strings(rows.iter().map(|r| proc_of(r).map(pid_text))),
    )
    .add(
        "pid",
        Array::fixed(opt_col(
            rows.iter().map(|r| proc_of(r).map(|p| p.pid as i64)),
        )),
    )
    .add(
        "rank",
        Array::fixed(opt_col(
            rows.iter()
                .map(|r| proc_of(r).and_then(|p| p.rank()).map(|r| r as i32)),
        )),
    )
    .add(
        "thread",
        Array::fixed(opt_col(rows.iter().map(|r| r.thread.map(|t| t as i32)))),
    )
    .add(
        "object",
        Array::texts(rows.iter().map(|r| r.object.as_str())),
    )
    .add("kind", Array::texts(rows.iter().map(|r| r.kind.as_str())))
    .add(
        "acquisitions",
        Array::values(rows.iter().map(|r| r.stat.acquisitions as i64).collect()),
    )
    .add(
        "contended",
        Array::values(rows.iter().map(|r| r.stat.contended as i64).collect()),
    )
    .add(
        "wait_s",
        Array::values(rows.iter().map(|r| r.stat.wait_s).collect()),
    )
    .add(
        "hold_s",
        Array::values(rows.iter().map(|r| r.stat.hold_s).collect()),
    )
    .add(
        "releases",
        Array::values(rows.iter().map(|r| r.stat.releases as i64).collect()),
    )
    .add("site", Array::texts(rows.iter().map(|r| r.site.as_str())))
    .add(
        "id",
        Array::fixed(opt_col(rows.iter().map(|r| r.id.map(|i| i as i32)))),
    )
    .add("thread_name", Array::texts(rows.iter().map(tname)))
    .add(
        "host",
        Array::texts(
            rows.iter()
                .map(|r| proc_of(r).map_or(String::new(), |p| p.host.clone())),
        ),
    );
    Ok(Tables {
        batches: vec![("sync", b)],
        warnings: warnings(model.report_warnings()),
        numbers: Vec::new(),
    })
}

/// `plx waits --causes`: the wait rows and the causes, from one replay.
pub fn waits(dir: &Path) -> Result<Tables, String> {
    let exp = Experiment::open(dir).map_err(|e| e.to_string())?;
    let model = Model::build(
        &exp,
        BuildOptions {
            rebuild_from_trace: false,
            resolve_sources: true,
        },
    );
    if !model.processes.iter().any(|p| p.has_trace()) {
        return Err(plx_analysis::AnalysisError::NoEventTrace(dir.to_path_buf()).to_string());
    }
    let a = WaitAnalysis::compute(
        &model,
        &exp,
        Window::ALL,
        None,
        true,
        MergeOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let label = |l: u32| a.locations[l as usize].label();
    let mut b = Batch::default();
    b.add(
        "pattern",
        Array::texts(a.rows.iter().map(|r| r.pattern.name())),
    )
    .add(
        "location",
        Array::texts(a.rows.iter().map(|r| label(r.location))),
    )
    .add(
        "callpath",
        Array::texts(a.rows.iter().map(|r| a.callpath_name(r.callpath))),
    )
    .add(
        "wait_s",
        Array::values(a.rows.iter().map(|r| r.wait_ns as f64 / 1e9).collect()),
    )
    .add(
        "count",
        Array::values(a.rows.iter().map(|r| r.count as i64).collect()),
    );
    let mut c = Batch::default();
    c.add(
        "pattern",
        Array::texts(a.causes.iter().map(|r| r.pattern.name())),
    )
    .add(
        "waiting_location",
        Array::texts(a.causes.iter().map(|r| label(r.waiting))),
    )
    .add(
        "cause_location",
        Array::texts(a.causes.iter().map(|r| label(r.cause))),
    )
    .add(
        "cause_callpath",
        Array::texts(a.causes.iter().map(|r| a.callpath_name(r.cause_callpath))),
    )
    .add(
        "delay_s",
        Array::values(a.causes.iter().map(|r| r.delay_ns / 1e9).collect()),
    )
    .add(
        "kind",
        Array::texts(a.causes.iter().map(|r| r.kind.as_str())),
    );
    Ok(Tables {
        batches: vec![("waits", b), ("wait_causes", c)],
        warnings: warnings(model.report_warnings().into_iter().chain(&a.warnings)),
        numbers: Vec::new(),
    })
}

/// The whole-thread counter totals of `plx report --counters` (its `(thread)` rows), one row
/// per thread, event set and counted event (events the kernel refused left out).
pub fn counters(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let mut c = CounterCols::default();
    for p in &model.processes {
        for tc in &p.counters.threads {
            let name = p
                .threads
                .iter()
                .find(|t| t.thread == tc.thread)
                .map_or("", |t| t.name.as_str());
            for (s, values) in &tc.totals {
                let Some(set) = p.counters.sets.get(s) else {
                    continue;
                };
                for (i, event) in set.events.iter().enumerate() {
                    if set.refused[i] != 0 {
                        continue;
                    }
                    c.process.push(pid_text(p));
                    c.pid.push(p.pid as i64);
                    c.rank.opt(p.rank().map(|r| r as i32));
                    c.thread.push(tc.thread as i32);
                    c.thread_name.push(name.to_string());
                    c.set.push(set.set as i32);
                    c.event.push(event.clone());
                    c.value.push(values[i] as i64);
                }
            }
        }
    }
    let mut b = Batch::default();
    b.add("process", Array::texts(&c.process))
        .add("pid", Array::values(c.pid))
        .add("rank", Array::fixed(c.rank))
        .add("thread", Array::values(c.thread))
        .add("thread_name", Array::texts(&c.thread_name))
        .add("set", Array::values(c.set))
        .add("event", Array::texts(&c.event))
        .add("value", Array::values(c.value));
    Ok(Tables {
        batches: vec![("counters", b)],
        warnings: warnings(model.report_warnings()),
        numbers: Vec::new(),
    })
}

#[derive(Default)]
struct CounterCols {
    process: Vec<String>,
    pid: Vec<i64>,
    rank: Col<i32>,
    thread: Vec<i32>,
    thread_name: Vec<String>,
    set: Vec<i32>,
    event: Vec<String>,
    value: Vec<i64>,
}
