// Ingest limits and failures over HTTP: decompression bombs (gzip, zstd) against the
// decompressed-size cap, whole-request errors with Honeycomb's texts, the body caps, per-event
// limits (fields, string and event sizes), the dataset column cap, the ingest rate limit, and
// retention (the store rule and the app's background job).
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createApp } from '../src/app.js';
import { makeApp, type TestApp } from './helpers.js';
import {
  DATASET_TOO_MANY_COLUMNS,
  EMPTY,
  EVENT_TOO_MANY_COLUMNS,
  MALFORMED,
  TOO_LARGE,
  batch,
  columnsOf,
  datasetOf,
  eventually,
  fresh,
  gzipBomb,
  legacyError,
  results,
  single,
  sqlTypes,
  stored,
  windowDescriptor,
  zstdFrame,
  zstdRaw,
  zstdSingleSegment,
  type Res,
} from './ingest-helpers.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';
import { duckdbDialect } from '../src/stores/events/duckdb-dialect.js';
import { storedValueSql } from '../src/stores/events/placement.js';
import { tableName } from '../src/stores/events/types.js';

const MB = 1024 * 1024;

/**
 * Sends a bomb and expects "Request body is too large." within `ms`, with the process's peak
 * and current RSS each growing by less than `maxGrowth` (the bombs expand to 200 MB or more).
 */
async function expectDefused(send: () => Promise<Res>, ms = 2000, maxGrowth = 64 * MB) {
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const res = await send();
  const elapsed = performance.now() - started;
  expect(legacyError(res, 400)).toBe(TOO_LARGE);
  expect(elapsed).toBeLessThan(ms);
  expect(process.resourceUsage().maxRSS * 1024 - peakBefore).toBeLessThan(maxGrowth);
  expect(process.memoryUsage().rss - rssBefore).toBeLessThan(maxGrowth);
}

// First in the file (a fresh process), so the peak RSS before the bombs is low.
describe('decompression bombs (ingestDecompressedLimit 1,000,000)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestDecompressedLimit: 1_000_000 } });
  });
  afterAll(() => t.close());

  it('a gzip bomb (200 MB of zeros in ~200 KB) is refused quickly, without unpacking it', async () => {
    const bomb = await gzipBomb(200 * MB);
    expect(bomb.length).toBeLessThan(300_000);
    const ds = fresh();
    await expectDefused(() => batch(t, ds, bomb, { 'content-encoding': 'gzip', 'content-type': 'application/json' }));
    await expectDefused(() => single(t, ds, bomb, { 'content-encoding': 'gzip' }));
    expect(await stored(t, ds)).toEqual([]);
  });

  it('a zstd bomb of RLE blocks (200 MB from 6 KB) is refused quickly', async () => {
    const bomb = zstdFrame([{ rle: 0x20, count: 200 * MB }]);
    expect(bomb.length).toBeLessThan(7000);
    const ds = fresh();
    await expectDefused(() => batch(t, ds, bomb, { 'content-encoding': 'zstd' }));
    await expectDefused(() => single(t, ds, bomb, { 'content-encoding': 'zstd' }));
  });

  it('a zstd bomb whose frame declares a 1 GiB window is refused before the window is allocated', async () => {
    const bomb = zstdFrame([{ rle: 0x20, count: 200 * MB }], windowDescriptor(30));
    await expectDefused(() => batch(t, fresh(), bomb, { 'content-encoding': 'zstd' }));
  });

  it('a zstd bomb declaring a 2 GB content size (single segment) is refused before allocating it', async () => {
    const bomb = zstdSingleSegment(2_000_000_000, 0x20, 200 * MB);
    await expectDefused(() => batch(t, fresh(), bomb, { 'content-encoding': 'zstd' }));
  });

  it('a zstd bomb with the largest accepted window (8 MiB) stops at the cap', async () => {
    const bomb = zstdFrame([{ rle: 0x20, count: 200 * MB }], windowDescriptor(23));
    await expectDefused(() => batch(t, fresh(), bomb, { 'content-encoding': 'zstd' }));
  });

  it('a zstd frame asking for a window over 8 MiB is refused as too large, even with little content', async () => {
    const ds = fresh();
    const res = await batch(t, ds, zstdRaw('[{"data":{"a":1}}]', windowDescriptor(24)), { 'content-encoding': 'zstd' });
    expect(legacyError(res, 400)).toBe(TOO_LARGE);
  });

  it('bodies over the cap after decompression are too large; under it they are read', async () => {
    const ds = fresh();
    const events = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ data: { pad: 'p'.repeat(1000), i } })));
    const over = events(1100); // ~1.12 MB
    const under = events(900); // ~0.92 MB
    expect(over.length).toBeGreaterThan(1_000_000);
    expect(under.length).toBeLessThan(1_000_000);
    expect(legacyError(await batch(t, ds, over), 400)).toBe(TOO_LARGE);
    expect(legacyError(await batch(t, ds, gzipSync(over), { 'content-encoding': 'gzip' }), 400)).toBe(TOO_LARGE);
    expect(legacyError(await batch(t, ds, zstdRaw(over), { 'content-encoding': 'zstd' }), 400)).toBe(TOO_LARGE);
    expect(await stored(t, ds)).toEqual([]);
    expect(results(await batch(t, ds, gzipSync(under), { 'content-encoding': 'gzip' }))).toHaveLength(900);
    expect(results(await batch(t, ds, zstdRaw(under), { 'content-encoding': 'zstd' }))).toHaveLength(900);
    expect(results(await batch(t, ds, under))).toHaveLength(900);
    expect(await stored(t, ds)).toHaveLength(2700);
  });
});

