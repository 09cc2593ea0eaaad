// POST /1/kinesis_events/{dataset}: Amazon Data Firehose HTTP endpoint delivery, over a real
// app and stores. Stored rows are read back from the event store.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from './contract.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';
import { datasetSlug } from '../src/domain/datasets.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent } from '../src/stores/events/duckdb-store.js';

const PATH = '/1/kinesis_events/{datasetSlug}';
const RID = '33658b45-a8f1-4007-92e8-f601ae33db14';

const b64 = (v: Buffer | string | object) =>
  (Buffer.isBuffer(v) ? v : Buffer.from(typeof v === 'string' ? v : JSON.stringify(v))).toString('base64');

/** A Firehose delivery body; each record is given as its raw content (Buffer, text or object). */
const delivery = (records: (Buffer | string | object)[]) => ({
  requestId: RID,
  timestamp: 1_700_000_000_000,
  records: records.map((r) => ({ data: b64(r) })),
});

/** A CloudWatch Logs subscription message as CloudWatch hands it to Firehose: gzip of JSON. */
const cloudwatch = (messageType: string, logEvents: { id: string; timestamp: number; message: string }[]) =>
  gzipSync(
    JSON.stringify({
      messageType,
      owner: '123456789012',
      logGroup: '/aws/lambda/checkout',
      logStream: '2026/11/23/[$LATEST]abc',
      subscriptionFilters: ['to-firehose'],
      logEvents,
    }),
  );

interface Row {
  timeUs: number;
  samplerate: number;
  fields: Record<string, unknown>;
}

