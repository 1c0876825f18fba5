//! The events and messages tables' rows, defined once for the two writers that make them: the Parquet export (`events.parquet`, `messages.parquet`) and the columns in memory ([`crate::columns`], the Python module's tables).
//!
//! [`Rows`] is the [`Sink`] of both: it turns each event of the merged stream into a row — its
//! [`Kind`], its region (an enter's or exit's own, else the innermost open one) and its
//! [`Details`] — and each matched receive into a message row, and hands them to a
//! [`RowWriter`], which only stores them. Which events make rows (region, MPI and
//! synchronization events; not stream bytes, not OpenMP team records) and what each row holds
//! is here and nowhere else.

use plx_analysis::{EventKind, GlobalMerge, MessageLink, TraceLocation};

use crate::driver::{At, Cx, Envelope, Place, Sink, Step};
use crate::ExportSummary;

/// The `kind` column's names, as the text export names them ([`Kind`] indexes them).
pub const KINDS: [&str; 8] = [
    "enter",
    "exit",
    "user",
    "send",
    "recv",
    "collective",
    "acquire",
    "release",
];

/// A column's type: `Str` a name (in memory an id into a dictionary of names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Ty {
    Bool,
    I32,
    I64,
    F64,
    Str,
}

/// A column: (name, type, optional: a row may have no value).
pub type ColumnSpec = (&'static str, Ty, bool);

/// The events table's columns, in order: (name, type, optional). The Parquet export's
/// `events.parquet` and the Python module's `events` table ([`crate::columns::EventColumns::into_columns`])
/// are made from this list.
pub const EVENT_COLUMNS: &[ColumnSpec] = &[
    ("time_ns", Ty::I64, false),
    ("location", Ty::I32, false),
    ("process", Ty::I32, false),
    ("rank", Ty::I32, true),
    ("thread", Ty::I32, false),
    ("kind", Ty::Str, false),
    ("region", Ty::I32, true),
    ("region_name", Ty::Str, true),
    ("peer", Ty::I32, true),
    ("tag", Ty::I32, true),
    ("bytes", Ty::I64, true),
    ("bytes_recv", Ty::I64, true),
    ("comm", Ty::I32, true),
    ("root", Ty::I32, true),
    ("message", Ty::I64, true),
    ("user_event", Ty::Str, true),
    ("value", Ty::F64, true),
    ("object", Ty::I32, true),
    ("sync_kind", Ty::Str, true),
    ("wait_ns", Ty::I64, true),
    ("truncated", Ty::Bool, false),
];

/// The messages table's columns, in order (`messages.parquet`, the Python module's `messages`).
pub const MESSAGE_COLUMNS: &[ColumnSpec] = &[
    ("message", Ty::I64, false),
    ("send_ns", Ty::I64, false),
    ("recv_ns", Ty::I64, false),
    ("sender_location", Ty::I32, false),
    ("sender_process", Ty::I32, false),
    ("sender_rank", Ty::I32, true),
    ("sender_thread", Ty::I32, false),
    ("receiver_location", Ty::I32, false),
    ("receiver_process", Ty::I32, false),
    ("receiver_rank", Ty::I32, true),
    ("receiver_thread", Ty::I32, false),
    ("bytes", Ty::I64, false),
    ("tag", Ty::I32, false),
    ("comm", Ty::I32, true),
];

/// An event row's kind: its index into [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Enter = 0,
    Exit = 1,
    User = 2,
    Send = 3,
    Recv = 4,
    Collective = 5,
    Acquire = 6,
    Release = 7,
}

/// An event row's columns after its location, kind and region: each `None` but where the
/// event has it.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Details {
    /// The other side of a send or receive, a world rank.
    pub peer: Option<i32>,
    pub tag: Option<i32>,
    /// A message's bytes, or a collective's bytes sent.
    pub bytes: Option<i64>,
    /// A collective's bytes received.
    pub bytes_recv: Option<i64>,
    /// Communicator ([`plx_analysis::Model::comms`] index).
    pub comm: Option<u32>,
    /// A collective's root, a world rank.
    pub root: Option<i32>,
    /// A matched message's number (its send and its receive carry the same).
    pub message: Option<i64>,
    /// A user event's id (into the merge's user events) and value.
    pub user: Option<u32>,
    pub value: Option<f64>,
    /// A synchronization object, its [`plx_format::SyncKind`], the time an acquire waited.
    pub object: Option<i32>,
    pub sync_kind: Option<u8>,
    pub wait_ns: Option<i64>,
    /// An exit that ends a call cut by its process's end (killed).
    pub truncated: bool,
}

impl Details {
    fn envelope(m: Envelope, message: Option<u64>) -> Details {
        Details {
            peer: Some(m.peer as i32),
            tag: Some(m.tag),
            bytes: Some(m.bytes as i64),
            comm: m.comm,
            message: message.map(|m| m as i64),
            ..Details::default()
        }
    }
}

/// A writer of the rows [`Rows`] makes, in stream order.
pub(crate) trait RowWriter {
    /// Names the output in I/O errors.
    const OUTPUT: &'static str;

