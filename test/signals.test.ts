// /1/signals/{dataset}: anomaly-detection signals. The engine is driven by the app clock
// (t.clock.advance + scheduler.tick()) through every status (onboarding, training, active, off,
// ineligible), an injected error-rate spike and a service going silent, with spans sent through
// /1/batch at explicit times; anomalies are read through the API and notifications from the
// notifier. Then validation of every field, permissions, tenancy and the OpenAPI document.
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import { expectDatasetNotFound } from './problems.js';

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

const nowS = (t: TestApp) => Math.floor(t.clock.ms / 1000);
const iso = (s: number) => new Date(s * 1000).toISOString();

/** `count` spans of `service` spread over the minute starting at `start`, the first `errors` of them erroring. */
function minuteSpans(start: number, service: string, count: number, errors: number, extra: (i: number) => Record<string, unknown> = () => ({})) {
  return Array.from({ length: count }, (_, i) => ({
    time: iso(start + (i * 60) / count),
    data: { 'service.name': service, 'trace.trace_id': `t${start}-${i}`, 'trace.span_id': `s${start}-${i}`, error: i < errors, duration_ms: 3, ...extra(i) },
  }));
}

function client(t: TestApp, headers: Record<string, string> = t.config) {
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<Res> =>
    t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) }) as Promise<Res>;
  return {
    list: (ds: string) => call('GET', `/1/signals/${ds}`),
    create: (ds: string, body: unknown) => call('POST', `/1/signals/${ds}`, body),
    get: (ds: string, id: string) => call('GET', `/1/signals/${ds}/${id}`),
    put: (ds: string, id: string, body: unknown) => call('PUT', `/1/signals/${ds}/${id}`, body),
    del: (ds: string, id: string) => call('DELETE', `/1/signals/${ds}/${id}`),
    anomalies: (ds: string, id: string) => call('GET', `/1/signals/${ds}/${id}/anomalies`),
    call,
  };
}

async function ok(res: Res | Promise<Res>, status = 200) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return r.body ? json(r) : undefined;
}

/** Validates responses against the served OpenAPI document. */
async function openApiChecker(t: TestApp) {
  const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  const ajv = new Ajv2020.default({ strict: false });
  return (path: string, method: string, res: Res) => {
    const media = String(res.headers['content-type']).split(';')[0];
    const schema = doc.paths[path]?.[method]?.responses[String(res.statusCode)]?.content?.[media]?.schema;
    expect(schema, `${method} ${path} ${res.statusCode} ${media}`).toBeDefined();
    const validate = ajv.compile(schema);
    expect(validate(JSON.parse(res.body)), JSON.stringify(validate.errors)).toBe(true);
  };
}

async function newApp(): Promise<TestApp> {
  const t = await makeApp({ settings: { evaluationTickMs: 0 } });
  t.clock.ms = Math.floor(t.clock.ms / 60_000) * 60_000; // a minute boundary
  return t;
}

const tick = async (t: TestApp, seconds = 60) => {
  t.clock.advance(seconds);
  await t.app.jobs.scheduler.tick();
};

async function createRecipient(t: TestApp, email: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/1/recipients', headers: t.config, payload: { type: 'email', details: { email_address: email } } });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).id;
}

const sent = (t: TestApp) => t.app.jobs.notifier.sent!;

