// Query specification rules: what the Query schema (src/api/v1/shapes/query.ts, QueryInput; Fastify's
// ajv checks it on every route that takes a query: /1/queries, triggers, BubbleUp, the event
// browser) cannot say, checked over a spec it has passed, so that every caller gets the same
// answer for the same input and every problem names its field the way a reader finds it in the
// body: `calculations.1.column`, `filters.0.value`, `orders.0`, `time_range`.
//
// checkQuerySpec() adds the problems to a Problems (named under a prefix for a nested query,
// `query.filters.0.value`) and returns the spec to store and echo: exactly the known fields the
// client sent, in the order it sent them (keys and array items), without any default filled in.
//
// Decisions (also in docs/queries.md); the schema says the types, enumerations, list lengths and
// which members an op needs or refuses; the rules below are the ones it cannot:
// - Unknown fields (top level and inside calculations, filters, orders, havings and calculated
//   fields) are ignored, as everywhere on /1/, and left out of the stored and echoed spec. The
//   OpenAPI Query schema does not forbid additional properties; echoing them would suggest that
//   features Waggle does not implement (the Terraform client's `formulas`, named calculations)
//   are honoured. A read-only `id` in the body is ignored the same way.
// - A top-level `null` means "not set": it is accepted and left out of the echo. So are `null`
//   order fields. `null` is kept where the contract types a field as nullable (calculation and
//   having `column`, filter `value`).
// - Omitted or empty `calculations` mean COUNT (for the run and for matching orders and havings).
// - COUNT and CONCURRENCY take no column (absent or null); every other op needs a non-empty one:
//   a `null` one is answered as missing (the schema cannot word null as missing).
// - A filter must name a column: `column` is required and must be a non-empty string. The
//   contract types it `string|null`, but a filter on no column cannot be evaluated, so null is
//   refused (422 `invalid`).
// - Filter values: `exists` / `does-not-exist` take none (absent or null); `in` / `not-in` take
//   a non-empty array of at most 1,000 strings; every other op takes one string, number or
//   boolean. A `null` value where the op needs one is missing.
// - Every list is at most 100 items (1,000 for filter values), checked before any item is.
// - A having needs `calculate_op`, `op` and a numeric `value` (the contract's default of 10 for
//   `value` is not applied: a silent threshold would surprise), and its calculate_op + column
//   must be one of the calculations. HEATMAP is not allowed in havings or orders.
// - An order with `op` must match a calculation (op and column); an order without `op` must name
//   a breakdown in `column`.
// - `limit`: integer 1..1000 where a query is created; the schema's bound is the Query object's
//   widest (10000, a disable_series query result's), a caller passes `maxLimit` to widen 1000.
// - Time: `time_range`, `start_time`, `end_time` are integers ≥ 1; allowed combinations are none
//   (last 2 hours), time_range alone, start+end, time_range+start, time_range+end; all three
//   together → 422 on `time_range`. `start_time` must be strictly before `end_time`.
// - The query's duration T is end−start with both times, else time_range (default 7200).
// - `granularity`: 0 or absent = automatic; otherwise an integer from ceil(T/1000) to T seconds
//   (the OpenAPI document's T/1000…T/1; the Terraform provider's stricter T/10 upper bound is
//   not applied, since the API documents T).
// - `compare_time_offset_seconds`: one of the enumerated offsets and ≥ T.
// - `calculated_fields`: at most 100 of `{name, expression}`, both non-blank strings, names
//   unique (case-sensitive, as column names are); the expression must parse.
import { validationError } from '../errors.js';
import { BLANK, Problems, type Json } from '../validation.js';
import * as expr from './expr/index.js';
import {
  LIST_FILTER_OPS,
  NO_COLUMN_OPS,
  NO_VALUE_FILTER_OPS,
  type Calculation,
  type FilterOp,
  type FilterValue,
  type HavingOp,
  type QueryOp,
  type QuerySpec,
} from './spec.js';

export interface ValidateOptions {
  /** Largest `limit` accepted: 1000 by default; a disable_series query result's query may have 10000. */
  maxLimit?: number;
}

/** Most items of each list of a query (calculations, filters, breakdowns, orders, havings, calculated_fields), as Honeycomb documents. */
export const MAX_ITEMS = 100;
/** Most values of an `in` / `not-in` filter (board view filters too): Waggle's limit, Honeycomb documents none. */
export const MAX_FILTER_VALUES = 1000;
/** Largest `limit` of a query where it is created; the Query object's widest is MAX_LIMIT. */
export const DEFAULT_MAX_LIMIT = 1000;
export const MAX_LIMIT = 10000;
export const DEFAULT_TIME_RANGE = 7200;

