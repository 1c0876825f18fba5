//! Resource hierarchies (Paradyn, section 2): the program's resources as three trees — Code
//! (module → source file → function), Machine (host → process → thread) and Sync (Messages:
//! communicator → tag; Mutex, CondVar, RwLock, Barrier, Semaphore, Spin, Thread → object); for
//! a session of several applications also Program (application → host → process → thread:
//! IPS-2's logical trees, Machine being the physical one).
//! A focus (see [`crate::query`]) picks one node of each.

use std::collections::BTreeMap;

use plx_format::{Event, RegionKind, SyncKind};

use crate::glob::{glob_matches, is_glob};
use crate::location_name::Who;
use crate::model::Model;

/// What a hierarchy node stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// A hierarchy's root or an inner node with no resource of its own.
    Group,
    /// A function (global region index).
    Region(u32),
    /// A process (index into `Model::processes`).
    Process(usize),
    /// A thread of a process.
    Thread(usize, u32),
    /// A sync category: the kinds it holds.
    Kind(SyncKind),
    /// Synchronization objects (process index, object id) of one name.
    Objects(Vec<(usize, u32)>),
    /// The Messages category.
    Messages,
    /// A communicator (index into `Model::comms`).
    Comm(u32),
    /// A tag on a communicator.
    Tag(u32, i32),
}

/// One node of a resource hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HNode {
    /// The name shown and matched in foci.
    pub name: String,
    /// Other names a focus may use for it (exact match only).
    pub aliases: Vec<String>,
    /// What it stands for.
    pub resource: Resource,
    /// Children, sorted by name.
    pub children: Vec<HNode>,
}

impl HNode {
    fn group(name: &str) -> HNode {
        HNode {
            name: name.to_string(),
            aliases: Vec::new(),
            resource: Resource::Group,
            children: Vec::new(),
        }
    }

    /// The child named `name`, created as a group if absent.
    fn child(&mut self, name: &str) -> &mut HNode {
        let i = match self.children.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.children.push(HNode::group(name));
                self.children.len() - 1
            }
        };
        &mut self.children[i]
    }

    fn sort(&mut self) {
        // threads stay in index order, processes in the model's order (ranks by rank)
        if !self
            .children
            .iter()
            .any(|c| matches!(c.resource, Resource::Thread(..) | Resource::Process(_)))
        {
            self.children.sort_by(|a, b| a.name.cmp(&b.name));
        }
        for c in &mut self.children {
            c.sort();
        }
    }

    /// Does `component` name this node exactly (its name or an alias)?
    pub fn is_named(&self, component: &str) -> bool {
        self.name == component || self.aliases.iter().any(|a| a == component)
    }

    /// Does `component` select this node: its name or an alias exactly, or, for a glob
    /// ([`crate::glob`]: `*`, `?`, `[...]`), its name or an alias matching it?
    pub fn is_selected_by(&self, component: &str) -> bool {
        self.is_named(component)
            || is_glob(component)
                && (glob_matches(component, &self.name)
                    || self.aliases.iter().any(|a| glob_matches(component, a)))
    }

    /// The children a path component selects: those named exactly (name or alias), else
    /// those a glob matches (name or alias; `*` is all), else those whose name starts with it.
    pub fn select(&self, component: &str) -> Vec<&HNode> {
        let exact: Vec<&HNode> = self
            .children
            .iter()
            .filter(|c| c.is_named(component))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        if is_glob(component) {
            return self
                .children
                .iter()
                .filter(|c| c.is_selected_by(component))
                .collect();
        }
        self.children
            .iter()
            .filter(|c| c.name.starts_with(component))
            .collect()
    }

    /// Every node of the subtree, this one first.
    pub fn walk(&self) -> Vec<&HNode> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.walk());
        }
        out
    }
}

/// The three hierarchies of an experiment.
#[derive(Debug, Clone)]
pub struct Hierarchies {
    /// Code: module → source file → function.
    pub code: HNode,
    /// Machine: host → process → thread.
    pub machine: HNode,
    /// Sync: Messages → communicator → tag; kinds → objects.
    pub sync: HNode,
    /// Program, for a session (IPS-2's logical trees): application → host → process → thread.
    /// Machine is then the physical tree: every process of every application by host.
    pub program: Option<HNode>,
}

