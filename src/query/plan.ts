// The query planner: a validated query spec over one dataset (or every dataset of an
// environment, `__all__`) becomes SQL in the event engine's dialect (input.dialect).
//
// Every statement starts with:
//   base   one SELECT per dataset, UNION ALL: the event time, the sample rate, and each field the
//          query reads (columns and calculated fields, compiled per dataset), restricted to the
//          time window inside each SELECT so DuckDB prunes row groups by their `__time` min/max;
//   f      base with the query's filters and the event's time bucket (`__b`).
// Two plans:
//   combined  (planCombined) every calculation decomposable (COUNT, SUM, AVG, MIN, MAX, at most one
//          HEATMAP): one statement for all parts; f is aggregated once per (breakdowns, bucket[,
//          HEATMAP cell]) into mergeable partials, and each part merges those at its own level.
//   per part  (plan, planOfGroups) otherwise: one statement per part; `level` computes the
//          aggregates grouped by the breakdowns (results), breakdowns + bucket (series), nothing
//          (totals, other) or the bucket (total series). Plain aggregates come from one GROUP BY;
//          the ops that need ordering or expansion (sample-weighted percentiles, HEATMAP,
//          CONCURRENCY, RATE_*) each come from their own CTE joined on the keys. The series and
//          "other" statements take the groups `results` answered as bound parameters.
// Values the user typed (filter values, expression literals) are bound parameters. The only
// numbers written into the SQL text are ones the planner computed itself (time bounds,
// granularity, percentiles), and identifiers are quoted by quoteIdent or are planner aliases.
import type { Column, Dataset } from '../stores/config/types.js';
import { tableName } from '../stores/events/types.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN, UnsupportedByEngine, type SqlDialect } from '../stores/events/engine.js';

export { UnsupportedByEngine };
import type { ValueType } from './expr/index.js';
import { FieldScope, columnSources, type CalculatedSource } from './fields.js';
import { calculationKey, type Calculation, type Filter, type Having, type QueryOp, type QuerySpec } from './spec.js';

/** One dataset the query reads, with what its fields resolve against. */
export interface Source {
  dataset: Dataset;
  columns: Column[];
  /** Calculated fields visible in this dataset: environment-wide first, then the dataset's. */
  calculated: CalculatedSource[];
}

