// /1/marker_settings: list, create (201), PUT (200; type immutable), DELETE (200 with the deleted
// setting); colour forms; duplicate types (422 already_exists); dataset vs `__all__` scoping;
// permissions (Manage Markers), ingest keys, other environments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectValidation, expectLegacy, expectDatasetNotFound } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';

const COLLECTION = '/1/marker_settings/{datasetSlug}';
const ITEM = '/1/marker_settings/{datasetSlug}/{markerSettingId}';
const FIELDS = ['color', 'created_at', 'id', 'type', 'updated_at'];

describe('/1/marker_settings', () => {
  let t: TestApp;
  const DS = 'settings-ds';
  const OTHER = 'settings-other';

  const url = (ds: string, id?: string) => `/1/marker_settings/${encodeURIComponent(ds)}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  const create = (body: unknown, ds = DS, headers = t.config) => sendJson(t, 'POST', url(ds), body, headers);
  const update = (id: string, body: unknown, ds = DS, headers = t.config) => sendJson(t, 'PUT', url(ds, id), body, headers);
  const del = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'DELETE', url: url(ds, id), headers });
  const list = (ds = DS, headers = t.config) => t.app.inject({ method: 'GET', url: url(ds), headers });
  let n = 0;
  const uniqueType = () => `type-${++n}`;
  async function created(body: Record<string, unknown>, ds = DS) {
    const res = await create(body, ds);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }
  const listed = async (ds = DS) => {
    const res = await list(ds);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(COLLECTION, 'GET', res);
    return json(res) as Array<Record<string, string>>;
  };

  beforeAll(async () => {
    t = await makeApp();
    for (const name of [DS, OTHER]) {
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } })).statusCode).toBe(201);
    }
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), lists, updates the colour (200) and deletes (200 with the setting)', async () => {
      const s = await created({ type: 'deploy', color: '#F96E11' });
      expect(Object.keys(s).sort()).toEqual(FIELDS);
      expect(s).toMatchObject({ type: 'deploy', color: '#F96E11' });
      expect(s.id).toMatch(/^[A-Za-z0-9]{11}$/);
      expect(Date.parse(s.created_at)).not.toBeNaN();
      expect(s.updated_at).toBe(s.created_at);
      expect((await listed()).find((x) => x.id === s.id)).toEqual(s);

      await new Promise((r) => setTimeout(r, 5));
      const put = await update(s.id, { type: 'deploy', color: '#1fa297' });
      expect(put.statusCode, put.body).toBe(200);
      expectContract(ITEM, 'PUT', put);
      const u = json(put);
      expect(u).toMatchObject({ id: s.id, type: 'deploy', color: '#1fa297', created_at: s.created_at });
      expect(Date.parse(u.updated_at)).toBeGreaterThan(Date.parse(s.updated_at));
      expect((await listed()).find((x) => x.id === s.id)).toEqual(u);

      const gone = await del(s.id);
      expect(gone.statusCode, gone.body).toBe(200);
      expectContract(ITEM, 'DELETE', gone);
      expect(json(gone)).toEqual(u);
      expect((await listed()).some((x) => x.id === s.id)).toBe(false);
      expectLegacy(await del(s.id), 404, 'marker setting not found');
      expectLegacy(await update(s.id, { type: 'deploy', color: '#000000' }), 404, 'marker setting not found');
    });

    it('ignores read-only and unknown fields in bodies', async () => {
      const s = await created({ type: uniqueType(), color: '#abcdef', id: 'mine', created_at: '2000-01-01T00:00:00Z', extra: 1 });
      expect(s.id).not.toBe('mine');
      expect(s.created_at).not.toBe('2000-01-01T00:00:00Z');
      expect(s).not.toHaveProperty('extra');
      const put = await update(s.id, { type: s.type, color: '#123456', id: 'other', updated_at: '2000-01-01T00:00:00Z' });
      expect(put.statusCode, put.body).toBe(200);
      expect(json(put)).toMatchObject({ id: s.id, color: '#123456' });
      expect(json(put).updated_at).not.toBe('2000-01-01T00:00:00Z');
    });

    it('lists in creation order', async () => {
      const ds = 'settings-order';
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } })).statusCode).toBe(201);
      expect(await listed(ds)).toEqual([]);
      const a = await created({ type: 'b-second-alphabetically', color: '#000' }, ds);
      const b = await created({ type: 'a-first-alphabetically', color: '#fff' }, ds);
      expect((await listed(ds)).map((x) => x.id)).toEqual([a.id, b.id]);
    });
  });

  describe('validation', () => {
    it('accepts #RRGGBB and #RGB in either case, stored as sent', async () => {
      for (const color of ['#F96E11', '#f96e11', '#Aa09fF', '#abc', '#ABC', '#000', '#ffffff']) {
        const s = await created({ type: uniqueType(), color });
        expect(s.color).toBe(color);
      }
    });

    it('refuses every other colour form (422 on color)', async () => {
      for (const color of ['F96E11', '#F96E1', '#F96E111', '#GGGGGG', '#ab', '#abcd', '', ' #abc', '#abc ', 'red', 'rgb(1,2,3)', '#F96E11\n']) {
        expectValidation(await create({ type: uniqueType(), color }), 'color');
      }
    });

    it('requires type and color with the right types', async () => {
      expectValidation(await create({ color: '#abc' }), 'type', 'missing');
      expectValidation(await create({ type: uniqueType() }), 'color', 'missing');
      expectValidation(await create({ type: 7, color: '#abc' }), 'type', 'incorrect_type');
      expectValidation(await create({ type: uniqueType(), color: 0xabcdef }), 'color', 'incorrect_type');
      expectValidation(await create({ type: null, color: '#abc' }), 'type', 'incorrect_type');
      expectValidation(await create([]), 'body', 'incorrect_type');
    });

    it('type: 1..255 characters, not blank', async () => {
      expectValidation(await create({ type: '', color: '#abc' }), 'type', 'missing');
      expectValidation(await create({ type: '   ', color: '#abc' }), 'type', 'missing');
      expectValidation(await create({ type: 'x'.repeat(256), color: '#abc' }), 'type');
      const long = await created({ type: 'y'.repeat(255), color: '#abc' });
      expect(long.type).toHaveLength(255);
      const one = await created({ type: 'z', color: '#abc' });
      expect(one.type).toBe('z');
    });

    it('a malformed body is 400, an absent one too', async () => {
      const res = await create('{"type":');
      expect(res.statusCode).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
      const empty = await t.app.inject({ method: 'POST', url: url(DS), headers: t.config });
      expect(empty.statusCode).toBe(400);
    });

    it('type may not change on update (422); colour is validated on update too', async () => {
      const s = await created({ type: uniqueType(), color: '#abc' });
      expectValidation(await update(s.id, { type: `${s.type}-changed`, color: '#abc' }), 'type');
      expectValidation(await update(s.id, { type: s.type.toUpperCase(), color: '#abc' }), 'type');
      expectValidation(await update(s.id, { color: '#abc' }), 'type', 'missing');
      expectValidation(await update(s.id, { type: s.type }), 'color', 'missing');
      expectValidation(await update(s.id, { type: s.type, color: 'blue' }), 'color');
      expect((await listed()).find((x) => x.id === s.id)).toEqual(s);
    });

    it('a second setting of the same type in the same place → 422 already_exists', async () => {
      const type = uniqueType();
      await created({ type, color: '#111' });
      const dup = expectValidation(await create({ type, color: '#222' }), 'type', 'already_exists');
      expect(dup.detail).toContain(type);
      // Types are case-sensitive, and each dataset and the environment have their own.
      await created({ type: type.toUpperCase(), color: '#333' });
      await created({ type, color: '#444' }, OTHER);
      await created({ type, color: '#555' }, '__all__');
      expectValidation(await create({ type, color: '#666' }, '__all__'), 'type', 'already_exists');
      // Deleting frees the type.
      const s = (await listed()).find((x) => x.type === type)!;
      expect((await del(s.id)).statusCode).toBe(200);
      await created({ type, color: '#777' });
    });
  });

  describe('dataset and __all__', () => {
    it('keeps each dataset’s and the environment’s settings apart', async () => {
      const type = uniqueType();
      const inDs = await created({ type, color: '#a00' });
      const inOther = await created({ type, color: '#0a0' }, OTHER);
      const inEnv = await created({ type, color: '#00a' }, '__all__');

      expect((await listed()).map((x) => x.id)).toContain(inDs.id);
      expect((await listed()).map((x) => x.id)).not.toContain(inEnv.id);
      expect((await listed()).map((x) => x.id)).not.toContain(inOther.id);
      const env = (await listed('__all__')).map((x) => x.id);
      expect(env).toContain(inEnv.id);
      expect(env).not.toContain(inDs.id);

      // Item routes find a setting only under its own path.
      expectLegacy(await update(inDs.id, { type, color: '#fff' }, OTHER), 404, 'marker setting not found');
      expectLegacy(await update(inDs.id, { type, color: '#fff' }, '__all__'), 404);
      expectLegacy(await update(inEnv.id, { type, color: '#fff' }, DS), 404);
      expectLegacy(await del(inDs.id, OTHER), 404);
      expectLegacy(await del(inEnv.id, DS), 404);
      expect((await listed()).find((x) => x.id === inDs.id)).toEqual(inDs);

      const ok = await update(inEnv.id, { type, color: '#fff' }, '__all__');
      expect(ok.statusCode, ok.body).toBe(200);
      const gone = await del(inEnv.id, '__all__');
      expect(gone.statusCode).toBe(200);
      expectContract(ITEM, 'DELETE', gone);
    });

    it('unknown dataset → 404 on every route; names and slugs both work', async () => {
      expectDatasetNotFound(await list('nope'));
      expectDatasetNotFound(await create({ type: uniqueType(), color: '#abc' }, 'nope'));
      expectDatasetNotFound(await update('x', { type: 't', color: '#abc' }, 'nope'));
      expectDatasetNotFound(await del('x', 'nope'));
      expectLegacy(await del('no-such-id'), 404, 'marker setting not found');
      expectContract(COLLECTION, 'GET', await list('nope'));

      const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Settings Named' } });
      expect(res.statusCode).toBe(201);
      const s = await created({ type: uniqueType(), color: '#abc' }, 'Settings Named');
      expect((await listed('settings-named')).map((x) => x.id)).toEqual([s.id]);
    });
  });

  describe('permissions and tenancy', () => {
    it('needs Manage Markers (403 without), refuses ingest keys (401) and no key (401)', async () => {
      const { team, environment } = await initialTenancy(t);
      const s = await created({ type: uniqueType(), color: '#abc' });
      const noMarkers = await addKey(t, team, environment, { permissions: { manage_columns: true, create_datasets: true } });
      const onlyMarkers = await addKey(t, team, environment, { permissions: { manage_markers: true } });
      const ingest = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: true } });

      for (const [headers, status] of [[noMarkers.headers, 403], [ingest.headers, 401], [{}, 401]] as const) {
        expectLegacy(await list(DS, headers), status);
        expectLegacy(await create({ type: uniqueType(), color: '#abc' }, DS, headers), status);
        expectLegacy(await update(s.id, { type: s.type, color: '#def' }, DS, headers), status);
        expectLegacy(await del(s.id, DS, headers), status);
      }
      expect((await listed()).find((x) => x.id === s.id)).toEqual(s);

      expect((await list(DS, onlyMarkers.headers)).statusCode).toBe(200);
      const mine = await create({ type: uniqueType(), color: '#abc' }, DS, onlyMarkers.headers);
      expect(mine.statusCode, mine.body).toBe(201);
      expect((await update(s.id, { type: s.type, color: '#def' }, DS, onlyMarkers.headers)).statusCode).toBe(200);
      expect((await del(json(mine).id, DS, onlyMarkers.headers)).statusCode).toBe(200);
    });

    it('another environment’s settings are not found (404), even under a dataset of the same name', async () => {
      const other = await secondEnvironment(t, 'Settings Staging');
      const inDs = await created({ type: uniqueType(), color: '#abc' });
      const inEnv = await created({ type: uniqueType(), color: '#abc' }, '__all__');

      // The dataset does not exist there.
      expectDatasetNotFound(await list(DS, other.headers));
      expectDatasetNotFound(await del(inDs.id, DS, other.headers));
      // Same dataset name there, and __all__: the ids are still unknown.
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: other.headers, payload: { name: DS } })).statusCode).toBe(201);
      expect(json(await list(DS, other.headers))).toEqual([]);
      expect(json(await list('__all__', other.headers))).toEqual([]);
      expectLegacy(await update(inDs.id, { type: inDs.type, color: '#fff' }, DS, other.headers), 404, 'marker setting not found');
      expectLegacy(await del(inDs.id, DS, other.headers), 404, 'marker setting not found');
      expectLegacy(await update(inEnv.id, { type: inEnv.type, color: '#fff' }, '__all__', other.headers), 404, 'marker setting not found');
      expectLegacy(await del(inEnv.id, '__all__', other.headers), 404, 'marker setting not found');
      // Their own setting of the same type is independent.
      const theirs = await create({ type: inDs.type, color: '#fff' }, DS, other.headers);
      expect(theirs.statusCode, theirs.body).toBe(201);
      expect((await listed()).find((x) => x.id === inDs.id)).toEqual(inDs);
      expect((await listed('__all__')).find((x) => x.id === inEnv.id)).toEqual(inEnv);
    });
  });
});
