// The embedded event store: one DuckDB file in the data directory. One connection runs DDL,
// retention and checkpoints, two more take appends, another reads. Appends are pipelined: a
// transaction's events are staged (data chunks filled on the JavaScript thread) on one append
// connection while the other's transaction commits on a DuckDB thread. DDL waits until no append
// transaction is open. DuckDB commits write its WAL before returning, so a committed append
// survives a crash of this process; the WAL is folded into the file at checkpoints, which the
// store takes itself between stagings (checkpointIfDue).
//
// A failed write leaves the store usable: the transaction is rolled back and its connection
// replaced (a connection whose rollback failed would refuse every later statement), and the
// writer gets EventStoreUnavailable (ingest answers 503 with Retry-After). A fatal DuckDB error
// (a checkpoint that runs out of memory) invalidates the whole database until it is opened
// again: the store then waits for the operations in flight to end, reopens the file (DuckDB
// replays its WAL: every committed transaction is kept) and goes on.
//
// Over 500 lines: one class, the whole EventStore on DuckDB (connections, pipelined appends, DDL,
// checkpoints, recovery); its append chunks, dialect and statements are in the duckdb-*.ts files beside it.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { ColumnType } from '../config/types.js';
import { appendChunks, shapeOf, type Layout } from './duckdb-chunks.js';
import { attributeTextSql, BUCKET_COLUMN_SQL, entrySql, hasAttributeSql, mapToTextSql, withoutAttributeSql } from './duckdb-attributes.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { attributeBucket, INGESTED_COLUMN, isOwnColumn, SAMPLERATE_COLUMN, TIME_COLUMN } from './engine.js';
import { MAX_ATTRIBUTE_BUCKETS, type Attribute, type TableShape } from './placement.js';
import { EventStoreUnavailable, QueryTimeout, tableName, type AppendBatch, type ColumnChanges, type EventStore, type PhysicalColumn, type StoreMemory } from './types.js';

/** A string literal for SQL (a file path). */
const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

