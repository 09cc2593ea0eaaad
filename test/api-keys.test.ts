// /2/teams/{teamSlug}/api-keys: ingest and configuration keys of the team's environments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { createEnvironment } from '../src/domain/environments.js';
import {
  expectJsonApi, expectJsonApiError, initialEnvironment, initialTeam, managementKey, secondTeam, walkPages,
} from './v2-helpers.js';

const LIST = '/2/teams/{teamSlug}/api-keys';
const ONE = '/2/teams/{teamSlug}/api-keys/{ID}';
const CONFIG_PERMISSIONS = [
  'create_datasets', 'send_events', 'manage_markers', 'manage_triggers', 'manage_boards', 'run_queries',
  'manage_columns', 'manage_slos', 'manage_recipients', 'manage_privateBoards', 'read_service_maps', 'visible_team_members',
];
const V1_ACCESS: Record<string, string> = {
  events: 'send_events', markers: 'manage_markers', triggers: 'manage_triggers', boards: 'manage_boards',
  queries: 'run_queries', columns: 'manage_columns', createDatasets: 'create_datasets', slos: 'manage_slos',
  recipients: 'manage_recipients', privateBoards: 'manage_privateBoards',
};

const envRel = (id: string) => ({ environment: { data: { id, type: 'environments' } } });
const createBody = (attributes: Record<string, unknown>, envId: string) => ({
  data: { type: 'api-keys', attributes, relationships: envRel(envId) },
});
const patchBody = (id: string, attributes: Record<string, unknown>, type = 'api-keys') => ({ data: { id, type, attributes } });

function api(t: TestApp, headers = t.mgmt, teamSlug = t.init.team.slug) {
  const base = `/2/teams/${teamSlug}/api-keys`;
  return {
    base,
    list: (query = '') => t.app.inject({ method: 'GET', url: `${base}${query}`, headers }),
    createRaw: (body: unknown) => t.app.inject({ method: 'POST', url: base, headers, payload: body as object }),
    create: (attributes: Record<string, unknown>, envId: string) =>
      t.app.inject({ method: 'POST', url: base, headers, payload: createBody(attributes, envId) }),
    get: (id: string) => t.app.inject({ method: 'GET', url: `${base}/${id}`, headers }),
    patch: (id: string, body: unknown) => t.app.inject({ method: 'PATCH', url: `${base}/${id}`, headers, payload: body as object }),
    del: (id: string) => t.app.inject({ method: 'DELETE', url: `${base}/${id}`, headers: { authorization: headers.authorization } }),
  };
}

/** Creates a key and returns the resource object of the 201 (with its secret). */
async function created(t: TestApp, attributes: Record<string, unknown>, envId?: string) {
  const env = envId ?? (await initialEnvironment(t)).id;
  const res = await api(t).create(attributes, env);
  const body = expectJsonApi(res, 201);
  expectContract(LIST, 'post', res);
  return body.data;
}

const tokenOf = (k: any) => (k.attributes.key_type === 'ingest' ? k.id + k.attributes.secret : k.attributes.secret);
const v1auth = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/1/auth', headers: { 'x-honeycomb-team': token } });

