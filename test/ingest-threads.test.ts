// Ingest threads (src/ingest/batch-threads.ts) and the column form events take from decoding to
// the event store (src/stores/events/columns.ts): the same requests give the same answers and
// the same stored rows whether batches are decoded on worker threads or on the JavaScript
// thread; a thread that dies is replaced; the column form keeps every value as a Map would.
import { spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchThreads } from '../src/ingest/batch-threads.js';
import { loadSettings } from '../src/settings.js';
import { ColumnsBuilder, columnsOf as toColumns, rowsOf, Value } from '../src/stores/events/columns.js';
import type { Scalar } from '../src/stores/events/types.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { batch, columnsOf, fresh, sqlTypes, stored } from './ingest-helpers.js';

/** A batch that takes every path: refused items, types widened within the request, nesting, odd strings. */
function variedBatch(): unknown[] {
  const items: unknown[] = [
    { data: { s: 'short', n: 1, f: 1.5, b: true, nested: { x: 1, deeper: { y: 'z' } } }, time: '2024-05-06T07:08:09.123456Z' },
    { data: 'not an object' },
    { data: { s: 'exactly12chr', n: 2, mixed: 1 }, time: 1714979289, samplerate: 4 },
    { data: { s: 'thirteen char', n: 3, mixed: 2.5, arr: [1, 'two', { three: 3 }] }, time: 'yesterday' },
    { data: { s: 'ünïcödé', n: 4, mixed: 'now a string', 'a.b': 'dotted', a: { b: 'nested wins' } } },
    { data: { s: '🐝 bee, then a longer tail', big: 2 ** 64, neg: -12345, zero: 0, nul: null, f: -0.25 }, samplerate: '7' },
    { data: { s: 'line\nbreak "quoted" \\ back', b: false, flip: true } },
    { data: { flip: 'yes' }, samplerate: 0 },
    { data: { flip: 1, late: 'x'.repeat(70_000) } }, // longer than 64 KB: refused, after some fields
    null,
    { data: {} },
  ];
  // Enough rows to fill more than one DuckDB chunk (2,048 rows).
  for (let i = 0; i < 2100; i++) items.push({ data: { s: `row ${i}`, n: i, f: i / 8, b: i % 3 === 0, ...(i % 5 === 0 ? { sparse: `s${i}` } : {}) } });
  return items;
}

/** Sends the same batches to an app and reads back what it answered and stored. */
async function runAll(t: TestApp) {
  const ds = fresh('threads');
  // depth 1, so that nested objects are flattened (the dataset exists before the first write)
  const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload: { name: ds, expand_json_depth: 1 } });
  expect(created.statusCode, created.body).toBe(201);
  const answers = [];
  answers.push(json(await batch(t, ds, variedBatch())));
  answers.push(json(await batch(t, ds, gzipSync(JSON.stringify(variedBatch().slice(0, 12))), { 'content-type': 'application/json', 'content-encoding': 'gzip' })));
  const mp = await batch(t, ds, pack(variedBatch().slice(0, 12)), { 'content-type': 'application/msgpack' });
  answers.push(mp.statusCode);
  answers.push((await batch(t, ds, '[1, 2', { 'content-type': 'application/json' })).body);
  answers.push((await batch(t, ds, '[]', { 'content-type': 'application/json' })).body);
  answers.push((await batch(t, ds, '{"data":{}}', { 'content-type': 'application/json' })).body);
  answers.push((await batch(t, ds, Buffer.from('not gzip'), { 'content-type': 'application/json', 'content-encoding': 'gzip' })).body);
  const rows = await stored(t, ds);
  const columns = [...(await columnsOf(t, ds)).values()].map((c) => [c.keyName, c.type]);
  return { answers, rows, columns, types: await sqlTypes(t, ds) };
}

