// A trailing slash routes to the same handler (`POST /1/boards/` is `POST /1/boards`), as
// Honeycomb's clients send both (the Terraform provider's client posts to `/1/boards/`): same
// authentication and permission rules, same rate-limit bucket, and unknown routes still 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectLegacy } from './problems.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';

describe('trailing slashes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  it('every documented v1 and v2 route answers the same with a trailing slash', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const team = t.init.team.slug;
    let checked = 0;
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      if (!/^\/[12]\//.test(path)) continue;
      for (const m of Object.keys(ops)) {
        const method = m.toUpperCase() as 'GET';
        // Ids that name nothing, so that both calls find the same (nothing) and change nothing.
        const url = path.replace('{teamSlug}', team).replace(/\{\w+\}/g, 'abc123');
        const v2 = path.startsWith('/2/');
        const headers = v2 ? t.mgmt : { ...t.config, 'content-type': 'application/json' };
        // An invalid body: each route refuses it the same way whichever form it is called by.
        const payload = method === 'GET' || method === 'DELETE' ? undefined : v2 ? '{"data":{}}' : '{}';
        const plain = await t.app.inject({ method, url, headers, payload });
        const slashed = await t.app.inject({ method, url: `${url}/`, headers, payload });
        expect(slashed.statusCode, `${method} ${url}/: ${slashed.body}`).toBe(plain.statusCode);
        expect(slashed.body, `${method} ${url}/`).not.toMatch(/no such route/);
        expect(slashed.headers['content-type']).toBe(plain.headers['content-type']);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(80);
  });

  it('POST /1/boards/ creates a board, GET /1/boards/ lists it, GET /1/boards/{id}/ reads it', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/1/boards/', headers: t.config, payload: { name: 'Slashed', type: 'flexible' } });
    expect(created.statusCode, created.body).toBe(201);
    const id = json(created).id;
    expect(json(await t.app.inject({ method: 'GET', url: '/1/boards/', headers: t.config })).map((b: { id: string }) => b.id)).toContain(id);
    expect(json(await t.app.inject({ method: 'GET', url: `/1/boards/${id}/`, headers: t.config })).name).toBe('Slashed');
    expect(json(await t.app.inject({ method: 'GET', url: `/1/boards/${id}/?x=1`, headers: t.config })).name).toBe('Slashed');
  });

  it('v2 routes too: GET /2/teams/{team}/environments/', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments/`, headers: t.mgmt });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.api+json');
    expect(json(res).data.length).toBeGreaterThan(0);
  });

  it('keeps each route’s authentication and permissions', async () => {
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/boards/' }), 401);
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/boards/', headers: t.ingest }), 401);
    const { team, environment } = await initialTenancy(t);
    const limited = await addKey(t, team, environment, { permissions: { manage_boards: false } });
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/boards/', headers: limited.headers }), 403);
    // Ingest routes keep taking ingest keys, and /1/auth both kinds.
    const ingest = await t.app.inject({ method: 'POST', url: '/1/events/slashed/', headers: { ...t.ingest, 'content-type': 'application/json' }, payload: '{"a":1}' });
    expect(ingest.statusCode, ingest.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/1/auth/', headers: t.ingest })).statusCode).toBe(200);
    const v2 = await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments/` });
    expect(v2.statusCode).toBe(401);
    expect(json(v2).errors[0].code).toBe('unauthenticated/invalid-key');
  });

  it('unknown routes still answer 404 in their prefix’s dialect, with or without the slash', async () => {
    for (const url of ['/1/nope', '/1/nope/', '/1/boards/x/y/']) {
      expectLegacy(await t.app.inject({ method: 'GET', url, headers: t.config }), 404);
    }
    const v2 = await t.app.inject({ method: 'GET', url: '/2/nope/', headers: t.mgmt });
    expect(v2.statusCode).toBe(404);
    expect(v2.headers['content-type']).toBe('application/vnd.api+json');
  });
});

describe('trailing slashes and rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { apiRateLimit: { limit: 3, windowSeconds: 60 } } });
  });
  afterAll(() => t.close());

  it('both forms draw on the one bucket of the key', async () => {
    const statuses = [];
    for (const url of ['/1/boards', '/1/boards/', '/1/boards', '/1/boards/']) {
      const res = await t.app.inject({ method: 'GET', url, headers: t.config });
      statuses.push(res.statusCode);
      if (res.statusCode === 200) expect(res.headers['ratelimit']).toMatch(/^limit=3, remaining=\d, reset=\d+$/);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
