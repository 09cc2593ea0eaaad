// Anomaly bands of any query result (a Waggle extension, `GET /1/query_results/{ds}/{id}/bands`,
// docs/queries.md "Anomaly bands"): for each series of the result (group × calculation) and each
// time bucket, the band its history expects — the same query run over the same window one, two, …
// `periods` seasons earlier (a day or a week) through the normal query path, so every event
// engine answers it — with the signals' model (src/domain/signals.ts: mean ± k·stddev at a
// sensitivity, a minimum width) and whether the value is outside it.
//
// Decisions:
// - Seasonality is the period the history repeats at: `day` (default 7 periods: the same time on
//   each of the last 7 days) or `week` (default 4: the same time and weekday of the last 4
//   weeks). `periods` 2…12. A bucket's history is its buckets `k × period` earlier (k = 1…N),
//   moved on by the offset (bucket times are multiples of the granularity since 1970, so with a
//   granularity that divides the period they line up exactly; otherwise each past bucket counts
//   for the bucket its moved time falls in).
// - Each past window runs the result's query as stored (filters, breakdowns, havings, order and
//   limit), its groups being its own: a group of the result absent from a past window had no
//   events then (or fell past the limit). A missing value counts as 0 for COUNT, SUM,
//   COUNT_DISTINCT and CONCURRENCY (a bucket without events counts nothing) and as no value
//   for the other ops (an average of no events is not 0).
// - A bucket gets a band with at least MIN_BAND_HISTORY past values; a point is `outside` when
//   its value is below `lower` or above `upper` (both sides: for an arbitrary series a drop is as
//   telling as a rise, unlike a signal's error rate). HEATMAP calculations have no band.
// - The result's own answer (Honeycomb's QueryResult) is unchanged: bands are a route of their
//   own, asked for when wanted (the web UI's "Show expected band").
import { invalidField } from '../errors.js';
import { runQuery, isoSeconds, type QueryData, type ResultValue } from '../query/run.js';
import type { BucketCache } from '../query/bucket-cache.js';
import type { Source } from '../query/plan.js';
import { calculationKey, granularityFor, type QueryOp, type StoredQuery } from '../query/spec.js';
import type { EventStore } from '../stores/events/types.js';
import { outsideBand, seasonalBand, SENSITIVITIES, type Sensitivity } from './signals.js';

export const SEASONALITIES = { day: 86_400, week: 7 * 86_400 } as const;
export type Seasonality = keyof typeof SEASONALITIES;
export const DEFAULT_PERIODS: Record<Seasonality, number> = { day: 7, week: 4 };
export const PERIODS_MIN = 2;
export const PERIODS_MAX = 12;
/** Ops whose value for a bucket without events is 0. */
const ZERO_WHEN_EMPTY = new Set<QueryOp>(['COUNT', 'SUM', 'COUNT_DISTINCT', 'CONCURRENCY']);

export interface BandOptions {
  seasonality: Seasonality;
  periods: number;
  sensitivity: Sensitivity;
}

/** The options of a bands request (query-string values); 422 naming the first bad one. */
export function bandOptions(q: { seasonality?: string; periods?: string | number; sensitivity?: string }): BandOptions {
  const seasonality = (q.seasonality ?? 'day') as Seasonality;
  if (!Object.hasOwn(SEASONALITIES, seasonality)) throw invalidField('seasonality', `must be one of ${Object.keys(SEASONALITIES).join(', ')}`);
  const periods = q.periods === undefined || q.periods === '' ? DEFAULT_PERIODS[seasonality] : Number(q.periods);
  if (!Number.isInteger(periods) || periods < PERIODS_MIN || periods > PERIODS_MAX) {
    throw invalidField('periods', `must be an integer from ${PERIODS_MIN} to ${PERIODS_MAX}`);
  }
  const sensitivity = (q.sensitivity ?? 'medium') as Sensitivity;
  if (!SENSITIVITIES.includes(sensitivity)) throw invalidField('sensitivity', `must be one of ${SENSITIVITIES.join(', ')}`);
  return { seasonality, periods, sensitivity };
}

