// Query specification validation: every rule of Honeycomb's Query object, checked by hand so that
// any caller (the Queries API, query results, boards, triggers) gets the same answer for the same
// input, and so that every problem names its field the way a reader finds it in the body:
// `calculations.1.column`, `filters.0.value`, `orders.0`, `time_range`.
//
// validateQuerySpec() takes the parsed JSON body as it arrived and returns the spec to store and
// echo: exactly the known fields the client sent, in the order it sent them (keys and array
// items), without any default filled in. All problems found are reported together as one 422
// (application/problem+json with `type_detail`); a value of the wrong JSON type has code
// `incorrect_type`, a required one that is absent `missing`, anything else `invalid`.
//
// Decisions (also in docs/queries.md):
// - Unknown fields (top level and inside calculations, filters, orders, havings and calculated
//   fields) are ignored, as everywhere on /1/, and left out of the stored and echoed spec. The
//   OpenAPI Query schema does not forbid additional properties; echoing them would suggest that
//   features Waggle does not implement (the Terraform client's `formulas`, named calculations)
//   are honoured. A read-only `id` in the body is ignored the same way.
// - A top-level `null` means "not set": it is accepted and left out of the echo. So are `null`
//   order fields. `null` is kept where the contract types a field as nullable (calculation and
//   having `column`, filter `value`).
// - Omitted or empty `calculations` mean COUNT (for the run and for matching orders and havings).
// - COUNT and CONCURRENCY take no column (absent or null); every other op needs a non-empty one.
// - A filter must name a column: `column` is required and must be a non-empty string. The
//   contract types it `string|null`, but a filter on no column cannot be evaluated, so null is
//   refused (422 `invalid`).
// - Filter values: `exists` / `does-not-exist` take none (absent or null); `in` / `not-in` take
//   a non-empty array of at most 1,000 strings; every other op takes one string, number or boolean.
// - Every list is at most 100 items (1,000 for filter values), checked before any item is.
// - A having needs `calculate_op`, `op` and a numeric `value` (the contract's default of 10 for
//   `value` is not applied: a silent threshold would surprise), and its calculate_op + column
//   must be one of the calculations. HEATMAP is not allowed in havings or orders.
// - An order with `op` must match a calculation (op and column); an order without `op` must name
//   a breakdown in `column`.
// - `limit`: integer 1..1000; callers pass `maxLimit` (10000) for disable_series query results.
// - Time: `time_range`, `start_time`, `end_time` are integers ≥ 1; allowed combinations are none
//   (last 2 hours), time_range alone, start+end, time_range+start, time_range+end; all three
//   together → 422 on `time_range`. `start_time` must be strictly before `end_time`.
// - The query's duration T is end−start with both times, else time_range (default 7200).
// - `granularity`: 0 or absent = automatic; otherwise an integer from ceil(T/1000) to T seconds
//   (the OpenAPI document's T/1000…T/1; the Terraform provider's stricter T/10 upper bound is
//   not applied, since the API documents T).
// - `compare_time_offset_seconds`: one of the enumerated offsets and ≥ T.
// - `calculated_fields`: at most 100 of `{name, expression}`, both non-empty strings, names
//   unique (case-sensitive, as column names are); the expression must parse.
import { ApiError, validationError, type TypeDetail } from '../errors.js';
import { has, isObject, jsonType, Problems, type Json } from '../validation.js';
import * as expr from './expr/index.js';
import {
  COMPARE_TIME_OFFSETS,
  FILTER_OPS,
  HAVING_OPS,
  QUERY_OPS,
  type Calculation,
  type Filter,
  type Having,
  type InlineCalculatedField,
  type Order,
  type QueryOp,
  type QuerySpec,
} from './spec.js';

export interface ValidateOptions {
  /** Reserved for the trigger subset (validated by the triggers module for now). */
  forTrigger?: false;
  /** Largest `limit` accepted: 1000 by default; query results with disable_series pass 10000. */
  maxLimit?: number;
}

