// The event store: one table per dataset with the event time first, then the sample rate and
// the ingest time, then a typed column per hot field (named c1, c2, …) and, once a dataset has
// more fields than its hot columns, the attribute buckets that hold the rest (placement.ts).
// Field names live in the config store's column registry, because field names are
// case-sensitive and arbitrary; each registered field's `physical` says where it is stored.
import type { ColumnType } from '../config/types.js';
import type { EventColumns } from './columns.js';
import type { EngineDialect } from './statements.js';
import type { Attribute, TableShape } from './placement.js';

export type Scalar = string | number | boolean;

export interface PhysicalColumn {
  physical: string;
  type: ColumnType;
}

export interface AppendBatch {
  datasetId: string;
  /** The events (times in microseconds since the epoch), in parts: one per request. */
  parts: EventColumns[];
  /**
   * When given, the parts' columns are named by field name, and this maps each name to its
   * placement (placement.ts; the ingest writer passes its column registry). Otherwise they are
   * named by physical column name.
   */
  columns?: ReadonlyMap<string, { readonly physical: string }>;
  /**
   * With `columns`: each part's fields' entries of it, in field order, looked up once by the
   * ingest writer (a wide request names thousands of fields); absent: looked up by name.
   */
  resolved?: readonly (readonly ({ readonly physical: string } | undefined)[])[];
}

/** Columns to add and columns to widen (existing values converted), applied together. */
export interface ColumnChanges {
  add: PhysicalColumn[];
  widen: PhysicalColumn[];
  /** The table needs this many attribute buckets (added when it has fewer). */
  buckets?: number;
}

