// The selection's flame graphs (icicles): the call paths of the regions in the selected interval
// and threads, each path's time clipped to the interval, and the call-stack samples of those
// threads (/api/samples); a click zooms into a node, a click on the top bar back out; a tooltip
// gives a node's call path and its time, calls or samples.

import { FlameAnswer, Meta, SamplesAnswer } from "./api";
import { el, regionColor, time } from "./format";

/** A flame graph: `/api/flame`'s answer, or one made of samples, which names its nodes (`names`)
 * and counts samples instead of calls. */
export interface Flame extends FlameAnswer {
  names?: string[]; sampled?: boolean[];
}

/** The samples' tree as a flame graph (estimated ns as the width, samples as the count). */
export function samplesFlame(a: SamplesAnswer): Flame {
  return {
    t0: 0, t1: 0, nodes: a.nodes.map(([p, , n, ns]) => [p, -1, ns, n]),
    names: a.nodes.map((x) => x[1]), sampled: a.nodes.map((x) => x[4] === 1),
  };
}

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

  private tip: HTMLElement;

  constructor(id = "flame", title = "Flame graph of the selection") {
    this.root = el("div", { id, class: "panel" });
    this.root.style.position = "relative";
    this.title = el("h3", {}, title);
    this.canvas = el("canvas", { id: `${id}-graph` });
    this.tip = el("div", { id: `${id}-tip`, class: "flame-tip" });
    Object.assign(this.tip.style, { position: "absolute", display: "none", background: "#fffde7",
      border: "1px solid #999", padding: "2px 4px", font: "11px sans-serif", pointerEvents: "none",
      maxWidth: "420px", zIndex: "5" });
    this.root.append(this.title, this.tip);
    const at = (e: MouseEvent) => this.boxes.find((x) => e.offsetX >= x.x && e.offsetX <= x.x + x.w && e.offsetY >= x.y && e.offsetY < x.y + ROW);
    this.canvas.addEventListener("click", (e) => {
      const b = at(e);
      if (!b) return;
      this.zoom(b.node === this.focus ? this.parentOf(b.node) : b.node);
    });
    this.canvas.addEventListener("mousemove", (e) => {
      const b = at(e);
      if (!b || b.node < 0) { this.tip.style.display = "none"; return; }
      this.tip.textContent = this.describe(b.node);
      const [, , incl, count] = this.f?.nodes[b.node] ?? [0, 0, 0, 0];
      this.tip.dataset.node = String(b.node);
      this.tip.dataset.ns = String(incl);
      this.tip.dataset.count = String(count);
      this.tip.style.display = "block";
      // kept inside the panel: left of the pointer near its right edge
      const x = this.canvas.offsetLeft + e.offsetX + 10;
      this.tip.style.left = `${Math.max(0, Math.min(x, this.root.clientWidth - 230))}px`;
      this.tip.style.top = `${this.canvas.offsetTop + e.offsetY + 14}px`;
    });
    this.canvas.addEventListener("mouseleave", () => { this.tip.style.display = "none"; });
  }

  /** A node's name. */
  private nameOf(k: number): [string, string] {
    const f = this.f;
    if (!f) return ["?", "function"];
    if (f.names) return [f.names[k] ?? "?", "function"];
    return (this.meta?.regions[f.nodes[k][1]] ?? ["?", "function"]) as [string, string];
  }

  /** The tooltip of node `k`: its call path, then its time and calls (or samples). */
  describe(k: number): string {
    const f = this.f;
    if (!f) return "";
    const path: string[] = [];
    for (let p = k; p >= 0; p = f.nodes[p][0]) path.unshift(this.nameOf(p)[0]);
    const [, , incl, count] = f.nodes[k];
    if (f.names) {
      const how = f.sampled?.[k] ? "sampled frame" : "instrumented call";
      return `${path.join(" → ")} · ${count} samples · ~${time(incl)} estimated (${how})`;
    }
    return `${path.join(" → ")} · ${time(incl)} · ${count} calls begun`;
  }

  /** Hides the graph (nothing to show). */
  hide(text: string): void {
    this.f = null;
    this.title.textContent = text;
    this.canvas.remove();
    this.root.dataset.samples = "0";
  }

  private parentOf(n: number): number {
    return this.f && n >= 0 ? this.f.nodes[n][0] : -1;
  }

  show(f: Flame, meta: Meta, threads: number, title?: string): void {
    this.f = f;
    this.meta = meta;
    this.children = f.nodes.map(() => []);
    this.roots = [];
    f.nodes.forEach(([p], i) => (p < 0 ? this.roots : this.children[p]).push(i));
    this.title.textContent = title ?? `Flame graph: ${time(f.t1 - f.t0)} on ${threads} threads`;
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
    for (let p = n; p >= 0; p = f.nodes[p][0]) path.unshift(this.nameOf(p)[0]);
    g.fillStyle = "#cfd8dc";
    g.fillRect(0, 0, w, ROW - 1);
    g.fillStyle = "#111";
    g.fillText(n < 0 ? `all (${time(total)})` : `↑ ${path.join(" → ")}`, 3, 11);
    this.boxes.push({ x: 0, y: 0, w, node: n < 0 ? -1 : this.parentOf(n) });
    const place = (k: number, x: number, depth: number): void => {
      const [, , incl] = f.nodes[k];
      const bw = (incl / total) * w;
      if (bw < 0.5) return;
      const [name, kind] = this.nameOf(k);
      const y = depth * ROW;
      g.fillStyle = regionColor(name, kind);
      g.fillRect(x, y, Math.max(bw - 1, 0.5), ROW - 1);
      if (bw > 30) {
        g.save();
        g.beginPath();
        g.rect(x, y, bw, ROW);
        g.clip();
        g.fillStyle = "#111";
        g.fillText(`${name} ${f.names ? "~" : ""}${time(incl)}`, x + 2, y + 11);
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