/** 2,000 valid events, over 128 KB: a prefix that puts a body on the element-by-element parse. */
const LARGE = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ data: { i, s: 'padding-'.repeat(8) } }) + ',').join('');

// Batches are decoded on an ingest thread by default; with WAGGLE_INGEST_THREADS=0 on the
// JavaScript thread (where large JSON bodies are parsed in pieces): the same errors either way.
describe.each([
  ['on an ingest thread', 1],
  ['on the JavaScript thread', 0],
])('whole-request errors, batches decoded %s', (_where, ingestThreads) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestThreads } });
  });
  afterAll(() => t.close());

  const cases: [string, string | Buffer, Record<string, string>, string | RegExp][] = [
    ['no body', '', {}, EMPTY],
    ['an empty array', '[]', {}, EMPTY],
    ['a blank body', ' \n\t\r\n', {}, EMPTY],
    ['an empty array in msgpack', pack([]), { 'content-type': 'application/msgpack' }, EMPTY],
    ['gzip of nothing', gzipSync(''), { 'content-encoding': 'gzip' }, EMPTY],
    ['gzip of []', gzipSync('[]'), { 'content-encoding': 'gzip' }, EMPTY],
    ['zstd of nothing', zstdRaw(''), { 'content-encoding': 'zstd' }, EMPTY],
    ['malformed JSON', '[{"data":', {}, MALFORMED],
    ['a trailing comma', '[{"data":{}},]', {}, MALFORMED],
    ['a JSON object', '{"data":{"a":1}}', {}, MALFORMED],
    ['a JSON string', '"events"', {}, MALFORMED],
    ['a JSON number', '42', {}, MALFORMED],
    ['JSON null', 'null', {}, MALFORMED],
    ['a msgpack map', pack({ data: { a: 1 } }), { 'content-type': 'application/msgpack' }, MALFORMED],
    ['malformed msgpack', Buffer.from([0xc1, 0x00]), { 'content-type': 'application/msgpack' }, MALFORMED],
    ['truncated msgpack', pack([{ data: { a: 'abcdef' } }]).subarray(0, 8), { 'content-type': 'application/msgpack' }, MALFORMED],
    ['bad gzip data', 'definitely not gzip', { 'content-encoding': 'gzip' }, MALFORMED],
    ['truncated gzip', gzipSync('[{"data":{"a":1}}]').subarray(0, 15), { 'content-encoding': 'gzip' }, MALFORMED],
    ['gzip of malformed JSON', gzipSync('[{"data"'), { 'content-encoding': 'gzip' }, MALFORMED],
    ['bad zstd data', 'definitely not zstd', { 'content-encoding': 'zstd' }, MALFORMED],
    ['truncated zstd', zstdRaw('[{"data":{"a":1}}]').subarray(0, 15), { 'content-encoding': 'zstd' }, MALFORMED],
    ['a zstd block of the reserved type', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38, 0x07, 0x00, 0x00, 0x41]), { 'content-encoding': 'zstd' }, MALFORMED],
    // Bodies over 128 KB are parsed element by element on the JavaScript thread (decode.ts): their defects must give the same error.
    ['a large batch missing a comma', `[${LARGE}{"data":{}} {"data":{}}]`, {}, MALFORMED],
    ['a large batch with a trailing comma', `[${LARGE}{"data":{}},]`, {}, MALFORMED],
    ['a large batch cut short in a string', `[${LARGE}{"data":{"a":"x\\"}`, {}, MALFORMED],
    ['a large batch with mismatched brackets', `[${LARGE}{"data":{"a":1]}]`, {}, MALFORMED],
    ['a large batch with more after the array', `[${LARGE}{"data":{}}] []`, {}, MALFORMED],
    ['a large batch of two arrays', `[${LARGE}{"data":{}}][{"data":{}}]`, {}, MALFORMED],
    ['a large batch in gzip, cut short', gzipSync(`[${LARGE}{"data":{"a":`), { 'content-encoding': 'gzip' }, MALFORMED],
    ['Content-Encoding br', '[{"data":{"a":1}}]', { 'content-encoding': 'br' }, /Content-Encoding/],
    ['Content-Encoding deflate', '[{"data":{"a":1}}]', { 'content-encoding': 'deflate' }, /Content-Encoding/],
    ['Content-Encoding gzip, zstd', '[{"data":{"a":1}}]', { 'content-encoding': 'gzip, zstd' }, /Content-Encoding/],
  ];

  it.each(cases)('batch: %s → 400 {error}, nothing stored', async (_, body, headers, text) => {
    const ds = fresh();
    const error = legacyError(await batch(t, ds, body, headers), 400);
    if (typeof text === 'string') expect(error).toBe(text);
    else expect(error).toMatch(text);
    expect(await stored(t, ds)).toEqual([]);
  });

  // /1/events reads one object: an array (even an empty one) or another value is malformed.
  const eventCases = cases
    .filter(([name]) => name !== 'a msgpack map' && name !== 'a JSON object')
    .map(([name, body, headers, text]): (typeof cases)[number] => [name, body, headers, /\[\]|array/.test(name) ? MALFORMED : text]);

  it.each(eventCases)(
    'events: %s → 400 {error}, nothing stored',
    async (_, body, headers, text) => {
      const ds = fresh();
      const error = legacyError(await single(t, ds, body, headers), 400);
      if (typeof text === 'string') expect(error).toBe(text);
      else expect(error).toMatch(text);
      expect(await stored(t, ds)).toEqual([]);
    },
  );
});

