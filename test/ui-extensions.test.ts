// The Waggle extension endpoints the web UI uses, through HTTP like any client: BubbleUp, a
// trace's spans, the newest raw events, the delivery log. Real stores, real events; bad input of
// every kind; another environment's dataset → 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, sendJson, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { HttpReceiver } from './receivers.js';

let t: TestApp;
let nowS: number;
const iso = (s: number) => new Date(s * 1000).toISOString();

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * 4,000 events over the last two hours. Slow requests (duration ≥ 500 ms) of the last 30 minutes
 * come from `eu-west` 90% of the time; every other event 5% of the time. `status` and `flag` are
 * independent of everything.
 */
function plantedEvents(now: number) {
  const rnd = random(42);
  const out: unknown[] = [];
  for (let i = 0; i < 4000; i++) {
    const time = now - 7200 + Math.floor((i / 4000) * 7200);
    const recent = time >= now - 1800;
    const slow = rnd() < 0.3;
    const duration = slow ? 500 + rnd() * 500 : 10 + rnd() * 200;
    const eu = recent && slow ? rnd() < 0.9 : rnd() < 0.05;
    out.push({
      time: iso(time),
      data: {
        duration_ms: duration,
        region: eu ? 'eu-west' : rnd() < 0.5 ? 'us-east' : 'us-west',
        status: rnd() < 0.1 ? 500 : 200,
        flag: rnd() < 0.5,
        user: `u${Math.floor(rnd() * 1000)}`,
      },
    });
  }
  return out;
}

beforeAll(async () => {
  t = await makeApp();
  nowS = Math.floor(t.clock.ms / 1000);
  await ingest(t, 'shop', plantedEvents(nowS));
});
afterAll(() => t.close());

const bubble = (body: unknown, dataset = 'shop', headers = t.config) => sendJson(t, 'POST', `/1/bubbleup/${dataset}`, body, headers);
const region = () => ({ start_time: nowS - 1800, end_time: nowS, column: 'duration_ms', lower: 500, upper: 2000 });

