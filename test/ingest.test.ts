// Ingest semantics over HTTP (POST /1/batch/{ds}, POST /1/events/{ds}), checked against what the
// event store really holds (SQL on the DuckDB store): positional batch results, body formats
// (JSON, msgpack, gzip, zstd), event time and sample rate, flattening, type inference and
// widening, dataset creation and naming, keys and environments, bookkeeping, deletion.
import { gzipSync } from 'node:zlib';
import { pack, unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { expectContract } from './contract.js';
import { json, makeApp, deleteDataset, type TestApp } from './helpers.js';
import {
  EMPTY,
  EVENT_TOO_MANY_COLUMNS,
  MALFORMED,
  TOO_LARGE,
  batch,
  columnsOf,
  datasetOf,
  eventually,
  fresh,
  legacyError,
  results,
  single,
  sqlTypes,
  stored,
  tableExists,
  windowDescriptor,
  zstdFrame,
  zstdRaw,
  zstdSkippable,
} from './ingest-helpers.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';

const BATCH = '/1/batch/{datasetSlug}';
const NOT_FOUND = 'Dataset not found';
/** 2024-05-06T07:08:09Z in microseconds. */
const BASE_US = BigInt(Date.UTC(2024, 4, 6, 7, 8, 9)) * 1000n;
const BASE_S = Date.UTC(2024, 4, 6, 7, 8, 9) / 1000;

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

describe('POST /1/batch: positional results', () => {
  it('answers 200 with one result per event, in order, and stores exactly the accepted events', async () => {
    const ds = fresh();
    const res = await batch(t, ds, [
      { data: { n: 1 } },
      { data: 'not an object' },
      { data: { n: 2 }, time: '2024-05-06T07:08:09Z', samplerate: 3 },
      { time: 'yesterday', data: { n: 99 } },
      { samplerate: 2 }, // no data
      ['not', 'an', 'event'],
      null,
      { data: { n: 3 } },
    ]);
    expectContract(BATCH, 'POST', res);
    const r = results(res);
    expect(r.map((x) => x.status)).toEqual([202, 400, 202, 400, 400, 400, 400, 202]);
    const rows = await stored(t, ds);
    expect(rows.map((x) => x.fields)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(rows[1].time).toBe(BASE_US);
    expect(rows.map((x) => x.samplerate)).toEqual([1, 3, 1]);
  });

  it('answers 200 with every event refused when none is valid, and stores nothing', async () => {
    const ds = fresh();
    const r = results(await batch(t, ds, [{ data: 1 }, { data: { a: 1 }, samplerate: 0 }]));
    expect(r.map((x) => x.status)).toEqual([400, 400]);
    expect(await stored(t, ds)).toEqual([]);
  });

  it.each([
    ['on an ingest thread', 1],
    ['on the JavaScript thread (parsed element by element)', 0],
  ])('stores a batch of over 128 KB decoded %s exactly as JSON.parse reads it', async (_where, ingestThreads) => {
    const t = await makeApp({ settings: { ingestThreads } });
    onTestFinished(() => t.close());
    const ds = fresh();
    const tricky = ['}]{[', 'a "quoted" \\ back\\slash\\', '\\', 'ünïcödé 🐝 ✓', '{"not":"json"}', 'line\nbreak\t'];
    const items: unknown[] = Array.from({ length: 3000 }, (_, i) => ({
      data: { i, s: tricky[i % tricky.length], nested: { list: [i, '[', { k: ']' }] } },
      ...(i % 5 === 0 ? { time: '2024-05-01T12:34:56.789Z' } : {}),
    }));
    items.splice(7, 0, 42); // a scalar element: the whole body is parsed instead, with the same result
    // Whitespace of every JSON kind between the elements.
    const body = `\r\n [${items.map((x) => JSON.stringify(x)).join(' ,\n\t')}]\n `;
    expect(body.length).toBeGreaterThan(128 * 1024);
    for (const payload of [body, body.replace('42 ,', '')]) {
      const r = results(await batch(t, ds, payload));
      expect(r.filter((x) => x.status === 202)).toHaveLength(3000);
    }
    const rows = await stored(t, ds);
    expect(rows).toHaveLength(6000);
    const expected = items.filter((x): x is { data: { i: number; s: string; nested: unknown } } => typeof x === 'object');
    for (const [n, row] of rows.slice(0, 3000).entries()) {
      expect(row.fields.i).toBe(expected[n].data.i);
      expect(row.fields.s).toBe(expected[n].data.s);
      expect(row.fields.nested).toBe(JSON.stringify(expected[n].data.nested));
    }
    expect(rows.slice(3000).map((r) => r.fields.s)).toEqual(rows.slice(0, 3000).map((r) => r.fields.s));
  });

  it('keeps the positions of a large batch', async () => {
    const ds = fresh();
    const items = Array.from({ length: 500 }, (_, i) => (i % 7 === 3 ? { data: { i }, samplerate: -1 } : { data: { i } }));
    const r = results(await batch(t, ds, items));
    expect(r).toHaveLength(500);
    r.forEach((x, i) => expect(x.status).toBe(i % 7 === 3 ? 400 : 202));
    const rows = await stored(t, ds);
    expect(rows.map((x) => x.fields.i)).toEqual(items.map((_, i) => i).filter((i) => i % 7 !== 3));
  });
});

describe('request bodies', () => {
  const events = [{ data: { s: 'a', n: 1 } }, { data: { s: 'b', n: 2.5 } }];
  const expectStored = async (ds: string) =>
    expect((await stored(t, ds)).map((r) => r.fields)).toEqual([{ s: 'a', n: 1 }, { s: 'b', n: 2.5 }]);

  it.each([
    ['application/json', 'application/json'],
    ["curl's form type", 'application/x-www-form-urlencoded'],
    ['text/plain', 'text/plain'],
    ['application/octet-stream', 'application/octet-stream'],
  ])('reads JSON whatever the Content-Type says (%s)', async (_, type) => {
    const ds = fresh();
    expect(results(await batch(t, ds, JSON.stringify(events), { 'content-type': type })).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it('reads JSON without a Content-Type', async () => {
    const ds = fresh();
    const res = await batch(t, ds, Buffer.from(JSON.stringify(events)));
    expect(results(res).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it.each(['application/msgpack', 'application/x-msgpack'])('reads %s and answers in msgpack', async (type) => {
    const ds = fresh();
    const time = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 123));
    const body = pack([
      { data: { s: 'x', i: 42, f: 1.25, b: false, nested: { k: 'v' } }, time, samplerate: 4 },
      { data: 'bad' },
      { data: { s: 'y' }, time: '2024-05-06T07:08:09.654321Z' },
    ]);
    const res = await batch(t, ds, body, { 'content-type': type });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/msgpack\b/);
    const r = unpack(res.rawPayload) as { status: number; error?: string }[];
    expect(r.map((x) => x.status)).toEqual([202, 400, 202]);
    expect(typeof r[1].error).toBe('string');
    const rows = await stored(t, ds);
    expect(rows.map((x) => x.fields)).toEqual([
      { s: 'x', i: 42, f: 1.25, b: false, nested: '{"k":"v"}' },
      { s: 'y' },
    ]);
    expect(rows[0].time).toBe(BASE_US + 123_000n);
    expect(rows[0].samplerate).toBe(4);
    expect(rows[1].time).toBe(BASE_US + 654_321n);
    expect((await sqlTypes(t, ds)).i).toBe('BIGINT');
  });

  it('keeps the microseconds of msgpack timestamps (ext -1, as libhoney-go sends time)', async () => {
    // [{data:{i}, time: <timestamp>}] by hand: msgpackr would encode a Date, which holds only ms.
    const s = BigInt(BASE_S);
    const ts96 = (sec: bigint, ns: number) => {
      const b = Buffer.alloc(15);
      b.set([0xc7, 12, 0xff]);
      b.writeUInt32BE(ns, 3);
      b.writeBigInt64BE(sec, 7);
      return b;
    };
    const ts64 = (sec: bigint, ns: number) => {
      const b = Buffer.alloc(10);
      b.set([0xd7, 0xff]);
      b.writeBigUInt64BE((BigInt(ns) << 34n) | sec, 2);
      return b;
    };
    const ts32 = (sec: bigint) => {
      const b = Buffer.alloc(6);
      b.set([0xd6, 0xff]);
      b.writeUInt32BE(Number(sec), 2);
      return b;
    };
    const item = (i: number, time: Buffer) =>
      Buffer.concat([Buffer.from([0x82, 0xa4, ...Buffer.from('data'), 0x81, 0xa1, 0x69, i, 0xa4, ...Buffer.from('time')]), time]);
    const times = [ts96(s, 123_456_789), ts64(s, 987_654_321), ts32(s), ts96(-1n, 500_000_000)];
    const invalid = Buffer.concat([Buffer.from([0x81, 0xa4, ...Buffer.from('data'), 0x81, 0xa1, 0x74]), Buffer.from([0xd5, 0xff, 0, 0])]);
    const body = Buffer.concat([Buffer.from([0x95]), ...times.map((t, i) => item(i, t)), invalid]);
    const ds = fresh();
    const res = await batch(t, ds, body, { 'content-type': 'application/msgpack' });
    expect(res.statusCode).toBe(200);
    expect((unpack(res.rawPayload) as { status: number }[]).map((x) => x.status)).toEqual([202, 202, 202, 202, 400]);
    const rows = await stored(t, ds);
    expect(rows.map((r) => [r.fields.i, r.time])).toEqual([
      [0, BASE_US + 123_456n],
      [1, BASE_US + 987_654n],
      [2, BASE_US],
      [3, -500_000n],
    ]);
  });

  it.each(['gzip', 'GZIP', 'x-gzip'])('reads Content-Encoding %s', async (encoding) => {
    const ds = fresh();
    const res = await batch(t, ds, gzipSync(JSON.stringify(events)), { 'content-encoding': encoding, 'content-type': 'application/json' });
    expect(results(res).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it('reads msgpack inside gzip', async () => {
    const ds = fresh();
    const res = await batch(t, ds, gzipSync(pack(events)), { 'content-encoding': 'gzip', 'content-type': 'application/msgpack' });
    expect((unpack(res.rawPayload) as { status: number }[]).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it('reads zstd: a frame of raw blocks', async () => {
    const ds = fresh();
    const res = await batch(t, ds, zstdRaw(JSON.stringify(events)), { 'content-encoding': 'zstd', 'content-type': 'application/json' });
    expect(results(res).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it('reads zstd: raw and RLE blocks, several frames and a skippable frame', async () => {
    const ds = fresh();
    const body = Buffer.concat([
      zstdSkippable(Buffer.from('ignore me')),
      zstdFrame([{ raw: Buffer.from('[{"data":{"s":"') }, { rle: 0x61, count: 300_000 }]),
      zstdRaw('"}},{"data":{"s":"b","n":2.5}}]'),
    ]);
    expect(body.length).toBeLessThan(200);
    const res = await batch(t, ds, body, { 'content-encoding': 'zstd' });
    expect(results(res).map((x) => x.status)).toEqual([400, 202]); // 300,000 bytes is over the 64 KB string limit
    const body2 = Buffer.concat([zstdFrame([{ raw: Buffer.from('[{"data":{"s":"') }, { rle: 0x61, count: 1000 }]), zstdRaw('"}}]')]);
    expect(results(await batch(t, ds, body2, { 'content-encoding': 'zstd' })).map((x) => x.status)).toEqual([202]);
    expect((await stored(t, ds)).map((r) => r.fields)).toEqual([{ s: 'b', n: 2.5 }, { s: 'a'.repeat(1000) }]);
  });

  it('reads zstd: a frame made by the zstd tool (compressed blocks, content size, checksum)', async () => {
    // `zstd -19` of the JSON below (20 events), 258 bytes.
    const frame = Buffer.from(
      'KLUv/WQICqUHADKNJxlgrw74Ydyfse0hyDOKsO6S9e+krYxBEA4HR5bRTzovpzyU8S/COwff795wOrjP//GvfTrQ6T5lX0YaoYQvvuENbnCHwd+yrCtfdoEabl2ZehAoam4yVQu3blfZLpGCUNVNLsWN75Qowi2hkRKBK1+oiaQFstz4VpGjWEbhylZprMlSjFVObrJw46ID2nV2lU3EBmADz7XjyvZpLmNGOqghuNz+zxyglZtjESQEMoEU/n+EoOL50O1INlwVpor35q5NfESjDWIUECztUZYHmHjAvr4jlK+Pl9Y4uFEumrv+gtz45NUOUQ7iEzJDHVw1kNUNI048',
      'base64',
    );
    const expected = Array.from({ length: 20 }, (_, i) => ({
      time: `2024-05-06T07:08:09.${String(i).padStart(6, '0')}Z`,
      data: { service: 'checkout', endpoint: '/api/v1/cart', status_code: 200, duration_ms: i * 1.5, index: i },
    }));
    const ds = fresh();
    const res = await batch(t, ds, frame, { 'content-encoding': 'zstd', 'content-type': 'application/json' });
    expect(results(res).map((x) => x.status)).toEqual(expected.map(() => 202));
    const rows = await stored(t, ds);
    expect(rows.map((r) => r.fields)).toEqual(expected.map((e) => e.data));
    expect(rows.map((r) => r.time)).toEqual(expected.map((_, i) => BASE_US + BigInt(i)));
  });

  it('reads zstd frames with a window of up to 8 MiB', async () => {
    const ds = fresh();
    const res = await batch(t, ds, zstdRaw(JSON.stringify(events), windowDescriptor(23)), { 'content-encoding': 'zstd' });
    expect(results(res).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });

  it('reads msgpack inside zstd (what libhoney-go sends)', async () => {
    const ds = fresh();
    const res = await batch(t, ds, zstdRaw(pack(events)), { 'content-encoding': 'zstd', 'content-type': 'application/msgpack' });
    expect((unpack(res.rawPayload) as { status: number }[]).map((x) => x.status)).toEqual([202, 202]);
    await expectStored(ds);
  });
});

describe('event time', () => {
  const cases: [string, unknown, bigint][] = [
    ['RFC 3339, Z', '2024-05-06T07:08:09Z', BASE_US],
    ['1 fraction digit', '2024-05-06T07:08:09.1Z', BASE_US + 100_000n],
    ['2 digits', '2024-05-06T07:08:09.12Z', BASE_US + 120_000n],
    ['3 digits', '2024-05-06T07:08:09.123Z', BASE_US + 123_000n],
    ['4 digits', '2024-05-06T07:08:09.1234Z', BASE_US + 123_400n],
    ['5 digits', '2024-05-06T07:08:09.12345Z', BASE_US + 123_450n],
    ['6 digits', '2024-05-06T07:08:09.123456Z', BASE_US + 123_456n],
    ['7 digits (truncated)', '2024-05-06T07:08:09.1234567Z', BASE_US + 123_456n],
    ['8 digits', '2024-05-06T07:08:09.12345678Z', BASE_US + 123_456n],
    ['9 digits', '2024-05-06T07:08:09.123456789Z', BASE_US + 123_456n],
    ['a fraction a float product gets wrong', '2024-05-06T07:08:09.000251Z', BASE_US + 251n],
    ['another', '2024-05-06T07:08:09.000489999Z', BASE_US + 489n],
    ['999999999', '2024-05-06T07:08:09.999999999Z', BASE_US + 999_999n],
    ['+02:00', '2024-05-06T09:08:09.5+02:00', BASE_US + 500_000n],
    ['-0530', '2024-05-06T01:38:09-0530', BASE_US],
    ['-05:30 with fraction', '2024-05-06T01:38:09.000001-05:30', BASE_US + 1n],
    ['no offset = UTC', '2024-05-06T07:08:09.25', BASE_US + 250_000n],
    ['lower-case t and z', '2024-05-06t07:08:09z', BASE_US],
    ['before 1970', '1969-12-31T23:59:59.5Z', -500_000n],
    ['leap day', '2024-02-29T00:00:00Z', BigInt(Date.UTC(2024, 1, 29)) * 1000n],
    ['epoch seconds', BASE_S, BASE_US],
    ['fractional epoch seconds', BASE_S + 0.123456, BASE_US + 123_456n],
    ['epoch milliseconds', BASE_S * 1000 + 123, BASE_US + 123_000n],
    ['fractional epoch milliseconds', BASE_S * 1000 + 123.456, BASE_US + 123_456n],
    ['epoch microseconds', Number(BASE_US) + 123_456, BASE_US + 123_456n],
    ['epoch nanoseconds', Number(BASE_US) * 1000 + 123_456_000, BASE_US + 123_456n],
    ['numeric string, seconds', String(BASE_S), BASE_US],
    ['numeric string, fractional seconds', `${BASE_S}.654321`, BASE_US + 654_321n],
    ['numeric string, milliseconds', `${BASE_S * 1000 + 7}`, BASE_US + 7000n],
    ['numeric string, microseconds', `${BASE_US + 7n}`, BASE_US + 7n],
    ['numeric string, nanoseconds (exact)', `${BASE_US * 1000n + 123_456_999n}`, BASE_US + 123_456n],
  ];

  it('stores each accepted form to the microsecond', async () => {
    const ds = fresh();
    const r = results(await batch(t, ds, cases.map(([, time], i) => ({ data: { i }, time }))));
    expect(r.map((x) => x.status)).toEqual(cases.map(() => 202));
    const rows = await stored(t, ds);
    const got = rows.map((row) => [cases[row.fields.i as number][0], row.time]);
    expect(got).toEqual(cases.map(([name, , us]) => [name, us]));
  });

  it('defaults to the receive time (the app clock), also for null and ""', async () => {
    const ds = fresh();
    // (The test clock only moves forward: the rate limiter's buckets follow it.)
    t.clock.advance(0.987);
    const at = BigInt(t.clock.ms) * 1000n;
    results(await batch(t, ds, [{ data: { i: 0 } }, { data: { i: 1 }, time: null }, { data: { i: 2 }, time: '' }]));
    t.clock.advance(90);
    results(await batch(t, ds, [{ data: { i: 3 } }]));
    const rows = await stored(t, ds);
    expect(rows.map((r) => r.time)).toEqual([at, at, at, at + 90_000_000n]);
  });

  it.each([
    ['an object', { seconds: 1 }],
    ['a boolean', true],
    ['an array', [BASE_S]],
    ['a garbage string', 'yesterday at noon'],
    ['a date only', '2024-05-06'],
    ['a day the month lacks', '2024-02-30T00:00:00Z'],
    ['a bad hour', '2024-05-06T25:00:00Z'],
    ['a bad offset', '2024-05-06T07:08:09+2'],
    ['a year past 9999', 1e30],
    ['a huge numeric string', '99999999999999999999999'],
  ])('refuses %s as time, per event', async (_, time) => {
    const ds = fresh();
    const r = results(await batch(t, ds, [{ data: { ok: 1 } }, { data: { ok: 2 }, time }, { data: { ok: 3 } }]));
    expect(r.map((x) => x.status)).toEqual([202, 400, 202]);
    expect((await stored(t, ds)).map((x) => x.fields.ok)).toEqual([1, 3]);
  });
});

describe('sample rate', () => {
  it('defaults to 1 and takes positive integers and their decimal strings', async () => {
    const ds = fresh();
    const r = results(
      await batch(t, ds, [
        { data: { i: 0 } },
        { data: { i: 1 }, samplerate: 1 },
        { data: { i: 2 }, samplerate: 7 },
        { data: { i: 3 }, samplerate: '25' },
        { data: { i: 4 }, samplerate: 1_000_000 },
        { data: { i: 5 }, samplerate: null },
      ]),
    );
    expect(r.map((x) => x.status)).toEqual([202, 202, 202, 202, 202, 202]);
    expect((await stored(t, ds)).map((x) => x.samplerate)).toEqual([1, 1, 7, 25, 1_000_000, 1]);
  });

  it.each([
    ['0', 0],
    ['negative', -3],
    ['a float', 1.5],
    ['a garbage string', 'ten'],
    ['a float string', '2.5'],
    ['a negative string', '-1'],
    ['a zero string', '0'],
    ['a boolean', true],
    ['an object', { rate: 2 }],
    ['past 2^53', 1e19],
  ])('refuses %s per event', async (_, samplerate) => {
    const ds = fresh();
    const r = results(await batch(t, ds, [{ data: { ok: 1 } }, { data: { ok: 2 }, samplerate }]));
    expect(r.map((x) => x.status)).toEqual([202, 400]);
    expect((await stored(t, ds)).map((x) => x.fields.ok)).toEqual([1]);
  });
});

describe('POST /1/events', () => {
  it('stores one event and answers 200 with an empty body', async () => {
    const ds = fresh();
    t.clock.advance(1.012);
    const res = await single(t, ds, { method: 'GET', duration_ms: 32, ok: true });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    const rows = await stored(t, ds);
    expect(rows).toEqual([{ time: BigInt(t.clock.ms) * 1000n, samplerate: 1, fields: { method: 'GET', duration_ms: 32, ok: true } }]);
  });

  it('takes X-Honeycomb-Event-Time (epoch or RFC 3339) and X-Honeycomb-Samplerate', async () => {
    const ds = fresh();
    expect((await single(t, ds, { i: 0 }, { 'x-honeycomb-event-time': String(BASE_S), 'x-honeycomb-samplerate': '10' })).statusCode).toBe(200);
    expect((await single(t, ds, { i: 1 }, { 'x-honeycomb-event-time': '2024-05-06T09:08:09.123456+02:00' })).statusCode).toBe(200);
    expect((await single(t, ds, { i: 2 }, { 'x-honeycomb-event-time': `${BASE_S * 1000 + 5}` })).statusCode).toBe(200);
    expect((await single(t, ds, { i: 3 }, { 'x-honeycomb-event-time': `${BASE_S}.5` })).statusCode).toBe(200);
    const rows = await stored(t, ds);
    expect(rows.map((r) => [r.fields.i, r.time, r.samplerate])).toEqual([
      [0, BASE_US, 10],
      [1, BASE_US + 123_456n, 1],
      [2, BASE_US + 5000n, 1],
      [3, BASE_US + 500_000n, 1],
    ]);
  });

  it('reads msgpack, gzip and zstd bodies too', async () => {
    const ds = fresh();
    expect((await single(t, ds, pack({ via: 'msgpack' }), { 'content-type': 'application/msgpack' })).statusCode).toBe(200);
    expect((await single(t, ds, gzipSync('{"via":"gzip"}'), { 'content-encoding': 'gzip' })).statusCode).toBe(200);
    expect((await single(t, ds, zstdRaw('{"via":"zstd"}'), { 'content-encoding': 'zstd' })).statusCode).toBe(200);
    expect((await single(t, ds, '{"via":"form"}', { 'content-type': 'application/x-www-form-urlencoded' })).statusCode).toBe(200);
    expect((await stored(t, ds)).map((r) => r.fields.via)).toEqual(['msgpack', 'gzip', 'zstd', 'form']);
  });

  it('answers errors as 400 {error} and stores nothing', async () => {
    const ds = fresh();
    expect(legacyError(await single(t, ds, ''), 400)).toBe(EMPTY);
    expect(legacyError(await single(t, ds, ' \n'), 400)).toBe(EMPTY);
    expect(legacyError(await single(t, ds, '{"a":'), 400)).toBe(MALFORMED);
    expect(legacyError(await single(t, ds, gzipSync('{"a":').subarray(0, 10), { 'content-encoding': 'gzip' }), 400)).toBe(MALFORMED);
    legacyError(await single(t, ds, [{ a: 1 }]), 400);
    legacyError(await single(t, ds, '"text"'), 400);
    legacyError(await single(t, ds, { a: 1 }, { 'x-honeycomb-samplerate': 'lots' }), 400);
    legacyError(await single(t, ds, { a: 1 }, { 'x-honeycomb-samplerate': '0' }), 400);
    legacyError(await single(t, ds, { a: 1 }, { 'x-honeycomb-event-time': 'teatime' }), 400);
    legacyError(await single(t, ds, { s: 'x'.repeat(65_537) }), 400);
    const wide = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`f${i}`, i]));
    expect(legacyError(await single(t, ds, wide), 400)).toBe(EVENT_TOO_MANY_COLUMNS);
    expect(legacyError(await single(t, ds, { s: 'x'.repeat(1_000_001) }), 400)).toBe(TOO_LARGE);
    expect(await stored(t, ds)).toEqual([]);
  });
});

describe('flattening', () => {
  const setDepth = async (ds: string, depth: number) => {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/1/datasets/${ds}`,
      headers: t.config,
      payload: { description: '', expand_json_depth: depth },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).expand_json_depth).toBe(depth);
  };
  const nested = { top: 't', a: { b: { c: 1, e: { f: true } }, d: 2 }, arr: [1, 'x', { y: null }], none: null, obj: {} };

  it('depth 0 (the default) keeps nested objects and arrays as JSON strings and skips nulls', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: nested }]));
    const [row] = await stored(t, ds);
    expect(row.fields).toEqual({ top: 't', a: '{"b":{"c":1,"e":{"f":true}},"d":2}', arr: '[1,"x",{"y":null}]', obj: '{}' });
    expect([...(await columnsOf(t, ds)).keys()].sort()).toEqual(['a', 'arr', 'obj', 'top']);
  });

  it('depth 1 unpacks one level into dotted names', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: { first: 1 } }]));
    await setDepth(ds, 1);
    results(await batch(t, ds, [{ data: nested }]));
    const rows = await stored(t, ds);
    expect(rows[1].fields).toEqual({ top: 't', 'a.b': '{"c":1,"e":{"f":true}}', 'a.d': 2, arr: '[1,"x",{"y":null}]' });
  });

  it('depth 2 unpacks two levels; deeper objects stay JSON strings', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: { first: 1 } }]));
    await setDepth(ds, 2);
    results(await batch(t, ds, [{ data: nested }]));
    const rows = await stored(t, ds);
    expect(rows[1].fields).toEqual({ top: 't', 'a.b.c': 1, 'a.b.e': '{"f":true}', 'a.d': 2, arr: '[1,"x",{"y":null}]' });
    expect((await sqlTypes(t, ds))['a.b.c']).toBe('BIGINT');
  });

  it('applies the depth to /1/events too', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: { first: 1 } }]));
    await setDepth(ds, 1);
    expect((await single(t, ds, { a: { b: 'c' } })).statusCode).toBe(200);
    expect((await stored(t, ds))[1].fields).toEqual({ 'a.b': 'c' });
  });

  it('an event of nulls only is stored without fields', async () => {
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { a: null } }, { data: { b: 1 } }])).map((x) => x.status)).toEqual([202, 202]);
    const rows = await stored(t, ds);
    expect(rows.map((r) => r.fields)).toEqual([{}, { b: 1 }]);
    expect([...(await columnsOf(t, ds)).keys()]).toEqual(['b']);
  });

  it('stores __proto__ and constructor as ordinary fields, without prototype pollution', async () => {
    const ds = fresh();
    const body = '[{"data":{"__proto__":{"polluted":"yes"},"constructor":"c","toString":"s","hasOwnProperty":1}}]';
    expect(results(await batch(t, ds, body)).map((x) => x.status)).toEqual([202]);
    await setDepth(ds, 1);
    expect(results(await batch(t, ds, body)).map((x) => x.status)).toEqual([202]);
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    const rows = await stored(t, ds);
    const sorted = (o: object) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1));
    expect(sorted(rows[0].fields)).toEqual([
      ['__proto__', '{"polluted":"yes"}'],
      ['constructor', 'c'],
      ['hasOwnProperty', 1],
      ['toString', 's'],
    ]);
    expect(sorted(rows[1].fields)).toEqual([
      ['__proto__.polluted', 'yes'],
      ['constructor', 'c'],
      ['hasOwnProperty', 1],
      ['toString', 's'],
    ]);
    expect([...(await columnsOf(t, ds)).keys()].sort()).toEqual(['__proto__', '__proto__.polluted', 'constructor', 'hasOwnProperty', 'toString']);
  });
});

describe('types', () => {
  it('infers string, integer, float and boolean columns and keeps values exactly', async () => {
    const ds = fresh();
    const data = {
      s: 'héllo ✓',
      empty: '',
      i: 42,
      neg: -7,
      zero: 0,
      maxSafe: 9007199254740991,
      minSafe: -9007199254740991,
      f: 1.5,
      tiny: 1e-300,
      pi: 3.141592653589793,
      b: true,
      nb: false,
      numericString: '123',
    };
    results(await batch(t, ds, [{ data }]));
    const [row] = await stored(t, ds);
    expect(row.fields).toEqual(data);
    expect(await sqlTypes(t, ds)).toEqual({
      s: 'VARCHAR',
      empty: 'VARCHAR',
      i: 'BIGINT',
      neg: 'BIGINT',
      zero: 'BIGINT',
      maxSafe: 'BIGINT',
      minSafe: 'BIGINT',
      f: 'DOUBLE',
      tiny: 'DOUBLE',
      pi: 'DOUBLE',
      b: 'BOOLEAN',
      nb: 'BOOLEAN',
      numericString: 'VARCHAR',
    });
    const cols = await columnsOf(t, ds);
    expect(Object.fromEntries([...cols].map(([k, c]) => [k, c.type]))).toEqual({
      s: 'string',
      empty: 'string',
      i: 'integer',
      neg: 'integer',
      zero: 'integer',
      maxSafe: 'integer',
      minSafe: 'integer',
      f: 'float',
      tiny: 'float',
      pi: 'float',
      b: 'boolean',
      nb: 'boolean',
      numericString: 'string',
    });
  });

  it('stores integers too big for BIGINT as floats instead of failing the request', async () => {
    const ds = fresh();
    const r = results(await batch(t, ds, [{ data: { small: 1 } }, { data: { small: 1e20, huge: 2 ** 63 } }, { data: { small: 3 } }]));
    expect(r.map((x) => x.status)).toEqual([202, 202, 202]);
    expect(await sqlTypes(t, ds)).toEqual({ small: 'DOUBLE', huge: 'DOUBLE' });
    expect((await stored(t, ds)).map((x) => x.fields)).toEqual([{ small: 1 }, { small: 1e20, huge: 2 ** 63 }, { small: 3 }]);
  });

  const widening: [string, unknown[], string, string, unknown[]][] = [
    ['integer → float', [1, 2.5, -3], 'DOUBLE', 'float', [1, 2.5, -3]],
    ['integer → string', [1, 'x'], 'VARCHAR', 'string', ['1', 'x']],
    ['float → string', [1.5, 'x'], 'VARCHAR', 'string', ['1.5', 'x']],
    ['boolean + number → string', [true, 3], 'VARCHAR', 'string', ['true', '3']],
    ['number + boolean → string', [3, false], 'VARCHAR', 'string', ['3', 'false']],
    ['string stays string', ['a', 2, true, 2.5], 'VARCHAR', 'string', ['a', '2', 'true', '2.5']],
    ['float stays float', [2.5, 7], 'DOUBLE', 'float', [2.5, 7]],
  ];

  it.each(widening)('widens %s across requests', async (_, values, sqlType, type, expected) => {
    const ds = fresh();
    for (const v of values) expect(results(await batch(t, ds, [{ data: { v } }]))[0].status).toBe(202);
    expect((await sqlTypes(t, ds)).v).toBe(sqlType);
    expect((await columnsOf(t, ds)).get('v')!.type).toBe(type);
    expect((await stored(t, ds)).map((r) => r.fields.v)).toEqual(expected);
  });

  it.each(widening)('widens %s within one batch', async (_, values, sqlType, type, expected) => {
    const ds = fresh();
    expect(results(await batch(t, ds, values.map((v) => ({ data: { v } })))).map((x) => x.status)).toEqual(values.map(() => 202));
    expect((await sqlTypes(t, ds)).v).toBe(sqlType);
    expect((await columnsOf(t, ds)).get('v')!.type).toBe(type);
    expect((await stored(t, ds)).map((r) => r.fields.v)).toEqual(expected);
  });

  it('field names are case-sensitive and kept as sent', async () => {
    const ds = fresh();
    results(await batch(t, ds, [{ data: { Name: 'a', name: 'b', 'with space': 1, 'dot.ted': 2, 'quo"te': 3 } }]));
    expect((await stored(t, ds))[0].fields).toEqual({ Name: 'a', name: 'b', 'with space': 1, 'dot.ted': 2, 'quo"te': 3 });
  });
});

describe('datasets, keys and environments', () => {
  it('the first write creates the dataset, with the path segment as its name', async () => {
    const ds = fresh('Created');
    expect(await datasetOf(t, ds)).toBeUndefined();
    results(await batch(t, ds, [{ data: { a: 1 } }]));
    const d = await datasetOf(t, ds);
    expect(d?.name).toBe(ds);
    expect(d?.slug).toBe(ds.toLowerCase());
  });

  it('a configuration key with create_datasets and send_events creates datasets and writes', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { permissions: { create_datasets: true, send_events: true } });
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { a: 1 } }], key.headers))[0].status).toBe(202);
    expect((await single(t, ds, { a: 2 }, key.headers)).statusCode).toBe(200);
    expect((await stored(t, ds)).map((r) => r.fields.a)).toEqual([1, 2]);
  });

  it('keys without create_datasets get 404 for a new dataset, create nothing, and may write to existing ones', async () => {
    const { team, environment } = await initialTenancy(t);
    const ingestOnly = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: false } });
    const configOnly = await addKey(t, team, environment, { permissions: { send_events: true } });
    const before = (await t.store.listDatasets(environment.id)).length;
    for (const key of [ingestOnly, configOnly]) {
      const ds = fresh();
      expect(legacyError(await batch(t, ds, [{ data: { a: 1 } }], key.headers), 404)).toBe(NOT_FOUND);
      expect(legacyError(await single(t, ds, { a: 1 }, key.headers), 404)).toBe(NOT_FOUND);
      expect(await datasetOf(t, ds)).toBeUndefined();
    }
    expect((await t.store.listDatasets(environment.id)).length).toBe(before);
    const existing = fresh();
    results(await batch(t, existing, [{ data: { by: 'creator' } }]));
    expect(results(await batch(t, existing, [{ data: { by: 'ingest' } }], ingestOnly.headers))[0].status).toBe(202);
    expect((await single(t, existing, { by: 'config' }, configOnly.headers)).statusCode).toBe(200);
    expect((await stored(t, existing)).map((r) => r.fields.by)).toEqual(['creator', 'ingest', 'config']);
  });

  it('a configuration key without send_events gets 403 {error}', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { permissions: { create_datasets: true, manage_columns: true } });
    const ds = fresh();
    legacyError(await batch(t, ds, [{ data: { a: 1 } }], key.headers), 403);
    legacyError(await single(t, ds, { a: 1 }, key.headers), 403);
    expect(await datasetOf(t, ds)).toBeUndefined();
  });

  it('names are case-insensitive; the first casing is the name', async () => {
    const suffix = fresh('').toLowerCase();
    const first = `MyDatasET${suffix}`;
    results(await batch(t, first, [{ data: { n: 1 } }]));
    results(await batch(t, `mydataset${suffix}`, [{ data: { n: 2 } }]));
    expect((await single(t, `MYDATASET${suffix}`, { n: 3 })).statusCode).toBe(200);
    const { environment } = await initialTenancy(t);
    const matching = (await t.store.listDatasets(environment.id)).filter((d) => d.slug === `mydataset${suffix}`);
    expect(matching.map((d) => d.name)).toEqual([first]);
    expect((await stored(t, first)).map((r) => r.fields.n)).toEqual([1, 2, 3]);
  });

  it('URL-encoded spaces are part of the name (My%20Dataset shows as "My Dataset")', async () => {
    const suffix = fresh('').toLowerCase();
    results(await batch(t, `My%20Dataset${suffix}`, [{ data: { n: 1 } }]));
    const res = await t.app.inject({ method: 'GET', url: `/1/datasets/my-dataset${suffix}`, headers: t.config });
    expect(res.statusCode).toBe(200);
    expect(json(res).name).toBe(`My Dataset${suffix}`);
    results(await batch(t, `my%20dataset${suffix}`, [{ data: { n: 2 } }]));
    expect((await stored(t, `My Dataset${suffix}`)).map((r) => r.fields.n)).toEqual([1, 2]);
  });

  it.each([
    ['__all__', /: __all__ is reserved/],
    ['__ALL__', /: __all__ is reserved/],
    ['a%2Fb', /: must not contain "\/"/],
    ['%20%20', /: cannot be blank/],
    ['%00', /: must not contain control characters/],
    ['a%1Fb', /: must not contain control characters/],
    ['a%C2%85b', /: must not contain control characters/],
    ['%ED%A0%80', /: must be valid UTF-8 text/],
    ['x%E0%A4%A', /: must be valid UTF-8 text/],
    ['...', /: must contain a letter/],
    ['-', /: must contain a letter/],
    ['%E6%97%A5%E6%9C%AC', /: must contain a letter/],
  ])('%s is not a dataset name: 400 saying why, and nothing created', async (segment, why) => {
    const { environment } = await initialTenancy(t);
    const before = (await t.store.listDatasets(environment.id)).map((d) => d.slug).sort();
    for (const res of [await batch(t, segment, [{ data: { a: 1 } }]), await single(t, segment, { a: 1 })]) {
      const error = legacyError(res, 400);
      expect(error.startsWith('invalid dataset name '), error).toBe(true);
      expect(error).toMatch(why);
    }
    expect((await t.store.listDatasets(environment.id)).map((d) => d.slug).sort()).toEqual(before);
  });

  it("another environment's (or team's) key writes to its own environment only", async () => {
    const { environment } = await initialTenancy(t);
    const env2 = await secondEnvironment(t, `Staging ${fresh()}`);
    const team2 = await secondTeam(t, `Team ${fresh()}`);
    const ds = fresh('shared');
    results(await batch(t, ds, [{ data: { from: 'initial' } }]));
    results(await batch(t, ds, [{ data: { from: 'env2' } }], env2.headers));
    expect((await single(t, ds, { from: 'team2' }, team2.headers)).statusCode).toBe(200);
    const ids = new Set([environment.id, env2.environment.id, team2.environment.id].map(String));
    expect(ids.size).toBe(3);
    expect((await stored(t, ds, environment.id)).map((r) => r.fields.from)).toEqual(['initial']);
    expect((await stored(t, ds, env2.environment.id)).map((r) => r.fields.from)).toEqual(['env2']);
    expect((await stored(t, ds, team2.environment.id)).map((r) => r.fields.from)).toEqual(['team2']);
    const d1 = await datasetOf(t, ds, environment.id);
    const d2 = await datasetOf(t, ds, env2.environment.id);
    expect(d1!.id).not.toBe(d2!.id);
  });

  it('unknown, missing, disabled and expired keys get 401 {error}', async () => {
    const { team, environment } = await initialTenancy(t);
    const disabled = await addKey(t, team, environment, { keyType: 'ingest', disabled: true });
    const expiring = await addKey(t, team, environment, {
      keyType: 'ingest',
      timeToLive: new Date(t.clock.ms + 60_000).toISOString(),
    });
    const ds = fresh();
    expect(results(await batch(t, ds, [{ data: { a: 1 } }], expiring.headers))[0].status).toBe(202);
    t.clock.advance(120);
    const unknownIngest = 'hcxik_' + 'a'.repeat(26) + 'b'.repeat(32);
    for (const headers of [disabled.headers, expiring.headers, { 'x-honeycomb-team': unknownIngest }, { 'x-honeycomb-team': 'nope' }]) {
      legacyError(await batch(t, ds, [{ data: { a: 2 } }], headers), 401);
      legacyError(await single(t, ds, { a: 2 }, headers), 401);
    }
    const res = await t.app.inject({ method: 'POST', url: `/1/batch/${ds}`, payload: '[{"data":{"a":3}}]' });
    expect(legacyError(res, 401)).toBe('unknown API key - check your credentials');
    expect((await stored(t, ds)).map((r) => r.fields.a)).toEqual([1]);
  });
});

describe('bookkeeping: last_written_at and last_written', () => {
  it('are set after ingest (flushed every 2 s) and follow later writes per column', async () => {
    const ds = fresh();
    const create = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } });
    expect(create.statusCode).toBe(201);
    expect(json(create).last_written_at).toBeNull();
    const getDs = async () => json(await t.app.inject({ method: 'GET', url: `/1/datasets/${ds}`, headers: t.config }));

    t.clock.advance(10);
    const first = t.clock.now().toISOString();
    results(await batch(t, ds, [{ data: { a: 1, b: 'x' } }]));
    const after1 = await eventually(getDs, (d) => d.last_written_at !== null);
    expect(after1.last_written_at).toBe(first);
    const cols1 = await columnsOf(t, ds);
    expect(cols1.get('a')!.lastWritten).toBe(first);
    expect(cols1.get('b')!.lastWritten).toBe(first);

    t.clock.advance(3600);
    const second = t.clock.now().toISOString();
    expect((await single(t, ds, { a: 2 })).statusCode).toBe(200);
    const after2 = await eventually(getDs, (d) => d.last_written_at === second);
    expect(after2.last_written_at).toBe(second);
    const cols2 = await columnsOf(t, ds);
    expect(cols2.get('a')!.lastWritten).toBe(second);
    expect(cols2.get('b')!.lastWritten).toBe(first);
  });
});

describe('deleting a dataset', () => {
  it('deletes its events; a dataset re-created with the same name starts empty', async () => {
    const ds = fresh('Doomed');
    results(await batch(t, ds, [{ data: { old: 1, shared: 'a' } }, { data: { old: 2 } }]));
    const before = (await datasetOf(t, ds))!;
    expect(await tableExists(t, before.id)).toBe(true);
    expect(await stored(t, ds)).toHaveLength(2);

    const del = await deleteDataset(t, ds);
    expect(del.statusCode).toBe(202);
    expect(await tableExists(t, before.id)).toBe(false);
    expect(await datasetOf(t, ds)).toBeUndefined();

    results(await batch(t, ds, [{ data: { shared: 5 } }]));
    const after = (await datasetOf(t, ds))!;
    expect(after.id).not.toBe(before.id);
    expect((await stored(t, ds)).map((r) => r.fields)).toEqual([{ shared: 5 }]);
    // The old columns went with the old dataset: `shared` starts again as an integer.
    expect([...(await columnsOf(t, ds)).keys()]).toEqual(['shared']);
    expect((await sqlTypes(t, ds)).shared).toBe('BIGINT');
  });
});
