// Profiles: per thread and total as sortable tables (plx report's rows), and the total's call
// paths as an icicle with search.

import { FlatRow, Profile } from "./api";
import { el, regionColor, seconds } from "./format";

interface Node { name: string; incl: number; children: Map<string, Node> }

export class ProfileView {
  readonly root: HTMLElement;
  private p: Profile;
  private table: HTMLTableElement;
  private icicle: HTMLCanvasElement;
  private sortCol = 2;
  private sortDesc = true;
  private which = 0;
  private search = "";
  private tree: Node;

  constructor(p: Profile) {
    this.p = p;
    this.root = el("div", { id: "profile-view", class: "view" });
    const bar = el("div", { class: "toolbar" });
    const pick = el("select", { id: "profile-table-select" });
    p.tables.forEach((t, i) => pick.append(el("option", { value: String(i) }, t.label)));
    pick.onchange = () => { this.which = Number(pick.value); this.render(); };
    const search = el("input", { id: "profile-search", placeholder: "search functions" });
    search.oninput = () => { this.search = search.value.toLowerCase(); this.render(); this.drawIcicle(); };
    bar.append(el("span", {}, "Table: "), pick, search);
    this.table = el("table", { id: "profile-table", class: "grid sortable" });
    this.icicle = el("canvas", { id: "icicle" });
    this.root.append(bar, this.table, el("h3", {}, "Call paths (icicle, total)"), this.icicle,
      this.callpaths(), this.callGraph());
    this.tree = { name: "all", incl: 0, children: new Map() };
    for (const [path, , , incl] of p.callpaths) {
      let n = this.tree;
      for (const name of path) {
        let c = n.children.get(name);
        if (!c) { c = { name, incl: 0, children: new Map() }; n.children.set(name, c); }
        n = c;
      }
      n.incl = incl;
    }
    this.tree.incl = [...this.tree.children.values()].reduce((a, c) => a + c.incl, 0);
    this.render();
  }