describe('POST /1/bubbleup/{dataset}', () => {
  it('finds the planted difference as the top column, with both distributions', async () => {
    const res = await bubble({ query: { time_range: 7200, calculations: [{ op: 'HEATMAP', column: 'duration_ms' }] }, selection: region() });
    expect(res.statusCode, res.body).toBe(200);
    const b = json(res);
    // Sizes are exact: about 30% of the last quarter is selected.
    expect(b.selection.rows + b.baseline.rows).toBe(4000);
    expect(b.selection.rows).toBeGreaterThan(200);
    expect(b.selection.rows).toBeLessThan(400);
    expect(b.selection.events).toBe(b.selection.rows); // sample rate 1
    const top = b.columns[0];
    expect(top.column).toBe('region');
    expect(top.kind).toBe('values');
    const eu = top.values.find((v: { value: string }) => v.value === 'eu-west');
    expect(eu.selection).toBeGreaterThan(0.8);
    expect(eu.baseline).toBeLessThan(0.1);
    expect(top.score).toBeCloseTo(eu.selection - eu.baseline, 10);
    // The selection's own column is not compared; independent columns score low.
    expect(b.columns.map((c: { column: string }) => c.column)).not.toContain('duration_ms');
    for (const c of b.columns.slice(1)) expect(c.score, c.column).toBeLessThan(0.15);
    const status = b.columns.find((c: { column: string }) => c.column === 'status');
    expect(status.kind).toBe('values'); // two distinct numbers: compared as values
    const shares = (side: 'selection' | 'baseline') => status.values.reduce((s: number, v: Record<string, number>) => s + v[side], 0);
    expect(shares('selection')).toBeCloseTo(1, 6);
    expect(shares('baseline')).toBeCloseTo(1, 6);
  });

  it('compares numbers as histograms, and weighs by sample rate', async () => {
    // A time-only selection: duration is compared too, as a 16-bin histogram.
    const res = await bubble({ query: { time_range: 7200 }, selection: { start_time: nowS - 1800, end_time: nowS } });
    expect(res.statusCode, res.body).toBe(200);
    const d = json(res).columns.find((c: { column: string }) => c.column === 'duration_ms');
    expect(d.kind).toBe('histogram');
    expect(d.bins).toHaveLength(16);
    expect(d.bins[0].lower).toBeLessThan(d.bins[15].upper);
    const total = d.bins.reduce((s: number, x: { selection: number }) => s + x.selection, 0) + d.missing.selection;
    expect(total).toBeCloseTo(1, 6);

    // Sample rates: 10 stored events of rate 9 outweigh 30 of rate 1.
    const now = nowS;
    await ingest(t, 'weighted', [
      ...Array.from({ length: 10 }, (_, i) => ({ time: iso(now - 600 + i), samplerate: 9, data: { kind: 'heavy', n: 1 } })),
      ...Array.from({ length: 30 }, (_, i) => ({ time: iso(now - 600 + i), data: { kind: 'light', n: 1 } })),
      ...Array.from({ length: 40 }, (_, i) => ({ time: iso(now - 5000 + i), data: { kind: 'light', n: 1 } })),
    ]);
    const w = json(await bubble({ query: { time_range: 7200 }, selection: { start_time: now - 900, end_time: now } }, 'weighted'));
    expect(w.selection).toMatchObject({ rows: 40, events: 120, sampled: 40 });
    expect(w.baseline).toMatchObject({ rows: 40, events: 40 });
    const kind = w.columns.find((c: { column: string }) => c.column === 'kind');
    expect(kind.values.find((v: { value: string }) => v.value === 'heavy').selection).toBeCloseTo(90 / 120, 10);
  });

  it('applies the query’s filters to both sides, and works on __all__', async () => {
    const filtered = json(await bubble({ query: { time_range: 7200, filters: [{ column: 'region', op: '=', value: 'us-east' }] }, selection: region() }));
    expect(filtered.columns.find((c: { column: string }) => c.column === 'region').values.map((v: { value: string }) => v.value)).toEqual(['us-east']);
    const all = await bubble({ query: { time_range: 7200 }, selection: region() }, '__all__');
    expect(all.statusCode, all.body).toBe(200);
    expect(json(all).columns[0].column).toBe('region');
  });

  it('answers 400/422 for bad input, naming the field', async () => {
    const cases: [unknown, number, string?][] = [
      [undefined, 400],
      ['[1]', 422, 'body'],
      [{}, 422, 'selection'],
      [{ selection: 'x' }, 422, 'selection'],
      [{ selection: { start_time: 'a', end_time: nowS } }, 422, 'selection.start_time'],
      [{ selection: { start_time: nowS, end_time: nowS - 10 } }, 422, 'selection.end_time'],
      [{ selection: { start_time: nowS - 60, end_time: nowS, lower: 3 } }, 422, 'selection.lower'],
      [{ selection: { start_time: nowS - 60, end_time: nowS, column: 'duration_ms', lower: 5, upper: 1 } }, 422, 'selection.upper'],
      [{ selection: { start_time: nowS - 60, end_time: nowS, column: 'nope' } }, 422, 'selection.column'],
      [{ selection: { start_time: nowS - 60, end_time: nowS, column: 'duration_ms', upper: 'big' } }, 422, 'selection.upper'],
      [{ selection: { start_time: 100, end_time: 200 } }, 422, 'selection'],
      [{ selection: region(), limit: 0 }, 422, 'limit'],
      [{ selection: region(), query: { calculations: [{ op: 'NOPE' }] } }, 422, 'query.calculations.0.op'],
      [{ selection: region(), query: 'x' }, 422, 'query'],
    ];
    for (const [body, status, field] of cases) {
      const res = body === undefined ? await t.app.inject({ method: 'POST', url: '/1/bubbleup/shop', headers: t.config }) : await bubble(body);
      expect(res.statusCode, `${JSON.stringify(body)} → ${res.body}`).toBe(status);
      if (field) expect(json(res).type_detail.map((d: { field: string }) => d.field), JSON.stringify(body)).toContain(field);
    }
    const tooLong = await bubble({ query: { time_range: 8 * 86400 }, selection: region() });
    expect(tooLong.statusCode).toBe(400);
  });

  it('is 404 for an unknown dataset and another environment’s, 401/403 without a key or permission', async () => {
    expect((await bubble({ selection: region() }, 'nope')).statusCode).toBe(404);
    const staging = await secondEnvironment(t, 'BubbleUp Staging');
    await ingest({ ...t, ingest: staging.headers } as TestApp, 'staging-only', [{ data: { a: 1 } }]);
    expect((await bubble({ selection: region() }, 'staging-only')).statusCode).toBe(404);
    expect((await bubble({ selection: region() }, 'shop', staging.headers)).statusCode).toBe(404);
    expect((await bubble({ selection: region() }, 'shop', {})).statusCode).toBe(401);
    const { team, environment } = await initialTenancy(t);
    const noRun = await addKey(t, team, environment, { permissions: { manage_columns: true } });
    expect((await bubble({ selection: region() }, 'shop', noRun.headers)).statusCode).toBe(403);
  });
});