/// The Sync category of a kind: `Mutex`, `RwLock`, `CondVar`, `Barrier`, `Semaphore`, `Spin`,
/// `Thread` (pthread_join targets), OpenMP's `OmpBarrier`, `OmpCritical`, `OmpLock`,
/// `OmpTaskwait`, `OmpAtomic`, `OmpOrdered`, and `Other`.
pub fn category(kind: SyncKind) -> &'static str {
    match kind {
        SyncKind::Mutex => "Mutex",
        SyncKind::RwLock => "RwLock",
        SyncKind::Cond => "CondVar",
        SyncKind::Barrier => "Barrier",
        SyncKind::Sem => "Semaphore",
        SyncKind::Spin => "Spin",
        SyncKind::Thread => "Thread",
        SyncKind::OmpBarrier => "OmpBarrier",
        SyncKind::OmpCritical => "OmpCritical",
        SyncKind::OmpLock => "OmpLock",
        SyncKind::OmpTaskwait => "OmpTaskwait",
        SyncKind::OmpAtomic => "OmpAtomic",
        SyncKind::OmpOrdered => "OmpOrdered",
        SyncKind::JavaMonitor => "JavaMonitor",
        SyncKind::JavaWait => "JavaWait",
        SyncKind::Other(_) => "Other",
    }
}

/// The name of a communicator in the Sync hierarchy: `MPI_COMM_WORLD`, `MPI_COMM_SELF` or
/// `comm<index>`, prefixed `app:` when the model holds several applications.
pub fn comm_name(model: &Model, comm: u32) -> String {
    let own = match model.comms.get(comm).predefined {
        Some(0) => "MPI_COMM_WORLD".to_string(),
        Some(1) => "MPI_COMM_SELF".to_string(),
        _ => format!("comm{comm}"),
    };
    // in the physical view of a session every application has its own MPI_COMM_WORLD
    let app = model
        .processes
        .iter()
        .find(|p| p.comms.values().any(|&c| c == comm))
        .map(|p| p.app_name(model))
        .filter(|a| !a.is_empty() && model.apps.len() > 1 && model.is_session());
    match app {
        Some(a) if model.processes.iter().any(|p| p.app_name(model) != a) => format!("{a}:{own}"),
        _ => own,
    }
}

/// The node name of a process: its short name ([`Who::short`]: the rank, else the pid,
/// `pid:image` for an exec image; `app:` first in a session).
pub fn process_name(model: &Model, pi: usize) -> String {
    Who::process(model, &model.processes[pi]).short(None)
}

