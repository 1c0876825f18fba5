//! Building the model from an experiment: each process's threads and callpath trees (from
//! profiles or rebuilt from traces), regions, messages, applications.

use super::*;

/// "rank N: no ProcessEnd record..." instead of the file's anonymous warning.
pub(super) fn name_unfinished_ranks(processes: &[ProcessModel], warnings: &mut [Warning]) {
    for p in processes.iter().filter(|p| p.end.is_none()) {
        let Some(rank) = p.rank() else {
            continue;
        };
        for w in warnings
            .iter_mut()
            .filter(|w| w.kind == WarningKind::Unfinished && w.path == p.path)
        {
            w.message = format!("rank {rank}: {}", w.message);
        }
    }
}

pub(super) fn message_stats(
    stats: &[MessageStats],
    rmap: &mut RegionMap,
    table: &mut RegionTable,
) -> Vec<MessageStat> {
    stats
        .iter()
        .map(|s| MessageStat {
            region: if s.region == NONE_U32 {
                None
            } else {
                Some(rmap.global(s.region, table))
            },
            peer: (s.peer != NONE_U32).then_some(s.peer),
            direction: s.direction,
            comm: s.comm,
            count: s.count,
            bytes: s.bytes,
            min_bytes: s.min_bytes,
            max_bytes: s.max_bytes,
        })
        .collect()
}

/// Process-local region ids → global indices.
pub(super) struct RegionMap {
    map: FastMap<u32, u32>,
}

impl RegionMap {
    pub(super) fn global(&mut self, local: u32, table: &mut RegionTable) -> u32 {
        *self.map.entry(local).or_insert_with(|| {
            table.intern(RegionInfo {
                name: format!("region {local}"),
                kind: RegionKind::Function,
                file: String::new(),
                line: 0,
            })
        })
    }
}

pub(super) fn region_info_name(def: &RegionDef) -> String {
    demangle(&def.name).unwrap_or_else(|| def.name.clone())
}

pub(crate) fn region_info(
    def: &RegionDef,
    img: &ProcessImage,
    opts: BuildOptions,
    resolver: &mut SymbolResolver,
) -> RegionInfo {
    let name = demangle(&def.name).unwrap_or_else(|| def.name.clone());
    let (file, line) = if def.file.is_empty() && opts.resolve_sources {
        resolver
            .locate(def, img.process.modules.get(&def.module_id))
            .unwrap_or_default()
    } else {
        (def.file.clone(), def.line)
    };
    // an OpenMP construct is named after its source line: parallel@solver.c:42
    let name = if def.kind == RegionKind::Omp && !file.is_empty() {
        format!("{name}@{}:{line}", file.rsplit('/').next().unwrap_or(&file))
    } else {
        name
    };
    RegionInfo {
        name,
        kind: def.kind,
        file,
        line,
    }
}

pub(super) fn tree_from_ticks(
    nodes: &[TickNode],
    img: &ProcessImage,
    rmap: &mut RegionMap,
    table: &mut RegionTable,
    warnings: &mut Vec<Warning>,
) -> CallTree {
    tree_from_ticks_mapped(nodes, img, rmap, table, warnings).0
}

/// The same, with the tree node of each of `nodes`.
pub(super) fn tree_from_ticks_mapped(
    nodes: &[TickNode],
    img: &ProcessImage,
    rmap: &mut RegionMap,
    table: &mut RegionTable,
    warnings: &mut Vec<Warning>,
) -> (CallTree, Vec<u32>) {
    let mut tree = CallTree::new();
    let mut map = vec![0u32; nodes.len()];
    let mut bad_parents = 0u64;
    for (i, n) in nodes.iter().enumerate() {
        let parent = if n.parent == NONE_U32 {
            None
        } else if (n.parent as usize) < i {
            Some(map[n.parent as usize])
        } else {
            bad_parents += 1;
            None
        };
        let region = rmap.global(n.region, table);
        let m = tree.child(parent, region);
        tree.add(
            m,
            n.calls,
            n.child_calls,
            img.clock.seconds(n.inclusive),
            img.clock.seconds(n.exclusive),
        );
        if let Some(ns) = n.cpu_ns {
            tree.add_cpu(m, ns as f64 * 1e-9);
        }
        map[i] = m;
    }
    if bad_parents > 0 {
        warnings.push(Warning::file(
            img.process_path(),
            WarningKind::Malformed,
            format!("{bad_parents} profile nodes name a parent that does not precede them: shown as roots"),
        ));
    }
    (tree, map)
}