describe('GET /1/traces/{dataset}/{traceId}', () => {
  const tid = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  beforeAll(async () => {
    const t0 = nowS - 300;
    const at = (ms: number) => new Date(t0 * 1000 + ms).toISOString();
    // Beeline-style spans in two datasets; an OpenTelemetry-style span event and link.
    await ingest(t, 'frontend', [
      { time: at(0), data: { 'trace.trace_id': tid, 'trace.span_id': 'root', name: 'GET /cart', 'service.name': 'frontend', duration_ms: 120 } },
      { time: at(10), data: { 'trace.trace_id': tid, 'trace.span_id': 'api', 'trace.parent_id': 'root', name: 'cart.load', 'service.name': 'cart', duration_ms: 80 } },
      { time: at(15), data: { 'trace.trace_id': tid, 'trace.parent_id': 'api', name: 'cache miss', 'meta.annotation_type': 'span_event' } },
      { time: at(11), data: { 'trace.trace_id': tid, 'trace.parent_id': 'api', 'trace.link.trace_id': 'other', 'trace.link.span_id': 'x1', 'meta.annotation_type': 'link' } },
      { time: at(0), data: { 'trace.trace_id': 'another', 'trace.span_id': 'zz', name: 'elsewhere', duration_ms: 1 } },
    ]);
    await ingest(t, 'database', [
      { time: at(20), data: { 'trace.trace_id': tid, 'trace.span_id': 'db', 'trace.parent_id': 'api', name: 'SELECT', 'service.name': 'postgres', duration_ms: 55.5, error: 'timeout' } },
    ]);
  });

  it('answers every event of the trace, oldest first, with its fields named by the definitions', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/1/traces/__all__/${tid}`, headers: t.config });
    expect(res.statusCode, res.body).toBe(200);
    const b = json(res);
    expect(b).toMatchObject({ trace_id: tid, truncated: false });
    expect(b.spans.map((s: { kind: string; span_id: string | null; name: string | null }) => [s.kind, s.span_id ?? s.name])).toEqual([
      ['span', 'root'],
      ['span', 'api'],
      ['link', null],
      ['span_event', 'cache miss'],
      ['span', 'db'],
    ]);
    const db = b.spans.find((s: { span_id: string }) => s.span_id === 'db');
    expect(db).toMatchObject({ dataset: 'database', parent_id: 'api', service_name: 'postgres', duration_ms: 55.5, error: true, kind: 'span' });
    expect(db.data['error']).toBe('timeout');
    expect(db.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const root = b.spans[0];
    expect(root).toMatchObject({ span_id: 'root', parent_id: null, error: false, duration_ms: 120, service_name: 'frontend' });
    const link = b.spans.find((s: { kind: string }) => s.kind === 'link');
    expect(link.link).toEqual({ trace_id: 'other', span_id: 'x1' });
    // One dataset only sees its own events.
    const one = json(await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}`, headers: t.config }));
    expect(one.spans).toHaveLength(4);
  });

  it('reads OpenTelemetry spans as OTLP ingest stores them: services in datasets of their own, span events, links, error status', async () => {
    const traceId = '5b8efff798038103d269b633813fc60c';
    const ns = (ms: number) => String(BigInt(nowS - 120) * 1_000_000_000n + BigInt(Math.round(ms * 1e6)));
    const service = (name: string) => ({ attributes: [{ key: 'service.name', value: { stringValue: name } }] });
    const body = {
      resourceSpans: [
        {
          resource: service('otel-frontend'),
          scopeSpans: [{
            spans: [{
              traceId, spanId: 'eee19b7ec3c1b174', name: 'GET /checkout', kind: 2, startTimeUnixNano: ns(0), endTimeUnixNano: ns(250),
              events: [{ timeUnixNano: ns(40), name: 'cache miss', attributes: [{ key: 'cache.key', value: { stringValue: 'cart:42' } }] }],
              links: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }],
            }],
          }],
        },
        {
          resource: service('otel-payments'),
          scopeSpans: [{
            spans: [{
              traceId, spanId: 'b1f2c3d4e5f60718', parentSpanId: 'eee19b7ec3c1b174', name: 'charge', kind: 3,
              startTimeUnixNano: ns(50), endTimeUnixNano: ns(180.5), status: { code: 2, message: 'card declined' },
            }],
          }],
        },
      ],
    };
    const res = await t.app.inject({ method: 'POST', url: '/v1/traces', headers: { ...t.ingest, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect(res.statusCode, res.body).toBe(200);
    const b = json(await t.app.inject({ method: 'GET', url: `/1/traces/__all__/${traceId}`, headers: t.config }));
    expect(b.spans.map((s: Record<string, unknown>) => [s.kind, s.dataset, s.span_id, s.parent_id, s.name, s.service_name, s.duration_ms, s.error])).toEqual([
      ['span', 'otel-frontend', 'eee19b7ec3c1b174', null, 'GET /checkout', 'otel-frontend', 250, false],
      ['link', 'otel-frontend', null, 'eee19b7ec3c1b174', null, 'otel-frontend', null, false],
      ['span_event', 'otel-frontend', null, 'eee19b7ec3c1b174', 'cache miss', 'otel-frontend', null, false],
      ['span', 'otel-payments', 'b1f2c3d4e5f60718', 'eee19b7ec3c1b174', 'charge', 'otel-payments', 130.5, true],
    ]);
    expect(b.spans[1].link).toEqual({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' });
    expect(b.spans[2].data['cache.key']).toBe('cart:42');
  });

  it('reads a dataset’s own definitions', async () => {
    await ingest(t, 'custom-defs', [
      { data: { tid: 'T1', sid: 's1', svc: 'alpha', took: 5, failed: false } },
      { data: { tid: 'T1', sid: 's2', pid: 's1', svc: 'beta', took: 2, failed: true } },
    ]);
    const defs = { trace_id: { name: 'tid' }, span_id: { name: 'sid' }, parent_id: { name: 'pid' }, service_name: { name: 'svc' }, duration_ms: { name: 'took' }, error: { name: 'failed' } };
    const put = await t.app.inject({ method: 'PATCH', url: '/1/dataset_definitions/custom-defs', headers: t.config, payload: defs });
    expect(put.statusCode, put.body).toBe(200);
    const b = json(await t.app.inject({ method: 'GET', url: '/1/traces/custom-defs/T1', headers: t.config }));
    expect(b.spans.map((s: Record<string, unknown>) => [s.span_id, s.parent_id, s.service_name, s.duration_ms, s.error])).toEqual([
      ['s1', null, 'alpha', 5, false],
      ['s2', 's1', 'beta', 2, true],
    ]);
  });

  it('answers an empty trace for an unknown id, and refuses bad input and other environments', async () => {
    const empty = json(await t.app.inject({ method: 'GET', url: '/1/traces/frontend/nope', headers: t.config }));
    expect(empty).toEqual({ trace_id: 'nope', truncated: false, spans: [] });
    const bad = await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}?start_time=abc`, headers: t.config });
    expect(bad.statusCode).toBe(422);
    expect(json(bad).type_detail[0].field).toBe('querystring.start_time');
    const backwards = await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}?start_time=200&end_time=100`, headers: t.config });
    expect(backwards.statusCode).toBe(422);
    const narrow = json(await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}?start_time=${nowS - 60}&end_time=${nowS}`, headers: t.config }));
    expect(narrow.spans).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: `/1/traces/nope/${tid}`, headers: t.config })).statusCode).toBe(404);
    const staging = await secondEnvironment(t, 'Trace Staging');
    expect((await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}`, headers: staging.headers })).statusCode).toBe(404);
    const elsewhere = json(await t.app.inject({ method: 'GET', url: `/1/traces/__all__/${tid}`, headers: staging.headers }));
    expect(elsewhere.spans).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: `/1/traces/frontend/${tid}` })).statusCode).toBe(401);
  });
});

