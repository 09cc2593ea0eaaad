// An independent reference for query results: the README's definitions of every calculation,
// filter and grouping, computed in plain TypeScript over the generated events. Tests compare
// the API's answers with these.
export type Value = string | number | boolean | null | undefined;
export interface RefEvent {
  timeMs: number;
  samplerate: number;
  fields: Record<string, Value>;
}

/** A small deterministic PRNG (mulberry32), so generated data is the same every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const num = (v: Value): number | null => (typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : null);

export function filterMatches(e: RefEvent, column: string, op: string, value: unknown): boolean {
  const v = e.fields[column];
  const present = v !== null && v !== undefined;
  const text = present ? String(v) : '';
  const eq = (x: unknown) => present && (typeof v === 'number' ? v === Number(x) : v === x);
  switch (op) {
    case 'exists':
      return present;
    case 'does-not-exist':
      return !present;
    case '=':
      return eq(value);
    case '!=':
      return !eq(value);
    case '>':
      return present && (v as number) > (value as number);
    case '>=':
      return present && (v as number) >= (value as number);
    case '<':
      return present && (v as number) < (value as number);
    case '<=':
      return present && (v as number) <= (value as number);
    case 'starts-with':
      return present && text.startsWith(String(value));
    case 'does-not-start-with':
      return !(present && text.startsWith(String(value)));
    case 'ends-with':
      return present && text.endsWith(String(value));
    case 'does-not-end-with':
      return !(present && text.endsWith(String(value)));
    case 'contains':
      return present && text.includes(String(value));
    case 'does-not-contain':
      return !(present && text.includes(String(value)));
    case 'in':
      return (value as unknown[]).some(eq);
    case 'not-in':
      return !(value as unknown[]).some(eq);
  }
  throw new Error(`unknown op ${op}`);
}

/**
 * Weighted nearest rank: the smallest value whose cumulative sample-rate weight reaches p × total.
 * Compared in integers (p is in thousandths): in doubles 0.1 × 30 is 3.0000000000000004, which
 * would skip the 3rd of 30 values that P10 is.
 */
export function percentile(pairs: { v: number; w: number }[], p: number): number | undefined {
  if (pairs.length === 0) return undefined;
  const sorted = [...pairs].sort((a, b) => a.v - b.v);
  const total = sorted.reduce((s, x) => s + x.w, 0);
  const thousandths = Math.round(p * 1000);
  let cum = 0;
  for (const x of sorted) {
    cum += x.w;
    if (cum * 1000 >= thousandths * total) return x.v;
  }
  return sorted[sorted.length - 1].v;
}

export const P: Record<string, number> = {
  P001: 0.001, P01: 0.01, P05: 0.05, P10: 0.1, P20: 0.2, P25: 0.25, P50: 0.5,
  P75: 0.75, P80: 0.8, P90: 0.9, P95: 0.95, P99: 0.99, P999: 0.999,
};

/** One calculation over a group's events (HEATMAP, CONCURRENCY are computed by their own helpers). */
export function aggregate(events: RefEvent[], op: string, column?: string): number | undefined {
  const pairs = column
    ? events.flatMap((e) => {
        const v = num(e.fields[column]);
        return v === null ? [] : [{ v, w: e.samplerate, t: e.timeMs }];
      })
    : [];
  switch (op) {
    case 'COUNT':
      return events.reduce((s, e) => s + e.samplerate, 0);
    case 'SUM':
      return pairs.reduce((s, x) => s + x.v * x.w, 0);
    case 'AVG': {
      const w = pairs.reduce((s, x) => s + x.w, 0);
      return w === 0 ? undefined : pairs.reduce((s, x) => s + x.v * x.w, 0) / w;
    }
    case 'MAX':
      return pairs.length ? Math.max(...pairs.map((x) => x.v)) : undefined;
    case 'MIN':
      return pairs.length ? Math.min(...pairs.map((x) => x.v)) : undefined;
    case 'COUNT_DISTINCT':
      return new Set(events.map((e) => e.fields[column!]).filter((v) => v !== null && v !== undefined)).size;
    case 'RATE_AVG':
    case 'RATE_SUM':
    case 'RATE_MAX': {
      const rates = ratesOf(pairs);
      if (rates.length === 0) return undefined;
      if (op === 'RATE_SUM') return rates.reduce((s, r) => s + r, 0);
      if (op === 'RATE_MAX') return Math.max(...rates);
      return rates.reduce((s, r) => s + r, 0) / rates.length;
    }
  }
  if (P[op] !== undefined) return percentile(pairs, P[op]);
  throw new Error(`no reference for ${op}`);
}

