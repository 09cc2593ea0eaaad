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

/** 0…1 on a log scale: 1 count is faint, the densest cell is 1. */
export function intensity(count: number, max: number): number {
  if (count <= 0 || max <= 0) return 0;
  if (max <= 1) return 1;
  return 0.15 + 0.85 * (Math.log(count) / Math.log(max));
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
