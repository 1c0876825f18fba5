//! `plx histogram` and `plx display` on synthetic experiments with known states: exact CSV
//! rows, SVG element counts, errors naming the file or argument.

mod fixtures;
use fixtures::{plx, stderr, stdout, tmp};

#[path = "../../plx-analysis/tests/fixtures/timeline.rs"]
mod timeline;

/// `plx ARGS` that must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let o = plx(args);
    assert!(o.status.success(), "plx {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// `plx ARGS` that must fail with status 2; its stderr.
fn fails(args: &[&str]) -> String {
    let o = plx(args);
    assert_eq!(o.status.code(), Some(2), "plx {args:?}: {}", stdout(&o));
    stderr(&o)
}

/// Occurrences of `<tag ` or `<tag>` in `svg`.
fn count(svg: &str, tag: &str) -> usize {
    svg.matches(&format!("<{tag} ")).count() + svg.matches(&format!("<{tag}>")).count()
}

/// A well-formedness check without an XML library: every tag closes in order, attributes are
/// quoted, and `&` only starts an entity.
fn well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg.trim_start();
    assert!(rest.starts_with("<?xml"), "XML declaration first");
    rest = &rest[rest.find("?>").unwrap() + 2..];
    while let Some(i) = rest.find('<') {
        let text = &rest[..i];
        for (j, _) in text.match_indices('&') {
            let ent = &text[j..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| ent.starts_with(e)),
                "bare & in {text:?}"
            );
        }
        let end = rest[i..].find('>').expect("tag closes") + i;
        let tag = &rest[i + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "closing tag order"
            );
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap().to_string());
        }
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in <{tag}>"
        );
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(rest.trim().is_empty());
}

#[test]
fn histogram_csv_of_every_metric() {
    let d = tmp("two-ranks");
    timeline::two_ranks(&d);
    let dir = d.to_str().unwrap();
    let name = d.file_name().unwrap().to_str().unwrap();
    let csv = |metric: &str, by: &str| {
        ok(&[
            "histogram",
            dir,
            "--metric",
            metric,
            "--bins",
            "4",
            "--by",
            by,
            "--format",
            "csv",
        ])
    };
    let want = |rows: &[(&str, [&str; 4])]| {
        let mut s = "series,location,bin,start_s,end_s,value\n".to_string();
        for (loc, vals) in rows {
            for (i, v) in vals.iter().enumerate() {
                s += &format!(
                    "{name},{loc},{i},{:.9},{:.9},{v}\n",
                    i as f64 * 0.005,
                    (i + 1) as f64 * 0.005
                );
            }
        }
        s
    };
    assert_eq!(
        csv("compute", "location"),
        want(&[("0.0", ["1", "1", "0", "0"]), ("1.0", ["0", "0", "1", "1"])])
    );
    // no CPU samples: cpu is compute, each row saying so
    let with_source: String = csv("compute", "location")
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{l},{}\n", if i == 0 { "source" } else { "states" }))
        .collect();
    assert_eq!(csv("cpu", "location"), with_source);
    assert_eq!(
        csv("compute", "total"),
        want(&[("total", ["1", "1", "1", "1"])])
    );
    assert_eq!(
        csv("mpi", "location"),
        want(&[("0.0", ["0", "0", "1", "1"]), ("1.0", ["1", "1", "0", "0"])])
    );
    assert_eq!(
        csv("messages", "total"),
        want(&[("total", ["1", "1", "0", "0"])])
    );
    assert_eq!(
        csv("bytes", "total"),
        want(&[("total", ["100", "300", "0", "0"])])
    );
    assert_eq!(
        csv("calls:work", "total"),
        want(&[("total", ["2", "0", "1", "0"])])
    );
    assert_eq!(
        csv("time:work", "location"),
        want(&[
            ("0.0", ["0.600000", "0.200000", "0", "0"]),
            ("1.0", ["0", "0", "0.400000", "0"])
        ])
    );
    let text = ok(&["histogram", dir, "--metric", "bytes", "--bins", "4"]);
    assert!(text.contains(": total, total 400\n"), "{text}");
    assert!(
        text.contains("########################################"),
        "{text}"
    );
}