describe('api keys: create', () => {
  let t: TestApp;
  let k: ReturnType<typeof api>;
  let envId: string;
  beforeAll(async () => {
    t = await makeApp();
    k = api(t);
    envId = (await initialEnvironment(t)).id;
  });
  afterAll(() => t.close());

  it('creates an ingest key whose id + secret works on /1/auth', async () => {
    const res = await k.create({ key_type: 'ingest', name: 'collector', permissions: { create_datasets: true } }, envId);
    const body = expectJsonApi(res, 201);
    expectContract(LIST, 'post', res);
    const d = body.data;
    expect(d.id).toMatch(/^hcxik_[a-zA-Z0-9]{26}$/);
    expect(d.type).toBe('api-keys');
    expect(d.attributes.key_type).toBe('ingest');
    expect(d.attributes.name).toBe('collector');
    expect(d.attributes.disabled).toBe(false);
    expect(d.attributes.permissions).toEqual({ create_datasets: true });
    expect(d.attributes).not.toHaveProperty('time_to_live');
    expect(typeof d.attributes.secret).toBe('string');
    expect(Number.isNaN(Date.parse(d.attributes.timestamps.created))).toBe(false);
    expect(Number.isNaN(Date.parse(d.attributes.timestamps.updated))).toBe(false);
    expect(d.relationships.environment).toEqual({ data: { id: envId, type: 'environments' } });
    expect(d.links).toEqual({ self: `/2/teams/my-team/api-keys/${d.id}` });

    const token = d.id + d.attributes.secret;
    expect(token).toHaveLength(64);
    expect(token).toMatch(/^hcxik_[a-zA-Z0-9]{58}$/);
    const auth = await v1auth(t, token);
    expect(auth.statusCode).toBe(200);
    expectContract('/1/auth', 'get', auth);
    expect(json(auth)).toEqual({
      id: d.id,
      type: 'ingest',
      api_key_access: { createDatasets: true },
      environment: { name: 'Production', slug: 'production' },
      team: { name: 'My Team', slug: 'my-team' },
    });
    // The secret alone, or the id alone, is not a credential.
    expect((await v1auth(t, d.attributes.secret)).statusCode).toBe(401);
    expect((await v1auth(t, d.id)).statusCode).toBe(401);
  });

  it('an ingest key without permissions has create_datasets false', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'plain ingest' });
    expect(d.attributes.permissions).toEqual({ create_datasets: false });
    expect(json(await v1auth(t, tokenOf(d))).api_key_access).toEqual({ createDatasets: false });
  });

  it('creates a configuration key whose secret (22 alphanumerics) works with exactly its permissions', async () => {
    const res = await k.create(
      { key_type: 'configuration', name: 'terraform', permissions: { send_events: true, manage_boards: true, read_service_maps: true } },
      envId,
    );
    const body = expectJsonApi(res, 201);
    expectContract(LIST, 'post', res);
    const d = body.data;
    expect(d.id).toMatch(/^hcxlk_[a-zA-Z0-9]{26}$/);
    expect(d.attributes.key_type).toBe('configuration');
    expect(d.attributes.secret).toMatch(/^[a-zA-Z0-9]{22}$/);
    const expected = Object.fromEntries(CONFIG_PERMISSIONS.map((p) => [p, ['send_events', 'manage_boards', 'read_service_maps'].includes(p)]));
    expect(d.attributes.permissions).toEqual(expected);

    const auth = await v1auth(t, d.attributes.secret);
    expect(auth.statusCode).toBe(200);
    expectContract('/1/auth', 'get', auth);
    const a = json(auth);
    expect(a.id).toBe(d.id);
    expect(a.type).toBe('configuration');
    expect(a.api_key_access).toEqual(Object.fromEntries(Object.entries(V1_ACCESS).map(([v1, v2]) => [v1, expected[v2]])));
    expect(a.environment).toEqual({ name: 'Production', slug: 'production' });
  });

  it('a configuration key with every permission reports every access flag', async () => {
    const d = await created(t, {
      key_type: 'configuration', name: 'all', permissions: Object.fromEntries(CONFIG_PERMISSIONS.map((p) => [p, true])),
    });
    expect(Object.values(d.attributes.permissions).every((v) => v === true)).toBe(true);
    const access = json(await v1auth(t, tokenOf(d))).api_key_access;
    expect(Object.keys(access).sort()).toEqual(Object.keys(V1_ACCESS).sort());
    expect(Object.values(access).every((v) => v === true)).toBe(true);
  });

  it('omitted permissions default to false; the permissions are enforced', async () => {
    const d = await created(t, { key_type: 'configuration', name: 'nothing' });
    expect(d.attributes.permissions).toEqual(Object.fromEntries(CONFIG_PERMISSIONS.map((p) => [p, false])));
    const a = json(await v1auth(t, tokenOf(d)));
    expect(Object.values(a.api_key_access).every((v) => v === false)).toBe(true);
    // Without create_datasets, dataset creation is forbidden.
    const ds = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { 'x-honeycomb-team': tokenOf(d) }, payload: { name: 'nope' } });
    expect(ds.statusCode).toBe(403);
  });

  it('keys of another environment of the team belong to that environment', async () => {
    const team = await initialTeam(t);
    const staging = await createEnvironment(t.store, team, { name: 'Staging' });
    const d = await created(t, { key_type: 'configuration', name: 'staging key' }, staging.id);
    expect(d.relationships.environment.data.id).toBe(staging.id);
    expect(json(await v1auth(t, tokenOf(d))).environment).toEqual({ name: 'Staging', slug: 'staging' });
  });

  it('a key created disabled does not work until enabled', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'born disabled', disabled: true });
    expect(d.attributes.disabled).toBe(true);
    expect((await v1auth(t, tokenOf(d))).statusCode).toBe(401);
    expect((await k.patch(d.id, patchBody(d.id, { disabled: false }))).statusCode).toBe(200);
    expect((await v1auth(t, tokenOf(d))).statusCode).toBe(200);
  });

  it('every created key gets a distinct id and secret', async () => {
    const ids = new Set<string>();
    const secrets = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const d = await created(t, { key_type: i % 2 ? 'ingest' : 'configuration', name: `distinct ${i}` });
      ids.add(d.id);
      secrets.add(d.attributes.secret);
    }
    expect(ids.size).toBe(10);
    expect(secrets.size).toBe(10);
  });

  it('an unknown environment is a 404, and no key is made', async () => {
    const before = (await t.store.listApiKeys((await initialTeam(t)).id, {}, { limit: 1000 })).length;
    const res = await k.create({ key_type: 'ingest', name: 'orphan' }, 'hcxen_00000000000000000000000000');
    expectJsonApiError(res, 404);
    expectContract(LIST, 'post', res);
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 'orphan' }, 'production'), 404);
    expect((await t.store.listApiKeys((await initialTeam(t)).id, {}, { limit: 1000 })).length).toBe(before);
  });

  it('another team\'s environment is a 404', async () => {
    const other = await secondTeam(t);
    expectJsonApiError(await k.create({ key_type: 'configuration', name: 'cross team' }, other.environment.id), 404);
    expect(await t.store.listApiKeys(other.team.id, { environmentId: other.environment.id }, { limit: 100 })).toEqual([]);
  });

  it('the relationship must be present and typed environments', async () => {
    expectJsonApiError(await k.createRaw({ data: { type: 'api-keys', attributes: { key_type: 'ingest', name: 'x' } } }), 422);
    expectJsonApiError(
      await k.createRaw({
        data: { type: 'api-keys', attributes: { key_type: 'ingest', name: 'x' }, relationships: { environment: { data: { id: envId, type: 'teams' } } } },
      }),
      422,
    );
  });

  it('permission names the key type does not have are a 422', async () => {
    let errors = expectJsonApiError(
      await k.create({ key_type: 'ingest', name: 'greedy ingest', permissions: { create_datasets: true, send_events: true } }, envId),
      422,
    );
    expect(errors.some((e) => e.source?.pointer === '/data/attributes/permissions/send_events')).toBe(true);
    for (const p of ['manage_markers', 'visible_team_members']) {
      expectJsonApiError(await k.create({ key_type: 'ingest', name: 'greedy ingest', permissions: { [p]: false } }, envId), 422);
    }
    errors = expectJsonApiError(
      await k.create({ key_type: 'configuration', name: 'unknown perm', permissions: { fly: true } }, envId),
      422,
    );
    expect(errors.length).toBeGreaterThan(0);
    // The v1 names are not v2 permission names.
    expectJsonApiError(await k.create({ key_type: 'configuration', name: 'v1 names', permissions: { events: true } }, envId), 422);
    // Non-boolean values.
    errors = expectJsonApiError(
      await k.create({ key_type: 'configuration', name: 'stringly', permissions: { send_events: 'yes' } }, envId),
      422,
    );
    expect(errors.some((e) => e.source?.pointer === '/data/attributes/permissions/send_events')).toBe(true);
  });

  it('key_type must be ingest or configuration: management keys cannot be made here', async () => {
    for (const keyType of ['management', 'classic', '', undefined]) {
      const attributes: Record<string, unknown> = { name: `type ${keyType}` };
      if (keyType !== undefined) attributes.key_type = keyType;
      expectJsonApiError(await k.create(attributes, envId), 422);
    }
    const all = await t.store.listApiKeys((await initialTeam(t)).id, { keyTypes: ['management'] }, { limit: 100 });
    expect(all.map((x) => x.name)).not.toContain('type management');
  });

  it('name is required and at most 100 characters', async () => {
    expectJsonApiError(await k.create({ key_type: 'ingest' }, envId), 422);
    expectJsonApiError(await k.create({ key_type: 'ingest', name: '' }, envId), 422);
    const errors = expectJsonApiError(await k.create({ key_type: 'ingest', name: 'n'.repeat(101) }, envId), 422);
    expect(errors[0].source?.pointer).toBe('/data/attributes/name');
    expect((await created(t, { key_type: 'ingest', name: 'n'.repeat(100) })).attributes.name).toHaveLength(100);
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 42 }, envId), 422);
  });

  it('secret, id and timestamps cannot be chosen by the client', async () => {
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 'chosen', secret: 'x'.repeat(32) }, envId), 422);
    expectJsonApiError(
      await k.create({ key_type: 'ingest', name: 'chosen', timestamps: { created: '2020-01-01T00:00:00Z' } }, envId),
      422,
    );
  });

  it('time_to_live is for ingest keys only, in the future, and a date-time', async () => {
    const future = new Date(t.clock.ms + 3_600_000).toISOString();
    let errors = expectJsonApiError(await k.create({ key_type: 'configuration', name: 'ttl config', time_to_live: future }, envId), 422);
    expect(errors[0].source?.pointer).toBe('/data/attributes/time_to_live');
    errors = expectJsonApiError(
      await k.create({ key_type: 'ingest', name: 'ttl past', time_to_live: new Date(t.clock.ms - 1000).toISOString() }, envId),
      422,
    );
    expect(errors[0].source?.pointer).toBe('/data/attributes/time_to_live');
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 'ttl now', time_to_live: new Date(t.clock.ms).toISOString() }, envId), 422);
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 'ttl junk', time_to_live: 'tomorrow' }, envId), 422);
    expectJsonApiError(await k.create({ key_type: 'ingest', name: 'ttl number', time_to_live: 1893456000 }, envId), 422);
  });

  it('"in the past" is judged by the app clock', async () => {
    const t2 = await makeApp();
    try {
      t2.clock.advance(86_400);
      const env = (await initialEnvironment(t2)).id;
      // One hour from the real now is a day before the app's now.
      const res = await api(t2).create({ key_type: 'ingest', name: 'stale', time_to_live: new Date(Date.now() + 3_600_000).toISOString() }, env);
      expectJsonApiError(res, 422);
    } finally {
      await t2.close();
    }
  });

  it('an ingest key with time_to_live works until the time passes, then is a 401', async () => {
    const ttl = new Date(t.clock.ms + 3_600_000);
    const d = await created(t, { key_type: 'ingest', name: 'short lived', time_to_live: ttl.toISOString().replace(/\.\d{3}Z$/, 'Z') });
    expect(Date.parse(d.attributes.time_to_live)).toBe(Math.floor(ttl.getTime() / 1000) * 1000);

    const token = tokenOf(d);
    let auth = await v1auth(t, token);
    expect(auth.statusCode).toBe(200);
    expectContract('/1/auth', 'get', auth);
    expect(Date.parse(json(auth).time_to_live)).toBe(Date.parse(d.attributes.time_to_live));

    t.clock.advance(3_590);
    expect((await v1auth(t, token)).statusCode).toBe(200);
    t.clock.advance(20);
    auth = await v1auth(t, token);
    expect(auth.statusCode).toBe(401);

    // The key is still listed (it is not deleted), with its time_to_live.
    const got = expectJsonApi(await k.get(d.id), 200);
    expect(got.data.attributes.time_to_live).toBe(d.attributes.time_to_live);
    // Other keys are unaffected by the clock.
    expect((await v1auth(t, t.init.keys.ingest)).statusCode).toBe(200);
  });

  it('a time_to_live with an offset is stored as the same instant', async () => {
    const base = new Date(t.clock.ms + 7 * 86_400_000);
    base.setUTCMilliseconds(0);
    // The same instant written at +02:00.
    const local = new Date(base.getTime() + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');
    const d = await created(t, { key_type: 'ingest', name: 'offset ttl', time_to_live: local });
    expect(Date.parse(d.attributes.time_to_live)).toBe(base.getTime());
  });
});

