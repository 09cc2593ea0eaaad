// Statements the embedded event store leaves to DuckDB's own threads and only polls
// (src/stores/events/duckdb-polled.ts: queries, checkpoints, a move's UPDATE, retention's DELETE):
// each does all it does when run the usual way, reads the same rows with parameters bound, and a
// failure or an interrupt while it runs rejects with DuckDB's error and leaves the connection usable.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { readPolled, runPolled } from '../src/stores/events/duckdb-polled.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'waggle-polled-'));
  dirs.push(dir);
  return join(dir, 'db.duckdb');
};
const walBytes = (file: string) => (existsSync(`${file}.wal`) ? statSync(`${file}.wal`).size : 0);

/** A database as the store opens one: every thread DuckDB's own (external_threads 0). */
async function open(file: string, threads: number) {
  const instance = await DuckDBInstance.create(file, { threads: String(threads), external_threads: '0', checkpoint_threshold: '1GB' });
  return { instance, conn: await instance.connect() };
}

describe('a polled statement', () => {
  for (const threads of [2, 1]) {
    it(`CHECKPOINT with ${threads} DuckDB thread(s): the WAL folded into the file, every row kept`, async () => {
      const file = tempFile();
      const { instance, conn } = await open(file, threads);
      try {
        await conn.run('CREATE TABLE t (i BIGINT, s VARCHAR)');
        // (Statements of fewer rows than a row group: a larger one writes its rows straight to the file.)
        for (let k = 0; k < 40; k++) await conn.run(`INSERT INTO t SELECT range, 'text ' || range FROM range(${k * 5000}, ${(k + 1) * 5000})`);
        expect(walBytes(file)).toBeGreaterThan(100_000);
        await runPolled(conn, 'CHECKPOINT');
        expect(walBytes(file)).toBe(0);
        expect((await conn.runAndReadAll('SELECT count(*), sum(i) FROM t')).getRows()[0]).toEqual([200000n, 19999900000n]);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    });
  }

  it('reads what the usual way reads, parameters bound', async () => {
    const { instance, conn } = await open(tempFile(), 2);
    try {
      await conn.run(`CREATE TABLE t AS SELECT range AS i, 'g' || (range % 7) AS g FROM range(500000)`);
      const sql = 'SELECT g, count(*) AS n, sum(i) AS s FROM t WHERE i >= ? GROUP BY g ORDER BY g';
      const usual = (await conn.runAndReadAll(sql, [1000])).getRowObjectsJS();
      const polled = await readPolled(conn, sql, [1000]);
      expect(polled).toEqual(usual);
      expect(polled).toHaveLength(7);
      expect(polled.reduce((a, r) => a + Number(r.n), 0)).toBe(499_000);
      // A DELETE's count of rows, as retention reads it.
      expect(Object.values((await readPolled(conn, 'DELETE FROM t WHERE i < ?', [10]))[0])).toEqual([10n]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('several at once on one connection each answer their own (one after the other)', async () => {
    const { instance, conn } = await open(tempFile(), 2);
    try {
      await conn.run(`CREATE TABLE t AS SELECT range AS i FROM range(2000000)`);
      const answers = await Promise.all(Array.from({ length: 6 }, (_, k) => readPolled(conn, 'SELECT count(*) AS n, sum(i % ?) AS s FROM t', [k + 2])));
      expect(answers.map((a) => Number(a[0].n))).toEqual(Array(6).fill(2_000_000));
      // sum of i % m over 0 … N−1: whole cycles of 0 … m−1, then the rest's 0 … r−1.
      const expected = (m: number, N = 2_000_000, r = N % m) => Math.floor(N / m) * ((m * (m - 1)) / 2) + (r * (r - 1)) / 2;
      expect(answers.map((a) => Number(a[0].s))).toEqual(Array.from({ length: 6 }, (_, k) => expected(k + 2)));
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('that fails while it runs rejects with DuckDB’s error, and the connection goes on', async () => {
    const { instance, conn } = await open(tempFile(), 2);
    try {
      await expect(runPolled(conn, `SELECT CASE WHEN range = 150000 THEN error('boom at ' || range) END FROM range(300000)`)).rejects.toThrow(/boom at 150000/);
      await runPolled(conn, 'CREATE TABLE u AS SELECT 1 AS x');
      expect(await readPolled(conn, 'SELECT x FROM u')).toEqual([{ x: 1 }]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('interrupted while it runs rejects, and the connection goes on', async () => {
    const { instance, conn } = await open(tempFile(), 2);
    try {
      const long = readPolled(conn, 'SELECT count(DISTINCT a.range * 7919 + b.range) AS n FROM range(20000) a, range(20000) b');
      setTimeout(() => conn.interrupt(), 100);
      await expect(long).rejects.toThrow(/interrupt/i);
      expect(await readPolled(conn, 'SELECT 42 AS x')).toEqual([{ x: 42 }]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
