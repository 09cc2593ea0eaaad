// OTLP/HTTP requests and answers: encodings, compression, every error status (as a
// google.rpc.Status in the request's encoding), partial success, decompression bombs, the ingest
// guarantees shared with /1/batch (columns, types, column cap, keys' permissions), with and
// without ingest threads.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { datasetOf, fresh, gzipBomb, sqlTypes, stored, zstdFrame, zstdRaw, type Res } from './ingest-helpers.js';
import { T0, attrs, exported, nanos, otlp, span, statusOf, toProtobuf, traces, type Encoding } from './otlp-helpers.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';

const MB = 1024 * 1024;
type Obj = Record<string, unknown>;

// First in the file (a fresh process), so that the peak RSS before the bombs is low.
describe('OTLP decompression bombs and size limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestDecompressedLimit: 1_000_000, ingestBodyLimit: 300_000 } });
  });
  afterAll(async () => t.close());

  async function defused(res: Promise<Res>) {
    const peakBefore = process.resourceUsage().maxRSS * 1024;
    const s = statusOf(await res, 413);
    expect(s.code).toBe(8);
    expect(s.message).toMatch(/larger than 1000000 bytes decompressed/);
    expect(process.resourceUsage().maxRSS * 1024 - peakBefore).toBeLessThan(64 * MB);
  }

  it('refuses gzip and zstd bombs with 413 without unpacking them', async () => {
    await defused(otlp(t, 'traces', await gzipBomb(200 * MB), 'protobuf', { 'content-encoding': 'gzip' }));
    await defused(otlp(t, 'logs', zstdFrame([{ rle: 0x20, count: 200 * MB }]), 'json', { 'content-encoding': 'zstd' }));
  });

  it('refuses a body over the limit as sent with 413, in the request’s encoding', async () => {
    const s = statusOf(await otlp(t, 'traces', Buffer.alloc(400_000, 0x0a), 'protobuf'), 413);
    expect(s.code).toBe(8);
    expect(s.message).toMatch(/larger than 300000 bytes/);
  });
});

