// The bucket-result cache's merge: rows of the states statement (one per breakdown group and time
// bucket, src/stores/events/statements.ts: BucketStateStatements) become the same rows the query
// statements answer — result groups (havings, order, limit), their series, totals, total series
// and "other" — with the same definitions (src/query/plan.ts and the engines' query statements):
// - COUNT, SUM, AVG, MIN, MAX merge their sums, counts, minima and maxima;
// - COUNT_DISTINCT unites the groups' distinct values;
// - percentiles take the nearest rank over every (value, weight) pair: the smallest value whose
//   cumulative weight reaches p × the total (exact integer arithmetic, p in thousandths), or
//   with one sample rate for the window the ⌈p·n⌉-th value;
// - HEATMAP counts the pairs' weights in 50 cells between the smallest and largest value of
//   every matching event;
// - CONCURRENCY counts each span's weight in every bucket from its own to its last (capped at the
//   window's last), the busiest bucket where a level has no buckets;
// - RATE_* take the per-second change between consecutive events of a group, ordered by time
//   then value, each counted in the later event's bucket.
// Sums of floating-point values may differ from one statement's in the last digits (addition in
// another order, as two runs of a parallel engine can); everything else is the same value.
import type { StatesPlan, OrderTerm } from './plan.js';

/** A states row made ready to merge: lists as typed arrays of pairs, numbers as numbers. */
export interface StateRow {
  keys: unknown[];
  b: number;
  rows: number;
  wsum: number;
  states: Record<string, number | null | Float64Array | string[]>;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A states statement's row as a StateRow. */
export function stateRow(plan: StatesPlan, raw: Record<string, unknown>): StateRow {
  const states: StateRow['states'] = {};
  for (const c of plan.states) {
    const v = raw[c.name];
    if (c.kind === 'distinct') states[c.name] = Array.isArray(v) ? v.map(distinctKey) : [];
    else if (c.kind === 'values' || c.kind === 'rates' || c.kind === 'spans') {
      const list = Array.isArray(v) ? (v as unknown[][]) : [];
      const pairs = new Float64Array(list.length * 2);
      list.forEach((p, i) => {
        pairs[2 * i] = Number(p[0]);
        pairs[2 * i + 1] = Number(p[1]);
      });
      states[c.name] = pairs;
    } else states[c.name] = num(v);
  }
  return { keys: plan.keys.map((k) => raw[k.alias]), b: Number(raw.__b), rows: Number(raw.__rows), wsum: Number(raw.__wsum ?? 0), states };
}

/** A value's identity among a group's distinct values (its field has one type). */
const distinctKey = (v: unknown) => (typeof v === 'bigint' ? v.toString() : String(v));
/** A group's identity. */
export const groupKey = (keys: unknown[]) => JSON.stringify(keys.map((v) => (typeof v === 'bigint' ? `${v}n` : v)));

/** The approximate bytes a state row holds in memory (the cache's bound). */
export function stateRowBytes(r: StateRow): number {
  let n = 96 + r.keys.length * 16;
  for (const k of r.keys) if (typeof k === 'string') n += k.length * 2;
  for (const v of Object.values(r.states)) {
    if (v instanceof Float64Array) n += 64 + v.byteLength;
    else if (Array.isArray(v)) n += 32 + v.reduce((s, x) => s + 24 + x.length * 2, 0);
    else n += 16;
  }
  return n;
}

/** How many list elements a row holds (a query past the cache's bound on them runs uncached). */
export function stateRowValues(r: StateRow): number {
  let n = 0;
  for (const v of Object.values(r.states)) if (v instanceof Float64Array) n += v.length / 2;
  else if (Array.isArray(v)) n += v.length;
  return n;
}

/**
 * State rows of a finer grain (`fineUs`, dividing the plan's bucket width) as rows of the plan's
 * buckets: each group's rows of one bucket merged (numbers summed or compared, lists joined,
 * spans' last buckets in the plan's buckets).
 */
export function coarsen(plan: StatesPlan, rows: StateRow[], fineUs: number): StateRow[] {
  const k = Math.round(plan.bucketUs / fineUs);
  if (k === 1) return rows;
  const out = new Map<string, StateRow>();
  for (const r of rows) {
    const b = Math.floor(r.b / k);
    const id = `${b}\0${groupKey(r.keys)}`;
    const into = out.get(id);
    const states = { ...r.states };
    if (states.__spans instanceof Float64Array) {
      const l = Float64Array.from(states.__spans);
      for (let j = 0; j < l.length; j += 2) l[j] = Math.floor(l[j] / k);
      states.__spans = l;
    }
    if (!into) {
      out.set(id, { ...r, b, states });
      continue;
    }
    into.rows += r.rows;
    into.wsum += r.wsum;
    for (const c of plan.states) {
      const a = into.states[c.name];
      const v = states[c.name];
      if (v instanceof Float64Array) {
        const joined = new Float64Array((a as Float64Array).length + v.length);
        joined.set(a as Float64Array);
        joined.set(v, (a as Float64Array).length);
        into.states[c.name] = joined;
      } else if (Array.isArray(v)) into.states[c.name] = [...new Set([...(a as string[]), ...v])];
      else if (v !== null) {
        const x = a as number | null;
        into.states[c.name] = x === null ? v : c.kind === 'min' ? Math.min(x, v) : c.kind === 'max' ? Math.max(x, v) : x + v;
      }
    }
  }
  return [...out.values()];
}

export type Row = Record<string, unknown>;
export interface MergedParts {
  results: Row[];
  series: Row[];
  totals?: Row;
  totalSeries: Row[];
  other?: Row;
}

interface Group {
  keys: unknown[];
  rows: StateRow[];
  byBucket: Map<number, StateRow>;
}
interface RatePoint {
  b: number;
  r: number;
}

/** The parts of an answer from the window's state rows (every bucket once). */
export function mergeStates(plan: StatesPlan, all: StateRow[]): MergedParts {
  const groups = new Map<string, Group>();
  for (const r of all) {
    const k = groupKey(r.keys);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { keys: r.keys, rows: [], byBucket: new Map() }));
    g.rows.push(r);
    g.byBucket.set(r.b, r);
  }
  const bounds = heatmapBounds(plan, all);
  const rateCols = plan.states.filter((s) => s.kind === 'rates');
  const pointsOf = new Map<Group, Map<string, RatePoint[]>>();
  const points = (g: Group) => {
    let p = pointsOf.get(g);
    if (!p) pointsOf.set(g, (p = new Map(rateCols.map((c) => [c.name, ratePoints(g.rows, c.name)]))));
    return p;
  };
  const hasConcurrency = plan.calcs.some((c) => c.op === 'CONCURRENCY');
  const keyRow = (keys: unknown[]) => Object.fromEntries(plan.keys.map((k, i) => [k.alias, keys[i]]));

  /** CONCURRENCY's coverage of each set of groups a level reads, computed once. */
  const coverages = new Map<Group[], Map<number, number>>();
  const coverageOf = (gs: Group[]) => {
    let c = coverages.get(gs);
    if (!c) coverages.set(gs, (c = concurrency(plan, gs.flatMap((g) => g.rows))));
    return c;
  };
  /** The calculations over `gs` (all their buckets, or bucket `b` alone). */
  const level = (gs: Group[], b?: number): Row => {
    const rows = b === undefined ? gs.flatMap((g) => g.rows) : gs.flatMap((g) => (g.byBucket.has(b) ? [g.byBucket.get(b)!] : []));
    const ratesOf = (name: string) => gs.flatMap((g) => points(g).get(name)!).filter((p) => b === undefined || p.b === b);
    const coverage = hasConcurrency ? coverageOf(gs) : undefined;
    return { __rows: rows.reduce((s, r) => s + r.rows, 0), ...calculations(plan, rows, bounds, ratesOf, coverage, b) };
  };
  const bucketsOf = (gs: Group[]) => {
    const bs = new Set<number>();
    for (const g of gs) for (const b of g.byBucket.keys()) bs.add(b);
    if (hasConcurrency) for (const b of coverageOf(gs).keys()) bs.add(b);
    return [...bs].sort((x, y) => x - y);
  };

  const every = [...groups.values()];
  /** One array per group, so that its coverage is computed once for its result and its series. */
  const singles = new Map<Group, Group[]>();
  const ranked = every
    .map((g) => ({ g, row: { ...keyRow(g.keys), ...level(hasConcurrency ? (singles.get(g) ?? singles.set(g, [g]).get(g)!) : [g]) } }))
    .filter(({ row }) => plan.havings.every((h) => meets(row, h)))
    .sort((x, y) => compareRows(x.row, y.row, plan.order))
    .slice(0, Math.max(0, plan.limit));
  const top = new Set(ranked.map((x) => x.g));
  const series: Row[] = [];
  for (const { g } of ranked) {
    const one = singles.get(g) ?? [g];
    for (const b of bucketsOf(one)) series.push({ ...keyRow(g.keys), __b: b, ...level(one, b) });
  }
  const keyOrder: OrderTerm[] = plan.keys.map((k) => ({ alias: k.alias, descending: false }));
  series.sort((x, y) => (x.__b as number) - (y.__b as number) || compareRows(x, y, keyOrder));
  const others = every.filter((g) => !top.has(g));
  const nullKeys = keyRow(plan.keys.map(() => null));
  const present = (row: Row) => ((row.__rows as number) > 0 ? row : undefined);
  return {
    results: ranked.map((x) => x.row),
    series,
    totals: present({ ...nullKeys, ...level(every) }),
    totalSeries: bucketsOf(every).map((b) => ({ ...nullKeys, __b: b, ...level(every, b) })),
    other: present({ ...nullKeys, ...level(others) }),
  };
}

