// Runs a query spec over the event store and shapes the answer as Honeycomb's query result
// `data`: `results` (one entry per group), `series` (per group and time bucket), and the optional
// `total_by_aggregate`, `total_by_aggregate_series` and `other_by_aggregate`.
import { tableName, type EventStore } from '../stores/events/types.js';
import { SAMPLERATE_COLUMN, TIME_COLUMN } from '../stores/events/engine.js';
import { plan, planCombined, planOfGroups, type Part, type Source } from './plan.js';
import { granularityFor, type QueryOp, type QuerySpec } from './spec.js';
import type { BucketCache } from './bucket-cache.js';

export { granularityFor };

export type ResultValue = string | number | boolean;
export interface ResultRow {
  data: Record<string, ResultValue>;
}
export interface SeriesRow extends ResultRow {
  time: string;
}
export interface QueryData {
  series: SeriesRow[];
  results: ResultRow[];
  total_by_aggregate?: ResultRow;
  total_by_aggregate_series?: SeriesRow[];
  other_by_aggregate?: ResultRow;
}

export interface RunOptions {
  /** The window in Unix seconds, [start, end). */
  start: number;
  end: number;
  limit: number;
  disableSeries: boolean;
  disableTotalByAggregate: boolean;
  disableOtherByAggregate: boolean;
  timeoutMs: number;
  /** Kept bucket states of repeated queries (bucket-cache.ts); without it every query reads its whole window. */
  cache?: BucketCache;
}

/** The ops whose answer does not depend on sample rates. */
const UNWEIGHTED = new Set<QueryOp>(['MIN', 'MAX', 'COUNT_DISTINCT', 'RATE_AVG', 'RATE_SUM', 'RATE_MAX']);


/** Keeps the datasets whose events table exists (a dataset without events has none). */
export async function withTables(events: EventStore, sources: Source[]): Promise<Source[]> {
  const present = await Promise.all(sources.map(async (s) => (await events.shape(s.dataset.id)) !== undefined));
  return sources.filter((_, i) => present[i]);
}

