// The column registry kept in two stores (issue 22, item 1):
// - field names (and string values) that are not well-formed Unicode follow one rule on every
//   ingest path and in the Columns API: each lone surrogate becomes U+FFFD before any lookup,
//   bytes that are not UTF-8 become U+FFFD when the body is decoded; the registry then survives
//   a restart (it used to hold two columns that read back with the same name, and the next
//   create after a reload collided: a 500);
// - a failure injected between the two writes of a column change (a store wrapped so that a
//   chosen method throws: fault injection, the stores themselves are real) leaves the stores in
//   agreement at once, or, if the repair fails too, at the next start, which logs the repair;
//   queries (an SLO's detail, the query API) work throughout;
// - a real kill -9 of `waggle serve` between the two writes (the config write held up by a lock
//   on the SQLite file) is repaired at the next start.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { initialise, type InitResult } from '../src/domain/tenancy.js';
import { IngestWriter, ILL_FORMED_NAME } from '../src/ingest/writer.js';
import { openSqliteStore } from '../src/stores/config/store.js';
import type { ConfigStore } from '../src/stores/config/types.js';
import { columnsOf as asColumns } from '../src/stores/events/columns.js';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { json, keyHeaders, TestClock, type TestApp } from './helpers.js';
import { batch, columnsOf, datasetOf, results, single, stored } from './ingest-helpers.js';
import { runQuery } from './query-helpers.js';
import { expectStoresAgree, storeDisagreements } from './store-agreement.js';
import { call, initJson, killAll, removeTempDirs, serve, teamHeaders, tempDir } from './cli-helpers.js';

const FFFD = '\ufffd';

/** Fault injection: the named methods of a wrapped store throw for their next `times` calls. */
class Faults {
  private readonly armed = new Map<string, number>();
  fail(method: string, times = 1): void {
    this.armed.set(method, times);
  }
  heal(): void {
    this.armed.clear();
  }
  wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (obj, prop) => {
        const v = Reflect.get(obj, prop, obj);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          const left = this.armed.get(String(prop)) ?? 0;
          if (left > 0) {
            this.armed.set(String(prop), left - 1);
            return Promise.reject(new Error(`injected fault: ${String(prop)}`));
          }
          return v.apply(obj, args);
        };
      },
    });
  }
}

interface Opened extends TestApp {
  configFaults: Faults;
  eventFaults: Faults;
  /** Log lines at warn and above. */
  logs: string[];
  /** Closes the app and stores, keeping the data directory (to open it again). */
  stop(): Promise<void>;
}

/** An app over the data directory (initialised on first open), its stores wrapped for fault injection, its warnings kept. */
async function open(dataDir: string, init?: InitResult, settings: Record<string, unknown> = {}): Promise<Opened> {
  const plain: ConfigStore = openSqliteStore(join(dataDir, 'config.sqlite'));
  await plain.migrate();
  init ??= await initialise(plain);
  const configFaults = new Faults();
  const eventFaults = new Faults();
  const store = configFaults.wrap(plain);
  const events = eventFaults.wrap(new DuckDbEventStore(join(dataDir, 'events.duckdb')));
  await events.open();
  const logs: string[] = [];
  const clock = new TestClock();
  const app = await createApp({
    configStore: store,
    eventStore: events,
    settings: { dataDir, evaluationTickMs: 0, ...settings },
    now: clock.now,
    logger: { level: 'warn', stream: { write: (line: string) => void logs.push(line) } },
  });
  await app.ready();
  const stop = async () => {
    await app.close();
    await events.close();
    await plain.close();
  };
  return {
    app,
    store,
    events,
    init,
    dataDir,
    clock,
    ...keyHeaders(init),
    configFaults,
    eventFaults,
    logs,
    stop,
    async close() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const newDir = () => mkdtempSync(join(tmpdir(), 'waggle-colreg-'));

/** A hand-made msgpack batch of one event whose one field has the given key and value bytes. */
function msgpackEvent(key: Buffer, value: Buffer): Buffer {
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0xd9, b.length]), b]);
  return Buffer.concat([Buffer.from([0x91, 0x81]), str(Buffer.from('data')), Buffer.from([0x81]), str(key), str(value)]);
}

