// Rows of values under the tracks: each thread's counters (the trace's counted calls, a step per
// call at its count) and the external series (plx run --monitor, plx import: a level as steps, a
// running total as a line): their data, drawing, labels and tooltips.

import { CountedCall, CountersAnswer, get, Meta, Series, SeriesAnswer } from "./api";
import { time } from "./format";
import { CounterRow, SeriesRow } from "./tracks";

/** A value, short. */
export function fmt(v: number): string {
  return Math.abs(v) >= 1e6 ? v.toExponential(3) : String(+v.toPrecision(6));
}

type Call = CountedCall;

/** Where the plot lies: times to canvas x, the window, the plot's edges. */
export interface Plot { x: (t: number) => number; t0: number; t1: number; left: number; right: number }

export class ValueRows {
  /** the external metrics, each with its value range */
  series: { s: Series; lo: number; hi: number }[] = [];
  /** per track, its counted calls (by start) and each event's largest value */
  counted = new Map<number, { events: string[]; calls: Call[]; max: number[] }>();
  private meta: Meta;

  constructor(meta: Meta) {
    this.meta = meta;
  }

  /** Asks for the series, and the counters when the run counted anything; `loaded` after each. */
  load(loaded: (what: "series" | "counters", n: number) => void, failed: (why: string) => void): void {
    if (this.meta.has_counters) {
      void get<CountersAnswer>("api/counters").then((a) => {
        if ("error" in a) { failed(a.error); return; }
        for (const t of a.tracks) {
          const max = t.events.map((_, e) => Math.max(1, ...t.calls.map((c) => c[3][e] ?? 0)));
          this.counted.set(t.track, { events: t.events, calls: t.calls.sort((x, y) => x[0] - y[0]), max });
        }
        loaded("counters", a.tracks.length);
      });
    }
    void get<SeriesAnswer>("api/series").then((a) => {
      this.series = a.series.map((x) => {
        const v = x.samples.map((p) => p[1]);
        return { s: x, lo: Math.min(0, ...v), hi: Math.max(...v, 0) };
      });
      loaded("series", this.series.length);
    });
  }

  /** Per track, how many counter rows it has. */
  counterEvents(): Map<number, number> {
    return new Map([...this.counted].map(([t, c]) => [t, c.events.length]));
  }

  /** The counted call of `track` under `t` (the innermost: the last begun), or undefined. */
  counterCall(track: number, t: number): Call | undefined {
    const c = this.counted.get(track);
    if (!c) return undefined;
    let found;
    for (const call of c.calls) {
      if (call[0] > t) break;
      if (call[1] >= t) found = call;
    }
    return found;
  }

  /** A counter row's event, its calls with a value and their sum per function. */
  counterSums(row: CounterRow): { event: string; calls: number; sums: Record<string, number> } {
    const c = this.counted.get(row.track);
    const sums: Record<string, number> = {};
    let calls = 0;
    for (const call of c?.calls ?? []) {
      const v = call[3][row.event];
      if (v === null || v === undefined) continue;
      const name = this.meta.regions[call[2]]?.[0] ?? "?";
      sums[name] = (sums[name] ?? 0) + v;
      calls++;
    }
    return { event: c?.events[row.event] ?? "?", calls, sums };
  }

