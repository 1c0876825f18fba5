//! `plx info`: processes (MPI ranks), threads, clocks and clock offsets, how each process ended, and every warning.

use std::io::{self, Write};

use plx_analysis::{
    clock_condition, BuildOptions, MatchSummary, MergeOptions, Model, ProcessModel, ProfileSource,
    SampleStats, ThreadModel,
};
use plx_format::{ClockKind, ClockSource, ClockSyncSkipped, EndReason, Warning};

use crate::args::{ExperimentArgs, Format, OutputArgs};
use crate::signals::signal_name;
use crate::units::{human_opt, human_time, utc_date};
use crate::CliError;
use plx_analysis::location_name::Who;

/// `plx info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

pub(crate) fn clock_text(p: &ProcessModel) -> String {
    let kind = match p.clock {
        Some(ClockKind::Tsc) => "tsc".to_string(),
        Some(ClockKind::Monotonic) => "monotonic".to_string(),
        Some(ClockKind::MonotonicCoarse) => "coarse (CLOCK_MONOTONIC_COARSE)".to_string(),
        Some(ClockKind::Other(k)) => format!("unknown ({k})"),
        None => "unknown".to_string(),
    };
    let how = match p.clock_source {
        ClockSource::Calibrated => "calibrated",
        ClockSource::ClockRate => "rate measured at start",
        ClockSource::Monotonic => "nanoseconds",
        ClockSource::Assumed => "assumed 1 tick = 1 ns",
    };
    format!("{kind}, {:.3} MHz ({how})", p.ticks_per_second / 1e6)
}

/// Where the thread's profile comes from, in words.
pub(crate) fn profile_source(t: &ThreadModel) -> &'static str {
    match t.source {
        // with --trace the runtime keeps no call tree: the profile is the trace's, and a
        // trace that could not be written leaves none
        ProfileSource::Recorded if t.tree.is_empty() && t.lost_events > 0 => "lost with the trace",
        ProfileSource::Recorded => "recorded",
        ProfileSource::Rebuilt => "rebuilt from trace",
        ProfileSource::Recovered => "recovered from live file",
        ProfileSource::None => "none",
    }
}

/// The process's threads table.
fn thread_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "  threads     {}\n    {:>6} {:>8}  {:<16} {:>12} {:>12} {:>12} {:>8}  profile",
        p.threads.len(),
        "thread",
        "tid",
        "name",
        "cpu",
        "wall",
        "trace events",
        "lost"
    )?;
    for t in &p.threads {
        let source = profile_source(t);
        let events = t
            .trace_events
            .map_or_else(|| "-".to_string(), |e| e.to_string());
        writeln!(
            out,
            "    {:>6} {:>8}  {:<16} {:>12} {:>12} {:>12} {:>8}  {}",
            t.thread,
            t.tid.map_or_else(|| "-".to_string(), |x| x.to_string()),
            t.name,
            human_opt(t.cpu_s),
            human_opt(t.wall_s),
            events,
            t.lost_events,
            source
        )?;
    }
    Ok(())
}

/// How the process ended, in words.
pub fn end_text(p: &ProcessModel) -> String {
    match p.end {
        None if still_running(p) => {
            "still running (no ProcessEnd yet: a process that outlived its plx run, such as a \
             daemon; what it writes is complete once it ends)"
                .to_string()
        }
        None => "did not finish (no ProcessEnd: killed or crashed while writing)".to_string(),
        Some(e) => match e.reason {
            EndReason::Exit => format!("exited with status {}", e.status),
            EndReason::Signal => {
                format!("killed by signal {} ({})", e.status, signal_name(e.status))
            }
            EndReason::Exec => "replaced by exec()".to_string(),
            EndReason::MpiAbort => format!("called MPI_Abort with error code {}", e.status),
            EndReason::Detached => "detached by plx detach (the process went on)".to_string(),
            EndReason::Other(r) => format!("ended (reason {r}, status {})", e.status),
        },
    }
}

