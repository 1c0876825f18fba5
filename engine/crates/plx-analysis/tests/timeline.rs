//! State timelines and the displays made from them, on synthetic experiments with known states:
//! exact bins of every metric, utilization, Gantt intervals, concurrency, queue length, the
//! space-time messages, NPT, runs and applications overlaid, phases, synchronization waits.

#[path = "fixtures/timeline.rs"]
mod fixtures;

use std::path::Path;

use fixtures::MS;
use plx_analysis::timeline::{
    concurrency, find_function, gantt, histogram, npt, queue_length, space_time, utilization,
    CpuSource, HistogramRun, Metric, State, Timeline, TimelineOptions,
};
use plx_analysis::{phase_window, BuildOptions, Model, PhaseSpec, Window};
use plx_format::Experiment;

use plx_format::test_dir::tmp;

fn open(d: &Path) -> (Experiment, Model) {
    let exp = Experiment::open(d).unwrap();
    let model = Model::build(
        &exp,
        BuildOptions {
            rebuild_from_trace: true,
            resolve_sources: false,
        },
    );
    (exp, model)
}

fn timeline(d: &Path, function: Option<&str>) -> (Experiment, Model, Timeline) {
    let (exp, model) = open(d);
    let opts = TimelineOptions {
        function: function.map(|f| (f.to_string(), find_function(&model, f).unwrap())),
        ..Default::default()
    };
    let tl = Timeline::build(&model, &exp, &opts).unwrap();
    (exp, model, tl)
}

/// The series' values as (location or "total", values).
fn series(tl: &Timeline, metric: &str, bins: usize, by_location: bool) -> Vec<(String, Vec<f64>)> {
    let m = Metric::parse(metric).unwrap();
    let run = HistogramRun {
        name: "run",
        timeline: tl,
        window: Window::ALL,
    };
    histogram(&[run], &m, bins, by_location)
        .series
        .into_iter()
        .map(|s| (s.location.unwrap_or_else(|| "total".into()), s.values))
        .collect()
}

fn approx(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{got:?} vs {want:?}");
    }
}

fn ms(ns: i64) -> f64 {
    ns as f64 / MS as f64
}

#[test]
fn two_ranks_bins_of_every_metric() {
    let d = tmp("bins");
    fixtures::two_ranks(&d);
    let (_, _, tl) = timeline(&d, Some("work"));
    assert_eq!(tl.end_ns - tl.origin_ns, 20 * MS as i64);
    let labels: Vec<&str> = tl.locations.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["0.0", "1.0"]);

    let by_loc = series(&tl, "cpu", 4, true);
    approx(&by_loc[0].1, &[1.0, 1.0, 0.0, 0.0]);
    approx(&by_loc[1].1, &[0.0, 0.0, 1.0, 1.0]);
    approx(&series(&tl, "cpu", 4, false)[0].1, &[1.0; 4]);
    let mpi = series(&tl, "mpi", 4, true);
    approx(&mpi[0].1, &[0.0, 0.0, 1.0, 1.0]);
    approx(&mpi[1].1, &[1.0, 1.0, 0.0, 0.0]);
    approx(&series(&tl, "cpu", 2, true)[0].1, &[1.0, 0.0]);
    // three bins of 6.67 ms: rank 0 computes the first, and 3.33 ms of the second
    approx(&series(&tl, "cpu", 3, true)[0].1, &[1.0, 0.5, 0.0]);

    let msgs = series(&tl, "messages", 4, true);
    approx(&msgs[0].1, &[0.0; 4]);
    approx(&msgs[1].1, &[1.0, 1.0, 0.0, 0.0]);
    approx(
        &series(&tl, "bytes", 4, false)[0].1,
        &[100.0, 300.0, 0.0, 0.0],
    );
    approx(
        &series(&tl, "calls:work", 4, false)[0].1,
        &[2.0, 0.0, 1.0, 0.0],
    );
    let time = series(&tl, "time:work", 4, true);
    approx(&time[0].1, &[0.6, 0.2, 0.0, 0.0]);
    approx(&time[1].1, &[0.0, 0.0, 0.4, 0.0]);
}

