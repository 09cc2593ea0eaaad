// The query planner: a validated query spec over one dataset (or every dataset of an
// environment, `__all__`) becomes an engine-neutral QueryModel (src/stores/events/statements.ts),
// which the event engine turns into its statements (`input.dialect.query`).
//
// The planner decides what is computed: the fields read, each compiled per dataset (columns and
// calculated fields) into one SELECT of the window's events per dataset, the filters, the
// calculations (percentiles by nearest rank, sample-weighted or not), the breakdowns, havings,
// orders and limit. Parts: the result groups, their series, totals, total series and "other"
// (run.ts). With decomposable calculations (COUNT, SUM, AVG, MIN, MAX, at most one HEATMAP) on an
// engine with common table expressions and window functions, one statement answers every part
// (planCombined); otherwise one statement per part, the series and "other" statements taking the
// groups `results` answered as bound parameters.
// Values the user typed (filter values, expression literals) are bound parameters. The only
// numbers written into the SQL text are ones the planner computed itself (time bounds,
// granularity, percentiles), and identifiers are quoted by quoteIdent or are planner aliases.
import type { Column, Dataset } from '../stores/config/types.js';
import { tableName } from '../stores/events/types.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN, UnsupportedByEngine, type SqlDialect } from '../stores/events/engine.js';
import { numeric, stateColumns, type Aggregation, type EngineDialect, type Part, type QueryModel, type Scan, type StateColumn } from '../stores/events/statements.js';
import type { ValueType } from './expr/index.js';
import { FieldScope, columnSources, type CalculatedSource } from './fields.js';
import { calculationKey, type Calculation, type Filter, type Having, type QueryOp, type QuerySpec } from './spec.js';

export { numeric, UnsupportedByEngine, type Part, type Scan };

/** One dataset the query reads, with what its fields resolve against. */
export interface Source {
  dataset: Dataset;
  columns: Column[];
  /** Calculated fields visible in this dataset: environment-wide first, then the dataset's. */
  calculated: CalculatedSource[];
}

export interface PlanInput {
  /** The SQL of the event store the plan runs on (events.dialect). */
  dialect: EngineDialect;
  sources: Source[];
  spec: QuerySpec;
  /** The window in Unix seconds, [start, end). */
  start: number;
  end: number;
  /** Bucket width of the series, seconds. */
  granularity: number;
  /** Most result groups. */
  limit: number;
  /**
   * Whether any event in the window has a sample rate other than 1. When none has, every weight
   * is 1 and the plain aggregates (count, sum, avg, the unweighted nearest rank) give the same
   * answers with less work, so the statements use those.
   */
  weighted: boolean;
  /**
   * Whether percentiles weigh by sample rate (default: `weighted`). Not when every event of the
   * window has the same sample rate r: an event's cumulative weight is then r × its rank and the
   * total r × n, so the weighted nearest rank is the unweighted one, exactly, at a half of the
   * weighted plan's cost.
   */
  weightedPercentiles?: boolean;
  /** Fields read besides those the spec names (scans: every column for BubbleUp, raw events, traces). */
  extraFields?: string[];
  /**
   * The time ranges read (Unix seconds, each [start, end)), when not the whole window: a scan of
   * BubbleUp against the past reads the selection and the same range earlier, nothing between.
   */
  ranges?: { start: number; end: number }[];
}

export const PERCENTILES: Partial<Record<QueryOp, number>> = {
  P001: 0.001, P01: 0.01, P05: 0.05, P10: 0.1, P20: 0.2, P25: 0.25, P50: 0.5,
  P75: 0.75, P80: 0.8, P90: 0.9, P95: 0.95, P99: 0.99, P999: 0.999,
};
/** Buckets of a HEATMAP histogram between the smallest and largest value of the window. */
export const HEATMAP_BUCKETS = 50;

interface Field {
  name: string;
  alias: string;
  type: Exclude<ValueType, 'null'>;
}
interface Calc extends Calculation {
  key: string;
  alias: string;
  field?: Field;
}

