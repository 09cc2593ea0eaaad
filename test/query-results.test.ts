// /1/query_results: the lifecycle (201 + Location, complete:false, poll until complete, cache
// headers once complete), the documented restrictions (7 days, truncation, rate limit without
// Retry-After, run time), options (disable_series, limit), permissions and tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import { ingest, pollResult, runQuery, saveQuery } from './query-helpers.js';

const CREATE = '/1/query_results/{datasetSlug}';
const GET = '/1/query_results/{datasetSlug}/{queryResultId}';

describe('/1/query_results', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    nowS = Math.floor(t.clock.ms / 1000);
    const minute = Math.floor(nowS / 60) * 60;
    // One event 5 s after a minute boundary, one 50 s after it, and one a day ago.
    await ingest(t, 'lifecycle', [
      { time: new Date((minute - 3600 + 5) * 1000).toISOString(), data: { n: 1 } },
      { time: new Date((minute - 3600 + 50) * 1000).toISOString(), data: { n: 2 } },
      { time: new Date((minute - 86_400) * 1000).toISOString(), data: { n: 3 } },
    ]);
  });
  afterAll(() => t.close());

  const create = (dataset: string, payload: object, headers = t.config) =>
    t.app.inject({ method: 'POST', url: `/1/query_results/${dataset}`, headers, payload });

  it('creates with 201, complete:false and a Location; the GET completes with data and cache headers', async () => {
    const queryId = await saveQuery(t, 'lifecycle', { calculations: [{ op: 'SUM', column: 'n' }], time_range: 7200 });
    const res = await create('lifecycle', { query_id: queryId });
    expect(res.statusCode, res.body).toBe(201);
    expectContract(CREATE, 'post', res);
    const created = json(res);
    expect(created.complete).toBe(false);
    expect(created.data).toBeUndefined();
    expect(created.query).toEqual({ id: queryId, calculations: [{ op: 'SUM', column: 'n' }], time_range: 7200 });
    expect(String(res.headers.location)).toMatch(new RegExp(`^http://[^/]+/1/query_results/lifecycle/${created.id}$`));
    expect(created.links.query_url).toMatch(new RegExp(`^http://localhost(:\\d+)?/[^/]+/environments/[^/]+/datasets/[^/]+/result/${created.id}$`));
    expect(created.links.graph_image_url).toMatch(new RegExp(`^${created.links.query_url}/snapshot/[A-Za-z0-9]{32}$`));

    const done = await pollResult(t, String(res.headers.location));
    expect(done.data.results).toEqual([{ data: { 'SUM(n)': 3 } }]);
    const again = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle/${created.id}`, headers: t.config });
    expectContract(GET, 'get', again);
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8'); // issue 35: it had none
    expect(again.headers['cache-control']).toBe('private, max-age=86400');
    expect(Date.parse(String(again.headers['last-modified']))).not.toBeNaN();
    // A completed result never changes, even when new events arrive.
    await ingest(t, 'lifecycle', [{ time: new Date((nowS - 600) * 1000).toISOString(), data: { n: 100 } }]);
    const later = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle/${created.id}`, headers: t.config });
    expect(json(later).data).toEqual(done.data);
  });

  it('truncates the window by its size at creation', async () => {
    const minute = Math.floor(nowS / 60) * 60;
    // [+12 s, +30 s) widens to the whole minute: the events at +5 s and +50 s both count.
    const body = await runQuery(t, 'lifecycle', { start_time: minute - 3600 + 12, end_time: minute - 3600 + 30 }, { disable_series: true });
    expect(body.data.results).toEqual([{ data: { COUNT: 2 } }]);
    // A 3-day window truncates to 30 minutes … and reads only the past 7 days.
    const week = await runQuery(t, 'lifecycle', { time_range: 3 * 86_400 }, { disable_series: true });
    expect(week.data.results[0].data.COUNT).toBe(4);
  });

  it('refuses more than 7 days with 400, and an unknown or foreign query with 404', async () => {
    const id = await saveQuery(t, 'lifecycle', { time_range: 8 * 86_400 });
    const res = await create('lifecycle', { query_id: id });
    expect(res.statusCode, res.body).toBe(400);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(json(res).error).toMatch(/7 days/);

    expect((await create('lifecycle', { query_id: 'nope' })).statusCode).toBe(404);
    const other = await saveQuery(t, '__all__', { time_range: 60 });
    expect((await create('lifecycle', { query_id: other })).statusCode).toBe(404);
    expect((await create('no-such-dataset', { query_id: other })).statusCode).toBe(404);
    // An environment-wide query runs under __all__.
    expect((await create('__all__', { query_id: other })).statusCode).toBe(201);
  });

  it('validates the request: query_id required, limit only with disable_series, types', async () => {
    const id = await saveQuery(t, 'lifecycle', { time_range: 600 });
    for (const payload of [{}, { query_id: id, limit: 0 }, { query_id: id, limit: 10001 }, { query_id: id, disable_series: 'yes' }, { query_id: 5 }]) {
      const res = await create('lifecycle', payload);
      expect([400, 422], `${JSON.stringify(payload)} → ${res.body}`).toContain(res.statusCode);
    }
    const tooMany = await create('lifecycle', { query_id: id, limit: 5000 });
    expect(tooMany.statusCode, tooMany.body).toBe(422);
    expect(json(tooMany).type_detail[0].field).toBe('limit');

    const ok = await create('lifecycle', { query_id: id, limit: 5000, disable_series: true });
    expect(ok.statusCode).toBe(201);
    // The query as run shows the result's limit.
    expect(json(ok).query.limit).toBe(5000);
    const done = await pollResult(t, String(ok.headers.location));
    expect(done.data.series).toEqual([]);
  });

  it('needs Manage Queries and Columns and Run Queries; other environments see 404', async () => {
    const { team, environment } = await initialTenancy(t);
    const id = await saveQuery(t, 'lifecycle', { time_range: 600 });
    const created = await create('lifecycle', { query_id: id });
    const resultId = json(created).id;
    for (const missing of ['run_queries', 'manage_columns']) {
      const key = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), [missing]: false } });
      const res = await create('lifecycle', { query_id: id }, key.headers);
      expect(res.statusCode, missing).toBe(403);
      expect(json(res).error).toContain(missing);
      const get = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle/${resultId}`, headers: key.headers });
      expect(get.statusCode).toBe(403);
    }
    const ingestKey = await t.app.inject({ method: 'POST', url: '/1/query_results/lifecycle', headers: t.ingest, payload: { query_id: id } });
    expect(ingestKey.statusCode).toBe(401);

    const other = await secondEnvironment(t, 'Elsewhere');
    await ingest({ ...t, ingest: (await addKey(t, team, other.environment, { keyType: 'ingest' })).headers }, 'lifecycle', [{ data: { n: 1 } }]);
    expect((await create('lifecycle', { query_id: id }, other.headers)).statusCode).toBe(404);
    const get = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle/${resultId}`, headers: other.headers });
    expect(get.statusCode).toBe(404);
    // Under another dataset of the same environment the result is not found either.
    await ingest(t, 'lifecycle-two', [{ data: { n: 1 } }]);
    const wrongDataset = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle-two/${resultId}`, headers: t.config });
    expect(wrongDataset.statusCode).toBe(404);
  });

  it('a GET of a pending result waits for it to complete (long poll) instead of answering at once', async () => {
    const id = await saveQuery(t, 'lifecycle', { calculations: [{ op: 'COUNT' }], time_range: 7200 });
    const created = json(await create('lifecycle', { query_id: id }));
    expect(created.complete).toBe(false);
    const res = await t.app.inject({ method: 'GET', url: `/1/query_results/lifecycle/${created.id}`, headers: t.config });
    expect(res.statusCode).toBe(200);
    expect(json(res).complete).toBe(true);
    expect(json(res).data.results).toHaveLength(1);
    expect(res.headers['cache-control']).toBe('private, max-age=86400');
  });

  it('a result left pending (e.g. by a restart) runs on its next GET', async () => {
    const id = await saveQuery(t, 'lifecycle', { calculations: [{ op: 'MAX', column: 'n' }], time_range: 7200 });
    const created = json(await create('lifecycle', { query_id: id }));
    await pollResult(t, `http://x/1/query_results/lifecycle/${created.id}`);
    // Put it back to pending, as a process that died mid-run would have left it.
    const obj = await t.store.getObject<any>('query_result', created.id);
    await t.store.updateObject('query_result', created.id, { body: { ...obj!.body, complete: false, data: undefined } });
    const done = await pollResult(t, `http://x/1/query_results/lifecycle/${created.id}`);
    expect(done.data.results[0].data['MAX(n)']).toBe(100);
  });
});