describe('POST /1/raw_events/{dataset}', () => {
  it('answers the newest events that pass the filters, with every field', async () => {
    const res = await sendJson(t, 'POST', '/1/raw_events/shop', { query: { time_range: 7200, filters: [{ column: 'status', op: '=', value: 500 }] }, limit: 5 });
    expect(res.statusCode, res.body).toBe(200);
    const { events } = json(res);
    expect(events).toHaveLength(5);
    for (const e of events) {
      expect(e.data.status).toBe(500);
      expect(Object.keys(e.data).sort()).toEqual(['duration_ms', 'flag', 'region', 'status', 'user']);
    }
    const times = events.map((e: { time: string }) => e.time);
    expect([...times].sort().reverse()).toEqual(times);
    const dflt = json(await sendJson(t, 'POST', '/1/raw_events/shop', {}));
    expect(dflt.events).toHaveLength(100);
  });

  it('refuses bad input and other environments', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/1/raw_events/shop', headers: t.config })).statusCode).toBe(400);
    const bad = await sendJson(t, 'POST', '/1/raw_events/shop', { limit: 5000, query: { filters: [{ column: 'a', op: 'like' }] } });
    expect(bad.statusCode).toBe(422);
    expect(json(bad).type_detail.map((d: { field: string }) => d.field).sort()).toEqual(['limit', 'query.filters.0.op']);
    expect((await sendJson(t, 'POST', '/1/raw_events/nope', {})).statusCode).toBe(404);
    const staging = await secondEnvironment(t, 'Events Staging');
    expect((await sendJson(t, 'POST', '/1/raw_events/shop', {}, staging.headers)).statusCode).toBe(404);
  });
});