describe.each([1, 0])('OTLP/HTTP with %i ingest threads', (threads) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestThreads: threads, maxColumnsPerDataset: 40 } });
  });
  afterAll(async () => t.close());

  it('answers an empty Export response in the request’s encoding and Content-Type', async () => {
    const service = fresh('svc');
    for (const [type, encoding] of [
      ['application/x-protobuf', 'protobuf'],
      ['application/protobuf', 'protobuf'],
      ['application/json', 'json'],
      ['application/json; charset=utf-8', 'json'],
      ['Application/JSON', 'json'],
    ] as [string, Encoding][]) {
      const res = await otlp(t, 'traces', traces(service, [span(0)]), encoding, { 'content-type': type });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.body).toBe(encoding === 'json' ? '{}' : '');
    }
    expect(await stored(t, service)).toHaveLength(5);
  });

  it('takes gzip and zstd bodies, and answers an empty request with success', async () => {
    const service = fresh('svc');
    const body = toProtobuf('traces', traces(service, [span(0), span(1)]));
    expect(exported(await otlp(t, 'traces', gzipSync(body), 'protobuf', { 'content-encoding': 'gzip' }), 'traces').rejected).toBe(0);
    expect(exported(await otlp(t, 'traces', zstdRaw(JSON.stringify(traces(service, [span(2)]))), 'json', { 'content-encoding': 'zstd' }), 'traces').rejected).toBe(0);
    expect(exported(await otlp(t, 'traces', Buffer.alloc(0), 'protobuf'), 'traces').rejected).toBe(0);
    expect(exported(await otlp(t, 'logs', '', 'json'), 'logs').rejected).toBe(0);
    expect((await stored(t, service)).map((r) => r.fields.name)).toEqual(['span 0', 'span 1', 'span 2']);
  });

  it('answers 415 for other content types, with a JSON Status', async () => {
    for (const type of ['text/plain', 'application/x-ndjson', '']) {
      const res = await otlp(t, 'traces', '{}', 'json', { 'content-type': type });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(statusOf(res, 415)).toEqual({ code: 12, message: 'unsupported content-type, valid types are: application/protobuf, application/x-protobuf, application/json' });
    }
  });

  it('answers 400 with a Status for undecodable bodies, in either encoding, storing nothing', async () => {
    const service = fresh('svc');
    const good = toProtobuf('traces', traces(service, [span(0)]));
    const cases: [Buffer | string, Encoding, Record<string, string>][] = [
      [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), 'protobuf', {}], // a length past the end
      [good.subarray(0, good.length - 3), 'protobuf', {}], // cut short
      [Buffer.from([0x0b, 0x00]), 'protobuf', {}], // wire type 3 (groups)
      ['{"resourceSpans": [', 'json', {}],
      [good, 'protobuf', { 'content-encoding': 'gzip' }], // not gzip
      [good, 'protobuf', { 'content-encoding': 'br' }],
    ];
    for (const [body, encoding, headers] of cases) {
      const res = await otlp(t, 'traces', body, encoding, headers);
      expect(res.headers['content-type']).toBe(encoding === 'json' ? 'application/json' : 'application/x-protobuf');
      const s = statusOf(res, 400);
      expect(s.code).toBe(3);
      expect(s.message).toMatch(/^failed to parse OTLP request body: ./);
    }
    expect(await datasetOf(t, service)).toBeUndefined();
  });

  it('answers 401 for a missing or unknown key and 403 for a configuration key without Send Events', async () => {
    const req = traces('x', [span(0)]);
    expect(statusOf(await otlp(t, 'traces', req, 'protobuf', { 'x-honeycomb-team': '' }), 401)).toEqual({ code: 16, message: "missing 'x-honeycomb-team' header" });
    expect(statusOf(await otlp(t, 'traces', req, 'json', { 'x-honeycomb-team': 'nope' }), 401)).toEqual({ code: 16, message: 'unknown API key - check your credentials' });
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { permissions: { create_datasets: true, send_events: false } });
    expect(statusOf(await otlp(t, 'traces', req, 'protobuf', key.headers), 403)).toEqual({ code: 7, message: 'this API key lacks the send_events permission' });
    const disabled = await addKey(t, team, environment, { keyType: 'ingest', disabled: true });
    expect(statusOf(await otlp(t, 'logs', req, 'protobuf', disabled.headers), 401).message).toBe('API key is disabled');
  });

  it('creates datasets under the key’s permission: 404 when none may be created, partial success when some exist', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: false } });
    const missing = fresh('svc');
    const s = statusOf(await otlp(t, 'traces', traces(missing, [span(0)]), 'protobuf', key.headers), 404);
    expect(s).toEqual({ code: 5, message: `dataset "${missing}": not found, and this key may not create datasets` });
    const existing = fresh('svc');
    await otlp(t, 'traces', traces(existing, [span(0)]), 'protobuf'); // the initial key may create it
    const both = { resourceSpans: [...(traces(existing, [span(1)]).resourceSpans as Obj[]), ...(traces(missing, [span(2), span(3)]).resourceSpans as Obj[])] };
    const r = exported(await otlp(t, 'traces', both, 'json', key.headers), 'traces');
    expect(r.rejected).toBe(2);
    expect(r.message).toContain(`dataset "${missing}": not found`);
    expect(await stored(t, existing)).toHaveLength(2);
    expect(await datasetOf(t, missing)).toBeUndefined();
  });

  it('refuses dataset names a dataset cannot have', async () => {
    // The one naming rule (domain/datasets.ts), as /1/batch applies it: 400 saying why.
    for (const [name, why] of [['__all__', '__all__ is reserved for environment-wide operations'], ['a/b', 'must not contain "/"'], ['..', 'must contain a letter (a-z) or digit, so that it has a slug']]) {
      const s = statusOf(await otlp(t, 'traces', traces(name, [span(0)]), 'protobuf'), 400);
      expect(s).toEqual({ code: 3, message: `invalid dataset name ${JSON.stringify(name)}: ${why}` });
    }
    const ok = fresh('svc');
    const mixed = { resourceSpans: [...(traces('__all__', [span(0)]).resourceSpans as Obj[]), ...(traces(ok, [span(1)]).resourceSpans as Obj[])] };
    expect(exported(await otlp(t, 'traces', mixed, 'json'), 'traces')).toEqual({ rejected: 1, message: `1 of the request's spans were not stored: invalid dataset name "__all__": __all__ is reserved for environment-wide operations` });
    expect(await stored(t, ok)).toHaveLength(1);
  });

  it('stores the good items of a request and answers partial_success with the rejected count and why', async () => {
    const service = fresh('svc');
    const spans = [span(0), span(1, { huge: 'x'.repeat(70_000) }), span(2), { ...span(3), events: [{ timeUnixNano: nanos(T0), name: 'e', attributes: attrs({ big: 'y'.repeat(70_000) }) }] }];
    for (const encoding of ['protobuf', 'json'] as Encoding[]) {
      const r = exported(await otlp(t, 'traces', traces(service, spans), encoding), 'traces');
      expect(r.rejected).toBe(2);
      expect(r.message).toBe(`2 of the request's spans were not stored: field "huge" is longer than 65536 bytes; field "big" is longer than 65536 bytes`);
    }
    // span 3's own event was stored; its span event was not.
    expect((await stored(t, service)).map((row) => row.fields.name)).toEqual(['span 0', 'span 2', 'span 3', 'span 0', 'span 2', 'span 3']);
    const logs = { resourceLogs: [{ resource: { attributes: attrs({ 'service.name': service }) }, scopeLogs: [{ logRecords: [{ body: { stringValue: 'ok' } }, { attributes: attrs({ s: 'z'.repeat(70_000) }) }] }] }] };
    const rl = exported(await otlp(t, 'logs', logs, 'protobuf'), 'logs');
    expect(rl.rejected).toBe(1);
    expect(rl.message).toMatch(/^1 of the request's log records were not stored: /);
  });

  it('applies the dataset column cap and counts the refused events’ items', async () => {
    const service = fresh('svc');
    // The first span creates about 20 columns; the second adds 30 more, past the cap of 40.
    const wide = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra.${i}`, i]));
    const r = exported(await otlp(t, 'traces', traces(service, [span(0), span(1, wide)]), 'protobuf'), 'traces');
    expect(r).toEqual({ rejected: 1, message: "1 of the request's spans were not stored: Dataset has too many columns." });
    const points = {
      resourceMetrics: [{ resource: {}, scopeMetrics: [{ metrics: [{ name: 'a', gauge: { dataPoints: [{ timeUnixNano: nanos(T0), asInt: '1', attributes: attrs(wide) }] } }, { name: 'b', gauge: { dataPoints: [{ timeUnixNano: nanos(T0), asInt: '2', attributes: attrs(wide) }] } }] }] }],
    };
    const ds = fresh('m');
    await otlp(t, 'traces', traces(ds, [span(0, Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`x.${i}`, i])))]), 'protobuf');
    const rm = exported(await otlp(t, 'metrics', points, 'json', { 'x-honeycomb-dataset': ds }), 'metrics');
    expect(rm.rejected).toBe(2); // both points were merged into the refused event
  });

  it('types columns from the values and widens them as /1/batch does', async () => {
    const service = fresh('svc');
    await otlp(t, 'traces', traces(service, [span(0, { v: 1, f: { double: 1.5 }, b: true })]), 'protobuf');
    expect(await sqlTypes(t, service)).toMatchObject({ v: 'BIGINT', f: 'DOUBLE', b: 'BOOLEAN', duration_ms: 'BIGINT', 'trace.trace_id': 'VARCHAR' });
    await otlp(t, 'traces', traces(service, [span(1, { v: 'text' })]), 'json');
    expect((await sqlTypes(t, service)).v).toBe('VARCHAR');
    expect((await stored(t, service)).map((r) => r.fields.v)).toEqual(['1', 'text']);
  });
});

describe('OTLP/HTTP back-pressure', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { ingestRateLimit: { limit: 2, windowSeconds: 60 }, ingestQueueLimit: 1 } });
  });
  afterAll(async () => t.close());

  it('answers 503 with Retry-After while the ingest queue is full, and 429 with Retry-After past the rate limit', async () => {
    const service = fresh('svc');
    // Holding the writer's lock holds every commit: the first request's events wait in the queue.
    let release!: () => void;
    const held = t.app.writer.editColumn('none', () => new Promise<void>((r) => (release = r)));
    const first = otlp(t, 'traces', traces(service, [span(0)]), 'protobuf');
    while (t.app.writer.backlog === 0) await new Promise((r) => setTimeout(r, 5));
    const full = await otlp(t, 'traces', traces(service, [span(1)]), 'protobuf');
    expect(full.headers['retry-after']).toBe('1');
    expect(statusOf(full, 503)).toEqual({ code: 14, message: 'the ingest queue is full; retry later', retryDelaySeconds: 1 });
    release();
    await held;
    expect(exported(await first, 'traces').rejected).toBe(0);
    // Two requests used the bucket of 2; the third is refused.
    const limited = await otlp(t, 'traces', traces(service, [span(2)]), 'json');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const s = statusOf(limited, 429);
    expect(s.code).toBe(8);
    expect(s.message).toBe('Request dropped due to rate limiting.');
    expect(s.retryDelaySeconds).toBeGreaterThanOrEqual(1);
    expect(await stored(t, service)).toHaveLength(1);
  });
});
