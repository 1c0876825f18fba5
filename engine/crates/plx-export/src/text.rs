//! `text`: one line per event in global time order — time, location, event, region, message details — for eyes and diffs.

use std::io::Write;

use plx_analysis::{EventKind, GlobalMerge};
use plx_format::SyncKind;

use crate::nesting::Stacks;
use crate::{stream, ExportError, ExportInput, ExportSummary, Exporter, Target};

/// The `text` format (docs/exports/text.md).
pub struct Text;

impl Exporter for Text {
    fn name(&self) -> &'static str {
        "text"
    }

    fn about(&self) -> &'static str {
        "one line per event in global time order (time, location, event, region, message details)"
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = stream(target, self.name())?;
        let merge = input.merge()?;
        let io = ExportError::io("text output");
        header(&merge, out).map_err(&io)?;
        let width = merge
            .locations()
            .iter()
            .map(|l| l.label().len())
            .max()
            .unwrap_or(3)
            // `{:<w$}` panics past u16::MAX; a longer label (a hostile name) is not padded
            .min(u16::MAX as usize);
        let labels: Vec<String> = merge.locations().iter().map(|l| l.label()).collect();
        let mut stacks = Stacks::new(labels.len());
        let padded = Labels::new(labels.iter().map(|l| format!("{l:<width$}")));
        let labels = Labels::new(labels);
        let mut closed = Vec::new();
        let origin = merge.origin_ns();
        let locations = merge.locations().to_vec();
        let mut cut_warnings = Vec::new();
        let model = merge.model();
        // formatting runs beside the merge (on its own thread with more than one engine thread)
        let (merge, n) = merge.feed(None, |feed| -> Result<u64, ExportError> {
        let mut n = 0u64;
        let mut last = vec![None::<i64>; locations.len()];
        while let Some(e) = feed.next_event() {
            n += 1;
            let loc = e.location;
            last[loc as usize] = Some(e.time_ns);
            let t = e.time_ns - origin;
            let label = padded.get(loc);
            let regions = feed.regions();
            let here = |s: &Stacks| s.top(loc).map_or("-", |r| regions.name(r));
            let r = match e.kind {
                EventKind::Enter { region } => {
                    stacks.enter(loc, region);
                    writeln!(out, "{t:>12} {label:<width$} enter      {}", regions.name(region))
                }
                EventKind::Exit { region } => {
                    closed.clear();
                    stacks.exit(loc, region, &mut closed);
                    writeln!(out, "{t:>12} {label:<width$} exit       {}", regions.name(region))
                }
                EventKind::User { event, value } => writeln!(
                    out,
                    "{t:>12} {label:<width$} user       {}  value={value}",
                    feed.user_events()[event as usize]
                ),
                EventKind::Send {
                    peer,
                    tag,
                    bytes,
                    comm,
                    message,
                } => {
                    let msg = message.map_or(String::new(), |m| format!(" msg={m}"));
                    writeln!(
                        out,
                        "{t:>12} {label:<width$} send       {}  to={peer} tag={tag} bytes={bytes} comm={}{msg}",
                        here(&stacks),
                        comm_token(comm)
                    )
                }
                EventKind::Recv {
                    peer,
                    tag,
                    bytes,
                    comm,
                    message,
                } => {
                    let (from, msg) = match message {
                        Some(m) => (labels.get(m.sender).to_string(), format!(" msg={}", m.id)),
                        None => (peer.to_string(), String::new()),
                    };
                    writeln!(
                        out,
                        "{t:>12} {label:<width$} recv       {}  from={from} tag={tag} bytes={bytes} comm={}{msg}",
                        here(&stacks),
                        comm_token(comm)
                    )
                }
                EventKind::Collective {
                    comm,
                    root,
                    bytes_sent,
                    bytes_recv,
                } => writeln!(
                    out,
                    "{t:>12} {label:<width$} collective {}  comm={} root={} sent={bytes_sent} received={bytes_recv}",
                    here(&stacks),
                    comm_token(comm),
                    root.map_or("-".to_string(), |r| r.to_string())
                ),
                EventKind::Acquire {
                    object,
                    kind,
                    wait_ns,
                } => writeln!(
                    out,
                    "{t:>12} {label:<width$} acquire    {}  object={object} kind={} wait_ns={wait_ns}",
                    here(&stacks),
                    SyncKind::from_u8(kind).as_str()
                ),
                EventKind::Release { object, kind } => writeln!(
                    out,
                    "{t:>12} {label:<width$} release    {}  object={object} kind={}",
                    here(&stacks),
                    SyncKind::from_u8(kind).as_str()
                ),
                EventKind::StreamSend { stream, end, bytes } => writeln!(
                    out,
                    "{t:>12} {label:<width$} ssend      {}  stream={stream:016x} end={end} bytes={bytes}",
                    here(&stacks)
                ),
                EventKind::StreamRecv { stream, end, bytes } => writeln!(
                    out,
                    "{t:>12} {label:<width$} srecv      {}  stream={stream:016x} end={end} bytes={bytes}",
                    here(&stacks)
                ),
                EventKind::OmpTeam {
                    region,
                    level,
                    team_size,
                    thread_num,
                } => writeln!(
                    out,
                    "{t:>12} {label:<width$} team       {}  level={level} size={team_size} num={thread_num}",
                    regions.name(region)
                ),
                // not in a merge without counters
                EventKind::Counted { .. } => Ok(()),
            };
            r.map_err(&io)?;
        }
        // calls still open after a location's last event: where the other exports end them
        // (a killed process's at its latest event, cut there)
        let killed = plx_analysis::merge::killed_ends(model, &locations, &last);
        for (li, own) in last.iter().enumerate() {
            let Some(own) = *own else { continue };
            let open = stacks.close_all(li as u32);
            if open.is_empty() {
                continue;
            }
            let names: Vec<&str> = open.iter().map(|&r| feed.regions().name(r)).collect();
            let end = killed[li].map_or(own, |k| k.max(own)) - origin;
            if killed[li].is_some() {
                let l = &locations[li];
                cut_warnings.push(plx_analysis::rebuild::killed_warning(
                    &model.processes[l.process].path,
                    l.thread,
                    open.len(),
                ));
            }
            let why = if killed[li].is_some() {
                ", the process's latest event: it was killed (truncated)"
            } else {
                ", its last event"
            };
            writeln!(
                out,
                "# {}: {} calls still open ({}), ended at {end}{why}",
                labels.get(li as u32),
                open.len(),
                names.join(" < "),
            )
            .map_err(&io)?;
        }
        Ok(n)
        });
        let n = n?;
        let clock = merge.clock_report();
        if let Some(c) = &clock {
            writeln!(out, "# {}", c.describe()).map_err(&io)?;
        }
        writeln!(out, "# {n} events").map_err(&io)?;
        Ok(ExportSummary {
            records: n,
            files: Vec::new(),
            clock,
            warnings: merge.warnings().iter().cloned().chain(cut_warnings).collect(),
        })
    }
}

