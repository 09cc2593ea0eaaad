// The native reader of /1/batch JSON bodies (native/columns, src/ingest/native-columns.ts):
// every body it takes becomes exactly the columns the JavaScript path (JSON.parse, then
// normalise.ts) makes of it, and every body it cannot read so is left to that path, which
// answers as it always did. Shown three ways: random bodies (duplicate keys, escapes, every
// kind of number and time) decoded both ways; which bodies it takes; and the same requests
// through two servers, one with it and one without, storing the same rows.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBatch, type BatchRequest, type DecodedBatch } from '../src/ingest/batch.js';
import { received } from '../src/ingest/tasks.js';
import { readBatchNative } from '../src/ingest/native-columns.js';
import { nativeColumnsAvailable } from '../src/native-addon.js';
import { DEFAULT_LIMITS } from '../src/ingest/normalise.js';
import { loadSettings } from '../src/settings.js';
import { rowsOf, type EventColumns } from '../src/stores/events/columns.js';
import { fromPosting, type PostedColumns } from '../src/stores/events/posted-columns.js';
import { json, type TestApp } from './helpers.js';
import { batch, columnsOf, fresh, sqlTypes, stored, withAndWithoutNative } from './ingest-helpers.js';

const RECEIVED_US = 1_700_000_000_123_456;

/** `posted`: as on an ingest thread (the native reader's columns in their posted form). */
function request(body: string | Buffer, nativeJson: boolean, expandDepth = 2, posted = false): BatchRequest {
  return { body: Buffer.from(body), contentType: 'application/json', maxDecompressed: 1e8, expandDepth, receivedUs: RECEIVED_US, nativeJson, posted };
}

/** A decode as the JavaScript thread takes it (posted columns made EventColumns again). */
const decoded = async (req: BatchRequest) => received(await decodeBatch(req)) as DecodedBatch;

/** What a decode gives, in a comparable form (rows as Maps of values, and each column's facts). */
function outcome(d: DecodedBatch) {
  if (!d.ok) return d;
  const c = d.columns;
  return {
    items: d.items,
    refused: d.refused,
    rows: rowsOf(c),
    fields: c.fields.map((f) => ({ name: f.name, mask: f.mask, present: f.present, constant: f.constant })),
  };
}

const native = (body: string, expandDepth = 2) => readBatchNative(Buffer.from(body), RECEIVED_US, expandDepth, DEFAULT_LIMITS);

// Random JSON text, written by hand so that it can hold what JSON.stringify never writes:
// duplicate keys, escapes of any character, numbers in every notation, odd whitespace.
const space = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
const escape = (s: string, all: boolean) =>
  `"${[...s].map((ch) => (all || ch === '"' || ch === '\\' || ch < ' ' ? [...ch].map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('') : ch)).join('')}"`;
const text = fc.oneof(
  fc.constantFrom('', 'a', 'GET', 'exactly12chr', 'thirteen char', 'ünïcödé', '🐝 bee', 'line\nbreak', 'tab\there', '"quoted"', 'back\\slash', '\u2028', 'x'.repeat(300)),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }), // lone surrogates too
);
const jsonString = fc.tuple(text, fc.boolean()).map(([s, all]) => (all ? escape(s, true) : JSON.stringify(s)));
const number = fc.oneof(
  fc.constantFrom('0', '-0', '1', '-1', '1.5', '1e3', '1E+3', '2.5e-3', '1e400', '-1e400', '1e-400', '0.1', '123456789012345', '1234567890123456789', '9007199254740993', '9223372036854775807', '9223372036854775808', '18446744073709551616', '01', '1.', '.5', '-', '+1', '1e'),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
);
const key = fc.oneof(fc.constantFrom('a', 'b', 'a.b', 'service.name', 'n', '0', '12', '', '__proto__', 'ü', 'data', 'time'), jsonString.map((s) => JSON.parse(s) as string));
const keyText = fc.tuple(key, fc.boolean()).map(([k, all]) => (all ? escape(k, true) : JSON.stringify(k)));

