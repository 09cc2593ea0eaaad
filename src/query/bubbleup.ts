// BubbleUp: why is a selection of a query's events different from the rest of them?
//
// The query's events (its window, filters and calculated fields) are split in two: the
// selection (a time range, and optionally a range of one field's values: a region of a heatmap)
// and the baseline (every other event of the query). For every column the two distributions are
// compared, and the columns are ranked by how far apart they are:
//   - text, booleans, and numbers with at most 12 distinct values: each value's share of the
//     selection and of the baseline (missing counts as a value); the score is the largest
//     difference of one value's shares (0…1). The 20 values most common on either side are kept.
//   - other numbers: a 16-bin histogram between the 2nd and 98th percentile of both sides
//     together (values beyond fall in the end bins) plus "missing"; the score is the largest
//     difference between the two cumulative distributions (Kolmogorov–Smirnov), or of the shares
//     missing, whichever is larger.
// Shares are weighted by sample rate. The work is done by the event store in one statement on
// uniform samples of each side (at most SAMPLE_ROWS events each, so the cost of the comparison
// does not grow with the window); the sizes of both sides are counted exactly by a second
// statement. Both run under the query timeout.
import type { EventStore } from '../stores/events/types.js';
import { numeric, planScan, type Scan, type Source } from './plan.js';
import { withTables } from './run.js';
import { columnNames } from './events.js';
import type { QuerySpec } from './spec.js';

export const SAMPLE_ROWS = 25_000;
export const MAX_COLUMNS = 200;
const TOP_VALUES = 20;
const BINS = 16;
const CATEGORICAL_MAX = 12;

export interface Selection {
  /** Unix seconds, [start, end). */
  start: number;
  end: number;
  /** A field whose value must lie in [lower, upper] (either bound may be absent). */
  column?: string;
  lower?: number;
  upper?: number;
}

export interface Share {
  selection: number;
  baseline: number;
}
export interface ValueShare extends Share {
  value: string | null;
}
export interface BinShare extends Share {
  lower: number;
  upper: number;
}
export interface ColumnDifference {
  column: string;
  type: 'string' | 'integer' | 'float' | 'boolean';
  score: number;
  kind: 'values' | 'histogram';
  values?: ValueShare[];
  bins?: BinShare[];
  missing?: Share;
}
export interface BubbleUpAnswer {
  selection: { events: number; rows: number; sampled: number };
  baseline: { events: number; rows: number; sampled: number };
  columns: ColumnDifference[];
}

export interface BubbleUpOptions {
  /** The query's window, Unix seconds [start, end). */
  start: number;
  end: number;
  selection: Selection;
  /** Most columns answered (the best ranked). */
  limit: number;
  timeoutMs: number;
}

/** The columns compared: the visible columns of the sources, the most recently written first, but the selection's. */
export function comparedColumns(sources: Source[], exclude: string | undefined): string[] {
  return columnNames(sources, MAX_COLUMNS + 1)
    .filter((n) => n !== exclude)
    .slice(0, MAX_COLUMNS);
}

export async function bubbleUp(events: EventStore, allSources: Source[], spec: QuerySpec, opts: BubbleUpOptions): Promise<BubbleUpAnswer> {
  const sel = opts.selection;
  const sources = await withTables(events, allSources);
  const names = comparedColumns(sources, sel.column);
  const scan = planScan({ dialect: events.dialect, sources, spec: { filters: spec.filters, filter_combination: spec.filter_combination, calculated_fields: spec.calculated_fields }, start: opts.start, end: opts.end }, [
    ...names,
    ...(sel.column ? [sel.column] : []),
  ]);
  const deadline = Date.now() + opts.timeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const nested = !!events.dialect.nested;
  const counts = nested ? nestedCountsStatement(scan, sel) : countsStatement(scan, sel);
  const stats = nested ? nestedStatsStatement(scan, sel, names) : statsStatement(scan, sel, names);
  const [countRows, statRows] = await Promise.all([
    events.analyse(counts.sql, counts.params, remaining()),
    stats ? events.analyse(stats.sql, stats.params, remaining()) : Promise.resolve([]),
  ]);
  const c = countRows[0] ?? {};
  const answer: BubbleUpAnswer = {
    selection: { events: num(c.se), rows: num(c.sr), sampled: 0 },
    baseline: { events: num(c.be), rows: num(c.br), sampled: 0 },
    columns: [],
  };
  if (statRows.length > 0) {
    answer.selection.sampled = num(statRows[0].__ns);
    answer.baseline.sampled = num(statRows[0].__nb);
  }
  const fields = new Map(scan.fields.map((f) => [f.alias, f]));
  const byField = new Map<string, Record<string, unknown>[]>();
  for (const r of statRows) {
    const alias = String(r.__f);
    let list = byField.get(alias);
    if (!list) byField.set(alias, (list = []));
    list.push(r);
  }
  for (const [alias, rows] of byField) {
    const f = fields.get(alias);
    if (!f) continue;
    answer.columns.push(rankColumn(f.name, f.type, rows));
  }
  answer.columns.sort((a, b) => b.score - a.score || a.column.localeCompare(b.column));
  answer.columns = answer.columns.slice(0, opts.limit);
  return answer;
}