describe('signals: lifecycle, error-rate spike, silence', { timeout: 120_000 }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let check: Awaited<ReturnType<typeof openApiChecker>>;
  let errSig: any;
  let presSig: any;
  let recipientA: string;
  let recipientB: string;
  let c0: number;
  const ONE = '/1/signals/{datasetSlug}/{signalId}';

  /** One minute of traffic starting at the clock, then the clock moves to its end and the engine runs. */
  async function minute(services: { service: string; count: number; errors: number }[]) {
    const start = nowS(t);
    const events = services.flatMap((s) => minuteSpans(start, s.service, s.count, s.errors));
    if (events.length) await ingest(t, 'shop', events);
    await tick(t);
  }
  const normal = [{ service: 'checkout', count: 20, errors: 1 }, { service: 'cart', count: 5, errors: 0 }];
  const get = async (id: string) => ok(api.get('shop', id));

  beforeAll(async () => {
    t = await newApp();
    api = client(t);
    check = await openApiChecker(t);
    recipientA = await createRecipient(t, 'oncall@example.com');
    recipientB = await createRecipient(t, 'team@example.com');
    await ok(t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'shop' } }), 201);
  });
  afterAll(() => t.close());

  it('creates signals: 201 with Location, defaults, status onboarding', async () => {
    const res = await api.create('shop', {
      service_name: 'checkout',
      kind: 'error_rate',
      training_period_hours: 1,
      recipients: [{ id: recipientA }, { id: recipientB }],
    });
    check('/1/signals/{datasetSlug}', 'post', res);
    errSig = await ok(res, 201);
    expect(res.headers.location).toBe(`/1/signals/shop/${errSig.id}`);
    expect(errSig).toMatchObject({
      dataset_slug: 'shop',
      name: 'Error rate of checkout',
      description: '',
      service_name: 'checkout',
      kind: 'error_rate',
      enabled: true,
      sensitivity: 'medium',
      training_period_hours: 1,
      status: 'onboarding',
      anomalous: false,
      baseline: null,
      last_observation: null,
      first_seen_at: null,
      training_ends_at: null,
      last_evaluated_at: null,
    });
    expect(errSig.recipients).toEqual([
      { id: recipientA, type: 'email', target: 'oncall@example.com' },
      { id: recipientB, type: 'email', target: 'team@example.com' },
    ]);
    presSig = await ok(api.create('shop', { service_name: 'checkout', kind: 'presence', training_period_hours: 1, recipients: [{ id: recipientA }], name: 'Checkout alive' }), 201);
    expect(presSig.name).toBe('Checkout alive');
    const list = await ok(api.list('shop'));
    expect(list.map((s: any) => s.id)).toEqual([errSig.id, presSig.id]);
    check('/1/signals/{datasetSlug}', 'get', await api.list('shop'));
  });

  it('onboarding: no events in the dataset, then no span of the service', async () => {
    await t.app.jobs.scheduler.tick();
    let s = await get(errSig.id);
    expect(s.status).toBe('onboarding');
    expect(s.status_reason).toMatch(/no events/);
    expect(s.last_evaluated_at).toBe(iso(Math.floor(nowS(t) / 60) * 60));
    await minute([{ service: 'cart', count: 5, errors: 0 }]);
    s = await get(errSig.id);
    expect(s.status).toBe('onboarding');
    expect(s.status_reason).toMatch(/no span of the service "checkout"/);
    expect((await get(presSig.id)).status).toBe('onboarding');
  });

  it('training: from the first span for training_period_hours, then active', async () => {
    c0 = nowS(t);
    await minute(normal);
    let s = await get(errSig.id);
    expect(s.status).toBe('training');
    expect(s.first_seen_at).toBe(iso(c0));
    expect(s.training_ends_at).toBe(iso(c0 + 3600));
    expect(s.baseline).toBeNull();
    for (let i = 1; i < 59; i++) await minute(normal);
    expect(nowS(t)).toBe(c0 + 3540);
    expect((await get(errSig.id)).status).toBe('training');
    expect((await get(presSig.id)).status).toBe('training');
    await minute(normal);
    expect(nowS(t)).toBe(c0 + 3600);
    s = await get(errSig.id);
    check(ONE, 'get', await api.get('shop', errSig.id));
    expect(s.status).toBe('active');
    expect(s.status_reason).toBe('monitoring');
    // 1 error in 20 spans every minute: 5% in every window, no spread, so the band is the
    // medium floor of 2 points above the mean.
    expect(s.baseline.expected).toBeCloseTo(0.05, 10);
    expect(s.baseline.upper).toBeCloseTo(0.07, 10);
    expect(s.baseline.lower).toBeCloseTo(0.05, 10);
    expect(s.baseline.windows).toBe(11);
    expect(s.last_observation).toMatchObject({ time: iso(c0 + 3600), spans: 100, window_seconds: 300 });
    expect(s.last_observation.value).toBeCloseTo(0.05, 10);
    const p = await get(presSig.id);
    expect(p.status).toBe('active');
    // 20 spans a minute: about 200 in the 10-minute silence window of medium sensitivity.
    expect(p.baseline).toMatchObject({ expected: 200, lower: 1, upper: null });
    expect(sent(t)).toHaveLength(0);
  });

  it('an error-rate spike opens an anomaly, notifies, and resolves when the rate is back in the band', async () => {
    for (let i = 0; i < 3; i++) await minute(normal);
    const before = sent(t).length;
    const spikeStart = nowS(t) + 60;
    await minute([{ service: 'checkout', count: 20, errors: 10 }, { service: 'cart', count: 5, errors: 0 }]);
    let s = await get(errSig.id);
    expect(s.anomalous).toBe(true);
    expect(s.status).toBe('active');
    expect(s.status_reason).toMatch(/anomalous/);
    let anomalies = await ok(api.anomalies('shop', errSig.id));
    check('/1/signals/{datasetSlug}/{signalId}/anomalies', 'get', await api.anomalies('shop', errSig.id));
    expect(anomalies).toHaveLength(1);
    expect(anomalies[0]).toMatchObject({ signal_id: errSig.id, kind: 'error_rate', service_name: 'checkout', status: 'open', started_at: iso(spikeStart), window_start: iso(spikeStart - 300), ended_at: null, ended_reason: null, spans: 100 });
    expect(anomalies[0].observed).toBeCloseTo(0.14, 10); // (4 × 1 + 10) / 100
    expect(anomalies[0].band.upper).toBeCloseTo(0.07, 10);
    const triggered = sent(t).slice(before);
    expect(triggered).toHaveLength(2);
    expect(triggered.map((n) => n.recipient.id).sort()).toEqual([recipientA, recipientB].sort());
    for (const n of triggered) {
      expect(n).toMatchObject({ source: 'signal', status: 'triggered', alert: { id: errSig.id, name: 'Error rate of checkout', datasetSlug: 'shop' }, timestamp: iso(spikeStart) });
      expect(n.result.value).toBeCloseTo(0.14, 10);
      expect(n.result.threshold!.op).toBe('>');
      expect(n.result.summary).toMatch(/Error rate of checkout is 14\.0%/);
    }
    // Two more spike minutes, then normal traffic: the 5-minute window leaves the band after 5 normal minutes.
    await minute([{ service: 'checkout', count: 20, errors: 10 }]);
    await minute([{ service: 'checkout', count: 20, errors: 10 }]);
    // The band is frozen while the anomaly is open.
    expect((await get(errSig.id)).baseline.upper).toBeCloseTo(0.07, 10);
    for (let i = 0; i < 4; i++) {
      await minute(normal);
      expect((await get(errSig.id)).anomalous, `normal minute ${i + 1}`).toBe(true);
    }
    expect(sent(t)).toHaveLength(before + 2);
    await minute(normal);
    const end = nowS(t);
    s = await get(errSig.id);
    expect(s.anomalous).toBe(false);
    anomalies = await ok(api.anomalies('shop', errSig.id));
    expect(anomalies).toHaveLength(1);
    expect(anomalies[0]).toMatchObject({ status: 'resolved', started_at: iso(spikeStart), ended_at: iso(end), ended_reason: 'recovered' });
    expect(anomalies[0].peak).toBeCloseTo(0.32, 10); // (1 + 3 × 10 + 1) / 100
    expect(anomalies[0].last_observed).toBeCloseTo(0.05, 10);
    const resolved = sent(t).slice(before + 2);
    expect(resolved).toHaveLength(2);
    for (const n of resolved) {
      expect(n).toMatchObject({ source: 'signal', status: 'resolved', alert: { id: errSig.id }, timestamp: iso(end) });
      expect(n.alert.dedupKey).toBe(triggered.find((x) => x.recipient.id === n.recipient.id)!.alert.dedupKey);
      expect(n.result.summary).toMatch(/back in its normal band/);
    }
    // Every notification id is unique.
    expect(new Set(sent(t).map((n) => n.id)).size).toBe(sent(t).length);
    // The presence signal saw spans throughout: nothing.
    expect(await ok(api.anomalies('shop', presSig.id))).toEqual([]);
  });

  it('a service going silent opens a presence anomaly after the silence allowance; spans again resolve it', async () => {
    const before = sent(t).length;
    const lastMinute = nowS(t);
    await minute(normal); // the last checkout spans: [lastMinute, lastMinute + 60)
    for (let i = 1; i <= 9; i++) {
      await minute([{ service: 'cart', count: 5, errors: 0 }]);
      expect((await get(presSig.id)).anomalous, `silent minute ${i}`).toBe(false);
    }
    await minute([{ service: 'cart', count: 5, errors: 0 }]);
    const silentAt = nowS(t);
    expect(silentAt).toBe(lastMinute + 60 + 600);
    const p = await get(presSig.id);
    expect(p.anomalous).toBe(true);
    expect(p.last_observation).toMatchObject({ value: 0, spans: 0, window_seconds: 600 });
    const a = (await ok(api.anomalies('shop', presSig.id)))[0];
    expect(a).toMatchObject({ kind: 'presence', status: 'open', started_at: iso(silentAt), window_start: iso(silentAt - 600), observed: 0, band: { lower: 1, upper: null } });
    const triggered = sent(t).slice(before);
    expect(triggered).toHaveLength(1); // the presence signal has one recipient
    expect(triggered[0]).toMatchObject({ source: 'signal', status: 'triggered', recipient: { id: recipientA }, alert: { id: presSig.id, name: 'Checkout alive' } });
    expect(triggered[0].result.summary).toMatch(/checkout has sent no spans for 10 minutes/);
    // The error-rate signal does not judge windows with too few spans: no anomaly there.
    const e = await get(errSig.id);
    expect(e.anomalous).toBe(false);
    expect(e.status_reason).toMatch(/not judged/);
    // Still silent: still one open anomaly, no new notification.
    await minute([]);
    expect(sent(t)).toHaveLength(before + 1);
    await minute(normal);
    const back = nowS(t);
    const resolved = (await ok(api.anomalies('shop', presSig.id)))[0];
    expect(resolved).toMatchObject({ status: 'resolved', ended_at: iso(back), ended_reason: 'recovered', last_observed: 20 });
    expect(sent(t).slice(before + 1)).toHaveLength(1);
    expect(sent(t)[before + 1]).toMatchObject({ status: 'resolved', alert: { id: presSig.id } });
    expect(sent(t)[before + 1].result.summary).toMatch(/sending spans again/);
  });

  it('off: disabling turns a signal off at once, closes its open anomaly at the next evaluation; enabling resumes', async () => {
    // Open a presence anomaly, then disable the signal.
    for (let i = 0; i < 10; i++) await minute([]);
    expect((await get(presSig.id)).anomalous).toBe(true);
    const before = sent(t).length;
    const body = { service_name: 'checkout', kind: 'presence', training_period_hours: 1, recipients: [{ id: recipientA }], name: 'Checkout alive', enabled: false };
    const off = await ok(api.put('shop', presSig.id, body));
    check(ONE, 'put', await api.put('shop', presSig.id, body));
    expect(off).toMatchObject({ enabled: false, status: 'off', status_reason: 'the signal is disabled' });
    await minute([]);
    const s = await get(presSig.id);
    expect(s).toMatchObject({ status: 'off', anomalous: false });
    const [a] = await ok(api.anomalies('shop', presSig.id));
    expect(a).toMatchObject({ status: 'resolved', ended_at: iso(nowS(t)), ended_reason: 'off' });
    expect(sent(t).slice(before)).toHaveLength(1);
    expect(sent(t)[before]).toMatchObject({ status: 'resolved', alert: { id: presSig.id } });
    expect(sent(t)[before].result.summary).toMatch(/is now off/);
    // Off: silence fires nothing.
    for (let i = 0; i < 3; i++) await minute([]);
    expect(sent(t)).toHaveLength(before + 1);
    // Enabled again: the history is there, so it is active at the next evaluation, and the
    // ongoing silence is an anomaly again.
    const on = await ok(api.put('shop', presSig.id, { ...body, enabled: true }));
    expect(on.status).toBe('onboarding');
    await minute([]);
    const again = await get(presSig.id);
    expect(again.status).toBe('active');
    expect(again.anomalous).toBe(true);
    expect(await ok(api.anomalies('shop', presSig.id))).toHaveLength(3);
    expect((await ok(api.anomalies('shop', presSig.id)))[0].status).toBe('open');
  });

  it('an open anomaly closes when the signal goes back to training or becomes ineligible', async () => {
    // The presence anomaly of the silence is open (previous test).
    expect((await get(presSig.id)).anomalous).toBe(true);
    const body = { service_name: 'checkout', kind: 'presence', training_period_hours: 1, recipients: [{ id: recipientA }], name: 'Checkout alive' };
    const anomalyCount = (await ok(api.anomalies('shop', presSig.id))).length;
    let before = sent(t).length;
    // A longer training period than the service's history: training again.
    await ok(api.put('shop', presSig.id, { ...body, training_period_hours: 168 }));
    await minute([]);
    expect(await get(presSig.id)).toMatchObject({ status: 'training', anomalous: false });
    let [a] = await ok(api.anomalies('shop', presSig.id));
    expect(a).toMatchObject({ status: 'resolved', ended_at: iso(nowS(t)), ended_reason: 'training' });
    expect(sent(t).slice(before).map((n) => [n.status, n.alert.id])).toEqual([['resolved', presSig.id]]);
    // Back to 1 hour: active, and the silence goes on: a new anomaly.
    await ok(api.put('shop', presSig.id, body));
    await minute([]);
    expect(await get(presSig.id)).toMatchObject({ status: 'active', anomalous: true });
    // The service_name definition now names a column the dataset lacks: ineligible, closed.
    before = sent(t).length;
    await ok(t.app.inject({ method: 'PATCH', url: '/1/dataset_definitions/shop', headers: t.config, payload: { service_name: { name: 'no.such.column' } } }));
    await minute([]);
    expect(await get(presSig.id)).toMatchObject({ status: 'ineligible', anomalous: false });
    [a] = await ok(api.anomalies('shop', presSig.id));
    expect(a).toMatchObject({ status: 'resolved', ended_reason: 'ineligible' });
    expect(sent(t).slice(before).filter((n) => n.alert.id === presSig.id).map((n) => n.status)).toEqual(['resolved']);
    expect(await ok(api.anomalies('shop', presSig.id))).toHaveLength(anomalyCount + 1);
    // Restored: active again, the silence an open anomaly again (the next test deletes it).
    await ok(t.app.inject({ method: 'PATCH', url: '/1/dataset_definitions/shop', headers: t.config, payload: { service_name: { name: 'service.name' } } }));
    await minute([]);
    expect(await get(presSig.id)).toMatchObject({ status: 'active', anomalous: true });
  });

  it('deleting a signal resolves its open anomaly and deletes it with its anomalies', async () => {
    const before = sent(t).length;
    expect(await ok(api.del('shop', presSig.id), 204)).toBeUndefined();
    expect(sent(t).slice(before)).toHaveLength(1);
    expect(sent(t)[before]).toMatchObject({ status: 'resolved', alert: { id: presSig.id } });
    expect(sent(t)[before].result.summary).toMatch(/was deleted/);
    expect((await api.get('shop', presSig.id)).statusCode).toBe(404);
    expect((await api.anomalies('shop', presSig.id)).statusCode).toBe(404);
    expect((await api.del('shop', presSig.id)).statusCode).toBe(404);
    expect(await t.store.listObjects('signal_anomaly', {})).toHaveLength(1); // the error-rate signal's
    await minute([]);
    expect(sent(t)).toHaveLength(before + 1);
    expect((await ok(api.list('shop'))).map((s: any) => s.id)).toEqual([errSig.id]);
  });
});

