//! `plx report --sync`, `plx waits --causes` and `plx report --counters` as tables.

use plx_analysis::counters::report_rows;
use plx_analysis::{BuildOptions, GroupBy, MergeOptions, Model, WaitAnalysis, Window};
use plx_export::columns::Col;
use plx_format::Experiment;

use std::path::Path;

use crate::arrow::{Array, Batch};
use crate::Tables;

use super::{col, opt_col, warnings};

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
        Array::strings(rows.iter().map(|r| proc_of(r).map(|p| p.pid_text()))),
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
        // null where the hold is not known (a Java monitor's)
        Array::fixed(opt_col(
            rows.iter()
                .map(|r| (!r.kind.hold_unknown()).then_some(r.stat.hold_s)),
        )),
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
        return Err(model.no_event_trace().to_string());
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
    // the causes as plx waits --causes gives them, the waits with no partner (a sleep, an I/O
    // wait) last: kind `none`, no cause location or call path (null)
    let causes: Vec<_> = a.cause_table().collect();
    let mut c = Batch::default();
    c.add(
        "pattern",
        Array::texts(causes.iter().map(|r| r.pattern.name())),
    )
    .add(
        "waiting_location",
        Array::texts(causes.iter().map(|r| label(r.waiting))),
    )
    .add(
        "cause_location",
        Array::strings(causes.iter().map(|r| r.cause.map(|(l, _)| label(l)))),
    )
    .add(
        "cause_callpath",
        Array::strings(
            causes
                .iter()
                .map(|r| r.cause.map(|(_, cp)| a.callpath_name(cp))),
        ),
    )
    .add(
        "delay_s",
        Array::values(causes.iter().map(|r| r.delay_ns / 1e9).collect()),
    )
    .add("kind", Array::texts(causes.iter().map(|r| r.kind)));
    Ok(Tables {
        batches: vec![("waits", b), ("wait_causes", c)],
        warnings: warnings(model.report_warnings().into_iter().chain(&a.warnings)),
        numbers: Vec::new(),
    })
}

/// The rows of `plx report --counters` (one per process, thread and set of its `(thread)`
/// totals, then per counted function and set), long form: a row per counted event of the
/// row's set (events the kernel refused left out). A `(thread)` row's value is the total, a
/// function's the inclusive count, with its exclusive count and estimate.
pub fn counters(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let mut c = CounterCols::default();
    for r in report_rows(&model, false) {
        for (i, event) in r.set.events.iter().enumerate() {
            if r.set.refused[i] != 0 {
                continue;
            }
            let p = r.process;
            c.process.push(p.pid_text());
            c.pid.push(p.pid as i64);
            c.rank.opt(p.rank().map(|r| r as i32));
            c.thread.push(r.thread as i32);
            c.thread_name.push(r.thread_name);
            c.function.push(r.function.clone());
            c.epoch.opt(r.call.as_ref().map(|_| r.set.epoch as i32));
            c.set.push(r.set.set as i32);
            c.calls.opt(r.call.as_ref().map(|k| k.calls as i64));
            c.context_calls
                .opt(r.call.as_ref().map(|k| k.context_calls as i64));
            c.estimated
                .push(u8::from(r.call.is_some() && r.set.multiplexed()));
            c.event.push(event.as_str());
            match (&r.call, r.totals) {
                (Some(k), _) => {
                    c.value.push(k.inclusive[i] as i64);
                    c.exclusive.push(k.exclusive[i] as i64);
                    c.estimate.push(k.estimate(i));
                }
                (None, t) => {
                    c.value.push(t.map_or(0, |t| t[i]) as i64);
                    c.exclusive.opt(None);
                    c.estimate.opt(None);
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
        .add("function", Array::texts(&c.function))
        .add("epoch", Array::fixed(c.epoch))
        .add("set", Array::values(c.set))
        .add("calls", Array::fixed(c.calls))
        .add("context_calls", Array::fixed(c.context_calls))
        .add("estimated", Array::boolean(col(c.estimated)))
        .add("event", Array::texts(&c.event))
        .add("value", Array::values(c.value))
        .add("exclusive", Array::fixed(c.exclusive))
        .add("estimate", Array::fixed(c.estimate));
    Ok(Tables {
        batches: vec![("counters", b)],
        warnings: warnings(model.report_warnings()),
        numbers: Vec::new(),
    })
}

#[derive(Default)]
struct CounterCols<'a> {
    process: Vec<String>,
    pid: Vec<i64>,
    rank: Col<i32>,
    thread: Vec<i32>,
    thread_name: Vec<&'a str>,
    function: Vec<String>,
    epoch: Col<i32>,
    set: Vec<i32>,
    calls: Col<i64>,
    context_calls: Col<i64>,
    estimated: Vec<u8>,
    event: Vec<&'a str>,
    value: Vec<i64>,
    exclusive: Col<i64>,
    estimate: Col<f64>,
}

/// `plx info`'s processes: a row per process image with what identifies the run (program,
/// arguments, host, start, MPI world, the runtime's version) and its thread count.
pub fn processes(dir: &Path) -> Result<Tables, String> {
    let model = Model::open(dir, BuildOptions::default()).map_err(|e| e.to_string())?;
    let ps = &model.processes;
    let mut b = Batch::default();
    b.add("process", Array::texts(ps.iter().map(|p| p.pid_text())))
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
