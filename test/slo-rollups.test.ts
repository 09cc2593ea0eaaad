// The detailed SLO answer and the SLO history come from rollups that are brought up to date
// incrementally (src/stores/events/duckdb-slo-rollups.ts). Checked here through HTTP against figures the
// test works out itself from the events it sent (test/slo-model.ts: the SLO maths over raw events, as
// docs/slos.md states it), after each change the rollups must follow: the first call on an SLO
// without rollups, new events between calls, late events inside the period, events after now
// that become due, the window moving on, a clock that goes back, target and period changes, an
// SLI change, a reset, a restart with a clock behind the stored ingest times; and concurrent GETs
// sharing one refresh. Events are random but seeded.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { MIN, detailedModel, historyModel, lt, random, type Ev, type SloModel } from './slo-model.js';

const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;

describe('SLO rollups stay exact', () => {
  let t: TestApp;
  const rnd = random(22);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const sent: Record<string, Ev[]> = { r1: [], r2: [] };
  const both = () => [...sent.r1, ...sent.r2];
  /** `n` random events with times in [fromMs, toMs). */
  const events = (n: number, fromMs: number, toMs: number): Ev[] =>
    Array.from({ length: n }, () => ({
      ms: Math.floor(fromMs + rnd() * (toMs - fromMs)),
      status: pick([200, 200, 200, 201, 404, 500, 503, undefined]),
      samplerate: pick([1, 1, 1, 5, 10]),
    }));
  async function send(ds: 'r1' | 'r2', evs: Ev[]) {
    sent[ds].push(...evs);
    await ingest(
      t,
      ds,
      evs.map((e) => ({ time: new Date(e.ms).toISOString(), samplerate: e.samplerate, data: e.status === undefined ? { route: '/x' } : { status: e.status } })),
    );
  }
  const request = (method: 'POST' | 'PUT', url: string, body?: unknown) =>
    t.app.inject({ method, url, headers: { ...t.config, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
  let single: { id: string; model: SloModel };
  let multi: { id: string; model: SloModel };
  let fieldId: string;
  const state = async (id: string) => (await t.events.query(`SELECT fingerprint, start_us, through_us FROM slo_rollup_state WHERE slo_id = ?`, [id]))[0];

  /** GETs both SLOs' detailed answers and compares them with the model at the app clock. */
  async function expectExact(what: string) {
    for (const [slo, evs] of [
      [single, sent.r1],
      [multi, both()],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/1/slos/__all__/${slo.id}?detailed=true`, headers: t.config });
      expect(res.statusCode, res.body).toBe(200);
      const d = json(res);
      const want = detailedModel(evs, slo.model, t.clock.ms);
      const where = `${what} (${slo === single ? 'r1' : 'r1 + r2'})`;
      expect(want.eligible, `${where}: the model has events to count`).toBeGreaterThan(0);
      expect(d.compliance, where).toBeCloseTo(want.compliance, 9);
      expect(d.budget_remaining, where).toBeCloseTo(want.budget_remaining, 9);
      expect(d.burn_rate, where).toBeCloseTo(want.burn_rate, 9);
    }
  }

  async function expectHistory(slo: { id: string; model: SloModel }, evs: Ev[], hours: number) {
    const endS = Math.floor(t.clock.ms / 1000);
    const startS = endS - hours * 3600;
    const res = await request('POST', '/1/reporting/slos/historical', { ids: [slo.id], start_time: startS, end_time: endS });
    expect(res.statusCode, res.body).toBe(200);
    const got = json(res)[slo.id];
    const want = historyModel(evs, slo.model, startS, endS);
    expect(got.map((p: { timestamp: number }) => p.timestamp)).toEqual(want.map((p) => p.timestamp));
    want.forEach((p, i) => {
      expect(got[i].compliance).toBeCloseTo(p.compliance, 9);
      expect(got[i].budget_remaining).toBeCloseTo(p.budget_remaining, 9);
    });
  }

  async function putSlo(slo: { id: string; model: SloModel }, body: Record<string, unknown>) {
    const res = await request('PUT', `/1/slos/__all__/${slo.id}`, { name: 'exact', sli: { alias: 'ok' }, time_period_days: slo.model.days, target_per_million: slo.model.tpm, ...body });
    expect(res.statusCode, res.body).toBe(200);
  }

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    t.clock.ms = T0;
    // Two days of events and a few minutes after now, in both datasets.
    await send('r1', events(500, T0 - 2 * 1440 * MIN, T0 + 5 * MIN));
    await send('r2', events(300, T0 - 2 * 1440 * MIN, T0 + 5 * MIN));
    const res = await request('POST', '/1/derived_columns/__all__', { alias: 'ok', expression: 'IF(EXISTS($status), LT($status, 500))' });
    expect(res.statusCode, res.body).toBe(201);
    fieldId = json(res).id;
    const create = async (body: Record<string, unknown>, model: SloModel) => {
      const r = await request('POST', '/1/slos/__all__', { name: 'exact', sli: { alias: 'ok' }, time_period_days: model.days, target_per_million: model.tpm, ...body });
      expect(r.statusCode, r.body).toBe(201);
      return { id: json(r).id as string, model };
    };
    single = await create({ dataset_slugs: ['r1'] }, { days: 1, tpm: 990_000, sli: lt(500) });
    multi = await create({ dataset_slugs: ['r1', 'r2'] }, { days: 1, tpm: 950_000, sli: lt(500) });
  });
  afterAll(async () => {
    // The restart below replaces the app and the event store: close those, then the rest.
    await t.app.close();
    await t.events.close();
    await t.close();
  });

  it('on the first call, when the SLO has no rollups yet', async () => {
    // No SLO was evaluated yet: not even the state table is there.
    expect(await t.events.query(`SELECT 1 FROM duckdb_tables() WHERE table_name = 'slo_rollup_state'`)).toEqual([]);
    await expectExact('first call');
    expect(Number((await state(single.id)).through_us)).toBe(T0 * 1000);
  });

  it('after more events arrive between calls, and late events inside the period', async () => {
    const before = await state(single.id);
    t.clock.advance(180);
    await send('r1', events(40, t.clock.ms - 3 * MIN, t.clock.ms));
    await send('r2', events(40, t.clock.ms - 3 * MIN, t.clock.ms));
    await expectExact('new events');
    // Late events: anywhere in the period (and some before it), without the clock moving.
    await send('r1', events(60, t.clock.ms - 1500 * MIN, t.clock.ms));
    await send('r2', events(60, t.clock.ms - 1500 * MIN, t.clock.ms));
    await expectExact('late events, same minute');
    t.clock.advance(61);
    await send('r2', events(20, t.clock.ms - 1000 * MIN, t.clock.ms - 500 * MIN));
    await expectExact('late events, a minute on');
    // Counted into the rollups kept, not by building them anew.
    expect((await state(single.id)).fingerprint).toBe(before.fingerprint);
  });

  it('as time moves on: events after now become due, old ones leave the window', async () => {
    await send('r1', events(30, t.clock.ms + MIN, t.clock.ms + 30 * MIN));
    await expectExact('events after now, not yet counted');
    t.clock.advance(10 * 60);
    await expectExact('ten minutes on');
    t.clock.advance(3 * 3600);
    await expectExact('three hours on');
    t.clock.advance(45 * 60);
    await expectExact('45 minutes on');
  });

  it('when the clock goes back (an evaluation that was asked for earlier)', async () => {
    await send('r1', events(30, t.clock.ms - 10 * MIN, t.clock.ms));
    await send('r2', events(30, t.clock.ms - 10 * MIN, t.clock.ms));
    await expectExact('the last ten minutes counted');
    const later = t.clock.ms;
    t.clock.ms = later - 7 * MIN - 13_000;
    await expectExact('seven minutes back');
    t.clock.ms = later;
    await expectExact('forward again');
  });

  it('after a target change and a period change (longer, then shorter)', async () => {
    const before = await state(single.id);
    await putSlo(single, { target_per_million: 999_000 });
    single.model.tpm = 999_000;
    await expectExact('target changed');
    await putSlo(single, { time_period_days: 2 });
    single.model.days = 2;
    await putSlo(multi, { time_period_days: 2 });
    multi.model.days = 2;
    await expectExact('period 2 days');
    const longer = await state(single.id);
    // The day before the window was added to the rollups, not built anew.
    expect(longer.fingerprint).toBe(before.fingerprint);
    expect(Number(longer.start_us)).toBe((Math.floor(t.clock.ms / MIN) - 2 * 1440 + 1) * MIN * 1000);
    t.clock.advance(120);
    await send('r1', events(20, t.clock.ms - 2 * 1440 * MIN, t.clock.ms));
    await expectExact('period 2 days, late events');
    await putSlo(single, { time_period_days: 1 });
    single.model.days = 1;
    await putSlo(multi, { time_period_days: 1 });
    multi.model.days = 1;
    await expectExact('period back to 1 day');
  });

  it('after the SLI changes', async () => {
    const before = await state(single.id);
    const res = await request('PUT', `/1/derived_columns/__all__/${fieldId}`, { alias: 'ok', expression: 'IF(EXISTS($status), LT($status, 400))' });
    expect(res.statusCode, res.body).toBe(200);
    single.model.sli = lt(400);
    multi.model.sli = lt(400);
    await expectExact('SLI changed');
    expect((await state(single.id)).fingerprint).not.toBe(before.fingerprint);
    t.clock.advance(90);
    await send('r1', events(20, t.clock.ms - 600 * MIN, t.clock.ms));
    await expectExact('SLI changed, then late events');
  });

  it('history: the minutes the rollups hold and those before them give the figures raw events give', async () => {
    await expectHistory(single, sent.r1, 30);
    await expectHistory(multi, both(), 6);
  });

  it('after a reset, events of the reset minute before it not counted; history counts from its minute', async () => {
    t.clock.advance(17.5);
    const res = await request('POST', `/1/slos/__all__/${single.id}/reset`);
    expect(res.statusCode, res.body).toBe(200);
    single.model.resetMs = t.clock.ms;
    const minuteStart = Math.floor(t.clock.ms / MIN) * MIN;
    // Before the reset in its minute, after it, and late ones from before it.
    await send('r1', [
      ...events(10, minuteStart, t.clock.ms),
      ...events(10, t.clock.ms, t.clock.ms + 20_000),
      ...events(10, t.clock.ms - 600 * MIN, t.clock.ms),
    ]);
    t.clock.advance(30);
    const d = json(await t.app.inject({ method: 'GET', url: `/1/slos/__all__/${single.id}?detailed=true`, headers: t.config }));
    const want = detailedModel(sent.r1, single.model, t.clock.ms);
    expect(d.compliance).toBeCloseTo(want.compliance, 9);
    expect(d.budget_remaining).toBeCloseTo(want.budget_remaining, 9);
    t.clock.advance(200);
    await send('r1', events(20, t.clock.ms - 3 * MIN, t.clock.ms));
    await expectExact('after the reset');
    await expectHistory(single, sent.r1, 3);
  });

  it('concurrent GETs share one refresh: the rollups are built once, not once per request', async () => {
    const res = await request('POST', '/1/slos/__all__', { name: 'concurrent', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990_000, dataset_slugs: ['r1', 'r2'] });
    expect(res.statusCode, res.body).toBe(201);
    const id = json(res).id;
    const model: SloModel = { days: 1, tpm: 990_000, sli: lt(400) };
    const spy = vi.spyOn(t.events, 'execute');
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => t.app.inject({ method: 'GET', url: `/1/slos/__all__/${id}?detailed=true`, headers: t.config })),
      );
      const want = detailedModel(both(), model, t.clock.ms);
      for (const a of answers) {
        expect(a.statusCode, a.body).toBe(200);
        expect(json(a).compliance).toBeCloseTo(want.compliance, 9);
        expect(json(a).budget_remaining).toBeCloseTo(want.budget_remaining, 9);
      }
      const calls = spy.mock.calls.map(([statements]) => statements.map((s) => s.sql).join('\n'));
      const mine = calls.filter((sql) => sql.includes(Buffer.from(id).toString('hex')));
      expect(mine.filter((sql) => sql.includes('CREATE TABLE')).length).toBe(1);
      // One refresh running and one waiting at a time: the 20 requests need only a few.
      expect(mine.length).toBeGreaterThanOrEqual(1);
      expect(mine.length).toBeLessThanOrEqual(3);
    } finally {
      spy.mockRestore();
    }
  });

  it('after a restart whose clock is behind the ingest times stored: new ingest times still come after them', async () => {
    await expectExact('before the restart');
    await t.app.close();
    await t.events.close();
    t.events = new DuckDbEventStore(join(t.dataDir, 'events.duckdb'));
    await t.events.open();
    // Back three minutes: still after the reset of the first SLO, before the last ingest.
    t.clock.advance(-180);
    t.app = await createApp({ configStore: t.store, eventStore: t.events, settings: { dataDir: t.dataDir, evaluationTickMs: 0 }, now: t.clock.now, logger: false });
    await t.app.ready();
    await send('r1', [...events(30, t.clock.ms - 600 * MIN, t.clock.ms), ...events(10, t.clock.ms - 40_000, t.clock.ms)]);
    await send('r2', events(30, t.clock.ms - 600 * MIN, t.clock.ms));
    await expectExact('after the restart, the clock three minutes back');
  });
});
