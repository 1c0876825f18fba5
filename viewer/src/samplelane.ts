// Call-stack samples on the tracks (/api/sample_lane), drawn as dark bars along the bottom of
// each sampled track. A thread whose samples the runtime stamped (a trace): each sample in the
// pixel column of its time, its tooltip naming the sampled frames. A thread without stamps (a
// profile): per column, the samples estimated to fall there (each call path's share, by
// exclusive time, of its instances).

import { get, SampleLaneAnswer } from "./api";
import { time } from "./format";

/** The strip's height, px, at the bottom of a track's row. */
export const STRIP = 5;

export class SampleLane {
  answer: SampleLaneAnswer | null = null;
  private seq = 0;
  /** the samples drawn in the last frame, stamped and estimated (for the browser tests) */
  drawnSum = 0;
  /** the stamped samples drawn in the last frame, each at its time */
  drawnStamped = 0;

  load(t0: number, t1: number, width: number, done: () => void, failed: (why: string) => void): void {
    const seq = ++this.seq;
    get<SampleLaneAnswer>("api/sample_lane", { t0: Math.max(0, t0), t1, width })
      .then((a) => { if (seq === this.seq) { this.answer = a; done(); } })
      .catch((e: Error) => failed(e.message));
  }

  /** Draws each sampled track's strip; `row(track)`: its row's canvas y and height, or null. */
  draw(g: CanvasRenderingContext2D, x: (t: number) => number, row: (track: number) => { y: number; h: number } | null): void {
    this.drawnSum = 0;
    this.drawnStamped = 0;
    const a = this.answer;
    if (!a) return;
    const colT = (a.t1 - a.t0) / a.width;
    for (const t of a.tracks) {
      const r = row(t.track);
      if (!r || !t.columns) continue;
      const max = t.columns.reduce((m, c) => Math.max(m, c[1]), 0) || 1;
      const y0 = r.y + r.h - STRIP;
      g.fillStyle = "rgba(0,0,0,0.06)";
      g.fillRect(x(a.t0), y0, x(a.t1) - x(a.t0), STRIP);
      // stamped: a full-height tick per column with samples, darker than an estimate
      g.fillStyle = t.stamped ? "#000" : "#263238";
      for (const [c, v] of t.columns) {
        const h = t.stamped ? STRIP : Math.max(1, (v / max) * STRIP);
        const x0 = x(a.t0 + c * colT);
        g.fillRect(x0, y0 + STRIP - h, Math.max(x(a.t0 + (c + 1) * colT) - x0, 1), h);
        this.drawnSum += v;
        if (t.stamped) this.drawnStamped += v;
      }
    }
  }

  /** The tooltip at time `t` on `track`'s strip: [text, samples] or null. */
  describe(track: number, t: number, trackName: string): [string, number] | null {
    const a = this.answer;
    const s = a?.tracks.find((x) => x.track === track);
    if (!a || !s) return null;
    if (!s.columns) return [`call-stack samples: too many regions in view to place them, zoom in · ${trackName}`, 0];
    const c = Math.floor(((t - a.t0) / (a.t1 - a.t0)) * a.width);
    const col = s.columns.find((x) => x[0] === c);
    if (!col) return null;
    if ("frames" in s) {
      const colT = (a.t1 - a.t0) / a.width;
      const frames = (col[2] as [number, number][]).map(([f, n]) => {
        const [name, path] = s.frames[f] ?? ["?", ""];
        return `${name}${col[1] > 1 ? ` ×${n}` : ""}${path && path !== name ? ` (${path})` : ""}`;
      });
      const more = col[1] - (col[2] as [number, number][]).reduce((m, x) => m + x[1], 0);
      const what = col[1] === 1 ? "1 sample" : `${col[1]} samples`;
      return [`${what} at ${time(a.t0 + c * colT)} – ${time(a.t0 + (c + 1) * colT)} · in ${frames.join(", ")}${more > 0 ? `, ${more} more` : ""} · ${trackName}`, col[1]];
    }
    const path = (col[2] as number) >= 0 ? s.paths[col[2] as number] ?? "?" : "?";
    return [`~${col[1].toFixed(1)} samples (estimated) · ~${time(col[1] * s.period_ns)} CPU · mostly in ${path} · ${trackName}`, col[1]];
  }
}
