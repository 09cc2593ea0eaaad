// Trigger evaluation over generated events with the controllable clock: fires, stays quiet,
// resolves, on_true repeats, exceeded_limit, schedule windows (inside/outside, days of week,
// across midnight), baselines (value and percentage), breakdown groups, no data, disabled
// triggers, deletion while triggered, environment-wide triggers, missed slots evaluated once, and
// a restart on the same data directory that carries on without replaying. Notifications are read
// from app.jobs.notifier.sent.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, TestClock, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { addKey, secondEnvironment } from './tenancy-fixtures.js';
import { createApp } from '../src/app.js';
import { openSqliteStore } from '../src/stores/config/store.js';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { inScheduleWindow, stateIdOf, type TriggerState } from '../src/domain/triggers.js';
import type { Notification } from '../src/notify/types.js';
import { TRIGGER_STATE_KIND } from '../src/domain/kinds.js';

const HOUR = 3600;
/** A Monday 10:00:00 UTC between 2 and 9 days ago: every event stays in the past. */
function mondayTen(): number {
  const d = new Date(Date.now() - 2 * 86_400_000);
  d.setUTCHours(10, 0, 0, 0);
  while (d.getUTCDay() !== 1 || d.getTime() > Date.now() - 2 * 86_400_000) d.setTime(d.getTime() - 86_400_000);
  return d.getTime();
}
const T0 = mondayTen();
const iso = (offsetSeconds: number) => new Date(T0 + offsetSeconds * 1000).toISOString();
/** `n` events spread over [from, from + span) seconds from T0. */
const events = (n: number, from: number, span: number, data: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({ time: iso(from + (span * i) / n), data: { ok: true, ...data(i) } }));

