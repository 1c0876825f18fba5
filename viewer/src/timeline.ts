// The timeline: one track per thread grouped by application, host and process; regions nested
// flame-chart style from the server's window answers; message lines; the critical path; markers.

import { CritPath, get, Meta, RegionDetail, Stats, WindowAnswer } from "./api";
import { bytes, el, regionColor, time } from "./format";

const LABEL_W = 170;
const AXIS_H = 26;
const LANE_H = 14;
const GROUP_H = 18;

interface Row { kind: "group"; text: string; y: number; level: number }
/** IPS-2's views: logical (application → rank → thread), physical (host → process → thread). */
export type Grouping = "logical" | "physical";
/** The grouping as a tree (the shape of plx hierarchy's JSON), for the browser tests. */
export interface GroupNode { name: string; children: GroupNode[] }
interface TrackRow { track: number; y: number; h: number }
/** A region drawn at full detail, for hit tests (and the browser tests). */
export interface Drawn { x: number; y: number; w: number; h: number; track: number; depth: number; index: number }

export class Timeline {
  readonly root: HTMLElement;
  private canvas: HTMLCanvasElement;
  private detail: HTMLElement;
  private stats: HTMLElement;
  private meta: Meta;
  private t0 = 0;
  private t1 = 1;
  private answer: WindowAnswer | null = null;
  private seq = 0;
  private pending = false;
  private groups: Row[] = [];
  private rows: TrackRow[] = [];
  private height = 0;
  private crit: CritPath | null = null;
  private showCrit = false;
  private selection: [number, number] | null = null;
  private drag: { x: number; t0: number; t1: number; select: boolean } | null = null;
  drawn: Drawn[] = [];
  grouping: Grouping;
  groupTree: GroupNode[] = [];

  constructor(meta: Meta) {
    this.meta = meta;
    this.grouping = new URLSearchParams(window.location.search).get("view") === "logical" ? "logical" : "physical";
    this.t1 = Math.max(meta.span, 1);
    this.root = el("div", { id: "timeline-view", class: "view" });
    const bar = el("div", { class: "toolbar" });
    const reset = el("button", { id: "reset-zoom" }, "Whole run");
    reset.onclick = () => this.setWindow(0, Math.max(this.meta.span, 1));
    const crit = el("button", { id: "critical-path" }, "Critical path");
    crit.onclick = () => void this.toggleCrit(crit);
    const help = el("span", { class: "help" },
      "W/S or wheel: zoom · A/D or drag: pan · shift-drag: select an interval · click: a region");
    const view = el("select", { id: "grouping" });
    for (const [v, text] of [["physical", "Physical view (host → process → thread)"],
      ["logical", "Logical view (application → rank → thread)"]]) {
      const o = el("option", { value: v }, text);
      if (v === this.grouping) o.setAttribute("selected", "");
      view.append(o);
    }
    view.onchange = () => this.setGrouping(view.value as Grouping);
    bar.append(reset, crit, view, help);
    this.canvas = el("canvas", { id: "timeline", tabindex: "0" });
    this.detail = el("div", { id: "detail", class: "panel" }, "Click a region for its details.");
    this.stats = el("div", { id: "window-stats", class: "panel" }, "Shift-drag over the timeline to select an interval.");
    const side = el("div", { class: "side" });
    side.append(this.detail, this.stats);
    const body = el("div", { class: "timeline-body" });
    body.append(this.canvas, side);
    this.root.append(bar, body);
    this.layout();
    this.bind();
  }

  /** Switches the view, and says so in the page's URL (`view=logical`). */
  setGrouping(g: Grouping): void {
    this.grouping = g;
    const q = new URLSearchParams(window.location.search);
    if (g === "logical") q.set("view", "logical"); else q.delete("view");
    history.replaceState(null, "", `${window.location.pathname}?${q.toString()}`);
    this.layout();
    this.request();
  }

