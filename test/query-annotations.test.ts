// /1/query_annotations: list (board annotations only on request), create (201), get, full
// replacement PUT (query_id immutable), DELETE (204); validation at and past each boundary; the
// query must be of the same dataset / `__all__` and environment; isolation; permissions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, deleteDataset, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, expectDatasetNotFound, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { createQueryAnnotation } from '../src/api/v1/query-annotations.js';

const COLLECTION = '/1/query_annotations/{datasetSlug}';
const ITEM = '/1/query_annotations/{datasetSlug}/{queryAnnotationId}';
const FIELDS = ['created_at', 'description', 'id', 'name', 'query_id', 'source', 'updated_at'];

describe('/1/query_annotations', () => {
  let t: TestApp;
  const DS = 'annotated';
  const OTHER = 'annotated-other';
  let queryId: string;
  let otherQueryId: string;
  let allQueryId: string;

  const url = (ds: string, id?: string) => `/1/query_annotations/${encodeURIComponent(ds)}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  const create = (body: unknown, ds = DS, headers = t.config) => sendJson(t, 'POST', url(ds), body, headers);
  const update = (id: string, body: unknown, ds = DS, headers = t.config) => sendJson(t, 'PUT', url(ds, id), body, headers);
  const get = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'GET', url: url(ds, id), headers });
  const del = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'DELETE', url: url(ds, id), headers });
  const list = (ds = DS, qs = '', headers = t.config) => t.app.inject({ method: 'GET', url: url(ds) + qs, headers });
  const newQuery = async (ds: string, headers = t.config) => {
    const res = await t.app.inject({ method: 'POST', url: `/1/queries/${ds}`, headers, payload: { calculations: [{ op: 'COUNT' }], time_range: 3600 } });
    expect(res.statusCode, res.body).toBe(200);
    return json(res).id as string;
  };
  async function created(body: Record<string, unknown>, ds = DS) {
    const res = await create(body, ds);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }

  beforeAll(async () => {
    t = await makeApp();
    for (const name of [DS, OTHER]) {
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } })).statusCode).toBe(201);
    }
    queryId = await newQuery(DS);
    otherQueryId = await newQuery(OTHER);
    allQueryId = await newQuery('__all__');
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), gets, lists, replaces and deletes (204)', async () => {
      const a = await created({ name: 'Slow checkouts', description: 'P99 above a second', query_id: queryId });
      expect(Object.keys(a).sort()).toEqual(FIELDS);
      expect(a).toMatchObject({ name: 'Slow checkouts', description: 'P99 above a second', query_id: queryId, source: 'query' });
      expect(Date.parse(a.created_at)).not.toBeNaN();
      expect(a.updated_at).toBe(a.created_at);

      const got = await get(a.id);
      expect(got.statusCode).toBe(200);
      expectContract(ITEM, 'GET', got);
      expect(json(got)).toEqual(a);

      const listed = await list();
      expect(listed.statusCode).toBe(200);
      expectContract(COLLECTION, 'GET', listed);
      expect(json(listed).find((x: { id: string }) => x.id === a.id)).toEqual(a);

      await new Promise((r) => setTimeout(r, 5));
      const put = await update(a.id, { name: 'Renamed', query_id: queryId });
      expect(put.statusCode, put.body).toBe(200);
      expectContract(ITEM, 'PUT', put);
      const b = json(put);
      // Full replacement: the omitted description is now empty.
      expect(b).toMatchObject({ id: a.id, name: 'Renamed', description: '', query_id: queryId, source: 'query', created_at: a.created_at });
      expect(Date.parse(b.updated_at)).toBeGreaterThan(Date.parse(a.updated_at));
      expect(json(await get(a.id))).toEqual(b);

      const gone = await del(a.id);
      expect(gone.statusCode).toBe(204);
      expect(gone.body).toBe('');
      expectLegacy(await get(a.id), 404, 'query annotation not found');
      expectLegacy(await del(a.id), 404);
      expectLegacy(await update(a.id, { name: 'x', query_id: queryId }), 404);
      expect(json(await list()).some((x: { id: string }) => x.id === a.id)).toBe(false);
    });

    it('lists in creation order; many annotations may share one query', async () => {
      const ds = 'annotated-list';
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } });
      expect(json(await list(ds))).toEqual([]);
      const q = await newQuery(ds);
      const made = [];
      for (const name of ['one', 'two', 'three']) made.push(await created({ name, query_id: q }, ds));
      expect(json(await list(ds)).map((x: { name: string }) => x.name)).toEqual(['one', 'two', 'three']);
      expect(new Set(made.map((m) => m.id)).size).toBe(3);
    });

    it('PUT ignores read-only fields and accepts the same id in the body', async () => {
      const a = await created({ name: 'n', query_id: queryId });
      const res = await update(a.id, {
        id: a.id, name: 'n2', description: 'd', query_id: queryId, created_at: '2000-01-01T00:00:00Z', updated_at: '2000-01-01T00:00:00Z', source: 'board', extra: 1,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toMatchObject({ id: a.id, name: 'n2', description: 'd', source: 'query', created_at: a.created_at });
      expect(json(res).extra).toBeUndefined();
    });

    it('POST ignores read-only and unknown fields', async () => {
      const a = await created({ id: 'mine', name: 'n', query_id: queryId, source: 'board', created_at: '2000-01-01T00:00:00Z', extra: true });
      expect(a.id).not.toBe('mine');
      expect(a.source).toBe('query');
      expect(a.created_at).not.toBe('2000-01-01T00:00:00Z');
      expect(a.extra).toBeUndefined();
    });

    it('stores hostile text verbatim', async () => {
      const name = `'); DROP TABLE objects; -- <script>🐝</script>`;
      const a = await created({ name, description: '"\\\u0000', query_id: queryId });
      expect(json(await get(a.id))).toMatchObject({ name, description: '"\\\u0000' });
    });
  });

  describe('validation', () => {
    it('name: required, 1..320 characters, not blank', async () => {
      await created({ name: 'x', query_id: queryId });
      await created({ name: 'x'.repeat(320), query_id: queryId });
      expectValidation(await create({ name: 'x'.repeat(321), query_id: queryId }), 'name');
      expectValidation(await create({ name: '', query_id: queryId }), 'name', 'missing');
      expectValidation(await create({ name: '   ', query_id: queryId }), 'name', 'missing');
      expectValidation(await create({ query_id: queryId }), 'name', 'missing');
      expectValidation(await create({ name: 5, query_id: queryId }), 'name', 'incorrect_type');
      expectValidation(await create({ name: null, query_id: queryId }), 'name', 'incorrect_type');
    });

    it('description: at most 1023 characters', async () => {
      await created({ name: 'x', description: 'd'.repeat(1023), query_id: queryId });
      await created({ name: 'x', description: '', query_id: queryId });
      expectValidation(await create({ name: 'x', description: 'd'.repeat(1024), query_id: queryId }), 'description');
      expectValidation(await create({ name: 'x', description: 7, query_id: queryId }), 'description', 'incorrect_type');
    });

    it('query_id: required string', async () => {
      expectValidation(await create({ name: 'x' }), 'query_id', 'missing');
      expectValidation(await create({ name: 'x', query_id: 12 }), 'query_id', 'incorrect_type');
    });

    it('PUT validates the same way and is a full replacement (name and query_id required)', async () => {
      const a = await created({ name: 'x', query_id: queryId });
      expectValidation(await update(a.id, { query_id: queryId }), 'name', 'missing');
      expectValidation(await update(a.id, { name: 'y' }), 'query_id', 'missing');
      expectValidation(await update(a.id, { name: 'y'.repeat(321), query_id: queryId }), 'name');
      expectValidation(await update(a.id, { name: 'y', description: 'd'.repeat(1024), query_id: queryId }), 'description');
      expectValidation(await update(a.id, { name: ' ', query_id: queryId }), 'name', 'missing');
      expect((await update(a.id, { name: 'y'.repeat(320), description: 'd'.repeat(1023), query_id: queryId })).statusCode).toBe(200);
      expect(json(await get(a.id)).name).toBe('y'.repeat(320));
    });

    it('the query must exist in this environment and this dataset: 400 {error} as documented', async () => {
      const bad = async (res: Res, error: string) => {
        expectLegacy(res, 400, error);
        expectContract(COLLECTION, 'POST', res);
      };
      await bad(await create({ name: 'x', query_id: 'no-such-query' }), 'Query ID included in body is invalid');
      await bad(await create({ name: 'x', query_id: otherQueryId }), 'Query is not in the dataset');
      await bad(await create({ name: 'x', query_id: allQueryId }), 'Query is not in the dataset');
      await bad(await create({ name: 'x', query_id: queryId }, '__all__'), 'Query is not in the dataset');
      const staging = await secondEnvironment(t, 'Annotations Staging');
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: DS } });
      const stagingQuery = await newQuery(DS, staging.headers);
      await bad(await create({ name: 'x', query_id: stagingQuery }), 'Query ID included in body is invalid');
      await bad(await create({ name: 'x', query_id: queryId }, DS, staging.headers), 'Query ID included in body is invalid');
      // A column id or any other object's id is not a query.
      const ann = await created({ name: 'x', query_id: queryId });
      await bad(await create({ name: 'x', query_id: ann.id }), 'Query ID included in body is invalid');
    });

    it('query_id cannot change; a different id in the body is refused', async () => {
      const a = await created({ name: 'x', query_id: queryId });
      const second = await newQuery(DS);
      const res = await update(a.id, { name: 'x', query_id: second });
      expectLegacy(res, 400, 'queries in annotations cannot be changed');
      expectContract(ITEM, 'PUT', res);
      expectLegacy(await update(a.id, { name: 'x', query_id: queryId, id: 'other' }), 400, 'Query annotation id included in body does not match URL');
      expect(json(await get(a.id)).query_id).toBe(queryId);
    });

    it('malformed JSON → 400; a non-object body → 422; an empty body → 400', async () => {
      expectProblem(await create('{"name":'), 400, 'unparseable');
      expectProblem(await create(''), 400, 'unparseable');
      const a = await created({ name: 'x', query_id: queryId });
      expectProblem(await update(a.id, '{oops'), 400, 'unparseable');
      expectProblem(await create('[]'), 422, 'validation-failed');
    });

    it('include_board_annotations takes true or false only', async () => {
      expectValidation(await list(DS, '?include_board_annotations=yes'), 'querystring.include_board_annotations');
      expect((await list(DS, '?include_board_annotations=false')).statusCode).toBe(200);
    });
  });

  describe('sources, datasets and environments', () => {
    it('lists board annotations only with include_board_annotations=true', async () => {
      const ds = 'annotated-boards';
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } });
      const q = await newQuery(ds);
      const mine = await created({ name: 'from query', query_id: q }, ds);
      const { environment } = await initialTenancy(t);
      const dataset = await t.store.getDataset(environment.id, ds);
      const board = await createQueryAnnotation(t.store, environment, dataset!, { name: 'from board', query_id: q }, 'board');
      expect(json(await list(ds)).map((x: { id: string }) => x.id)).toEqual([mine.id]);
      expect(json(await list(ds, '?include_board_annotations=false')).map((x: { id: string }) => x.id)).toEqual([mine.id]);
      const all = await list(ds, '?include_board_annotations=true');
      expectContract(COLLECTION, 'GET', all);
      expect(json(all).map((x: { id: string; source: string }) => [x.id, x.source])).toEqual([[mine.id, 'query'], [board.id, 'board']]);
      // A board annotation is readable by id like any other.
      expect(json(await get(board.id, ds)).source).toBe('board');
    });

    it('environment-wide annotations live under __all__', async () => {
      const a = await created({ name: 'env-wide', query_id: allQueryId }, '__all__');
      expect(json(await get(a.id, '__all__'))).toEqual(a);
      expect(json(await list('__all__')).map((x: { id: string }) => x.id)).toContain(a.id);
      expectLegacy(await get(a.id, DS), 404);
      expect(json(await list(DS)).map((x: { id: string }) => x.id)).not.toContain(a.id);
      expect((await update(a.id, { name: 'env-wide 2', query_id: allQueryId }, '__all__')).statusCode).toBe(200);
      expect((await del(a.id, '__all__')).statusCode).toBe(204);
    });

    it('an annotation is found only under its own dataset', async () => {
      const a = await created({ name: 'mine', query_id: queryId });
      for (const ds of [OTHER, '__all__']) {
        expectLegacy(await get(a.id, ds), 404, 'query annotation not found');
        expectLegacy(await update(a.id, { name: 'x', query_id: queryId }, ds), 404);
        expectLegacy(await del(a.id, ds), 404);
        expect(json(await list(ds)).map((x: { id: string }) => x.id)).not.toContain(a.id);
      }
      expect(json(await get(a.id)).name).toBe('mine');
    });

    it('unknown datasets → 404', async () => {
      expectDatasetNotFound(await list('nope'));
      expectDatasetNotFound(await create({ name: 'x', query_id: queryId }, 'nope'));
      expectDatasetNotFound(await get('abc', 'nope'));
      expectDatasetNotFound(await update('abc', { name: 'x', query_id: queryId }, 'nope'));
      expectDatasetNotFound(await del('abc', 'nope'));
      expectLegacy(await get('no-such-annotation'), 404, 'query annotation not found');
    });

    it("another environment's key gets 404 and changes nothing", async () => {
      const a = await created({ name: 'private', query_id: queryId });
      const staging = await secondEnvironment(t, 'Annotations Other');
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: DS } });
      expectLegacy(await get(a.id, DS, staging.headers), 404, 'query annotation not found');
      expectLegacy(await update(a.id, { name: 'stolen', query_id: queryId }, DS, staging.headers), 404);
      expectLegacy(await del(a.id, DS, staging.headers), 404);
      expect(json(await list(DS, '', staging.headers))).toEqual([]);
      expect(json(await get(a.id)).name).toBe('private');
    });

    it("a deleted dataset's annotations go with it", async () => {
      const ds = 'annotated-doomed';
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } });
      const a = await created({ name: 'x', query_id: await newQuery(ds) }, ds);
      expect((await deleteDataset(t, ds)).statusCode).toBe(202);
      expect(await t.store.getObject('query_annotation', a.id)).toBeUndefined();
    });
  });

  describe('permissions', () => {
    it('every route needs Manage Queries and Columns: 403 without it, and nothing changes', async () => {
      const a = await created({ name: 'guarded', query_id: queryId });
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { run_queries: true, create_datasets: true, manage_boards: true } });
      const h = key.headers;
      expectLegacy(await list(DS, '', h), 403);
      expectLegacy(await create({ name: 'x', query_id: queryId }, DS, h), 403);
      expectLegacy(await get(a.id, DS, h), 403);
      expectLegacy(await update(a.id, { name: 'changed', query_id: queryId }, DS, h), 403);
      expectLegacy(await del(a.id, DS, h), 403);
      expect(json(await get(a.id))).toEqual(a);
      const allowed = await addKey(t, team, environment, { permissions: { manage_columns: true } });
      expect((await get(a.id, DS, allowed.headers)).statusCode).toBe(200);
      expect((await del(a.id, DS, allowed.headers)).statusCode).toBe(204);
    });

    it('401 without a key or with an ingest key', async () => {
      expectLegacy(await t.app.inject({ method: 'GET', url: url(DS) }), 401);
      expectLegacy(await list(DS, '', t.ingest), 401);
    });
  });
});
