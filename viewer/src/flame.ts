// The selection's flame graph (an icicle): the call paths of the regions in the selected interval
// and threads, each path's time clipped to the interval; a click zooms into a node, a click on
// the top bar back out.

import { Meta } from "./api";
import { el, regionColor, time } from "./format";

/** `/api/flame`: nodes [parent (−1: a root), region, inclusive ns, calls begun in it]. */
export interface Flame { t0: number; t1: number; nodes: [number, number, number, number][] }

const ROW = 16;

interface Box { x: number; y: number; w: number; node: number }

export class FlameView {
  readonly root: HTMLElement;
  private canvas: HTMLCanvasElement;
  private title: HTMLElement;
  private f: Flame | null = null;
  get data(): Flame | null { return this.f; }
  private meta: Meta | null = null;
  private children: number[][] = [];
  private roots: number[] = [];
  private focus = -1;
  boxes: Box[] = [];

  constructor() {
    this.root = el("div", { id: "flame", class: "panel" });
    this.title = el("h3", {}, "Flame graph of the selection");
    this.canvas = el("canvas", { id: "flame-graph" });
    this.root.append(this.title);
    this.canvas.addEventListener("click", (e) => {
      const b = this.boxes.find((x) => e.offsetX >= x.x && e.offsetX <= x.x + x.w && e.offsetY >= x.y && e.offsetY < x.y + ROW);
      if (!b) return;
      this.zoom(b.node === this.focus ? this.parentOf(b.node) : b.node);
    });
  }

  private parentOf(n: number): number {
    return this.f && n >= 0 ? this.f.nodes[n][0] : -1;
  }

  show(f: Flame, meta: Meta, threads: number): void {
    this.f = f;
    this.meta = meta;
    this.children = f.nodes.map(() => []);
    this.roots = [];
    f.nodes.forEach(([p], i) => (p < 0 ? this.roots : this.children[p]).push(i));
    this.title.textContent = `Flame graph: ${time(f.t1 - f.t0)} on ${threads} threads`;
    if (!this.canvas.isConnected) this.root.append(this.canvas);
    this.zoom(-1);
  }

  /** Draws the tree below node `n` (−1: everything) across the width. */
  zoom(n: number): void {
    this.focus = n;
    const f = this.f;
    const meta = this.meta;
    if (!f || !meta) return;
    const c = this.canvas;
    const w = Math.max(c.clientWidth, 200);
    const depthOf = (k: number): number => { let d = 0; for (let p = f.nodes[k][0]; p >= 0; p = f.nodes[p][0]) d++; return d; };
    const deepest = f.nodes.reduce((m, _, k) => Math.max(m, depthOf(k)), 0);
    const h = (deepest + 2) * ROW;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.height = `${h}px`;
    const g = c.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, w, h);
    g.font = "11px sans-serif";
    this.boxes = [];
    const top = n < 0 ? this.roots : [n];
    const total = top.reduce((s, k) => s + f.nodes[k][2], 0) || 1;
    // the path from the root to the focus, as the top bar's text
    const path: string[] = [];
    for (let p = n; p >= 0; p = f.nodes[p][0]) path.unshift(meta.regions[f.nodes[p][1]]?.[0] ?? "?");
    g.fillStyle = "#cfd8dc";
    g.fillRect(0, 0, w, ROW - 1);
    g.fillStyle = "#111";
    g.fillText(n < 0 ? `all (${time(total)})` : `↑ ${path.join(" → ")}`, 3, 11);
    this.boxes.push({ x: 0, y: 0, w, node: n < 0 ? -1 : this.parentOf(n) });
    const place = (k: number, x: number, depth: number): void => {
      const [, region, incl] = f.nodes[k];
      const bw = (incl / total) * w;
      if (bw < 0.5) return;
      const [name, kind] = meta.regions[region] ?? ["?", "function"];
      const y = depth * ROW;
      g.fillStyle = regionColor(name, kind);
      g.fillRect(x, y, Math.max(bw - 1, 0.5), ROW - 1);
      if (bw > 30) {
        g.save();
        g.beginPath();
        g.rect(x, y, bw, ROW);
        g.clip();
        g.fillStyle = "#111";
        g.fillText(`${name} ${time(incl)}`, x + 2, y + 11);
        g.restore();
      }
      this.boxes.push({ x, y, w: bw, node: k });
      let cx = x;
      for (const ch of this.children[k]) {
        place(ch, cx, depth + 1);
        cx += (f.nodes[ch][2] / total) * w;
      }
    };
    let x = 0;
    for (const k of top) {
      place(k, x, 1);
      x += (f.nodes[k][2] / total) * w;
    }
    c.dataset.nodes = String(f.nodes.length);
    c.dataset.focus = String(n);
    c.dataset.boxes = String(this.boxes.length - 1);
  }
}
