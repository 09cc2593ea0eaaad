// What the ingest writer's modules share about a dataset's columns: the registry as the writer
// holds it (Registry), which values a column of each stored type holds as they are, and the
// widening rule (integer → float → string, any other mix → string, so no value is ever lost).
import type { Column, ColumnType } from '../stores/config/types.js';
import type { Scalar } from '../stores/events/types.js';
import { Value, bit, kindOf, type EventColumns } from '../stores/events/columns.js';
import type { NormalisedEvent } from './normalise.js';
import type { PlacementState } from './field-placement.js';

/** Where the writer reports repairs of the column registry (the app's logger). */
export interface WriterLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A dataset's columns as the writer knows them (column-registry.ts loads and keeps them). */
export interface Registry {
  byName: Map<string, Column>;
  /** How many fields have columns, how full each attribute bucket is, the next free field number (field-placement.ts). */
  placement: PlacementState;
  /** The table's attribute buckets (0: none yet; the first attribute brings the event store's number of them). */
  buckets: number;
  /** performance.now() when loaded. */
  loadedAt: number;
}

const TYPE_OF_KIND: Record<number, ColumnType> = {
  [Value.String]: 'string',
  [Value.Integer]: 'integer',
  [Value.Float]: 'float',
  [Value.Boolean]: 'boolean',
};

export function inferType(v: Scalar): ColumnType {
  return TYPE_OF_KIND[kindOf(v)];
}

/** The kinds of value (columns.ts masks) a column of each stored type holds as they are. */
const HOLDS: Record<ColumnType, number> = {
  string: bit(Value.String) | bit(Value.Integer) | bit(Value.Float) | bit(Value.Boolean),
  float: bit(Value.Integer) | bit(Value.Float),
  integer: bit(Value.Integer),
  boolean: bit(Value.Boolean),
};

/**
 * The fast path of placing a request's events: every field already has a column whose type
 * holds all of the request's values, so they are stored as they are, checked once per column.
 */
export function columnsFit(reg: Registry, cols: EventColumns): boolean {
  for (const f of cols.fields) {
    const col = reg.byName.get(f.name);
    if (col === undefined || (f.mask & ~HOLDS[col.storedType]) !== 0) return false;
  }
  return true;
}

/** The same for one event, on the path where a request's columns did not all fit. */
export function fitsKnownColumns(reg: Registry, e: NormalisedEvent): boolean {
  for (const [k, v] of e.fields) {
    const col = reg.byName.get(k);
    if (col === undefined || (bit(kindOf(v)) & ~HOLDS[col.storedType]) !== 0) return false;
  }
  return true;
}

export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b) return a;
  if ((a === 'integer' && b === 'float') || (a === 'float' && b === 'integer')) return 'float';
  return 'string';
}
