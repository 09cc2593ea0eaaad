// Operating Waggle: the Prometheus metrics (GET /metrics, who may read them, the names and
// labels docs/operations.md lists, counts that follow what the server did) and the operator
// logs (one line per request with route, status, latency, key id and dataset and never a
// secret; slow queries and commits at warn with their figures; background failures at error).
// In-process apps over real stores, a real webhook receiver, and `waggle serve` for the
// metrics' own port and WAGGLE_LOG_LEVEL.
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest, runQuery } from './query-helpers.js';
import { HttpReceiver } from './receivers.js';
import { call, initJson, killAll, removeTempDirs, serve, teamHeaders, tempDir } from './cli-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

/** Parses Prometheus text into `name{labels}` → value. */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+?)(\{.*\})? (\S+)$/.exec(line);
    if (m) out.set(m[1] + (m[2] ?? ''), Number(m[3]));
  }
  return out;
}

async function scrape(t: TestApp, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.body, values: parseMetrics(res.body) };
}

/** Waits until `fn` holds (background work: commits observed after the answer, deliveries). */
async function until(fn: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

describe('GET /metrics', () => {
  const receiver = new HttpReceiver();
  let t: TestApp;
  beforeAll(async () => {
    await receiver.start();
    t = await makeApp({ settings: { evaluationTickMs: 0, notifyRetryBaseMs: 5, notifyRetryMaxMs: 20 } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver.stop();
  });

  it('serves loopback clients without a token and refuses others', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
    const other = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3' });
    expect(other.statusCode).toBe(403);
    expect(other.body).toMatch(/loopback clients only; set WAGGLE_METRICS_TOKEN/);
    // A forwarded address does not make a remote client local.
    const forwarded = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(forwarded.statusCode).toBe(403);
  });

  it('names every documented family, with process metrics', async () => {
    const { text } = await scrape(t);
    for (const family of [
      'waggle_http_requests_total counter',
      'waggle_http_request_duration_seconds histogram',
      'waggle_ingest_events_total counter',
      'waggle_ingest_bytes_total counter',
      'waggle_ingest_rejected_events_total counter',
      'waggle_ingest_refused_requests_total counter',
      'waggle_ingest_commit_duration_seconds histogram',
      'waggle_ingest_queue_events gauge',
      'waggle_ingest_requests_in_flight gauge',
      'waggle_ingest_in_flight_bytes gauge',
      'waggle_ingest_threads_heap_bytes gauge',
      'waggle_ingest_threads_heap_limit_bytes gauge',
      'waggle_query_duration_seconds histogram',
      'waggle_evaluation_duration_seconds histogram',
      'waggle_notifications_total counter',
      'waggle_event_store_size_bytes gauge',
      'waggle_event_store_memory_bytes gauge',
      'waggle_event_store_memory_limit_bytes gauge',
      'waggle_event_store_memory_tag_bytes gauge',
      'waggle_event_store_spilled_bytes gauge',
      'waggle_http_open_connections gauge',
      'process_resident_memory_bytes gauge',
      'nodejs_heap_size_used_bytes gauge',
      'nodejs_eventloop_lag_seconds gauge',
      'process_open_fds gauge',
    ]) {
      expect(text).toContain(`# TYPE ${family}`);
    }
    const v = parseMetrics(text);
    expect(v.get('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(v.get('waggle_event_store_size_bytes')).toBeGreaterThan(0);
    expect(v.get('waggle_event_store_memory_limit_bytes')).toBeGreaterThan(0);
  });

  it('counts requests, ingested and rejected events, bytes, commits, queries, evaluations and notifications', async () => {
    const before = (await scrape(t)).values;
    const at = (m: Map<string, number>, k: string) => m.get(k) ?? 0;

    const body = JSON.stringify([
      { data: { endpoint: '/a', ms: 1 } },
      { data: { endpoint: '/b', ms: 2 } },
      { time: 'not a time', data: { endpoint: '/c' } },
    ]);
    const res = await t.app.inject({ method: 'POST', url: '/1/batch/metered', headers: { ...t.ingest, 'content-type': 'application/json' }, payload: body });
    expect(res.statusCode).toBe(200);
    expect(json(res).map((r: { status: number }) => r.status)).toEqual([202, 202, 400]);
    // A whole request refused (bad key).
    expect((await t.app.inject({ method: 'POST', url: '/1/batch/metered', headers: { 'x-honeycomb-team': 'nope' }, payload: [] })).statusCode).toBe(401);
    await runQuery(t, 'metered', { calculations: [{ op: 'COUNT' }], time_range: 3600 });

    // A trigger that fires to a webhook on a real receiver.
    const hook = await t.app.inject({
      method: 'POST',
      url: '/1/recipients',
      headers: t.config,
      payload: { type: 'webhook', details: { webhook_name: 'metrics hook', webhook_url: `${receiver.url}/hook` } },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    await ingest(t, 'metered', [{ time: new Date(t.clock.ms - 30_000).toISOString(), data: { endpoint: '/d' } }]);
    const trig = await t.app.inject({
      method: 'POST',
      url: '/1/triggers/metered',
      headers: t.config,
      payload: {
        name: 'any',
        query: { calculations: [{ op: 'COUNT' }], time_range: 240 },
        frequency: 60,
        threshold: { op: '>', value: 0 },
        recipients: [{ id: json(hook).id }],
      },
    });
    expect(trig.statusCode, trig.body).toBe(201);
    t.clock.advance(60);
    await t.app.jobs.scheduler.tick();
    await t.app.jobs.notifier.idle!({ timeoutMs: 10_000 });
    expect(receiver.at('/hook')).toHaveLength(1);

    let after = (await scrape(t)).values;
    await until(async () => {
      after = (await scrape(t)).values;
      return at(after, 'waggle_ingest_commit_duration_seconds_count') - at(before, 'waggle_ingest_commit_duration_seconds_count') >= 2;
    }, 'two commits observed');
    const delta = (k: string) => at(after, k) - at(before, k);
    expect(delta('waggle_http_requests_total{route="/1/batch/:datasetSlug",method="POST",status="200"}')).toBe(2);
    expect(delta('waggle_http_requests_total{route="/1/batch/:datasetSlug",method="POST",status="401"}')).toBe(1);
    expect(delta('waggle_http_request_duration_seconds_count{route="/1/batch/:datasetSlug",method="POST"}')).toBe(3);
    expect(delta('waggle_ingest_events_total')).toBe(3);
    expect(delta('waggle_ingest_rejected_events_total{reason="invalid_time"}')).toBe(1);
    expect(delta('waggle_ingest_refused_requests_total{reason="unauthorized"}')).toBe(1);
    expect(delta('waggle_ingest_bytes_total')).toBeGreaterThanOrEqual(Buffer.byteLength(body));
    expect(delta('waggle_query_duration_seconds_count{status="ok"}')).toBeGreaterThanOrEqual(1);
    expect(delta('waggle_evaluation_duration_seconds_count{job="triggers",status="ok"}')).toBe(1);
    expect(delta('waggle_notifications_total{recipient_type="webhook",outcome="delivered"}')).toBe(1);
    expect(at(after, 'waggle_ingest_queue_events')).toBe(0);
    // The event store's memory by its tags adds up to its total (one reading per scrape).
    const tags = [...after].filter(([k]) => k.startsWith('waggle_event_store_memory_tag_bytes{tag="'));
    expect(tags.reduce((sum, [, x]) => sum + x, 0)).toBe(at(after, 'waggle_event_store_memory_bytes'));
    // Every ingest request answered has given back its place and its bytes.
    expect(at(after, 'waggle_ingest_requests_in_flight')).toBe(0);
    expect(at(after, 'waggle_ingest_in_flight_bytes')).toBe(0);
  });

  it('with WAGGLE_METRICS_TOKEN, needs the token from anyone', async () => {
    const token = 'metrics-token-0123456789';
    const s = await makeApp({ settings: { metricsToken: token } });
    try {
      expect((await s.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(403);
      expect((await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0000000000' } })).statusCode).toBe(403);
      const ok = await s.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { authorization: `Bearer ${token}` } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('waggle_http_requests_total');
    } finally {
      await s.close();
    }
  });
});

/** Log lines of an app, as parsed JSON. */
function logSink() {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

describe('operator logs', () => {
  it('at warn, no request lines', async () => {
    const sink = logSink();
    const t = await makeApp({ logger: { level: 'warn', stream: sink.stream } });
    try {
      await ingest(t, 'quiet', [{ data: { a: 1 } }]);
      expect(sink.lines.filter((l) => l.msg === 'request')).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it('one info line per request: route, status, latency, key id and dataset, never the secret', async () => {
    const sink = logSink();
    const t = await makeApp({ logger: { level: 'info', stream: sink.stream } });
    try {
      await ingest(t, 'logged', [{ data: { a: 1 } }]);
      const miss = await t.app.inject({ method: 'GET', url: '/1/datasets/nope', headers: t.config });
      expect(miss.statusCode).toBe(404);
      const requests = sink.lines.filter((l) => l.msg === 'request');
      expect(requests).toHaveLength(2);
      const [post, get] = requests;
      expect(post).toMatchObject({ level: 30, method: 'POST', route: '/1/batch/:datasetSlug', path: '/1/batch/logged', status: 200, keyId: t.init.keys.ingest.slice(0, 32), dataset: 'logged' });
      expect(post.ms).toBeGreaterThan(0);
      expect(typeof post.reqId).toBe('string');
      expect(get).toMatchObject({ method: 'GET', route: '/1/datasets/:datasetSlug', status: 404, dataset: 'nope' });
      expect(get.keyId).toMatch(/^hcxlk_[a-z0-9]{26}$/);
      // Fastify's own two lines per request are off.
      expect(sink.lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toHaveLength(0);
      const all = JSON.stringify(sink.lines);
      expect(all).not.toContain(t.init.keys.configuration);
      expect(all).not.toContain(t.init.keys.ingest.slice(32));
    } finally {
      await t.close();
    }
  });

  it('slow queries and slow commits at warn with their figures; background failures at error with what failed', async () => {
    const sink = logSink();
    const t = await makeApp({ logger: { level: 'info', stream: sink.stream }, settings: { slowQueryMs: 0, slowCommitMs: 0, evaluationTickMs: 0 } });
    try {
      await ingest(t, 'slow', [{ data: { a: 1 } }, { data: { a: 2 } }]);
      await runQuery(t, 'slow', { calculations: [{ op: 'COUNT' }], time_range: 3600 });
      await until(async () => sink.lines.some((l) => l.msg === 'slow commit'), 'a slow commit line');
      const commit = sink.lines.find((l) => l.msg === 'slow commit')!;
      expect(commit).toMatchObject({ level: 40, events: 2, queued: expect.any(Number) });
      expect(commit.ms).toBeGreaterThanOrEqual(0);
      const query = sink.lines.find((l) => l.msg === 'slow query')!;
      expect(query).toMatchObject({ level: 40, failed: false, rows: expect.any(Number), timeoutMs: expect.any(Number) });
      expect(query.sql).toMatch(/SELECT/);

      t.app.jobs.scheduler.register({ name: 'nightly-report', run: async () => Promise.reject(new Error('report store unreachable')) });
      await t.app.jobs.scheduler.tick();
      const failed = sink.lines.find((l) => l.level === 50 && l.job === 'nightly-report')!;
      expect(failed.msg).toBe('evaluation failed');
      expect(failed.err.message).toBe('report store unreachable');
    } finally {
      await t.close();
    }
  });
});

describe('waggle serve: metrics on their own port, WAGGLE_LOG_LEVEL', { timeout: 120_000 }, () => {
  it('WAGGLE_METRICS_PORT moves /metrics off the API port; WAGGLE_LOG_LEVEL=debug adds the arrival of each request', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d], { env: { WAGGLE_METRICS_PORT: '0', WAGGLE_LOG_LEVEL: 'info' } });
    const line = await s.waitFor(/metrics at http:\/\//);
    const metricsUrl = /metrics at (http:\/\/[^"\s]+)/.exec(line)![1];
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(init.keys.configuration) })).status).toBe(200);
    expect((await call(s.url, '/metrics')).status).toBe(404);
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    const values = parseMetrics(await res.text());
    expect(values.get('waggle_http_requests_total{route="/1/auth",method="GET",status="200"}')).toBe(1);
    expect(values.get('waggle_http_open_connections')).toBeGreaterThanOrEqual(0);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    await s.waitFor(/"msg":"request"/);
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    // At debug, a line at each request's arrival too; the request line still comes once.
    const verbose = await serve(['--data-dir', d], { env: { WAGGLE_LOG_LEVEL: 'debug' } });
    expect((await call(verbose.url, '/1/auth', { headers: teamHeaders(init.keys.configuration) })).status).toBe(200);
    await verbose.waitFor(/"msg":"request"/);
    expect(await verbose.stop()).toEqual({ code: 0, signal: null });
    expect(verbose.stdout().match(/"route":"\/1\/auth"/g)).toHaveLength(1);
    expect(verbose.stdout()).toMatch(/"method":"GET","url":"\/1\/auth".*"msg":"incoming request"/);
  });
});
