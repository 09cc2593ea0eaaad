// The native reader of OTLP trace requests in protobuf (native/columns/src/otlp_traces.cc,
// src/ingest/native-columns.ts): every request it takes becomes exactly the events, per
// dataset, that the JavaScript path (decode-proto.ts, then traces.ts) makes of it, and every
// request it cannot read so is left to that path, which answers as it always did. Shown three
// ways: random requests (and random damage to them) decoded both ways; which requests it takes;
// and the same exports through two servers, one with it and one without, storing the same rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTracesNative } from '../src/ingest/native-columns.js';
import { DEFAULT_LIMITS } from '../src/ingest/normalise.js';
import { decodeOtlp, type DecodedOtlp } from '../src/ingest/otlp/request.js';
import { received } from '../src/ingest/tasks.js';
import { rowsOf } from '../src/stores/events/columns.js';
import { columnsOf, fresh, sqlTypes, stored, withAndWithoutNative } from './ingest-helpers.js';
import { T0, attrs, exported, nanos, otlp, toProtobuf } from './otlp-helpers.js';

/** `posted`: as on an ingest thread, the native reader's columns in their posted form (made EventColumns again here, as the JavaScript thread does). */
const decode = async (body: Buffer, native: boolean, classicKey = false, datasetHeader?: string, posted = false) =>
  received(await decodeOtlp({ signal: 'traces', body, json: false, maxDecompressed: 1e8, classicKey, datasetHeader, receivedUs: 0, native, posted })) as DecodedOtlp;

/** What a decode gives, in a comparable form (rows as Maps of values, and each column's facts). */
function outcome(d: DecodedOtlp) {
  if (!d.ok) return d;
  return {
    items: d.items,
    refused: d.refused,
    groups: d.groups.map((g) => ({
      dataset: g.dataset,
      rows: rowsOf(g.columns),
      fields: g.columns.fields.map((f) => ({ name: f.name, mask: f.mask, present: f.present, constant: f.constant })),
      rowItem: [...g.rowItem],
      rowWeight: [...g.rowWeight],
    })),
  };
}

const native = (body: Buffer, dataset?: string) => readTracesNative(body, dataset, DEFAULT_LIMITS);

// Random requests, written as OTLP/JSON objects and encoded by protobufjs (an encoder independent
// of Waggle's decoders): what SDKs send, and what only the JavaScript path decides (arrays,
// lists and bytes as values, sample rates, trace states, odd service names, ids of any length).
const key = fc.constantFrom('service.name', 'http.route', 'n', 'a.b', 'ü', 'name', 'error', 'trace.trace_id', 'exception.message', 'exception.type', 'exception.escaped', 'exception.stacktrace', '');
const text = fc.oneof(
  fc.constantFrom('', 'GET', 'api', ' api ', '\tweb\n', 'unknown_service:node', 'ünïcödé 🐝', 'exactly12chr', 'x'.repeat(300), '\u00a0api'),
  fc.string({ maxLength: 12 }),
);
const scalar = fc.oneof(
  { weight: 4, arbitrary: text.map((s) => ({ stringValue: s })) },
  { weight: 2, arbitrary: fc.boolean().map((b) => ({ boolValue: b })) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 53, -(2 ** 53))).map((n) => ({ intValue: String(n) })) },
  { weight: 1, arbitrary: fc.constantFrom('9007199254740993', '-9223372036854775808', '9223372036854775807').map((n) => ({ intValue: n })) },
  { weight: 2, arbitrary: fc.oneof(fc.double(), fc.constantFrom(3, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY)).map((x) => ({ doubleValue: x })) },
  { weight: 1, arbitrary: fc.constant({}) },
);
const complex = fc.oneof(
  fc.array(scalar, { maxLength: 2 }).map((values) => ({ arrayValue: { values } })),
  fc.array(fc.tuple(key, scalar), { maxLength: 2 }).map((kvs) => ({ kvlistValue: { values: kvs.map(([k, v]) => ({ key: k, value: v })) } })),
  fc.constant({ bytesValue: Buffer.from([1, 2, 3]).toString('base64') }),
);
const sampleRates = fc.constantFrom([{ key: 'sampleRate', value: { intValue: '4' } }], [{ key: 'SampleRate', value: { stringValue: '2' } }]);
const hexId = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
const traceId = fc.oneof({ weight: 6, arbitrary: hexId(16) }, { weight: 1, arbitrary: hexId(8).map((h) => '0'.repeat(16) + h) }, { weight: 1, arbitrary: fc.constantFrom('', 'ab') });
const spanId = fc.oneof({ weight: 6, arbitrary: hexId(8) }, { weight: 1, arbitrary: fc.constantFrom('', '0102') });
const T0_NS = BigInt(nanos(T0));
const time = fc.oneof(
  fc.constantFrom('0', nanos(T0), nanos(T0, 123), nanos(T0 + 10, 999), nanos(T0 - 5), '1', '18446744073709551615'),
  fc.bigInt({ min: T0_NS - 10n ** 12n, max: T0_NS + 10n ** 12n }).map(String),
);

