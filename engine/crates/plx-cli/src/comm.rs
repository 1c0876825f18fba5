//! `plx comm`: the MPI communication matrix by rank or thread, and the latency/bandwidth fit, as text, CSV or JSON.

use std::collections::BTreeMap;
use std::io::{self, Write};

use plx_analysis::messages::pairs;
use plx_analysis::{
    match_messages, BuildOptions, FitAccumulator, FitNote, Location, MatchSummary, Model,
    PairCounter, PairFit, PairStats,
};
use plx_format::{Direction, Warning};
use serde_json::{json, Value};

use crate::args::{ByArg, ByChoice, ExperimentArgs, Format, OutputArgs, PhaseArg};
use crate::csv::field;
use crate::units::human_bytes;
use crate::CliError;

/// `--by` of `plx comm`: the matrix's rows and columns.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommBy {
    /// One per process (MPI rank; `rank` is taken for it too), from the message statistics of
    /// the profiles.
    #[value(alias = "rank")]
    Process,
    /// One per thread, `rank.thread`, from the trace's matched messages (needs --trace).
    Thread,
}

impl ByChoice for CommBy {
    const DEFAULT: &'static str = "process";
}

/// `--kind` of `plx comm`: which messages.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommKind {
    /// MPI point-to-point messages, between ranks.
    Mpi,
    /// TCP stream traffic the socket wrappers traced (docs/sockets.md), between processes or
    /// threads, MPI or not: connections (a connect and the accept it released), writes and
    /// their bytes (needs --trace).
    Stream,
}

/// `plx comm`.
#[derive(clap::Args, Debug)]
pub struct CommArgs {
    /// The experiment and --app.
    #[command(flatten)]
    pub exp: ExperimentArgs,
    /// --phase: only the messages sent inside it.
    #[command(flatten)]
    pub phase: PhaseArg,
    /// --by: rows and columns per process, or per thread (needs a trace).
    #[command(flatten)]
    pub by: ByArg<CommBy>,
    /// Which messages: MPI's, or the TCP streams' the socket wrappers traced.
    #[arg(long, value_enum, default_value_t = CommKind::Mpi)]
    pub kind: CommKind,
    /// Start-up latency, asymptotic bandwidth and time per byte per sender/receiver pair,
    /// fitted to the trace's matched messages (needs a trace).
    #[arg(long)]
    pub fit: bool,
    /// --format and -o.
    #[command(flatten)]
    pub out: OutputArgs<Format>,
}

/// Everything the outputs show.
struct Comm<'a> {
    args: &'a CommArgs,
    model: &'a Model,
    by_thread: bool,
    /// Rows and columns of the matrix.
    locations: Vec<Location>,
    /// Nonzero pairs by sender, then receiver.
    pairs: Vec<PairStats>,
    /// Where the pairs come from: "message statistics" or "trace".
    source: &'static str,
    /// Matching of the trace, when it was read.
    summary: Option<MatchSummary>,
    /// With --fit.
    fits: Vec<PairFit>,
}

