// The JSON API of plx view: typed answers and a fetch that carries the page's token (none when
// the page was opened through plx view --open's one-time address: its cookie carries it then).

// The answers' types are generated from the server's declarations (api_types.ts); the names
// the page uses for them:
import type { CommAnswer, CompareAnswer, ProfileAnswer } from "./api_types";
export type * from "./api_types";
export type Profile = ProfileAnswer;
export type Comm = CommAnswer;
export type Compare = CompareAnswer;

const token = new URLSearchParams(window.location.search).get("token") ?? "";

/** `[t0, t1)` as the server takes a window: whole ns, the ends in order (a backwards pair
 * swapped), at least 1 ns wide; a bound that is not finite is an error (the server refuses it). */
export function interval(t0: number, t1: number): [number, number] {
  if (!Number.isFinite(t0) || !Number.isFinite(t1)) throw new Error(`not a window: [${t0}, ${t1})`);
  const a = Math.round(Math.min(t0, t1));
  return [a, Math.max(Math.round(Math.max(t0, t1)), a + 1)];
}

export async function get<T>(path: string, params: Record<string, number | string> = {}): Promise<T> {
  const q = new URLSearchParams(token ? { token } : {});
  for (const [k, v] of Object.entries(params)) q.set(k, typeof v === "number" ? String(Math.round(v)) : v);
  // a window is sent in order and never empty
  if (typeof params.t0 === "number" && typeof params.t1 === "number") {
    const [a, b] = interval(params.t0, params.t1);
    q.set("t0", String(a));
    q.set("t1", String(b));
  }
  const r = await fetch(`${path}?${q.toString()}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}