describe('/1/query_results limits', { timeout: 60_000 }, () => {
  it('allows 10 creations per minute per key, then 429 problem+json without Retry-After', async () => {
    const t = await makeApp();
    try {
      await ingest(t, 'limited', [{ data: { n: 1 } }]);
      const id = await saveQuery(t, 'limited', { time_range: 600 });
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 11; i++) {
        last = await t.app.inject({ method: 'POST', url: '/1/query_results/limited', headers: t.config, payload: { query_id: id } });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([...Array(10).fill(201), 429]);
      expect(String(last!.headers['content-type'])).toMatch(/^application\/problem\+json/);
      expect(last!.headers['retry-after']).toBeUndefined();
      expect(String(last!.headers.ratelimit)).toMatch(/^limit=10, remaining=0/);
      // A minute later the bucket has refilled.
      t.clock.advance(60);
      const after = await t.app.inject({ method: 'POST', url: '/1/query_results/limited', headers: t.config, payload: { query_id: id } });
      expect(after.statusCode).toBe(201);
      // Queries with relational fields have their own bucket of 1 per minute.
      const relational = await saveQuery(t, 'limited', { breakdowns: ['root.name'], time_range: 600 });
      const first = await t.app.inject({ method: 'POST', url: '/1/query_results/limited', headers: t.config, payload: { query_id: relational } });
      const second = await t.app.inject({ method: 'POST', url: '/1/query_results/limited', headers: t.config, payload: { query_id: relational } });
      expect([first.statusCode, second.statusCode]).toEqual([201, 429]);
    } finally {
      await t.close();
    }
  });

  it('a run longer than the run-time limit completes with an error and no data', async () => {
    // (Without the bucket-result cache: the statement itself runs past the limit.)
    const t = await makeApp({ settings: { queryResultRateLimit: null, queryTimeoutMs: 100, queryCache: { enabled: false, maxBytes: 1, graceSeconds: 0, maxValues: 0 } } });
    try {
      // Long spans in 1-second buckets: CONCURRENCY expands each span over thousands of buckets.
      const nowMs = t.clock.ms;
      const events = Array.from({ length: 20_000 }, (_, i) => ({ time: new Date(nowMs - 7_000_000 + i * 100).toISOString(), data: { duration_ms: 6_000_000 } }));
      await ingest(t, 'slow', events);
      const id = await saveQuery(t, 'slow', { calculations: [{ op: 'CONCURRENCY' }], time_range: 7200, granularity: 8 });
      const res = await t.app.inject({ method: 'POST', url: '/1/query_results/slow', headers: t.config, payload: { query_id: id } });
      const done = await pollResult(t, String(res.headers.location));
      expect(done.error).toMatch(/run time/);
      expect(done.data).toEqual({ series: [], results: [] });
    } finally {
      await t.close();
    }
  });
});
