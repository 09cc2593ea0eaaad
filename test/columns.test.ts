// /1/columns: columns made by ingest and by the API, type inference and widening (checked in
// the event store), API type vs stored type, validation at and past every boundary, 409s,
// delete then re-ingest, last_written, regular_columns_count, `__all__`, permissions and
// tenancy isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { expectProblem, expectLegacy, expectDatasetNotFound, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { IngestWriter } from '../src/ingest/writer.js';
import { columnsOf } from '../src/stores/events/columns.js';
import { tableName } from '../src/stores/events/types.js';
import type { Column, Dataset } from '../src/stores/config/types.js';

const COLLECTION = '/1/columns/{datasetSlug}';
const ITEM = '/1/columns/{datasetSlug}/{columnId}';
const COLUMN_FIELDS = ['created_at', 'description', 'hidden', 'id', 'key_name', 'type', 'updated_at'];

// Not the shared one of ./problems.js: `code` is checked only when given (some refusals here are
// incorrect_type, some invalid); the shared expectValidation always checks a code.
function expectValidation(res: Res, field: string, code?: string) {
  const body = expectProblem(res, 422, 'validation-failed');
  expectSchema('ValidationError', body);
  const entry = body.type_detail.find((d: { field: string }) => d.field === field);
  expect(entry, `type_detail for ${field} in ${res.body}`).toBeDefined();
  if (code) expect(entry.code).toBe(code);
  // The problem alone, as Honeycomb's; `detail` names the field.
  expect(entry.description.startsWith(`${field}:`), entry.description).toBe(false);
  expect(body.detail).toContain(`${field}: ${entry.description}`);
  return entry;
}

