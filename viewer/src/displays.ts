// Displays: utilization per location, the concurrency profile, the message queue length
// (JPVS's displays) and the critical-path profile per level (IPS-2).

import { Compare, CritPathAnswer, DisplaysAnswer } from "./api";
import { bytes, el, seconds, time } from "./format";

const STATE_COLORS = ["#2ca02c", "#d62728", "#ff7f0e", "#dddddd"];

function bars(values: number[], color: string, title: string, label: (i: number) => string): HTMLElement {
  const box = el("div", { class: "chart" });
  box.append(el("h3", {}, title));
  const c = el("canvas", { width: "760", height: "140" });
  const g = c.getContext("2d");
  const max = Math.max(1e-12, ...values);
  if (g) {
    const w = 740 / Math.max(values.length, 1);
    g.fillStyle = color;
    values.forEach((v, i) => { const h = (v / max) * 115; g.fillRect(10 + i * w, 125 - h, Math.max(w - 1, 1), h); });
    g.fillStyle = "#333";
    g.font = "10px sans-serif";
    g.fillText(`max ${max.toFixed(2)}`, 12, 10);
    g.fillText(label(0), 10, 138);
    g.fillText(label(values.length), 680, 138);
  }
  box.append(c);
  return box;
}

export function displaysView(d: DisplaysAnswer, cp: CritPathAnswer, cmp: Compare): HTMLElement {
  const root = el("div", { id: "displays-view", class: "view" });
  if ("error" in d) { root.append(el("p", {}, d.error)); return root; }
  root.append(el("h3", {}, "Utilization"));
  const t = el("table", { id: "utilization", class: "grid" });
  const hr = el("tr");
  hr.append(el("th", {}, "location"), el("th", {}, "states"));
  for (const s of d.states) hr.append(el("th", {}, s));
  t.append(hr);
  for (const [loc, secs] of d.utilization) {
    const tot = secs.reduce((a, b) => a + b, 0) || 1;
    const tr = el("tr");
    const bar = el("td");
    const box = el("div", { class: "stack" });
    secs.forEach((s, i) => {
      const seg = el("span");
      seg.style.width = `${(100 * s) / tot}%`;
      seg.style.background = STATE_COLORS[i] ?? "#999";
      box.append(seg);
    });
    bar.append(box);
    tr.append(el("td", {}, loc), bar);
    for (const s of secs) tr.append(el("td", {}, seconds(s)));
    t.append(tr);
  }
  root.append(t);
  const c = d.concurrency;
  root.append(bars(c.seconds, "#2ca02c", "Concurrency: seconds with k locations computing", (i) => `k=${i === 0 ? 0 : i - 1}`));
  root.append(bars(c.mean, "#1f77b4", "Concurrency over time: mean locations computing",
    (i) => time(c.start + i * c.width)));
  const q = d.queue;
  root.append(bars(q.max, "#9467bd", "Message queue length over time (longest per bin)",
    (i) => time(q.start + i * q.width)));
  const titles: Record<string, string> = {
    compute: "Time histogram: threads computing", mpi: "Time histogram: threads in MPI",
    messages: "Time histogram: messages sent", bytes: "Time histogram: bytes sent",
  };
  for (const [name, h] of Object.entries(d.histograms ?? {})) {
    root.append(bars(h.values, "#8c564b", titles[name] ?? name, (i) => time(h.start + i * h.width)));
  }
  root.append(el("h3", {}, `Critical path: ${"error" in cp ? cp.error : time(cp.length)}`));
  const length = "error" in cp ? 0 : cp.length;
  for (const [level, rows] of Object.entries("error" in cp ? {} : cp.profile)) {
    const pt = el("table", { class: "grid", id: `critpath-${level}` });
    const h = el("tr");
    for (const x of [level, "kind", "location", "time", "%"]) h.append(el("th", {}, x));
    pt.append(h);
    for (const [kind, name, loc, ns] of rows.slice(0, 25)) {
      const tr = el("tr");
      tr.append(el("td", {}, name), el("td", {}, kind), el("td", {}, loc ?? "ALL"), el("td", {}, time(ns)),
        el("td", {}, length > 0 ? ((100 * ns) / length).toFixed(1) : ""));
      pt.append(tr);
    }
    root.append(pt);
  }
  root.append(compareTables(cmp));
  return root;
}

/** IPS-2's metric table and the functions that differ most, one column per run. */
function compareTables(c: Compare): HTMLElement {
  const box = el("div", { id: "comparison" });
  box.append(el("h3", {}, `Comparison: ${c.runs.join(" · ")}`));
  const show = (unit: string, v: number | null): string =>
    v === null ? "–" : unit === "s" ? seconds(v) : unit === "bytes" ? bytes(v) : String(Math.round(v * 100) / 100);
  const t = el("table", { class: "grid", id: "compare-metrics" });
  const h = el("tr");
  h.append(el("th", {}, "metric"));
  for (const r of c.runs) h.append(el("th", {}, r));
  t.append(h);
  for (const [metric, unit, values] of c.metrics) {
    const tr = el("tr");
    tr.append(el("td", {}, metric));
    for (const v of values) tr.append(el("td", {}, show(unit, v)));
    t.append(tr);
  }
  box.append(t);
  if (c.runs.length > 1) {
    const f = el("table", { class: "grid", id: "compare-functions" });
    const fh = el("tr");
    fh.append(el("th", {}, "function"));
    for (const r of c.runs) fh.append(el("th", {}, `${r} inclusive`));
    fh.append(el("th", {}, "difference"), el("th", {}, "ratio"));
    f.append(fh);
    for (const [name, incl, diff, ratio] of c.functions.slice(0, 20)) {
      const tr = el("tr");
      tr.append(el("td", {}, name));
      for (const v of incl) tr.append(el("td", {}, show("s", v)));
      tr.append(el("td", {}, seconds(diff)), el("td", {}, ratio === null ? "–" : ratio.toFixed(3)));
      f.append(tr);
    }
    box.append(f);
  }
  return box;
}
