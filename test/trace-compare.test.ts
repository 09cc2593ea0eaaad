// GET /1/traces/{dataset|__all__}/{traceId}/typical (the web UI's "Compare with a typical trace")
// on DuckDB and ClickHouse: the same traces sent to an app on each engine, the same answers. Five
// traces whose root is frontend "GET /checkout" (one root with an empty parent id), one more 14
// hours earlier (outside the window), one root of another service with the same name and one of
// another name: the typical trace is the one nearest the median (the lower middle value), never
// the trace asked about; 404 when there is no other. On DuckDB also: bad input, another
// environment, no key, the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { secondEnvironment } from './tenancy-fixtures.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

function traces(nowMs: number) {
  const at = (agoMs: number) => new Date(nowMs - agoMs).toISOString();
  const events: { time: string; data: Record<string, unknown> }[] = [];
  const trace = (id: string, agoMs: number, root: { service: string; name: string; ms: number; parent?: string }) => {
    events.push({ time: at(agoMs), data: { 'trace.trace_id': id, 'trace.span_id': `${id}-r`, ...(root.parent !== undefined ? { 'trace.parent_id': root.parent } : {}), 'service.name': root.service, name: root.name, duration_ms: root.ms } });
    events.push({ time: at(agoMs - 5), data: { 'trace.trace_id': id, 'trace.span_id': `${id}-c`, 'trace.parent_id': `${id}-r`, 'service.name': 'cart', name: 'cart.load', duration_ms: root.ms / 2 } });
  };
  const checkout = { service: 'frontend', name: 'GET /checkout' };
  trace('c100', 60_000, { ...checkout, ms: 100 });
  trace('c120', 50_000, { ...checkout, ms: 120, parent: '' });
  trace('c150', 40_000, { ...checkout, ms: 150 });
  trace('c400', 30_000, { ...checkout, ms: 400 });
  trace('c2000', 20_000, { ...checkout, ms: 2000 });
  trace('old', 14 * 3600_000, { ...checkout, ms: 149 });
  trace('api', 10_000, { service: 'api', name: 'GET /checkout', ms: 150 });
  trace('other', 10_000, { service: 'frontend', name: 'GET /other', ms: 150 });
  return events;
}

async function typical(t: TestApp, dataset: string, traceId: string) {
  const res = await t.app.inject({ method: 'GET', url: `/1/traces/${dataset}/${traceId}/typical`, headers: t.config });
  return { status: res.statusCode, body: json(res) };
}

function scenario(name: string, make: () => Promise<TestApp>, after: () => Promise<void> = async () => {}, edges = false) {
  describe(`the typical trace on ${name}`, { timeout: 60_000 }, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await make();
      await ingest(t, 'shop', traces(t.clock.ms));
      await ingest(t, 'else', [{ time: new Date(t.clock.ms).toISOString(), data: { 'trace.trace_id': 'c2000', 'trace.span_id': 'x', 'trace.parent_id': 'c2000-c', name: 'SELECT', 'service.name': 'db', duration_ms: 3 } }]);
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await after();
    });

    it('is the trace whose root is nearest the median of the same service and name, never the one asked', async () => {
      const slow = await typical(t, 'shop', 'c2000');
      expect(slow.status, JSON.stringify(slow.body)).toBe(200);
      expect(slow.body).toMatchObject({ trace_id: 'c150', duration_ms: 150, median_ms: 150, roots: 5, root: { dataset: 'shop', service_name: 'frontend', name: 'GET /checkout', duration_ms: 2000 } });
      // The median itself asked: the next nearest (120 by 30 ms, not the old 149 outside the window).
      expect((await typical(t, 'shop', 'c150')).body).toMatchObject({ trace_id: 'c120', duration_ms: 120 });
      // Across datasets: the root is found in shop, the candidates are shop's.
      expect((await typical(t, '__all__', 'c2000')).body).toMatchObject({ trace_id: 'c150', root: { dataset: 'shop' } });
    });

    it('answers 404 when there is no other such trace or no such trace', async () => {
      for (const id of ['other', 'api', 'nope']) {
        const r = await typical(t, 'shop', id);
        expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(404);
      }
    });

    it.skipIf(!edges)('refuses bad input, other environments and no key; is in the OpenAPI document', async () => {
      const get = (url: string, headers: Record<string, string> = t.config) => t.app.inject({ method: 'GET', url, headers });
      expect((await get('/1/traces/shop/c2000/typical?start_time=abc')).statusCode).toBe(422);
      expect((await get('/1/traces/shop/c2000/typical?start_time=200&end_time=100')).statusCode).toBe(422);
      expect((await get('/1/traces/nope/c2000/typical')).statusCode).toBe(404);
      // A window that leaves the trace out: not found.
      expect((await get(`/1/traces/shop/c2000/typical?start_time=1&end_time=1000`)).statusCode).toBe(404);
      const staging = await secondEnvironment(t, 'Typical Staging');
      expect((await get('/1/traces/shop/c2000/typical', staging.headers)).statusCode).toBe(404);
      expect((await get('/1/traces/__all__/c2000/typical', staging.headers)).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'GET', url: '/1/traces/shop/c2000/typical' })).statusCode).toBe(401);
      const op = json(await t.app.inject({ method: 'GET', url: '/openapi.json' })).paths['/1/traces/{datasetSlug}/{traceId}/typical']?.get;
      expect(op?.responses['200']).toBeDefined();
    });
  });
}

scenario('DuckDB', () => makeApp(), async () => {}, true);
let cluster: ClickHouseCluster | undefined;
if (clickhouseBinary) {
  scenario(
    'ClickHouse',
    async () => {
      cluster = await startClickHouse(1);
      return makeApp({ eventStore: cluster.setting() });
    },
    async () => {
      await cluster?.stop();
    },
  );
} else warnClickHouseSkipped('the typical trace on ClickHouse');
