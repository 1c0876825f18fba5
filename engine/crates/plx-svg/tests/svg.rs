//! The SVG charts: one mark element per datum (polyline per series, rect per interval or bar,
//! line per message), names escaped, documents of several figures.

use plx_svg::{self as svg, Arrow, Category, Chart, Interval, StepSeries};

fn count(svg: &str, tag: &str) -> usize {
    svg.matches(&format!("<{tag} ")).count()
}

fn chart() -> Chart {
    Chart {
        title: "a <title> & more".into(),
        x_label: "time (s)".into(),
        y_label: "value".into(),
    }
}

const CATS: [Category<'static>; 2] = [
    Category {
        name: "computing",
        color: "#0a0",
    },
    Category {
        name: "mpi",
        color: "#a00",
    },
];

#[test]
fn step_plot_has_one_polyline_per_series_and_escapes_names() {
    let series: Vec<StepSeries> = (0..3)
        .map(|i| StepSeries {
            name: format!("run {i} <&>"),
            points: vec![(0.0, i as f64), (0.5, 2.0)],
            end_x: 1.0,
        })
        .collect();
    let s = svg::step_plot(&chart(), &series).to_svg();
    assert_eq!(count(&s, "polyline"), 3);
    assert_eq!(
        count(&s, "rect") + count(&s, "line"),
        0,
        "axes and legend are paths"
    );
    assert!(s.contains("run 1 &lt;&amp;&gt;") && !s.contains("run 1 <&>"));
    assert!(s.contains("a &lt;title&gt; &amp; more"));
    // a step: each value is held flat to the next point
    assert!(
        s.contains(r#"points="90,300 460,300 460,52.38 830,52.38""#),
        "{s}"
    );
    assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
}

#[test]
fn gantt_stacked_bars_bars_and_space_time_count_their_marks() {
    let rows = vec!["0.0".to_string(), "1.0".to_string()];
    let ivs = [
        Interval {
            row: 0,
            start: 0.0,
            end: 1.0,
            category: 0,
        },
        Interval {
            row: 0,
            start: 1.0,
            end: 2.0,
            category: 1,
        },
        Interval {
            row: 1,
            start: 0.0,
            end: 2.0,
            category: 1,
        },
    ];
    let g = svg::gantt(&chart(), &rows, (0.0, 2.0), &ivs, &CATS).to_svg();
    assert_eq!(count(&g, "rect"), 3);
    assert_eq!(g.matches(r#"class="state mpi""#).count(), 2);

    let b = svg::stacked_bars(&chart(), &rows, &CATS, &[vec![1.0, 0.0], vec![0.5, 0.5]]).to_svg();
    assert_eq!(count(&b, "rect"), 3, "zero parts are left out");

    let labels: Vec<String> = (0..5).map(|k| k.to_string()).collect();
    let v = svg::bars(&chart(), &labels, &[0.0, 1.0, 2.0, 0.0, 0.5], "#000").to_svg();
    assert_eq!(count(&v, "rect"), 5, "zero bars too");

    let arrows = [
        Arrow {
            from: 0,
            to: 1,
            start: 0.1,
            end: 0.4,
            bytes: 8,
        },
        Arrow {
            from: 1,
            to: 0,
            start: 0.5,
            end: 0.9,
            bytes: 8,
        },
        Arrow {
            from: 1,
            to: 0,
            start: 1.0,
            end: 1.5,
            bytes: 16,
        },
    ];
    let st = svg::space_time(&chart(), &rows, (0.0, 2.0), &arrows).to_svg();
    assert_eq!(count(&st, "line"), 3);
    assert_eq!(st.matches(r#"class="location""#).count(), 2);

    // two figures in one document, one after the other
    let doc = svg::document(&[
        svg::bars(&chart(), &labels, &[1.0; 5], "#000"),
        svg::step_plot(&chart(), &[]),
    ]);
    assert_eq!(doc.matches("<svg ").count(), 1);
    assert_eq!(doc.matches("<g transform").count(), 2);
}