describe('signals: ineligible', { timeout: 60_000 }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    t = await newApp();
    api = client(t);
  });
  afterAll(() => t.close());

  it('a dataset whose events name no service is ineligible until spans with service.name arrive', async () => {
    const start = nowS(t) - 120;
    await ingest(t, 'logs', Array.from({ length: 30 }, (_, i) => ({ time: iso(start + i), data: { message: `line ${i}`, error: false } })));
    const sig = await ok(api.create('logs', { service_name: 'worker', kind: 'error_rate', training_period_hours: 1 }), 201);
    await tick(t);
    let s = await ok(api.get('logs', sig.id));
    expect(s.status).toBe('ineligible');
    expect(s.status_reason).toMatch(/no column or calculated field "service\.name" \(its service_name definition\)/);
    // A span of the service makes it eligible: training starts.
    await ingest(t, 'logs', minuteSpans(nowS(t), 'worker', 10, 0));
    await tick(t);
    s = await ok(api.get('logs', sig.id));
    expect(s.status).toBe('training');
  });

  it('too little traffic for a reliable baseline: ineligible after training, both kinds', async () => {
    // Backfilled history: one span every 20 minutes over the last 2 hours.
    const now = nowS(t);
    await ingest(t, 'batch', Array.from({ length: 6 }, (_, i) => ({ time: iso(now - 7200 + i * 1200 + 30), data: { 'service.name': 'nightly', error: false } })));
    const e = await ok(api.create('batch', { service_name: 'nightly', kind: 'error_rate', training_period_hours: 1 }), 201);
    const p = await ok(api.create('batch', { service_name: 'nightly', kind: 'presence', training_period_hours: 1 }), 201);
    await tick(t);
    const es = await ok(api.get('batch', e.id));
    expect(es.status).toBe('ineligible');
    expect(es.status_reason).toMatch(/too little traffic for a reliable baseline: 0 of the 12 five-minute windows of the last 1 h had at least 10 spans \(6 needed\)/);
    const ps = await ok(api.get('batch', p.id));
    expect(ps.status).toBe('ineligible');
    expect(ps.status_reason).toMatch(/sent spans in 3 of the 12 five-minute windows of the last 1 h \(90% needed\)/);
    expect(ps.training_ends_at).toBe(iso(now - 7200 + 30 + 3600));
    expect(ps.baseline).toBeNull();
  });
});