/** One column's comparison from its statistics rows (see the header). */
export function rankColumn(column: string, type: ColumnDifference['type'], rows: Record<string, unknown>[]): ColumnDifference {
  const ts = num(rows[0]?.__ts);
  const tr = num(rows[0]?.__tr);
  const share = (r: Record<string, unknown>): Share => ({
    selection: ts > 0 ? num(r.__s) / ts : 0,
    baseline: tr > 0 ? num(r.__r) / tr : 0,
  });
  const binned = rows.filter((r) => r.__bin !== null && r.__bin !== undefined);
  if (binned.length === 0) {
    const values = rows.map((r) => ({ value: r.__v === null || r.__v === undefined ? null : String(r.__v), ...share(r) }));
    values.sort((a, b) => Math.max(b.selection, b.baseline) - Math.max(a.selection, a.baseline) || String(a.value).localeCompare(String(b.value)));
    const score = Math.max(0, ...values.map((v) => Math.abs(v.selection - v.baseline)));
    return { column, type, score, kind: 'values', values };
  }
  const lo = num(binned[0].__lo);
  const width = num(binned[0].__width);
  const bins: BinShare[] = [];
  for (let i = 0; i < BINS; i++) bins.push({ lower: lo + i * width, upper: lo + (i + 1) * width, selection: 0, baseline: 0 });
  for (const r of binned) {
    const b = bins[Math.min(BINS - 1, Math.max(0, num(r.__bin)))];
    const s = share(r);
    b.selection += s.selection;
    b.baseline += s.baseline;
  }
  const missingRow = rows.find((r) => (r.__bin === null || r.__bin === undefined) && (r.__v === null || r.__v === undefined));
  const missing = missingRow ? share(missingRow) : { selection: 0, baseline: 0 };
  let cum = 0;
  let score = Math.abs(missing.selection - missing.baseline);
  for (const b of bins) {
    cum += b.selection - b.baseline;
    score = Math.max(score, Math.abs(cum));
  }
  return { column, type, score, kind: 'histogram', bins, missing };
}

const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : v === null || v === undefined ? 0 : Number(v));

/** The predicate "in the selection" over `f`, binding the selection's values. */
function selectionSql(scan: Scan, sel: Selection, bind: (v: unknown) => string): string {
  const d = scan.dialect;
  const t = (s: number) => d.timestamp(Math.trunc(s * 1_000_000));
  const terms = [`__t >= ${t(sel.start)}`, `__t < ${t(sel.end)}`];
  if (sel.column !== undefined) {
    const f = scan.fields.find((x) => x.name === sel.column)!;
    const n = numeric(scan.dialect, f);
    terms.push(`${n} IS NOT NULL`);
    if (sel.lower !== undefined) terms.push(`${n} >= ${d.cast(bind(sel.lower), 'float')}`);
    if (sel.upper !== undefined) terms.push(`${n} <= ${d.cast(bind(sel.upper), 'float')}`);
  }
  return `(${terms.join(' AND ')})`;
}

function binder(scan: Scan) {
  const params = [...scan.params];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  return { params, bind };
}

/** The exact weighted sizes (and rows) of both sides. */
function countsStatement(scan: Scan, sel: Selection) {
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const sql =
    `${scan.prelude},\nside AS (SELECT __w, coalesce(${inSel}, false) AS __in FROM f)\n` +
    'SELECT coalesce(sum(__w) FILTER (WHERE __in), 0) AS se, count(*) FILTER (WHERE __in) AS sr, ' +
    'coalesce(sum(__w) FILTER (WHERE NOT __in), 0) AS be, count(*) FILTER (WHERE NOT __in) AS br FROM side';
  return { sql, params };
}

/**
 * Per compared column, the weighted sums of each value (or histogram bin) on each side of the
 * samples, the `TOP_VALUES` most common on either side; each row also carries the sides' sampled
 * totals (`__ts`, `__tr`) and sizes (`__ns`, `__nb`), and a histogram's `__lo`/`__width`.
 */