/// Runs `plx comm`.
pub fn comm(args: &CommArgs) -> Result<(), CliError> {
    let model = crate::experiment::open_app(
        &args.exp.dir,
        args.exp.app.name(),
        BuildOptions {
            rebuild_from_trace: true,
            resolve_sources: false,
        },
    )?;
    for w in model.report_warnings() {
        eprintln!("plx: warning: {w}");
    }
    let by_thread = args.by.by == CommBy::Thread;
    let window = match args.phase.spec() {
        Some(spec) => Some(plx_analysis::phase_window(&model, spec)?),
        None => None,
    };
    if args.kind == CommKind::Stream {
        if args.fit {
            return Err(CliError::new(
                crate::error::Exit::Usage,
                "--fit is of MPI messages: it takes no --kind stream".to_string(),
            ));
        }
        let streams = stream_traffic(&args.exp.dir, &model, by_thread, window)?;
        let mut out = args.out.open()?;
        streams_out(args, &streams, &mut out)?;
        out.finish()?;
        return Ok(());
    }
    let mut c = Comm {
        args,
        model: &model,
        by_thread,
        locations: Vec::new(),
        pairs: Vec::new(),
        source: "message statistics",
        summary: None,
        fits: Vec::new(),
    };
    if model.has_mpi() {
        if by_thread || args.fit || window.is_some() {
            let mut counter = PairCounter::new(by_thread);
            let mut fit = FitAccumulator::new(by_thread);
            let summary = match_messages(&model, |m| {
                // in a phase: the messages sent inside it
                if window.is_none_or(|w| w.holds_message_sent_at(m.send_ns.round() as i64)) {
                    counter.add(m);
                    fit.add(m);
                }
            })?;
            for w in &summary.warnings {
                eprintln!("plx: warning: {w}");
            }
            if by_thread || window.is_some() {
                c.pairs = counter.pairs();
                c.source = if window.is_some() {
                    "trace, messages sent in the phase"
                } else {
                    "trace"
                };
            }
            if args.fit {
                c.fits = fit.fits();
            }
            c.summary = Some(summary);
        }
        if !by_thread && window.is_none() {
            c.pairs = pairs(&model, Direction::Sent, false);
        }
    }
    let mut out = args.out.open()?;
    let empty = if args.fit {
        c.fits.is_empty()
    } else {
        c.pairs.is_empty()
    };
    if empty {
        let unmatched = c
            .summary
            .as_ref()
            .map_or(0, |s| s.unmatched_sends() + s.unmatched_receives());
        let msg = if unmatched > 0 {
            format!(
                "no matched MPI messages in {} ({unmatched} sends and receives without a partner)",
                args.exp.dir.display()
            )
        } else if !args.fit
            && model.processes.iter().any(|p| p.has_trace())
            && has_stream_traffic(&args.exp.dir, &model)?
        {
            format!(
                "no MPI messages in {dir}; it holds traced TCP stream traffic: `plx comm --kind stream {dir}` shows it",
                dir = args.exp.dir.display()
            )
        } else if window.is_some() {
            format!(
                "no MPI message of {} was sent inside the window (docs/phases.md)",
                args.exp.dir.display()
            )
        } else {
            format!("no MPI messages in {}", args.exp.dir.display())
        };
        match args.out.format {
            Format::Text => writeln!(out, "{msg}")?,
            _ => eprintln!("plx: {msg}"),
        }
    }
    c.locations = locations(&c);
    match (args.out.format, args.fit) {
        (Format::Text, _) if empty => {}
        (Format::Text, false) => text(&c, &mut out)?,
        (Format::Text, true) => fit_text(&c, &mut out)?,
        (Format::Csv, false) => csv(&c, &mut out)?,
        (Format::Csv, true) => fit_csv(&c, &mut out)?,
        (Format::Json, _) => json(&c, &mut out)?,
    }
    out.finish()?;
    Ok(())
}

/// By rank: every rank of the experiment and every rank messages name; by thread: every thread
/// that sent or received a matched message.
fn locations(c: &Comm) -> Vec<Location> {
    let mut v: Vec<Location> = c
        .pairs
        .iter()
        .flat_map(|p| [p.sender, p.receiver])
        .collect();
    if !c.by_thread {
        v.extend(c.model.ranks().iter().map(|(r, _)| Location::rank(*r)));
    }
    v.sort();
    v.dedup();
    v
}

fn matrix(
    c: &Comm,
    title: &str,
    value: impl Fn(&PairStats) -> u64,
    show: impl Fn(u64) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    let index = |l: Location| c.locations.binary_search(&l).unwrap_or(0);
    let cells: Vec<(usize, usize, u64)> = c
        .pairs
        .iter()
        .map(|p| (index(p.sender), index(p.receiver), value(p)))
        .collect();
    let labels: Vec<String> = c.locations.iter().map(|l| l.to_string()).collect();
    grid(title, "sender\\receiver", &labels, &cells, show, out)
}