#[test]
fn histogram_svg_has_one_polyline_per_series() {
    let a = tmp("svg-a");
    timeline::two_ranks(&a);
    let b = tmp("svg-b");
    timeline::one_thread(&b, 30, 0, 10);
    let out = a.join("h.svg");
    ok(&[
        "histogram",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--metric",
        "cpu",
        "--by",
        "location",
        "--format",
        "svg",
        "-o",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    well_formed(&svg);
    assert_eq!(
        count(&svg, "polyline"),
        3,
        "two ranks of a, one thread of b"
    );
    // runs overlaid: one series each, over the longest run's bins
    let csv = ok(&[
        "histogram",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--metric",
        "compute",
        "--bins",
        "2",
        "--format",
        "csv",
    ]);
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    assert!(rows[2].ends_with(",0,0.000000000,0.010000000,1"), "{csv}");
    assert!(rows[3].ends_with(",1,0.010000000,0.020000000,0"), "{csv}");
}

#[test]
fn display_csv_of_every_kind() {
    let d = tmp("displays");
    timeline::two_ranks(&d);
    let dir = d.to_str().unwrap();
    let csv = |kind: &str| {
        ok(&[
            "display", dir, "--kind", kind, "--bins", "4", "--format", "csv",
        ])
    };
    assert_eq!(
        csv("utilization"),
        "location,computing_s,mpi_s,wait_s,idle_s,computing_pct,mpi_pct,wait_pct,idle_pct\n\
         0.0,0.010000000,0.010000000,0.000000000,0.000000000,50.000,50.000,0.000,0.000\n\
         1.0,0.010000000,0.010000000,0.000000000,0.000000000,50.000,50.000,0.000,0.000\n\
         total,0.020000000,0.020000000,0.000000000,0.000000000,50.000,50.000,0.000,0.000\n"
    );
    assert_eq!(
        csv("gantt"),
        "location,state,start_s,end_s\n\
         0.0,computing,0.000000000,0.010000000\n\
         0.0,mpi,0.010000000,0.020000000\n\
         1.0,mpi,0.000000000,0.010000000\n\
         1.0,computing,0.010000000,0.020000000\n"
    );
    assert_eq!(
        csv("concurrency"),
        "k,seconds,fraction\n0,0.000000000,0.000000\n1,0.020000000,1.000000\n2,0.000000000,0.000000\n"
    );
    assert_eq!(
        csv("queue"),
        "time_s,length\n0.000000000,0\n0.002000000,1\n0.007000000,2\n0.015000000,1\n0.020000000,0\n"
    );
    assert_eq!(
        csv("spacetime"),
        "sender,receiver,send_s,recv_s,bytes\n\
         1.0,0.0,0.002000000,0.015000000,100\n\
         1.0,0.0,0.007000000,0.020000000,300\n"
    );
    assert_eq!(
        csv("npt"),
        "function,npt_s,npt_pct,processor_s\nmain,0.014000000,70.000,0.014000000\nwork,0.006000000,30.000,0.006000000\n"
    );
    let text = ok(&["display", dir, "--kind", "gantt"]);
    assert!(text.contains("0.0            |##############################MMMMMMMMMMMMMMMMMMMMMMMMMMMMMM| 2 intervals"), "{text}");
}

#[test]
fn display_svg_element_counts() {
    let d = tmp("display-svg");
    timeline::two_ranks(&d);
    let dir = d.to_str().unwrap();
    let svg = |kind: &str| {
        let s = ok(&[
            "display", dir, "--kind", kind, "--bins", "4", "--format", "svg",
        ]);
        well_formed(&s);
        s
    };
    let g = svg("gantt");
    assert_eq!(count(&g, "rect"), 4, "one rect per Gantt interval");
    assert_eq!(g.matches("class=\"state computing\"").count(), 2);
    let st = svg("spacetime");
    assert_eq!(count(&st, "line"), 2, "one line per message");
    assert_eq!(st.matches("class=\"location\"").count(), 2);
    let u = svg("utilization");
    assert_eq!(
        count(&u, "rect"),
        4,
        "computing and mpi bars of two locations"
    );
    let q = svg("queue");
    assert_eq!(count(&q, "polyline"), 1);
    let c = svg("concurrency");
    assert_eq!(count(&c, "rect"), 3, "k = 0, 1, 2");
    assert_eq!(count(&c, "polyline"), 1);
    let n = svg("npt");
    assert_eq!(count(&n, "rect"), 2);
}

#[test]
fn session_and_app_selection() {
    let d = tmp("session");
    timeline::session(&d);
    let dir = d.to_str().unwrap();
    let csv = ok(&[
        "histogram",
        dir,
        "--metric",
        "compute",
        "--bins",
        "2",
        "--format",
        "csv",
    ]);
    assert_eq!(
        csv,
        "series,location,bin,start_s,end_s,value\n\
         new,total,0,0.000000000,0.010000000,2\n\
         new,total,1,0.010000000,0.020000000,1\n\
         old,total,0,0.000000000,0.010000000,1\n\
         old,total,1,0.010000000,0.020000000,0\n"
    );
    let only = ok(&[
        "display",
        dir,
        "--kind",
        "utilization",
        "--app",
        "old",
        "--format",
        "csv",
    ]);
    assert!(
        only.contains("\nold:20.0,0.010000000,0.000000000,0.000000000,0.000000000,"),
        "{only}"
    );
    let e = fails(&["display", dir, "--kind", "gantt", "--app", "nope"]);
    assert!(
        e.contains("no application named \"nope\"") && e.contains("new, old"),
        "{e}"
    );
}

#[test]
fn phase_selects_a_window() {
    let d = tmp("phase");
    timeline::waits(&d);
    let dir = d.to_str().unwrap();
    let csv = ok(&[
        "display",
        dir,
        "--kind",
        "gantt",
        "--phase",
        "0.004:0.008",
        "--format",
        "csv",
    ]);
    assert_eq!(
        csv,
        "location,state,start_s,end_s\n\
         77.0,wait,0.004000000,0.006000000\n\
         77.0,computing,0.006000000,0.007000000\n\
         77.0,wait,0.007000000,0.008000000\n"
    );
    let e = fails(&["display", dir, "--kind", "gantt", "--phase", "nope"]);
    assert!(e.contains("no phase region named \"nope\""), "{e}");
}

#[test]
fn errors_name_the_file_or_argument() {
    let d = tmp("errors");
    timeline::two_ranks(&d);
    let dir = d.to_str().unwrap();
    let e = fails(&["histogram", dir, "--metric", "flops"]);
    assert!(
        e.contains("--metric: unknown metric \"flops\": valid metrics are cpu, mpi, messages, bytes, compute, calls:FUNC, time:FUNC"),
        "{e}"
    );
    let e = fails(&["histogram", dir, "--metric", "calls:nosuch"]);
    assert!(
        e.contains(dir) && e.contains("no function named \"nosuch\""),
        "{e}"
    );
    let e = fails(&["histogram", dir, "--metric", "cpu", "--bins", "0"]);
    assert!(e.contains("--bins 0"), "{e}");
    let e = fails(&["display", dir, "--kind", "queue", "--bins", "0"]);
    assert!(e.contains("--bins 0"), "{e}");
    // --bins is one flag: plx query checks it as the charts do
    for cmd in [
        &["histogram", dir, "--metric", "cpu"][..],
        &["display", dir, "--kind", "queue"],
        &["query", dir, "--metric", "wall_time"],
    ] {
        for (bins, msg) in [
            ("0", "--bins 0: give at least 1 bin"),
            ("100001", "--bins 100001: at most 100000 bins"),
        ] {
            let e = fails(&[cmd, &["--bins", bins][..]].concat());
            assert!(e.contains(msg), "{cmd:?} {e}");
        }
    }

    let n = tmp("no-trace");
    timeline::no_trace(&n);
    let e = fails(&["histogram", n.to_str().unwrap(), "--metric", "cpu"]);
    assert!(
        e.contains(n.to_str().unwrap()) && e.contains("rerun with `plx run --trace`"),
        "{e}"
    );
    let e = fails(&["display", n.to_str().unwrap(), "--kind", "npt"]);
    assert!(e.contains("rerun with `plx run --trace`"), "{e}");
}
