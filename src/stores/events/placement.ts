// Where a field's values live in its dataset's table: the column registry's `physical` name, read
// and written only here. Datasets are wide (up to 2,000 fields per event, 10,000 per dataset) and
// most fields are sparse, but an engine cannot hold a table column per field: a DuckDB commit
// after a checkpoint pins a block per table column (256 KB), a ClickHouse insert buffers about
// 2-4 MB per column. So a dataset's first fields (up to the store's hot-column budget) get a
// typed column each, and the rest live as attributes in up to 16 buckets of key/value pairs (4 on DuckDB)
// (a text of entries on DuckDB, duckdb-attributes.ts; a pair of arrays on ClickHouse) keyed by
// the field's number, the value as text (read back through a cast to the field's stored type). A field
// moving from the attributes to a column of its own (promotion) is in both for a while: its new
// events in the column, its older ones still in the bucket until they are copied over.
// docs/wide-events.md has the layout, the figures it was chosen by and its limits.
//
//   c12          a table column (named c12)
//   a12.3        attribute 12 in bucket 3
//   c40+a12.3    moving: column c40 for new events, attribute 12 of bucket 3 for older ones
import type { ColumnType } from '../config/types.js';
import type { SqlDialect } from './engine.js';

/**
 * Attribute buckets per table, at most: a lookup reads one bucket, about 1/16 of an event's
 * attributes. (An event store may give a table fewer: DuckDB 4, where each bucket is a text per
 * event with a cost of its own, and fewer still to keep within its memory.)
 */
export const MAX_ATTRIBUTE_BUCKETS = 16;

export interface Attribute {
  /** The field's number, its key in the bucket (unique in the dataset). */
  key: number;
  bucket: number;
}

export interface Placement {
  /** The table column holding the field's values (its newer ones, while moving). */
  column?: string;
  /** Where the field's values are kept as an attribute (its older ones, while moving). */
  attribute?: Attribute;
}

const PLACEMENT = /^(?:c(\d+))?(?:\+?a(\d+)\.(\d+))?$/;

export function parsePlacement(physical: string): Placement {
  const m = PLACEMENT.exec(physical);
  if (!m || (m[1] === undefined && m[2] === undefined) || (m[1] !== undefined && m[2] !== undefined && !physical.includes('+'))) {
    throw new Error(`not a field placement: ${JSON.stringify(physical)}`);
  }
  const out: Placement = {};
  if (m[1] !== undefined) out.column = `c${m[1]}`;
  if (m[2] !== undefined) out.attribute = { key: Number(m[2]), bucket: Number(m[3]) };
  return out;
}

export const columnPlacement = (n: number): string => `c${n}`;
export const attributePlacement = (a: Attribute): string => `a${a.key}.${a.bucket}`;
export const movingPlacement = (column: string, a: Attribute): string => `${column}+${attributePlacement(a)}`;

/** Whether the field has a table column of its own (for new events). */
export const isColumn = (physical: string): boolean => physical.startsWith('c');

/** The numbers a placement uses (a dataset's next field number is past every one of them). */
export function placementNumbers(physical: string): number[] {
  const p = parsePlacement(physical);
  const out: number[] = [];
  if (p.column) out.push(Number(p.column.slice(1)));
  if (p.attribute) out.push(p.attribute.key);
  return out;
}

/**
 * SQL of a field's stored value, as its stored type (what a column of that type holds): the
 * column, the attribute's text cast to the type, or while moving the column where it has a value
 * and the attribute elsewhere.
 */
export function storedValueSql(d: SqlDialect, physical: string, stored: ColumnType): string {
  const p = parsePlacement(physical);
  const attribute = p.attribute && d.attribute(p.attribute.bucket, p.attribute.key, stored);
  if (!p.column) return attribute!;
  const column = d.quoteIdent(p.column);
  return attribute ? `coalesce(${column}, ${attribute})` : column;
}

/** A table's shape as the event store reports it: its field columns and how many attribute buckets it has (0, 1, …). */
export interface TableShape {
  columns: { physical: string; type: ColumnType }[];
  buckets: number;
}

/** Whether a field's values can be read from the table (its column, or its bucket, exist). */
export function isStored(shape: TableShape, physical: string): boolean {
  const p = parsePlacement(physical);
  if (p.attribute && p.attribute.bucket >= shape.buckets) return false;
  return !p.column || shape.columns.some((c) => c.physical === p.column);
}

/** The attribute bucket a new field goes to: of the first `buckets`, the one with the fewest expected values per event. */
export function emptiestBucket(load: readonly number[], buckets: number): number {
  let best = 0;
  for (let b = 1; b < buckets; b++) if ((load[b] ?? 0) < (load[best] ?? 0)) best = b;
  return best;
}

/**
 * A value as the text an attribute keeps (read back through a cast to the field's stored type):
 * strings as they are, integers in decimal, floats in shortest round-trip form, booleans
 * `true`/`false` (what DuckDB's and ClickHouse's casts from text read back exactly).
 */
export function attributeText(kind: 'integer' | 'float' | 'boolean', x: number): string {
  if (kind === 'boolean') return x !== 0 ? 'true' : 'false';
  return String(x);
}