/// A square matrix over `labels` of the nonzero `cells` (row, column, value; one cell may come
/// several times: added), with row and column totals.
fn grid(
    title: &str,
    corner: &str,
    labels: &[String],
    nonzero: &[(usize, usize, u64)],
    show: impl Fn(u64) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    let n = labels.len();
    let mut cells = vec![vec![0u64; n]; n];
    for &(i, j, v) in nonzero {
        cells[i][j] += v;
    }
    let row_total: Vec<u64> = cells.iter().map(|r| r.iter().sum()).collect();
    let col_total: Vec<u64> = (0..n).map(|j| cells.iter().map(|r| r[j]).sum()).collect();
    let grand: u64 = row_total.iter().sum();
    let first = labels
        .iter()
        .map(|l| l.len())
        .chain([corner.len(), "total".len()])
        .max()
        .unwrap_or(0)
        // `{:<w$}` panics past u16::MAX; a longer label (a hostile name) is not padded further
        .min(u16::MAX as usize);
    // one width for every column: the widest cell, label or total (zero, most of the cells of
    // a large matrix, formatted once: the text is the n² part of the command)
    let zero = show(0);
    let width = nonzero
        .iter()
        .map(|&(i, j, _)| cells[i][j])
        .chain([0])
        .chain(row_total.iter().copied())
        .chain(col_total.iter().copied())
        .chain([grand])
        .map(|v| show(v).len())
        .chain(labels.iter().map(|l| l.len()))
        .chain(["total".len()])
        .max()
        .unwrap_or(0)
        .min(u16::MAX as usize);
    writeln!(out, "{title}")?;
    write!(out, "{corner:<first$}")?;
    for l in labels {
        write!(out, "  {l:>width$}")?;
    }
    writeln!(out, "  {:>width$}", "total")?;
    for (i, l) in labels.iter().enumerate() {
        write!(out, "{l:<first$}")?;
        for &v in &cells[i] {
            if v == 0 {
                write!(out, "  {zero:>width$}")?;
            } else {
                write!(out, "  {:>width$}", show(v))?;
            }
        }
        writeln!(out, "  {:>width$}", show(row_total[i]))?;
    }
    write!(out, "{:<first$}", "total")?;
    for v in &col_total {
        write!(out, "  {:>width$}", show(*v))?;
    }
    writeln!(out, "  {:>width$}", show(grand))?;
    writeln!(out)
}

fn unit(by_thread: bool) -> &'static str {
    if by_thread {
        "thread"
    } else {
        "rank"
    }
}

fn unmatched_text(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    let Some(s) = &c.summary else {
        return Ok(());
    };
    let (sends, recvs) = (s.unmatched_sends(), s.unmatched_receives());
    if sends + recvs > 0 {
        writeln!(
            out,
            "unmatched: {sends} sends never received, {recvs} receives without a send (see the warnings)"
        )?;
    }
    if !s.ranks_without_trace.is_empty() {
        let r: Vec<String> = s
            .ranks_without_trace
            .iter()
            .map(|r| r.to_string())
            .collect();
        writeln!(out, "ranks without a trace: {}", r.join(" "))?;
    }
    Ok(())
}

fn text(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    let messages: u64 = c.pairs.iter().map(|p| p.messages).sum();
    let bytes: u64 = c.pairs.iter().map(|p| p.bytes).sum();
    let what = if c.by_thread {
        "matched in the trace"
    } else {
        "as counted by the senders"
    };
    writeln!(
        out,
        "communication matrix of {}: {} {}s, {} point-to-point messages, {} ({what})",
        c.model.dir.display(),
        c.locations.len(),
        unit(c.by_thread),
        messages,
        human_bytes(bytes as f64)
    )?;
    writeln!(out)?;
    matrix(
        c,
        "messages (rows: sender, columns: receiver)",
        |p| p.messages,
        |v| v.to_string(),
        out,
    )?;
    matrix(
        c,
        "bytes (rows: sender, columns: receiver)",
        |p| p.bytes,
        |v| human_bytes(v as f64),
        out,
    )?;
    unmatched_text(c, out)
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.decimals$}"))
}