  private layout(): void {
    // physical: host → process → thread, hosts by name, processes in plx report's order (ranks
    // by rank), as plx hierarchy's Machine tree; logical: application → rank (or process) →
    // thread, applications by name
    this.groups = [];
    this.rows = [];
    this.groupTree = [];
    const logical = this.grouping === "logical";
    const top = (t: Meta["tracks"][number]): string => logical ? t.application || "(program)" : t.host;
    const order = this.meta.tracks.map((t, i) => ({ t, i }));
    order.sort((a, b) => top(a.t).localeCompare(top(b.t)) ||
      (logical ? (a.t.rank ?? Infinity) - (b.t.rank ?? Infinity) : 0) ||
      a.t.process - b.t.process || a.t.thread - b.t.thread);
    let y = AXIS_H;
    let lastTop = "";
    let lastProc = -1;
    for (const { t, i } of order) {
      const g = top(t);
      if (g !== lastTop) {
        this.groups.push({ kind: "group", text: logical ? `application ${g}` : `host ${g}`, y, level: 0 });
        this.groupTree.push({ name: g, children: [] });
        y += GROUP_H;
        lastTop = g;
        lastProc = -1;
      }
      const node = this.groupTree[this.groupTree.length - 1];
      if (t.process !== lastProc) {
        const extra = t.rank !== null ? ` (pid ${t.pid})` : "";
        this.groups.push({ kind: "group", text: `${t.process_name}${extra}`, y, level: 1 });
        node.children.push({ name: t.process_name, children: [] });
        y += GROUP_H;
        lastProc = t.process;
      }
      node.children[node.children.length - 1].children.push({ name: t.thread_name, children: [] });
      const h = Math.max(t.depth, 1) * LANE_H + 4;
      this.rows.push({ track: i, y, h });
      y += h;
    }
    this.height = y + 8;
    this.canvas.dataset.tracks = String(this.rows.length);
    this.canvas.dataset.grouping = this.grouping;
  }

  private x(t: number): number {
    const w = this.plotWidth();
    return LABEL_W + ((t - this.t0) / (this.t1 - this.t0)) * w;
  }

  private plotWidth(): number {
    return Math.max(this.canvas.clientWidth - LABEL_W, 50);
  }

  private timeAt(px: number): number {
    return this.t0 + ((px - LABEL_W) / this.plotWidth()) * (this.t1 - this.t0);
  }

  setWindow(t0: number, t1: number): void {
    const span = Math.max(this.meta.span, 1);
    let w = Math.max(t1 - t0, 10);
    w = Math.min(w, span * 1.5);
    t0 = Math.max(-span * 0.25, Math.min(t0, span * 1.25 - w));
    this.t0 = t0;
    this.t1 = t0 + w;
    this.canvas.dataset.t0 = String(Math.round(this.t0));
    this.canvas.dataset.t1 = String(Math.round(this.t1));
    this.request();
  }

