//! `plx export --format parquet`'s tables from one merge of the trace, and the matched intervals from another.

use plx_export::columns::{
    sync_kind_names, trace_columns, Col, Column, ColumnSpec, Names, TraceColumns, Wanted,
    EVENT_COLUMNS, KINDS, MESSAGE_COLUMNS,
};
use plx_export::{ExportInput, ExportOptions};

use std::path::Path;

use crate::arrow::{Array, Batch};
use crate::Tables;

use super::{col, opt_col, warnings};

/// The merged trace's columns that `wanted` names, with the warnings and the time origin.
fn merged(dir: &Path, wanted: Wanted) -> Result<(ExportInput, TraceColumns, Tables), String> {
    let input =
        ExportInput::open(dir, ExportOptions::default(), false, true).map_err(|e| e.to_string())?;
    let t = trace_columns(&input, wanted).map_err(|e| e.to_string())?;
    let out = Tables {
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
    Ok((input, t, out))
}

/// A table's columns as a batch, named and typed as `spec` declares them.
fn batch<'a>(
    spec: &[ColumnSpec],
    columns: Vec<Column>,
    dictionary: &dyn Fn(Names) -> &'a [&'a str],
) -> Batch {
    let mut b = Batch::default();
    for (&(name, ..), c) in spec.iter().zip(columns) {
        let a = match c {
            Column::Bool(c) => Array::boolean(c),
            Column::I32(c) => Array::fixed(c),
            Column::I64(c) => Array::fixed(c),
            Column::F64(c) => Array::fixed(c),
            Column::Names(c, n) => Array::dictionary(c, dictionary(n)),
            Column::NamesOf(i, n) => Array::names_of(b.column_mut(i), dictionary(n)),
        };
        b.add(name, a);
    }
    b
}

/// `plx export --format parquet`'s tables (events, messages, locations, regions, comms), from
/// one merge.
pub fn trace(dir: &Path) -> Result<Tables, String> {
    let wanted = Wanted {
        events: true,
        intervals: false,
    };
    let (input, t, mut out) = merged(dir, wanted)?;
    let names: Vec<&str> = t.regions.iter().map(|r| r.name.as_str()).collect();
    let (kinds, syncs) = (KINDS.to_vec(), sync_kind_names());
    let user_events: Vec<&str> = t.user_events.iter().map(String::as_str).collect();
    let dictionary = |n: Names| -> &[&str] {
        match n {
            Names::Kinds => &kinds,
            Names::Regions => &names,
            Names::UserEvents => &user_events,
            Names::SyncKinds => &syncs,
        }
    };
    let events = batch(EVENT_COLUMNS, t.events.into_columns(), &dictionary);
    let messages = batch(MESSAGE_COLUMNS, t.messages.into_columns(), &dictionary);
    out.batches.push(("events", events));
    out.batches.push(("messages", messages));

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

/// The matched intervals (a row per call), from one merge.
pub fn intervals(dir: &Path) -> Result<Tables, String> {
    let wanted = Wanted {
        events: false,
        intervals: true,
    };
    let (_input, t, mut out) = merged(dir, wanted)?;
    let names: Vec<&str> = t.regions.iter().map(|r| r.name.as_str()).collect();
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

    Ok(out)
}
