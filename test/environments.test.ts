// /2/teams/{teamSlug}/environments: list, create, get, PATCH, DELETE, pagination, request
// checks, scopes and team isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import {
  expectJsonApi, expectJsonApiError, initialEnvironment, initialTeam, managementKey, secondTeam, walkPages,
} from './v2-helpers.js';

const COLORS = ['blue', 'green', 'gold', 'red', 'purple', 'lightBlue', 'lightGreen', 'lightGold', 'lightRed', 'lightPurple'];
const LIST = '/2/teams/{teamSlug}/environments';
const ONE = '/2/teams/{teamSlug}/environments/{ID}';

const createBody = (attributes: Record<string, unknown>) => ({ data: { type: 'environments', attributes } });
const patchBody = (id: string, attributes: Record<string, unknown>, type = 'environments') => ({ data: { id, type, attributes } });

function api(t: TestApp) {
  const base = `/2/teams/${t.init.team.slug}/environments`;
  return {
    base,
    list: (query = '', headers = t.mgmt) => t.app.inject({ method: 'GET', url: `${base}${query}`, headers }),
    create: (attributes: Record<string, unknown>, headers = t.mgmt) =>
      t.app.inject({ method: 'POST', url: base, headers, payload: createBody(attributes) }),
    get: (id: string, headers = t.mgmt) => t.app.inject({ method: 'GET', url: `${base}/${id}`, headers }),
    patch: (id: string, body: unknown, headers = t.mgmt) =>
      t.app.inject({ method: 'PATCH', url: `${base}/${id}`, headers, payload: body as Record<string, unknown> }),
    del: (id: string, headers = t.mgmt) =>
      t.app.inject({ method: 'DELETE', url: `${base}/${id}`, headers: { authorization: headers.authorization } }),
  };
}

/** Creates an environment and returns its resource object. */
async function created(t: TestApp, attributes: Record<string, unknown>) {
  const res = await api(t).create(attributes);
  return expectJsonApi(res, 201).data;
}

