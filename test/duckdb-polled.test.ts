// A statement the embedded event store leaves to DuckDB's own threads and only polls
// (src/stores/events/duckdb-polled.ts; the store's CHECKPOINT): it does all it does when run the
// usual way, a failure while it runs rejects with DuckDB's error, and without DuckDB threads of
// its own it runs the usual way.
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

/** A database of `threads` threads, `external` of them counted for callers; its DuckDB-own threads. */
async function open(file: string, threads: number, external: number) {
  const instance = await DuckDBInstance.create(file, { threads: String(threads), external_threads: String(external), checkpoint_threshold: '1GB' });
  return { instance, conn: await instance.connect(), background: threads - external };
}

describe('a polled statement', () => {
  for (const [threads, external] of [
    [2, 0],
    [1, 0],
    [1, 1], // no thread of DuckDB's own: run the usual way
  ]) {
    it(`CHECKPOINT with ${threads} thread(s), ${external} for callers: the WAL folded into the file, every row kept`, async () => {
      const file = tempFile();
      const { instance, conn, background } = await open(file, threads, external);
      try {
        await conn.run('CREATE TABLE t (i BIGINT, s VARCHAR)');
        // (Statements of fewer rows than a row group: a larger one writes its rows straight to the file.)
        for (let k = 0; k < 40; k++) await conn.run(`INSERT INTO t SELECT range, 'text ' || range FROM range(${k * 5000}, ${(k + 1) * 5000})`);
        expect(walBytes(file)).toBeGreaterThan(100_000);
        await runPolled(conn, 'CHECKPOINT', background);
        expect(walBytes(file)).toBe(0);
        expect((await conn.runAndReadAll('SELECT count(*), sum(i) FROM t')).getRows()[0]).toEqual([200000n, 19999900000n]);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    });
  }

  it('that fails while it runs rejects with DuckDB’s error, and the connection goes on', async () => {
    const { instance, conn, background } = await open(tempFile(), 2, 0);
    try {
      await expect(runPolled(conn, `SELECT CASE WHEN range = 150000 THEN error('boom at ' || range) END FROM range(300000)`, background)).rejects.toThrow(/boom at 150000/);
      await runPolled(conn, 'CREATE TABLE u AS SELECT 1 AS x', background);
      expect((await conn.runAndReadAll('SELECT x FROM u')).getRows()).toEqual([[1]]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
