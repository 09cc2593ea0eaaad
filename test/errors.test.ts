// The three error dialects through HTTP: legacy {error} (application/json), RFC 7807 problem
// (application/problem+json) and JSON:API {errors} (application/vnd.api+json). Clients branch on
// the Content-Type, so it must always match the body.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { PROBLEM_BASE } from './problems.js';

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Checks that the body is exactly what its Content-Type promises; returns the dialect. */
function dialectOf(res: Res): 'legacy' | 'problem' | 'jsonapi' {
  const type = String(res.headers['content-type'] ?? '');
  const body = json(res);
  if (/^application\/vnd\.api\+json\b/.test(type)) {
    expectSchema('JSONAPIError', body);
    expect(Object.keys(body)).toEqual(['errors']);
    expect(body.errors.length).toBeGreaterThan(0);
    for (const e of body.errors) {
      expect(typeof e.id).toBe('string');
      expect(typeof e.code).toBe('string');
      expect(e.status).toBe(String(res.statusCode));
    }
    return 'jsonapi';
  }
  if (/^application\/problem\+json\b/.test(type)) {
    expectSchema('DetailedError', body);
    expect(body.status).toBe(res.statusCode);
    expect(body.type).toMatch(new RegExp(`^${PROBLEM_BASE}/[a-z-]+$`));
    expect(body).not.toHaveProperty('errors');
    return 'problem';
  }
  expect(type).toMatch(/^application\/json\b/);
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  return 'legacy';
}