describe('api keys: list and pagination', () => {
  let t: TestApp;
  let k: ReturnType<typeof api>;
  const ingestIds: string[] = [];
  const configIds: string[] = [];
  let mgmtIds: string[] = [];
  beforeAll(async () => {
    t = await makeApp();
    k = api(t);
    const team = await initialTeam(t);
    const all = await t.store.listApiKeys(team.id, {}, { limit: 100 });
    for (const key of all) {
      if (key.keyType === 'ingest') ingestIds.push(key.id);
      if (key.keyType === 'configuration') configIds.push(key.id);
    }
    for (let i = 0; i < 23; i++) {
      const d = await created(t, { key_type: i % 3 === 0 ? 'configuration' : 'ingest', name: `list key ${i}` });
      (d.attributes.key_type === 'ingest' ? ingestIds : configIds).push(d.id);
    }
    // Extra management keys, which the list must never show.
    for (let i = 0; i < 3; i++) await managementKey(t, ['api-keys:read']);
    mgmtIds = (await t.store.listApiKeys(team.id, { keyTypes: ['management'] }, { limit: 100 })).map((x) => x.id);
    expect(mgmtIds).toHaveLength(4);
  });
  afterAll(() => t.close());

  const allIds = () => [...ingestIds, ...configIds].sort();

  it('lists ingest and configuration keys, never management keys, never secrets', async () => {
    const res = await k.list('?page[size]=100');
    const body = expectJsonApi(res, 200);
    expectContract(LIST, 'get', res);
    expect(body.data.map((x: any) => x.id).sort()).toEqual(allIds());
    for (const x of body.data) {
      expect(x.type).toBe('api-keys');
      expect(['ingest', 'configuration']).toContain(x.attributes.key_type);
      expect(x.attributes).not.toHaveProperty('secret');
      expect(x.id).not.toMatch(/^hcxmk_/);
      expect(x.links.self).toBe(`/2/teams/my-team/api-keys/${x.id}`);
    }
    expect(body.links.next).toBeNull();
    expect(res.body).not.toContain(t.init.keys.configuration);
  });

  it('filter[type]=ingest and filter[type]=configuration', async () => {
    let res = await k.list('?filter[type]=ingest&page[size]=100');
    let body = expectJsonApi(res, 200);
    expectContract(LIST, 'get', res);
    expect(body.data.map((x: any) => x.id).sort()).toEqual([...ingestIds].sort());
    expect(body.data.every((x: any) => x.attributes.key_type === 'ingest')).toBe(true);

    res = await k.list('?filter[type]=configuration&page[size]=100');
    body = expectJsonApi(res, 200);
    expectContract(LIST, 'get', res);
    expect(body.data.map((x: any) => x.id).sort()).toEqual([...configIds].sort());
    expect(body.data.every((x: any) => x.attributes.key_type === 'configuration')).toBe(true);
  });

  it.each(['management', 'bogus', ''])('filter[type]=%s is a 422', async (type) => {
    const res = await k.list(`?filter[type]=${type}`);
    expectJsonApiError(res, 422);
    expectContract(LIST, 'get', res);
  });

  it('pages hold 20 keys by default', async () => {
    const body = expectJsonApi(await k.list(), 200);
    expect(body.data).toHaveLength(20);
    expect(typeof body.links.next).toBe('string');
  });

  it.each(['0', '101', 'abc', '-3'])('page[size]=%s is a 422', async (size) => {
    expectJsonApiError(await k.list(`?page[size]=${size}`), 422);
  });

  it('a garbage page[after] is a 422', async () => {
    expectJsonApiError(await k.list('?page[after]=not-a-cursor'), 422);
    expectJsonApiError(await k.list(`?page[after]=${Buffer.from('hcxik_short').toString('base64url')}`), 422);
  });

  it('walking pages of 7 by links.next sees every key exactly once', async () => {
    const pages = await walkPages(t, `${k.base}?page[size]=7`, t.mgmt);
    expect(pages.map((p) => p.data.length)).toEqual([7, 7, 7, 4]);
    const seen = pages.flatMap((p) => p.data.map((x: any) => x.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(allIds());
    expect(pages[pages.length - 1].links.next).toBeNull();
    for (const p of pages) {
      for (const x of p.data) expect(mgmtIds).not.toContain(x.id);
      expectContract(LIST, 'get', { statusCode: 200, headers: { 'content-type': 'application/vnd.api+json' }, body: JSON.stringify({ data: p.data, links: p.links }) });
    }
  });

  it('walking pages with filter[type] keeps the filter in links.next', async () => {
    for (const [type, ids] of [['ingest', ingestIds], ['configuration', configIds]] as const) {
      const pages = await walkPages(t, `${k.base}?filter[type]=${type}&page[size]=3`, t.mgmt);
      const seen = pages.flatMap((p) => p.data.map((x: any) => x.id));
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...ids].sort());
      for (const p of pages) expect(p.data.every((x: any) => x.attributes.key_type === type)).toBe(true);
      for (const p of pages.slice(0, -1)) expect(p.links.next).toContain(`filter[type]=${type}`);
      expect(pages[pages.length - 1].links.next).toBeNull();
    }
  });

  it('every page size from 1 to 26 walks to the same set of keys', async () => {
    for (let size = 1; size <= 26; size++) {
      const pages = await walkPages(t, `${k.base}?page[size]=${size}`, t.mgmt);
      const seen = pages.flatMap((p) => p.data.map((x: any) => x.id));
      expect(seen.length, `size ${size}`).toBe(25);
      expect([...seen].sort()).toEqual(allIds());
      expect(pages.every((p) => p.data.length > 0), `size ${size}: no empty pages`).toBe(true);
    }
  });
});