export interface Plan {
  /** SQL of the part; series parts return `__b` (bucket index: start = __b × granularity). */
  sql: string;
  params: unknown[];
  breakdowns: { name: string; alias: string; type: Exclude<ValueType, 'null'> }[];
  calcs: { key: string; alias: string; op: QueryOp }[];
}

/** The filtered events of the window reading `fieldNames` as well as the spec's own fields. */
export function planScan(input: Omit<PlanInput, 'granularity' | 'limit' | 'weighted' | 'extraFields'>, fieldNames: string[]): Scan {
  return build({ ...input, granularity: 1, limit: 1, weighted: false, extraFields: fieldNames }).scan();
}

/** The statement of one part (each part binds only the parameters it uses). */
export function plan(input: PlanInput, part: 'results' | 'totals' | 'totalSeries'): Plan {
  return build(input).part(part);
}

/** Series or "other" of the given result groups (rows of the `results` statement). */
export function planOfGroups(input: PlanInput, part: 'series' | 'other', groups: Record<string, unknown>[]): Plan {
  return build(input).ofGroups(part, groups);
}

/** What the bucket-result cache merges the states statement's rows by (src/query/bucket-states.ts). */
export interface StatesPlan {
  /** The states statement (BucketStateStatements: at most `maxRows` rows) and its parameters (none of the havings'). */
  sql: string;
  params: unknown[];
  keys: { alias: string; type: Exclude<ValueType, 'null'> }[];
  calcs: Aggregation[];
  states: StateColumn[];
  order: OrderTerm[];
  /** The havings, by calculation alias (undefined: a calculation the query does not have, which no group meets). */
  havings: { alias?: string; op: Having['op']; value: number }[];
  limit: number;
  bucketUs: number;
  lastBucket: number;
  heatmapBuckets: number;
  weighted: boolean;
  weightedPercentiles: boolean;
}

/** The bucket-result cache's states statement over the input's window (or its `ranges`), and how to merge its rows. */
export function planStates(input: PlanInput, maxRows = 1): StatesPlan {
  return build(input).states(maxRows);
}

/**
 * One statement answering every part in `parts`, or undefined when the calculations are not all
 * decomposable (COUNT, SUM, AVG, MIN, MAX and at most one HEATMAP) or the engine lacks what one
 * statement needs (an intermediate result read by every part, rows numbered per part). Rows
 * carry `__part` (the index of their part in `parts`) and come ordered by part, then in the
 * part's order.
 */
export function planCombined(input: PlanInput, parts: Part[]): Plan | undefined {
  const { ctes, windowFunctions } = input.dialect.capabilities;
  if (!ctes || !windowFunctions) return undefined;
  return build(input).combined(parts);
}