fn fit_text(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    let matched = c.summary.as_ref().map_or(0, |s| s.matched);
    writeln!(
        out,
        "latency and bandwidth per {} pair of {}: least squares of transfer time (receive - send, rank 0's clock) against message size; {} matched messages",
        unit(c.by_thread),
        c.model.dir.display(),
        matched
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>8} {:>8} {:>9} {:>13} {:>16} {:>15} {:>9}  note",
        "sender",
        "receiver",
        "messages",
        "latency (us)",
        "bandwidth (MB/s)",
        "time/byte (us)",
        "R2"
    )?;
    for f in &c.fits {
        let row = format!(
            "{:>8} {:>8} {:>9} {:>13} {:>16} {:>15} {:>9}  {}",
            f.sender.to_string(),
            f.receiver.to_string(),
            f.messages,
            opt(f.latency_us, 3),
            opt(f.bandwidth_mbps, 3),
            opt(f.time_per_byte_us, 6),
            opt(f.r2, 6),
            note_codes(f)
        );
        writeln!(out, "{}", row.trim_end())?;
    }
    for f in &c.fits {
        for n in f.notes() {
            writeln!(
                out,
                "note: {} -> {}: {}",
                f.sender,
                f.receiver,
                explain(f, n)
            )?;
        }
    }
    writeln!(out)?;
    unmatched_text(c, out)
}

fn csv(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "sender,receiver,messages,bytes")?;
    for p in &c.pairs {
        writeln!(
            out,
            "{},{},{},{}",
            field(&p.sender.to_string()),
            field(&p.receiver.to_string()),
            p.messages,
            p.bytes
        )?;
    }
    Ok(())
}

/// A fit's notes as their codes, `;`-separated (empty for a sound fit).
fn note_codes(f: &PairFit) -> String {
    f.notes()
        .iter()
        .map(|n| n.code())
        .collect::<Vec<_>>()
        .join(";")
}

/// R² as the low_r2 note prints it (3 decimals): rounded down, so that a value just under the
/// bound (0.4999) never reads as the bound itself ("R2 = 0.50 < 0.5").
fn r2_shown(r2: f64) -> f64 {
    (r2 * 1000.0).floor() / 1000.0
}

/// What a note means for this fit, in a sentence.
fn explain(f: &PairFit, n: FitNote) -> String {
    let latency = f.latency_us.unwrap_or(0.0);
    match n {
        FitNote::LowR2 => format!(
            "R2 = {:.3} < {}: message size explains little of the transfer times (waiting or noise), so that latency and bandwidth mean nothing",
            r2_shown(f.r2.unwrap_or(0.0)),
            plx_analysis::fit::MEANINGFUL_R2
        ),
        FitNote::NegativeLatency => format!(
            "the fitted latency {latency:.3} us is negative, which no network gives: the line does not describe these messages (waiting or noise in the transfer times)"
        ),
        FitNote::NegativeBandwidth => "transfer time does not grow with message size, so there is no bandwidth to fit (waiting or noise in the transfer times)".to_string(),
        FitNote::LatencyAboveSmallest => format!(
            "the fitted latency {latency:.3} us is more than {} x the median transfer time of the smallest ({} bytes) messages, {:.3} us: the line does not describe the small messages",
            plx_analysis::fit::LATENCY_OVER_SMALLEST,
            f.smallest_bytes,
            f.smallest_median_us.unwrap_or(0.0)
        ),
    }
}

fn fit_csv(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "sender,receiver,messages,latency_us,bandwidth_MBps,time_per_byte_us,r2,note"
    )?;
    for f in &c.fits {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            f.sender,
            f.receiver,
            f.messages,
            opt(f.latency_us, 3),
            opt(f.bandwidth_mbps, 3),
            opt(f.time_per_byte_us, 6),
            opt(f.r2, 6),
            note_codes(f)
        )?;
    }
    Ok(())
}

/// A rank as a number, a thread as `"rank.thread"`.
fn loc(c: &Comm, l: Location) -> Value {
    if c.by_thread {
        json!(l.to_string())
    } else {
        json!(l.rank)
    }
}

fn warning_json(w: &Warning) -> Value {
    json!({
        "file": w.path.display().to_string(),
        "offset": w.offset,
        "kind": w.kind.as_str(),
        "message": w.message,
    })
}

