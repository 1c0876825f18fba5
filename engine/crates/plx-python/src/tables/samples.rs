//! The call-stack samples, a row each (`plx run --sample`): its time where the runtime stamped it (with a trace), its location, callpath and innermost function with file and line.

use plx_export::samples::sample_rows;
use plx_export::{ExportInput, ExportOptions};

use std::path::Path;

use crate::arrow::{Array, Batch};
use crate::Tables;

use super::{col, opt_col, warnings};

/// A row per sample, as `sample_times.parquet`'s rows, or `samples.parquet`'s callpaths'
/// samples without a time: `time_ns` (since the merge's origin, as the events'; null when not stamped),
/// location, process, rank, thread, callpath, function, file, line, estimated.
pub fn samples(dir: &Path) -> Result<Tables, String> {
    let input =
        ExportInput::open(dir, ExportOptions::default(), false, true).map_err(|e| e.to_string())?;
    let model = &input.model;
    // a trace's merge numbers the locations (as the Parquet export's); without a trace, each
    // measured thread in the model's order, and no origin
    let merge = input.merge().ok();
    let locs: Vec<(usize, u32, Option<u32>)> = match &merge {
        Some(m) => m
            .locations()
            .iter()
            .map(|l| (l.process, l.thread, l.rank))
            .collect(),
        None => model
            .processes
            .iter()
            .enumerate()
            .flat_map(|(pi, p)| p.threads.iter().map(move |t| (pi, t.thread, p.rank())))
            .collect(),
    };
    let origin = merge.as_ref().map_or(0, |m| m.origin_ns());
    let pairs: Vec<(usize, u32)> = locs.iter().map(|l| (l.0, l.1)).collect();
    let rows = sample_rows(model, &pairs, origin);
    let regions = &model.regions;
    let names: Vec<&str> = regions.all().iter().map(|r| r.name.as_str()).collect();
    let files: Vec<&str> = regions.all().iter().map(|r| r.file.as_str()).collect();
    let lines: Vec<i32> = rows
        .iter()
        .map(|r| regions.get(r.region).line as i32)
        .collect();
    let paths: Vec<String> = rows
        .iter()
        .map(|r| {
            let p: Vec<&str> = r.path.iter().map(|&g| regions.name(g)).collect();
            p.join(" => ")
        })
        .collect();
    let function: Vec<i32> = rows.iter().map(|r| r.region as i32).collect();
    let mut b = Batch::default();
    b.add(
        "time_ns",
        Array::fixed(opt_col(rows.iter().map(|r| r.time_ns))),
    )
    .add(
        "location",
        Array::values(rows.iter().map(|r| r.location as i32).collect()),
    )
    .add(
        "process",
        Array::values(
            rows.iter()
                .map(|r| locs[r.location as usize].0 as i32)
                .collect(),
        ),
    )
    .add(
        "rank",
        Array::fixed(opt_col(
            rows.iter()
                .map(|r| locs[r.location as usize].2.map(|x| x as i32)),
        )),
    )
    .add(
        "thread",
        Array::values(
            rows.iter()
                .map(|r| locs[r.location as usize].1 as i32)
                .collect(),
        ),
    )
    .add("callpath", Array::texts(&paths))
    .add("function", Array::dictionary(col(function.clone()), &names))
    .add("file", Array::dictionary(col(function), &files))
    .add("line", Array::values(lines))
    .add(
        "estimated",
        Array::boolean(col(rows.iter().map(|r| r.estimated as u8).collect())),
    );
    Ok(Tables {
        batches: vec![("samples", b)],
        warnings: warnings(input.model.report_warnings()),
        numbers: merge
            .as_ref()
            .map(|m| ("origin_ns", m.origin_ns()))
            .into_iter()
            .collect(),
    })
}