/**
 * Requests of two sorts: `clean` ones hold only what the native reader reads (most are taken),
 * the others also what it leaves to JavaScript (arrays, lists and bytes as values, sample
 * rates, trace states, a service name that JavaScript trims by Unicode's rules).
 */
function requestOf(clean: boolean) {
  const value = clean ? scalar : fc.oneof({ weight: 12, arbitrary: scalar }, { weight: 1, arbitrary: complex });
  const attributes = clean ? fc.array(fc.record({ key, value }), { maxLength: 5 }) : fc.oneof({ weight: 20, arbitrary: fc.array(fc.record({ key, value }), { maxLength: 5 }) }, { weight: 1, arbitrary: sampleRates });
  const event = fc.record({ timeUnixNano: time, name: fc.constantFrom('exception', 'log', ''), attributes }, { requiredKeys: ['name'] });
  const link = fc.record({ traceId, spanId, attributes }, { requiredKeys: [] });
  const span = fc.record(
    {
      traceId,
      spanId,
      parentSpanId: spanId,
      // (No random sample-rate threshold: the JavaScript path rounds those at random.)
      traceState: clean ? fc.constant('') : fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('k=v', 'ot=th:8') }),
      name: text,
      kind: fc.integer({ min: 0, max: 7 }),
      startTimeUnixNano: time,
      endTimeUnixNano: time,
      attributes,
      events: fc.array(event, { maxLength: 2 }),
      links: fc.array(link, { maxLength: 2 }),
      status: fc.record({ code: fc.integer({ min: 0, max: 3 }), message: fc.constantFrom('', 'boom') }, { requiredKeys: [] }),
    },
    { requiredKeys: ['traceId', 'spanId', 'name', 'startTimeUnixNano', 'endTimeUnixNano'] },
  );
  const scopeName = fc.constantFrom('', '@opentelemetry/instrumentation-http', 'io.opentelemetry.jdbc', 'my-lib', '@honeycombio/x');
  const scopeSpans = fc.record(
    { scope: fc.record({ name: scopeName, version: fc.constantFrom('', '1.2.3'), attributes }, { requiredKeys: [] }), schemaUrl: fc.constantFrom('', 'https://opentelemetry.io/schemas/1.21.0'), spans: fc.array(span, { maxLength: 4 }) },
    { requiredKeys: ['spans'] },
  );
  const service = clean ? fc.oneof(fc.constantFrom('api', ' api ', '\tweb\n', 'unknown_service:node', '', 'ünïcödé'), fc.string({ maxLength: 6 }).filter((x) => x === x.trim())) : text;
  const resourceSpans = fc.record(
    {
      resource: fc.record({ attributes: fc.tuple(fc.option(service), attributes).map(([name, rest]) => (name === null ? rest : [{ key: 'service.name', value: { stringValue: name } }, ...rest])) }),
      scopeSpans: fc.array(scopeSpans, { maxLength: 2 }),
      schemaUrl: fc.constantFrom('', 'https://opentelemetry.io/schemas/1.21.0'),
    },
    { requiredKeys: ['scopeSpans'] },
  );
  return fc.array(resourceSpans, { maxLength: 3 }).map((resourceSpans) => toProtobuf('traces', { resourceSpans }));
}
const request = fc.oneof({ weight: 2, arbitrary: requestOf(true) }, { weight: 1, arbitrary: requestOf(false) });

/** Damage: bytes changed, cut short, or spliced in. */
const damaged = fc.tuple(request, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), fc.option(fc.nat())).map(([body, edits, cut]) => {
  const b = Buffer.from(body);
  for (const [at, byte] of edits) if (b.length > 0) b[at % b.length] = byte;
  return cut === null || b.length === 0 ? b : b.subarray(0, cut % b.length);
});