const value: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonString,
    number,
    fc.constantFrom('true', 'false', 'null'),
    tie('object'),
    fc.array(tie('value'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
  ),
  object: fc.array(fc.tuple(keyText, tie('value'), space), { maxLength: 6 }).map((kvs) => `{${kvs.map(([k, v, s]) => `${s}${k}${s}:${v}`).join(',')}}`),
})).value as fc.Arbitrary<string>;

const time = fc.oneof(
  fc.constantFrom('null', '""', '"2024-05-06T07:08:09Z"', '"2024-05-06T07:08:09.123456789Z"', '"2024-02-30T00:00:00Z"', '"2024-02-29T23:59:59.5Z"', '"2024-05-06T24:00:00Z"', '"0000-01-01T00:00:00Z"', '"9999-12-31T23:59:59.999999Z"', '"2024-05-06 07:08:09"', '"2024-05-06T07:08:09+02:00"', '"1714979289"', '1714979289', '1714979289123', '1714979289123456', '1714979289123456789', '-1', '1e20', 'true', '{}'),
  fc.integer({ min: 0, max: 4102444800 }).map((s) => JSON.stringify(new Date(s * 1000).toISOString())),
);
const samplerate = fc.constantFrom('null', '""', '1', '4', '0', '-3', '2.5', '"7"', '1e3', '9007199254740992');

/** A batch item: mostly well-formed, sometimes not an object, without data, or with extra keys. */
const item = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(value, fc.option(time), fc.option(samplerate), fc.boolean()).map(([data, t, sr, extra]) => {
    const parts = [`"data":${data.startsWith('{') || data === 'null' ? data : `{"v":${data}}`}`];
    if (t !== null) parts.push(`"time":${t}`);
    if (sr !== null) parts.push(`"samplerate":${sr}`);
    if (extra) parts.push(`"other":[1,{"x":"y"}]`);
    return `{${parts.reverse().join(',')}}`;
  }) },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '"x"', '[]', '{}', '{"data":[]}', '{"data":1}', '{"data":{},"data":{"a":1}}') },
);
const hostileBody = fc.tuple(fc.array(item, { minLength: 0, maxLength: 6 }), space).map(([items, s]) => `${s}[${s}${items.join(`,${s}`)}${s}]${s}`);

