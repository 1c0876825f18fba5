// The timeline: one track per thread, grouped (tracks.ts), regions nested flame-chart style from
// the server's window answers, the runtime's own work on a measurement lane, wait states
// (waits.ts), message lines,
// hand-off arcs and the critical path at a level of detail (lod.ts), markers, counter and series
// rows (values.ts), an overview of the
// whole run, tooltips, search, the selection's profile and flame graph; its state in the URL
// (state.ts). Only the rows in view are drawn: the canvas is the size of the viewport, the axis
// and the labels stay in place while the tracks scroll under them.

import { CritPath, CritPathAnswer, get, interval, Meta, RegionDetail, SamplesAnswer, SearchAnswer, Stats, WindowAnswer } from "./api";
import { Flame, FlameView, samplesFlame } from "./flame";
import { bytes, el, regionColor, time } from "./format";
import { Bundle, bundle, distance, drawBundles, Line, mergeRuns } from "./lod";
import { Overview } from "./overview";
import { Overlay, readState, ViewState, writeState } from "./state";
import { CounterRow, GroupNode, GroupRow, LANE_H, Layout, layout, MEASURE_H, SeriesRow, TrackRow } from "./tracks";
import { ValueRows } from "./values";
import { WaitLayer } from "./waits";
import { SampleLane, STRIP } from "./samplelane";

export type { GroupNode } from "./tracks";
/** IPS-2's views: logical (application → rank → thread), physical (host → process → thread). */
export type Grouping = "logical" | "physical";

export const LABEL_W = 170;
const AXIS_H = 26;
const STRIP_H = 12;
/** The axis and the density strip: the rows scroll under them. */
const HEAD = AXIS_H + STRIP_H;
/** Bundles are labelled with their count when there are at most this many. */
const LABELLED = 400;
/** At most one bundle of an overlay per this many pixels of the plot's width (lod.ts chooses
 * the cells): more lines than that are dense. */
const PX_PER_BUNDLE = 8;
/** Waits are shown at the start for runs of at most this many events. */
const WAITS_AUTO = 10_000_000;

/** A region drawn at full detail, for hit tests (and the browser tests); canvas px. */
export interface Drawn {
  x: number; y: number; w: number; h: number; track: number; depth: number; index: number;
  start: number; end: number; region: number; measure: boolean;
}


/** What the overlays drew in the last frame, for the page's data attributes and hit tests. */
interface Drawing {
  messages: Bundle[];
  /** the messages received before their send (clocks that disagree), drawn flagged */
  backward: Bundle[];
  handoffs: Bundle[]; transfers: Bundle[]; bands: number; density: number[];
  /** the lines the message and hand-off bundles were gathered from */
  lines: { messages: Line[]; handoffs: Line[] };
}

function emptyDrawing(): Drawing {
  return { messages: [], backward: [], handoffs: [], transfers: [], bands: 0, density: [],
    lines: { messages: [], handoffs: [] } };
}

/** How a message received before its send is drawn: red, dashed (and in the legend). */
const BACKWARD_COLOR = "#d50000";
const BACKWARD_DASH = [2, 2];

export class Timeline {
  readonly root: HTMLElement;
  readonly meta: Meta;
  private canvas: HTMLCanvasElement;
  private scroller: HTMLElement;
  private spacer: HTMLElement;
  private tip: HTMLElement;
  private helpBox: HTMLElement;
  private detail: HTMLElement;
  private stats: HTMLElement;
  private flame: FlameView;
  /** the selected threads' call-stack samples (plx run --sample) */
  private sampled: FlameView;
  private overview: Overview;
  private searchBox: HTMLInputElement;
  private searchCount: HTMLElement;
  private pairChip: HTMLElement;
  /** The legend of the messages received before their send, shown when the window has any. */
  private legend: HTMLElement;
  private legendText: HTMLElement;
  private t0 = 0;
  private t1 = 1;
  private answer: WindowAnswer | null = null;
  private seq = 0;
  private pending = false;
  private requestedAt = 0;
  private lay!: Layout;
  private crit: CritPath | null = null;
  private state: ViewState;
  private drag: { x: number; y: number; t0: number; t1: number; select: boolean } | null = null;
  private runtime: Set<number>;
  private found: SearchAnswer | null = null;
  private current = -1;
  private frame: Drawing = emptyDrawing();
  /** the counters' and the external series' rows */
  private values: ValueRows;
  /** the wait states of the window */
  readonly waits = new WaitLayer();
  /** the call-stack samples of the window, estimated per column */
  readonly sampleLane = new SampleLane();
  /** tracks of the selection (empty: every track) */
  private selTracks: number[] = [];
  drawn: Drawn[] = [];
  grouping: Grouping;
  groupTree: GroupNode[] = [];

