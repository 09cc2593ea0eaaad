// /1/queries: create (200, the spec echoed exactly as sent plus id) and get; every rule of the
// query specification at and past its boundary; `__all__`; dataset and environment isolation;
// permissions; hostile and malformed input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, deleteDataset, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, expectDatasetNotFound } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { validateQuerySpec } from '../src/query/validate.js';
import { getQuery } from '../src/domain/queries.js';
import { ApiError } from '../src/errors.js';
import { FILTER_OPS, QUERY_OPS } from '../src/query/spec.js';



const COLLECTION = '/1/queries/{datasetSlug}';
const ITEM = '/1/queries/{datasetSlug}/{queryId}';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('/1/queries', () => {
  let t: TestApp;
  const DS = 'queries-ds';
  const OTHER = 'other-ds';

  const post = (body: unknown, ds = DS, headers = t.config) => sendJson(t, 'POST', `/1/queries/${encodeURIComponent(ds)}`, body, headers);
  const get = (id: string, ds = DS, headers = t.config) =>
    t.app.inject({ method: 'GET', url: `/1/queries/${encodeURIComponent(ds)}/${encodeURIComponent(id)}`, headers });

  /** Creates the query, checks the echo is exactly what was sent plus id, and that GET agrees. */
  async function created(body: Record<string, unknown>, ds = DS) {
    const res = await post(body, ds);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(COLLECTION, 'POST', res);
    const out = json(res);
    expect(typeof out.id).toBe('string');
    expect(out.id.length).toBeGreaterThan(0);
    const { id, ...rest } = out;
    expect(rest).toEqual(body);
    // Same keys in the same order as sent (no reordering, no defaults).
    expect(Object.keys(rest)).toEqual(Object.keys(body));
    const again = await get(id, ds);
    expect(again.statusCode, again.body).toBe(200);
    expectContract(ITEM, 'GET', again);
    expect(again.body).toBe(res.body);
    return out;
  }

  beforeAll(async () => {
    t = await makeApp();
    for (const name of [DS, OTHER]) {
      const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(() => t.close());

  describe('create and get', () => {
    it('answers 200 with the spec as sent plus id (the OpenAPI examples)', async () => {
      await created({ calculations: [{ op: 'COUNT' }], orders: [{ op: 'COUNT', order: 'descending' }], time_range: 7200 });
      await created({
        calculations: [{ op: 'COUNT' }],
        breakdowns: ['user_agent'],
        filters: [{ op: '>=', column: 'response.status_code', value: 400 }],
        orders: [{ op: 'COUNT', order: 'descending' }],
        time_range: 7200,
      });
      await created({
        calculations: [{ op: 'COUNT' }],
        breakdowns: ['response.status_code'],
        filters: [{ op: '=', column: 'adhoc_check', value: true }],
        calculated_fields: [{ name: 'adhoc_check', expression: 'GT($response.status_code, 200)' }],
        orders: [{ op: 'COUNT', order: 'descending' }],
        time_range: 7200,
      });
      await created({
        calculations: [{ op: 'COUNT' }],
        breakdowns: ['name', 'root.response.status_code'],
        filters: [{ op: '=', column: 'child.response.status_code', value: 400 }],
        orders: [{ op: 'COUNT', order: 'descending' }],
        time_range: 3600,
        compare_time_offset_seconds: 86400,
      });
    });

    it('keeps calculation order, filter order, filter_combination and key order exactly as sent', async () => {
      await created({
        time_range: 3600,
        filter_combination: 'AND',
        calculations: [
          { column: 'duration_ms', op: 'P99' },
          { op: 'COUNT' },
          { op: 'AVG', column: 'size' },
          { op: 'HEATMAP', column: 'duration_ms' },
          { op: 'COUNT_DISTINCT', column: 'user' },
        ],
        filters: [
          { column: 'b', op: 'exists' },
          { column: 'a', op: '!=', value: 'x' },
        ],
        breakdowns: ['z', 'a'],
        orders: [{ column: 'z' }, { op: 'AVG', column: 'size', order: 'ascending' }],
        havings: [{ op: '>', calculate_op: 'P99', column: 'duration_ms', value: 1.5 }],
        limit: 1000,
      });
      await created({ filter_combination: 'OR', filters: [{ column: 'a', op: 'exists' }, { column: 'b', op: 'exists' }] });
    });

    it('adds no defaults: an empty spec comes back as just an id', async () => {
      const res = await post({});
      expect(res.statusCode).toBe(200);
      expect(Object.keys(json(res))).toEqual(['id']);
      await created({ calculations: [] });
      await created({ calculations: [], filters: [], breakdowns: [], orders: [], havings: [], calculated_fields: [] });
    });

    it('ignores unknown fields and read-only id, and treats top-level null as absent', async () => {
      const res = await post({
        id: 'chosen-by-client',
        formulas: [{ name: 'f', expression: 'x' }],
        calculations: [{ op: 'COUNT', name: 'named', filters: [] }],
        filters: [{ column: 'a', op: '=', value: 1, extra: true }],
        limit: null,
        breakdowns: null,
        orders: [{ op: 'COUNT', column: null, order: null }],
        time_range: 60,
      });
      expect(res.statusCode, res.body).toBe(200);
      const out = json(res);
      expect(out.id).not.toBe('chosen-by-client');
      expect(out).toEqual({
        id: out.id,
        calculations: [{ op: 'COUNT' }],
        filters: [{ column: 'a', op: '=', value: 1 }],
        orders: [{ op: 'COUNT' }],
        time_range: 60,
      });
      expect(json(await get(out.id))).toEqual(out);
    });

    it('gives every query its own id', async () => {
      const ids = new Set<string>();
      for (const _ of range(20)) ids.add(json(await post({ time_range: 60 })).id);
      expect(ids.size).toBe(20);
    });

    it('accepts the dataset by name, case-insensitively, like other /1/ paths', async () => {
      const q = json(await post({ time_range: 60 }, 'Queries-DS'));
      expect((await get(q.id, DS)).statusCode).toBe(200);
      expect((await get(q.id, 'QUERIES-DS')).statusCode).toBe(200);
    });

    it('stores column names that look like SQL or markup verbatim: they are only names', async () => {
      const hostile = `x"; DROP TABLE objects; --`;
      await created({
        calculations: [{ op: 'SUM', column: hostile }, { op: 'MAX', column: "a'b" }],
        filters: [
          { column: `' OR 1=1 --`, op: '=', value: `'); DELETE FROM objects; --` },
          { column: '<script>alert(1)</script>', op: 'in', value: ['\u0000', 'ünïcødé', '🐝'] },
        ],
        breakdowns: [hostile, '$weird.name'],
        orders: [{ column: hostile, order: 'descending' }],
        calculated_fields: [{ name: 'robert"); --', expression: 'CONCAT($a, "b")' }],
      });
      // The store still works.
      expect((await post({ time_range: 60 })).statusCode).toBe(200);
    });

    it('exposes getQuery() for other modules, with the same isolation', async () => {
      const q = json(await post({ time_range: 60, calculations: [{ op: 'COUNT' }] }));
      const { environment } = await initialTenancy(t);
      expect(await getQuery(t.store, environment, DS, q.id)).toEqual(q);
      await expect(getQuery(t.store, environment, OTHER, q.id)).rejects.toMatchObject({ status: 404 });
      await expect(getQuery(t.store, environment, '__all__', q.id)).rejects.toMatchObject({ status: 404 });
      await expect(getQuery(t.store, environment, 'no-such-ds', q.id)).rejects.toMatchObject({ status: 404, message: 'Dataset not found' });
    });

    it('is in the served OpenAPI document', async () => {
      const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
      expect(doc.paths['/1/queries/{datasetSlug}'].post.responses['200']).toBeDefined();
      expect(doc.paths['/1/queries/{datasetSlug}/{queryId}'].get.responses['200']).toBeDefined();
      expect(doc.paths['/1/queries/{datasetSlug}'].get).toBeUndefined();
    });
  });

  describe('__all__, datasets and environments', () => {
    it('creates and reads environment-wide queries under __all__', async () => {
      const q = await created({ calculations: [{ op: 'COUNT' }], time_range: 600 }, '__all__');
      // Not under a dataset.
      expectLegacy(await get(q.id, DS), 404, 'query not found');
    });

    it('finds a query only under the dataset it was made on', async () => {
      const q = json(await post({ time_range: 60 }));
      expectLegacy(await get(q.id, OTHER), 404, 'query not found');
      expectLegacy(await get(q.id, '__all__'), 404, 'query not found');
      expectLegacy(await get('nope'), 404, 'query not found');
      expectLegacy(await get(''), 404);
    });

    it('unknown datasets are 404 before the body is looked at', async () => {
      expectDatasetNotFound(await post({ time_range: 60 }, 'no-such-dataset'));
      expectDatasetNotFound(await post({ limit: 'bad' }, 'no-such-dataset'));
      expectDatasetNotFound(await get('abc', 'no-such-dataset'));
    });

    it("another environment's key gets 404 for this environment's queries", async () => {
      const q = json(await post({ time_range: 60 }));
      const all = json(await post({ time_range: 60 }, '__all__'));
      const staging = await secondEnvironment(t);
      // Same dataset name in the other environment: still not the same dataset.
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: DS } });
      expectLegacy(await get(q.id, DS, staging.headers), 404, 'query not found');
      expectLegacy(await get(all.id, '__all__', staging.headers), 404, 'query not found');
      expectDatasetNotFound(await get(q.id, OTHER, staging.headers));
      // And its own queries work.
      const own = json(await post({ time_range: 60 }, DS, staging.headers));
      expect((await get(own.id, DS, staging.headers)).statusCode).toBe(200);
      expectLegacy(await get(own.id, DS), 404, 'query not found');
    });

    it("a deleted dataset's queries are gone with it", async () => {
      const name = 'doomed-queries';
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } });
      const q = json(await post({ time_range: 60 }, name));
      expect((await deleteDataset(t, name)).statusCode).toBe(202);
      await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } });
      expectLegacy(await get(q.id, name), 404, 'query not found');
      expect(await t.store.getObject('query', q.id)).toBeUndefined();
    });
  });

  describe('permissions', () => {
    it('needs Manage Queries and Columns: 403 without it, and nothing is stored', async () => {
      const { team, environment } = await initialTenancy(t);
      const q = json(await post({ time_range: 60 }));
      const key = await addKey(t, team, environment, { permissions: { run_queries: true, create_datasets: true, send_events: true } });
      const before = (await t.store.listObjects('query', { environmentId: environment.id })).length;
      expectLegacy(await post({ time_range: 60 }, DS, key.headers), 403);
      expectLegacy(await get(q.id, DS, key.headers), 403);
      expect((await t.store.listObjects('query', { environmentId: environment.id })).length).toBe(before);
      const allowed = await addKey(t, team, environment, { permissions: { manage_columns: true } });
      expect((await post({ time_range: 60 }, DS, allowed.headers)).statusCode).toBe(200);
      expect((await get(q.id, DS, allowed.headers)).statusCode).toBe(200);
    });

    it('401 without a key, with an ingest key', async () => {
      expectLegacy(await t.app.inject({ method: 'POST', url: `/1/queries/${DS}`, payload: {} }), 401);
      expectLegacy(await post({}, DS, t.ingest), 401);
    });
  });

  describe('malformed and hostile bodies', () => {
    it('malformed JSON → 400, empty body → 400', async () => {
      expectProblem(await post('{"calculations": ['), 400, 'unparseable');
      expectProblem(await post('not json'), 400, 'unparseable');
      expectProblem(await post(''), 400, 'unparseable');
    });

    it('a body that is not an object → 422 incorrect_type on body', async () => {
      expectValidation(await post('[]'), 'body', 'incorrect_type');
      expectValidation(await post('"x"'), 'body', 'incorrect_type');
      expectValidation(await post('7'), 'body', 'incorrect_type');
      expectValidation(await post('null'), 'body', 'incorrect_type');
    });

    it('huge arrays are refused without trouble; bodies past the limit → 413', async () => {
      expectValidation(await post({ breakdowns: range(50_000).map(() => 'a') }), 'breakdowns');
      expectValidation(await post({ filters: range(5_000).map(() => ({ column: 'a', op: 'exists' })) }), 'filters');
      expectProblem(await post({ breakdowns: range(200_000).map((i) => `column-${i}`) }), 413, 'payload-too-large');
    });

    it('reports every problem at once', async () => {
      const body = expectValidation(await post({ limit: 0, time_range: 'x', calculations: [{ op: 'SUM' }] }), 'limit');
      const fields = body.type_detail.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['limit', 'time_range', 'calculations.0.column']));
      expect(body.detail).toContain('limit:');
    });
  });

  describe('validation', () => {
    const accepted = async (body: Record<string, unknown>) => {
      const res = await post(body);
      expect(res.statusCode, `${JSON.stringify(body).slice(0, 200)} → ${res.body}`).toBe(200);
      return json(res);
    };
    const refused = async (body: unknown, field: string, code = 'invalid') => expectValidation(await post(body), field, code);

    it('calculations: at most 100, ops, and which take a column', async () => {
      await accepted({ calculations: range(100).map(() => ({ op: 'COUNT' })) });
      await refused({ calculations: range(101).map(() => ({ op: 'COUNT' })) }, 'calculations');
      await refused({ calculations: { op: 'COUNT' } }, 'calculations', 'incorrect_type');
      await refused({ calculations: ['COUNT'] }, 'calculations.0', 'incorrect_type');
      await refused({ calculations: [{ column: 'x' }] }, 'calculations.0.op', 'missing');
      await refused({ calculations: [{ op: 'count' }] }, 'calculations.0.op');
      await refused({ calculations: [{ op: 'MEDIAN', column: 'x' }] }, 'calculations.0.op');
      await refused({ calculations: [{ op: 5 }] }, 'calculations.0.op', 'incorrect_type');
      for (const op of QUERY_OPS) {
        const noColumn = op === 'COUNT' || op === 'CONCURRENCY';
        await accepted({ calculations: [noColumn ? { op } : { op, column: 'duration_ms' }] });
        if (noColumn) {
          await accepted({ calculations: [{ op, column: null }] });
          await refused({ calculations: [{ op: 'COUNT' }, { op, column: 'x' }] }, 'calculations.1.column');
          await refused({ calculations: [{ op, column: '' }] }, 'calculations.0.column');
        } else {
          await refused({ calculations: [{ op: 'COUNT' }, { op }] }, 'calculations.1.column', 'missing');
          await refused({ calculations: [{ op, column: null }] }, 'calculations.0.column', 'missing');
          await refused({ calculations: [{ op, column: '' }] }, 'calculations.0.column', 'missing');
        }
      }
      await refused({ calculations: [{ op: 'SUM', column: 5 }] }, 'calculations.0.column', 'incorrect_type');
    });

    it('filters: at most 100, the 16 ops, column required, value by op', async () => {
      await accepted({ filters: range(100).map(() => ({ column: 'a', op: 'exists' })) });
      await refused({ filters: range(101).map(() => ({ column: 'a', op: 'exists' })) }, 'filters');
      await refused({ filters: 'a = 1' }, 'filters', 'incorrect_type');
      await refused({ filters: [null] }, 'filters.0', 'incorrect_type');
      await refused({ filters: [{ op: 'exists' }] }, 'filters.0.column', 'missing');
      await refused({ filters: [{ column: null, op: 'exists' }] }, 'filters.0.column');
      await refused({ filters: [{ column: '', op: 'exists' }] }, 'filters.0.column', 'missing');
      await refused({ filters: [{ column: 3, op: 'exists' }] }, 'filters.0.column', 'incorrect_type');
      await refused({ filters: [{ column: 'a' }] }, 'filters.0.op', 'missing');
      await refused({ filters: [{ column: 'a', op: 'like', value: 'x' }] }, 'filters.0.op');
      await refused({ filters: [{ column: 'a', op: '==', value: 'x' }] }, 'filters.0.op');
      expect(FILTER_OPS).toHaveLength(16);
      for (const op of FILTER_OPS) {
        if (op === 'exists' || op === 'does-not-exist') {
          await accepted({ filters: [{ column: 'a', op }] });
          await accepted({ filters: [{ column: 'a', op, value: null }] });
          await refused({ filters: [{ column: 'a', op, value: 'x' }] }, 'filters.0.value');
          await refused({ filters: [{ column: 'a', op, value: false }] }, 'filters.0.value');
        } else if (op === 'in' || op === 'not-in') {
          await accepted({ filters: [{ column: 'a', op, value: ['x'] }] });
          await accepted({ filters: [{ column: 'a', op, value: ['x', 'y', ''] }] });
          await refused({ filters: [{ column: 'a', op }] }, 'filters.0.value', 'missing');
          await refused({ filters: [{ column: 'a', op, value: [] }] }, 'filters.0.value');
          await refused({ filters: [{ column: 'a', op, value: 'x' }] }, 'filters.0.value', 'incorrect_type');
          await refused({ filters: [{ column: 'a', op, value: ['x', 1] }] }, 'filters.0.value.1', 'incorrect_type');
        } else {
          for (const value of ['x', '', 0, -1.5, true, false]) await accepted({ filters: [{ column: 'a', op, value }] });
          await refused({ filters: [{ column: 'a', op }] }, 'filters.0.value', 'missing');
          await refused({ filters: [{ column: 'a', op, value: null }] }, 'filters.0.value', 'missing');
          await refused({ filters: [{ column: 'a', op, value: ['x'] }] }, 'filters.0.value', 'incorrect_type');
          await refused({ filters: [{ column: 'a', op, value: { x: 1 } }] }, 'filters.0.value', 'incorrect_type');
        }
      }
      await refused({ filters: [{ column: 'a', op: 'exists' }, { column: 'b', op: '=' }] }, 'filters.1.value', 'missing');
    });

    it('filter_combination: AND or OR', async () => {
      await accepted({ filter_combination: 'AND' });
      await accepted({ filter_combination: 'OR' });
      await refused({ filter_combination: 'and' }, 'filter_combination');
      await refused({ filter_combination: 'XOR' }, 'filter_combination');
      await refused({ filter_combination: 1 }, 'filter_combination', 'incorrect_type');
    });

    it('breakdowns: at most 100 non-empty strings', async () => {
      await accepted({ breakdowns: range(100).map((i) => `c${i}`) });
      await refused({ breakdowns: range(101).map((i) => `c${i}`) }, 'breakdowns');
      await refused({ breakdowns: 'a' }, 'breakdowns', 'incorrect_type');
      await refused({ breakdowns: ['a', ''] }, 'breakdowns.1', 'missing');
      await refused({ breakdowns: ['a', 1] }, 'breakdowns.1', 'incorrect_type');
    });

    it('orders: a breakdown or a calculation, no HEATMAP, ascending or descending, at most 100', async () => {
      await accepted({ breakdowns: ['a'], orders: [{ column: 'a' }, { column: 'a', order: 'descending' }] });
      await accepted({ orders: [{ op: 'COUNT' }] }); // omitted calculations mean COUNT
      await accepted({ calculations: [], orders: [{ op: 'COUNT', order: 'ascending' }] });
      await accepted({ calculations: [{ op: 'P95', column: 'd' }], orders: [{ op: 'P95', column: 'd' }] });
      await accepted({ calculations: [{ op: 'CONCURRENCY' }], orders: [{ op: 'CONCURRENCY' }] });
      await accepted({ breakdowns: ['a'], orders: range(100).map(() => ({ column: 'a' })) });
      await refused({ breakdowns: ['a'], orders: range(101).map(() => ({ column: 'a' })) }, 'orders');
      await refused({ breakdowns: ['a'], orders: [{ column: 'b' }] }, 'orders.0');
      await refused({ orders: [{ column: 'a' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'P95', column: 'd' }], orders: [{ op: 'COUNT' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'P95', column: 'd' }], orders: [{ op: 'P95', column: 'e' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'P95', column: 'd' }], orders: [{ op: 'P95' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'SUM', column: 'd' }], orders: [{ column: 'd' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'COUNT' }], orders: [{ op: 'COUNT', column: 'x' }] }, 'orders.0');
      await refused({ calculations: [{ op: 'HEATMAP', column: 'd' }], orders: [{ op: 'HEATMAP', column: 'd' }] }, 'orders.0.op');
      await refused({ orders: [{}] }, 'orders.0');
      await refused({ orders: [{ order: 'descending' }] }, 'orders.0');
      await refused({ breakdowns: ['a'], orders: [{ column: 'a', order: 'desc' }] }, 'orders.0.order');
      await refused({ orders: [{ op: 'NOPE' }] }, 'orders.0.op');
      await refused({ orders: [{ column: 5 }] }, 'orders.0.column', 'incorrect_type');
      await refused({ orders: ['a'] }, 'orders.0', 'incorrect_type');
      await refused({ breakdowns: ['a'], orders: [{ column: 'a' }, { column: 'z' }] }, 'orders.1');
    });

    it('havings: calculate_op + column match a calculation, no HEATMAP, op and numeric value, at most 100', async () => {
      const calcs = [{ op: 'COUNT' }, { op: 'P99', column: 'd' }, { op: 'HEATMAP', column: 'd' }];
      await accepted({ calculations: calcs, havings: [{ calculate_op: 'P99', column: 'd', op: '>', value: 100 }] });
      await accepted({ havings: [{ calculate_op: 'COUNT', op: '>=', value: 0 }] });
      await accepted({ havings: [{ calculate_op: 'COUNT', column: null, op: '<', value: -2.5 }] });
      for (const op of ['=', '!=', '>', '>=', '<', '<=']) await accepted({ havings: [{ calculate_op: 'COUNT', op, value: 1 }] });
      await accepted({ havings: range(100).map(() => ({ calculate_op: 'COUNT', op: '>', value: 1 })) });
      await refused({ havings: range(101).map(() => ({ calculate_op: 'COUNT', op: '>', value: 1 })) }, 'havings');
      await refused({ calculations: calcs, havings: [{ calculate_op: 'P99', column: 'e', op: '>', value: 1 }] }, 'havings.0');
      await refused({ calculations: calcs, havings: [{ calculate_op: 'AVG', column: 'd', op: '>', value: 1 }] }, 'havings.0');
      await refused({ calculations: calcs, havings: [{ calculate_op: 'HEATMAP', column: 'd', op: '>', value: 1 }] }, 'havings.0.calculate_op');
      await refused({ havings: [{ op: '>', value: 1 }] }, 'havings.0.calculate_op', 'missing');
      await refused({ havings: [{ calculate_op: 'COUNT', value: 1 }] }, 'havings.0.op', 'missing');
      await refused({ havings: [{ calculate_op: 'COUNT', op: 'exists', value: 1 }] }, 'havings.0.op');
      await refused({ havings: [{ calculate_op: 'COUNT', op: '>' }] }, 'havings.0.value', 'missing');
      await refused({ havings: [{ calculate_op: 'COUNT', op: '>', value: '10' }] }, 'havings.0.value', 'incorrect_type');
      await refused({ havings: [{ calculate_op: 'COUNT', op: '>', value: true }] }, 'havings.0.value', 'incorrect_type');
      await refused('{"havings":[{"calculate_op":"COUNT","op":">","value":1e400}]}', 'havings.0.value', 'incorrect_type');
      await refused({ havings: [{ calculate_op: 'COUNT', column: 7, op: '>', value: 1 }] }, 'havings.0.column', 'incorrect_type');
    });

    it('limit: integer 1..1000 (10000 for disable_series results)', async () => {
      await accepted({ limit: 1 });
      await accepted({ limit: 1000 });
      await refused({ limit: 0 }, 'limit');
      await refused({ limit: -1 }, 'limit');
      await refused({ limit: 1001 }, 'limit');
      await refused({ limit: 10000 }, 'limit');
      await refused({ limit: 1.5 }, 'limit', 'incorrect_type');
      await refused({ limit: '10' }, 'limit', 'incorrect_type');
      expect(validateQuerySpec({ limit: 10000 }, { maxLimit: 10000 })).toEqual({ limit: 10000 });
      expect(() => validateQuerySpec({ limit: 10001 }, { maxLimit: 10000 })).toThrow(ApiError);
    });

    it('time_range, start_time, end_time: integers ≥ 1 in the allowed combinations', async () => {
      const start = 1_700_000_000;
      await accepted({ time_range: 1 });
      await accepted({ start_time: 1, end_time: 2 });
      await accepted({ start_time: start, end_time: start + 7200 });
      await accepted({ time_range: 600, start_time: start });
      await accepted({ time_range: 600, end_time: start });
      await accepted({ start_time: start });
      await accepted({ end_time: start });
      await refused({ time_range: 0 }, 'time_range');
      await refused({ time_range: -7200 }, 'time_range');
      await refused({ time_range: 1.5 }, 'time_range', 'incorrect_type');
      await refused({ time_range: '7200' }, 'time_range', 'incorrect_type');
      await refused({ start_time: 0, end_time: 10 }, 'start_time');
      await refused({ start_time: 1, end_time: 0 }, 'end_time');
      await refused({ start_time: '1' }, 'start_time', 'incorrect_type');
      await refused({ end_time: 1.25 }, 'end_time', 'incorrect_type');
      await refused({ start_time: start, end_time: start }, 'start_time');
      await refused({ start_time: start + 1, end_time: start }, 'start_time');
      await refused({ time_range: 600, start_time: start, end_time: start + 600 }, 'time_range');
    });

    it('granularity: 0 = automatic, otherwise T/1000 … T seconds', async () => {
      await accepted({ granularity: 0 });
      await accepted({ granularity: 8 }); // default T = 7200: at least ceil(7.2)
      await accepted({ granularity: 7200 });
      await refused({ granularity: 7 }, 'granularity');
      await refused({ granularity: 7201 }, 'granularity');
      await refused({ granularity: -1 }, 'granularity');
      await refused({ granularity: 1.5 }, 'granularity', 'incorrect_type');
      await refused({ granularity: '60' }, 'granularity', 'incorrect_type');
      await accepted({ time_range: 60, granularity: 1 });
      await accepted({ time_range: 60, granularity: 60 });
      await refused({ time_range: 60, granularity: 61 }, 'granularity');
      await accepted({ time_range: 86400, granularity: 87 });
      await refused({ time_range: 86400, granularity: 86 }, 'granularity');
      const start = 1_700_000_000;
      await accepted({ start_time: start, end_time: start + 100_000, granularity: 100 });
      await refused({ start_time: start, end_time: start + 100_000, granularity: 99 }, 'granularity');
      await accepted({ start_time: start, end_time: start + 100_000, granularity: 100_000 });
      await refused({ start_time: start, end_time: start + 100_000, granularity: 100_001 }, 'granularity');
    });

    it('compare_time_offset_seconds: an allowed offset, at least the query duration', async () => {
      for (const offset of [7200, 28800, 86400, 604800, 2419200, 15724800]) await accepted({ compare_time_offset_seconds: offset });
      await accepted({ time_range: 1800, compare_time_offset_seconds: 1800 });
      await accepted({ time_range: 3600, compare_time_offset_seconds: 3600 });
      await refused({ compare_time_offset_seconds: 3600 }, 'compare_time_offset_seconds'); // default T = 7200
      await refused({ time_range: 1801, compare_time_offset_seconds: 1800 }, 'compare_time_offset_seconds');
      const start = 1_700_000_000;
      await refused({ start_time: start, end_time: start + 86401, compare_time_offset_seconds: 86400 }, 'compare_time_offset_seconds');
      await refused({ compare_time_offset_seconds: 1234 }, 'compare_time_offset_seconds');
      await refused({ compare_time_offset_seconds: '86400' }, 'compare_time_offset_seconds', 'incorrect_type');
    });

    it('calculated_fields: at most 100 of {name, expression}, non-empty, names unique', async () => {
      await accepted({ calculated_fields: range(100).map((i) => ({ name: `f${i}`, expression: '$a' })) });
      await refused({ calculated_fields: range(101).map((i) => ({ name: `f${i}`, expression: '$a' })) }, 'calculated_fields');
      await refused({ calculated_fields: {} }, 'calculated_fields', 'incorrect_type');
      await refused({ calculated_fields: [{ expression: '$a' }] }, 'calculated_fields.0.name', 'missing');
      await refused({ calculated_fields: [{ name: 'f' }] }, 'calculated_fields.0.expression', 'missing');
      await refused({ calculated_fields: [{ name: '', expression: '$a' }] }, 'calculated_fields.0.name', 'missing');
      await refused({ calculated_fields: [{ name: '  ', expression: '$a' }] }, 'calculated_fields.0.name', 'missing');
      await refused({ calculated_fields: [{ name: 'f', expression: '' }] }, 'calculated_fields.0.expression', 'missing');
      await refused({ calculated_fields: [{ name: 'f', expression: 5 }] }, 'calculated_fields.0.expression', 'incorrect_type');
      await refused({ calculated_fields: [{ name: 1, expression: '$a' }] }, 'calculated_fields.0.name', 'incorrect_type');
      await refused(
        { calculated_fields: [{ name: 'f', expression: '$a' }, { name: 'g', expression: '$b' }, { name: 'f', expression: '$c' }] },
        'calculated_fields.2.name',
      );
      await accepted({ calculated_fields: [{ name: 'f', expression: '$a' }, { name: 'F', expression: '$b' }] });
    });

    it('the Query schema validates: nulls are not set, a member an op refuses, one problem per wrong type, 404 first', async () => {
      const out = await accepted({ calculations: [{ op: 'COUNT', column: null }], filters: null, limit: null, orders: [{ op: 'COUNT', column: null, order: null }] });
      expect(out.calculations).toEqual([{ op: 'COUNT', column: null }]);
      expect(out.orders).toEqual([{ op: 'COUNT' }]);
      expect('filters' in out || 'limit' in out).toBe(false);
      const refusedValue = await refused({ filters: [{ column: 'a', op: 'exists', value: 'x' }] }, 'filters.0.value');
      expect(refusedValue.type_detail).toEqual([{ field: 'filters.0.value', code: 'invalid', description: 'must not be given here' }]);
      const typed = await refused({ calculations: [{ op: 5 }], compare_time_offset_seconds: '86400' }, 'calculations.0.op', 'incorrect_type');
      expect(typed.type_detail.map((d: { field: string; code: string }) => `${d.field} ${d.code}`).sort()).toEqual([
        'calculations.0.op incorrect_type',
        'compare_time_offset_seconds incorrect_type',
      ]);
      expectDatasetNotFound(await post({ limit: 'x' }, 'no-such-dataset'));
    });

    it('calculated_fields: expressions must parse (422 with the position)', async () => {
      await accepted({ calculated_fields: [{ name: 'ok', expression: 'IF(GT($a, 1), "big", "small")' }] });
      for (const expression of ['1 +', 'FOO(', ')', 'x', '$a $b', 'NO_SUCH_FUNCTION($a)', 'IF()']) {
        const body = await refused({ calculated_fields: [{ name: 'ok', expression: '$a' }, { name: 'bad', expression }] }, 'calculated_fields.1.expression');
        expect(body.type_detail[0].description).toMatch(/at position \d+/);
      }
    });
  });
});
