// The whole app on ClickHouse (single node), through the HTTP interface: events sent to /1/batch
// land in ClickHouse's table for the dataset (partitioned by day, ordered by time); a trigger
// fires on them; RATE_* and calculated fields answer, hostile expressions cleanly; deleting the
// dataset drops its table; retention runs there. (SLOs, burn alerts and signals on ClickHouse:
// test/clickhouse-slo.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest, pollResult, runQuery, saveQuery } from './query-helpers.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { tableName } from '../src/stores/events/types.js';
import { MAX_EXPRESSION_DEPTH } from '../src/query/expr/index.js';

describe.skipIf(!clickhouseBinary)('the app on ClickHouse', { timeout: 60_000 }, () => {
  let cluster: ClickHouseCluster;
  let t: TestApp;
  beforeAll(async () => {
    cluster = await startClickHouse(1);
    t = await makeApp({ settings: { evaluationTickMs: 0, queryResultRateLimit: null }, eventStore: cluster.setting() });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  const sql = (query: string) => fetch(`http://127.0.0.1:${cluster.httpPorts[0]}/`, { method: 'POST', body: query }).then((r) => r.text());
  const tableExists = async (id: string) =>
    Number((await t.events.query(`SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = $1`, [tableName(id)]))[0].n) > 0;

  it('ingested events are rows of a MergeTree table partitioned by day and ordered by time', async () => {
    const now = Date.now();
    await ingest(t, 'shop', [
      { time: new Date(now - 60_000).toISOString(), data: { service: 'api', duration_ms: 12.5, ok: true } },
      { time: new Date(now - 30_000).toISOString(), samplerate: 4, data: { service: "o'brien \\ \u0000", status: 500 } },
    ]);
    const rows = await t.events.query(`SELECT count(*) AS n, sum(__samplerate) AS w FROM ${t.events.dialect.quoteIdent(tableName(await storeId('shop')))}`);
    expect(rows).toEqual([{ n: 2, w: 5 }]);
    const create = await sql(`SELECT engine_full FROM system.tables WHERE name = '${tableName(await storeId('shop'))}' FORMAT TSV`);
    expect(create).toMatch(/MergeTree PARTITION BY toYYYYMMDD\(toDateTime\(intDiv\(__time, 1000000\)\)\) ORDER BY __time/);
    const body = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'duration_ms' }], breakdowns: ['service'], time_range: 600 }, { disable_series: true });
    expect(body.data.results.map((r: { data: unknown }) => r.data)).toEqual([
      { service: "o'brien \\ \u0000", COUNT: 4 },
      { service: 'api', COUNT: 1, 'MAX(duration_ms)': 12.5 },
    ]);
  });

  it('a trigger is evaluated on ClickHouse and fires', async () => {
    const now = Date.now();
    await ingest(t, 'orders', Array.from({ length: 12 }, (_, i) => ({ time: new Date(now - 30_000 + i * 1000).toISOString(), data: { status: 500 } })));
    const recipient = json(await t.app.inject({ method: 'POST', url: '/1/recipients', headers: t.config, payload: { type: 'email', details: { email_address: 'oncall@example.com' } } }));
    const res = await t.app.inject({
      method: 'POST',
      url: '/1/triggers/orders',
      headers: t.config,
      payload: {
        name: 'errors',
        query: { calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '>=', value: 500 }], time_range: 240 },
        frequency: 60,
        threshold: { op: '>', value: 10 },
        recipients: [{ id: recipient.id }],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const trigger = json(res);
    await t.app.jobs.scheduler.tick();
    const sent = (t.app.jobs.notifier.sent ?? []).filter((n) => n.alert.id === trigger.id);
    expect(sent).toHaveLength(1);
    expect(json(await t.app.inject({ method: 'GET', url: `/1/triggers/orders/${trigger.id}`, headers: t.config })).triggered).toBe(true);
  });

  it('the web UI scans: a trace across datasets, the newest raw events and BubbleUp read from ClickHouse', async () => {
    const tid = 'trace-on-clickhouse';
    const at = (ms: number) => new Date(Date.now() - 120_000 + ms).toISOString();
    await ingest(t, 'frontend', [
      { time: at(0), data: { 'trace.trace_id': tid, 'trace.span_id': 'root', name: 'GET /cart', 'service.name': 'frontend', duration_ms: 120, cached: false } },
      { time: at(10), data: { 'trace.trace_id': tid, 'trace.span_id': 'api', 'trace.parent_id': 'root', name: 'cart.load', 'service.name': 'cart', duration_ms: 80, cached: true, error: 0 } },
    ]);
    await ingest(t, 'database', [{ time: at(20), data: { 'trace.trace_id': tid, 'trace.span_id': 'db', 'trace.parent_id': 'api', name: 'SELECT', 'service.name': 'postgres', duration_ms: 55.5, error: true } }]);
    const trace = json(await t.app.inject({ method: 'GET', url: `/1/traces/__all__/${tid}`, headers: t.config }));
    expect(trace.spans.map((x: { span_id: string; dataset: string; duration_ms: number }) => [x.span_id, x.dataset, x.duration_ms])).toEqual([
      ['root', 'frontend', 120],
      ['api', 'frontend', 80],
      ['db', 'database', 55.5],
    ]);
    const raw = await t.app.inject({
      method: 'POST',
      url: '/1/raw_events/frontend',
      headers: { ...t.config, 'content-type': 'application/json' },
      payload: { query: { time_range: 600, filters: [{ column: 'cached', op: '=', value: true }] }, limit: 5 },
    });
    expect(raw.statusCode, raw.body).toBe(200);
    expect(json(raw).events.map((e: { data: Record<string, unknown> }) => e.data)).toEqual([
      expect.objectContaining({ 'trace.span_id': 'api', cached: true, duration_ms: 80 }),
    ]);
    const bubble = await t.app.inject({
      method: 'POST',
      url: '/1/bubbleup/frontend',
      headers: { ...t.config, 'content-type': 'application/json' },
      payload: { query: { time_range: 600 }, selection: { start_time: Math.floor(Date.now() / 1000) - 600, end_time: Math.floor(Date.now() / 1000) } },
    });
    expect(bubble.statusCode, bubble.body).toBe(200);
    expect(json(bubble).selection.events).toBe(2);
  });

  it('the service map of those spans is computed on ClickHouse', async () => {
    const create = await t.app.inject({ method: 'POST', url: '/1/maps/dependencies/requests', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{}' });
    expect([200, 201], create.body).toContain(create.statusCode);
    const id = json(create).request_id;
    let body: { status: string; dependencies: { parent_node: { name: string }; child_node: { name: string }; call_count: number; error_count: number }[] };
    do {
      body = json(await t.app.inject({ method: 'GET', url: `/1/maps/dependencies/requests/${id}`, headers: t.config }));
    } while (body.status === 'pending' && (await new Promise((r) => setTimeout(r, 10)), true));
    expect(body.status).toBe('ready');
    expect(body.dependencies.map((e) => [e.parent_node.name, e.child_node.name, e.call_count, e.error_count])).toEqual([
      ['cart', 'postgres', 1, 1],
      ['frontend', 'cart', 1, 0],
    ]);
  });

  it('a trace past the old 10,000-span cap reads whole from ClickHouse', async () => {
    const tid = 'big-trace-on-clickhouse';
    const t0 = Date.now() - 300_000;
    const spans = Array.from({ length: 12_000 }, (_, i) => ({
      time: new Date(t0 + i).toISOString(),
      data: { 'trace.trace_id': tid, 'trace.span_id': `s${i}`, ...(i > 0 ? { 'trace.parent_id': `s${Math.floor((i - 1) / 4)}` } : {}), name: `op${i % 7}`, 'service.name': i % 2 ? 'api' : 'db', duration_ms: 1 },
    }));
    await ingest(t, 'big', spans);
    const trace = json(await t.app.inject({ method: 'GET', url: `/1/traces/big/${tid}`, headers: t.config }));
    expect(trace.spans).toHaveLength(12_000);
    expect(trace.truncated ?? false).toBe(false);
    expect(trace.spans[11_999].span_id).toBe('s11999');
  });

  it('RATE_* and calculated fields run on ClickHouse; hostile expressions answer cleanly and the server stays up', async () => {
    const result = async (spec: Record<string, unknown>) => {
      const id = await saveQuery(t, 'shop', { time_range: 600, ...spec });
      const res = await t.app.inject({ method: 'POST', url: '/1/query_results/shop', headers: t.config, payload: { query_id: id } });
      return pollResult(t, String(res.headers.location));
    };
    expect((await result({ calculations: [{ op: 'RATE_AVG', column: 'duration_ms' }] })).error).toBeUndefined();
    // Text that would break out of a string literal comes back as it was written.
    const injected = await result({
      calculated_fields: [{ name: 'x', expression: 'CONCAT("\'; DROP TABLE t; --\\\\", $service)' }],
      breakdowns: ['x'],
      filters: [{ column: 'service', op: '=', value: 'api' }],
    });
    expect(injected.data.results.map((r: { data: { x: string } }) => r.data.x)).toEqual(["'; DROP TABLE t; --\\api"]);
    // Nested to the language's limit: ClickHouse answers, or refuses with the documented error.
    let deep = '$duration_ms';
    for (let d = 1; d < MAX_EXPRESSION_DEPTH; d++) deep = d % 2 ? `IF(true, ${deep})` : `SUM(${deep}, 1)`;
    const nested = await result({ calculated_fields: [{ name: 'deep', expression: deep }], calculations: [{ op: 'MAX', column: 'deep' }] });
    if (nested.error !== undefined) expect(nested.error).toBe('the query failed');
    expect((await result({ calculations: [{ op: 'COUNT' }] })).data.results[0].data.COUNT).toBeGreaterThan(0);
  });

  it('deleting a dataset drops its table', async () => {
    const id = await storeId('orders');
    expect(await tableExists(id)).toBe(true);
    await t.app.inject({ method: 'PUT', url: '/1/datasets/orders', headers: t.config, payload: { settings: { delete_protected: false } } });
    const res = await t.app.inject({ method: 'DELETE', url: '/1/datasets/orders', headers: t.config });
    expect(res.statusCode, res.body).toBeLessThan(300);
    await expect.poll(() => tableExists(id), { timeout: 10_000 }).toBe(false);
  });

  /** The dataset's id as the event store names it (hcxds_…). */
  async function storeId(slug: string): Promise<string> {
    const [team] = await t.store.listTeams();
    const env = await t.store.getEnvironmentBySlug(team.id, t.init.environment.slug);
    const ds = env && (await t.store.getDataset(env.id, slug));
    if (!ds) throw new Error(`no dataset ${slug}`);
    return ds.id;
  }
});
if (!clickhouseBinary) warnClickHouseSkipped('the app-on-ClickHouse tests');