describe('trigger evaluation', () => {
  let t: TestApp;
  let email: { id: string };
  let counter = 0;

  const sentFor = (id: string): Notification[] => (t.app.jobs.notifier.sent ?? []).filter((n) => n.alert.id === id);
  const at = async (offsetSeconds: number) => {
    t.clock.ms = T0 + offsetSeconds * 1000;
    await t.app.jobs.scheduler.tick();
  };
  const dataset = () => `eval-${++counter}`;
  const create = async (ds: string, body: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: `/1/triggers/${ds}`, headers: t.config, payload: { name: `T${counter}`, recipients: [{ id: email.id }], ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res) as { id: string; name: string; description: string };
  };
  const state = async (ds: string, id: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/1/triggers/${ds}/${id}`, headers: t.config });
    expect(res.statusCode).toBe(200);
    return json(res);
  };
  const remove = (ds: string, id: string) => t.app.inject({ method: 'DELETE', url: `/1/triggers/${ds}/${id}`, headers: t.config });
  const count = (threshold: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    query: { calculations: [{ op: 'COUNT' }], time_range: 60 },
    frequency: 60,
    threshold,
    ...extra,
  });

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0, publicUrl: 'http://waggle.test' } });
    t.clock.ms = T0;
    const res = await t.app.inject({ method: 'POST', url: '/1/recipients', headers: t.config, payload: { type: 'email', details: { email_address: 'oncall@example.com' } } });
    email = json(res);
  });
  afterAll(async () => t?.close());

  it('on_change: fires once when it starts breaching, stays quiet while it breaches, resolves once', async () => {
    const ds = dataset();
    await ingest(t, ds, [...events(10, -60, 60), ...events(8, 0, 60)]);
    t.clock.ms = T0;
    const trig = await create(ds, { ...count({ op: '>', value: 5 }), description: 'too many' });

    await at(0); // first slot: at creation, window [T0−60, T0)
    let sent = sentFor(trig.id);
    expect(sent).toHaveLength(1);
    const n = sent[0];
    expect(n).toMatchObject({
      source: 'trigger',
      status: 'triggered',
      recipient: { id: email.id, type: 'email', target: 'oncall@example.com' },
      alert: { id: trig.id, name: trig.name, description: 'too many', dedupKey: `trigger:${trig.id}`, alertType: 'on_change', datasetSlug: ds },
      result: { value: 10, threshold: { op: '>', value: 5 }, groups: [{ group: {}, value: 10 }] },
      timestamp: iso(0),
    });
    expect(n.result.summary).toMatch(/COUNT > 5/);
    expect((await state(ds, trig.id)).triggered).toBe(true);

    await at(30); // not due yet
    await at(60); // window [T0, T0+60): 8 events, still breaching: no new notification
    expect(sentFor(trig.id)).toHaveLength(1);
    await at(120); // no events: COUNT is 0 → resolves
    sent = sentFor(trig.id);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ status: 'resolved', alert: { dedupKey: `trigger:${trig.id}` }, result: { value: 0 } });
    expect((await state(ds, trig.id)).triggered).toBe(false);
    await at(180);
    await at(240);
    expect(sentFor(trig.id)).toHaveLength(2);
    expect(new Set(sent.map((x) => x.id)).size).toBe(2);
    await remove(ds, trig.id);
  });

  it('answers its last evaluation (Waggle extension, shown by the web UI): null before the first', async () => {
    const ds = dataset();
    await ingest(t, ds, events(3, -60, 60));
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>', value: 5 }));
    expect((await state(ds, trig.id)).last_evaluation).toBeNull();
    await at(0);
    expect((await state(ds, trig.id)).last_evaluation).toEqual({ at: iso(0), value: 3, breaching: false, no_data: false });
    const list = json(await t.app.inject({ method: 'GET', url: `/1/triggers/${ds}`, headers: t.config }));
    expect(list[0].last_evaluation).toEqual({ at: iso(0), value: 3, breaching: false, no_data: false });
  });

  it('stays quiet below the threshold', async () => {
    const ds = dataset();
    await ingest(t, ds, events(5, -60, 60));
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>', value: 5 }));
    await at(0);
    await at(60);
    expect(sentFor(trig.id)).toEqual([]);
    expect((await state(ds, trig.id)).triggered).toBe(false);
    await remove(ds, trig.id);
  });

  it('on_true: notifies at every breaching evaluation, then resolves', async () => {
    const ds = dataset();
    await ingest(t, ds, events(30, -60, 180));
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>=', value: 10 }, { alert_type: 'on_true' }));
    for (const s of [0, 60, 120, 180]) await at(s);
    expect(sentFor(trig.id).map((n) => n.status)).toEqual(['triggered', 'triggered', 'triggered', 'resolved']);
    expect(sentFor(trig.id).map((n) => n.alert.alertType)).toEqual(['on_true', 'on_true', 'on_true', 'on_true']);
    await remove(ds, trig.id);
  });

  it('exceeded_limit: fires only after that many breaching evaluations in a row', async () => {
    const ds = dataset();
    // breach at slots 0, 60; not at 120; breach at 180, 240, 300.
    await ingest(t, ds, [...events(10, -60, 60), ...events(10, 0, 60), ...events(30, 120, 180)]);
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>', value: 5, exceeded_limit: 3 }));
    await at(0);
    await at(60);
    expect(sentFor(trig.id)).toEqual([]);
    await at(120); // resets the count
    await at(180);
    await at(240);
    expect(sentFor(trig.id)).toEqual([]);
    expect((await state(ds, trig.id)).triggered).toBe(false);
    await at(300);
    expect(sentFor(trig.id).map((n) => n.status)).toEqual(['triggered']);
    expect((await state(ds, trig.id)).triggered).toBe(true);
    await at(360);
    expect(sentFor(trig.id).map((n) => n.status)).toEqual(['triggered', 'resolved']);
    await remove(ds, trig.id);
  });

  describe('schedule windows', () => {
    it('evaluates only inside the window (UTC, end exclusive) on the listed days', async () => {
      const ds = dataset();
      await ingest(t, ds, events(200, -HOUR, 4 * HOUR));
      t.clock.ms = T0 - HOUR * 1000; // Monday 09:00
      const window = { days_of_week: ['monday'], start_time: '9:30', end_time: '11:00' };
      const trig = await create(ds, { ...count({ op: '>', value: 1 }, { alert_type: 'on_true' }), query: { time_range: 1800 }, frequency: 1800, evaluation_schedule: { window } });
      expect((await state(ds, trig.id)).evaluation_schedule_type).toBe('window');
      for (const s of [-HOUR, -HOUR / 2, 0, HOUR / 2, HOUR, 1.5 * HOUR]) await at(s); // 09:00 … 11:30
      // 09:30, 10:00, 10:30 are inside; 09:00, 11:00, 11:30 outside.
      expect(sentFor(trig.id).map((n) => n.timestamp)).toEqual([iso(-HOUR / 2), iso(0), iso(HOUR / 2)]);
      // Outside the window a triggered trigger stays triggered.
      expect((await state(ds, trig.id)).triggered).toBe(true);
      await remove(ds, trig.id);

      // The same window on Tuesday never runs on Monday.
      t.clock.ms = T0 - HOUR * 1000;
      const tuesday = await create(ds, { ...count({ op: '>', value: 1 }, { alert_type: 'on_true' }), query: { time_range: 1800 }, frequency: 1800, evaluation_schedule: { window: { ...window, days_of_week: ['tuesday'] } } });
      for (const s of [-HOUR, -HOUR / 2, 0, HOUR / 2]) await at(s);
      expect(sentFor(tuesday.id)).toEqual([]);
      await remove(ds, tuesday.id);
    });

    it('windows that cross midnight, and days of week (unit)', () => {
      const w = { days_of_week: ['monday' as const], start_time: '22:00', end_time: '02:00' };
      const monday = new Date(T0); // Monday 10:00
      const h = (hours: number) => new Date(monday.getTime() + hours * HOUR * 1000);
      expect(inScheduleWindow(w, h(11.99))).toBe(false); // Monday 21:59
      expect(inScheduleWindow(w, h(12))).toBe(true); // Monday 22:00
      expect(inScheduleWindow(w, h(15.99))).toBe(true); // Tuesday 01:59
      expect(inScheduleWindow(w, h(16))).toBe(false); // Tuesday 02:00
      expect(inScheduleWindow(w, h(-8))).toBe(false); // Monday 02:00
      expect(inScheduleWindow(w, h(-9))).toBe(false); // Monday 01:00 belongs to Sunday's window
      const allDay = { days_of_week: ['sunday' as const], start_time: '00:00', end_time: '00:00' };
      expect(inScheduleWindow(allDay, h(-10))).toBe(false); // Monday 00:00: Sunday's 24-hour window has ended
      expect(inScheduleWindow(allDay, h(-10.001))).toBe(true); // Sunday 23:59:56
      expect(inScheduleWindow(allDay, h(-34))).toBe(true); // Sunday 00:00
      expect(inScheduleWindow(allDay, h(-34.001))).toBe(false); // Saturday 23:59:56
      expect(inScheduleWindow({ ...w, start_time: '10:00', end_time: '10:30' }, h(0))).toBe(true);
      expect(inScheduleWindow({ ...w, start_time: '10:00', end_time: '10:30' }, h(0.5))).toBe(false);
    });
  });

  describe('baselines', () => {
    it('value: compares with the same window offset_minutes earlier', async () => {
      const ds = dataset();
      await ingest(t, ds, [...events(10, -HOUR - 60, 60), ...events(16, -60, 60)]);
      t.clock.ms = T0;
      const up = await create(ds, count({ op: '>=', value: 5 }, { baseline_details: { offset_minutes: 60, type: 'value' } }));
      const bigger = await create(ds, count({ op: '>=', value: 7 }, { baseline_details: { offset_minutes: 60, type: 'value' } }));
      await at(0);
      expect(sentFor(up.id)).toHaveLength(1);
      expect(sentFor(up.id)[0].result).toMatchObject({ value: 6, groups: [{ group: {}, value: 6 }] });
      expect(sentFor(bigger.id)).toEqual([]);
      await remove(ds, up.id);
      await remove(ds, bigger.id);
    });

    it('percentage: (current − baseline) ÷ baseline × 100, rises and drops', async () => {
      const ds = dataset();
      await ingest(t, ds, [...events(20, -1440 * 60 - 60, 60), ...events(5, -60, 60)]);
      t.clock.ms = T0;
      const drop = await create(ds, count({ op: '<=', value: -50 }, { baseline_details: { offset_minutes: 1440, type: 'percentage' } }));
      const dropMore = await create(ds, count({ op: '<=', value: -80 }, { baseline_details: { offset_minutes: 1440, type: 'percentage' } }));
      const rise = await create(ds, count({ op: '>=', value: 0 }, { baseline_details: { offset_minutes: 1440, type: 'percentage' } }));
      await at(0);
      expect(sentFor(drop.id)[0].result.value).toBe(-75);
      expect(sentFor(dropMore.id)).toEqual([]);
      expect(sentFor(rise.id)).toEqual([]);
      for (const x of [drop, dropMore, rise]) await remove(ds, x.id);
    });
  });

  it('breakdowns: each group compared; fires when any group breaches and names the breaching ones', async () => {
    const ds = dataset();
    await ingest(t, ds, [
      ...events(10, -60, 60, (i) => ({ service: 'api', duration_ms: 100 + i })),
      ...events(3, -60, 60, () => ({ service: 'web', duration_ms: 900 })),
      ...events(4, -60, 60, () => ({ service: 'db', duration_ms: 5 })),
    ]);
    t.clock.ms = T0;
    const byCount = await create(ds, { ...count({ op: '>', value: 3 }), query: { calculations: [{ op: 'COUNT' }], breakdowns: ['service'], time_range: 60 } });
    const slow = await create(ds, { ...count({ op: '>', value: 500 }), query: { calculations: [{ op: 'AVG', column: 'duration_ms' }], breakdowns: ['service'], time_range: 60 } });
    const fast = await create(ds, { ...count({ op: '<', value: 10 }), query: { calculations: [{ op: 'MAX', column: 'duration_ms' }], breakdowns: ['service'], time_range: 60 } });
    const none = await create(ds, { ...count({ op: '>', value: 20 }), query: { calculations: [{ op: 'COUNT' }], breakdowns: ['service'], time_range: 60 } });
    await at(0);
    const groups = (id: string) => sentFor(id)[0].result.groups;
    expect(groups(byCount.id)).toEqual([
      { group: { service: 'api' }, value: 10 },
      { group: { service: 'db' }, value: 4 },
    ]);
    expect(sentFor(byCount.id)[0].result.value).toBe(10);
    expect(groups(slow.id)).toEqual([{ group: { service: 'web' }, value: 900 }]);
    expect(groups(fast.id)).toEqual([{ group: { service: 'db' }, value: 5 }]);
    expect(sentFor(fast.id)[0].result.summary).toMatch(/service=db/);
    expect(sentFor(none.id)).toEqual([]);
    for (const x of [byCount, slow, fast, none]) await remove(ds, x.id);
  });

  it('no data: COUNT is 0 (so COUNT < 1 fires); AVG has no value and does not breach', async () => {
    const ds = dataset();
    await ingest(t, ds, events(1, -10 * HOUR, 1));
    t.clock.ms = T0;
    const silent = await create(ds, count({ op: '<', value: 1 }));
    const avg = await create(ds, { ...count({ op: '<', value: 1000 }), query: { calculations: [{ op: 'AVG', column: 'duration_ms' }], time_range: 60 } });
    await at(0);
    expect(sentFor(silent.id)).toHaveLength(1);
    expect(sentFor(silent.id)[0].result).toMatchObject({ value: 0, groups: [{ group: {}, value: 0 }] });
    expect(sentFor(avg.id)).toEqual([]);
    await remove(ds, silent.id);
    await remove(ds, avg.id);
  });

  it('disabled triggers are not evaluated; disabling a triggered trigger resolves it; deleting one resolves it', async () => {
    const ds = dataset();
    await ingest(t, ds, events(100, -60, 600));
    t.clock.ms = T0;
    const off = await create(ds, { ...count({ op: '>', value: 1 }), disabled: true });
    const on = await create(ds, count({ op: '>', value: 1 }));
    const doomed = await create(ds, count({ op: '>', value: 1 }));
    await at(0);
    expect(sentFor(off.id)).toEqual([]);
    expect(sentFor(on.id).map((n) => n.status)).toEqual(['triggered']);
    expect(sentFor(doomed.id).map((n) => n.status)).toEqual(['triggered']);

    const current = await state(ds, on.id);
    const put = await t.app.inject({ method: 'PUT', url: `/1/triggers/${ds}/${on.id}`, headers: t.config, payload: { ...current, disabled: true } });
    expect(put.statusCode, put.body).toBe(200);
    expect(json(put).triggered).toBe(true);
    await at(60);
    expect(sentFor(on.id).map((n) => n.status)).toEqual(['triggered', 'resolved']);
    expect(sentFor(on.id)[1].result.summary).toMatch(/disabled/);
    expect((await state(ds, on.id)).triggered).toBe(false);
    await at(120);
    expect(sentFor(on.id)).toHaveLength(2);

    expect((await remove(ds, doomed.id)).statusCode).toBe(204);
    expect(sentFor(doomed.id).map((n) => n.status)).toEqual(['triggered', 'resolved']);
    // Re-enabled: evaluated at once (the latest slot), and fires again.
    const again = await t.app.inject({ method: 'PUT', url: `/1/triggers/${ds}/${on.id}`, headers: t.config, payload: { ...current, disabled: false } });
    expect(again.statusCode).toBe(200);
    await at(150);
    expect(sentFor(on.id).map((n) => n.status)).toEqual(['triggered', 'resolved', 'triggered']);
    expect(sentFor(off.id)).toEqual([]);
    for (const x of [off, on]) await remove(ds, x.id);
  });

  it('environment-wide (__all__) triggers read every dataset of the environment', async () => {
    // Its own environment, so the other tests' datasets do not count.
    const staging = await secondEnvironment(t, 'Eval Staging');
    const ingestKey = await addKey(t, staging.team, staging.environment, { keyType: 'ingest' });
    for (const ds of ['all-a', 'all-b']) {
      const res = await t.app.inject({ method: 'POST', url: `/1/batch/${ds}`, headers: ingestKey.headers, payload: events(3, -60, 60) });
      expect(json(res).map((r: { status: number }) => r.status)).toEqual([202, 202, 202]);
    }
    t.clock.ms = T0;
    // Recipients are team-wide: the staging trigger may notify the same one.
    const payload = { name: 'Env', recipients: [{ id: email.id }], ...count({ op: '>=', value: 6 }) };
    const res = await t.app.inject({ method: 'POST', url: '/1/triggers/__all__', headers: staging.headers, payload });
    expect(res.statusCode, res.body).toBe(201);
    const trig = json(res);
    const seven = await t.app.inject({ method: 'POST', url: '/1/triggers/__all__', headers: staging.headers, payload: { ...payload, threshold: { op: '>=', value: 7 } } });
    await at(0);
    expect(sentFor(trig.id)[0]).toMatchObject({ status: 'triggered', result: { value: 6 }, alert: { datasetSlug: '__all__' }, environmentId: staging.environment.id });
    expect(sentFor(json(seven).id)).toEqual([]);
    const got = await t.app.inject({ method: 'GET', url: `/1/triggers/__all__/${trig.id}`, headers: staging.headers });
    expect(json(got).triggered).toBe(true);
  });

  it('marker recipients: each firing makes a marker (type trigger, the trigger’s page) on the dataset; nothing is delivered to them', async () => {
    const ds = dataset();
    await ingest(t, ds, events(30, -60, 180));
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>=', value: 10 }, {
      alert_type: 'on_true',
      recipients: [{ id: email.id }, { type: 'marker', target: 'Deploy broke checkout' }],
    }));
    const markers = async (segment: string, headers = t.config) => {
      const res = await t.app.inject({ method: 'GET', url: `/1/markers/${segment}`, headers });
      expect(res.statusCode, res.body).toBe(200);
      return json(res) as { message: string; type: string; url: string; start_time: number }[];
    };
    expect(await markers(ds)).toEqual([]);
    await at(0);
    const first = await markers(ds);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      message: 'Deploy broke checkout',
      type: 'trigger',
      start_time: T0 / 1000,
      // The trigger's page in the web UI.
      url: `http://waggle.test/${t.init.team.slug}/environments/${t.init.environment.slug}/datasets/${ds}/triggers/${trig.id}`,
    });
    // Only the email recipient is notified.
    expect(sentFor(trig.id).map((n) => n.recipient.type)).toEqual(['email']);
    expect((await state(ds, trig.id)).recipients[1]).toEqual({ id: expect.any(String), type: 'marker', target: 'Deploy broke checkout' });
    // The same slot evaluated again (as after a crash before the state was saved) makes no second marker.
    await t.store.updateObject<TriggerState>(TRIGGER_STATE_KIND, stateIdOf(trig.id), {
      body: { triggerId: trig.id, nextRun: iso(0), consecutive: 0, triggered: false },
    });
    await at(0);
    expect(await markers(ds)).toHaveLength(1);
    await at(60); // on_true: fires again, a second marker
    expect((await markers(ds)).map((m) => m.start_time)).toEqual([T0 / 1000, T0 / 1000 + 60]);
    await at(180); // resolves: no marker for a resolve
    // Fired at 0 (twice, the replay), at 60, resolved at 180.
    expect(sentFor(trig.id).map((n) => n.status)).toEqual(['triggered', 'triggered', 'triggered', 'resolved']);
    expect(await markers(ds)).toHaveLength(2);
    expect(await markers('__all__')).toEqual([]);
    await remove(ds, trig.id);
  });

  it('marker recipients of an __all__ trigger mark the environment', async () => {
    const staging = await secondEnvironment(t, 'Marker Staging');
    const ingestKey = await addKey(t, staging.team, staging.environment, { keyType: 'ingest' });
    const res0 = await t.app.inject({ method: 'POST', url: '/1/batch/marked', headers: ingestKey.headers, payload: events(5, -60, 60) });
    expect(json(res0).map((r: { status: number }) => r.status)).toEqual([202, 202, 202, 202, 202]);
    t.clock.ms = T0;
    const payload = { name: 'Env marker', recipients: [{ type: 'marker', target: 'environment-wide burst' }], ...count({ op: '>=', value: 5 }) };
    const res = await t.app.inject({ method: 'POST', url: '/1/triggers/__all__', headers: staging.headers, payload });
    expect(res.statusCode, res.body).toBe(201);
    await at(0);
    const env = json(await t.app.inject({ method: 'GET', url: '/1/markers/__all__', headers: staging.headers }));
    expect(env).toHaveLength(1);
    expect(env[0]).toMatchObject({ message: 'environment-wide burst', type: 'trigger', url: `http://waggle.test/${t.init.team.slug}/environments/${staging.environment.slug}/datasets/__all__/triggers/${json(res).id}` });
    expect(json(await t.app.inject({ method: 'GET', url: '/1/markers/marked', headers: staging.headers }))).toEqual([]);
  });
  it('missed slots are evaluated once, then the schedule carries on aligned', async () => {
    const ds = dataset();
    await ingest(t, ds, events(300, -60, 1800));
    t.clock.ms = T0;
    const trig = await create(ds, count({ op: '>', value: 1 }, { alert_type: 'on_true' }));
    await at(0);
    await at(630); // ten slots passed: only the latest (600) runs
    expect(sentFor(trig.id)).toHaveLength(2);
    expect(sentFor(trig.id)[1].id).toContain(iso(600));
    await at(659); // next slot is 660
    expect(sentFor(trig.id)).toHaveLength(2);
    await at(660);
    expect(sentFor(trig.id)).toHaveLength(3);
    expect(sentFor(trig.id)[2].id).toContain(iso(660));
    await remove(ds, trig.id);
  });
});