/**
 * A query as its schema (QueryInput) has checked it: every member of its type, `null` where the
 * schema allows it. Unknown members may be there (they are ignored).
 */
export interface QueryInput {
  calculations?: { op: QueryOp; column?: string | null }[] | null;
  filters?: { column: string | null; op: FilterOp; value?: FilterValue }[] | null;
  filter_combination?: 'AND' | 'OR' | null;
  breakdowns?: string[] | null;
  orders?: { column?: string | null; op?: QueryOp | null; order?: 'ascending' | 'descending' | null }[] | null;
  havings?: { calculate_op: Exclude<QueryOp, 'HEATMAP'>; column?: string | null; op: HavingOp; value: number | null }[] | null;
  limit?: number | null;
  time_range?: number | null;
  start_time?: number | null;
  end_time?: number | null;
  granularity?: number | null;
  calculated_fields?: { name: string; expression: string }[] | null;
  compare_time_offset_seconds?: number | null;
}

/** The known members of each part of a query, in the order a spec keeps what the client sent. */
const KNOWN = {
  top: ['calculations', 'filters', 'filter_combination', 'breakdowns', 'orders', 'havings', 'limit',
    'time_range', 'start_time', 'end_time', 'granularity', 'calculated_fields', 'compare_time_offset_seconds'],
  calculations: ['op', 'column'],
  filters: ['column', 'op', 'value'],
  orders: ['column', 'op', 'order'],
  havings: ['calculate_op', 'column', 'op', 'value'],
  calculated_fields: ['name', 'expression'],
} as const;

/** The item's known keys, in the order the client sent them; `dropNull`: null ones left out. */
function pick(item: Json, keys: readonly string[], dropNull = false): Json {
  const out: Json = {};
  for (const k of Object.keys(item)) if (keys.includes(k) && !(dropNull && item[k] === null)) out[k] = item[k];
  return out;
}

/** The spec to store and echo of a checked query: known members in the client's order, top-level nulls and null order fields left out. */
function specOf(input: QueryInput): QuerySpec {
  const out = pick(input as Json, KNOWN.top, true);
  for (const list of ['calculations', 'filters', 'orders', 'havings', 'calculated_fields'] as const) {
    const items = out[list] as Json[] | undefined;
    if (items) out[list] = items.map((item) => pick(item, KNOWN[list], list === 'orders'));
  }
  return out as QuerySpec;
}

/**
 * Parses and type-checks an inline expression on its own (no dataset yet: unknown `$names` read
 * as null), so syntax errors, unknown functions and wrong argument counts fail at save time.
 */
function expressionProblem(text: string): string | undefined {
  try {
    const ast = expr.parseExpression(text);
    expr.compileExpression(ast, { dialect: expr.CHECK_ONLY_DIALECT, field: () => undefined, eventTimeSql: '__time', ingestTimeSql: '__ingested', bind: () => '?' });
    return undefined;
  } catch (err) {
    if (err instanceof expr.ExpressionError) return `at position ${err.position}: ${err.message}`;
    throw err;
  }
}

const sameColumn = (a: string | null | undefined, b: string | null | undefined) => (a ?? null) === (b ?? null);
const describeCalc = (op: string, column: string | null | undefined) => (column == null ? op : `${op}(${column})`);
const includes = (list: readonly string[], v: string) => list.includes(v);

/** The query's duration in seconds: end − start with both times, else time_range (default 7200). */
export function queryDuration(spec: Pick<QuerySpec, 'time_range' | 'start_time' | 'end_time'>): number {
  if (spec.start_time !== undefined && spec.end_time !== undefined) return spec.end_time - spec.start_time;
  return spec.time_range ?? DEFAULT_TIME_RANGE;
}

/**
 * The rules of a query its schema cannot say (see the header), over a query the schema has
 * checked; problems go to `p`, named by `at` (a nested query's `query.<field>`). Returns the spec
 * to store and echo (meaningful only when no problem was added).
 */
