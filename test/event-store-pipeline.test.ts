// The event store's pipelined appends: a staged transaction commits while the next is staged;
// table changes wait for open append transactions; close() waits for commits in flight; the
// store checkpoints by itself, between stagings.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { columnsOf } from '../src/stores/events/columns.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent, walBytes } from '../src/stores/events/duckdb-store.js';

const DS = 'hcxds_pipeline1';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(limits: { checkpointBytes?: number } = {}): Promise<{ store: DuckDbEventStore; file: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'waggle-pipeline-'));
  dirs.push(dir);
  const file = join(dir, 'events.duckdb');
  const store = new DuckDbEventStore(file, limits);
  await store.open();
  await store.ensureTable(DS);
  return { store, file };
}

/** `n` events as one part, columns named by physical name. */
const events = (from: number, n: number, extra: Record<string, string | number | boolean> = {}) => [
  columnsOf(
    Array.from({ length: n }, (_, i) => ({
      timeUs: 1_700_000_000_000_000 + from + i,
      samplerate: 1,
      fields: new Map<string, string | number | boolean>([['c1', from + i], ...Object.entries(extra)]),
    })),
  ),
];

describe('event store: pipelined appends', () => {
  it('stages the next transaction while one commits, and every event is stored once', async () => {
    const { store } = await open();
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
    const staged = [];
    for (let i = 0; i < 6; i++) staged.push(await store.stage([{ datasetId: DS, parts: events(i * 5000, 5000) }], Date.now() * 1000));
    await Promise.all(staged.map((s) => s.committed));
    const [row] = await store.query(`SELECT count(*) AS n, count(DISTINCT c1) AS d, min(c1) AS lo, max(c1) AS hi FROM ${quoteIdent(tableName(DS))}`);
    expect(row).toEqual({ n: 30000n, d: 30000n, lo: 0n, hi: 29999n });
    await store.close();
  });

  it('commits end in the order their transactions were staged, each after the one before', async () => {
    const { store } = await open();
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
    const ended: number[] = [];
    const commits = [];
    for (let i = 0; i < 8; i++) {
      const { committed } = await store.stage([{ datasetId: DS, parts: events(i * 2000, 2000) }], Date.now() * 1000);
      commits.push(committed.then(() => ended.push(i)));
    }
    await Promise.all(commits);
    expect(ended).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const [row] = await store.query(`SELECT count(*) AS n FROM ${quoteIdent(tableName(DS))}`);
    expect(row).toEqual({ n: 16000n });
    await store.close();
  });

  it('a column change waits for the transaction in flight, and the next one appends to the changed table', async () => {
    const { store, file } = await open();
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
    const first = await store.stage([{ datasetId: DS, parts: events(0, 3000) }], Date.now() * 1000);
    // A transaction is already begun on the other append connection: the change must not leave it appending to the old table.
    const second = await store.stage([{ datasetId: DS, parts: events(3000, 3000) }], Date.now() * 1000);
    await store.changeColumns(DS, { add: [{ physical: 'c2', type: 'string' }], widen: [{ physical: 'c1', type: 'float' }] });
    await Promise.all([first.committed, second.committed]);
    const third = await store.stage([{ datasetId: DS, parts: events(6000, 3000, { c2: 'line\none "quoted" ünïcödé 🐝' }) }], Date.now() * 1000);
    await third.committed;
    await store.append([{ datasetId: DS, parts: events(9000, 10, { c2: 'x' }) }], Date.now() * 1000);
    const t = quoteIdent(tableName(DS));
    expect(await store.query(`SELECT count(*) AS n, count(c2) AS with_c2, typeof(any_value(c1)) AS type FROM ${t}`)).toEqual([
      { n: 9010n, with_c2: 3010n, type: 'DOUBLE' },
    ]);
    expect(await store.query(`SELECT c2 FROM ${t} WHERE c1 = 6000`)).toEqual([{ c2: 'line\none "quoted" ünïcödé 🐝' }]);
    // Everything acknowledged is in the file after a reopen.
    await store.close();
    const again = new DuckDbEventStore(file);
    await again.open();
    expect(await again.query(`SELECT count(*) AS n FROM ${t}`)).toEqual([{ n: 9010n }]);
    await again.close();
  });

  it('close() waits for a commit in flight', async () => {
    const { store, file } = await open();
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
    const { committed } = await store.stage([{ datasetId: DS, parts: events(0, 20000) }], Date.now() * 1000);
    await store.close();
    await committed;
    const again = new DuckDbEventStore(file);
    await again.open();
    expect(await again.query(`SELECT count(*) AS n FROM ${quoteIdent(tableName(DS))}`)).toEqual([{ n: 20000n }]);
    await again.close();
  });

  it('checkpoints by itself once the WAL passes its threshold, keeping the transactions staged meanwhile', async () => {
    const threshold = 256 * 1024;
    const { store, file } = await open({ checkpointBytes: threshold });
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }, { physical: 'c2', type: 'string' }], widen: [] });
    const text = 'a string of some length, to fill the write-ahead log: '.repeat(2);
    // Each group is about 250 KB of WAL: 40 of them would leave 10 MB of it without checkpoints
    // (DuckDB's own threshold is far higher). Two groups are always in flight.
    const groups = [];
    for (let i = 0; i < 40; i++) groups.push(await store.stage([{ datasetId: DS, parts: events(i * 2000, 2000, { c2: text }) }], Date.now() * 1000));
    await Promise.all(groups.map((g) => g.committed));
    // A checkpoint asked for by the last commit runs before the next staging (both through the gate).
    await store.append([{ datasetId: DS, parts: events(80_000, 10, { c2: 'x' }) }], Date.now() * 1000);
    expect(walBytes(file)).toBeLessThan(2 * threshold);
    expect(statSync(file).size).toBeGreaterThan(1024 * 1024);
    const t = quoteIdent(tableName(DS));
    expect(await store.query(`SELECT count(*) AS n, count(DISTINCT c1) AS d, count(c2) AS s FROM ${t}`)).toEqual([{ n: 80_010n, d: 80_010n, s: 80_010n }]);
    await store.close();
    const again = new DuckDbEventStore(file);
    await again.open();
    expect(await again.query(`SELECT count(*) AS n, max(c1) AS hi FROM ${t}`)).toEqual([{ n: 80_010n, hi: 80_009n }]);
    await again.close();
  });
});
