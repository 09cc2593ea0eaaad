// /1/burn_alerts through HTTP (lifecycle, every field rule, list per SLO, tenancy, permissions)
// and evaluation through the scheduler with the app clock: a stream whose failures started an
// hour ago makes an exhaustion-time and a budget-rate alert fire, with the figures worked out by
// hand below, and resolve once the failures stop; notifications on each flip only, state kept
// across a restart of the app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { expectContract } from './contract.js';
import { expectValidation } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import type { Notification } from '../src/notify/types.js';
import { getAlertState } from '../src/domain/burn-alerts.js';
import { loadSettings } from '../src/settings.js';

const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
/** Mid-minute of the minute `k` minutes before T0 (negative: after T0). */
const ago = (k: number) => new Date(T0 - k * 60_000 + 30_000).toISOString();

describe('/1/burn_alerts', () => {
  let t: TestApp;
  let sloId: string; // on `burn`, 99% over 1 day
  let otherSloId: string; // on `calm`
  let emailId: string;
  let slackId: string;
  const send = (method: 'POST' | 'PUT', url: string, body: unknown, headers = t.config) =>
    t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const create = (ds: string, body: unknown, headers = t.config) => send('POST', `/1/burn_alerts/${ds}`, body, headers);
  const update = (ds: string, id: string, body: unknown, headers = t.config) => send('PUT', `/1/burn_alerts/${ds}/${id}`, body, headers);
  const get = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/burn_alerts/${ds}/${id}`, headers });
  const list = (ds: string, slo?: string, headers = t.config) =>
    t.app.inject({ method: 'GET', url: `/1/burn_alerts/${ds}${slo === undefined ? '' : `?slo_id=${slo}`}`, headers });
  const del = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/burn_alerts/${ds}/${id}`, headers });
  const exhaustion = (extra: Record<string, unknown> = {}) => ({ slo: { id: sloId }, exhaustion_minutes: 240, recipients: [{ id: emailId }], ...extra });
  const budgetRate = (extra: Record<string, unknown> = {}) => ({
    slo: { id: sloId },
    alert_type: 'budget_rate',
    budget_rate_window_minutes: 60,
    budget_rate_decrease_threshold_per_million: 100_000,
    recipients: [{ id: slackId }],
    ...extra,
  });
  async function created(ds: string, body: unknown) {
    const res = await create(ds, body);
    expect(res.statusCode, res.body).toBe(201);
    expectContract('/1/burn_alerts/{datasetSlug}', 'POST', res);
    return json(res);
  }
  const sent = () => (t.app.jobs.notifier.sent ?? []) as Notification[];

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    t.clock.ms = T0;
    // burn: a day of successes (10 per minute: one event with samplerate 10, minutes c−1 …
    // c−1439) and, for the last hour, one failure per minute as well (c−1 … c−60).
    const events = [
      ...Array.from({ length: 1439 }, (_, i) => ({ data: { status: 200 }, time: ago(i + 1), samplerate: 10 })),
      ...Array.from({ length: 60 }, (_, i) => ({ data: { status: 500 }, time: ago(i + 1) })),
    ];
    await ingest(t, 'burn', events);
    await ingest(t, 'calm', [{ data: { status: 200 }, time: ago(1) }]);
    for (const ds of ['burn', 'calm']) {
      expect((await send('POST', `/1/derived_columns/${ds}`, { alias: 'ok', expression: 'LT($status, 500)' })).statusCode).toBe(201);
    }
    const slo = async (ds: string) => {
      const res = await send('POST', `/1/slos/${ds}`, { name: `SLO ${ds}`, sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 });
      expect(res.statusCode, res.body).toBe(201);
      return json(res).id as string;
    };
    sloId = await slo('burn');
    otherSloId = await slo('calm');
    const recipient = async (body: unknown) => {
      const res = await send('POST', '/1/recipients', body);
      expect(res.statusCode, res.body).toBe(201);
      return json(res).id as string;
    };
    emailId = await recipient({ type: 'email', details: { email_address: 'oncall@example.com' } });
    slackId = await recipient({ type: 'slack', details: { slack_channel: '#slo' } });
  });
  afterAll(() => t.close());

  describe('API', () => {
    it('creates (201), gets, lists per SLO (no recipients), replaces (200) and deletes (204)', async () => {
      const a = await created('burn', exhaustion({ description: 'runbook' }));
      expect(a).toMatchObject({
        alert_type: 'exhaustion_time',
        exhaustion_minutes: 240,
        description: 'runbook',
        triggered: false,
        slo: { id: sloId },
        recipients: [{ id: emailId, type: 'email', target: 'oncall@example.com' }],
      });
      const g = await get('burn', a.id);
      expectContract('/1/burn_alerts/{datasetSlug}/{burnAlertId}', 'GET', g);
      expect(json(g)).toEqual(a);
      expect(json(await get('__all__', a.id))).toEqual(a);
      const l = await list('burn', sloId);
      expect(l.statusCode).toBe(200);
      expectContract('/1/burn_alerts/{datasetSlug}', 'GET', l);
      const { recipients: _, ...item } = a;
      expect(json(l)).toEqual([item]);
      expect(json(await list('calm', otherSloId))).toEqual([]);

      const u = await update('burn', a.id, budgetRate({ slo: { id: otherSloId }, triggered: true }));
      expect(u.statusCode, u.body).toBe(200);
      expectContract('/1/burn_alerts/{datasetSlug}/{burnAlertId}', 'PUT', u);
      const after = json(u);
      // Full replacement: the type may change, description back to "", the SLO stays.
      expect(after).toMatchObject({ id: a.id, alert_type: 'budget_rate', description: '', slo: { id: sloId }, triggered: false, budget_rate_window_minutes: 60 });
      expect(after.exhaustion_minutes).toBeUndefined();
      expect(after.recipients.map((r: { id: string }) => r.id)).toEqual([slackId]);

      expect((await del('burn', a.id)).statusCode).toBe(204);
      expect((await get('burn', a.id)).statusCode).toBe(404);
      expect((await del('burn', a.id)).statusCode).toBe(404);
    });

    it('exhaustion_time: exhaustion_minutes required, integer ≥ 0; budget_rate fields refused', async () => {
      expectValidation(await create('burn', exhaustion({ exhaustion_minutes: undefined })), 'exhaustion_minutes', 'missing');
      expectValidation(await create('burn', exhaustion({ exhaustion_minutes: -1 })), 'exhaustion_minutes');
      expectValidation(await create('burn', exhaustion({ exhaustion_minutes: 1.5 })), 'exhaustion_minutes', 'incorrect_type');
      expectValidation(await create('burn', exhaustion({ budget_rate_window_minutes: 60 })), 'budget_rate_window_minutes');
      expectValidation(await create('burn', exhaustion({ alert_type: 'exhaustion_time', budget_rate_decrease_threshold_per_million: 5 })), 'budget_rate_decrease_threshold_per_million');
      expectValidation(await create('burn', exhaustion({ alert_type: 'sometimes' })), 'alert_type');
      const zero = await created('burn', exhaustion({ exhaustion_minutes: 0, budget_rate_window_minutes: null }));
      expect(zero.exhaustion_minutes).toBe(0);
      await del('burn', zero.id);
    });

    it('budget_rate: window 60 … the SLO period in minutes, threshold 1 … 1,000,000; exhaustion_minutes refused', async () => {
      expectValidation(await create('burn', budgetRate({ budget_rate_window_minutes: undefined })), 'budget_rate_window_minutes', 'missing');
      expectValidation(await create('burn', budgetRate({ budget_rate_window_minutes: 59 })), 'budget_rate_window_minutes');
      expectValidation(await create('burn', budgetRate({ budget_rate_window_minutes: 1441 })), 'budget_rate_window_minutes');
      expectValidation(await create('burn', budgetRate({ budget_rate_decrease_threshold_per_million: undefined })), 'budget_rate_decrease_threshold_per_million', 'missing');
      expectValidation(await create('burn', budgetRate({ budget_rate_decrease_threshold_per_million: 0 })), 'budget_rate_decrease_threshold_per_million');
      expectValidation(await create('burn', budgetRate({ budget_rate_decrease_threshold_per_million: 1_000_001 })), 'budget_rate_decrease_threshold_per_million');
      expectValidation(await create('burn', budgetRate({ exhaustion_minutes: 30 })), 'exhaustion_minutes');
      for (const extra of [{ budget_rate_window_minutes: 1440, budget_rate_decrease_threshold_per_million: 1_000_000 }, { budget_rate_window_minutes: 60, budget_rate_decrease_threshold_per_million: 1 }]) {
        const a = await created('burn', budgetRate(extra));
        await del('burn', a.id);
      }
    });

    it("an SLO's period cannot shrink below a budget_rate alert's window (422 on the SLO PUT)", async () => {
      const sloBody = (days: number) => ({ name: 'three days', sli: { alias: 'ok' }, time_period_days: days, target_per_million: 990000 });
      const res = await send('POST', '/1/slos/calm', sloBody(3));
      expect(res.statusCode, res.body).toBe(201);
      const slo = json(res).id as string;
      const a = await created('calm', budgetRate({ slo: { id: slo }, budget_rate_window_minutes: 2880 }));
      const shrunk = await send('PUT', `/1/slos/calm/${slo}`, sloBody(1));
      expectValidation(shrunk, 'time_period_days');
      expect(json(shrunk).type_detail[0].description).toMatch(/2880-minute window/);
      expect((await send('PUT', `/1/slos/calm/${slo}`, sloBody(2))).statusCode).toBe(200);
      await del('calm', a.id);
      expect((await send('PUT', `/1/slos/calm/${slo}`, sloBody(1))).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/slos/calm/${slo}`, headers: t.config })).statusCode).toBe(204);
    });

    it('recipients required (≥ 1, of the team) on create and update; description ≤ 1023; slo.id required on create', async () => {
      expectValidation(await create('burn', exhaustion({ recipients: undefined })), 'recipients', 'missing');
      expectValidation(await create('burn', exhaustion({ recipients: [] })), 'recipients', 'missing');
      expectValidation(await create('burn', exhaustion({ recipients: [{ id: 'nope' }] })), 'recipients.0.id');
      expectValidation(await create('burn', exhaustion({ description: 'x'.repeat(1024) })), 'description');
      expectValidation(await create('burn', exhaustion({ slo: undefined })), 'slo', 'missing');
      expectValidation(await create('burn', exhaustion({ slo: {} })), 'slo.id', 'missing');
      expect((await create('burn', exhaustion({ slo: { id: 'nope' } }))).statusCode).toBe(404);
      expect((await create('calm', exhaustion())).statusCode).toBe(404); // the SLO is not calm's
      const a = await created('burn', exhaustion({ description: 'x'.repeat(1023) }));
      expectValidation(await update('burn', a.id, { exhaustion_minutes: 10 }), 'recipients', 'missing');
      // A recipient in use cannot be deleted.
      expect((await t.app.inject({ method: 'DELETE', url: `/1/recipients/${emailId}`, headers: t.config })).statusCode).toBe(409);
      await del('burn', a.id);
    });

    it('an inline email recipient {type: email, target} (no id): the team recipient of that address, or a new one, named by id', async () => {
      const emails = async () =>
        (json(await t.app.inject({ method: 'GET', url: '/1/recipients', headers: t.config })) as { id: string; type: string; details: { email_address?: string } }[])
          .filter((r) => r.type === 'email');
      const known = await created('burn', exhaustion({ recipients: [{ type: 'email', target: 'ONCALL@example.com' }] }));
      expect(known.recipients).toEqual([{ id: emailId, type: 'email', target: 'oncall@example.com' }]);
      const before = (await emails()).length;
      const fresh = await created('burn', exhaustion({ recipients: [{ type: 'email', target: 'a@b.co' }] }));
      const made = (await emails()).find((r) => r.details.email_address === 'a@b.co');
      expect(made).toBeDefined();
      expect((await emails()).length).toBe(before + 1);
      expect(fresh.recipients).toEqual([{ id: made!.id, type: 'email', target: 'a@b.co' }]);
      expect(json(await get('burn', fresh.id)).recipients).toEqual(fresh.recipients);
      // PUT with it again: the same recipient.
      const again = await update('burn', fresh.id, exhaustion({ recipients: [{ type: 'email', target: 'a@b.co' }] }));
      expect(json(again).recipients).toEqual(fresh.recipients);
      // Refused bodies make no recipient; a bad address is a 422 on target.
      expectValidation(await create('burn', exhaustion({ exhaustion_minutes: -1, recipients: [{ type: 'email', target: 'never-made@example.com' }] })), 'exhaustion_minutes');
      expectValidation(await create('burn', exhaustion({ recipients: [{ type: 'email', target: 'no-at-sign' }] })), 'recipients.0.target');
      expect((await emails()).length).toBe(before + 1);
      // Marker recipients are for triggers only.
      expectValidation(await create('burn', exhaustion({ recipients: [{ type: 'marker', target: 'x' }] })), 'recipients.0.type');
      for (const a of [known, fresh]) await del('burn', a.id);
    });

    it('alert_type "" is exhaustion_time; auto_investigate is stored and echoed', async () => {
      const a = await created('burn', exhaustion({ alert_type: '', auto_investigate: true, description: '' }));
      expect(a).toMatchObject({ alert_type: 'exhaustion_time', exhaustion_minutes: 240, auto_investigate: true });
      expect(json(await get('burn', a.id)).auto_investigate).toBe(true);
      const listed = json(await list('burn', sloId)).find((x: { id: string }) => x.id === a.id);
      expect(listed.auto_investigate).toBe(true);
      const off = json(await update('burn', a.id, exhaustion({ alert_type: '', auto_investigate: false })));
      expect(off).toMatchObject({ alert_type: 'exhaustion_time', auto_investigate: false });
      expect(json(await update('burn', a.id, exhaustion())).auto_investigate).toBe(false);
      expectValidation(await update('burn', a.id, exhaustion({ auto_investigate: 1 })), 'auto_investigate', 'incorrect_type');
      expectValidation(await update('burn', a.id, exhaustion({ alert_type: 'sometimes' })), 'alert_type');
      await del('burn', a.id);
    });

    it('the list needs slo_id (422) of an SLO reachable from the path (404)', async () => {
      expectValidation(await list('burn'), 'slo_id', 'missing');
      expect((await list('burn', 'nope')).statusCode).toBe(404);
      expect((await list('calm', sloId)).statusCode).toBe(404);
      expect((await list('__all__', sloId)).statusCode).toBe(200);
    });

    it('tenancy and permissions: another environment → 404; without Manage SLOs → 403', async () => {
      const a = await created('burn', exhaustion());
      const other = await secondEnvironment(t, 'Burn elsewhere');
      expect((await get('__all__', a.id, other.headers)).statusCode).toBe(404);
      expect((await del('__all__', a.id, other.headers)).statusCode).toBe(404);
      expect((await list('__all__', sloId, other.headers)).statusCode).toBe(404);
      expect((await get('calm', a.id)).statusCode).toBe(404);
      const { team, environment } = await initialTenancy(t);
      const h = (await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), manage_slos: false } })).headers;
      for (const res of [await list('burn', sloId, h), await create('burn', exhaustion(), h), await get('burn', a.id, h), await update('burn', a.id, exhaustion(), h), await del('burn', a.id, h)]) {
        expect(res.statusCode, res.body).toBe(403);
      }
      await del('burn', a.id);
    });

    it('deleting the SLO deletes its burn alerts', async () => {
      const res = await send('POST', '/1/slos/calm', { name: 'Doomed', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 });
      const doomed = json(res).id;
      const a = await created('calm', exhaustion({ slo: { id: doomed } }));
      expect((await t.app.inject({ method: 'DELETE', url: `/1/slos/calm/${doomed}`, headers: t.config })).statusCode).toBe(204);
      expect((await get('calm', a.id)).statusCode).toBe(404);
      expect(await t.store.listObjects('burn_alert', { environmentId: a.environmentId })).toEqual([]);
    });
  });

  describe('evaluation', () => {
    it('fires when failures that started an hour ago burn the budget, resolves when they stop', async () => {
      const exhaust = await created('burn', exhaustion({ description: 'page someone' }));
      const rate = await created('burn', budgetRate());
      const quiet = await created('burn', exhaustion({ exhaustion_minutes: 30 }));
      const before = sent().length;
      await t.app.jobs.scheduler.tick();

      // At T0 the window (minutes c−1439 … c) holds 14,390 good and 60 bad: E = 14,450,
      // allowed failures A = 1% × 14,450 = 144.5, so 84.5 failures are left.
      // 240-minute alert: lookback 60 minutes (c−59 … c) holds 59 failures → 59/60 per minute →
      // exhausted in 84.5 ÷ (59/60) = 85.93 minutes ≤ 240: fires.
      // 30-minute alert: lookback ⌈30/4⌉ = 8 minutes holds 7 failures → 84.5 ÷ (7/8) = 96.6 > 30.
      // budget rate: 59 failures in the last 60 minutes = 59 / 144.5 = 40.8% of the budget ≥ 10%.
      const fired = sent().slice(before);
      expect(fired.length).toBe(2);
      const byAlert = new Map(fired.map((n) => [n.alert.id, n]));
      const e = byAlert.get(exhaust.id)!;
      expect(e).toMatchObject({ source: 'burn_alert', status: 'triggered', recipient: { id: emailId }, alert: { id: exhaust.id, description: 'page someone', dedupKey: expect.any(String) } });
      expect(e.alert.name).toContain('SLO burn');
      expect(e.result.slo).toMatchObject({ id: sloId, name: 'SLO burn' });
      expect(e.result.slo!.exhaustionMinutes).toBeCloseTo((84.5 * 60) / 59, 9);
      expect(e.result.slo!.budgetRemaining).toBeCloseTo(100 * (1 - 60 / 144.5), 9);
      // Last 4 hours (c−239 … c): 239 minutes of 10 good, and all 60 failures.
      expect(e.result.slo!.burnRate).toBeCloseTo(60 / (2390 + 60) / 0.01, 9);
      expect(e.timestamp).toBe(new Date(T0).toISOString());
      const r = byAlert.get(rate.id)!;
      expect(r).toMatchObject({ status: 'triggered', recipient: { id: slackId } });
      expect(r.result.summary).toContain('40.83');

      expect(json(await get('burn', exhaust.id)).triggered).toBe(true);
      expect(json(await get('burn', quiet.id)).triggered).toBe(false);
      expect(json(await t.app.inject({ method: 'GET', url: `/1/slos/burn/${sloId}?detailed=true`, headers: t.config })).status).toBe('triggered');
      expect(json(await list('burn', sloId)).map((a: { triggered: boolean }) => a.triggered)).toEqual([true, true, false]);

      // Still firing: no new notification; and within the interval nothing is evaluated.
      t.clock.advance(30);
      await t.app.jobs.scheduler.tick();
      t.clock.advance(30);
      await t.app.jobs.scheduler.tick();
      expect(sent().length).toBe(before + 2);

      // A restarted app (same stores) knows the alerts are triggered: no repeat.
      const again = await createApp({ configStore: t.store, eventStore: t.events, settings: { evaluationTickMs: 0 }, now: t.clock.now, logger: false });
      await again.ready();
      await again.jobs.scheduler.tick();
      expect(again.jobs.notifier.sent ?? []).toEqual([]);
      await again.close();

      // The failures stop; successes go on (10 a minute) for the next hour.
      await ingest(t, 'burn', Array.from({ length: 61 }, (_, j) => ({ data: { status: 200 }, time: ago(-j), samplerate: 10 })));
      t.clock.ms = T0 + 61 * 60_000;
      await t.app.jobs.scheduler.tick();
      // Lookback and budget-rate window (minutes c+2 … c+61) hold no failures: both resolve.
      const resolved = sent().slice(before + 2);
      expect(resolved.map((n) => [n.alert.id, n.status]).sort()).toEqual([[exhaust.id, 'resolved'], [rate.id, 'resolved']].sort());
      expect(resolved.find((n) => n.alert.id === exhaust.id)!.alert.dedupKey).toBe(e.alert.dedupKey);
      expect(json(await get('burn', exhaust.id)).triggered).toBe(false);
      expect(json(await t.app.inject({ method: 'GET', url: `/1/slos/burn/${sloId}?detailed=true`, headers: t.config })).status).toBe('normal');
      for (const a of [exhaust, rate, quiet]) await del('burn', a.id);
      t.clock.ms = T0;
    });

    it('evaluates every burnAlertIntervalSeconds of the app clock (WAGGLE_BURN_ALERT_INTERVAL_SECONDS)', async () => {
      t.clock.ms = T0;
      const a = await created('burn', exhaustion());
      const slow = await createApp({ configStore: t.store, eventStore: t.events, settings: { evaluationTickMs: 0, burnAlertIntervalSeconds: 300 }, now: t.clock.now, logger: false });
      await slow.ready();
      try {
        const lastAt = async () => (await getAlertState(t.store, a.id)).last?.at;
        await slow.jobs.scheduler.tick();
        expect(await lastAt()).toBe(new Date(T0).toISOString());
        for (const step of [60, 120, 119]) {
          t.clock.advance(step);
          await slow.jobs.scheduler.tick();
          expect(await lastAt(), `${step}`).toBe(new Date(T0).toISOString());
        }
        t.clock.advance(1); // T0 + 300 s
        await slow.jobs.scheduler.tick();
        expect(await lastAt()).toBe(new Date(T0 + 300_000).toISOString());
      } finally {
        await slow.close();
        await del('burn', a.id);
        t.clock.ms = T0;
      }
      expect(loadSettings({ WAGGLE_BURN_ALERT_INTERVAL_SECONDS: '300' }).burnAlertIntervalSeconds).toBe(300);
      expect(loadSettings({}).burnAlertIntervalSeconds).toBe(60);
      expect(() => loadSettings({ WAGGLE_BURN_ALERT_INTERVAL_SECONDS: '0' })).toThrow(/WAGGLE_BURN_ALERT_INTERVAL_SECONDS/);
    });
  });
});
