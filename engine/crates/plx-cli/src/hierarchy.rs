//! `plx hierarchy`: the resource hierarchies (Code, Machine, Sync) as indented trees or JSON.

use std::io::{BufWriter, Write};

use plx_analysis::hierarchy::HNode;
use plx_analysis::BuildOptions;
use serde_json::{json, Value};

use crate::cli::{Format, HierarchyArgs};
use crate::{CliError, Exit};

fn text(n: &HNode, depth: usize, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}{}", "  ".repeat(depth), n.name)?;
    for c in &n.children {
        text(c, depth + 1, out)?;
    }
    Ok(())
}

fn to_json(n: &HNode) -> Value {
    json!({
        "name": n.name,
        "aliases": n.aliases,
        "children": n.children.iter().map(to_json).collect::<Vec<_>>(),
    })
}

/// Runs `plx hierarchy`.
pub fn hierarchy(args: &HierarchyArgs) -> Result<(), CliError> {
    let model = crate::experiment::open_app_warned(
        &args.dir,
        args.app.as_deref(),
        BuildOptions::default(),
    )?;
    let h = model.hierarchies();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            let mut doc = json!({
                "experiment": model.dir.display().to_string(),
                "code": to_json(&h.code),
                "machine": to_json(&h.machine),
                "sync": to_json(&h.sync),
            });
            if let Some(p) = &h.program {
                doc["program"] = to_json(p);
            }
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Text => {
            for root in [
                Some(&h.code),
                h.program.as_ref(),
                Some(&h.machine),
                Some(&h.sync),
            ]
            .into_iter()
            .flatten()
            {
                text(root, 0, &mut out)?;
                writeln!(out)?;
            }
        }
        Format::Csv => {
            return Err(CliError::new(
                Exit::Usage,
                "plx hierarchy prints text or json, not csv".to_string(),
            ))
        }
    }
    out.flush()?;
    Ok(())
}