describe('the ingest body cap (ingestBodyLimit 4096)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestBodyLimit: 4096 } });
  });
  afterAll(() => t.close());

  const sized = (bytes: number) => {
    const head = '[{"data":{"s":"';
    const tail = '"}}]';
    return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
  };

  it('a body over the cap as sent is "Request body is too large."; at the cap it is read', async () => {
    const ds = fresh();
    expect(legacyError(await batch(t, ds, sized(4097)), 400)).toBe(TOO_LARGE);
    expect(legacyError(await batch(t, ds, sized(5000), { 'content-type': 'application/json' }), 400)).toBe(TOO_LARGE);
    expect(legacyError(await single(t, ds, `{"s":"${'x'.repeat(5000)}"}`), 400)).toBe(TOO_LARGE);
    expect(await stored(t, ds)).toEqual([]);
    expect(results(await batch(t, ds, sized(4096))).map((r) => r.status)).toEqual([202]);
    expect((await stored(t, ds))[0].fields.s).toHaveLength(4096 - 19);
  });

  it('counts compressed bytes as sent: a small gzip body of a large batch is read', async () => {
    const ds = fresh();
    const big = JSON.stringify(Array.from({ length: 2000 }, () => ({ data: { msg: 'hello world' } })));
    const body = gzipSync(big);
    expect(big.length).toBeGreaterThan(40_000);
    expect(body.length).toBeLessThan(4096);
    expect(results(await batch(t, ds, body, { 'content-encoding': 'gzip' }))).toHaveLength(2000);
    expect(await stored(t, ds)).toHaveLength(2000);
  });
});

