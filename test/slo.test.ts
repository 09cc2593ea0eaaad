// /1/slos through HTTP: lifecycle, every field rule at and past its boundary, `__all__` and
// multi-dataset SLOs, tenancy and permissions, the derived-column 409; and the maths on generated
// event streams (healthy, failing, nulls and sample rates, window edges, several datasets, late
// arrivals, an SLI change, a reset), each checked against figures worked out by hand below. The
// app clock sits on an hour boundary T0; "minute c − k" is the minute k minutes before T0 and
// events are put in the middle of their minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, deleteDataset, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { expectContract } from './contract.js';
import { expectValidation } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';

const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
/** Mid-minute of the minute `k` minutes before T0 (k ≥ 1: before now; k ≤ 0: after T0). */
const ago = (k: number) => new Date(T0 - k * 60_000 + 30_000).toISOString();

const close = (actual: number, expected: number) => expect(actual).toBeCloseTo(expected, 9);

describe('/1/slos', () => {
  let t: TestApp;
  const send = (method: 'POST' | 'PUT', url: string, body: unknown, headers = t.config) =>
    t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const create = (ds: string, body: unknown, headers = t.config) => send('POST', `/1/slos/${ds}`, body, headers);
  const update = (ds: string, id: string, body: unknown, headers = t.config) => send('PUT', `/1/slos/${ds}/${id}`, body, headers);
  const get = (ds: string, id: string, query = '', headers = t.config) => t.app.inject({ method: 'GET', url: `/1/slos/${ds}/${id}${query}`, headers });
  const list = (ds: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/slos/${ds}`, headers });
  const del = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/slos/${ds}/${id}`, headers });
  const derived = async (ds: string, alias: string, expression: string) => {
    const res = await send('POST', `/1/derived_columns/${ds}`, { alias, expression });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).id as string;
  };
  const slo = (extra: Record<string, unknown> = {}) => ({ name: 'Checkout', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000, ...extra });
  async function created(ds: string, body: unknown) {
    const res = await create(ds, body);
    expect(res.statusCode, res.body).toBe(201);
    expectContract('/1/slos/{datasetSlug}', 'POST', res);
    return json(res);
  }
  async function detailed(ds: string, id: string) {
    const res = await get(ds, id, '?detailed=true');
    expect(res.statusCode, res.body).toBe(200);
    expectContract('/1/slos/{datasetSlug}/{sloId}', 'GET', res);
    return json(res);
  }

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    t.clock.ms = T0;
    // healthy: 600 good events, one every 2 minutes over 20 hours (minutes c−2 … c−1200), and
    // two failures, at c−600 and c−120.
    const healthy = Array.from({ length: 600 }, (_, i) => ({ data: { status: 200 }, time: ago(2 * (i + 1)) }));
    healthy.push({ data: { status: 503 }, time: ago(600) }, { data: { status: 503 }, time: ago(120) });
    await ingest(t, 'healthy', healthy);
    // failing: the last 6 hours, each minute one success and one failure (c−1 … c−360).
    const failing = Array.from({ length: 360 }, (_, i) => [
      { data: { status: 200 }, time: ago(i + 1) },
      { data: { status: 500 }, time: ago(i + 1) },
    ]).flat();
    await ingest(t, 'failing', failing);
    // mixed: nulls and sample rates, and events just inside and outside the 1-day window.
    const mixed = [
      ...Array.from({ length: 100 }, () => ({ data: { status: 200 }, time: ago(5) })), // good 100
      ...Array.from({ length: 10 }, () => ({ data: { status: 500 }, time: ago(6), samplerate: 5 })), // bad 50
      ...Array.from({ length: 30 }, () => ({ data: { route: '/x' }, time: ago(7), samplerate: 100 })), // SLI null: not counted
      ...Array.from({ length: 20 }, () => ({ data: { status: 204 }, time: ago(8), samplerate: 10 })), // good 200
      { data: { status: 200 }, time: ago(1439), samplerate: 7 }, // first minute of the window: good 7
      { data: { status: 500 }, time: ago(1440), samplerate: 11 }, // one minute before it: not counted
      { data: { status: 500 }, time: ago(1500), samplerate: 1000 }, // a day ago: not counted
      { data: { status: 500 }, time: ago(-2), samplerate: 1000 }, // after now: not counted
    ];
    await ingest(t, 'mixed', mixed);
    await ingest(t, 'other', [{ data: { status: 200 }, time: ago(1) }]);
    await derived('healthy', 'ok', 'LT($status, 500)');
    await derived('failing', 'ok', 'LT($status, 500)');
    await derived('mixed', 'ok', 'IF(EXISTS($status), LT($status, 500))');
    await derived('other', 'count_me', 'INT($status)');
    await derived('__all__', 'env_ok', 'LT($status, 500)');
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), gets, lists, replaces (keeping created_at) and deletes (204)', async () => {
      const s = await created('healthy', slo({ description: 'fast', tags: [{ key: 'team', value: 'blue' }] }));
      expect(Object.keys(s).sort()).toEqual(
        ['created_at', 'dataset_slugs', 'description', 'id', 'name', 'reset_at', 'sli', 'tags', 'target_per_million', 'time_period_days', 'updated_at'].sort(),
      );
      expect(s).toMatchObject({ name: 'Checkout', description: 'fast', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000, dataset_slugs: ['healthy'], reset_at: null, tags: [{ key: 'team', value: 'blue' }] });
      const g = await get('healthy', s.id);
      expect(g.statusCode).toBe(200);
      expectContract('/1/slos/{datasetSlug}/{sloId}', 'GET', g);
      expect(json(g)).toEqual(s);
      const l = await list('healthy');
      expectContract('/1/slos/{datasetSlug}', 'GET', l);
      expect(json(l).map((x: { id: string }) => x.id)).toContain(s.id);
      expect(json(await list('__all__')).map((x: { id: string }) => x.id)).toContain(s.id);
      expect(json(await list('failing')).map((x: { id: string }) => x.id)).not.toContain(s.id);

      await new Promise((r) => setTimeout(r, 5));
      const u = await update('healthy', s.id, { name: 'Renamed', sli: { alias: 'ok' }, time_period_days: 7, target_per_million: 999000, dataset_slugs: ['failing'], id: 'x', created_at: 'y' });
      expect(u.statusCode, u.body).toBe(200);
      expectContract('/1/slos/{datasetSlug}/{sloId}', 'PUT', u);
      const after = json(u);
      // Full replacement: description and tags back to empty; datasets, id and created_at kept.
      expect(after).not.toHaveProperty('tags');
      expect(after).toMatchObject({ id: s.id, name: 'Renamed', description: '', time_period_days: 7, target_per_million: 999000, dataset_slugs: ['healthy'], created_at: s.created_at });
      expect(after.updated_at > s.updated_at).toBe(true);

      const d = await del('healthy', s.id);
      expect(d.statusCode).toBe(204);
      expect(d.body).toBe('');
      expect((await get('healthy', s.id)).statusCode).toBe(404);
      expect((await del('healthy', s.id)).statusCode).toBe(404);
    });

    it('`__all__`: dataset_slugs required (1..10 datasets of the environment), listed under each dataset', async () => {
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' } })), 'dataset_slugs', 'missing');
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: [] })), 'dataset_slugs');
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: 'healthy' })), 'dataset_slugs', 'incorrect_type');
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: Array(11).fill('healthy') })), 'dataset_slugs');
      // Exactly 10 datasets are fine.
      const names = ['healthy', 'failing', 'mixed', 'other'];
      for (let i = names.length; i < 10; i++) {
        const name = `slo-limit-${i}`;
        expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name } })).statusCode).toBe(201);
        names.push(name);
      }
      const tenSlugs = await created('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: names }));
      expect(tenSlugs.dataset_slugs).toEqual(names);
      await del('__all__', tenSlugs.id);
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: ['healthy', 'nope'] })), 'dataset_slugs.1');
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: ['healthy', 'healthy'] })), 'dataset_slugs.1');
      expectValidation(await create('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: [3] })), 'dataset_slugs.0', 'incorrect_type');
      // `ok` is not visible in `other` (a dataset field of other datasets only).
      expectValidation(await create('__all__', slo({ dataset_slugs: ['healthy', 'other'] })), 'sli.alias');
      const s = await created('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: ['healthy', 'failing'] }));
      expect(s.dataset_slugs).toEqual(['healthy', 'failing']);
      for (const ds of ['healthy', 'failing', '__all__']) {
        expect(json(await list(ds)).map((x: { id: string }) => x.id), ds).toContain(s.id);
        expect((await get(ds, s.id)).statusCode, ds).toBe(200);
      }
      expect(json(await list('mixed')).map((x: { id: string }) => x.id)).not.toContain(s.id);
      expect((await get('mixed', s.id)).statusCode).toBe(404);
      // On a dataset path, dataset_slugs is read-only: ignored.
      const single = await created('healthy', slo({ dataset_slugs: ['failing', 'mixed'] }));
      expect(single.dataset_slugs).toEqual(['healthy']);
      expect((await get('__all__', single.id)).statusCode).toBe(200);
      await del('__all__', s.id);
      await del('healthy', single.id);
    });
  });

  describe('field rules', () => {
    it('name: required, 1..120 characters, not blank, a string', async () => {
      expectValidation(await create('healthy', { ...slo(), name: undefined }), 'name', 'missing');
      expectValidation(await create('healthy', slo({ name: '' })), 'name', 'missing');
      expectValidation(await create('healthy', slo({ name: '   ' })), 'name', 'missing');
      expectValidation(await create('healthy', slo({ name: 'x'.repeat(121) })), 'name');
      expectValidation(await create('healthy', slo({ name: 7 })), 'name', 'incorrect_type');
      const s = await created('healthy', slo({ name: 'é'.repeat(120) }));
      await del('healthy', s.id);
    });

    it('description: at most 1023 characters; omitted or null is ""', async () => {
      expectValidation(await create('healthy', slo({ description: 'x'.repeat(1024) })), 'description');
      expectValidation(await create('healthy', slo({ description: 5 })), 'description', 'incorrect_type');
      const a = await created('healthy', slo({ description: 'x'.repeat(1023) }));
      const b = await created('healthy', slo({ description: null }));
      expect(b.description).toBe('');
      await del('healthy', a.id);
      await del('healthy', b.id);
    });

    it('sli.alias: required, 1..255, a boolean calculated field of the dataset or the environment', async () => {
      expectValidation(await create('healthy', { ...slo(), sli: undefined }), 'sli', 'missing');
      expectValidation(await create('healthy', slo({ sli: 'ok' })), 'sli', 'incorrect_type');
      expectValidation(await create('healthy', slo({ sli: {} })), 'sli.alias', 'missing');
      expectValidation(await create('healthy', slo({ sli: { alias: '' } })), 'sli.alias', 'missing');
      expectValidation(await create('healthy', slo({ sli: { alias: 'x'.repeat(256) } })), 'sli.alias');
      expectValidation(await create('healthy', slo({ sli: { alias: 'nope' } })), 'sli.alias');
      expectValidation(await create('healthy', slo({ sli: { alias: 'status' } })), 'sli.alias'); // a column, not a calculated field
      expectValidation(await create('healthy', slo({ sli: { alias: 'count_me' } })), 'sli.alias'); // another dataset's field
      expectValidation(await create('other', slo({ sli: { alias: 'count_me' } })), 'sli.alias'); // an integer field
      const envWide = await created('mixed', slo({ sli: { alias: 'env_ok' } }));
      expectValidation(await update('mixed', envWide.id, slo({ sli: { alias: 'nope' } })), 'sli.alias');
      await del('mixed', envWide.id);
    });

    it('time_period_days: integer ≥ 1; target_per_million: integer 0..999999', async () => {
      expectValidation(await create('healthy', { ...slo(), time_period_days: undefined }), 'time_period_days', 'missing');
      expectValidation(await create('healthy', slo({ time_period_days: 0 })), 'time_period_days');
      expectValidation(await create('healthy', slo({ time_period_days: 1.5 })), 'time_period_days', 'incorrect_type');
      expectValidation(await create('healthy', slo({ time_period_days: '30' })), 'time_period_days', 'incorrect_type');
      expectValidation(await create('healthy', { ...slo(), target_per_million: undefined }), 'target_per_million', 'missing');
      expectValidation(await create('healthy', slo({ target_per_million: -1 })), 'target_per_million');
      expectValidation(await create('healthy', slo({ target_per_million: 1_000_000 })), 'target_per_million');
      expectValidation(await create('healthy', slo({ target_per_million: 99.9 })), 'target_per_million', 'incorrect_type');
      for (const ok of [slo({ target_per_million: 0, time_period_days: 1 }), slo({ target_per_million: 999999, time_period_days: 90 })]) {
        const s = await created('healthy', ok);
        await del('healthy', s.id);
      }
    });

    it('tags: at most 10, the Tag rules; several problems in one 422; PUT checks the same', async () => {
      const tags = Array.from({ length: 11 }, (_, i) => ({ key: `k${'abcdefghijk'[i]}`.replace(/\d/g, ''), value: 'v' }));
      expectValidation(await create('healthy', slo({ tags })), 'tags');
      const ten = await created('healthy', slo({ tags: tags.slice(0, 10) }));
      expect(ten.tags).toHaveLength(10);
      await del('healthy', ten.id);
      expectValidation(await create('healthy', slo({ tags: [{ key: 'Team', value: 'blue' }] })), 'tags.0.key');
      expectValidation(await create('healthy', slo({ tags: [{ key: 'team', value: '1blue' }] })), 'tags.0.value');
      const res = await create('healthy', slo({ name: '', target_per_million: -5, tags: [{ key: 'team' }] }));
      expectValidation(res, 'name', 'missing');
      expectValidation(res, 'target_per_million');
      expectValidation(res, 'tags.0.value', 'missing');
      const s = await created('healthy', slo());
      expectValidation(await update('healthy', s.id, slo({ tags: [{ key: 'a', value: 'B' }] })), 'tags.0.value');
      expectValidation(await update('healthy', s.id, { name: 'x' }), 'sli', 'missing');
      await del('healthy', s.id);
    });

    it('bodies: empty → 400, not an object → 422; `detailed` must be true, false or empty', async () => {
      expect((await t.app.inject({ method: 'POST', url: '/1/slos/healthy', headers: t.config })).statusCode).toBe(400);
      expectValidation(await create('healthy', [1]), 'body', 'incorrect_type');
      const s = await created('healthy', slo());
      expectValidation(await get('healthy', s.id, '?detailed=yes'), 'query.detailed');
      expect(json(await get('healthy', s.id, '?detailed=false')).status).toBeUndefined();
      expect(json(await get('healthy', s.id, '?detailed')).status).toBe('no_alerts');
      await del('healthy', s.id);
    });
  });

  describe('tenancy, permissions, dependants', () => {
    it('another environment, another dataset or an unknown dataset → 404', async () => {
      const s = await created('healthy', slo());
      const other = await secondEnvironment(t, 'SLO elsewhere');
      await ingest(t, 'healthy', []);
      expect((await get('__all__', s.id, '', other.headers)).statusCode).toBe(404);
      expect((await del('__all__', s.id, other.headers)).statusCode).toBe(404);
      expect(json(await list('__all__', other.headers))).toEqual([]);
      expect((await get('failing', s.id)).statusCode).toBe(404);
      expect((await update('failing', s.id, slo())).statusCode).toBe(404);
      expect((await get('nope', s.id)).statusCode).toBe(404);
      expect((await list('nope')).statusCode).toBe(404);
      expect((await create('nope', slo())).statusCode).toBe(404);
      await del('healthy', s.id);
    });

    it('403 without Manage SLOs on every route; 401 without a key', async () => {
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), manage_slos: false } });
      const h = key.headers;
      const s = await created('healthy', slo());
      for (const res of [
        await list('healthy', h),
        await create('healthy', slo(), h),
        await get('healthy', s.id, '', h),
        await update('healthy', s.id, slo(), h),
        await del('healthy', s.id, h),
        await t.app.inject({ method: 'POST', url: `/1/slos/healthy/${s.id}/reset`, headers: h }),
        await send('POST', '/1/reporting/slos/historical', { ids: [s.id], start_time: T0 / 1000 - 3600, end_time: T0 / 1000 }, h),
      ]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(Object.keys(json(res))).toEqual(['error']);
      }
      expect((await list('healthy', {})).statusCode).toBe(401);
      expect((await list('healthy', t.ingest)).statusCode).toBe(401);
      await del('healthy', s.id);
    });

    it('a calculated field an SLO uses cannot be deleted (409) until the SLO is gone', async () => {
      const fieldId = await derived('healthy', 'doomed', 'GT($status, 0)');
      const envField = await derived('__all__', 'env_doomed', 'GT($status, 0)');
      const a = await created('healthy', slo({ sli: { alias: 'doomed' } }));
      const b = await created('__all__', slo({ sli: { alias: 'env_doomed' }, dataset_slugs: ['failing'] }));
      const res = await t.app.inject({ method: 'DELETE', url: `/1/derived_columns/healthy/${fieldId}`, headers: t.config });
      expect(res.statusCode, res.body).toBe(409);
      expect(json(res).detail).toContain(a.id);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/derived_columns/__all__/${envField}`, headers: t.config })).statusCode).toBe(409);
      await del('healthy', a.id);
      await del('__all__', b.id);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/derived_columns/healthy/${fieldId}`, headers: t.config })).statusCode).toBe(204);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/derived_columns/__all__/${envField}`, headers: t.config })).statusCode).toBe(204);
    });
  });

  describe('maths on generated streams', () => {
    it('a healthy stream', async () => {
      const s = await created('healthy', slo());
      const d = await detailed('healthy', s.id);
      // G = 600, B = 2, E = 602; allowed failures = 1% of 602 = 6.02.
      close(d.compliance, (100 * 600) / 602);
      close(d.budget_remaining, 100 * (1 - 2 / 6.02));
      // Last 4 hours = minutes c−239 … c: the good events at c−2 … c−238 (119) and the failure at
      // c−120: failure rate 1/120 over an allowed 1%.
      close(d.burn_rate, 1 / 120 / 0.01);
      expect(d.status).toBe('no_alerts');
      await del('healthy', s.id);
    });

    it('a failing stream: budget far below zero', async () => {
      const s = await created('failing', slo({ target_per_million: 999000 }));
      const d = await detailed('failing', s.id);
      // 360 good, 360 bad; allowed = 0.1% of 720 = 0.72.
      close(d.compliance, 50);
      close(d.budget_remaining, 100 * (1 - 360 / 0.72));
      // Last 4 hours: 239 minutes (c−1 … c−239) of one good and one bad: 50% over 0.1%.
      close(d.burn_rate, 0.5 / 0.001);
      await del('failing', s.id);
    });

    it('nulls are not counted, sample rates weigh, the window is the last period_days × 1440 minutes', async () => {
      const s = await created('mixed', slo({ target_per_million: 900000 }));
      const d = await detailed('mixed', s.id);
      // good: 100 × 1 + 20 × 10 + 7 (minute c−1439, the window's first) = 307;
      // bad: 10 × 5 = 50 (c−1440, a day ago and after now are outside); nulls: none counted.
      // E = 357; allowed = 10% of 357 = 35.7.
      close(d.compliance, (100 * 307) / 357);
      close(d.budget_remaining, 100 * (1 - 50 / 35.7));
      // 4 hours: E₄ = 350, B₄ = 50.
      close(d.burn_rate, 50 / 350 / 0.1);
      await del('mixed', s.id);
    });

    it('an SLO over several datasets counts them together', async () => {
      const s = await created('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: ['healthy', 'failing'] }));
      const d = await detailed('__all__', s.id);
      // healthy G 600 B 2, failing G 360 B 360: G 960, B 362, E 1322, allowed 13.22.
      close(d.compliance, (100 * 960) / 1322);
      close(d.budget_remaining, 100 * (1 - 362 / 13.22));
      // 4 hours: healthy 119 good + 1 bad, failing 239 + 239: B₄ 240 of 598.
      close(d.burn_rate, 240 / 598 / 0.01);
      await del('__all__', s.id);
    });

    it('rollups: incremental, late and backfilled events counted, rebuilt when the SLI changes', async () => {
      await ingest(t, 'late', [{ data: { status: 200 }, time: ago(30) }, { data: { status: 500 }, time: ago(20) }]);
      const fieldId = await derived('late', 'ok', 'LT($status, 500)');
      const s = await created('late', slo());
      let d = await detailed('late', s.id);
      close(d.compliance, 50);
      const state = async () => (await t.events.query(`SELECT start_us, through_us, fingerprint FROM slo_rollup_state WHERE slo_id = ?`, [s.id]))[0];
      const first = await state();
      expect(Number(first.through_us)).toBe(T0 * 1000);

      t.clock.advance(120);
      // A late event (3 minutes ago: inside the re-aggregated minutes), a backfilled one (5 hours
      // ago: found through its ingest time), and a new one.
      await ingest(t, 'late', [
        { data: { status: 200 }, time: ago(3) },
        { data: { status: 200 }, time: ago(300) },
        { data: { status: 500 }, time: ago(-1) },
      ]);
      d = await detailed('late', s.id);
      // G 3, B 2.
      close(d.compliance, 60);
      const second = await state();
      expect(second.fingerprint).toBe(first.fingerprint);
      expect(Number(second.start_us)).toBe(Number(first.start_us) + 2 * 60_000_000); // the window moved, nothing rebuilt
      expect(Number(second.through_us)).toBe((T0 + 120_000) * 1000);

      // The calculated field changes: the rollups are rebuilt from raw events.
      const res = await send('PUT', `/1/derived_columns/late/${fieldId}`, { alias: 'ok', expression: 'LT($status, 600)' });
      expect(res.statusCode, res.body).toBe(200);
      d = await detailed('late', s.id);
      close(d.compliance, 100);
      close(d.budget_remaining, 100);
      expect((await state()).fingerprint).not.toBe(first.fingerprint);
      await del('late', s.id);
      expect(await t.events.query(`SELECT * FROM slo_rollup_state WHERE slo_id = ?`, [s.id])).toEqual([]);
      t.clock.ms = T0;
    });

    it('resetting starts the budget afresh from reset_at', async () => {
      const s = await created('failing', slo({ target_per_million: 999000 }));
      expect((await detailed('failing', s.id)).budget_remaining).toBeLessThan(0);
      const res = await t.app.inject({ method: 'POST', url: `/1/slos/failing/${s.id}/reset`, headers: t.config });
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res).reset_at).toBe(new Date(T0).toISOString());
      let d = await detailed('failing', s.id);
      expect(d.reset_at).toBe(new Date(T0).toISOString());
      // Nothing since the reset.
      expect(d).toMatchObject({ status: 'no_events', compliance: 100, budget_remaining: 100, burn_rate: 0 });
      t.clock.advance(300);
      await ingest(t, 'failing', [
        ...Array.from({ length: 9 }, () => ({ data: { status: 200 }, time: ago(-1) })),
        { data: { status: 500 }, time: ago(-2) },
      ]);
      d = await detailed('failing', s.id);
      // Since the reset: 9 good, 1 bad; allowed 0.1% of 10 = 0.01.
      close(d.compliance, 90);
      close(d.budget_remaining, 100 * (1 - 1 / 0.01));
      close(d.burn_rate, 0.1 / 0.001);
      await del('failing', s.id);
      t.clock.ms = T0;
    });
  });

  describe('POST /1/reporting/slos/historical', () => {
    const history = (body: unknown, headers = t.config) => send('POST', '/1/reporting/slos/historical', body, headers);
    const nowS = T0 / 1000;

    it('answers per SLO, hourly up to 7 days, each figure over the window ending with the interval', async () => {
      const s = await created('healthy', slo());
      // A multi-dataset SLO outlives its datasets (a dataset's own SLO is deleted with it); without
      // them it has no events.
      const own = await created('other', slo({ sli: { alias: 'env_ok' } }));
      const empty = await created('__all__', slo({ sli: { alias: 'env_ok' }, dataset_slugs: ['other'] }));
      expect((await deleteDataset(t, 'other')).statusCode).toBe(202);
      expect((await get('__all__', own.id)).statusCode).toBe(404);
      expect(json(await get('__all__', empty.id)).dataset_slugs).toEqual([]);
      const res = await history({ ids: [s.id, empty.id], start_time: nowS - 6 * 3600, end_time: nowS });
      expect(res.statusCode, res.body).toBe(200);
      expectContract('/1/reporting/slos/historical', 'POST', res);
      const body = json(res);
      expect(body[empty.id] ?? []).toEqual([]);
      // Interval j hours before T0 ends at T0 − j h: the good events before it (k > 30 j of the
      // 600 at c − 2k) and the failures before it (c−600 always, c−120 for j ≤ 1).
      const expected = [5, 4, 3, 2, 1, 0].map((j) => {
        const good = 600 - 30 * j;
        const bad = j <= 1 ? 2 : 1;
        return { timestamp: nowS - (j + 1) * 3600, compliance: (100 * good) / (good + bad), budget_remaining: 100 * (1 - bad / (0.01 * (good + bad))) };
      });
      expect(body[s.id].length).toBe(6);
      body[s.id].forEach((p: { timestamp: number; compliance: number; budget_remaining: number }, i: number) => {
        expect(p.timestamp).toBe(expected[i].timestamp);
        close(p.compliance, expected[i].compliance);
        close(p.budget_remaining, expected[i].budget_remaining);
      });
      // Longer ranges: days up to 90, then weeks (Monday 00:00 UTC).
      const days = json(await history({ ids: [s.id], start_time: nowS - 10 * 86400, end_time: nowS }))[s.id];
      expect(days.length).toBeGreaterThan(0);
      for (const p of days) expect(p.timestamp % 86400).toBe(0);
      const weeks = json(await history({ ids: [s.id], start_time: nowS - 200 * 86400, end_time: nowS }))[s.id];
      for (const p of weeks) expect(new Date(p.timestamp * 1000).toISOString()).toMatch(/T00:00:00\.000Z$/);
      for (const p of weeks) expect(new Date(p.timestamp * 1000).getUTCDay()).toBe(1);
      await del('healthy', s.id);
    });

    it('validates ids (1..24 SLOs of this environment), start (≤ 1 year ago), end (after start, not in the future)', async () => {
      const s = await created('healthy', slo());
      const ok = { ids: [s.id], start_time: nowS - 3600, end_time: nowS };
      expect((await history(ok)).statusCode).toBe(200);
      expectValidation(await history({ ...ok, ids: undefined }), 'ids', 'missing');
      expectValidation(await history({ ...ok, ids: [] }), 'ids');
      expectValidation(await history({ ...ok, ids: Array(25).fill(s.id) }), 'ids');
      // Exactly 24 SLOs are fine: one series each.
      const more = [s.id];
      for (let i = 1; i < 24; i++) more.push((await created('healthy', slo({ name: `limit ${i}` }))).id);
      const all24 = await history({ ...ok, ids: more });
      expect(all24.statusCode, all24.body).toBe(200);
      expect(Object.keys(json(all24)).sort()).toEqual([...more].sort());
      for (const id of more.slice(1)) await del('healthy', id);
      expectValidation(await history({ ...ok, ids: s.id }), 'ids', 'incorrect_type');
      expectValidation(await history({ ...ok, ids: [s.id, 'nope'] }), 'ids.1');
      expectValidation(await history({ ...ok, start_time: undefined }), 'start_time', 'missing');
      expectValidation(await history({ ...ok, start_time: '1' }), 'start_time', 'incorrect_type');
      expectValidation(await history({ ...ok, start_time: nowS - 366 * 86400 }), 'start_time');
      expect((await history({ ...ok, start_time: nowS - 365 * 86400 })).statusCode).toBe(200);
      expectValidation(await history({ ...ok, end_time: nowS + 1 }), 'end_time');
      expectValidation(await history({ ...ok, end_time: ok.start_time }), 'end_time');
      const other = await secondEnvironment(t, 'History elsewhere');
      expectValidation(await history(ok, other.headers), 'ids.0');
      await del('healthy', s.id);
    });
  });
});