const SQL_TYPE: Record<ColumnType, string> = { string: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN' };
const FROM_SQL_TYPE: Record<string, ColumnType> = { VARCHAR: 'string', BIGINT: 'integer', DOUBLE: 'float', BOOLEAN: 'boolean' };
/** DuckDB's identifier quoting (tests quote with it too). */
export const quoteIdent = duckdbDialect.quoteIdent;
const FIXED = new Set([TIME_COLUMN, SAMPLERATE_COLUMN, INGESTED_COLUMN]);

/**
 * What one table column costs a commit that continues a row group after a checkpoint, and the
 * checkpoint itself: DuckDB pins a block (256 KB) for each column's data and validity at once.
 * Measured (docs/wide-events.md): at a 256 MB limit, 150 dense VARCHAR columns and 16 buckets
 * held through commits and checkpoints and 200 failed (the checkpoint, fatally); at 64 MB, 8
 * columns and 16 buckets failed. A bucket is one VARCHAR column (duckdb-attributes.ts).
 */
const BYTES_PER_COLUMN = 1.1 * 1024 ** 2;
const BUCKET_COLUMNS = 1;
/** Of the memory limit, the share one table's columns may take (about half what fails: queries and the other appends share the rest). */
const TABLE_SHARE = 0.45;
const MAX_HOT_COLUMNS = 256;
/** Columns kept for hot fields before buckets are given up for them, at small memory limits. */
const MIN_HOT_COLUMNS = 24;

/**
 * Attribute buckets a new table gets (a table made with more keeps them). Each bucket is a text
 * per event, and each text costs its own work wherever it goes: a native call to hand it to
 * DuckDB, a string to append, log and compress. With 16 buckets a wide event (about 50
 * attributes) was 16 short texts; with 4 it is 4 longer ones, and a wide server's CPU per field
 * value fell by a sixth (bench/wide.mjs: 0.89 → 0.74 CPU s per M values; 8 buckets 0.81, 2
 * buckets 0.81). A lookup reads a quarter of an event's attributes instead of a sixteenth: a
 * rare field's query through the API took the same time (13-15 ms p50), the hand-written SQL
 * 34 ms instead of 21 (docs/wide-events.md).
 */
const TEXT_BUCKETS = 4;

/**
 * A table's columns within a memory limit (bytes; DuckDB's default limit, 80 % of RAM, when
 * undefined): of TABLE_SHARE of it, at BYTES_PER_COLUMN each, the fixed columns, then the
 * attribute buckets (TEXT_BUCKETS, or fewer at small limits: a power of two), then the hot columns.
 */
export function tableLayoutFor(memoryBytes: number | undefined): { hotColumns: number; buckets: number } {
  if (memoryBytes === undefined) return { hotColumns: MAX_HOT_COLUMNS, buckets: TEXT_BUCKETS };
  const units = Math.floor((memoryBytes * TABLE_SHARE) / BYTES_PER_COLUMN) - FIXED.size;
  let buckets = TEXT_BUCKETS;
  while (buckets > 1 && buckets * BUCKET_COLUMNS > units - MIN_HOT_COLUMNS) buckets /= 2;
  return { hotColumns: Math.max(0, Math.min(MAX_HOT_COLUMNS, Math.floor(units - buckets * BUCKET_COLUMNS))), buckets };
}

/**
 * WAL size at which the store checkpoints. DuckDB's default threshold, 16 MB, is about 60,000
 * events: a checkpoint every few seconds under load, each recompressing the same part-filled
 * row group. 64 MB cut ingest CPU per event by about a fifth (bench/ingest.mjs, 30 s runs) at
 * the cost of up to 64 MB of WAL to replay after a crash (about 1.3 s here).
 */
const CHECKPOINT_BYTES = 64 * 1024 ** 2;
/** DuckDB's own threshold: reached only if the store's checkpoints keep being refused. */
const SAFETY_CHECKPOINT_THRESHOLD = '512MB';

/**
 * Rows a slice of moveToColumn takes at most, at least, and first; after the first, each slice is
 * sized from the one before to take about MOVE_SLICE_MS (a staging waits for it): a row's cost
 * grows with the table's width.
 */
const MOVE_SLICE_ROWS = 100_000;
const MOVE_MIN_SLICE_ROWS = 2_048;
const MOVE_FIRST_SLICE_ROWS = 10_000;
const MOVE_SLICE_MS = 100;
/** Whole passes of a move before it gives up (each pass leaves nothing but what rows renumbered under it skipped). */
const MOVE_PASSES = 5;
/**
 * Events with the attribute past which a move is not done (moveToColumn): a move updates about a
 * million wide rows a second (in place: both columns are flat), so this bounds one to seconds of
 * CPU, taken in slices beside ingest.
 */
const MOVE_MAX_ROWS = 10_000_000;

/** Replaces a table by one of columns `defs` filled with `values` of its rows (inside the caller's transaction on `w`). */
async function rewriteTable(w: DuckDBConnection, table: string, defs: string[], values: string[]): Promise<void> {
  const next = quoteIdent(`${table}__next`);
  await w.run(`DROP TABLE IF EXISTS ${next}`);
  await w.run(`CREATE TABLE ${next} (${defs.join(', ')})`);
  await w.run(`INSERT INTO ${next} SELECT ${values.join(', ')} FROM ${quoteIdent(table)}`);
  await w.run(`DROP TABLE ${quoteIdent(table)}`);
  await w.run(`ALTER TABLE ${next} RENAME TO ${quoteIdent(table)}`);
}

/** Seconds a client is asked to wait after a write the store could not do. */
const RETRY_AFTER_SECONDS = 5;

/** A DuckDB error after which the database must be opened again. */
const isFatal = (err: unknown): boolean =>
  /FATAL Error|database has been invalidated/i.test(String((err as Error)?.message ?? err)) || (err instanceof EventStoreUnavailable && isFatal(err.cause));

/**
 * A failed write's error as the writer sees it: EventStoreUnavailable saying why (a full disk
 * keeps its own error, which the server answers as such: src/ops/disk.ts).
 */
function unavailable(err: unknown): unknown {
  const message = String((err as Error)?.message ?? err);
  if (err instanceof EventStoreUnavailable || /No space left on device|ENOSPC|disk is full/i.test(message)) return err;
  const reason = /could not allocate|failed to pin|out of memory/i.test(message)
    ? 'it ran out of memory (WAGGLE_EVENT_STORE_MEMORY)'
    : isFatal(err)
      ? 'it failed and is being opened again'
      : 'its commit failed';
  return new EventStoreUnavailable(reason, RETRY_AFTER_SECONDS, { cause: err });
}

/** The size of a database file's WAL (0 when there is none). */
export function walBytes(file: string): number {
  return statSync(`${file}.wal`, { throwIfNoEntry: false })?.size ?? 0;
}

export class DuckDbEventStore implements EventStore {
  readonly dialect = duckdbDialect;
  readonly embedded = true;
  private instance?: DuckDBInstance;
  private writer?: DuckDBConnection;
  /** Connections appends run on, each one transaction at a time. */
  private appendConns: DuckDBConnection[] = [];
  /** Each append connection's open transaction, until it has committed or rolled back. */
  private readonly busy = new Map<DuckDBConnection, Promise<void>>();
  /**
   * Append connections whose next transaction is begun already (or being begun). A transaction
   * begun while another commits cannot be used until that commit ends (its first append waits
   * for it), so every idle append connection begins its next transaction before a commit
   * starts (beginIdle): the next group can then be staged while the commit runs.
   */
  private readonly begun = new Map<DuckDBConnection, Promise<void>>();
  /** The append connection being staged on (between its choice and its commit's start). */
  private staging?: DuckDBConnection;
  /** The last commit asked for, settled; the next starts after it (DuckDB commits one at a time anyway). */
  private lastCommit: Promise<void> = Promise.resolve();
  /**
   * Settles once the last commit asked for has been sent to DuckDB (or will never be). Staging
   * waits for it: staging fills data chunks on this thread without a break, and sending a
   * commit takes a turn of this thread (after the transactions begun ahead have answered), so a
   * group staged first held the previous group's commit back until it was done, and the two ran
   * one after the other instead of side by side (measured: no overlap at all under load).
   */
  private lastCommitSent: Promise<void> = Promise.resolve();
  /** A checkpoint asked for by checkpointIfDue has not ended yet. */
  private checkpointing = false;
  /** The last ingest time given to a transaction (read from the tables on the first append). */
  private lastIngestedUs?: number;
  /** Staging and DDL take turns through this chain; DDL also waits for every open append transaction. */
  private gate: Promise<unknown> = Promise.resolve();
  private reader?: DuckDBConnection;
  /** Connection of execute() (derived tables), opened on first use; calls run one at a time. */
  private derived?: DuckDBConnection;
  private derivedChain: Promise<unknown> = Promise.resolve();
  /** Table layouts, dropped whenever this store changes a table's columns. */
  private readonly layouts = new Map<string, Layout>();
  /**
   * Counts the layouts dropped: a layout read while a change committed (reads do not wait for
   * the gate) is not cached, or it would outlive the change it missed.
   */
  private layoutChanges = 0;
  /** Operations running now; close() waits for them and refuses new ones. */
  private active = 0;
  private closing = false;
  /** Called when no operation runs any more (close() and reopening wait for that). */
  private idleWaiters: (() => void)[] = [];
  /** Set while the database is being opened again after a fatal error; operations wait for it. */
  private reopening?: Promise<void>;

  constructor(
    private readonly file: string,
    /**
     * DuckDB's memory limit (bytes; default: DuckDB's, 80 % of RAM) and the directory it spills
     * to past it; the WAL size at which the store checkpoints (default CHECKPOINT_BYTES).
     */
    private readonly limits: { memoryBytes?: number; tempDirectory?: string; checkpointBytes?: number; moveMaxRows?: number } = {},
  ) {}

  async open(): Promise<void> {
    if (this.file !== ':memory:') mkdirSync(dirname(this.file), { recursive: true });
    await this.openInstance();
    await this.mapBucketsToText();
  }

  /**
   * Buckets of the layout before text buckets (MAP(INTEGER, VARCHAR) columns) become text
   * (duckdb-attributes.ts), before any request: each such table is rewritten in one transaction,
   * as columnsToAttributes does (DuckDB refuses an UPDATE of a column added in the same
   * transaction, and ALTER … USING does not bind the lambda).
   */
  private async mapBucketsToText(): Promise<void> {
    const rows = await this.read(
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_name IN ` +
        `(SELECT table_name FROM information_schema.columns WHERE data_type LIKE 'MAP(%' AND regexp_matches(column_name, '^__a[0-9]+$')) ` +
        `ORDER BY table_name, ordinal_position`,
    );
    const tables = new Map<string, { name: string; type: string }[]>();
    for (const r of rows) {
      const table = String(r.table_name);
      if (!tables.has(table)) tables.set(table, []);
      tables.get(table)!.push({ name: String(r.column_name), type: String(r.data_type) });
    }
    for (const [table, columns] of tables) {
      const isBucket = (c: { name: string; type: string }) => /^__a[0-9]+$/.test(c.name) && c.type.startsWith('MAP(');
      await this.exclusive(async (w) => {
        await w.run('BEGIN TRANSACTION');
        try {
          await rewriteTable(
            w,
            table,
            columns.map((c) => `${quoteIdent(c.name)} ${isBucket(c) ? BUCKET_COLUMN_SQL : c.type}${FIXED.has(c.name) ? ' NOT NULL' : ''}`),
            columns.map((c) => (isBucket(c) ? mapToTextSql(quoteIdent(c.name)) : quoteIdent(c.name))),
          );
          await w.run('COMMIT');
        } catch (err) {
          await w.run('ROLLBACK').catch(() => undefined);
          throw err;
        } finally {
          this.forgetLayout();
        }
      });
    }
  }

  private async openInstance(): Promise<void> {
    // Checkpoints (folding the WAL into the file) are this store's own (checkpointIfDue), at
    // CHECKPOINT_BYTES of WAL; DuckDB's own, inside whichever commit crosses its threshold, is
    // only a safety net at a higher one.
    const options: Record<string, string> = { checkpoint_threshold: SAFETY_CHECKPOINT_THRESHOLD };
    if (this.limits.memoryBytes !== undefined) options.memory_limit = `${Math.max(1, Math.floor(this.limits.memoryBytes / 1024 ** 2))}MiB`;
    if (this.limits.tempDirectory !== undefined) options.temp_directory = this.limits.tempDirectory;
    this.instance = await DuckDBInstance.create(this.file, options);
    this.writer = await this.instance.connect();
    this.appendConns = [await this.instance.connect(), await this.instance.connect()];
    this.reader = await this.instance.connect();
  }

  /**
   * Waits for the operations still running, then checkpoints and closes. Closing a DuckDB
   * connection while a query runs on it deadlocks or crashes the process (the query's thread
   * destroys the connection's context under its own lock), and a request whose client went away
   * can still be running after the HTTP server has closed, so nothing starts once closing began.
   */
  async close(): Promise<void> {
    if (!this.instance || this.closing) return;
    this.closing = true;
    await this.reopening?.catch(() => undefined);
    await this.idle();
    try {
      if (!this.instance) return;
      await this.settleAppends();
      await this.writer!.run('CHECKPOINT');
    } finally {
      this.closeInstance();
      this.closing = false;
    }
  }

  /** Closes every connection and the database (no operation may be running). */
  private closeInstance(): void {
    for (const c of [this.writer, ...this.appendConns, this.reader, this.derived]) {
      try {
        c?.closeSync();
      } catch {
        // (an invalidated database may refuse; it is dropped all the same)
      }
    }
    this.writer = this.reader = this.derived = undefined;
    this.appendConns = [];
    this.busy.clear();
    this.begun.clear();
    this.staging = undefined;
    this.lastCommit = this.lastCommitSent = Promise.resolve();
    this.checkpointing = false;
    this.forgetLayout();
    try {
      this.instance?.closeSync();
    } finally {
      this.instance = undefined;
    }
  }

  /** Resolves once no operation runs. */
  private idle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private finished(): void {
    if (--this.active > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * After a fatal error: once the operations in flight have ended (each fails at once on an
   * invalidated database), opens the file again. Operations asked for meanwhile wait for it.
   */
  private reopenAfter(cause: unknown): void {
    if (this.reopening || this.closing || !isFatal(cause)) return;
    this.reopening = (async () => {
      await this.idle();
      this.closeInstance();
      await this.openInstance();
    })().finally(() => (this.reopening = undefined));
    this.reopening.catch(() => undefined);
  }

  /** Runs `fn` when the operations queued on the gate before it are done. */
  private gated<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.gate.then(fn, fn);
    this.gate = run.catch(() => undefined);
    return run;
  }

  /**
   * A table-changing operation on the writer connection: runs once no append transaction is
   * open (DuckDB refuses to commit appends to a table altered meanwhile), and none opens until
   * it is done.
   */
  private exclusive<T>(fn: (w: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.op(() =>
      this.gated(async () => {
        await this.settleAppends();
        return fn(this.writer!);
      }),
    );
  }

  /**
   * Waits for every append transaction to commit and rolls back the (empty) ones begun ahead:
   * a transaction begun before a table change would append to the table as it was.
   */
  private async settleAppends(): Promise<void> {
    await Promise.all(this.busy.values());
    for (const [conn, begin] of this.begun) {
      this.begun.delete(conn);
      await begin.catch(() => undefined);
      await conn.run('ROLLBACK').catch(() => undefined);
    }
  }

  /** Runs one public operation; refused once close() has begun; waits while the database is opened again. */
  private async op<T>(fn: () => Promise<T>): Promise<T> {
    if (this.reopening && !this.closing) await this.reopening.catch(() => undefined);
    if (!this.instance || this.closing) throw new Error('the event store is closed');
    this.active++;
    try {
      return await fn();
    } catch (err) {
      this.reopenAfter(err);
      throw err;
    } finally {
      this.finished();
    }
  }

  get hotColumns(): number {
    return tableLayoutFor(this.limits.memoryBytes).hotColumns;
  }

  get attributeBuckets(): number {
    return tableLayoutFor(this.limits.memoryBytes).buckets;
  }

  shape(datasetId: string): Promise<TableShape | undefined> {
    return this.op(async () => {
      const layout = await this.layout(datasetId);
      if (!layout) return undefined;
      const columns: PhysicalColumn[] = [];
      let buckets = 0;
      for (const c of layout) {
        if ('bucket' in c) buckets = Math.max(buckets, c.bucket + 1);
        else columns.push(c);
      }
      return { columns, buckets };
    });
  }

  /** The table's columns after the fixed ones (undefined: no table). */
  private async layout(datasetId: string): Promise<Layout | undefined> {
    const cached = this.layouts.get(datasetId);
    if (cached) return cached;
    const changes = this.layoutChanges;
    const rows = await this.read(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position`,
      [tableName(datasetId)],
    );
    if (rows.length === 0) return undefined;
    const layout: Layout = [];
    for (const r of rows) {
      const name = String(r.column_name);
      if (FIXED.has(name)) continue;
      const bucket = /^__a(\d+)$/.exec(name);
      if (bucket) layout.push({ bucket: Number(bucket[1]) });
      else if (!isOwnColumn(name)) layout.push({ physical: name, type: FROM_SQL_TYPE[String(r.data_type)] ?? 'string' });
    }
    if (changes === this.layoutChanges) this.layouts.set(datasetId, layout);
    return layout;
  }

  /** Drops a table's cached layout (every table's without an id). */
  private forgetLayout(datasetId?: string): void {
    this.layoutChanges++;
    if (datasetId === undefined) this.layouts.clear();
    else this.layouts.delete(datasetId);
  }

  async ensureTable(datasetId: string): Promise<void> {
    await this.write(
      datasetId,
      `CREATE TABLE IF NOT EXISTS ${quoteIdent(tableName(datasetId))} (` +
        `${TIME_COLUMN} TIMESTAMP NOT NULL, ${SAMPLERATE_COLUMN} BIGINT NOT NULL, ${INGESTED_COLUMN} TIMESTAMP NOT NULL)`,
    );
  }

  async addColumn(datasetId: string, column: PhysicalColumn): Promise<void> {
    await this.write(
      datasetId,
      `ALTER TABLE ${quoteIdent(tableName(datasetId))} ADD COLUMN IF NOT EXISTS ${quoteIdent(column.physical)} ${SQL_TYPE[column.type]}`,
    );
  }

  async changeColumnType(datasetId: string, column: PhysicalColumn): Promise<void> {
    await this.write(
      datasetId,
      `ALTER TABLE ${quoteIdent(tableName(datasetId))} ALTER COLUMN ${quoteIdent(column.physical)} TYPE ${SQL_TYPE[column.type]}`,
    );
  }

  async dropColumn(datasetId: string, physical: string): Promise<void> {
    await this.write(datasetId, `ALTER TABLE ${quoteIdent(tableName(datasetId))} DROP COLUMN IF EXISTS ${quoteIdent(physical)}`);
  }

  async purgeAttribute(datasetId: string, attribute: Attribute): Promise<void> {
    if (attribute.bucket >= ((await this.shape(datasetId))?.buckets ?? 0)) return;
    const m = quoteIdent(attributeBucket(attribute.bucket));
    await this.write(datasetId, `UPDATE ${quoteIdent(tableName(datasetId))} SET ${m} = ${withoutAttributeSql(attribute)} WHERE ${hasAttributeSql(attribute)}`);
  }

  /**
   * The rows are taken in slices (by rowid: a slice reads only its own row groups; sized to about
   * MOVE_SLICE_MS each), each an UPDATE of its own between two stagings (through the gate), so
   * that ingest waits at most one slice. Rows appended meanwhile have no such attribute (new
   * events go to the column), except those of groups staged before the column was given: the
   * slices begin once they have committed. A final count (a retention delete may renumber rows) repeats the whole
   * move until no event has the attribute. More than MOVE_MAX_ROWS events with it: not moved
   * (false); the field reads through both, and a later run (after a restart) tries again.
   */
  async moveToColumn(datasetId: string, attribute: Attribute, column: string, stopped = () => false): Promise<boolean> {
    const t = quoteIdent(tableName(datasetId));
    const m = quoteIdent(attributeBucket(attribute.bucket));
    const has = hasAttributeSql(attribute);
    const left = async () => {
      const shape = await this.shape(datasetId);
      // (The field deleted meanwhile: nothing left to move.)
      if (!shape?.columns.some((c) => c.physical === column) || attribute.bucket >= shape.buckets) return 0;
      return Number((await this.query(`SELECT count(*) AS n FROM ${t} WHERE ${has}`))[0].n);
    };
    let n = await left();
    if (n > (this.limits.moveMaxRows ?? MOVE_MAX_ROWS)) return false;
    for (let pass = 0; n > 0; pass++, n = await left()) {
      if (pass === MOVE_PASSES) throw new Error(`moving attribute ${attribute.key} of ${datasetId} to ${column}: values are left after ${pass} passes`);
      const rows = await this.op(() =>
        this.gated(async () => {
          await Promise.all(this.busy.values());
          return Number((await this.read(`SELECT coalesce(max(rowid), -1) + 1 AS n FROM ${t}`))[0].n);
        }),
      );
      for (let from = 0, slice = MOVE_FIRST_SLICE_ROWS; from < rows; ) {
        if (stopped()) return false;
        const size = slice;
        const ms = await this.op(() =>
          this.gated(async () => {
            // The column's type as the table has it now (it may have widened since the move began).
            const type = (await this.layout(datasetId))?.find((c) => 'physical' in c && c.physical === column);
            if (!type || !('type' in type)) return MOVE_SLICE_MS;
            const c = quoteIdent(column);
            const started = performance.now();
            await this.writer!.run(
              `UPDATE ${t} SET ${c} = coalesce(${c}, TRY_CAST(${attributeTextSql(attribute)} AS ${SQL_TYPE[type.type]})), ${m} = ${withoutAttributeSql(attribute)} ` +
                `WHERE rowid >= ${from} AND rowid < ${from + size} AND ${has}`,
            );
            return performance.now() - started;
          }),
        );
        from += size;
        slice = Math.max(MOVE_MIN_SLICE_ROWS, Math.min(MOVE_SLICE_ROWS, Math.floor((size * MOVE_SLICE_MS) / Math.max(1, ms))));
      }
    }
    return true;
  }

  /**
   * Adds and widens columns of one table in one transaction: one commit (one WAL sync) for all
   * the columns a group of events brings, instead of one per column.
   */
  async changeColumns(datasetId: string, changes: ColumnChanges): Promise<void> {
    const t = quoteIdent(tableName(datasetId));
    const statements = [
      ...changes.add.map((c) => `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${quoteIdent(c.physical)} ${SQL_TYPE[c.type]}`),
      ...changes.widen.map((c) => `ALTER TABLE ${t} ALTER COLUMN ${quoteIdent(c.physical)} TYPE ${SQL_TYPE[c.type]}`),
    ];
    const buckets = Math.min(MAX_ATTRIBUTE_BUCKETS, changes.buckets ?? 0);
    if (buckets > 0) {
      const has = (await this.shape(datasetId))?.buckets ?? 0;
      for (let b = has; b < buckets; b++) statements.push(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${quoteIdent(attributeBucket(b))} ${BUCKET_COLUMN_SQL}`);
    }
    if (statements.length === 0) return;
    await this.exclusive(async (w) => {
      await w.run('BEGIN TRANSACTION');
      try {
        for (const sql of statements) await w.run(sql);
        await w.run('COMMIT');
      } catch (err) {
        await w.run('ROLLBACK').catch(() => undefined);
        throw unavailable(err);
      } finally {
        this.forgetLayout(datasetId);
      }
    });
  }

  /**
   * A rewrite of the table: a new one with the fixed columns, the columns kept and the buckets
   * (each its attributes so far and the moved columns' values as text: DuckDB's own cast, so a
   * float column's 3 reads back "3.0" as the column did), filled from the old, which it then
   * replaces; all in one transaction. Reading a table of more columns than fit the memory limit
   * needs more, so the limit is raised for it (by about a megabyte per column) and set back after.
   */
  async columnsToAttributes(datasetId: string, moves: { column: string; attribute: Attribute }[], buckets: number): Promise<void> {
    await this.exclusive(async (w) => {
      const layout = (await this.layout(datasetId)) ?? [];
      const moving = new Map(moves.map((m) => [m.column, m.attribute]));
      const kept = layout.filter((c): c is PhysicalColumn => 'physical' in c && !moving.has(c.physical));
      const had = new Set(layout.flatMap((c) => ('bucket' in c ? [c.bucket] : [])));
      const count = Math.min(MAX_ATTRIBUTE_BUCKETS, Math.max(buckets, ...had.values(), ...moves.map((m) => m.attribute.bucket + 1)));
      const table = tableName(datasetId);
      // (concat skips NULLs: a column's NULL adds no entry.)
      const entries = (b: number) => {
        const moved = moves.filter((m) => m.attribute.bucket === b).map((m) => entrySql(m.attribute.key, `CAST(${quoteIdent(m.column)} AS VARCHAR)`));
        const before = had.has(b) ? [quoteIdent(attributeBucket(b))] : [];
        const all = [...before, ...moved];
        return all.length === 0 ? 'CAST(NULL AS VARCHAR)' : `nullif(concat(${all.join(', ')}), '')`;
      };
      const limit = this.limits.memoryBytes;
      const raised = limit === undefined ? undefined : Math.max(limit, limit + layout.length * 1024 ** 2);
      await w.run('BEGIN TRANSACTION');
      try {
        if (raised !== undefined) await w.run(`SET memory_limit = '${Math.floor(raised / 1024 ** 2)}MiB'`);
        await rewriteTable(
          w,
          table,
          [`${TIME_COLUMN} TIMESTAMP NOT NULL`, `${SAMPLERATE_COLUMN} BIGINT NOT NULL`, `${INGESTED_COLUMN} TIMESTAMP NOT NULL`]
            .concat(kept.map((c) => `${quoteIdent(c.physical)} ${SQL_TYPE[c.type]}`))
            .concat(Array.from({ length: count }, (_, b) => `${quoteIdent(attributeBucket(b))} ${BUCKET_COLUMN_SQL}`)),
          [TIME_COLUMN, SAMPLERATE_COLUMN, INGESTED_COLUMN].concat(kept.map((c) => quoteIdent(c.physical))).concat(Array.from({ length: count }, (_, b) => entries(b))),
        );
        await w.run('COMMIT');
      } catch (err) {
        await w.run('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        this.forgetLayout(datasetId);
        if (raised !== undefined) await w.run(`SET memory_limit = '${Math.max(1, Math.floor(limit! / 1024 ** 2))}MiB'`).catch(() => undefined);
      }
    });
  }

  async append(batches: AppendBatch[], ingestedUs: number): Promise<void> {
    await (await this.stage(batches, ingestedUs)).committed;
  }

  stage(batches: AppendBatch[], ingestedUs: number): Promise<{ committed: Promise<void> }> {
    return this.op(() => this.gated(() => this.stageAll(batches, ingestedUs))).catch((err: unknown) => {
      throw unavailable(err);
    });
  }

  /**
   * Writes the batches into a new transaction on a free append connection and asks for its
   * commit, which starts once the previous commit has ended and the other idle append
   * connections have begun their next transactions. (Called through the gate: no DDL runs
   * meanwhile, and the transaction is registered in `busy` before the gate opens again.)
   */
  private async stageAll(batches: AppendBatch[], requestedUs: number): Promise<{ committed: Promise<void> }> {
    if (batches.length === 0) return { committed: Promise.resolve() };
    const ingestedUs = await this.nextIngestedUs(requestedUs);
    const conn = await this.freeAppendConnection();
    await this.lastCommitSent;
    this.staging = conn;
    try {
      await this.writeTransaction(conn, batches, ingestedUs);
    } catch (err) {
      await this.replaceAppendConnection(conn);
      throw err;
    } finally {
      this.staging = undefined;
    }
    // The commit counts as a running operation: close() waits for it.
    this.active++;
    let sent!: () => void;
    this.lastCommitSent = new Promise<void>((resolve) => (sent = resolve));
    const committed = this.lastCommit
      .then(async () => {
        await this.beginIdle(conn);
        try {
          const commit = conn.run('COMMIT'); // sent to DuckDB in this call
          sent();
          await commit;
          this.checkpointIfDue();
        } catch (err) {
          await this.replaceAppendConnection(conn);
          this.reopenAfter(err);
          throw unavailable(err);
        }
      })
      .finally(() => {
        sent();
        this.busy.delete(conn);
        this.finished();
      });
    const settled = committed.catch(() => undefined);
    this.busy.set(conn, settled);
    this.lastCommit = settled;
    return { committed };
  }

  /**
   * The ingest time of the transaction being staged: the time asked for, but always after the
   * previous transaction's (a clock that steps back, or two commits in one millisecond, never
   * give two transactions the same or a falling ingest time). Transactions commit in the order
   * they are staged, so whoever reads the tables sees every transaction up to the newest ingest
   * time it sees, and none after: SLO rollups rely on it to count each event exactly once
   * (src/stores/events/duckdb-slo-rollups.ts).
   */
  private async nextIngestedUs(requestedUs: number): Promise<number> {
    if (this.lastIngestedUs === undefined) {
      const selects = (await this.datasetTables()).map((t) => `SELECT max(epoch_us(${INGESTED_COLUMN})) AS m FROM ${quoteIdent(t)}`);
      const rows = selects.length > 0 ? await this.read(`SELECT max(m) AS m FROM (${selects.join(' UNION ALL ')})`) : [];
      this.lastIngestedUs = rows[0]?.m === null || rows[0]?.m === undefined ? -Infinity : Number(rows[0].m);
    }
    this.lastIngestedUs = Math.max(Math.trunc(requestedUs), this.lastIngestedUs + 1);
    return this.lastIngestedUs;
  }

  /**
   * After a failed transaction: rolls it back and puts a new connection in the failed one's
   * place (a connection whose transaction DuckDB aborted and could not roll back would refuse
   * every later statement with "Current transaction is aborted").
   */
  private async replaceAppendConnection(conn: DuckDBConnection): Promise<void> {
    await conn.run('ROLLBACK').catch(() => undefined);
    const i = this.appendConns.indexOf(conn);
    if (i < 0 || !this.instance) return;
    try {
      this.appendConns[i] = await this.instance.connect();
      this.begun.delete(conn);
      conn.closeSync();
    } catch {
      // (the database is being opened again: it gets new connections anyway)
    }
  }

  /** An append connection with no transaction in flight (waiting for a commit to end if need be). */
  private async freeAppendConnection(): Promise<DuckDBConnection> {
    for (;;) {
      const free = this.appendConns.find((c) => !this.busy.has(c));
      if (free) return free;
      await Promise.race(this.busy.values());
    }
  }

  /**
   * Appends the batches in a transaction of `conn` (the one begun ahead, or a new one) and
   * leaves it open for its commit; rolls it back on failure.
   */
  private async writeTransaction(conn: DuckDBConnection, batches: AppendBatch[], ingestedUs: number): Promise<void> {
    const layouts = [];
    for (const batch of batches) {
      const layout = await this.layout(batch.datasetId);
      if (!layout) throw new Error(`event store append: no table for dataset ${batch.datasetId}`);
      layouts.push(shapeOf(layout));
    }
    const begin = this.begun.get(conn);
    this.begun.delete(conn);
    if (!begin || !(await begin.then(() => true, () => false))) await conn.run('BEGIN TRANSACTION');
    try {
      for (let i = 0; i < batches.length; i++) {
        const appender = await conn.createAppender(tableName(batches[i].datasetId));
        try {
          appendChunks(appender, layouts[i], batches[i], ingestedUs);
          appender.flushSync();
        } finally {
          try {
            appender.closeSync();
          } catch {
            // (after a failed append its close fails too; the transaction is rolled back)
          }
        }
      }
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Begins the next transaction of every idle append connection but `except`, and waits for them. */
  private async beginIdle(except: DuckDBConnection): Promise<void> {
    if (this.closing) return;
    for (const c of this.appendConns) {
      if (c === except || c === this.staging || this.busy.has(c) || this.begun.has(c)) continue;
      this.begun.set(c, c.run('BEGIN TRANSACTION').then(() => undefined));
    }
    await Promise.all([...this.begun.values()].map((b) => b.catch(() => undefined)));
  }

  /**
   * Checkpoints once the WAL has passed its threshold (CHECKPOINT_BYTES), between two stagings
   * (through the gate). A DuckDB checkpoint holds every append until it ends; inside a commit
   * (DuckDB's own way) it would block the staging that runs beside that commit, and with it this
   * thread. Transactions open meanwhile (staged, or begun ahead) are kept and commit after it.
   */
  private checkpointIfDue(): void {
    const threshold = this.limits.checkpointBytes ?? CHECKPOINT_BYTES;
    if (this.checkpointing || this.closing || this.file === ':memory:' || walBytes(this.file) < threshold) return;
    this.checkpointing = true;
    void this.op(() => this.gated(() => this.writer!.run('CHECKPOINT')))
      // Refused (another write transaction, e.g. an SLO rollup, was open): the next commit
      // tries again. (A fatal failure reopens the database: op() saw it.)
      .catch(() => undefined)
      .finally(() => (this.checkpointing = false));
  }

  async dropDataset(datasetId: string): Promise<void> {
    await this.write(datasetId, `DROP TABLE IF EXISTS ${quoteIdent(tableName(datasetId))}`);
  }

  deleteBefore(cutoffUs: number): Promise<number> {
    return this.exclusive(() => this.deleteAllBefore(cutoffUs));
  }

  private async deleteAllBefore(cutoffUs: number): Promise<number> {
    let deleted = 0;
    for (const t of await this.datasetTables()) {
      const reader = await this.writer!.runAndReadAll(
        `DELETE FROM ${quoteIdent(t)} WHERE ${TIME_COLUMN} < make_timestamp(?::BIGINT)`,
        [Math.trunc(cutoffUs)],
      );
      deleted += Number(reader.getRowsJS()[0]?.[0] ?? 0);
    }
    return deleted;
  }

  /** The names of the dataset tables there are. */
  private async datasetTables(): Promise<string[]> {
    const rows = await this.read(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'ds\\_%' ESCAPE '\\'`);
    return rows.map((r) => String(r.table_name));
  }

  query(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return this.op(() => this.read(sql, params));
  }

  private async read(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    const reader = await this.reader!.runAndReadAll(sql, params as never);
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  }

  analyse(sql: string, params: unknown[], timeoutMs: number): Promise<Record<string, unknown>[]> {
    return this.op(async () => {
      const conn = await this.instance!.connect();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        conn.interrupt();
      }, timeoutMs);
      try {
        const reader = await conn.runAndReadAll(sql, params as never);
        return reader.getRowObjectsJS() as Record<string, unknown>[];
      } catch (err) {
        if (timedOut) throw new QueryTimeout(timeoutMs);
        throw err;
      } finally {
        clearTimeout(timer);
        conn.closeSync();
      }
    });
  }

  execute(statements: { sql: string; params?: unknown[] }[]): Promise<Record<string, unknown>[]> {
    // Its own connection, so these transactions never mix with the writer's appends, and a chain
    // so that only one runs at a time.
    const run = this.derivedChain.then(() =>
      this.op(async () => {
        this.derived ??= await this.instance!.connect();
        const conn = this.derived;
        await conn.run('BEGIN TRANSACTION');
        try {
          let rows: Record<string, unknown>[] = [];
          for (const s of statements) rows = (await conn.runAndReadAll(s.sql, (s.params ?? []) as never)).getRowObjectsJS() as Record<string, unknown>[];
          await conn.run('COMMIT');
          return rows;
        } catch (err) {
          await conn.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    );
    this.derivedChain = run.catch(() => undefined);
    return run;
  }

  async memory(): Promise<StoreMemory> {
    const rows = await this.query(
      `SELECT tag, memory_usage_bytes AS used, temporary_storage_bytes AS spilled, current_setting('memory_limit') AS lim FROM duckdb_memory()`,
    );
    // The limit as DuckDB reports it: '16.0 MiB'.
    const lim = /^([\d.]+)\s*([KMGT]?)i?B$/.exec(String(rows[0]?.lim));
    const limit = lim ? Math.round(Number(lim[1]) * 1024 ** ' KMGT'.indexOf(lim[2] || ' ')) : NaN;
    const byTag: Record<string, number> = {};
    let used = 0;
    let spilled = 0;
    for (const r of rows) {
      used += Number(r.used);
      spilled += Number(r.spilled);
      if (Number(r.used) > 0) byTag[String(r.tag)] = Number(r.used);
    }
    return { used, spilled, limit, byTag };
  }

  backup(file: string): Promise<Record<string, number>> {
    return this.op(async () => {
      const conn = await this.instance!.connect();
      try {
        const [{ db }] = (await conn.runAndReadAll('SELECT current_database() AS db')).getRowObjectsJS() as { db: string }[];
        await conn.run(`ATTACH ${quoteLiteral(file)} AS waggle_backup`);
        try {
          // One statement, so one transaction: a single snapshot of every table.
          await conn.run(`COPY FROM DATABASE ${quoteIdent(db)} TO waggle_backup`);
          const tables = (await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = 'waggle_backup' ORDER BY 1`)).getRowObjectsJS();
          const rows: Record<string, number> = {};
          for (const { table_name } of tables) {
            const t = String(table_name);
            rows[t] = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM waggle_backup.${quoteIdent(t)}`)).getRowObjectsJS()[0].n);
          }
          return rows;
        } finally {
          await conn.run('DETACH waggle_backup');
        }
      } finally {
        conn.closeSync();
      }
    });
  }

  /** One table-changing statement on the writer connection, as a public operation. */
  private write(datasetId: string, sql: string): Promise<void> {
    return this.exclusive(async (w) => {
      try {
        await w.run(sql);
      } finally {
        this.forgetLayout(datasetId);
      }
    });
  }
}
