//! `otf2`: an OTF2 archive (Score-P's trace format, for Vampir, Scalasca, otf2-print), written by the official OTF2 C library.
//!
//! The merged stream is written event by event through the library's event writers (one per
//! location, [`events`]), then the definitions ([`defs`]; docs/exports/otf2.md has the
//! mapping). The archive is laid out as Score-P lays it out: `OUT/traces.otf2` (the anchor
//! file), `OUT/traces.def` (global definitions) and `OUT/traces/` (per location `N.evt` and
//! `N.def`).

mod archive;
mod defs;
mod events;
mod ffi;
mod refs;
mod samples;
mod starts;

use std::path::Path;
use std::ptr;

use plx_analysis::{EventKind, GlobalMerge, MessageLink};

use crate::driver::{drive, At, CountedCall, Cx, Envelope, Place, Sink, Step};
use crate::{ExportError, ExportInput, ExportSummary, Exporter, OutputKind, Target};
use archive::Archive;
use events::Events;
use starts::Starts;
use ffi::*;

/// The `otf2` format (docs/exports/otf2.md).
pub struct Otf2;

impl Exporter for Otf2 {
    fn name(&self) -> &'static str {
        "otf2"
    }

    fn about(&self) -> &'static str {
        "OTF2 archive (Vampir, Scalasca, otf2-print), written with the official OTF2 library"
    }

    fn output(&self) -> OutputKind {
        OutputKind::Directory
    }

    fn needs_sources(&self) -> bool {
        true
    }

    fn export(
        &self,
        input: &ExportInput,
        target: Target<'_>,
    ) -> Result<ExportSummary, ExportError> {
        let out = match target {
            Target::Directory(d) => d,
            Target::Stream(_) => {
                return Err(ExportError::Usage(
                    "the otf2 format writes a directory: give one with -o DIR".into(),
                ))
            }
        };
        let starts = if Starts::needed(&input.model) {
            Starts::find(input.merge()?)
        } else {
            Starts::default()
        };
        let mut sink = Otf2Sink {
            input,
            out,
            starts: Some(starts),
            events: None,
            samples: Vec::new(),
            sample_refs: Vec::new(),
            located: defs::Located::default(),
        };
        let mut summary = drive(input, &mut sink)?;
        summary.records = sink.events.as_ref().map_or(0, |e| e.n);
        // the archive is closed (its files complete) before the export is done
        drop(sink);
        Ok(summary)
    }
}

/// The archive being written: its event writers from [`Sink::begin`].
struct Otf2Sink<'a> {
    input: &'a ExportInput,
    out: &'a Path,
    /// The persistent receives each start started, until [`Sink::begin`] takes them.
    starts: Option<Starts>,
    events: Option<Events>,
    /// Per location: its call-stack samples, written after its last event.
    samples: Vec<Option<crate::samples::LocationSamples<'a>>>,
    /// Per location with samples: their calling contexts and how many stamped ones are written.
    sample_refs: Vec<Option<samples::LocationRefs>>,
    /// The locations as the definitions name them.
    located: defs::Located,
}