/// What a process image gives without the experiment-wide tables: its threads and the profiles
/// rebuilt from its trace (decoding the whole trace: the per-image work [`Model::build`] runs
/// in parallel), with the warnings of the decoding.
pub(super) struct Decoded {
    thread_ids: Vec<u32>,
    rebuilt: Rebuilt,
    warnings: Vec<Warning>,
}

pub(super) fn decode_process(img: &ProcessImage, opts: BuildOptions) -> Decoded {
    let mut thread_ids: Vec<u32> = img.process.threads.keys().copied().collect();
    if let Some(t) = &img.trace {
        thread_ids.extend(t.threads());
    }
    thread_ids.sort_unstable();
    thread_ids.dedup();
    let mut warnings = Vec::new();
    let rebuilt = if opts.rebuild_from_trace {
        rebuild_threads(img, &thread_ids, &mut warnings)
    } else {
        FastMap::default()
    };
    Decoded {
        thread_ids,
        rebuilt,
        warnings,
    }
}

/// A warning naming the Java classes of `img` the agent could not rewrite (JavaClass flag 1).
fn warn_unrewritten_classes(img: &ProcessImage, warnings: &mut Vec<Warning>) {
    let failed: Vec<&str> = img
        .process
        .java_classes
        .iter()
        .filter(|c| c.flags & 1 != 0)
        .map(|c| c.name.as_str())
        .collect();
    if failed.is_empty() {
        return;
    }
    warnings.push(Warning::file(
        img.process_path(),
        WarningKind::Unmeasured,
        format!(
            "{} Java classes could not be rewritten, their methods are not measured: {}{} (the \
             JVM's standard error said why, e.g. a class file newer than the agent reads)",
            failed.len(),
            failed[..failed.len().min(5)].join(", "),
            if failed.len() > 5 { ", ..." } else { "" }
        ),
    ));
}