describe('environments: CRUD', () => {
  let t: TestApp;
  let e: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await makeApp();
    e = api(t);
  });
  afterAll(() => t.close());

  it('lists the initial environment', async () => {
    const res = await e.list();
    const body = expectJsonApi(res, 200);
    expectContract(LIST, 'get', res);
    const env = await initialEnvironment(t);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toEqual({
      id: env.id,
      type: 'environments',
      links: { self: `/2/teams/my-team/environments/${env.id}` },
      attributes: {
        name: 'Production', description: '', color: env.color, slug: 'production', settings: { delete_protected: true },
      },
    });
    expect(COLORS).toContain(env.color);
    expect(body.links).toEqual({ next: null });
  });

  it('creates an environment: 201, slug derived, delete protected by default', async () => {
    const res = await e.create({ name: 'Staging Area', description: 'pre-production', color: 'lightBlue' });
    const body = expectJsonApi(res, 201);
    expectContract(LIST, 'post', res);
    const d = body.data;
    expect(d.id).toMatch(/^hcxen_[a-z0-9]{26}$/);
    expect(d.type).toBe('environments');
    expect(d.links).toEqual({ self: `/2/teams/my-team/environments/${d.id}` });
    expect(d.attributes).toEqual({
      name: 'Staging Area', description: 'pre-production', color: 'lightBlue', slug: 'staging-area',
      settings: { delete_protected: true },
    });

    const got = await e.get(d.id);
    expect(expectJsonApi(got, 200)).toEqual(body);
    expectContract(ONE, 'get', got);
    const listed = json(await e.list());
    expect(listed.data.map((x: any) => x.id)).toContain(d.id);
  });

  it('derives the slug the Honeycomb way', async () => {
    expect((await created(t, { name: 'My Env!' })).attributes.slug).toBe('my-env-');
    expect((await created(t, { name: 'QA_2 Blue' })).attributes.slug).toBe('qa_2-blue');
  });

  it('defaults description to "" and picks a colour from the enum when none is given', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 25; i++) {
      const env = await created(t, { name: `colour probe ${i}` });
      expect(env.attributes.description).toBe('');
      expect(COLORS).toContain(env.attributes.color);
      seen.add(env.attributes.color);
    }
    // 25 draws from 10 colours all landing on one colour has probability 10^-24: the colour is random.
    expect(seen.size).toBeGreaterThan(1);
  });

  it('accepts every colour of the enum', async () => {
    for (const color of COLORS) {
      expect((await created(t, { name: `every colour ${color}`, color })).attributes.color).toBe(color);
    }
  });

  it('requires a name', async () => {
    const errors = expectJsonApiError(await e.create({ description: 'no name' }), 422);
    expect(errors.some((x) => x.source?.pointer === '/data/attributes/name')).toBe(true);
    expectJsonApiError(await e.create({ name: '' }), 422);
    expectJsonApiError(await e.create({ name: '   ' }), 422);
  });

  it('limits name and description to 255 characters', async () => {
    const n255 = 'n'.repeat(255);
    expect((await created(t, { name: n255 })).attributes.name).toBe(n255);
    const errors = expectJsonApiError(await e.create({ name: 'n'.repeat(256) }), 422);
    expect(errors[0].source?.pointer).toBe('/data/attributes/name');

    expect((await created(t, { name: 'long description', description: 'd'.repeat(255) })).attributes.description).toHaveLength(255);
    const dErrors = expectJsonApiError(await e.create({ name: 'too long description', description: 'd'.repeat(256) }), 422);
    expect(dErrors[0].source?.pointer).toBe('/data/attributes/description');
  });

  it('rejects a colour outside the enum, including classic', async () => {
    for (const color of ['pink', 'classic', 'Blue', '']) {
      const errors = expectJsonApiError(await e.create({ name: `bad colour ${color}`, color }), 422);
      expect(errors.some((x) => x.source?.pointer === '/data/attributes/color')).toBe(true);
    }
    const team = await initialTeam(t);
    expect(await t.store.getEnvironmentBySlug(team.id, 'bad-colour-pink')).toBeUndefined();
  });

  it('rejects unknown attributes and a wrong type on create', async () => {
    expectJsonApiError(await e.create({ name: 'with settings', settings: { delete_protected: false } }), 422);
    const res = await t.app.inject({
      method: 'POST', url: e.base, headers: t.mgmt, payload: { data: { type: 'api-keys', attributes: { name: 'wrong type' } } },
    });
    const errors = expectJsonApiError(res, 422);
    expect(errors.some((x) => x.source?.pointer === '/data/type')).toBe(true);
    const noData = await t.app.inject({ method: 'POST', url: e.base, headers: t.mgmt, payload: { name: 'flat' } });
    expectJsonApiError(noData, 422);
  });

  it('concurrent creates of one name: exactly one wins, the other is a 409', async () => {
    const results = await Promise.all([0, 1, 2, 3].map(() => e.create({ name: 'Race Condition' })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expectJsonApiError(r, 409);
  });

  it('answers 409 to a duplicate name', async () => {
    await created(t, { name: 'Duplicate Me' });
    const res = await e.create({ name: 'Duplicate Me', color: 'red' });
    expectJsonApiError(res, 409);
    expectContract(LIST, 'post', res);
    // The same slug under another spelling is the same environment name.
    expectJsonApiError(await e.create({ name: 'duplicate me' }), 409);
    expectJsonApiError(await e.create({ name: 'Production' }), 409);
  });

  it('gets one environment, and 404 for an unknown id', async () => {
    const env = await initialEnvironment(t);
    const body = expectJsonApi(await e.get(env.id), 200);
    expect(body.data.attributes.slug).toBe('production');
    const res = await e.get('hcxen_00000000000000000000000000');
    expectJsonApiError(res, 404);
    expectContract(ONE, 'get', res);
    expectJsonApiError(await e.get('production'), 404);
  });

  it('PATCH updates description, colour and delete protection, leaving the rest alone', async () => {
    const env = await created(t, { name: 'Patch Target', description: 'before', color: 'gold' });

    let res = await e.patch(env.id, patchBody(env.id, { description: 'after' }));
    let body = expectJsonApi(res, 200);
    expectContract(ONE, 'patch', res);
    expect(body.data.attributes).toEqual({ ...env.attributes, description: 'after' });

    res = await e.patch(env.id, patchBody(env.id, { color: 'purple' }));
    body = expectJsonApi(res, 200);
    expect(body.data.attributes).toEqual({ ...env.attributes, description: 'after', color: 'purple' });

    res = await e.patch(env.id, patchBody(env.id, { settings: { delete_protected: false } }));
    body = expectJsonApi(res, 200);
    expect(body.data.attributes).toEqual({
      ...env.attributes, description: 'after', color: 'purple', settings: { delete_protected: false },
    });

    // An empty attributes object changes nothing.
    res = await e.patch(env.id, patchBody(env.id, {}));
    expect(expectJsonApi(res, 200).data.attributes).toEqual(body.data.attributes);

    // The stored state is what PATCH answered.
    expect(expectJsonApi(await e.get(env.id), 200).data).toEqual(body.data);

    // Description can be cleared; delete protection can be turned back on.
    res = await e.patch(env.id, patchBody(env.id, { description: '', settings: { delete_protected: true } }));
    body = expectJsonApi(res, 200);
    expect(body.data.attributes.description).toBe('');
    expect(body.data.attributes.settings.delete_protected).toBe(true);
  });

  it('PATCH refuses to rename (422 on data.attributes.name), and leaves the name as it was', async () => {
    const env = await created(t, { name: 'Fixed Name' });
    const res = await e.patch(env.id, patchBody(env.id, { name: 'New Name' }));
    const errors = expectJsonApiError(res, 422);
    expect(errors[0].source).toEqual({ pointer: '/data/attributes/name' });
    expect(errors[0].detail).toMatch(/cannot be changed/);
    expectContract(ONE, 'patch', res);
    expect(expectJsonApi(await e.get(env.id), 200).data.attributes.name).toBe('Fixed Name');
    const slug = expectJsonApiError(await e.patch(env.id, patchBody(env.id, { slug: 'new-slug' })), 422);
    expect(slug[0].source).toEqual({ pointer: '/data/attributes/slug' });
    expect(expectJsonApi(await e.get(env.id), 200).data.attributes.slug).toBe('fixed-name');
  });

  it("PATCH takes the Terraform provider's body: name and slug empty or unchanged, the rest applied", async () => {
    const env = await created(t, { name: 'Provider Patch' });
    for (const same of [{ name: '', slug: '' }, { name: 'Provider Patch', slug: 'provider-patch' }]) {
      const res = await e.patch(env.id, patchBody(env.id, { ...same, description: `via ${same.name || 'empty'}`, color: 'gold', settings: { delete_protected: false } }));
      const body = expectJsonApi(res, 200);
      expect(body.data.attributes).toMatchObject({ name: 'Provider Patch', slug: 'provider-patch', description: `via ${same.name || 'empty'}`, color: 'gold', settings: { delete_protected: false } });
    }
  });

  it("create takes the provider's empty slug (or the derived one) and ignores it; another slug is a 422", async () => {
    const res = await e.create({ name: 'Slugged Env', slug: '', description: 'tf' });
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).data.attributes).toMatchObject({ name: 'Slugged Env', slug: 'slugged-env', settings: { delete_protected: true } });
    expect((await e.create({ name: 'Echoed Slug', slug: 'echoed-slug' })).statusCode).toBe(201);
    const errors = expectJsonApiError(await e.create({ name: 'Chosen Slug', slug: 'my-own' }), 422);
    expect(errors[0].source).toEqual({ pointer: '/data/attributes/slug' });
  });

  it('PATCH with data.id different from the path is a 409', async () => {
    const a = await created(t, { name: 'Id Mismatch A', description: 'a' });
    const b = await created(t, { name: 'Id Mismatch B', description: 'b' });
    const res = await e.patch(a.id, patchBody(b.id, { description: 'changed' }));
    expectJsonApiError(res, 409);
    expect(expectJsonApi(await e.get(a.id), 200).data.attributes.description).toBe('a');
    expect(expectJsonApi(await e.get(b.id), 200).data.attributes.description).toBe('b');
  });

  it('PATCH with a wrong type, a missing id or bad values is a 422', async () => {
    const env = await created(t, { name: 'Patch Validation' });
    let errors = expectJsonApiError(await e.patch(env.id, patchBody(env.id, { description: 'x' }, 'api-keys')), 422);
    expect(errors.some((x) => x.source?.pointer === '/data/type')).toBe(true);
    errors = expectJsonApiError(
      await e.patch(env.id, { data: { type: 'environments', attributes: { description: 'x' } } }),
      422,
    );
    expect(errors.some((x) => x.source?.pointer === '/data/id')).toBe(true);
    expectJsonApiError(await e.patch(env.id, patchBody(env.id, { color: 'classic' })), 422);
    expectJsonApiError(await e.patch(env.id, patchBody(env.id, { description: 'd'.repeat(256) })), 422);
    errors = expectJsonApiError(await e.patch(env.id, patchBody(env.id, { settings: { delete_protected: 'no' } })), 422);
    expect(errors[0].source?.pointer).toBe('/data/attributes/settings/delete_protected');
    expectJsonApiError(await e.patch(env.id, patchBody(env.id, { settings: { other: true } })), 422);
    expect(expectJsonApi(await e.get(env.id), 200).data.attributes).toEqual(env.attributes);
  });

  it('PATCH of an unknown environment is a 404', async () => {
    const id = 'hcxen_00000000000000000000000000';
    expectJsonApiError(await e.patch(id, patchBody(id, { description: 'x' })), 404);
  });

  it('DELETE: 409 while protected, 204 once unprotected, then gone', async () => {
    const env = await created(t, { name: 'Delete Me' });
    let res = await e.del(env.id);
    expectJsonApiError(res, 409);
    expectContract(ONE, 'delete', res);
    expect((await e.get(env.id)).statusCode).toBe(200);

    expect((await e.patch(env.id, patchBody(env.id, { settings: { delete_protected: false } }))).statusCode).toBe(200);
    res = await e.del(env.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    expectJsonApiError(await e.get(env.id), 404);
    expectJsonApiError(await e.del(env.id), 404);
    expectJsonApiError(await e.patch(env.id, patchBody(env.id, { description: 'x' })), 404);
    expect(json(await e.list('?page[size]=100')).data.map((x: any) => x.id)).not.toContain(env.id);

    // The name is free again.
    expect((await created(t, { name: 'Delete Me' })).id).not.toBe(env.id);
  });

  it('DELETE of an unknown environment is a 404', async () => {
    expectJsonApiError(await e.del('hcxen_00000000000000000000000000'), 404);
  });

  it('deleting an environment stops its keys and removes its datasets', async () => {
    const env = await created(t, { name: 'Doomed' });
    const keysUrl = `/2/teams/${t.init.team.slug}/api-keys`;
    const mk = async (attributes: Record<string, unknown>) =>
      expectJsonApi(
        await t.app.inject({
          method: 'POST', url: keysUrl, headers: t.mgmt,
          payload: { data: { type: 'api-keys', attributes, relationships: { environment: { data: { id: env.id, type: 'environments' } } } } },
        }),
        201,
      ).data;
    const config = await mk({ key_type: 'configuration', name: 'doomed config', permissions: { create_datasets: true } });
    const ingest = await mk({ key_type: 'ingest', name: 'doomed ingest', permissions: { create_datasets: true } });
    const configHeaders = { 'x-honeycomb-team': config.attributes.secret };
    const ingestHeaders = { 'x-honeycomb-team': ingest.id + ingest.attributes.secret };

    const ds = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: configHeaders, payload: { name: 'doomed-data' } });
    expect(ds.statusCode).toBe(201);
    expect(await t.store.listDatasets(env.id)).toHaveLength(1);
    const authC = await t.app.inject({ method: 'GET', url: '/1/auth', headers: configHeaders });
    expect(authC.statusCode).toBe(200);
    expect(json(authC).environment.slug).toBe('doomed');
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: ingestHeaders })).statusCode).toBe(200);

    await e.patch(env.id, patchBody(env.id, { settings: { delete_protected: false } }));
    expect((await e.del(env.id)).statusCode).toBe(204);

    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: configHeaders })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: ingestHeaders })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets', headers: configHeaders })).statusCode).toBe(401);
    expect(await t.store.listDatasets(env.id)).toHaveLength(0);
    for (const k of [config, ingest]) {
      expectJsonApiError(await t.app.inject({ method: 'GET', url: `${keysUrl}/${k.id}`, headers: t.mgmt }), 404);
    }

    // The other environment's keys are untouched.
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.ingest })).statusCode).toBe(200);
  });
});