describe('per-event limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));

  it('2,000 fields pass; 2,001 are "Event has too many columns."', async () => {
    const ds = fresh();
    const r = results(await batch(t, ds, [{ data: wide(2000) }, { data: wide(2001) }, { data: { f0: -1 } }]));
    expect(r).toEqual([{ status: 202 }, { status: 400, error: EVENT_TOO_MANY_COLUMNS }, { status: 202 }]);
    const rows = await stored(t, ds);
    expect(rows).toHaveLength(2);
    expect(Object.keys(rows[0].fields)).toHaveLength(2000);
    expect(rows[0].fields.f1999).toBe(1999);
    expect(rows[1].fields).toEqual({ f0: -1 });
    expect((await columnsOf(t, ds)).size).toBe(2000);
  });

  it.each([1, 0])('a value nested deeper than can be kept as JSON refuses its event only (ingest threads: %i)', async (ingestThreads) => {
    const app = await makeApp({ settings: { ingestThreads } });
    onTestFinished(() => app.close());
    const ds = fresh();
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const r = results(await batch(app, ds, `[{"data":{"a":${deep}}},{"data":{"b":1}}]`, { 'content-type': 'application/json' }));
    expect(r).toEqual([{ status: 400, error: 'field "a" is nested too deeply' }, { status: 202 }]);
    await expect(single(app, ds, `{"a":${deep}}`).then((res) => legacyError(res, 400))).resolves.toBe('field "a" is nested too deeply');
    expect((await stored(app, ds)).map((row) => row.fields)).toEqual([{ b: 1 }]);
  });

  it('fields are counted after flattening', async () => {
    const ds = fresh();
    const nested = { a: wide(1000), b: wide(1000), c: 1 };
    expect(results(await batch(t, ds, [{ data: nested }]))).toEqual([{ status: 202 }]); // depth 0: 3 fields
    const put = await t.app.inject({ method: 'PUT', url: `/1/datasets/${ds}`, headers: t.config, payload: { description: '', expand_json_depth: 1 } });
    expect(put.statusCode).toBe(200);
    expect(results(await batch(t, ds, [{ data: nested }]))).toEqual([{ status: 400, error: EVENT_TOO_MANY_COLUMNS }]); // 2,001
    expect([...(await columnsOf(t, ds)).keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a string of exactly 65,536 bytes passes; one byte more is refused', async () => {
    const ds = fresh();
    const r = results(
      await batch(t, ds, [
        { data: { s: 'x'.repeat(65_536) } },
        { data: { s: 'x'.repeat(65_537) } },
        { data: { s: 'é'.repeat(32_768) } }, // 65,536 bytes in UTF-8
        { data: { s: 'é'.repeat(32_768) + 'x' } },
        { data: { s: '€'.repeat(21_845) + 'x' } }, // 65,536 bytes
        { data: { s: '€'.repeat(21_846) } }, // 65,538 bytes, 21,846 characters
        { data: { arr: Array.from({ length: 20_000 }, () => 'abc') } }, // a 120,001-byte JSON string
      ]),
    );
    expect(r.map((x) => x.status)).toEqual([202, 400, 202, 400, 202, 400, 400]);
    const rows = await stored(t, ds);
    expect(rows.map((x) => Buffer.byteLength(String(x.fields.s)))).toEqual([65_536, 65_536, 65_536]);
    expect(rows[1].fields.s).toBe('é'.repeat(32_768));
  });

  it('an event over 1 MB is refused; one under it passes', async () => {
    const ds = fresh();
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${String(i).padStart(2, '0')}`, 'y'.repeat(65_000)]));
    const r = results(await batch(t, ds, [{ data: fields(16) }, { data: fields(15) }, { data: { small: 1 } }]));
    expect(r.map((x) => x.status)).toEqual([400, 202, 202]);
    const rows = await stored(t, ds);
    expect(rows).toHaveLength(2);
    expect(Object.keys(rows[0].fields)).toHaveLength(15);
    expect(rows[0].fields.s14).toBe('y'.repeat(65_000));
  });
});

describe('the dataset column cap (maxColumnsPerDataset 5)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { maxColumnsPerDataset: 5 } });
  });
  afterAll(() => t.close());

  it('refuses events that would add columns past the cap; events using existing columns still pass', async () => {
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { a: 1, b: 2, c: 3 } }])).map((r) => r.status)).toEqual([202]);
    const r = results(
      await batch(t, ds, [
        { data: { d: 1, e: 1, f: 1 } }, // 6 columns
        { data: { a: 2, b: 3 } },
        { data: { d: 4, e: 5 } }, // exactly 5
        { data: { f: 1 } },
        { data: { a: 'now a string', f: null } },
      ]),
    );
    expect(r).toEqual([
      { status: 400, error: DATASET_TOO_MANY_COLUMNS },
      { status: 202 },
      { status: 202 },
      { status: 400, error: DATASET_TOO_MANY_COLUMNS },
      { status: 202 },
    ]);
    expect(legacyError(await single(t, ds, { g: 1 }), 400)).toBe(DATASET_TOO_MANY_COLUMNS);
    expect((await single(t, ds, { e: 9 })).statusCode).toBe(200);
    expect([...(await columnsOf(t, ds)).keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect((await sqlTypes(t, ds)).a).toBe('VARCHAR');
    expect((await stored(t, ds)).map((x) => x.fields)).toEqual([
      { a: '1', b: 2, c: 3 },
      { a: '2', b: 3 },
      { d: 4, e: 5 },
      { a: 'now a string' },
      { e: 9 },
    ]);
  });

  it('counts per dataset', async () => {
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { v: 1, w: 2, x: 3, y: 4, z: 5 } }])).map((r) => r.status)).toEqual([202]);
    expect(results(await batch(t, ds, [{ data: { extra: 1 } }]))).toEqual([{ status: 400, error: DATASET_TOO_MANY_COLUMNS }]);
  });
});

describe('the ingest rate limit (2 per 60 s)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestRateLimit: { limit: 2, windowSeconds: 60 } } });
  });
  afterAll(() => t.close());

  it('answers 429 {"error":"Request dropped due to rate limiting."} without Retry-After, per key', async () => {
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { n: 1 } }]))[0].status).toBe(202);
    expect((await single(t, ds, { n: 2 })).statusCode).toBe(200);
    for (const res of [await batch(t, ds, [{ data: { n: 3 } }]), await single(t, ds, { n: 4 })]) {
      expect(legacyError(res, 429)).toBe('Request dropped due to rate limiting.');
      expect(res.headers['retry-after']).toBeUndefined();
    }
    // Another key has its own budget.
    const { team, environment } = await initialTenancy(t);
    const other = await addKey(t, team, environment, { keyType: 'ingest' });
    expect(results(await batch(t, ds, [{ data: { n: 5 } }], other.headers))[0].status).toBe(202);
    // Tokens come back with time: one every 30 s.
    t.clock.advance(30);
    expect(results(await batch(t, ds, [{ data: { n: 6 } }]))[0].status).toBe(202);
    expect(legacyError(await batch(t, ds, [{ data: { n: 7 } }]), 429)).toBe('Request dropped due to rate limiting.');
    expect((await stored(t, ds)).map((r) => r.fields.n)).toEqual([1, 2, 5, 6]);
  });
});

describe('retention (retentionDays 1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { retentionDays: 1 } });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await t.close();
  });

  const DAY = 86_400;
  const times = async (ds: string) => (await stored(t, ds)).map((r) => r.fields.age);

  it('the store deletes events older than the cutoff, across datasets, keeping the cutoff itself', async () => {
    const [d1, d2] = [fresh(), fresh()];
    const nowUs = BigInt(t.clock.ms) * 1000n;
    const at = (us: bigint) => String(us); // microseconds since the epoch
    results(await batch(t, d1, [{ data: { age: 'old' }, time: at(nowUs - 10n) }, { data: { age: 'cutoff' }, time: at(nowUs) }]));
    results(await batch(t, d2, [{ data: { age: 'old' }, time: at(nowUs - 1n) }, { data: { age: 'new' } }]));
    const deleted = await t.events.deleteBefore(Number(nowUs));
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect(await times(d1)).toEqual(['cutoff']);
    expect(await times(d2)).toEqual(['new']);
  });

  it("the app's job runs when the app is ready and then hourly, by the app clock", async () => {
    const ds = fresh();
    const s = t.clock.ms / 1000;
    results(
      await batch(t, ds, [
        { data: { age: '3 days' }, time: s - 3 * DAY },
        { data: { age: '25 hours' }, time: s - 25 * 3600 },
        { data: { age: '2 hours' }, time: s - 2 * 3600 },
        { data: { age: 'now' } },
        { data: { age: 'future' }, time: s + 3600 },
      ]),
    );
    expect(await times(ds)).toEqual(['3 days', '25 hours', '2 hours', 'now', 'future']);

    // A fresh app over the same stores: retention runs as it gets ready.
    const deps = { configStore: t.store, eventStore: t.events, now: t.clock.now, logger: false as const };
    const second = await createApp({ ...deps, settings: { dataDir: t.dataDir, retentionDays: 1 } });
    await second.ready();
    expect(await eventually(() => times(ds), (v) => v.length === 3)).toEqual(['2 hours', 'now', 'future']);
    await second.close();

    // Hourly: with setInterval faked, an hour passes for the app; its clock has moved a day.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const third = await createApp({ ...deps, settings: { dataDir: t.dataDir, retentionDays: 1 } });
    await third.ready();
    t.clock.advance(DAY);
    await new Promise((r) => setTimeout(r, 100));
    expect(await times(ds)).toEqual(['2 hours', 'now', 'future']); // nothing until the hour strikes
    vi.advanceTimersByTime(3_600_000);
    // 'now' is exactly one day old: the cutoff itself is kept.
    expect(await eventually(() => times(ds), (v) => v.length === 2)).toEqual(['now', 'future']);
    await third.close();
    vi.useRealTimers();
  });

  it('retentionDays 0 keeps everything', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: { age: 'ancient' }, time: '1999-01-01T00:00:00Z' }]));
    const keep = await createApp({
      configStore: t.store,
      eventStore: t.events,
      now: t.clock.now,
      logger: false,
      settings: { dataDir: t.dataDir, retentionDays: 0 },
    });
    await keep.ready();
    await keep.close(); // close waits for the background jobs still running
    expect(await times(ds)).toEqual(['ancient']);
    // …while a 1-day app removes it.
    const prune = await createApp({
      configStore: t.store,
      eventStore: t.events,
      now: t.clock.now,
      logger: false,
      settings: { dataDir: t.dataDir, retentionDays: 1 },
    });
    await prune.ready();
    await prune.close();
    expect(await times(ds)).toEqual([]);
    expect(await datasetOf(t, ds)).toBeDefined(); // the dataset itself stays
  });
});

describe.each([true, false])('events × distinct fields per request (native JSON reader %s)', (ingestNative) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestNative } });
  });
  afterAll(() => t.close());

  it('a body whose every event names a new field is held as its values, not columns × events, and stored', async () => {
    const ds = fresh('sparse');
    // 6,000 events × 6,000 fields would be 36 M slots a column per event (over
    // MAX_VALUES_PER_REQUEST, 33.5 M); sparse columns hold one slot per value: 6,000.
    const many = Array.from({ length: 6000 }, (_, i) => ({ data: { [`f${i}`]: i } }));
    const res = await batch(t, ds, gzipSync(JSON.stringify(many)), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(results(res).every((r) => r.status === 202)).toBe(true);
    // (Read back a few fields: a statement naming all 6,000 takes DuckDB long to plan.)
    const cols = await columnsOf(t, ds);
    expect(cols.size).toBe(6000);
    const table = tableName([...cols.values()][0].datasetId);
    const read = (name: string) => storedValueSql(duckdbDialect, cols.get(name)!.physical, 'integer');
    const rows = await t.events.query(`SELECT ${read('f0')} AS a, ${read('f2999')} AS b, ${read('f5999')} AS c FROM ${table} ORDER BY rowid`);
    expect(rows.length).toBe(6000);
    expect(rows.filter((r) => r.a !== null || r.b !== null || r.c !== null).map((r) => [r.a, r.b, r.c].map((v) => (v === null ? null : Number(v))))).toEqual([
      [0, null, null],
      [null, 2999, null],
      [null, null, 5999],
    ]);
  }, 60_000);
});