export async function runQuery(events: EventStore, allSources: Source[], spec: QuerySpec, opts: RunOptions): Promise<QueryData> {
  const sources = await withTables(events, allSources);
  const deadline = Date.now() + opts.timeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const granularity = granularityFor(spec, opts.start, opts.end);

  // Calculations weigh by sample rate only when some event in the window was sampled (sample
  // rates are positive integers): with every weight 1, count(*), sum, avg and the unweighted
  // nearest rank are the same answers with less work (no sort per group for percentiles). The
  // check reads one column of the window and costs about a millisecond on 10M events; it is left
  // out when no calculation weighs (MIN, MAX, COUNT_DISTINCT and RATE_* only).
  const calculations = spec.calculations && spec.calculations.length > 0 ? spec.calculations : [{ op: 'COUNT' as const }];
  const weighs = calculations.some((c) => !UNWEIGHTED.has(c.op));
  const base = { dialect: events.dialect, sources, spec, start: opts.start, end: opts.end, granularity, limit: opts.limit };
  // The cache merges the weighted forms, whose answers are the same whatever the rates (with every
  // weight 1, or one rate for every event, they are the unweighted ones exactly): no check there.
  const merged = opts.cache && (await opts.cache.run(events, { ...base, weighted: true, weightedPercentiles: true }, remaining));
  // When every event of the window has the same sample rate, percentiles are the unweighted ones.
  const rates = !merged && weighs && sources.length > 0 ? await sampleRates(events, sources, opts, remaining()) : { min: 1, max: 1 };
  const weighted = rates.max > 1;
  const weightedPercentiles = weighted && rates.min !== rates.max;

  const input = { ...base, weighted, weightedPercentiles };
  const p = plan(input, 'results');
  const run = (part: 'results' | 'totals' | 'totalSeries') => {
    const { sql, params } = part === 'results' ? p : plan(input, part);
    return events.analyse(sql, params, remaining());
  };

  const toData = (row: Record<string, unknown>): Record<string, ResultValue> => {
    const data: Record<string, ResultValue> = {};
    for (const b of p.breakdowns) {
      // (An engine without a boolean type answers booleans as 1 and 0.)
      const v = b.type === 'boolean' && typeof row[b.alias] === 'number' ? row[b.alias] !== 0 : jsonValue(row[b.alias]);
      if (v !== undefined) data[b.name] = v;
    }
    for (const c of p.calcs) {
      const v = jsonValue(row[c.alias]);
      // (HEATMAP's cells are JSON text: written by JSON.stringify, engines and the cache answer alike.)
      if (v !== undefined) data[c.key] = c.op === 'HEATMAP' && typeof v === 'string' ? JSON.stringify(JSON.parse(v)) : v;
    }
    return data;
  };
  // (a series has a row per group and bucket: each bucket's time is formatted once)
  const times = new Map<number, string>();
  const timeOf = (b: number) => times.get(b) ?? times.set(b, isoSeconds(b * granularity)).get(b)!;
  const toSeries = (row: Record<string, unknown>): SeriesRow => ({
    time: timeOf(Number(row.__b)),
    data: toData(row),
  });

  if (merged) {
    const out: QueryData = { series: [], results: merged.results.map((r) => ({ data: toData(r) })) };
    if (!opts.disableSeries) out.series = merged.series.map(toSeries);
    if (!opts.disableTotalByAggregate) {
      out.total_by_aggregate = { data: merged.totals ? toData(merged.totals) : {} };
      if (!opts.disableSeries) out.total_by_aggregate_series = merged.totalSeries.map(toSeries);
    }
    if (!opts.disableOtherByAggregate) out.other_by_aggregate = { data: merged.other ? toData(merged.other) : {} };
    return out;
  }

  // The parts asked for: with decomposable calculations, one statement answers them all from one
  // aggregation per group and time bucket; otherwise one statement per part.
  const parts: Part[] = ['results'];
  if (!opts.disableSeries) parts.push('series');
  if (!opts.disableTotalByAggregate) parts.push('totals', ...(opts.disableSeries ? [] : (['totalSeries'] as const)));
  if (!opts.disableOtherByAggregate) parts.push('other');
  const combined = planCombined(input, parts);
  if (combined) {
    const rows = await events.analyse(combined.sql, combined.params, remaining());
    const of = (part: Part) => {
      const i = parts.indexOf(part);
      return rows.filter((r) => Number(r.__part) === i);
    };
    const out: QueryData = { series: [], results: of('results').map((r) => ({ data: toData(r) })) };
    if (!opts.disableSeries) out.series = of('series').map(toSeries);
    if (!opts.disableTotalByAggregate) {
      const [total] = of('totals');
      out.total_by_aggregate = { data: total ? toData(total) : {} };
      if (!opts.disableSeries) out.total_by_aggregate_series = of('totalSeries').map(toSeries);
    }
    if (!opts.disableOtherByAggregate) {
      const [other] = of('other');
      out.other_by_aggregate = { data: other ? toData(other) : {} };
    }
    return out;
  }

  // Otherwise the series and "other" statements take the result groups as parameters.
  const groups = await run('results');
  const ofGroups = (part: 'series' | 'other') => {
    const { sql, params } = planOfGroups(input, part, groups);
    return events.analyse(sql, params, remaining());
  };
  const out: QueryData = { series: [], results: groups.map((r) => ({ data: toData(r) })) };
  if (!opts.disableSeries && groups.length > 0) out.series = (await ofGroups('series')).map(toSeries);
  if (!opts.disableTotalByAggregate) {
    const [total] = await run('totals');
    out.total_by_aggregate = { data: total ? toData(total) : {} };
    if (!opts.disableSeries) out.total_by_aggregate_series = (await run('totalSeries')).map(toSeries);
  }
  if (!opts.disableOtherByAggregate) {
    const [other] = await ofGroups('other');
    out.other_by_aggregate = { data: other ? toData(other) : {} };
  }
  return out;
}

/**
 * The smallest and largest sample rate in the window (1 and 1 when it has no events). DuckDB
 * answers both from the statistics of segments that hold one value, without reading them.
 */
async function sampleRates(events: EventStore, sources: Source[], opts: RunOptions, timeoutMs: number): Promise<{ min: number; max: number }> {
  const d = events.dialect;
  const quoteIdent = d.quoteIdent;
  const t = quoteIdent(TIME_COLUMN);
  const r = quoteIdent(SAMPLERATE_COLUMN);
  const window = `${t} >= ${d.timestamp(opts.start * 1e6)} AND ${t} < ${d.timestamp(opts.end * 1e6)}`;
  const sql = sources.map((s) => `SELECT min(${r}) AS lo, max(${r}) AS hi FROM ${quoteIdent(tableName(s.dataset.id))} WHERE ${window}`).join(' UNION ALL ');
  const rows = await events.analyse(`SELECT min(lo) AS lo, max(hi) AS hi FROM (${sql}) AS r`, [], timeoutMs);
  return { min: Number(rows[0]?.lo ?? 1), max: Number(rows[0]?.hi ?? 1) };
}

/** A value from the event store as JSON: big integers as numbers, nothing for null. */
function jsonValue(v: unknown): ResultValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

/** `2021-04-09T14:16:00Z`: RFC 3339 without milliseconds when there are none. */
export function isoSeconds(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
}
