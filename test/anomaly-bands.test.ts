// Anomaly bands of any query result (GET /1/query_results/{ds}/{id}/bands, src/domain/anomaly-bands.ts)
// through the HTTP API on DuckDB and on a single ClickHouse node: a week of planted daily history
// (the same hour each day, a little noise), now the same traffic plus a burst in one bucket; the
// band covers the normal points and the burst is marked. Bad options, unknown results. Unit tests
// of the shared maths (src/domain/signals.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest, runQuery } from './query-helpers.js';
import { meanAndStddev, outsideBand, seasonalBand } from '../src/domain/signals.js';
import { bandOptions, computeBands } from '../src/domain/anomaly-bands.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const DAY = 86_400;
const iso = (s: number) => new Date(s * 1000).toISOString();

describe('the band maths (shared with signals)', () => {
  it('mean and population stddev, two passes', () => {
    expect(meanAndStddev([])).toBeNull();
    expect(meanAndStddev([0.25, 0.25, 0.25])).toEqual({ mean: 0.25, stddev: 0 });
    expect(meanAndStddev([2, 4, 4, 4, 5, 5, 7, 9])).toEqual({ mean: 5, stddev: 2 });
  });
  it('mean ± k·stddev, a relative minimum width, not below 0 for non-negative history', () => {
    expect(seasonalBand([5], 'medium')).toBeNull();
    expect(seasonalBand([2, 4, 4, 4, 5, 5, 7, 9], 'medium')).toEqual({ expected: 5, lower: 0, upper: 11 });
    expect(seasonalBand([2, 4, 4, 4, 5, 5, 7, 9], 'high')).toEqual({ expected: 5, lower: 1, upper: 9 });
    expect(seasonalBand([100, 100], 'medium')).toEqual({ expected: 100, lower: 98, upper: 102 });
    expect(seasonalBand([-10, -10], 'low')).toEqual({ expected: -10, lower: -10.5, upper: -9.5 });
    expect(outsideBand(103, { expected: 100, lower: 98, upper: 102 })).toBe(true);
    expect(outsideBand(97, { expected: 100, lower: 98, upper: 102 })).toBe(true);
    expect(outsideBand(100, { expected: 100, lower: 98, upper: 102 })).toBe(false);
  });
  it('buckets a period back line up; a missing COUNT is 0, a missing AVG no value', () => {
    const t0 = 1_700_000_400; // a multiple of 600
    const row = (t: number, data: Record<string, number>) => ({ time: iso(t).replace('.000Z', 'Z'), data });
    const r = {
      query: { id: 'q', calculations: [{ op: 'COUNT' as const }, { op: 'AVG' as const, column: 'd' }], granularity: 600 },
      start: t0,
      end: t0 + 1200,
      limit: 1000,
      data: { results: [{ data: { COUNT: 9 } }], series: [row(t0, { COUNT: 4, 'AVG(d)': 2 }), row(t0 + 600, { COUNT: 5, 'AVG(d)': 3 })] },
    };
    const past = [
      { results: [], series: [row(t0 - DAY, { COUNT: 4, 'AVG(d)': 2 })] },
      { results: [], series: [row(t0 - 2 * DAY, { COUNT: 4, 'AVG(d)': 2 })] },
    ];
    const a = computeBands(r, past, { seasonality: 'day', periods: 2, sensitivity: 'medium' });
    const [count, avg] = a.series;
    expect(count.points.map((p) => [p.value, p.expected, p.outside])).toEqual([[4, 4, false], [5, 0, true]]);
    expect(avg.points.map((p) => [p.value, p.expected, p.outside])).toEqual([[2, 2, false], [3, null, false]]);
    expect(count.outside).toBe(1);
  });
  it('options: defaults by seasonality, bad values named', () => {
    expect(bandOptions({})).toEqual({ seasonality: 'day', periods: 7, sensitivity: 'medium' });
    expect(bandOptions({ seasonality: 'week', sensitivity: 'low' })).toEqual({ seasonality: 'week', periods: 4, sensitivity: 'low' });
    expect(() => bandOptions({ seasonality: 'toString' })).toThrow();
    expect(() => bandOptions({ periods: '1' })).toThrow();
  });
});

/** Per minute of the last hour one /a event (and one /b every 5 minutes), the same on each of the last 7 days with one extra /a event every 7th minute (noise); now, 30 extra /a events in one bucket. */
function planted(nowS: number): { events: unknown[]; burstAt: number } {
  const events: unknown[] = [];
  // (In the middle of its 10-minute bucket: a burst across a bucket's edge is two buckets outside the band.)
  const burstAt = Math.floor((nowS - 25 * 60) / 600) * 600 + 300;
  for (let day = 0; day <= 7; day++) {
    for (let m = 1; m < 60; m++) {
      const t = nowS - day * DAY - m * 60;
      events.push({ time: iso(t), data: { route: '/a', ms: 10 } });
      if (m % 7 === (day === 0 ? 1 : day % 7)) events.push({ time: iso(t - 1), data: { route: '/a', ms: 11 } });
      if (m % 5 === 0) events.push({ time: iso(t - 2), data: { route: '/b', ms: 20 } });
    }
  }
  for (let i = 0; i < 30; i++) events.push({ time: iso(burstAt - i), data: { route: '/a', ms: 50 } });
  return { events, burstAt };
}

