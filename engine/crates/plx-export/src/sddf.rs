//! `sddf`: Pablo SDDF ASCII (the trace format of jmpi/JPVS): record descriptors, then definition and event records in global time order.
//!
//! The file starts with `SDDFA` and the stream attributes (`/* "key" "value" ... */ ;;`), then
//! one descriptor per record type (`#tag:`, a `// "description" "..."` attribute, the record
//! name and its typed fields, `};;`), then data records `"Name" { v, v, ... };;`. Character
//! strings are `char` arrays written `[n] { "text" }` with n the byte length plus the
//! terminating NUL; integer arrays `[n] { 1, 2 }`. Timestamps are seconds since the first
//! event (`double`, to the ns); byte counts are `double` (they outgrow an SDDF `int`).
//! Nodes are numbered as in the `tau` export: the MPI rank, else the next free number.

use std::collections::HashMap;
use std::io::{self, Write};

use plx_analysis::{EventKind, GlobalMerge, MessageLink, RegionTable};

use crate::driver::{drive, At, CountedCall, Cx, Envelope, Place, Sink, Step};
use crate::is_sync_or_stream;
use crate::tau::nodes;
use crate::{stream, ExportError, ExportInput, ExportSummary, Exporter, Target};

/// The `sddf` format (docs/exports/sddf.md).
pub struct Sddf;

impl Exporter for Sddf {
    fn name(&self) -> &'static str {
        "sddf"
    }

    fn about(&self) -> &'static str {
        "Pablo SDDF ASCII trace (as jmpi/JPVS write): enter, exit, send, receive, collective, user event records"
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = stream(target, self.name())?;
        drive(
            input,
            &mut SddfSink {
                out,
                origin: 0,
                node_of: HashMap::new(),
                spare: 0,
                node: Vec::new(),
                thread: Vec::new(),
                regions_written: 0,
                events_written: 0,
                counter_names: Vec::new(),
            },
        )
    }
}

/// Fields shared by the event records: where and when.
const WHERE_WHEN: &[(&str, &str, &str)] = &[
    (
        "int",
        "Node",
        "MPI rank, or process number (as in the tau export)",
    ),
    ("int", "Thread", "thread index within the process"),
    ("double", "Timestamp", "seconds since the first event"),
];

/// (tag, name, description, fields after [`WHERE_WHEN`] or, for definitions, all fields).
type Descriptor = (
    u32,
    &'static str,
    &'static str,
    bool,
    &'static [(&'static str, &'static str, &'static str)],
);

