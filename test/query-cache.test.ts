// The bucket-result cache (src/query/bucket-cache.ts): answers through a cache that keeps bucket
// states equal a cold run's, over random specs, repeated runs, late events, a moving clock and
// changed calculated fields, on DuckDB and ClickHouse; invalidation by a late event through
// another node (PostgreSQL + ClickHouse); retention and a deleted dataset; /metrics.
// Two apps take the same events: one with the cache (the default), one with it off.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped, type TestSchema } from './postgres.js';
import { ingest, runQuery } from './query-helpers.js';
import { rng } from './query-reference.js';
import { openPostgresStore } from '../src/stores/config/store.js';

const SERVICES = ['api', 'web', 'db', 'cache', 'auth'];
const ROUTES = ['/a', '/b', '/c', 'ü/ß', '/e'];
const OPS_WITH_COLUMN = ['SUM', 'AVG', 'MIN', 'MAX', 'COUNT_DISTINCT', 'P50', 'P90', 'P99', 'P001', 'HEATMAP', 'RATE_AVG', 'RATE_SUM', 'RATE_MAX'];

type Wire = { time: string; samplerate: number; data: Record<string, unknown> };

function events(r: () => number, count: number, fromMs: number, toMs: number): Wire[] {
  return Array.from({ length: count }, () => {
    const data: Record<string, unknown> = {
      service: SERVICES[Math.floor(r() * SERVICES.length)],
      route: ROUTES[Math.floor(r() * ROUTES.length)],
      status: [200, 200, 404, 500][Math.floor(r() * 4)],
      ok: r() < 0.7,
      user: `u${Math.floor(r() * 40)}`,
      bytes: Math.floor(r() * 1000),
    };
    if (r() < 0.9) data.duration_ms = Math.round(r() * 30_000) / 100;
    return { time: new Date(fromMs + Math.floor(r() * (toMs - fromMs))).toISOString(), samplerate: r() < 0.8 ? 1 : [2, 10][Math.floor(r() * 2)], data };
  });
}

function randomSpec(r: () => number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const calculations: Record<string, unknown>[] = [];
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (roll < 0.2) calculations.push({ op: 'COUNT' });
    else if (roll < 0.27) calculations.push({ op: 'CONCURRENCY' });
    else calculations.push({ op: pick(OPS_WITH_COLUMN), column: pick(['duration_ms', 'bytes', 'duration_ms', 'doubled']) });
  }
  const spec: Record<string, unknown> = { calculations, time_range: pick([3600, 5400, 7200]) };
  const heatmaps = calculations.filter((c) => c.op === 'HEATMAP');
  if (heatmaps.length > 1) spec.calculations = calculations.filter((c) => c.op !== 'HEATMAP').concat(heatmaps[0]);
  if (r() < 0.7) spec.breakdowns = [pick(['service', 'route', 'status', 'ok'])].concat(r() < 0.3 ? ['ok'] : []).filter((v, i, a) => a.indexOf(v) === i);
  if (r() < 0.4) spec.filters = [pick([{ column: 'status', op: '=', value: 200 }, { column: 'route', op: 'starts-with', value: '/' }, { column: 'duration_ms', op: '>', value: 50 }, { column: 'ok', op: '=', value: true }])];
  if (r() < 0.4) spec.granularity = pick([60, 120, 300, 600]);
  if (r() < 0.3) spec.limit = pick([1, 2, 3, 100]);
  if (r() < 0.2) {
    spec.havings = [{ calculate_op: 'COUNT', op: '>', value: 5 }];
    if (!calculations.some((c) => c.op === 'COUNT')) spec.calculations = [...(spec.calculations as object[]), { op: 'COUNT' }];
  }
  if (r() < 0.2 && spec.breakdowns) spec.orders = [{ column: (spec.breakdowns as string[])[0], order: pick(['ascending', 'descending']) }];
  return spec;
}

/** Equal, numbers within a relative 1e-9 (sums added in another order), HEATMAP cells compared as numbers. */
function expectSame(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), `${path}: ${actual} against ${expected}`).toBeLessThanOrEqual(Math.max(1e-9, Math.abs(expected) * 1e-9));
  } else if (typeof expected === 'string' && typeof actual === 'string' && expected.startsWith('[{')) {
    expectSame(JSON.parse(actual), JSON.parse(expected), path);
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, `${path}: length`).toBe(expected.length);
    expected.forEach((e, i) => expectSame((actual as unknown[])[i], e, `${path}[${i}]`));
  } else if (expected && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), `${path}: keys`).toEqual(Object.keys(expected).sort());
    for (const k of Object.keys(expected)) expectSame((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k], `${path}.${k}`);
  } else expect(actual, path).toEqual(expected);
}