/** Nothing internal in an error body: no stack frames, file paths, SQL or driver messages. */
function expectNoLeak(res: Res) {
  for (const pattern of [/\bat .+:\d+:\d+/, /node_modules/, /\/work\//, /\.ts\b/, /stack/i, /sqlite/i, /SELECT|INSERT/, /TypeError|ReferenceError/]) {
    expect(res.body, `${pattern} in ${res.body}`).not.toMatch(pattern);
  }
}

function expectRequestId(res: Res): string {
  const id = String(res.headers['x-request-id'] ?? '');
  expect(id).toMatch(UUID);
  return id;
}

describe('error dialects', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
    expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'ds' } })).statusCode).toBe(201);
  });
  afterAll(() => t.close());

  it('unknown /1/ route → 404 legacy JSON, with or without a key', async () => {
    for (const headers of [{}, t.config]) {
      for (const [method, url] of [['GET', '/1/nope'], ['POST', '/1/nope/deeper?x=1'], ['PATCH', '/1/datasets']] as const) {
        const res = await t.app.inject({ method, url, headers });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(dialectOf(res)).toBe('legacy');
        expect(json(res).error).not.toContain('?x=1');
        expectRequestId(res);
        expectNoLeak(res);
      }
    }
  });

  it('unknown route outside /1/ and /2/ → 404 legacy JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nothing/here' });
    expect(res.statusCode).toBe(404);
    expect(dialectOf(res)).toBe('legacy');
  });

  it('an unknown route is a 404 whatever its body: not a 400 for bad JSON, nor a 415 for its type (found by the fuzz suite)', async () => {
    const cases = [
      { url: '/1/nope', type: 'application/json', payload: '{"broken":', dialect: 'legacy' },
      { url: '/1/nope', type: ';;', payload: '{}', dialect: 'legacy' },
      { url: '/v1/metrics', type: 'application/x-protobuf', payload: '\x0a\x02', method: 'DELETE', dialect: 'legacy' },
      { url: '/2/nope', type: 'text/plain', payload: 'x', dialect: 'jsonapi' },
      { url: '/2/nope', type: 'application/vnd.api+json', payload: '{"data":', dialect: 'jsonapi' },
    ];
    for (const c of cases) {
      const res = await t.app.inject({ method: (c.method ?? 'POST') as 'POST', url: c.url, headers: { ...t.config, 'content-type': c.type }, payload: c.payload });
      expect(res.statusCode, `${c.url} ${c.type}: ${res.body}`).toBe(404);
      expect(dialectOf(res)).toBe(c.dialect);
      expect(res.body).toMatch(/no such route/);
    }
  });

  it('unknown /2/ route → 404 JSON:API with id and code', async () => {
    for (const headers of [{}, t.mgmt]) {
      const res = await t.app.inject({ method: 'GET', url: '/2/nope', headers });
      expect(res.statusCode).toBe(404);
      expect(String(res.headers['content-type'])).toMatch(/^application\/vnd\.api\+json\b/);
      expect(dialectOf(res)).toBe('jsonapi');
      const [e] = json(res).errors;
      expect(e.code).toBe('not-found');
      expect(e.id).toBe(expectRequestId(res));
      expectNoLeak(res);
    }
  });

  it('401 on /1/ is legacy JSON; 401 on /2/ is JSON:API', async () => {
    const v1 = await t.app.inject({ method: 'GET', url: '/1/datasets' });
    expect(v1.statusCode).toBe(401);
    expect(dialectOf(v1)).toBe('legacy');
    expectContract('/1/datasets', 'get', v1);

    const v2 = await t.app.inject({ method: 'GET', url: '/2/auth', headers: { 'x-honeycomb-team': t.init.keys.configuration } });
    expect(v2.statusCode).toBe(401);
    expect(dialectOf(v2)).toBe('jsonapi');
    expectContract('/2/auth', 'get', v2);
  });

  it('404 of a missing dataset on /1/ is the problem "Dataset not found"; of other missing resources, legacy {error}', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/1/datasets/missing', headers: t.config });
    expect(res.statusCode).toBe(404);
    expect(dialectOf(res)).toBe('problem');
    expect(json(res)).toMatchObject({ status: 404, type: `${PROBLEM_BASE}/not-found`, title: 'The requested resource cannot be found.', error: 'Dataset not found', detail: 'Dataset not found' });
    expectContract('/1/datasets/{datasetSlug}', 'get', res);
    const board = await t.app.inject({ method: 'GET', url: '/1/boards/missing', headers: t.config });
    expect(board.statusCode).toBe(404);
    expect(dialectOf(board)).toBe('legacy');
    expect(json(board)).toEqual({ error: 'board not found' });
  });

  it('403 on /1/ is legacy JSON', async () => {
    const { addKey, initialTenancy } = await import('./tenancy-fixtures.js');
    const { team, environment } = await initialTenancy(t);
    const k = await addKey(t, team, environment, { permissions: {} });
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: k.headers, payload: { name: 'x' } });
    expect(res.statusCode).toBe(403);
    expect(dialectOf(res)).toBe('legacy');
    expectContract('/1/datasets', 'post', res);
  });

  it('422 on /1/ is a validation-failed problem with title, type_detail and instance = X-Request-Id', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 7 } });
    expect(res.statusCode).toBe(422);
    expect(dialectOf(res)).toBe('problem');
    expectContract('/1/datasets', 'post', res);
    expectSchema('ValidationError', json(res));
    const body = json(res);
    expect(body.type).toBe(`${PROBLEM_BASE}/validation-failed`);
    expect(body.title).toBe('The provided input is invalid.');
    expect(body.type_detail).toEqual([{ field: 'name', code: 'incorrect_type', description: 'must be string' }]);
    expect(body.error).toBe('The provided input is invalid.');
    expect(body.detail).toBe('name: must be string');
    expect(body.instance).toBe(expectRequestId(res));
    expectNoLeak(res);
  });

  it('400 for malformed JSON is an unparseable problem, and leaks nothing', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{"name":',
    });
    expect(res.statusCode).toBe(400);
    expect(dialectOf(res)).toBe('problem');
    const body = json(res);
    expect(body.type).toBe(`${PROBLEM_BASE}/unparseable`);
    expect(body.title).toBe('The request body could not be parsed.');
    expect(body.instance).toBe(expectRequestId(res));
    expectNoLeak(res);
  });

  it('409 on /1/ is a conflict problem', async () => {
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'locked' } });
    await t.app.inject({
      method: 'PUT', url: '/1/datasets/locked', headers: t.config,
      payload: { description: '', expand_json_depth: 0, settings: { delete_protected: true } },
    });
    const res = await t.app.inject({ method: 'DELETE', url: '/1/datasets/locked', headers: t.config });
    expect(res.statusCode).toBe(409);
    expect(dialectOf(res)).toBe('problem');
    expect(json(res).type).toBe(`${PROBLEM_BASE}/conflict`);
    expect(json(res).instance).toBe(expectRequestId(res));
    expectContract('/1/datasets/{datasetSlug}', 'delete', res);
  });

  it('/2/ validation errors are JSON:API with the field as source.pointer', async () => {
    const res = await t.app.inject({
      method: 'POST', url: `/2/teams/${t.init.team.slug}/environments`, headers: t.mgmt,
      payload: JSON.stringify({ data: { type: 'environments', attributes: { name: 5 } } }),
    });
    expect(res.statusCode).toBe(422);
    expect(dialectOf(res)).toBe('jsonapi');
    const e = json(res).errors.find((x: { source?: { pointer?: string } }) => x.source?.pointer?.endsWith('/name'));
    expect(e, res.body).toBeDefined();
    expect(e.id.startsWith(expectRequestId(res))).toBe(true);
  });

  it('/2/ with a wrong Content-Type → 415 JSON:API', async () => {
    const res = await t.app.inject({
      method: 'POST', url: `/2/teams/${t.init.team.slug}/environments`,
      headers: { authorization: t.mgmt.authorization, 'content-type': 'application/json' },
      payload: JSON.stringify({ data: { type: 'environments', attributes: { name: 'x' } } }),
    });
    expect(res.statusCode).toBe(415);
    expect(dialectOf(res)).toBe('jsonapi');
  });

  it('every response carries a fresh X-Request-Id, successes included', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const ok = await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config });
      ids.add(expectRequestId(ok));
      const bad = await t.app.inject({ method: 'GET', url: '/1/auth' });
      ids.add(expectRequestId(bad));
    }
    expect(ids.size).toBe(6);
  });

  it('ignores a client-sent X-Request-Id (ids are the server\'s own)', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: { ...t.config, 'x-request-id': 'client-chosen' }, payload: { name: '' },
    });
    expect(res.statusCode).toBe(422);
    const id = expectRequestId(res);
    expect(id).not.toBe('client-chosen');
    expect(json(res).instance).toBe(id);
  });
});

describe('internal errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => {
    // The store is closed by the test itself.
    await t.app.close();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('a failing store gives 500 {"error":"something went wrong!"} on /1/ and JSON:API on /2/, with nothing internal', async () => {
    // Resolve the keys once while the store works, then break it.
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config })).statusCode).toBe(200);
    await t.store.close();

    const v1 = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(v1.statusCode).toBe(500);
    expect(dialectOf(v1)).toBe('legacy');
    expect(json(v1)).toEqual({ error: 'something went wrong!' });
    expectRequestId(v1);
    expectNoLeak(v1);
    expectContract('/1/datasets', 'get', v1);

    const v2 = await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt });
    expect(v2.statusCode).toBe(500);
    expect(dialectOf(v2)).toBe('jsonapi');
    expect(json(v2).errors[0].detail).toBe('something went wrong!');
    expectNoLeak(v2);
  });
});
