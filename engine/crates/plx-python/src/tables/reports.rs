//! `plx report --sync`, `plx waits --causes` and `plx report --counters`' thread totals as tables.

use plx_analysis::{BuildOptions, GroupBy, MergeOptions, Model, WaitAnalysis, Window};
use plx_export::columns::Col;
use plx_format::Experiment;

use std::path::Path;

use crate::arrow::{Array, Batch};
use crate::Tables;

use super::{opt_col, pid_text, warnings};

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

/// `plx info`'s processes: a row per process image with what identifies the run (program,
/// arguments, host, start, MPI world, the runtime's version) and its thread count.
pub fn processes(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let ps = &model.processes;
    let mut b = Batch::default();
    b.add("process", Array::texts(ps.iter().map(pid_text)))
        .add(
            "pid",
            Array::values(ps.iter().map(|p| p.pid as i64).collect()),
        )
        .add("host", Array::texts(ps.iter().map(|p| p.host.as_str())))
        .add(
            "rank",
            Array::fixed(opt_col(ps.iter().map(|p| p.rank().map(|r| r as i32)))),
        )
        .add(
            "world_size",
            Array::fixed(opt_col(
                ps.iter().map(|p| p.mpi.as_ref().map(|m| m.size as i32)),
            )),
        )
        .add(
            "executable",
            Array::texts(ps.iter().map(|p| p.executable.as_str())),
        )
        .add(
            "command_line",
            Array::texts(ps.iter().map(|p| p.command_line())),
        )
        .add(
            "arguments",
            Array::texts(
                ps.iter()
                    .map(|p| plx_analysis::shell_words(p.argv.get(1..).unwrap_or(&[]))),
            ),
        )
        .add(
            "start_realtime_ns",
            Array::fixed(opt_col(
                ps.iter().map(|p| p.start_realtime_ns.map(|n| n as i64)),
            )),
        )
        .add(
            "written_by",
            Array::strings(
                ps.iter()
                    .map(|p| (!p.version.is_empty()).then(|| format!("parallax {}", p.version))),
            ),
        )
        .add(
            "threads",
            Array::values(ps.iter().map(|p| p.threads.len() as i32).collect()),
        );
    Ok(Tables {
        batches: vec![("processes", b)],
        warnings: warnings(model.report_warnings()),
        numbers: Vec::new(),
    })
}