  /** A series' value at `t`: the last sample at or before it (a level holds until the next;
   * a running total's value so far), null before the first. */
  seriesValue(i: number, t: number): number | null {
    const p = this.series[i]?.s.samples ?? [];
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (p[m][0] <= t) lo = m + 1; else hi = m;
    }
    return lo === 0 ? null : p[lo - 1][1];
  }

  /** [kind, text, value] of the row at time `t`; `who` names a track. */
  describe(row: CounterRow | SeriesRow, t: number, who: (track: number) => string): [string, string, number | null] | null {
    if (row.kind === "counter") {
      const c = this.counted.get(row.track);
      const call = this.counterCall(row.track, t);
      const v = call?.[3][row.event];
      if (!c || !call || v === null || v === undefined) return null;
      return ["counter", `${c.events[row.event]}: ${v} in ${this.meta.regions[call[2]]?.[0] ?? "?"} ` +
        `(${time(call[1] - call[0])}, ${who(row.track)})`, v];
    }
    const x = this.series[row.series];
    const v = this.seriesValue(row.series, t);
    return ["series", `${x.s.name} at ${time(t)}: ${v === null ? "no value yet" : `${fmt(v)}${x.s.unit ? ` ${x.s.unit}` : ""}`}` +
      ` (${x.s.source})`, v];
  }

  /** The row's label in the labels' column. */
  label(g: CanvasRenderingContext2D, row: CounterRow | SeriesRow, y: number, width: number): void {
    g.fillStyle = "#fff";
    g.fillRect(0, y, width, row.h);
    if (row.kind === "counter") {
      const c = this.counted.get(row.track);
      g.fillStyle = "#6a1b9a";
      g.font = "10px sans-serif";
      g.fillText(`${c?.events[row.event] ?? "?"} (max ${fmt(c?.max[row.event] ?? 0)})`.slice(0, 30), 40, y + 14);
    } else {
      const x = this.series[row.series];
      g.fillStyle = "#222";
      g.fillText(`${x.s.name}${x.s.unit ? ` (${x.s.unit})` : ""}`.slice(0, 26), 28, y + 12);
      g.fillStyle = "#888";
      g.font = "9px sans-serif";
      g.fillText(`${x.s.mode === "level" ? "step" : "running total"}, max ${fmt(x.hi)}`, 28, y + 24);
    }
    g.font = "11px sans-serif";
  }

  /** Draws the row at canvas y `y0`. */
  draw(g: CanvasRenderingContext2D, row: CounterRow | SeriesRow, y0: number, p: Plot): void {
    if (row.kind === "counter") this.drawCounter(g, row, y0, p); else this.drawSeries(g, row, y0, p);
  }

  /** A counter as steps: each counted call's value from its entry to its exit. */
  private drawCounter(g: CanvasRenderingContext2D, row: CounterRow, y0: number, p: Plot): void {
    g.fillStyle = "#fbf8fd";
    g.fillRect(p.left, y0, p.right - p.left, row.h);
    const c = this.counted.get(row.track);
    if (!c) return;
    const max = c.max[row.event];
    g.fillStyle = "rgba(106,27,154,0.6)";
    for (const [s, e, , vals] of c.calls) {
      if (s > p.t1) break;
      const v = vals[row.event];
      if (e < p.t0 || v === null || v === undefined) continue;
      const x0 = Math.max(p.x(s), p.left);
      const x1 = Math.min(p.x(e), p.right);
      const h = Math.max((v / max) * (row.h - 4), v > 0 ? 1 : 0);
      g.fillRect(x0, y0 + row.h - 2 - h, Math.max(x1 - x0, 1), h);
    }
  }

  /** A level as steps, a running total as a line, from the sample before the window to the
   * one after it; the samples marked when there is room to show them apart. */
  private drawSeries(g: CanvasRenderingContext2D, row: SeriesRow, y0: number, p: Plot): void {
    const x = this.series[row.series];
    g.fillStyle = "#fbfbf5";
    g.fillRect(p.left, y0, p.right - p.left, row.h);
    const pts = x.s.samples;
    if (!pts.length) return;
    const yOf = (v: number) => y0 + row.h - 3 - ((v - x.lo) / Math.max(x.hi - x.lo, 1e-300)) * (row.h - 6);
    let a = 0;
    while (a + 1 < pts.length && pts[a + 1][0] <= p.t0) a++;
    g.strokeStyle = "#00897b";
    g.lineWidth = 1.5;
    g.beginPath();
    let prevY = 0;
    for (let i = a; i < pts.length; i++) {
      const [t, v] = pts[i];
      const px = Math.max(p.x(t), p.left - 2);
      const py = yOf(v);
      if (i === a) g.moveTo(px, py);
      else if (x.s.mode === "level") { g.lineTo(px, prevY); g.lineTo(px, py); } else g.lineTo(px, py);
      prevY = py;
      if (t > p.t1) break;
    }
    g.stroke();
    g.lineWidth = 1;
    if (pts.length < (p.right - p.left) / 4) {
      g.fillStyle = "#00695c";
      for (const [t, v] of pts) if (t >= p.t0 && t <= p.t1) g.fillRect(p.x(t) - 1.5, yOf(v) - 1.5, 3, 3);
    }
  }
}