/** Each calculation's value over `rows`. */
function calculations(
  plan: StatesPlan,
  rows: StateRow[],
  bounds: Map<string, { lo: number; width: number }>,
  ratesOf: (name: string) => RatePoint[],
  coverage: Map<number, number> | undefined,
  b: number | undefined,
): Row {
  const out: Row = {};
  const w = plan.weighted;
  const sum = (name: string): number | null => {
    let s: number | null = null;
    for (const r of rows) {
      const v = r.states[name] as number | null;
      if (v !== null) s = (s ?? 0) + v;
    }
    return s;
  };
  const extreme = (name: string, pick: (a: number, b: number) => number): number | null => {
    let s: number | null = null;
    for (const r of rows) {
      const v = r.states[name] as number | null;
      if (v !== null) s = s === null ? v : pick(s, v);
    }
    return s;
  };
  const pairs = (name: string) => rows.map((r) => r.states[name] as Float64Array);
  for (const c of plan.calcs) {
    const f = c.field?.alias;
    switch (c.op) {
      case 'COUNT':
        out[c.alias] = rows.reduce((s, r) => s + (w ? r.wsum : r.rows), 0);
        break;
      case 'SUM':
        out[c.alias] = sum(w ? `__sumWeighted_${f}` : `__sum_${f}`) ?? 0;
        break;
      case 'AVG': {
        const n = sum(w ? `__sumWeighted_${f}` : `__sum_${f}`);
        const d = sum(w ? `__countWeighted_${f}` : `__count_${f}`);
        out[c.alias] = n === null || d === null || d === 0 ? null : n / d;
        break;
      }
      case 'MIN':
        out[c.alias] = extreme(`__min_${f}`, Math.min);
        break;
      case 'MAX':
        out[c.alias] = extreme(`__max_${f}`, Math.max);
        break;
      case 'COUNT_DISTINCT': {
        const seen = new Set<string>();
        for (const r of rows) for (const v of r.states[`__distinct_${f}`] as string[]) seen.add(v);
        out[c.alias] = seen.size;
        break;
      }
      case 'PERCENTILE':
        out[c.alias] = nearestRank(pairs(`__values_${f}`), Math.round(c.p! * 1000), plan.weightedPercentiles);
        break;
      case 'HEATMAP':
        out[c.alias] = heatmap(pairs(`__values_${f}`), bounds.get(f!), plan.heatmapBuckets);
        break;
      case 'CONCURRENCY': {
        if (b !== undefined) out[c.alias] = coverage?.get(b) ?? null;
        else {
          let busiest: number | null = null;
          for (const v of coverage?.values() ?? []) if (busiest === null || v > busiest) busiest = v;
          out[c.alias] = busiest;
        }
        break;
      }
      case 'RATE_AVG':
      case 'RATE_SUM':
      case 'RATE_MAX': {
        const rs = ratesOf(`__rates_${f}`);
        if (rs.length === 0) out[c.alias] = null;
        else if (c.op === 'RATE_MAX') out[c.alias] = rs.reduce((m, p) => Math.max(m, p.r), -Infinity);
        else {
          const s = rs.reduce((t, p) => t + p.r, 0);
          out[c.alias] = c.op === 'RATE_SUM' ? s : s / rs.length;
        }
        break;
      }
    }
  }
  return out;
}

