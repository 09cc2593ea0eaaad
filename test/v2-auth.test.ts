// GET /2/auth and the bearer (management key) authentication of every /2/ route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { bearer, expectJsonApi, expectJsonApiError, initialTeam, managementKey, secondTeam } from './v2-helpers.js';

describe('GET /2/auth', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  it('describes the management key and its team, as the contract says', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt });
    const body = expectJsonApi(res, 200);
    expectContract('/2/auth', 'get', res);

    const team = await initialTeam(t);
    expect(body.data.id).toBe(t.init.keys.management.id);
    expect(body.data.id).toMatch(/^hcxmk_[a-zA-Z0-9]{26}$/);
    expect(body.data.type).toBe('api-keys');
    const a = body.data.attributes;
    expect(a.key_type).toBe('management');
    expect(a.name).toBe('initial management key');
    expect(a.disabled).toBe(false);
    expect([...a.scopes].sort()).toEqual(['api-keys:read', 'api-keys:write', 'environments:read', 'environments:write']);
    for (const ts of [a.timestamps.created, a.timestamps.updated]) {
      expect(typeof ts).toBe('string');
      expect(Number.isNaN(Date.parse(ts))).toBe(false);
    }
    expect(body.data.relationships).toEqual({ team: { data: { id: team.id, type: 'teams' } } });
    expect(body.included).toEqual([{ id: team.id, type: 'teams', attributes: { name: 'My Team', slug: 'my-team' } }]);
    // Never a secret in the answer.
    expect(res.body).not.toContain(t.init.keys.management.secret);
  });

  it('reports exactly the scopes of a narrower key', async () => {
    const k = await managementKey(t, ['environments:read']);
    const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: k.headers });
    const body = expectJsonApi(res, 200);
    expectContract('/2/auth', 'get', res);
    expect(body.data.id).toBe(k.key.id);
    expect(body.data.attributes.scopes).toEqual(['environments:read']);
  });

  it('works without a Content-Type header (a GET has no body)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: { authorization: t.mgmt.authorization } });
    expect(res.statusCode).toBe(200);
  });

  it('answers for the key of a second team with that team', async () => {
    const other = await secondTeam(t, 'Second Squad');
    const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: other.mgmt.headers });
    const body = expectJsonApi(res, 200);
    expect(body.data.id).toBe(other.mgmt.key.id);
    expect(body.data.relationships.team.data.id).toBe(other.team.id);
    expect(body.included[0].attributes).toEqual({ name: 'Second Squad', slug: 'second-squad' });
  });
});

describe('bearer authentication on /2/', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  function expect401(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
    expectJsonApiError(res, 401);
    expectContract('/2/auth', 'get', res);
  }

  it('rejects a request without an Authorization header', async () => {
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth' }));
  });

  it.each([
    ['empty', ''],
    ['no scheme', 'hcxmk_abc:def'],
    ['Basic scheme', 'Basic aGN4bWtfYWJjOmRlZg=='],
    ['Bearer without a colon', 'Bearer hcxmk_abcdefghijklmnopqrstuvwxyz'],
    ['Bearer with an empty secret', 'Bearer hcxmk_abcdefghijklmnopqrstuvwxyz:'],
    ['Bearer with an empty id', 'Bearer :secret'],
    ['Bearer and nothing else', 'Bearer'],
    ['Bearer with spaces inside', 'Bearer a b:c d'],
  ])('rejects a garbled Authorization header (%s)', async (_name, value) => {
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: { authorization: value } }));
  });

  it('rejects an unknown key id', async () => {
    const res = await t.app.inject({
      method: 'GET', url: '/2/auth', headers: bearer('hcxmk_0123456789abcdefghijklmnop', t.init.keys.management.secret),
    });
    expect401(res);
  });

  it('rejects the right id with a wrong secret', async () => {
    const secret = t.init.keys.management.secret;
    const wrong = (secret[0] === 'a' ? 'b' : 'a') + secret.slice(1);
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: bearer(t.init.keys.management.id, wrong) }));
    // A prefix or an extension of the secret is not the secret either.
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: bearer(t.init.keys.management.id, secret.slice(0, -1)) }));
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: bearer(t.init.keys.management.id, secret + 'x') }));
  });

  it('rejects the secret of another management key', async () => {
    const other = await managementKey(t, ['environments:read']);
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: bearer(t.init.keys.management.id, other.secret) }));
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: bearer(other.key.id, t.init.keys.management.secret) }));
  });

  it('rejects configuration and ingest keys, in X-Honeycomb-Team or as a bearer', async () => {
    const config = t.init.keys.configuration;
    const ingest = t.init.keys.ingest;
    const cases: Record<string, string>[] = [
      { 'x-honeycomb-team': config },
      { 'x-service-team': config },
      { 'x-honeycomb-team': ingest },
      { authorization: `Bearer ${config}` },
      { authorization: `Bearer ${ingest.slice(0, 32)}:${ingest.slice(32)}` },
    ];
    for (const headers of cases) {
      expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers }));
      const list = await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments`, headers });
      expectJsonApiError(list, 401);
      const keys = await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/api-keys`, headers });
      expectJsonApiError(keys, 401);
    }
  });

  it('a configuration key without a bearer cannot write either', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/2/teams/${t.init.team.slug}/environments`,
      headers: { 'x-honeycomb-team': t.init.keys.configuration, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'environments', attributes: { name: 'sneaky' } } },
    });
    expectJsonApiError(res, 401);
    const team = await initialTeam(t);
    expect(await t.store.getEnvironmentBySlug(team.id, 'sneaky')).toBeUndefined();
  });

  it('a disabled management key is rejected at once, and works again when re-enabled', async () => {
    const k = await managementKey(t, ['environments:read', 'environments:write']);
    expect((await t.app.inject({ method: 'GET', url: '/2/auth', headers: k.headers })).statusCode).toBe(200);

    await t.store.updateApiKey(k.key.id, { disabled: true });
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: k.headers }));
    expectJsonApiError(
      await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments`, headers: k.headers }),
      401,
    );

    await t.store.updateApiKey(k.key.id, { disabled: false });
    expect((await t.app.inject({ method: 'GET', url: '/2/auth', headers: k.headers })).statusCode).toBe(200);
  });

  it('a deleted management key is rejected', async () => {
    const k = await managementKey(t, ['environments:read']);
    await t.store.deleteApiKey(k.key.id);
    expect401(await t.app.inject({ method: 'GET', url: '/2/auth', headers: k.headers }));
  });

  it('the 401 body does not reveal whether the key id exists', async () => {
    const unknown = await t.app.inject({
      method: 'GET', url: '/2/auth', headers: bearer('hcxmk_0123456789abcdefghijklmnop', 'x'.repeat(32)),
    });
    const wrongSecret = await t.app.inject({
      method: 'GET', url: '/2/auth', headers: bearer(t.init.keys.management.id, 'x'.repeat(32)),
    });
    expect(json(unknown).errors[0].detail).toBe(json(wrongSecret).errors[0].detail);
    expect(json(unknown).errors[0].code).toBe(json(wrongSecret).errors[0].code);
  });

  it('an unknown /2/ route answers 404 in JSON:API', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/2/teams/my-team/nothing-here', headers: t.mgmt });
    expectJsonApiError(res, 404);
  });
});
