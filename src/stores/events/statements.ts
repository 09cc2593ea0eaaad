// The event-engine seam at statement level. The planner (src/query/plan.ts) decides what a query
// computes — the fields it reads, the filters, the calculations with their weighting, the
// breakdowns, havings, order and limit — and hands that over as a QueryModel; BubbleUp and service
// maps hand over their pieces likewise. Each engine turns them into its own statements:
// `<engine>-query.ts`, `<engine>-bubbleup.ts`, `<engine>-service-map.ts`, `<engine>-traces.ts` in
// this folder, reached as `events.dialect.query`, `.bubbleUp`, `.serviceMap` and `.traces`. The pieces handed over are SQL
// expressions written through the dialect (engine.ts); the statements around them are the
// engine's.
import type { ColumnType } from '../config/types.js';
import type { SqlDialect } from './engine.js';

/** A column of the events a statement reads: the planner's alias (f0, f1, …) and its type. */
export interface StatementField {
  alias: string;
  type: ColumnType;
}

/** What a calculation computes (the query ops, P001…P999 as PERCENTILE with its fraction). */
export type AggregateOp =
  | 'COUNT'
  | 'SUM'
  | 'AVG'
  | 'MIN'
  | 'MAX'
  | 'COUNT_DISTINCT'
  | 'PERCENTILE'
  | 'HEATMAP'
  | 'CONCURRENCY'
  | 'RATE_AVG'
  | 'RATE_SUM'
  | 'RATE_MAX';

export interface Aggregation {
  /** The answer's column (a0, a1, …). */
  alias: string;
  op: AggregateOp;
  /** The field it reads (every op but COUNT and CONCURRENCY). */
  field?: StatementField;
  /** PERCENTILE: the nearest rank's fraction (0.5 for P50). */
  p?: number;
}

/**
 * The parts of an answer: the result groups, their series, the totals (all events, no havings or
 * limit) and their series, and "other" (the events outside the result groups).
 */
export type Part = 'results' | 'series' | 'totals' | 'totalSeries' | 'other';

/**
 * A query as the planner hands it to an engine. Every SQL piece is an expression over the
 * columns of `events` (or, for `havings` and `order`, over the calculations' aliases); values the
 * user typed are bound placeholders in them, numbered in `params`.
 */
export interface QueryModel {
  dialect: SqlDialect;
  /**
   * The window's events, one SELECT per dataset (and time range) joined by UNION ALL: `__t`
   * (event time), `__w` (sample rate), one column per field named by its alias and, with
   * CONCURRENCY, `__dur` (duration in milliseconds). Each SELECT restricts itself to the window,
   * so an engine prunes by event time.
   */
  events: string;
  /** The filters as one predicate; undefined when there are none. */
  filter?: string;
  /** Every field `events` carries. */
  fields: StatementField[];
  /** The breakdowns' fields, in order: a result group's keys. */
  keys: StatementField[];
  calcs: Aggregation[];
  /** A time bucket's width, µs: an event's bucket `__b` is its time in µs divided by it, rounded down. */
  bucketUs: number;
  /** The window's last bucket (a CONCURRENCY span counts up to it). */
  lastBucket: number;
  /** Whether COUNT, SUM, AVG and HEATMAP weigh events by sample rate (`__w`). */
  weighted: boolean;
  /** Whether percentiles weigh by sample rate (the weighted nearest rank). */
  weightedPercentiles: boolean;
  /** Cells of a HEATMAP histogram between the smallest and largest value of the window. */
  heatmapBuckets: number;
  /** Conditions on the calculations a result group must meet. */
  havings: string[];
  /** ORDER BY of the result groups. */
  order: string;
  /** Most result groups. */
  limit: number;
  params: unknown[];
  /** How many of `params` come before the havings' (parts without havings bind only those). */
  paramsBeforeHavings: number;
}

/** The statements of a query (each binds the parameters the planner says; see plan.ts). */
export interface QueryStatements {
  /**
   * The window's events that pass the filters, each with its bucket `__b`: a `prelude` the
   * statement starts with (empty when the engine has no common table expressions) and what it
   * reads them `from`.
   */
  scan(m: QueryModel): { prelude: string; from: string };
  /** One part's statement: the result groups (havings, order, limit), the totals or their series. */
  part(m: QueryModel, part: 'results' | 'totals' | 'totalSeries'): string;
  /**
   * Series or "other" of the result groups `results` answered: each group's key values as typed
   * SQL (bound placeholders), in the order of `keys`. Without breakdowns there is one group,
   * shown when `groups` has one (empty) entry.
   */
  ofGroups(m: QueryModel, part: 'series' | 'other', groups: string[][]): string;
  /**
   * One statement answering every part in `parts`, rows tagged `__part` (the part's index) and
   * ordered by part, then in the part's order. Asked only of an engine with common table
   * expressions and window functions (capabilities), for decomposable calculations (COUNT,
   * SUM, AVG, MIN, MAX and at most one HEATMAP).
   */
  combined(m: QueryModel, parts: Part[]): string;
}