/** Nearest rank over (value, weight) pairs: weighted, or (one weight for all) the ⌈k·n/1000⌉-th value. */
function nearestRank(lists: Float64Array[], k: number, weighted: boolean): number | null {
  const n = lists.reduce((s, l) => s + l.length / 2, 0);
  if (n === 0) return null;
  if (!weighted) {
    const values = new Float64Array(n);
    let i = 0;
    for (const l of lists) for (let j = 0; j < l.length; j += 2) values[i++] = l[j];
    values.sort();
    return values[Math.floor((k * n + 999) / 1000) - 1];
  }
  const all: [number, number][] = [];
  let total = 0;
  for (const l of lists)
    for (let j = 0; j < l.length; j += 2) {
      all.push([l[j], l[j + 1]]);
      total += l[j + 1];
    }
  all.sort((a, b) => a[0] - b[0]);
  let cum = 0;
  for (const [v, wt] of all) {
    cum += wt;
    if (cum * 1000 >= k * total) return v;
  }
  return all[all.length - 1][0];
}

/** The smallest value and the cell width of each HEATMAP field, over every row. */
function heatmapBounds(plan: StatesPlan, rows: StateRow[]): Map<string, { lo: number; width: number }> {
  const out = new Map<string, { lo: number; width: number }>();
  for (const c of plan.calcs) {
    if (c.op !== 'HEATMAP' || out.has(c.field!.alias)) continue;
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of rows) {
      const l = r.states[`__values_${c.field!.alias}`] as Float64Array;
      for (let j = 0; j < l.length; j += 2) {
        if (l[j] < lo) lo = l[j];
        if (l[j] > hi) hi = l[j];
      }
    }
    if (lo <= hi) out.set(c.field!.alias, { lo, width: Math.max((hi - lo) / plan.heatmapBuckets, 1e-9) });
  }
  return out;
}