export interface BandPoint {
  time: string;
  value: number | null;
  expected: number | null;
  lower: number | null;
  upper: number | null;
  outside: boolean;
}
export interface BandSeries {
  /** The group's breakdown values (as in the result's `data`; {} without breakdowns). */
  group: Record<string, ResultValue>;
  calculation: string;
  points: BandPoint[];
  /** How many points are outside their band. */
  outside: number;
}
export interface BandsAnswer {
  seasonality: Seasonality;
  period_seconds: number;
  periods: number;
  sensitivity: Sensitivity;
  granularity: number;
  series: BandSeries[];
}

/** What a result says that the bands need. */
export interface BandedResult {
  query: StoredQuery;
  start: number;
  end: number;
  limit: number;
  data: QueryData;
}

const groupKey = (breakdowns: string[], data: Record<string, ResultValue>) => JSON.stringify(breakdowns.map((b) => data[b] ?? null));

/** value per series key (group + calc) per bucket index, from a query's series. */
function valuesOf(data: QueryData, breakdowns: string[], calcs: string[], granularity: number, shift: number): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const row of data.series) {
    const b = Math.floor((Date.parse(row.time) / 1000 + shift) / granularity);
    const g = groupKey(breakdowns, row.data);
    for (const c of calcs) {
      const v = row.data[c];
      if (typeof v !== 'number') continue;
      const k = `${g}\u0000${c}`;
      const m = out.get(k) ?? out.set(k, new Map()).get(k)!;
      m.set(b, (m.get(b) ?? 0) + v);
    }
  }
  return out;
}

/** Pure: the bands of a result from its data and the answers of its past windows (index k − 1 = k periods back). */
export function computeBands(r: BandedResult, past: QueryData[], o: BandOptions): BandsAnswer {
  const period = SEASONALITIES[o.seasonality];
  const granularity = granularityFor(r.query, r.start, r.end);
  const breakdowns = r.query.breakdowns ?? [];
  const calcs = (r.query.calculations?.length ? r.query.calculations : [{ op: 'COUNT' as const }]).filter((c) => c.op !== 'HEATMAP');
  const keys = calcs.map((c) => calculationKey(c));
  const first = Math.floor(r.start / granularity);
  const last = Math.floor((r.end - 1) / granularity);
  const now = valuesOf(r.data, breakdowns, keys, granularity, 0);
  const then = past.map((d, i) => valuesOf(d, breakdowns, keys, granularity, (i + 1) * period));
  const series: BandSeries[] = [];
  for (const row of r.data.results) {
    const g = groupKey(breakdowns, row.data);
    const group = Object.fromEntries(breakdowns.filter((b) => row.data[b] !== undefined).map((b) => [b, row.data[b]]));
    calcs.forEach((c, ci) => {
      const calc = keys[ci];
      const k = `${g}\u0000${calc}`;
      const zero = ZERO_WHEN_EMPTY.has(c.op) ? 0 : null;
      const points: BandPoint[] = [];
      for (let b = first; b <= last; b++) {
        const value = now.get(k)?.get(b) ?? zero;
        const history = then.map((m) => m.get(k)?.get(b) ?? zero).filter((v): v is number => v !== null);
        const band = seasonalBand(history, o.sensitivity);
        points.push({
          time: isoSeconds(b * granularity),
          value,
          expected: band?.expected ?? null,
          lower: band?.lower ?? null,
          upper: band?.upper ?? null,
          outside: band !== null && value !== null && outsideBand(value, band),
        });
      }
      series.push({ group, calculation: calc, points, outside: points.filter((p) => p.outside).length });
    });
  }
  return { seasonality: o.seasonality, period_seconds: period, periods: o.periods, sensitivity: o.sensitivity, granularity, series };
}

/** Runs the result's query over its window 1…N periods back (at once, each within the run time) and computes the bands. */
export async function resultBands(events: EventStore, sources: Source[], r: BandedResult, o: BandOptions, timeoutMs: number, cache?: BucketCache): Promise<BandsAnswer> {
  const period = SEASONALITIES[o.seasonality];
  const past = await Promise.all(
    Array.from({ length: o.periods }, (_, i) =>
      runQuery(events, sources, r.query, {
        start: r.start - (i + 1) * period,
        end: r.end - (i + 1) * period,
        limit: r.limit,
        disableSeries: false,
        disableTotalByAggregate: true,
        disableOtherByAggregate: true,
        timeoutMs,
        cache,
      }),
    ),
  );
  return computeBands(r, past, o);
}
