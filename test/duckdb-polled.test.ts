// A statement the embedded event store leaves to DuckDB's own threads and only polls
// (src/stores/events/duckdb-polled.ts; the store's CHECKPOINT): it does all it does when run the
// usual way, also with one DuckDB thread; a failure while it runs rejects with DuckDB's error;
// and DuckDB's thread setting is as it was afterwards, either way.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { runPolled } from '../src/stores/events/duckdb-polled.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'waggle-polled-'));
  dirs.push(dir);
  return join(dir, 'db.duckdb');
};
const walBytes = (file: string) => (existsSync(`${file}.wal`) ? statSync(`${file}.wal`).size : 0);

/** A database of `threads` threads (DuckDB counts one of them for callers). */
async function open(file: string, threads: number) {
  const instance = await DuckDBInstance.create(file, { threads: String(threads), checkpoint_threshold: '1GB' });
  return { instance, conn: await instance.connect() };
}

const externalThreads = async (conn: Awaited<ReturnType<typeof open>>['conn']) => (await conn.runAndReadAll(`SELECT current_setting('external_threads')`)).getRows()[0][0];

describe('a polled statement', () => {
  for (const threads of [2, 1]) {
    it(`CHECKPOINT with ${threads} thread(s): the WAL folded into the file, every row kept`, async () => {
      const file = tempFile();
      const { instance, conn } = await open(file, threads);
      try {
        await conn.run('CREATE TABLE t (i BIGINT, s VARCHAR)');
        // (Statements of fewer rows than a row group: a larger one writes its rows straight to the file.)
        for (let k = 0; k < 40; k++) await conn.run(`INSERT INTO t SELECT range, 'text ' || range FROM range(${k * 5000}, ${(k + 1) * 5000})`);
        expect(walBytes(file)).toBeGreaterThan(100_000);
        await runPolled(conn, 'CHECKPOINT');
        expect(walBytes(file)).toBe(0);
        expect(await externalThreads(conn)).toBe(1n);
        expect((await conn.runAndReadAll('SELECT count(*), sum(i) FROM t')).getRows()[0]).toEqual([200000n, 19999900000n]);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    });
  }

  it('that fails while it runs rejects with DuckDB’s error, and the connection goes on', async () => {
    const { instance, conn } = await open(tempFile(), 2);
    try {
      await expect(runPolled(conn, `SELECT CASE WHEN range = 150000 THEN error('boom at ' || range) END FROM range(300000)`)).rejects.toThrow(/boom at 150000/);
      expect(await externalThreads(conn)).toBe(1n);
      await runPolled(conn, 'CREATE TABLE u AS SELECT 1 AS x');
      expect((await conn.runAndReadAll('SELECT x FROM u')).getRows()).toEqual([[1]]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