async function metric(t: TestApp, name: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line ? Number(line.split(' ').pop()) : 0;
}

const RESULT = { disable_series: false, disable_total_by_aggregate: false, disable_other_by_aggregate: false };
const CALCULATED = { alias: 'doubled', expression: 'MUL($duration_ms, 2)' };

function property(setting: () => string | undefined, size: { specs: number; rounds: number }) {
  let cached: TestApp;
  let cold: TestApp;
  const r = rng(7);
  beforeAll(async () => {
    // (Answers, not time, are compared: a random spec on a busy machine may take ClickHouse 18.16 past the default 10 s.)
    const settings = { queryResultRateLimit: null, queryTimeoutMs: 60_000 };
    cached = await makeApp({ settings, eventStore: setting() });
    cold = await makeApp({ settings: { ...settings, queryCache: { enabled: false, maxBytes: 1, graceSeconds: 0, maxValues: 0 } }, eventStore: setting() });
    cold.clock.ms = cached.clock.ms;
    const now = cached.clock.ms;
    const base = events(r, 4000, now - 3 * 3600_000, now - 60_000);
    for (const t of [cached, cold]) {
      await ingest(t, 'cache', base);
      const res = await t.app.inject({ method: 'POST', url: '/1/derived_columns/cache', headers: t.config, payload: CALCULATED });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => {
    await cached?.close();
    await cold?.close();
  });

  it('random specs answer as a cold run, again after late events, a moving clock and an edited calculated field', async () => {
    const specs = Array.from({ length: size.specs }, () => randomSpec(r));
    const both = async (spec: Record<string, unknown>, what: string) => {
      const a = await runQuery(cached, 'cache', spec, RESULT);
      const b = await runQuery(cold, 'cache', spec, RESULT);
      expectSame(a.data, b.data, `${what} ${JSON.stringify(spec)}`);
    };
    for (const [i, spec] of specs.entries()) await both(spec, `first run ${i}`);
    const keptBefore = await metric(cached, 'waggle_query_cache_buckets_read_total{source="kept"}');
    for (let round = 0; round < size.rounds; round++) {
      // Late events in random old buckets, a few recent ones, and the clock a minute or two on.
      const now = cached.clock.ms;
      const late = events(r, 1 + Math.floor(r() * 20), now - 3 * 3600_000, now - 20 * 60_000).concat(events(r, 5, now - 60_000, now));
      for (const t of [cached, cold]) await ingest(t, 'cache', late);
      if (round === 1) {
        for (const t of [cached, cold]) {
          const list = await t.app.inject({ method: 'GET', url: '/1/derived_columns/cache', headers: t.config });
          const id = list.json().find((c: { alias: string }) => c.alias === 'doubled').id;
          const res = await t.app.inject({ method: 'PUT', url: `/1/derived_columns/cache/${id}`, headers: t.config, payload: { ...CALCULATED, expression: 'MUL($duration_ms, 3)' } });
          expect(res.statusCode, res.body).toBe(200);
        }
      }
      const step = 60_000 * Math.floor(1 + r() * 2);
      cached.clock.ms += step;
      cold.clock.ms += step;
      for (const [i, spec] of specs.entries()) await both(spec, `round ${round} spec ${i}`);
    }
    expect(await metric(cached, 'waggle_query_cache_buckets_read_total{source="kept"}')).toBeGreaterThan(keptBefore);
    expect(await metric(cached, 'waggle_query_cache_invalidated_buckets_total')).toBeGreaterThan(0);
    expect(await metric(cached, 'waggle_query_cache_bytes')).toBeGreaterThan(0);
    expect(await metric(cold, 'waggle_query_cache_bytes')).toBe(0);
  });
}

describe('the bucket-result cache answers as a cold run: DuckDB', { timeout: 300_000 }, () => property(() => undefined, { specs: 16, rounds: 3 }));

describe.skipIf(!clickhouseBinary)('the bucket-result cache answers as a cold run: ClickHouse', { timeout: 300_000 }, () => {
  let cluster: ClickHouseCluster | undefined;
  beforeAll(async () => {
    cluster = await startClickHouse(1);
  }, 60_000);
  afterAll(() => cluster?.stop());
  property(() => cluster!.setting(), { specs: 8, rounds: 3 });
});
if (!clickhouseBinary) warnClickHouseSkipped('the bucket-result cache on ClickHouse (test/query-cache.test.ts)');

describe('the bucket-result cache: what drops kept buckets', { timeout: 120_000 }, () => {
  let t: TestApp;
  const SPEC = { calculations: [{ op: 'COUNT' }], time_range: 7200, granularity: 600 };
  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
  });
  afterAll(() => t?.close());

  it('a late event is counted at once; a deleted dataset keeps nothing; the memory bound holds', async () => {
    const now = t.clock.ms;
    await ingest(t, 'drops', events(rng(3), 500, now - 7000_000, now - 600_000));
    const first = await runQuery(t, 'drops', SPEC, RESULT);
    const again = await runQuery(t, 'drops', SPEC, RESULT);
    expect(again.data).toEqual(first.data);
    expect(await metric(t, 'waggle_query_cache_buckets')).toBeGreaterThan(0);
    // One event an hour and a half ago: its bucket was kept.
    await ingest(t, 'drops', [{ time: new Date(now - 5400_000).toISOString(), samplerate: 1, data: { service: 'late' } }]);
    const after = await runQuery(t, 'drops', SPEC, RESULT);
    expect(after.data.total_by_aggregate.data.COUNT).toBe(first.data.total_by_aggregate.data.COUNT + 1);
    const unprotect = await t.app.inject({ method: 'PUT', url: '/1/datasets/drops', headers: t.config, payload: { settings: { delete_protected: false } } });
    expect(unprotect.statusCode, unprotect.body).toBe(200);
    const del = await t.app.inject({ method: 'DELETE', url: '/1/datasets/drops', headers: t.config });
    expect(del.statusCode, del.body).toBeLessThan(300);
    expect(await metric(t, 'waggle_query_cache_buckets')).toBe(0);
    await ingest(t, 'drops', [{ time: new Date(now - 5400_000).toISOString(), samplerate: 1, data: { service: 'new' } }]);
    const fresh = await runQuery(t, 'drops', SPEC, RESULT);
    expect(fresh.data.total_by_aggregate.data.COUNT).toBe(1);
  });
});

