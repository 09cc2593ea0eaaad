// Promotion: an attribute that turns out to be frequent gets a table column of its own
// (src/stores/events/placement.ts, src/ingest/attribute-promotion.ts), while ingest goes on, losing no value:
// its older values move from the bucket into the column, and reads then take the column alone. A
// move interrupted by a restart goes on at the next start. On DuckDB and ClickHouse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { batch, columnsOf, eventually, results } from './ingest-helpers.js';
import { runQuery } from './query-helpers.js';
import { expectStoresAgree } from './store-agreement.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { isColumn, parsePlacement } from '../src/stores/events/placement.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDbEventStore, quoteIdent } from '../src/stores/events/duckdb-store.js';
import { tableName } from '../src/stores/events/types.js';
import { attributeTextSql, entrySql } from '../src/stores/events/duckdb-attributes.js';

/** Four table columns: three for new fields, one kept for promotion. */
const settings = { queryResultRateLimit: null, hotColumns: 4 };

async function send(t: TestApp, ds: string, events: unknown[]): Promise<void> {
  const res = await batch(t, ds, events);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(results(res).every((r) => r.status === 202), res.body.slice(0, 300)).toBe(true);
}

/** Events of batch `n`: three dense fields, `late` in one event of the first batch and in every event after. */
const events = (n: number) =>
  Array.from({ length: 250 }, (_, i) => ({
    data: { a: `a${i % 5}`, b: i, c: i % 2 === 0, ...(n > 0 || i === 0 ? { late: n * 1000 + i } : {}), ...(i % 50 === 0 ? { rare: `r${n}` } : {}) },
  }));

/** Sum of `late` over batches 0 … n-1. */
const lateSum = (n: number) => {
  let s = 0;
  for (let k = 0; k < n; k++) for (const e of events(k)) s += (e.data as { late?: number }).late ?? 0;
  return s;
};

async function expectLate(t: TestApp, ds: string, batches: number): Promise<void> {
  const r = await runQuery(t, ds, { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'late' }], filters: [{ column: 'late', op: 'exists' }], time_range: 3600 });
  expect(r.data.results[0].data).toMatchObject({ COUNT: 1 + (batches - 1) * 250, 'SUM(late)': lateSum(batches) });
}

function promotion(engine: { name: string; setting: () => string | undefined }) {
  it(`${engine.name}: a frequent attribute moves to a column while ingest goes on; every value is kept`, async () => {
    const t = await makeApp({ settings, eventStore: engine.setting() });
    try {
      await send(t, 'promoted', events(0));
      const first = (await columnsOf(t, 'promoted')).get('late')!;
      expect(isColumn(first.physical), first.physical).toBe(false);
      // `late` is now in every event: after 1,000 events it is worth the spare column.
      let n = 1;
      const done = await eventually(
        async () => {
          await send(t, 'promoted', events(n++));
          return (await columnsOf(t, 'promoted')).get('late')!.physical;
        },
        (physical) => /^c\d+$/.test(physical),
        60_000,
      );
      expect(parsePlacement(done).attribute).toBeUndefined();
      // The rare field stays an attribute (no column left for it).
      expect(isColumn((await columnsOf(t, 'promoted')).get('rare')!.physical)).toBe(false);
      await send(t, 'promoted', events(n++));
      await expectLate(t, 'promoted', n);
      await expectStoresAgree(t.store, t.events);
    } finally {
      await t.close();
    }
  });

  it(`${engine.name}: a move cut short by a restart is finished at the next start`, async () => {
    let t = await makeApp({ settings: { ...settings, hotColumns: 3 }, eventStore: engine.setting() });
    try {
      for (let n = 0; n < 3; n++) await send(t, 'resumed', events(n));
      const late = (await columnsOf(t, 'resumed')).get('late')!;
      const attribute = parsePlacement(late.physical).attribute!;
      // What a stop after the first step leaves: the column made, the field moving to it, no value moved yet.
      const ds = late.datasetId;
      await t.events.changeColumns(ds, { add: [{ physical: 'c90', type: 'integer' }], widen: [] });
      await t.store.updateColumn(ds, late.id, { physical: `c90+a${attribute.key}.${attribute.bucket}` });
      await t.stop();
      t = await makeApp({ settings: { ...settings, hotColumns: 3 }, eventStore: engine.setting(), reopen: t });
      await expectLate(t, 'resumed', 3);
      await eventually(async () => (await columnsOf(t, 'resumed')).get('late')!.physical, (p) => p === 'c90', 20_000);
      await expectLate(t, 'resumed', 3);
      await send(t, 'resumed', events(3));
      await expectLate(t, 'resumed', 4);
      await expectStoresAgree(t.store, t.events);
    } finally {
      await t.close();
    }
  });
}