describe('trigger evaluation across a restart', () => {
  it('a new app on the same data directory carries on from the stored state, without replaying', async () => {
    const first = await makeApp({ settings: { evaluationTickMs: 0 } });
    const dataDir = first.dataDir;
    try {
      const clock: TestClock = first.clock;
      clock.ms = T0;
      const rc = await first.app.inject({ method: 'POST', url: '/1/recipients', headers: first.config, payload: { type: 'email', details: { email_address: 'restart@example.com' } } });
      const rcpt = json(rc);
      await ingest(first, 'restart', events(600, -60, 3000));
      const res = await first.app.inject({
        method: 'POST',
        url: '/1/triggers/restart',
        headers: first.config,
        payload: { name: 'R', query: { time_range: 60 }, frequency: 60, threshold: { op: '>', value: 1 }, recipients: [{ id: rcpt.id }] },
      });
      expect(res.statusCode, res.body).toBe(201);
      const id = json(res).id;
      await first.app.jobs.scheduler.tick();
      expect(first.app.jobs.notifier.sent?.filter((n) => n.alert.id === id).map((n) => n.status)).toEqual(['triggered']);
      clock.ms = T0 + 60_000;
      await first.app.jobs.scheduler.tick();

      // Stop everything, then start again on the same files, 10 minutes later.
      await first.app.close();
      await first.events.close();
      await first.store.close();
      const store = openSqliteStore(join(dataDir, 'config.sqlite'));
      await store.migrate();
      const eventStore = new DuckDbEventStore(join(dataDir, 'events.duckdb'));
      await eventStore.open();
      const later = new TestClock(T0 + 660_000);
      const app = await createApp({ configStore: store, eventStore, settings: { dataDir, evaluationTickMs: 0 }, now: later.now, logger: false });
      await app.ready();
      try {
        const got = await app.inject({ method: 'GET', url: `/1/triggers/restart/${id}`, headers: first.config });
        expect(json(got).triggered).toBe(true);
        await app.jobs.scheduler.tick();
        // Still breaching: on_change sends nothing new, and the ten missed slots are not replayed.
        expect(app.jobs.notifier.sent?.filter((n) => n.alert.id === id)).toEqual([]);
        // The schedule carries on: the slot at 660 ran; 720 is next. Events stop at 2940 s.
        later.ms = T0 + 719_000;
        await app.jobs.scheduler.tick();
        later.ms = T0 + 3060_000;
        await app.jobs.scheduler.tick();
        expect(app.jobs.notifier.sent?.filter((n) => n.alert.id === id).map((n) => [n.status, n.id.includes(iso(3060))])).toEqual([['resolved', true]]);
      } finally {
        await app.close();
        await eventStore.close();
        await store.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
