// The overview strip: the whole run's activity (busy threads per column, from one window answer
// of the whole run) with the current window on it; a click centres the window there, a drag
// chooses a new one.

import { get, Meta, WindowAnswer } from "./api";
import { el } from "./format";

const H = 34;

export class Overview {
  readonly canvas: HTMLCanvasElement;
  private meta: Meta;
  private busy: number[] | null = null;
  private asked = false;
  private window: [number, number] = [0, 1];
  private drag: number | null = null;

  constructor(meta: Meta, setWindow: (t0: number, t1: number) => void) {
    this.meta = meta;
    this.canvas = el("canvas", { id: "overview" });
    const c = this.canvas;
    const at = (px: number) => (px / Math.max(c.clientWidth, 1)) * Math.max(meta.span, 1);
    c.addEventListener("mousedown", (e) => { this.drag = e.offsetX; });
    c.addEventListener("mouseup", (e) => {
      const from = this.drag;
      this.drag = null;
      if (from === null) return;
      if (Math.abs(e.offsetX - from) > 3) {
        setWindow(at(Math.min(from, e.offsetX)), at(Math.max(from, e.offsetX)));
      } else {
        const w = this.window[1] - this.window[0];
        const t = at(e.offsetX);
        setWindow(t - w / 2, t + w / 2);
      }
    });
  }

  private load(width: number): void {
    if (this.asked) return;
    this.asked = true;
    get<WindowAnswer>("api/window", { t0: 0, t1: Math.max(this.meta.span, 1), width, max: 0 }).then((a) => {
      // time busy at the outermost depth, summed over tracks, per column
      const busy = new Array<number>(a.width).fill(0);
      const span = (a.t1 - a.t0) / a.width;
      for (const lanes of a.tracks) {
        const lane = lanes[0];
        if (!lane) continue;
        for (const [col, , b] of lane.columns) busy[col] += b;
        for (const [s, e] of lane.full) {
          for (let c = Math.max(0, Math.floor((s - a.t0) / span)); c < a.width && a.t0 + c * span < e; c++) {
            busy[c] += Math.min(e, a.t0 + (c + 1) * span) - Math.max(s, a.t0 + c * span);
          }
        }
      }
      this.busy = busy.map((b) => b / span);
      this.draw(...this.window);
    }).catch(() => { this.asked = false; });
  }

  draw(t0: number, t1: number): void {
    this.window = [t0, t1];
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    if (w <= 0) return;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(H * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(H * dpr);
      c.style.height = `${H}px`;
    }
    this.load(Math.round(w));
    const g = c.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#f7f8fa";
    g.fillRect(0, 0, w, H);
    const busy = this.busy;
    if (busy) {
      const max = Math.max(1, ...busy);
      g.fillStyle = "#78909c";
      const cw = w / busy.length;
      busy.forEach((b, i) => {
        const h = (b / max) * (H - 4);
        g.fillRect(i * cw, H - h, Math.max(cw, 1), h);
      });
    }
    const span = Math.max(this.meta.span, 1);
    const x0 = (t0 / span) * w;
    const x1 = (t1 / span) * w;
    g.fillStyle = "rgba(255,109,0,0.18)";
    g.fillRect(x0, 0, x1 - x0, H);
    g.strokeStyle = "#ff6d00";
    g.lineWidth = 2;
    g.strokeRect(x0, 1, Math.max(x1 - x0, 2), H - 2);
    g.lineWidth = 1;
    c.dataset.x0 = x0.toFixed(1);
    c.dataset.x1 = x1.toFixed(1);
    c.dataset.loaded = busy ? "1" : "0";
  }
}