/// The locations' labels in one buffer: a label is read per event, and one allocation per
/// location cost a cache miss per event at thousands of locations.
struct Labels {
    text: String,
    ends: Vec<usize>,
}

impl Labels {
    fn new(labels: impl IntoIterator<Item = String>) -> Labels {
        let mut l = Labels {
            text: String::new(),
            ends: Vec::new(),
        };
        for s in labels {
            l.text.push_str(&s);
            l.ends.push(l.text.len());
        }
        l
    }

    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// `c3` for communicator 3 of the experiment, `?` for one without a definition.
pub(crate) fn comm_token(comm: Option<u32>) -> String {
    comm.map_or_else(|| "?".to_string(), |c| format!("c{c}"))
}

fn header(merge: &GlobalMerge, out: &mut dyn Write) -> std::io::Result<()> {
    let model = merge.model();
    writeln!(out, "# Parallax events in global time order")?;
    let base = if model.has_mpi() {
        "rank 0's CLOCK_MONOTONIC, ClockOffset-corrected"
    } else {
        "CLOCK_MONOTONIC"
    };
    writeln!(
        out,
        "# time: ns since the first event, at {} ns of {base}",
        merge.origin_ns()
    )?;
    writeln!(out, "# locations:")?;
    for l in merge.locations() {
        let p = &model.processes[l.process];
        let who = match l.rank {
            Some(r) => format!("rank {r} (pid {} on {})", p.pid, p.host),
            None => format!("pid {} on {}", p.pid, p.host),
        };
        writeln!(
            out,
            "#   {:<8} {who} thread {} \"{}\"",
            l.label(),
            l.thread,
            l.name
        )?;
    }
    if !model.comms.all().is_empty() {
        writeln!(out, "# communicators:")?;
        for (i, c) in model.comms.all().iter().enumerate() {
            writeln!(out, "#   c{i:<7} {}", c.describe())?;
        }
    }
    writeln!(out, "# time_ns location event region details")
}
