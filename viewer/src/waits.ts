// Wait states on the timeline (plx waits' patterns): each wait drawn over the routine it waited
// in, coloured by pattern, from the server's /api/waits for the window; a click shows its
// cause (/api/wait: the location it waited for, and plx waits --causes' division of it).

import { get, WaitAnswer, Waits, WaitsAnswer, WaitDetail } from "./api";
import { el, time } from "./format";

/** One colour per pattern: MPI point-to-point red/orange, collectives purple, threads
 * teal/blue, OpenMP brown, streams olive. */
const COLORS: Record<string, string> = {
  late_sender: "#e53935", late_receiver: "#fb8c00", wait_at_barrier: "#8e24aa",
  wait_at_nxn: "#5e35b1", late_broadcast: "#d81b60", early_reduce: "#3949ab",
  lock_contention: "#00897b", condition_wait: "#039be5", join_wait: "#546e7a",
  semaphore_wait: "#00acc1", thread_barrier: "#7cb342", omp_barrier: "#6d4c41",
  omp_critical: "#8d6e63", omp_lock: "#a1887f", omp_ordered: "#795548",
  omp_taskwait: "#4e342e", stream_wait: "#9e9d24", late_connect: "#827717",
};

/** How often the waits are asked for again while the server computes them. */
const RETRY_MS = 300;

export function waitColor(pattern: string): string {
  return COLORS[pattern] ?? "#c62828";
}

/** A wait as drawn, canvas px. */
export interface DrawnWait { x: number; y: number; w: number; h: number; id: number; track: number; pattern: string; start: number; end: number }

/** Where a track's lane `depth` lies on the canvas (null: not in view). */
export type LaneAt = (track: number, depth: number) => { y: number; h: number } | null;

export class WaitLayer {
  answer: Waits | null = null;
  drawn: DrawnWait[] = [];
  private seq = 0;

  /** Asks for the waits of [t0, t1); `done` when they came (the newest request wins). While
   * the server still replays the trace, `computing` is called and the request repeated every
   * RETRY_MS. */
  load(t0: number, t1: number, done: () => void, failed: (why: string) => void,
    computing: () => void = () => {}): void {
    const seq = ++this.seq;
    const ask = (): void => {
      get<WaitsAnswer>("api/waits", { t0: Math.max(0, t0), t1, max: 5000 })
        .then((a) => {
          if (seq !== this.seq) return;
          if ("computing" in a) {
            computing();
            setTimeout(() => { if (seq === this.seq) ask(); }, RETRY_MS);
            return;
          }
          if (a.error) failed(`waits: ${a.error}`);
          this.answer = a;
          done();
        })
        .catch((e: Error) => failed(e.message));
    };
    ask();
  }

  /** Draws the waits over their routines: a box in the pattern's colour, striped so that the
   * routine's own colour still shows, at least 2 px wide. */
  draw(g: CanvasRenderingContext2D, x: (t: number) => number, lane: LaneAt, left: number, right: number): void {
    this.drawn = [];
    const a = this.answer;
    if (!a) return;
    for (const [id, track, p, s, e, depth] of a.waits) {
      const at = lane(track, depth);
      if (!at) continue;
      const x0 = Math.max(x(s), left - 2);
      const x1 = Math.min(x(e), right + 2);
      if (x1 < left || x0 > right) continue;
      const w = Math.max(x1 - x0, 2);
      const pattern = p === null ? "?" : a.patterns[p] ?? "?";
      const c = waitColor(pattern);
      g.fillStyle = c;
      g.globalAlpha = 0.85;
      g.fillRect(x0, at.y, w, at.h);
      g.globalAlpha = 1;
      if (w > 6) {
        // diagonal stripes: a wait, not a region
        g.save();
        g.beginPath();
        g.rect(x0, at.y, w, at.h);
        g.clip();
        g.strokeStyle = "rgba(255,255,255,0.55)";
        g.lineWidth = 1;
        g.beginPath();
        for (let k = x0 - at.h; k < x0 + w; k += 6) { g.moveTo(k, at.y + at.h); g.lineTo(k + at.h, at.y); }
        g.stroke();
        if (w > 70) {
          g.fillStyle = "#fff";
          g.fillText(`${pattern} ${time(e - s)}`, x0 + 3, at.y + 10);
        }
        g.restore();
      }
      this.drawn.push({ x: x0, y: at.y, w, h: at.h, id, track, pattern, start: s, end: e });
    }
  }

  /** The wait drawn at (px, py), the last drawn (the topmost) first. */
  hit(px: number, py: number): DrawnWait | undefined {
    for (let i = this.drawn.length - 1; i >= 0; i--) {
      const d = this.drawn[i];
      if (px >= d.x && px <= d.x + d.w && py >= d.y && py <= d.y + d.h) return d;
    }
    return undefined;
  }

  /** Shows wait `id` and its causes in `panel`. */
  async show(id: number, panel: HTMLElement, trackName: (t: number) => string): Promise<WaitDetail> {
    const w = await get<WaitAnswer>("api/wait", { id });
    if ("computing" in w) throw new Error(`wait ${id}: the waits are still being replayed`);
    panel.replaceChildren();
    panel.append(
      el("h3", { id: "detail-name", "data-pattern": w.pattern }, `${w.pattern} (${w.group})`),
      el("div", { id: "detail-duration", "data-ns": String(w.wait_ns) }, `waited ${time(w.wait_ns)}`),
      el("div", { id: "wait-where" },
        `${w.track === null ? w.location : trackName(w.track)} in ${w.callpath}, from ${time(w.start)} to ${time(w.end)}`));
    if (w.late) {
      panel.append(el("div", { id: "wait-late", "data-location": w.late.location, "data-callpath": w.late.callpath },
        `waiting for ${w.late.track === null ? w.late.location : trackName(w.late.track)}, which arrived in ${w.late.callpath}`));
    }
    if (w.causes.length) {
      const t = el("table", { id: "wait-causes", class: "grid" });
      const head = el("tr");
      for (const h of ["cause (kind)", "call path", "delay", "share"]) head.append(el("th", {}, h));
      t.append(head);
      for (const c of w.causes) {
        const tr = el("tr", { "data-location": c.location, "data-callpath": c.callpath, "data-kind": c.kind, "data-ns": String(c.delay_ns) });
        tr.append(el("td", {}, `${c.track === null ? c.location : trackName(c.track)} (${c.kind})`),
          el("td", {}, c.callpath.split(" => ").join(" → ")), el("td", {}, time(c.delay_ns)),
          el("td", {}, `${(100 * c.delay_ns / Math.max(w.wait_ns, 1)).toFixed(1)} %`));
        t.append(tr);
      }
      panel.append(el("div", { class: "help" }, "Root causes (plx waits --causes):"), t);
    }
    return w;
  }
}