/** Most items of each list of a query (calculations, filters, breakdowns, orders, havings, calculated_fields), as Honeycomb documents. */
export const MAX_ITEMS = 100;
/** Most values of an `in` / `not-in` filter (board view filters too): Waggle's limit, Honeycomb documents none. */
export const MAX_FILTER_VALUES = 1000;
export const DEFAULT_MAX_LIMIT = 1000;
export const DEFAULT_TIME_RANGE = 7200;
const NO_COLUMN_OPS: readonly string[] = ['COUNT', 'CONCURRENCY'];
const NO_VALUE_FILTER_OPS: readonly string[] = ['exists', 'does-not-exist'];
const LIST_FILTER_OPS: readonly string[] = ['in', 'not-in'];
const TOP_LEVEL = [
  'calculations', 'filters', 'filter_combination', 'breakdowns', 'orders', 'havings', 'limit',
  'time_range', 'start_time', 'end_time', 'granularity', 'calculated_fields', 'compare_time_offset_seconds',
] as const;

function checkString(p: Problems, field: string, v: unknown, { nonEmpty = true } = {}): v is string {
  if (typeof v !== 'string') return p.type(field, 'a string', v);
  if (nonEmpty && v === '') return p.missing(field);
  return true;
}

function checkEnum<T extends string>(p: Problems, field: string, v: unknown, values: readonly T[]): v is T {
  if (typeof v !== 'string') return p.type(field, 'a string', v);
  if (!(values as readonly string[]).includes(v)) return p.add(field, 'invalid', `must be one of ${values.join(', ')}`);
  return true;
}