/** Per-second change between consecutive values, in time order. */
function ratesOf(pairs: { v: number; t: number }[]): number[] {
  // Same-instant values in ascending order (as the planner takes them).
  const sorted = [...pairs].sort((a, b) => a.t - b.t || a.v - b.v);
  const out: number[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const dt = (sorted[i].t - sorted[i - 1].t) / 1000;
    if (dt > 0) out.push((sorted[i].v - sorted[i - 1].v) / dt);
  }
  return out;
}

/** RATE_* within each group's own sequence, bucketed by the later event's time. */
export function ratesByBucket(events: RefEvent[], column: string, granularityS: number): Map<number, number[]> {
  const pairs = events
    .flatMap((e) => (num(e.fields[column]) === null ? [] : [{ v: num(e.fields[column])!, t: e.timeMs }]))
    .sort((a, b) => a.t - b.t || a.v - b.v);
  const out = new Map<number, number[]>();
  for (let i = 1; i < pairs.length; i++) {
    const dt = (pairs[i].t - pairs[i - 1].t) / 1000;
    if (dt <= 0) continue;
    const b = Math.floor(pairs[i].t / 1000 / granularityS);
    out.set(b, [...(out.get(b) ?? []), (pairs[i].v - pairs[i - 1].v) / dt]);
  }
  return out;
}

/** HEATMAP: 50 buckets between the smallest and largest numeric value of `column` over `events`. */
export function heatmapBounds(events: RefEvent[], column: string): { lo: number; width: number } {
  const values = events.map((e) => e.fields[column]).filter((v): v is number => typeof v === 'number');
  const lo = Math.min(...values);
  return { lo, width: (Math.max(...values) - lo) / 50 };
}

/** HEATMAP: the weighted count per bucket index of the events' numeric `column`, by index. */
export function heatmapCells(events: RefEvent[], column: string, { lo, width }: { lo: number; width: number }): [number, number][] {
  const m = new Map<number, number>();
  for (const e of events) {
    const v = e.fields[column];
    if (typeof v !== 'number') continue;
    const b = Math.min(Math.floor((v - lo) / width), 49);
    m.set(b, (m.get(b) ?? 0) + e.samplerate);
  }
  return [...m.entries()].sort((a, b) => a[0] - b[0]);
}

/** CONCURRENCY: per bucket, the weighted number of spans overlapping it; spans start in the window. */
export function concurrency(events: RefEvent[], durationColumn: string, granularityS: number, windowEndS: number): Map<number, number> {
  const g = granularityS * 1_000_000;
  const lastBucket = Math.floor((windowEndS * 1_000_000 - 1) / g);
  const out = new Map<number, number>();
  for (const e of events) {
    const startUs = e.timeMs * 1000;
    const dur = Math.max(num(e.fields[durationColumn]) ?? 0, 0);
    const first = Math.floor(startUs / g);
    const last = Math.min(Math.max(Math.floor((startUs + dur * 1000 - 1) / g), first), lastBucket);
    for (let b = first; b <= last; b++) out.set(b, (out.get(b) ?? 0) + e.samplerate);
  }
  return out;
}

export function groupBy<T>(items: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of items) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}