// Bodies as SDKs send them (still with escapes, Unicode, nesting, repeated strings and every
// kind of number): most of these are read natively, and must come out the same.
const cleanKey = fc.constantFrom('a', 'b', 'service.name', 'n', 'ü', 'route', '__proto__', String.raw`k\u00e9y`, String.raw`a\"b`);
const cleanScalar = fc.oneof(
  fc.constantFrom('"GET"', '"exactly12chr"', '"thirteen char"', '"ünïcödé 🐝"', String.raw`"\ud83d\udc1d"`, String.raw`"tab\t"`, 'true', 'false', 'null', '0', '-0', '1.5', '1e3', '1234567890123456789', '9223372036854775808', '2.5e-3'),
  fc.string({ maxLength: 16 }).map((x) => JSON.stringify(x)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.integer().map(String),
);
const cleanObject: fc.Arbitrary<string> = fc.letrec((tie) => ({
  object: fc.uniqueArray(fc.tuple(cleanKey, fc.oneof({ weight: 5, arbitrary: cleanScalar }, { weight: 1, arbitrary: tie('object') })), { maxLength: 6, selector: ([k]) => k }).map((kvs) => `{${kvs.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
})).object as fc.Arbitrary<string>;
const cleanTime = fc.oneof(
  fc.constantFrom('null', '""', '"2024-05-06T07:08:09Z"', '"2024-05-06T07:08:09.123456789Z"', '"2024-02-29T23:59:59.5Z"', '1714979289', '1714979289123', '1714979289123456789'),
  fc.integer({ min: -62135596800, max: 253402300799 }).map((s) => JSON.stringify(new Date(s * 1000).toISOString())),
);
const cleanItem = fc.tuple(cleanObject, fc.option(cleanTime), fc.option(fc.constantFrom('1', '4', 'null'))).map(([data, t, sr]) => `{"data":${data}${t !== null ? `,"time":${t}` : ''}${sr !== null ? `,"samplerate":${sr}` : ''}}`);
const cleanBody = fc.array(cleanItem, { minLength: 1, maxLength: 8 }).map((items) => `[${items.join(',')}]`);
const body = fc.oneof({ weight: 2, arbitrary: fc.tuple(cleanBody, fc.integer({ min: 1, max: 3 })) }, { weight: 1, arbitrary: fc.tuple(hostileBody, fc.integer({ min: 0, max: 3 })) });

describe('the native JSON reader', () => {
  it('is built on this machine (npm install compiles it; without it these tests would prove nothing)', () => {
    expect(nativeColumnsAvailable, 'native/columns did not build or load: run npm install with g++, make and python3').toBe(true);
  });

  it('decodes random bodies exactly as the JavaScript path does, or leaves them to it', async () => {
    let taken = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(body, async ([text, depth]) => {
        runs++;
        if (native(text, depth) !== undefined) taken++;
        const withNative = outcome(await decodeBatch(request(text, true, depth)));
        const without = outcome(await decodeBatch(request(text, false, depth)));
        expect(withNative).toEqual(without);
        expect(outcome(await decoded(request(text, true, depth, true)))).toEqual(without);
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: a good share of the random bodies was read natively.
    expect(taken / runs).toBeGreaterThan(0.35);
  });

  it('takes ordinary bodies, and leaves to JavaScript what only it decides', () => {
    const take = [
      '[{"data":{"a":1,"b":"x","c":true,"d":null,"e":1.5}}]',
      '[{"time":"2024-05-06T07:08:09.123Z","samplerate":3,"data":{"nested":{"x":{"y":1}}},"extra":{"k":[1,2]}}]',
      '[{"data":{"s":"caf\\u00e9 \\ud83d\\udc1d \\"q\\" \\n"}},{"data":{}}]',
      '[{"data":{"n":1e300,"m":-0,"big":18446744073709551616}}]',
    ];
    for (const b of take) expect(native(b), b).toBeDefined();
    const leave = [
      '[]', // no events: the JavaScript path's error
      '  ', // blank
      '{"data":{}}', // not an array
      '[{"data":{"a":1}},]', // invalid JSON
      '[{"data":{"a":1,"a":2}}]', // a duplicate key
      '[{"data":{"a.b":1,"a":{"b":2}}}]', // a name given twice by nesting
      '[{"data":{"10":1,"2":2}}]', // keys of digits (V8 orders them first)
      '[{"data":{"s":"\\udc00"}}]', // a lone surrogate (made U+FFFD)
      '[{"data":{"a":[1,2]}}]', // an array (kept as JSON text)
      '[{"data":{"a":{"b":{"c":{"d":1}}}}}]', // deeper than expand_json_depth 2
      '[{"data":{"a":1},"time":"yesterday"}]', // a refused event
      '[{"data":{"a":1},"time":"2024-05-06T07:08:09+02:00"}]', // a time form parsed in JavaScript
      '[{"data":{"a":1},"samplerate":"4"}]',
      '[null]',
      '[{"data":{"n":1e400}}]', // Infinity: left out in JavaScript
      `[{"data":{"a":"${'x'.repeat(70_000)}"}}]`, // over the string limit
    ];
    for (const b of leave) expect(native(b), b).toBeUndefined();
    // Bytes that are not UTF-8 are made U+FFFD by the JavaScript path.
    expect(readBatchNative(Buffer.from([0x5b, 0x7b, 0x22, 0x64, 0x61, 0x74, 0x61, 0x22, 0x3a, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x7d, 0x5d]), 0, 2, DEFAULT_LIMITS)).toBeUndefined();
  });

  it('gives a wide body in the posted form with the same arrays as the object form', () => {
    // 300 events: `early` in the first 40 only (dense there, then never again: its arrays end
    // before the last row), `rare_<k>` in one event in 30, `s` a string in every event, `x`
    // numbers and strings.
    const events = Array.from({ length: 300 }, (_, i) => ({
      data: { s: `row ${i % 7}`, x: i % 3 === 0 ? `t${i}` : i / 4, ...(i < 40 ? { early: i } : {}), [`rare_${i % 30}`]: i % 2 === 0, ...Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`f${(i * 7 + k) % 200}`, k])) },
    }));
    const body = Buffer.from(JSON.stringify(events));
    const objects = readBatchNative(body, RECEIVED_US, 2, DEFAULT_LIMITS, false)!;
    const posted = readBatchNative(body, RECEIVED_US, 2, DEFAULT_LIMITS, true)!;
    expect('posted' in posted && !('posted' in objects)).toBe(true);
    const back = fromPosting(posted as unknown as PostedColumns);
    const facts = (c: EventColumns) =>
      c.fields.map((f) => ({ name: f.name, mask: f.mask, present: f.present, kinds: [...f.kinds], nums: [...f.nums], spans: f.spans && [...f.spans], rows: f.rows && [...f.rows], constant: f.constant ?? false }));
    expect(back.count).toBe(300);
    expect(facts(back)).toEqual(facts(objects));
    expect(rowsOf(back)).toEqual(rowsOf(objects));
    expect(rowsOf(back)[299].fields.get('early')).toBeUndefined();
    expect(back.fields.some((f) => f.rows)).toBe(true); // some columns stayed sparse
  });

  it('finds each of thousands of names, in an order that changes from event to event, as JSON.parse does', async () => {
    // 400 events of 60 fields drawn from 6,000 names (the reader's name index grows past
    // several sizes), many of one length and sharing long prefixes, some nested, a name given
    // twice in one event (left to JavaScript); and a wide event with every name once.
    const names = Array.from({ length: 6000 }, (_, k) => `resource.attribute.${String(k).padStart(4, '0')}`);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const events = Array.from({ length: 400 }, (_, i) => {
      const data: Record<string, unknown> = { nested: { [names[i]]: i, deep: { [names[i + 1]]: `v${i}` } } };
      for (let k = 0; k < 60; k++) data[names[Math.floor(next() ** 2 * names.length)]] = k % 3 === 0 ? `s${i % 5}` : k;
      return { data };
    });
    const wide = [{ data: Object.fromEntries(names.slice(0, 1999).map((n, k) => [n, k])) }];
    for (const body of [JSON.stringify(events), JSON.stringify(wide)]) {
      expect(native(body), 'taken natively').toBeDefined();
      expect(outcome(await decoded(request(body, true)))).toEqual(outcome(await decoded(request(body, false))));
    }
    const twice = `[{"data":{"${names[5]}":1,"${names[6]}":2}},{"data":{"${names[6]}":1,"${names[7]}":2,"${names[6]}":3}}]`;
    expect(native(twice)).toBeUndefined();
  });

  it('reads values, times and sample rates to the same columns as JSON.parse would', () => {
    const cols = native('[{"time":"2024-05-06T07:08:09.1234567Z","samplerate":4,"data":{"svc":"api","ms":12.5,"n":3,"ok":false,"o":{"p":"q"}}},{"time":1714979289,"data":{"svc":"api","n":2.5}},{"data":{"svc":"web"}}]')!;
    expect(cols.count).toBe(3);
    expect([...cols.timeUs]).toEqual([Date.UTC(2024, 4, 6, 7, 8, 9) * 1000 + 123456, 1714979289e6, RECEIVED_US]);
    expect([...cols.samplerate]).toEqual([4, 1, 1]);
    expect(rowsOf(cols).map((r) => Object.fromEntries(r.fields))).toEqual([{ svc: 'api', ms: 12.5, n: 3, ok: false, 'o.p': 'q' }, { svc: 'api', n: 2.5 }, { svc: 'web' }]);
    const svc = cols.fields.find((f) => f.name === 'svc')!;
    // The repeated "api" shares its text, as ColumnsBuilder's does.
    expect([...svc.spans!]).toEqual([0, 3, 0, 3, 4, 7]);
    expect(Buffer.from(cols.text).toString()).toBe('apiqweb'); // UTF-8 bytes, spans counting bytes
    expect(svc.constant).toBe(false);
  });
});

/** The same requests as both servers get: bodies the native reader takes, and ones it leaves. */
async function sendAll(t: TestApp, ds: string) {
  const answers: unknown[] = [];
  const events = Array.from({ length: 2100 }, (_, i) => ({
    time: new Date(Date.UTC(2024, 4, 6, 7, 8, 9) + i * 1000).toISOString(),
    data: { 'service.name': `svc-${i % 3}`, route: '/api/v1/items/{id}', n: i, f: i / 8, ok: i % 3 === 0, note: i % 7 === 0 ? 'ünïcödé 🐝' : null, nested: { depth: { x: i } } },
  }));
  answers.push(json(await batch(t, ds, events)));
  answers.push(json(await batch(t, ds, gzipSync(JSON.stringify(events.slice(0, 10))), { 'content-type': 'application/json', 'content-encoding': 'gzip' })));
  answers.push(json(await batch(t, ds, '[{"data":{"n":"now a string","late":"x"}},{"data":{"n":1,"n":2}},{"data":{"arr":[1,{"b":2}]}},{"data":"no"}]', { 'content-type': 'application/json' })));
  answers.push((await batch(t, ds, '[{"data":{"a":1}}', { 'content-type': 'application/json' })).body);
  return { answers, rows: await stored(t, ds), columns: [...(await columnsOf(t, ds)).values()].map((c) => [c.keyName, c.type]), types: await sqlTypes(t, ds) };
}

describe('servers with and without the native JSON reader', () => {
  const apps = withAndWithoutNative();

  it('answer the same and store the same rows', async () => {
    const ds = fresh('native');
    for (const t of [apps.native, apps.javascript]) {
      // Depth 2, so that nested objects are flattened (the native reader leaves JSON-text values to JavaScript).
      const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload: { name: ds, expand_json_depth: 2 } });
      expect(created.statusCode, created.body).toBe(201);
    }
    const a = await sendAll(apps.native, ds);
    const b = await sendAll(apps.javascript, ds);
    expect(a.answers).toEqual(b.answers);
    expect(a.columns).toEqual(b.columns);
    expect(a.types).toEqual(b.types);
    expect(a.rows).toEqual(b.rows);
    // And what they stored is right, not merely the same.
    expect(a.rows.length).toBe(2100 + 10 + 3);
    expect(a.rows[7].fields).toEqual({ 'service.name': 'svc-1', route: '/api/v1/items/{id}', n: '7', f: 0.875, ok: false, note: 'ünïcödé 🐝', 'nested.depth.x': 7 });
    expect(a.rows[7].time).toBe(BigInt(Date.UTC(2024, 4, 6, 7, 8, 16)) * 1000n);
    expect(a.answers[2]).toEqual([{ status: 202 }, { status: 202 }, { status: 202 }, { status: 400, error: 'event data must be a JSON object' }]);
    expect(JSON.parse(a.answers[3] as string).error).toBe('Request body is malformed and cannot be read.');
  });

  it('WAGGLE_INGEST_NATIVE turns it off (or on; on refuses to start without it)', () => {
    expect(loadSettings({}).ingestNative).toBe(nativeColumnsAvailable);
    expect(loadSettings({ WAGGLE_INGEST_NATIVE: 'off' }).ingestNative).toBe(false);
    expect(loadSettings({ WAGGLE_INGEST_NATIVE: 'on' }).ingestNative).toBe(true);
    expect(() => loadSettings({ WAGGLE_INGEST_NATIVE: 'sometimes' })).toThrow(/WAGGLE_INGEST_NATIVE/);
  });
});
