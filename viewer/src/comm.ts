// Communication: the matrix by rank as a heat map (messages, bytes or mean size) and the
// latency/bandwidth fit per pair.

import { Comm } from "./api";
import { bytes, el } from "./format";

type Metric = "messages" | "bytes" | "mean";

export class CommView {
  readonly root: HTMLElement;
  private c: Comm;
  private metric: Metric = "messages";
  /** -1: every message (as plx comm counts them); else a communicator's, from the trace. */
  private comm = -1;
  private matrix: HTMLTableElement;
  private onCell: (from: number, to: number) => void;

  /** `onCell`: a click on a cell (sender, receiver ranks) shows its messages on the timeline. */
  constructor(c: Comm, onCell: (from: number, to: number) => void) {
    this.c = c;
    this.onCell = onCell;
    this.root = el("div", { id: "comm-view", class: "view" });
    const bar = el("div", { class: "toolbar" });
    const pick = el("select", { id: "comm-metric" });
    for (const m of ["messages", "bytes", "mean"]) pick.append(el("option", { value: m }, m === "mean" ? "mean size" : m));
    pick.onchange = () => { this.metric = pick.value as Metric; this.render(); };
    const which = el("select", { id: "comm-communicator" });
    which.append(el("option", { value: "-1" }, "all messages"));
    c.communicators.forEach((x, i) => which.append(el("option", { value: String(i) }, x.name)));
    which.onchange = () => { this.comm = Number(which.value); this.render(); };
    bar.append(el("span", {}, "Cell: "), pick, el("span", {}, "Communicator: "), which);
    this.matrix = el("table", { id: "matrix", class: "matrix" });
    this.root.append(bar, el("h3", {}, "Sender (rows) → receiver (columns)"), this.matrix,
      el("h3", {}, "Latency and bandwidth fit"), this.fitTable());
    this.render();
  }

  private render(): void {
    const { ranks } = this.c;
    const pairs = this.comm < 0 ? this.c.pairs : this.c.communicators[this.comm]?.pairs ?? [];
    const cell = new Map<string, [number, number]>();
    for (const [f, t, n, b] of pairs) cell.set(`${f},${t}`, [n, b]);
    const val = ([n, b]: [number, number]): number =>
      this.metric === "messages" ? n : this.metric === "bytes" ? b : n > 0 ? b / n : 0;
    const max = Math.max(1, ...[...cell.values()].map(val));
    this.matrix.replaceChildren();
    const hr = el("tr");
    hr.append(el("th", {}, ""));
    for (const r of ranks) hr.append(el("th", {}, String(r)));
    this.matrix.append(hr);
    for (const f of ranks) {
      const tr = el("tr");
      tr.append(el("th", {}, String(f)));
      for (const t of ranks) {
        const v = cell.get(`${f},${t}`);
        const td = el("td", { "data-from": String(f), "data-to": String(t),
          "data-messages": String(v ? v[0] : 0), "data-bytes": String(v ? v[1] : 0) });
        if (v) {
          const x = val(v);
          td.textContent = this.metric === "messages" ? String(x) : bytes(Math.round(x));
          const a = 0.1 + 0.9 * (x / max);
          td.style.background = `rgba(200, 40, 40, ${a.toFixed(3)})`;
          if (a > 0.55) td.style.color = "#fff";
          td.style.cursor = "pointer";
          td.title = `rank ${f} → rank ${t}: show these messages on the timeline`;
          td.onclick = () => this.onCell(f, t);
        }
        tr.append(td);
      }
      this.matrix.append(tr);
    }
  }

  private fitTable(): HTMLTableElement {
    const t = el("table", { id: "fit", class: "grid" });
    const hr = el("tr");
    for (const h of ["from", "to", "messages", "latency µs", "bandwidth MB/s", "r²", "mean transfer µs"]) hr.append(el("th", {}, h));
    t.append(hr);
    const f = (x: number | null, d = 3) => (x === null ? "–" : x.toFixed(d));
    for (const p of this.c.fits) {
      const tr = el("tr");
      tr.append(el("td", {}, String(p.from)), el("td", {}, String(p.to)), el("td", {}, String(p.messages)),
        el("td", {}, f(p.latency_us)), el("td", {}, f(p.bandwidth_mbps, 1)), el("td", {}, f(p.r2)),
        el("td", {}, f(p.mean_transfer_us)));
      t.append(tr);
    }
    return t;
  }
}
