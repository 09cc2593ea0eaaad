// The event-store contract, run against every engine behind the seam: DuckDB (the embedded
// default), ClickHouse single node and ClickHouse as a 2-shard cluster (Distributed table over
// local MergeTree tables). Only the EventStore interface and its dialect are used: the same
// statements, the same expected answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnsOf } from '../src/stores/events/columns.js';
import { createEventStore } from '../src/stores/events/open.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN } from '../src/stores/events/engine.js';
import { tableName, type EventStore, type Scalar } from '../src/stores/events/types.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const DS = 'hcxds_contract1';
const DAY_US = 86_400_000_000;
const T0 = Date.UTC(2024, 0, 10) * 1000;

type Engine = { name: string; open(): Promise<EventStore>; cleanup(): Promise<void> };

function duckdb(): Engine {
  const dirs: string[] = [];
  return {
    name: 'DuckDB',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'waggle-contract-'));
      dirs.push(dir);
      const store = createEventStore('duckdb', dir);
      await store.open();
      return store;
    },
    async cleanup() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

function clickhouse(shards: 1 | 2): Engine & { start(): Promise<void> } {
  let cluster: ClickHouseCluster | undefined;
  return {
    name: shards === 1 ? 'ClickHouse single node' : 'ClickHouse 2 shards',
    async start() {
      cluster = await startClickHouse(shards);
    },
    async open() {
      const store = createEventStore(cluster!.setting(), '');
      await store.open();
      return store;
    },
    async cleanup() {
      await cluster?.stop();
    },
  };
}

const rows = (events: { timeUs: number; samplerate?: number; fields: Record<string, Scalar> }[]) =>
  columnsOf(events.map((e) => ({ timeUs: e.timeUs, samplerate: e.samplerate ?? 1, fields: new Map(Object.entries(e.fields)) })));