export interface PlanInput {
  /** The SQL dialect of the event store the plan runs on (events.dialect). */
  dialect: SqlDialect;
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
   * is 1 and the plain aggregates (count(*), sum, avg, quantile_disc) give the same answers
   * with less work, so the statements use those.
   */
  weighted: boolean;
  /**
   * Whether percentiles weigh by sample rate (default: `weighted`). Not when every event of the
   * window has the same sample rate r: an event's cumulative weight is then r × its rank and the
   * total r × n, so the weighted nearest rank is the unweighted one (quantile_disc), exactly, at a
   * half of the weighted plan's cost.
   */
  weightedPercentiles?: boolean;
  /** Fields read besides those the spec names (scans: every column for BubbleUp, raw events, traces). */
  extraFields?: string[];
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

/**
 * The parts of an answer: the result groups, their series, the totals (all events, no havings or
 * limit) and their series, and "other" (the events outside the result groups).
 */
export type Part = 'results' | 'series' | 'totals' | 'totalSeries' | 'other';

export interface Plan {
  /** SQL of the part; series parts return `__b` (bucket index: start = __b × granularity). */
  sql: string;
  params: unknown[];
  breakdowns: { name: string; alias: string; type: Exclude<ValueType, 'null'> }[];
  calcs: { key: string; alias: string; op: QueryOp }[];
}

/**
 * The events of a scan: `prelude` defines the CTEs `base` and `f` (the window's events that pass
 * the spec's filters, one row each with `__t` its time, `__w` its sample rate and one column per
 * field, named by the field's alias), binding `params`. A statement built on it appends its own
 * CTEs and SELECT; it may bind more parameters after these.
 */
export interface Scan {
  dialect: SqlDialect;
  prelude: string;
  /**
   * What a statement reads the events from: `f` after the prelude, or (an engine without common
   * table expressions, whose prelude is empty) the filtered events as a subquery named f.
   */
  f: string;
  params: unknown[];
  fields: { name: string; alias: string; type: Exclude<ValueType, 'null'> }[];
}

/** The filtered events of the window reading `fieldNames` as well as the spec's own fields. */
export function planScan(input: Omit<PlanInput, 'granularity' | 'limit' | 'weighted' | 'extraFields'>, fieldNames: string[]): Scan {
  return build({ ...input, granularity: 1, limit: 1, weighted: false, extraFields: fieldNames }).scan();
}

/** The statement of one part (each part binds only the parameters it uses). */
export function plan(input: PlanInput, part: 'results' | 'totals' | 'totalSeries'): Plan {
  const b = build(input);
  return input.dialect.nested ? b.nestedPart(part) : b.part(part);
}

/** Series or "other" of the given result groups (rows of the `results` statement), see build(). */
export function planOfGroups(input: PlanInput, part: 'series' | 'other', groups: Record<string, unknown>[]): Plan {
  const b = build(input);
  return input.dialect.nested ? b.nestedOfGroups(part, groups) : b.ofGroups(part, groups);
}

/**
 * One statement answering every part in `parts`, or undefined when the calculations are not all
 * decomposable (COUNT, SUM, AVG, MIN, MAX and at most one HEATMAP). Rows carry `__part` (the
 * index of their part in `parts`) and come ordered by part, then in the part's order.
 */
export function planCombined(input: PlanInput, parts: Part[]): Plan | undefined {
  // (An engine without common table expressions answers part by part.)
  if (input.dialect.nested) return undefined;
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
  const startSql = d.timestamp(input.start * 1_000_000);
  const endSql = d.timestamp(input.end * 1_000_000);
  const selects = perSource.map(({ source, resolved, duration }) => {
    const cols = [`${quoteIdent(TIME_COLUMN)} AS __t`, `${quoteIdent(SAMPLERATE_COLUMN)} AS __w`];
    for (const f of fields.values()) {
      const r = resolved.get(f.name);
      cols.push(`${d.cast(r && r.type !== 'null' ? r.sql : 'NULL', f.type)} AS ${f.alias}`);
    }
    if (usesConcurrency) cols.push(`${d.tryCast(duration && duration.type !== 'null' ? duration.sql : 'NULL', 'float')} AS __dur`);
    return (
      `SELECT ${cols.join(', ')} FROM ${quoteIdent(tableName(source.dataset.id))} ` +
      `WHERE ${quoteIdent(TIME_COLUMN)} >= ${startSql} AND ${quoteIdent(TIME_COLUMN)} < ${endSql}`
    );
  });
  const emptyBase = `SELECT ${d.nullTime()} AS __t, ${d.nullOf('integer')} AS __w${[...fields.values()]
    .map((f) => `, ${d.nullOf(f.type)} AS ${f.alias}`)
    .join('')}${usesConcurrency ? `, ${d.nullOf('float')} AS __dur` : ''} WHERE ${d.bool(false)}`;
  const base = selects.length > 0 ? selects.join('\nUNION ALL\n') : emptyBase;

  const gUs = Math.max(1, Math.trunc(input.granularity * 1_000_000));
  const where = filters.map(({ filter, field }) => filterSql(d, filter, field, bind));
  const whereSql = where.length === 0 ? '' : ` WHERE ${where.join(spec.filter_combination === 'OR' ? ' OR ' : ' AND ')}`;
  // NOT MATERIALIZED: a part reading `f` more than once (series, HEATMAP bounds, other) would
  // otherwise copy every event of the window into a temporary result first; scanning the table
  // again (time-pruned, only the columns that reference reads) costs less (bench/query.mjs).
  const prelude = `WITH base AS NOT MATERIALIZED (\n${base}\n),\nf AS NOT MATERIALIZED (SELECT *, ${d.intDiv(d.epochUs('__t'), String(gUs))} AS __b FROM base${whereSql})`;

  const keyAliases = breakdowns.map((b) => b.field.alias);
  const level = new LevelBuilder(calcs, keyAliases, input, gUs);

  // results: the groups, havings applied, ordered, limited.
  // Havings bind last, so parts without them take the parameters before theirs.
  const paramsBeforeHavings = params.length;
  const havingSql = (spec.havings ?? []).map((h) => havingCondition(d, h, calcs, bind));
  const order = orderSql(spec, calcs, breakdowns);
  const topSelect = (from: string) =>
    `SELECT * FROM ${from}${havingSql.length ? ` WHERE ${havingSql.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${Math.trunc(input.limit)}`;
  const onKeys = (a: string, b: string) => keyAliases.map((k) => `${a}.${k} IS NOT DISTINCT FROM ${b}.${k}`).join(' AND ') || 'true';
  const top = () => `${level.ctes('r', 'f', keyAliases)},\ntop AS (${topSelect('r')})`;
  const keysThenBucket = [...keyAliases, '__b'].join(', ');
  // The per-part statements of non-decomposable calculations (series and "other" of those: ofGroups).
  const statements: Record<'results' | 'totals' | 'totalSeries', () => string> = {
    results: () => `${prelude},\n${top()}\nSELECT * FROM top ORDER BY ${order}`,
    totals: () => `${prelude},\n${level.ctes('t', 'f', [])}\nSELECT * FROM t`,
    totalSeries: () => `${prelude},\n${level.ctes('ts', 'f', ['__b'])}\nSELECT * FROM ts ORDER BY __b`,
  };
  /** A breakdown column of null (a part without groups, or an empty list of groups). */
  const nullKey = (b: (typeof breakdowns)[number]) => `${d.nullOf(b.field.type)} AS ${b.field.alias}`;
  const shape = {
    breakdowns: breakdowns.map((b) => ({ name: b.name, alias: b.field.alias, type: b.field.type })),
    calcs: calcs.map((c) => ({ key: c.key, alias: c.alias, op: c.op })),
  };

  /**
   * The decomposable plan: one aggregation of `f` per (breakdowns, time bucket[, HEATMAP cell])
   * holding mergeable partial aggregates (sums, minima, maxima, row counts), materialised once;
   * every part merges those partials at its own level (results: per group; series: per group and
   * bucket of the top groups; totals; total series; other: the groups outside the top). The top
   * groups are ranked once, in `top`. HEATMAP bounds come from one pass over all matching events.
   */
  const combined = (parts: Part[]): Plan | undefined => {
    if (!calcs.every((c) => DECOMPOSABLE.has(c.op))) return undefined;
    const heat = calcs.filter((c) => c.op === 'HEATMAP');
    if (heat.length > 1) return undefined;
    type Merge = 'sum' | 'min' | 'max';
    const partials: { name: string; expr: string; merge: Merge }[] = [{ name: '__rows', expr: 'count(*)', merge: 'sum' }];
    const finals = new Map<string, string>();
    for (const c of calcs) {
      const n = c.field && numeric(d, c.field);
      const p = (suffix: string, expr: string, merge: Merge) => {
        const name = `__p_${c.alias}${suffix}`;
        partials.push({ name, expr, merge });
        return name;
      };
      const w = input.weighted;
      if (c.op === 'COUNT') finals.set(c.alias, w ? `coalesce(${p('', 'sum(__w)', 'sum')}, 0)` : 'coalesce(__rows, 0)');
      else if (c.op === 'SUM') finals.set(c.alias, `coalesce(${p('', w ? `sum(${n} * __w)` : `sum(${n})`, 'sum')}, 0)`);
      else if (c.op === 'AVG')
        finals.set(
          c.alias,
          `${p('_n', w ? `sum(${n} * __w)` : `sum(${n})`, 'sum')} / ${p('_d', w ? `sum(CASE WHEN ${n} IS NOT NULL THEN __w END)` : `count(${n})`, 'sum')}`,
        );
      else if (c.op === 'MIN') finals.set(c.alias, p('', `min(${n})`, 'min'));
      else if (c.op === 'MAX') finals.set(c.alias, p('', `max(${n})`, 'max'));
    }
    const hm = heat[0];
    const hmN = hm?.field && numeric(d, hm.field);
    // A HEATMAP cell's count: the weight of its events (at m's grain, one row is one cell).
    const cellCount = hm && input.weighted ? (partials.push({ name: '__p_cell', expr: 'sum(__w)', merge: 'sum' }), '__p_cell') : '__rows';
    const grain = [...keyAliases, '__b', ...(hm ? ['__hb'] : [])];
    const groupBy = (cols: string[]) => (cols.length ? ` GROUP BY ${cols.join(', ')}` : '');
    const ctes: string[] = [];
    if (hm) {
      ctes.push(`hb_bounds AS MATERIALIZED (SELECT min(${hmN}) AS __lo, greatest((max(${hmN}) - min(${hmN})) / ${HEATMAP_BUCKETS}, 1e-9) AS __width FROM f)`);
    }
    ctes.push(
      `m AS MATERIALIZED (SELECT ${[
        ...keyAliases,
        '__b',
        // (least() skips nulls: an event without a value must get no cell, not the last one)
        ...(hm ? [`CASE WHEN ${hmN} IS NOT NULL THEN least(floor((${hmN} - __lo) / __width), ${HEATMAP_BUCKETS - 1}) END AS __hb`] : []),
        ...partials.map((x) => `${x.expr} AS ${x.name}`),
      ].join(', ')} FROM f${hm ? ', hb_bounds' : ''}${groupBy(grain)})`,
    );
    /** The calculations over `src` (rows at the grain of m) per `levelKeys`; no row for no events. */
    const level = (src: string, levelKeys: string[]) => {
      const merged = (from: string, cols: string[]) =>
        `SELECT ${[...cols, ...partials.map((x) => `${x.merge}(${x.name}) AS ${x.name}`)].join(', ')} FROM ${from}${groupBy(cols)}`;
      let rows = merged(src, hm ? [...levelKeys, '__hb'] : levelKeys);
      if (hm) {
        const cell = `{'lower': __lo + __hb * __width, 'upper': __lo + (__hb + 1) * __width, 'count': c.${cellCount}}`;
        rows =
          `SELECT ${[
            ...levelKeys,
            ...partials.map((x) => `${x.merge}(c.${x.name}) AS ${x.name}`),
            `to_json(list(${cell} ORDER BY __hb) FILTER (WHERE __hb IS NOT NULL))::VARCHAR AS __hm`,
          ].join(', ')} FROM (${rows}) AS c, hb_bounds${groupBy(levelKeys)}`;
        finals.set(hm.alias, '__hm');
      }
      return `SELECT ${[...levelKeys, '__rows', ...calcs.map((c) => `${finals.get(c.alias)} AS ${c.alias}`)].join(', ')} FROM (${rows}) AS l WHERE __rows > 0`;
    };
    ctes.push(`r AS (${level('m', keyAliases)})`, `top AS MATERIALIZED (${topSelect('r')})`);
    const inTop = keyAliases.length
      ? `(SELECT m.* FROM m SEMI JOIN top ON ${onKeys('m', 'top')})`
      : '(SELECT * FROM m WHERE EXISTS (SELECT 1 FROM top))';
    const notInTop = keyAliases.length
      ? `(SELECT m.* FROM m ANTI JOIN top ON ${onKeys('m', 'top')})`
      : '(SELECT * FROM m WHERE NOT EXISTS (SELECT 1 FROM top))';
    const aliases = calcs.map((c) => c.alias);
    const select = (i: number, rowOrder: string, withKeys: boolean, withBucket: boolean, from: string) =>
      `SELECT ${[
        `${i} AS __part`,
        `row_number() OVER (ORDER BY ${rowOrder}) AS __rn`,
        ...(withKeys ? keyAliases : breakdowns.map(nullKey)),
        withBucket ? '__b' : 'CAST(NULL AS BIGINT) AS __b',
        ...aliases,
      ].join(', ')} FROM ${from}`;
    const byBucket = ['__b', ...keyAliases].join(', ');
    const selects = parts.map((part, i) => {
      switch (part) {
        case 'results':
          return select(i, order, true, false, 'top');
        case 'series':
          return select(i, byBucket, true, true, `(${level(inTop, [...keyAliases, '__b'])}) AS s`);
        case 'totals':
          return select(i, '1', false, false, `(${level('m', [])}) AS t`);
        case 'totalSeries':
          return select(i, '__b', false, true, `(${level('m', ['__b'])}) AS ts`);
        case 'other':
          return select(i, '1', false, false, `(${level(notInTop, [])}) AS o`);
      }
    });
    const sql = `${prelude},\n${ctes.join(',\n')}\nSELECT * FROM (\n${selects.join('\nUNION ALL\n')}\n) AS parts ORDER BY __part, __rn`;
    return { sql, params, ...shape };
  };

  /**
   * Series or "other" of the groups `results` answered (rows with the breakdown aliases): the
   * groups come in as bound parameters (a VALUES list), so the ranking is not computed again.
   * Without breakdowns there is one group, shown when `groups` has a row.
   */
  const ofGroups = (part: 'series' | 'other', groups: Record<string, unknown>[]): Plan => {
    const ps = params.slice(0, paramsBeforeHavings);
    const bindKey = (v: unknown) => {
      ps.push(v ?? null);
      return `$${ps.length}`;
    };
    let sql: string;
    if (keyAliases.length === 0) {
      const shown = groups.length > 0;
      sql =
        part === 'series'
          ? `${prelude},\n${level.ctes('s', shown ? 'f' : '(SELECT * FROM f WHERE false)', ['__b'])}\nSELECT * FROM s ORDER BY __b`
          : `${prelude},\n${level.ctes('o', shown ? '(SELECT * FROM f WHERE false)' : 'f', [])}\nSELECT * FROM o`;
    } else {
      const values = groups.length
        ? `SELECT * FROM (VALUES ${groups
            .map((g) => `(${breakdowns.map((b) => d.cast(bindKey(g[b.field.alias]), b.field.type)).join(', ')})`)
            .join(', ')}) AS v(${keyAliases.join(', ')})`
        : `SELECT ${breakdowns.map(nullKey).join(', ')} WHERE false`;
      const top = `top AS MATERIALIZED (${values})`;
      sql =
        part === 'series'
          ? `${prelude},\n${top},\nft AS (SELECT f.* FROM f SEMI JOIN top ON ${onKeys('f', 'top')}),\n${level.ctes('s', 'ft', [...keyAliases, '__b'])}\n` +
            `SELECT * FROM s ORDER BY __b, ${keysThenBucket}`
          : `${prelude},\n${top},\nfo AS (SELECT f.* FROM f ANTI JOIN top ON ${onKeys('f', 'top')}),\n${level.ctes('o', 'fo', [])}\nSELECT * FROM o`;
    }
    return { sql, params: ps, ...shape };
  };

  // ---- The nested plan, for engines without common table expressions or window functions
  // (dialect.nested): the same rows as the statements above, from nested subqueries. Plain
  // aggregates and percentiles (nearest rank over the sorted values and weights of a group).
  const nestedF = `(SELECT *, ${d.intDiv(d.epochUs('__t'), String(gUs))} AS __b FROM (\n${base}\n) AS base${whereSql}) AS f`;
  // CONCURRENCY and RATE_* without window functions: beside the level's events (__k = 0) come
  // rows of their own, carrying the breakdown keys: one per rate between consecutive events of a
  // group (__k = 1, __r the rate, __b the later event's bucket) and one per bucket a span covers
  // (__k = 2, __cw its weight). The level aggregates over all of them; the other calculations
  // read only the events' values (NULL in the extra rows; a field that is also a breakdown key is
  // read as __v_<alias>), so their answers are unchanged, and a series bucket only running spans
  // cover gets a row, as in the other plan.
  const extraOps = calcs.some((c) => c.op === 'CONCURRENCY' || c.op === 'RATE_AVG' || c.op === 'RATE_SUM' || c.op === 'RATE_MAX');
  /** The columns of RATE_* calculations; column i's rate rows have __k = 3 + i. */
  const rateColumns = [...new Set(calcs.filter((c) => c.op.startsWith('RATE_')).map((c) => c.field!.alias))];
  const lastOfWindow = Math.floor((Math.trunc(input.end * 1_000_000) - 1) / gUs);
  const withExtraRows = (from: string): string => {
    const agg = d.nested!;
    const fs = [...fields.values()];
    const num = (k: number) => d.cast(String(k), 'integer');
    const row = (k: number, b: string, w: string, values: (f: Field) => string, r: string, cw: string) =>
      [
        `${num(k)} AS __k`,
        `${d.cast(b, 'integer')} AS __b`,
        `${w} AS __w`,
        ...keyAliases.map((a) => `${d.cast(a, fs.find((f) => f.alias === a)!.type)} AS ${a}`),
        ...fs.filter((f) => !keyAliases.includes(f.alias)).map((f) => `${values(f)} AS ${f.alias}`),
        ...fs.filter((f) => keyAliases.includes(f.alias)).map((f) => `${values(f)} AS __v_${f.alias}`),
        `${r} AS __r`,
        `${cw} AS __cw`,
      ].join(', ');
    const none = (f: Field) => d.nullOf(f.type);
    const branches = [`SELECT ${row(0, '__b', d.cast('__w', 'integer'), (f) => d.cast(f.alias, f.type), d.nullOf('float'), d.nullOf('integer'))} FROM ${from}`];
    const groupBy = keyAliases.length ? ` GROUP BY ${keyAliases.join(', ')}` : '';
    for (const [i, alias] of rateColumns.entries()) {
      // One set of rate rows per column (__k = 3 + its index), shared by its RATE_* calculations.
      const n = numeric(d, fs.find((f) => f.alias === alias)!);
      const perGroup = `SELECT ${[...keyAliases, `${agg.rates(d.epochUs('__t'), n, '__b')} AS __rs`].join(', ')} FROM ${from} WHERE ${n} IS NOT NULL${groupBy}`;
      const pairs = `SELECT ${[...keyAliases, `${agg.unnest('__rs')} AS __x`].join(', ')} FROM (${perGroup}) AS rg`;
      branches.push(`SELECT ${row(3 + i, agg.element('__x', 1), d.nullOf('integer'), none, d.cast(agg.element('__x', 2), 'float'), d.nullOf('integer'))} FROM (${pairs}) AS rp`);
    }
    if (calcs.some((c) => c.op === 'CONCURRENCY')) {
      // Each span counts (weighted) in every bucket its [start, start + duration) overlaps, up to the window's last.
      const last = d.cast(`floor((${d.epochUs('__t')} + greatest(coalesce(__dur, 0), 0) * 1000 - 1) / ${gUs})`, 'integer');
      // (__w under another name: ClickHouse would read the branch's own NULL __w alias instead)
      const spans = `SELECT ${[...keyAliases, '__w AS __sw', `${agg.unnest(agg.range('__b', `least(greatest(${last}, __b), ${lastOfWindow})`))} AS __cb`].join(', ')} FROM ${from}`;
      branches.push(`SELECT ${row(2, '__cb', d.nullOf('integer'), none, d.nullOf('float'), d.cast('__sw', 'integer'))} FROM (${spans}) AS cs`);
    }
    return `(${branches.join('\nUNION ALL\n')}) AS x`;
  };
  const nestedLevel = (rawFrom: string, keys: string[]): string => {
    const agg = d.nested!;
    const from = extraOps ? withExtraRows(rawFrom) : rawFrom;
    const inner = [...keys, 'count(*) AS __rows'];
    const outer = [...keys, '__rows'];
    const w = input.weighted;
    for (const c of calcs) {
      // (With extra rows, a breakdown key's own values are read from __v_<alias>.)
      const n = c.field && numeric(d, extraOps && keyAliases.includes(c.field.alias) ? { ...c.field, alias: `__v_${c.field.alias}` } : c.field);
      const p = PERCENTILES[c.op];
      const plain = (expr: string) => {
        inner.push(`${expr} AS ${c.alias}`);
        outer.push(c.alias);
      };
      if (c.op === 'COUNT') plain(w ? 'coalesce(sum(__w), 0)' : extraOps ? 'sum(CASE WHEN __k = 0 THEN 1 ELSE 0 END)' : 'count(*)');
      else if (c.op === 'SUM') plain(`coalesce(sum(${w ? `${n} * __w` : n}), 0)`);
      else if (c.op === 'AVG') plain(w ? `sum(${n} * __w) / sum(CASE WHEN ${n} IS NOT NULL THEN __w END)` : `avg(${n})`);
      else if (c.op === 'MAX') plain(`max(${n})`);
      else if (c.op === 'MIN') plain(`min(${n})`);
      else if (c.op === 'COUNT_DISTINCT') plain(agg.countDistinct(c.field!.alias));
      else if (p !== undefined) {
        // (With every weight 1, or one rate for every event, the values alone, sorted: half the
        // memory, no cumulative sums.)
        const pw = input.weightedPercentiles ?? w;
        inner.push(`${pw ? agg.sortedWeighted(n!, '__w') : agg.sorted(n!)} AS __q_${c.alias}`);
        const k = Math.round(p * 1000);
        outer.push(`${pw ? agg.nearestRank(`__q_${c.alias}`, k) : agg.nearestRankOfSorted(`__q_${c.alias}`, k)} AS ${c.alias}`);
      } else if (c.op === 'HEATMAP') {
        // Bounds over every matching event (as in the other plan): the same cells in every part.
        inner.push(`${agg.sortedWeighted(n!, w ? '__w' : '1')} AS __q_${c.alias}`);
        const all = `FROM (SELECT * FROM ${nestedF} WHERE ${n} IS NOT NULL) AS hb`;
        outer.push(
          `(SELECT min(${n}) ${all}) AS __lo_${c.alias}`,
          `(SELECT greatest((max(${n}) - min(${n})) / ${HEATMAP_BUCKETS}, 1e-9) ${all}) AS __width_${c.alias}`,
          `${agg.heatmapCells(`__q_${c.alias}`, `__lo_${c.alias}`, `__width_${c.alias}`, HEATMAP_BUCKETS)} AS ${c.alias}`,
        );
      } else if (c.op === 'CONCURRENCY') plain(keys.includes('__b') ? 'sum(__cw)' : agg.busiestBucket('__b', '__cw', '__k = 2'));
      else if (c.op === 'RATE_AVG' || c.op === 'RATE_SUM' || c.op === 'RATE_MAX') {
        const f = { RATE_AVG: 'avg', RATE_SUM: 'sum', RATE_MAX: 'max' }[c.op];
        plain(`${f}(CASE WHEN __k = ${3 + rateColumns.indexOf(c.field!.alias)} THEN __r END)`);
      } else throw new UnsupportedByEngine(c.op, d.name);
    }
    return `SELECT ${outer.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${from}${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}) AS l WHERE __rows > 0`;
  };
  const nestedPart = (part: 'results' | 'totals' | 'totalSeries'): Plan => {
    let sql: string;
    if (part === 'results') sql = topSelect(`(${nestedLevel(nestedF, keyAliases)}) AS r`);
    else if (part === 'totals') sql = nestedLevel(nestedF, []);
    else sql = `SELECT * FROM (${nestedLevel(nestedF, ['__b'])}) AS ts ORDER BY __b`;
    return { sql, params: part === 'results' ? params : params.slice(0, paramsBeforeHavings), ...shape };
  };
  const nestedOfGroups = (part: 'series' | 'other', groups: Record<string, unknown>[]): Plan => {
    const ps = params.slice(0, paramsBeforeHavings);
    const bindKey = (v: unknown) => {
      ps.push(v ?? null);
      return `$${ps.length}`;
    };
    // Which events belong to the result groups.
    const inGroups =
      keyAliases.length === 0
        ? d.bool(groups.length > 0)
        : groups
            .map((g) => `(${breakdowns.map((b) => d.nested!.nullSafeEq(b.field.alias, d.cast(bindKey(g[b.field.alias]), b.field.type))).join(' AND ')})`)
            .join(' OR ') || d.bool(false);
    const sql =
      part === 'series'
        ? `SELECT * FROM (${nestedLevel(`(SELECT * FROM ${nestedF} WHERE ${inGroups}) AS ft`, [...keyAliases, '__b'])}) AS s ORDER BY __b${keyAliases.map((k) => `, ${k}`).join('')}`
        : nestedLevel(`(SELECT * FROM ${nestedF} WHERE NOT (${inGroups})) AS fo`, []);
    return { sql, params: ps, ...shape };
  };

  return {
    ofGroups,
    nestedPart,
    nestedOfGroups,
    scan: (): Scan => ({ dialect: d, prelude: d.nested ? '' : prelude, f: d.nested ? nestedF : 'f', params: [...params.slice(0, paramsBeforeHavings)], fields: [...fields.values()] }),
    part: (part: 'results' | 'totals' | 'totalSeries'): Plan => ({
      sql: statements[part](),
      // Havings bind their values only in the parts that use them.
      params: part === 'totals' || part === 'totalSeries' ? params.slice(0, paramsBeforeHavings) : params,
      ...shape,
    }),
    combined,
  };
}

/** SQL reading a field as a number (text that is not a number reads as null). */
export function numeric(d: SqlDialect, f: Pick<Field, 'alias' | 'type'>): string {
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

/**
 * CTEs answering the sample-weighted nearest-rank percentile `p` of `value` over `from` per `keys`
 * as column `alias` of CTE `name`: per group, the smallest value whose cumulative weight (`__w`)
 * reaches p × the group's total weight. Sorting every event of the window with a window function
 * cost 36x DuckDB's own quantile_disc on 10M events, so it takes two passes instead:
 * 1. each group's weight per coarse bucket of the value (`name_h`), then, in that small table,
 *    the bucket where the cumulative weight first reaches p × total and the weight below it
 *    (`name_t`);
 * 2. only the events of that bucket, sorted, their cumulative weight counted on from there.
 * The dialect's bucket is exactly monotone (v ≤ v' ⇒ bucket(v) ≤ bucket(v')), so every event of
 * a lower bucket is smaller than every event of the chosen one and the answer is the exact one.
 */
function weightedPercentileCtes(d: SqlDialect, name: string, alias: string, from: string, keys: string[], value: string, p: number): string[] {
  const bucket = (v: string) => d.monotoneBucket(v);
  const partition = keys.length ? `PARTITION BY ${keys.join(', ')} ` : '';
  const groupBy = (extra: string[]) => (keys.length || extra.length ? ` GROUP BY ${[...keys, ...extra].join(', ')}` : '');
  // The chosen buckets' keys under names of their own, so that the join below leaves the event's
  // columns (a key may also be the value's field) unambiguous.
  const picked = keys.map((k, i) => `${k} AS __qk${i}`);
  const on = [...keys.map((k, i) => `__e.${k} IS NOT DISTINCT FROM __q.__qk${i}`), `${bucket(value)} = __q.__qb`].join(' AND ');
  return [
    `${name}_h AS (SELECT ${[...keys, `${bucket(value)} AS __qb`, 'sum(__w) AS __bw'].join(', ')} FROM ${from} WHERE ${value} IS NOT NULL${groupBy(['__qb'])})`,
    `${name}_t AS (SELECT ${[...picked, '__qb', '__cum - __bw AS __before', '__tot'].join(', ')} FROM (` +
      `SELECT *, sum(__bw) OVER (${partition}ORDER BY __qb ROWS UNBOUNDED PRECEDING) AS __cum, sum(__bw) OVER (${partition.trim()}) AS __tot FROM ${name}_h) ` +
      `WHERE __cum >= ${p} * __tot AND __cum - __bw < ${p} * __tot)`,
    `${name} AS (SELECT ${[...keys, `min(__v) FILTER (WHERE __before + __cum >= ${p} * __tot) AS ${alias}`].join(', ')} FROM (` +
      `SELECT ${[...keys.map((k) => `__e.${k} AS ${k}`), `${value} AS __v`, '__q.__before', '__q.__tot', `sum(__e.__w) OVER (${keys.length ? `PARTITION BY ${keys.map((k) => `__e.${k}`).join(', ')} ` : ''}ORDER BY ${value} ROWS UNBOUNDED PRECEDING) AS __cum`].join(', ')} ` +
      `FROM ${from} __e JOIN ${name}_t __q ON ${on} WHERE ${value} IS NOT NULL)${groupBy([])})`,
  ];
}

/** The aggregates of one grouping level, as CTEs named `<name>` (and `<name>_…` helpers). */
class LevelBuilder {
  constructor(
    private readonly calcs: Calc[],
    /** The breakdown keys: RATE_* differences are taken within each group's own sequence. */
    private readonly groupKeys: string[],
    private readonly input: PlanInput,
    private readonly gUs: number,
  ) {}

  ctes(name: string, from: string, keys: string[]): string {
    const d = this.input.dialect;
    const ctes: string[] = [];
    const keyList = keys.join(', ');
    const groupBy = keys.length ? ` GROUP BY ${keyList}` : ' HAVING count(*) > 0';
    const partition = (ks: string[]) => (ks.length ? `PARTITION BY ${ks.join(', ')} ` : '');
    const select = (exprs: string[]) => [...keys, ...exprs].join(', ');

    const plain: string[] = ['count(*) AS __rows'];
    const joins: { cte: string; aliases: string[] }[] = [];
    for (const c of this.calcs) {
      const n = c.field && numeric(d, c.field);
      const p = PERCENTILES[c.op];
      const w = this.input.weighted;
      if (c.op === 'COUNT') plain.push(w ? `coalesce(sum(__w), 0) AS ${c.alias}` : `count(*) AS ${c.alias}`);
      else if (c.op === 'SUM') plain.push(`coalesce(sum(${w ? `${n} * __w` : n}), 0) AS ${c.alias}`);
      else if (c.op === 'AVG') plain.push(w ? `sum(${n} * __w) / sum(CASE WHEN ${n} IS NOT NULL THEN __w END) AS ${c.alias}` : `avg(${n}) AS ${c.alias}`);
      else if (c.op === 'MAX') plain.push(`max(${n}) AS ${c.alias}`);
      else if (c.op === 'MIN') plain.push(`min(${n}) AS ${c.alias}`);
      else if (c.op === 'COUNT_DISTINCT') plain.push(`count(DISTINCT ${c.field!.alias}) AS ${c.alias}`);
      else if (p !== undefined && !(this.input.weightedPercentiles ?? w)) plain.push(`quantile_disc(${n}, ${p}) AS ${c.alias}`);
      else if (p !== undefined) {
        // Sample-weighted nearest rank: the smallest value whose cumulative weight reaches p × total.
        const cte = `${name}_${c.alias}`;
        ctes.push(...weightedPercentileCtes(d, cte, c.alias, from, keys, n!, p));
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'HEATMAP') {
        const cte = `${name}_${c.alias}`;
        const bounds = `${cte}_bounds`;
        ctes.push(
          // Bounds over every matching event (f), whatever the level reads: the same buckets in
          // results, series, totals and other.
          `${bounds} AS (SELECT min(${n}) AS lo, greatest((max(${n}) - min(${n})) / ${HEATMAP_BUCKETS}, 1e-9) AS width FROM f)`,
          `${cte}_cells AS (SELECT ${select([`least(floor((${n} - lo) / width), ${HEATMAP_BUCKETS - 1}) AS __hb`, 'any_value(lo) AS lo', 'any_value(width) AS width', 'sum(__w) AS __n'])} ` +
            `FROM ${from}, ${bounds} WHERE ${n} IS NOT NULL GROUP BY ${[...keys, '__hb'].join(', ')})`,
          `${cte} AS (SELECT ${select([`to_json(list({'lower': lo + __hb * width, 'upper': lo + (__hb + 1) * width, 'count': __n} ORDER BY __hb))::VARCHAR AS ${c.alias}`])} ` +
            `FROM ${cte}_cells${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'CONCURRENCY') {
        // Each span counts (weighted) in every bucket its [start, start + duration) overlaps;
        // a level without buckets takes the busiest bucket.
        const cte = `${name}_${c.alias}`;
        const spanKeys = keys.filter((k) => k !== '__b');
        const start = d.epochUs('__t');
        const last = `CAST(floor((${start} + greatest(coalesce(__dur, 0), 0) * 1000 - 1) / ${this.gUs}) AS BIGINT)`;
        const lastOfWindow = Math.floor((Math.trunc(this.input.end * 1_000_000) - 1) / this.gUs);
        const endBucket = `least(greatest(${last}, __b), ${lastOfWindow})`;
        ctes.push(
          `${cte}_spans AS (SELECT ${[...spanKeys, '__w', `unnest(range(__b, ${endBucket} + 1)) AS __cb`].join(', ')} FROM ${from})`,
          `${cte}_per AS (SELECT ${[...spanKeys, '__cb AS __b', 'sum(__w) AS __n'].join(', ')} FROM ${cte}_spans GROUP BY ${[...spanKeys, '__cb'].join(', ')})`,
          keys.includes('__b')
            ? `${cte} AS (SELECT ${select([`__n AS ${c.alias}`])} FROM ${cte}_per)`
            : `${cte} AS (SELECT ${select([`max(__n) AS ${c.alias}`])} FROM ${cte}_per${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'RATE_AVG' || c.op === 'RATE_SUM' || c.op === 'RATE_MAX') {
        // Per-second change between consecutive events of the same group, ordered by time.
        const cte = `${name}_${c.alias}`;
        // Ties at one instant are ordered by value, so which value the next rate starts from is defined.
        const w = `(${partition(this.groupKeys)}ORDER BY __t, ${n})`;
        const agg = { RATE_AVG: 'avg', RATE_SUM: 'sum', RATE_MAX: 'max' }[c.op];
        ctes.push(
          `${cte} AS (SELECT ${select([`${agg}(__r) AS ${c.alias}`])} FROM (` +
            `SELECT ${[...new Set([...keys, ...this.groupKeys])].join(', ')}${keys.length || this.groupKeys.length ? ', ' : ''}` +
            `(${n} - lag(${n}) OVER ${w}) / ((${d.epochUs('__t')} - ${d.epochUs(`lag(__t) OVER ${w}`)}) / 1000000) AS __r FROM ${from} WHERE ${n} IS NOT NULL` +
            `) WHERE __r IS NOT NULL AND isfinite(__r)${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      }
    }

    ctes.push(`${name}_plain AS (SELECT ${select(plain)} FROM ${from}${groupBy})`);
    // The rows: the keys where events start; in a series with CONCURRENCY also the buckets that
    // only spans still running cover (there COUNT and SUM are 0, the other calculations null).
    const running = keys.includes('__b')
      ? joins.filter((j) => this.calcs.some((c) => c.op === 'CONCURRENCY' && j.aliases.includes(c.alias)))
      : [];
    let rows = `${name}_plain`;
    if (running.length > 0) {
      rows = `${name}_rows`;
      ctes.push(`${rows} AS (${[`${name}_plain`, ...running.map((j) => j.cte)].map((t) => `SELECT ${keyList} FROM ${t}`).join(' UNION ')})`);
      joins.unshift({ cte: `${name}_plain`, aliases: [] });
    }
    const on = (other: string) => keys.map((k) => `${rows}.${k} IS NOT DISTINCT FROM ${other}.${k}`).join(' AND ') || 'true';
    const cols = [
      ...keys.map((k) => `${rows}.${k}`),
      ...this.calcs.map((c) => {
        const j = joins.find((x) => x.aliases.includes(c.alias));
        if (j) return `${j.cte}.${c.alias}`;
        const zero = running.length > 0 && (c.op === 'COUNT' || c.op === 'SUM' || c.op === 'COUNT_DISTINCT');
        return zero ? `coalesce(${name}_plain.${c.alias}, 0) AS ${c.alias}` : `${name}_plain.${c.alias}`;
      }),
    ];
    ctes.push(`${name} AS (SELECT ${cols.join(', ')} FROM ${rows}${joins.map((j) => ` LEFT JOIN ${j.cte} ON ${on(j.cte)}`).join('')})`);
    return ctes.join(',\n');
  }
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

/** ORDER BY of the result groups: the spec's orders, else the first calculation descending; keys break ties. */
function orderSql(spec: QuerySpec, calcs: Calc[], breakdowns: { name: string; field: Field }[]): string {
  const terms: string[] = [];
  for (const o of spec.orders ?? []) {
    const dir = o.order === 'descending' ? 'DESC' : 'ASC';
    const alias = o.op ? calcAlias(calcs, o.op, o.column) : breakdowns.find((b) => b.name === o.column)?.field.alias;
    if (alias) terms.push(`${alias} ${dir} NULLS LAST`);
  }
  if (terms.length === 0) {
    const first = calcs.find((c) => c.op !== 'HEATMAP');
    if (first) terms.push(`${first.alias} DESC NULLS LAST`);
  }
  for (const b of breakdowns) terms.push(`${b.field.alias} ASC NULLS LAST`);
  return terms.join(', ') || '1';
}