describe('/1/columns', () => {
  let t: TestApp;
  let n = 0;
  /** A fresh dataset name per test: tests share one app. */
  const fresh = (prefix = 'cols') => `${prefix}-${++n}`;
  let eventTime = Date.parse('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    t = await makeApp();
    // Event times in order, so stored values can be read back in the order they were sent.
    eventTime = t.clock.ms - 3_600_000;
  });
  afterAll(() => t.close());

  const ingest = async (ds: string, events: Record<string, unknown>[], headers = t.ingest) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/1/batch/${ds}`,
      headers,
      payload: events.map((data) => ({ data, time: new Date((eventTime += 1000)).toISOString() })),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual(events.map(() => ({ status: 202 })));
    // The columns' last_written recorded now: the background flush (every 2 s) must not change a
    // column between two reads of a test.
    await t.app.writer.flushBookkeeping();
  };
  const list = (ds: string, headers = t.config, query = '') => t.app.inject({ method: 'GET', url: `/1/columns/${ds}${query}`, headers });
  const byName = (ds: string, key: string, headers = t.config) => list(ds, headers, `?key_name=${encodeURIComponent(key)}`);
  const create = (ds: string, payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'POST', url: `/1/columns/${ds}`, headers, payload: payload as object });
  const get = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/columns/${ds}/${id}`, headers });
  const put = (ds: string, id: string, payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'PUT', url: `/1/columns/${ds}/${id}`, headers, payload: payload as object });
  const del = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/columns/${ds}/${id}`, headers });
  const makeDataset = async (name: string, headers = t.config) => {
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers, payload: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };

  /** The column as the API shows it (via ?key_name), checked against the contract. */
  const column = async (ds: string, key: string) => {
    const res = await byName(ds, key);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(COLLECTION, 'get', res);
    return json(res);
  };
  const datasetRecord = async (slug: string, envId?: string): Promise<Dataset> => {
    const env = envId ?? (await initialTenancy(t)).environment.id;
    const ds = await t.store.getDataset(env, slug);
    if (!ds) throw new Error(`no dataset ${slug}`);
    return ds;
  };
  const columnRecord = async (slug: string, key: string): Promise<Column | undefined> =>
    (await t.store.listColumns((await datasetRecord(slug)).id)).find((c) => c.keyName === key);
  /** The DuckDB type of a field's physical column. */
  const physicalType = async (slug: string, key: string) => {
    const ds = await datasetRecord(slug);
    const col = await columnRecord(slug, key);
    if (!col) throw new Error(`no column ${key}`);
    const rows = await t.events.query(
      'SELECT data_type FROM information_schema.columns WHERE table_name = ? AND column_name = ?',
      [tableName(ds.id), col.physical],
    );
    return rows[0]?.data_type;
  };
  /** The stored values of a field, in event-time order (NULLs included). */
  const storedValues = async (slug: string, key: string) => {
    const ds = await datasetRecord(slug);
    const col = await columnRecord(slug, key);
    if (!col) throw new Error(`no column ${key}`);
    const rows = await t.events.query(`SELECT "${col.physical}" AS v FROM ${tableName(ds.id)} ORDER BY __time`);
    return rows.map((r) => r.v);
  };
  const physicalColumns = async (slug: string) => {
    const ds = await datasetRecord(slug);
    const rows = await t.events.query(
      "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND column_name NOT LIKE '\\_\\_%' ESCAPE '\\' ORDER BY column_name",
      [tableName(ds.id)],
    );
    return rows.map((r) => r.column_name);
  };

  describe('columns made by ingest', () => {
    it('infers string, integer, float and boolean, lists them by key name and matches the contract', async () => {
      const ds = fresh();
      await ingest(ds, [{ s: 'hello', i: 42, f: 1.5, b: true }]);
      const res = await list(ds);
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
      expectContract(COLLECTION, 'get', res);
      const cols = json(res);
      expect(cols.map((c: { key_name: string; type: string }) => [c.key_name, c.type])).toEqual([
        ['b', 'boolean'],
        ['f', 'float'],
        ['i', 'integer'],
        ['s', 'string'],
      ]);
      for (const c of cols) {
        expect(c.description).toBe('');
        expect(c.hidden).toBe(false);
        expect(typeof c.id).toBe('string');
        expect(Number.isNaN(Date.parse(c.created_at))).toBe(false);
      }
      expect(new Set(cols.map((c: { id: string }) => c.id)).size).toBe(4);
      expect(await physicalType(ds, 'i')).toBe('BIGINT');
      expect(await physicalType(ds, 'f')).toBe('DOUBLE');
      expect(await physicalType(ds, 'b')).toBe('BOOLEAN');
      expect(await physicalType(ds, 's')).toBe('VARCHAR');
      expect(await storedValues(ds, 'i')).toEqual([42n]);
      expect(await storedValues(ds, 'b')).toEqual([true]);
    });

    it('a whole-number float such as 2.0 arrives as JSON 2 and is an integer', async () => {
      const ds = fresh();
      await ingest(ds, [{ x: 2.0 }]);
      expect((await column(ds, 'x')).type).toBe('integer');
    });

    it('widens integer then float to float, converting the stored values', async () => {
      const ds = fresh();
      await ingest(ds, [{ v: 3 }]);
      expect((await column(ds, 'v')).type).toBe('integer');
      await ingest(ds, [{ v: 2.5 }]);
      expect((await column(ds, 'v')).type).toBe('float');
      expect((await columnRecord(ds, 'v'))?.storedType).toBe('float');
      expect(await physicalType(ds, 'v')).toBe('DOUBLE');
      expect(await storedValues(ds, 'v')).toEqual([3, 2.5]);
      // float then integer stays float
      await ingest(ds, [{ v: 7 }]);
      expect((await column(ds, 'v')).type).toBe('float');
      expect(await storedValues(ds, 'v')).toEqual([3, 2.5, 7]);
    });

    it('widens integer then string to string', async () => {
      const ds = fresh();
      await ingest(ds, [{ v: 3 }, { v: 'three' }]);
      expect((await column(ds, 'v')).type).toBe('string');
      expect(await physicalType(ds, 'v')).toBe('VARCHAR');
      expect(await storedValues(ds, 'v')).toEqual(['3', 'three']);
    });

    it('widens boolean then number to string, never losing a value', async () => {
      const ds = fresh();
      await ingest(ds, [{ v: true }]);
      await ingest(ds, [{ v: 12 }]);
      expect((await column(ds, 'v')).type).toBe('string');
      expect((await columnRecord(ds, 'v'))?.storedType).toBe('string');
      expect(await storedValues(ds, 'v')).toEqual(['true', '12']);
    });

    it('field names are case-sensitive: two columns', async () => {
      const ds = fresh();
      await ingest(ds, [{ Name: 'a', name: 'b' }]);
      expect(json(await list(ds)).map((c: { key_name: string }) => c.key_name).sort()).toEqual(['Name', 'name']);
    });

    it('sets last_written (and the dataset last_written_at) after ingest, at the next bookkeeping flush', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const made = json(await create(ds, { key_name: 'never' }));
      expect(made).not.toHaveProperty('last_written');
      await ingest(ds, [{ w: 1 }]);
      const expected = new Date(t.clock.ms).toISOString();
      let col = await column(ds, 'w');
      for (let i = 0; i < 60 && col.last_written === undefined; i++) {
        await new Promise((r) => setTimeout(r, 100));
        col = await column(ds, 'w');
      }
      expect(col.last_written).toBe(expected);
      expectContract(COLLECTION, 'get', await byName(ds, 'w'));
      // A column that received nothing still has none.
      expect(await column(ds, 'never')).not.toHaveProperty('last_written');
      const dataset = json(await t.app.inject({ method: 'GET', url: `/1/datasets/${ds}`, headers: t.config }));
      expect(dataset.last_written_at).toBe(expected);
    }, 15_000);
  });

  describe('create', () => {
    it('creates a column with defaults: 201, type string, the Column shape', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const res = await create(ds, { key_name: 'user.id' });
      expect(res.statusCode, res.body).toBe(201);
      expectContract(COLLECTION, 'post', res);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(COLUMN_FIELDS);
      expect(body).toMatchObject({ key_name: 'user.id', type: 'string', description: '', hidden: false });
      expect((await get(ds, body.id)).body).toBe(res.body);
      expect(await physicalType(ds, 'user.id')).toBe('VARCHAR');
    });

    it('creates each type, with description and hidden, and they round-trip', async () => {
      const ds = fresh();
      await makeDataset(ds);
      for (const type of ['string', 'integer', 'float', 'boolean']) {
        const res = await create(ds, { key_name: `k_${type}`, type, description: `a ${type}`, hidden: true });
        expect(res.statusCode, res.body).toBe(201);
        expect(json(res)).toMatchObject({ key_name: `k_${type}`, type, description: `a ${type}`, hidden: true });
        const read = await get(ds, json(res).id);
        expectContract(ITEM, 'get', read);
        expect(json(read)).toEqual(json(res));
        expect((await columnRecord(ds, `k_${type}`))?.storedType).toBe(type);
      }
      expect(await physicalType(ds, 'k_integer')).toBe('BIGINT');
      expect(await physicalType(ds, 'k_boolean')).toBe('BOOLEAN');
    });

    it('a created column receives ingested values, widening as ingest would', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const made = json(await create(ds, { key_name: 'n', type: 'integer' }));
      await ingest(ds, [{ n: 5 }, { n: 5.5 }]);
      const col = await column(ds, 'n');
      expect(col.id).toBe(made.id);
      expect(col.type).toBe('float');
      expect(await storedValues(ds, 'n')).toEqual([5, 5.5]);
    });

    it('409 problem+json when the key name exists (made by the API or by ingest); case matters', async () => {
      const ds = fresh();
      await ingest(ds, [{ seen: 1 }]);
      expect((await create(ds, { key_name: 'made' })).statusCode).toBe(201);
      for (const key_name of ['made', 'seen']) {
        const body = expectProblem(await create(ds, { key_name, type: 'integer' }), 409, 'conflict');
        expect(body.error).toBe('A resource by that name already exists.');
        expect(body.title).toBe('Request could not be completed due to a conflict with the current state of the target resource.');
      }
      expect((await column(ds, 'seen')).type).toBe('integer');
      expect((await create(ds, { key_name: 'MADE' })).statusCode).toBe(201);
      expect(json(await list(ds))).toHaveLength(3);
    });

    it('404 for an unknown dataset; the dataset is not created', async () => {
      expectDatasetNotFound(await create('no-such-dataset', { key_name: 'a' }));
      expectDatasetNotFound(await list('no-such-dataset'));
      expect((await t.app.inject({ method: 'GET', url: '/1/datasets/no-such-dataset', headers: t.config })).statusCode).toBe(404);
    });

    it('the dataset path accepts the name, any casing, URL-encoded', async () => {
      await makeDataset('My Columns');
      expect((await create('My%20Columns', { key_name: 'a' })).statusCode).toBe(201);
      expect(json(await list('MY-COLUMNS')).map((c: { key_name: string }) => c.key_name)).toEqual(['a']);
    });

    it('POST /1/columns/__all__ is refused with 422: a column belongs to one dataset', async () => {
      const ds = fresh();
      await makeDataset(ds);
      expectValidation(await create('__all__', { key_name: 'everywhere' }), 'params.datasetSlug', 'invalid');
      expect(json(await list(ds))).toEqual([]);
    });

    it('histogram is for metrics datasets only: 400', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const body = expectProblem(await create(ds, { key_name: 'h', type: 'histogram' }), 400, 'unparseable');
      expect(body.error).toMatch(/histogram/);
      expect(json(await list(ds))).toEqual([]);
    });

    describe('validation', () => {
      let ds: string;
      beforeAll(async () => {
        ds = fresh('validation');
        await makeDataset(ds);
      });

      it('key_name: required, 1..255 characters, a string, not blank', async () => {
        expectValidation(await create(ds, {}), 'key_name', 'missing');
        expectValidation(await create(ds, { key_name: '' }), 'key_name', 'missing');
        expectValidation(await create(ds, { key_name: '   ' }), 'key_name', 'missing');
        expectValidation(await create(ds, { key_name: 'k'.repeat(256) }), 'key_name', 'invalid');
        expectValidation(await create(ds, { key_name: 7 }), 'key_name', 'incorrect_type');
        expectValidation(await create(ds, { key_name: null }), 'key_name', 'incorrect_type');
        expect((await create(ds, { key_name: 'k'.repeat(255) })).statusCode).toBe(201);
        expect((await create(ds, { key_name: 'x' })).statusCode).toBe(201);
      });

      it('type: one of the enum, never coerced', async () => {
        expectValidation(await create(ds, { key_name: 't1', type: 'text' }), 'type', 'invalid');
        expectValidation(await create(ds, { key_name: 't1', type: 'STRING' }), 'type', 'invalid');
        expectValidation(await create(ds, { key_name: 't1', type: 1 }), 'type');
        expectValidation(await create(ds, { key_name: 't1', type: null }), 'type');
        expect(await byName(ds, 't1').then((r) => r.statusCode)).toBe(404);
      });

      it('description: at most 255 characters, a string', async () => {
        expect((await create(ds, { key_name: 'd255', description: 'd'.repeat(255) })).statusCode).toBe(201);
        expect((await column(ds, 'd255')).description).toHaveLength(255);
        expectValidation(await create(ds, { key_name: 'd256', description: 'd'.repeat(256) }), 'description', 'invalid');
        expectValidation(await create(ds, { key_name: 'd3', description: 3 }), 'description', 'incorrect_type');
      });

      it('hidden: a boolean, never coerced from "true" or 1', async () => {
        expectValidation(await create(ds, { key_name: 'h1', hidden: 'true' }), 'hidden', 'incorrect_type');
        expectValidation(await create(ds, { key_name: 'h1', hidden: 1 }), 'hidden', 'incorrect_type');
        expect(await byName(ds, 'h1').then((r) => r.statusCode)).toBe(404);
      });

      it('the body must be a JSON object', async () => {
        expectProblem(await t.app.inject({ method: 'POST', url: `/1/columns/${ds}`, headers: t.config }), 400, 'unparseable');
        expectProblem(
          await t.app.inject({ method: 'POST', url: `/1/columns/${ds}`, headers: { ...t.config, 'content-type': 'application/json' }, payload: '{"key_name":' }),
          400,
          'unparseable',
        );
        expectProblem(await create(ds, ['key_name']), 422, 'validation-failed');
      });

      it('read-only fields in the body are ignored', async () => {
        const res = await create(ds, { key_name: 'ro', id: 'mine', created_at: '2000-01-01T00:00:00Z', last_written: '2000-01-01T00:00:00Z' });
        expect(res.statusCode).toBe(201);
        expect(json(res).id).not.toBe('mine');
        expect(json(res).created_at).not.toBe('2000-01-01T00:00:00Z');
        expect(json(res)).not.toHaveProperty('last_written');
      });
    });

    it('beyond the column cap: 400 "Dataset has too many columns." (a duplicate is still 409)', async () => {
      const capped = await makeApp({ settings: { maxColumnsPerDataset: 2 } });
      try {
        const headers = capped.config;
        expect((await capped.app.inject({ method: 'POST', url: '/1/datasets', headers, payload: { name: 'capped' } })).statusCode).toBe(201);
        const mk = (key_name: string) => capped.app.inject({ method: 'POST', url: '/1/columns/capped', headers, payload: { key_name } });
        expect((await mk('a')).statusCode).toBe(201);
        expect((await mk('b')).statusCode).toBe(201);
        const body = expectProblem(await mk('c'), 400, 'unparseable');
        expect(body.error).toBe('Dataset has too many columns.');
        expectProblem(await mk('a'), 409, 'conflict');
        const cols = json(await capped.app.inject({ method: 'GET', url: '/1/columns/capped', headers }));
        expect(cols.map((c: { key_name: string }) => c.key_name)).toEqual(['a', 'b']);
        // Deleting one makes room again.
        expect((await capped.app.inject({ method: 'DELETE', url: `/1/columns/capped/${cols[0].id}`, headers })).statusCode).toBe(204);
        expect((await mk('c')).statusCode).toBe(201);
      } finally {
        await capped.close();
      }
    });
  });

  describe('list by key_name', () => {
    it('answers one Column object, or 404', async () => {
      const ds = fresh();
      await ingest(ds, [{ 'http.status': 200, other: 'x' }]);
      const res = await byName(ds, 'http.status');
      expect(res.statusCode).toBe(200);
      expectContract(COLLECTION, 'get', res);
      const body = json(res);
      expect(Array.isArray(body)).toBe(false);
      expect(body).toMatchObject({ key_name: 'http.status', type: 'integer' });
      expect(json(await get(ds, body.id))).toEqual(body);
      expectLegacy(await byName(ds, 'HTTP.STATUS'), 404, 'column not found');
      expectLegacy(await byName(ds, 'missing'), 404, 'column not found');
      expectDatasetNotFound(await byName('no-such-dataset', 'other'));
    });

    it('a repeated key_name parameter is a 422, not a guess', async () => {
      const ds = fresh();
      await ingest(ds, [{ a: 1 }]);
      expectValidation(await list(ds, t.config, '?key_name=a&key_name=b'), 'querystring.key_name', 'incorrect_type');
    });
  });

  describe('get, update, delete', () => {
    it('PUT changes the API type only: the stored type and the values stay', async () => {
      const ds = fresh();
      await ingest(ds, [{ code: 200 }]);
      const col = await column(ds, 'code');
      const res = await put(ds, col.id, { key_name: 'code', type: 'string', description: 'HTTP status', hidden: true });
      expect(res.statusCode, res.body).toBe(200);
      expectContract(ITEM, 'put', res);
      const body = json(res);
      expect(body).toMatchObject({ id: col.id, key_name: 'code', type: 'string', description: 'HTTP status', hidden: true });
      expect(body.created_at).toBe(col.created_at);
      expect(json(await get(ds, col.id))).toEqual(body);
      const rec = await columnRecord(ds, 'code');
      expect(rec).toMatchObject({ type: 'string', storedType: 'integer' });
      expect(await physicalType(ds, 'code')).toBe('BIGINT');
      expect(await storedValues(ds, 'code')).toEqual([200n]);
      // A later float widens the stored type; the type the user chose stays.
      await ingest(ds, [{ code: 200.5 }]);
      expect(await columnRecord(ds, 'code')).toMatchObject({ type: 'string', storedType: 'float' });
      expect((await column(ds, 'code')).type).toBe('string');
      expect(await storedValues(ds, 'code')).toEqual([200, 200.5]);
      // The description and hidden flag survive ingest too.
      expect(await column(ds, 'code')).toMatchObject({ description: 'HTTP status', hidden: true });
    });

    it('PUT is a full replacement: omitted type, description and hidden take their defaults', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const col = json(await create(ds, { key_name: 'k', type: 'integer', description: 'desc', hidden: true }));
      const res = await put(ds, col.id, { key_name: 'k' });
      expect(res.statusCode).toBe(200);
      expect(json(res)).toMatchObject({ type: 'string', description: '', hidden: false });
      // key_name may be left out (it is read-only)
      const again = await put(ds, col.id, { type: 'boolean' });
      expect(again.statusCode).toBe(200);
      expect(json(again)).toMatchObject({ key_name: 'k', type: 'boolean' });
      // The Terraform client's body: id, key_name, hidden, type (description omitted when empty)
      const tf = await put(ds, col.id, { id: col.id, key_name: 'k', hidden: false, type: 'float' });
      expect(tf.statusCode).toBe(200);
      expect(json(tf)).toMatchObject({ id: col.id, type: 'float', hidden: false });
    });

    it('PUT validation: key_name is read-only, the same rules as create at their boundaries', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const col = json(await create(ds, { key_name: 'k', description: 'before' }));
      expectValidation(await put(ds, col.id, { key_name: 'renamed' }), 'key_name', 'invalid');
      expectValidation(await put(ds, col.id, { key_name: 'K' }), 'key_name', 'invalid');
      expectValidation(await put(ds, col.id, { key_name: 5 }), 'key_name', 'incorrect_type');
      expectValidation(await put(ds, col.id, { key_name: 'k', description: 'd'.repeat(256) }), 'description', 'invalid');
      expectValidation(await put(ds, col.id, { key_name: 'k', description: false }), 'description', 'incorrect_type');
      expectValidation(await put(ds, col.id, { key_name: 'k', hidden: 'false' }), 'hidden', 'incorrect_type');
      expectValidation(await put(ds, col.id, { key_name: 'k', type: 'text' }), 'type', 'invalid');
      expectProblem(await put(ds, col.id, { key_name: 'k', type: 'histogram' }), 400, 'unparseable');
      expectProblem(await t.app.inject({ method: 'PUT', url: `/1/columns/${ds}/${col.id}`, headers: t.config }), 400, 'unparseable');
      // Nothing changed
      expect(json(await get(ds, col.id))).toEqual(col);
      const ok = await put(ds, col.id, { key_name: 'k', description: 'd'.repeat(255) });
      expect(ok.statusCode).toBe(200);
      expect(json(ok).description).toHaveLength(255);
    });

    it('DELETE answers 204, drops the values; re-ingesting the field makes a fresh column', async () => {
      const ds = fresh();
      await ingest(ds, [{ gone: 1, kept: 'a' }, { gone: 2, kept: 'b' }]);
      const col = await column(ds, 'gone');
      const before = await physicalColumns(ds);
      expect(before).toHaveLength(2);
      const res = await del(ds, col.id);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expectLegacy(await get(ds, col.id), 404, 'column not found');
      expectLegacy(await del(ds, col.id), 404, 'column not found');
      expectLegacy(await put(ds, col.id, { key_name: 'gone' }), 404, 'column not found');
      expectLegacy(await byName(ds, 'gone'), 404);
      expect(json(await list(ds)).map((c: { key_name: string }) => c.key_name)).toEqual(['kept']);
      expect(await physicalColumns(ds)).toHaveLength(1);
      expect(await storedValues(ds, 'kept')).toEqual(['a', 'b']);
      // The same field again, now a string: a new column, not widened from the old integer one.
      await ingest(ds, [{ gone: 'back' }]);
      const again = await column(ds, 'gone');
      expect(again.id).not.toBe(col.id);
      expect(again.type).toBe('string');
      expect(await storedValues(ds, 'gone')).toEqual([null, null, 'back']);
      expect(await storedValues(ds, 'kept')).toEqual(['a', 'b', null]);
    });

    it('an API-created column can be deleted and created again', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const a = json(await create(ds, { key_name: 'a', type: 'integer' }));
      expect((await del(ds, a.id)).statusCode).toBe(204);
      const b = await create(ds, { key_name: 'a', type: 'boolean' });
      expect(b.statusCode).toBe(201);
      expect(json(b).id).not.toBe(a.id);
      expect(await physicalType(ds, 'a')).toBe('BOOLEAN');
    });

    it('a column id of another dataset, an unknown id, an unknown dataset and __all__ are 404', async () => {
      const one = fresh();
      const two = fresh();
      await ingest(one, [{ a: 1 }]);
      await ingest(two, [{ a: 1 }]);
      const colOne = await column(one, 'a');
      expectLegacy(await get(two, colOne.id), 404, 'column not found');
      expectLegacy(await put(two, colOne.id, { key_name: 'a', type: 'string' }), 404, 'column not found');
      expectLegacy(await del(two, colOne.id), 404, 'column not found');
      expectLegacy(await get(one, 'nope'), 404, 'column not found');
      expectDatasetNotFound(await get('no-such-dataset', colOne.id));
      for (const res of [await get('__all__', colOne.id), await put('__all__', colOne.id, { key_name: 'a' }), await del('__all__', colOne.id)]) {
        expectDatasetNotFound(res);
      }
      // Nothing happened to it (last_written is bookkept in the background and may move meanwhile).
      const { last_written: _before, ...kept } = colOne;
      const { last_written: _after, ...now } = await column(one, 'a');
      expect(now).toEqual(kept);
      expect((await column(two, 'a')).type).toBe('integer');
    });
  });

  it('the dataset regular_columns_count follows the number of columns', async () => {
    const ds = fresh();
    const count = async () => json(await t.app.inject({ method: 'GET', url: `/1/datasets/${ds}`, headers: t.config })).regular_columns_count;
    await makeDataset(ds);
    expect(await count()).toBeNull();
    await ingest(ds, [{ a: 1, b: 'x' }]);
    expect(await count()).toBe(2);
    const c = json(await create(ds, { key_name: 'c' }));
    expect(await count()).toBe(3);
    await ingest(ds, [{ a: 1.5 }]);
    expect(await count()).toBe(3);
    expect((await del(ds, c.id)).statusCode).toBe(204);
    expect(await count()).toBe(2);
  });

  describe('__all__', () => {
    it('lists the columns of every dataset of the key’s environment, and only those', async () => {
      const env = await secondEnvironment(t, 'Columns Env');
      const before = json(await list('__all__'));
      const first = 'alpha-cols';
      const second = 'beta-cols';
      await ingest(first, [{ a: 1, shared: 'x' }], env.headers);
      await ingest(second, [{ b: true, shared: 2.5 }], env.headers);
      await ingest(fresh('elsewhere'), [{ z: 1 }]); // the initial environment
      const res = await list('__all__', env.headers);
      expect(res.statusCode).toBe(200);
      expectContract(COLLECTION, 'get', res);
      const cols = json(res);
      expect(cols.map((c: { key_name: string; type: string }) => `${c.key_name}:${c.type}`)).toEqual([
        'a:integer',
        'shared:string',
        'b:boolean',
        'shared:float',
      ]);
      // Each entry is addressable in its dataset.
      expect(json(await get(second, cols[3].id, env.headers)).key_name).toBe('shared');
      // key_name over __all__: the first match in dataset-slug order.
      const one = await byName('__all__', 'shared', env.headers);
      expect(one.statusCode).toBe(200);
      expect(json(one)).toEqual(cols[1]);
      expect(json(await byName('__all__', 'b', env.headers))).toEqual(cols[2]);
      expectLegacy(await byName('__all__', 'z', env.headers), 404, 'column not found');
      // The initial environment's __all__ did not gain the other environment's columns.
      const after = json(await list('__all__'));
      expect(after.some((c: { key_name: string }) => c.key_name === 'shared')).toBe(false);
      expect(after.length).toBe(before.length + 1);
    });

    it('an environment without datasets lists []', async () => {
      const env = await secondEnvironment(t, 'Empty Env');
      const res = await list('__all__', env.headers);
      expect(res.statusCode).toBe(200);
      expect(json(res)).toEqual([]);
    });
  });

  describe('permissions and tenancy', () => {
    const everyRoute = (ds: string, id: string, headers: Record<string, string>) => [
      list(ds, headers),
      list('__all__', headers),
      byName(ds, 'a', headers),
      create(ds, { key_name: 'new' }, headers),
      create('__all__', { key_name: 'new' }, headers),
      get(ds, id, headers),
      put(ds, id, { key_name: 'a', type: 'string' }, headers),
      del(ds, id, headers),
    ];

    it('every route needs manage_columns: 403 without it, and nothing changes', async () => {
      const ds = fresh();
      await ingest(ds, [{ a: 1 }]);
      const col = await column(ds, 'a');
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { create_datasets: true, send_events: true, run_queries: true } });
      for (const res of await Promise.all(everyRoute(ds, col.id, key.headers))) {
        expectLegacy(res, 403);
        expect(json(res).error).toMatch(/manage_columns/);
      }
      expect(json(await list(ds))).toEqual([col]);
      // With the permission alone, it works.
      const allowed = await addKey(t, team, environment, { permissions: { manage_columns: true } });
      expect((await list(ds, allowed.headers)).statusCode).toBe(200);
      expect((await create(ds, { key_name: 'ok' }, allowed.headers)).statusCode).toBe(201);
    });

    it('ingest keys and unknown keys get 401', async () => {
      const ds = fresh();
      await ingest(ds, [{ a: 1 }]);
      const col = await column(ds, 'a');
      for (const res of await Promise.all(everyRoute(ds, col.id, t.ingest))) expectLegacy(res, 401);
      for (const res of await Promise.all(everyRoute(ds, col.id, { 'x-honeycomb-team': 'nope' }))) {
        expectLegacy(res, 401, 'unknown API key - check your credentials');
      }
      for (const res of await Promise.all(everyRoute(ds, col.id, {}))) expectLegacy(res, 401);
      expect(json(await list(ds))).toEqual([col]);
    });

    it('another environment’s or team’s dataset and column ids are 404', async () => {
      const ds = fresh('tenant');
      await ingest(ds, [{ a: 1 }]);
      // (its last_written recorded now, not by the background flush while the test runs)
      await t.app.writer.flushBookkeeping();
      const col = await column(ds, 'a');
      for (const other of [await secondEnvironment(t, 'Tenancy Env'), await secondTeam(t, 'Columns Team')]) {
        // The dataset does not exist there.
        for (const res of await Promise.all([
          list(ds, other.headers),
          byName(ds, 'a', other.headers),
          create(ds, { key_name: 'b' }, other.headers),
          get(ds, col.id, other.headers),
          put(ds, col.id, { key_name: 'a', type: 'string' }, other.headers),
          del(ds, col.id, other.headers),
        ])) {
          expectDatasetNotFound(res);
        }
        // A dataset of the same name there does not expose this column id.
        await ingest(ds, [{ a: 'other' }], other.headers);
        expectLegacy(await get(ds, col.id, other.headers), 404, 'column not found');
        expectLegacy(await put(ds, col.id, { key_name: 'a' }, other.headers), 404, 'column not found');
        expectLegacy(await del(ds, col.id, other.headers), 404, 'column not found');
        expect(json(await list('__all__', other.headers)).some((c: { id: string }) => c.id === col.id)).toBe(false);
      }
      expect(await column(ds, 'a')).toEqual(col);
      expect(await storedValues(ds, 'a')).toEqual([1n]);
    });
  });

  it('a stale delete (the column is already gone) drops nothing, even when a newer column reuses its storage', async () => {
    // Two DELETEs of one column can both look it up before either takes the writer's lock; the
    // slower one must not drop the physical column a newer field has been given meanwhile.
    const ds = fresh('stale');
    await makeDataset(ds);
    const record = await datasetRecord(ds);
    const writer = new IngestWriter(t.store, t.events, { maxColumnsPerDataset: 100, now: t.clock.now });
    await writer.createColumn(record, 'kept', { type: 'string', description: '', hidden: false });
    const old = await writer.createColumn(record, 'old', { type: 'integer', description: '', hidden: false });
    expect(await writer.deleteColumn(record, old)).toBe(true);
    const event = (fields: Record<string, string | number>) => ({ fields: new Map(Object.entries(fields)), timeUs: (eventTime += 1000) * 1000, samplerate: 1 });
    expect(await writer.write(record, columnsOf([event({ newer: 'value' })]))).toEqual([null]);
    const newer = (await columnRecord(ds, 'newer'))!;
    expect(newer.physical).toBe(old.physical); // the freed storage was reused
    expect(await writer.deleteColumn(record, old)).toBe(false); // the stale second delete
    expect(await physicalColumns(ds)).toContain(newer.physical);
    expect(await storedValues(ds, 'newer')).toEqual(['value']);
    expect((await column(ds, 'newer')).id).toBe(newer.id);
    await writer.close();
  });
});
