// Pure rules of the query builder: which clause an API problem belongs to, how a typed filter
// value becomes the spec's value, and which rows left blank are dropped before sending.
import type { Filter, FilterOp, QueryOp, QuerySpec } from './api/types.js';

export const NO_COLUMN: QueryOp[] = ['COUNT', 'CONCURRENCY'];
export const NO_VALUE: FilterOp[] = ['exists', 'does-not-exist'];
export const LIST_VALUE: FilterOp[] = ['in', 'not-in'];

/** Which clause a problem's field belongs to. */
export function clauseOf(field: string): string {
  const head = field.replace(/^query\./, '').split(/[.[]/)[0];
  const map: Record<string, string> = {
    calculations: 'visualize', filters: 'where', filter_combination: 'where', breakdowns: 'group', orders: 'order', limit: 'limit',
    havings: 'having', calculated_fields: 'calculated', time_range: 'time', start_time: 'time', end_time: 'time', granularity: 'time',
  };
  return map[head] ?? 'other';
}

/** A filter value as typed, in the column's type: numbers for numeric columns, lists for in/not-in. */
export function filterValue(op: FilterOp, text: string, type: string | undefined): Filter['value'] {
  if (NO_VALUE.includes(op)) return undefined;
  if (LIST_VALUE.includes(op)) return text.split(',').map((s) => s.trim()).filter(Boolean);
  const t = text.trim();
  if ((type === 'integer' || type === 'float') && t !== '' && Number.isFinite(Number(t))) return Number(t);
  if (type === 'boolean' && (t === 'true' || t === 'false')) return t === 'true';
  return text;
}

/** The spec to send: rows left blank in the builder are dropped. */
export function cleanSpec(spec: QuerySpec): QuerySpec {
  const out: QuerySpec = { ...spec };
  if (out.calculations) out.calculations = out.calculations.filter((c) => NO_COLUMN.includes(c.op) || (c.column ?? '').trim() !== '');
  if (out.filters) out.filters = out.filters.filter((f) => (f.column ?? '').trim() !== '');
  if (out.breakdowns) out.breakdowns = out.breakdowns.map((b) => b.trim()).filter(Boolean);
  if (out.calculated_fields) out.calculated_fields = out.calculated_fields.filter((c) => c.name.trim() !== '' || c.expression.trim() !== '');
  return out;
}