function deletion(engine: { name: string; setting: () => string | undefined }) {
  it(`${engine.name}: deleting an attribute's column deletes its values; a new field given its number has none of them`, async () => {
    const t = await makeApp({ settings: { queryResultRateLimit: null, hotColumns: 0 }, eventStore: engine.setting() });
    try {
      await send(t, 'deleted', [{ data: { a: 1, b: 'x' } }, { data: { a: 2, b: 'y' } }]);
      const b = (await columnsOf(t, 'deleted')).get('b')!;
      expect(isColumn(b.physical)).toBe(false);
      const del = await t.app.inject({ method: 'DELETE', url: `/1/columns/deleted/${b.id}`, headers: t.config });
      expect(del.statusCode, del.body).toBe(204);
      // The next new field takes the freed number (the highest).
      await send(t, 'deleted', [{ data: { a: 3, c: 'new' } }]);
      const c = (await columnsOf(t, 'deleted')).get('c')!;
      expect(parsePlacement(c.physical).attribute!.key).toBe(parsePlacement(b.physical).attribute!.key);
      const r = await runQuery(t, 'deleted', { calculations: [{ op: 'COUNT' }], breakdowns: ['c'], filters: [{ column: 'c', op: 'exists' }], time_range: 3600 });
      expect(r.data.results.map((x: { data: Record<string, unknown> }) => x.data)).toEqual([{ c: 'new', COUNT: 1 }]);
      await expectStoresAgree(t.store, t.events);
    } finally {
      await t.close();
    }
  });
}

describe('attribute promotion', { timeout: 120_000 }, () => {
  deletion({ name: 'DuckDB', setting: () => undefined });
  promotion({ name: 'DuckDB', setting: () => undefined });
});

describe('a move on DuckDB past the rows it moves', () => {
  it('leaves the values in the bucket (the field reads through both) and moves them, in slices, once few enough events have them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waggle-move-'));
    const DS = 'hcxds_move1';
    const t = quoteIdent(tableName(DS));
    const attribute = { key: 12, bucket: 0 };
    const open = async (moveMaxRows: number) => {
      const store = new DuckDbEventStore(join(dir, 'events.duckdb'), { moveMaxRows });
      await store.open();
      return store;
    };
    try {
      let store = await open(100);
      await store.ensureTable(DS);
      await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [], buckets: 1 });
      await store.query(`INSERT INTO ${t} (__time, __samplerate, __ingested, c1, __a0) SELECT now()::TIMESTAMP, 1, now()::TIMESTAMP, i, ${entrySql(12, 'CAST(i AS VARCHAR)')} FROM range(30000) r(i)`);
      await store.changeColumns(DS, { add: [{ physical: 'c13', type: 'integer' }], widen: [] });
      const value = attributeTextSql(attribute);
      const state = `SELECT count(c13) AS moved, count(${value}) AS left, sum(coalesce(c13, TRY_CAST(${value} AS BIGINT))) AS total FROM ${t}`;
      expect(await store.moveToColumn(DS, attribute, 'c13')).toBe(false);
      expect(await store.query(state)).toEqual([{ moved: 0n, left: 30000n, total: 449985000n }]);
      await store.close();
      // (30,000 rows: more than the first slice takes.)
      store = await open(100_000);
      expect(await store.moveToColumn(DS, attribute, 'c13')).toBe(true);
      expect(await store.query(state)).toEqual([{ moved: 30000n, left: 0n, total: 449985000n }]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!clickhouseBinary)('attribute promotion on ClickHouse', { timeout: 180_000 }, () => {
  let cluster: ClickHouseCluster | undefined;
  beforeAll(async () => {
    cluster = await startClickHouse(1);
  }, 60_000);
  afterAll(() => cluster?.stop());
  // (One database for both tests: the restart opens it again. Each app's datasets have tables of their own.)
  promotion({ name: 'ClickHouse', setting: () => cluster!.setting(`waggle_promotion_${process.pid}`) });
  deletion({ name: 'ClickHouse', setting: () => cluster!.setting() });
});
if (!clickhouseBinary) warnClickHouseSkipped('attribute promotion on ClickHouse');

describe('buckets of the earlier layout (MAP columns) on DuckDB', () => {
  it('become text at the next start, every value read back the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waggle-maps-'));
    const DS = 'hcxds_maps1';
    const t = quoteIdent(tableName(DS));
    const values = ['plain', '', 'a\u0001b', '\u0002a', '\u0002b\u0001', '7=x', 'é 🐝'];
    try {
      let store = new DuckDbEventStore(join(dir, 'events.duckdb'));
      await store.open();
      await store.ensureTable(DS);
      await store.query(`ALTER TABLE ${t} ADD COLUMN __a0 MAP(INTEGER, VARCHAR)`);
      await store.query(`ALTER TABLE ${t} ADD COLUMN __a1 MAP(INTEGER, VARCHAR)`);
      const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;
      for (const [i, v] of values.entries()) {
        await store.query(`INSERT INTO ${t} VALUES (now()::TIMESTAMP, 1, now()::TIMESTAMP, MAP {5: ${literal(v)}, 7: '${i}'}, ${i % 2 ? 'NULL' : 'MAP {}'})`);
      }
      await store.close();
      store = new DuckDbEventStore(join(dir, 'events.duckdb'));
      await store.open();
      try {
        expect(await store.query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '${tableName(DS)}' AND column_name LIKE '%a_'`)).toEqual([
          { column_name: '__a0', data_type: 'VARCHAR' },
          { column_name: '__a1', data_type: 'VARCHAR' },
        ]);
        const five = attributeTextSql({ bucket: 0, key: 5 });
        const seven = attributeTextSql({ bucket: 0, key: 7 });
        const rows = await store.query(`SELECT ${five} AS v, ${seven} AS i, __a1 AS empty FROM ${t} ORDER BY TRY_CAST(${seven} AS INTEGER)`);
        expect(rows).toEqual(values.map((v, i) => ({ v, i: String(i), empty: null })));
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