/** The ops whose aggregate over a group can be merged from aggregates over pieces of it. */
const DECOMPOSABLE = new Set<QueryOp>(['COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'HEATMAP']);

function build(input: PlanInput) {
  const { spec, sources, dialect: d } = input;
  const quoteIdent = d.quoteIdent;
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };

  // Every field the query reads, by name, with a planner alias.
  const fields = new Map<string, Field>();
  const fieldFor = (name: string): Field => {
    let f = fields.get(name);
    if (!f) {
      f = { name, alias: `f${fields.size}`, type: 'string' };
      fields.set(name, f);
    }
    return f;
  };
  const calculations = spec.calculations && spec.calculations.length > 0 ? spec.calculations : [{ op: 'COUNT' as const }];
  const breakdowns = (spec.breakdowns ?? []).map((name) => ({ name, field: fieldFor(name) }));
  const calcs: Calc[] = [];
  for (const c of calculations) {
    const key = calculationKey(c);
    if (calcs.some((x) => x.key === key)) continue;
    calcs.push({ ...c, key, alias: `a${calcs.length}`, field: c.column ? fieldFor(c.column) : undefined });
  }
  const filters = (spec.filters ?? []).filter((f) => f.column !== null).map((f) => ({ filter: f, field: fieldFor(f.column!) }));
  for (const name of input.extraFields ?? []) fieldFor(name);
  const usesConcurrency = calcs.some((c) => c.op === 'CONCURRENCY');

  // base: per dataset, each field compiled against that dataset's columns and calculated fields.
  const inline = (spec.calculated_fields ?? []).map((c) => ({ name: c.name, expression: c.expression, origin: 'query' }));
  const perSource = sources.map((s) => {
    const scope = new FieldScope({
      dialect: d,
      columns: columnSources(d, s.columns),
      calculated: [...s.calculated, ...inline],
      eventTimeSql: quoteIdent(TIME_COLUMN),
      ingestTimeSql: quoteIdent(INGESTED_COLUMN),
      bind: (v) => bind(v),
    });
    const resolved = new Map([...fields.values()].map((f) => [f.name, scope.resolve(f.name)]));
    const duration = usesConcurrency ? scope.resolve(s.dataset.definitions.duration_ms || 'duration_ms') : undefined;
    return { source: s, resolved, duration };
  });
  // A field's type is the same everywhere, or text when datasets disagree.
  for (const f of fields.values()) {
    const types = new Set(perSource.map((p) => p.resolved.get(f.name)?.type).filter((t): t is Exclude<ValueType, 'null'> => !!t && t !== 'null'));
    f.type = types.size === 1 ? [...types][0] : 'string';
  }
  const t = quoteIdent(TIME_COLUMN);
  const inRange = (r: { start: number; end: number }) => `${t} >= ${d.timestamp(Math.trunc(r.start * 1_000_000))} AND ${t} < ${d.timestamp(Math.trunc(r.end * 1_000_000))}`;
  const ranges = input.ranges ?? [{ start: input.start, end: input.end }];
  // One SELECT per dataset and time range: an engine prunes by each range (an OR of ranges made
  // DuckDB read every row group's times: 1 s per statement on 100M events).
  const selects = perSource.flatMap(({ source, resolved, duration }) => {
    const cols = [`${quoteIdent(TIME_COLUMN)} AS __t`, `${quoteIdent(SAMPLERATE_COLUMN)} AS __w`];
    for (const f of fields.values()) {
      const r = resolved.get(f.name);
      cols.push(`${d.cast(r && r.type !== 'null' ? r.sql : 'NULL', f.type)} AS ${f.alias}`);
    }
    if (usesConcurrency) cols.push(`${d.tryCast(duration && duration.type !== 'null' ? duration.sql : 'NULL', 'float')} AS __dur`);
    return ranges.map((r) => `SELECT ${cols.join(', ')} FROM ${quoteIdent(tableName(source.dataset.id))} WHERE ${inRange(r)}`);
  });
  const emptyBase = `SELECT ${d.nullTime()} AS __t, ${d.nullOf('integer')} AS __w${[...fields.values()]
    .map((f) => `, ${d.nullOf(f.type)} AS ${f.alias}`)
    .join('')}${usesConcurrency ? `, ${d.nullOf('float')} AS __dur` : ''} WHERE ${d.bool(false)}`;
  const base = selects.length > 0 ? selects.join('\nUNION ALL\n') : emptyBase;

  const bucketUs = Math.max(1, Math.trunc(input.granularity * 1_000_000));
  const where = filters.map(({ filter, field }) => filterSql(d, filter, field, bind));

  // Havings bind last, so parts without them take the parameters before theirs.
  const paramsBeforeHavings = params.length;
  const havings = (spec.havings ?? []).map((h) => havingCondition(d, h, calcs, bind));
  const order = orderTerms(spec, calcs, breakdowns);
  const model: QueryModel = {
    dialect: d,
    events: base,
    filter: where.length === 0 ? undefined : where.join(spec.filter_combination === 'OR' ? ' OR ' : ' AND '),
    fields: [...fields.values()],
    keys: breakdowns.map((b) => b.field),
    calcs: calcs.map(aggregation),
    bucketUs,
    lastBucket: Math.floor((Math.trunc(input.end * 1_000_000) - 1) / bucketUs),
    weighted: input.weighted,
    weightedPercentiles: input.weightedPercentiles ?? input.weighted,
    heatmapBuckets: HEATMAP_BUCKETS,
    havings,
    order: orderSql(order),
    limit: input.limit,
    params,
    paramsBeforeHavings,
  };
  const shape = {
    breakdowns: breakdowns.map((b) => ({ name: b.name, alias: b.field.alias, type: b.field.type })),
    calcs: calcs.map((c) => ({ key: c.key, alias: c.alias, op: c.op })),
  };
  const statements = d.query;

  return {
    scan: (): Scan => {
      const { prelude, from } = statements.scan(model);
      return { dialect: d, prelude, f: from, params: params.slice(0, paramsBeforeHavings), fields: [...fields.values()] };
    },
    part: (part: 'results' | 'totals' | 'totalSeries'): Plan => ({
      sql: statements.part(model, part),
      // Havings bind their values only in the parts that use them.
      params: part === 'results' ? params : params.slice(0, paramsBeforeHavings),
      ...shape,
    }),
    /** The groups come in as bound parameters, so the ranking is not computed again. */
    ofGroups: (part: 'series' | 'other', groups: Record<string, unknown>[]): Plan => {
      const ps = params.slice(0, paramsBeforeHavings);
      const bindKey = (v: unknown) => {
        ps.push(v ?? null);
        return `$${ps.length}`;
      };
      const keys = groups.map((g) => breakdowns.map((b) => d.cast(bindKey(g[b.field.alias]), b.field.type)));
      return { sql: statements.ofGroups(model, part, keys), params: ps, ...shape };
    },
    states: (maxRows: number): StatesPlan => ({
      sql: d.bucketStates.states(model, maxRows),
      params: params.slice(0, paramsBeforeHavings),
      keys: breakdowns.map((b) => ({ alias: b.field.alias, type: b.field.type })),
      calcs: model.calcs,
      states: stateColumns(model),
      order,
      havings: (spec.havings ?? []).map((h) => ({ alias: calcAlias(calcs, h.calculate_op, h.column), op: h.op, value: Number(h.value) })),
      limit: Math.trunc(input.limit),
      bucketUs,
      lastBucket: model.lastBucket,
      heatmapBuckets: HEATMAP_BUCKETS,
      weighted: model.weighted,
      weightedPercentiles: model.weightedPercentiles,
    }),
    combined: (parts: Part[]): Plan | undefined => {
      if (!calcs.every((c) => DECOMPOSABLE.has(c.op))) return undefined;
      if (calcs.filter((c) => c.op === 'HEATMAP').length > 1) return undefined;
      return { sql: statements.combined(model, parts), params, ...shape };
    },
  };
}

/** A calculation as the engine's statements compute it. */
function aggregation(c: Calc): Aggregation {
  const p = PERCENTILES[c.op];
  if (p !== undefined) return { alias: c.alias, op: 'PERCENTILE', field: c.field, p };
  return { alias: c.alias, op: c.op as Exclude<QueryOp, `P${string}`>, field: c.field };
}

/** A filter as a predicate on its field. Negative ops also match events without the field. */
function filterSql(d: SqlDialect, filter: Filter, field: Field, bind: (v: unknown) => string): string {
  const col = field.alias;
  const text = d.cast(col, 'string');
  const value = filter.value;
  /** The filter value in the field's type; undefined when it cannot be one (nothing equals it). */
  const typed = (v: unknown): string | undefined => {
    switch (field.type) {
      case 'integer':
      case 'float': {
        const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : typeof v === 'boolean' ? Number(v) : NaN;
        return Number.isFinite(n) ? `${d.cast(bind(n), 'float')}` : undefined;
      }
      case 'boolean':
        if (typeof v === 'boolean') return bind(v);
        if (v === 'true' || v === d.bool(false)) return bind(v === 'true');
        return undefined;
      case 'string':
        return `${d.cast(bind(String(v)), 'string')}`;
    }
  };
  const negate = (positive: string) => `(${col} IS NULL OR NOT (${positive}))`;
  switch (filter.op) {
    case 'exists':
      return `${col} IS NOT NULL`;
    case 'does-not-exist':
      return `${col} IS NULL`;
    case '=':
    case '!=': {
      const v = typed(value);
      const eq = v === undefined ? d.bool(false) : `${col} = ${v}`;
      return filter.op === '=' ? `(${eq})` : negate(eq);
    }
    case '>':
    case '>=':
    case '<':
    case '<=': {
      // Numbers compare as numbers; text compares as text.
      const n = typeof value === 'number' ? value : Number(value);
      if (field.type === 'string' && typeof value === 'number') return `(${d.tryCast(col, 'float')} ${filter.op} ${d.cast(bind(value), 'float')})`;
      if (field.type === 'string') return `(${col} ${filter.op} ${d.cast(bind(String(value)), 'string')})`;
      if (field.type === 'boolean') return d.bool(false);
      return Number.isFinite(n) ? `(${col} ${filter.op} ${d.cast(bind(n), 'float')})` : d.bool(false);
    }
    case 'starts-with':
      return d.startsWith(text, d.cast(bind(String(value)), 'string'));
    case 'does-not-start-with':
      return negate(d.startsWith(text, d.cast(bind(String(value)), 'string')));
    case 'ends-with':
      return d.endsWith(text, d.cast(bind(String(value)), 'string'));
    case 'does-not-end-with':
      return negate(d.endsWith(text, d.cast(bind(String(value)), 'string')));
    case 'contains':
      return d.contains(text, d.cast(bind(String(value)), 'string'));
    case 'does-not-contain':
      return negate(d.contains(text, d.cast(bind(String(value)), 'string')));
    case 'in':
    case 'not-in': {
      const values = (Array.isArray(value) ? value : [value]).map(typed).filter((v): v is string => v !== undefined);
      const within = values.length ? `${col} IN (${values.join(', ')})` : d.bool(false);
      return filter.op === 'in' ? `(${within})` : negate(within);
    }
  }
}

function calcAlias(calcs: Calc[], op: string, column: string | null | undefined): string | undefined {
  return calcs.find((c) => c.op === op && (c.column ?? null) === (column ?? null))?.alias;
}

function havingCondition(d: SqlDialect, h: Having, calcs: Calc[], bind: (v: unknown) => string): string {
  const alias = calcAlias(calcs, h.calculate_op, h.column);
  if (!alias) return d.bool(false);
  return `${alias} ${h.op} ${d.cast(bind(h.value), 'float')}`;
}

/** A term of the result groups' order: a calculation's or a breakdown's alias. */
export interface OrderTerm {
  alias: string;
  descending: boolean;
}

/** The result groups' order: the spec's orders, else the first calculation descending; keys break ties (nulls last in every term). */
function orderTerms(spec: QuerySpec, calcs: Calc[], breakdowns: { name: string; field: Field }[]): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const o of spec.orders ?? []) {
    const alias = o.op ? calcAlias(calcs, o.op, o.column) : breakdowns.find((b) => b.name === o.column)?.field.alias;
    if (alias) terms.push({ alias, descending: o.order === 'descending' });
  }
  if (terms.length === 0) {
    const first = calcs.find((c) => c.op !== 'HEATMAP');
    if (first) terms.push({ alias: first.alias, descending: true });
  }
  for (const b of breakdowns) terms.push({ alias: b.field.alias, descending: false });
  return terms;
}

/** ORDER BY of the result groups (orderTerms). */
function orderSql(terms: OrderTerm[]): string {
  return terms.map((t) => `${t.alias} ${t.descending ? 'DESC' : 'ASC'} NULLS LAST`).join(', ') || '1';
}
