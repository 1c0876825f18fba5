//! JSON output of `plx report`: processes → threads → functions/callpaths (and MPI), the total, warnings.

use std::io::{self, Write};

use plx_analysis::{call_graph, callpath_rows, flat_profile, CallTree, PathNames, Table, UserStat};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{json, Value};

use super::Report;

fn functions(rep: &Report, tree: &CallTree) -> Value {
    flat_profile(tree)
        .iter()
        .map(|r| {
            let info = rep.model.regions.get(r.region);
            json!({
                "function": info.name,
                "kind": info.kind.as_str(),
                "file": info.file,
                "line": info.line,
                "calls": r.calls,
                "child_calls": r.child_calls,
                "exclusive_s": r.exclusive,
                "inclusive_s": r.inclusive,
                "cpu_s": r.cpu,
            })
        })
        .collect()
}

/// A tree's callpath rows, serialized as they are walked: each row names its whole path (a
/// chain N deep names N²/2 regions), so the rows are never built as values, only written. With
/// `--tree` a row names its node's id, its parent's id and its own function instead.
struct Callpaths<'a> {
    rep: &'a Report<'a>,
    tree: &'a CallTree,
}

impl Serialize for Callpaths<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows = callpath_rows(self.tree);
        let mut seq = s.serialize_seq(Some(rows.len()))?;
        for r in &rows {
            seq.serialize_element(&Row {
                rep: self.rep,
                tree: self.tree,
                r,
            })?;
        }
        seq.end()
    }
}

/// One callpath row; its keys in the order of a JSON object's (sorted, as serde_json's map).
struct Row<'a> {
    rep: &'a Report<'a>,
    tree: &'a CallTree,
    r: &'a plx_analysis::CallpathRow,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let node = &self.tree.nodes()[self.r.node as usize];
        let mut map = s.serialize_map(None)?;
        if !self.rep.args.tree {
            let path = PathNames {
                tree: self.tree,
                node: self.r.node,
                regions: &self.rep.model.regions,
            };
            map.serialize_entry("callpath", &path)?;
        }
        map.serialize_entry("calls", &self.r.calls)?;
        map.serialize_entry("child_calls", &self.r.child_calls)?;
        map.serialize_entry("cpu_s", &self.r.cpu)?;
        map.serialize_entry("estimated", &self.r.estimated)?;
        map.serialize_entry("exclusive_s", &self.r.exclusive)?;
        // the function's source file and line ("" and 0 where the debug information has none)
        let info = self.rep.model.regions.get(node.region);
        map.serialize_entry("file", &info.file)?;
        if self.rep.args.tree {
            map.serialize_entry("function", self.rep.name(node.region))?;
            map.serialize_entry("id", &self.r.node)?;
        }
        map.serialize_entry("inclusive_s", &self.r.inclusive)?;
        map.serialize_entry("line", &info.line)?;
        if self.rep.args.tree {
            map.serialize_entry("parent", &node.parent)?;
        }
        map.serialize_entry("samples", &self.r.samples)?;
        map.end()
    }
}

