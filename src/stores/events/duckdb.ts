// The embedded event store: one DuckDB file in the data directory. One connection writes
// (DDL and appends, one at a time: the ingest writer serialises them), another reads.
// DuckDB commits write its WAL before returning, so a resolved append survives a crash of
// this process; the WAL is folded into the file at checkpoints.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance, DuckDBTimestampValue, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { ColumnType } from '../config/types.js';
import { QueryTimeout, quoteIdent, tableName, type AppendBatch, type EventStore, type PhysicalColumn } from './types.js';

const SQL_TYPE: Record<ColumnType, string> = { string: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN' };
const FROM_SQL_TYPE: Record<string, ColumnType> = { VARCHAR: 'string', BIGINT: 'integer', DOUBLE: 'float', BOOLEAN: 'boolean' };
/** Columns every dataset table has, before the field columns. */
export const TIME_COLUMN = '__time';
export const SAMPLERATE_COLUMN = '__samplerate';
export const INGESTED_COLUMN = '__ingested';
const FIXED = new Set([TIME_COLUMN, SAMPLERATE_COLUMN, INGESTED_COLUMN]);

export class DuckDbEventStore implements EventStore {
  private instance?: DuckDBInstance;
  private writer?: DuckDBConnection;
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

  constructor(private readonly file: string) {}

  async open(): Promise<void> {
    if (this.file !== ':memory:') mkdirSync(dirname(this.file), { recursive: true });
    // DuckDB folds the WAL into the file (checkpoints) once it passes this size, inside the
    // commit that crosses it, so ingest stalls meanwhile. The default, 16 MB, is about 60,000
    // events: a checkpoint every few seconds under load, each recompressing the same part-filled
    // row group. 64 MB cut ingest CPU per event by about a fifth (bench/ingest.mjs, 30 s runs)
    // at the cost of up to 64 MB of WAL to replay after a crash (about 1.3 s here).
    this.instance = await DuckDBInstance.create(this.file, { checkpoint_threshold: '64MB' });
    this.writer = await this.instance.connect();
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
      await this.writer!.run('CHECKPOINT');
    } finally {
      this.writer!.closeSync();
      this.reader!.closeSync();
      this.derived?.closeSync();
      this.derived = undefined;
      this.instance.closeSync();
      this.instance = undefined;
      this.closing = false;
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
    this.layouts.delete(datasetId);
    await this.write(
      `CREATE TABLE IF NOT EXISTS ${quoteIdent(tableName(datasetId))} (` +
        `${TIME_COLUMN} TIMESTAMP NOT NULL, ${SAMPLERATE_COLUMN} BIGINT NOT NULL, ${INGESTED_COLUMN} TIMESTAMP NOT NULL)`,
    );
  }

  async addColumn(datasetId: string, column: PhysicalColumn): Promise<void> {
    this.layouts.delete(datasetId);
    await this.write(
      `ALTER TABLE ${quoteIdent(tableName(datasetId))} ADD COLUMN IF NOT EXISTS ${quoteIdent(column.physical)} ${SQL_TYPE[column.type]}`,
    );
  }

  async changeColumnType(datasetId: string, column: PhysicalColumn): Promise<void> {
    this.layouts.delete(datasetId);
    await this.write(
      `ALTER TABLE ${quoteIdent(tableName(datasetId))} ALTER COLUMN ${quoteIdent(column.physical)} TYPE ${SQL_TYPE[column.type]}`,
    );
  }

  async dropColumn(datasetId: string, physical: string): Promise<void> {
    this.layouts.delete(datasetId);
    await this.write(`ALTER TABLE ${quoteIdent(tableName(datasetId))} DROP COLUMN IF EXISTS ${quoteIdent(physical)}`);
  }

  append(batches: AppendBatch[], ingestedUs: number): Promise<void> {
    return this.op(() => this.appendAll(batches, ingestedUs));
  }

  private async appendAll(batches: AppendBatch[], ingestedUs: number): Promise<void> {
    const w = this.writer!;
    const ingested = new DuckDBTimestampValue(BigInt(Math.trunc(ingestedUs)));
    await w.run('BEGIN TRANSACTION');
    try {
      for (const batch of batches) {
        const layout = await this.layout(batch.datasetId);
        const appender = await w.createAppender(tableName(batch.datasetId));
        try {
          for (const e of batch.events) {
            appender.appendTimestamp(new DuckDBTimestampValue(BigInt(Math.trunc(e.timeUs))));
            appender.appendBigInt(BigInt(e.samplerate));
            appender.appendTimestamp(ingested);
            for (const col of layout) appendValue(appender, col.type, e.values.get(col.physical));
            appender.endRow();
          }
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
      }
      await w.run('COMMIT');
    } catch (err) {
      await w.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.layouts.delete(datasetId);
    await this.write(`DROP TABLE IF EXISTS ${quoteIdent(tableName(datasetId))}`);
  }

  deleteBefore(cutoffUs: number): Promise<number> {
    return this.op(() => this.deleteAllBefore(cutoffUs));
  }

  private async deleteAllBefore(cutoffUs: number): Promise<number> {
    const tables = await this.read(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'ds\\_%' ESCAPE '\\'`);
    let deleted = 0;
    for (const t of tables) {
      const reader = await this.writer!.runAndReadAll(
        `DELETE FROM ${quoteIdent(String(t.table_name))} WHERE ${TIME_COLUMN} < make_timestamp(?::BIGINT)`,
        [Math.trunc(cutoffUs)],
      );
      deleted += Number(reader.getRowsJS()[0]?.[0] ?? 0);
    }
    return deleted;
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

  /** One statement on the writer connection, as a public operation. */
  private write(sql: string): Promise<void> {
    return this.op(async () => {
      await this.writer!.run(sql);
    });
  }
}

/** Appends one value converted to the column's stored type (the writer widened the column first). */
function appendValue(appender: DuckDBAppender, type: ColumnType, v: unknown): void {
  if (v === undefined || v === null) return appender.appendNull();
  switch (type) {
    case 'string':
      return appender.appendVarchar(typeof v === 'string' ? v : String(v));
    case 'integer':
      // A double carries every integer JSON can give us exactly; DuckDB casts it to BIGINT.
      return appender.appendDouble(Number(v));
    case 'float':
      return appender.appendDouble(Number(v));
    case 'boolean':
      return appender.appendBoolean(Boolean(v));
  }
}
