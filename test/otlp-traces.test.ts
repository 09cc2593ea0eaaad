// OTLP traces → events, every rule of docs/otlp.md (traces, dataset choice)
// that a user can observe, each sent as protobuf and as JSON and read back from the event store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { fresh, legacyError, stored, type StoredRow } from './ingest-helpers.js';
import { attrs, exported, nanos, otlp, statusOf, type Encoding } from './otlp-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => t.close());

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0); // ms
const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const PARENT = 'eee19b7ec3c1b173';

type Obj = Record<string, unknown>;

function span(over: Obj = {}): Obj {
  return {
    traceId: TRACE,
    spanId: SPAN,
    parentSpanId: PARENT,
    name: 'GET /users',
    kind: 2,
    startTimeUnixNano: nanos(T0, 123_456),
    endTimeUnixNano: nanos(T0 + 864, 321_988),
    ...over,
  };
}

function request(service: string | undefined, spans: Obj[], opts: { resource?: Obj; scope?: Obj; resourceSchema?: string; scopeSchema?: string } = {}): Obj {
  const resourceAttrs = attrs({ ...(service === undefined ? {} : { 'service.name': service }), ...opts.resource });
  return {
    resourceSpans: [
      {
        resource: { attributes: resourceAttrs },
        schemaUrl: opts.resourceSchema ?? '',
        scopeSpans: [{ scope: { name: 'my-lib', version: '1.0', attributes: attrs(opts.scope ?? {}) }, spans, schemaUrl: opts.scopeSchema ?? '' }],
      },
    ],
  };
}

/** Sends a request, expects everything stored, and returns the dataset's events. */
async function send(service: string, req: Obj | string, encoding: Encoding, headers: Record<string, string> = {}): Promise<StoredRow[]> {
  const res = await otlp(t, 'traces', req, encoding, headers);
  expect(exported(res, 'traces')).toEqual({ rejected: 0, message: '' });
  return stored(t, service);
}

