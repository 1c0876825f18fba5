//! SVG charts written by hand (no dependencies): step plots, stacked and plain bars, Gantt charts, space-time diagrams.
//!
//! Every function returns a [`Figure`]; [`document`] stacks figures into one SVG document.
//! Data marks are the only elements of their kind, so that a reader can count them: one
//! `<polyline>` per series of a step plot, one `<rect>` per bar, bar part or Gantt interval,
//! one `<line>` per message of a space-time diagram. Axes, ticks, legend swatches and location
//! lines are `<path>`s, labels `<text>`. Each mark carries a `class` (`series`, `bar`,
//! `state computing`, `message`...) and a `<title>` child with its values (a tooltip).

use std::fmt::Write;

/// Colours of series, in order (repeating).
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

const WIDTH: f64 = 860.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const PLOT_H: f64 = 260.0;
const AXIS_H: f64 = 45.0;
const LEGEND_ROW: f64 = 18.0;
const ROW_H: f64 = 22.0;

/// One drawing: its size and its SVG elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Width, px.
    pub width: f64,
    /// Height, px.
    pub height: f64,
    body: String,
}

impl Figure {
    /// The figure alone as an SVG document.
    pub fn to_svg(&self) -> String {
        document(std::slice::from_ref(self))
    }
}

/// Figures stacked top to bottom in one SVG document.
pub fn document(figures: &[Figure]) -> String {
    let width = figures.iter().map(|f| f.width).fold(0.0, f64::max);
    let height: f64 = figures.iter().map(|f| f.height).sum();
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#,
        w = num(width),
        h = num(height)
    );
    let mut y = 0.0;
    for f in figures {
        let _ = writeln!(s, r#"<g transform="translate(0,{})">"#, num(y));
        s.push_str(&f.body);
        s.push_str("</g>\n");
        y += f.height;
    }
    s.push_str("</svg>\n");
    s
}

/// Titles of a chart and its axes.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// Above the chart.
    pub title: String,
    /// Under the x axis.
    pub x_label: String,
    /// Beside the y axis.
    pub y_label: String,
}

/// A series of a step plot: its value holds from each point's x to the next point's (the last
/// until `end_x`).
#[derive(Debug, Clone, PartialEq)]
pub struct StepSeries {
    /// Its name in the legend.
    pub name: String,
    /// (x, value) in x order.
    pub points: Vec<(f64, f64)>,
    /// Where the last value ends.
    pub end_x: f64,
}

/// A category of bars or intervals: its name in the legend and its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category<'a> {
    /// Name (also the mark's class).
    pub name: &'a str,
    /// Fill colour.
    pub color: &'a str,
}

/// An interval of a Gantt chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Row.
    pub row: usize,
    /// Start, x units.
    pub start: f64,
    /// End.
    pub end: f64,
    /// Index into the categories.
    pub category: usize,
}

/// A message of a space-time diagram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrow {
    /// Sender's row.
    pub from: usize,
    /// Receiver's row.
    pub to: usize,
    /// Send time, x units.
    pub start: f64,
    /// Receive time.
    pub end: f64,
    /// Size, for its tooltip.
    pub bytes: u64,
}

