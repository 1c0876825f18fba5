//! `plx hierarchy`: the resource hierarchies (Code, Machine, Sync) as indented trees, JSON or CSV.

use std::io::Write;

use plx_analysis::hierarchy::HNode;
use plx_analysis::BuildOptions;
use serde_json::{json, Value};

use crate::args::{ExperimentArgs, Format, OutputArgs};
use crate::csv::field;
use crate::CliError;

/// `plx hierarchy`.
#[derive(clap::Args, Debug)]
pub struct HierarchyArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

fn text(n: &HNode, depth: usize, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}{}", "  ".repeat(depth), n.name)?;
    for c in &n.children {
        text(c, depth + 1, out)?;
    }
    Ok(())
}

/// A CSV row per node, in the text's order: the hierarchy (its root's name), the depth, the
/// name and its aliases (`;`-separated).
fn csv(hierarchy: &str, n: &HNode, depth: usize, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{},{depth},{},{}",
        field(hierarchy),
        field(&n.name),
        field(&n.aliases.join(";"))
    )?;
    for c in &n.children {
        csv(hierarchy, c, depth + 1, out)?;
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
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions::default(),
    )?;
    let h = model.hierarchies();
    let roots: Vec<&HNode> = [
        Some(&h.code),
        h.program.as_ref(),
        Some(&h.machine),
        Some(&h.sync),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut out = args.out.open()?;
    match args.out.format {
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
            for root in &roots {
                text(root, 0, &mut out)?;
                writeln!(out)?;
            }
        }
        Format::Csv => {
            writeln!(out, "hierarchy,depth,name,aliases")?;
            for root in &roots {
                csv(&root.name, root, 0, &mut out)?;
            }
        }
    }
    out.finish()?;
    Ok(())
}
