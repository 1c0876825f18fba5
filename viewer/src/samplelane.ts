// Call-stack samples on the tracks (/api/sample_lane): per pixel column of the window, the
// samples estimated to fall there (a thread's samples carry no time: each call path's share,
// by exclusive time, of its instances), drawn as dark bars along the bottom of the track.

import { get } from "./api";
import { time } from "./format";

export interface SampleTrack {
  track: number; taken: number; placed: number; period_ns: number;
  /** [column, estimated samples, call path of the largest share (index into paths; -1 none)];
   * null: too many regions in the window to place them (zoom in) */
  columns: [number, number, number][] | null;
  paths: string[];
}
export interface SampleLaneAnswer { t0: number; t1: number; width: number; tracks: SampleTrack[] }

/** The strip's height, px, at the bottom of a track's row. */
export const STRIP = 5;

export class SampleLane {
  answer: SampleLaneAnswer | null = null;
  private seq = 0;
  /** the estimated samples drawn in the last frame (for the browser tests) */
  drawnSum = 0;

  load(t0: number, t1: number, width: number, done: () => void, failed: (why: string) => void): void {
    const seq = ++this.seq;
    get<SampleLaneAnswer>("api/sample_lane", { t0: Math.max(0, t0), t1, width })
      .then((a) => { if (seq === this.seq) { this.answer = a; done(); } })
      .catch((e: Error) => failed(e.message));
  }

  /** Draws each sampled track's strip; `row(track)`: its row's canvas y and height, or null. */
  draw(g: CanvasRenderingContext2D, x: (t: number) => number, row: (track: number) => { y: number; h: number } | null): void {
    this.drawnSum = 0;
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
      g.fillStyle = "#263238";
      for (const [c, v] of t.columns) {
        const h = Math.max(1, (v / max) * STRIP);
        const x0 = x(a.t0 + c * colT);
        g.fillRect(x0, y0 + STRIP - h, Math.max(x(a.t0 + (c + 1) * colT) - x0, 1), h);
        this.drawnSum += v;
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
    const path = col[2] >= 0 ? s.paths[col[2]] : "?";
    return [`~${col[1].toFixed(1)} samples (estimated) · ~${time(col[1] * s.period_ns)} CPU · mostly in ${path} · ${trackName}`, col[1]];
  }
}