describe('api keys: get, update, delete', () => {
  let t: TestApp;
  let k: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await makeApp();
    k = api(t);
  });
  afterAll(() => t.close());

  it('GET one key: no secret, as the contract says', async () => {
    const d = await created(t, { key_type: 'configuration', name: 'fetch me', permissions: { manage_slos: true } });
    const res = await k.get(d.id);
    const body = expectJsonApi(res, 200);
    expectContract(ONE, 'get', res);
    const { secret, ...attributes } = d.attributes;
    expect(secret).toBeTruthy();
    expect(body.data).toEqual({ ...d, attributes });
    expect(res.body).not.toContain(secret);
  });

  it('GET of an unknown id or of a management key is a 404', async () => {
    let res = await k.get('hcxik_00000000000000000000000000');
    expectJsonApiError(res, 404);
    expectContract(ONE, 'get', res);
    res = await k.get(t.init.keys.management.id);
    expectJsonApiError(res, 404);
    // A secret is not an id.
    expectJsonApiError(await k.get(t.init.keys.configuration), 404);
  });

  it('PATCH renames and answers without the secret', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'old name' });
    const res = await k.patch(d.id, patchBody(d.id, { name: 'new name' }));
    const body = expectJsonApi(res, 200);
    expectContract(ONE, 'patch', res);
    expect(body.data.attributes.name).toBe('new name');
    expect(body.data.attributes).not.toHaveProperty('secret');
    expect(body.data.attributes.disabled).toBe(false);
    expect(body.data.attributes.permissions).toEqual(d.attributes.permissions);
    expect(expectJsonApi(await k.get(d.id), 200).data.attributes.name).toBe('new name');
    // The key still works with the same token.
    expect((await v1auth(t, tokenOf(d))).statusCode).toBe(200);
  });

  it('disabling takes effect at once; re-enabling too', async () => {
    for (const keyType of ['ingest', 'configuration']) {
      const d = await created(t, { key_type: keyType, name: `toggle ${keyType}` });
      const token = tokenOf(d);
      expect((await v1auth(t, token)).statusCode).toBe(200);

      let res = await k.patch(d.id, patchBody(d.id, { disabled: true }));
      expect(expectJsonApi(res, 200).data.attributes.disabled).toBe(true);
      expectContract(ONE, 'patch', res);
      const denied = await v1auth(t, token);
      expect(denied.statusCode).toBe(401);
      expect(json(denied)).toHaveProperty('error');

      res = await k.patch(d.id, patchBody(d.id, { disabled: false }));
      expect(expectJsonApi(res, 200).data.attributes.disabled).toBe(false);
      expect((await v1auth(t, token)).statusCode).toBe(200);
    }
  });

  it('PATCH permissions: omitted values stay as they were', async () => {
    const d = await created(t, {
      key_type: 'configuration', name: 'partial', permissions: { send_events: true, manage_boards: true, manage_slos: true },
    });
    const res = await k.patch(d.id, patchBody(d.id, { permissions: { manage_boards: false, run_queries: true } }));
    const body = expectJsonApi(res, 200);
    expectContract(ONE, 'patch', res);
    const expected = Object.fromEntries(
      CONFIG_PERMISSIONS.map((p) => [p, ['send_events', 'manage_slos', 'run_queries'].includes(p)]),
    );
    expect(body.data.attributes.permissions).toEqual(expected);
    expect(expectJsonApi(await k.get(d.id), 200).data.attributes.permissions).toEqual(expected);
    const access = json(await v1auth(t, tokenOf(d))).api_key_access;
    expect(access).toMatchObject({ events: true, boards: false, slos: true, queries: true, markers: false });

    // Name and disabled alone leave permissions alone.
    const renamed = expectJsonApi(await k.patch(d.id, patchBody(d.id, { name: 'partial 2' })), 200);
    expect(renamed.data.attributes.permissions).toEqual(expected);
    // An empty permissions object changes nothing.
    const empty = expectJsonApi(await k.patch(d.id, patchBody(d.id, { permissions: {} })), 200);
    expect(empty.data.attributes.permissions).toEqual(expected);
  });

  it('PATCH with invalid permissions is a 422 and changes nothing', async () => {
    const d = await created(t, { key_type: 'configuration', name: 'strict', permissions: { send_events: true } });
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { permissions: { fly: true } })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { permissions: { send_events: 'no' } })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { name: 'renamed too', permissions: { send_events: null } })), 422);
    const after = expectJsonApi(await k.get(d.id), 200).data.attributes;
    expect(after.name).toBe('strict');
    expect(after.permissions.send_events).toBe(true);
  });

  it('PATCH permissions on an ingest key is a 422', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'ingest perms', permissions: { create_datasets: false } });
    const res = await k.patch(d.id, patchBody(d.id, { permissions: { create_datasets: true } }));
    const errors = expectJsonApiError(res, 422);
    expectContract(ONE, 'patch', res);
    expect(errors.some((e) => e.source?.pointer?.startsWith('/data/attributes/permissions'))).toBe(true);
    expect(expectJsonApi(await k.get(d.id), 200).data.attributes.permissions).toEqual({ create_datasets: false });
  });

  it('PATCH with data.id different from the path is a 409 and changes nothing', async () => {
    const a = await created(t, { key_type: 'ingest', name: 'mismatch a' });
    const b = await created(t, { key_type: 'ingest', name: 'mismatch b' });
    const res = await k.patch(a.id, patchBody(b.id, { name: 'hijacked' }));
    expectJsonApiError(res, 409);
    expect(expectJsonApi(await k.get(a.id), 200).data.attributes.name).toBe('mismatch a');
    expect(expectJsonApi(await k.get(b.id), 200).data.attributes.name).toBe('mismatch b');
  });

  it('PATCH with a wrong type, a missing id, unknown or read-only attributes is a 422', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'patch shape' });
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { name: 'x' }, 'environments')), 422);
    expectJsonApiError(await k.patch(d.id, { data: { type: 'api-keys', attributes: { name: 'x' } } }), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { key_type: 'configuration' })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { time_to_live: new Date(t.clock.ms + 1e6).toISOString() })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { secret: 'x'.repeat(32) })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { name: '' })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { name: 'n'.repeat(101) })), 422);
    expectJsonApiError(await k.patch(d.id, patchBody(d.id, { disabled: 'true' })), 422);
    const after = expectJsonApi(await k.get(d.id), 200).data.attributes;
    expect(after.name).toBe('patch shape');
    expect(after.key_type).toBe('ingest');
    expect(after.disabled).toBe(false);
  });

  it('PATCH of an unknown key or of a management key is a 404', async () => {
    const id = 'hcxlk_00000000000000000000000000';
    expectJsonApiError(await k.patch(id, patchBody(id, { name: 'x' })), 404);
    const mid = t.init.keys.management.id;
    expectJsonApiError(await k.patch(mid, patchBody(mid, { disabled: true })), 404);
    expect((await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt })).statusCode).toBe(200);
  });

  it('DELETE: 204, then the key is a 401 and GET is a 404', async () => {
    for (const keyType of ['ingest', 'configuration']) {
      const d = await created(t, { key_type: keyType, name: `delete ${keyType}` });
      const token = tokenOf(d);
      expect((await v1auth(t, token)).statusCode).toBe(200);
      const res = await k.del(d.id);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect((await v1auth(t, token)).statusCode).toBe(401);
      expectJsonApiError(await k.get(d.id), 404);
      expectJsonApiError(await k.del(d.id), 404);
      expectJsonApiError(await k.patch(d.id, patchBody(d.id, { disabled: false })), 404);
      expect(json(await k.list('?page[size]=100')).data.map((x: any) => x.id)).not.toContain(d.id);
    }
  });

  it('DELETE of a management key through this API is a 404, and the key keeps working', async () => {
    const other = await managementKey(t, ['environments:read']);
    expectJsonApiError(await k.del(other.key.id), 404);
    expect((await t.app.inject({ method: 'GET', url: '/2/auth', headers: other.headers })).statusCode).toBe(200);
  });

  it('a wrong Content-Type on POST or PATCH is a 415', async () => {
    const env = (await initialEnvironment(t)).id;
    const res = await t.app.inject({
      method: 'POST', url: k.base, headers: { authorization: t.mgmt.authorization, 'content-type': 'application/json' },
      payload: JSON.stringify(createBody({ key_type: 'ingest', name: 'json typed' }, env)),
    });
    expectJsonApiError(res, 415);
    expectContract(LIST, 'post', res);
    const d = await created(t, { key_type: 'ingest', name: 'json patch' });
    const patch = await t.app.inject({
      method: 'PATCH', url: `${k.base}/${d.id}`, headers: { authorization: t.mgmt.authorization, 'content-type': 'application/json' },
      payload: JSON.stringify(patchBody(d.id, { name: 'changed' })),
    });
    expectJsonApiError(patch, 415);
    expect(expectJsonApi(await k.get(d.id), 200).data.attributes.name).toBe('json patch');
  });
});

