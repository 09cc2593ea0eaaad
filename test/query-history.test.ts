// GET /1/query_history (a Waggle extension): the queries run in the web UI by anyone in the
// environment. Recorded for runs through the UI's session (not header-key API clients, not the UI's
// background runs that send `X-Waggle-Query-History: skip`), with who, when, the spec and the
// duration; searched by dataset, column and text; grouped into the most-run; bounded per
// environment; another environment's never seen; the permissions of query results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { ingest, pollResult } from './query-helpers.js';

const own = { origin: 'http://localhost' };

async function signIn(t: TestApp, key: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/1/ui/session', headers: own, payload: { key } });
  expect(res.statusCode, res.body).toBe(200);
  return /waggle_session=[^;]+/.exec([res.headers['set-cookie']].flat().join('\n'))![0];
}

/** Runs a spec as the UI does (save, create the result, poll), with the session cookie or a key's headers. */
async function run(t: TestApp, dataset: string, spec: object, headers: Record<string, string>): Promise<string> {
  const q = await t.app.inject({ method: 'POST', url: `/1/queries/${dataset}`, headers, payload: spec });
  expect(q.statusCode, q.body).toBe(200);
  const res = await t.app.inject({ method: 'POST', url: `/1/query_results/${dataset}`, headers, payload: { query_id: json(q).id } });
  expect(res.statusCode, res.body).toBe(201);
  const done = await pollResult(t, String(res.headers.location), headers);
  return done.id;
}