describe('POST /1/kinesis_events/{dataset}', () => {
  let t: TestApp;
  let envId: string;
  beforeAll(async () => {
    t = await makeApp();
    envId = (await initialTenancy(t)).environment.id;
  });
  afterAll(() => t.close());

  const post = (dataset: string, body: unknown, headers: Record<string, string | undefined> = {}) => {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      'x-amz-firehose-request-id': RID,
      'x-amz-firehose-access-key': t.init.keys.ingest,
    };
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined) delete h[k];
      else h[k] = v;
    }
    return t.app.inject({
      method: 'POST',
      url: `/1/kinesis_events/${encodeURIComponent(dataset)}`,
      headers: h,
      payload: Buffer.isBuffer(body) ? body : JSON.stringify(body),
    });
  };

  /** Every stored row of a dataset, fields by column name (nulls left out), oldest first. */
  async function rows(dataset: string): Promise<Row[]> {
    const ds = await t.store.getDataset(envId, datasetSlug(dataset));
    if (!ds) return []; // a refused request may not even create its dataset
    const names = new Map((await t.store.listColumns(ds.id)).map((c) => [c.physical, c.keyName]));
    const exists = await t.events.query(`SELECT 1 FROM information_schema.tables WHERE table_name = ?`, [tableName(ds.id)]);
    if (exists.length === 0) return [];
    const raw = await t.events.query(
      `SELECT *, epoch_us(__time) AS __time_us FROM ${quoteIdent(tableName(ds.id))} ORDER BY __time, __ingested`,
    );
    return raw.map((r) => {
      const fields: Record<string, unknown> = {};
      for (const [physical, v] of Object.entries(r)) {
        const name = names.get(physical);
        if (name !== undefined && v !== null) fields[name] = typeof v === 'bigint' ? Number(v) : v;
      }
      return { timeUs: Number(r.__time_us), samplerate: Number(r.__samplerate), fields };
    });
  }

  /** A 4xx/5xx in Firehose's shape (plus the legacy `error`). */
  function expectFirehoseError(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text?: RegExp) {
    expect(res.statusCode, res.body).toBe(status);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['error', 'errorMessage', 'requestId', 'timestamp']);
    expect(body.timestamp).toBe(t.clock.ms);
    expect(typeof body.errorMessage).toBe('string');
    expect(body.error).toBe(body.errorMessage);
    if (text) expect(body.errorMessage).toMatch(text);
    expectContract(PATH, 'post', res);
    return body;
  }

  it('stores plain JSON records, one event each, at the time they were received', async () => {
    const res = await post('Kinesis Plain', delivery([
      { service: 'api', duration_ms: 12.5, status: 200, ok: true },
      { service: 'worker', duration_ms: 3, nested: { a: 1 }, tags: ['x', 'y'] },
      { service: 'api', time: '2020-01-01T00:00:00Z' },
    ]));
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ requestId: RID, timestamp: t.clock.ms });
    expectContract(PATH, 'post', res);

    const stored = await rows('Kinesis Plain');
    expect(stored).toHaveLength(3);
    for (const r of stored) {
      expect(r.timeUs).toBe(t.clock.ms * 1000);
      expect(r.samplerate).toBe(1);
    }
    const byService = stored.map((r) => r.fields).sort((a, b) => Object.keys(b).length - Object.keys(a).length);
    expect(byService[0]).toEqual({ service: 'api', duration_ms: 12.5, status: 200, ok: true });
    // expand_json_depth is 0 by default: objects and arrays are kept as JSON text, as in /1/batch.
    expect(byService[1]).toEqual({ service: 'worker', duration_ms: 3, nested: '{"a":1}', tags: '["x","y"]' });
    // A `time` field inside a record is an ordinary field; the event time is the receive time.
    expect(byService[2]).toEqual({ service: 'api', time: '2020-01-01T00:00:00Z' });
    expect((await t.store.getDataset(envId, 'kinesis-plain'))?.name).toBe('Kinesis Plain');
  });

  it('takes a gzip-encoded body, and newline-delimited JSON inside a record', async () => {
    const body = gzipSync(JSON.stringify(delivery([{ n: 1 }, '{"n":2}\n{"n":3}\n', { n: 4, s: 'four' }])));
    const res = await post('kinesis-gzip', body, { 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).requestId).toBe(RID);
    expectContract(PATH, 'post', res);
    const stored = (await rows('kinesis-gzip')).map((r) => r.fields).sort((a, b) => Number(a.n) - Number(b.n));
    expect(stored).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4, s: 'four' }]);
  });

  it('turns a CloudWatch Logs DATA_MESSAGE into one event per log event, JSON messages flattened in', async () => {
    const ts = Date.UTC(2026, 10, 20, 12, 0, 0);
    const record = cloudwatch('DATA_MESSAGE', [
      { id: '3719', timestamp: ts, message: 'START RequestId: 8f5c Version: $LATEST\n' },
      { id: '3720', timestamp: ts + 1, message: '{"level":"error","latency_ms":41,"user":{"id":7}}' },
      { id: '3721', timestamp: ts + 2, message: '{"id":99,"message":"inner text"}' },
      { id: '3722', timestamp: ts + 3, message: '{not json}' },
    ]);
    const res = await post('cw-logs', delivery([record]));
    expect(res.statusCode, res.body).toBe(200);
    expectContract(PATH, 'post', res);

    const stored = await rows('cw-logs');
    expect(stored.map((r) => r.timeUs)).toEqual([ts, ts + 1, ts + 2, ts + 3].map((ms) => ms * 1000));
    const meta = { logGroup: '/aws/lambda/checkout', logStream: '2026/11/23/[$LATEST]abc', owner: '123456789012' };
    // Plain text: the message as it is.
    expect(stored[0].fields).toEqual({ ...meta, id: '3719', message: 'START RequestId: 8f5c Version: $LATEST\n' });
    // A JSON object message: its fields instead of the raw text (nested objects as for /1/batch).
    expect(stored[1].fields).toEqual({ ...meta, id: '3720', level: 'error', latency_ms: 41, user: '{"id":7}' });
    // The message's own fields win over the envelope's names (the id column holds strings already).
    expect(stored[2].fields).toEqual({ ...meta, id: '99', message: 'inner text' });
    // Looks like JSON but is not: kept as text.
    expect(stored[3].fields).toEqual({ ...meta, id: '3722', message: '{not json}' });
  });

  it('flattens JSON log messages down to the dataset expand_json_depth', async () => {
    const created = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'cw-deep', expand_json_depth: 2 },
    });
    expect(created.statusCode).toBe(201);
    const res = await post('cw-deep', delivery([
      cloudwatch('DATA_MESSAGE', [{ id: '1', timestamp: Date.UTC(2026, 0, 1), message: '{"http":{"req":{"path":"/a","size":{"b":3}}}}' }]),
    ]));
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await rows('cw-deep');
    expect(row.fields['http.req.path']).toBe('/a');
    expect(row.fields['http.req.size']).toBe('{"b":3}');
  });

  it('stores nothing for a CONTROL_MESSAGE and answers 200', async () => {
    const control = cloudwatch('CONTROL_MESSAGE', [
      { id: '', timestamp: Date.now(), message: 'CWL CONTROL MESSAGE: Checking health of destination Firehose.' },
    ]);
    const res = await post('cw-control', delivery([control]));
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ requestId: RID, timestamp: t.clock.ms });
    expect(await rows('cw-control')).toEqual([]);

    // Mixed with data in one request: only the data is stored.
    const mixed = await post('cw-control', delivery([control, { kept: true }]));
    expect(mixed.statusCode, mixed.body).toBe(200);
    expect((await rows('cw-control')).map((r) => r.fields)).toEqual([{ kept: true }]);
  });

  it('answers 200 to an empty records array and stores nothing', async () => {
    const res = await post('kinesis-empty', { requestId: RID, timestamp: 1, records: [] });
    expect(res.statusCode, res.body).toBe(200);
    expect(await rows('kinesis-empty')).toEqual([]);
  });

  it('requires X-Amz-Firehose-Request-Id: 400 with errorMessage, nothing stored', async () => {
    const res = await post('kinesis-noid', delivery([{ a: 1 }]), { 'x-amz-firehose-request-id': undefined });
    const body = expectFirehoseError(res, 400, /X-Amz-Firehose-Request-Id/);
    expect(body.requestId).toBe('');
    expectFirehoseError(await post('kinesis-noid', delivery([{ a: 1 }]), { 'x-amz-firehose-request-id': '' }), 400);
    // Refused before the handler: not even the dataset was created.
    expect(await t.store.getDataset(envId, 'kinesis-noid')).toBeUndefined();
  });

  describe('undecodable records: 400, the request id echoed, and nothing stored', () => {
    const cases: [string, unknown, RegExp][] = [
      ['bad base64', { requestId: RID, timestamp: 1, records: [{ data: b64({ ok: 1 }) }, { data: 'not base64!!' }] }, /record 1: .*base64/],
      ['base64 of the wrong length', { requestId: RID, timestamp: 1, records: [{ data: b64({ ok: 1 }) }, { data: 'eyJh' + 'Y' }] }, /record 1: .*base64/],
      ['data missing', { requestId: RID, timestamp: 1, records: [{ data: b64({ ok: 1 }) }, {}] }, /record 1: data must be a base64 string/],
      ['bad gzip', delivery([{ ok: 1 }, Buffer.concat([gzipSync('{"a":1}').subarray(0, 12), Buffer.from('garbage')])]), /record 1: .*gzip/],
      ['truncated gzip', delivery([{ ok: 1 }, gzipSync(JSON.stringify({ a: 'b'.repeat(500) })).subarray(0, 30)]), /record 1: .*gzip/],
      ['plain text', delivery([{ ok: 1 }, 'just a log line']), /record 1: data is not JSON/],
      ['binary (protowire metrics)', delivery([{ ok: 1 }, Buffer.from([0x0a, 0xff, 0xfe, 0x12, 0x00])]), /record 1: .*not UTF-8/],
      ['a JSON array', delivery([{ ok: 1 }, [{ a: 1 }]]), /record 1: data must be a JSON object/],
      ['a JSON number', delivery([{ ok: 1 }, '42']), /record 1: data must be a JSON object/],
      ['one bad NDJSON line', delivery([{ ok: 1 }, '{"a":1}\n{"a":\n']), /record 1: line 2/],
      ['unknown messageType', delivery([{ ok: 1 }, gzipSync(JSON.stringify({ messageType: 'OTHER', logGroup: 'g', logEvents: [] }))]), /record 1: unknown CloudWatch Logs messageType/],
      ['log event without timestamp', delivery([{ ok: 1 }, cloudwatch('DATA_MESSAGE', [{ id: '1', message: 'x' } as never])]), /record 1: .*timestamp/],
      ['log event timestamp out of range', delivery([{ ok: 1 }, cloudwatch('DATA_MESSAGE', [{ id: '1', timestamp: 1e20, message: 'x' }])]), /record 1: .*out of range/],
      ['too many fields', delivery([{ ok: 1 }, Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`f${i}`, i]))]), /record 1: Event has too many columns/],
      ['a string over 64 KB', delivery([{ ok: 1 }, { big: 'x'.repeat(64 * 1024 + 1) }]), /record 1: field "big" is longer/],
      ['body without records', { requestId: RID, timestamp: 1 }, /records array/],
      ['body not JSON', Buffer.from('{"records": ['), /malformed/],
    ];
    let n = 0;
    for (const [name, body, text] of cases) {
      it(name, async () => {
        const dataset = `kinesis-bad-${n++}`;
        const res = await post(dataset, body);
        const b = expectFirehoseError(res, 400, text);
        expect(b.requestId).toBe(RID);
        // Refused before anything is created: not even the dataset.
        expect(await t.store.getDataset(envId, datasetSlug(dataset))).toBeUndefined();
      });
    }

    it('a gzip body that is not gzip', async () => {
      const res = await post('kinesis-bad-body', Buffer.from(JSON.stringify(delivery([{ a: 1 }]))), { 'content-encoding': 'gzip' });
      expectFirehoseError(res, 400, /malformed.*gzip/);
    });
  });

  describe('authentication', () => {
    it('wrong, missing or disabled keys → 401 with errorMessage', async () => {
      const wrong = expectFirehoseError(await post('kinesis-auth', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': 'nope' }), 401);
      expect(wrong.errorMessage).toBe('unknown API key - check your credentials');
      expect(wrong.requestId).toBe(RID);
      expectFirehoseError(await post('kinesis-auth', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': undefined }), 401);
      const { team, environment } = await initialTenancy(t);
      const disabled = await addKey(t, team, environment, { keyType: 'ingest', disabled: true, permissions: { create_datasets: true } });
      expectFirehoseError(await post('kinesis-auth', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': disabled.token }), 401, /disabled/);
      // Auth comes first: no dataset was created.
      expect(await t.store.getDataset(envId, 'kinesis-auth')).toBeUndefined();
    });

    it('takes the key from X-Honeycomb-Team too; X-Amz-Firehose-Access-Key wins when both are sent', async () => {
      const viaTeam = await post('kinesis-team', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': undefined, 'x-honeycomb-team': t.init.keys.ingest });
      expect(viaTeam.statusCode, viaTeam.body).toBe(200);
      const both = await post('kinesis-team', delivery([{ a: 2 }]), { 'x-amz-firehose-access-key': 'nope', 'x-honeycomb-team': t.init.keys.ingest });
      expectFirehoseError(both, 401);
      expect((await rows('kinesis-team')).map((r) => r.fields)).toEqual([{ a: 1 }]);
    });

    it('only this route reads X-Amz-Firehose-Access-Key', async () => {
      const res = await t.app.inject({
        method: 'POST', url: '/1/batch/kinesis-batch', headers: { 'x-amz-firehose-access-key': t.init.keys.ingest, 'content-type': 'application/json' },
        payload: JSON.stringify([{ data: { a: 1 } }]),
      });
      expect(res.statusCode).toBe(401);
      expect(json(res)).toEqual({ error: 'unknown API key - check your credentials' });
    });

    it('a configuration key with send_events works; without it → 403', async () => {
      const res = await post('kinesis-config', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': t.init.keys.configuration });
      expect(res.statusCode, res.body).toBe(200);
      expect((await rows('kinesis-config')).map((r) => r.fields)).toEqual([{ a: 1 }]);

      const { team, environment } = await initialTenancy(t);
      const noSend = await addKey(t, team, environment, { permissions: { send_events: false, create_datasets: true } });
      expectFirehoseError(await post('kinesis-config', delivery([{ a: 2 }]), { 'x-amz-firehose-access-key': noSend.token }), 403, /send_events/);
      expect(await rows('kinesis-config')).toHaveLength(1);
    });

    it('a management key is refused', async () => {
      const mgmt = `${t.init.keys.management.id}:${t.init.keys.management.secret}`;
      expectFirehoseError(await post('kinesis-mgmt', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': mgmt }), 401);
    });
  });

  describe('dataset creation, as for /1/batch', () => {
    it('an ingest key without create_datasets writes to existing datasets only (404 otherwise)', async () => {
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: false } });
      const missing = await post('kinesis-nocreate', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': key.token });
      expectFirehoseError(missing, 404, /^Dataset not found$/);
      expect(await t.store.getDataset(envId, 'kinesis-nocreate')).toBeUndefined();

      const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'kinesis-nocreate' } });
      expect(created.statusCode).toBe(201);
      const ok = await post('kinesis-nocreate', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': key.token });
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await rows('kinesis-nocreate')).map((r) => r.fields)).toEqual([{ a: 1 }]);
    });

    it('a configuration key without create_datasets cannot create one either', async () => {
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { send_events: true, create_datasets: false } });
      expectFirehoseError(await post('kinesis-nocreate-cfg', delivery([{ a: 1 }]), { 'x-amz-firehose-access-key': key.token }), 404);
    });

    it('names the dataset case-insensitively, and refuses names no dataset can have (400, nothing created)', async () => {
      expect((await post('Kinesis-CASE', delivery([{ a: 1 }]))).statusCode).toBe(200);
      expect((await post('kinesis-case', delivery([{ a: 2 }]))).statusCode).toBe(200);
      expect(await rows('kinesis-case')).toHaveLength(2);
      expect((await t.store.getDataset(envId, 'kinesis-case'))?.name).toBe('Kinesis-CASE');
      const before = await t.store.listDatasets(envId);
      expectFirehoseError(await post('__all__', delivery([{ a: 1 }])), 400, /^invalid dataset name "__all__": __all__ is reserved/);
      expectFirehoseError(await post('k\u0000', delivery([{ a: 1 }])), 400, /^invalid dataset name "k\\u0000": must not contain control characters$/);
      expectFirehoseError(await post('k\ufffd', delivery([{ a: 1 }])), 400, /: must be valid UTF-8 text$/);
      expectFirehoseError(await post('---', delivery([{ a: 1 }])), 400, /: must contain a letter/);
      expect(await t.store.listDatasets(envId)).toEqual(before);
    });
  });

  it('is in the served OpenAPI document with its header and error shape', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const op = doc.paths[PATH].post;
    expect(op.parameters.some((p: any) => p.in === 'header' && p.name === 'x-amz-firehose-request-id' && p.required)).toBe(true);
    expect(op.responses['200'].content['application/json'].schema.properties).toHaveProperty('requestId');
    expect(op.responses['401'].content['application/json'].schema.properties).toHaveProperty('errorMessage');
  });
});

