// The dataset naming rule (datasetNameProblem, src/domain/datasets.ts) on the routes that create
// datasets and those that find one by path, and paths whose percent-encoding cannot be decoded:
// each answers in its route's own dialect, never the router's.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectDatasetNotFound, expectLegacy, expectValidation } from './problems.js';
import { initialTenancy } from './tenancy-fixtures.js';
import { exported, otlp, span, statusOf, traces } from './otlp-helpers.js';
import { DEFINITION_DEFAULTS } from '../src/query/definitions.js';

/** Names no dataset can have, with what the 422 says of each. */
const REFUSED: [string, RegExp][] = [
  ['a\u0000b', /^must not contain control characters$/],
  ['tab\there', /^must not contain control characters$/],
  ['line\nbreak', /^must not contain control characters$/],
  ['del\u007f', /^must not contain control characters$/],
  ['c1\u0085', /^must not contain control characters$/],
  ['lone \ud800 surrogate', /^must be valid UTF-8 text$/],
  ['replacement \ufffd', /^must be valid UTF-8 text$/],
  ['..', /^must contain a letter/],
  ['-', /^must contain a letter/],
  ['日本', /^must contain a letter/],
  ['a/b', /^must not contain "\/"$/],
];

describe('dataset names', () => {
  let t: TestApp;
  let envId: string;
  beforeAll(async () => {
    t = await makeApp();
    envId = (await initialTenancy(t)).environment.id;
  });
  afterAll(() => t.close());

  const create = (payload: string) =>
    t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload });
  const slugs = async () => (await t.store.listDatasets(envId)).map((d) => d.slug).sort();

  it('POST /1/datasets refuses names no dataset can have with a 422 on name, and creates nothing', async () => {
    const before = await slugs();
    for (const [name, why] of REFUSED) {
      const body = expectValidation(await create(JSON.stringify({ name })), 'name');
      expect(body.type_detail[0].description, JSON.stringify(name)).toMatch(why);
    }
    expect(await slugs()).toEqual(before);
  });

  it('a body whose name bytes are not UTF-8 is refused like the replacement character they become', async () => {
    const payload = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload });
    expect(expectValidation(res, 'name').type_detail[0].description).toBe('must be valid UTF-8 text');
  });

  it('names with a letter or digit anywhere, and non-ASCII text beside it, are still fine', async () => {
    for (const name of ['a', '7', '..a', 'Café Orders', 'my_dataset-2', '_x_']) {
      const res = await create(JSON.stringify({ name }));
      expect(res.statusCode, `${name}: ${res.body}`).toBe(201);
    }
  });

  it('GET /1/datasets/%00 (and other names no dataset can have) is a 404, not a dataset', async () => {
    // A dataset whose slug a refused name would share: it is never found through that name.
    expect((await create(JSON.stringify({ name: 'a-b' }))).statusCode).toBe(201);
    for (const segment of ['%00', 'a%00b', 'a%0Ab', '%C2%85', 'a%EF%BF%BDb', '-', '...']) {
      expectDatasetNotFound(await t.app.inject({ method: 'GET', url: `/1/datasets/${segment}`, headers: t.config }));
    }
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets/a-b', headers: t.config })).statusCode).toBe(200);
  });

  describe('paths with undecodable percent-encoding answer in their route’s dialect', () => {
    for (const bad of ['%ED%A0%80', 'x%E0%A4%A', '%', 'a%zzb', '%FF']) {
      it(bad, async () => {
        // A configuration route that looks the dataset up: the dataset 404 problem.
        expectDatasetNotFound(await t.app.inject({ method: 'GET', url: `/1/datasets/${bad}`, headers: t.config }));
        // Ingest routes: their legacy 400 saying why the name is refused.
        for (const url of [`/1/batch/${bad}`, `/1/events/${bad}`]) {
          const res = await t.app.inject({ method: 'POST', url, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: url.includes('batch') ? '[{"data":{"a":1}}]' : '{"a":1}' });
          expect(expectLegacy(res, 400).error).toMatch(/^invalid dataset name ".*": must be valid UTF-8 text$/);
        }
        // Any other id names nothing: that route's 404.
        expectLegacy(await t.app.inject({ method: 'GET', url: `/1/boards/${bad}`, headers: t.config }), 404, 'board not found');
        // /2/: JSON:API.
        const v2 = await t.app.inject({ method: 'GET', url: `/2/teams/${bad}/environments`, headers: t.mgmt });
        expect(v2.statusCode).toBe(404);
        expect(v2.headers['content-type']).toBe('application/vnd.api+json');
        expect(json(v2).errors[0].code).toBe('not-found');
        // Unknown routes: the 404 of their prefix.
        expectLegacy(await t.app.inject({ method: 'GET', url: `/1/nothing/${bad}`, headers: t.config }), 404);
      });
    }
    it('the query string is left as it was sent', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/1/boards/%ED%A0%80?x=%ED%A0%80', headers: t.config });
      expectLegacy(res, 404, 'board not found');
    });
  });

  it('a name of 255 characters (the most) is reachable by path; a segment past 1000 characters is a 414 in the prefix’s dialect', async () => {
    const name = `Long ${'n'.repeat(250)}`;
    expect((await create(JSON.stringify({ name }))).statusCode).toBe(201);
    const got = await t.app.inject({ method: 'GET', url: `/1/datasets/${encodeURIComponent(name)}`, headers: t.config });
    expect(got.statusCode, got.body).toBe(200);
    const sent = await t.app.inject({ method: 'POST', url: `/1/events/${encodeURIComponent(name)}`, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: '{"a":1}' });
    expect(sent.statusCode, sent.body).toBe(200);
    const long = 'a'.repeat(1001);
    for (const [method, url] of [['GET', `/1/datasets/${long}`], ['POST', `/1/batch/${long}`]] as const) {
      const res = await t.app.inject({ method, url, headers: t.config });
      expectLegacy(res, 414, 'a path segment is longer than 1000 characters');
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    const v2 = await t.app.inject({ method: 'GET', url: `/2/teams/${long}/environments`, headers: t.mgmt });
    expect(v2.statusCode).toBe(414);
    expect(v2.headers['content-type']).toBe('application/vnd.api+json');
    expect(json(v2).errors[0]).toMatchObject({ status: '414', code: 'uri-too-long', detail: 'a path segment is longer than 1000 characters' });
  });

  describe('length: at most 255 characters (code points, as the contract’s maxLength counts), on every path that creates a dataset', () => {
    /** `prefix` padded with `pad` to `n` characters (code points). */
    const named = (prefix: string, n: number, pad = 'x') => prefix + pad.repeat(n - [...prefix].length);
    const batch = (name: string) =>
      t.app.inject({ method: 'POST', url: `/1/batch/${encodeURIComponent(name)}`, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: '[{"data":{"a":1}}]' });
    const event = (name: string) =>
      t.app.inject({ method: 'POST', url: `/1/events/${encodeURIComponent(name)}`, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: '{"a":1}' });
    const kinesis = (name: string) =>
      t.app.inject({
        method: 'POST',
        url: `/1/kinesis_events/${encodeURIComponent(name)}`,
        headers: { 'content-type': 'application/json', 'x-amz-firehose-request-id': 'rid-1', 'x-amz-firehose-access-key': t.init.keys.ingest },
        payload: JSON.stringify({ requestId: 'rid-1', timestamp: 1_700_000_000_000, records: [{ data: Buffer.from('{"a":1}').toString('base64') }] }),
      });
    /** OTLP names a traces dataset after the resource's service.name. */
    const otlpTraces = (name: string) => otlp(t, 'traces', traces(name, [span(0)]), 'json');

    it('255 characters is fine on each path, astral characters counting one each', async () => {
      const astral = named('Astral ', 255, '😀'); // 255 code points, 503 UTF-16 units
      expect((await create(JSON.stringify({ name: astral }))).statusCode).toBe(201);
      expect((await batch(named('batch ', 255))).statusCode).toBe(200);
      expect((await batch(named('batch astral ', 255, '😀'))).statusCode).toBe(200);
      expect((await event(named('event ', 255))).statusCode).toBe(200);
      expect((await kinesis(named('kinesis ', 255))).statusCode).toBe(200);
      expect(exported(await otlpTraces(named('otlp ', 255)), 'traces').rejected).toBe(0);
      const made = (await t.store.listDatasets(envId)).filter((d) => /^(Astral|batch|event|kinesis|otlp) /.test(d.name));
      expect(made.map((d) => [...d.name].length)).toEqual([255, 255, 255, 255, 255, 255]);
    });

    it('256 (or the 311 of issue 35) is refused on each path in its own dialect, and nothing is created', async () => {
      const before = await slugs();
      for (const n of [256, 311]) {
        for (const name of [named('Long ', n), named('Astral ', n, '😀')]) {
          const body = expectValidation(await create(JSON.stringify({ name })), 'name');
          expect(body.type_detail).toEqual([{ field: 'name', code: 'invalid', description: 'must be at most 255 characters' }]);
        }
        const why = `: must be at most 255 characters, not ${n}`;
        // The name is quoted cut to 64 characters: an OTLP service.name can be megabytes long.
        const refusal = (prefix: string) => `invalid dataset name ${JSON.stringify(named(prefix, 64))}…${why}`;
        expect(expectLegacy(await batch(named('batch ', n)), 400).error).toBe(refusal('batch '));
        expect(expectLegacy(await event(named('event ', n)), 400).error).toBe(refusal('event '));
        const firehose = await kinesis(named('kinesis ', n));
        expect(firehose.statusCode, firehose.body).toBe(400);
        expect(json(firehose).errorMessage).toBe(refusal('kinesis '));
        expect(statusOf(await otlpTraces(named('otlp ', n)), 400)).toEqual({ code: 3, message: refusal('otlp ') });
      }
      expect(await slugs()).toEqual(before);
    });

    it('a longer dataset made before the rule existed stays reachable: read, written to, deleted', async () => {
      const name = named('Legacy ', 300);
      await t.store.createDataset({
        id: 'hcxds_legacy300', environmentId: envId, slug: name.toLowerCase().replace(/[^a-z0-9_-]/g, '-'), name,
        description: '', expandJsonDepth: 0, deleteProtected: false, definitions: { ...DEFINITION_DEFAULTS },
      });
      const path = `/1/datasets/${encodeURIComponent(name)}`;
      expect(json(await t.app.inject({ method: 'GET', url: path, headers: t.config })).name).toBe(name);
      expect((await batch(name)).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'DELETE', url: path, headers: t.config })).statusCode).toBe(202);
      expect((await batch(name)).statusCode).toBe(400); // now it would be a new dataset: the rule applies
    });
  });

  it('dot segments sent as they are (not resolved by the client) are no dataset either', async () => {
    // node:http sends `path` as it is (a URL string would be resolved first, as inject does).
    const { port } = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const send = (path: string, body: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...t.ingest, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode!, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const before = await slugs();
    for (const segment of ['..', '%2e%2e', '.', '%2E']) {
      for (const path of [`/1/batch/${segment}`, `/1/events/${segment}`]) {
        const res = await send(path, path.includes('batch') ? '[{"data":{"a":1}}]' : '{"a":1}');
        expect(res.status, `${path}: ${res.body}`).toBe(400);
        expect(JSON.parse(res.body).error).toMatch(/: must contain a letter/);
      }
    }
    expect(await slugs()).toEqual(before);
  });
});