function statsStatement(scan: Scan, sel: Selection, names: string[]) {
  if (names.length === 0) return undefined;
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const fields = names.map((n) => scan.fields.find((f) => f.name === n)!).filter(Boolean);
  const numbers = fields.filter((f) => f.type === 'integer' || f.type === 'float');
  const sample = (where: string) =>
    `(SELECT * FROM (SELECT * FROM sides WHERE ${where}) USING SAMPLE reservoir(${SAMPLE_ROWS} ROWS) REPEATABLE (17))`;
  const ctes = [
    `sides AS NOT MATERIALIZED (SELECT *, coalesce(${inSel}, false) AS __in FROM f)`,
    `b AS MATERIALIZED (SELECT * FROM ${sample('__in')} UNION ALL SELECT * FROM ${sample('NOT __in')})`,
    'tot AS MATERIALIZED (SELECT coalesce(sum(__w) FILTER (WHERE __in), 0) AS __ts, coalesce(sum(__w) FILTER (WHERE NOT __in), 0) AS __tr, ' +
      'count(*) FILTER (WHERE __in) AS __ns, count(*) FILTER (WHERE NOT __in) AS __nb FROM b)',
  ];
  if (numbers.length > 0) {
    const cols = numbers.flatMap((f) => {
      const n = numeric(scan.dialect, f);
      return [
        `approx_count_distinct(${f.alias}) AS d_${f.alias}`,
        `approx_quantile(${n}, 0.02) AS lo_${f.alias}`,
        `greatest((approx_quantile(${n}, 0.98) - approx_quantile(${n}, 0.02)) / ${BINS}, 1e-9) AS w_${f.alias}`,
      ];
    });
    ctes.push(`nb AS MATERIALIZED (SELECT ${cols.join(', ')} FROM b)`);
  }
  const sums = 'sum(__w) FILTER (WHERE __in) AS __s, sum(__w) FILTER (WHERE NOT __in) AS __r';
  const parts = fields.map((f) => {
    const name = `'${f.alias}'`; // (a planner alias: f0, f1, …)
    if (f.type !== 'integer' && f.type !== 'float') {
      return `SELECT ${name} AS __f, CAST(${f.alias} AS VARCHAR) AS __v, CAST(NULL AS BIGINT) AS __bin, CAST(NULL AS DOUBLE) AS __lo, CAST(NULL AS DOUBLE) AS __width, ${sums} FROM b GROUP BY 2`;
    }
    const n = numeric(scan.dialect, f);
    const categorical = `(d_${f.alias} <= ${CATEGORICAL_MAX})`;
    return (
      `SELECT ${name} AS __f, CASE WHEN ${categorical} OR ${n} IS NULL THEN CAST(${f.alias} AS VARCHAR) END AS __v, ` +
      `CASE WHEN NOT ${categorical} AND ${n} IS NOT NULL THEN CAST(least(greatest(floor((${n} - lo_${f.alias}) / w_${f.alias}), 0), ${BINS - 1}) AS BIGINT) END AS __bin, ` +
      `CASE WHEN NOT ${categorical} THEN lo_${f.alias} END AS __lo, CASE WHEN NOT ${categorical} THEN w_${f.alias} END AS __width, ${sums} ` +
      // (nb has one row: grouping by its columns only lets the SELECT read them)
      `FROM b, nb GROUP BY 2, 3, d_${f.alias}, lo_${f.alias}, w_${f.alias}`
    );
  });
  const sql =
    `${scan.prelude},\n${ctes.join(',\n')},\nstats AS (\n${parts.join('\nUNION ALL\n')}\n)\n` +
    'SELECT stats.*, tot.* FROM stats, tot ' +
    `QUALIFY row_number() OVER (PARTITION BY __f ORDER BY greatest(coalesce(__s, 0) / nullif(__ts, 0), coalesce(__r, 0) / nullif(__tr, 0)) DESC NULLS LAST, __v NULLS FIRST, __bin) <= ${TOP_VALUES}`;
  return { sql, params };
}

// ---- The same two statements for an engine without common table expressions, window functions
// or TABLESAMPLE (dialect.nested, ClickHouse 18.16): nested subqueries; the samples come from
// nested.sample, every column's rows from one pass over them (nested.unpivot), the top values
// per column from nested.limitBy.

/** The exact weighted sizes (and rows) of both sides. */
function nestedCountsStatement(scan: Scan, sel: Selection) {
  const d = scan.dialect;
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const sql =
    'SELECT coalesce(sum(CASE WHEN __in = 1 THEN __w END), 0) AS se, sum(CASE WHEN __in = 1 THEN 1 ELSE 0 END) AS sr, ' +
    'coalesce(sum(CASE WHEN __in = 0 THEN __w END), 0) AS be, sum(CASE WHEN __in = 0 THEN 1 ELSE 0 END) AS br ' +
    `FROM (SELECT __w, ${d.boolToInt(`coalesce(${inSel}, ${d.bool(false)})`)} AS __in FROM ${scan.f}) AS side`;
  return { sql, params };
}