describe.each(['protobuf', 'json'] as Encoding[])('OTLP traces as %s', (encoding) => {
  it('stores a span with Honeycomb’s fields, the scope’s and the resource’s', async () => {
    const service = fresh('svc');
    const rows = await send(
      service,
      request(service, [span({ traceState: 'vendor=x', status: { code: 1, message: 'fine' }, attributes: attrs({ 'http.route': '/users' }) })], {
        resource: { 'host.name': 'h1' },
        resourceSchema: 'https://opentelemetry.io/schemas/1.21.0',
        scopeSchema: 'https://scope/1',
      }),
      encoding,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].time).toBe(BigInt(T0) * 1000n + 123n); // start time, microseconds
    expect(rows[0].samplerate).toBe(1);
    expect(rows[0].fields).toEqual({
      'service.name': service,
      'host.name': 'h1',
      'resource.schema_url': 'https://opentelemetry.io/schemas/1.21.0',
      'library.name': 'my-lib',
      'library.version': '1.0',
      'scope.schema_url': 'https://scope/1',
      'trace.trace_id': TRACE,
      'trace.span_id': SPAN,
      'trace.parent_id': PARENT,
      'trace.trace_state': 'vendor=x',
      name: 'GET /users',
      'span.kind': 'server',
      type: 'server',
      status_code: 1,
      status_message: 'fine',
      duration_ms: 864.198532,
      'span.num_events': 0,
      'span.num_links': 0,
      'meta.signal_type': 'trace',
      'http.route': '/users',
    });
  });

  it('names span kinds, sets error only for status 2, and leaves out what is empty', async () => {
    const service = fresh('svc');
    const kinds = [0, 1, 2, 3, 4, 5, 9];
    const spans = kinds.map((kind, i) =>
      span({ kind, spanId: `000000000000000${i}`, parentSpanId: '', traceState: '', status: i === 2 ? { code: 2 } : i === 3 ? { code: 1, message: '' } : undefined }),
    );
    const rows = await send(service, request(service, spans), encoding);
    expect(rows.map((r) => r.fields['span.kind'])).toEqual(['unspecified', 'internal', 'server', 'client', 'producer', 'consumer', 'unspecified']);
    expect(rows.map((r) => r.fields.type)).toEqual(rows.map((r) => r.fields['span.kind']));
    expect(rows.map((r) => r.fields.status_code)).toEqual([0, 0, 2, 1, 0, 0, 0]);
    expect(rows.map((r) => r.fields.error)).toEqual([undefined, undefined, true, undefined, undefined, undefined, undefined]);
    for (const r of rows) {
      expect(r.fields).not.toHaveProperty('trace.parent_id'); // a root span
      expect(r.fields).not.toHaveProperty('status_message');
      expect(r.fields).not.toHaveProperty('trace.trace_state');
      expect(r.fields).not.toHaveProperty('meta.annotation_type');
    }
  });

  it('shortens a trace id whose first 8 bytes are zero, and keeps an empty span id', async () => {
    const service = fresh('svc');
    const rows = await send(service, request(service, [span({ traceId: '0000000000000000f798a1e7f33c8af6', spanId: '' })]), encoding);
    expect(rows[0].fields['trace.trace_id']).toBe('f798a1e7f33c8af6');
    expect(rows[0].fields['trace.span_id']).toBe('');
  });

  it('flags a span that ends before it starts, and gives no duration without both times', async () => {
    const service = fresh('svc');
    const rows = await send(
      service,
      request(service, [
        span({ spanId: '0000000000000001', endTimeUnixNano: nanos(T0 - 5) }),
        span({ spanId: '0000000000000002', endTimeUnixNano: '0' }),
        span({ spanId: '0000000000000003', endTimeUnixNano: nanos(T0, 123_457) }),
      ]),
      encoding,
    );
    expect(rows[0].fields.duration_ms).toBe(0);
    expect(rows[0].fields['meta.invalid_duration']).toBe(true);
    expect(rows[1].fields.duration_ms).toBe(0);
    expect(rows[1].fields).not.toHaveProperty('meta.invalid_duration');
    expect(rows[2].fields.duration_ms).toBe(0.000001); // one nanosecond
  });

  it('flattens attribute values: native scalars, JSON text for bytes and arrays, maps five levels deep', async () => {
    const service = fresh('svc');
    const deep = { a: { b: { c: { d: { e: { f: 1, z: 'last', y: [true] } } } } } };
    const long = 'x'.repeat(70_000);
    const attributes = [
      ...attrs({ s: 'text', b: false, i: 42, d: { double: 2.5 }, neg: -7 }),
      ...attrs({ bytes: { bytes: [1, 2, 3, 4] }, arr: ['item1', 42, true], nested: { inner: { x: 'y' }, n: 1 }, empty: {} }),
      ...attrs({ map: deep, 'mixed.array': [{ z: 1, a: { bytes: [255] } }, [1, 'two']], big: [long] }),
      { key: '', value: { stringValue: 'no key' } },
      { key: 'novalue', value: {} },
      { key: 'nullvalue' },
    ];
    const rows = await send(service, request(service, [span({ attributes })]), encoding);
    const f = rows[0].fields;
    expect(f.s).toBe('text');
    expect(f.b).toBe(false);
    expect(f.i).toBe(42);
    expect(f.d).toBe(2.5);
    expect(f.neg).toBe(-7);
    expect(f.bytes).toBe('"AQIDBA=="\n');
    expect(f.arr).toBe('["item1",42,true]\n');
    expect(f['nested.inner.x']).toBe('y');
    expect(f['nested.n']).toBe(1);
    expect(Object.keys(f).filter((k) => k.startsWith('empty'))).toEqual([]);
    // Five levels are flattened; the sixth map is kept whole, keys sorted, with a newline.
    expect(f['map.a.b.c.d.e']).toBe('{"f":1,"y":[true],"z":"last"}\n');
    expect(f['mixed.array']).toBe('[{"a":"/w==","z":1},[1,"two"]]\n');
    // JSON text is cut at 65,535 bytes.
    expect(Buffer.byteLength(f.big as string)).toBe(65_535);
    expect((f.big as string).startsWith('["xxx')).toBe(true);
    expect(Object.keys(f)).not.toContain('');
    expect(f).not.toHaveProperty('novalue');
    expect(f).not.toHaveProperty('nullvalue');
  });

  it('lets span attributes win over Honeycomb’s fields, which win over the scope’s, which win over the resource’s', async () => {
    const service = fresh('svc');
    const rows = await send(
      service,
      request(service, [span({ attributes: attrs({ name: 'from span', conflicting: 'span' }) })], {
        resource: { conflicting: 'resource', duration_ms: 'resource', 'only.resource': 1, both: 'resource' },
        scope: { conflicting: 'scope', 'span.kind': 'scope', both: 'scope' },
      }),
      encoding,
    );
    const f = rows[0].fields;
    expect(f.name).toBe('from span');
    expect(f.conflicting).toBe('span');
    expect(f.duration_ms).toBeTypeOf('number'); // Honeycomb's field beats the resource's
    expect(f['span.kind']).toBe('server'); // and the scope's
    expect(f.both).toBe('scope');
    expect(f['only.resource']).toBe(1);
  });

  it('reads the sample rate from sampleRate / SampleRate, then the trace state, and stores neither as a field', async () => {
    const service = fresh('svc');
    const cases: [Obj, number][] = [
      [{ attributes: attrs({ sampleRate: 10 }) }, 10],
      [{ attributes: attrs({ SampleRate: 7 }) }, 7],
      [{ attributes: attrs({ SampleRate: 7, sampleRate: 3 }) }, 3],
      [{ attributes: attrs({ sampleRate: '10.6' }) }, 11],
      [{ attributes: attrs({ sampleRate: { double: 2.4 } }) }, 2],
      [{ attributes: attrs({ sampleRate: 2 ** 40 }) }, 2 ** 31 - 1],
      [{ attributes: attrs({ sampleRate: 0 }) }, 1],
      [{ attributes: attrs({ sampleRate: -5 }) }, 1],
      [{ attributes: attrs({ sampleRate: 'lots' }) }, 1],
      [{ attributes: attrs({ sampleRate: true }) }, 1], // a boolean is no rate: kept as a field
      [{ traceState: 'ot=th:8' }, 2],
      [{ traceState: 'congo=t61rcWkgMzE,ot=p:8;th:c' }, 4],
      [{ traceState: 'th=8;rv=1' }, 2],
      [{ traceState: 'ot=th:ffa' }, 682], // 682.67: counts over 100 are floored
      [{ traceState: 'ot=th:fffffffffffff' }, 2 ** 31 - 1],
      [{ traceState: 'ot=th:0' }, 1],
      [{ traceState: 'ot=th:xyz' }, 1],
      [{ traceState: 'ot=th:8', attributes: attrs({ sampleRate: 5 }) }, 5],
      [{}, 1],
    ];
    const spans = cases.map(([over], i) => span({ spanId: i.toString(16).padStart(16, '0'), ...over }));
    const rows = await send(service, request(service, spans), encoding);
    expect(rows.map((r) => r.samplerate)).toEqual(cases.map(([, rate]) => rate));
    for (const r of rows) expect(r.fields).not.toHaveProperty('SampleRate');
    expect(rows.filter((r) => 'sampleRate' in r.fields).map((r) => r.fields.sampleRate)).toEqual([true]);
  });

  it('takes a span’s own rate first, then the scope’s, then the resource’s, before the trace state', async () => {
    const a = fresh('svc');
    const spans = [span({ spanId: '0000000000000001', traceState: 'ot=th:c' }), span({ spanId: '0000000000000002', attributes: attrs({ sampleRate: 3 }) })];
    const rows = await send(a, request(a, spans, { scope: { SampleRate: 6 }, resource: { sampleRate: 9 } }), encoding);
    expect(rows.map((r) => r.samplerate)).toEqual([6, 3]);
    const b = fresh('svc');
    const rows2 = await send(b, request(b, [span({ traceState: 'ot=th:c' })], { resource: { sampleRate: '20' } }), encoding);
    expect(rows2.map((r) => r.samplerate)).toEqual([20]);
    for (const r of [...rows, ...rows2]) {
      expect(r.fields).not.toHaveProperty('sampleRate');
      expect(r.fields).not.toHaveProperty('SampleRate');
    }
  });

  it('stores span events and links as events of their own, before their span, with its sample rate', async () => {
    const service = fresh('svc');
    const linked = '11111111111111111111111111111111';
    const rows = await send(
      service,
      request(service, [
        span({
          status: { code: 2, message: 'boom' },
          attributes: attrs({ sampleRate: 4, 'exception.type': 'SpanOwn' }),
          events: [
            { timeUnixNano: nanos(T0 + 10, 123_456), name: 'exception', attributes: attrs({ 'exception.message': 'bad', 'exception.type': 'Error', 'exception.escaped': true, 'exception.stacktrace': 'at x', other: 1 }) },
            { timeUnixNano: nanos(T0 - 1), name: 'before start', attributes: attrs({ k: 'v' }) },
            { timeUnixNano: nanos(T0 + 20), name: 'exception', attributes: attrs({ 'exception.message': 'second' }) },
          ],
          links: [
            { traceId: linked, spanId: 'aaaaaaaaaaaaaaaa', attributes: attrs({ 'link.kind': 'follows' }) },
            { traceId: '0000000000000000aaaaaaaaaaaaaaaa', spanId: '' },
          ],
        }),
      ], { resource: { 'host.name': 'h' } }),
      encoding,
    );
    expect(rows).toHaveLength(6);
    const [e1, e2, e3, l1, l2, s] = rows;
    for (const r of rows) expect(r.samplerate).toBe(4);
    expect(e1.time).toBe(BigInt(T0 + 10) * 1000n + 123n);
    expect(e1.fields).toEqual({
      'service.name': service,
      'host.name': 'h',
      'library.name': 'my-lib',
      'library.version': '1.0',
      'trace.trace_id': TRACE,
      'trace.parent_id': SPAN,
      parent_name: 'GET /users',
      'meta.annotation_type': 'span_event',
      'meta.signal_type': 'trace',
      error: true,
      name: 'exception',
      'meta.time_since_span_start_ms': 10,
      'exception.message': 'bad',
      'exception.type': 'Error',
      'exception.escaped': true,
      'exception.stacktrace': 'at x',
      other: 1,
    });
    expect(e2.fields['meta.time_since_span_start_ms']).toBe(0);
    expect(e2.fields['meta.invalid_time_since_span_start']).toBe(true);
    expect(e2.fields).not.toHaveProperty('trace.span_id');
    expect(e2.fields).not.toHaveProperty('duration_ms');
    expect(e3.fields['exception.message']).toBe('second');
    expect(l1.time).toBe(BigInt(T0) * 1000n + 123n); // the span's start
    expect(l1.fields).toEqual({
      'service.name': service,
      'host.name': 'h',
      'library.name': 'my-lib',
      'library.version': '1.0',
      'trace.trace_id': TRACE,
      'trace.parent_id': SPAN,
      parent_name: 'GET /users',
      'meta.annotation_type': 'link',
      'meta.signal_type': 'trace',
      error: true,
      'trace.link.trace_id': linked,
      'trace.link.span_id': 'aaaaaaaaaaaaaaaa',
      'link.kind': 'follows',
    });
    expect(l2.fields['trace.link.trace_id']).toBe('aaaaaaaaaaaaaaaa');
    expect(l2.fields).not.toHaveProperty('trace.link.span_id');
    expect(l2.fields).not.toHaveProperty('name');
    // The first exception event's fields fill what the span lacks; error comes from the status.
    expect(s.fields['span.num_events']).toBe(3);
    expect(s.fields['span.num_links']).toBe(2);
    expect(s.fields['exception.message']).toBe('bad');
    expect(s.fields['exception.type']).toBe('SpanOwn');
    expect(s.fields['exception.escaped']).toBe(true);
    expect(s.fields['exception.stacktrace']).toBe('at x');
    expect(s.fields).not.toHaveProperty('other');
    expect(s.fields.error).toBe(true);
  });

  it('copies exception fields without setting error', async () => {
    const service = fresh('svc');
    const rows = await send(service, request(service, [span({ events: [{ timeUnixNano: nanos(T0), name: 'exception', attributes: attrs({ 'exception.message': 'm', 'exception.escaped': 'yes' }) }] })]), encoding);
    const s = rows[1].fields;
    expect(s['exception.message']).toBe('m');
    expect(s).not.toHaveProperty('exception.escaped'); // not a boolean
    expect(s).not.toHaveProperty('error');
    expect(rows[0].fields).not.toHaveProperty('error');
  });

  it('chooses the dataset from service.name for environment keys, whatever x-honeycomb-dataset says', async () => {
    const base = fresh('svc');
    const cases: [string | undefined | number, string][] = [
      [`  ${base}a  `, `${base}a`],
      [undefined, 'unknown_service'],
      ['   ', 'unknown_service'],
      ['unknown_service:node', 'unknown_service'],
      [`so_unknown_service_${base}`, `so_unknown_service_${base}`],
      [5, 'unknown_service'],
    ];
    const before = (await stored(t, 'unknown_service')).length;
    for (const [name, dataset] of cases) {
      const req = request(undefined, [span()], { resource: name === undefined ? {} : { 'service.name': name } });
      const res = await otlp(t, 'traces', req, encoding, { 'x-honeycomb-dataset': 'ignored' });
      expect(exported(res, 'traces').rejected).toBe(0);
      if (dataset !== 'unknown_service') {
        const rows = await stored(t, dataset);
        expect(rows).toHaveLength(1);
        expect(rows[0].fields['service.name']).toBe(name); // the event keeps the name as sent
      }
    }
    expect((await stored(t, 'unknown_service')).length - before).toBe(4);
    expect(await stored(t, 'ignored')).toEqual([]);
  });

  it('answers 401 for a Classic key without x-honeycomb-dataset, and for an unknown Classic key with one', async () => {
    const classic = 'a'.repeat(32);
    const s1 = statusOf(await otlp(t, 'traces', request('x', [span()]), encoding, { 'x-honeycomb-team': classic }), 401);
    expect(s1).toEqual({ code: 16, message: "missing 'x-honeycomb-dataset' header" });
    const s2 = statusOf(await otlp(t, 'traces', request('x', [span()]), encoding, { 'x-honeycomb-team': `hcaic_${'0'.repeat(58)}`, 'x-honeycomb-dataset': 'd' }), 401);
    expect(s2.message).toBe('unknown API key - check your credentials');
  });
});

