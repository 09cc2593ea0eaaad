// SLOs, burn alerts and anomaly signals on every event engine: DuckDB, ClickHouse single node and
// ClickHouse 2 shards (started here), through HTTP with the same seeded events at the same app
// clock. SLO figures and history are checked against the model over raw events
// (test/slo-model.ts) after new and late events, the window moving on and a reset; a burn alert
// and an error-rate signal are evaluated by the scheduler and delivered to a real webhook
// receiver. Every answer is recorded per engine, and the last test checks the engines answered
// the same. Skipped on ClickHouse, with a notice, without clickhouse-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { HttpReceiver } from './receivers.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { MIN, detailedModel, historyModel, lt, random, type Ev, type SloModel } from './slo-model.js';

const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
const ENGINES = [
  { name: 'DuckDB', shards: 0 },
  { name: 'ClickHouse', shards: 1 },
  { name: 'ClickHouse, 2 shards', shards: 2 },
];
/** Everything each engine answered, in order. */
const answered = new Map<string, unknown[]>();
const receiver = new HttpReceiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

for (const engine of ENGINES) {
  describe.skipIf(engine.shards > 0 && !clickhouseBinary)(`SLOs, burn alerts and signals on ${engine.name}`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let cluster: ClickHouseCluster | undefined;
    const answers: unknown[] = [];
    answered.set(engine.name, answers);
    const hooks = `/hooks/${engine.shards}`;
    const request = (method: 'POST' | 'PUT', url: string, body?: unknown) =>
      t.app.inject({ method, url, headers: { ...t.config, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
    async function created(url: string, body: unknown): Promise<Record<string, any>> {
      const res = await request('POST', url, body);
      expect(res.statusCode, res.body).toBe(201);
      return json(res);
    }
    const idle = () => t.app.jobs.notifier.idle!({ timeoutMs: 10_000 });
    let hookId: string;

    beforeAll(async () => {
      if (engine.shards > 0) cluster = await startClickHouse(engine.shards as 1 | 2);
      t = await makeApp({
        settings: { evaluationTickMs: 0, notifyRetryBaseMs: 5, notifyRetryMaxMs: 20, notifyMaxAttempts: 3, notifyTimeoutMs: 2000 },
        eventStore: cluster?.setting(),
      });
      t.clock.ms = T0;
      hookId = (await created('/1/recipients', { type: 'webhook', details: { webhook_name: 'hook', webhook_url: `${receiver.url}${hooks}` } })).id;
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await cluster?.stop();
    });

    it('SLO figures and history equal the model over raw events: first call, new and late events, the window moving, a reset', async () => {
      const rnd = random(19);
      const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
      const sent: Record<string, Ev[]> = { r1: [], r2: [] };
      const events = (n: number, fromMs: number, toMs: number): Ev[] =>
        Array.from({ length: n }, () => ({
          ms: Math.floor(fromMs + rnd() * (toMs - fromMs)),
          status: pick([200, 200, 200, 404, 500, 503, undefined]),
          samplerate: pick([1, 1, 5, 10]),
        }));
      const send = async (ds: 'r1' | 'r2', evs: Ev[]) => {
        sent[ds].push(...evs);
        await ingest(t, ds, evs.map((e) => ({ time: new Date(e.ms).toISOString(), samplerate: e.samplerate, data: e.status === undefined ? { route: '/x' } : { status: e.status, good: e.status < 500 } })));
      };
      // Two days of events and a few minutes after now.
      await send('r1', events(400, T0 - 2 * 1440 * MIN, T0 + 5 * MIN));
      await send('r2', events(300, T0 - 2 * 1440 * MIN, T0 + 5 * MIN));
      // (The SLI reads a boolean column, so events without it are not counted: the model's rule.
      // The burn alert's SLI below uses functions.)
      await created('/1/derived_columns/__all__', { alias: 'ok', expression: '$good' });
      const slo = async (datasets: string[], model: SloModel) => ({
        id: (await created('/1/slos/__all__', { name: 'exact', sli: { alias: 'ok' }, time_period_days: model.days, target_per_million: model.tpm, dataset_slugs: datasets })).id as string,
        model,
        events: () => datasets.flatMap((d) => sent[d]),
      });
      const slos = [await slo(['r1'], { days: 1, tpm: 990_000, sli: lt(500) }), await slo(['r1', 'r2'], { days: 1, tpm: 950_000, sli: lt(500) })];

      const expectExact = async (what: string) => {
        for (const s of slos) {
          const res = await t.app.inject({ method: 'GET', url: `/1/slos/__all__/${s.id}?detailed=true`, headers: t.config });
          expect(res.statusCode, res.body).toBe(200);
          const d = json(res);
          const want = detailedModel(s.events(), s.model, t.clock.ms);
          expect(want.eligible, `${what}: the model has events to count`).toBeGreaterThan(0);
          expect(d.compliance, what).toBeCloseTo(want.compliance, 9);
          expect(d.budget_remaining, what).toBeCloseTo(want.budget_remaining, 9);
          expect(d.burn_rate, what).toBeCloseTo(want.burn_rate, 9);
          answers.push({ what, compliance: d.compliance, budget_remaining: d.budget_remaining, burn_rate: d.burn_rate, status: d.status });
        }
      };
      const expectHistory = async (hours: number) => {
        const s = slos[1];
        const endS = Math.floor(t.clock.ms / 1000);
        const res = await request('POST', '/1/reporting/slos/historical', { ids: [s.id], start_time: endS - hours * 3600, end_time: endS });
        expect(res.statusCode, res.body).toBe(200);
        const got = json(res)[s.id] as { timestamp: number; compliance: number; budget_remaining: number }[];
        const want = historyModel(s.events(), s.model, endS - hours * 3600, endS);
        expect(got.map((p) => p.timestamp)).toEqual(want.map((p) => p.timestamp));
        want.forEach((p, i) => {
          expect(got[i].compliance).toBeCloseTo(p.compliance, 9);
          expect(got[i].budget_remaining).toBeCloseTo(p.budget_remaining, 9);
        });
        answers.push({ history: got });
      };

      await expectExact('first call');
      t.clock.advance(180);
      await send('r1', events(40, t.clock.ms - 3 * MIN, t.clock.ms));
      await send('r2', events(40, t.clock.ms - 3 * MIN, t.clock.ms));
      await expectExact('new events');
      // Late events anywhere in the period, without the clock moving; then a minute on.
      await send('r1', events(60, t.clock.ms - 1500 * MIN, t.clock.ms));
      await send('r2', events(30, t.clock.ms - 1000 * MIN, t.clock.ms - 500 * MIN));
      await expectExact('late events');
      await expectHistory(30);
      // The window moves on past events (and over the ones that were after now).
      t.clock.advance(3 * 3600);
      await expectExact('three hours on');
      // A reset: the budget starts afresh, with the events from then on.
      const reset = await t.app.inject({ method: 'POST', url: `/1/slos/__all__/${slos[0].id}/reset`, headers: t.config });
      expect(reset.statusCode, reset.body).toBe(200);
      slos[0].model.resetMs = Date.parse(json(reset).reset_at);
      t.clock.advance(120);
      await send('r1', events(30, t.clock.ms - 4 * MIN, t.clock.ms));
      await expectExact('after a reset');
    });

    it('an error-rate signal learns its band from ClickHouse-held history and opens an anomaly on a spike, delivered to a webhook', async () => {
      t.clock.ms = Math.floor(t.clock.ms / MIN) * MIN;
      const now = Math.floor(t.clock.ms / 1000);
      // Per minute 10 spans of "api" (the first an error) and 10 of "web".
      const spans = (start: number, errors: number) =>
        Array.from({ length: 20 }, (_, i) => ({
          time: new Date((start + i * 3) * 1000).toISOString(),
          data: { 'service.name': i % 2 ? 'api' : 'web', error: i % 2 === 1 && i < errors * 2 },
        }));
      await ingest(t, 'spans', Array.from({ length: 70 }, (_, m) => spans(now - 4200 + m * 60, 1)).flat());
      const sig = await created('/1/signals/spans', { service_name: 'api', kind: 'error_rate', training_period_hours: 1, sensitivity: 'high', recipients: [{ id: hookId }] });
      await t.app.jobs.scheduler.tick();
      let s = json(await t.app.inject({ method: 'GET', url: `/1/signals/spans/${sig.id}`, headers: t.config }));
      expect(s.status, s.status_reason).toBe('active');
      expect(s.first_seen_at).toBe(new Date((now - 4200 + 3) * 1000).toISOString());
      expect(s.baseline.expected).toBeCloseTo(0.1, 10);
      expect(s.baseline.upper).toBeCloseTo(0.11, 10);
      expect(s.last_observation).toMatchObject({ spans: 50 });
      expect(s.last_observation.value).toBeCloseTo(0.1, 10);
      answers.push({ signal: s.baseline, observation: s.last_observation.value });
      // A minute with 5 of 10 errors: (4 + 5) / 50 = 18 %.
      await ingest(t, 'spans', spans(now, 5));
      t.clock.advance(60);
      await t.app.jobs.scheduler.tick();
      await idle();
      s = json(await t.app.inject({ method: 'GET', url: `/1/signals/spans/${sig.id}`, headers: t.config }));
      expect(s.anomalous).toBe(true);
      const [anomaly] = json(await t.app.inject({ method: 'GET', url: `/1/signals/spans/${sig.id}/anomalies`, headers: t.config }));
      expect(anomaly.observed).toBeCloseTo(0.18, 10);
      answers.push({ anomaly: anomaly.observed, band: anomaly.band });
      const delivered = receiver.at(hooks).map((r) => JSON.parse(r.body));
      expect(delivered).toHaveLength(1);
      expect(delivered[0]).toMatchObject({ type: 'signal', status: 'TRIGGERED', id: sig.id });
    });

    it('a burn alert is evaluated by the scheduler and delivered to a webhook; then it resolves', async () => {
      t.clock.ms = Math.floor(t.clock.ms / MIN) * MIN + 60 * MIN;
      const base = t.clock.ms;
      /** Mid-minute of the minute `k` minutes before the base (negative: after). */
      const ago = (k: number) => new Date(base - k * MIN + 30_000).toISOString();
      // As test/alert-delivery.test.ts: a day of successes (10 a minute) and, for the last hour, one failure a minute.
      await ingest(t, 'burn', [
        ...Array.from({ length: 1439 }, (_, i) => ({ data: { status: 200, good: true }, time: ago(i + 1), samplerate: 10 })),
        ...Array.from({ length: 60 }, (_, i) => ({ data: { status: 500, good: false }, time: ago(i + 1) })),
      ]);
      // (This SLI is a calculated field with functions: it compiles through the dialect on every engine.)
      await created('/1/derived_columns/burn', { alias: 'fast_ok', expression: 'AND(LT($status, 500), NOT(EQUALS($status, 418)))' });
      const slo = await created('/1/slos/burn', { name: 'Checkout SLO', sli: { alias: 'fast_ok' }, time_period_days: 1, target_per_million: 990000 });
      const alert = await created('/1/burn_alerts/burn', { slo: { id: slo.id }, exhaustion_minutes: 240, recipients: [{ id: hookId }] });
      const before = receiver.at(hooks).length;
      await t.app.jobs.scheduler.tick();
      await idle();
      const got = receiver.at(hooks).slice(before).map((r) => JSON.parse(r.body)).filter((p) => p.type === 'burn_alert');
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ type: 'burn_alert', alert_type: 'exhaustion_time', id: alert.id, status: 'TRIGGERED', slo: { id: slo.id, name: 'Checkout SLO' } });
      // 84.5 failures of budget left, 59 in the last hour (test/burn-alerts.test.ts works them out).
      expect(got[0].slo.exhaustion_minutes).toBeCloseTo((84.5 * 60) / 59, 9);
      expect(got[0].slo.budget_remaining).toBeCloseTo(100 * (1 - 60 / 144.5), 9);
      expect(got[0].slo.burn_rate).toBeCloseTo(60 / (2390 + 60) / 0.01, 9);
      const { id: _id, ...figures } = got[0].slo;
      answers.push({ burn: figures });
      // The failures stop; an hour of successes later the alert resolves.
      await ingest(t, 'burn', Array.from({ length: 61 }, (_, j) => ({ data: { status: 200, good: true }, time: ago(-j), samplerate: 10 })));
      t.clock.ms = base + 61 * MIN;
      await t.app.jobs.scheduler.tick();
      await idle();
      const resolved = receiver.at(hooks).slice(before + 1).map((r) => JSON.parse(r.body));
      expect(resolved.filter((p) => p.type === 'burn_alert')).toMatchObject([{ status: 'OK', dedup_key: got[0].dedup_key }]);
      const state = json(await t.app.inject({ method: 'GET', url: `/1/burn_alerts/burn/${alert.id}`, headers: t.config }));
      expect(state.triggered).toBe(false);
    });
  });
}

describe.skipIf(!clickhouseBinary)('every engine answered the same', () => {
  it('SLO figures, history, signal baselines and burn-alert figures (floats within 1e-9)', () => {
    const duck = answered.get('DuckDB')!;
    for (const name of ['ClickHouse', 'ClickHouse, 2 shards']) {
      const other = answered.get(name)!;
      expect(other.length, name).toBe(duck.length);
      expect(duck.length).toBeGreaterThan(10);
      other.forEach((a, i) => expect(a, `${name}, answer ${i}`).toEqual(close(duck[i])));
    }
  });
});
if (!clickhouseBinary) warnClickHouseSkipped('SLOs, burn alerts and signals on ClickHouse (test/clickhouse-slo.test.ts)');

/** An expectation equal to `v`, with every number matched within a relative 1e-9. */
function close(v: unknown): unknown {
  if (typeof v === 'number') return expect.closeTo(v, Math.max(0, -Math.log10(Math.abs(v) * 1e-9 + 1e-12)));
  if (Array.isArray(v)) return v.map(close);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, close(x)]));
  return v;
}
