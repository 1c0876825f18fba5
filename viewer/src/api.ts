// The JSON API of plx view: typed answers and a fetch that carries the page's token (none when
// the page was opened through plx view --open's one-time address: its cookie carries it then).

export type RegionDef = [name: string, kind: string, file: string, line: number];

export interface TrackMeta {
  label: string; app: string; host: string; pid: number; rank: number | null;
  thread: number; name: string; process: number; depth: number; regions: number;
  /** plx hierarchy's names: the process (`rank N` or the pid) and the thread (`NAME#INDEX`) */
  process_name: string; thread_name: string;
  /** the application: the session's name for it, else the executable's file name */
  application: string;
}

export interface Meta {
  dir: string; span: number; events: number; tracks: TrackMeta[]; regions: RegionDef[];
  user_events: string[]; messages: number; has_mpi: boolean;
  /** whether the run counted anything (plx run --counters) */
  has_counters?: boolean;
}

/** [start, end, region, index] (ns from the first event). */
export type Full = [number, number, number, number];
/** [column, count, busy ns, dominant region]. */
export type Col = [number, number, number, number];
export interface LaneAnswer { full: Full[]; columns: Col[] }

export interface WindowAnswer {
  t0: number; t1: number; width: number;
  tracks: LaneAnswer[][];
  messages: {
    total: number; unmatched: number;
    /** [send, recv, from track, to track, bytes] */
    lines: [number, number, number, number, number][];
    /** [column, from, to, count, bytes, mean recv] */
    bundles: [number, number, number, number, number, number][];
  };
  markers: [number, number, number, number][];
  markers_total: number;
  /** [release, acquire, from track, to track, object kind] */
  handoffs: [number, number, number, number, number][];
  handoffs_total: number;
}

export interface RegionDetail {
  track: string; name: string; kind: string; start: number; end: number; duration: number;
  file: string; line: number; call_path: string[];
  /** counter events of the experiment; the region's function's inclusive counts on this
   * thread (null: not counted), and the thread's whole-run totals, one per event */
  counters: string[]; function_counters: (number | null)[] | null; thread_counters: (number | null)[];
}

export interface Stats {
  t0: number; t1: number; profile: [string, number, number, number][];
  messages: [number, number, number, number][]; message_count: number; bytes: number;
}

/** [name, calls, exclusive s, inclusive s, cpu s | null, counters (one per event) | null] */
export type FlatRow = [string, number, number, number, number | null, (number | null)[] | null];
export interface Profile {
  /** counter events (columns), with per table the whole-thread totals */
  counters: string[];
  tables: { label: string; rows: FlatRow[]; counters: (number | null)[] }[];
  callpaths: [string[], number, number, number][];
  /** [index, name, percent, self s, children s, calls, callers, callees] */
  gprof: [number, string, number, number, number, number, string[], string[]][];
}

export interface Comm {
  ranks: number[]; pairs: [number, number, number, number][];
  communicators: { name: string; pairs: [number, number, number, number][] }[];
  fits: { from: number; to: number; messages: number; latency_us: number | null;
          bandwidth_mbps: number | null; r2: number | null; mean_transfer_us: number }[];
}

export interface CritPath {
  error?: string; length: number;
  /** [kind, track, from track, start, end, what] */
  segments: [string, number | null, number | null, number, number, string][];
  profile: Record<string, [string, string, string | null, number][]>;
}

export interface Displays {
  error?: string; states: string[]; utilization: [string, number[]][];
  concurrency: { seconds: number[]; mean: number[]; max: number[]; start: number; width: number };
  queue: { mean: number[]; max: number[]; start: number; width: number };
  histograms: Record<string, { values: number[]; start: number; width: number }>;
}

const token = new URLSearchParams(window.location.search).get("token") ?? "";

export async function get<T>(path: string, params: Record<string, number | string> = {}): Promise<T> {
  const q = new URLSearchParams(token ? { token } : {});
  for (const [k, v] of Object.entries(params)) q.set(k, typeof v === "number" ? String(Math.round(v)) : v);
  const r = await fetch(`${path}?${q.toString()}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

export interface Compare {
  runs: string[];
  /** [metric, unit, one value per run] */
  metrics: [string, string, (number | null)[]][];
  /** [function, inclusive s per run, last − first, last / first] */
  functions: [string, (number | null)[], number, number | null][];
}

/** `/api/series`: the external metrics (plx run --monitor, plx import). */
export interface Series {
  name: string; unit: string;
  /** level: each value holds until the next sample; total: a running total */
  mode: "level" | "total";
  source: string; host: string;
  /** [ns from the first event, value] in time order */
  samples: [number, number][];
}
export interface SeriesAnswer { series: Series[]; warnings: string[] }

/** `/api/counters`: the counted calls per track: [start, end, region, value per event or null]. */
export interface CountersAnswer {
  error?: string;
  tracks: { track: number; events: string[]; calls: [number, number, number, (number | null)[]][] }[];
}