/// Is process `p` of this host still running: its pid is alive here (not a zombie) and started
/// within a second of the process's start (never another process that took the pid since).
fn still_running(p: &ProcessModel) -> bool {
    let Some(start_ns) = p.start_realtime_ns else {
        return false;
    };
    let mut host = [0u8; 256];
    // SAFETY: gethostname writes at most the buffer's length into it
    if unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len() - 1) } != 0 {
        return false;
    }
    let len = host.iter().position(|&b| b == 0).unwrap_or(0);
    if p.host.as_bytes() != &host[..len] {
        return false;
    }
    let started = || -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", p.pid)).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        if rest.starts_with('Z') || rest.starts_with('X') {
            return None; // ended, its parent has not yet waited for it
        }
        let ticks: f64 = rest.split(' ').nth(19)?.parse().ok()?;
        let boot: f64 = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        // SAFETY: sysconf has no preconditions
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        Some(boot + ticks / hz)
    };
    started().is_some_and(|s| (s - start_ns as f64 / 1e9).abs() < 1.5)
}

/// `+12.500 us at init (rtt 3.000 us), ...` of the ClockOffset records.
fn offsets_text(p: &ProcessModel) -> String {
    let mut text = p
        .clock_offsets
        .iter()
        .map(|o| {
            format!(
                "{:+.3} us at {} (rtt {:.3} us)",
                o.offset_ns as f64 / 1e3,
                o.when.as_str(),
                o.rtt_ns as f64 / 1e3
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    if let Some((which, ns)) = p.offsets.moved {
        let (this, other) = if which == 1 {
            ("finalize", "init")
        } else {
            ("init", "finalize")
        };
        text.push_str(&format!(
            "; {this}'s taken as {:+.3} us (within half its rtt, the nearest to {other}'s \
             with at most {} ppm drift)",
            ns / 1e3,
            plx_format::clock::MAX_DRIFT * 1e6
        ));
    }
    text
}

/// Why the process has no clock offset to rank 0, when the runtime skipped the exchange
/// (the text's "not measured" line, the JSON's `clock_sync_skipped`).
pub(crate) fn sync_skipped(p: &ProcessModel) -> Option<&ClockSyncSkipped> {
    p.clock_sync_skipped
        .as_ref()
        .filter(|_| p.clock_offsets.is_empty())
}

/// How many of the job's ranks marked themselves measured; `None` when unknown (PLX_JOB unset).
pub(crate) fn measured_ranks(c: &ClockSyncSkipped) -> Option<u32> {
    (c.marked > 0).then_some(c.marked)
}

/// A sampled thread's samples lost, for every reason.
pub(crate) fn samples_lost(s: &SampleStats) -> u64 {
    s.lost()
}

/// A sampled thread's samples stamped with their times (`None`: its process has no trace, so
/// the runtime stamped none): each stamp that names a frame of the thread's sample tree.
pub(crate) fn samples_stamped(p: &ProcessModel, t: &ThreadModel) -> Option<u64> {
    (t.samples.is_some() && p.has_trace()).then_some(t.sample_times.len() as u64)
}

fn mpi_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    if let Some(m) = &p.mpi {
        if p.rank_base > 0 {
            writeln!(
                out,
                "  rank        {} of {} in its application, {} in the session (thread level {})",
                m.rank - p.rank_base,
                m.size,
                m.rank,
                m.thread_level.as_str()
            )?;
        } else {
            writeln!(
                out,
                "  rank        {} of {} (thread level {})",
                m.rank,
                m.size,
                m.thread_level.as_str()
            )?;
        }
        // one line: MPICH's version string holds a tab ("MPICH Version:\t4.0.2")
        let library: Vec<&str> = m.library.split_whitespace().collect();
        writeln!(out, "  MPI library {}", library.join(" "))?;
    }
    if !p.clock_offsets.is_empty() {
        writeln!(out, "  clock offset to rank 0: {}", offsets_text(p))?;
    } else if let Some(c) = sync_skipped(p) {
        let marked = match measured_ranks(c) {
            None => "which ranks are measured is unknown (PLX_JOB unset)".to_string(),
            Some(n) => format!("{n} of {} ranks measured", c.size),
        };
        writeln!(out, "  clock offset to rank 0: not measured ({marked})")?;
    }
    if !p.comms.is_empty() {
        writeln!(out, "  communicators {}", p.comms.len())?;
    }
    Ok(())
}

fn process(p: &ProcessModel, model: &Model, out: &mut dyn Write) -> io::Result<()> {
    if !p.measured {
        writeln!(
            out,
            "process {}: not measured (no instrumented code)",
            Who::process(model, p).long(None)
        )?;
        writeln!(out, "  file        {}", p.path.display())?;
        writeln!(out, "  argv        {}", p.command_line())?;
        writeln!(out, "  ended       {}", end_text(p))?;
        probe_lines(p, out)?; // why nothing was measured, when no probe could be inserted
        return writeln!(out);
    }
    writeln!(out, "process {}", Who::process(model, p).long(None))?;
    if model.is_session() {
        writeln!(out, "  application {}", p.app_name(model))?;
    }
    mpi_lines(p, out)?;
    writeln!(out, "  file        {}", p.path.display())?;
    writeln!(out, "  executable  {}", p.executable)?;
    writeln!(out, "  argv        {}", p.command_line())?;
    if let Some(pp) = p.ppid {
        writeln!(out, "  parent pid  {pp}")?;
    }
    if let Some(ns) = p.start_realtime_ns {
        writeln!(out, "  started     {}", utc_date(ns))?;
    }
    writeln!(out, "  clock       {}", clock_text(p))?;
    writeln!(out, "  ended       {}", end_text(p))?;
    if !p.version.is_empty() {
        writeln!(out, "  written by  parallax {}", p.version)?;
    }
    if let Some(f) = &p.filter {
        writeln!(out, "  filter      {}", f.trim_end().replace('\n', "; "))?;
    }
    writeln!(
        out,
        "  regions     {} ({} excluded by the filter)",
        p.region_count, p.excluded_regions
    )?;
    thread_lines(p, out)?;
    sample_lines(p, out)?;
    java_lines(p, out)?;
    probe_lines(p, out)?;
    omp_lines(p, model, out)?;
    if !p.throttled.is_empty() {
        writeln!(out, "  throttled")?;
        for t in &p.throttled {
            writeln!(
                out,
                "    {} after {} calls ({})",
                model.regions.name(t.region),
                t.calls,
                human_time(t.inclusive_s)
            )?;
        }
    }
    if !p.counters.is_empty() {
        writeln!(out, "  counters    (plx report --counters)")?;
        for s in p.counters.sets.values() {
            let events: Vec<String> = s
                .events
                .iter()
                .zip(&s.refused)
                .map(|(e, r)| {
                    if *r == 0 {
                        e.clone()
                    } else {
                        format!("{e} (refused: errno {r})")
                    }
                })
                .collect();
            let what = match s.context {
                None => "whole threads".to_string(),
                Some(_) if s.multiplexed() => format!(
                    "{} (set {} of {}, every {} calls)",
                    s.glob,
                    s.position + 1,
                    s.sets_in_context,
                    s.every
                ),
                Some(_) => s.glob.clone(),
            };
            writeln!(
                out,
                "    set {} epoch {}: {what}: {}",
                s.set,
                s.epoch,
                events.join(", ")
            )?;
            if let Some(r) = p.counters.read_paths.get(&s.set) {
                let paths: Vec<String> = s
                    .events
                    .iter()
                    .zip(&r.events)
                    .map(|(e, by)| {
                        let how: Vec<String> = by
                            .iter()
                            .map(|(&path, &n)| {
                                let name = plx_analysis::counters::read_path_name(path);
                                if by.len() == 1 {
                                    name.to_string()
                                } else {
                                    format!("{name} in {n} threads")
                                }
                            })
                            .collect();
                        format!("{e} {}", how.join(" / "))
                    })
                    .collect();
                writeln!(
                    out,
                    "      read: {} ({} threads; {} readings with rdpmc, {} with read())",
                    paths.join(", "),
                    r.threads,
                    r.rdpmc_readings,
                    r.syscall_readings
                )?;
            }
        }
    }
    writeln!(out)
}

/// Probes (docs/dynamic.md): what was probed, over which intervals, and what was skipped and why.
fn probe_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    if p.probe_sites.is_empty() {
        return Ok(());
    }
    // a function inserted again (plx ctl) has a site per insert: one line each; one skipped
    // and probed later is probed
    let mut probed: Vec<&plx_format::ProbeSite> = Vec::new();
    for s in p.probe_sites.iter().filter(|s| s.skipped == 0) {
        if !probed.iter().any(|q| q.address == s.address) {
            probed.push(s);
        }
    }
    let mut skipped: Vec<&plx_format::ProbeSite> = Vec::new();
    for s in p.probe_sites.iter().rev().filter(|s| s.skipped != 0) {
        if !probed
            .iter()
            .chain(skipped.iter())
            .any(|q| q.address == s.address)
        {
            skipped.push(s);
        }
    }
    skipped.reverse();
    writeln!(
        out,
        "  probes      {} probed, {} skipped",
        probed.len(),
        skipped.len()
    )?;
    let start = p.start_ticks().unwrap_or(0);
    let at = |ticks: u64| p.clock_map.seconds(ticks) - p.clock_map.seconds(start);
    for s in &probed {
        let mut spans = Vec::new();
        let mut open: Option<f64> = None;
        for c in p.probe_changes.iter().filter(|c| c.address == s.address) {
            match (c.inserted, open) {
                (1, None) => open = Some(at(c.ticks)),
                (0, Some(from)) => {
                    spans.push(format!("{}–{}", human_time(from), human_time(at(c.ticks))));
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(from) = open {
            spans.push(format!("{}–end", human_time(from)));
        }
        writeln!(
            out,
            "              {:<24} measured {}",
            s.name,
            spans.join(", ")
        )?;
    }
    for s in &skipped {
        writeln!(out, "              {:<24} skipped: {}", s.name, s.reason)?;
    }
    Ok(())
}

/// The OpenMP teams each thread was part of (docs/openmp.md): region, level, its thread number
/// and the team's size, how many times.
fn omp_lines(p: &ProcessModel, model: &Model, out: &mut dyn Write) -> io::Result<()> {
    if p.omp_teams.is_empty() {
        return Ok(());
    }
    writeln!(out, "  OpenMP teams")?;
    writeln!(
        out,
        "    {:>6}  {:<28} {:>5} {:>10} {:>9} {:>8}",
        "thread", "parallel region", "level", "thread num", "team size", "times"
    )?;
    for t in &p.omp_teams {
        let region = match p.region_map.get(&t.region) {
            Some(&g) => model.regions.get(g).name.clone(),
            None if t.region == plx_format::NONE_U32 => "(teams past the first 64)".to_string(),
            None => format!("region {}", t.region),
        };
        writeln!(
            out,
            "    {:>6}  {:<28} {:>5} {:>10} {:>9} {:>8}",
            t.thread, region, t.level, t.thread_num, t.team_size, t.count
        )?;
    }
    writeln!(
        out,
        "    loop@ regions count a thread's entries, not its iterations: no runtime reports those \
         (libgomp's schedule(static) loops are computed inline by the compiler); a taskloop's \
         are the user event \"omp taskloop iterations\" (libgomp)"
    )?;
    Ok(())
}

/// Call-stack sampling (`plx run --sample`): per sampled thread, samples taken, stamped (with
/// a trace) and lost.
fn sample_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    let sampled: Vec<_> = p
        .threads
        .iter()
        .filter_map(|t| t.samples.map(|s| (t.thread, s, samples_stamped(p, t))))
        .collect();
    let Some((_, first, _)) = sampled.first() else {
        return Ok(());
    };
    writeln!(
        out,
        "  samples     every {} of CPU time per thread (plx report: samples, ~estimated times)",
        human_time(first.period_ns as f64 * 1e-9)
    )?;
    for (thread, s, stamped) in &sampled {
        let lost = samples_lost(s);
        write!(out, "    thread {thread}: {} samples, ", s.samples)?;
        if let Some(n) = stamped {
            write!(out, "{n} stamped, ")?;
        }
        write!(out, "{lost} lost")?;
        if lost > 0 {
            write!(
                out,
                " ({} with the sample tree full, {} in the dynamic loader",
                s.lost_full, s.lost_loader
            )?;
            if s.recovered {
                write!(out, ", {} not kept on the disk", s.lost_not_kept)?;
            }
            write!(out, ")")?;
        }
        if s.recovered {
            write!(
                out,
                "; recovered from its live file (the process was killed before writing them)"
            )?;
        }
        writeln!(out)?;
    }
    for c in &p.sample_signals {
        let why = if c.reason == 2 {
            "the program is a Go program".to_string()
        } else {
            format!(
                "the program replaced the handler of signal {} by the raw rt_sigaction system call",
                c.replaced
            )
        };
        writeln!(
            out,
            "    sampling signal: {why}; samples came by signal {} after",
            c.signal
        )?;
    }
    let j = &p.jit_code;
    if j.methods + j.generated > 0 {
        writeln!(
            out,
            "    jvm code    {} compiled methods ({} freed), {} pieces of code the JVM generated \
             (sampled frames in them named)",
            j.methods, j.freed, j.generated
        )?;
    }
    Ok(())
}

/// The Java agent's part (docs/java.md): what it rewrote, what that cost, what it never measures.
fn java_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    java_thread_lines(p, out)?;
    if p.java_classes.is_empty() {
        return Ok(());
    }
    let rewritten: Vec<_> = p.java_classes.iter().filter(|c| c.flags & 1 == 0).collect();
    let methods: u64 = rewritten.iter().map(|c| u64::from(c.methods)).sum();
    let nanos: u64 = p.java_classes.iter().map(|c| c.nanos).sum();
    let per_method = if methods > 0 {
        nanos as f64 / methods as f64 * 1e-9
    } else {
        0.0
    };
    writeln!(
        out,
        "  java        {} classes rewritten, {} methods, {} instrumenting ({} per method)",
        rewritten.len(),
        methods,
        human_time(nanos as f64 * 1e-9),
        human_time(per_method)
    )?;
    if let Some(c) = p.java_classes.iter().max_by_key(|c| c.nanos) {
        writeln!(
            out,
            "              costliest: {} ({} methods, {})",
            c.name,
            c.methods,
            human_time(c.nanos as f64 * 1e-9)
        )?;
    }
    for c in p.java_classes.iter().filter(|c| c.flags & 1 != 0) {
        writeln!(out, "              not rewritten (error): {}", c.name)?;
    }
    writeln!(
        out,
        "              not measured: JDK classes (java, javax, jdk, sun, com.sun) unless the filter includes them, classes loaded before the agent, hidden classes (lambda proxies)"
    )
}

/// Every thread of the JVM (JavaThread records), in the order first seen, and whether a thread
/// of that name ran measured code (as the paper's Figure 2 lists the JVM's own threads).
fn java_thread_lines(p: &ProcessModel, out: &mut dyn Write) -> io::Result<()> {
    let mut names: Vec<&str> = Vec::new();
    for t in &p.java_threads {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    if names.is_empty() {
        return Ok(());
    }
    writeln!(out, "  jvm threads {}", names.len())?;
    for name in names {
        let measured = p
            .threads
            .iter()
            .any(|t| t.name == name && !t.tree.is_empty());
        let what = if measured {
            "measured"
        } else {
            "running no measured code"
        };
        writeln!(out, "              {name:<32} {what}")?;
    }
    Ok(())
}

/// The MPI line of the header; with traces, matches their messages (for the warnings).
/// The threads of the measured processes: a process not measured (a launcher, a shell that
/// only started the program) has none that counts, whatever the runtime wrote of it.
pub(crate) fn measured_threads(model: &Model) -> usize {
    model
        .processes
        .iter()
        .filter(|p| p.measured)
        .map(|p| p.threads.len())
        .sum()
}

/// `N process(es) not measured (no instrumented code)`, when there are such processes.
fn unmeasured_line(model: &Model, out: &mut dyn Write) -> io::Result<()> {
    let unmeasured = model.processes.iter().filter(|p| !p.measured).count();
    if unmeasured > 0 {
        writeln!(
            out,
            "{unmeasured} process(es) not measured (no instrumented code)"
        )?;
    }
    Ok(())
}

fn mpi_summary(model: &Model, out: &mut dyn Write) -> io::Result<Option<MatchSummary>> {
    if !model.has_mpi() {
        return Ok(None);
    }
    let ranks = model.ranks();
    let traced = ranks.iter().filter(|(_, p)| p.has_trace()).count();
    // one world per application: a session's applications each have their own
    let mut worlds: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    for (_, p) in &ranks {
        if let Some(m) = &p.mpi {
            let w = worlds.entry(p.app).or_insert(0);
            *w = (*w).max(m.size);
        }
    }
    let size: u32 = worlds.values().sum();
    let apps_note = if worlds.len() > 1 {
        format!(
            " ({} applications' worlds, ranks numbered one after the other)",
            worlds.len()
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "MPI: {} rank(s) of a world of {}, {} communicator(s), {} rank(s) traced{}",
        ranks.len(),
        size,
        model.comms.all().len(),
        traced,
        apps_note
    )?;
    let inter: Vec<String> = model
        .comms
        .all()
        .iter()
        .filter(|c| c.is_inter())
        .map(|c| c.describe())
        .collect();
    if !inter.is_empty() {
        writeln!(out, "intercommunicators: {}", inter.join(", "))?;
    }
    unmeasured_line(model, out)?;
    if traced == 0 {
        return Ok(None);
    }
    // matching and the clock condition in one pass over the messages
    let clock = clock_condition(model, MergeOptions::default());
    let summary = clock.as_ref().map(|c| {
        let mut s = c.matching.clone();
        s.warnings.extend(c.warnings.iter().cloned());
        s
    });
    if let Some(s) = &summary {
        writeln!(
            out,
            "messages in the traces: {} matched, {} sends never received, {} receives without a send, {} collective events",
            s.matched,
            s.unmatched_sends(),
            s.unmatched_receives(),
            s.collectives
        )?;
    }
    if let Some(c) = &clock {
        writeln!(out, "{}", c.report.describe())?;
    }
    Ok(summary)
}

/// What `plx info` says of the whole experiment, before and after the processes.
pub(crate) struct Summary {
    /// A session's applications (`NAME (compare, shifted +S s)` for one in comparison mode).
    pub apps: Option<Vec<String>>,
    /// The MPI summary's lines: ranks and world, intercommunicators, processes not measured,
    /// messages matched, the clock condition.
    pub mpi_lines: Vec<String>,
    /// The trace's message matching.
    pub matching: Option<MatchSummary>,
    /// Every warning, the throttled functions' last.
    pub warnings: Vec<String>,
    /// The same for the text: a kind shared by many processes' warnings in one line
    /// (plx_format::summary_lines).
    pub warning_lines: Vec<String>,
}

fn summary(model: &Model) -> io::Result<Summary> {
    let apps = model.is_session().then(|| {
        model
            .apps
            .iter()
            .enumerate()
            .filter(|(i, _)| model.processes.iter().any(|p| p.app == *i as u32))
            .map(|(_, a)| {
                if a.compare {
                    format!(
                        "{} (compare, shifted {:+.6} s)",
                        a.name,
                        a.shift_ns as f64 / 1e9
                    )
                } else {
                    a.name.clone()
                }
            })
            .collect()
    });
    let mut lines = Vec::new();
    let matching = mpi_summary(model, &mut lines)?;
    let mpi_lines = String::from_utf8_lossy(&lines)
        .lines()
        .map(str::to_string)
        .collect();
    let all: Vec<&Warning> = model
        .warnings
        .iter()
        .chain(matching.iter().flat_map(|s| s.warnings.iter()))
        .collect();
    let mut warnings: Vec<String> = all.iter().map(|w| w.to_string()).collect();
    let mut warning_lines = plx_format::summary_lines(all);
    for p in &model.processes {
        for t in &p.throttled {
            warning_lines.push(format!(
                "{}: {} throttled after {} calls: no longer measured",
                p.path.display(),
                model.regions.name(t.region),
                t.calls
            ));
            warnings.push(format!(
                "{}: {} throttled after {} calls: no longer measured",
                p.path.display(),
                model.regions.name(t.region),
                t.calls
            ));
        }
    }
    Ok(Summary {
        apps,
        mpi_lines,
        matching,
        warnings,
        warning_lines,
    })
}

/// Runs `plx info`.
pub fn info(args: &InfoArgs) -> Result<(), CliError> {
    let model = crate::experiment::open_app(
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions {
            rebuild_from_trace: true,
            resolve_sources: false,
        },
    )?;
    let s = summary(&model)?;
    let mut out = args.out.open()?;
    match args.out.format {
        Format::Text => text(&model, &s, &mut out)?,
        Format::Json => crate::info_data::json(&model, &s, &mut out)?,
        Format::Csv => crate::info_data::csv(&model, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

fn text(model: &Model, s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "experiment {}", model.dir.display())?;
    writeln!(
        out,
        "{} process image(s), {} thread(s), {} distinct region(s)",
        model.processes.len(),
        measured_threads(model),
        model.regions.all().len()
    )?;
    if let Some(apps) = &s.apps {
        writeln!(
            out,
            "session of {} application(s): {}",
            apps.len(),
            apps.join(", ")
        )?;
    }
    for l in &s.mpi_lines {
        writeln!(out, "{l}")?;
    }
    if !model.has_mpi() {
        // with MPI, the line is the MPI summary's
        unmeasured_line(model, out)?;
    }
    writeln!(out)?;
    for p in &model.processes {
        process(p, model, out)?;
    }
    if s.warning_lines.is_empty() {
        writeln!(out, "warnings: none")?;
    } else {
        writeln!(out, "warnings:")?;
        for w in &s.warning_lines {
            writeln!(out, "  {w}")?;
        }
    }
    Ok(())
}