impl Otf2Sink<'_> {
    #[inline]
    fn ev(&mut self) -> &mut Events {
        self.events.as_mut().expect("begin() opened the archive")
    }

    /// The events, once location `at.loc`'s stamped samples up to `at.ns` are written (so that
    /// its records stay in time order).
    #[inline]
    fn at(&mut self, at: At) -> Result<&mut Events, crate::driver::SinkError> {
        let ev = self.events.as_mut().expect("begin() opened the archive");
        if let (Some(Some(s)), Some(Some(r))) = (
            self.samples.get(at.loc as usize),
            self.sample_refs.get_mut(at.loc as usize),
        ) {
            if s.times.get(r.next).is_some_and(|x| x.0 <= at.ns) {
                ev.samples_until(at.loc, at.ns, s, r)?;
            }
        }
        Ok(ev)
    }

    /// The external metrics (plx run --monitor, plx import) as one metric location after the
    /// threads: its records.
    fn external(
        &mut self,
        external: &[plx_analysis::external::ExternalMetric],
        base: u32,
    ) -> Result<u64, ExportError> {
        let ev = self.ev();
        let a = ev.archive.raw;
        // SAFETY: the event files are open.
        let w = unsafe { OTF2_Archive_GetEvtWriter(a, ev.writers.len() as u64) };
        if w.is_null() {
            return Err(ev.archive.fail("no event writer for the external metrics"));
        }
        let mut all: Vec<(u64, u32, f64)> = external
            .iter()
            .enumerate()
            .flat_map(|(k, m)| {
                m.samples
                    .iter()
                    .map(move |&(t, v)| (t.max(0.0).round() as u64, base + k as u32, v))
            })
            .collect();
        all.sort_by_key(|x| (x.0, x.1));
        let null = ptr::null_mut();
        for (t, metric, v) in &all {
            let v = OTF2_MetricValue { floating_point: *v };
            // SAFETY: `w` is open; the value and type outlive the call.
            let code =
                unsafe { OTF2_EvtWriter_Metric(w, null, *t, *metric, 1, &OTF2_TYPE_DOUBLE, &v) };
            ev.archive.check(code, "writing an external metric")?;
        }
        ev.writers.push(w);
        Ok(all.len() as u64)
    }

    /// Closes every event writer and the event files; writes an empty local definition file
    /// per location, as Score-P writes them.
    fn close_events(&mut self, nloc: usize) -> Result<(), ExportError> {
        let ev = self.ev();
        let a = ev.archive.raw;
        for w in ev.writers.drain(..) {
            // SAFETY: each writer is closed once, before its file container.
            ev.archive.check(unsafe { OTF2_Archive_CloseEvtWriter(a, w) }, "closing events")?;
        }
        // SAFETY: every writer of the event files is closed; the definition files are opened,
        // each writer closed before them.
        unsafe {
            ev.archive.check(OTF2_Archive_CloseEvtFiles(a), "event files")?;
            ev.archive.check(OTF2_Archive_OpenDefFiles(a), "definition files")?;
            for li in 0..nloc {
                let d = OTF2_Archive_GetDefWriter(a, li as u64);
                if !d.is_null() {
                    ev.archive.check(OTF2_Archive_CloseDefWriter(a, d), "local definitions")?;
                }
            }
            ev.archive.check(OTF2_Archive_CloseDefFiles(a), "definition files")?;
        }
        Ok(())
    }
}

