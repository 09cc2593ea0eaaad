// A ClickHouse table with more columns than its hot-column budget (made before tables had
// attributes, or with a larger WAGGLE_HOT_COLUMNS) is rewritten at the next start: its least
// recently written fields become attributes (ClickHouseEventStore.columnsToAttributes, run by the
// writer's fitBudget), on one node and on 2 shards, and every query answers as before. ClickHouse
// has no transactions: the rewrite is steps, and a stop between any two of them (simulated by
// the store's `stopped` callback) is finished at the next start with no value lost or read twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { batch, columnsOf, eventually, results } from './ingest-helpers.js';
import { runQuery } from './query-helpers.js';
import { expectStoresAgree } from './store-agreement.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { isColumn, parsePlacement } from '../src/stores/events/placement.js';
import { tableName } from '../src/stores/events/types.js';
import { ColumnsToAttributesStopped } from '../src/stores/events/clickhouse-store.js';

const POOL = 200;
const FIELDS = 40;
const EVENTS = 50;
/** The budget the table is made with (every field a column), and the one it is opened with again. */
const WIDE = { queryResultRateLimit: null, hotColumns: 1000 };
const NARROW = { queryResultRateLimit: null, hotColumns: 40 };

/** Batch `n`: each event carries FIELDS of POOL fields taken in turn; `f<k>` is a string, integer, float or boolean by k % 4. */
function events(n: number): { data: Record<string, string | number | boolean> }[] {
  return Array.from({ length: EVENTS }, (_, e) => {
    const first = ((n * EVENTS + e) * FIELDS) % POOL;
    const data: Record<string, string | number | boolean> = { seq: n * EVENTS + e };
    for (let i = 0; i < FIELDS; i++) {
      const k = (first + i) % POOL;
      data[`f${k}`] = k % 4 === 0 ? `s${(n + e) % 7}` : k % 4 === 1 ? n * 1000 + e - 40 : k % 4 === 2 ? (n * EVENTS + e) / 8 + 0.1 : (n + e + k) % 3 === 0;
    }
    return { data };
  });
}

async function send(t: TestApp, ds: string, body: unknown[]): Promise<void> {
  const res = await batch(t, ds, body);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(results(res).every((r) => r.status === 202), res.body.slice(0, 300)).toBe(true);
}

/** Fields the queries below read: far from the first ones (so the rewrite moves them). */
const READ = { strings: ['f120', 'f164', 'f196'], integers: ['f121', 'f157', 'f189'], floats: ['f122', 'f150', 'f198'], booleans: ['f123', 'f175'] };
const SPECS = [
  {
    calculations: [
      { op: 'COUNT' },
      ...READ.integers.flatMap((c) => [{ op: 'SUM', column: c }, { op: 'MIN', column: c }]),
      ...READ.floats.flatMap((c) => [{ op: 'SUM', column: c }, { op: 'MAX', column: c }, { op: 'AVG', column: c }]),
      ...READ.strings.map((c) => ({ op: 'COUNT_DISTINCT', column: c })),
      { op: 'COUNT_DISTINCT', column: 'f123' },
    ],
    time_range: 3600,
  },
  { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'f157' }], filters: [{ column: 'f157', op: '>', value: 2000 }], time_range: 3600 },
  { calculations: [{ op: 'COUNT' }], filters: [{ column: 'f150', op: 'exists' }, { column: 'f164', op: '=', value: 's3' }], time_range: 3600 },
  { calculations: [{ op: 'COUNT' }], filters: [{ column: 'f175', op: '=', value: true }], time_range: 3600 },
  { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'f121' }, { op: 'MAX', column: 'f122' }], breakdowns: ['f120', 'f123'], time_range: 3600 },
  { calculations: [{ op: 'COUNT' }], breakdowns: ['f198'], filters: [{ column: 'f198', op: 'exists' }], time_range: 3600 },
];

/**
 * The answers to SPECS, floats to 12 significant digits: ClickHouse adds up floats in the order it
 * reads parts and threads, which merges and mutations change (the last bits of a float SUM or AVG
 * differ between two runs of one query over the same rows, whatever the layout).
 */
