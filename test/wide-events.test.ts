// Wide events on the embedded store at its default memory limit (256 MB): datasets of the sizes
// that used to stop taking events for good (100 fields over 500 columns up to 1,000 fields over
// 10,000), with checkpoints every megabyte of log (the wall was a commit or checkpoint after one),
// every batch stored, every value read back through queries whether its field is a column or an
// attribute, and still writable after a restart. Then what a failed commit leaves: nothing
// acknowledged lost, 503 with Retry-After, and the next batch stored once the cause is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { batch, columnsOf, DATASET_TOO_MANY_COLUMNS, results } from './ingest-helpers.js';
import { runQuery } from './query-helpers.js';
import { expectStoresAgree } from './store-agreement.js';
import { isColumn } from '../src/stores/events/placement.js';
import { columnsOf as columnsOfRows } from '../src/stores/events/columns.js';
import { createEventStore } from '../src/stores/events/open.js';
import { EventStoreUnavailable, tableName } from '../src/stores/events/types.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const MB = 1024 ** 2;
const EVENTS_PER_BATCH = 50;

/**
 * Batch `n` of a dataset whose events carry `fields` fields each, named from a pool of `columns`
 * names taken in turn (so the dataset grows to `columns` columns): strings, integers and booleans
 * by position. Field `field_<k>` of event `e` of batch `n` has a value computed from (n, e, k).
 */
function wideBatch(fields: number, columns: number, n: number): { data: Record<string, string | number | boolean> }[] {
  return Array.from({ length: EVENTS_PER_BATCH }, (_, e) => {
    const first = ((n * EVENTS_PER_BATCH + e) * fields) % columns;
    const data: Record<string, string | number | boolean> = {};
    for (let i = 0; i < fields; i++) {
      const k = (first + i) % columns;
      data[`field_${k}`] = k % 3 === 0 ? `v${n}.${e}.${k}` : k % 3 === 1 ? n * 1000 + e : (n + e + k) % 2 === 0;
    }
    return { data };
  });
}

/** How many events of batches 0 … n-1 have `field_<k>`, and the sum of its values (integer fields). */
function expected(fields: number, columns: number, batches: number, k: number): { count: number; sum: number } {
  let count = 0;
  let sum = 0;
  for (let n = 0; n < batches; n++) {
    for (const ev of wideBatch(fields, columns, n)) {
      const v = ev.data[`field_${k}`];
      if (v === undefined) continue;
      count++;
      if (typeof v === 'number') sum += v;
    }
  }
  return { count, sum };
}

async function send(t: TestApp, ds: string, body: unknown): Promise<{ status: number; error?: string }[]> {
  const res = await batch(t, ds, body);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return results(res);
}

const SIZES = [
  { fields: 100, columns: 500, batches: 12 },
  { fields: 200, columns: 1000, batches: 12 },
  { fields: 500, columns: 2000, batches: 8 },
  { fields: 1000, columns: 5000, batches: 6 },
  { fields: 1000, columns: 10_000, batches: 6 },
];

