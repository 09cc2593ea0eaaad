// A query result as the pages show it: its groups (one per combination of breakdown values),
// one time series per calculation and group aligned on the result's time buckets, the table
// rows, and "other" (the events of the groups past the limit). With a time comparison, each
// group's line and row one offset back (the past buckets moved on by the offset).
import { calculationKey, type QueryData, type QuerySpec, type ResultValue } from './api/types.js';
import { granularityFor } from '../../src/query/spec.js';

export interface Group {
  /** Stable identity: the breakdown values as JSON. */
  key: string;
  /** What a person reads: the values joined, `(none)` for a missing one. */
  label: string;
  /** The breakdown values (absent ones left out). */
  values: Record<string, ResultValue>;
}

export interface CalcSeries {
  key: string;
  op: string;
  /** Per group (same order as `groups`), one value per time (null where the group had no events). */
  lines: (number | null)[][];
  /** With a comparison: per group, its values one offset back, on the same times. */
  past?: (number | null)[][];
}

/** A time comparison as the pages show it. */
export interface ShapedComparison {
  offset: number;
  /** Per group (same order as `groups`): its result row one offset back, if it had one. */
  rows: (Record<string, ResultValue> | undefined)[];
}

export interface ShapedResult {
  breakdowns: string[];
  calcKeys: string[];
  groups: Group[];
  /** Bucket start times, Unix seconds, ascending. */
  times: number[];
  /** Seconds each time bucket spans. */
  step: number;
  /**
   * The time axis' span, Unix seconds: the query's window when known, else from the first bucket
   * to the end of the last (undefined without any bucket).
   */
  span?: [number, number];
  series: CalcSeries[];
  /** The HEATMAP calculation, if any: per time, its cells (summed over the groups). */
  heatmap?: { key: string; column: string; rows: { time: number; cells: HeatCell[] }[] };
  rows: Record<string, ResultValue>[];
  other?: Record<string, ResultValue>;
  comparison?: ShapedComparison;
}

export interface HeatCell {
  lower: number;
  upper: number;
  count: number;
}

/** Ops whose value for a bucket without events is 0 rather than "no value". */
const ZERO_WHEN_EMPTY = new Set(['COUNT', 'SUM', 'CONCURRENCY', 'COUNT_DISTINCT']);

export function groupOf(breakdowns: string[], data: Record<string, ResultValue>): Group {
  const values: Record<string, ResultValue> = {};
  for (const b of breakdowns) if (data[b] !== undefined) values[b] = data[b];
  return {
    key: JSON.stringify(breakdowns.map((b) => data[b] ?? null)),
    label: breakdowns.length === 0 ? 'all events' : breakdowns.map((b) => (data[b] === undefined ? '(none)' : String(data[b]))).join(', '),
    values,
  };
}

export function parseCells(v: ResultValue | undefined): HeatCell[] {
  if (typeof v !== 'string') return [];
  try {
    const cells = JSON.parse(v) as HeatCell[];
    return Array.isArray(cells) ? cells.filter((c) => typeof c.lower === 'number' && typeof c.count === 'number') : [];
  } catch {
    return [];
  }
}

/** Most buckets a window is filled with (past that, only the buckets with events are shown). */
const MAX_FILLED = 5000;

/**
 * The bucket start times of a window, as the server cuts it (epoch-aligned buckets of the spec's
 * granularity, automatic by the window's length), so that quiet buckets show as such.
 */
export function bucketTimes(spec: QuerySpec, window: { start: number; end: number }): number[] | undefined {
  const g = granularityFor(spec, window.start, window.end);
  const first = Math.floor(window.start / g) * g;
  if ((window.end - first) / g > MAX_FILLED) return undefined;
  const out: number[] = [];
  for (let t = first; t < window.end; t += g) out.push(t);
  return out;
}

/**
 * The buckets' width when the window is not known: what the buckets seen are apart (their
 * greatest common divisor), or, with a single one, the width asked for or the automatic one of
 * the relative range.
 */
export function stepOf(spec: QuerySpec, seen: number[]): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const sorted = [...new Set(seen)].sort((a, b) => a - b);
  let g = 0;
  for (let i = 1; i < sorted.length; i++) g = gcd(sorted[i] - sorted[i - 1], g);
  return g > 0 ? g : granularityFor(spec, 0, spec.time_range ?? 7200);
}

