// /1/datasets: create (201 new / 200 existing; delete protected by default), naming and slug
// rules, validation, PUT (omitted fields kept), DELETE (202, 409 while protected), permissions and
// tenancy isolation.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, json, unprotectDataset, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, expectDatasetNotFound, PROBLEM_BASE } from './problems.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';

const COLLECTION = '/1/datasets';
const ITEM = '/1/datasets/{datasetSlug}';

describe('/1/datasets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  // Each test starts from an empty environment.
  afterEach(async () => {
    const { environment } = await initialTenancy(t);
    for (const ds of await t.store.listDatasets(environment.id)) await t.store.deleteDataset(environment.id, ds.slug);
  });

  const post = (payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'POST', url: '/1/datasets', headers, payload: payload as object });
  const get = (slug: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/datasets/${slug}`, headers });
  const put = (slug: string, payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'PUT', url: `/1/datasets/${slug}`, headers, payload: payload as object });
  const del = (slug: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/datasets/${slug}`, headers });
  const list = (headers = t.config) => t.app.inject({ method: 'GET', url: '/1/datasets', headers });

  describe('create', () => {
    it('creates a dataset with defaults: 201 and the full Dataset shape', async () => {
      const res = await post({ name: 'My Dataset' });
      expect(res.statusCode).toBe(201);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
      expectContract(COLLECTION, 'post', res);
      const body = json(res);
      expect(body).toEqual({
        name: 'My Dataset',
        description: '',
        settings: { delete_protected: true },
        expand_json_depth: 0,
        slug: 'my-dataset',
        regular_columns_count: null,
        last_written_at: null,
        created_at: expect.any(String),
      });
      expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
    });

    it('is delete protected unless the create body says settings.delete_protected: false', async () => {
      expect(json(await post({ name: 'p1', settings: {} })).settings).toEqual({ delete_protected: true });
      expect(json(await post({ name: 'p2', settings: { delete_protected: true } })).settings).toEqual({ delete_protected: true });
      const open = await post({ name: 'p3', settings: { delete_protected: false } });
      expect(open.statusCode).toBe(201);
      expect(json(open).settings).toEqual({ delete_protected: false });
      expect(json(await get('p3')).settings).toEqual({ delete_protected: false });
      expectValidation(await post({ name: 'p4', settings: { delete_protected: 'no' } }), 'settings.delete_protected', 'incorrect_type');
      // A repeated create answers the existing dataset as it is.
      const again = await post({ name: 'p1', settings: { delete_protected: false } });
      expect(again.statusCode).toBe(200);
      expect(json(again).settings).toEqual({ delete_protected: true });
    });

    it("accepts the Terraform provider's create body (read-only fields, empty settings, zero times) and ignores the extras", async () => {
      const res = await post({
        name: 'from-terraform',
        description: 'tf',
        settings: {},
        last_written_at: '0001-01-01T00:00:00Z',
        created_at: '0001-01-01T00:00:00Z',
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(json(res)).toMatchObject({ name: 'from-terraform', description: 'tf', last_written_at: null, settings: { delete_protected: true } });
      expect(json(res).created_at).not.toBe('0001-01-01T00:00:00Z');
    });

    it('keeps the description and expand_json_depth given on create', async () => {
      const res = await post({ name: 'with-extras', description: 'a nice one', expand_json_depth: 10 });
      expect(res.statusCode).toBe(201);
      expect(json(res)).toMatchObject({ name: 'with-extras', description: 'a nice one', expand_json_depth: 10 });
      const again = await get('with-extras');
      expect(json(again)).toMatchObject({ description: 'a nice one', expand_json_depth: 10 });
    });

    it('accepts the boundary values: 255-character name, 1024-character description, depth 0', async () => {
      const name = 'n'.repeat(255);
      const res = await post({ name, description: 'd'.repeat(1024), expand_json_depth: 0 });
      expect(res.statusCode).toBe(201);
      expect(json(res).name).toBe(name);
      expect(json(res).description).toHaveLength(1024);
    });

    it('answers 200 with the existing dataset for the same name, another casing, or a name with the same slug', async () => {
      const first = await post({ name: 'My Dataset', description: 'original', expand_json_depth: 2 });
      expect(first.statusCode).toBe(201);
      for (const name of ['My Dataset', 'MY DATASET', 'my dataset', 'my-dataset', 'My.Dataset']) {
        const res = await post({ name, description: 'ignored', expand_json_depth: 7 });
        expect(res.statusCode, name).toBe(200);
        expectContract(COLLECTION, 'post', res);
        expect(json(res)).toEqual(json(first));
      }
      const all = json(await list());
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject({ name: 'My Dataset', description: 'original', expand_json_depth: 2 });
    });

    it('derives the slug Honeycomb\'s way: "My Dataset!" → "my-dataset-"', async () => {
      const res = await post({ name: 'My Dataset!' });
      expect(res.statusCode).toBe(201);
      expect(json(res).slug).toBe('my-dataset-');
      expect(json(res).name).toBe('My Dataset!');
      const cases: [string, string][] = [
        ['service_name-1', 'service_name-1'],
        ['Ünïcode Name', '-n-code-name'],
        ['a.b:c', 'a-b-c'],
      ];
      for (const [name, slug] of cases) {
        const r = await post({ name });
        expect(r.statusCode, name).toBe(201);
        expect(json(r).slug).toBe(slug);
      }
    });

    it('does not treat names that only look alike as the same dataset', async () => {
      expect((await post({ name: 'alpha' })).statusCode).toBe(201);
      expect((await post({ name: 'alpha2' })).statusCode).toBe(201);
      expect((await post({ name: 'alpha_' })).statusCode).toBe(201);
      expect((await post({ name: 'alpha-' })).statusCode).toBe(201);
      expect(json(await list()).map((d: { slug: string }) => d.slug).sort()).toEqual(['alpha', 'alpha-', 'alpha2', 'alpha_']);
    });

    it('lists the environment\'s datasets', async () => {
      expect(json(await list())).toEqual([]);
      await post({ name: 'b-set' });
      await post({ name: 'A Set' });
      const res = await list();
      expect(res.statusCode).toBe(200);
      expectContract(COLLECTION, 'get', res);
      const names = json(res).map((d: { name: string }) => d.name).sort();
      expect(names).toEqual(['A Set', 'b-set']);
    });
  });

  describe('create validation', () => {
    it('422s when name is missing, as Honeycomb words it: the problem alone in description, the field in field', async () => {
      const res = await post({ description: 'no name' });
      const body = expectValidation(res, 'name', 'missing');
      // What the Terraform provider's client test checks (it prints `missing name - cannot be blank`).
      expect(body.type_detail).toEqual([{ field: 'name', code: 'missing', description: 'cannot be blank' }]);
      expect(body.detail).toBe('name: cannot be blank');
      expectContract(COLLECTION, 'post', res);
    });

    it('422s when name is not a string', async () => {
      for (const name of [42, true, null, ['x'], { n: 'x' }]) {
        const res = await post({ name });
        expectValidation(res, 'name', 'incorrect_type');
        expectContract(COLLECTION, 'post', res);
      }
    });

    it('422s for an empty, blank or over-long name', async () => {
      expectValidation(await post({ name: '' }), 'name', 'missing');
      expectValidation(await post({ name: '   ' }), 'name', 'missing');
      expectValidation(await post({ name: 'n'.repeat(256) }), 'name', 'invalid');
    });

    it('422s for the reserved name __all__ (in any casing)', async () => {
      for (const name of ['__all__', '__ALL__']) {
        const res = await post({ name });
        expectValidation(res, 'name', 'invalid');
        expectContract(COLLECTION, 'post', res);
      }
      expect(json(await list())).toEqual([]);
    });

    it('422s for a name containing a slash', async () => {
      expectValidation(await post({ name: 'a/b' }), 'name', 'invalid');
    });

    it('422s for a description over 1024 characters or of the wrong type', async () => {
      expectValidation(await post({ name: 'x', description: 'd'.repeat(1025) }), 'description', 'invalid');
      expectValidation(await post({ name: 'x', description: 5 }), 'description', 'incorrect_type');
      expect(json(await list())).toEqual([]);
    });

    it('422s for expand_json_depth out of 0..10, fractional, or a string (never coerced)', async () => {
      for (const d of [-1, 11, 100]) expectValidation(await post({ name: 'x', expand_json_depth: d }), 'expand_json_depth', 'invalid');
      expectValidation(await post({ name: 'x', expand_json_depth: 1.5 }), 'expand_json_depth', 'incorrect_type');
      expectValidation(await post({ name: 'x', expand_json_depth: '3' }), 'expand_json_depth', 'incorrect_type');
      expectValidation(await post({ name: 'x', expand_json_depth: true }), 'expand_json_depth', 'incorrect_type');
      expectValidation(await post({ name: 'x', expand_json_depth: null }), 'expand_json_depth', 'incorrect_type');
      expect(json(await list())).toEqual([]);
    });

    it('reports every problem of a body at once', async () => {
      const res = await post({ name: 5, description: 6, expand_json_depth: 'x' });
      const body = json(res);
      expect(res.statusCode).toBe(422);
      const fields = body.type_detail.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'description', 'expand_json_depth']));
    });

    it('422s for a body that is not an object', async () => {
      for (const payload of ['"just a string"', '[]', '42', 'null']) {
        const res = await t.app.inject({
          method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload,
        });
        expect(res.statusCode, payload).toBe(422);
        expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
      }
    });

    it('400s (problem+json, type unparseable) for malformed JSON', async () => {
      for (const payload of ['{"name": "x"', '{name: x}', '{"name":"x"}garbage']) {
        const res = await t.app.inject({
          method: 'POST', url: '/1/datasets', headers: { ...t.config, 'content-type': 'application/json' }, payload,
        });
        const body = expectProblem(res, 400, 'unparseable');
        expect(body.title).toBe('The request body could not be parsed.');
      }
      expect(json(await list())).toEqual([]);
    });

    it('reads the body as JSON whatever its Content-Type (curl -d sends a form type)', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/1/datasets',
        headers: { ...t.config, 'content-type': 'application/x-www-form-urlencoded' },
        payload: '{"name":"from-curl"}',
      });
      expect(res.statusCode).toBe(201);
      expect(json(res).slug).toBe('from-curl');
    });
  });

  describe('get by path', () => {
    beforeEach(async () => {
      expect((await post({ name: 'My Dataset', description: 'd' })).statusCode).toBe(201);
    });

    it('finds the dataset by slug, by name in any casing and by URL-encoded name', async () => {
      for (const segment of ['my-dataset', 'My%20Dataset', 'MY%20DATASET', 'my%20dataset', 'MY-DATASET', 'My-Dataset']) {
        const res = await get(segment);
        expect(res.statusCode, segment).toBe(200);
        expectContract(ITEM, 'get', res);
        expect(json(res)).toMatchObject({ name: 'My Dataset', slug: 'my-dataset', description: 'd' });
      }
    });

    it('finds "My Dataset!" by its slug and by its encoded name', async () => {
      expect((await post({ name: 'My Dataset!' })).statusCode).toBe(201);
      for (const segment of ['my-dataset-', 'My%20Dataset%21', 'My%20Dataset!']) {
        const res = await get(segment);
        expect(res.statusCode, segment).toBe(200);
        expect(json(res).name).toBe('My Dataset!');
      }
    });

    it('404s (problem "Dataset not found") for an unknown dataset on GET, PUT and DELETE', async () => {
      const g = await get('nope');
      expectDatasetNotFound(g);
      expectContract(ITEM, 'get', g);
      const p = await put('nope', { description: '', expand_json_depth: 0 });
      expectDatasetNotFound(p);
      expectContract(ITEM, 'put', p);
      const d = await del('nope');
      expectDatasetNotFound(d);
      expectContract(ITEM, 'delete', d);
    });

    it('404s for __all__ in the path on GET, PUT and DELETE', async () => {
      for (const segment of ['__all__', '__ALL__']) {
        expectDatasetNotFound(await get(segment));
        expectDatasetNotFound(await put(segment, { description: '', expand_json_depth: 0 }));
        expectDatasetNotFound(await del(segment));
      }
    });
  });

  describe('update (PUT)', () => {
    beforeEach(async () => {
      expect((await post({ name: 'Upd', description: 'before', expand_json_depth: 3 })).statusCode).toBe(201);
    });

    it('replaces description and expand_json_depth and returns the dataset', async () => {
      const res = await put('upd', { description: 'after', expand_json_depth: 5 });
      expect(res.statusCode).toBe(200);
      expectContract(ITEM, 'put', res);
      const created = json(await get('upd'));
      expect(json(res)).toEqual(created);
      expect(created).toMatchObject({
        name: 'Upd', slug: 'upd', description: 'after', expand_json_depth: 5, settings: { delete_protected: true },
      });
    });

    it('clears the description with an empty string', async () => {
      const res = await put('upd', { description: '', expand_json_depth: 3 });
      expect(res.statusCode).toBe(200);
      expect(json(res).description).toBe('');
    });

    it('works through the name in the path too', async () => {
      const res = await put('UPD', { description: 'by name', expand_json_depth: 0 });
      expect(res.statusCode).toBe(200);
      expect(json(res)).toMatchObject({ slug: 'upd', description: 'by name', expand_json_depth: 0 });
    });

    it('keeps the current value of every field the body omits', async () => {
      const depthOnly = await put('upd', { expand_json_depth: 1 });
      expect(depthOnly.statusCode, depthOnly.body).toBe(200);
      expect(json(depthOnly)).toMatchObject({ description: 'before', expand_json_depth: 1, settings: { delete_protected: true } });
      expect(json(await put('upd', { description: 'x' }))).toMatchObject({ description: 'x', expand_json_depth: 1 });
      expect(json(await put('upd', {}))).toMatchObject({ description: 'x', expand_json_depth: 1, settings: { delete_protected: true } });
      expect(json(await get('upd'))).toMatchObject({ description: 'x', expand_json_depth: 1, settings: { delete_protected: true } });
    });

    it("takes the Terraform provider's settings-only PUT: only delete protection changes", async () => {
      // What the provider sends when only delete_protected changed: description and
      // expand_json_depth are omitted when empty/zero, name is "", the times are Go's zero time.
      const res = await put('upd', {
        name: '',
        slug: 'upd',
        settings: { delete_protected: false },
        last_written_at: '0001-01-01T00:00:00Z',
        created_at: '0001-01-01T00:00:00Z',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toMatchObject({ name: 'Upd', slug: 'upd', description: 'before', expand_json_depth: 3, settings: { delete_protected: false } });
      expect(json(await get('upd'))).toEqual(json(res));
    });

    it('validates PUT values like create, without coercion', async () => {
      expectValidation(await put('upd', { description: 'd'.repeat(1025), expand_json_depth: 1 }), 'description', 'invalid');
      expectValidation(await put('upd', { description: 1, expand_json_depth: 1 }), 'description', 'incorrect_type');
      expectValidation(await put('upd', { description: 'x', expand_json_depth: 11 }), 'expand_json_depth', 'invalid');
      expectValidation(await put('upd', { description: 'x', expand_json_depth: -1 }), 'expand_json_depth', 'invalid');
      expectValidation(await put('upd', { description: 'x', expand_json_depth: 2.5 }), 'expand_json_depth', 'incorrect_type');
      expectValidation(await put('upd', { description: 'x', expand_json_depth: '4' }), 'expand_json_depth', 'incorrect_type');
      expectValidation(
        await put('upd', { description: 'x', expand_json_depth: 1, settings: { delete_protected: 'true' } }),
        'settings.delete_protected',
        'incorrect_type',
      );
      expect(json(await get('upd'))).toMatchObject({ description: 'before', expand_json_depth: 3, settings: { delete_protected: true } });
    });

    it('400s for malformed JSON on PUT', async () => {
      const res = await t.app.inject({
        method: 'PUT', url: '/1/datasets/upd', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{"description":',
      });
      expectProblem(res, 400, 'unparseable');
    });

    it('sets settings.delete_protected when sent and keeps it when omitted', async () => {
      await unprotectDataset(t, 'upd');
      const on = await put('upd', { description: 'p', expand_json_depth: 1, settings: { delete_protected: true } });
      expect(on.statusCode).toBe(200);
      expect(json(on).settings).toEqual({ delete_protected: true });

      const omitted = await put('upd', { description: 'q', expand_json_depth: 2 });
      expect(omitted.statusCode).toBe(200);
      expect(json(omitted)).toMatchObject({ description: 'q', expand_json_depth: 2, settings: { delete_protected: true } });

      const emptySettings = await put('upd', { description: 'r', expand_json_depth: 2, settings: {} });
      expect(json(emptySettings).settings).toEqual({ delete_protected: true });

      const off = await put('upd', { description: 'r', expand_json_depth: 2, settings: { delete_protected: false } });
      expect(json(off).settings).toEqual({ delete_protected: false });
      expect(json(await get('upd')).settings).toEqual({ delete_protected: false });
    });

    it('does not rename the dataset or change its slug or created_at', async () => {
      const before = json(await get('upd'));
      const res = await put('upd', { description: 'x', expand_json_depth: 0 });
      expect(json(res)).toMatchObject({ name: before.name, slug: before.slug, created_at: before.created_at });
    });
  });

  describe('delete', () => {
    it('answers 202 with an empty body, and the dataset is gone', async () => {
      expect((await post({ name: 'Doomed', settings: { delete_protected: false } })).statusCode).toBe(201);
      const res = await del('doomed');
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('');
      expectDatasetNotFound(await get('doomed'));
      expect(json(await list())).toEqual([]);
      // A second delete finds nothing.
      expectDatasetNotFound(await del('doomed'));
    });

    it('deletes by URL-encoded name', async () => {
      expect((await post({ name: 'Gone Soon' })).statusCode).toBe(201);
      await unprotectDataset(t, 'Gone%20Soon');
      expect((await del('Gone%20Soon')).statusCode).toBe(202);
      expect((await get('gone-soon')).statusCode).toBe(404);
    });

    it('a deleted name can be created again, fresh (201, defaults)', async () => {
      await post({ name: 'phoenix', description: 'first life', expand_json_depth: 4, settings: { delete_protected: false } });
      expect((await del('phoenix')).statusCode).toBe(202);
      const again = await post({ name: 'phoenix' });
      expect(again.statusCode).toBe(201);
      expect(json(again)).toMatchObject({ description: '', expand_json_depth: 0, settings: { delete_protected: true } });
    });

    it('409s (problem+json conflict) for a delete-protected dataset and deletes nothing, until protection is cleared', async () => {
      // Protected from creation; it has events and a column.
      await post({ name: 'Protected' });
      const ingest = await t.app.inject({ method: 'POST', url: '/1/batch/protected', headers: t.config, payload: [{ data: { kept: 1 } }] });
      expect(json(ingest)).toEqual([{ status: 202 }]);
      const { environment } = await initialTenancy(t);
      const before = (await t.store.getDataset(environment.id, 'protected'))!;

      const refused = await del('protected');
      const body = expectProblem(refused, 409, 'conflict');
      expect(body.title).toBe(
        'Request could not be completed due to a conflict with the current state of the target resource.',
      );
      expectContract(ITEM, 'delete', refused);
      expect((await get('protected')).statusCode).toBe(200);
      expect((await t.store.listColumns(before.id)).map((c) => c.keyName)).toEqual(['kept']);
      expect((await t.events.shape(before.id))!.columns.length).toBeGreaterThan(0);

      expect((await put('protected', { description: '', expand_json_depth: 0, settings: { delete_protected: false } })).statusCode).toBe(200);
      const res = await del('protected');
      expect(res.statusCode).toBe(202);
      expect((await get('protected')).statusCode).toBe(404);
    });
  });

  describe('datasets made by ingest', () => {
    it('are delete protected too (one rule for every new dataset)', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/1/batch/by-ingest', headers: t.ingest, payload: [{ data: { a: 1 } }] });
      expect(json(res)).toEqual([{ status: 202 }]);
      expect(json(await get('by-ingest')).settings).toEqual({ delete_protected: true });
      expectProblem(await del('by-ingest'), 409, 'conflict');
      await unprotectDataset(t, 'by-ingest');
      expect((await del('by-ingest')).statusCode).toBe(202);
    });
  });

  describe('permissions', () => {
    let limited: Record<string, string>;
    beforeAll(async () => {
      const { team, environment } = await initialTenancy(t);
      // Every other common permission, but not create_datasets.
      const permissions = { send_events: true, manage_markers: true, manage_boards: true, run_queries: true, manage_columns: true };
      limited = (await addKey(t, team, environment, { permissions })).headers;
    });

    it('a configuration key without create_datasets may list and get', async () => {
      await post({ name: 'Readable', description: 'r' });
      const l = await list(limited);
      expect(l.statusCode).toBe(200);
      expect(json(l).map((d: { slug: string }) => d.slug)).toEqual(['readable']);
      const g = await get('readable', limited);
      expect(g.statusCode).toBe(200);
      expect(json(g).description).toBe('r');
    });

    it('but gets 403 (legacy {error}) on POST, PUT and DELETE, and nothing changes', async () => {
      await post({ name: 'Readable', description: 'r' });

      const p = await post({ name: 'Forbidden' }, limited);
      expectLegacy(p, 403);
      expectContract(COLLECTION, 'post', p);
      // Even a create of an existing name is refused.
      expectLegacy(await post({ name: 'Readable' }, limited), 403);

      const u = await put('readable', { description: 'changed', expand_json_depth: 1 }, limited);
      expectLegacy(u, 403);

      const d = await del('readable', limited);
      expectLegacy(d, 403);
      expectContract(ITEM, 'delete', d);

      expect(json(await list()).map((x: { slug: string }) => x.slug)).toEqual(['readable']);
      expect(json(await get('readable'))).toMatchObject({ description: 'r', expand_json_depth: 0 });
    });
  });
});