describe('wide datasets on the default memory limit (DuckDB, 256 MB)', { timeout: 300_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null }, eventStoreLimits: { memoryBytes: 256 * MB, checkpointBytes: 1 * MB } });
  });
  afterAll(() => t.close());

  it.each(SIZES)('$fields fields per event over $columns columns: every batch stored, every field queryable', async ({ fields, columns, batches }) => {
    const ds = `wide-${fields}-${columns}`;
    for (let n = 0; n < batches; n++) {
      const r = await send(t, ds, wideBatch(fields, columns, n));
      expect(r.every((x) => x.status === 202), JSON.stringify(r.find((x) => x.status !== 202))).toBe(true);
    }
    const cols = await columnsOf(t, ds);
    expect(cols.size).toBe(columns);
    // Within the table's budget of columns; the rest are attributes.
    const hot = [...cols.values()].filter((c) => isColumn(c.physical)).length;
    expect(hot).toBeGreaterThan(0);
    expect(hot).toBeLessThanOrEqual(t.events.hotColumns);
    expect(columns - hot).toBeGreaterThan(0);

    // Every event, and a column's and an attribute's values, through the query API.
    const total = await runQuery(t, ds, { calculations: [{ op: 'COUNT' }], time_range: 3600 });
    expect(total.data.results[0].data.COUNT).toBe(batches * EVENTS_PER_BATCH);
    const asColumn = [...cols.values()].find((c) => isColumn(c.physical) && c.type === 'integer')!;
    const asAttribute = [...cols.values()].reverse().find((c) => !isColumn(c.physical) && c.type === 'integer')!;
    for (const c of [asColumn, asAttribute]) {
      const k = Number(c.keyName.slice('field_'.length));
      const want = expected(fields, columns, batches, k);
      const r = await runQuery(t, ds, {
        calculations: [{ op: 'COUNT' }, { op: 'SUM', column: c.keyName }],
        filters: [{ column: c.keyName, op: 'exists' }],
        time_range: 3600,
      });
      expect(r.data.results[0].data, `${c.keyName} (${c.physical})`).toMatchObject({ COUNT: want.count, [`SUM(${c.keyName})`]: want.sum });
    }
    // A string attribute as a breakdown.
    const text = [...cols.values()].reverse().find((c) => !isColumn(c.physical) && c.type === 'string')!;
    const grouped = await runQuery(t, ds, { calculations: [{ op: 'COUNT' }], breakdowns: [text.keyName], filters: [{ column: text.keyName, op: 'exists' }], time_range: 3600 });
    const k = Number(text.keyName.slice('field_'.length));
    expect(grouped.data.results.reduce((s: number, r: { data: { COUNT: number } }) => s + r.data.COUNT, 0)).toBe(expected(fields, columns, batches, k).count);
    for (const r of grouped.data.results) expect(r.data[text.keyName]).toMatch(new RegExp(`^v\\d+\\.\\d+\\.${k}$`));
  });

  it('past 10,000 columns a new field is refused with "Dataset has too many columns."; the rest of the event\'s dataset still takes events', async () => {
    const ds = 'wide-1000-10000';
    const r = await send(t, ds, [{ data: { field_1: 1, brand_new: 'x' } }, { data: { field_1: 2 } }]);
    expect(r).toEqual([{ status: 400, error: DATASET_TOO_MANY_COLUMNS }, { status: 202 }]);
    await expectStoresAgree(t.store, t.events);
  });

  it('after a restart every dataset takes events again', async () => {
    await t.stop();
    t = await makeApp({ settings: { queryResultRateLimit: null }, eventStoreLimits: { memoryBytes: 256 * MB, checkpointBytes: 1 * MB }, reopen: t });
    for (const { fields, columns, batches } of SIZES) {
      const r = await send(t, `wide-${fields}-${columns}`, wideBatch(fields, columns, batches));
      expect(r.every((x) => x.status === 202)).toBe(true);
    }
    await expectStoresAgree(t.store, t.events);
  });
});