function nestedStatsStatement(scan: Scan, sel: Selection, names: string[]) {
  if (names.length === 0) return undefined;
  const d = scan.dialect;
  const agg = d.nested!;
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const fields = names.map((n) => scan.fields.find((f) => f.name === n)!).filter(Boolean);
  const numbers = fields.filter((f) => f.type === 'integer' || f.type === 'float');
  const sides = `(SELECT *, ${d.boolToInt(`coalesce(${inSel}, ${d.bool(false)})`)} AS __in FROM ${scan.f}) AS sides`;
  const b = `(SELECT * FROM (${agg.sample(sides, '__in = 1', SAMPLE_ROWS)}) AS bs UNION ALL SELECT * FROM (${agg.sample(sides, '__in = 0', SAMPLE_ROWS)}) AS bb)`;
  const tot =
    'SELECT coalesce(sum(CASE WHEN __in = 1 THEN __w END), 0) AS __ts, coalesce(sum(CASE WHEN __in = 0 THEN __w END), 0) AS __tr, ' +
    `sum(CASE WHEN __in = 1 THEN 1 ELSE 0 END) AS __ns, sum(CASE WHEN __in = 0 THEN 1 ELSE 0 END) AS __nb FROM ${b} AS b`;
  const nb = numbers.flatMap((f) => {
    const n = numeric(d, f);
    return [
      `${agg.approxDistinct(f.alias)} AS d_${f.alias}`,
      `${agg.approxQuantile(n, 0.02)} AS lo_${f.alias}`,
      `greatest((${agg.approxQuantile(n, 0.98)} - ${agg.approxQuantile(n, 0.02)}) / ${BINS}, 1e-9) AS w_${f.alias}`,
    ];
  });
  // One row per (event, column): the column's value as text (categorical), or its bin.
  const tuples = fields.map((f) => {
    const text = d.expr.text(f.alias, f.type);
    const none = [d.nullOf('integer'), d.nullOf('float'), d.nullOf('float')];
    if (f.type !== 'integer' && f.type !== 'float') return [`'${f.alias}'`, d.cast(text, 'string'), ...none]; // (a planner alias: f0, f1, …)
    const n = numeric(d, f);
    const categorical = `(d_${f.alias} <= ${CATEGORICAL_MAX})`;
    return [
      `'${f.alias}'`,
      `CASE WHEN ${categorical} OR ${n} IS NULL THEN ${d.cast(text, 'string')} ELSE ${d.nullOf('string')} END`,
      `CASE WHEN NOT ${categorical} AND ${n} IS NOT NULL THEN ${d.cast(`least(greatest(floor((${n} - lo_${f.alias}) / w_${f.alias}), 0), ${BINS - 1})`, 'integer')} ELSE ${d.nullOf('integer')} END`,
      `CASE WHEN NOT ${categorical} THEN ${d.cast(`lo_${f.alias}`, 'float')} ELSE ${d.nullOf('float')} END`,
      `CASE WHEN NOT ${categorical} THEN ${d.cast(`w_${f.alias}`, 'float')} ELSE ${d.nullOf('float')} END`,
    ];
  });
  const from = nb.length ? `${b} AS b CROSS JOIN (SELECT ${nb.join(', ')} FROM ${b} AS b) AS nb` : `${b} AS b`;
  const el = (i: number) => agg.element('__p', i);
  const stats =
    `SELECT ${el(1)} AS __f, ${el(2)} AS __v, ${el(3)} AS __bin, ${el(4)} AS __lo, ${el(5)} AS __width, ` +
    'sum(CASE WHEN __in = 1 THEN __w END) AS __s, sum(CASE WHEN __in = 0 THEN __w END) AS __r ' +
    `FROM (SELECT __in, __w, ${agg.unpivot(tuples)} AS __p FROM ${from}) AS p GROUP BY __f, __v, __bin, __lo, __width`;
  const share = (x: string, total: string) => `coalesce(${x} / ${d.expr.nullIf(total, "0")}, 0)`;
  const sql =
    'SELECT __f, __v, __bin, __lo, __width, __s, __r, __ts, __tr, __ns, __nb ' +
    `FROM (${stats}) AS s CROSS JOIN (${tot}) AS tot ` +
    `ORDER BY __f, greatest(${share('__s', '__ts')}, ${share('__r', '__tr')}) DESC, __v NULLS FIRST, __bin ${agg.limitBy(TOP_VALUES, ['__f'])}`;
  return { sql, params };
}