/** Rows of a statement with numbers as numbers (DuckDB answers BIGINT as bigint). */
async function read(store: EventStore, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await store.query(sql, params)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

function contract(engine: Engine) {
  let store: EventStore;
  const open = async () => {
    store = await engine.open();
    return store;
  };
  const t = () => store.dialect.quoteIdent(tableName(DS));
  const col = (name: string) => store.dialect.quoteIdent(name);

  afterAll(() => engine.cleanup());

  it('a new dataset has no table; ensureTable makes one; columns are added, listed in order, widened and dropped', async () => {
    await open();
    expect(await store.shape(DS)).toBeUndefined();
    await store.ensureTable(DS);
    await store.ensureTable(DS); // idempotent
    expect(await store.shape(DS)).toEqual({ columns: [], buckets: 0 });
    await store.changeColumns(DS, {
      add: [
        { physical: 'c1', type: 'string' },
        { physical: 'c2', type: 'integer' },
        { physical: 'c3', type: 'float' },
        { physical: 'c4', type: 'boolean' },
      ],
      widen: [],
    });
    await store.addColumn(DS, { physical: 'c5', type: 'integer' });
    expect((await store.shape(DS))!.columns).toEqual([
      { physical: 'c1', type: 'string' },
      { physical: 'c2', type: 'integer' },
      { physical: 'c3', type: 'float' },
      { physical: 'c4', type: 'boolean' },
      { physical: 'c5', type: 'integer' },
    ]);
    await store.append([{ datasetId: DS, parts: [rows([{ timeUs: T0, fields: { c2: 7, c5: 12 } }])] }], Date.now() * 1000);
    await store.changeColumnType(DS, { physical: 'c2', type: 'float' });
    await store.changeColumnType(DS, { physical: 'c5', type: 'string' });
    await store.dropColumn(DS, 'c4');
    expect((await store.shape(DS))!.columns).toEqual([
      { physical: 'c1', type: 'string' },
      { physical: 'c2', type: 'float' },
      { physical: 'c3', type: 'float' },
      { physical: 'c5', type: 'string' },
    ]);
    expect(await read(store, `SELECT c2, c5 FROM ${t()}`)).toEqual([{ c2: 7, c5: '12' }]);
    await store.close();
  });

  it('appends every kind of value and reads each back as stored, absent fields as NULL', async () => {
    await open();
    await store.ensureTable(DS);
    await store.changeColumns(DS, {
      add: [
        { physical: 'c1', type: 'string' },
        { physical: 'c2', type: 'integer' },
        { physical: 'c3', type: 'float' },
        { physical: 'c4', type: 'boolean' },
      ],
      widen: [],
    });
    const hostile = `it's a \\ "quote"\n\ttab \u0000 nul, ünïcødé 🐝, '; DROP TABLE x; --`;
    await store.append(
      [
        {
          datasetId: DS,
          parts: [
            rows([
              { timeUs: T0, samplerate: 4, fields: { c1: hostile, c2: -9_007_199_254_740_991, c3: 2.5, c4: true } },
              { timeUs: T0 + 1, fields: { c1: 42, c3: 1e300, c4: false } },
            ]),
            rows([{ timeUs: T0 + 2, fields: { c2: 9_007_199_254_740_991, c1: true } }]),
          ],
        },
      ],
      Date.now() * 1000,
    );
    const got = await read(
      store,
      `SELECT ${store.dialect.epochUs(col(TIME_COLUMN))} AS t, ${col(SAMPLERATE_COLUMN)} AS w, c1, c2, c3, ${store.dialect.boolToInt('c4')} AS c4 FROM ${t()} ORDER BY t`,
    );
    expect(got).toEqual([
      { t: T0, w: 4, c1: hostile, c2: -9_007_199_254_740_991, c3: 2.5, c4: 1 },
      { t: T0 + 1, w: 1, c1: '42', c2: null, c3: 1e300, c4: 0 },
      { t: T0 + 2, w: 1, c1: 'true', c2: 9_007_199_254_740_991, c3: null, c4: null },
    ]);
    // Bound parameters carry hostile text as a value, never as SQL.
    expect(await read(store, `SELECT count(*) AS n FROM ${t()} WHERE c1 = ${store.dialect.cast('$1', 'string')}`, [hostile])).toEqual([{ n: 1 }]);
    expect(await read(store, `SELECT count(*) AS n FROM ${t()} WHERE c1 = ${store.dialect.cast('$1', 'string')}`, ["' OR 1=1 --"])).toEqual([{ n: 0 }]);
    await store.close();
  });

  it('ingest times grow strictly in commit order, also across a reopen', async () => {
    await open();
    await store.ensureTable(DS);
    const at = Date.now() * 1000;
    for (let i = 0; i < 3; i++) await store.append([{ datasetId: DS, parts: [rows([{ timeUs: T0 + i, fields: {} }])] }], at);
    const staged = [];
    for (let i = 3; i < 6; i++) staged.push(await store.stage([{ datasetId: DS, parts: [rows([{ timeUs: T0 + i, fields: {} }])] }], at));
    await Promise.all(staged.map((s) => s.committed));
    const ingested = async () =>
      (await read(store, `SELECT ${store.dialect.epochUs(col(INGESTED_COLUMN))} AS i FROM ${t()} ORDER BY ${col(TIME_COLUMN)}`)).map((r) => Number(r.i));
    const first = await ingested();
    expect(first).toEqual([at, at + 1, at + 2, at + 3, at + 4, at + 5]);
    await store.close();
    await store.open();
    await store.append([{ datasetId: DS, parts: [rows([{ timeUs: T0 + 9, fields: {} }])] }], at);
    expect((await ingested()).at(-1)).toBe(at + 6);
    await store.close();
  });

  it('groups of several datasets; dropping a dataset drops its events', async () => {
    await open();
    const other = 'hcxds_contract2';
    await store.ensureTable(DS);
    await store.ensureTable(other);
    await store.changeColumns(DS, { add: [{ physical: 'c1', type: 'integer' }], widen: [] });
    const many = rows(Array.from({ length: 5000 }, (_, i) => ({ timeUs: T0 + i, fields: { c1: i } })));
    await store.append(
      [
        { datasetId: DS, parts: [many] },
        { datasetId: other, parts: [rows([{ timeUs: T0, fields: {} }])] },
        { datasetId: DS, parts: [many] },
      ],
      Date.now() * 1000,
    );
    expect(await read(store, `SELECT count(*) AS n, sum(c1) AS s FROM ${t()}`)).toEqual([{ n: 10000, s: 2 * ((4999 * 5000) / 2) }]);
    await store.dropDataset(other);
    expect(await store.shape(other)).toBeUndefined();
    await store.dropDataset(other); // idempotent
    expect(await store.shape(DS)).toEqual({ columns: [{ physical: 'c1', type: 'integer' }], buckets: 0 });
    await store.close();
  });

  it('retention deletes the events before the cutoff, across days, and says how many', async () => {
    await open();
    await store.ensureTable(DS);
    const times = [T0 - 3 * DAY_US, T0 - 2 * DAY_US, T0 - 5, T0 - 1, T0, T0 + 1, T0 + DAY_US];
    await store.append([{ datasetId: DS, parts: [rows(times.map((timeUs) => ({ timeUs, fields: {} })))] }], Date.now() * 1000);
    expect(await store.deleteBefore(T0)).toBe(4);
    const left = await read(store, `SELECT ${store.dialect.epochUs(col(TIME_COLUMN))} AS t FROM ${t()} ORDER BY t`);
    expect(left.map((r) => r.t)).toEqual([T0, T0 + 1, T0 + DAY_US]);
    expect(await store.deleteBefore(T0)).toBe(0);
    await store.close();
  });
}

describe('event store contract: DuckDB', () => contract(duckdb()));

for (const shards of [1, 2] as const) {
  const engine = clickhouse(shards);
  describe.skipIf(!clickhouseBinary)(`event store contract: ${engine.name}`, () => {
    beforeAll(() => engine.start(), 60_000);
    contract(engine);
  });
}
if (!clickhouseBinary) warnClickHouseSkipped('the ClickHouse event-store contract tests');