#[test]
fn two_ranks_displays() {
    let d = tmp("displays");
    fixtures::two_ranks(&d);
    let (exp, model, tl) = timeline(&d, None);

    let u = utilization(&tl, Window::ALL);
    approx(&u[0].seconds, &[0.010, 0.010, 0.0, 0.0]);
    approx(&u[1].seconds, &[0.010, 0.010, 0.0, 0.0]);
    approx(
        &[u[0].percent(State::Computing), u[0].percent(State::Mpi)],
        &[50.0, 50.0],
    );

    let g = gantt(&tl, Window::ALL);
    let rows: Vec<Vec<(&str, f64, f64)>> = g
        .iter()
        .map(|segs| {
            segs.iter()
                .map(|s| {
                    (
                        s.state.name(),
                        ms(s.start_ns - tl.origin_ns),
                        ms(s.end_ns - tl.origin_ns),
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(
        rows,
        [
            vec![("computing", 0.0, 10.0), ("mpi", 10.0, 20.0)],
            vec![("mpi", 0.0, 10.0), ("computing", 10.0, 20.0)],
        ]
    );

    let c = concurrency(&tl, Window::ALL, 4);
    approx(&c.seconds, &[0.0, 0.020, 0.0]);
    approx(&c.mean, &[1.0; 4]);
    assert_eq!(c.max, [1, 1, 1, 1]);

    let q = queue_length(&tl, Window::ALL, 4);
    let steps: Vec<(f64, i64)> = q
        .steps
        .iter()
        .map(|&(t, l)| (ms(t - tl.origin_ns), l))
        .collect();
    assert_eq!(steps, [(0.0, 0), (2.0, 1), (7.0, 2), (15.0, 1), (20.0, 0)]);
    assert_eq!(q.final_len, 0);
    assert_eq!(q.max, [1, 2, 2, 1]);
    // bin 0: 3 of 5 ms with one message; bin 1: 2 ms one, 3 ms two; bin 3: one all along
    approx(&q.mean, &[0.6, 1.6, 2.0, 1.0]);

    let st = space_time(&tl, Window::ALL);
    let lines: Vec<(u32, Option<u32>, f64, f64, u64)> = st
        .iter()
        .map(|m| {
            (
                m.sender,
                m.receiver,
                ms(m.send_ns),
                ms(m.recv_ns.unwrap()),
                m.bytes,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [(1, Some(0), 2.0, 15.0, 100), (1, Some(0), 7.0, 20.0, 300)]
    );

    // one location computes at every moment: NPT is processor time
    let rows = npt(&model, &exp, &tl, Window::ALL).unwrap();
    let got: Vec<(&str, f64, f64)> = rows
        .iter()
        .map(|r| (r.function.as_str(), r.npt_s * 1e3, r.processor_s * 1e3))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "main");
    assert!(
        (got[0].1 - 14.0).abs() < 1e-9 && (got[0].2 - 14.0).abs() < 1e-9,
        "{got:?}"
    );
    assert_eq!(got[1].0, "work");
    assert!(
        (got[1].1 - 6.0).abs() < 1e-9 && (got[1].2 - 6.0).abs() < 1e-9,
        "{got:?}"
    );
}

#[test]
fn npt_halves_when_two_locations_run_f_at_once() {
    let d = tmp("npt");
    fixtures::two_threads(&d, 10, 0);
    let (exp, model, tl) = timeline(&d, None);
    let rows = npt(&model, &exp, &tl, Window::ALL).unwrap();
    let f = rows.iter().find(|r| r.function == "f").unwrap();
    let g = rows.iter().find(|r| r.function == "g").unwrap();
    assert!((f.processor_s - 0.020).abs() < 1e-12, "{rows:?}");
    assert!((f.npt_s - 0.010).abs() < 1e-12, "{rows:?}");
    assert!((g.processor_s - 0.010).abs() < 1e-12, "{rows:?}");
    assert!((g.npt_s - 0.010).abs() < 1e-12, "{rows:?}");
    let total: f64 = rows.iter().map(|r| r.npt_s).sum();
    assert!(
        (total - 0.020).abs() < 1e-12,
        "NPT adds up to the elapsed time: {rows:?}"
    );

    let c = concurrency(&tl, Window::ALL, 2);
    approx(&c.seconds, &[0.0, 0.010, 0.010]);
    assert_eq!(c.max, [2, 1]);
    // thread 1 ends at 10 ms: idle for the rest of the run
    let u = utilization(&tl, Window::ALL);
    approx(&u[1].seconds, &[0.010, 0.0, 0.0, 0.010]);
    let g = gantt(&tl, Window::ALL);
    assert_eq!(g[1].len(), 2);
    assert_eq!(
        (g[1][1].state, g[1][1].end_ns - tl.origin_ns),
        (State::Idle, 20 * MS as i64)
    );
}

#[test]
fn synchronization_waits_and_socket_calls_are_not_computing() {
    let d = tmp("waits");
    fixtures::waits(&d);
    let (_, _, tl) = timeline(&d, None);
    let got: Vec<(&str, f64, f64)> = gantt(&tl, Window::ALL)[0]
        .iter()
        .map(|s| (s.state.name(), ms(s.start_ns), ms(s.end_ns)))
        .collect();
    assert_eq!(
        got,
        [
            ("computing", 0.0, 4.0),
            ("wait", 4.0, 6.0),
            ("computing", 6.0, 7.0),
            ("wait", 7.0, 8.0),
            ("computing", 8.0, 10.0),
        ]
    );
    approx(&series(&tl, "cpu", 2, false)[0].1, &[0.8, 0.6]);
}

#[test]
fn phase_windows_bin_the_phase_only() {
    let d = tmp("phase");
    fixtures::two_ranks(&d);
    let (_, model, tl) = timeline(&d, None);
    let w = phase_window(&model, &"0.005:0.015".parse::<PhaseSpec>().unwrap()).unwrap();
    let run = HistogramRun {
        name: "run",
        timeline: &tl,
        window: w,
    };
    let h = histogram(&[run], &Metric::Cpu, 2, true);
    approx(&h.series[0].values, &[1.0, 0.0]);
    approx(&h.series[1].values, &[0.0, 1.0]);
    let (a, b) = h.series[0].grid.edges_s(1, tl.origin_ns);
    approx(&[a, b], &[0.010, 0.015]);
    let u = utilization(&tl, w);
    approx(&u[0].seconds, &[0.005, 0.005, 0.0, 0.0]);

    // a named phase: from its first enter to its last exit
    let d = tmp("named-phase");
    fixtures::waits(&d);
    let (_, model, tl) = timeline(&d, None);
    let w = phase_window(&model, &PhaseSpec::Named("solve".into())).unwrap();
    let (s, e) = tl.span(w);
    assert_eq!((s, e), (5 * MS as i64, 9 * MS as i64 + 1));
    let u = utilization(&tl, w);
    // 5-9 ms: wait 5-6 and 7-8
    assert!(
        (u[0].seconds[State::Wait as usize] - 0.002).abs() < 1e-12,
        "{u:?}"
    );
}

#[test]
fn runs_overlaid_are_one_series_each_over_the_longest() {
    let a = tmp("overlay-a");
    fixtures::two_ranks(&a);
    let b = tmp("overlay-b");
    fixtures::one_thread(&b, 30, 500 * MS, 10);
    let (_, _, ta) = timeline(&a, None);
    let (_, _, tb) = timeline(&b, None);
    let runs = [
        HistogramRun {
            name: "a",
            timeline: &ta,
            window: Window::ALL,
        },
        HistogramRun {
            name: "b",
            timeline: &tb,
            window: Window::ALL,
        },
    ];
    let h = histogram(&runs, &Metric::Cpu, 4, false);
    assert_eq!(h.series.len(), 2);
    assert!((h.width_s - 0.005).abs() < 1e-15);
    assert_eq!(h.series[0].name, "a");
    approx(&h.series[0].values, &[1.0; 4]);
    // b starts at its own start (500 ms on its clock) and lasts 10 ms
    assert_eq!(h.series[1].name, "b");
    approx(&h.series[1].values, &[1.0, 1.0, 0.0, 0.0]);
    let (s3, e3) = h.series[1].grid.edges_s(3, tb.origin_ns);
    approx(&[s3, e3], &[0.015, 0.020]);
    let per_loc = histogram(&runs, &Metric::Cpu, 4, true);
    assert_eq!(per_loc.series.len(), 3);
}

#[test]
fn session_applications_are_series_and_comparison_mode_is_shifted() {
    let d = tmp("session");
    fixtures::session(&d);
    let (_, model, tl) = timeline(&d, None);
    assert!(model.apps[1].compare);
    assert_eq!(model.apps[1].shift_ns, -1000 * MS as i64);
    let run = HistogramRun {
        name: "session",
        timeline: &tl,
        window: Window::ALL,
    };
    let h = histogram(&[run], &Metric::Cpu, 4, false);
    let got: Vec<(&str, Vec<f64>)> = h
        .series
        .iter()
        .map(|s| (s.name.as_str(), s.values.clone()))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "new");
    approx(&got[0].1, &[2.0, 2.0, 1.0, 1.0]);
    // the old run ran 1 s earlier: shifted to start with the live one
    assert_eq!(got[1].0, "old");
    approx(&got[1].1, &[1.0, 1.0, 0.0, 0.0]);
}

#[test]
fn unreceived_messages_stay_in_the_queue() {
    let d = tmp("unreceived");
    fixtures::unreceived(&d);
    let (_, _, tl) = timeline(&d, None);
    let q = queue_length(&tl, Window::ALL, 2);
    let steps: Vec<(f64, i64)> = q.steps.iter().map(|&(t, l)| (ms(t), l)).collect();
    assert_eq!(steps, [(0.0, 0), (2.0, 1), (8.0, 2), (15.0, 1)]);
    assert_eq!(q.final_len, 1);
    assert_eq!(space_time(&tl, Window::ALL).len(), 1);
    approx(&series(&tl, "messages", 1, false)[0].1, &[2.0]);
}

#[test]
fn metric_names_and_errors() {
    assert_eq!(
        Metric::parse("calls:foo").unwrap(),
        Metric::Calls("foo".into())
    );
    assert_eq!(
        Metric::parse("time:a::b").unwrap(),
        Metric::Time("a::b".into())
    );
    let e = Metric::parse("flops").unwrap_err();
    assert!(
        e.contains("unknown metric \"flops\"") && e.contains("cpu, mpi, messages"),
        "{e}"
    );
    assert!(Metric::parse("calls:").unwrap_err().contains("calls:FUNC"));

    let d = tmp("nofunc");
    fixtures::two_ranks(&d);
    let (_, model) = open(&d);
    let e = find_function(&model, "wor").unwrap_err();
    assert!(
        e.contains("no function named \"wor\"") && e.contains("work"),
        "{e}"
    );
}

#[test]
fn no_trace_is_an_error_naming_the_directory() {
    let d = tmp("notrace");
    fixtures::no_trace(&d);
    let (exp, model) = open(&d);
    let e = Timeline::build(&model, &exp, &TimelineOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("notrace") && msg.contains("plx run --trace"),
        "{msg}"
    );
}

#[test]
fn cpu_spreads_the_samples_over_the_bins_and_falls_back_to_states() {
    let d = tmp("cpu-samples");
    fixtures::sampled(&d);
    let (_, model, tl) = timeline(&d, None);
    assert_eq!(model.processes[0].cpu_samples.len(), 5);
    assert_eq!(tl.cpu[2], []);
    let spans: Vec<(f64, f64, f64)> = tl.cpu[1]
        .iter()
        .map(|c| (ms(c.start_ns), ms(c.end_ns), c.rate()))
        .collect();
    assert_eq!(spans, [(4.0, 12.0, 0.5), (12.0, 20.0, 0.0)]);
    let cpu = series(&tl, "cpu", 4, true);
    // thread 0: 0.5 of 0-10 ms, all of 10-20 ms
    approx(&cpu[0].1, &[0.5, 0.5, 1.0, 1.0]);
    // thread 1: computing by its states before its first sample (0-4 ms), then half of 4-12
    approx(&cpu[1].1, &[0.9, 0.5, 0.2, 0.0]);
    // thread 2: no samples, its states
    approx(&cpu[2].1, &[1.0; 4]);
    approx(&series(&tl, "cpu", 4, false)[0].1, &[2.4, 2.0, 2.2, 2.0]);
    approx(&series(&tl, "compute", 4, false)[0].1, &[3.0; 4]);
    let run = HistogramRun {
        name: "run",
        timeline: &tl,
        window: Window::ALL,
    };
    let h = histogram(&[run], &Metric::Cpu, 4, true);
    assert_eq!(h.cpu_source, Some(CpuSource::Mixed));
    let per: Vec<Option<CpuSource>> = h.series.iter().map(|s| s.cpu_source).collect();
    assert_eq!(
        per,
        [
            Some(CpuSource::Samples),
            Some(CpuSource::Samples),
            Some(CpuSource::States)
        ]
    );
    assert_eq!(
        histogram(&[run], &Metric::Compute, 4, true).cpu_source,
        None
    );
    // a run without samples: cpu is compute
    let d = tmp("cpu-no-samples");
    fixtures::two_ranks(&d);
    let (_, _, tl) = timeline(&d, None);
    assert_eq!(series(&tl, "cpu", 3, true), series(&tl, "compute", 3, true));
}
