// /2/ errors as Honeycomb's own Go client (the Terraform provider's) reads them: the media type
// exactly `application/vnd.api+json` on every status, and a bad management key answered with
// `unauthenticated/invalid-key` from the Authorization header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { expectJsonApiError, managementKey } from './v2-helpers.js';

describe('/2/ error answers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { apiRateLimit: { limit: 40, windowSeconds: 60 } } });
  });
  afterAll(() => t.close());
  const envs = () => `/2/teams/${t.init.team.slug}/environments`;

  it.each([
    ['no Authorization header', undefined],
    ['not a bearer token', 'Basic abc'],
    ['a malformed token', 'Bearer nocolon'],
    ['an unknown key', 'Bearer hcxmk_01234567890123456789012345:0123456789abcdef0123456789abcdef'],
  ])('401 for %s: invalid API key, unauthenticated/invalid-key, source header Authorization', async (_label, authorization) => {
    const headers: Record<string, string> = { 'content-type': 'application/vnd.api+json' };
    if (authorization) headers.authorization = authorization;
    for (const url of ['/2/auth', envs()]) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.headers['content-type']).toBe('application/vnd.api+json');
      const [e] = expectJsonApiError(res, 401);
      expect(e).toEqual({
        id: expect.any(String),
        status: '401',
        code: 'unauthenticated/invalid-key',
        title: 'invalid API key',
        detail: 'invalid API key',
        source: { header: 'Authorization' },
      });
    }
  });

  it('a disabled key is also an invalid API key, with the reason in detail', async () => {
    const k = await managementKey(t, ['environments:read']);
    await t.store.updateApiKey(k.key.id, { disabled: true });
    const [e] = expectJsonApiError(await t.app.inject({ method: 'GET', url: envs(), headers: k.headers }), 401);
    expect(e.code).toBe('unauthenticated/invalid-key');
    expect(e.detail).toMatch(/^invalid API key: .*disabled/);
  });

  it('403, 404, 409, 415, 422 and 429 all answer exactly application/vnd.api+json', async () => {
    const readOnly = await managementKey(t, ['environments:read']);
    const cases: Array<[number, Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>]> = [
      [403, t.app.inject({ method: 'POST', url: envs(), headers: readOnly.headers, payload: { data: { type: 'environments', attributes: { name: 'x' } } } })],
      [404, t.app.inject({ method: 'GET', url: `${envs()}/hcxen_nope`, headers: t.mgmt })],
      [404, t.app.inject({ method: 'GET', url: '/2/teams/other-team/environments', headers: t.mgmt })],
      [415, t.app.inject({ method: 'POST', url: envs(), headers: { ...t.mgmt, 'content-type': 'application/json' }, payload: '{}' })],
      [422, t.app.inject({ method: 'POST', url: envs(), headers: t.mgmt, payload: { data: { type: 'environments', attributes: { name: 5 } } } })],
      [400, t.app.inject({ method: 'POST', url: envs(), headers: t.mgmt, payload: '{"data":' })],
    ];
    const dup = { data: { type: 'environments', attributes: { name: 'Twice' } } };
    expect((await t.app.inject({ method: 'POST', url: envs(), headers: t.mgmt, payload: dup })).statusCode).toBe(201);
    cases.push([409, t.app.inject({ method: 'POST', url: envs(), headers: t.mgmt, payload: dup })]);
    for (const [status, pending] of cases) {
      const res = await pending;
      expect(res.headers['content-type'], `${status}: ${res.body}`).toBe('application/vnd.api+json');
      expectJsonApiError(res, status);
    }
    // Spend the rest of the key's budget: the 429 is JSON:API too, with Retry-After.
    let last;
    for (let i = 0; i < 60; i++) {
      last = await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt });
      if (last.statusCode === 429) break;
    }
    expect(last!.headers['content-type']).toBe('application/vnd.api+json');
    expect(expectJsonApiError(last!, 429)[0].code).toBe('rate-limited/may-retry');
    expect(last!.headers['retry-after']).toBeDefined();
  });
});