/**
 * The events of a scan (the web UI's event browser and trace view, BubbleUp): `prelude` and `f`
 * as QueryStatements.scan gives them, one row per event with `__t` its time, `__w` its sample
 * rate and one column per field, named by the field's alias. A statement built on it starts with
 * the prelude and reads `f`; it may bind more parameters after `params`.
 */
export interface Scan {
  dialect: EngineDialect;
  prelude: string;
  f: string;
  params: unknown[];
  fields: (StatementField & { name: string })[];
}

/** BubbleUp's fixed sizes (src/query/bubbleup.ts). */
export interface BubbleUpLimits {
  /** Most events sampled per side. */
  sampleRows: number;
  /** Values kept per column (the most common on either side). */
  topValues: number;
  /** Bins of a numeric column's histogram. */
  bins: number;
  /** A numeric column with at most this many distinct values is compared value by value. */
  categoricalMax: number;
}

/**
 * BubbleUp's two statements over a scan; `inSelection` is a predicate over its events, and so is
 * `inBaseline` when given (the baseline is then only the events it holds that are not selected:
 * the same selection earlier); without it the baseline is every other event of the scan.
 */
export interface BubbleUpStatements {
  /** One row: the exact weighted sizes (`se`, `be`) and rows (`sr`, `br`) of the selection and the baseline. */
  counts(scan: Scan, inSelection: string, inBaseline?: string): string;
  /**
   * Per field, over a sample of each side: the weighted sums of each value (or histogram bin)
   * per side (`__f` the alias, `__v` the value as text or `__bin` with `__lo` and `__width`,
   * `__s` and `__r` the sums), the `topValues` most common on either side; every row also
   * carries the samples' totals (`__ts`, `__tr`) and sizes (`__ns`, `__nb`).
   */
  stats(scan: Scan, inSelection: string, fields: StatementField[], limits: BubbleUpLimits, inBaseline?: string): string;
}

/** The condition keeping a scan's events on either side of a BubbleUp (none: every event is on one). */
export function bubbleUpSides(d: SqlDialect, inSelection: string, inBaseline: string | undefined): string {
  if (inBaseline === undefined) return '';
  return ` WHERE coalesce(${inSelection}, ${d.bool(false)}) OR coalesce(${inBaseline}, ${d.bool(false)})`;
}

/** Service maps' statement (src/jobs/service-map.ts). */
export interface ServiceMapStatements {
  /**
   * The edges (`parent`, `child`, `calls` a float) from `spans` (a SELECT of trace_id, span_id,
   * parent_id, service and w), ordered by calls descending, then parent and child; only edges
   * with the parent or the child among `services` (placeholders, comma-separated) when given;
   * at most `limit` (a placeholder).
   */
  dependencies(spans: string, services: string | undefined, limit: string): string;
}

/** The rows a typical-trace statement reads (src/query/typical-trace.ts): SQL over the scan's events. */
export interface TypicalTraceInput {
  /** The event's trace id as text. */
  trace: string;
  /** The event's duration in ms as a number (NULL where it has none). */
  duration: string;
  /** Which events count: root spans of the service and name asked about, with a trace id and a duration. */
  where: string;
  /** A bound placeholder: the trace id never answered (the trace compared). */
  exclude: string;
}

/** The typical trace's statement (src/query/typical-trace.ts). */
export interface TraceStatements {
  /**
   * Of the scan's events where `where`: the median duration (the lower middle value: `median_ms`),
   * how many there are (`roots`), and the one whose duration is nearest that median other than
   * `exclude` (`trace_id`, `duration_ms`; the latest on a tie). One row, or none when no event
   * but `exclude`'s qualifies.
   */
  typical(scan: Scan, input: TypicalTraceInput): string;
}

/** What an engine's SQL has, where the planner chooses between plans by it. */
export interface Capabilities {
  /** Common table expressions: one intermediate result read by several parts of a statement. */
  ctes: boolean;
  /** Window functions (row_number() OVER …). */
  windowFunctions: boolean;
}