/// Every record type, defined once: the descriptors are written from this table.
const DESCRIPTORS: &[Descriptor] = &[
    (
        1,
        "Enter",
        "a region (function, MPI routine, phase) was entered",
        true,
        &[("int", "Region", "Region record")],
    ),
    (
        2,
        "Exit",
        "a region was left",
        true,
        &[("int", "Region", "Region record")],
    ),
    (
        3,
        "Send",
        "an MPI message left (point-to-point)",
        true,
        &[
            (
                "int",
                "Region",
                "enclosing region (the MPI routine), -1 if none",
            ),
            ("int", "Destination Node", "receiving rank"),
            ("int", "Tag", "message tag"),
            ("double", "Bytes", "message size in bytes"),
            (
                "int",
                "Communicator",
                "Communicator record, -1 if undefined",
            ),
            (
                "int",
                "Message",
                "number shared with its Receive record, -1 if unmatched",
            ),
        ],
    ),
    (
        4,
        "Receive",
        "an MPI message arrived; the sender is the matched Send's location",
        true,
        &[
            (
                "int",
                "Region",
                "enclosing region (the MPI routine), -1 if none",
            ),
            ("int", "Source Node", "sending rank"),
            ("int", "Source Thread", "sending thread, -1 if unmatched"),
            ("int", "Tag", "message tag"),
            ("double", "Bytes", "message size in bytes"),
            (
                "int",
                "Communicator",
                "Communicator record, -1 if undefined",
            ),
            (
                "int",
                "Message",
                "number shared with its Send record, -1 if unmatched",
            ),
        ],
    ),
    (
        5,
        "Collective",
        "this rank's part of a collective operation",
        true,
        &[
            (
                "int",
                "Region",
                "enclosing region (the MPI routine), -1 if none",
            ),
            (
                "int",
                "Communicator",
                "Communicator record, -1 if undefined",
            ),
            ("int", "Root", "root rank, -1 if none"),
            ("double", "Bytes Sent", "bytes this rank sent"),
            ("double", "Bytes Received", "bytes this rank received"),
        ],
    ),
    (
        6,
        "User Event",
        "a value of a user event",
        true,
        &[
            ("int", "Event", "User Event Name record"),
            ("double", "Value", "the value"),
        ],
    ),
    (
        7,
        "Region",
        "a region's name",
        false,
        &[
            ("int", "Region", "number used by the event records"),
            ("char", "Kind", "function, user, phase, runtime or mpi"),
            ("char", "Name", "name (demangled)"),
        ],
    ),
    (
        8,
        "User Event Name",
        "a user event's name",
        false,
        &[
            ("int", "Event", "number used by User Event records"),
            ("char", "Name", "name"),
        ],
    ),
    (
        9,
        "Location",
        "a thread of a process",
        false,
        &[
            ("int", "Node", "MPI rank, or process number"),
            ("int", "Thread", "thread index"),
            ("int", "Pid", "process id"),
            ("char", "Host", "host name"),
            ("char", "Name", "thread name"),
        ],
    ),
    (
        10,
        "Communicator",
        "an MPI communicator",
        false,
        &[
            ("int", "Communicator", "number used by message records"),
            ("char", "Name", "description"),
            (
                "int",
                "Ranks",
                "world ranks of its members, in communicator order",
            ),
        ],
    ),
    (
        11,
        "Clock Condition",
        "receives before their sends, and the repair",
        false,
        &[
            ("int", "Messages", "matched messages"),
            (
                "int",
                "Violations Before",
                "receives before their send after the ClockOffset correction",
            ),
            (
                "int",
                "Shifted Receives",
                "receives moved later by the controlled logical clock",
            ),
            (
                "double",
                "Minimum Latency",
                "seconds between a repaired send and receive",
            ),
            (
                "double",
                "Largest Shift",
                "largest shift of a process, seconds",
            ),
            (
                "int",
                "Violations After",
                "receives still before their send",
            ),
        ],
    ),
    (
        12,
        "Counter",
        "a counted call ended: its inclusive count of one event (a counters context)",
        true,
        &[
            ("int", "Region", "Region record (the function counted)"),
            ("int", "Counter", "Counter Name record"),
            ("double", "Value", "the count from the call's entry to its exit"),
        ],
    ),
    (
        13,
        "Counter Name",
        "a counter event's name",
        false,
        &[
            ("int", "Counter", "number used by Counter records"),
            ("char", "Name", "event name (page-faults, task-clock, ...)"),
            ("char", "Unit", "ns for task-clock and cpu-clock, # for counts"),
        ],
    ),
    (
        14,
        "Truncated",
        "the Exit record before it ended a call that was still open when its process was killed: cut at the process's latest event, not returned",
        true,
        &[("int", "Region", "Region record")],
    ),
];

/// A field's declaration: arrays for `char` strings and the communicator's ranks.
fn declaration(ty: &str, name: &str) -> String {
    if ty == "char" || name == "Ranks" {
        format!("{ty}\t\"{name}\"[];")
    } else {
        format!("{ty}\t\"{name}\";")
    }
}

fn descriptors(out: &mut dyn Write) -> io::Result<()> {
    for (tag, name, about, located, fields) in DESCRIPTORS {
        writeln!(out, "#{tag}:")?;
        writeln!(out, "// \"description\" \"{about}\"")?;
        writeln!(out, "\"{name}\" {{")?;
        let all = if *located { WHERE_WHEN } else { &[] };
        for (ty, field, doc) in all.iter().chain(fields.iter()) {
            writeln!(out, "\t// \"{field}\" \"{doc}\"")?;
            writeln!(out, "\t{}", declaration(ty, field))?;
        }
        writeln!(out, "}};;")?;
        writeln!(out)?;
    }
    Ok(())
}

/// Text between quotes: quotes become apostrophes and control characters spaces (SDDF ASCII
/// strings have no escapes).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// A character string value: `[n] { "text" }` (n counts the terminating NUL).
fn string(s: &str) -> String {
    let c = clean(s);
    format!("[{}] {{ \"{c}\" }}", c.len() + 1)
}

/// Seconds to the ns from ns.
fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

fn int(v: Option<u32>) -> String {
    v.map_or_else(|| "-1".to_string(), |v| v.to_string())
}