describe('the native OTLP trace reader', () => {
  it('decodes random requests exactly as the JavaScript path does, or leaves them to it', async () => {
    let taken = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(request, fc.boolean(), async (body, classic) => {
        runs++;
        const header = classic ? 'from-header' : undefined;
        if (native(body, header) !== undefined) taken++;
        const without = outcome(await decode(body, false, classic, header));
        expect(outcome(await decode(body, true, classic, header))).toEqual(without);
        expect(outcome(await decode(body, true, classic, header, true))).toEqual(without);
      }),
      { numRuns: 2000 },
    );
    // Not vacuous: a good share of the random requests was read natively.
    expect(taken / runs).toBeGreaterThan(0.3);
  });

  it('answers damaged requests as the JavaScript path does (an error, or the same events)', async () => {
    await fc.assert(
      fc.asyncProperty(damaged, async (body) => {
        expect(outcome(await decode(body, true))).toEqual(outcome(await decode(body, false)));
      }),
      { numRuns: 1500 },
    );
  });

  const one = (spanFields: Record<string, unknown>, resourceAttrs = attrs({ 'service.name': 'api' })) =>
    toProtobuf('traces', { resourceSpans: [{ resource: { attributes: resourceAttrs }, scopeSpans: [{ scope: { name: 's' }, spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: '0000000000000001', name: 'GET', startTimeUnixNano: nanos(T0), endTimeUnixNano: nanos(T0 + 10), ...spanFields }] }] }] });

  it('takes ordinary requests, and leaves to JavaScript what only it decides', () => {
    const take = [
      one({}),
      one({ attributes: attrs({ route: '/x', n: 3, ok: true, f: { double: 1.5 } }), events: [{ name: 'exception', timeUnixNano: nanos(T0 + 1), attributes: attrs({ 'exception.message': 'boom' }) }], links: [{ traceId: '5b8efff798038103d269b633813fc60d', spanId: '0000000000000009' }] }),
      one({ status: { code: 2, message: 'failed' }, kind: 3 }),
      one({}, attrs({ 'service.name': '  padded  ' })),
      one({ name: '' }), // no name on the wire at all (an empty string is not encoded)
      toProtobuf('traces', { resourceSpans: [] }),
    ];
    for (const b of take) expect(native(b), b.toString('hex')).toBeDefined();
    const leave = [
      one({ attributes: attrs({ list: [1, 2] }) }), // an array: JSON text
      one({ attributes: attrs({ map: { a: 1 } }) }), // a key-value list: flattened
      one({ attributes: attrs({ raw: { bytes: [1, 2] } }) }), // bytes: base64 JSON text
      one({ attributes: attrs({ sampleRate: 4 }) }), // a sample rate
      one({}, attrs({ 'service.name': 'api', SampleRate: '2' })),
      one({ traceState: 'ot=th:8' }), // a sampling threshold
      one({}, attrs({ 'service.name': '\u00a0api' })), // trimmed by JavaScript's own rules
      one({ attributes: attrs({ big: 2 ** 53 + 2 }) }), // an integer past 2^53
      one({ attributes: attrs({ s: 'x'.repeat(70_000) }) }), // over the string limit
      one({ attributes: attrs(Object.fromEntries(Array.from({ length: 2100 }, (_, i) => [`k${i}`, i]))) }), // over the field limit
      Buffer.from([0x0a, 0x05, 0x12]), // cut short
    ];
    for (const b of leave) expect(native(b), b.subarray(0, 64).toString('hex')).toBeUndefined();
    // A string that is not UTF-8 is made U+FFFD by the JavaScript path.
    const bad = one({ name: 'GET' });
    const at = bad.indexOf('GET');
    bad[at] = 0xff;
    expect(native(bad)).toBeUndefined();
  });

  it('writes the rows traces.ts writes: events, links, then the span, with exception fields copied', () => {
    const body = one({
      parentSpanId: '0000000000000002',
      kind: 2,
      attributes: attrs({ route: '/x', n: 3 }),
      events: [{ name: 'exception', timeUnixNano: nanos(T0 + 1, 500), attributes: attrs({ 'exception.message': 'boom', 'exception.escaped': true, other: 'x' }) }],
      links: [{ traceId: '0000000000000000d269b633813fc60d', spanId: '0000000000000009', attributes: attrs({ why: 'retry' }) }],
      status: { code: 2, message: 'failed' },
    });
    const read = native(body)!;
    expect(read.items).toBe(1);
    expect(read.groups.map((g) => [g.dataset, [...g.rowItem]])).toEqual([['api', [0, 0, 0]]]);
    const rows = rowsOf(read.groups[0].columns).map((r) => Object.fromEntries(r.fields));
    const common = { 'service.name': 'api', 'library.name': 's', 'trace.trace_id': '5b8efff798038103d269b633813fc60c', 'meta.signal_type': 'trace', error: true };
    expect(rows).toEqual([
      { ...common, 'trace.parent_id': '0000000000000001', parent_name: 'GET', 'meta.annotation_type': 'span_event', name: 'exception', 'meta.time_since_span_start_ms': 1.0005, 'exception.message': 'boom', 'exception.escaped': true, other: 'x' },
      { ...common, 'trace.parent_id': '0000000000000001', parent_name: 'GET', 'meta.annotation_type': 'link', 'trace.link.trace_id': 'd269b633813fc60d', 'trace.link.span_id': '0000000000000009', why: 'retry' },
      { 'exception.message': 'boom', 'exception.escaped': true, ...common, 'trace.parent_id': '0000000000000002', name: 'GET', 'trace.span_id': '0000000000000001', status_code: 2, status_message: 'failed', 'span.num_events': 1, 'span.num_links': 1, 'span.kind': 'server', type: 'server', duration_ms: 10, route: '/x', n: 3 },
    ]);
    expect([...read.groups[0].columns.timeUs]).toEqual([(T0 + 1) * 1000, T0 * 1000, T0 * 1000]);
  });
});

