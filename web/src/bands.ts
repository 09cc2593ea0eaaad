// Anomaly bands on the query page's charts (the "Show expected band" toggle): the server's bands
// of a result (GET …/bands, docs/queries.md "Anomaly bands") laid on the shaped result's times and
// groups, per calculation.
import type { BandsAnswer } from './api/types.js';
import type { ShapedResult } from './results.js';

/** One line's band on the chart's times (null where the bucket has no band). */
export interface LineBand {
  expected: (number | null)[];
  lower: (number | null)[];
  upper: (number | null)[];
  outside: boolean[];
}

/** Per calculation key, per group (the shaped result's order): its band, if the answer has one. */
export function bandsByCalc(r: ShapedResult, a: BandsAnswer): Map<string, (LineBand | undefined)[]> {
  const index = new Map(r.times.map((t, i) => [t, i]));
  const groups = new Map(r.groups.map((g, i) => [g.key, i]));
  const out = new Map<string, (LineBand | undefined)[]>();
  for (const s of a.series) {
    const gi = groups.get(JSON.stringify(r.breakdowns.map((b) => s.group[b] ?? null)));
    if (gi === undefined) continue;
    const n = r.times.length;
    const band: LineBand = { expected: Array(n).fill(null), lower: Array(n).fill(null), upper: Array(n).fill(null), outside: Array(n).fill(false) };
    for (const p of s.points) {
      const i = index.get(Date.parse(p.time) / 1000);
      if (i === undefined) continue;
      band.expected[i] = p.expected;
      band.lower[i] = p.lower;
      band.upper[i] = p.upper;
      band.outside[i] = p.outside;
    }
    const perGroup = out.get(s.calculation) ?? out.set(s.calculation, Array(r.groups.length).fill(undefined)).get(s.calculation)!;
    perGroup[gi] = band;
  }
  return out;
}

/** Points outside their band over all lines. */
export const outsideCount = (bands: Map<string, (LineBand | undefined)[]>) =>
  [...bands.values()].flat().reduce((n, b) => n + (b ? b.outside.filter(Boolean).length : 0), 0);