    /// Before the locations.
    fn begin(&mut self, merge: &GlobalMerge) -> Step;

    /// A location of the merge, in its order, before the first row ([`Sink::location`]).
    fn location(&mut self, _place: &Place) -> Step {
        Ok(())
    }

    /// After the locations, before the first row.
    fn after_locations(&mut self) {}

    /// An events row: the event of `kind` at `at` in `region`.
    fn row(&mut self, cx: &Cx, at: At, kind: Kind, region: Option<u32>, d: &Details) -> Step;

    /// A messages row: the matched message `link` received at `at` (before the receive's
    /// events row).
    fn message(&mut self, at: At, m: Envelope, link: MessageLink) -> Step;

    /// A call entered at `at` (the innermost open call), before its enter's row.
    fn entered(&mut self, _at: At, _region: u32) {}

    /// The `n` innermost open calls at `at.loc` ended at `at.ns` (`cut`: by their process's
    /// end), before their exits' rows.
    fn closed(&mut self, _at: At, _n: usize, _cut: bool) {}

    /// After the last row.
    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step;
}

/// The [`Sink`] that makes the tables' rows for a [`RowWriter`].
pub(crate) struct Rows<W>(pub W);

impl<W: RowWriter> Sink for Rows<W> {
    const OUTPUT: &'static str = W::OUTPUT;

    fn takes(&self, kind: &EventKind) -> bool {
        !matches!(
            kind,
            EventKind::StreamSend { .. } | EventKind::StreamRecv { .. } | EventKind::OmpTeam { .. }
        )
    }

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        self.0.begin(merge)
    }

    fn location(&mut self, place: &Place) -> Step {
        self.0.location(place)
    }

    fn after_locations(&mut self, _merge: &GlobalMerge) -> Step {
        self.0.after_locations();
        Ok(())
    }

    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        self.0.entered(at, region);
        self.0
            .row(cx, at, Kind::Enter, Some(region), &Details::default())
    }

    fn exit(&mut self, cx: &Cx, at: At, region: u32, closed: &[u32]) -> Step {
        self.0.closed(at, closed.len(), false);
        self.0
            .row(cx, at, Kind::Exit, Some(region), &Details::default())
    }

    /// An exit row per call still open, innermost first, `truncated` where it was cut.
    fn open_at_end(&mut self, cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        self.0.closed(at, calls.len(), cut);
        let d = Details {
            truncated: cut,
            ..Details::default()
        };
        for &r in calls {
            self.0.row(cx, at, Kind::Exit, Some(r), &d)?;
        }
        Ok(())
    }

    fn user(&mut self, cx: &Cx, at: At, event: u32, value: f64) -> Step {
        let d = Details {
            user: Some(event),
            value: Some(value),
            ..Details::default()
        };
        self.0.row(cx, at, Kind::User, cx.stacks.top(at.loc), &d)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, message: Option<u64>) -> Step {
        let d = Details::envelope(m, message);
        self.0.row(cx, at, Kind::Send, cx.stacks.top(at.loc), &d)
    }

    fn recv(&mut self, cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        if let Some(l) = link {
            self.0.message(at, m, l)?;
        }
        let d = Details::envelope(m, link.map(|l| l.id));
        self.0.row(cx, at, Kind::Recv, cx.stacks.top(at.loc), &d)
    }

    fn collective(
        &mut self,
        cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        (sent, received): (u64, u64),
    ) -> Step {
        let d = Details {
            comm,
            root: root.map(|r| r as i32),
            bytes: Some(sent as i64),
            bytes_recv: Some(received as i64),
            ..Details::default()
        };
        self.0
            .row(cx, at, Kind::Collective, cx.stacks.top(at.loc), &d)
    }

    fn acquire(&mut self, cx: &Cx, at: At, object: u32, kind: u8, wait_ns: u64) -> Step {
        let d = Details {
            object: Some(object as i32),
            sync_kind: Some(kind),
            wait_ns: Some(wait_ns as i64),
            ..Details::default()
        };
        self.0.row(cx, at, Kind::Acquire, cx.stacks.top(at.loc), &d)
    }

    fn release(&mut self, cx: &Cx, at: At, object: u32, kind: u8) -> Step {
        let d = Details {
            object: Some(object as i32),
            sync_kind: Some(kind),
            ..Details::default()
        };
        self.0.row(cx, at, Kind::Release, cx.stacks.top(at.loc), &d)
    }

    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        self.0.end(merge, summary)
    }
}

/// A location's (process, rank, thread) as the tables' columns hold them.
pub(crate) type LocationId = (i32, Option<i32>, i32);

/// Location `l`'s [`LocationId`].
pub(crate) fn location_id(l: &TraceLocation) -> LocationId {
    (l.process as i32, l.rank.map(|r| r as i32), l.thread as i32)
}

/// Per location of `locations`: its [`location_id`].
pub(crate) fn location_ids(locations: &[TraceLocation]) -> Vec<LocationId> {
    locations.iter().map(location_id).collect()
}