export interface EventStore {
  /** The SQL this store's engine speaks: its expressions (engine.ts) and statements (statements.ts). */
  readonly dialect: EngineDialect;
  /** The store is this process's own (embedded), not a server that other nodes share. */
  readonly embedded: boolean;
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * Columns of a dataset's table a field may be read from, as the store has them: its field
   * columns and whether it has the attribute buckets; undefined when there is no table.
   */
  shape(datasetId: string): Promise<TableShape | undefined>;
  /**
   * How many field columns a table may have (the rest of its fields are attributes): what one
   * table's commit can hold within the store's memory. The writer keeps to it.
   */
  readonly hotColumns: number;
  /** How many attribute buckets a table gets when its first attribute comes (at most MAX_ATTRIBUTE_BUCKETS). */
  readonly attributeBuckets: number;
  ensureTable(datasetId: string): Promise<void>;
  addColumn(datasetId: string, column: PhysicalColumn): Promise<void>;
  /** Widens a column's type; existing values are converted (integer → float → string). */
  changeColumnType(datasetId: string, column: PhysicalColumn): Promise<void>;
  dropColumn(datasetId: string, physical: string): Promise<void>;
  /** Deletes an attribute's values from every event (the field is deleted; its number may be given again). */
  purgeAttribute(datasetId: string, attribute: Attribute): Promise<void>;
  /**
   * Moves an attribute's values into a table column of the dataset (added already; new events of
   * the field are written to it): each event's value goes to the column, read as the column's
   * type, and out of the bucket, a slice at a time, while appends go on. Resolves true once no
   * event has the attribute; false as soon as `stopped()` says so between two slices (the rest is
   * left for a later run), or when the store leaves the values where they are (DuckDB: more events
   * have the attribute than it moves; the field then reads through both). Safe to run again (a
   * move resumed after a restart).
   */
  moveToColumn(datasetId: string, attribute: Attribute, column: string, stopped?: () => boolean): Promise<boolean>;
  /**
   * The reverse, for a table with more columns than the store can commit (made before tables had
   * attributes): the given columns' values become attributes (as text); the table then has at
   * least `buckets` buckets. DuckDB rewrites the table in one transaction, the columns gone.
   * ClickHouse copies the values in steps, each safe to stop after and run again, and leaves the
   * columns (reads take them until the registry names the attributes): the caller drops them
   * after. `stopped` is asked between ClickHouse's steps: once it says so, the call rejects.
   * Absent where the store cannot.
   */
  columnsToAttributes?(datasetId: string, moves: { column: string; attribute: Attribute }[], buckets: number, stopped?: () => boolean): Promise<void>;
  /** Drops several columns (ClickHouse: from every node's tables, in an order a stop leaves repairable). */
  dropColumns?(datasetId: string, physicals: string[]): Promise<void>;
  /** Adds and widens several columns of a table in one transaction. */
  changeColumns(datasetId: string, changes: ColumnChanges): Promise<void>;
  /**
   * Appends all batches in one durable transaction: when it resolves, the events survive a crash.
   * Their ingest time is `ingestedUs`, or 1 µs after the previous transaction's if that is not
   * earlier: ingest times grow strictly, in commit order.
   */
  append(batches: AppendBatch[], ingestedUs: number): Promise<void>;
  /**
   * The same in two steps, so that a caller can stage its next batches while one transaction
   * commits: resolves once the batches are written into a transaction of their own (the events
   * are copied: the caller may reuse them); `committed` resolves when that transaction is durable
   * (or rejects: then nothing of it was stored).
   */
  stage(batches: AppendBatch[], ingestedUs: number): Promise<{ committed: Promise<void> }>;
  dropDataset(datasetId: string): Promise<void>;
  /** Deletes events older than the cutoff from every dataset; returns how many. */
  deleteBefore(cutoffUs: number): Promise<number>;
  /** Read-only SQL with bound parameters (queries, tests). */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * A read-only query on its own connection (so queries run side by side), interrupted after
   * `timeoutMs`: then it rejects with QueryTimeout.
   */
  analyse(sql: string, params: unknown[], timeoutMs: number): Promise<Record<string, unknown>[]>;
  /**
   * Read-write statements for tables the engine derives from events (SLO rollups; never the
   * dataset tables), run in order in one transaction on a connection of their own, one call at a
   * time; resolves with the last statement's rows.
   */
  execute(statements: { sql: string; params?: unknown[] }[]): Promise<Record<string, unknown>[]>;
  /**
   * A consistent copy of every table into a new database file while ingest goes on: one
   * snapshot, so it holds every transaction committed before it began and none in part. Returns
   * the rows copied per table. Absent for stores backed up with their own tools.
   */
  backup?(file: string): Promise<Record<string, number>>;
  /** The store's memory (bytes): in use, its limit, spilled to disk now (metrics); absent where the store is a server of its own. */
  memory?(): Promise<StoreMemory>;
}

export class QueryTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than ${timeoutMs / 1000} s`);
    this.name = 'QueryTimeout';
  }
}

/**
 * A write the event store could not do now (out of memory, an engine that does not answer, a
 * commit that failed): nothing of it was stored, the store is usable again, and the same write
 * may succeed later. Ingest answers 503 with Retry-After (docs/ingest.md). A full disk keeps its
 * own error (src/ops/disk.ts).
 */
export class EventStoreUnavailable extends Error {
  constructor(
    /** What went wrong, in words for the client (the engine's own error is the cause, logged). */
    readonly reason: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(`the event store could not store the events: ${reason}; retry later`, options);
    this.name = 'EventStoreUnavailable';
  }
}

/** The one place that turns a dataset id into its table name. Ids are `hcxds_` + [a-z0-9]. */
export function tableName(datasetId: string): string {
  if (!/^hcxds_[a-z0-9]+$/.test(datasetId)) throw new Error(`not a dataset id: ${datasetId}`);
  return `ds_${datasetId.slice(6)}`;
}

/** An event store's memory (bytes): in use (and by what, in the engine's own words), its limit, spilled to disk now. */
export interface StoreMemory {
  used: number;
  limit: number;
  spilled: number;
  /** What is in use by the engine's own tags (DuckDB: `BASE_TABLE`, `HASH_TABLE`, …); only those above 0. */
  byTag?: Record<string, number>;
}
