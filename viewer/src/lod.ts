// Level of detail for the overlays: lines between tracks (messages, hand-offs, the critical
// path's transfers) whose ends fall in the same cell of a few pixels on the same two rows are
// drawn as one bundle with its count; the critical path's stretches on a thread become a band of
// merged pixel runs; sends are counted per pixel column for the density strip. Counts are kept:
// the bundles of a window add up to the lines in it.

/** The cells tried, finest first: [x px, y px (0: each row apart)]. A window's lines are
 * gathered in the finest cells that leave at most `limit` bundles. */
export const LEVELS: [number, number][] = [[6, 0], [24, 32], [96, 128], [384, 512], [1e9, 1e9]];

export interface Bundle {
  x0: number; y0: number; x1: number; y1: number;
  count: number; bytes: number;
  /** the time span the bundle's lines cover (first start, last end), to zoom to it */
  t0: number; t1: number;
  /** the tracks its lines come from and go to */
  from: Set<number>; to: Set<number>;
}

/** One line: canvas px of its ends, how many it stands for, bytes, times, tracks. */
export type Line = [x0: number, y0: number, x1: number, y1: number, count: number, bytes: number,
  t0: number, t1: number, from: number, to: number];

function gather(lines: Line[], cx: number, cy: number): Bundle[] {
  const cells = new Map<string, Bundle>();
  for (const [x0, y0, x1, y1, count, bytes, t0, t1, from, to] of lines) {
    const qy = (y: number) => (cy ? Math.floor(y / cy) : y);
    const key = `${Math.floor(x0 / cx)}|${qy(y0)}|${Math.floor(x1 / cx)}|${qy(y1)}`;
    const b = cells.get(key);
    if (!b) {
      cells.set(key, { x0, y0, x1, y1, count, bytes, t0, t1, from: new Set([from]), to: new Set([to]) });
      continue;
    }
    // the bundle's ends: the count-weighted means of its lines'
    const n = b.count + count;
    b.x0 = (b.x0 * b.count + x0 * count) / n;
    b.x1 = (b.x1 * b.count + x1 * count) / n;
    b.y0 = (b.y0 * b.count + y0 * count) / n;
    b.y1 = (b.y1 * b.count + y1 * count) / n;
    b.count = n;
    b.bytes += bytes;
    b.t0 = Math.min(b.t0, t0);
    b.t1 = Math.max(b.t1, t1);
    b.from.add(from);
    b.to.add(to);
  }
  return [...cells.values()];
}

/** `lines` bundled in the finest cells of LEVELS that give at most `limit` bundles. */
export function bundle(lines: Line[], limit: number): Bundle[] {
  let out: Bundle[] = [];
  for (const [cx, cy] of LEVELS) {
    out = gather(lines, cx, cy);
    if (out.length <= limit) break;
  }
  return out;
}

/** Draws bundles: a line per bundle, one of several solid, wider by its count and labelled
 * with it (labels that would overlap one already drawn are left out). */
export function drawBundles(g: CanvasRenderingContext2D, bundles: Bundle[], color: string,
  dash: number[], labels: boolean): void {
  g.strokeStyle = color;
  g.setLineDash(dash);
  g.lineWidth = 1;
  g.beginPath();
  for (const b of bundles) {
    if (b.count > 1) continue;
    g.moveTo(b.x0, b.y0);
    g.lineTo(b.x1, b.y1);
  }
  g.stroke();
  g.setLineDash([]);
  g.globalAlpha = 0.55;
  for (const b of bundles) {
    if (b.count === 1) continue;
    g.lineWidth = Math.min(1 + Math.log2(b.count), 7);
    g.beginPath();
    g.moveTo(b.x0, b.y0);
    g.lineTo(b.x1, b.y1);
    g.stroke();
  }
  g.globalAlpha = 1;
  g.lineWidth = 1;
  if (!labels) return;
  g.font = "10px sans-serif";
  const taken: [number, number, number][] = [];
  for (const b of [...bundles].sort((p, q) => q.count - p.count)) {
    if (b.count === 1) continue;
    const text = String(b.count);
    const w = g.measureText(text).width + 4;
    // the label on the line, a third of the way from its start
    const x = b.x0 + (b.x1 - b.x0) / 3 - w / 2;
    const y = b.y0 + (b.y1 - b.y0) / 3;
    if (taken.some(([tx, ty, tw]) => x < tx + tw && tx < x + w && Math.abs(ty - y) < 12)) continue;
    taken.push([x, y, w]);
    g.fillStyle = "rgba(255,255,255,0.9)";
    g.fillRect(x, y - 6, w, 12);
    g.fillStyle = "#111";
    g.fillText(text, x + 2, y + 4);
  }
}

/** The distance from (px, py) to the segment of `b`. */
export function distance(b: Bundle, px: number, py: number): number {
  const dx = b.x1 - b.x0;
  const dy = b.y1 - b.y0;
  const len = dx * dx + dy * dy;
  const u = len === 0 ? 0 : Math.max(0, Math.min(1, ((px - b.x0) * dx + (py - b.y0) * dy) / len));
  return Math.hypot(b.x0 + u * dx - px, b.y0 + u * dy - py);
}

/** Pixel runs [x0, x1) of one row: touching or overlapping intervals merged. */
export function mergeRuns(runs: [number, number][]): [number, number][] {
  runs.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of runs) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, Math.max(b, a + 1)]);
  }
  return out;
}