describe('api keys: scopes and teams', () => {
  let t: TestApp;
  let envId: string;
  beforeAll(async () => {
    t = await makeApp();
    envId = (await initialEnvironment(t)).id;
  });
  afterAll(() => t.close());

  it('api-keys:read may list and get, not create, update or delete (403)', async () => {
    const target = await created(t, { key_type: 'ingest', name: 'scoped target' });
    const reader = await managementKey(t, ['api-keys:read']);
    const r = api(t, reader.headers);
    expect((await r.list()).statusCode).toBe(200);
    expect((await r.get(target.id)).statusCode).toBe(200);

    let res = await r.create({ key_type: 'ingest', name: 'reader made' }, envId);
    expectJsonApiError(res, 403);
    expectContract(LIST, 'post', res);
    res = await r.patch(target.id, patchBody(target.id, { disabled: true }));
    expectJsonApiError(res, 403);
    expectContract(ONE, 'patch', res);
    res = await r.del(target.id);
    expectJsonApiError(res, 403);

    const after = expectJsonApi(await api(t).get(target.id), 200).data.attributes;
    expect(after.disabled).toBe(false);
    expect((await v1auth(t, tokenOf(target))).statusCode).toBe(200);
    const names = json(await api(t).list('?page[size]=100')).data.map((x: any) => x.attributes.name);
    expect(names).not.toContain('reader made');
  });

  it('api-keys:write may create, update and delete', async () => {
    const writer = await managementKey(t, ['api-keys:write']);
    const w = api(t, writer.headers);
    const res = await w.create({ key_type: 'configuration', name: 'writer made' }, envId);
    const d = expectJsonApi(res, 201).data;
    expect((await w.patch(d.id, patchBody(d.id, { name: 'writer renamed' }))).statusCode).toBe(200);
    expect((await w.del(d.id)).statusCode).toBe(204);
  });

  it('environments scopes do not grant access to keys (403)', async () => {
    const envOnly = await managementKey(t, ['environments:read', 'environments:write']);
    const e = api(t, envOnly.headers);
    expectJsonApiError(await e.list(), 403);
    expectJsonApiError(await e.get(t.init.keys.management.id), 403);
    expectJsonApiError(await e.create({ key_type: 'ingest', name: 'env scoped' }, envId), 403);
  });

  it('a team slug that is not the key\'s team is a 404', async () => {
    const d = await created(t, { key_type: 'ingest', name: 'slug check' });
    const wrong = api(t, t.mgmt, 'someone-else');
    expectJsonApiError(await wrong.list(), 404);
    expectJsonApiError(await wrong.get(d.id), 404);
    expectJsonApiError(await wrong.create({ key_type: 'ingest', name: 'x' }, envId), 404);
    expectJsonApiError(await wrong.patch(d.id, patchBody(d.id, { disabled: true })), 404);
    expectJsonApiError(await wrong.del(d.id), 404);
    expect((await v1auth(t, tokenOf(d))).statusCode).toBe(200);
  });

  it('another team\'s key ids are 404s, both ways; lists are per team', async () => {
    const other = await secondTeam(t);
    const theirs = api(t, other.mgmt.headers, other.team.slug);
    const theirKey = expectJsonApi(await theirs.create({ key_type: 'configuration', name: 'their key' }, other.environment.id), 201).data;
    const ourKey = await created(t, { key_type: 'ingest', name: 'our key' });
    const ours = api(t);

    // We cannot see or touch theirs.
    expectJsonApiError(await ours.get(theirKey.id), 404);
    expectJsonApiError(await ours.patch(theirKey.id, patchBody(theirKey.id, { disabled: true })), 404);
    expectJsonApiError(await ours.del(theirKey.id), 404);
    expect((await v1auth(t, tokenOf(theirKey))).statusCode).toBe(200);

    // They cannot see or touch ours.
    expectJsonApiError(await theirs.get(ourKey.id), 404);
    expectJsonApiError(await theirs.patch(ourKey.id, patchBody(ourKey.id, { disabled: true })), 404);
    expectJsonApiError(await theirs.del(ourKey.id), 404);
    expectJsonApiError(await theirs.get(t.init.keys.management.id), 404);
    expect((await v1auth(t, tokenOf(ourKey))).statusCode).toBe(200);

    // Nor through our team's path.
    expectJsonApiError(await api(t, other.mgmt.headers).get(ourKey.id), 404);

    // Lists are per team.
    const theirList = json(await theirs.list('?page[size]=100')).data.map((x: any) => x.id);
    expect(theirList).toEqual([theirKey.id]);
    const ourList = json(await ours.list('?page[size]=100')).data.map((x: any) => x.id);
    expect(ourList).toContain(ourKey.id);
    expect(ourList).not.toContain(theirKey.id);

    // Their key authenticates into their environment.
    expect(json(await v1auth(t, tokenOf(theirKey))).team).toEqual({ name: 'Other Team', slug: 'other-team' });
  });
});
