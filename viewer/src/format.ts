// Units and colours shared by the views.

export function time(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(3)} µs`;
  return `${ns.toFixed(0)} ns`;
}

export function seconds(s: number): string {
  return time(s * 1e9);
}

export function bytes(b: number): string {
  if (b >= 1 << 30) return `${(b / (1 << 30)).toFixed(2)} GiB`;
  if (b >= 1 << 20) return `${(b / (1 << 20)).toFixed(2)} MiB`;
  if (b >= 1 << 10) return `${(b / (1 << 10)).toFixed(2)} KiB`;
  return `${b} B`;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** MPI red, socket purple, runtime grey, phase gold, user teal; functions green to blue by name. */
export function regionColor(name: string, kind: string): string {
  const h = hash(name);
  switch (kind) {
    case "mpi": return `hsl(${355 + (h % 20)}, 70%, ${50 + (h % 10)}%)`;
    case "socket": return `hsl(${275 + (h % 20)}, 55%, 58%)`;
    case "runtime": return "#9e9e9e";
    case "phase": return "#e6b422";
    case "user": return `hsl(${170 + (h % 20)}, 55%, 45%)`;
    default: return `hsl(${90 + (h % 130)}, 50%, ${55 + (h % 15)}%)`;
  }
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K, attrs: Record<string, string> = {}, text = ""): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}