describe('ingest threads', () => {
  let inThread: TestApp;
  let threaded: TestApp;
  beforeAll(async () => {
    inThread = await makeApp({ settings: { ingestThreads: 0 } });
    threaded = await makeApp({ settings: { ingestThreads: 2 } });
    threaded.clock.ms = inThread.clock.ms; // the same receive time for events without one
  });
  afterAll(async () => {
    await inThread.close();
    await threaded.close();
  });

  it('the same batches get the same answers and store the same rows with and without them', async () => {
    const a = await runAll(inThread);
    const b = await runAll(threaded);
    expect(b.answers).toEqual(a.answers);
    expect(b.columns).toEqual(a.columns);
    expect(b.types).toEqual(a.types);
    expect(b.rows.length).toBe(a.rows.length);
    expect(b.rows).toEqual(a.rows);
    // And what they answered and stored is right (not merely the same).
    const first = a.answers[0] as { status: number; error?: string }[];
    expect(first.slice(0, 11).map((r) => r.status)).toEqual([202, 400, 202, 400, 202, 202, 202, 400, 400, 400, 202]);
    expect(first[8].error).toMatch(/longer than 65536 bytes/);
    expect(first.slice(11).every((r) => r.status === 202)).toBe(true);
    expect(a.answers[1]).toEqual(first.slice(0, 12));
    expect(a.answers[2]).toBe(200);
    expect(a.answers.slice(3).map((body) => JSON.parse(body as string).error)).toEqual([
      'Request body is malformed and cannot be read.',
      'Request body should not be empty.',
      'Request body is malformed and cannot be read.',
      'Request body is malformed and cannot be read.',
    ]);
    const fields = a.rows.map((r) => r.fields);
    expect(fields[0]).toEqual({ s: 'short', n: 1, f: 1.5, b: true, 'nested.x': 1, 'nested.deeper': '{"y":"z"}' });
    expect(fields[1]).toEqual({ s: 'exactly12chr', n: 2, mixed: '1' });
    expect(fields[2]).toEqual({ s: 'ünïcödé', n: 4, mixed: 'now a string', 'a.b': 'nested wins' });
    expect(fields[3]).toEqual({ s: '🐝 bee, then a longer tail', big: 18446744073709552000, neg: -12345, zero: 0, f: -0.25 });
    expect(fields[4]).toEqual({ s: 'line\nbreak "quoted" \\ back', b: false, flip: true });
    expect(fields[5]).toEqual({});
    expect(fields[6]).toEqual({ s: 'row 0', n: 0, f: 0, b: true, sparse: 's0' });
    expect(a.rows.map((r) => r.samplerate).slice(0, 4)).toEqual([1, 4, 1, 7]);
    expect(a.rows[0].time).toBe(BigInt(Date.UTC(2024, 4, 6, 7, 8, 9)) * 1000n + 123456n);
    expect(Object.fromEntries(a.columns)).toMatchObject({ s: 'string', n: 'integer', f: 'float', b: 'boolean', mixed: 'string', flip: 'boolean', big: 'float' });
  });

  it('a wide request (its fields posted back in one block) stores the same rows with and without them, as JSON and as msgpack', async () => {
    // 300 events of 40 fields each from 200 keys: dense, sparse, constant, every kind.
    const events = Array.from({ length: 300 }, (_, i) => {
      const data: Record<string, unknown> = { svc: 'checkout', n: i };
      for (let k = 0; k < 38; k++) {
        const key = (i * 7 + k * 13) % 200;
        data[`k${key}`] = key % 4 === 0 ? `v${i}-${key}-ünï` : key % 4 === 1 ? i * key : key % 4 === 2 ? i / 8 : i % 2 === 0;
      }
      return { data, time: new Date(Date.UTC(2024, 4, 6) + i).toISOString() };
    });
    const stores = [];
    for (const t of [inThread, threaded]) {
      const ds = fresh('wide-threads');
      expect((await batch(t, ds, events)).statusCode).toBe(200);
      expect((await batch(t, ds, pack(events), { 'content-type': 'application/msgpack' })).statusCode).toBe(200);
      stores.push({ rows: await stored(t, ds), columns: [...(await columnsOf(t, ds)).values()].map((c) => [c.keyName, c.type]) });
    }
    const [a, b] = stores;
    expect(a.rows.length).toBe(600);
    expect(b.columns).toEqual(a.columns);
    expect(b.rows).toEqual(a.rows);
    const byTime = (rows: typeof a.rows) => rows.filter((r) => r.time === BigInt(Date.UTC(2024, 4, 6) + 5) * 1000n).map((r) => r.fields);
    expect(byTime(b.rows)).toEqual([events[5].data, events[5].data]);
  });

  it('a thread that exits fails no later request: it is replaced', async () => {
    const pool = batchThreads(3);
    const t = await makeApp({ settings: { ingestThreads: 3 } });
    try {
      const ds = fresh('replaced');
      expect(json(await batch(t, ds, [{ data: { n: 1 } }]))).toEqual([{ status: 202 }]);
      const threads = (pool as unknown as { threads: { worker: { terminate(): Promise<number> } }[] }).threads;
      expect(threads.length).toBeGreaterThan(0);
      await Promise.all(threads.map((th) => th.worker.terminate()));
      await new Promise((r) => setTimeout(r, 20)); // the exit events
      expect(threads.length).toBe(0);
      for (let i = 2; i <= 5; i++) expect(json(await batch(t, ds, [{ data: { n: i } }]))).toEqual([{ status: 202 }]);
      expect((await stored(t, ds)).map((r) => r.fields.n)).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await t.close();
    }
  });

  it('keep a process alive while they decode, and not once they are idle', () => {
    // A script whose only work is one decode: it must print the result (not exit early) and then exit.
    const url = new URL('../src/ingest/batch-threads.ts', import.meta.url).href;
    const script = `import { batchThreads } from ${JSON.stringify(url)};
      const d = await batchThreads(1).decode({ body: Buffer.from('[{"data":{"a":1}},{"data":{"a":2}}]'), maxDecompressed: 1e6, expandDepth: 0, receivedUs: 0 });
      console.log(d.ok, d.columns.count);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('true 2');
    expect(run.status).toBe(0);
  });

  it('WAGGLE_INGEST_THREADS sets how many (0: none); anything else is refused', () => {
    expect(loadSettings({ WAGGLE_INGEST_THREADS: '0' }).ingestThreads).toBe(0);
    expect(loadSettings({ WAGGLE_INGEST_THREADS: '3' }).ingestThreads).toBe(3);
    expect(loadSettings({}).ingestThreads).toBeGreaterThanOrEqual(1);
    expect(() => loadSettings({ WAGGLE_INGEST_THREADS: '-1' })).toThrow(/WAGGLE_INGEST_THREADS/);
    expect(() => loadSettings({ WAGGLE_INGEST_THREADS: 'many' })).toThrow(/WAGGLE_INGEST_THREADS/);
  });
});

describe('events as columns', () => {
  /** A deterministic pseudo-random source. */
  function rng(seed: number) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let x = Math.imul(a ^ (a >>> 15), a | 1);
      x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
  }
  const VALUES: Scalar[] = ['', 'a', 'twelve chars', 'thirteen char', 'ünï', '🐝🐝', 0, -1, 2 ** 53, 2 ** 64, 0.5, -1e-300, true, false];

  it('columns made of events give the same events back, over 200 random sets', () => {
    const r = rng(42);
    for (let round = 0; round < 200; round++) {
      const events = Array.from({ length: Math.floor(r() * 20) }, (_, i) => ({
        timeUs: 1_700_000_000_000_000 + i * 7,
        samplerate: 1 + Math.floor(r() * 5),
        fields: new Map<string, Scalar>(
          Array.from({ length: Math.floor(r() * 6) }, () => [`f${Math.floor(r() * 8)}`, VALUES[Math.floor(r() * VALUES.length)]] as [string, Scalar]),
        ),
      }));
      const back = rowsOf(toColumns(events));
      expect(back.length).toBe(events.length);
      back.forEach((e, i) => {
        expect(e.timeUs).toBe(events[i].timeUs);
        expect(e.samplerate).toBe(events[i].samplerate);
        expect(Object.fromEntries(e.fields)).toEqual(Object.fromEntries(events[i].fields));
      });
    }
  });

  it('an abandoned row leaves nothing; a field set twice keeps the later value; masks cover every kind given', () => {
    const b = new ColumnsBuilder(3);
    b.set('a', 1);
    b.endRow(10, 1);
    b.set('a', 'half');
    b.set('only-refused', true);
    b.abandonRow();
    b.set('a', 'first');
    b.set('a', 2.5);
    b.endRow(20, 2);
    const cols = b.finish();
    expect(cols.count).toBe(2);
    expect(cols.fields.map((f) => f.name)).toEqual(['a']); // a column only a refused row had is left out
    const a = cols.fields[0];
    expect(a.present).toBe(2);
    expect([...a.kinds.slice(0, 2)]).toEqual([Value.Integer, Value.Float]);
    expect(a.mask).toBe((1 << Value.Integer) | (1 << Value.Float) | (1 << Value.String));
    expect(rowsOf(cols).map((e) => Object.fromEntries(e.fields))).toEqual([{ a: 1 }, { a: 2.5 }]);
  });
});