  /** Asks the server for the current window (the newest request wins). */
  request(): void {
    this.draw();
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      const seq = ++this.seq;
      const width = this.plotWidth();
      this.canvas.dataset.loading = "1";
      get<WindowAnswer>("api/window", { t0: this.t0, t1: this.t1, width, max: 5000 })
        .then((a) => {
          if (seq !== this.seq) return;
          this.answer = a;
          this.canvas.dataset.loading = "0";
          this.draw();
        })
        .catch((e: Error) => { this.detail.textContent = e.message; });
    });
  }

  private bind(): void {
    const c = this.canvas;
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      const t = this.timeAt(e.offsetX);
      const f = Math.pow(1.0015, e.deltaY);
      this.setWindow(t - (t - this.t0) * f, t + (this.t1 - t) * f);
    }, { passive: false });
    c.addEventListener("mousedown", (e) => {
      c.focus();
      this.drag = { x: e.offsetX, t0: this.t0, t1: this.t1, select: e.shiftKey };
    });
    c.addEventListener("mousemove", (e) => {
      const d = this.drag;
      if (!d) return;
      if (d.select) {
        const a = this.timeAt(d.x);
        const b = this.timeAt(e.offsetX);
        this.selection = [Math.min(a, b), Math.max(a, b)];
        this.draw();
      } else if (Math.abs(e.offsetX - d.x) > 2) {
        const dt = ((e.offsetX - d.x) / this.plotWidth()) * (d.t1 - d.t0);
        this.setWindow(d.t0 - dt, d.t1 - dt);
      }
    });
    c.addEventListener("mouseup", (e) => {
      const d = this.drag;
      this.drag = null;
      if (!d) return;
      if (d.select && this.selection && Math.abs(e.offsetX - d.x) > 2) {
        void this.showStats(this.selection[0], this.selection[1]);
      } else if (Math.abs(e.offsetX - d.x) <= 2) {
        void this.click(e.offsetX, e.offsetY);
      }
    });
    c.addEventListener("keydown", (e) => {
      const w = this.t1 - this.t0;
      const mid = (this.t0 + this.t1) / 2;
      switch (e.key.toLowerCase()) {
        case "w": this.setWindow(mid - w * 0.35, mid + w * 0.35); break;
        case "s": this.setWindow(mid - w * 0.7, mid + w * 0.7); break;
        case "a": this.setWindow(this.t0 - w * 0.2, this.t1 - w * 0.2); break;
        case "d": this.setWindow(this.t0 + w * 0.2, this.t1 + w * 0.2); break;
        default: return;
      }
      e.preventDefault();
    });
    window.addEventListener("resize", () => this.request());
  }

  private async click(px: number, py: number): Promise<void> {
    const hit = this.drawn.find((d) => px >= d.x && px <= d.x + Math.max(d.w, 2) && py >= d.y && py <= d.y + d.h);
    if (!hit) return;
    const r = await get<RegionDetail>("api/region", { track: hit.track, depth: hit.depth, index: hit.index });
    this.detail.replaceChildren();
    const h = el("h3", { id: "detail-name" }, r.name);
    const dur = el("div", { id: "detail-duration", "data-ns": String(r.duration) }, `duration ${time(r.duration)}`);
    const where = el("div", {}, `${r.kind} on ${r.track}, from ${time(r.start)} to ${time(r.end)}`);
    const src = el("div", { id: "detail-source" }, r.file ? `${r.file}:${r.line}` : "source location unknown");
    const path = el("div", { id: "detail-path" }, r.call_path.join(" → "));
    this.detail.append(h, dur, where, src, path);
    if (r.counters.length) {
      // the function's counts on this thread (plx report --counters) and the thread's totals
      const t = el("table", { id: "detail-counters", class: "grid" });
      const head = el("tr");
      for (const x of ["counter", `${r.name} (this thread)`, "thread total"]) head.append(el("th", {}, x));
      t.append(head);
      r.counters.forEach((name, k) => {
        const f = r.function_counters?.[k] ?? null;
        const tt = r.thread_counters[k] ?? null;
        const tr = el("tr", { "data-counter": name });
        if (f !== null) tr.dataset.function = String(f);
        if (tt !== null) tr.dataset.thread = String(tt);
        tr.append(el("td", {}, name), el("td", {}, f === null ? "" : String(f)), el("td", {}, tt === null ? "" : String(tt)));
        t.append(tr);
      });
      this.detail.append(t);
    }
  }

  private async showStats(t0: number, t1: number): Promise<void> {
    const s = await get<Stats>("api/stats", { t0: Math.max(0, t0), t1 });
    this.stats.replaceChildren();
    this.stats.append(el("h3", {}, `${time(s.t0)} – ${time(s.t1)}`),
      el("div", { id: "stats-messages", "data-count": String(s.message_count) },
        `${s.message_count} messages sent, ${bytes(s.bytes)}`));
    const table = el("table", { class: "grid" });
    const head = el("tr");
    for (const h of ["region", "calls", "inclusive", "exclusive"]) head.append(el("th", {}, h));
    table.append(head);
    for (const [name, calls, inc, exc] of s.profile.slice(0, 30)) {
      const tr = el("tr");
      tr.append(el("td", {}, name), el("td", {}, String(calls)), el("td", {}, time(inc)), el("td", {}, time(exc)));
      table.append(tr);
    }
    this.stats.append(table);
  }

  private async toggleCrit(button: HTMLButtonElement): Promise<void> {
    this.showCrit = !this.showCrit;
    button.classList.toggle("on", this.showCrit);
    if (this.showCrit && !this.crit) {
      this.crit = await get<CritPath>("api/critpath");
      if (this.crit.error) this.detail.textContent = this.crit.error;
    }
    this.canvas.dataset.critical = this.showCrit && this.crit ? String(this.crit.segments.length) : "0";
    this.draw();
  }

  private rowOf(track: number): TrackRow | undefined {
    return this.rows.find((r) => r.track === track);
  }

  draw(): void {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const cssW = c.clientWidth;
    c.style.height = `${this.height}px`;
    c.width = Math.round(cssW * dpr);
    c.height = Math.round(this.height * dpr);
    const g = c.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, cssW, this.height);
    g.font = "11px sans-serif";
    this.drawAxis(g, cssW);
    for (const r of this.groups) {
      g.fillStyle = r.level === 0 ? "#dde3ea" : "#eef1f5";
      g.fillRect(0, r.y, cssW, GROUP_H);
      g.fillStyle = "#333";
      g.fillText(r.text, 6 + 12 * r.level, r.y + 13);
    }
    this.drawn = [];
    const a = this.answer;
    const scale = a ? this.plotWidth() / (a.t1 - a.t0) : 0;
    const now = (t: number) => this.x(t);
    g.save();
    g.beginPath();
    g.rect(LABEL_W, 0, cssW - LABEL_W, this.height);
    g.clip();
    for (const row of this.rows) {
      g.fillStyle = row.track % 2 ? "#fafafa" : "#f4f6f8";
      g.fillRect(LABEL_W, row.y, cssW - LABEL_W, row.h);
      if (!a) continue;
      const lanes = a.tracks[row.track] ?? [];
      lanes.forEach((lane, depth) => {
        const y = row.y + 2 + depth * LANE_H;
        const colW = this.plotWidth() / a.width;
        for (const [col, , busy, dom] of lane.columns) {
          const [name, kind] = this.meta.regions[dom] ?? ["?", "function"];
          const span = (a.t1 - a.t0) / a.width;
          g.globalAlpha = Math.min(1, 0.25 + busy / span);
          g.fillStyle = regionColor(name, kind);
          // summaries are placed by the answer's grid, stretched to the current window
          const x0 = now(a.t0 + col * span);
          g.fillRect(x0, y, Math.max(colW * ((this.plotWidth() / (this.t1 - this.t0)) / scale), 1), LANE_H - 1);
        }
        g.globalAlpha = 1;
        for (const [s, e, reg, index] of lane.full) {
          const [name, kind] = this.meta.regions[reg] ?? ["?", "function"];
          const x0 = Math.max(now(s), LABEL_W - 2);
          const x1 = Math.min(now(e), cssW + 2);
          const w = Math.max(x1 - x0, 1);
          g.fillStyle = regionColor(name, kind);
          g.fillRect(x0, y, w, LANE_H - 1);
          if (w > 30) {
            g.fillStyle = "#111";
            g.save();
            g.beginPath();
            g.rect(x0, y, w, LANE_H);
            g.clip();
            g.fillText(name, x0 + 3, y + 10);
            g.restore();
          }
          this.drawn.push({ x: x0, y, w, h: LANE_H - 1, track: row.track, depth, index });
        }
      });
    }
    let lines = 0;
    if (a) {
      const mid = (t: number) => { const r = this.rowOf(t); return r ? r.y + r.h / 2 : 0; };
      g.strokeStyle = "rgba(20,20,20,0.55)";
      g.lineWidth = 1;
      g.beginPath();
      for (const [s, r, from, to] of a.messages.lines) {
        g.moveTo(now(s), mid(from));
        g.lineTo(now(r), mid(to));
        lines++;
      }
      const span = (a.t1 - a.t0) / a.width;
      for (const [col, from, to, count, , recv] of a.messages.bundles) {
        g.moveTo(now(a.t0 + (col + 0.5) * span), mid(from));
        g.lineTo(now(recv), mid(to));
        lines += count;
      }
      g.stroke();
      // lock hand-offs and joins: dashed, from the release to the acquisition
      g.strokeStyle = "rgba(123, 31, 162, 0.8)";
      g.setLineDash([4, 3]);
      g.beginPath();
      for (const [rel, acq, from, to] of a.handoffs ?? []) {
        g.moveTo(now(rel), mid(from));
        g.lineTo(now(acq), mid(to));
      }
      g.stroke();
      g.setLineDash([]);
      this.canvas.dataset.handoffs = String(a.handoffs_total ?? 0);
      for (const [track, t, ev, v] of a.markers) {
        const r = this.rowOf(track);
        if (!r) continue;
        g.fillStyle = "#1565c0";
        const x = now(t);
        g.beginPath();
        g.moveTo(x, r.y);
        g.lineTo(x - 4, r.y - 5);
        g.lineTo(x + 4, r.y - 5);
        g.fill();
        g.fillText(`${this.meta.user_events[ev] ?? ev}=${v}`, x + 5, r.y - 1);
      }
    }
    this.canvas.dataset.lines = String(lines);
    if (this.showCrit && this.crit) this.drawCrit(g);
    if (this.selection) {
      const [s, e] = this.selection;
      g.fillStyle = "rgba(30,100,220,0.15)";
      g.fillRect(now(s), AXIS_H, now(e) - now(s), this.height - AXIS_H);
    }
    g.restore();
    g.fillStyle = "#222";
    for (const row of this.rows) {
      const t = this.meta.tracks[row.track];
      g.fillText(t.thread_name.slice(0, 26), 24, row.y + 12);
    }
  }

  private drawCrit(g: CanvasRenderingContext2D): void {
    const cp = this.crit;
    if (!cp) return;
    g.strokeStyle = "#ff6d00";
    g.lineWidth = 3;
    g.beginPath();
    for (const [kind, track, from, s, e] of cp.segments) {
      const r = track === null ? undefined : this.rowOf(track);
      if (!r) continue;
      const y = r.y + r.h - 2;
      if ((kind === "msg" || kind === "sync" || kind === "fork") && from !== null) {
        const f = this.rowOf(from);
        if (f) {
          g.moveTo(this.x(s), f.y + f.h - 2);
          g.lineTo(this.x(e), y);
          continue;
        }
      }
      g.moveTo(this.x(s), y);
      g.lineTo(this.x(e), y);
    }
    g.stroke();
    g.lineWidth = 1;
  }

  private drawAxis(g: CanvasRenderingContext2D, cssW: number): void {
    const span = this.t1 - this.t0;
    const step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => span / s <= 10) ?? step * 10;
    g.fillStyle = "#333";
    g.strokeStyle = "#ccc";
    g.beginPath();
    for (let t = Math.ceil(this.t0 / nice) * nice; t <= this.t1; t += nice) {
      const x = this.x(t);
      if (x < LABEL_W) continue;
      g.moveTo(x, AXIS_H - 6);
      g.lineTo(x, this.height);
      g.fillText(time(t), x + 2, 14);
    }
    g.stroke();
    g.fillText(`window ${time(span)}`, 6, 14);
    void cssW;
  }
}