/// The names a process node also answers to: its pid, and the forms printed before the one
/// naming (`rank N`, `rankN`, `pid.image`).
fn process_aliases(p: &crate::model::ProcessModel) -> Vec<String> {
    let mut a = vec![p.pid.to_string()];
    if let Some(r) = p.rank() {
        a.push(format!("rank {}", r - p.rank_base));
        a.push(format!("rank{}", r - p.rank_base));
    }
    if p.image > 0 {
        a.push(format!("{}.{}", p.pid, p.image));
    }
    a
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl Model {
    /// The code, machine and sync hierarchies. Reads the trace (when there is one) for the
    /// tags of messages.
    pub fn hierarchies(&self) -> Hierarchies {
        // Code: regions that occur in some profile (runtime regions left out)
        let mut used = vec![false; self.regions.all().len()];
        for p in self.processes.iter().filter(|p| p.measured) {
            for t in &p.threads {
                for n in t.tree.nodes() {
                    used[n.region as usize] = true;
                }
            }
        }
        let mut code = HNode::group("Code");
        for (i, r) in self.regions.all().iter().enumerate() {
            if !used[i] || r.kind == RegionKind::Runtime {
                continue;
            }
            let module = self
                .region_modules
                .get(&(i as u32))
                .map_or("(no module)", |m| m.as_str());
            let file = if r.file.is_empty() {
                "(unknown file)"
            } else {
                file_name(&r.file)
            };
            code.child(module).child(file).children.push(HNode {
                name: r.name.clone(),
                aliases: Vec::new(),
                resource: Resource::Region(i as u32),
                children: Vec::new(),
            });
        }
        code.sort();

        let mut machine = HNode::group("Machine");
        let mut program = self.is_session().then(|| HNode::group("Program"));
        let mut sync = HNode::group("Sync");
        let mut tags: BTreeMap<u32, Vec<i32>> = BTreeMap::new();
        let mut objects: BTreeMap<(SyncKind, String), Vec<(usize, u32)>> = BTreeMap::new();
        let mut object_ids: BTreeMap<(SyncKind, String), Vec<String>> = BTreeMap::new();
        for (pi, p) in self.processes.iter().enumerate() {
            if !p.measured {
                continue;
            }
            let host = machine.child(&p.host);
            let who = Who::process(self, p);
            let mut pn = HNode {
                name: who.short(None),
                aliases: process_aliases(p),
                resource: Resource::Process(pi),
                children: Vec::new(),
            };
            for t in &p.threads {
                pn.children.push(HNode {
                    name: who.short(Some(t.thread)),
                    aliases: vec![
                        t.name.clone(),
                        t.thread.to_string(),
                        format!("{}#{}", t.name, t.thread),
                    ],
                    resource: Resource::Thread(pi, t.thread),
                    children: Vec::new(),
                });
            }
            if let Some(prog) = program.as_mut() {
                let mut logical = pn.clone();
                logical.name = Who { app: "", ..who }.short(None);
                prog.child(p.app_name(self))
                    .child(&p.host)
                    .children
                    .push(logical);
            }
            host.children.push(pn);
            for o in &p.sync_objects {
                let key = (o.kind, o.name.clone());
                objects.entry(key.clone()).or_default().push((pi, o.id));
                let ids = object_ids.entry(key).or_default();
                ids.push(o.id.to_string());
                ids.push(format!("#{}", o.id));
                ids.push(o.label());
            }
            for t in &p.threads {
                for m in &t.messages {
                    if let Some(&g) = p.comms.get(&m.comm) {
                        tags.entry(g).or_default();
                    }
                }
            }
            for (comm, tag) in trace_tags(p) {
                if let Some(&g) = p.comms.get(&comm) {
                    tags.entry(g).or_default().push(tag);
                }
            }
        }
        machine.sort();
        if let Some(prog) = program.as_mut() {
            prog.sort();
        }
        if self.has_mpi() || !tags.is_empty() {
            let mut messages = HNode::group("Messages");
            messages.resource = Resource::Messages;
            for (comm, mut ts) in tags {
                ts.sort_unstable();
                ts.dedup();
                messages.children.push(HNode {
                    name: comm_name(self, comm),
                    aliases: vec![comm.to_string()],
                    resource: Resource::Comm(comm),
                    children: ts
                        .into_iter()
                        .map(|t| HNode {
                            name: t.to_string(),
                            aliases: Vec::new(),
                            resource: Resource::Tag(comm, t),
                            children: Vec::new(),
                        })
                        .collect(),
                });
            }
            sync.children.push(messages);
        }
        for kind in SyncKind::ALL {
            let mut cat = HNode::group(category(kind));
            cat.aliases.push(kind.as_str().to_string());
            cat.resource = Resource::Kind(kind);
            sync.children.push(cat);
        }
        for ((kind, name), ids) in objects {
            let cat_name = category(kind);
            let cat = match sync.children.iter_mut().position(|c| c.name == cat_name) {
                Some(i) => &mut sync.children[i],
                None => {
                    let mut c = HNode::group(cat_name);
                    c.resource = Resource::Kind(kind);
                    sync.children.push(c);
                    sync.children.last_mut().expect("just pushed")
                }
            };
            let mut aliases = object_ids.remove(&(kind, name.clone())).unwrap_or_default();
            aliases.dedup();
            cat.children.push(HNode {
                name,
                aliases,
                resource: Resource::Objects(ids),
                children: Vec::new(),
            });
        }
        sync.sort();
        Hierarchies {
            code,
            machine,
            sync,
            program,
        }
    }
}

/// (process-local communicator, tag) of every point-to-point message event of the trace.
fn trace_tags(p: &crate::model::ProcessModel) -> Vec<(u32, i32)> {
    let mut out = Vec::new();
    let Some(index) = &p.trace else {
        return out;
    };
    let Ok(mut reader) = index.reader() else {
        return out;
    };
    for info in &index.chunks {
        let Ok(events) = reader.read(*info) else {
            break;
        };
        for ev in events {
            if let Event::Send { comm, tag, .. } | Event::Recv { comm, tag, .. } = ev {
                out.push((comm, tag));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
