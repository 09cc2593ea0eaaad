// The embedded event store: one DuckDB file in the data directory. One connection runs DDL,
// retention and checkpoints, two more take appends, another reads. Appends are pipelined: a
// transaction's events are staged (data chunks filled on the JavaScript thread) on one append
// connection while the other's transaction commits on a DuckDB thread. DDL waits until no append
// transaction is open. DuckDB commits write its WAL before returning, so a committed append
// survives a crash of this process; the WAL is folded into the file at checkpoints, which the
// store takes itself between stagings (checkpointIfDue).
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { dirname } from 'node:path';
import { DuckDBDataChunk, DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type Bindings from '@duckdb/node-bindings';
import type { ColumnType } from '../config/types.js';
import { textAt, Value, type EventColumns, type FieldColumn } from './columns.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN } from './engine.js';
import { QueryTimeout, tableName, type AppendBatch, type ColumnChanges, type EventStore, type PhysicalColumn, type StoreMemory } from './types.js';

// The raw C API bindings, for writing data chunks straight into DuckDB's vector memory. Loaded
// from where @duckdb/node-api finds them, so that both use the same native module (its handles
// are only valid there).
const bindings: typeof Bindings = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'))('@duckdb/node-bindings');

/** A string literal for SQL (a file path). */
const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

const SQL_TYPE: Record<ColumnType, string> = { string: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN' };
const FROM_SQL_TYPE: Record<string, ColumnType> = { VARCHAR: 'string', BIGINT: 'integer', DOUBLE: 'float', BOOLEAN: 'boolean' };
/** DuckDB's identifier quoting (tests quote with it too). */
export const quoteIdent = duckdbDialect.quoteIdent;
const FIXED = new Set([TIME_COLUMN, SAMPLERATE_COLUMN, INGESTED_COLUMN]);

/**
 * WAL size at which the store checkpoints. DuckDB's default threshold, 16 MB, is about 60,000
 * events: a checkpoint every few seconds under load, each recompressing the same part-filled
 * row group. 64 MB cut ingest CPU per event by about a fifth (bench/ingest.mjs, 30 s runs) at
 * the cost of up to 64 MB of WAL to replay after a crash (about 1.3 s here).
 */
const CHECKPOINT_BYTES = 64 * 1024 ** 2;
/** DuckDB's own threshold: reached only if the store's checkpoints keep being refused. */
const SAFETY_CHECKPOINT_THRESHOLD = '512MB';

/** The size of a database file's WAL (0 when there is none). */
export function walBytes(file: string): number {
  return statSync(`${file}.wal`, { throwIfNoEntry: false })?.size ?? 0;
}

export class DuckDbEventStore implements EventStore {
  readonly dialect = duckdbDialect;
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
  private readonly layouts = new Map<string, PhysicalColumn[]>();
  /** Operations running now; close() waits for them and refuses new ones. */
  private active = 0;
  private closing = false;
  private whenIdle?: () => void;

  constructor(
    private readonly file: string,
    /**
     * DuckDB's memory limit (bytes; default: DuckDB's, 80 % of RAM) and the directory it spills
     * to past it; the WAL size at which the store checkpoints (default CHECKPOINT_BYTES).
     */
    private readonly limits: { memoryBytes?: number; tempDirectory?: string; checkpointBytes?: number } = {},
  ) {}

  async open(): Promise<void> {
    if (this.file !== ':memory:') mkdirSync(dirname(this.file), { recursive: true });
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
    if (this.active > 0) await new Promise<void>((resolve) => (this.whenIdle = resolve));
    try {
      await this.settleAppends();
      await this.writer!.run('CHECKPOINT');
    } finally {
      this.writer!.closeSync();
      for (const c of this.appendConns) c.closeSync();
      this.appendConns = [];
      this.busy.clear();
      this.reader!.closeSync();
      this.derived?.closeSync();
      this.derived = undefined;
      this.instance.closeSync();
      this.instance = undefined;
      this.closing = false;
    }
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

  /** Runs one public operation; refused once close() has begun. */
  private async op<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.instance || this.closing) throw new Error('the event store is closed');
    this.active++;
    try {
      return await fn();
    } finally {
      if (--this.active === 0) this.whenIdle?.();
    }
  }

  columns(datasetId: string): Promise<PhysicalColumn[]> {
    return this.op(() => this.layout(datasetId));
  }

  private async layout(datasetId: string): Promise<PhysicalColumn[]> {
    const cached = this.layouts.get(datasetId);
    if (cached) return cached;
    const rows = await this.read(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position`,
      [tableName(datasetId)],
    );
    const layout = rows
      .filter((r) => !FIXED.has(String(r.column_name)))
      .map((r) => ({ physical: String(r.column_name), type: FROM_SQL_TYPE[String(r.data_type)] ?? 'string' }));
    if (rows.length > 0) this.layouts.set(datasetId, layout);
    return layout;
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

  /**
   * Adds and widens columns of one table in one transaction: one commit (one WAL sync) for all
   * the columns a group of events brings, instead of one per column.
   */
  async changeColumns(datasetId: string, changes: ColumnChanges): Promise<void> {
    if (changes.add.length === 0 && changes.widen.length === 0) return;
    const t = quoteIdent(tableName(datasetId));
    const statements = [
      ...changes.add.map((c) => `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${quoteIdent(c.physical)} ${SQL_TYPE[c.type]}`),
      ...changes.widen.map((c) => `ALTER TABLE ${t} ALTER COLUMN ${quoteIdent(c.physical)} TYPE ${SQL_TYPE[c.type]}`),
    ];
    await this.exclusive(async (w) => {
      await w.run('BEGIN TRANSACTION');
      try {
        for (const sql of statements) await w.run(sql);
        await w.run('COMMIT');
      } catch (err) {
        await w.run('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        this.layouts.delete(datasetId);
      }
    });
  }

  async append(batches: AppendBatch[], ingestedUs: number): Promise<void> {
    await (await this.stage(batches, ingestedUs)).committed;
  }

  stage(batches: AppendBatch[], ingestedUs: number): Promise<{ committed: Promise<void> }> {
    return this.op(() => this.gated(() => this.stageAll(batches, ingestedUs)));
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
          await conn.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
      })
      .finally(() => {
        sent();
        this.busy.delete(conn);
        if (--this.active === 0) this.whenIdle?.();
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
    for (const batch of batches) layouts.push(shapeOf(await this.layout(batch.datasetId)));
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
          appender.closeSync();
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
      // Refused (another write transaction, e.g. an SLO rollup, was open): the next commit tries again.
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
        this.layouts.delete(datasetId);
      }
    });
  }
}

// --- The append path: events come column by column (columns.ts) and are written into DuckDB
// data chunks (2,048 rows each), handed to an appender whole. Numbers, booleans, times and
// short ASCII strings are written into typed arrays in JavaScript and copied into each vector
// with one native call per column per chunk; only longer strings cross into the native module
// one call each. A column whose rows all have the same string in a chunk (ColumnsBuilder marks
// such columns `constant`) becomes one constant vector: one call for the chunk. (One Appender
// call per value cost two to three times as much of the JavaScript thread, the thread that also
// serves every request.)

const VECTOR_SIZE = bindings.vector_size();
/** DuckDB's string_t: 16 bytes, holding strings of up to 12 bytes inline. */
const STRING_T = 16;
const STRING_INLINE = 12;
const TWO_32 = 2 ** 32;
const LITTLE_ENDIAN = endianness() === 'LE';

/** How a column's values are written (the column's stored type). */
const Kind = { String: 0, Integer: 1, Float: 2, Boolean: 3 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];
const KIND: Record<ColumnType, Kind> = { string: Kind.String, integer: Kind.Integer, float: Kind.Float, boolean: Kind.Boolean };
const LOGICAL: Record<ColumnType, Bindings.Type> = {
  string: bindings.Type.VARCHAR,
  integer: bindings.Type.BIGINT,
  float: bindings.Type.DOUBLE,
  boolean: bindings.Type.BOOLEAN,
};

/** A table layout as the chunk writer needs it: column kinds, positions and DuckDB types. */
interface Shape {
  columns: PhysicalColumn[];
  kinds: Kind[];
  /** Physical column name → field column position (0 = the first field column). */
  position: Map<string, number>;
  /** Logical types of every table column, the three fixed ones first. */
  logical: Bindings.LogicalType[];
}

const shapes = new WeakMap<PhysicalColumn[], Shape>();

/** The shape of a layout; layouts are replaced (never changed) when a table changes, so this caches per layout. */
function shapeOf(columns: PhysicalColumn[]): Shape {
  let shape = shapes.get(columns);
  if (!shape) {
    const fixed = [bindings.Type.TIMESTAMP, bindings.Type.BIGINT, bindings.Type.TIMESTAMP];
    shape = {
      columns,
      kinds: columns.map((c) => KIND[c.type]),
      position: new Map(columns.map((c, i) => [c.physical, i])),
      logical: [...fixed, ...columns.map((c) => LOGICAL[c.type])].map((t) => bindings.create_logical_type(t)),
    };
    shapes.set(columns, shape);
  }
  return shape;
}

/**
 * One column's values for the chunk being filled, in JavaScript memory (copied into the vector
 * once the chunk is full: the bindings give no view of a vector's own memory to write through).
 */
class ColumnBuffer {
  readonly validity = new Uint8Array(VECTOR_SIZE / 8);
  readonly bytes: ArrayBuffer;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly u8: Uint8Array;
  /** The chunk (by number) this buffer holds values of; -1: none yet. */
  chunk = -1;
  vector?: Bindings.Vector;

  /** Strings too long to inline (or not ASCII), by row: given to DuckDB one by one after the copy. */
  private longRows?: Uint16Array;
  private longValues?: (string | Uint8Array)[];
  private longCount = 0;
  /**
   * The one string of this chunk's rows 0 to constantRows - 1, while they all have it (columns
   * marked constant): written as a constant vector, one native call for the chunk, unless the
   * chunk's other rows differ (then it is written row by row after all).
   */
  constantText?: string;
  constantRows = 0;

  constructor(readonly kind: Kind) {
    this.bytes = new ArrayBuffer(VECTOR_SIZE * (kind === Kind.String ? STRING_T : 8));
    this.u32 = new Uint32Array(this.bytes);
    this.i32 = new Int32Array(this.bytes);
    this.f64 = new Float64Array(this.bytes);
    this.u8 = new Uint8Array(this.bytes);
  }

  /** Readies the buffer for a new chunk: every row NULL (and every inline string empty). */
  clear(): void {
    this.validity.fill(0);
    if (this.kind === Kind.String) {
      this.u8.fill(0);
      this.longCount = 0;
      this.constantText = undefined;
      this.constantRows = 0;
    }
  }

  /**
   * Takes rows `row` to `row + take - 1` as `text` if they start the chunk or continue its
   * constant rows with the same string; false otherwise (the caller writes them row by row).
   */
  extendConstant(text: string, row: number, take: number): boolean {
    if (row !== 0 && (this.constantText !== text || this.constantRows !== row)) return false;
    this.constantText = text;
    this.constantRows = row + take;
    return true;
  }

  /** Writes the constant rows as ordinary ones. */
  unconstant(): void {
    const text = this.constantText;
    if (text === undefined) return;
    this.constantText = undefined;
    for (let r = 0; r < this.constantRows; r++) {
      this.setString(r, text);
      this.validity[r >> 3] |= 1 << (r & 7);
    }
  }

  /**
   * A VARCHAR value. DuckDB keeps a string of up to 12 bytes inline in its 16-byte string_t
   * (length, then the bytes, zero-padded): short ASCII strings are written so here, with no
   * call into the native module. Longer ones need DuckDB to copy them to the vector's heap.
   */
  setString(row: number, text: string): void {
    const n = text.length;
    if (n <= STRING_INLINE) {
      const at = row * STRING_T + 4;
      let i = 0;
      for (; i < n; i++) {
        const ch = text.charCodeAt(i);
        if (ch >= 0x80) break;
        this.u8[at + i] = ch;
      }
      if (i === n) {
        this.u32[row * (STRING_T / 4)] = n;
        return;
      }
      this.u8.fill(0, at, at + STRING_INLINE);
    }
    this.addLong(row, text);
  }

  /** A string value given as UTF-8 bytes (EventColumns.text): inline when it fits. */
  setBytes(row: number, bytes: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (n <= STRING_INLINE) {
      const at = row * STRING_T + 4;
      for (let i = 0; i < n; i++) this.u8[at + i] = bytes[start + i];
      this.u32[row * (STRING_T / 4)] = n;
      return;
    }
    this.addLong(row, bytes.subarray(start, end));
  }

  /** A value for DuckDB to copy to the vector's heap, after the copy of the inline ones. */
  private addLong(row: number, value: string | Uint8Array): void {
    // (Sized for a whole chunk once: pushing onto arrays emptied per chunk regrew them every time.)
    const k = this.longCount++;
    (this.longRows ??= new Uint16Array(VECTOR_SIZE))[k] = row;
    (this.longValues ??= new Array<string>(VECTOR_SIZE).fill(''))[k] = value;
  }

  /** Copies `rows` values and their validity into the vector. */
  copyTo(vector: Bindings.Vector, rows: number, validity = true): void {
    if (this.constantText !== undefined) {
      if (this.constantRows === rows) return bindings.vector_reference_value(vector, bindings.create_varchar(this.constantText));
      this.unconstant();
    }
    const size = this.kind === Kind.Boolean ? rows : this.kind === Kind.String ? rows * STRING_T : rows * 8;
    bindings.copy_data_to_vector(vector, 0, this.bytes, 0, size);
    // After the copy: DuckDB writes these rows' string_t (pointing into the vector's heap) itself.
    for (let i = 0; i < this.longCount; i++) {
      const v = this.longValues![i];
      if (typeof v === 'string') bindings.vector_assign_string_element(vector, this.longRows![i], v);
      else bindings.vector_assign_string_element_len(vector, this.longRows![i], v);
    }
    if (validity) this.copyValidityTo(vector, rows);
  }

  copyValidityTo(vector: Bindings.Vector, rows: number): void {
    bindings.vector_ensure_validity_writable(vector);
    bindings.copy_data_to_vector_validity(vector, 0, this.validity.buffer, 0, Math.ceil(rows / 64) * 8);
  }
}

/** All NULL: the validity of a field column no event of a chunk has. */
const NO_VALUES = new ColumnBuffer(Kind.Boolean);

/**
 * Writes an integral number (exact in a double; |v| < 2^63) as a little-endian int64 without
 * making a BigInt: both halves come out exact, since dividing by 2^32 is exact and the low part
 * is an integer below 2^32.
 */
function setInt64(b: ColumnBuffer, row: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  b.u32[2 * row] = v - hi * TWO_32;
  b.i32[2 * row + 1] = hi;
}

function invalid(message: string): Error {
  return new Error(`event store append: ${message}`);
}

/** Appends one batch's events to `appender` in data chunks of the table's shape. */
function appendChunks(appender: DuckDBAppender, shape: Shape, batch: AppendBatch, ingestedUs: number): void {
  if (!LITTLE_ENDIAN) throw invalid('the chunk writer assumes a little-endian machine');
  const { parts, columns } = batch;
  const { kinds } = shape;
  const width = kinds.length;
  // Field (or physical) name → field column position, resolved once per name per batch.
  const positions = new Map<string, number>();
  const positionOf = (key: string): number => {
    let p = positions.get(key);
    if (p === undefined) {
      const physical = columns ? columns.get(key)?.physical : key;
      p = physical === undefined ? undefined : shape.position.get(physical);
      if (p === undefined) throw invalid(`no column for ${JSON.stringify(key)} in the table`);
      positions.set(key, p);
    }
    return p;
  };
  let total = 0;
  for (const part of parts) total += part.count;
  const time = new ColumnBuffer(Kind.Integer);
  const samplerate = new ColumnBuffer(Kind.Integer);
  const ingested = new ColumnBuffer(Kind.Integer);
  for (let row = 0; row < Math.min(VECTOR_SIZE, total); row++) setInt64(ingested, row, ingestedUs);
  // Field columns' buffers, made when a column first gets a value.
  const buffers: (ColumnBuffer | undefined)[] = new Array(width);
  const chunk = new DuckDBDataChunk(bindings.create_data_chunk(shape.logical));
  const raw = chunk.chunk;
  // The next row to write: which part, which of its rows.
  let pi = 0;
  let from = 0;
  for (let start = 0, n = 0; start < total; start += VECTOR_SIZE, n++) {
    const rows = Math.min(VECTOR_SIZE, total - start);
    if (n > 0) bindings.data_chunk_reset(raw);
    // The chunk's rows, a run of rows of one part at a time.
    for (let row = 0; row < rows; ) {
      const part = parts[pi];
      const take = Math.min(rows - row, part.count - from);
      for (let i = 0; i < take; i++) {
        setInt64(time, row + i, Math.trunc(part.timeUs[from + i]));
        setInt64(samplerate, row + i, part.samplerate[from + i]);
      }
      for (const f of part.fields) {
        const c = positionOf(f.name);
        let b = buffers[c];
        if (b === undefined) b = buffers[c] = new ColumnBuffer(kinds[c]);
        if (b.chunk !== n) {
          // First value of this column in this chunk: every other row is NULL.
          b.chunk = n;
          b.clear();
          b.vector = bindings.data_chunk_get_vector(raw, c + 3);
        }
        if (f.constant && b.kind === Kind.String && b.extendConstant(textAt(part, f.spans![2 * from], f.spans![2 * from + 1]), row, take)) continue;
        b.unconstant();
        writeRun(b, part, f, from, row, take);
      }
      row += take;
      from += take;
      if (from === part.count) {
        pi++;
        from = 0;
      }
    }
    time.copyTo(bindings.data_chunk_get_vector(raw, 0), rows, false);
    samplerate.copyTo(bindings.data_chunk_get_vector(raw, 1), rows, false);
    ingested.copyTo(bindings.data_chunk_get_vector(raw, 2), rows, false);
    for (let c = 0; c < width; c++) {
      const b = buffers[c];
      if (b !== undefined && b.chunk === n) b.copyTo(b.vector!, rows);
      else NO_VALUES.copyValidityTo(bindings.data_chunk_get_vector(raw, c + 3), rows);
    }
    bindings.data_chunk_set_size(raw, rows);
    appender.appendDataChunk(chunk);
  }
}

/** Writes `take` rows of a part's column, from its row `from`, into the buffer from row `row`. */
function writeRun(b: ColumnBuffer, part: EventColumns, f: FieldColumn, from: number, row: number, take: number): void {
  const { kinds: values, nums, spans } = f;
  const { text } = part;
  for (let i = 0; i < take; i++) {
    const k = values[from + i];
    if (k === Value.Absent) continue;
    const r = row + i;
    const x = nums[from + i];
    switch (b.kind) {
      case Kind.String:
        if (k === Value.String) b.setBytes(r, text, spans![2 * (from + i)], spans![2 * (from + i) + 1]);
        else b.setString(r, k === Value.Boolean ? String(x !== 0) : String(x));
        break;
      case Kind.Integer:
        // The writer widens a column before a value it cannot hold reaches it.
        if (k !== Value.Integer) throw invalid(`a ${k === Value.String ? 'string' : 'non-integer'} value for an integer column`);
        setInt64(b, r, x);
        break;
      case Kind.Float:
        if (k !== Value.Integer && k !== Value.Float) throw invalid('a non-numeric value for a float column');
        b.f64[r] = x;
        break;
      case Kind.Boolean:
        if (k !== Value.Boolean) throw invalid('a non-boolean value for a boolean column');
        b.u8[r] = x;
        break;
    }
    b.validity[r >> 3] |= 1 << (r & 7);
  }
}