/// Point-to-point messages and bytes per communicator as the senders counted them (their
/// message statistics), in the experiment's communicator order: name, whether it is an
/// intercommunicator, its members as world ranks (an intercommunicator's groups one after the
/// other).
fn communicators(c: &Comm) -> Vec<Value> {
    let mut sent: BTreeMap<Option<u32>, (u64, u64)> = BTreeMap::new();
    for (_, p) in c.model.ranks() {
        for t in &p.threads {
            for s in &t.messages {
                if s.direction != Direction::Sent || s.peer.is_none() || s.count == 0 {
                    continue;
                }
                let e = sent.entry(p.comms.get(&s.comm).copied()).or_default();
                e.0 += s.count;
                e.1 += s.bytes;
            }
        }
    }
    sent.into_iter()
        .map(|(i, (messages, bytes))| match i {
            Some(i) => {
                let info = c.model.comms.get(i);
                json!({
                    "name": info.describe(), "intercommunicator": info.is_inter(),
                    "members": info.members(), "messages": messages, "bytes": bytes,
                })
            }
            None => json!({
                "name": null, "intercommunicator": false, "members": [],
                "messages": messages, "bytes": bytes,
            }),
        })
        .collect()
}

fn json(c: &Comm, out: &mut dyn Write) -> io::Result<()> {
    let pairs: Vec<Value> = c
        .pairs
        .iter()
        .map(|p| {
            json!({
                "sender": loc(c, p.sender), "receiver": loc(c, p.receiver),
                "messages": p.messages, "bytes": p.bytes,
                "min_bytes": p.min_bytes, "mean_bytes": p.mean_bytes(), "max_bytes": p.max_bytes,
            })
        })
        .collect();
    let unmatched = c.summary.as_ref().map(|s| {
        json!({
            "sends": s.unmatched_sends(),
            "receives": s.unmatched_receives(),
            "pairs": s.unmatched.iter().map(|u| json!({
                "sender": u.sender, "receiver": u.receiver, "sends": u.sends, "receives": u.receives,
            })).collect::<Vec<_>>(),
            "ranks_without_trace": s.ranks_without_trace,
        })
    });
    let mut warnings: Vec<Value> = c
        .model
        .report_warnings()
        .into_iter()
        .map(warning_json)
        .collect();
    if let Some(s) = &c.summary {
        warnings.extend(s.warnings.iter().map(warning_json));
    }
    let mut doc = json!({
        "experiment": c.model.dir.display().to_string(),
        "by": unit(c.by_thread),
        "source": c.source,
        "locations": c.locations.iter().map(|l| loc(c, *l)).collect::<Vec<_>>(),
        "pairs": pairs,
        "total": {
            "messages": c.pairs.iter().map(|p| p.messages).sum::<u64>(),
            "bytes": c.pairs.iter().map(|p| p.bytes).sum::<u64>(),
        },
        "matched": c.summary.as_ref().map(|s| s.matched),
        "unmatched": unmatched,
        "communicators": communicators(c),
        "warnings": warnings,
    });
    if c.args.fit {
        doc["fit"] = c
            .fits
            .iter()
            .map(|f| {
                json!({
                    "sender": loc(c, f.sender), "receiver": loc(c, f.receiver),
                    "messages": f.messages, "latency_us": f.latency_us,
                    "bandwidth_MBps": f.bandwidth_mbps, "time_per_byte_us": f.time_per_byte_us,
                    "r2": f.r2, "meaningful": f.meaningful(), "mean_transfer_us": f.mean_transfer_us,
                    "smallest_bytes": f.smallest_bytes, "smallest_median_us": f.smallest_median_us,
                    "notes": f.notes().iter().map(|n| n.code()).collect::<Vec<_>>(),
                })
            })
            .collect();
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// One writer/reader pair of the TCP stream traffic: the locations are indexes into
/// [`Streams::labels`].
#[derive(Default, Clone, Copy)]
struct StreamPair {
    /// Connections: a connect's send of 0 bytes and the accept's receive it released.
    connections: u64,
    /// Writes that moved bytes, each the reader's of its last byte.
    writes: u64,
    /// Their bytes.
    bytes: u64,
}

/// The TCP stream traffic of a trace, between processes or threads.
struct Streams {
    labels: Vec<String>,
    /// (writer, reader) -> counts.
    pairs: BTreeMap<(usize, usize), StreamPair>,
    /// Writes, their bytes and connects no measured location read or accepted (a peer not
    /// measured, bytes never read), by writer.
    unread: BTreeMap<usize, StreamPair>,
}

/// Reads the trace's stream events: per stream (one direction of a connection), its writes and
/// reads by byte offset, each write the reader's that read its last byte; in a phase the writes
/// and connects made inside it.
fn stream_traffic(
    dir: &std::path::Path,
    model: &Model,
    by_thread: bool,
    window: Option<plx_analysis::selection::Window>,
) -> Result<Streams, CliError> {
    let exp = plx_format::Experiment::open(dir).map_err(plx_analysis::AnalysisError::from)?;
    let mut merge = plx_analysis::GlobalMerge::new(model, &exp, Default::default())?;
    let names: Vec<String> = merge
        .locations()
        .iter()
        .map(|l| plx_analysis::location_name::Who::location(l).short(by_thread.then_some(l.thread)))
        .collect();
    let mut labels = names.clone();
    labels.sort();
    labels.dedup();
    let index: Vec<usize> = names
        .iter()
        .map(|n| labels.binary_search(n).unwrap_or(0))
        .collect();
    // per stream: writes (end, bytes, at, time) and reads (end, at)
    type Ends = (Vec<(u64, u64, usize, i64)>, Vec<(u64, usize)>);
    let mut streams: BTreeMap<u64, Ends> = BTreeMap::new();
    while let Some(e) = merge.next_event() {
        let at = index[e.location as usize];
        match e.kind {
            plx_analysis::EventKind::StreamSend { stream, end, bytes } => {
                streams
                    .entry(stream)
                    .or_default()
                    .0
                    .push((end, bytes, at, e.time_ns));
            }
            plx_analysis::EventKind::StreamRecv { stream, end, .. } => {
                streams.entry(stream).or_default().1.push((end, at));
            }
            _ => {}
        }
    }
    for w in merge.warnings() {
        eprintln!("plx: warning: {w}");
    }
    let mut pairs: BTreeMap<(usize, usize), StreamPair> = BTreeMap::new();
    let mut unread: BTreeMap<usize, StreamPair> = BTreeMap::new();
    for (_, (mut writes, mut reads)) in streams {
        writes.sort_by_key(|w| w.0);
        reads.sort_by_key(|r| r.0);
        for (end, bytes, writer, time) in writes {
            if window.is_some_and(|w| !w.holds_message_sent_at(time)) {
                continue;
            }
            // a connect (0 bytes at offset 0) is answered by the accept's 0-byte read; a write
            // by the read that got its last byte (end - 1: the first read ending past it)
            let reader = if bytes == 0 {
                reads.iter().find(|r| r.0 == 0).map(|r| r.1)
            } else {
                let i = reads.partition_point(|r| r.0 < end);
                reads.get(i).map(|r| r.1)
            };
            let p = match reader {
                Some(r) => pairs.entry((writer, r)).or_default(),
                None => unread.entry(writer).or_default(),
            };
            if bytes == 0 {
                if end == 0 {
                    p.connections += 1;
                }
            } else {
                p.writes += 1;
                p.bytes += bytes;
            }
        }
    }
    pairs.retain(|_, p| p.connections + p.writes > 0);
    unread.retain(|_, p| p.connections + p.writes > 0);
    // rows and columns: the locations with traffic
    let mut used: Vec<usize> = pairs.keys().flat_map(|&(w, r)| [w, r]).collect();
    used.extend(unread.keys());
    used.sort();
    used.dedup();
    let renumber = |i: usize| used.binary_search(&i).unwrap_or(0);
    Ok(Streams {
        labels: used.iter().map(|&i| labels[i].clone()).collect(),
        pairs: pairs
            .into_iter()
            .map(|((w, r), p)| ((renumber(w), renumber(r)), p))
            .collect(),
        unread: unread.into_iter().map(|(w, p)| (renumber(w), p)).collect(),
    })
}

/// Whether the trace holds a stream event (a socket wrapper's write or read): read up to the
/// first one.
fn has_stream_traffic(dir: &std::path::Path, model: &Model) -> Result<bool, CliError> {
    let exp = plx_format::Experiment::open(dir).map_err(plx_analysis::AnalysisError::from)?;
    let mut merge = plx_analysis::GlobalMerge::new(model, &exp, Default::default())?;
    while let Some(e) = merge.next_event() {
        if matches!(
            e.kind,
            plx_analysis::EventKind::StreamSend { .. } | plx_analysis::EventKind::StreamRecv { .. }
        ) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn streams_out(args: &CommArgs, s: &Streams, out: &mut dyn Write) -> io::Result<()> {
    let total = |f: fn(&StreamPair) -> u64| s.pairs.values().map(f).sum::<u64>();
    let unread = |f: fn(&StreamPair) -> u64| s.unread.values().map(f).sum::<u64>();
    let by = if args.by.by == CommBy::Thread {
        "thread"
    } else {
        "process"
    };
    match args.out.format {
        Format::Text => {
            if s.pairs.is_empty() && s.unread.is_empty() {
                writeln!(out, "no TCP stream traffic in {}", args.exp.dir.display())?;
                return Ok(());
            }
            writeln!(
                out,
                "stream matrix of {}: {} {}, {} connections, {} writes, {} (TCP streams in the trace, each write the reader's of its last byte)",
                args.exp.dir.display(),
                s.labels.len(),
                if by == "thread" { "thread(s)" } else { "process(es)" },
                total(|p| p.connections),
                total(|p| p.writes),
                human_bytes(total(|p| p.bytes) as f64)
            )?;
            writeln!(out)?;
            let cells = |f: fn(&StreamPair) -> u64| -> Vec<(usize, usize, u64)> {
                s.pairs
                    .iter()
                    .filter(|(_, p)| f(p) > 0)
                    .map(|(&(w, r), p)| (w, r, f(p)))
                    .collect()
            };
            let labels = &s.labels;
            grid(
                "connections (rows: client, columns: server)",
                "client\\server",
                labels,
                &cells(|p| p.connections),
                |v| v.to_string(),
                out,
            )?;
            grid(
                "writes (rows: writer, columns: reader)",
                "writer\\reader",
                labels,
                &cells(|p| p.writes),
                |v| v.to_string(),
                out,
            )?;
            grid(
                "bytes (rows: writer, columns: reader)",
                "writer\\reader",
                labels,
                &cells(|p| p.bytes),
                |v| human_bytes(v as f64),
                out,
            )?;
            if !s.unread.is_empty() {
                writeln!(
                    out,
                    "unread: {} connects no measured accept answered, {} writes ({}) no measured read got",
                    unread(|p| p.connections),
                    unread(|p| p.writes),
                    human_bytes(unread(|p| p.bytes) as f64)
                )?;
            }
        }
        Format::Csv => {
            writeln!(out, "writer,reader,connections,writes,bytes")?;
            for (&(w, r), p) in &s.pairs {
                writeln!(
                    out,
                    "{},{},{},{},{}",
                    field(&s.labels[w]),
                    field(&s.labels[r]),
                    p.connections,
                    p.writes,
                    p.bytes
                )?;
            }
            for (&w, p) in &s.unread {
                writeln!(
                    out,
                    "{},,{},{},{}",
                    field(&s.labels[w]),
                    p.connections,
                    p.writes,
                    p.bytes
                )?;
            }
        }
        Format::Json => {
            let counts = |p: &StreamPair| json!({"connections": p.connections, "writes": p.writes, "bytes": p.bytes});
            let pairs: Vec<Value> = s
                .pairs
                .iter()
                .map(|(&(w, r), p)| {
                    let mut v = counts(p);
                    v["writer"] = json!(s.labels[w]);
                    v["reader"] = json!(s.labels[r]);
                    v
                })
                .collect();
            let unread_rows: Vec<Value> = s
                .unread
                .iter()
                .map(|(&w, p)| {
                    let mut v = counts(p);
                    v["writer"] = json!(s.labels[w]);
                    v
                })
                .collect();
            let doc = json!({
                "experiment": args.exp.dir.display().to_string(),
                "kind": "stream",
                "by": by,
                "locations": s.labels,
                "pairs": pairs,
                "total": {"connections": total(|p| p.connections), "writes": total(|p| p.writes),
                          "bytes": total(|p| p.bytes)},
                "unread": unread_rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::r2_shown;

    #[test]
    fn an_r2_just_under_the_bound_is_not_shown_as_the_bound() {
        assert_eq!(format!("{:.3}", r2_shown(0.498996)), "0.498");
        assert_eq!(format!("{:.3}", r2_shown(0.49999)), "0.499");
        assert_eq!(format!("{:.3}", r2_shown(0.02)), "0.020");
    }
}