describe('environments: pagination', () => {
  let t: TestApp;
  let e: ReturnType<typeof api>;
  const allIds: string[] = [];
  beforeAll(async () => {
    t = await makeApp();
    e = api(t);
    allIds.push((await initialEnvironment(t)).id);
    for (let i = 1; i < 25; i++) allIds.push((await created(t, { name: `page env ${String(i).padStart(2, '0')}` })).id);
  });
  afterAll(() => t.close());

  it('pages hold 20 environments by default', async () => {
    const res = await e.list();
    const body = expectJsonApi(res, 200);
    expectContract(LIST, 'get', res);
    expect(body.data).toHaveLength(20);
    expect(typeof body.links.next).toBe('string');
  });

  it('a page as large as the whole list has no next link', async () => {
    for (const size of [25, 26, 100]) {
      const body = expectJsonApi(await e.list(`?page[size]=${size}`), 200);
      expect(body.data).toHaveLength(25);
      expect(body.links.next).toBeNull();
    }
  });

  it.each(['0', '101', 'abc', '-1', '1.5', ' ', '20abc'])('page[size]=%s is a 422', async (size) => {
    const res = await e.list(`?page[size]=${encodeURIComponent(size)}`);
    expectJsonApiError(res, 422);
  });

  it('walking pages of 7 by links.next sees every environment exactly once', async () => {
    const pages = await walkPages(t, `${e.base}?page[size]=7`, t.mgmt);
    expect(pages.map((p) => p.data.length)).toEqual([7, 7, 7, 4]);
    const seen = pages.flatMap((p) => p.data.map((x: any) => x.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...allIds].sort());
    expect(pages[pages.length - 1].links.next).toBeNull();
    for (const p of pages.slice(0, -1)) {
      expect(p.links.next).toMatch(/^\/2\/teams\/my-team\/environments\?/);
      expect(p.links.next).toContain('page[size]=7');
    }
  });

  it('a page size that divides the list exactly ends without an empty page', async () => {
    const pages = await walkPages(t, `${e.base}?page[size]=5`, t.mgmt);
    expect(pages.map((p) => p.data.length)).toEqual([5, 5, 5, 5, 5]);
    const pagesOf1 = await walkPages(t, `${e.base}?page[size]=1`, t.mgmt);
    expect(pagesOf1).toHaveLength(25);
  });

  it.each(['garbage', 'abc!!', Buffer.from('hello world').toString('base64url'), Buffer.from("x' OR 1=1").toString('base64')])(
    'a page[after] this server did not issue (%s) is a 422',
    async (after) => {
      expectJsonApiError(await e.list(`?page[after]=${encodeURIComponent(after)}`), 422);
    },
  );

  it('a cursor stays valid when the environment it points at is deleted', async () => {
    const first = expectJsonApi(await e.list('?page[size]=7'), 200);
    const sorted = [...allIds].sort();
    expect(first.data.map((x: any) => x.id)).toEqual(sorted.slice(0, 7));
    const last = first.data[6].id;
    await e.patch(last, patchBody(last, { settings: { delete_protected: false } }));
    expect((await e.del(last)).statusCode).toBe(204);
    const second = expectJsonApi(await t.app.inject({ method: 'GET', url: first.links.next, headers: t.mgmt }), 200);
    expect(second.data.map((x: any) => x.id)).toEqual(sorted.slice(7, 14));
  });

  it('an empty page[after] means the first page', async () => {
    const body = expectJsonApi(await e.list('?page[after]=&page[size]=3'), 200);
    expect(body.data.map((x: any) => x.id)).toEqual([...allIds].sort().slice(0, 3));
  });
});