/// The report document: a JSON value whose `"callpaths"` entries hold the index of a tree in
/// `trees`, written as that tree's [`Callpaths`] when the document is serialized.
struct Doc<'a> {
    rep: &'a Report<'a>,
    value: &'a Value,
    trees: &'a [&'a CallTree],
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let inner = |value| Doc {
            rep: self.rep,
            value,
            trees: self.trees,
        };
        match self.value {
            Value::Object(obj) => {
                let mut map = s.serialize_map(Some(obj.len()))?;
                for (k, v) in obj {
                    match (k.as_str(), v.as_u64()) {
                        ("callpaths", Some(i)) => {
                            let tree = self.trees[i as usize];
                            map.serialize_entry(
                                k,
                                &Callpaths {
                                    rep: self.rep,
                                    tree,
                                },
                            )?
                        }
                        _ => map.serialize_entry(k, &inner(v))?,
                    }
                }
                map.end()
            }
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(&inner(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

fn gprof(rep: &Report, tree: &CallTree) -> Value {
    let arc = |a: &plx_analysis::gprof::Arc| {
        json!({
            "function": a.region.map_or("<spontaneous>", |r| rep.name(r)),
            "calls": a.calls,
            "total_calls": a.total_calls,
            "self_s": a.self_s,
            "children_s": a.children_s,
            "samples": a.samples,
            "estimated": a.estimated,
        })
    };
    call_graph(tree)
        .iter()
        .map(|e| {
            json!({
                "index": e.index,
                "function": rep.name(e.region),
                "percent": e.percent,
                "self_s": e.self_s,
                "children_s": e.children_s,
                "calls": e.calls,
                "recursive_calls": e.recursive_calls,
                "samples": e.samples,
                "estimated": e.estimated,
                "parents": e.parents.iter().map(arc).collect::<Vec<_>>(),
                "children": e.children.iter().map(arc).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn user_events(stats: &[UserStat]) -> Value {
    stats
        .iter()
        .map(|s| {
            json!({
                "name": s.name, "count": s.count, "min": s.min, "max": s.max,
                "mean": s.mean(), "std_dev": s.std_dev(),
            })
        })
        .collect()
}

/// Adds table `t`'s profile to `obj`; its callpaths as the index of its tree in `trees` (see
/// [`Doc`]).
fn profile<'a>(
    rep: &Report,
    t: &'a Table,
    obj: &mut serde_json::Map<String, Value>,
    trees: &mut Vec<&'a CallTree>,
) {
    obj.insert("functions".into(), functions(rep, &t.tree));
    obj.insert("callpaths".into(), json!(trees.len()));
    trees.push(&t.tree);
    if rep.args.gprof {
        obj.insert("call_graph".into(), gprof(rep, &t.tree));
    }
    obj.insert("user_events".into(), user_events(&t.user_events));
}

/// Writes the whole report as one JSON object.
pub fn write(rep: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut processes = Vec::new();
    let mut trees = Vec::new();
    for (pi, p) in rep.model.processes.iter().enumerate() {
        if !p.measured {
            continue;
        }
        let mut threads = Vec::new();
        let mut process_table = None;
        for (ti, t) in rep.tables.iter().enumerate() {
            if t.process != Some(pi) {
                continue;
            }
            let Some(th) = t.thread else {
                process_table = Some((ti, t));
                continue;
            };
            let tm = p.threads.iter().find(|x| x.thread == th);
            let mut obj = serde_json::Map::new();
            obj.insert("thread".into(), json!(th));
            obj.insert("tid".into(), json!(tm.and_then(|x| x.tid)));
            obj.insert("name".into(), json!(tm.map(|x| x.name.as_str())));
            obj.insert("cpu_s".into(), json!(t.cpu_s));
            obj.insert("wall_s".into(), json!(t.wall_s));
            obj.insert(
                "profile_source".into(),
                json!(tm.map(|x| format!("{:?}", x.source).to_lowercase())),
            );
            profile(rep, t, &mut obj, &mut trees);
            if let Some(m) = tm.and_then(|x| super::mpi::thread_json(rep, x, ti)) {
                obj.insert("mpi".into(), m);
            }
            threads.push(Value::Object(obj));
        }
        let mut obj = serde_json::Map::new();
        obj.insert("pid".into(), json!(p.pid));
        if rep.model.is_session() {
            obj.insert("app".into(), json!(p.app_name(rep.model)));
        }
        obj.insert("rank".into(), json!(p.rank()));
        obj.insert("image".into(), json!(p.image));
        obj.insert("host".into(), json!(p.host));
        obj.insert("ppid".into(), json!(p.ppid));
        obj.insert("executable".into(), json!(p.executable));
        obj.insert("argv".into(), json!(p.argv));
        obj.insert("finished".into(), json!(p.end.is_some()));
        obj.insert("threads".into(), Value::Array(threads));
        if let Some((_, t)) = process_table {
            obj.insert("cpu_s".into(), json!(t.cpu_s));
            obj.insert("wall_s".into(), json!(t.wall_s));
            profile(rep, t, &mut obj, &mut trees);
        }
        if let Some(m) = super::mpi::process_json(rep, p, process_table.map(|(i, _)| i)) {
            obj.insert("mpi".into(), m);
        }
        obj.insert(
            "throttled".into(),
            p.throttled
                .iter()
                .map(|t| json!({"function": rep.name(t.region), "calls": t.calls, "inclusive_s": t.inclusive_s}))
                .collect(),
        );
        processes.push(Value::Object(obj));
    }
    let mut total = serde_json::Map::new();
    total.insert("cpu_s".into(), json!(rep.total.cpu_s));
    profile(rep, &rep.total, &mut total, &mut trees);
    let warnings: Vec<Value> = rep
        .model
        .report_warnings()
        .into_iter()
        .map(|w| {
            json!({
                "file": w.path.display().to_string(),
                "offset": w.offset,
                "kind": w.kind.as_str(),
                "message": w.message,
            })
        })
        .collect();
    let not_measured: Vec<Value> = rep
        .model
        .processes
        .iter()
        .filter(|p| !p.measured)
        .map(|p| json!({"pid": p.pid, "image": p.image, "host": p.host, "argv": p.argv}))
        .collect();
    let mut doc = json!({
        "experiment": rep.model.dir.display().to_string(),
        "phase": rep.args.phase.spec().map(|p| p.to_string()),
        "app": rep.args.exp.app.app,
        "processes": processes,
        "total": total,
        "not_measured": not_measured,
        "warnings": warnings,
    });
    if let Some(m) = super::mpi::total_json(rep) {
        doc["mpi"] = m;
    }
    let doc = Doc {
        rep,
        value: &doc,
        trees: &trees,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