function checkInteger(p: Problems, field: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number {
  if (typeof v !== 'number' || !Number.isInteger(v)) return p.type(field, 'an integer', v);
  if (v < min) return p.add(field, 'invalid', `must be at least ${min}`);
  if (v > max) return p.add(field, 'invalid', `must be at most ${max}`);
  return true;
}

/** A list of at most MAX_ITEMS, its length checked before any item is. */
const checkArray = (p: Problems, field: string, v: unknown): v is unknown[] => p.array(field, v, MAX_ITEMS);

/** The item's known keys, in the order the client sent them. */
function pick<T>(item: Json, keys: readonly string[]): T {
  const out: Json = {};
  for (const k of Object.keys(item)) if (keys.includes(k)) out[k] = item[k];
  return out as T;
}

/** Validates each item of an array field; returns the items (known keys only) when all passed. */
function items<T>(p: Problems, field: string, v: unknown, check: (item: Json, at: string) => boolean, keys: readonly string[]): T[] | undefined {
  if (!checkArray(p, field, v)) return undefined;
  let ok = true;
  const out: T[] = [];
  v.forEach((item, i) => {
    const at = `${field}.${i}`;
    if (!isObject(item)) ok = p.type(at, 'an object', item);
    else if (!check(item, at)) ok = false;
    else out.push(pick<T>(item, keys));
  });
  return ok ? out : undefined;
}

function checkCalculation(p: Problems, c: Json, at: string): boolean {
  if (!has(c, 'op')) return p.missing(`${at}.op`);
  if (!checkEnum(p, `${at}.op`, c.op, QUERY_OPS)) return false;
  const column = c.column;
  if (column !== undefined && column !== null && typeof column !== 'string') return p.type(`${at}.column`, 'a string or null', column);
  if (NO_COLUMN_OPS.includes(c.op)) {
    if (typeof column === 'string') return p.add(`${at}.column`, 'invalid', `${c.op} takes no column`);
    return true;
  }
  if (column === undefined || column === null) return p.add(`${at}.column`, 'missing', `${c.op} needs a column`);
  return checkString(p, `${at}.column`, column);
}

function checkFilter(p: Problems, f: Json, at: string): boolean {
  let ok = true;
  if (!has(f, 'column')) ok = p.missing(`${at}.column`);
  else if (f.column === null) ok = p.add(`${at}.column`, 'invalid', 'must name a column');
  else if (!checkString(p, `${at}.column`, f.column)) ok = false;
  if (!has(f, 'op')) return p.missing(`${at}.op`);
  if (!checkEnum(p, `${at}.op`, f.op, FILTER_OPS)) return false;
  const value = f.value;
  const vf = `${at}.value`;
  if (NO_VALUE_FILTER_OPS.includes(f.op)) {
    if (value !== undefined && value !== null) return p.add(vf, 'invalid', `${f.op} takes no value`);
  } else if (LIST_FILTER_OPS.includes(f.op)) {
    if (value === undefined || value === null) return p.add(vf, 'missing', `${f.op} needs an array of strings`);
    if (!Array.isArray(value)) return p.type(vf, 'an array of strings', value);
    if (!p.array(vf, value, MAX_FILTER_VALUES)) return false;
    if (value.length === 0) return p.add(vf, 'invalid', `${f.op} needs at least one value`);
    const bad = value.findIndex((x) => typeof x !== 'string');
    if (bad >= 0) return p.type(`${vf}.${bad}`, 'a string', value[bad]);
  } else {
    if (value === undefined || value === null) return p.add(vf, 'missing', `${f.op} needs a value`);
    if (typeof value === 'number' ? !Number.isFinite(value) : typeof value !== 'string' && typeof value !== 'boolean') {
      return p.type(vf, 'a string, number or boolean', value);
    }
  }
  return ok;
}

function checkOrder(p: Problems, o: Json, at: string): boolean {
  let ok = true;
  if (o.column !== undefined && o.column !== null && !checkString(p, `${at}.column`, o.column)) ok = false;
  if (o.op !== undefined && o.op !== null) {
    if (!checkEnum(p, `${at}.op`, o.op, QUERY_OPS)) ok = false;
    else if (o.op === 'HEATMAP') ok = p.add(`${at}.op`, 'invalid', 'HEATMAP cannot be used in orders');
  }
  if (o.order !== undefined && o.order !== null && !checkEnum(p, `${at}.order`, o.order, ['ascending', 'descending'])) ok = false;
  return ok;
}

function checkHaving(p: Problems, h: Json, at: string): boolean {
  let ok = true;
  if (!has(h, 'calculate_op')) ok = p.missing(`${at}.calculate_op`);
  else if (!checkEnum(p, `${at}.calculate_op`, h.calculate_op, QUERY_OPS)) ok = false;
  else if (h.calculate_op === 'HEATMAP') ok = p.add(`${at}.calculate_op`, 'invalid', 'HEATMAP cannot be used in havings');
  if (h.column !== undefined && h.column !== null && !checkString(p, `${at}.column`, h.column)) ok = false;
  if (!has(h, 'op')) ok = p.missing(`${at}.op`);
  else if (!checkEnum(p, `${at}.op`, h.op, HAVING_OPS)) ok = false;
  if (!has(h, 'value') || h.value === null) ok = p.missing(`${at}.value`);
  else if (typeof h.value !== 'number' || !Number.isFinite(h.value)) ok = p.type(`${at}.value`, 'a number', h.value);
  return ok;
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

function checkCalculatedField(p: Problems, f: Json, at: string): boolean {
  let ok = true;
  if (!has(f, 'name')) ok = p.missing(`${at}.name`);
  else if (!checkString(p, `${at}.name`, f.name)) ok = false;
  else if (f.name.trim() === '') ok = p.missing(`${at}.name`);
  if (!has(f, 'expression')) return p.missing(`${at}.expression`);
  if (!checkString(p, `${at}.expression`, f.expression)) return false;
  if (f.expression.trim() === '') return p.missing(`${at}.expression`);
  const problem = expressionProblem(f.expression);
  if (problem) return p.add(`${at}.expression`, 'invalid', problem);
  return ok;
}

const sameColumn = (a: string | null | undefined, b: string | null | undefined) => (a ?? null) === (b ?? null);
const describeCalc = (op: string, column: string | null | undefined) => (column == null ? op : `${op}(${column})`);

/** The query's duration in seconds: end − start with both times, else time_range (default 7200). */
export function queryDuration(spec: Pick<QuerySpec, 'time_range' | 'start_time' | 'end_time'>): number {
  if (spec.start_time !== undefined && spec.end_time !== undefined) return spec.end_time - spec.start_time;
  return spec.time_range ?? DEFAULT_TIME_RANGE;
}

/**
 * Validates a query specification as sent by a client. Returns the spec to store and echo: the
 * known fields the client sent, in its order, no defaults added. Throws a 422 ApiError naming
 * every offending field.
 */
export function validateQuerySpec(input: unknown, opts: ValidateOptions = {}): QuerySpec {
  const maxLimit = opts.maxLimit ?? DEFAULT_MAX_LIMIT;
  if (!isObject(input)) {
    throw validationError([{ field: 'body', code: 'incorrect_type', description: `must be a JSON object, not ${jsonType(input)}` }]);
  }
  const p = new Problems();
  const out: Json = {};
  // Fields whose own checks passed; cross-field rules only look at those.
  let calculations: Calculation[] | undefined;
  let breakdowns: string[] | undefined;
  let breakdownsOk = true;
  let calculationsOk = true;

  for (const key of Object.keys(input)) {
    if (!(TOP_LEVEL as readonly string[]).includes(key)) continue;
    const v = input[key];
    if (v === null || v === undefined) continue;
    switch (key as (typeof TOP_LEVEL)[number]) {
      case 'calculations': {
        const r = items<Calculation>(p, key, v, (c, at) => checkCalculation(p, c, at), ['op', 'column']);
        if (r) out[key] = calculations = r;
        else calculationsOk = false;
        break;
      }
      case 'filters': {
        const r = items<Filter>(p, key, v, (f, at) => checkFilter(p, f, at), ['column', 'op', 'value']);
        if (r) out[key] = r;
        break;
      }
      case 'filter_combination':
        if (checkEnum(p, key, v, ['AND', 'OR'])) out[key] = v;
        break;
      case 'breakdowns': {
        if (!checkArray(p, key, v)) {
          breakdownsOk = false;
          break;
        }
        v.forEach((b, i) => {
          if (!checkString(p, `${key}.${i}`, b)) breakdownsOk = false;
        });
        if (breakdownsOk) out[key] = breakdowns = v as string[];
        break;
      }
      case 'orders': {
        const r = items<Order>(p, key, v, (o, at) => checkOrder(p, o, at), ['column', 'op', 'order']);
        // null order fields mean "not set" and are left out.
        if (r) out[key] = r.map((o) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== null)));
        break;
      }
      case 'havings': {
        const r = items<Having>(p, key, v, (h, at) => checkHaving(p, h, at), ['calculate_op', 'column', 'op', 'value']);
        if (r) out[key] = r;
        break;
      }
      case 'limit':
        if (checkInteger(p, key, v, 1, maxLimit)) out[key] = v;
        break;
      case 'time_range':
      case 'start_time':
      case 'end_time':
        if (checkInteger(p, key, v, 1)) out[key] = v;
        break;
      case 'granularity':
        if (checkInteger(p, key, v, 0)) out[key] = v;
        break;
      case 'calculated_fields': {
        const r = items<InlineCalculatedField>(p, key, v, (f, at) => checkCalculatedField(p, f, at), ['name', 'expression']);
        if (r) {
          const seen = new Set<string>();
          let unique = true;
          r.forEach((f, i) => {
            if (seen.has(f.name)) unique = p.add(`${key}.${i}.name`, 'invalid', `duplicate calculated field name ${JSON.stringify(f.name)}`);
            seen.add(f.name);
          });
          if (unique) out[key] = r;
        }
        break;
      }
      case 'compare_time_offset_seconds':
        if (typeof v !== 'number' || !Number.isInteger(v)) p.type(key, 'an integer', v);
        else if (!(COMPARE_TIME_OFFSETS as readonly number[]).includes(v)) p.add(key, 'invalid', `must be one of ${COMPARE_TIME_OFFSETS.join(', ')}`);
        else out[key] = v;
        break;
    }
  }

  const spec = out as QuerySpec;

  // Time: combinations, order, duration-dependent rules.
  const timeOk = ['time_range', 'start_time', 'end_time'].every((k) => input[k] === undefined || input[k] === null || k in out);
  if (timeOk) {
    const { time_range, start_time, end_time } = spec;
    if (time_range !== undefined && start_time !== undefined && end_time !== undefined) {
      p.add('time_range', 'invalid', 'cannot be combined with both start_time and end_time; send at most two of the three');
    } else if (start_time !== undefined && end_time !== undefined && start_time >= end_time) {
      p.add('start_time', 'invalid', 'must be before end_time');
    } else {
      const T = queryDuration(spec);
      if (spec.granularity !== undefined && spec.granularity !== 0) {
        const min = Math.max(1, Math.ceil(T / 1000));
        if (spec.granularity > T) p.add('granularity', 'invalid', `must be at most the query's duration (${T} seconds), or 0 for automatic`);
        else if (spec.granularity < min) p.add('granularity', 'invalid', `must be at least ${min} seconds (1/1000 of the query's duration of ${T} seconds), or 0 for automatic`);
      }
      if (spec.compare_time_offset_seconds !== undefined && spec.compare_time_offset_seconds < T) {
        p.add('compare_time_offset_seconds', 'invalid', `must be at least the query's duration (${T} seconds)`);
      }
    }
  }

  // Orders and havings must refer to what the query computes.
  if (calculationsOk) {
    const calcs: Calculation[] = calculations && calculations.length > 0 ? calculations : [{ op: 'COUNT' }];
    const computes = (op: string, column: string | null | undefined) => calcs.some((c) => c.op === op && sameColumn(c.column, column));
    const known = calcs.map((c) => describeCalc(c.op, c.column)).join(', ');
    (spec.orders ?? []).forEach((o, i) => {
      const at = `orders.${i}`;
      if (o.op !== undefined) {
        if (!computes(o.op, o.column)) p.add(at, 'invalid', `${describeCalc(o.op, o.column)} is not one of the calculations (${known})`);
      } else if (o.column === undefined) {
        p.add(at, 'invalid', 'must name a breakdown (column) or a calculation (op and column)');
      } else if (breakdownsOk && !(breakdowns ?? []).includes(o.column)) {
        p.add(at, 'invalid', `${JSON.stringify(o.column)} is not one of the breakdowns; to order by a calculation, send its op`);
      }
    });
    (spec.havings ?? []).forEach((h, i) => {
      if (!computes(h.calculate_op, h.column)) {
        p.add(`havings.${i}`, 'invalid', `${describeCalc(h.calculate_op, h.column)} is not one of the calculations (${known})`);
      }
    });
  }

  if (p.count > 0) throw validationError(p.list);
  return spec;
}

/** True when the op takes no column (COUNT, CONCURRENCY). */
export const opTakesNoColumn = (op: QueryOp) => NO_COLUMN_OPS.includes(op);

/**
 * Validates a query spec found inside another body at `field` (BubbleUp, the event browser):
 * the same rules, with every problem added to `p` named from the outer body
 * (`query.filters.0.op`). Absent or null: the empty spec.
 */
export function validateNestedQuerySpec(input: unknown, field: string, p: Problems): QuerySpec {
  if (input === undefined || input === null) return {};
  try {
    return validateQuerySpec(input, {});
  } catch (err) {
    if (!(err instanceof ApiError) || !err.extra.typeDetail) throw err;
    for (const d of err.extra.typeDetail) {
      const at = d.field === 'body' ? field : `${field}.${d.field}`;
      p.list.push({ ...d, field: at });
    }
    return {};
  }
}