describe('signals: custom definitions and a calculated error field; created over existing history', { timeout: 60_000 }, () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    t = await newApp();
    api = client(t);
  });
  afterAll(() => t.close());

  it('is active at its first evaluation and detects a spike read through the definitions', async () => {
    const now = nowS(t);
    const spans = (start: number, errors: number) =>
      Array.from({ length: 20 }, (_, i) => ({ time: iso(start + i * 3), data: { svc: i % 2 ? 'api' : 'other', status: i < errors * 2 && i % 2 ? 500 : 200 } }));
    // 70 minutes of history: 10 spans a minute of service "api", 1 of them a 500.
    const history = Array.from({ length: 70 }, (_, m) => spans(now - 4200 + m * 60, 1)).flat();
    await ingest(t, 'api-ds', history);
    await ok(t.app.inject({ method: 'POST', url: '/1/derived_columns/api-ds', headers: t.config, payload: { alias: 'is_error', expression: 'GTE($status, 500)' } }), 201);
    await ok(t.app.inject({ method: 'PATCH', url: '/1/dataset_definitions/api-ds', headers: t.config, payload: { service_name: { name: 'svc' }, error: { name: 'is_error' } } }));
    const sig = await ok(api.create('api-ds', { service_name: 'api', kind: 'error_rate', training_period_hours: 1, sensitivity: 'high' }), 201);
    await t.app.jobs.scheduler.tick();
    let s = await ok(api.get('api-ds', sig.id));
    expect(s.status).toBe('active');
    expect(s.first_seen_at).toBe(iso(now - 4200 + 3)); // the first span of "api"
    expect(s.baseline.expected).toBeCloseTo(0.1, 10);
    expect(s.baseline.upper).toBeCloseTo(0.11, 10); // high: 1 point above the mean at least
    expect(s.last_observation.spans).toBe(50);
    expect(s.last_observation.value).toBeCloseTo(0.1, 10);
    // A minute with 5 of 10 errors: (4 + 5) / 50 = 18%.
    await ingest(t, 'api-ds', spans(now, 5));
    await tick(t);
    s = await ok(api.get('api-ds', sig.id));
    expect(s.anomalous).toBe(true);
    const [a] = await ok(api.anomalies('api-ds', sig.id));
    expect(a.observed).toBeCloseTo(0.18, 10);
    // No recipients: nothing is sent.
    expect(t.app.jobs.notifier.sent).toHaveLength(0);
    // Sensitivity low: the band shown is the open anomaly's (frozen); a new one is computed after it closes.
    const low = await ok(api.put('api-ds', sig.id, { service_name: 'api', kind: 'error_rate', training_period_hours: 1, sensitivity: 'low' }));
    expect(low.sensitivity).toBe('low');
    expect(low.baseline.upper).toBeCloseTo(0.11, 10);
  });
});

