// BubbleUp: why is a selection of a query's events different from the rest of them, or from the
// same selection earlier?
//
// The query's events (its window, filters and calculated fields) are split in two: the
// selection (a time range, and optionally a range of one field's values: a region of a heatmap)
// and the baseline: every other event of the query ("rest"), or ("past") the events the
// selection would hold one offset earlier (its time range shifted back, the same value bounds and
// filters; the scan then reads those two time ranges only). For every column the two
// distributions are compared, and the columns are ranked by how far apart they are:
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
// statement. Both run under the query timeout; each engine writes them its own way
// (events.dialect.bubbleUp, src/stores/events/statements.ts).
import type { EventStore } from '../stores/events/types.js';
import type { BubbleUpLimits } from '../stores/events/statements.js';
import { numeric, planScan, type Scan, type Source } from './plan.js';
import { withTables } from './run.js';
import { columnNames } from './events.js';
import type { QuerySpec } from './spec.js';

export const SAMPLE_ROWS = 25_000;
export const MAX_COLUMNS = 200;
const TOP_VALUES = 20;
const BINS = 16;
const CATEGORICAL_MAX = 12;
const LIMITS: BubbleUpLimits = { sampleRows: SAMPLE_ROWS, topValues: TOP_VALUES, bins: BINS, categoricalMax: CATEGORICAL_MAX };

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
  /** `start_time` and `end_time` (Unix seconds) for the "past" baseline: its time range. */
  baseline: { kind: 'rest' | 'past'; start_time?: number; end_time?: number; events: number; rows: number; sampled: number };
  columns: ColumnDifference[];
}

export interface BubbleUpOptions {
  /** The query's window, Unix seconds [start, end). */
  start: number;
  end: number;
  selection: Selection;
  /** The baseline's time range when it is the selection earlier (not overlapping it); none: the rest of the window. */
  past?: { start: number; end: number };
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
  const past = opts.past;
  const ranges = past ? [{ start: sel.start, end: sel.end }, past] : undefined;
  const queried = { filters: spec.filters, filter_combination: spec.filter_combination, calculated_fields: spec.calculated_fields };
  const scan = planScan({ dialect: events.dialect, sources, spec: queried, start: opts.start, end: opts.end, ranges }, [
    ...names,
    ...(sel.column ? [sel.column] : []),
  ]);
  const deadline = Date.now() + opts.timeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const counts = countsStatement(scan, sel, past);
  const stats = statsStatement(scan, sel, names, past);
  const [countRows, statRows] = await Promise.all([
    events.analyse(counts.sql, counts.params, remaining()),
    stats ? events.analyse(stats.sql, stats.params, remaining()) : Promise.resolve([]),
  ]);
  const c = countRows[0] ?? {};
  const answer: BubbleUpAnswer = {
    selection: { events: num(c.se), rows: num(c.sr), sampled: 0 },
    baseline: { kind: past ? 'past' : 'rest', ...(past && { start_time: past.start, end_time: past.end }), events: num(c.be), rows: num(c.br), sampled: 0 },
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

/** The predicate "in the selection" over `f` (or, with `range`, in the selection moved to that time range), binding the selection's values. */
function selectionSql(scan: Scan, sel: Selection, bind: (v: unknown) => string, range: { start: number; end: number } = sel): string {
  const d = scan.dialect;
  const t = (s: number) => d.timestamp(Math.trunc(s * 1_000_000));
  const terms = [`__t >= ${t(range.start)}`, `__t < ${t(range.end)}`];
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
function countsStatement(scan: Scan, sel: Selection, past: BubbleUpOptions['past']) {
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const inBase = past && selectionSql(scan, sel, bind, past);
  return { sql: scan.dialect.bubbleUp.counts(scan, inSel, inBase), params };
}

/** Per compared column, the weighted sums of each value (or histogram bin) on each side of the samples. */
function statsStatement(scan: Scan, sel: Selection, names: string[], past: BubbleUpOptions['past']) {
  if (names.length === 0) return undefined;
  const { params, bind } = binder(scan);
  const inSel = selectionSql(scan, sel, bind);
  const inBase = past && selectionSql(scan, sel, bind, past);
  const fields = names.map((n) => scan.fields.find((f) => f.name === n)!).filter(Boolean);
  return { sql: scan.dialect.bubbleUp.stats(scan, inSel, fields, LIMITS, inBase), params };
}