describe('environments: request format', () => {
  let t: TestApp;
  let e: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await makeApp();
    e = api(t);
  });
  afterAll(() => t.close());

  const raw = (t: TestApp, method: 'POST' | 'PATCH', url: string, payload: string, contentType?: string) =>
    t.app.inject({
      method, url, payload,
      headers: { authorization: t.mgmt.authorization, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    });

  it.each([['application/json'], ['text/plain'], ['application/x-www-form-urlencoded'], [undefined]])(
    'a POST body with Content-Type %s is a 415',
    async (contentType) => {
      const payload = JSON.stringify(createBody({ name: `ct ${contentType}` }));
      const res = await raw(t, 'POST', e.base, payload, contentType);
      expectJsonApiError(res, 415);
      expectContract(LIST, 'post', res);
      const team = await initialTeam(t);
      expect(await t.store.getEnvironmentBySlug(team.id, `ct-${contentType}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-'))).toBeUndefined();
    },
  );

  it('a PATCH body with Content-Type application/json is a 415', async () => {
    const env = await initialEnvironment(t);
    const res = await raw(t, 'PATCH', `${e.base}/${env.id}`, JSON.stringify(patchBody(env.id, { description: 'x' })), 'application/json');
    expectJsonApiError(res, 415);
    expectContract(ONE, 'patch', res);
    expect((await initialEnvironment(t)).description).toBe('');
  });

  it('accepts the JSON:API media type with parameters and in any case', async () => {
    const one = await raw(t, 'POST', e.base, JSON.stringify(createBody({ name: 'with charset' })), 'application/vnd.api+json; charset=utf-8');
    expect(one.statusCode).toBe(201);
    const two = await raw(t, 'POST', e.base, JSON.stringify(createBody({ name: 'upper case' })), 'Application/VND.API+JSON');
    expect(two.statusCode).toBe(201);
  });

  it('malformed JSON is a 400 in JSON:API', async () => {
    for (const payload of ['{bad', '{"data":', '[1,2', 'nope']) {
      const res = await raw(t, 'POST', e.base, payload, 'application/vnd.api+json');
      expectJsonApiError(res, 400);
      expectContract(LIST, 'post', res);
    }
  });

  it('a body over 100000 bytes is a 413; one just under is accepted', async () => {
    const big = JSON.stringify(createBody({ name: 'big', description: 'x'.repeat(100_001) }));
    const res = await raw(t, 'POST', e.base, big, 'application/vnd.api+json');
    expectJsonApiError(res, 413);
    expect(json(res).errors[0].detail).toContain('100000');

    const body = JSON.stringify(createBody({ name: 'padded' }));
    const padded = body.slice(0, -1) + ' '.repeat(99_990 - body.length) + '}';
    expect(padded.length).toBeLessThan(100_000);
    expect((await raw(t, 'POST', e.base, padded, 'application/vnd.api+json')).statusCode).toBe(201);
  });

  it('wrong field types are 422s pointing at the field', async () => {
    const cases: Array<[unknown, string]> = [
      [createBody({ name: 42 }), '/data/attributes/name'],
      [createBody({ name: 'typed', description: true }), '/data/attributes/description'],
      [createBody({ name: 'typed', color: 3 }), '/data/attributes/color'],
      [{ data: { type: 'environments', attributes: 'name' } }, '/data/attributes'],
      [{ data: [] }, '/data'],
    ];
    for (const [payload, pointer] of cases) {
      const res = await t.app.inject({ method: 'POST', url: e.base, headers: t.mgmt, payload: payload as object });
      const errors = expectJsonApiError(res, 422);
      expect(errors.map((x) => x.source?.pointer), res.body).toContain(pointer);
      for (const x of errors) expect(typeof x.detail).toBe('string');
    }
  });

  it('a non-object body is a 422, not a crash', async () => {
    for (const payload of ['[]', '"text"', '42', 'null']) {
      const res = await raw(t, 'POST', e.base, payload, 'application/vnd.api+json');
      expect([400, 422], res.body).toContain(res.statusCode);
      expectJsonApiError(res, res.statusCode);
    }
  });
});

describe('environments: team, scopes and isolation', () => {
  let t: TestApp;
  let e: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await makeApp();
    e = api(t);
  });
  afterAll(() => t.close());

  it('a team slug that is not the key\'s team is a 404 on every operation', async () => {
    const env = await initialEnvironment(t);
    const base = '/2/teams/not-my-team/environments';
    const reqs = [
      t.app.inject({ method: 'GET', url: base, headers: t.mgmt }),
      t.app.inject({ method: 'POST', url: base, headers: t.mgmt, payload: createBody({ name: 'elsewhere' }) }),
      t.app.inject({ method: 'GET', url: `${base}/${env.id}`, headers: t.mgmt }),
      t.app.inject({ method: 'PATCH', url: `${base}/${env.id}`, headers: t.mgmt, payload: patchBody(env.id, { description: 'x' }) }),
      t.app.inject({ method: 'DELETE', url: `${base}/${env.id}`, headers: { authorization: t.mgmt.authorization } }),
    ];
    for (const res of await Promise.all(reqs)) expectJsonApiError(res, 404);
    const team = await initialTeam(t);
    expect(await t.store.getEnvironmentBySlug(team.id, 'elsewhere')).toBeUndefined();
    expect((await initialEnvironment(t)).description).toBe('');
  });

  it('a key with environments:read only may read but not write (403)', async () => {
    const k = await managementKey(t, ['environments:read']);
    const env = await created(t, { name: 'Read Only Target', description: 'orig' });
    await e.patch(env.id, patchBody(env.id, { settings: { delete_protected: false } }));

    expect((await e.list('', k.headers)).statusCode).toBe(200);
    expect((await e.get(env.id, k.headers)).statusCode).toBe(200);

    let res = await e.create({ name: 'Not Allowed' }, k.headers);
    expectJsonApiError(res, 403);
    expectContract(LIST, 'post', res);
    res = await e.patch(env.id, patchBody(env.id, { description: 'changed' }), k.headers);
    expectJsonApiError(res, 403);
    res = await e.del(env.id, k.headers);
    expectJsonApiError(res, 403);

    const team = await initialTeam(t);
    expect(await t.store.getEnvironmentBySlug(team.id, 'not-allowed')).toBeUndefined();
    const after = expectJsonApi(await e.get(env.id), 200).data;
    expect(after.attributes.description).toBe('orig');
  });

  it('a key with only api-keys scopes cannot read environments (403)', async () => {
    const k = await managementKey(t, ['api-keys:read', 'api-keys:write']);
    expectJsonApiError(await e.list('', k.headers), 403);
    expectJsonApiError(await e.get((await initialEnvironment(t)).id, k.headers), 403);
  });

  it('a key with environments:write only may create', async () => {
    const k = await managementKey(t, ['environments:write']);
    expect((await e.create({ name: 'Writer Made' }, k.headers)).statusCode).toBe(201);
  });

  it('a second team cannot see or touch the first team\'s environments', async () => {
    const other = await secondTeam(t);
    const mine = await initialEnvironment(t);
    const otherBase = `/2/teams/${other.team.slug}/environments`;
    const h = other.mgmt.headers;

    // Its own list has only its own environment (same name as ours is fine across teams).
    const list = expectJsonApi(await t.app.inject({ method: 'GET', url: otherBase, headers: h }), 200);
    expect(list.data.map((x: any) => x.id)).toEqual([other.environment.id]);
    expect(list.data[0].attributes.name).toBe('Production');
    expect(list.data[0].links.self).toBe(`${otherBase}/${other.environment.id}`);

    // Our environment id through its own team path is not found.
    expectJsonApiError(await t.app.inject({ method: 'GET', url: `${otherBase}/${mine.id}`, headers: h }), 404);
    expectJsonApiError(
      await t.app.inject({ method: 'PATCH', url: `${otherBase}/${mine.id}`, headers: h, payload: patchBody(mine.id, { settings: { delete_protected: false } }) }),
      404,
    );
    expectJsonApiError(await t.app.inject({ method: 'DELETE', url: `${otherBase}/${mine.id}`, headers: { authorization: h.authorization } }), 404);
    // And through our team path either.
    expectJsonApiError(await t.app.inject({ method: 'GET', url: e.base, headers: h }), 404);
    expectJsonApiError(await t.app.inject({ method: 'GET', url: `${e.base}/${mine.id}`, headers: h }), 404);

    // Nor can we see theirs.
    expectJsonApiError(await e.get(other.environment.id), 404);
    expectJsonApiError(await t.app.inject({ method: 'GET', url: otherBase, headers: t.mgmt }), 404);
    const ours = json(await e.list('?page[size]=100'));
    expect(ours.data.map((x: any) => x.id)).not.toContain(other.environment.id);

    // Nothing changed on our side.
    const still = (await initialEnvironment(t))!;
    expect(still.deleteProtected).toBe(true);

    // Names are per team: the other team may create a name we already have.
    const dup = await t.app.inject({ method: 'POST', url: otherBase, headers: h, payload: createBody({ name: 'Writer Made' }) });
    expect(dup.statusCode).toBe(201);
  });
});