  private render(): void {
    const t = this.p.tables[this.which];
    const counters = this.p.counters ?? [];
    // a column per counter event after plx report's (plx report --counters: inclusive counts)
    const heads = ["function", "calls", "exclusive", "inclusive", "cpu", ...counters];
    this.table.replaceChildren();
    const hr = el("tr");
    heads.forEach((h, i) => {
      const th = el("th", { "data-col": String(i) }, h + (i === this.sortCol ? (this.sortDesc ? " ▼" : " ▲") : ""));
      th.onclick = () => {
        if (this.sortCol === i) this.sortDesc = !this.sortDesc; else { this.sortCol = i; this.sortDesc = i !== 0; }
        this.render();
      };
      hr.append(th);
    });
    this.table.append(hr);
    const counterCells = (values: (number | null)[] | null): HTMLElement[] =>
      counters.map((name, k) => {
        const v = values?.[k] ?? null;
        const td = el("td", { "data-counter": name }, v === null ? "" : String(v));
        if (v !== null) td.dataset.value = String(v);
        return td;
      });
    if (counters.length && t?.counters.some((v) => v !== null)) {
      // the thread's (or all threads') whole-run totals
      const tr = el("tr", { class: "thread-counters", id: "profile-thread-counters" });
      tr.append(el("td", {}, this.which === 0 ? "(all threads)" : "(thread)"), el("td"), el("td"), el("td"), el("td"),
        ...counterCells(t.counters));
      this.table.append(tr);
    }
    const rows: FlatRow[] = [...(t?.rows ?? [])];
    const key = (r: FlatRow): number | string =>
      this.sortCol < 5 ? (r[this.sortCol] as number | string | null) ?? -1 : r[5]?.[this.sortCol - 5] ?? -1;
    // the default order is the server's (plx report's): exclusive descending, ties by name
    if (!(this.sortCol === 2 && this.sortDesc)) {
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        const c = typeof x === "string" ? x.localeCompare(String(y)) : (x as number) - (y as number);
        return this.sortDesc ? -c : c;
      });
    }
    for (const r of rows) {
      const tr = el("tr", { "data-name": r[0], "data-exclusive": String(r[2]), "data-calls": String(r[1]) });
      if (this.search && r[0].toLowerCase().includes(this.search)) tr.className = "hit";
      tr.append(el("td", {}, r[0]), el("td", {}, String(r[1])), el("td", {}, seconds(r[2])),
        el("td", {}, seconds(r[3])), el("td", {}, r[4] === null ? "" : seconds(r[4])), ...counterCells(r[5]));
      this.table.append(tr);
    }
  }

  /** The total's call paths as a table (plx report --callpath). */
  private callpaths(): HTMLElement {
    const d = el("details", { id: "callpaths" });
    d.append(el("summary", {}, "Call paths (total, by exclusive time)"));
    const t = el("table", { class: "grid" });
    const h = el("tr");
    for (const x of ["call path", "calls", "exclusive", "inclusive"]) h.append(el("th", {}, x));
    t.append(h);
    const rows = [...this.p.callpaths].sort((a, b) => b[2] - a[2]);
    for (const [path, calls, excl, incl] of rows.slice(0, 200)) {
      const tr = el("tr");
      tr.append(el("td", {}, path.join(" => ")), el("td", {}, String(calls)), el("td", {}, seconds(excl)),
        el("td", {}, seconds(incl)));
      t.append(tr);
    }
    d.append(t);
    return d;
  }

  /** The total's call graph (plx report --gprof): each function with its callers and callees. */
  private callGraph(): HTMLElement {
    const d = el("details", { id: "callgraph" });
    d.append(el("summary", {}, "Call graph (total, gprof's)"));
    const t = el("table", { class: "grid" });
    const h = el("tr");
    for (const x of ["index", "function", "% time", "self", "children", "calls", "called by", "calls to"]) h.append(el("th", {}, x));
    t.append(h);
    for (const [i, name, pct, self, children, calls, parents, kids] of this.p.gprof.slice(0, 200)) {
      const tr = el("tr");
      tr.append(el("td", {}, `[${i}]`), el("td", {}, name), el("td", {}, pct.toFixed(1)), el("td", {}, seconds(self)),
        el("td", {}, seconds(children)), el("td", {}, String(calls)), el("td", {}, parents.join(", ")),
        el("td", {}, kids.join(", ")));
      t.append(tr);
    }
    d.append(t);
    return d;
  }

  drawIcicle(): void {
    const c = this.icicle;
    const W = c.clientWidth || 800;
    const depth = (n: Node): number => 1 + Math.max(0, ...[...n.children.values()].map(depth));
    const rowH = 18;
    const H = depth(this.tree) * rowH;
    const dpr = window.devicePixelRatio || 1;
    c.style.height = `${H}px`;
    c.width = W * dpr;
    c.height = H * dpr;
    const g = c.getContext("2d");
    if (!g || this.tree.incl <= 0) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = "11px sans-serif";
    const draw = (n: Node, x: number, w: number, y: number): void => {
      const hit = this.search !== "" && n.name.toLowerCase().includes(this.search);
      g.fillStyle = hit ? "#ff00aa" : regionColor(n.name, n.name.startsWith("MPI_") ? "mpi" : "function");
      g.fillRect(x, y, Math.max(w - 1, 0.5), rowH - 1);
      if (w > 40) { g.fillStyle = "#111"; g.fillText(n.name.slice(0, Math.floor(w / 6)), x + 3, y + 13); }
      let cx = x;
      for (const ch of [...n.children.values()].sort((a, b) => b.incl - a.incl)) {
        const cw = n.incl > 0 ? (ch.incl / n.incl) * w : 0;
        draw(ch, cx, cw, y + rowH);
        cx += cw;
      }
    };
    draw(this.tree, 0, W, 0);
  }
}