function checks(engine: string, start: () => Promise<TestApp>, stop: () => Promise<void> = async () => {}) {
  describe(`anomaly bands on ${engine}`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let nowS: number;
    let burstAt: number;
    let result: any;
    const bands = (id: string, qs = '') => t.app.inject({ method: 'GET', url: `/1/query_results/shop/${id}/bands${qs}`, headers: t.config });
    beforeAll(async () => {
      t = await start();
      nowS = Math.floor(t.clock.ms / 1000);
      const p = planted(nowS);
      burstAt = p.burstAt;
      await ingest(t, 'shop', p.events);
      result = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], breakdowns: ['route'], time_range: 3600, granularity: 600 });
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await stop();
    });

    it('the band covers the normal points and marks the burst; the result itself is unchanged', async () => {
      expect(Object.keys(result.data).sort()).toEqual(['results', 'series']);
      const res = await bands(result.id);
      expect(res.statusCode, res.body).toBe(200);
      const body = json(res);
      expect(body).toMatchObject({ seasonality: 'day', period_seconds: DAY, periods: 7, sensitivity: 'medium', granularity: 600 });
      const a = body.series.find((s: any) => s.group.route === '/a');
      const b = body.series.find((s: any) => s.group.route === '/b');
      expect(a.calculation).toBe('COUNT');
      const burstBucket = Math.floor(burstAt / 600) * 600;
      const outside = a.points.filter((p: any) => p.outside);
      expect(outside.map((p: any) => Date.parse(p.time) / 1000)).toEqual([burstBucket]);
      expect(outside[0].value).toBeGreaterThan(outside[0].upper);
      expect(outside[0].expected).toBeGreaterThan(5);
      expect(outside[0].expected).toBeLessThan(13);
      expect(a.outside).toBe(1);
      for (const p of a.points.filter((x: any) => !x.outside && x.value > 0)) {
        expect(p.lower).toBeLessThanOrEqual(p.value);
        expect(p.upper).toBeGreaterThanOrEqual(p.value);
      }
      // /b is the same every day: a zero-width history, inside by the minimum width.
      expect(b.outside).toBe(0);
      expect(b.points.some((p: any) => p.value > 0 && p.upper > p.expected)).toBe(true);
    });

    it('weekly seasonality: a week back the same traffic, two weeks back none; the burst still stands out', async () => {
      const body = json(await bands(result.id, '?seasonality=week&periods=2&sensitivity=low'));
      expect(body).toMatchObject({ seasonality: 'week', period_seconds: 7 * DAY, periods: 2, sensitivity: 'low' });
      const a = body.series.find((s: any) => s.group.route === '/a');
      const busy = a.points.filter((p: any) => p.value > 0);
      expect(busy.every((p: any) => p.expected > 0 && p.expected < p.value)).toBe(true);
      expect(a.points.filter((p: any) => p.outside).map((p: any) => Date.parse(p.time) / 1000)).toEqual([Math.floor(burstAt / 600) * 600]);
    });

    it('bad options → 422 naming them; an unknown result → 404', async () => {
      for (const [qs, field] of [['?seasonality=month', 'seasonality'], ['?periods=1', 'periods'], ['?periods=13', 'periods'], ['?periods=x', 'periods'], ['?sensitivity=extreme', 'sensitivity']]) {
        const res = await bands(result.id, qs);
        expect(res.statusCode, qs).toBe(422);
        expect(res.body).toContain(field);
      }
      expect((await bands('nope')).statusCode).toBe(404);
      const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
      expect(doc.paths['/1/query_results/{datasetSlug}/{queryResultId}/bands'].get.responses['200']).toBeDefined();
      expect((await t.app.inject({ method: 'GET', url: `/1/query_results/shop/${result.id}/bands` })).statusCode).toBe(401);
    });
  });
}

checks('DuckDB', () => makeApp({ settings: { queryResultRateLimit: null } }));

let cluster: ClickHouseCluster | undefined;
if (clickhouseBinary) {
  checks(
    'ClickHouse',
    async () => {
      cluster = await startClickHouse(1);
      return makeApp({ eventStore: cluster.setting(), settings: { queryResultRateLimit: null } });
    },
    async () => void (await cluster?.stop()),
  );
} else {
  warnClickHouseSkipped('anomaly bands on ClickHouse');
}