describe('signals: validation', () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let recipient: string;
  beforeAll(async () => {
    t = await newApp();
    api = client(t);
    recipient = await createRecipient(t, 'ops@example.com');
    await ok(t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'shop' } }), 201);
  });
  afterAll(() => t.close());

  const base = { service_name: 'checkout', kind: 'error_rate' };

  async function fails(body: unknown, field: string, code: string, status = 422) {
    const res = await api.create('shop', body);
    expect(res.statusCode, res.body).toBe(status);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    const b = json(res);
    expect(b.type_detail.map((d: any) => [d.field, d.code]), res.body).toContainEqual([field, code]);
    return b;
  }

  it.each([
    [{ kind: 'error_rate' }, 'service_name', 'missing'],
    [{ ...base, service_name: 7 }, 'service_name', 'incorrect_type'],
    [{ ...base, service_name: '' }, 'service_name', 'missing'],
    [{ ...base, service_name: '   ' }, 'service_name', 'missing'],
    [{ ...base, service_name: 'x'.repeat(256) }, 'service_name', 'invalid'],
    [{ service_name: 'checkout' }, 'kind', 'missing'],
    [{ ...base, kind: 'latency' }, 'kind', 'invalid'],
    [{ ...base, kind: 1 }, 'kind', 'incorrect_type'],
    [{ ...base, name: '' }, 'name', 'missing'],
    [{ ...base, name: '  ' }, 'name', 'missing'],
    [{ ...base, name: 'n'.repeat(121) }, 'name', 'invalid'],
    [{ ...base, name: 5 }, 'name', 'incorrect_type'],
    [{ ...base, description: 'd'.repeat(1024) }, 'description', 'invalid'],
    [{ ...base, description: false }, 'description', 'incorrect_type'],
    [{ ...base, enabled: 'yes' }, 'enabled', 'incorrect_type'],
    [{ ...base, sensitivity: 'extreme' }, 'sensitivity', 'invalid'],
    [{ ...base, sensitivity: 3 }, 'sensitivity', 'incorrect_type'],
    [{ ...base, training_period_hours: 0 }, 'training_period_hours', 'invalid'],
    [{ ...base, training_period_hours: 169 }, 'training_period_hours', 'invalid'],
    [{ ...base, training_period_hours: 1.5 }, 'training_period_hours', 'incorrect_type'],
    [{ ...base, training_period_hours: '24' }, 'training_period_hours', 'incorrect_type'],
    [{ ...base, recipients: 'ops' }, 'recipients', 'incorrect_type'],
    [{ ...base, recipients: [{ id: 'nope' }] }, 'recipients.0.id', 'invalid'],
    [{ ...base, recipients: [{}] }, 'recipients.0.id', 'missing'],
    [{ ...base, recipients: Array.from({ length: 101 }, () => ({ id: 'x' })) }, 'recipients', 'invalid'],
  ])('%j → 422 on %s (%s)', async (body, field, code) => {
    await fails(body, field, code);
  });

  it('the same recipient twice, and pagerduty-only details on an email recipient → 422', async () => {
    await fails({ ...base, recipients: [{ id: recipient }, { id: recipient }] }, 'recipients.1.id', 'invalid');
    await fails({ ...base, recipients: [{ id: recipient, details: { pagerduty_severity: 'info' } }] }, 'recipients.0.details.pagerduty_severity', 'invalid');
  });

  it('reports every problem at once', async () => {
    const b = await fails({ service_name: ' ', kind: 'error_rate', name: ' ', recipients: [{ id: 'nope' }] }, 'service_name', 'missing');
    expect(b.type_detail.map((d: any) => d.field).sort()).toEqual(['name', 'recipients.0.id', 'service_name']);
    const c = await fails({ kind: 'nope', training_period_hours: 0 }, 'service_name', 'missing');
    expect(c.type_detail.map((d: any) => d.field).sort()).toEqual(['kind', 'service_name', 'training_period_hours']);
  });

  it('null means omitted; unknown and read-only fields are ignored', async () => {
    const s = await ok(
      api.create('shop', { ...base, name: null, description: null, enabled: null, sensitivity: null, training_period_hours: null, recipients: null, status: 'active', id: 'mine', color: 'red' }),
      201,
    );
    expect(s).toMatchObject({ name: 'Error rate of checkout', description: '', enabled: true, sensitivity: 'medium', training_period_hours: 24, recipients: [], status: 'onboarding' });
    expect(s.id).not.toBe('mine');
    expect(s).not.toHaveProperty('color');
  });

  it('a recipient a signal uses cannot be deleted (409) until the signal is gone', async () => {
    const own = await createRecipient(t, 'pager@example.com');
    const sig = await ok(api.create('shop', { service_name: 'inventory', kind: 'presence', recipients: [{ id: own }] }), 201);
    const refused = await t.app.inject({ method: 'DELETE', url: `/1/recipients/${own}`, headers: t.config });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(json(refused).detail).toMatch(/1 signal\b/);
    expect((await t.app.inject({ method: 'DELETE', url: `/1/signals/shop/${sig.id}`, headers: t.config })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'DELETE', url: `/1/recipients/${own}`, headers: t.config })).statusCode).toBe(204);
  });

  it('one signal per service and kind in a dataset → 409; other kinds, services and datasets are fine', async () => {
    await ok(api.create('shop', { service_name: 'cart', kind: 'presence' }), 201);
    const res = await api.create('shop', { service_name: 'cart', kind: 'presence', name: 'again' });
    expect(res.statusCode).toBe(409);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(json(res).error).toMatch(/already exists/);
    await ok(api.create('shop', { service_name: 'cart', kind: 'error_rate' }), 201);
    await ok(api.create('shop', { service_name: 'Cart', kind: 'presence' }), 201);
    await ok(t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'other' } }), 201);
    await ok(api.create('other', { service_name: 'cart', kind: 'presence' }), 201);
  });

  it('PUT is a full replacement; service_name and kind cannot change; same rules as create', async () => {
    const s = await ok(
      api.create('shop', { service_name: 'search', kind: 'error_rate', name: 'Search errors', description: 'd', enabled: false, sensitivity: 'high', training_period_hours: 48, recipients: [{ id: recipient }] }),
      201,
    );
    expect(s.status).toBe('off');
    const r = await ok(api.put('shop', s.id, { service_name: 'search', kind: 'error_rate' }));
    expect(r).toMatchObject({ id: s.id, name: 'Error rate of search', description: '', enabled: true, sensitivity: 'medium', training_period_hours: 24, recipients: [], created_at: s.created_at });
    let res = await api.put('shop', s.id, { service_name: 'search', kind: 'presence' });
    expect(res.statusCode).toBe(422);
    expect(json(res).type_detail[0]).toMatchObject({ field: 'kind', code: 'invalid' });
    res = await api.put('shop', s.id, { service_name: 'find', kind: 'error_rate' });
    expect(res.statusCode).toBe(422);
    expect(json(res).type_detail[0]).toMatchObject({ field: 'service_name', code: 'invalid' });
    res = await api.put('shop', s.id, { kind: 'error_rate', sensitivity: 'x' });
    expect(res.statusCode).toBe(422);
    expect(json(res).type_detail.map((d: any) => d.field).sort()).toEqual(['sensitivity', 'service_name']);
    expect((await api.put('shop', 'nope', { service_name: 'search', kind: 'error_rate' })).statusCode).toBe(404);
  });

  it('bodies that are not JSON or not objects, unknown datasets and __all__', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/1/signals/shop', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{nope' });
    expect(res.statusCode).toBe(400);
    expect((await api.create('shop', [1, 2])).statusCode).toBe(422);
    for (const ds of ['nope', '__all__']) {
      for (const r of [await api.list(ds), await api.create(ds, base), await api.get(ds, 'x'), await api.anomalies(ds, 'x')]) {
        expectDatasetNotFound(r);
      }
    }
    const s = await ok(api.create('shop', { service_name: 'orders', kind: 'presence' }), 201);
    // Under another dataset of the environment it does not exist.
    expect(json(await api.get('other', s.id))).toEqual({ error: 'signal not found' });
    expect((await api.get('other', s.id)).statusCode).toBe(404);
    // The dataset name works as well as the slug.
    await ok(api.get('Shop', s.id));
  });
});