pub(super) fn build_process(
    img: &ProcessImage,
    decoded: Decoded,
    opts: BuildOptions,
    table: &mut RegionTable,
    resolver: &mut SymbolResolver,
    warnings: &mut Vec<Warning>,
) -> ProcessModel {
    let p = &img.process;
    warn_unrewritten_classes(img, warnings);
    let mut rmap = RegionMap {
        map: FastMap::default(),
    };
    for def in p.regions.values() {
        let g = table.intern(region_info(def, img, opts, resolver));
        rmap.map.insert(def.region_id, g);
    }
    let event_name = |id: u64| {
        u32::try_from(id)
            .ok()
            .and_then(|i| p.user_events.get(&i))
            .map_or_else(|| format!("event {id}"), |d| d.name.clone())
    };
    let Decoded {
        thread_ids,
        rebuilt,
        warnings: decoding,
    } = decoded;
    warnings.extend(decoding);

    let mut frame_names = FrameNames::default();
    let mut threads = Vec::new();
    for th in thread_ids {
        let data = p.threads.get(&th);
        let info = data.and_then(|d| d.info.as_ref());
        let profile = data.and_then(|d| d.profile.as_ref());
        let recovered = data.is_some_and(|d| d.recovered.profile.is_some());
        let mut tm = new_thread(img, th, data, recovered);
        let recorded_messages = data.map(|d| d.message_stats.as_slice()).unwrap_or(&[]);
        let rebuilt_here = rebuilt.get(&th);
        let mut profile_map = Vec::new(); // tree node of each ThreadProfile node
                                          // In trace mode the runtime writes ThreadProfiles without nodes: the trace is the profile.
        let recorded = profile.filter(|p| !p.nodes.is_empty() || rebuilt_here.is_none());
        if let Some(prof) = recorded {
            let node_cpu = data.map(|d| d.node_cpu.as_slice()).unwrap_or(&[]);
            let nodes = recorded_nodes(prof, (!recovered).then_some(node_cpu));
            let (tree, map) = tree_from_ticks_mapped(&nodes, img, &mut rmap, table, warnings);
            tm.tree = tree;
            profile_map = map;
            tm.source = if recovered {
                ProfileSource::Recovered
            } else {
                ProfileSource::Recorded
            };
            tm.messages = message_stats(recorded_messages, &mut rmap, table);
            if let Some(i) = info {
                tm.cpu_s = (!recovered).then(|| prof.cpu_ns.saturating_sub(i.cpu_ns) as f64 * 1e-9);
                tm.wall_s = Some(
                    img.clock
                        .seconds(prof.end_ticks.saturating_sub(i.start_ticks)),
                );
            }
            let stats = data.map(|d| d.user_stats.as_slice()).unwrap_or(&[]);
            recorded_user_stats(&mut tm, stats, &event_name);
        } else if let Some((nodes, b)) = rebuilt_here {
            let recorded_stats = data.map(|d| d.user_stats.as_slice()).unwrap_or(&[]);
            let thread = ThreadSources {
                img,
                info,
                profile,
                recorded_messages,
                recorded_stats,
            };
            rebuilt_profile(
                &mut tm,
                nodes,
                b,
                thread,
                &event_name,
                &mut rmap,
                table,
                warnings,
            );
        } else {
            // no profile at all: message statistics (recovered from a live file) still count
            tm.messages = message_stats(recorded_messages, &mut rmap, table);
        }
        if let Some(st) = data.and_then(|d| d.sample_tree.as_ref()) {
            let stamps = data.map_or(&[][..], |d| d.sample_stamps.as_slice());
            let ctx = (img, &mut rmap, &mut *table, &mut *resolver);
            add_samples(
                &mut tm,
                &profile_map,
                st,
                stamps,
                ctx,
                &mut frame_names,
                warnings,
            );
        }
        threads.push(tm);
    }

    let throttled = p
        .throttled
        .iter()
        .map(|t| ThrottledRegion {
            region: rmap.global(t.region_id, table),
            calls: t.calls,
            inclusive_s: img.clock.seconds(t.inclusive_ticks),
        })
        .collect();
    let counters = crate::counters::build(p, &mut |r| rmap.global(r, table));
    let info = p.info.as_ref();
    // a process.plx cut before its RegionDefs still has its threads' trees (rebuilt from the
    // trace, their regions unnamed): measured too. A program built without instrumentation is
    // measured by its interposed calls alone: threads it started (the runtime attaches only
    // those, lazily), synchronization objects used from its own code (module 0, the
    // executable; a launcher's library locks are not its measurements) and messages.
    let measured = is_measured(p, &threads, table);
    ProcessModel {
        host: info.map_or_else(|| img.host.clone(), |i| i.host.clone()),
        pid: info.map_or(img.pid, |i| i.pid),
        image: img.image,
        ppid: info.map(|i| i.ppid),
        executable: info.map(|i| i.executable.clone()).unwrap_or_default(),
        argv: info.map(|i| i.argv.clone()).unwrap_or_default(),
        version: info.map(|i| i.version.clone()).unwrap_or_default(),
        start_realtime_ns: info.map(|i| i.start_realtime_ns),
        clock: info.map(|i| i.clock),
        ticks_per_second: img.clock.ticks_per_second(),
        clock_source: img.clock.source,
        end: p.end,
        filter: p.filter.clone(),
        region_count: p.regions.len(),
        excluded_regions: p.regions.values().filter(|r| r.excluded()).count(),
        threads,
        throttled,
        counters,
        java_classes: p.java_classes.clone(),
        java_threads: p.java_threads.clone(),
        jit_code: JitCounts {
            methods: p.jit_code.iter().filter(|c| c.kind == 0).count(),
            generated: p.jit_code.iter().filter(|c| c.kind != 0).count(),
            freed: p.jit_unloads.len(),
        },
        sample_signals: p.sample_signals.clone(),
        probe_sites: p.probe_sites.clone(),
        probe_changes: p.probe_changes.clone(),
        omp_teams: p.omp_teams.clone(),
        path: img.process_path(),
        mpi: p.mpi.clone(),
        clock_offsets: p.clock_offsets.clone(),
        clock_sync_skipped: p.clock_sync_skipped,
        offsets: OffsetMap::new(&p.clock_offsets),
        clock_map: img.clock,
        comms: BTreeMap::new(),
        trace: img.trace.clone(),
        measured,
        sync_objects: name_objects(&p.sync_objects, &p.modules, resolver, opts.resolve_sources),
        region_map: rmap.map.iter().map(|(k, v)| (*k, *v)).collect(),
        app: 0,
        rank_base: 0,
        shift_ns: 0,
        cpu_samples: p.cpu_samples.clone(),
        first_ticks: first_ticks(img),
    }
}