describe('GET /1/deliveries', () => {
  it('lists the environment’s deliveries newest first, without secrets', async () => {
    const receiver = new HttpReceiver();
    await receiver.start();
    try {
      const created = await sendJson(t, 'POST', '/1/recipients', {
        type: 'webhook',
        details: { webhook_name: 'ui hook', webhook_url: `${receiver.url}/hook`, webhook_secret: 'very-secret-value' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const recipient = json(created);
      const { team, environment } = await initialTenancy(t);
      for (const status of ['triggered', 'resolved'] as const) {
        t.app.jobs.notifier.enqueue({
          id: `n-${status}`, source: 'trigger', status, teamId: team.id, environmentId: environment.id,
          recipient: { id: recipient.id, type: 'webhook', target: 'ui hook' },
          alert: { id: 'trig1', name: 'Slow checkout', description: '', dedupKey: 'trig1' },
          result: { summary: 'p99 above 500' }, timestamp: new Date(t.clock.ms).toISOString(),
        });
        await t.app.jobs.notifier.idle!();
      }
      const res = await t.app.inject({ method: 'GET', url: '/1/deliveries', headers: t.config });
      expect(res.statusCode, res.body).toBe(200);
      const list = json(res);
      expect(list.map((d: { status: string; state: string }) => [d.status, d.state])).toEqual([['resolved', 'delivered'], ['triggered', 'delivered']]);
      expect(list[0]).toMatchObject({ source: 'trigger', alert: { id: 'trig1', name: 'Slow checkout' }, recipient: { id: recipient.id, type: 'webhook' }, attempt_count: 1 });
      expect(list[0].attempts[0].http_status).toBe(200);
      expect(res.body).not.toContain('very-secret-value');
      expect(res.body).not.toContain(receiver.url);
      expect(json(await t.app.inject({ method: 'GET', url: '/1/deliveries?limit=1', headers: t.config }))).toHaveLength(1);
      expect(json(await t.app.inject({ method: 'GET', url: '/1/deliveries?state=failed', headers: t.config }))).toEqual([]);
      expect((await t.app.inject({ method: 'GET', url: '/1/deliveries?state=lost', headers: t.config })).statusCode).toBe(422);
      expect((await t.app.inject({ method: 'GET', url: '/1/deliveries?limit=0', headers: t.config })).statusCode).toBe(422);
      const staging = await secondEnvironment(t, 'Delivery Staging');
      expect(json(await t.app.inject({ method: 'GET', url: '/1/deliveries', headers: staging.headers }))).toEqual([]);
      const { team: tm, environment: env } = await initialTenancy(t);
      const noRecipients = await addKey(t, tm, env, { permissions: { manage_triggers: true } });
      expect((await t.app.inject({ method: 'GET', url: '/1/deliveries', headers: noRecipients.headers })).statusCode).toBe(403);
    } finally {
      await receiver.stop();
    }
  });
});

describe('/openapi.json', () => {
  it('documents the extension endpoints with their error responses', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    for (const [path, method] of [
      ['/1/bubbleup/{datasetSlug}', 'post'],
      ['/1/traces/{datasetSlug}/{traceId}', 'get'],
      ['/1/raw_events/{datasetSlug}', 'post'],
      ['/1/deliveries', 'get'],
      ['/1/ui/session', 'post'],
      ['/1/ui/session', 'delete'],
    ]) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.description.length, path).toBeGreaterThan(20);
      expect(op.responses['200'] ?? op.responses['204'], path).toBeDefined();
      expect(op.responses['422'] ?? op.responses['401'], path).toBeDefined();
    }
    expect(doc.paths['/1/bubbleup/{datasetSlug}'].post.responses['200'].content['application/json'].schema.properties.columns).toBeDefined();
  });
});