/** HEATMAP's cells as JSON text (the answer's form: src/query/run.ts), or null without values. */
function heatmap(lists: Float64Array[], bounds: { lo: number; width: number } | undefined, buckets: number): string | null {
  if (!bounds) return null;
  const counts = new Map<number, number>();
  for (const l of lists)
    for (let j = 0; j < l.length; j += 2) {
      const cell = Math.min(Math.floor((l[j] - bounds.lo) / bounds.width), buckets - 1);
      counts.set(cell, (counts.get(cell) ?? 0) + l[j + 1]);
    }
  if (counts.size === 0) return null;
  const cells = [...counts.entries()].sort((a, b) => a[0] - b[0]);
  return JSON.stringify(cells.map(([i, count]) => ({ lower: bounds.lo + i * bounds.width, upper: bounds.lo + (i + 1) * bounds.width, count })));
}

/** Spans' weight per bucket they cover (from their own bucket to their last, capped at the window's last). */
function concurrency(plan: StatesPlan, rows: StateRow[]): Map<number, number> {
  // A difference per bucket where spans start (+) and end (−), then one sweep: long spans cost
  // nothing per bucket they cover.
  const diff = new Map<number, number>();
  const add = (b: number, w: number) => diff.set(b, (diff.get(b) ?? 0) + w);
  for (const r of rows) {
    const l = r.states.__spans as Float64Array;
    for (let j = 0; j < l.length; j += 2) {
      add(r.b, l[j + 1]);
      add(Math.min(Math.max(l[j], r.b), plan.lastBucket) + 1, -l[j + 1]);
    }
  }
  const out = new Map<number, number>();
  const points = [...diff.keys()].sort((x, y) => x - y);
  let running = 0;
  for (let i = 0; i < points.length - 1; i++) {
    running += diff.get(points[i])!;
    if (running > 0) for (let b = points[i]; b < points[i + 1]; b++) out.set(b, running);
  }
  return out;
}

/** A group's per-second changes of one field between consecutive events (by time, then value). */
function ratePoints(rows: StateRow[], name: string): RatePoint[] {
  const events: [number, number, number][] = [];
  for (const r of rows) {
    const l = r.states[name] as Float64Array;
    for (let j = 0; j < l.length; j += 2) events.push([l[j], l[j + 1], r.b]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: RatePoint[] = [];
  for (let i = 1; i < events.length; i++) {
    const r = (events[i][1] - events[i - 1][1]) / ((events[i][0] - events[i - 1][0]) / 1000000);
    if (Number.isFinite(r)) out.push({ b: events[i][2], r });
  }
  return out;
}

/** Whether a result group meets a having (a missing calculation or a null value never does). */
function meets(row: Row, h: StatesPlan['havings'][number]): boolean {
  if (h.alias === undefined) return false;
  const v = row[h.alias];
  if (typeof v !== 'number') return false;
  switch (h.op) {
    case '=':
      return v === h.value;
    case '!=':
      return v !== h.value;
    case '>':
      return v > h.value;
    case '>=':
      return v >= h.value;
    case '<':
      return v < h.value;
    case '<=':
      return v <= h.value;
  }
}

/** ORDER BY of the result groups: each term ascending or descending, nulls last. */
function compareRows(x: Row, y: Row, order: OrderTerm[]): number {
  for (const t of order) {
    const a = x[t.alias];
    const b = y[t.alias];
    const an = a === null || a === undefined;
    const bn = b === null || b === undefined;
    if (an || bn) {
      if (an !== bn) return an ? 1 : -1;
      continue;
    }
    const c = compareValues(a, b);
    if (c !== 0) return t.descending ? -c : c;
  }
  return 0;
}

const SURROGATE = /[\uD800-\uDFFF]/;
/** Values as the engines order them: numbers by value, booleans false first, text by code point (UTF-8 bytes). */
function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') {
    if (SURROGATE.test(a) || SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