/// Folds thread `tm`'s sample tree `st` into its call tree (`profile_map`: the tree node of
/// each ThreadProfile node) and times its samples by `stamps`; frames or stamps naming what
/// does not exist are left out with a warning.
fn add_samples(
    tm: &mut ThreadModel,
    profile_map: &[u32],
    st: &plx_format::records::SampleTree,
    stamps: &[(u64, u32)],
    (img, rmap, table, resolver): (
        &ProcessImage,
        &mut RegionMap,
        &mut RegionTable,
        &mut SymbolResolver,
    ),
    frame_names: &mut FrameNames,
    warnings: &mut Vec<Warning>,
) {
    let (bad, frame_nodes) = fold_samples(
        &mut tm.tree,
        profile_map,
        st,
        img,
        rmap,
        table,
        resolver,
        frame_names,
    );
    if bad > 0 {
        warnings.push(Warning::file(
            img.process_path(),
            WarningKind::Malformed,
            format!(
                "thread {}: {bad} sampled frames name a frame or profile node that does not exist: left out",
                tm.thread
            ),
        ));
    }
    let (timed, untimed) = timed_samples(stamps, &frame_nodes);
    tm.sample_times = timed;
    if untimed > 0 {
        warnings.push(Warning::file(
            img.process_path(),
            WarningKind::Malformed,
            format!(
                "thread {}: {untimed} sample stamps name a frame its sample tree does not have: left out",
                tm.thread
            ),
        ));
    }
}

/// Thread `th`'s model before its profile: its identity, its trace's size, its losses, its
/// synchronization and sample statistics (`recovered`: its profile comes from a live file).
fn new_thread(
    img: &ProcessImage,
    th: u32,
    data: Option<&plx_format::process::ThreadData>,
    recovered: bool,
) -> ThreadModel {
    let info = data.and_then(|d| d.info.as_ref());
    let profile = data.and_then(|d| d.profile.as_ref());
    let trace_words = img
        .trace
        .as_ref()
        .and_then(|t| t.words_per_thread.get(&th).copied())
        .unwrap_or(0);
    ThreadModel {
        thread: th,
        tid: info.map(|i| i.tid),
        name: data.map(|d| d.name.clone()).unwrap_or_default(),
        cpu_s: None,
        wall_s: None,
        tree: CallTree::new(),
        source: ProfileSource::None,
        trace_words,
        trace_events: profile.filter(|_| !recovered).map(|p| p.trace_events),
        lost_events: profile.map_or(0, |p| p.lost_events),
        lost_nodes: profile.map_or(0, |p| p.lost_nodes),
        user_events: Vec::new(),
        messages: Vec::new(),
        sync: stats_in_seconds(data.map(|d| d.sync_stats.as_slice()).unwrap_or(&[]), |t| {
            img.clock.seconds(t)
        }),
        samples: data.and_then(|d| {
            d.sample_tree
                .as_ref()
                .map(|t| SampleStats::of(t, &d.recovered))
        }),
        sample_times: Vec::new(),
    }
}

/// What a thread's records hold besides its trace: its process image, its ThreadInfo and
/// ThreadProfile, its message and user-event statistics.
struct ThreadSources<'a> {
    img: &'a ProcessImage,
    info: Option<&'a plx_format::records::ThreadInfo>,
    profile: Option<&'a plx_format::records::ThreadProfile>,
    recorded_messages: &'a [MessageStats],
    recorded_stats: &'a [plx_format::records::UserEventStats],
}

