// The query specification (Honeycomb's Query object) as the API receives it, and the
// enumerations shared by queries, triggers, boards and SLOs.
export const QUERY_OPS = [
  'COUNT', 'CONCURRENCY', 'SUM', 'AVG', 'COUNT_DISTINCT', 'HEATMAP', 'MAX', 'MIN',
  'P001', 'P01', 'P05', 'P10', 'P20', 'P25', 'P50', 'P75', 'P80', 'P90', 'P95', 'P99', 'P999',
  'RATE_AVG', 'RATE_SUM', 'RATE_MAX',
] as const;
export type QueryOp = (typeof QUERY_OPS)[number];

export const FILTER_OPS = [
  '=', '!=', '>', '>=', '<', '<=', 'starts-with', 'does-not-start-with', 'ends-with', 'does-not-end-with',
  'exists', 'does-not-exist', 'contains', 'does-not-contain', 'in', 'not-in',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const HAVING_OPS = ['=', '!=', '>', '>=', '<', '<='] as const;
export type HavingOp = (typeof HAVING_OPS)[number];

/** The ops that take no column (absent or null); every other op needs one. */
export const NO_COLUMN_OPS = ['COUNT', 'CONCURRENCY'] as const satisfies readonly QueryOp[];
/** The filter ops that take no value (absent or null). */
export const NO_VALUE_FILTER_OPS = ['exists', 'does-not-exist'] as const satisfies readonly FilterOp[];
/** The filter ops whose value is a non-empty list of strings; every other op takes one string, number or boolean. */
export const LIST_FILTER_OPS = ['in', 'not-in'] as const satisfies readonly FilterOp[];

export const COMPARE_TIME_OFFSETS = [1800, 3600, 7200, 28800, 86400, 604800, 2419200, 15724800] as const;

export type FilterValue = string | number | boolean | string[] | null;

export interface Calculation {
  op: QueryOp;
  column?: string | null;
}
export interface Filter {
  column: string | null;
  op: FilterOp;
  value?: FilterValue;
}
export interface Order {
  column?: string;
  op?: QueryOp;
  order?: 'ascending' | 'descending';
}
export interface Having {
  calculate_op: Exclude<QueryOp, 'HEATMAP'>;
  column?: string | null;
  op: HavingOp;
  value: number;
}
export interface InlineCalculatedField {
  name: string;
  expression: string;
}

/** A query spec after validation: exactly the fields the client sent (echoed back as sent). */
export interface QuerySpec {
  calculations?: Calculation[];
  filters?: Filter[];
  filter_combination?: 'AND' | 'OR';
  breakdowns?: string[];
  orders?: Order[];
  havings?: Having[];
  limit?: number;
  time_range?: number;
  start_time?: number;
  end_time?: number;
  granularity?: number;
  calculated_fields?: InlineCalculatedField[];
  compare_time_offset_seconds?: number;
}

/** A stored query: the spec plus its id (the `query` object kind's body). */
export interface StoredQuery extends QuerySpec {
  id: string;
}

/** The result key of a calculation: `COUNT`, `CONCURRENCY`, otherwise `OP(column)`. */
export function calculationKey(c: Calculation): string {
  return c.column === undefined || c.column === null ? c.op : `${c.op}(${c.column})`;
}

/** The time window a spec asks for, in Unix seconds [start, end), resolved against `now`. */
export function timeWindow(spec: QuerySpec, nowSeconds: number): { start: number; end: number } {
  const range = spec.time_range ?? 7200;
  if (spec.start_time !== undefined && spec.end_time !== undefined) return { start: spec.start_time, end: spec.end_time };
  if (spec.start_time !== undefined) return { start: spec.start_time, end: spec.start_time + range };
  if (spec.end_time !== undefined) return { start: spec.end_time - range, end: spec.end_time };
  return { start: nowSeconds - range, end: nowSeconds };
}

const DAY = 86_400;
/** Longest window a query result reads. */
export const MAX_DURATION = 7 * DAY;

/**
 * The window a query result reads: the spec's, truncated by its size (≤ 6 h → to the minute,
 * ≤ 2 days → to 5 minutes, longer → to 30 minutes; the start rounds down and the end up, so every
 * second asked for stays inside), and starting no earlier than 7 days ago. (The web UI cuts its
 * charts' buckets from the same window.)
 */
export function truncatedWindow(spec: QuerySpec, nowSeconds: number): { start: number; end: number } {
  const w = timeWindow(spec, nowSeconds);
  const duration = w.end - w.start;
  const unit = duration <= 6 * 3600 ? 60 : duration <= 2 * DAY ? 300 : 1800;
  const end = Math.ceil(w.end / unit) * unit;
  const start = Math.max(Math.floor(w.start / unit) * unit, nowSeconds - MAX_DURATION);
  return { start, end: Math.max(end, start) };
}

/** Series bucket widths the automatic granularity picks from, seconds. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
/** Buckets the automatic granularity aims for at most. */
const MAX_AUTO_BUCKETS = 120;

/** `granularity` as asked, or automatic: the smallest step giving at most 120 buckets. */
export function granularityFor(spec: QuerySpec, start: number, end: number): number {
  if (spec.granularity) return spec.granularity;
  const span = Math.max(1, end - start);
  return STEPS.find((s) => span / s <= MAX_AUTO_BUCKETS) ?? 86400;
}
