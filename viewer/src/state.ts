// The timeline's state kept in the page's URL, so that a link (or a reload) opens the same
// picture: the window, the selection, the overlays, the grouping, what is collapsed, the track
// filter and the search.

/** The overlays that can be switched on and off; messages, hand-offs and waits start on. */
export type Overlay = "messages" | "handoffs" | "critical" | "waits";

export interface ViewState {
  t0: number | null; t1: number | null;
  selection: [number, number] | null;
  overlays: Record<Overlay, boolean>;
  logical: boolean;
  collapsed: Set<string>;
  filter: string;
  search: string;
  /** only the messages from one rank to another (a cell of the communication matrix) */
  pair: [number, number] | null;
}

const OVERLAY_KEYS: [Overlay, string, boolean][] = [
  ["messages", "msg", true], ["handoffs", "arcs", true], ["critical", "crit", false],
  ["waits", "waits", true],
];

function num(v: string | null): number | null {
  if (v === null || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** The state the page's URL gives (defaults where it says nothing). */
export function readState(search = window.location.search): ViewState {
  const q = new URLSearchParams(search);
  const overlays = {} as Record<Overlay, boolean>;
  for (const [o, key, on] of OVERLAY_KEYS) {
    const v = q.get(key);
    overlays[o] = v === null ? on : v === "1";
  }
  const sel = (q.get("sel") ?? "").split(",").map(num);
  return {
    t0: num(q.get("t0")), t1: num(q.get("t1")),
    // a selection in either order is the same interval
    selection: sel.length === 2 && sel[0] !== null && sel[1] !== null
      ? [Math.min(sel[0], sel[1]), Math.max(sel[0], sel[1])] : null,
    overlays,
    logical: q.get("view") === "logical",
    collapsed: new Set((q.get("collapse") ?? "").split(",").filter((s) => s !== "")),
    filter: q.get("filter") ?? "",
    search: q.get("find") ?? "",
    pair: (() => {
      const p = (q.get("pair") ?? "").split(",").map(num);
      return p.length === 2 && p[0] !== null && p[1] !== null ? [p[0], p[1]] as [number, number] : null;
    })(),
  };
}

/** Writes `s` into the page's URL (replacing the entry: zooming does not fill the history),
 * keeping the parameters it does not own (the token). */
export function writeState(s: ViewState): void {
  const q = new URLSearchParams(window.location.search);
  const set = (k: string, v: string | null) => { if (v === null || v === "") q.delete(k); else q.set(k, v); };
  set("t0", s.t0 === null ? null : String(Math.round(s.t0)));
  set("t1", s.t1 === null ? null : String(Math.round(s.t1)));
  set("sel", s.selection ? s.selection.map((t) => String(Math.round(t))).join(",") : null);
  for (const [o, key, on] of OVERLAY_KEYS) set(key, s.overlays[o] === on ? null : s.overlays[o] ? "1" : "0");
  set("view", s.logical ? "logical" : null);
  set("collapse", s.collapsed.size ? [...s.collapsed].sort().join(",") : null);
  set("filter", s.filter);
  set("find", s.search);
  set("pair", s.pair ? s.pair.join(",") : null);
  const text = q.toString();
  if (text !== window.location.search.slice(1)) {
    history.replaceState(null, "", `${window.location.pathname}?${text}`);
  }
}