  constructor(meta: Meta) {
    this.meta = meta;
    this.state = readState();
    // the first waits of a run replay its whole trace (as plx waits does): on by default only
    // up to WAITS_AUTO events, else when asked for (the button, x, or waits=1 in the URL)
    if (meta.events > WAITS_AUTO && new URLSearchParams(window.location.search).get("waits") === null) {
      this.state.overlays.waits = false;
    }
    this.grouping = this.state.logical ? "logical" : "physical";
    this.t1 = Math.max(meta.span, 1);
    this.values = new ValueRows(meta);
    this.runtime = new Set(meta.regions.flatMap((r, i) => (r[1] === "runtime" ? [i] : [])));
    this.root = el("div", { id: "timeline-view", class: "view" });
    const bar = el("div", { class: "toolbar" });
    const reset = el("button", { id: "reset-zoom", title: "Whole run (0)" }, "Whole run");
    reset.onclick = () => this.setWindow(0, Math.max(this.meta.span, 1));
    const toggles: [Overlay, string, string][] = [
      ["messages", "toggle-messages", "Messages"], ["handoffs", "toggle-handoffs", "Hand-offs"],
      ["critical", "critical-path", "Critical path"], ["waits", "toggle-waits", "Waits"]];
    const buttons = toggles.map(([o, id, text]) => {
      const b = el("button", { id, "data-overlay": o }, text);
      b.classList.toggle("on", this.state.overlays[o]);
      b.onclick = () => void this.toggle(o, b);
      return b;
    });
    const view = el("select", { id: "grouping" });
    for (const [v, text] of [["physical", "Physical view (host → process → thread)"],
      ["logical", "Logical view (application → rank → thread)"]]) {
      const o = el("option", { value: v }, text);
      if (v === this.grouping) o.setAttribute("selected", "");
      view.append(o);
    }
    view.onchange = () => this.setGrouping(view.value as Grouping);
    const filter = el("input", { id: "track-filter", placeholder: "filter tracks", size: "14" });
    filter.value = this.state.filter;
    filter.oninput = () => { this.state.filter = filter.value; this.relayout(); };
    this.searchBox = el("input", { id: "search", placeholder: "find a region (Enter)", size: "18" });
    this.searchBox.value = this.state.search;
    this.searchBox.onkeydown = (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      if (this.found && this.found.name === this.searchBox.value) this.step(e.shiftKey ? -1 : 1);
      else void this.find(this.searchBox.value);
    };
    const prev = el("button", { id: "search-prev", title: "previous instance (N)" }, "◀");
    prev.onclick = () => this.step(-1);
    const next = el("button", { id: "search-next", title: "next instance (n)" }, "▶");
    next.onclick = () => this.step(1);
    this.searchCount = el("span", { id: "search-count", class: "help" });
    this.legend = el("span", { id: "backward-legend", title: "messages received before their send: the " +
      "clocks of their processes disagree by more than the clock repair could reconcile (hover one for by how much)" });
    const swatch = el("canvas", { width: "24", height: "8" });
    const sg = swatch.getContext("2d");
    if (sg) {
      sg.strokeStyle = BACKWARD_COLOR;
      sg.setLineDash(BACKWARD_DASH);
      sg.beginPath(); sg.moveTo(0, 4); sg.lineTo(24, 4); sg.stroke();
    }
    this.legendText = el("span", {});
    this.legend.append(swatch, this.legendText);
    this.legend.style.display = "none";
    this.pairChip = el("button", { id: "pair", title: "show every message again" });
    this.pairChip.onclick = () => this.showPair(null, null);
    this.pairChip.style.display = this.state.pair ? "" : "none";
    if (this.state.pair) this.pairChip.textContent = `messages rank ${this.state.pair[0]} → rank ${this.state.pair[1]} ✕`;
    const help = el("button", { id: "help-button", title: "keyboard help (?)" }, "?");
    help.onclick = () => this.showHelp();
    bar.append(reset, ...buttons, view, filter, this.searchBox, prev, next, this.searchCount, this.pairChip, this.legend, help);
    this.overview = new Overview(meta, (a, b) => this.setWindow(a, b));
    this.canvas = el("canvas", { id: "timeline", tabindex: "0" });
    this.spacer = el("div", { class: "spacer" });
    this.scroller = el("div", { id: "timeline-scroll" });
    this.scroller.append(this.canvas, this.spacer);
    this.tip = el("div", { id: "tooltip" });
    this.helpBox = this.helpPanel();
    this.detail = el("div", { id: "detail", class: "panel" }, "Click a region for its details.");
    this.stats = el("div", { id: "window-stats", class: "panel" }, "Shift-drag over the timeline to select an interval.");
    this.flame = new FlameView();
    this.sampled = new FlameView("samples", "Call-stack samples of the selected threads");
    this.sampled.root.style.display = "none";
    const side = el("div", { class: "side" });
    side.append(this.detail, this.stats, this.flame.root, this.sampled.root);
    const main = el("div", { class: "timeline-main" });
    main.append(this.overview.canvas, this.scroller);
    const body = el("div", { class: "timeline-body" });
    body.append(main, side);
    this.root.append(bar, body, this.tip, this.helpBox);
    this.layout();
    this.bind();
  }

  /** Opens the state the URL gives: window, selection, search. */
  start(): void {
    const span = Math.max(this.meta.span, 1);
    const s = this.state;
    // a window given backwards is the same window (setWindow puts it in order)
    if (s.t0 !== null && s.t1 !== null && s.t1 !== s.t0) this.setWindow(s.t0, s.t1);
    else this.setWindow(0, span);
    if (s.selection) void this.select(s.selection[0], s.selection[1], []);
    if (s.search) void this.find(s.search);
    if (s.overlays.critical) void this.loadCrit();
    this.values.load((what, n) => {
      this.canvas.dataset[what === "series" ? "series" : "counterTracks"] = String(n);
      if (n) this.relayout();
    }, (why) => { this.detail.textContent = why; });
  }

  /** Switches the view, and says so in the page's URL (`view=logical`). */
  setGrouping(g: Grouping): void {
    this.grouping = g;
    this.state.logical = g === "logical";
    this.relayout();
  }

  private relayout(): void {
    this.layout();
    this.save();
    this.draw();
  }

  private save(): void {
    this.state.t0 = this.t0;
    this.state.t1 = this.t1;
    writeState(this.state);
  }

  private layout(): void {
    // every track gets a measurement lane when the experiment has runtime regions
    const measured = new Set<number>(this.runtime.size ? this.meta.tracks.map((_, i) => i) : []);
    this.lay = layout(this.meta.tracks, this.grouping === "logical", this.state.collapsed, this.state.filter, measured,
      this.values.series.map((x) => x.s), this.values.counterEvents());
    this.groupTree = this.lay.tree;
    const d = this.canvas.dataset;
    d.tracks = String(this.lay.shown.size);
    d.kept = String(this.lay.kept);
    d.groups = String(this.lay.rows.filter((r) => r.kind === "group").length);
    d.collapsed = String([...this.state.collapsed].length);
    d.seriesRows = String(this.lay.rows.filter((r) => r.kind === "series").length);
    d.counterRows = String(this.lay.rows.filter((r) => r.kind === "counter").length);
    d.grouping = this.grouping;
  }

  private x(t: number): number {
    return LABEL_W + ((t - this.t0) / (this.t1 - this.t0)) * this.plotWidth();
  }

  private plotWidth(): number {
    return Math.max(this.canvas.clientWidth - LABEL_W, 50);
  }

  private timeAt(px: number): number {
    return this.t0 + ((px - LABEL_W) / this.plotWidth()) * (this.t1 - this.t0);
  }

  /** Content y (rows from 0) of a canvas y. */
  private rowY(py: number): number {
    return py - HEAD + this.scroller.scrollTop;
  }

  /** Canvas y of a content y. */
  private canvasY(y: number): number {
    return y + HEAD - this.scroller.scrollTop;
  }

  setWindow(t0: number, t1: number): void {
    const span = Math.max(this.meta.span, 1);
    // a window given backwards is the same window; one not finite is the whole run
    if (!Number.isFinite(t0) || !Number.isFinite(t1)) [t0, t1] = [0, span];
    if (t1 < t0) [t0, t1] = [t1, t0];
    let w = Math.max(t1 - t0, 10);
    w = Math.min(w, span * 1.5);
    t0 = Math.max(-span * 0.25, Math.min(t0, span * 1.25 - w));
    this.t0 = t0;
    this.t1 = t0 + w;
    // what a tooltip described has moved
    this.tip.style.display = "none";
    this.canvas.dataset.t0 = String(Math.round(this.t0));
    this.canvas.dataset.t1 = String(Math.round(this.t1));
    this.save();
    this.request();
  }