impl Sink for Otf2Sink<'_> {
    const OUTPUT: &'static str = "otf2 output";
    const COUNTERS: bool = true;
    const COMPLETIONS: bool = true;

    fn begin(&mut self, merge: &GlobalMerge) -> Step {
        let archive = Archive::open(self.out)?;
        let starts = self.starts.take().unwrap_or_default();
        self.events = Some(Events::new(archive, merge.model(), starts));
        Ok(())
    }

    /// Its event writer, and its samples' calling contexts.
    fn location(&mut self, place: &Place) -> Step {
        let ev = self.events.as_mut().expect("begin() opened the archive");
        ev.location(place.location)?;
        self.located.add(place);
        let samples = place.samples(&self.input.model);
        self.sample_refs.push(samples.as_ref().map(|s| ev.sample_refs(s)));
        self.samples.push(samples);
        Ok(())
    }

    #[inline]
    fn enter(&mut self, cx: &Cx, at: At, region: u32) -> Step {
        self.at(at)?.enter(cx, at, region)
    }

    #[inline]
    fn exit(&mut self, cx: &Cx, at: At, region: u32, _closed: &[u32]) -> Step {
        self.at(at)?.exit(cx, at, region)
    }

    /// The calls still open leave, then the location's samples follow.
    fn open_at_end(&mut self, _cx: &Cx, at: At, calls: &[u32], cut: bool) -> Step {
        self.at(at)?.open_at_end(at, calls, cut)?;
        let ev = self.events.as_mut().expect("begin() opened the archive");
        match (
            self.samples.get(at.loc as usize),
            self.sample_refs.get_mut(at.loc as usize),
        ) {
            (Some(Some(s)), Some(Some(r))) => ev.samples(at, s, r),
            _ => Ok(()),
        }
    }

    fn user(&mut self, _cx: &Cx, at: At, event: u32, value: f64) -> Step {
        self.at(at)?.user(at, event, value)
    }

    fn send(&mut self, cx: &Cx, at: At, m: Envelope, _message: Option<u64>) -> Step {
        self.at(at)?.send(cx, at, m)
    }

    fn send_done(&mut self, _cx: &Cx, at: At, thread: u32, _mode: u8, send: u64) -> Step {
        self.at(at)?.send_done(at, thread, send)
    }

    fn coll_done(&mut self, _cx: &Cx, at: At, thread: u32, collective: u64) -> Step {
        self.at(at)?.coll_done(at, thread, collective)
    }

    fn recv_posted(&mut self, _cx: &Cx, at: At, before_ns: u64) -> Step {
        self.at(at)?.recv_posted(at, before_ns)
    }

    fn recv(&mut self, _cx: &Cx, at: At, m: Envelope, link: Option<MessageLink>) -> Step {
        self.at(at)?.recv(at, m, link)
    }

    fn collective(
        &mut self,
        cx: &Cx,
        at: At,
        comm: Option<u32>,
        root: Option<u32>,
        bytes: (u64, u64),
    ) -> Step {
        self.at(at)?.collective(cx, at, comm, root, bytes)
    }

    fn acquire(&mut self, _cx: &Cx, at: At, object: u32, kind: u8, _wait_ns: u64) -> Step {
        self.at(at)?.acquire(at, object, kind)
    }

    fn release(&mut self, _cx: &Cx, at: At, object: u32, kind: u8) -> Step {
        self.at(at)?.release(at, object, kind)
    }

    fn omp_team(&mut self, _cx: &Cx, at: At, region: u32, level: u32, team: (u32, u32)) -> Step {
        self.at(at)?.omp_team(at, region, level, team)
    }

    fn counted(&mut self, _cx: &Cx, at: At, call: &CountedCall) -> Step {
        self.at(at)?.counted(at, call)
    }

    /// Stream bytes have no OTF2 record here.
    fn takes(&self, kind: &EventKind) -> bool {
        !matches!(kind, EventKind::StreamSend { .. } | EventKind::StreamRecv { .. })
    }

    /// The external metrics, the files closed, then the definitions.
    fn end(&mut self, merge: &GlobalMerge, summary: &mut ExportSummary) -> Step {
        let (files, unread) = plx_format::read_metric_files(&self.input.experiment.dir);
        let external = plx_analysis::external::external_metrics(
            &self.input.model,
            &files,
            Some(merge.origin_ns()),
        );
        let nloc = self.ev().counts.len();
        let mut external_events = 0;
        if !external.is_empty() {
            let base = self.ev().ctr.classes.len() as u32 + merge.user_events().len() as u32;
            external_events = self.external(&external, base)?;
        }
        self.close_events(nloc)?;
        let ev = self.events.as_ref().expect("begin() opened the archive");
        // the clock's start: the first event, or a call-stack sample stamped before it (a
        // thread sampled before its first traced event), no record before it
        let sampled = self.samples.iter().flatten();
        let origin = sampled
            .filter_map(|s| s.times.first().map(|t| t.0))
            .fold(merge.origin_ns(), i64::min);
        let written = defs::Written {
            refs: &ev.refs,
            ctr: &ev.ctr,
            counts: &ev.counts,
            span: (origin, ev.last.max(ev.first.unwrap_or(origin))),
            external: &external,
            external_events,
            cut: ev.cut.is_some(),
            contexts: &ev.contexts,
        };
        defs::write(&ev.archive, merge, &self.located, &written)?;
        summary.warnings.extend(unread);
        summary.samples = ev.sampled;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ffi::*;
    use super::refs::{collective_of, is_nonblocking_collective, region_class};
    use plx_format::RegionKind;

    #[test]
    fn collectives_and_roles() {
        assert_eq!(
            collective_of("MPI_Allreduce"),
            Some((OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL))
        );
        assert_eq!(collective_of("MPI_Ibcast").unwrap().0, OTF2_COLLECTIVE_OP_BCAST);
        assert_eq!(
            collective_of("MPI_Iallreduce").unwrap().0,
            OTF2_COLLECTIVE_OP_ALLREDUCE
        );
        assert_eq!(collective_of("MPI_Isend"), None);
        assert!(is_nonblocking_collective("MPI_Iallreduce"));
        assert!(is_nonblocking_collective("MPI_Ibarrier"));
        assert!(!is_nonblocking_collective("MPI_Allreduce"));
        assert!(!is_nonblocking_collective("MPI_Isend"));
        assert_eq!(
            region_class("MPI_Irecv", RegionKind::Mpi),
            (OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI)
        );
        assert_eq!(
            region_class("main", RegionKind::Function),
            (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER)
        );
    }
}

