// A HEATMAP result as a grid: time buckets across, value buckets up, a weighted count in each
// cell. The server cuts every time bucket's values at the same bounds (the query's smallest to
// largest value in 50 equal steps), so one row of bounds serves the whole grid. Colours follow
// the logarithm of the count, so that rare slow requests still show next to a dense band.
import type { HeatCell } from './results.js';

export interface HeatGrid {
  times: number[];
  /** Seconds each time bucket spans. */
  step: number;
  /** Lower bound of value bucket 0 and the width of each. */
  lo: number;
  width: number;
  buckets: number;
  /** counts[t * buckets + b] */
  counts: Float64Array;
  max: number;
}

export function buildGrid(rows: { time: number; cells: HeatCell[] }[]): HeatGrid | undefined {
  let lo = Infinity;
  let width = 0;
  for (const r of rows) {
    for (const c of r.cells) {
      if (c.lower < lo) lo = c.lower;
      if (!width && c.upper > c.lower) width = c.upper - c.lower;
    }
  }
  if (!Number.isFinite(lo) || rows.length === 0) return undefined;
  if (!width) width = 1;
  let buckets = 1;
  for (const r of rows) for (const c of r.cells) buckets = Math.max(buckets, Math.round((c.lower - lo) / width) + 1);
  const times = rows.map((r) => r.time);
  const counts = new Float64Array(times.length * buckets);
  let max = 0;
  rows.forEach((r, t) => {
    for (const c of r.cells) {
      const b = Math.round((c.lower - lo) / width);
      const i = t * buckets + b;
      counts[i] += c.count;
      if (counts[i] > max) max = counts[i];
    }
  });
  const step = times.length > 1 ? Math.min(...times.slice(1).map((t, i) => t - times[i])) : 60;
  return { times, step, lo, width, buckets, counts, max };
}

/** The intensity of a cell of 1 count: light, but plainly visible on the background. */
export const MIN_INTENSITY = 0.3;

/** 0…1 on a log scale: 1 count is MIN_INTENSITY, the densest cell is 1. */
export function intensity(count: number, max: number): number {
  if (count <= 0 || max <= 0) return 0;
  if (max <= 1) return 1;
  return MIN_INTENSITY + (1 - MIN_INTENSITY) * (Math.log(Math.max(1, count)) / Math.log(max));
}

/** Round ticks (1, 2, 2.5 or 5 × a power of ten) inside [lo, hi], at most `max` of them. */
export function niceTicks(lo: number, hi: number, max = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, max - 1);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => Math.floor(hi / s) - Math.ceil(lo / s) + 1 <= max) ?? 10 * p;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The unit a column's name says its values are in: `duration_ms` → ms, `…_s`/`…_seconds` → s. */
export function unitOf(column: string): 'ms' | 's' | undefined {
  if (/(^|[._])(ms|millis|milliseconds)$/i.test(column) || /_ms$/i.test(column)) return 'ms';
  if (/(^|[._])(s|sec|secs|seconds)$/i.test(column)) return 's';
  return undefined;
}

const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];

/**
 * Time ticks of [start, end] (Unix seconds) at a round local step (a minute, 5, 15, 30 minutes,
 * an hour, …), at most `max` of them: the steps a reader expects, evenly spaced.
 */
export function timeTicks(start: number, end: number, max: number, tzOffsetSeconds = -new Date(start * 1000).getTimezoneOffset() * 60): { step: number; ticks: number[] } {
  const span = Math.max(1, end - start);
  const step = TIME_STEPS.find((s) => span / s <= max) ?? TIME_STEPS[TIME_STEPS.length - 1];
  const first = Math.ceil((start + tzOffsetSeconds) / step) * step - tzOffsetSeconds;
  const ticks: number[] = [];
  for (let t = first; t <= end; t += step) ticks.push(t);
  return { step, ticks };
}

/** The selection a rectangle of whole cells covers: [start, end) in time, [lower, upper] in value. */
export function selectionOf(grid: HeatGrid, t0: number, t1: number, b0: number, b1: number) {
  const [ta, tb] = [Math.min(t0, t1), Math.max(t0, t1)].map((t) => Math.max(0, Math.min(grid.times.length - 1, t)));
  const [ba, bb] = [Math.min(b0, b1), Math.max(b0, b1)].map((b) => Math.max(0, Math.min(grid.buckets - 1, b)));
  return {
    start_time: grid.times[ta],
    end_time: grid.times[tb] + grid.step,
    lower: grid.lo + ba * grid.width,
    upper: grid.lo + (bb + 1) * grid.width,
  };
}