export function checkQuerySpec(p: Problems, input: QueryInput, at: (field: string) => string = (f) => f, opts: ValidateOptions = {}): QuerySpec {
  const spec = specOf(input);
  const before = p.count;
  const add = (field: string, code: 'invalid' | 'missing', message: string) => p.add(at(field), code, message);

  (spec.calculations ?? []).forEach((c, i) => {
    if (!includes(NO_COLUMN_OPS, c.op) && c.column === null) add(`calculations.${i}.column`, 'missing', `${c.op} needs a column`);
  });
  (spec.filters ?? []).forEach((f, i) => {
    if (f.column === null) add(`filters.${i}.column`, 'invalid', 'must name a column');
    if (f.value === null && !includes(NO_VALUE_FILTER_OPS, f.op)) {
      add(`filters.${i}.value`, 'missing', `${f.op} needs ${includes(LIST_FILTER_OPS, f.op) ? 'an array of strings' : 'a value'}`);
    }
  });
  (spec.havings ?? []).forEach((h, i) => {
    if ((h.value as number | null) === null) add(`havings.${i}.value`, 'missing', BLANK);
  });
  const maxLimit = opts.maxLimit ?? DEFAULT_MAX_LIMIT;
  if (spec.limit !== undefined && spec.limit > maxLimit) add('limit', 'invalid', `must be at most ${maxLimit}`);
  const names = new Set<string>();
  (spec.calculated_fields ?? []).forEach((f, i) => {
    const problem = expressionProblem(f.expression);
    if (problem) add(`calculated_fields.${i}.expression`, 'invalid', problem);
    if (names.has(f.name)) add(`calculated_fields.${i}.name`, 'invalid', `duplicate calculated field name ${JSON.stringify(f.name)}`);
    names.add(f.name);
  });

  // Time: combinations, order, duration-dependent rules.
  const { time_range, start_time, end_time } = spec;
  if (time_range !== undefined && start_time !== undefined && end_time !== undefined) {
    add('time_range', 'invalid', 'cannot be combined with both start_time and end_time; send at most two of the three');
  } else if (start_time !== undefined && end_time !== undefined && start_time >= end_time) {
    add('start_time', 'invalid', 'must be before end_time');
  } else {
    const T = queryDuration(spec);
    if (spec.granularity !== undefined && spec.granularity !== 0) {
      const min = Math.max(1, Math.ceil(T / 1000));
      if (spec.granularity > T) add('granularity', 'invalid', `must be at most the query's duration (${T} seconds), or 0 for automatic`);
      else if (spec.granularity < min) add('granularity', 'invalid', `must be at least ${min} seconds (1/1000 of the query's duration of ${T} seconds), or 0 for automatic`);
    }
    if (spec.compare_time_offset_seconds !== undefined && spec.compare_time_offset_seconds < T) {
      add('compare_time_offset_seconds', 'invalid', `must be at least the query's duration (${T} seconds)`);
    }
  }

  // Orders and havings must refer to what the query computes.
  const calcs: Calculation[] = spec.calculations && spec.calculations.length > 0 ? spec.calculations : [{ op: 'COUNT' }];
  const computes = (op: string, column: string | null | undefined) => calcs.some((c) => c.op === op && sameColumn(c.column, column));
  const known = calcs.map((c) => describeCalc(c.op, c.column)).join(', ');
  (spec.orders ?? []).forEach((o, i) => {
    if (o.op !== undefined) {
      if (!computes(o.op, o.column)) add(`orders.${i}`, 'invalid', `${describeCalc(o.op, o.column)} is not one of the calculations (${known})`);
    } else if (o.column === undefined) {
      add(`orders.${i}`, 'invalid', 'must name a breakdown (column) or a calculation (op and column)');
    } else if (!(spec.breakdowns ?? []).includes(o.column)) {
      add(`orders.${i}`, 'invalid', `${JSON.stringify(o.column)} is not one of the breakdowns; to order by a calculation, send its op`);
    }
  });
  (spec.havings ?? []).forEach((h, i) => {
    if (!computes(h.calculate_op, h.column)) add(`havings.${i}`, 'invalid', `${describeCalc(h.calculate_op, h.column)} is not one of the calculations (${known})`);
  });
  return p.count > before ? {} : spec;
}

/** A checked query's spec (see checkQuerySpec); throws one 422 naming every problem. */
export function validateQuerySpec(input: QueryInput, opts: ValidateOptions = {}): QuerySpec {
  const p = new Problems();
  const spec = checkQuerySpec(p, input, undefined, opts);
  if (p.count > 0) throw validationError(p.list);
  return spec;
}