describe('signals: permissions and tenancy', () => {
  let t: TestApp;
  let api: ReturnType<typeof client>;
  let sig: any;
  beforeAll(async () => {
    t = await newApp();
    api = client(t);
    await ok(t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'shop' } }), 201);
    sig = await ok(api.create('shop', { service_name: 'checkout', kind: 'error_rate' }), 201);
  });
  afterAll(() => t.close());

  const routes = (a: ReturnType<typeof client>, id: string, body: Record<string, unknown> = { service_name: 'checkout', kind: 'error_rate' }) => [
    () => a.list('shop'),
    () => a.create('shop', { service_name: 'other', kind: 'presence' }),
    () => a.get('shop', id),
    () => a.put('shop', id, body),
    () => a.anomalies('shop', id),
    () => a.del('shop', id),
  ];

  it('every route needs Manage Signals: 403 without it, whatever else the key holds', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), manage_signals: false } });
    for (const call of routes(client(t, key.headers), sig.id)) {
      const res = await call();
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).error).toMatch(/manage_signals/);
    }
    expect((await api.get('shop', sig.id)).statusCode).toBe(200);
  });

  it('a key with only Manage Signals may use every route', async () => {
    const { team, environment } = await initialTenancy(t);
    const only = await addKey(t, team, environment, { permissions: { manage_signals: true } });
    const a = client(t, only.headers);
    const s = await ok(a.create('shop', { service_name: 'solo', kind: 'presence' }), 201);
    const statuses = [];
    for (const call of routes(a, s.id, { service_name: 'solo', kind: 'presence' })) statuses.push((await call()).statusCode);
    expect(statuses).toEqual([200, 201, 200, 200, 200, 204]);
  });

  it('ingest keys and no key → 401', async () => {
    for (const headers of [t.ingest, {}]) {
      const res = await client(t, headers as Record<string, string>).list('shop');
      expect(res.statusCode).toBe(401);
    }
  });

  it("another environment's key → 404, even with a dataset of the same name", async () => {
    const other = await secondEnvironment(t);
    const a = client(t, other.headers);
    expectDatasetNotFound(await a.get('shop', sig.id));
    await ok(t.app.inject({ method: 'POST', url: '/1/datasets', headers: other.headers, payload: { name: 'shop' } }), 201);
    for (const call of [() => a.get('shop', sig.id), () => a.anomalies('shop', sig.id), () => a.del('shop', sig.id), () => a.put('shop', sig.id, { service_name: 'checkout', kind: 'error_rate' })]) {
      const res = await call();
      expect(res.statusCode).toBe(404);
      expect(json(res)).toEqual({ error: 'signal not found' });
    }
    expect(await ok(a.list('shop'))).toEqual([]);
    // Recipients of another team are not recipients of this one.
    const res = await api.create('shop', { service_name: 'x', kind: 'presence', recipients: [{ id: 'someone-elses' }] });
    expect(res.statusCode).toBe(422);
    expect((await ok(api.get('shop', sig.id))).id).toBe(sig.id);
  });

  it('manage_signals through /2/ API keys: granted, shown only when granted, enforced; /1/auth unchanged', async () => {
    const { environment } = await initialTenancy(t);
    const base = `/2/teams/${t.init.team.slug}/api-keys`;
    const create = (permissions: Record<string, boolean>) =>
      t.app.inject({
        method: 'POST', url: base, headers: t.mgmt,
        payload: { data: { type: 'api-keys', attributes: { key_type: 'configuration', name: 'signals', permissions }, relationships: { environment: { data: { id: environment.id, type: 'environments' } } } } },
      });
    const granted = json(await create({ manage_signals: true }));
    expect(granted.data.attributes.permissions.manage_signals).toBe(true);
    expect(granted.data.attributes.permissions.send_events).toBe(false);
    const secret = granted.data.attributes.secret;
    await ok(client(t, { 'x-honeycomb-team': secret }).list('shop'));
    const auth = json(await t.app.inject({ method: 'GET', url: '/1/auth', headers: { 'x-honeycomb-team': secret } }));
    expect(Object.keys(auth.api_key_access).sort()).toEqual(
      ['boards', 'columns', 'createDatasets', 'events', 'markers', 'privateBoards', 'queries', 'recipients', 'slos', 'triggers'],
    );
    const plain = json(await create({ send_events: true }));
    expect(plain.data.attributes.permissions).not.toHaveProperty('manage_signals');
    expect((await client(t, { 'x-honeycomb-team': plain.data.attributes.secret }).list('shop')).statusCode).toBe(403);
    // Revoked with PATCH: absent again, and refused.
    const patched = await t.app.inject({
      method: 'PATCH', url: `${base}/${granted.data.id}`, headers: t.mgmt,
      payload: { data: { id: granted.data.id, type: 'api-keys', attributes: { permissions: { manage_signals: false } } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched).data.attributes.permissions).not.toHaveProperty('manage_signals');
    expect((await client(t, { 'x-honeycomb-team': secret }).list('shop')).statusCode).toBe(403);
  });
});

