// Request-shape edge cases that cut across areas: empty bodies, malformed JSON wording,
// query-parameter errors, the team in /2/ paths, encoded slashes in dataset paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectJsonApiError, managementKey } from './v2-helpers.js';
import { PROBLEM_BASE, expectDatasetNotFound } from './problems.js';

describe('request edges', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());
  const team = () => t.init.team.slug;

  it('an empty body where one is required is a 400, not a schema error, on /1/ and /2/', async () => {
    const v1 = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' } });
    expect(v1.statusCode).toBe(400);
    expect(v1.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(json(v1)).toMatchObject({ error: 'could not parse request body', title: 'The request body could not be parsed.', type: `${PROBLEM_BASE}/unparseable` });
    const v2 = await t.app.inject({ method: 'POST', url: `/2/teams/${team()}/environments`, headers: t.mgmt });
    expect(expectJsonApiError(v2, 400)[0].detail).toBe('could not parse request body: request body is empty');
  });

  it('malformed JSON is described without parser internals, and /2/ uses Honeycomb\'s title', async () => {
    const v1 = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{"name":' });
    expect(v1.statusCode).toBe(400);
    expect(json(v1)).toMatchObject({ error: 'could not parse request body', title: 'The request body could not be parsed.', type: `${PROBLEM_BASE}/unparseable` });
    expect(v1.body).not.toMatch(/content-type is set/);
    const v2 = await t.app.inject({ method: 'POST', url: `/2/teams/${team()}/environments`, headers: t.mgmt, payload: '{"data":' });
    const [e] = expectJsonApiError(v2, 400);
    expect(e.title).toBe('request body could not be parsed');
    expect(e.code).toBe('invalid');
  });

  it('query-parameter errors on /2/ name the parameter, not a body pointer', async () => {
    for (const size of ['0', '101', 'abc', '1e1', '0x10', ' 5', '-1']) {
      const res = await t.app.inject({ method: 'GET', url: `/2/teams/${team()}/environments?page[size]=${encodeURIComponent(size)}`, headers: t.mgmt });
      const [e] = expectJsonApiError(res, 422);
      expect(e.source, size).toEqual({ parameter: 'page[size]' });
    }
    const ok = await t.app.inject({ method: 'GET', url: `/2/teams/${team()}/environments?page[size]=100`, headers: t.mgmt });
    expect(ok.statusCode).toBe(200);
  });

  it("another team's slug is 404 before scope and body checks", async () => {
    const readOnly = await managementKey(t, ['environments:read']);
    const forbidden = await t.app.inject({
      method: 'POST', url: `/2/teams/${team()}/environments`, headers: readOnly.headers,
      payload: { data: { type: 'environments', attributes: { name: 'x' } } },
    });
    expectJsonApiError(forbidden, 403);
    const elsewhere = await t.app.inject({
      method: 'POST', url: '/2/teams/not-my-team/environments', headers: readOnly.headers, payload: '{"broken":',
    });
    expectJsonApiError(elsewhere, 404);
  });

  it('an encoded slash in a dataset path never reaches a dataset', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'a-b' } });
    expect(created.statusCode).toBe(201);
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets/a-b', headers: t.config })).statusCode).toBe(200);
    expectDatasetNotFound(await t.app.inject({ method: 'GET', url: '/1/datasets/a%2Fb', headers: t.config }));
  });

  it('a malformed ingest request creates no dataset', async () => {
    for (const payload of ['[{"data":', '', '{"not":"an array"}', '[]']) {
      const res = await t.app.inject({ method: 'POST', url: '/1/batch/never-made', headers: t.ingest, payload });
      expect(res.statusCode, payload).toBe(400);
    }
    const single = await t.app.inject({ method: 'POST', url: '/1/events/never-made', headers: t.ingest, payload: '[1,2]' });
    expect(single.statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets/never-made', headers: t.config })).statusCode).toBe(404);
  });

  it('a clock stepping back does not drain the rate-limit bucket', async () => {
    const limited = await makeApp({ settings: { apiRateLimit: { limit: 2, windowSeconds: 60 } } });
    try {
      const auth = () => limited.app.inject({ method: 'GET', url: '/1/auth', headers: limited.config });
      expect((await auth()).statusCode).toBe(200);
      limited.clock.advance(-3600);
      const res = await auth();
      expect(res.statusCode).toBe(200);
      expect(res.headers.ratelimit).toMatch(/remaining=0/);
    } finally {
      await limited.close();
    }
  });
});