/// Thread `tm`'s profile rebuilt from its trace (`nodes`, and `b`'s messages, user events and
/// times), completed by what its records hold (`t`).
#[allow(clippy::too_many_arguments)]
fn rebuilt_profile(
    tm: &mut ThreadModel,
    nodes: &[TickNode],
    b: &ProfileBuilder,
    t: ThreadSources<'_>,
    event_name: &dyn Fn(u64) -> String,
    rmap: &mut RegionMap,
    table: &mut RegionTable,
    warnings: &mut Vec<Warning>,
) {
    let ThreadSources {
        img,
        info,
        profile,
        recorded_messages,
        recorded_stats,
    } = t;
    tm.tree = tree_from_ticks(nodes, img, rmap, table, warnings);
    tm.source = ProfileSource::Rebuilt;
    // records (or statistics recovered from the live file) count exactly what the trace
    // may only partly hold (a killed process's last buffer is lost)
    let derived = if profile.is_some() || !recorded_messages.is_empty() {
        recorded_messages
    } else {
        b.messages.as_slice()
    };
    tm.messages = message_stats(derived, rmap, table);
    if let (Some(prof), Some(i)) = (profile, info) {
        tm.cpu_s = Some(prof.cpu_ns.saturating_sub(i.cpu_ns) as f64 * 1e-9);
        tm.wall_s = Some(
            img.clock
                .seconds(prof.end_ticks.saturating_sub(i.start_ticks)),
        );
    }
    tm.trace_events = Some(tm.trace_events.unwrap_or(b.events));
    let start = info.map(|i| i.start_ticks).or(b.first_ticks);
    if let (None, Some(s)) = (tm.wall_s, start) {
        tm.wall_s = Some(img.clock.seconds(b.last_ticks.saturating_sub(s)));
    }
    recorded_user_stats(tm, recorded_stats, event_name);
    let mut ids: Vec<_> = b.user.iter().collect();
    ids.sort_by_key(|(id, _)| **id);
    for (id, s) in ids.into_iter().filter(|_| recorded_stats.is_empty()) {
        tm.user_events.push(UserStat {
            name: event_name(*id),
            count: s.count,
            min: s.min,
            max: s.max,
            sum: s.sum,
            sum_squares: s.sum_squares,
        });
    }
}

/// Whether process `p` (its `threads` built) holds measurements of its own: not only the
/// runtime's regions, as a launcher's.
fn is_measured(
    p: &plx_format::process::ProcessData,
    threads: &[ThreadModel],
    table: &RegionTable,
) -> bool {
    p.mpi.is_some()
        || p.regions.is_empty()
        || threads.len() > 1
        || p.sync_objects.values().any(|o| o.module_id == 0)
        || threads.iter().any(|t| !t.messages.is_empty())
        || !p.user_events.is_empty()
        || p.regions.values().any(|r| r.kind != RegionKind::Runtime)
        || threads.iter().any(|t| {
            t.tree
                .nodes()
                .iter()
                .any(|n| table.get(n.region).kind != RegionKind::Runtime)
        })
}

/// The tick nodes of ThreadProfile `prof`, with the CPU time per node `node_cpu` (none for a
/// profile recovered from a live file).
fn recorded_nodes(
    prof: &plx_format::records::ThreadProfile,
    node_cpu: Option<&[(u32, u64)]>,
) -> Vec<TickNode> {
    let mut nodes: Vec<TickNode> = prof
        .nodes
        .iter()
        .map(|n| TickNode {
            parent: n.parent,
            region: n.region,
            calls: n.calls,
            child_calls: n.child_calls,
            inclusive: n.inclusive_ticks,
            exclusive: n.exclusive_ticks,
            cpu_ns: None,
        })
        .collect();
    if let Some(node_cpu) = node_cpu {
        for (node, ns) in node_cpu {
            if let Some(n) = nodes.get_mut(*node as usize) {
                n.cpu_ns = Some(n.cpu_ns.unwrap_or(0) + ns);
            }
        }
    }
    nodes
}

/// Appends the user events' statistics `stats` a thread's records hold to `tm`'s.
fn recorded_user_stats(
    tm: &mut ThreadModel,
    stats: &[plx_format::records::UserEventStats],
    event_name: &dyn Fn(u64) -> String,
) {
    for s in stats {
        tm.user_events.push(UserStat {
            name: event_name(s.event_id as u64),
            count: s.count,
            min: s.min,
            max: s.max,
            sum: s.sum,
            sum_squares: s.sum_squares,
        });
    }
}

/// The first tick of process image `img`: its threads' starts and its trace's first chunks.
fn first_ticks(img: &ProcessImage) -> Option<u64> {
    img.process
        .threads
        .values()
        .filter_map(|d| d.info.as_ref().map(|i| i.start_ticks))
        .chain(
            img.trace
                .iter()
                .flat_map(|t| t.chunks.iter().map(|c| c.header.base_ticks)),
        )
        .min()
}