/// Escapes text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// A coordinate: at most two decimals, no trailing zeros.
fn num(x: f64) -> String {
    let x = if x.is_finite() { x } else { 0.0 };
    let s = format!("{:.2}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A value for a tick label or tooltip: up to 6 significant digits, no trailing zeros.
pub fn label(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..9).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (5 - mag).clamp(0, 9) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// About `n` round tick values (1, 2 or 5 × 10^k apart) covering `[lo, hi]`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / n.max(1) as f64;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A linear map of `[d0, d1]` onto `[r0, r1]`.
#[derive(Clone, Copy)]
struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Scale {
    fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Scale {
        let d1 = if d1 > d0 { d1 } else { d0 + 1.0 };
        Scale { d0, d1, r0, r1 }
    }

    fn at(&self, x: f64) -> f64 {
        self.r0 + (x - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }
}

fn title(s: &mut String, chart: &Chart) {
    let _ = writeln!(
        s,
        r#"<text class="title" x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        num(WIDTH / 2.0),
        escape(&chart.title)
    );
}

/// The x axis at `y` with ticks and labels, and its label.
fn x_axis(s: &mut String, xs: Scale, y: f64, chart: &Chart) {
    let _ = writeln!(
        s,
        r##"<path class="axis" d="M{} {}H{}" stroke="#000" fill="none"/>"##,
        num(xs.r0),
        num(y),
        num(xs.r1)
    );
    for t in ticks(xs.d0, xs.d1, 8) {
        let x = xs.at(t);
        let _ = writeln!(
            s,
            r##"<path class="tick" d="M{x} {y}v5" stroke="#000"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            num(y + 17.0),
            label(t),
            x = num(x),
            y = num(y)
        );
    }
    let _ = writeln!(
        s,
        r#"<text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        num((xs.r0 + xs.r1) / 2.0),
        num(y + 35.0),
        escape(&chart.x_label)
    );
}

/// The y axis at `x` with ticks, labels and grid lines across to `right`.
fn y_axis(s: &mut String, ys: Scale, x: f64, right: f64, chart: &Chart) {
    let _ = writeln!(
        s,
        r##"<path class="axis" d="M{} {}V{}" stroke="#000" fill="none"/>"##,
        num(x),
        num(ys.r0),
        num(ys.r1)
    );
    for t in ticks(ys.d0, ys.d1, 5) {
        let y = num(ys.at(t));
        let _ = writeln!(
            s,
            r##"<path class="grid" d="M{x} {y}H{r}" stroke="#ddd"/><text x="{lx}" y="{y}" text-anchor="end" dy="4">{}</text>"##,
            label(t),
            x = num(x),
            r = num(right),
            lx = num(x - 6.0),
        );
    }
    let mid = (ys.r0 + ys.r1) / 2.0;
    let _ = writeln!(
        s,
        r#"<text class="axis-label" x="18" y="{m}" text-anchor="middle" transform="rotate(-90 18 {m})">{}</text>"#,
        escape(&chart.y_label),
        m = num(mid)
    );
}

/// Legend rows from `y`: a swatch (a path) and a name per entry; returns the height used.
fn legend(s: &mut String, entries: &[(String, &str)], y: f64) -> f64 {
    let per_row = 4usize;
    let col_w = (WIDTH - LEFT - RIGHT) / per_row as f64;
    for (i, (name, color)) in entries.iter().enumerate() {
        let x = LEFT + (i % per_row) as f64 * col_w;
        let yy = y + (i / per_row) as f64 * LEGEND_ROW;
        let _ = writeln!(
            s,
            r#"<path class="legend" d="M{x} {y0}h12v-10h-12z" fill="{color}"/><text x="{tx}" y="{y0}">{}</text>"#,
            escape(name),
            x = num(x),
            y0 = num(yy),
            tx = num(x + 16.0),
        );
    }
    entries.len().div_ceil(per_row) as f64 * LEGEND_ROW
}

/// A step plot: one `<polyline>` per series, x and y axes with ticks, a legend.
pub fn step_plot(chart: &Chart, series: &[StepSeries]) -> Figure {
    let x_lo = series
        .iter()
        .flat_map(|s| s.points.first().map(|p| p.0))
        .fold(f64::INFINITY, f64::min);
    let x_hi = series
        .iter()
        .map(|s| s.end_x)
        .fold(f64::NEG_INFINITY, f64::max);
    let (x_lo, x_hi) = if x_lo.is_finite() && x_hi.is_finite() {
        (x_lo.min(0.0), x_hi)
    } else {
        (0.0, 1.0)
    };
    let y_hi = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let y_lo = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::min);
    let y_hi = if y_hi > y_lo { y_hi * 1.05 } else { y_lo + 1.0 };
    let xs = Scale::new(x_lo, x_hi, LEFT, WIDTH - RIGHT);
    let ys = Scale::new(y_lo, y_hi, TOP + PLOT_H, TOP);
    let mut s = String::new();
    title(&mut s, chart);
    y_axis(&mut s, ys, LEFT, WIDTH - RIGHT, chart);
    x_axis(&mut s, xs, TOP + PLOT_H, chart);
    let mut entries = Vec::new();
    for (i, se) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts = String::new();
        for (j, &(x, v)) in se.points.iter().enumerate() {
            let next = se.points.get(j + 1).map_or(se.end_x, |p| p.0);
            let y = num(ys.at(v));
            let _ = write!(pts, "{},{y} {},{y} ", num(xs.at(x)), num(xs.at(next)));
        }
        let _ = writeln!(
            s,
            r#"<polyline class="series" points="{}" fill="none" stroke="{color}" stroke-width="1.5"><title>{}</title></polyline>"#,
            pts.trim_end(),
            escape(&se.name)
        );
        entries.push((se.name.clone(), color));
    }
    with_legend(s, &entries, TOP + PLOT_H)
}

/// The figure of a plot whose area ends at `plot_bottom`: its x axis below, then the legend.
fn with_legend(mut s: String, entries: &[(String, &str)], plot_bottom: f64) -> Figure {
    let lh = legend(&mut s, entries, plot_bottom + AXIS_H + 14.0);
    Figure {
        width: WIDTH,
        height: plot_bottom + AXIS_H + lh + 20.0,
        body: s,
    }
}

/// Horizontal stacked bars: one bar per row, one `<rect>` per non-zero part
/// (`values[row][category]`), x from 0 to the largest bar.
pub fn stacked_bars(
    chart: &Chart,
    rows: &[String],
    categories: &[Category<'_>],
    values: &[Vec<f64>],
) -> Figure {
    let x_hi = values
        .iter()
        .map(|r| r.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let plot_h = rows.len() as f64 * ROW_H;
    let xs = Scale::new(
        0.0,
        if x_hi > 0.0 { x_hi } else { 1.0 },
        LEFT,
        WIDTH - RIGHT,
    );
    let mut s = String::new();
    title(&mut s, chart);
    row_labels(&mut s, rows);
    for (r, vals) in values.iter().enumerate() {
        let y = TOP + r as f64 * ROW_H + 3.0;
        let mut x0 = 0.0;
        for (c, &v) in vals.iter().enumerate() {
            if v <= 0.0 {
                continue;
            }
            let cat = categories[c % categories.len()];
            let _ = writeln!(
                s,
                r#"<rect class="bar {cls}" x="{x}" y="{y}" width="{w}" height="{h}" fill="{color}"><title>{row}: {cls} {v}</title></rect>"#,
                cls = escape(cat.name),
                x = num(xs.at(x0)),
                y = num(y),
                w = num(xs.at(x0 + v) - xs.at(x0)),
                h = num(ROW_H - 6.0),
                color = cat.color,
                row = escape(&rows[r]),
                v = label(v),
            );
            x0 += v;
        }
    }
    x_axis(&mut s, xs, TOP + plot_h, chart);
    let entries: Vec<(String, &str)> = categories
        .iter()
        .map(|c| (c.name.to_string(), c.color))
        .collect();
    with_legend(s, &entries, TOP + plot_h)
}

fn row_labels(s: &mut String, rows: &[String]) {
    for (r, name) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text class="row" x="{}" y="{}" text-anchor="end">{}</text>"#,
            num(LEFT - 6.0),
            num(TOP + r as f64 * ROW_H + ROW_H / 2.0 + 4.0),
            escape(name)
        );
    }
}

/// Vertical bars, one `<rect>` per label (zero-height ones too).
pub fn bars(chart: &Chart, labels: &[String], values: &[f64], color: &str) -> Figure {
    let y_hi = values.iter().copied().fold(0.0, f64::max);
    let ys = Scale::new(
        0.0,
        if y_hi > 0.0 { y_hi * 1.05 } else { 1.0 },
        TOP + PLOT_H,
        TOP,
    );
    let n = labels.len().max(1) as f64;
    let slot = (WIDTH - LEFT - RIGHT) / n;
    let mut s = String::new();
    title(&mut s, chart);
    y_axis(&mut s, ys, LEFT, WIDTH - RIGHT, chart);
    let _ = writeln!(
        s,
        r##"<path class="axis" d="M{} {}H{}" stroke="#000" fill="none"/>"##,
        num(LEFT),
        num(TOP + PLOT_H),
        num(WIDTH - RIGHT)
    );
    // labels are shown when they fit (up to 40 bars), else every k-th
    let every = (labels.len() / 40).max(1);
    for (i, (l, &v)) in labels.iter().zip(values).enumerate() {
        let x = LEFT + i as f64 * slot + slot * 0.1;
        let top = ys.at(v.max(0.0));
        let _ = writeln!(
            s,
            r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{color}"><title>{}: {}</title></rect>"#,
            num(x),
            num(top),
            num(slot * 0.8),
            num(TOP + PLOT_H - top),
            escape(l),
            label(v)
        );
        if i % every == 0 {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                num(x + slot * 0.4),
                num(TOP + PLOT_H + 17.0),
                escape(l)
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        num((LEFT + WIDTH - RIGHT) / 2.0),
        num(TOP + PLOT_H + 35.0),
        escape(&chart.x_label)
    );
    Figure {
        width: WIDTH,
        height: TOP + PLOT_H + AXIS_H + 10.0,
        body: s,
    }
}

/// A Gantt chart: one row per location, one `<rect>` per interval coloured by its category,
/// x over `[x0, x1]`, a legend of the categories.
pub fn gantt(
    chart: &Chart,
    rows: &[String],
    (x0, x1): (f64, f64),
    intervals: &[Interval],
    categories: &[Category<'_>],
) -> Figure {
    let plot_h = rows.len() as f64 * ROW_H;
    let xs = Scale::new(x0, x1, LEFT, WIDTH - RIGHT);
    let mut s = String::new();
    title(&mut s, chart);
    row_labels(&mut s, rows);
    for iv in intervals {
        let cat = categories[iv.category % categories.len()];
        let a = xs.at(iv.start);
        let _ = writeln!(
            s,
            r#"<rect class="state {cls}" x="{x}" y="{y}" width="{w}" height="{h}" fill="{color}"><title>{row}: {cls} {s0}-{s1}</title></rect>"#,
            cls = escape(cat.name),
            x = num(a),
            y = num(TOP + iv.row as f64 * ROW_H + 3.0),
            w = num((xs.at(iv.end) - a).max(0.0)),
            h = num(ROW_H - 6.0),
            color = cat.color,
            row = escape(rows.get(iv.row).map_or("", |r| r.as_str())),
            s0 = label(iv.start),
            s1 = label(iv.end),
        );
    }
    x_axis(&mut s, xs, TOP + plot_h, chart);
    let entries: Vec<(String, &str)> = categories
        .iter()
        .map(|c| (c.name.to_string(), c.color))
        .collect();
    with_legend(s, &entries, TOP + plot_h)
}

/// A space-time diagram: a horizontal line (a `<path>`) per location, a `<line>` per message
/// from (send time, sender) to (receive time, receiver).
pub fn space_time(
    chart: &Chart,
    rows: &[String],
    (x0, x1): (f64, f64),
    arrows: &[Arrow],
) -> Figure {
    let plot_h = rows.len().max(1) as f64 * ROW_H * 1.5;
    let row_y = |r: usize| TOP + (r as f64 + 0.5) * ROW_H * 1.5;
    let xs = Scale::new(x0, x1, LEFT, WIDTH - RIGHT);
    let mut s = String::new();
    title(&mut s, chart);
    for (r, name) in rows.iter().enumerate() {
        let y = num(row_y(r));
        let _ = writeln!(
            s,
            r##"<path class="location" d="M{} {y}H{}" stroke="#444"/><text class="row" x="{}" y="{y}" dy="4" text-anchor="end">{}</text>"##,
            num(LEFT),
            num(WIDTH - RIGHT),
            num(LEFT - 6.0),
            escape(name)
        );
    }
    for a in arrows {
        let _ = writeln!(
            s,
            r##"<line class="message" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#d62728" stroke-width="1"><title>{} to {}: {} bytes, {}-{}</title></line>"##,
            num(xs.at(a.start)),
            num(row_y(a.from)),
            num(xs.at(a.end)),
            num(row_y(a.to)),
            escape(rows.get(a.from).map_or("", |r| r.as_str())),
            escape(rows.get(a.to).map_or("", |r| r.as_str())),
            a.bytes,
            label(a.start),
            label(a.end)
        );
    }
    x_axis(&mut s, xs, TOP + plot_h, chart);
    Figure {
        width: WIDTH,
        height: TOP + plot_h + AXIS_H + 10.0,
        body: s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(
            ticks(0.0, 1.0, 5),
            [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(ticks(0.0, 20.0, 4), [0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(label(0.0125), "0.0125");
        assert_eq!(label(1500.0), "1500");
        assert_eq!(num(-0.001), "0");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