describe('/1/datasets body limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ settings: { bodyLimit: 2048 } });
  });
  afterAll(() => t.close());

  it('413s (problem+json, payload-too-large) for a body over the limit, and creates nothing', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'big', description: 'd'.repeat(3000) },
    });
    expect(res.statusCode).toBe(413);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
    const body = json(res);
    expect(body).toMatchObject({
      status: 413,
      type: `${PROBLEM_BASE}/payload-too-large`,
      title: 'Request body is too large.',
      error: 'Body size is larger than maximum size of 2048 bytes',
    });
    expectSchema('DetailedError', body);
    const l = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(json(l)).toEqual([]);
  });

  it('accepts a body under the limit', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'small', description: 'd'.repeat(1000) },
    });
    expect(res.statusCode).toBe(201);
  });

  it('413s on PUT too', async () => {
    const res = await t.app.inject({
      method: 'PUT', url: '/1/datasets/small', headers: t.config, payload: { description: 'x'.repeat(4096), expand_json_depth: 0 },
    });
    expect(res.statusCode).toBe(413);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
  });
});

describe('/1/datasets across environments and teams', () => {
  let t: TestApp;
  let staging: Awaited<ReturnType<typeof secondEnvironment>>;
  let other: Awaited<ReturnType<typeof secondTeam>>;
  beforeAll(async () => {
    t = await makeApp();
    staging = await secondEnvironment(t, 'Staging');
    other = await secondTeam(t, 'Other Team');
    const res = await t.app.inject({
      method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Prod Only', description: 'prod' },
    });
    expect(res.statusCode).toBe(201);
  });
  afterAll(() => t.close());

  it('the other keys authenticate to their own environment', async () => {
    const s = json(await t.app.inject({ method: 'GET', url: '/1/auth', headers: staging.headers }));
    expect(s.environment).toEqual({ name: 'Staging', slug: 'staging' });
    expect(s.team.slug).toBe('my-team');
    const o = json(await t.app.inject({ method: 'GET', url: '/1/auth', headers: other.headers }));
    expect(o.environment).toEqual({ name: 'Production', slug: 'production' });
    expect(o.team).toEqual({ name: 'Other Team', slug: 'other-team' });
  });

  for (const who of ['second environment', 'second team'] as const) {
    const headers = () => (who === 'second environment' ? staging.headers : other.headers);

    it(`a ${who} key does not see the first environment's datasets in its list`, async () => {
      const res = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: headers() });
      expect(res.statusCode).toBe(200);
      expect(json(res).map((d: { slug: string }) => d.slug)).not.toContain('prod-only');
    });

    it(`a ${who} key gets 404 for the first environment's dataset on GET, PUT, DELETE and definitions`, async () => {
      const calls = [
        { method: 'GET', url: '/1/datasets/prod-only' },
        { method: 'GET', url: '/1/datasets/Prod%20Only' },
        { method: 'PUT', url: '/1/datasets/prod-only', payload: { description: 'hijacked', expand_json_depth: 9 } },
        { method: 'DELETE', url: '/1/datasets/prod-only' },
        { method: 'GET', url: '/1/dataset_definitions/prod-only' },
        { method: 'PATCH', url: '/1/dataset_definitions/prod-only', payload: { span_id: { name: 'hijacked' } } },
      ] as const;
      for (const c of calls) {
        const res = await t.app.inject({ ...c, headers: headers() });
        expect(res.statusCode, `${c.method} ${c.url}`).toBe(404);
        expectDatasetNotFound(res);
      }
      // The first environment's dataset is untouched.
      const mine = await t.app.inject({ method: 'GET', url: '/1/datasets/prod-only', headers: t.config });
      expect(json(mine)).toMatchObject({ description: 'prod', expand_json_depth: 0 });
      const defs = await t.app.inject({ method: 'GET', url: '/1/dataset_definitions/prod-only', headers: t.config });
      expect(json(defs).span_id).toEqual({ name: 'trace.span_id', column_type: 'column' });
    });
  }

  it('the same name in two environments makes two independent datasets', async () => {
    const a = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Shared', description: 'in prod' } });
    expect(a.statusCode).toBe(201);
    const b = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: 'Shared', description: 'in staging' } });
    expect(b.statusCode).toBe(201); // not 200: the first environment's dataset is not "existing" here
    expect(json(b).description).toBe('in staging');
    const c = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: other.headers, payload: { name: 'shared', description: 'other team' } });
    expect(c.statusCode).toBe(201);

    // Changing or deleting one leaves the others alone.
    const upd = await t.app.inject({
      method: 'PUT', url: '/1/datasets/shared', headers: staging.headers,
      payload: { description: 'staging changed', expand_json_depth: 4, settings: { delete_protected: true } },
    });
    expect(upd.statusCode).toBe(200);
    expect(json(await t.app.inject({ method: 'GET', url: '/1/datasets/shared', headers: t.config }))).toMatchObject({
      description: 'in prod', expand_json_depth: 0, settings: { delete_protected: true },
    });
    await unprotectDataset(t, 'shared');
    expect((await t.app.inject({ method: 'DELETE', url: '/1/datasets/shared', headers: t.config })).statusCode).toBe(202);
    expect(json(await t.app.inject({ method: 'GET', url: '/1/datasets/shared', headers: staging.headers }))).toMatchObject({
      description: 'staging changed', expand_json_depth: 4,
    });
    expect(json(await t.app.inject({ method: 'GET', url: '/1/datasets/shared', headers: other.headers }))).toMatchObject({
      name: 'shared', description: 'other team',
    });
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets/shared', headers: t.config })).statusCode).toBe(404);
  });
});