/** `window`: the query's window, when known, so every bucket in it is shown (quiet ones too). */
export function shapeResult(spec: QuerySpec, data: QueryData, window?: { start: number; end: number }): ShapedResult {
  const breakdowns = spec.breakdowns ?? [];
  const calcs = spec.calculations && spec.calculations.length > 0 ? spec.calculations : [{ op: 'COUNT' as const }];
  const calcKeys = [...new Set(calcs.map(calculationKey))];
  const groups = data.results.map((r) => groupOf(breakdowns, r.data));
  const index = new Map(groups.map((g, i) => [g.key, i]));
  const seen = data.series.map((s) => Date.parse(s.time) / 1000);
  const step = window ? granularityFor(spec, window.start, window.end) : stepOf(spec, seen);
  let filled: number[] = [];
  if (window) filled = bucketTimes(spec, window) ?? [];
  else if (seen.length > 0) {
    // Only the buckets with events are known: the quiet ones between them are filled in, so that a
    // line does not join two buckets across empty ones.
    const first = Math.min(...seen);
    const last = Math.max(...seen);
    if ((last - first) / step <= MAX_FILLED) for (let t = first; t < last; t += step) filled.push(t);
  }
  const times = [...new Set([...filled, ...seen])].sort((a, b) => a - b);
  const span: [number, number] | undefined = window
    ? [Math.min(window.start, times[0] ?? window.start), Math.max(window.end, (times[times.length - 1] ?? 0) + step)]
    : times.length > 0
      ? [times[0], times[times.length - 1] + step]
      : undefined;
  const tIndex = new Map(times.map((t, i) => [t, i]));

  const series: CalcSeries[] = [];
  const heat = calcs.find((c) => c.op === 'HEATMAP');
  for (const key of calcKeys) {
    const op = calcs.find((c) => calculationKey(c) === key)!.op;
    if (op === 'HEATMAP') continue;
    const fill = ZERO_WHEN_EMPTY.has(op) ? 0 : null;
    series.push({ key, op, lines: groups.map(() => new Array<number | null>(times.length).fill(fill)) });
  }
  const heatRows = heat ? times.map((time) => ({ time, cells: new Map<number, HeatCell>() })) : [];
  const heatKey = heat ? calculationKey(heat) : '';
  for (const s of data.series) {
    const g = index.get(groupOf(breakdowns, s.data).key);
    const t = tIndex.get(Date.parse(s.time) / 1000)!;
    if (g === undefined) continue;
    for (const c of series) {
      const v = s.data[c.key];
      if (typeof v === 'number') c.lines[g][t] = v;
    }
    if (heat) {
      for (const cell of parseCells(s.data[heatKey])) {
        const at = heatRows[t].cells;
        const prev = at.get(cell.lower);
        if (prev) prev.count += cell.count;
        else at.set(cell.lower, { ...cell });
      }
    }
  }
  const shaped: ShapedResult = {
    breakdowns,
    calcKeys,
    groups,
    times,
    step,
    span,
    series,
    rows: data.results.map((r) => r.data),
  };
  if (heat) {
    shaped.heatmap = {
      key: heatKey,
      column: heat.column ?? '',
      rows: heatRows.map((r) => ({ time: r.time, cells: [...r.cells.values()].sort((a, b) => a.lower - b.lower) })),
    };
  }
  if (data.comparison) shaped.comparison = shapeComparison(shaped, data.comparison, index, tIndex);
  const other = data.other_by_aggregate?.data;
  if (other && Object.keys(other).length > 0 && calcKeys.some((k) => other[k] !== undefined && other[k] !== 0)) shaped.other = other;
  return shaped;
}

/** Names of the offsets Honeycomb allows (docs/queries.md), e.g. `1 day`. */
export const OFFSETS: { seconds: number; label: string }[] = [
  { seconds: 1800, label: '30 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 7200, label: '2 hours' },
  { seconds: 28800, label: '8 hours' },
  { seconds: 86400, label: '1 day' },
  { seconds: 604800, label: '1 week' },
  { seconds: 2419200, label: '4 weeks' },
  { seconds: 15724800, label: '26 weeks' },
];
export const offsetLabel = (s: number) => OFFSETS.find((o) => o.seconds === s)?.label ?? `${s} s`;

/** The change from `past` to `now` in %: undefined without both, or from 0. */
export function changePercent(now: ResultValue | null | undefined, past: ResultValue | null | undefined): number | undefined {
  if (typeof now !== 'number' || typeof past !== 'number' || past === 0) return undefined;
  return ((now - past) / Math.abs(past)) * 100;
}

/** `+12%`, `−3.5%`, `0%` (one decimal under 10). */
export function formatChange(pct: number | undefined): string {
  if (pct === undefined || !Number.isFinite(pct)) return '–';
  const a = Math.abs(pct);
  const text = a >= 10 ? Math.round(a).toString() : a.toFixed(1).replace(/\.0$/, '');
  return text === '0' ? '0%' : `${pct > 0 ? '+' : '−'}${text}%`;
}

/** Each series' past lines and each group's past row, on the main answer's groups and times. */
function shapeComparison(
  shaped: ShapedResult,
  cmp: NonNullable<QueryData['comparison']>,
  index: Map<string, number>,
  tIndex: Map<number, number>,
): ShapedComparison {
  const { breakdowns, times, step } = shaped;
  const offset = cmp.offset_seconds;
  for (const c of shaped.series) c.past = shaped.groups.map(() => new Array<number | null>(times.length).fill(ZERO_WHEN_EMPTY.has(c.op) ? 0 : null));
  // (a past bucket moved on by the offset is one of the main buckets, unless the granularity
  // does not divide the offset: then the bucket it falls in)
  const at = (t: number) => tIndex.get(t) ?? (times.length && t >= times[0] ? Math.floor((t - times[0]) / step) : -1);
  for (const s of cmp.series) {
    const g = index.get(groupOf(breakdowns, s.data).key);
    const t = at(Date.parse(s.time) / 1000 + offset);
    if (g === undefined || t < 0 || t >= times.length) continue;
    for (const c of shaped.series) {
      const v = s.data[c.key];
      if (typeof v === 'number') c.past![g][t] = v;
    }
  }
  const past = new Map(cmp.results.map((r) => [groupOf(breakdowns, r.data).key, r.data]));
  return { offset, rows: shaped.groups.map((g) => past.get(g.key)) };
}

/** Rows sorted by one column (numbers numerically, text alphabetically), missing values last. */
export function sortRows(rows: Record<string, ResultValue>[], column: string, descending: boolean): Record<string, ResultValue>[] {
  const dir = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = a[column];
    const y = b[column];
    if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
    if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
    return String(x).localeCompare(String(y), undefined, { numeric: true }) * dir;
  });
}