const history = async (t: TestApp, headers: Record<string, string>, query = '') => {
  const res = await t.app.inject({ method: 'GET', url: `/1/query_history${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as any[];
};

const BY_REGION = { calculations: [{ op: 'COUNT' }], breakdowns: ['region'], time_range: 7200 };
const SLOW_ERRORS = { calculations: [{ op: 'P99', column: 'duration_ms' }], filters: [{ column: 'status', op: '=', value: 500 }], time_range: 3600 };

describe('/1/query_history', { timeout: 60_000 }, () => {
  let t: TestApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const at = new Date(t.clock.ms - 600_000).toISOString();
    await ingest(t, 'shop', [{ time: at, data: { region: 'eu', duration_ms: 12, status: 200 } }, { time: at, data: { region: 'us', duration_ms: 900, status: 500 } }]);
    await ingest(t, 'billing', [{ time: at, data: { plan: 'pro', amount: 3 } }]);
    const { team, environment } = await initialTenancy(t);
    alice = await signIn(t, (await addKey(t, team, environment, { name: 'Alice' })).token);
    bob = await signIn(t, (await addKey(t, team, environment, { name: 'Bob' })).token);
  });
  afterAll(() => t.close());

  it('keeps each query run through the UI session (who, when, the spec, how long it took), not those of header keys or skipped', async () => {
    const first = await run(t, 'shop', BY_REGION, { cookie: alice, ...own });
    const second = await run(t, 'shop', SLOW_ERRORS, { cookie: bob, ...own });
    // A header-key API client, and the UI's background runs (a board's panels), are not kept.
    await run(t, 'shop', { calculations: [{ op: 'MAX', column: 'duration_ms' }] }, t.config);
    await run(t, 'shop', { calculations: [{ op: 'MIN', column: 'duration_ms' }] }, { cookie: alice, ...own, 'x-waggle-query-history': 'skip' });

    // Everyone in the environment sees everyone's runs, newest first; the API reads it with a header key too.
    const seen = await history(t, { cookie: alice });
    expect(await history(t, t.config)).toEqual(seen);
    expect(seen.map((e) => e.result_id)).toEqual([second, first]);
    const [b, a] = seen;
    expect(a).toMatchObject({ dataset: 'shop', query: BY_REGION, result_id: first, run_by: { key_name: 'Alice' } });
    expect(a.query.id).toBeUndefined();
    expect(b).toMatchObject({ dataset: 'shop', query: SLOW_ERRORS, run_by: { key_name: 'Bob' } });
    expect(a.run_by.key_id).not.toBe(b.run_by.key_id);
    expect(Date.parse(a.run_at)).toBe(t.clock.ms);
    expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    expect(a.result_url).toMatch(new RegExp(`/environments/[^/]+/datasets/shop/result/${first}$`));
    expect(a.count).toBeUndefined();
    // The saved query it ran, and the result, are those of the run.
    const q = await t.app.inject({ method: 'GET', url: `/1/queries/shop/${a.query_id}`, headers: t.config });
    expect(json(q)).toMatchObject(BY_REGION);
  });

  it('searches by dataset, column and text, and groups the most-run specs with their counts', async () => {
    await run(t, 'billing', { calculations: [{ op: 'SUM', column: 'amount' }], breakdowns: ['plan'] }, { cookie: bob, ...own });
    // BY_REGION twice more, once with its keys in another order: the same spec.
    await run(t, 'shop', BY_REGION, { cookie: bob, ...own });
    await run(t, 'shop', { time_range: 7200, breakdowns: ['region'], calculations: [{ op: 'COUNT' }] }, { cookie: alice, ...own });
    await run(t, '__all__', { calculations: [{ op: 'COUNT' }], breakdowns: ['region'], time_range: 7200 }, { cookie: alice, ...own });

    const headers = { cookie: bob };
    expect((await history(t, headers, '?dataset=billing')).map((e) => e.dataset)).toEqual(['billing']);
    expect((await history(t, headers, '?dataset=__all__')).map((e) => e.dataset)).toEqual(['__all__']);
    // A column named in a filter, a calculation, a breakdown (case-insensitive).
    expect((await history(t, headers, '?column=status')).map((e) => e.query)).toEqual([SLOW_ERRORS]);
    expect((await history(t, headers, '?column=DURATION_MS')).map((e) => e.query)).toEqual([SLOW_ERRORS]);
    expect(await history(t, headers, '?column=region&dataset=shop')).toHaveLength(3);
    // Text: every word, in the spec, the dataset or who ran it.
    expect((await history(t, headers, '?q=p99%20500')).map((e) => e.query)).toEqual([SLOW_ERRORS]);
    expect((await history(t, headers, '?q=alice')).every((e) => e.run_by.key_name === 'Alice')).toBe(true);
    expect(await history(t, headers, '?q=alice')).toHaveLength(3);
    expect((await history(t, headers, '?q=billing')).map((e) => e.dataset)).toEqual(['billing']);
    expect(await history(t, headers, '?q=nothing-like-this')).toEqual([]);
    expect(await history(t, headers, '?limit=2')).toHaveLength(2);

    const top = await history(t, headers, '?sort=most_run');
    expect(top.map((e) => [e.dataset, e.count])).toEqual([['shop', 3], ['__all__', 1], ['billing', 1], ['shop', 1]]);
    expect(top[0].run_by.key_name).toBe('Alice'); // each group is its newest run
    expect((await history(t, headers, '?sort=most_run&dataset=shop&limit=1')).map((e) => e.count)).toEqual([3]);

    expect((await t.app.inject({ method: 'GET', url: '/1/query_history?sort=oldest', headers: t.config })).statusCode).toBe(422);
    expect((await t.app.inject({ method: 'GET', url: '/1/query_history?limit=0', headers: t.config })).statusCode).toBe(422);
  });

  it("answers only the key's environment, and needs the permissions of query results", async () => {
    const staging = await secondEnvironment(t, 'History Staging');
    expect(await history(t, staging.headers)).toEqual([]);
    const stagingUi = await signIn(t, staging.key.token);
    expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: 'staged' } })).statusCode).toBe(201);
    await run(t, 'staged', { calculations: [{ op: 'COUNT' }] }, { cookie: stagingUi, ...own });
    expect((await history(t, { cookie: stagingUi })).map((e) => e.dataset)).toEqual(['staged']);
    expect(await history(t, { cookie: alice }, '?dataset=staged')).toEqual([]);
    expect((await history(t, t.config)).some((e) => e.dataset === 'staged')).toBe(false);

    const { team, environment } = await initialTenancy(t);
    const noQueries = await addKey(t, team, environment, { permissions: { manage_columns: true } });
    expect((await t.app.inject({ method: 'GET', url: '/1/query_history', headers: noQueries.headers })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/1/query_history', headers: t.ingest })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/1/query_history' })).statusCode).toBe(401);
  });

  it('is in /openapi.json, as a Waggle extension', async () => {
    const op = json(await t.app.inject({ method: 'GET', url: '/openapi.json' })).paths['/1/query_history'].get;
    expect(op.description).toMatch(/Waggle extension/);
    expect(op.responses['200'].content['application/json'].schema.items.properties.run_by).toBeDefined();
    expect(op.responses['403']).toBeDefined();
  });
});

describe('the bound', { timeout: 60_000 }, () => {
  it('keeps the newest WAGGLE_QUERY_HISTORY_MAX entries per environment; 0 keeps none', async () => {
    const t = await makeApp({ settings: { queryHistoryMax: 3 } });
    try {
      await ingest(t, 'shop', [{ time: new Date(t.clock.ms - 60_000).toISOString(), data: { n: 1 } }]);
      const cookie = await signIn(t, t.init.keys.configuration);
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) ids.push(await run(t, 'shop', { calculations: [{ op: 'COUNT' }], time_range: 60 * i }, { cookie, ...own }));
      expect((await history(t, t.config)).map((e) => e.result_id)).toEqual(ids.slice(2).reverse());
      expect(await t.store.listObjects('query_history', {})).toHaveLength(3);
    } finally {
      await t.close();
    }
    const none = await makeApp({ settings: { queryHistoryMax: 0 } });
    try {
      const cookie = await signIn(none, none.init.keys.configuration);
      await run(none, '__all__', { calculations: [{ op: 'COUNT' }] }, { cookie, ...own });
      expect(await history(none, none.config)).toEqual([]);
    } finally {
      await none.close();
    }
  });
});