describe('OTLP/JSON specifics', () => {
  it('reads upper-case hex and base64 ids, enum names, times as numbers, and ignores unknown fields', async () => {
    const service = fresh('svc');
    const req = request(service, [
      {
        traceId: TRACE.toUpperCase(),
        spanId: Buffer.from(SPAN, 'hex').toString('base64'),
        name: 'n',
        kind: 'SPAN_KIND_CLIENT',
        startTimeUnixNano: T0 * 1e6,
        endTimeUnixNano: nanos(T0 + 1),
        status: { code: 'STATUS_CODE_ERROR' },
        droppedAttributesCount: 3,
        somethingNew: { x: 1 },
      },
    ]);
    const rows = await send(service, req, 'json');
    expect(rows[0].fields['trace.trace_id']).toBe(TRACE);
    expect(rows[0].fields['trace.span_id']).toBe(SPAN);
    expect(rows[0].fields['span.kind']).toBe('client');
    expect(rows[0].fields.error).toBe(true);
    expect(rows[0].fields.duration_ms).toBe(1);
  });

  it('makes lone surrogates in names and values U+FFFD, as every ingest path does', async () => {
    const service = fresh('svc');
    const body = JSON.stringify(request(service, [span({ attributes: [{ key: 'k\\udfff', value: { stringValue: 'v\\ud800x' } }] })])).replace(/\\\\u/g, '\\u');
    const rows = await send(service, body, 'json');
    expect(rows[0].fields['k\ufffd']).toBe('v\ufffdx');
  });

  it('refuses a body that is not OTLP JSON with 400 and a Status, and stores nothing', async () => {
    const service = fresh('svc');
    for (const body of ['{not json', '[]', JSON.stringify({ resourceSpans: {} }), JSON.stringify(request(service, [span({ traceId: 'xyz!' })])), JSON.stringify(request(service, [span({ startTimeUnixNano: '-1' })]))]) {
      const s = statusOf(await otlp(t, 'traces', body, 'json'), 400);
      expect(s.code).toBe(3);
      expect(s.message).toMatch(/^failed to parse OTLP request body: /);
    }
    expect(await stored(t, service)).toEqual([]);
  });

  it('answers {} for an empty JSON request, and legacy /1/ routes are untouched', async () => {
    const res = await otlp(t, 'traces', {}, 'json');
    expect(res.body).toBe('{}');
    expect(legacyError(await t.app.inject({ method: 'POST', url: '/1/batch/x', headers: { 'content-type': 'application/json' }, payload: '[]' }) as never, 401)).toMatch(/unknown API key/);
  });
});