describe('kinesis limits', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('shares the ingest rate limit and answers 429 in Firehose shape, without Retry-After', async () => {
    const r = await makeApp({ settings: { ingestRateLimit: { limit: 2, windowSeconds: 60 } } });
    try {
      const send = () =>
        r.app.inject({
          method: 'POST', url: '/1/kinesis_events/rated',
          headers: { 'content-type': 'application/json', 'x-amz-firehose-request-id': RID, 'x-amz-firehose-access-key': r.init.keys.ingest },
          payload: JSON.stringify(delivery([{ a: 1 }])),
        });
      expect((await send()).statusCode).toBe(200);
      const batch = await r.app.inject({
        method: 'POST', url: '/1/batch/rated', headers: { ...r.ingest, 'content-type': 'application/json' }, payload: '[{"data":{"a":2}}]',
      });
      expect(batch.statusCode).toBe(200);
      const limited = await send();
      expect(limited.statusCode).toBe(429);
      expect(json(limited)).toMatchObject({ requestId: RID, errorMessage: 'Request dropped due to rate limiting.' });
      expect(limited.headers['retry-after']).toBeUndefined();
      expect(limited.headers.ratelimit).toBeDefined();
    } finally {
      await r.close();
    }
  });

  it('refuses a body over the ingest body limit with 413 in Firehose shape', async () => {
    t = await makeApp({ settings: { ingestBodyLimit: 4096, maxColumnsPerDataset: 5, ingestDecompressedLimit: 20_000 } });
    const headers = { 'content-type': 'application/json', 'x-amz-firehose-request-id': RID, 'x-amz-firehose-access-key': t.init.keys.ingest };
    const inject = (dataset: string, body: unknown) =>
      t.app.inject({ method: 'POST', url: `/1/kinesis_events/${dataset}`, headers, payload: JSON.stringify(body) });

    const big = await inject('limits', delivery([{ s: 'x'.repeat(5000) }]));
    expect(big.statusCode).toBe(413);
    expect(json(big)).toMatchObject({ requestId: RID, timestamp: t.clock.ms, errorMessage: 'Request body is too large.' });

    // A record that decompresses past the cap (a small gzip bomb).
    const bomb = await inject('limits', delivery([gzipSync(JSON.stringify({ s: 'y'.repeat(30_000) }))]));
    expect(bomb.statusCode, bomb.body).toBe(413);
    expect(json(bomb).errorMessage).toBe('Request body is too large.');

    // The cap counts the whole request: two records that fit alone do not fit together.
    const half = (c: string) => gzipSync(JSON.stringify({ s: c.repeat(12_000) }));
    expect((await inject('limits-one', delivery([half('y')]))).statusCode).toBe(200);
    const both = await inject('limits-two', delivery([half('y'), half('z')]));
    expect(both.statusCode, both.body).toBe(413);

    // The column cap (5 here) is checked for the whole request: nothing is stored.
    const ok = await inject('limits', delivery([{ a: 1, b: 2 }]));
    expect(ok.statusCode, ok.body).toBe(200);
    const over = await inject('limits', delivery([{ a: 3, c: 1 }, { d: 1, e: 1, f: 1 }]));
    expect(over.statusCode, over.body).toBe(400);
    expect(json(over).errorMessage).toMatch(/^Dataset has too many columns\./);
    const ds = await t.store.getDataset((await initialTenancy(t)).environment.id, 'limits');
    const count = await t.events.query(`SELECT count(*)::INTEGER AS n FROM ${quoteIdent(tableName(ds!.id))}`);
    expect(count[0].n).toBe(1);
    expect((await t.store.listColumns(ds!.id)).map((c) => c.keyName).sort()).toEqual(['a', 'b']);
  });
});