describe('the bucket-result cache under small bounds', { timeout: 120_000 }, () => {
  it('keeps at most WAGGLE_QUERY_CACHE_MB, evicting the least recently used query', async () => {
    const t = await makeApp({ settings: { queryResultRateLimit: null, queryCache: { enabled: true, maxBytes: 300_000, graceSeconds: 60, maxValues: 1_000_000 } } });
    try {
      const now = t.clock.ms;
      await ingest(t, 'small', events(rng(5), 2000, now - 7000_000, now - 600_000));
      for (const service of SERVICES) await runQuery(t, 'small', { calculations: [{ op: 'COUNT' }], breakdowns: ['route'], filters: [{ column: 'service', op: '=', value: service }], time_range: 7200, granularity: 600 });
      expect(await metric(t, 'waggle_query_cache_bytes')).toBeGreaterThan(0);
      expect(await metric(t, 'waggle_query_cache_bytes')).toBeLessThanOrEqual(300_000);
      expect(await metric(t, 'waggle_query_cache_evicted_total')).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });

  it('a query past WAGGLE_QUERY_CACHE_MAX_VALUES (per-event values, or groups × buckets) runs uncached with the same answers', async () => {
    const t = await makeApp({ settings: { queryResultRateLimit: null, queryCache: { enabled: true, maxBytes: 128 * 1024 * 1024, graceSeconds: 60, maxValues: 1500 } } });
    try {
      const now = t.clock.ms;
      await ingest(t, 'small', events(rng(5), 2000, now - 7000_000, now - 600_000));
      const p99 = { calculations: [{ op: 'P99', column: 'duration_ms' }], time_range: 7200, granularity: 3600 };
      const a = await runQuery(t, 'small', p99, RESULT);
      expect((await runQuery(t, 'small', p99, RESULT)).data).toEqual(a.data);
      expect(await metric(t, 'waggle_query_cache_uncached_total')).toBeGreaterThanOrEqual(1);
      // Many groups × buckets (40 users): the engine ranks them, uncached.
      const users = { calculations: [{ op: 'COUNT' }], breakdowns: ['user'], time_range: 7200, granularity: 60, limit: 5 };
      const before = await metric(t, 'waggle_query_cache_uncached_total');
      const c = await runQuery(t, 'small', users, RESULT);
      expect(c.data.results).toHaveLength(5);
      expect((await runQuery(t, 'small', users, RESULT)).data).toEqual(c.data);
      expect(await metric(t, 'waggle_query_cache_uncached_total')).toBe(before + 2);
    } finally {
      await t.close();
    }
  });
});

describe('the bucket-result cache keeps only states worth merging', { timeout: 120_000 }, () => {
  it('a breakdown of many groups over fine buckets of few events (a state row per event or so) runs uncached; one of few groups stays cached', async () => {
    const t = await makeApp({ settings: { queryResultRateLimit: null } });
    try {
      const now = t.clock.ms;
      const r = rng(11);
      // 16,000 events over 2 hours, each of 800 request ids: 5-second buckets hold about 11 events of 11 ids.
      const wire = events(r, 16_000, now - 7000_000, now - 600_000).map((e) => ({ ...e, data: { ...e.data, request: `r${Math.floor(r() * 800)}` } }));
      for (let i = 0; i < wire.length; i += 4000) await ingest(t, 'many', wire.slice(i, i + 4000));
      const many = { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'bytes' }], breakdowns: ['request'], time_range: 7200, granularity: 60 };
      const before = await metric(t, 'waggle_query_cache_uncached_total');
      const a = await runQuery(t, 'many', many, RESULT);
      expect(a.data.results.length).toBeGreaterThan(100);
      expect((await runQuery(t, 'many', many, RESULT)).data).toEqual(a.data);
      expect(await metric(t, 'waggle_query_cache_uncached_total')).toBe(before + 2);
      expect(await metric(t, 'waggle_query_cache_buckets')).toBe(0);
      // The same events by service (5 groups): kept, and the repeat reads only the recent buckets.
      const few = { ...many, breakdowns: ['service'] };
      const c = await runQuery(t, 'many', few, RESULT);
      const hits = await metric(t, 'waggle_query_cache_buckets_read_total{source="kept"}');
      expect((await runQuery(t, 'many', few, RESULT)).data).toEqual(c.data);
      expect(await metric(t, 'waggle_query_cache_buckets_read_total{source="kept"}')).toBeGreaterThan(hits);
      expect(await metric(t, 'waggle_query_cache_uncached_total')).toBe(before + 2);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!postgresUrl || !clickhouseBinary)('the bucket-result cache on two nodes (PostgreSQL and ClickHouse)', { timeout: 180_000 }, () => {
  let schema: TestSchema;
  let cluster: ClickHouseCluster;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    schema = await createTestSchema(postgresUrl!, 'qcache');
    cluster = await startClickHouse(1);
    const eventStore = cluster.setting();
    const settings = { queryResultRateLimit: null };
    a = await makeApp({ store: openPostgresStore(schema.url, schema.name), eventStore, settings });
    b = await makeApp({ store: openPostgresStore(schema.url, schema.name), eventStore, settings, reopen: { dataDir: mkdtempSync(join(tmpdir(), 'waggle-test-')), init: a.init } });
    b.clock.ms = a.clock.ms;
  }, 90_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.stop();
    await schema?.drop();
  });

  it('a late event ingested through one node is in the next answer of the other', async () => {
    const now = a.clock.ms;
    await ingest(a, 'nodes', events(rng(9), 300, now - 7000_000, now - 600_000));
    const spec = { calculations: [{ op: 'COUNT' }, { op: 'P50', column: 'duration_ms' }], breakdowns: ['service'], time_range: 7200, granularity: 600 };
    const first = await runQuery(a, 'nodes', spec, RESULT);
    expect((await runQuery(a, 'nodes', spec, RESULT)).data).toEqual(first.data);
    expect(await metric(a, 'waggle_query_cache_buckets')).toBeGreaterThan(0);
    await ingest(b, 'nodes', [{ time: new Date(now - 5400_000).toISOString(), samplerate: 1, data: { service: 'late', duration_ms: 1 } }]);
    const after = await runQuery(a, 'nodes', spec, RESULT);
    expect(after.data.total_by_aggregate.data.COUNT).toBe(first.data.total_by_aggregate.data.COUNT + 1);
    expect(after.data.results.some((x: { data: Record<string, unknown> }) => x.data.service === 'late')).toBe(true);
    expect((await runQuery(b, 'nodes', spec, RESULT)).data).toEqual(after.data);
  });
});
if (!postgresUrl) warnPostgresSkipped('the bucket-result cache on two nodes (test/query-cache.test.ts)');
