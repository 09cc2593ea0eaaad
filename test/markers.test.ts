// /1/markers: list, create (201), PUT (200), DELETE (200 with the deleted marker); start_time
// default from the app clock; end_time ≥ start_time; types and lengths; `color` from marker
// settings (dataset over environment) as settings come and go; dataset vs `__all__`;
// permissions (Manage Markers), ingest keys, other environments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, deleteDataset, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectValidation, expectLegacy, expectDatasetNotFound } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';

type Marker = Record<string, unknown> & { id: string };
const COLLECTION = '/1/markers/{datasetSlug}';
const ITEM = '/1/markers/{datasetSlug}/{markerId}';
const MAX_TIME = 253_402_300_799;

describe('/1/markers', () => {
  let t: TestApp;
  const DS = 'markers-ds';
  const OTHER = 'markers-other';

  const url = (ds: string, id?: string) => `/1/markers/${encodeURIComponent(ds)}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  const create = (body: unknown, ds = DS, headers = t.config) => sendJson(t, 'POST', url(ds), body, headers);
  const update = (id: string, body: unknown, ds = DS, headers = t.config) => sendJson(t, 'PUT', url(ds, id), body, headers);
  const del = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'DELETE', url: url(ds, id), headers });
  const list = (ds = DS, headers = t.config) => t.app.inject({ method: 'GET', url: url(ds), headers });
  async function created(body: Record<string, unknown>, ds = DS): Promise<Marker> {
    const res = await create(body, ds);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }
  async function updated(id: string, body: Record<string, unknown>, ds = DS): Promise<Marker> {
    const res = await update(id, body, ds);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(ITEM, 'PUT', res);
    return json(res);
  }
  async function deleted(id: string, ds = DS): Promise<Marker> {
    const res = await del(id, ds);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(ITEM, 'DELETE', res);
    return json(res);
  }
  async function listed(ds = DS): Promise<Marker[]> {
    const res = await list(ds);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(COLLECTION, 'GET', res);
    return json(res);
  }
  const find = async (id: string, ds = DS) => (await listed(ds)).find((m) => m.id === id);
  async function setting(type: string, color: string, ds = DS): Promise<string> {
    const res = await sendJson(t, 'POST', `/1/marker_settings/${encodeURIComponent(ds)}`, { type, color });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).id;
  }
  const putSetting = async (id: string, type: string, color: string, ds = DS) =>
    expect((await sendJson(t, 'PUT', `/1/marker_settings/${encodeURIComponent(ds)}/${id}`, { type, color })).statusCode).toBe(200);
  const delSetting = async (id: string, ds = DS) =>
    expect((await t.app.inject({ method: 'DELETE', url: `/1/marker_settings/${encodeURIComponent(ds)}/${id}`, headers: t.config })).statusCode).toBe(200);

  beforeAll(async () => {
    t = await makeApp();
    for (const name of [DS, OTHER]) {
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } })).statusCode).toBe(201);
    }
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), lists, replaces (200) and deletes (200 with the deleted marker)', async () => {
      const m = await created({ start_time: 1471040808, end_time: 1471041108, message: 'backend deploy #123', type: 'deploy', url: 'http://link-to-build.here' });
      expect(Object.keys(m).sort()).toEqual(['created_at', 'end_time', 'id', 'message', 'start_time', 'type', 'updated_at', 'url']);
      expect(m).toMatchObject({ start_time: 1471040808, end_time: 1471041108, message: 'backend deploy #123', type: 'deploy', url: 'http://link-to-build.here' });
      expect(m.id).toMatch(/^[A-Za-z0-9]{11}$/);
      expect(Date.parse(String(m.created_at))).not.toBeNaN();
      expect(m.updated_at).toBe(m.created_at);
      expect(await find(m.id)).toEqual(m);

      await new Promise((r) => setTimeout(r, 5));
      const u = await updated(m.id, { start_time: 1471040900, message: 'rolled back' });
      // Full replacement: end_time, type and url were not sent, so they are gone.
      expect(Object.keys(u).sort()).toEqual(['created_at', 'id', 'message', 'start_time', 'updated_at']);
      expect(u).toMatchObject({ id: m.id, start_time: 1471040900, message: 'rolled back', created_at: m.created_at });
      expect(Date.parse(String(u.updated_at))).toBeGreaterThan(Date.parse(String(m.updated_at)));
      expect(await find(m.id)).toEqual(u);

      const gone = await deleted(m.id);
      expect(gone).toEqual(u);
      expect(await find(m.id)).toBeUndefined();
      expectLegacy(await del(m.id), 404, 'marker not found');
      expectLegacy(await update(m.id, { message: 'x' }), 404, 'marker not found');
    });

    it('an empty body makes a marker at the request time with nothing else', async () => {
      t.clock.ms = Date.UTC(2030, 0, 2, 3, 4, 5, 999);
      const m = await created({});
      expect(m.start_time).toBe(Date.UTC(2030, 0, 2, 3, 4, 5) / 1000);
      expect(Object.keys(m).sort()).toEqual(['created_at', 'id', 'start_time', 'updated_at']);
      t.clock.advance(90);
      const later = await created({ message: 'ninety seconds on' });
      expect(later.start_time).toBe(Number(m.start_time) + 90);
      // An explicit start_time is kept whatever the clock says.
      expect((await created({ start_time: 1000 })).start_time).toBe(1000);
      t.clock.ms = Date.now();
    });

    it('PUT without start_time keeps it; read-only and unknown fields are ignored', async () => {
      t.clock.ms = Date.UTC(2031, 5, 1);
      const m = await created({ start_time: 2_000_000_000, type: 'deploy' });
      t.clock.advance(3600);
      const u = await updated(m.id, { message: 'kept time', id: 'other', created_at: '2000-01-01T00:00:00Z', updated_at: '2000-01-01T00:00:00Z', color: '#000000', extra: true });
      expect(u).toMatchObject({ id: m.id, start_time: 2_000_000_000, message: 'kept time', created_at: m.created_at });
      expect(u).not.toHaveProperty('type');
      expect(u).not.toHaveProperty('color');
      expect(u).not.toHaveProperty('extra');
      expect(u.updated_at).not.toBe('2000-01-01T00:00:00Z');
      // A color sent on create is ignored too.
      const c = await created({ type: 'no-setting', color: '#123456' });
      expect(c).not.toHaveProperty('color');
      t.clock.ms = Date.now();
    });

    it('keeps empty strings as sent and lists in creation order', async () => {
      const ds = 'markers-order';
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } })).statusCode).toBe(201);
      expect(await listed(ds)).toEqual([]);
      const a = await created({ start_time: 300, message: '', type: '', url: '' }, ds);
      expect(a).toMatchObject({ message: '', type: '', url: '' });
      const b = await created({ start_time: 100 }, ds);
      const c = await created({ start_time: 200 }, ds);
      expect((await listed(ds)).map((m) => m.id)).toEqual([a.id, b.id, c.id]);
    });
  });

  describe('times', () => {
    it('end_time must not be before start_time (422); equal is a zero-length range', async () => {
      expectValidation(await create({ start_time: 1000, end_time: 999 }), 'end_time');
      expect((await created({ start_time: 1000, end_time: 1000 })).end_time).toBe(1000);
      expect((await created({ start_time: 1000, end_time: 1001 })).end_time).toBe(1001);
      // null means no end.
      const nullEnd = await created({ start_time: 1000, end_time: null });
      expect(nullEnd).not.toHaveProperty('end_time');
    });

    it('checks end_time against the defaulted start_time on create and the kept one on update', async () => {
      t.clock.ms = Date.UTC(2032, 0, 1);
      const now = Date.UTC(2032, 0, 1) / 1000;
      expectValidation(await create({ end_time: now - 1 }), 'end_time');
      const m = await created({ end_time: now });
      expect(m).toMatchObject({ start_time: now, end_time: now });
      expectValidation(await update(m.id, { end_time: now - 1 }), 'end_time');
      expectValidation(await update(m.id, { start_time: now + 10, end_time: now + 5 }), 'end_time');
      expect(await updated(m.id, { start_time: now - 10, end_time: now - 5 })).toMatchObject({ start_time: now - 10, end_time: now - 5 });
      // A refused update changes nothing.
      expect(await find(m.id)).toMatchObject({ start_time: now - 10, end_time: now - 5 });
      t.clock.ms = Date.now();
    });

    it('times are integer Unix seconds from 0 to 9999-12-31 (422 otherwise, never coerced)', async () => {
      for (const field of ['start_time', 'end_time']) {
        expectValidation(await create({ [field]: '1471040808' }), field, 'incorrect_type');
        expectValidation(await create({ [field]: 1471040808.5 }), field, 'incorrect_type');
        expectValidation(await create({ [field]: true }), field, 'incorrect_type');
        expectValidation(await create({ [field]: -1 }), field);
        expectValidation(await create({ [field]: MAX_TIME + 1 }), field);
        // Milliseconds by mistake.
        expectValidation(await create({ [field]: 1_700_000_000_000 }), field);
      }
      expectValidation(await create({ start_time: null }), 'start_time', 'incorrect_type');
      expect((await created({ start_time: 0 })).start_time).toBe(0);
      expect(await created({ start_time: MAX_TIME, end_time: MAX_TIME })).toMatchObject({ start_time: MAX_TIME, end_time: MAX_TIME });
      expect((await created({ start_time: 1471040808.0 })).start_time).toBe(1471040808);
    });
  });

  describe('strings', () => {
    it('message, type and url are strings (422 incorrect_type otherwise)', async () => {
      for (const field of ['message', 'type', 'url']) {
        expectValidation(await create({ [field]: 7 }), field, 'incorrect_type');
        expectValidation(await create({ [field]: null }), field, 'incorrect_type');
        expectValidation(await create({ [field]: ['a'] }), field, 'incorrect_type');
      }
      expectValidation(await create([]), 'body', 'incorrect_type');
    });

    it('limits: message 4096, type 255, url 2048 characters', async () => {
      const limits: Record<string, number> = { message: 4096, type: 255, url: 2048 };
      for (const [field, max] of Object.entries(limits)) {
        expect((await created({ [field]: 'x'.repeat(max) }))[field]).toHaveLength(max);
        expectValidation(await create({ [field]: 'x'.repeat(max + 1) }), field);
      }
      const m = await created({ message: 'ok' });
      expectValidation(await update(m.id, { message: 'x'.repeat(4097) }), 'message');
      expect((await find(m.id))?.message).toBe('ok');
    });

    it('a malformed or absent body is 400', async () => {
      const res = await create('{"message":');
      expect(res.statusCode).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
      expect((await t.app.inject({ method: 'POST', url: url(DS), headers: t.config })).statusCode).toBe(400);
    });
  });

  describe('color', () => {
    it('follows the settings: dataset over environment, updated and deleted', async () => {
      const type = 'color-deploy';
      const m = await created({ start_time: 5000, type });
      const envMarker = await created({ start_time: 5000, type }, '__all__');
      expect(m).not.toHaveProperty('color');
      expect(await find(m.id)).not.toHaveProperty('color');

      // An environment setting colours the dataset's markers and the environment's.
      const envSetting = await setting(type, '#00aa00', '__all__');
      expect((await find(m.id))?.color).toBe('#00aa00');
      expect((await find(envMarker.id, '__all__'))?.color).toBe('#00aa00');

      // The dataset's own setting wins there, and only there.
      const dsSetting = await setting(type, '#aa0000');
      expect((await find(m.id))?.color).toBe('#aa0000');
      expect((await find(envMarker.id, '__all__'))?.color).toBe('#00aa00');
      const inOther = await created({ type }, OTHER);
      expect(inOther.color).toBe('#00aa00');

      // Create, update and delete answers carry it too.
      const fresh = await created({ type });
      expect(fresh.color).toBe('#aa0000');
      expect((await updated(fresh.id, { type, message: 'still' })).color).toBe('#aa0000');
      expect(await updated(fresh.id, { message: 'untyped now' })).not.toHaveProperty('color');
      expect((await updated(fresh.id, { type })).color).toBe('#aa0000');

      await putSetting(dsSetting, type, '#AB12CD');
      expect((await find(m.id))?.color).toBe('#AB12CD');
      expect((await deleted(fresh.id)).color).toBe('#AB12CD');

      // Deleting the dataset's setting falls back to the environment's; deleting that leaves none.
      await delSetting(dsSetting);
      expect((await find(m.id))?.color).toBe('#00aa00');
      await putSetting(envSetting, type, '#abc', '__all__');
      expect((await find(m.id))?.color).toBe('#abc');
      expect((await find(envMarker.id, '__all__'))?.color).toBe('#abc');
      await delSetting(envSetting, '__all__');
      expect(await find(m.id)).not.toHaveProperty('color');
      expect(await find(envMarker.id, '__all__')).not.toHaveProperty('color');
    });

    it('environment markers ignore dataset settings; types match exactly', async () => {
      const type = 'color-only-dataset';
      await setting(type, '#123456');
      const envMarker = await created({ type }, '__all__');
      expect(envMarker).not.toHaveProperty('color');
      expect((await created({ type })).color).toBe('#123456');
      expect(await created({ type: type.toUpperCase() })).not.toHaveProperty('color');
      expect(await created({ type: `${type} ` })).not.toHaveProperty('color');
      // Another dataset's setting does not reach here.
      await setting('color-other-only', '#654321', OTHER);
      expect(await created({ type: 'color-other-only' })).not.toHaveProperty('color');
    });
  });

  describe('dataset and __all__', () => {
    it('keeps dataset markers and environment markers apart', async () => {
      const inDs = await created({ message: 'dataset marker' });
      const inOther = await created({ message: 'other dataset marker' }, OTHER);
      const inEnv = await created({ message: 'environment marker' }, '__all__');

      const ds = (await listed()).map((m) => m.id);
      expect(ds).toContain(inDs.id);
      expect(ds).not.toContain(inEnv.id);
      expect(ds).not.toContain(inOther.id);
      const env = (await listed('__all__')).map((m) => m.id);
      expect(env).toContain(inEnv.id);
      expect(env).not.toContain(inDs.id);
      expect(env).not.toContain(inOther.id);

      // Item routes find a marker only under its own path.
      expectLegacy(await update(inDs.id, { message: 'x' }, OTHER), 404, 'marker not found');
      expectLegacy(await update(inDs.id, { message: 'x' }, '__all__'), 404, 'marker not found');
      expectLegacy(await update(inEnv.id, { message: 'x' }, DS), 404, 'marker not found');
      expectLegacy(await del(inDs.id, OTHER), 404, 'marker not found');
      expectLegacy(await del(inEnv.id, DS), 404, 'marker not found');
      expect(await find(inDs.id)).toEqual(inDs);
      expect(await find(inEnv.id, '__all__')).toEqual(inEnv);

      expect(await updated(inEnv.id, { message: 'changed' }, '__all__')).toMatchObject({ id: inEnv.id, message: 'changed' });
      expect((await deleted(inEnv.id, '__all__')).message).toBe('changed');
      expect(await find(inEnv.id, '__all__')).toBeUndefined();
    });

    it('unknown dataset → 404 on every route; names and slugs both work', async () => {
      expectDatasetNotFound(await list('nope'));
      expectDatasetNotFound(await create({}, 'nope'));
      expectDatasetNotFound(await update('x', {}, 'nope'));
      expectDatasetNotFound(await del('x', 'nope'));
      expectLegacy(await del('no-such-id'), 404, 'marker not found');
      expectContract(ITEM, 'DELETE', await del('x', 'nope'));

      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Markers Named' } })).statusCode).toBe(201);
      const m = await created({ message: 'by name' }, 'Markers Named');
      expect((await listed('markers-named')).map((x) => x.id)).toEqual([m.id]);
      expect((await deleted(m.id, 'markers-named')).message).toBe('by name');
    });

    it('deleting a dataset deletes its markers and settings', async () => {
      const ds = 'markers-doomed';
      const mk = () => t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: ds } });
      expect((await mk()).statusCode).toBe(201);
      await setting('doomed', '#abc', ds);
      const m = await created({ type: 'doomed' }, ds);
      expect(m.color).toBe('#abc');
      expect((await deleteDataset(t, ds)).statusCode).toBe(202);
      expectDatasetNotFound(await list(ds));
      expect((await mk()).statusCode).toBe(201);
      expect(await listed(ds)).toEqual([]);
      expect(json(await t.app.inject({ method: 'GET', url: `/1/marker_settings/${ds}`, headers: t.config }))).toEqual([]);
      expectLegacy(await del(m.id, ds), 404, 'marker not found');
      expect(await created({ type: 'doomed' }, ds)).not.toHaveProperty('color');
    });
  });

  describe('permissions and tenancy', () => {
    it('needs Manage Markers (403 without), refuses ingest keys (401) and no key (401)', async () => {
      const { team, environment } = await initialTenancy(t);
      const m = await created({ message: 'guarded' });
      const noMarkers = await addKey(t, team, environment, { permissions: { manage_columns: true, send_events: true, create_datasets: true } });
      const onlyMarkers = await addKey(t, team, environment, { permissions: { manage_markers: true } });
      const ingest = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: true } });

      for (const [headers, status] of [[noMarkers.headers, 403], [ingest.headers, 401], [{}, 401]] as const) {
        for (const ds of [DS, '__all__']) {
          expectLegacy(await list(ds, headers), status);
          expectLegacy(await create({ message: 'nope' }, ds, headers), status);
        }
        expectLegacy(await update(m.id, { message: 'nope' }, DS, headers), status);
        expectLegacy(await del(m.id, DS, headers), status);
      }
      expect(await find(m.id)).toEqual(m);

      expect((await list(DS, onlyMarkers.headers)).statusCode).toBe(200);
      const mine = await create({ message: 'allowed' }, '__all__', onlyMarkers.headers);
      expect(mine.statusCode, mine.body).toBe(201);
      expect((await update(m.id, { message: 'allowed' }, DS, onlyMarkers.headers)).statusCode).toBe(200);
      expect((await del(json(mine).id, '__all__', onlyMarkers.headers)).statusCode).toBe(200);
    });

    it('another environment’s markers are not found (404), even under a dataset of the same name', async () => {
      const other = await secondEnvironment(t, 'Markers Staging');
      const inDs = await created({ message: 'production dataset marker' });
      const inEnv = await created({ message: 'production environment marker' }, '__all__');

      expectDatasetNotFound(await list(DS, other.headers));
      expectDatasetNotFound(await update(inDs.id, {}, DS, other.headers));
      expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: other.headers, payload: { name: DS } })).statusCode).toBe(201);
      expect(json(await list(DS, other.headers))).toEqual([]);
      expect(json(await list('__all__', other.headers))).toEqual([]);
      expectLegacy(await update(inDs.id, { message: 'x' }, DS, other.headers), 404, 'marker not found');
      expectLegacy(await del(inDs.id, DS, other.headers), 404, 'marker not found');
      expectLegacy(await update(inEnv.id, { message: 'x' }, '__all__', other.headers), 404, 'marker not found');
      expectLegacy(await del(inEnv.id, '__all__', other.headers), 404, 'marker not found');
      expect(await find(inDs.id)).toEqual(inDs);
      expect(await find(inEnv.id, '__all__')).toEqual(inEnv);

      // Their settings do not colour our markers.
      const typed = await created({ type: 'cross-env' });
      const s = await sendJson(t, 'POST', '/1/marker_settings/__all__', { type: 'cross-env', color: '#abcdef' }, other.headers);
      expect(s.statusCode).toBe(201);
      expect(await find(typed.id)).not.toHaveProperty('color');
      const theirs = await sendJson(t, 'POST', url('__all__'), { type: 'cross-env' }, other.headers);
      expect(json(theirs).color).toBe('#abcdef');
    });
  });
});