/// Writes each event as a data record, the definitions it needs first.
struct SddfSink<'a> {
    out: &'a mut dyn Write,
    origin: i64,
    /// Per process: its node as the `tau` export numbers it (a process it does not number
    /// takes the next spare number at its first location).
    node_of: HashMap<usize, u32>,
    spare: u32,
    /// Per location: its node and thread.
    node: Vec<u32>,
    thread: Vec<u32>,
    /// Region and User Event Name records written (the merge names more as it meets them).
    regions_written: usize,
    events_written: usize,
    /// Counter Name records written, by number.
    counter_names: Vec<String>,
}

impl SddfSink<'_> {
    /// The Region records of regions `..upto` not yet written. Those the merge knows before
    /// the stream are written first; one it names on the way, right before the first record
    /// naming it (not when the merge names it: its thread hands names over a batch at a time,
    /// and the records are the same at any `-j`).
    fn regions(&mut self, table: &RegionTable, upto: usize) -> io::Result<()> {
        let regions = table.all();
        while self.regions_written < upto.min(regions.len()) {
            let r = &regions[self.regions_written];
            writeln!(
                self.out,
                "\"Region\" {{ {}, {}, {} }};;",
                self.regions_written,
                string(r.kind.as_str()),
                string(&r.name)
            )?;
            self.regions_written += 1;
        }
        Ok(())
    }

    /// The User Event Name records of user events `..upto` not yet written (as [`Self::regions`]).
    fn user_events(&mut self, names: &[String], upto: usize) -> io::Result<()> {
        while self.events_written < upto.min(names.len()) {
            writeln!(
                self.out,
                "\"User Event Name\" {{ {}, {} }};;",
                self.events_written,
                string(&names[self.events_written])
            )?;
            self.events_written += 1;
        }
        Ok(())
    }

    /// The fields every event record starts with: node, thread, time.
    fn head(&self, at: At) -> (u32, u32, String) {
        let li = at.loc as usize;
        (self.node[li], self.thread[li], seconds(at.ns - self.origin))
    }

    /// The number of counter `name`, its Counter Name record written on first use.
    fn counter(&mut self, name: &str) -> io::Result<usize> {
        if let Some(c) = self.counter_names.iter().position(|x| x == name) {
            return Ok(c);
        }
        self.counter_names.push(name.to_string());
        let c = self.counter_names.len() - 1;
        writeln!(
            self.out,
            "\"Counter Name\" {{ {c}, {}, {} }};;",
            string(name),
            string(crate::counted::unit(name))
        )?;
        Ok(c)
    }
}

