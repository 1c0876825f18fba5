//! `text`: one line per event in global time order — time, location, event, region, message details — for eyes and diffs.

use std::io::Write;

use plx_analysis::{GlobalMerge, MessageLink, Window};
use plx_format::SyncKind;

use crate::driver::{drive, At, Cx, Envelope, Place, Sink, Step};
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
        drive(input, &mut TextSink::new(out, input.window))
    }
}

/// Writes each event as a line.
struct TextSink<'a> {
    out: &'a mut dyn Write,
    origin: i64,
    /// The span written.
    window: Window,
    /// Width of the location column.
    width: usize,
    /// Location labels, and padded to `width`.
    labels: Labels,
    padded: Labels,
}

impl<'a> TextSink<'a> {
    fn new(out: &'a mut dyn Write, window: Window) -> TextSink<'a> {
        TextSink {
            out,
            origin: 0,
            window,
            width: 0,
            labels: Labels::new([]),
            padded: Labels::new([]),
        }
    }
}

/// The innermost open region's name at the event's location, `-` for none.
fn here<'c>(cx: &'c Cx, at: At) -> &'c str {
    cx.stacks.top(at.loc).map_or("-", |r| cx.regions().name(r))
}

impl Sink for TextSink<'_> {
    const OUTPUT: &'static str = "text output";

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        header(merge, self.out)?;
        self.origin = merge.origin_ns();
        Ok(())
    }

    fn location(&mut self, place: &Place) -> Step {
        let l = place.location;
        self.labels.push(&l.label());
        Ok(writeln!(self.out, "#   {}", l.long_label())?)
    }

    /// The communicators, the columns' names and the window; the labels padded to the widest.
    fn after_locations(&mut self, merge: &GlobalMerge) -> Step {
        let model = merge.model();
        if !model.comms.all().is_empty() {
            writeln!(self.out, "# communicators:")?;
            for (i, c) in model.comms.all().iter().enumerate() {
                writeln!(self.out, "#   c{i:<7} {}", c.describe())?;
            }
        }
        writeln!(self.out, "# time_ns location event region details")?;
        if self.window != Window::ALL {
            let o = merge.origin_ns();
            let edge = |t: i64| match t {
                i64::MIN | i64::MAX => "-".to_string(),
                t => (t - o).to_string(),
            };
            writeln!(
                self.out,
                "# window: {} to {} ns: the calls open at its start entered there, those open \
                 at its end ended there; messages with both ends inside",
                edge(self.window.start_ns),
                edge(self.window.end_ns)
            )?;
        }
        // `{:<w$}` panics past u16::MAX; a longer label (a hostile name) is not padded
        self.width = self.labels.widest().unwrap_or(3).min(u16::MAX as usize);
        let width = self.width;
        self.padded = self.labels.map(|l| format!("{l:<width$}"));
        Ok(())
    }

    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let name = cx.regions().name(region);
        Ok(writeln!(self.out, "{t:>12} {label:<w$} enter      {name}")?)
    }

    fn exit(&mut self, cx: &Cx, at: At, region: u32, _closed: &[u32]) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let name = cx.regions().name(region);
        Ok(writeln!(self.out, "{t:>12} {label:<w$} exit       {name}")?)
    }

    /// A comment line per location: how many calls, which, where they end and why.
    fn open_at_end(&mut self, cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        if calls.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = calls.iter().map(|&r| cx.regions().name(r)).collect();
        let why = if cut {
            ", the process's latest event: it was killed (truncated)"
        } else if at.ns == self.window.end_ns {
            ", the window's end"
        } else if at.ns == self.window.start_ns {
            ", the window's start"
        } else {
            ", its last event"
        };
        Ok(writeln!(
            self.out,
            "# {}: {} calls still open ({}), ended at {}{why}",
            self.labels.get(at.loc),
            calls.len(),
            names.join(" < "),
            at.ns - self.origin,
        )?)
    }

    fn user(&mut self, cx: &Cx, at: At, event: u32, value: f64) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let name = &cx.user_events()[event as usize];
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} user       {name}  value={value}"
        )?)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, message: Option<u64>) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let msg = message.map_or(String::new(), |m| format!(" msg={m}"));
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} send       {}  to={} tag={} bytes={} comm={}{msg}",
            here(cx, at),
            m.peer,
            m.tag,
            m.bytes,
            comm_token(m.comm)
        )?)
    }

    fn recv(&mut self, cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let (from, msg) = match link {
            Some(l) => (self.labels.get(l.sender).to_string(), format!(" msg={}", l.id)),
            None => (m.peer.to_string(), String::new()),
        };
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} recv       {}  from={from} tag={} bytes={} comm={}{msg}",
            here(cx, at),
            m.tag,
            m.bytes,
            comm_token(m.comm)
        )?)
    }

    fn collective(
        &mut self,
        cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        (sent, received): (u64, u64),
    ) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} collective {}  comm={} root={} sent={sent} received={received}",
            here(cx, at),
            comm_token(comm),
            root.map_or("-".to_string(), |r| r.to_string())
        )?)
    }

    fn acquire(&mut self, cx: &Cx, at: At, object: u32, kind: u8, wait_ns: u64) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} acquire    {}  object={object} kind={} wait_ns={wait_ns}",
            here(cx, at),
            SyncKind::from_u8(kind).as_str()
        )?)
    }

    fn release(&mut self, cx: &Cx, at: At, object: u32, kind: u8) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} release    {}  object={object} kind={}",
            here(cx, at),
            SyncKind::from_u8(kind).as_str()
        )?)
    }

    fn stream(&mut self, cx: &Cx, at: At, send: bool, (stream, end, bytes): (u64, u64, u64)) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        let what = if send { "ssend" } else { "srecv" };
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} {what}      {}  stream={stream:016x} end={end} bytes={bytes}",
            here(cx, at)
        )?)
    }

    fn omp_team(&mut self, cx: &Cx, at: At, region: u32, level: u32, (size, num): (u32, u32)) -> Step {
        let (t, label, w) = (at.ns - self.origin, self.padded.get(at.loc), self.width);
        Ok(writeln!(
            self.out,
            "{t:>12} {label:<w$} team       {}  level={level} size={size} num={num}",
            cx.regions().name(region)
        )?)
    }

    fn end(&mut self, _merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        if let Some(c) = &summary.clock {
            writeln!(self.out, "# {}", c.describe())?;
        }
        Ok(writeln!(self.out, "# {} events", summary.records)?)
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

    fn push(&mut self, label: &str) {
        self.text.push_str(label);
        self.ends.push(self.text.len());
    }

    /// The longest label's length (`None` without labels).
    fn widest(&self) -> Option<usize> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.ends.iter().zip(starts).map(|(e, s)| e - s).max()
    }

    /// Each label through `f`.
    fn map(&self, f: impl Fn(&str) -> String) -> Labels {
        Labels::new((0..self.ends.len() as u32).map(|i| f(self.get(i))))
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

/// The header's lines before the locations'.
fn header(merge: &GlobalMerge, out: &mut dyn Write) -> std::io::Result<()> {
    let base = if merge.model().has_mpi() {
        "rank 0's CLOCK_MONOTONIC, ClockOffset-corrected"
    } else {
        "CLOCK_MONOTONIC"
    };
    writeln!(out, "# Parallax events in global time order")?;
    writeln!(
        out,
        "# time: ns since the first event, at {} ns of {base}",
        merge.origin_ns()
    )?;
    writeln!(out, "# locations:")
}