/** The SQL an event engine speaks: the dialect's expressions and the engine's statements. */
export interface EngineDialect extends SqlDialect {
  capabilities: Capabilities;
  query: QueryStatements;
  bubbleUp: BubbleUpStatements;
  serviceMap: ServiceMapStatements;
  traces: TraceStatements;
  bucketStates: BucketStateStatements;
}

/** SQL reading a field as a number (text that is not a number reads as null). */
export function numeric(d: SqlDialect, f: StatementField): string {
  switch (f.type) {
    case 'integer':
    case 'float':
      return f.alias;
    case 'boolean':
      return d.boolToInt(f.alias);
    case 'string':
      return d.tryCast(f.alias, 'float');
  }
}

/** The result groups of a level (`from`): the havings, the order, the limit. */
export function topGroups(m: QueryModel, from: string): string {
  return `SELECT * FROM ${from}${m.havings.length ? ` WHERE ${m.havings.join(' AND ')}` : ''} ORDER BY ${m.order} LIMIT ${Math.trunc(m.limit)}`;
}

/**
 * A partial state the bucket-result cache keeps per (breakdowns, time bucket): a column of the
 * states statement (BucketStateStatements). Sums, counts, minima and maxima merge as numbers;
 * the list kinds keep what an op needs of every event to be merged exactly (src/query/bucket-states.ts):
 * `distinct` the distinct values, `values` (value, weight) pairs of the non-null numbers,
 * `rates` (time µs, value) pairs of the non-null numbers, `spans` (last bucket the span covers,
 * not capped by any window, weight) of every event.
 */
export type StateKind = 'sum' | 'sumWeighted' | 'count' | 'countWeighted' | 'min' | 'max' | 'distinct' | 'values' | 'rates' | 'spans';
export interface StateColumn {
  name: string;
  kind: StateKind;
  /** The field it reads (every kind but `spans`). */
  field?: StatementField;
}

/** The states a model's calculations need, each once (calculations over one field share them). */
export function stateColumns(m: QueryModel): StateColumn[] {
  const out = new Map<string, StateColumn>();
  const add = (kind: StateKind, field?: StatementField) => {
    const name = field ? `__${kind}_${field.alias}` : `__${kind}`;
    if (!out.has(name)) out.set(name, { name, kind, field });
  };
  for (const c of m.calcs) {
    const f = c.field;
    switch (c.op) {
      case 'COUNT':
        break;
      case 'SUM':
        add('sum', f);
        add('sumWeighted', f);
        break;
      case 'AVG':
        add('sum', f);
        add('sumWeighted', f);
        add('count', f);
        add('countWeighted', f);
        break;
      case 'MIN':
      case 'MAX':
        add(c.op === 'MIN' ? 'min' : 'max', f);
        break;
      case 'COUNT_DISTINCT':
        add('distinct', f);
        break;
      case 'PERCENTILE':
      case 'HEATMAP':
        add('values', f);
        break;
      case 'CONCURRENCY':
        add('spans');
        break;
      case 'RATE_AVG':
      case 'RATE_SUM':
      case 'RATE_MAX':
        add('rates', f);
        break;
    }
  }
  return [...out.values()];
}

/** The last bucket an event's span covers (CONCURRENCY): from its start through its duration, at least its own. */
export function spanLastBucket(d: SqlDialect, bucketUs: number): string {
  return `greatest(${d.cast(`floor((${d.epochUs('__t')} + greatest(coalesce(__dur, 0), 0) * 1000 - 1) / ${Math.trunc(bucketUs)})`, 'integer')}, __b)`;
}

/** A number kind's state as an aggregate (the same on every engine); undefined for the list kinds. */
export function numericStateSql(d: SqlDialect, c: StateColumn): string | undefined {
  const n = c.field ? numeric(d, c.field) : '';
  switch (c.kind) {
    case 'sum':
      return `sum(${n})`;
    case 'sumWeighted':
      return `sum(${n} * __w)`;
    case 'count':
      return `count(${n})`;
    case 'countWeighted':
      return `sum(CASE WHEN ${n} IS NOT NULL THEN __w END)`;
    case 'min':
      return `min(${n})`;
    case 'max':
      return `max(${n})`;
    default:
      return undefined;
  }
}

/** The states statement of the bucket-result cache. */
export interface BucketStateStatements {
  /**
   * One row per (breakdowns, `__b`) of the model's filtered events: the keys, `__b`, `__rows`
   * (events), `__wsum` (their weight) and every stateColumns(m) column; list kinds as arrays
   * (pairs as two-element arrays), NULL or empty when the group has none; at most `maxRows` rows.
   */
  states(m: QueryModel, maxRows: number): string;
}