impl Sink for SddfSink<'_> {
    const OUTPUT: &'static str = "sddf output";
    const COUNTERS: bool = true;

    /// SDDF (the JPVS record set) has no records for synchronization, stream and team events.
    fn takes(&self, kind: &EventKind) -> bool {
        !is_sync_or_stream(kind)
    }

    /// The stream attributes and the descriptors.
    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        let model = merge.model();
        let out = &mut *self.out;
        writeln!(out, "SDDFA")?;
        writeln!(out, "/*")?;
        writeln!(
            out,
            " * \"generator\" \"Parallax: plx export --format sddf\""
        )?;
        writeln!(
            out,
            " * \"experiment\" \"{}\"",
            clean(&model.dir.display().to_string())
        )?;
        writeln!(
            out,
            " * \"time\" \"seconds since the first event, at {} ns of rank 0's CLOCK_MONOTONIC\"",
            merge.origin_ns()
        )?;
        writeln!(out, " */ ;;")?;
        writeln!(out)?;
        descriptors(out)?;
        self.node_of = nodes(model)
            .into_iter()
            .map(|(n, p)| {
                let i = model
                    .processes
                    .iter()
                    .position(|q| std::ptr::eq(q, p))
                    .expect("a process of the model");
                (i, n)
            })
            .collect();
        self.spare = self.node_of.values().max().map_or(0, |m| m + 1);
        self.origin = merge.origin_ns();
        Ok(())
    }

    /// A Location record.
    fn location(&mut self, place: &Place) -> Step {
        let l = place.location;
        let node = match self.node_of.get(&l.process) {
            Some(&n) => n,
            None => {
                self.spare += 1;
                self.spare - 1
            }
        };
        self.node.push(node);
        self.thread.push(l.thread);
        let p = place.process;
        Ok(writeln!(
            self.out,
            "\"Location\" {{ {node}, {}, {}, {}, {} }};;",
            l.thread,
            p.pid,
            string(&p.host),
            string(&l.name)
        )?)
    }

    /// The communicators, then the regions and user events the merge knows up front.
    fn after_locations(&mut self, merge: &GlobalMerge) -> Step {
        for (i, c) in merge.model().comms.all().iter().enumerate() {
            let ranks: Vec<String> = c.members().iter().map(|r| r.to_string()).collect();
            writeln!(
                self.out,
                "\"Communicator\" {{ {i}, {}, [{}] {{ {} }} }};;",
                string(&c.describe()),
                ranks.len(),
                ranks.join(", ")
            )?;
        }
        self.regions(merge.regions(), usize::MAX)?;
        Ok(self.user_events(merge.user_events(), usize::MAX)?)
    }

    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        self.regions(cx.regions(), region as usize + 1)?;
        let (node, thread, t) = self.head(at);
        Ok(writeln!(self.out, "\"Enter\" {{ {node}, {thread}, {t}, {region} }};;")?)
    }

    fn exit(&mut self, cx: &Cx, at: At, region: u32, _closed: &[u32]) -> Step {
        self.regions(cx.regions(), region as usize + 1)?;
        let (node, thread, t) = self.head(at);
        Ok(writeln!(self.out, "\"Exit\" {{ {node}, {thread}, {t}, {region} }};;")?)
    }

    /// An Exit record per call still open, innermost first; a cut one followed by a
    /// Truncated record.
    fn open_at_end(&mut self, _cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        let (node, thread, t) = self.head(at);
        for &r in calls {
            writeln!(self.out, "\"Exit\" {{ {node}, {thread}, {t}, {r} }};;")?;
            if cut {
                writeln!(self.out, "\"Truncated\" {{ {node}, {thread}, {t}, {r} }};;")?;
            }
        }
        Ok(())
    }

    fn user(&mut self, cx: &Cx, at: At, event: u32, value: f64) -> Step {
        self.user_events(cx.user_events(), event as usize + 1)?;
        let (node, thread, t) = self.head(at);
        let v = if value.is_finite() {
            format!("{value:e}")
        } else {
            "0".to_string()
        };
        Ok(writeln!(self.out, "\"User Event\" {{ {node}, {thread}, {t}, {event}, {v} }};;")?)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, message: Option<u64>) -> Step {
        let (node, thread, t) = self.head(at);
        let here = int(cx.stacks.top(at.loc));
        let msg = message.map_or("-1".to_string(), |m| m.to_string());
        Ok(writeln!(
            self.out,
            "\"Send\" {{ {node}, {thread}, {t}, {here}, {}, {}, {}, {}, {msg} }};;",
            m.peer,
            m.tag,
            m.bytes,
            int(m.comm)
        )?)
    }

    fn recv(&mut self, cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        let (node, thread, t) = self.head(at);
        let here = int(cx.stacks.top(at.loc));
        let (src_thread, msg) = match link {
            Some(l) => (self.thread[l.sender as usize].to_string(), l.id.to_string()),
            None => ("-1".to_string(), "-1".to_string()),
        };
        Ok(writeln!(
            self.out,
            "\"Receive\" {{ {node}, {thread}, {t}, {here}, {}, {src_thread}, {}, {}, {}, {msg} }};;",
            m.peer,
            m.tag,
            m.bytes,
            int(m.comm)
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
        let (node, thread, t) = self.head(at);
        let here = int(cx.stacks.top(at.loc));
        Ok(writeln!(
            self.out,
            "\"Collective\" {{ {node}, {thread}, {t}, {here}, {}, {}, {sent}, {received} }};;",
            int(comm),
            int(root)
        )?)
    }

    fn counted(&mut self, cx: &Cx, at: At, call: &CountedCall) -> Step {
        self.regions(cx.regions(), call.region as usize + 1)?;
        let (node, thread, t) = self.head(at);
        for &(i, name) in call.events {
            let c = self.counter(name)?;
            writeln!(
                self.out,
                "\"Counter\" {{ {node}, {thread}, {t}, {}, {c}, {} }};;",
                call.region, call.values[i]
            )?;
        }
        Ok(())
    }

    /// The regions and user events no record named, then the clock condition.
    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        self.regions(merge.regions(), usize::MAX)?;
        self.user_events(merge.user_events(), usize::MAX)?;
        if let Some(c) = &summary.clock {
            writeln!(
                self.out,
                "\"Clock Condition\" {{ {}, {}, {}, {}, {}, {} }};;",
                c.messages,
                c.violations_before,
                c.shifted_receives,
                seconds(c.min_latency_ns),
                seconds(c.max_shift_ns),
                c.violations_after
            )?;
        }
        Ok(())
    }
}