/** A multi-service export, with requests the native reader takes and ones it leaves. */
function exports(services: string[]) {
  const spans = (s: number) =>
    Array.from({ length: 300 }, (_, i) => ({
      traceId: (0x5b8efff798038103n * 2n ** 64n + BigInt(i >> 3)).toString(16).padStart(32, '0'),
      spanId: (i + 1).toString(16).padStart(16, '0'),
      parentSpanId: i % 8 === 0 ? '' : ((i & ~7) + 1).toString(16).padStart(16, '0'),
      name: `GET /items/${i % 5}`,
      kind: 2,
      startTimeUnixNano: nanos(T0 + i, i),
      endTimeUnixNano: nanos(T0 + i + 7, 3 * i),
      attributes: attrs({ 'http.route': '/items/{id}', 'http.status_code': 200 + (i % 3), cached: i % 2 === 0, ratio: { double: i / 7 }, note: i % 11 === 0 ? 'ünïcödé 🐝' : 'plain' }),
      status: { code: i % 13 === 0 ? 2 : 0 },
      events: i % 17 === 0 ? [{ name: 'exception', timeUnixNano: nanos(T0 + i + 1), attributes: attrs({ 'exception.type': 'Error' }) }] : [],
      ...(s === 1 && i === 5 ? { attributes: attrs({ tags: ['a', 'b'] }) } : {}), // this request goes the JavaScript way
    }));
  return services.map((service, s) => ({ resourceSpans: [{ resource: { attributes: attrs({ 'service.name': service, 'host.name': 'h1' }) }, scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.57.0' }, spans: spans(s) }] }] }));
}

describe('servers with and without the native readers', () => {
  const apps = withAndWithoutNative();

  it('store the same rows from OTLP trace exports', async () => {
    const services = [fresh('otel_a'), fresh('otel_b')];
    const requests = exports(services);
    expect(native(toProtobuf('traces', requests[0]))).toBeDefined();
    expect(native(toProtobuf('traces', requests[1]))).toBeUndefined();
    const results = [];
    for (const t of [apps.native, apps.javascript]) {
      const answers = [];
      for (const r of requests) answers.push(exported(await otlp(t, 'traces', r), 'traces'));
      const perService = [];
      for (const ds of services) perService.push({ rows: await stored(t, ds), columns: [...(await columnsOf(t, ds)).values()].map((c) => [c.keyName, c.type]), types: await sqlTypes(t, ds) });
      results.push({ answers, perService });
    }
    const [a, b] = results;
    expect(a).toEqual(b);
    // And what they stored is right, not merely the same.
    expect(a.answers).toEqual([{ rejected: 0, message: '' }, { rejected: 0, message: '' }]);
    expect(a.perService[0].rows.length).toBe(300 + 18);
    const span9 = a.perService[0].rows.find((r) => r.fields['trace.span_id'] === '000000000000000a')!;
    expect(span9.fields).toMatchObject({ 'service.name': services[0], name: 'GET /items/4', 'trace.parent_id': '0000000000000009', 'http.status_code': 200, duration_ms: 7.000018, cached: false, 'span.kind': 'server' });
  });
});
