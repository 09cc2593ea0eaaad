// GET /1/auth and the X-Honeycomb-Team / X-Service-Team key rules shared by every /1/ route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';
import type { Environment, Team } from '../src/stores/config/types.js';

const UNKNOWN = 'unknown API key - check your credentials';
const CONFIG_ACCESS_KEYS = [
  'boards', 'columns', 'createDatasets', 'events', 'markers', 'privateBoards', 'queries', 'recipients', 'slos', 'triggers',
];

function expectLegacy401(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  expect(res.statusCode).toBe(401);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
  const body = json(res);
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  expectContract('/1/auth', 'get', res);
  return body.error as string;
}

describe('GET /1/auth', () => {
  let t: TestApp;
  let team: Team;
  let environment: Environment;
  beforeAll(async () => {
    t = await makeApp();
    ({ team, environment } = await initialTenancy(t));
  });
  afterAll(() => t.close());

  const auth = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/1/auth', headers });

  it('describes the initial configuration key: every access flag, its team and environment', async () => {
    const res = await auth(t.config);
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expect(body.type).toBe('configuration');
    expect(body.id).toMatch(/^hcxlk_[a-z0-9]{26}$/);
    expect(Object.keys(body.api_key_access).sort()).toEqual(CONFIG_ACCESS_KEYS);
    for (const k of CONFIG_ACCESS_KEYS) expect(body.api_key_access[k]).toBe(true);
    expect(body.environment).toEqual({ name: 'Production', slug: 'production' });
    expect(body.team).toEqual({ name: 'My Team', slug: 'my-team' });
    expect(body).not.toHaveProperty('time_to_live');
  });

  it('reports exactly the permissions a configuration key holds', async () => {
    const k = await addKey(t, team, environment, { permissions: { create_datasets: true, manage_markers: true } });
    const res = await auth(k.headers);
    expect(res.statusCode).toBe(200);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expect(body.id).toBe(k.key.id);
    expect(body.api_key_access).toEqual({
      events: false, markers: true, triggers: false, boards: false, queries: false,
      columns: false, createDatasets: true, slos: false, recipients: false, privateBoards: false,
    });
  });

  it('describes an ingest key with only createDatasets and no time_to_live when none is set', async () => {
    const res = await auth(t.ingest);
    expect(res.statusCode).toBe(200);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expect(body.type).toBe('ingest');
    expect(body.id).toMatch(/^hcxik_[a-z0-9]{26}$/);
    expect(t.init.keys.ingest.startsWith(body.id)).toBe(true);
    expect(body.api_key_access).toEqual({ createDatasets: true });
    expect(body).not.toHaveProperty('time_to_live');
    expect(body.environment).toEqual({ name: 'Production', slug: 'production' });
    expect(body.team).toEqual({ name: 'My Team', slug: 'my-team' });
  });

  it('shows an ingest key\'s time_to_live when set, and createDatasets false when not granted', async () => {
    const ttl = new Date(t.clock.ms + 3600_000).toISOString();
    const k = await addKey(t, team, environment, { keyType: 'ingest', permissions: {}, timeToLive: ttl });
    const res = await auth(k.headers);
    expect(res.statusCode).toBe(200);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expect(body.api_key_access).toEqual({ createDatasets: false });
    expect(body.time_to_live).toBe(ttl);
    expect(Number.isNaN(Date.parse(body.time_to_live))).toBe(false);
  });

  it('accepts the key in X-Service-Team as well', async () => {
    const viaAlias = await auth({ 'x-service-team': t.init.keys.configuration });
    expect(viaAlias.statusCode).toBe(200);
    expectContract('/1/auth', 'get', viaAlias);
    const viaTeam = await auth(t.config);
    expect(json(viaAlias)).toEqual(json(viaTeam));

    const ingestAlias = await auth({ 'x-service-team': t.init.keys.ingest });
    expect(ingestAlias.statusCode).toBe(200);
    expect(json(ingestAlias).type).toBe('ingest');
  });

  it('401s without a key', async () => {
    expect(expectLegacy401(await auth({}))).toBe(UNKNOWN);
  });

  it('401s for an empty header value', async () => {
    expect(expectLegacy401(await auth({ 'x-honeycomb-team': '' }))).toBe(UNKNOWN);
  });

  it('401s for unknown keys of every shape', async () => {
    const tokens = [
      'nope',
      'a'.repeat(22), // configuration-key length, no such key
      `hcxik_${'a'.repeat(26)}${'b'.repeat(32)}`, // ingest-key shape, no such key
      t.init.keys.configuration.slice(0, 21) + (t.init.keys.configuration.endsWith('x') ? 'y' : 'x'), // one char off
      t.init.keys.ingest.slice(0, -1) + (t.init.keys.ingest.endsWith('x') ? 'y' : 'x'), // right id, wrong secret
      t.init.keys.ingest.slice(0, 32), // the ingest key id alone
    ];
    for (const token of tokens) {
      expect(expectLegacy401(await auth({ 'x-honeycomb-team': token }))).toBe(UNKNOWN);
    }
  });

  it('401s for a 32-character (Classic-looking) key', async () => {
    expect(expectLegacy401(await auth({ 'x-honeycomb-team': 'abcdef0123456789abcdef0123456789' }))).toBe(UNKNOWN);
  });

  it('401s for a disabled configuration or ingest key', async () => {
    const config = await addKey(t, team, environment, { disabled: true });
    expectLegacy401(await auth(config.headers));
    const ingest = await addKey(t, team, environment, { keyType: 'ingest', disabled: true });
    expectLegacy401(await auth(ingest.headers));
  });

  it('401s for an ingest key past its time_to_live, by the app clock', async () => {
    const past = await addKey(t, team, environment, {
      keyType: 'ingest',
      timeToLive: new Date(t.clock.ms - 1000).toISOString(),
    });
    expectLegacy401(await auth(past.headers));

    const soon = await addKey(t, team, environment, {
      keyType: 'ingest',
      timeToLive: new Date(t.clock.ms + 60_000).toISOString(),
    });
    expect((await auth(soon.headers)).statusCode).toBe(200);
    t.clock.advance(61);
    expectLegacy401(await auth(soon.headers));
  });

  it('401s for a management key on /1/, whether in the team header or as a bearer token', async () => {
    const { id, secret } = t.init.keys.management;
    expectLegacy401(await auth({ 'x-honeycomb-team': `${id}:${secret}` }));
    expectLegacy401(await auth({ 'x-honeycomb-team': `${id}${secret}` }));
    expectLegacy401(await auth({ 'x-honeycomb-team': secret }));
    expectLegacy401(await auth({ authorization: `Bearer ${id}:${secret}` }));
  });

  it('401s for an ingest key on configuration routes', async () => {
    for (const [method, url] of [
      ['GET', '/1/datasets'],
      ['POST', '/1/datasets'],
      ['GET', '/1/datasets/anything'],
      ['GET', '/1/dataset_definitions/anything'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: t.ingest, payload: method === 'POST' ? { name: 'x' } : undefined });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
      expect(Object.keys(json(res))).toEqual(['error']);
    }
    const list = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.ingest });
    expectContract('/1/datasets', 'get', list);
    // Nothing was created by the refused POST.
    const after = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(json(after)).toEqual([]);
  });

  it('401s on a configuration route for missing, unknown and management keys', async () => {
    const { id, secret } = t.init.keys.management;
    for (const headers of [{}, { 'x-honeycomb-team': 'nope' }, { authorization: `Bearer ${id}:${secret}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/1/datasets', headers });
      expect(res.statusCode).toBe(401);
      expect(json(res)).toEqual({ error: UNKNOWN });
      expectContract('/1/datasets', 'get', res);
    }
  });

  it('a key whose environment was deleted no longer authenticates', async () => {
    const { createEnvironment } = await import('../src/domain/environments.js');
    const env = await createEnvironment(t.store, team, { name: 'Short Lived' });
    const k = await addKey(t, team, env);
    expect((await auth(k.headers)).statusCode).toBe(200);
    await t.store.deleteEnvironment(team.id, env.id);
    expectLegacy401(await auth(k.headers));
  });
});