const repairLines = (logs: string[]) => logs.map((l) => JSON.parse(l)).filter((l) => /column registry of dataset .* repaired/.test(l.msg));

describe('field names that are not well-formed Unicode', () => {
  describe.each([
    ['on ingest threads', 1],
    ['on the JavaScript thread', 0],
  ])('/1/batch, batches decoded %s', (_where, ingestThreads) => {
    let t: Opened;
    beforeAll(async () => {
      t = await open(newDir(), undefined, { ingestThreads });
    });
    afterAll(() => t.close());

    it('lone surrogates in names become U+FFFD before the lookup: one column, which survives a restart', async () => {
      const names = ['service\udfff\ud800', 'service\ud800\ud800', 'service\udc00\udbff'];
      // JSON.stringify writes a lone surrogate as its \u escape, as a hostile client would.
      const first = results(await batch(t, 'lone', names.map((name, i) => ({ data: { [name]: i, ok: 'a\ud800b' } }))));
      expect(first.map((r) => r.status)).toEqual([202, 202, 202]);
      const listed = json(await t.app.inject({ method: 'GET', url: '/1/columns/lone', headers: t.config }));
      expect(listed.map((c: { key_name: string }) => c.key_name).sort()).toEqual(['ok', `service${FFFD}${FFFD}`]);
      expect((await stored(t, 'lone')).map((r) => r.fields)).toEqual([0, 1, 2].map((i) => ({ [`service${FFFD}${FFFD}`]: i, ok: `a${FFFD}b` })));
      await expectStoresAgree(t.store, t.events);

      // A fresh writer loads the registry from the stores: the same names still find their column.
      await t.stop();
      t = await open(t.dataDir, t.init, { ingestThreads });
      const again = await batch(t, 'lone', [{ data: { [names[0]]: 'now a string' } }, { data: { [`service${FFFD}${FFFD}`]: 7 } }]);
      expect(results(again).map((r) => r.status)).toEqual([202, 202]);
      expect([...(await columnsOf(t, 'lone')).keys()].sort()).toEqual(['ok', `service${FFFD}${FFFD}`]);
      expect((await columnsOf(t, 'lone')).get(`service${FFFD}${FFFD}`)!.type).toBe('string');
      await expectStoresAgree(t.store, t.events);
    });

    it('each key is made well-formed on its own: halves of a pair in a parent and a child key are each alone', async () => {
      const made = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'nested', expand_json_depth: 1 } });
      expect(made.statusCode, made.body).toBe(201);
      const res = await batch(t, 'nested', [{ data: { 'a\ud83d': { '\ude00b': 1 }, 'pair\ud83d\ude00': 2 } }]);
      expect(results(res)[0].status).toBe(202);
      expect([...(await columnsOf(t, 'nested')).keys()].sort()).toEqual([`a${FFFD}.${FFFD}b`, 'pair😀']);
    });

    it('bytes that are not UTF-8 in a JSON body become U+FFFD (a body over 128 KB too)', async () => {
      const small = Buffer.concat([Buffer.from('[{"data":{"x'), Buffer.from([0xff, 0xed, 0xa0, 0x80]), Buffer.from('":1}}]')]);
      expect(results(await batch(t, 'bytes', small, { 'content-type': 'application/json' }))[0].status).toBe(202);
      const filler = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ data: { pad: 'p'.repeat(64), i } }))).slice(1, -1);
      const large = Buffer.concat([Buffer.from('[{"data":{"x'), Buffer.from([0xff, 0xed, 0xa0, 0x80]), Buffer.from(`":2}},${filler}]`)]);
      expect(large.length).toBeGreaterThan(128 * 1024);
      expect(results(await batch(t, 'bytes', large, { 'content-type': 'application/json' })).every((r) => r.status === 202)).toBe(true);
      expect([...(await columnsOf(t, 'bytes')).keys()].sort()).toEqual(['i', 'pad', `x${FFFD.repeat(4)}`]);
      await expectStoresAgree(t.store, t.events);
    });

    it('msgpack: a surrogate encoded in UTF-8 form (not UTF-8) and stray bytes become U+FFFD', async () => {
      const res = await batch(t, 'packed', msgpackEvent(Buffer.from([0x6b, 0xed, 0xa0, 0x80, 0xff]), Buffer.from([0x76, 0xed, 0xbf, 0xbf])), {
        'content-type': 'application/msgpack',
      });
      expect(res.statusCode, res.body).toBe(200);
      const names = [...(await columnsOf(t, 'packed')).keys()];
      expect(names).toHaveLength(1);
      expect(names[0].startsWith('k') && names[0].slice(1).length > 0 && /^\ufffd+$/.test(names[0].slice(1))).toBe(true);
      const [row] = await stored(t, 'packed');
      expect(Object.values(row.fields)[0]).toMatch(/^v\ufffd+$/);
      await expectStoresAgree(t.store, t.events);
    });
  });

  describe('other paths', () => {
    let t: Opened;
    beforeAll(async () => {
      t = await open(newDir());
    });
    afterAll(() => t.close());

    it('/1/events: the same rule, name and value', async () => {
      const res = await single(t, 'single', { 'svc\udfff': 'v\ud800', plain: 1 });
      expect(res.statusCode, res.body).toBe(200);
      expect((await stored(t, 'single')).map((r) => r.fields)).toEqual([{ [`svc${FFFD}`]: `v${FFFD}`, plain: 1 }]);
      const again = await single(t, 'single', { 'svc\udbff': 'w' });
      expect(again.statusCode, again.body).toBe(200);
      expect([...(await columnsOf(t, 'single')).keys()].sort()).toEqual(['plain', `svc${FFFD}`]);
    });

    it('/1/kinesis_events: the same rule, for escapes and for record bytes that are not UTF-8', async () => {
      const record = (b: Buffer | string) => ({ data: Buffer.from(b).toString('base64') });
      const body = {
        requestId: 'r1',
        timestamp: 1_700_000_000_000,
        records: [record(JSON.stringify({ 'k\ud800': 1 })), record(Buffer.concat([Buffer.from('{"k'), Buffer.from([0xff]), Buffer.from('":2}')]))],
      };
      const res = await t.app.inject({
        method: 'POST',
        url: '/1/kinesis_events/firehose',
        headers: { 'content-type': 'application/json', 'x-amz-firehose-request-id': 'r1', 'x-amz-firehose-access-key': t.init.keys.ingest },
        payload: JSON.stringify(body),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect((await stored(t, 'firehose')).map((r) => r.fields)).toEqual([{ [`k${FFFD}`]: 1 }, { [`k${FFFD}`]: 2 }]);
      await expectStoresAgree(t.store, t.events);
    });

    it('the Columns API: key_name follows the rule in create, lookup and update; ingest finds the column', async () => {
      await batch(t, 'api', [{ data: { seed: 1 } }]);
      const post = (key: string) =>
        t.app.inject({ method: 'POST', url: '/1/columns/api', headers: { ...t.config, 'content-type': 'application/json' }, payload: JSON.stringify({ key_name: key, type: 'integer' }) });
      const created = await post('k\ud800');
      expect(created.statusCode, created.body).toBe(201);
      expect(json(created).key_name).toBe(`k${FFFD}`);
      // Another lone surrogate is the same name under the rule.
      expect((await post('k\udc00')).statusCode).toBe(409);
      const found = await t.app.inject({ method: 'GET', url: `/1/columns/api?key_name=${encodeURIComponent(`k${FFFD}`)}`, headers: t.config });
      expect(json(found).id).toBe(json(created).id);
      const put = await t.app.inject({
        method: 'PUT',
        url: `/1/columns/api/${json(created).id}`,
        headers: { ...t.config, 'content-type': 'application/json' },
        payload: JSON.stringify({ key_name: 'k\udfff', type: 'integer', description: 'd' }),
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(results(await batch(t, 'api', [{ data: { 'k\udbff': 5 } }]))[0].status).toBe(202);
      expect((await stored(t, 'api')).map((r) => r.fields)).toEqual([{ seed: 1 }, { [`k${FFFD}`]: 5 }]);
      await expectStoresAgree(t.store, t.events);
    });

    it('the writer refuses an event whose new field name is not well-formed (a path that skipped the rule)', async () => {
      await batch(t, 'guard', [{ data: { a: 1 } }]);
      const ds = (await datasetOf(t, 'guard'))!;
      const writer = new IngestWriter(t.store, t.events, { maxColumnsPerDataset: 100, now: () => new Date() });
      const fields = (m: [string, number][]) => ({ timeUs: Date.now() * 1000, samplerate: 1, fields: new Map(m) });
      expect(await writer.write(ds, asColumns([fields([['x\ud800', 1]]), fields([['a', 2]])]))).toEqual([ILL_FORMED_NAME, null]);
      await writer.close();
      expect([...(await columnsOf(t, 'guard')).keys()]).toEqual(['a']);
      await expectStoresAgree(t.store, t.events);
    });
  });
});

describe('a failure between the two writes of a column change', () => {
  let t: Opened;
  afterEach(async () => {
    await t.close();
  });

  const T0 = Math.floor(Date.now() / 60_000) * 60_000;
  const at = (minutesAgo: number) => new Date(T0 - minutesAgo * 60_000 + 30_000).toISOString();

  /** A dataset `shop` with an integer column `status` and an SLO over it (`LT($status, 500)`). */
  async function withSlo(): Promise<string> {
    t.clock.ms = T0;
    const events = Array.from({ length: 30 }, (_, i) => ({ time: at(i + 1), data: { status: i % 10 === 0 ? 503 : 200 } }));
    expect(results(await batch(t, 'shop', events)).every((r) => r.status === 202)).toBe(true);
    const send = (url: string, body: unknown) =>
      t.app.inject({ method: 'POST', url, headers: { ...t.config, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect((await send('/1/derived_columns/shop', { alias: 'ok', expression: 'LT($status, 500)' })).statusCode).toBe(201);
    const slo = await send('/1/slos/shop', { name: 'Checkout', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 });
    expect(slo.statusCode, slo.body).toBe(201);
    return json(slo).id;
  }

  async function sloDetail(id: string) {
    const res = await t.app.inject({ method: 'GET', url: `/1/slos/shop/${id}?detailed=true`, headers: t.config });
    expect(res.statusCode, res.body).toBe(200);
    return json(res);
  }

  /** A query that compares `status` with a number: the SQL that failed to bind when the stores disagreed. */
  async function countBelow500() {
    const body = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '<', value: 500 }], time_range: 7200 });
    return body.data.results[0].data.COUNT;
  }

  const widen = () => batch(t, 'shop', [{ time: at(0.5), data: { status: 'teapot' } }]);

  it('widening, config update fails once: repaired at once (logged); the SLO detail and queries work; ingest goes on', async () => {
    t = await open(newDir());
    const id = await withSlo();
    await sloDetail(id);
    t.configFaults.fail('updateColumn');
    const res = await widen();
    expect(res.statusCode, res.body).toBe(500); // that request stored nothing
    await expectStoresAgree(t.store, t.events);
    expect((await columnsOf(t, 'shop')).get('status')!.storedType).toBe('string');
    expect(repairLines(t.logs).flatMap((l) => l.repairs)).toEqual([expect.stringMatching(/"status" \(c1\) is stored as string/)]);
    await sloDetail(id);
    expect(await countBelow500()).toBe(27);
    expect(results(await widen())[0].status).toBe(202);
    expect(results(await batch(t, 'shop', [{ time: at(0.5), data: { status: 200 } }]))[0].status).toBe(202);
    await expectStoresAgree(t.store, t.events);
  });

  it('widening, config store failing on: the stores disagree but queries still work; the next start repairs it and logs it', async () => {
    t = await open(newDir());
    const id = await withSlo();
    t.configFaults.fail('updateColumn', Infinity);
    expect((await widen()).statusCode).toBe(500);
    // The event store has the column as text; the registry still says integer.
    expect(await storeDisagreements(t.store, t.events)).toEqual([expect.stringMatching(/"status" \(c1\) is registered as integer but stored as string/)]);
    // Read through a cast to the registered type, the column binds: no "Cannot compare VARCHAR and BIGINT".
    await sloDetail(id);
    expect(await countBelow500()).toBe(27);
    await t.stop();

    t = await open(t.dataDir, t.init);
    expect(repairLines(t.logs)).toEqual([expect.objectContaining({ repairs: [expect.stringMatching(/"status" \(c1\) is stored as string/)] })]);
    await expectStoresAgree(t.store, t.events);
    await sloDetail(id);
    expect(results(await widen())[0].status).toBe(202);
  });

  it('adding, config create fails: the new table column is dropped at once; the next event with the field makes it', async () => {
    t = await open(newDir());
    await withSlo();
    // (Ingest records a group's new columns in one call.)
    t.configFaults.fail('createColumns');
    const res = await batch(t, 'shop', [{ time: at(0.5), data: { status: 200, region: 'eu' } }]);
    expect(res.statusCode).toBe(500);
    expect(repairLines(t.logs).flatMap((l) => l.repairs)).toEqual([expect.stringMatching(/event-store column c2 was not registered: dropped/)]);
    await expectStoresAgree(t.store, t.events);
    expect(results(await batch(t, 'shop', [{ time: at(0.5), data: { status: 200, region: 'eu' } }]))[0].status).toBe(202);
    expect((await columnsOf(t, 'shop')).get('region')!.physical).toBe('c3');
    await expectStoresAgree(t.store, t.events);
  });

  it('the Columns API create, config create fails: 500, nothing is left behind; the same create then succeeds', async () => {
    t = await open(newDir());
    await withSlo();
    const create = () =>
      t.app.inject({ method: 'POST', url: '/1/columns/shop', headers: { ...t.config, 'content-type': 'application/json' }, payload: { key_name: 'later', type: 'float' } });
    t.configFaults.fail('createColumn');
    expect((await create()).statusCode).toBe(500);
    await expectStoresAgree(t.store, t.events);
    expect((await create()).statusCode).toBe(201);
    await expectStoresAgree(t.store, t.events);
  });

  it('deleting, the event-store drop fails: once, repaired at once (204); on and on, repaired at the next start', async () => {
    t = await open(newDir());
    await withSlo();
    await batch(t, 'shop', [{ time: at(0.5), data: { a: 1, b: 2 } }]);
    const cols = await columnsOf(t, 'shop');
    const del = (name: string) => t.app.inject({ method: 'DELETE', url: `/1/columns/shop/${cols.get(name)!.id}`, headers: t.config });

    t.eventFaults.fail('dropColumn');
    expect((await del('a')).statusCode).toBe(204);
    await expectStoresAgree(t.store, t.events);

    t.eventFaults.fail('dropColumn', Infinity);
    expect((await del('b')).statusCode).toBe(500);
    // Only an unregistered table column is left: no query can name it.
    expect(await storeDisagreements(t.store, t.events)).toEqual([expect.stringMatching(/event-store column c\d+ is not registered/)]);
    expect(await countBelow500()).toBe(27);
    await t.stop();
    t = await open(t.dataDir, t.init);
    expect(repairLines(t.logs)).toHaveLength(1);
    await expectStoresAgree(t.store, t.events);
    expect([...(await columnsOf(t, 'shop')).keys()].sort()).toEqual(['status']);
  });

  it('what a kill -9 leaves (the table widened, the registry not): repaired at start, before any request', async () => {
    t = await open(newDir());
    const id = await withSlo();
    const ds = (await datasetOf(t, 'shop'))!;
    await t.stop();
    // The writer's first write, alone, with the real event store: as if the process died after it.
    const events = new DuckDbEventStore(join(t.dataDir, 'events.duckdb'));
    await events.open();
    await events.changeColumns(ds.id, { add: [], widen: [{ physical: 'c1', type: 'float' }] });
    await events.close();

    t = await open(t.dataDir, t.init);
    expect(repairLines(t.logs)).toEqual([expect.objectContaining({ dataset: ds.id, repairs: [expect.stringMatching(/"status" \(c1\) is stored as float/)] })]);
    await expectStoresAgree(t.store, t.events);
    expect((await columnsOf(t, 'shop')).get('status')!.type).toBe('float');
    await sloDetail(id);
    expect(await countBelow500()).toBe(27);
  });
});

describe('a real kill -9 between the two writes', () => {
  afterEach(killAll);
  afterAll(removeTempDirs);

  it('the server is killed while its config write waits (the event store already widened); the next start repairs it', async () => {
    const dataDir = tempDir();
    const init = await initJson(dataDir);
    const env = { WAGGLE_EVALUATION_TICK_MS: '0' };
    let server = await serve(['--data-dir', dataDir], { env });
    const ingest = (body: unknown) => call(server.url, '/1/batch/shop', { method: 'POST', headers: teamHeaders(init.keys.ingest), body });
    expect((await ingest([{ data: { status: 200 } }, { data: { status: 503 } }])).status).toBe(200);
    // Let the ingest bookkeeping (a config write every 2 s) have nothing left to write.
    await new Promise((r) => setTimeout(r, 2500));

    // Hold the config store's write lock: the server's next config write waits for it.
    const lock = new Database(join(dataDir, 'config.sqlite'));
    lock.exec('BEGIN EXCLUSIVE');
    // The event store's files change when it commits (its write-ahead log, or the file itself at a checkpoint).
    const files = () =>
      ['events.duckdb', 'events.duckdb.wal']
        .map((f) => statSync(join(dataDir, f), { throwIfNoEntry: false }))
        .map((st) => (st ? `${st.size}@${st.mtimeMs}` : '-'))
        .join(' ');
    const before = files();
    const pending = ingest([{ data: { status: 'teapot' } }]).catch((e: unknown) => e);
    // The event store commits the widening; then the server waits on the lock.
    const until = Date.now() + 10_000;
    while (files() === before) {
      if (Date.now() > until) throw new Error('the event store never committed the widening');
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(await server.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await pending).toBeInstanceOf(Error); // never answered
    lock.exec('ROLLBACK');
    lock.close();

    server = await serve(['--data-dir', dataDir], { env });
    const repaired = server.stdout().split('\n').filter((l) => l.includes('repaired'));
    expect(repaired).toHaveLength(1);
    expect(JSON.parse(repaired[0]).repairs).toEqual([expect.stringMatching(/"status" \(c1\) is stored as string/)]);
    const cols = await call(server.url, '/1/columns/shop', { headers: teamHeaders(init.keys.configuration) });
    expect(cols.body.map((c: { key_name: string; type: string }) => [c.key_name, c.type])).toEqual([['status', 'string']]);
    expect((await ingest([{ data: { status: 'teapot' } }])).body).toEqual([{ status: 202 }]);
    await server.stop();

    const config = openSqliteStore(join(dataDir, 'config.sqlite'));
    const events = new DuckDbEventStore(join(dataDir, 'events.duckdb'));
    await events.open();
    try {
      await expectStoresAgree(config, events);
    } finally {
      await events.close();
      await config.close();
    }
  });
});