  /** Asks the server for the current window (the newest request wins). */
  request(): void {
    this.requestedAt = performance.now();
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
          this.loadWaits();
          this.canvas.dataset.samplesLoading = "1";
          this.sampleLane.load(this.t0, this.t1, width, () => {
            this.canvas.dataset.samplesLoading = "0";
            this.draw();
          }, (why) => { this.detail.textContent = why; });
          this.draw();
          // from the zoom or pan to its answer drawn
          this.canvas.dataset.frameMs = (performance.now() - this.requestedAt).toFixed(1);
          this.canvas.dataset.loading = "0";
        })
        .catch((e: Error) => { this.detail.textContent = e.message; });
    });
  }

  /** The waits of the current window, when their overlay is on; its button says "computing"
   * while the server replays the trace for them. */
  private loadWaits(): void {
    if (!this.state.overlays.waits) return;
    this.canvas.dataset.waitsLoading = "1";
    const button = this.root.querySelector<HTMLButtonElement>("#toggle-waits");
    this.waits.load(this.t0, this.t1, () => {
      this.canvas.dataset.waitsLoading = "0";
      if (button) button.textContent = "Waits";
      this.draw();
    }, (why) => { this.detail.textContent = why; }, () => {
      this.canvas.dataset.waitsLoading = "computing";
      if (button) button.textContent = "Waits (computing…)";
    });
  }

  private bind(): void {
    const c = this.canvas;
    this.scroller.addEventListener("scroll", () => this.draw());
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      if (e.shiftKey) {
        // shift-wheel scrolls the tracks (the browser gives it as a horizontal delta)
        this.scroller.scrollTop += e.deltaY || e.deltaX;
        return;
      }
      const t = this.timeAt(e.offsetX);
      const f = Math.pow(1.0015, e.deltaY);
      this.setWindow(t - (t - this.t0) * f, t + (this.t1 - t) * f);
    }, { passive: false });
    c.addEventListener("mousedown", (e) => {
      c.focus();
      if (e.offsetX < LABEL_W || e.offsetY < HEAD) return;
      this.drag = { x: e.offsetX, y: e.offsetY, t0: this.t0, t1: this.t1, select: e.shiftKey };
    });
    c.addEventListener("mousemove", (e) => {
      const d = this.drag;
      if (!d) { this.hover(e.offsetX, e.offsetY, e.clientX, e.clientY); return; }
      this.tip.style.display = "none";
      if (d.select) {
        const a = this.timeAt(d.x);
        const b = this.timeAt(e.offsetX);
        this.state.selection = [Math.min(a, b), Math.max(a, b)];
        this.draw();
      } else if (Math.abs(e.offsetX - d.x) > 2) {
        const dt = ((e.offsetX - d.x) / this.plotWidth()) * (d.t1 - d.t0);
        this.setWindow(d.t0 - dt, d.t1 - dt);
      }
    });
    c.addEventListener("mouseleave", () => { this.tip.style.display = "none"; });
    c.addEventListener("mouseup", (e) => {
      const d = this.drag;
      this.drag = null;
      if (e.offsetX < LABEL_W) { this.clickLabel(e.offsetY); return; }
      if (!d) return;
      if (d.select && this.state.selection && Math.abs(e.offsetX - d.x) > 2) {
        const [s, t] = this.state.selection;
        void this.select(s, t, this.tracksBetween(d.y, e.offsetY));
      } else if (Math.abs(e.offsetX - d.x) <= 2) {
        void this.click(e.offsetX, e.offsetY);
      }
    });
    c.addEventListener("dblclick", (e) => this.zoomTo(e.offsetX, e.offsetY));
    c.addEventListener("keydown", (e) => {
      const w = this.t1 - this.t0;
      const mid = (this.t0 + this.t1) / 2;
      switch (e.key) {
        case "w": case "W": this.setWindow(mid - w * 0.35, mid + w * 0.35); break;
        case "s": case "S": this.setWindow(mid - w * 0.7, mid + w * 0.7); break;
        case "a": case "A": this.setWindow(this.t0 - w * 0.2, this.t1 - w * 0.2); break;
        case "d": case "D": this.setWindow(this.t0 + w * 0.2, this.t1 + w * 0.2); break;
        case "0": this.setWindow(0, Math.max(this.meta.span, 1)); break;
        case "n": this.step(1); break;
        case "N": this.step(-1); break;
        case "m": void this.toggle("messages"); break;
        case "h": void this.toggle("handoffs"); break;
        case "c": void this.toggle("critical"); break;
        case "x": void this.toggle("waits"); break;
        case "/": this.searchBox.focus(); break;
        case "Escape":
          this.state.selection = null;
          this.selTracks = [];
          this.save();
          this.draw();
          break;
        default: return;
      }
      e.preventDefault();
    });
    document.addEventListener("keydown", (e) => {
      if (e.key !== "?" && !(e.key === "Escape" && this.helpBox.style.display === "block")) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT")) return;
      if (!this.root.isConnected) return;
      e.preventDefault();
      if (e.key === "?") this.showHelp(); else this.helpBox.style.display = "none";
    });
    window.addEventListener("resize", () => this.request());
  }

  private helpPanel(): HTMLElement {
    const box = el("div", { id: "help", class: "panel" });
    box.append(el("h3", {}, "Keyboard and mouse"));
    const t = el("table", { class: "grid" });
    for (const [k, what] of [
      ["W / S, wheel", "zoom in / out (the wheel around the pointer)"],
      ["A / D, drag", "pan left / right"],
      ["0", "the whole run"],
      ["shift-drag", "select an interval (and the tracks it covers): its profile and flame graph"],
      ["click", "a region's details; on a group's header, collapse or expand it"],
      ["double-click", "zoom to the region (or the message bundle) under the pointer"],
      ["/ , Enter", "find a region by name; Enter again or n / N: the next / previous instance"],
      ["m / h / c / x", "messages, hand-offs, critical path, waits on or off"],
      ["click a wait", "its pattern, the location it waited for and its root causes (plx waits --causes)"],
      ["Esc", "clear the selection; close this help"],
      ["?", "this help"],
    ]) {
      const tr = el("tr");
      tr.append(el("td", {}, k), el("td", {}, what));
      t.append(tr);
    }
    box.append(t);
    box.onclick = () => { box.style.display = "none"; };
    return box;
  }

  showHelp(): void {
    this.helpBox.style.display = this.helpBox.style.display === "block" ? "none" : "block";
    this.helpBox.dataset.shown = this.helpBox.style.display === "block" ? "1" : "0";
  }

  private async toggle(o: Overlay, button?: HTMLElement): Promise<void> {
    this.state.overlays[o] = !this.state.overlays[o];
    const b = button ?? this.root.querySelector<HTMLElement>(`button[data-overlay=${o}]`);
    b?.classList.toggle("on", this.state.overlays[o]);
    this.save();
    if (o === "critical" && this.state.overlays.critical) await this.loadCrit();
    if (o === "waits" && this.state.overlays.waits) this.loadWaits();
    this.draw();
  }

  private async loadCrit(): Promise<void> {
    if (!this.crit) {
      const a = await get<CritPathAnswer>("api/critpath");
      // without one, nothing is drawn and the page says why
      if ("error" in a) this.detail.textContent = a.error;
      this.crit = "error" in a ? { length: 0, segments: [], profile: {} } : a;
    }
    this.draw();
  }

  /** The tracks shown between two canvas y (empty when the drag stayed in one track). */
  private tracksBetween(y0: number, y1: number): number[] {
    const a = this.rowY(Math.min(y0, y1));
    const b = this.rowY(Math.max(y0, y1));
    const out: number[] = [];
    for (const r of this.lay.rows) if (r.kind === "track" && r.y + r.h > a && r.y < b) out.push(r.track);
    return out.length > 1 ? out : [];
  }

  private rowAt(py: number): GroupRow | TrackRow | SeriesRow | CounterRow | undefined {
    const y = this.rowY(py);
    const rows = this.lay.rows;
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (rows[m].y + rows[m].h <= y) lo = m + 1; else hi = m;
    }
    const r = rows[lo];
    return r && r.y <= y ? r : undefined;
  }

  private clickLabel(py: number): void {
    if (py < HEAD) return;
    const r = this.rowAt(py);
    if (!r || r.kind !== "group") return;
    if (this.state.collapsed.has(r.key)) this.state.collapsed.delete(r.key); else this.state.collapsed.add(r.key);
    this.relayout();
  }

  /** Collapses or expands the group `key` (as a click on its header does). */
  collapse(key: string, on: boolean): void {
    if (on) this.state.collapsed.add(key); else this.state.collapsed.delete(key);
    this.relayout();
  }

  /** The groups' headers shown, in canvas px, for the browser tests. */
  headers(): { key: string; text: string; y: number; collapsed: boolean; tracks: number }[] {
    return this.lay.rows.filter((r): r is GroupRow => r.kind === "group")
      .map((r) => ({ key: r.key, text: r.text, y: this.canvasY(r.y), collapsed: r.collapsed, tracks: r.tracks.length }));
  }

  /** The series' rows shown, in canvas px, for the browser tests. */
  seriesRows(): { series: number; name: string; source: string; host: string; y: number; h: number }[] {
    return this.lay.rows.filter((r): r is SeriesRow => r.kind === "series").map((r) => {
      const x = this.values.series[r.series].s;
      return { series: r.series, name: x.name, source: x.source, host: x.host, y: this.canvasY(r.y), h: r.h };
    });
  }

  /** Track `t`'s row when shown, in canvas px (its region lanes, then its measurement lane),
   * for the browser tests. */
  trackRow(t: number): { y: number; h: number; depth: number; measure: number; laneH: number } | null {
    const r = this.lay.shown.get(t);
    return r ? { y: this.canvasY(r.y), h: r.h, depth: r.depth, measure: r.measure, laneH: LANE_H } : null;
  }

  /** The counter rows shown, in canvas px, with what the page holds of each (the sum of its
   * calls' values per function), for the browser tests. */
  counterRows(): { track: number; event: string; y: number; h: number; calls: number; sums: Record<string, number> }[] {
    return this.lay.rows.filter((r): r is CounterRow => r.kind === "counter")
      .map((r) => ({ track: r.track, y: this.canvasY(r.y), h: r.h, ...this.values.counterSums(r) }));
  }

  private hitRegion(px: number, py: number): Drawn | undefined {
    return this.drawn.find((d) => px >= d.x && px <= d.x + Math.max(d.w, 2) && py >= d.y && py <= d.y + d.h);
  }

  /** The bundle nearest to (px, py) closer than `within` pixels. */
  private hitBundle(px: number, py: number, within = 4): [string, Bundle] | undefined {
    let best: [string, Bundle] | undefined;
    let dist = within;
    for (const [kind, list] of [["backward", this.frame.backward], ["messages", this.frame.messages],
      ["hand-offs", this.frame.handoffs], ["critical path", this.frame.transfers]] as [string, Bundle[]][]) {
      for (const b of list) {
        const d = distance(b, px, py);
        if (d < dist) { dist = d; best = [kind, b]; }
      }
    }
    return best;
  }

  private trackName(t: number): string {
    const m = this.meta.tracks[t];
    return m ? `${m.process_name} ${m.thread_name}` : "?";
  }

  /** The tooltip for what is under the pointer: a region, a column's summary, a bundle. */
  private hover(px: number, py: number, cx: number, cy: number): void {
    const text = this.describe(px, py);
    if (!text) { this.tip.style.display = "none"; return; }
    this.tip.textContent = text[1];
    this.tip.dataset.kind = text[0];
    const hit = text[0] === "region" ? this.hitRegion(px, py) : undefined;
    this.tip.dataset.ns = hit ? String(hit.end - hit.start) : "";
    const b = text[0] === "region" ? undefined : this.hitBundle(px, py);
    this.tip.dataset.count = b ? String(b[1].count) : "";
    this.tip.dataset.value = text[2] === undefined || text[2] === null ? "" : String(text[2]);
    this.tip.style.display = "block";
    this.tip.style.left = `${cx + 12}px`;
    this.tip.style.top = `${cy + 12}px`;
  }

  /** [kind, text, value (of a counter or a series)] of what lies at (px, py). */
  describe(px: number, py: number): [string, string, (number | null)?] | null {
    if (px < LABEL_W || py < HEAD) return null;
    // a line is drawn over the regions: on it, it is what the pointer shows
    const onLine = this.hitBundle(px, py, 1.5);
    const wait = onLine ? undefined : this.hitWait(px, py);
    if (wait) {
      return ["wait", `${wait.pattern} · waited ${time(wait.end - wait.start)} · ${this.trackName(wait.track)} · ` +
        `${time(wait.start)} – ${time(wait.end)} · click for its cause`];
    }
    const hit = onLine ? undefined : this.hitRegion(px, py);
    if (hit) {
      const [name, kind] = this.meta.regions[hit.region] ?? ["?", "?"];
      return ["region", `${name} (${kind}) · ${time(hit.end - hit.start)} · ${this.trackName(hit.track)} · ` +
        `${time(hit.start)} – ${time(hit.end)}`];
    }
    const b = onLine ?? this.hitBundle(px, py);
    if (b && b[0] === "backward") {
      const x = b[1];
      const who = (set: Set<number>) => set.size === 1 ? this.trackName([...set][0]) : `${set.size} threads`;
      // one message: sent at t0, received at t1 (before it)
      const what = x.count === 1 ? `1 message received before its send: clocks disagree by ${time(x.t0 - x.t1)}`
        : `${x.count} messages received before their send: clocks disagree`;
      return ["backward", `${what} · ${bytes(x.bytes)}: ${who(x.from)} → ${who(x.to)}`];
    }
    if (b) {
      const [kind, x] = b;
      const n = x.count === 1 ? `1 ${kind === "messages" ? "message" : kind === "hand-offs" ? "hand-off" : "transfer"}` : `${x.count} ${kind}`;
      const size = kind === "messages" ? `, ${bytes(x.bytes)}` : "";
      const who = (set: Set<number>) => set.size === 1 ? this.trackName([...set][0]) : `${set.size} threads`;
      return [kind, `${n}${size}: ${who(x.from)} → ${who(x.to)}, ${time(x.t0)} – ${time(x.t1)}`];
    }
    const a = this.answer;
    const r = this.rowAt(py);
    if (r && (r.kind === "counter" || r.kind === "series")) {
      return this.values.describe(r, this.timeAt(px), (t) => this.trackName(t));
    }
    if (!a || !r || r.kind !== "track") return null;
    if (this.rowY(py) >= r.y + r.h - STRIP) {
      const s = this.sampleLane.describe(r.track, this.timeAt(px), this.trackName(r.track));
      if (s) return ["samples", s[0], s[1]];
    }
    const depth = Math.floor((this.rowY(py) - r.y - 2) / LANE_H);
    const lane = a.tracks[r.track]?.[depth];
    if (!lane) return null;
    const col = Math.floor(((this.timeAt(px) - a.t0) / (a.t1 - a.t0)) * a.width);
    const c = lane.columns.find((x) => x[0] === col);
    if (!c) return null;
    const [name] = this.meta.regions[c[3]] ?? ["?"];
    return ["summary", `${c[1]} regions below a pixel · busy ${time(c[2])} · longest ${name} · ${this.trackName(r.track)}`];
  }

  private zoomTo(px: number, py: number): void {
    const hit = this.hitRegion(px, py);
    if (hit) {
      const pad = Math.max((hit.end - hit.start) * 0.05, 5);
      this.setWindow(hit.start - pad, hit.end + pad);
      return;
    }
    const b = this.hitBundle(px, py);
    if (b) {
      const pad = Math.max((b[1].t1 - b[1].t0) * 0.1, 100);
      this.setWindow(b[1].t0 - pad, b[1].t1 + pad);
    }
  }

  /** The wait under the pointer, when waits are shown. */
  private hitWait(px: number, py: number) {
    return this.state.overlays.waits ? this.waits.hit(px, py) : undefined;
  }

  private async click(px: number, py: number): Promise<void> {
    const wait = this.hitWait(px, py);
    if (wait) {
      await this.waits.show(wait.id, this.detail, (t) => this.trackName(t));
      return;
    }
    const hit = this.hitRegion(px, py);
    if (!hit) return;
    await this.showRegion(hit.track, hit.depth, hit.index);
  }

  private async showRegion(track: number, depth: number, index: number): Promise<void> {
    const r = await get<RegionDetail>("api/region", { track, depth, index });
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

  /** Selects [t0, t1) on `tracks` (empty: every track): its profile, messages and flame graph. */
  async select(t0: number, t1: number, tracks: number[]): Promise<void> {
    // in order, at least 1 ns, and from the run's start (the server's window)
    [t0, t1] = interval(Math.max(0, Math.min(t0, t1)), Math.max(0, t0, t1));
    this.state.selection = [t0, t1];
    this.selTracks = tracks;
    this.save();
    this.draw();
    const s = await get<Stats>("api/stats", { t0, t1 });
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
    const q: Record<string, number | string> = { t0, t1 };
    if (tracks.length) q.tracks = tracks.join(",");
    const threads = tracks.length || this.meta.tracks.length;
    this.flame.show(await get<Flame>("api/flame", q), this.meta, threads);
    const sq: Record<string, number | string> = { t0, t1 };
    if (tracks.length) sq.tracks = tracks.join(",");
    const sa = await get<SamplesAnswer>("api/samples", sq);
    this.sampled.root.style.display = sa.samples ? "" : "none";
    this.sampled.root.dataset.samples = String(sa.samples);
    if (sa.samples) {
      // a trace's samples have times: those of the selection; a profile's: the whole run's
      const when = sa.untimed.length === 0 ? "in the selection"
        : `the whole run (the samples of ${sa.untimed.length} of them carry no time)`;
      this.sampled.show(samplesFlame(sa), this.meta, threads,
        `Call-stack samples: ${sa.samples} on ${threads} threads${sa.lost ? ` (${sa.lost} lost in the run)` : ""}, ${when}`);
    }
  }

  /** The selected threads' sampled flame graph as drawn, for the browser tests. */
  samplesData(): Flame | null {
    return this.sampled.data;
  }

  /** Shows only the messages from rank `from` to rank `to` (null: every message), over the
   * whole run, with the messages overlay on. */
  showPair(from: number | null, to: number | null): void {
    this.state.pair = from === null || to === null ? null : [from, to];
    this.pairChip.style.display = this.state.pair ? "" : "none";
    this.pairChip.textContent = this.state.pair ? `messages rank ${from} → rank ${to} ✕` : "";
    if (this.state.pair && !this.state.overlays.messages) void this.toggle("messages");
    if (this.state.pair) this.setWindow(0, Math.max(this.meta.span, 1));
    else { this.save(); this.draw(); }
  }

  /** The selection's flame graph as drawn, for the browser tests. */
  flameData(): Flame | null {
    return this.flame.data;
  }

  /** The overlays' bundles of the last frame, for the browser tests. */
  bundles(): { messages: Bundle[]; backward: Bundle[]; handoffs: Bundle[]; transfers: Bundle[];
    lines: { messages: Line[]; handoffs: Line[] }; } {
    return { messages: this.frame.messages, backward: this.frame.backward, handoffs: this.frame.handoffs,
      transfers: this.frame.transfers, lines: this.frame.lines };
  }

  /** Finds every instance of the region `name` and steps to the first. */
  async find(name: string): Promise<void> {
    this.state.search = name;
    this.save();
    if (!name) { this.found = null; this.current = -1; this.searchCount.textContent = ""; this.draw(); return; }
    const a = await get<SearchAnswer>("api/search", { name, max: 200000 });
    a.instances.sort((x, y) => x[3] - y[3] || x[0] - y[0]);
    this.found = a;
    this.current = -1;
    this.searchBox.dataset.found = String(a.count);
    this.searchCount.textContent = a.count ? `${a.count} found` : "not found";
    if (a.count) this.step(1); else this.draw();
  }

  /** Zooms to the next (+1) or previous (−1) instance found, and shows its details. */
  step(dir: number): void {
    const f = this.found;
    if (!f || !f.instances.length) return;
    const n = f.instances.length;
    this.current = ((this.current < 0 && dir < 0 ? 0 : this.current + dir) % n + n) % n;
    const [track, depth, index, s, e] = f.instances[this.current];
    this.searchCount.textContent = `${this.current + 1} / ${f.count}`;
    this.searchBox.dataset.current = String(this.current);
    // show its track: expand what hides it
    const m = this.meta.tracks[track];
    for (const key of [`h:${m.host}`, `a:${m.application || "(program)"}`, `p:${m.process}`]) this.state.collapsed.delete(key);
    for (const key of [...this.state.collapsed]) if (key.startsWith(`g:${m.process}:`)) this.state.collapsed.delete(key);
    this.layout();
    const row = this.lay.shown.get(track);
    if (row) {
      const view = this.scroller.clientHeight - HEAD;
      if (row.y < this.scroller.scrollTop || row.y + row.h > this.scroller.scrollTop + view) {
        this.scroller.scrollTop = Math.max(0, row.y - view / 3);
      }
    }
    const pad = Math.max((e - s) * 0.5, 50);
    this.setWindow(s - pad, e + pad);
    void this.showRegion(track, depth, index);
  }

  draw(): void {
    const started = performance.now();
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const cssW = c.clientWidth;
    const viewH = Math.max(this.scroller.clientHeight, 200);
    const cssH = Math.min(viewH, HEAD + this.lay.height + 8);
    this.spacer.style.height = `${Math.max(0, HEAD + this.lay.height + 8 - cssH)}px`;
    c.style.height = `${cssH}px`;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
    }
    const g = c.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, cssW, cssH);
    g.font = "11px sans-serif";
    const top = this.scroller.scrollTop;
    // the rows in view
    const visible = this.lay.rows.filter((r) => r.y + r.h > top && r.y < top + cssH - HEAD);
    this.drawn = [];
    const a = this.answer;
    g.save();
    g.beginPath();
    g.rect(LABEL_W, HEAD, cssW - LABEL_W, cssH - HEAD);
    g.clip();
    for (const r of visible) {
      if (r.kind === "track") this.drawTrack(g, r, cssW);
      else if (r.kind === "series" || r.kind === "counter") {
        this.values.draw(g, r, this.canvasY(r.y), { x: (t) => this.x(t), t0: this.t0, t1: this.t1, left: LABEL_W, right: LABEL_W + this.plotWidth() });
      }
    }
    this.waits.drawn = [];
    if (this.state.overlays.waits) {
      this.waits.draw(g, (t) => this.x(t), (track, depth) => {
        const r = this.lay.shown.get(track);
        if (!r || depth >= r.depth) return null;
        return { y: this.canvasY(r.y) + 2 + depth * LANE_H, h: LANE_H - 1 };
      }, LABEL_W, LABEL_W + this.plotWidth());
    }
    this.sampleLane.draw(g, (t) => this.x(t), (track) => {
      const r = this.lay.shown.get(track);
      return r ? { y: this.canvasY(r.y), h: r.h } : null;
    });
    c.dataset.sampleTracks = String(this.sampleLane.answer?.tracks.length ?? 0);
    c.dataset.sampleSum = this.sampleLane.drawnSum.toFixed(3);
    c.dataset.sampleStamped = String(this.sampleLane.drawnStamped);
    const wa = this.waits.answer;
    c.dataset.waits = String(this.waits.drawn.length);
    c.dataset.waitsTotal = wa ? String(wa.total) : "";
    c.dataset.waitsInWindow = wa ? String(wa.count) : "";
    this.frame = emptyDrawing();
    if (a) this.drawOverlays(g, a);
    this.drawFound(g);
    if (this.state.selection) {
      const [s, e] = this.state.selection;
      g.fillStyle = "rgba(30,100,220,0.15)";
      const sel = new Set(this.selTracks);
      if (!sel.size) g.fillRect(this.x(s), HEAD, this.x(e) - this.x(s), cssH - HEAD);
      else for (const r of visible) if (r.kind === "track" && sel.has(r.track)) g.fillRect(this.x(s), this.canvasY(r.y), this.x(e) - this.x(s), r.h);
    }
    g.restore();
    // the labels and the groups' headers, over the rows
    g.save();
    g.beginPath();
    g.rect(0, HEAD, cssW, cssH - HEAD);
    g.clip();
    for (const r of visible) {
      const y = this.canvasY(r.y);
      if (r.kind === "group") {
        g.fillStyle = r.level === 0 ? "#dde3ea" : r.level === 1 ? "#eef1f5" : "#f3f5f8";
        g.fillRect(0, y, cssW, r.h);
        g.fillStyle = "#333";
        g.fillText(`${r.collapsed ? "▸" : "▾"} ${r.text}`, 4 + 12 * r.level, y + 13);
      } else if (r.kind === "counter" || r.kind === "series") {
        this.values.label(g, r, y, LABEL_W);
      } else {
        g.fillStyle = "#fff";
        g.fillRect(0, y, LABEL_W, r.h);
        g.fillStyle = "#222";
        const t = this.meta.tracks[r.track];
        g.fillText(`${t.label} "${t.name}"`.slice(0, 26), 28, y + 12);
        if (r.measure) {
          g.fillStyle = "#888";
          g.font = "8px sans-serif";
          g.fillText("measurement", 100, y + 2 + r.depth * LANE_H + 7);
          g.font = "11px sans-serif";
        }
      }
    }
    g.restore();
    this.drawAxis(g, cssW);
    this.drawStrip(g, cssW);
    const d = c.dataset;
    d.drawMs = (performance.now() - started).toFixed(2);
    this.overview.draw(this.t0, this.t1);
  }

  private drawTrack(g: CanvasRenderingContext2D, row: TrackRow, cssW: number): void {
    const y0 = this.canvasY(row.y);
    g.fillStyle = row.track % 2 ? "#fafafa" : "#f4f6f8";
    g.fillRect(LABEL_W, y0, cssW - LABEL_W, row.h);
    if (row.measure) {
      g.fillStyle = "#eceff1";
      g.fillRect(LABEL_W, y0 + 2 + row.depth * LANE_H, cssW - LABEL_W, MEASURE_H - 1);
    }
    const a = this.answer;
    if (!a) return;
    const lanes = a.tracks[row.track] ?? [];
    const span = (a.t1 - a.t0) / a.width;
    const colW = Math.max(this.plotWidth() / (this.t1 - this.t0) * span, 1);
    lanes.forEach((lane, depth) => {
      const laneY = y0 + 2 + depth * LANE_H;
      const measureY = y0 + 2 + row.depth * LANE_H;
      for (const [col, , busy, dom] of lane.columns) {
        const [name, kind] = this.meta.regions[dom] ?? ["?", "function"];
        g.globalAlpha = Math.min(1, 0.25 + busy / span);
        g.fillStyle = regionColor(name, kind);
        // summaries are placed by the answer's grid, stretched to the current window
        const y = row.measure && this.runtime.has(dom) ? measureY : laneY;
        g.fillRect(this.x(a.t0 + col * span), y, colW, y === measureY ? MEASURE_H - 1 : LANE_H - 1);
      }
      g.globalAlpha = 1;
      for (const [s, e, reg, index] of lane.full) {
        const [name, kind] = this.meta.regions[reg] ?? ["?", "function"];
        const measure = row.measure > 0 && this.runtime.has(reg);
        const y = measure ? measureY : laneY;
        const x0 = Math.max(this.x(s), LABEL_W - 2);
        const x1 = Math.min(this.x(e), cssW + 2);
        const w = Math.max(x1 - x0, 1);
        const h = measure ? MEASURE_H - 1 : LANE_H - 1;
        g.fillStyle = regionColor(name, kind);
        g.fillRect(x0, y, w, h);
        if (w > 30 && !measure) {
          g.fillStyle = "#111";
          g.save();
          g.beginPath();
          g.rect(x0, y, w, LANE_H);
          g.clip();
          g.fillText(name, x0 + 3, y + 10);
          g.restore();
        }
        this.drawn.push({ x: x0, y, w, h, track: row.track, depth, index, start: s, end: e, region: reg, measure });
      }
    });
    for (const [track, t, ev, v] of a.markers) {
      if (track !== row.track) continue;
      g.fillStyle = "#1565c0";
      const x = this.x(t);
      g.beginPath();
      g.moveTo(x, y0 + 6);
      g.lineTo(x - 4, y0);
      g.lineTo(x + 4, y0);
      g.fill();
      g.fillText(`${this.meta.user_events[ev] ?? ev}=${v}`, x + 5, y0 + 9);
    }
  }

  private bundleLimit(): number {
    return Math.max(8, Math.floor(this.plotWidth() / PX_PER_BUNDLE));
  }

  /** The canvas y where track `t`'s overlays end: its row (or its collapsed group's header),
   * held at the edge of the view when it lies above or below, so that the lines to tracks out
   * of view gather into few bundles. */
  private anchorY(t: number): number | undefined {
    const y = this.lay.anchor.get(t);
    if (y === undefined) return undefined;
    return Math.max(HEAD, Math.min(this.canvasY(y), this.canvas.clientHeight));
  }

  /** Messages, hand-offs and the critical path, bundled (lod.ts); their data attributes. */
  private drawOverlays(g: CanvasRenderingContext2D, a: WindowAnswer): void {
    const anchor = (t: number): number | undefined => this.anchorY(t);
    const o = this.state.overlays;
    const width = this.plotWidth();
    const density = new Array<number>(Math.ceil(width / 2)).fill(0);
    const count = (x: number, n: number) => {
      const i = Math.floor((x - LABEL_W) / 2);
      if (i >= 0 && i < density.length) density[i] += n;
    };
    let lines = 0;
    const msgs: Line[] = [];
    const back: Line[] = [];
    const pair = this.state.pair;
    const rank = (t: number) => this.meta.tracks[t]?.rank;
    const wanted = (from: number, to: number) => !pair || (rank(from) === pair[0] && rank(to) === pair[1]);
    const span = (a.t1 - a.t0) / a.width;
    for (const [s, r, from, to, by] of a.messages.lines) {
      lines++;
      count(this.x(s), 1);
      if (!wanted(from, to)) continue;
      const y0 = anchor(from);
      const y1 = anchor(to);
      if (y0 === undefined || y1 === undefined) continue;
      // received before its send: kept apart, drawn flagged
      (r < s ? back : msgs).push([this.x(s), y0, this.x(r), y1, 1, by, s, r, from, to]);
    }
    for (const [col, from, to, n, by, recv] of a.messages.bundles) {
      lines += n;
      const s = a.t0 + (col + 0.5) * span;
      count(this.x(s), n);
      if (!wanted(from, to)) continue;
      const y0 = anchor(from);
      const y1 = anchor(to);
      if (y0 === undefined || y1 === undefined) continue;
      msgs.push([this.x(s), y0, this.x(recv), y1, n, by, a.t0 + col * span, recv, from, to]);
    }
    const arcs: Line[] = [];
    for (const [rel, acq, from, to] of a.handoffs ?? []) {
      const y0 = anchor(from);
      const y1 = anchor(to);
      if (y0 === undefined || y1 === undefined) continue;
      arcs.push([this.x(rel), y0, this.x(acq), y1, 1, 0, rel, acq, from, to]);
    }
    const d = this.canvas.dataset;
    // what the window holds, drawn or not
    d.lines = String(lines);
    d.handoffs = String(a.handoffs_total ?? 0);
    this.frame.density = density;
    this.frame.lines = { messages: o.messages ? msgs : [], handoffs: o.handoffs ? arcs : [] };
    if (o.messages) {
      this.frame.messages = bundle(msgs, this.bundleLimit());
      drawBundles(g, this.frame.messages, "rgba(20,20,20,0.55)", [], this.frame.messages.length <= LABELLED);
      this.frame.backward = bundle(back, this.bundleLimit());
      drawBundles(g, this.frame.backward, BACKWARD_COLOR, BACKWARD_DASH, this.frame.backward.length <= LABELLED);
    }
    // the window's messages received before their send (the server's count), and those drawn
    d.backward = String(a.messages.backward);
    d.backwardDrawn = String(this.frame.backward.reduce((n, b) => n + b.count, 0));
    this.legend.style.display = a.messages.backward ? "" : "none";
    this.legend.dataset.count = String(a.messages.backward);
    this.legendText.textContent = ` ${a.messages.backward} received before their send`;
    if (o.handoffs) {
      this.frame.handoffs = bundle(arcs, this.bundleLimit());
      drawBundles(g, this.frame.handoffs, "rgba(123,31,162,0.8)", [4, 3], this.frame.handoffs.length <= LABELLED);
    }
    d.messageBundles = String(this.frame.messages.length);
    d.messagesDrawn = String([...this.frame.messages, ...this.frame.backward].reduce((n, b) => n + b.count, 0));
    d.handoffBundles = String(this.frame.handoffs.length);
    d.handoffsDrawn = String(this.frame.handoffs.reduce((n, b) => n + b.count, 0));
    d.overlays = (Object.keys(o) as Overlay[]).filter((k) => o[k]).join(",");
    d.bundleLimit = String(this.bundleLimit());
    this.drawCrit(g);
  }

  /** The critical path: its stretches on each thread as a band of merged pixel runs at the
   * bottom of the track, its transfers from thread to thread bundled. */
  private drawCrit(g: CanvasRenderingContext2D): void {
    const d = this.canvas.dataset;
    const cp = this.crit;
    if (!this.state.overlays.critical || !cp) {
      d.critical = "0"; d.critBands = "0"; d.critTransfers = "0"; d.critInWindow = "0"; d.critDrawn = "0";
      return;
    }
    const runs = new Map<number, [number, number][]>();
    const transfers: Line[] = [];
    let inWindow = 0;
    const right = LABEL_W + this.plotWidth();
    for (const [kind, track, from, s, e] of cp.segments) {
      if (track === null || e < this.t0 || s > this.t1) continue;
      inWindow++;
      if ((kind === "msg" || kind === "sync" || kind === "fork") && from !== null) {
        const y0 = this.anchorY(from);
        const y1 = this.anchorY(track);
        if (y0 === undefined || y1 === undefined) continue;
        transfers.push([this.x(s), y0, this.x(e), y1, 1, 0, s, e, from, track]);
        continue;
      }
      const row = this.lay.shown.get(track);
      const anchor = this.lay.anchor.get(track);
      // a hidden track's stretches go on its group's header
      const key = row ? track : anchor === undefined ? -1 : -1 - anchor;
      if (key === -1) continue;
      const l = runs.get(key) ?? [];
      runs.set(key, l);
      l.push([Math.max(Math.floor(this.x(s)), LABEL_W), Math.min(Math.ceil(this.x(e)), right)]);
    }
    g.fillStyle = "rgba(255,109,0,0.85)";
    let bands = 0;
    for (const [key, list] of runs) {
      const row = key >= 0 ? this.lay.shown.get(key) : undefined;
      const y = row ? this.canvasY(row.y + row.h) - 5 : this.canvasY(-1 - key) + 4;
      for (const [a, b] of mergeRuns(list)) {
        g.fillRect(a, y, b - a, 4);
        bands++;
      }
    }
    this.frame.transfers = bundle(transfers, this.bundleLimit());
    drawBundles(g, this.frame.transfers, "rgba(255,109,0,0.9)", [], this.frame.transfers.length <= LABELLED);
    this.frame.bands = bands;
    d.critical = String(cp.segments.length);
    d.critInWindow = String(inWindow);
    d.critBands = String(bands);
    d.critTransfers = String(this.frame.transfers.length);
    d.critDrawn = String(this.frame.transfers.reduce((n, b) => n + b.count, 0));
  }

  /** Every instance found by the search in the window, outlined; the current one thicker. */
  private drawFound(g: CanvasRenderingContext2D): void {
    const f = this.found;
    let shown = 0;
    if (f) {
      g.strokeStyle = "#d500f9";
      g.lineWidth = 2;
      g.beginPath();
      // the runtime's regions are drawn on the measurement lane: outlined there
      const runtime = f.regions.some((r) => this.runtime.has(r));
      f.instances.forEach(([track, depth, , s, e], k) => {
        if (e < this.t0 || s > this.t1) return;
        const row = this.lay.shown.get(track);
        if (!row) return;
        const measure = runtime && row.measure > 0;
        const y = this.canvasY(row.y) + 2 + (measure ? row.depth : depth) * LANE_H;
        const h = measure ? MEASURE_H - 1 : LANE_H - 1;
        const x0 = Math.max(this.x(s), LABEL_W - 2);
        const w = Math.max(Math.min(this.x(e), LABEL_W + this.plotWidth() + 2) - x0, 2);
        g.rect(x0, y - 1, w, h + 2);
        if (k === this.current) {
          g.rect(x0 - 2, y - 3, w + 4, h + 6);
          this.canvas.dataset.foundY = String(y);
        }
        shown++;
      });
      g.stroke();
      g.lineWidth = 1;
    }
    this.canvas.dataset.foundShown = String(shown);
  }

  /** The density strip under the axis: messages sent per 2-pixel column. */
  private drawStrip(g: CanvasRenderingContext2D, cssW: number): void {
    g.fillStyle = "#fff";
    g.fillRect(0, AXIS_H, cssW, STRIP_H);
    g.fillStyle = "#666";
    g.fillText("messages", 6, AXIS_H + 10);
    const dens = this.frame.density;
    const max = Math.max(1, ...dens);
    let total = 0;
    dens.forEach((n, i) => {
      total += n;
      if (!n) return;
      g.fillStyle = `rgba(20,20,20,${(0.2 + 0.8 * n / max).toFixed(3)})`;
      g.fillRect(LABEL_W + i * 2, AXIS_H + 1, 2, STRIP_H - 2);
    });
    this.canvas.dataset.density = String(total);
    g.strokeStyle = "#bbb";
    g.beginPath();
    g.moveTo(0, HEAD - 0.5);
    g.lineTo(cssW, HEAD - 0.5);
    g.stroke();
  }

  private drawAxis(g: CanvasRenderingContext2D, cssW: number): void {
    g.fillStyle = "#fff";
    g.fillRect(0, 0, cssW, AXIS_H);
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
      g.lineTo(x, AXIS_H);
      g.fillText(time(t), x + 2, 14);
    }
    g.stroke();
    g.fillText(`window ${time(span)}`, 6, 14);
  }
}
