//! `plx waits`: wait states (late sender, wait at barrier, lock contention, ...) per location and call path, and with --causes the delays that caused them; a Cube-like metric tree as text, or CSV/JSON rows.

use std::collections::BTreeMap;
use std::io::{self, Write};

use plx_analysis::sampled::ItemSamples;
use plx_analysis::waits::{CauseEntry, CauseRow, WaitRow};
use plx_analysis::{phase_window, MergeOptions, Pattern, WaitAnalysis, Window};
use serde_json::{json, Value};

use crate::args::{ExperimentArgs, Format, OutputArgs, PhaseArg, SamplesArg};
use crate::csv::field;
use crate::CliError;

/// `plx waits`.
#[derive(clap::Args, Debug)]
pub struct WaitsArgs {
    /// The experiment or session (recorded with `plx run --trace`) and --app: only the waits
    /// of that application; the others are still replayed, as they may cause its waits.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase: only the waits that end in it.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// The delays that caused the waits: per wait pattern and waiting location, the late
    /// location and call path whose excess time caused it, direct or propagated (through
    /// the late location's own waits).
    #[arg(long)]
    pub causes: bool,
    /// --samples.
    #[command(flatten)]
    pub sampled: SamplesArg,
    /// Run as an MPI job (`mpirun -np N plx waits --parallel DIR`, Open MPI or MPICH): each
    /// analysis process merges and replays its own contiguous block of the measured
    /// processes and exchanges the MPI calls' events with the others; process 0 prints what
    /// the serial analysis prints. With --causes, each process finds the causes of its own
    /// locations' waits, given the late locations' accounts by their processes.
    #[arg(long, conflicts_with = "samples")]
    pub parallel: bool,
    /// With --parallel: what each analysis process did, on stderr (its events replayed, the
    /// waits and causes it found, the bytes it exchanged).
    #[arg(long, requires = "parallel")]
    pub stats: bool,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

impl WaitsArgs {
    /// Whether the causes are asked for (--causes, or --samples).
    fn causes(&self) -> bool {
        self.causes || self.sampled.samples.is_some()
    }
}

/// Runs `plx waits`.
pub fn waits(args: &WaitsArgs) -> Result<(), CliError> {
    let (exp, model) =
        crate::experiment::open_traced(&args.exp.dir, args.sampled.samples.is_some())?;
    if args.sampled.samples.is_some() {
        crate::sampled::require(&model, &args.exp.dir)?;
    }
    let app = crate::experiment::app_index(&model, args.exp.app.name())?;
    let window = match args.phase.spec() {
        Some(p) => phase_window(&model, p)?,
        None => Window::ALL,
    };
    let a = if args.parallel {
        let job = crate::par_mpi::Job::start()?;
        let a = parallel(&job, args, &model, &exp, window, app);
        let a = match a {
            Ok(a) => a,
            Err(e) => {
                eprintln!("plx: {}", e.message);
                job.abort(e.code)
            }
        };
        job.finish();
        match a {
            Some(a) => a,
            None => return Ok(()),
        }
    } else if args.sampled.samples.is_some() {
        WaitAnalysis::compute_spans(&model, &exp, window, app, MergeOptions::default())?
    } else {
        WaitAnalysis::compute(
            &model,
            &exp,
            window,
            app,
            args.causes,
            MergeOptions::default(),
        )?
    };
    for w in &a.warnings {
        eprintln!("plx: warning: {w}");
    }
    let rep = Report {
        args,
        a: &a,
        model: &model,
    };
    let mut out = args.out.open()?;
    match (args.out.format, args.causes()) {
        (Format::Text, _) => text(&rep, &mut out)?,
        (Format::Csv, false) => csv(&a, &mut out)?,
        (Format::Csv, true) => causes_csv(&rep, &mut out)?,
        (Format::Json, _) => json_out(&rep, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

/// The analysis under `mpirun`: `Some` on rank 0, which prints it.
fn parallel(
    job: &crate::par_mpi::Job,
    args: &WaitsArgs,
    model: &plx_analysis::Model,
    exp: &plx_format::Experiment,
    window: Window,
    app: Option<u32>,
) -> Result<Option<WaitAnalysis>, CliError> {
    let Some(r) =
        plx_analysis::waits::parallel::compute(model, exp, window, app, args.causes(), job)?
    else {
        return Ok(None);
    };
    if r.serial {
        eprintln!(
            "plx: note: process 0 analysed the experiment alone: a receive is recorded before \
             its send (clocks of several hosts; the merge repairs the clock condition across \
             ranks)"
        );
    }
    if args.stats {
        for (i, s) in r.stats.iter().enumerate() {
            eprintln!(
                "plx: process {i}: {} own events and {} others' replayed, {} wait rows and {} \
                 cause rows found, {} bytes all-gathered, {} bytes in {} items sent",
                s.events,
                s.remote_events,
                s.rows,
                s.causes,
                s.gathered_bytes,
                s.sent_bytes,
                s.items
            );
        }
    }
    Ok(Some(r.analysis))
}

/// What the outputs show.
struct Report<'a> {
    args: &'a WaitsArgs,
    a: &'a WaitAnalysis,
    model: &'a plx_analysis::Model,
}

impl Report<'_> {
    /// With --samples, what the samples say ran in a direct cause.
    fn sampled(&self, c: &CauseEntry) -> Option<ItemSamples> {
        let top = self.args.sampled.samples?;
        self.a.cause_samples(self.model, c, top)
    }

    /// With --samples, what the samples say ran during the waits of `rows`.
    fn sampled_waits(&self, rows: &[&WaitRow]) -> Option<ItemSamples> {
        let top = self.args.sampled.samples?;
        self.a.wait_samples(self.model, rows, top)
    }

    /// `~0.123456 sampled     12 of 40 samples: frames` lines, indented by `indent`.
    fn sampled_lines(&self, s: &ItemSamples, out: &mut impl Write) -> io::Result<()> {
        for sp in &s.paths {
            writeln!(
                out,
                "  {:>12} {:<11} {} of {} samples: {}",
                format!("~{}", s6(sp.estimated_ns as f64)),
                "sampled",
                sp.samples,
                s.samples,
                crate::sampled::frames_text(self.model, sp)
            )?;
        }
        if let Some(rest) = crate::sampled::rest_text(s) {
            let est = format!("~{}", s6(s.rest.2 as f64));
            writeln!(out, "  {est:>12} {:<11} {rest}", "sampled")?;
        }
        Ok(())
    }
}

fn secs(ns: f64) -> f64 {
    ns / 1e9
}

/// Seconds with 6 decimals (what every row prints).
fn s6(ns: f64) -> String {
    format!("{:.6}", secs(ns))
}

fn loc(a: &WaitAnalysis, l: u32) -> String {
    a.locations[l as usize].label()
}

fn csv(a: &WaitAnalysis, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "pattern,location,callpath,wait_s")?;
    for r in &a.rows {
        writeln!(
            out,
            "{},{},{},{}",
            r.pattern.name(),
            field(&loc(a, r.location)),
            field(&a.callpath_name(r.callpath)),
            s6(r.wait_ns as f64)
        )?;
    }
    Ok(())
}

fn causes_csv(rep: &Report, out: &mut impl Write) -> io::Result<()> {
    let a = rep.a;
    writeln!(
        out,
        "pattern,waiting_location,cause_location,cause_callpath,delay_s,kind"
    )?;
    // waits with no partner (a sleep, an I/O wait) have no cause location or call path
    for c in a.cause_table() {
        let (cause, callpath) = c.cause.map_or((String::new(), String::new()), |(l, cp)| {
            (field(&loc(a, l)), field(&a.callpath_name(cp)))
        });
        writeln!(
            out,
            "{},{},{},{},{},{}",
            c.pattern.name(),
            field(&loc(a, c.waiting)),
            cause,
            callpath,
            s6(c.delay_ns),
            c.kind
        )?;
        // --samples: a `sampled` row per path below the cause's call path
        let Some((s, (l, cp))) = rep.sampled(&c).zip(c.cause) else {
            continue;
        };
        for sp in &s.paths {
            let frames = crate::sampled::frames_text(rep.model, sp);
            writeln!(
                out,
                "{},{},{},{},{},sampled",
                c.pattern.name(),
                field(&loc(a, c.waiting)),
                field(&loc(a, l)),
                // (with no measured call open, the sampled frames from the thread's start)
                field(&if cp == plx_format::NONE_U32 {
                    frames
                } else {
                    format!("{} => {frames}", a.callpath_name(cp))
                }),
                s6(sp.estimated_ns as f64),
            )?;
        }
    }
    Ok(())
}

fn cause_json(rep: &Report, c: &CauseEntry) -> Value {
    let a = rep.a;
    let mut v = json!({
        "pattern": c.pattern.name(),
        "waiting_location": loc(a, c.waiting),
        "cause_location": c.cause.map(|(l, _)| loc(a, l)),
        "cause_callpath": c.cause.map(|(_, cp)| a.callpath_name(cp)),
        "delay_s": secs(c.delay_ns),
        "kind": c.kind,
    });
    if let Some(s) = rep.sampled(c) {
        v["samples"] = crate::sampled::json(rep.model, &s);
    }
    v
}

fn json_out(rep: &Report, out: &mut impl Write) -> io::Result<()> {
    let (args, a) = (rep.args, rep.a);
    let rows: Vec<Value> = a
        .rows
        .iter()
        .map(|r| {
            let mut v = json!({
                "pattern": r.pattern.name(),
                "location": loc(a, r.location),
                "callpath": a.callpath_name(r.callpath),
                "wait_s": secs(r.wait_ns as f64),
                "count": r.count,
            });
            if let Some(s) = rep.sampled_waits(&[r]) {
                v["samples"] = crate::sampled::json(rep.model, &s);
            }
            v
        })
        .collect();
    let totals: serde_json::Map<String, Value> = Pattern::ALL
        .iter()
        .map(|&p| (p.name().to_string(), json!(secs(a.total_ns(p) as f64))))
        .collect();
    let mut doc = json!({
        "experiment": args.exp.dir.display().to_string(),
        "events": a.events,
        "totals": totals,
        "rows": rows,
    });
    if args.causes() {
        doc["causes"] = a.cause_table().map(|c| cause_json(rep, &c)).collect();
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The metric tree (time → group → subgroup → pattern, totals in seconds), then each pattern's
/// call paths and locations (and causes).
fn text(rep: &Report, out: &mut impl Write) -> io::Result<()> {
    let (args, a) = (rep.args, rep.a);
    writeln!(
        out,
        "Wait states in {} ({} events replayed)",
        args.exp.dir.display(),
        a.events
    )?;
    let total: i64 = a.rows.iter().map(|r| r.wait_ns).sum();
    writeln!(out)?;
    writeln!(out, "{:<32} {:>12}", "metric", "wait_s")?;
    writeln!(out, "{:<32} {:>12}", "time (waiting)", s6(total as f64))?;
    let mut groups: BTreeMap<(&str, &str), Vec<Pattern>> = BTreeMap::new();
    for p in Pattern::ALL {
        groups.entry(p.group()).or_default().push(p);
    }
    let mut last_group = "";
    // metric-tree order: mpi before threads, point-to-point before collective
    let order = [
        ("mpi", "point-to-point"),
        ("mpi", "collective"),
        ("threads", "pthread"),
        ("threads", "openmp"),
        ("threads", "java"),
        ("sockets", "streams"),
        ("system", "no partner"),
    ];
    for key in order {
        let pats = &groups[&key];
        let sub: i64 = pats.iter().map(|&p| a.total_ns(p)).sum();
        if key.0 != last_group {
            let g: i64 = Pattern::ALL
                .iter()
                .filter(|p| p.group().0 == key.0)
                .map(|&p| a.total_ns(p))
                .sum();
            writeln!(out, "  {:<30} {:>12}", key.0, s6(g as f64))?;
            last_group = key.0;
        }
        writeln!(out, "    {:<28} {:>12}", key.1, s6(sub as f64))?;
        for &p in pats {
            let t = a.total_ns(p);
            if t > 0 {
                writeln!(out, "      {:<26} {:>12}", p.name(), s6(t as f64))?;
            }
        }
    }
    for p in Pattern::ALL {
        let rows: Vec<_> = a.rows.iter().filter(|r| r.pattern == p).collect();
        if rows.is_empty() {
            continue;
        }
        writeln!(out)?;
        writeln!(out, "{}: {} s", p.name(), s6(a.total_ns(p) as f64))?;
        let mut by_cp: BTreeMap<String, (i64, u64, Vec<&WaitRow>)> = BTreeMap::new();
        let mut by_loc: BTreeMap<u32, i64> = BTreeMap::new();
        for r in &rows {
            let e = by_cp.entry(a.callpath_name(r.callpath)).or_default();
            e.0 += r.wait_ns;
            e.1 += r.count;
            e.2.push(r);
            *by_loc.entry(r.location).or_default() += r.wait_ns;
        }
        writeln!(out, "  {:>12} {:>8}  call path", "wait_s", "waits")?;
        let mut cps: Vec<_> = by_cp.into_iter().collect();
        cps.sort_by(|x, y| y.1 .0.cmp(&x.1 .0).then(x.0.cmp(&y.0)));
        for (name, (ns, n, these)) in cps {
            writeln!(out, "  {:>12} {:>8}  {name}", s6(ns as f64), n)?;
            // --samples: what ran during these waits, below the call path that waited
            if let Some(s) = rep.sampled_waits(&these) {
                rep.sampled_lines(&s, out)?;
            }
        }
        writeln!(out, "  {:>12}           location", "wait_s")?;
        for (l, ns) in by_loc {
            writeln!(out, "  {:>12}           {}", s6(ns as f64), loc(a, l))?;
        }
        if args.causes() && !p.has_cause() {
            writeln!(
                out,
                "  {:>12} {:<11} (a wait with no partner: no location caused it)",
                s6(a.total_ns(p) as f64),
                "none"
            )?;
        } else if args.causes() {
            writeln!(
                out,
                "  {:>12} {:<11} {:<10} {:<10} cause call path",
                "delay_s", "kind", "waiting", "cause"
            )?;
            let mut causes: Vec<&CauseRow> = a.causes.iter().filter(|c| c.pattern == p).collect();
            causes.sort_by(|x, y| y.delay_ns.total_cmp(&x.delay_ns));
            // rows under 0.5% of the pattern's total are summed in one line (CSV has them all)
            let floor = a.total_ns(p) as f64 * 0.005;
            let (small, n_small) = causes
                .iter()
                .filter(|c| c.delay_ns < floor)
                .fold((0.0, 0), |(s, n), c| (s + c.delay_ns, n + 1));
            for c in causes.iter().filter(|c| c.delay_ns >= floor) {
                writeln!(
                    out,
                    "  {:>12} {:<11} {:<10} {:<10} {}",
                    s6(c.delay_ns),
                    c.kind.as_str(),
                    loc(a, c.waiting),
                    loc(a, c.cause),
                    a.callpath_name(c.cause_callpath)
                )?;
                if let Some(s) = rep.sampled(&CauseEntry::from(*c)) {
                    rep.sampled_lines(&s, out)?;
                }
            }
            if n_small > 0 {
                writeln!(
                    out,
                    "  {:>12} in {n_small} smaller rows (--format csv lists them)",
                    s6(small)
                )?;
            }
            // waits whose cause was not recorded (a notify the runtime did not see) have no
            // cause rows: said, never given to another location
            let unknown = a.total_ns(p) as f64 - causes.iter().map(|c| c.delay_ns).sum::<f64>();
            if unknown >= 500.0 {
                writeln!(
                    out,
                    "  {:>12} {:<11} (waits whose cause was not recorded)",
                    s6(unknown),
                    "unknown"
                )?;
            }
        }
    }
    if a.rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "no wait states")?;
    }
    Ok(())
}
