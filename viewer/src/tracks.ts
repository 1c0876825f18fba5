// The timeline's rows: tracks grouped by host → process → thread (physical) or application →
// rank → thread (logical), threads of one name grouped when a process has many; groups can be
// collapsed and tracks filtered by name. A hidden track's overlays end at the row that stands
// for it (its collapsed group's header).

import { TrackMeta } from "./api";

/** A track's process as every plx command names it (the long form of its location name, without
 * the thread): `0 (pid 1234 on node1)`, `solver:0 (pid 1234 on node1)`, `1234 (pid 1234 on node1)`. */
export function processLong(t: TrackMeta): string {
  return `${t.label.slice(0, t.label.lastIndexOf("."))} (pid ${t.pid} on ${t.host})`;
}

export const LANE_H = 14;
export const GROUP_H = 18;
/** The measurement lane's height. */
export const MEASURE_H = 8;
/** Threads of one name form a collapsible group when a process has at least this many. */
export const THREAD_GROUP_MIN = 4;

export interface GroupRow {
  kind: "group"; key: string; text: string; level: number; y: number; h: number;
  collapsed: boolean; tracks: number[];
}
export interface TrackRow {
  kind: "track"; track: number; y: number; h: number;
  /** lanes of regions (the track's depth) */
  depth: number;
  /** the measurement lane's row (the runtime's own work), below the regions */
  measure: number;
}
/** An external metric's row (plx run --monitor, plx import). */
export interface SeriesRow { kind: "series"; series: number; y: number; h: number }
export const SERIES_H = 32;
/** A counter event's row under its thread (plx run --trace --counters). */
export interface CounterRow { kind: "counter"; track: number; event: number; y: number; h: number }
export const COUNTER_H = 22;
export type Row = GroupRow | TrackRow | SeriesRow | CounterRow;
/** The grouping as a tree (the shape of plx hierarchy's JSON), for the browser tests. */
export interface GroupNode { name: string; children: GroupNode[] }

export interface Layout {
  rows: Row[];
  height: number;
  /** track → the y (content px) where its overlays end: its own middle, or its group's header */
  anchor: Map<number, number>;
  /** track → its row when shown */
  shown: Map<number, TrackRow>;
  tree: GroupNode[];
  /** tracks kept by the filter */
  kept: number;
}

function baseName(threadName: string): string {
  return threadName.replace(/#\d+$/, "");
}

/** Lays out `tracks`. `measured`: tracks with a measurement lane (the runtime's own work). */
export function layout(tracks: TrackMeta[], logical: boolean, collapsed: Set<string>, filter: string,
  measured: Set<number>, series: { name: string; host: string }[] = [],
  counters: Map<number, number> = new Map()): Layout {
  const top = (t: TrackMeta): string => logical ? t.application || "(program)" : t.host;
  const f = filter.trim().toLowerCase();
  const keep = (t: TrackMeta): boolean => !f ||
    [t.thread_name, t.process_name, t.host, t.application, t.label].some((s) => s.toLowerCase().includes(f));
  const order = tracks.map((t, i) => ({ t, i })).filter(({ t }) => keep(t));
  order.sort((a, b) => top(a.t).localeCompare(top(b.t)) ||
    (logical ? (a.t.rank ?? Infinity) - (b.t.rank ?? Infinity) : 0) ||
    a.t.process - b.t.process || a.t.thread - b.t.thread);
  // the nesting: top → process → (thread group →) thread
  const tops = new Map<string, Map<number, number[]>>();
  for (const { t, i } of order) {
    const procs = tops.get(top(t)) ?? new Map<number, number[]>();
    tops.set(top(t), procs);
    const list = procs.get(t.process) ?? [];
    procs.set(t.process, list);
    list.push(i);
  }
  const out: Layout = { rows: [], height: 0, anchor: new Map(), shown: new Map(), tree: [], kept: order.length };
  let y = 0;
  const group = (key: string, text: string, level: number, members: number[], hiddenAbove: GroupRow | null): GroupRow | null => {
    if (hiddenAbove) {
      for (const m of members) out.anchor.set(m, hiddenAbove.y + GROUP_H / 2);
      return hiddenAbove;
    }
    const g: GroupRow = { kind: "group", key, text, level, y, h: GROUP_H, collapsed: collapsed.has(key), tracks: members };
    out.rows.push(g);
    y += GROUP_H;
    if (g.collapsed) {
      for (const m of members) out.anchor.set(m, g.y + GROUP_H / 2);
      return g;
    }
    return null;
  };
  const track = (i: number, hidden: GroupRow | null): void => {
    if (hidden) return;
    const t = tracks[i];
    const depth = Math.max(t.depth, 1);
    const measure = measured.has(i) ? 1 : 0;
    const r: TrackRow = { kind: "track", track: i, y, h: depth * LANE_H + measure * MEASURE_H + 4, depth, measure };
    out.rows.push(r);
    out.shown.set(i, r);
    out.anchor.set(i, y + r.h / 2);
    y += r.h;
    // its counter events, one row each
    for (let e = 0; e < (counters.get(i) ?? 0); e++) {
      out.rows.push({ kind: "counter", track: i, event: e, y, h: COUNTER_H });
      y += COUNTER_H;
    }
  };
  const f2 = (s: { name: string }) => !f || s.name.toLowerCase().includes(f) || "series".includes(f);
  const placed = new Set<number>();
  const seriesRows = (which: number[]): void => {
    for (const i of which) {
      placed.add(i);
      out.rows.push({ kind: "series", series: i, y, h: SERIES_H });
      y += SERIES_H;
    }
  };
  for (const [name, procs] of tops) {
    const all = [...procs.values()].flat();
    const node: GroupNode = { name, children: [] };
    out.tree.push(node);
    const h0 = group(`${logical ? "a" : "h"}:${name}`, logical ? `application ${name}` : `host ${name}`, 0, all, null);
    // the host's series (the monitor's), under its header
    const mine = logical ? [] : series.flatMap((s, i) => (s.host === name ? [i] : []));
    for (const i of mine) placed.add(i);
    if (!h0) seriesRows(mine.filter((i) => f2(series[i])));
    for (const [proc, members] of procs) {
      const t = tracks[members[0]];
      const pnode: GroupNode = { name: t.process_name, children: [] };
      node.children.push(pnode);
      const h1 = group(`p:${proc}`, `${processLong(t)} · ${members.length} threads`, 1, members, h0);
      // threads of one name, when many, under one header
      const byName = new Map<string, number[]>();
      for (const m of members) {
        const b = baseName(tracks[m].thread_name);
        const l = byName.get(b) ?? [];
        byName.set(b, l);
        l.push(m);
      }
      const grouped = members.length >= THREAD_GROUP_MIN;
      const done = new Set<string>();
      for (const m of members) {
        pnode.children.push({ name: tracks[m].thread_name, children: [] });
        const b = baseName(tracks[m].thread_name);
        const same = byName.get(b) ?? [m];
        if (grouped && same.length >= 2) {
          if (done.has(b)) continue;
          done.add(b);
          const h2 = group(`g:${proc}:${b}`, `${b} × ${same.length}`, 2, same, h1);
          for (const s of same) track(s, h2);
        } else {
          track(m, h1);
        }
      }
    }
  }
  // the others (a CSV file's, or every series in the logical view) in a group of their own
  const rest = series.flatMap((s, i) => (!placed.has(i) && f2(s) ? [i] : []));
  if (rest.length) {
    const g = group("x:external", "external data", 0, [], null);
    if (!g) seriesRows(rest);
  }
  out.height = y;
  return out;
}