describe('a failed commit never breaks a dataset (DuckDB)', { timeout: 120_000 }, () => {
  // 300 columns of a table at 64 MB: more than its commits and checkpoints can hold (what every
  // wide dataset met before attributes; here the hot-column budget is overridden to get there).
  const settings = { queryResultRateLimit: null, hotColumns: 400 };
  const limits = { memoryBytes: 64 * MB, checkpointBytes: 256 * 1024 };

  it('out of memory: 503 with Retry-After, nothing half stored, other datasets go on, and once memory is back the same dataset takes events', async () => {
    const t = await makeApp({ settings, eventStoreLimits: limits });
    try {
      let acked = 0;
      let refused: Awaited<ReturnType<typeof batch>> | undefined;
      for (let n = 0; n < 40 && !refused; n++) {
        const res = await batch(t, 'too-wide', wideBatch(30, 300, n));
        if (res.statusCode === 200) {
          expect(results(res).every((x) => x.status === 202)).toBe(true);
          acked += EVENTS_PER_BATCH;
        } else refused = res;
      }
      expect(refused, 'the commits never failed').toBeDefined();
      expect(refused!.statusCode).toBe(503);
      // (An HTTP date on /1/ routes: 5 s from now.)
      expect(Date.parse(String(refused!.headers['retry-after'])) - t.clock.ms).toBeGreaterThan(3000);
      expect(json(refused!)).toEqual({ error: expect.stringMatching(/^the event store could not store the events: it ran out of memory \(WAGGLE_EVENT_STORE_MEMORY\); retry later$/) });
      // Another dataset still takes events meanwhile.
      expect(await send(t, 'narrow', [{ data: { a: 1 } }])).toEqual([{ status: 202 }]);
      const count = async () => (await runQuery(t, 'too-wide', { calculations: [{ op: 'COUNT' }], time_range: 3600 })).data.results[0]?.data.COUNT ?? 0;
      expect(await count()).toBe(acked);

      // The cause goes: more memory. The same dataset takes its next batch, without a restart.
      await t.events.query(`SET memory_limit = '1GB'`);
      const r = await send(t, 'too-wide', wideBatch(30, 300, 99));
      expect(r.every((x) => x.status === 202)).toBe(true);
      expect(await count()).toBe(acked + EVENTS_PER_BATCH);
      await expectStoresAgree(t.store, t.events);
    } finally {
      await t.close();
    }
  });

  it('a checkpoint that fails fatally: the store opens its file again; every acknowledged event is kept', async () => {
    const t = await makeApp({ settings, eventStoreLimits: { memoryBytes: 64 * MB, checkpointBytes: 1024 ** 3 } });
    try {
      // Checkpoints of 60 dense columns soon do not fit in 64 MB: DuckDB invalidates the database.
      let sent = 0;
      let fatal: unknown;
      for (let n = 0; n < 30 && !fatal; n++) {
        expect((await send(t, 'dense', wideBatch(60, 60, n))).every((x) => x.status === 202)).toBe(true);
        sent += EVENTS_PER_BATCH;
        if (n % 3 === 2) fatal = await t.events.query('CHECKPOINT').then(() => undefined, (err: unknown) => err);
      }
      expect(String(fatal)).toMatch(/FATAL Error: Failed to create checkpoint/);
      // The next write waits for the store to open again, and is stored.
      expect((await send(t, 'dense', wideBatch(60, 60, 99))).every((x) => x.status === 202)).toBe(true);
      const r = await runQuery(t, 'dense', { calculations: [{ op: 'COUNT' }], time_range: 3600 });
      expect(r.data.results[0].data.COUNT).toBe(sent + EVENTS_PER_BATCH);
    } finally {
      await t.events.query(`SET memory_limit = '1GB'`).catch(() => undefined);
      await t.close();
    }
  });
});