/// The applications, with the time shift of those in comparison mode: each starts when the
/// earliest of the live applications (all of them, if none is live) starts.
pub(super) fn app_models(exp: &Experiment, processes: &mut [ProcessModel]) -> Vec<AppModel> {
    let start = |a: u32, ps: &[ProcessModel]| -> Option<f64> {
        ps.iter()
            .filter(|p| p.app == a && p.measured)
            .filter_map(|p| p.start_ticks().map(|t| p.rank0_ns(t)))
            .reduce(f64::min)
    };
    let live_start = (0..exp.apps.len() as u32)
        .filter(|a| !exp.apps[*a as usize].compare)
        .filter_map(|a| start(a, processes))
        .reduce(f64::min);
    let mut apps = Vec::new();
    for (i, def) in exp.apps.iter().enumerate() {
        let mut shift_ns = 0;
        if def.compare {
            if let (Some(to), Some(from)) = (live_start, start(i as u32, processes)) {
                shift_ns = (to - from).round() as i64;
            }
        }
        for p in processes.iter_mut().filter(|p| p.app == i as u32) {
            p.shift_ns = shift_ns;
        }
        apps.push(AppModel {
            name: def.name.clone(),
            compare: def.compare,
            shift_ns,
        });
    }
    apps
}

type Rebuilt = FastMap<u32, (Vec<TickNode>, ProfileBuilder)>;

/// One pass over the trace feeding a builder per thread that has no ThreadProfile.
pub(super) fn rebuild_threads(
    img: &ProcessImage,
    threads: &[u32],
    warnings: &mut Vec<Warning>,
) -> Rebuilt {
    let mut out = FastMap::default();
    let Some(index) = &img.trace else {
        return out;
    };
    let runtime: Vec<u32> = img
        .process
        .regions
        .iter()
        .filter(|(_, r)| r.kind == RegionKind::Runtime)
        .map(|(id, _)| *id)
        .collect();
    let mut builders: FastMap<u32, ProfileBuilder> = threads
        .iter()
        .filter(|t| {
            img.process
                .threads
                .get(t)
                .is_none_or(|d| d.profile.as_ref().is_none_or(|p| p.nodes.is_empty()))
                && index.words_per_thread.get(t).is_some_and(|w| *w > 0)
        })
        .map(|t| {
            (
                *t,
                ProfileBuilder::new().runtime_regions(runtime.iter().copied()),
            )
        })
        .collect();
    if builders.is_empty() {
        return out;
    }
    let Some(mut reader) = index.reader_or_warn(warnings) else {
        return out;
    };
    for info in &index.chunks {
        let Some(b) = builders.get_mut(&info.header.thread) else {
            continue;
        };
        match reader.read(*info) {
            Ok(mut events) => {
                for ev in events.by_ref() {
                    b.event(ev);
                }
                if let Some(w) = events.cut_at() {
                    warnings.push(Warning::at(
                        &index.path,
                        info.events_offset + 8 * w as u64,
                        WarningKind::Malformed,
                        format!(
                            "thread {}: extended event's payload runs past its chunk: rest of chunk skipped",
                            info.header.thread
                        ),
                    ));
                }
            }
            Err(w) => {
                warnings.push(w);
                break;
            }
        }
    }
    // A process that did not finish writing (killed): calls still open end at the latest time
    // known for the process, not at their own thread's last event (a thread blocked until the
    // kill would show 0 s), and are said to be cut there.
    let killed_at = crate::rebuild::killed_end(
        img.process.end.is_some(),
        builders.values().map(|b| b.last_ticks),
    );
    for (th, mut b) in builders {
        if let Some(end) = killed_at.filter(|_| b.open_calls() > 0) {
            b.last_ticks = b.last_ticks.max(end);
            warnings.push(crate::rebuild::killed_warning(
                &index.path,
                th,
                b.open_calls(),
            ));
        }
        let (nodes, b) = b.finish();
        if b.unmatched_exits > 0 {
            warnings.push(Warning::file(
                &index.path,
                WarningKind::BadEvents {
                    count: b.unmatched_exits,
                },
                format!(
                    "thread {th}: {} exit events matched no open region",
                    b.unmatched_exits
                ),
            ));
        }
        out.insert(th, (nodes, b));
    }
    out
}