async function answers(t: TestApp, ds: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const round = (x: unknown): unknown =>
    typeof x === 'number' ? Number(x.toPrecision(12)) : Array.isArray(x) ? x.map(round) : x && typeof x === 'object' ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, round(v)])) : x;
  for (const spec of SPECS) out.push(round((await runQuery(t, ds, spec)).data.results));
  return out;
}

/** The columns of a table on one node (ClickHouse's HTTP interface). */
async function nodeColumns(port: number, database: string, table: string): Promise<string[]> {
  const sql = `SELECT name FROM system.columns WHERE database = '${database}' AND table = '${table}' FORMAT TSV`;
  const res = await fetch(`http://127.0.0.1:${port}/?query=${encodeURIComponent(sql)}`);
  return (await res.text()).split('\n').filter(Boolean);
}

function rewrite(shards: 1 | 2) {
  describe.skipIf(!clickhouseBinary)(`ClickHouse, ${shards === 1 ? 'one node' : '2 shards'}: a table past its hot-column budget`, { timeout: 240_000 }, () => {
    let cluster: ClickHouseCluster | undefined;
    beforeAll(async () => {
      cluster = await startClickHouse(shards);
    }, 60_000);
    afterAll(() => cluster?.stop());
    let databases = 0;

    /**
     * Makes the dataset with every field a column, keeps its answers, lets `interrupt` act on the
     * running app (a stopped rewrite), then opens the app again at the small budget and checks
     * that the table was rewritten and every answer is the same; then writes again.
     */
    async function check(interrupt?: (t: TestApp, ds: string) => Promise<void>): Promise<void> {
      const database = `waggle_rewrite_${process.pid}_${shards}_${++databases}`;
      let t = await makeApp({ settings: WIDE, eventStore: cluster!.setting(database) });
      try {
        // Two inserts of four batches' events (each insert is a part per shard: fewer parts, faster mutations on 18.16).
        for (const ns of [[0, 1, 2, 3], [4, 5, 6, 7]]) await send(t, 'legacy', ns.flatMap(events));
        const before = [...(await columnsOf(t, 'legacy')).values()];
        expect(before.length).toBe(POOL + 1);
        expect(before.every((c) => isColumn(c.physical))).toBe(true);
        const datasetId = before[0].datasetId;
        const want = await answers(t, 'legacy');
        if (interrupt) await interrupt(t, datasetId);
        await t.stop();

        t = await makeApp({ settings: NARROW, eventStore: cluster!.setting(database), reopen: t });
        // (The rewrite runs right after the start: done once the main node's table has dropped the columns, last.)
        await eventually(async () => (await t.events.shape(datasetId))!.columns.length, (n) => n <= NARROW.hotColumns, 120_000);
        const cols = await columnsOf(t, 'legacy');
        const hot = [...cols.values()].filter((c) => isColumn(c.physical));
        expect(hot.length).toBeLessThanOrEqual(NARROW.hotColumns);
        for (const f of Object.values(READ).flat()) expect(isColumn(cols.get(f)!.physical), f).toBe(false);
        // Every node's tables have the kept columns alone (the Distributed and the local ones).
        const kept = new Set(hot.map((c) => parsePlacement(c.physical).column!));
        const table = tableName(datasetId);
        for (const port of cluster!.httpPorts) {
          for (const name of shards === 2 ? [table, `${table}_local`] : [table]) {
            const fields = (await nodeColumns(port, database, name)).filter((c) => /^c\d+$/.test(c));
            expect(fields.sort(), `${name} on port ${port}`).toEqual([...kept].sort());
          }
        }
        // No key is in a bucket twice, and no bucket holds a copy of a column still there.
        const buckets = (await t.events.shape(datasetId))!.buckets;
        for (let b = 0; b < buckets; b++) {
          const k = `__a${b}_k`;
          const twice = await t.events.query(`SELECT count() AS n FROM ${table} WHERE arrayUniq(${k}) != length(${k})`);
          expect(Number(twice[0].n), `bucket ${b}`).toBe(0);
          const numbers = [...kept].map((c) => Number(c.slice(1)));
          const copies = await t.events.query(`SELECT count() AS n FROM ${table} WHERE hasAny(${k}, [${numbers.join(', ')}])`);
          expect(Number(copies[0].n), `bucket ${b}`).toBe(0);
        }
        expect(await answers(t, 'legacy')).toEqual(want);
        await expectStoresAgree(t.store, t.events);
        // It takes events again, old fields and new ones.
        await send(t, 'legacy', events(8));
        await send(t, 'legacy', [{ data: { fresh: 'yes', f121: 5 } }]);
        const r = await runQuery(t, 'legacy', { calculations: [{ op: 'COUNT' }, { op: 'COUNT_DISTINCT', column: 'seq' }], time_range: 3600 });
        expect(r.data.results[0].data).toMatchObject({ COUNT: 9 * EVENTS + 1, 'COUNT_DISTINCT(seq)': 9 * EVENTS });
      } finally {
        await t.close();
      }
    }

    /** The fields numbered past 25 (fitBudget moves those past 30 here: a stopped run of other columns than the next). */
    const movesOf = async (t: TestApp, datasetId: string) =>
      (await t.store.listColumns(datasetId))
        .map((c) => ({ id: c.id, n: Number(parsePlacement(c.physical).column!.slice(1)) }))
        .filter(({ n }) => n > 25)
        .map(({ id, n }) => ({ id, column: `c${n}`, attribute: { key: n, bucket: n % 16 } }));

    /** The copy of those fields into the buckets, stopped at its `at`-th question (before a mutation on a shard). */
    const stoppedAt = (at: number) => async (t: TestApp, datasetId: string) => {
      let asked = 0;
      const run = t.events.columnsToAttributes!(datasetId, await movesOf(t, datasetId), 16, () => ++asked >= at);
      if (Number.isFinite(at)) await expect(run).rejects.toBeInstanceOf(ColumnsToAttributesStopped);
      else await run;
    };

    /** The whole copy, then the registry naming the attributes of a `share` of the fields; `dropLocal`: the shards' tables dropped those columns, not the Distributed tables. */
    const registered = (share: number, dropLocal = false) => async (t: TestApp, datasetId: string) => {
      await stoppedAt(Infinity)(t, datasetId);
      const moves = await movesOf(t, datasetId);
      const done = moves.slice(0, Math.ceil(moves.length * share));
      for (const m of done) await t.store.updateColumn(datasetId, m.id, { physical: `a${m.attribute.key}.${m.attribute.bucket}` });
      if (!dropLocal) return;
      for (const port of cluster!.httpPorts) {
        for (let i = 0; i < done.length; i += 12) {
          const sql = `ALTER TABLE ${databaseOf(t)}.${tableName(datasetId)}_local ${done.slice(i, i + 12).map((m) => `DROP COLUMN ${m.column}`).join(', ')}`;
          const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: sql });
          expect(res.status, await res.text()).toBe(200);
        }
      }
    };
    const databaseOf = (t: TestApp) => (t.events as unknown as { database: string }).database;

    it('at the next start its least written fields become attributes; COUNT, SUM, filters and breakdowns on them answer as before', () => check());

    // The copy asks `stopped` before each mutation on each shard (2 a shard here: 176 columns
    // moved, up to 100 a mutation).
    const stops =
      shards === 1
        ? [
            { what: 'after the first mutation of the copy', interrupt: stoppedAt(2) },
            { what: 'after the copy, before the registry', interrupt: stoppedAt(Infinity) },
            { what: 'with the registry naming half of the attributes, no column dropped', interrupt: registered(0.5) },
            { what: 'with the registry naming the attributes, no column dropped', interrupt: registered(1) },
          ]
        : [
            { what: 'after the first mutation of the copy on the first shard', interrupt: stoppedAt(2) },
            { what: 'after the first shard was copied, not the second', interrupt: stoppedAt(3) },
            // (the stops between the copy and the drop, as on one node, are not run again here)
            { what: "with the registry naming the attributes and the shards' tables, not the Distributed ones, without the columns", interrupt: registered(1, true) },
          ];
    it.each(stops)('a rewrite stopped $what is finished at the next start: no value lost, none read twice', ({ interrupt }) => check(interrupt));
  });
}

rewrite(1);
rewrite(2);
if (!clickhouseBinary) warnClickHouseSkipped('the rewrite of ClickHouse tables past their budget');