describe('a table with more columns than its memory holds (made before attributes)', { timeout: 120_000 }, () => {
  it('at the next start its least written fields become attributes; every value reads back the same, and it takes events again', async () => {
    // 300 columns, as every field was a column before (the budget overridden, memory unlimited).
    let t = await makeApp({ settings: { queryResultRateLimit: null, hotColumns: 1000 } });
    try {
      for (let n = 0; n < 6; n++) expect((await send(t, 'legacy', wideBatch(30, 300, n))).every((x) => x.status === 202)).toBe(true);
      expect([...(await columnsOf(t, 'legacy')).values()].every((c) => isColumn(c.physical))).toBe(true);
      const spec = { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'field_4' }, { op: 'COUNT_DISTINCT', column: 'field_3' }, { op: 'MAX', column: 'field_298' }], time_range: 3600 };
      const before = (await runQuery(t, 'legacy', spec)).data.results;
      const texts = (await runQuery(t, 'legacy', { calculations: [{ op: 'COUNT' }], breakdowns: ['field_297', 'field_5'], time_range: 3600 })).data.results;
      await t.stop();

      // Opened at 64 MB, whose commits hold 20 columns: the table is rewritten at start.
      t = await makeApp({ settings: { queryResultRateLimit: null }, eventStoreLimits: { memoryBytes: 64 * MB, checkpointBytes: 256 * 1024 }, reopen: t });
      const cols = [...(await columnsOf(t, 'legacy')).values()];
      expect(cols.filter((c) => isColumn(c.physical)).length).toBeLessThanOrEqual(t.events.hotColumns);
      expect((await t.events.shape(cols[0].datasetId))!.columns.length).toBeLessThanOrEqual(t.events.hotColumns);
      expect((await runQuery(t, 'legacy', spec)).data.results).toEqual(before);
      expect((await runQuery(t, 'legacy', { calculations: [{ op: 'COUNT' }], breakdowns: ['field_297', 'field_5'], time_range: 3600 })).data.results).toEqual(texts);
      for (let n = 6; n < 16; n++) expect((await send(t, 'legacy', wideBatch(30, 300, n))).every((x) => x.status === 202)).toBe(true);
      expect((await runQuery(t, 'legacy', { calculations: [{ op: 'COUNT' }], time_range: 3600 })).data.results[0].data.COUNT).toBe(16 * EVENTS_PER_BATCH);
      await expectStoresAgree(t.store, t.events);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!clickhouseBinary)('wide datasets and failed inserts on ClickHouse', { timeout: 300_000 }, () => {
  let cluster: ClickHouseCluster | undefined;
  beforeAll(async () => {
    cluster = await startClickHouse(2);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it.each([
    { fields: 1000, columns: 5000, batches: 4 },
    { fields: 1000, columns: 10_000, batches: 4 },
  ])('2 shards, $fields fields per event over $columns columns: every batch stored, every field queryable', async ({ fields, columns, batches }) => {
    const t = await makeApp({ settings: { queryResultRateLimit: null }, eventStore: cluster!.setting() });
    try {
      const ds = `wide-${fields}-${columns}`;
      for (let n = 0; n < batches; n++) expect((await send(t, ds, wideBatch(fields, columns, n))).every((x) => x.status === 202)).toBe(true);
      const cols = await columnsOf(t, ds);
      expect(cols.size).toBe(columns);
      expect([...cols.values()].filter((c) => isColumn(c.physical)).length).toBeLessThanOrEqual(t.events.hotColumns);
      const attribute = [...cols.values()].reverse().find((c) => !isColumn(c.physical) && c.type === 'integer')!;
      const k = Number(attribute.keyName.slice('field_'.length));
      const want = expected(fields, columns, batches, k);
      const r = await runQuery(t, ds, { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: attribute.keyName }], filters: [{ column: attribute.keyName, op: 'exists' }], time_range: 3600 });
      expect(r.data.results[0].data).toMatchObject({ COUNT: want.count, [`SUM(${attribute.keyName})`]: want.sum });
    } finally {
      await t.close();
    }
  });

  it('a shard that does not answer: 503 with Retry-After, no event half stored; once it is back the next batch goes in', async () => {
    const t = await makeApp({ settings: { queryResultRateLimit: null }, eventStore: cluster!.setting() });
    try {
      const events = (n: number) => Array.from({ length: 200 }, (_, i) => ({ data: { seq: n * 1000 + i, service: `s${i % 7}` } }));
      expect((await send(t, 'sharded', events(0))).every((x) => x.status === 202)).toBe(true);
      await cluster!.kill(1);
      const refused = await batch(t, 'sharded', events(1));
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBeTruthy();
      expect(json(refused).error).toMatch(/^the event store could not store the events: .*did not answer; retry later$/);
      await cluster!.restart(1);
      expect((await send(t, 'sharded', events(2))).every((x) => x.status === 202)).toBe(true);
      // Exactly the acknowledged events: none of the refused batch's rows stayed on the shard that answered.
      const r = await runQuery(t, 'sharded', { calculations: [{ op: 'COUNT' }, { op: 'COUNT_DISTINCT', column: 'seq' }], time_range: 3600 });
      expect(r.data.results[0].data).toMatchObject({ COUNT: 400, 'COUNT_DISTINCT(seq)': 400 });
    } finally {
      await t.close();
    }
  });

  it('a group whose second insert fails: the first dataset\'s rows of it are deleted again on every shard', async () => {
    const store = createEventStore(cluster!.setting(), '');
    await store.open();
    try {
      const [a, b] = ['hcxds_undoa', 'hcxds_undob'];
      for (const ds of [a, b]) {
        await store.ensureTable(ds);
        await store.changeColumns(ds, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
      }
      const rows = (n: number) => columnsOfRows(Array.from({ length: n }, (_, i) => ({ timeUs: Date.now() * 1000, samplerate: 1, fields: new Map([['c1', i]]) })));
      await store.append([{ datasetId: a, parts: [rows(10)] }], Date.now() * 1000);
      // The second dataset's table goes away behind the store's back (which still knows its shape): its insert fails.
      expect(await store.shape(b)).toBeDefined();
      await store.execute([{ sql: `DROP TABLE ${tableName(b)}` }]);
      const { committed } = await store.stage([{ datasetId: a, parts: [rows(100)] }, { datasetId: b, parts: [rows(5)] }], Date.now() * 1000);
      await expect(committed).rejects.toBeInstanceOf(EventStoreUnavailable);
      expect(Number((await store.query(`SELECT count() AS n FROM ${tableName(a)}`))[0].n)).toBe(10);
    } finally {
      await store.close();
    }
  });
});
if (!clickhouseBinary) warnClickHouseSkipped('the wide-event and failed-insert tests on ClickHouse');