describe('signals: OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await newApp();
  });
  afterAll(() => t.close());

  it('documents every route with its security, errors and schemas', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const paths: Record<string, string[]> = {
      '/1/signals/{datasetSlug}': ['get', 'post'],
      '/1/signals/{datasetSlug}/{signalId}': ['get', 'put', 'delete'],
      '/1/signals/{datasetSlug}/{signalId}/anomalies': ['get'],
    };
    for (const [p, methods] of Object.entries(paths)) {
      for (const m of methods) {
        const op = doc.paths[p]?.[m];
        expect(op, `${m} ${p}`).toBeDefined();
        expect(op.security).toEqual([{ configuration_key: [] }]);
        expect(op.tags).toEqual(['Signals (beta)']);
        for (const status of ['401', '403', '404']) expect(op.responses[status], `${m} ${p} ${status}`).toBeDefined();
      }
    }
    const post = doc.paths['/1/signals/{datasetSlug}'].post;
    expect(post.responses['409']).toBeDefined();
    const body = post.requestBody.content['application/json'].schema;
    expect(body.required.sort()).toEqual(['kind', 'service_name']);
    expect(body.properties.sensitivity.enum).toEqual(['low', 'medium', 'high', null]);
    expect(body.properties.kind.enum).toEqual(['error_rate', 'presence']);
  });
});
