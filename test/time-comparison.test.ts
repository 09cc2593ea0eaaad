// Time comparison (`compare_time_offset_seconds`, src/query/compare.ts) through the HTTP API on
// DuckDB and on a single ClickHouse node: known events in the query's window and in the window an
// offset back, every op class (COUNT, SUM, AVG from one combined statement; P99, COUNT_DISTINCT
// and HEATMAP from one statement per part), with a breakdown, totals and series; the answer
// checked against Honeycomb's contract (`data.comparison` is an extra property it allows).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest, runQuery, saveQuery } from './query-helpers.js';
import { expectContract } from './contract.js';
import { changePercent, formatChange, shapeResult } from '../web/src/results.js';
import { normaliseSpec } from '../web/src/query-url.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const HOUR = 3600;
const DAY = 86_400;
const WEEK = 7 * DAY;
const iso = (s: number) => new Date(s * 1000).toISOString();

/** Events `ago` seconds before the clock: now (within the last hour) and one offset back. */
function events(nowS: number, offset: number) {
  const at = (ago: number) => iso(nowS - ago);
  return [
    { time: at(600), data: { service: 'a', d: 10, user: 'u1' } },
    { time: at(1500), data: { service: 'a', d: 20, user: 'u2' } },
    { time: at(900), data: { service: 'b', d: 5, user: 'u1' } },
    { time: at(offset + 600), data: { service: 'a', d: 30, user: 'u1' } },
    { time: at(offset + 1500), data: { service: 'b', d: 1, user: 'u3' } },
    { time: at(offset + 1600), data: { service: 'b', d: 3, user: 'u4' } },
    { time: at(offset + 900), data: { service: 'c', d: 7, user: 'u5' } },
    // Outside both windows.
    { time: at(offset + 2 * HOUR), data: { service: 'z', d: 1000, user: 'u9' } },
  ];
}

const byService = (rows: { data: Record<string, unknown> }[]) => Object.fromEntries(rows.map((r) => [r.data.service, r.data]));

/**
 * `heatmap`: include HEATMAP in the per-part query (on ClickHouse too: a HEATMAP with a breakdown
 * over these events once failed there, "Second argument to tupleElement must be a constant", an
 * 18.16 fault the cells' statement now avoids).
 */
function checks(engine: string, heatmap: boolean, start: () => Promise<TestApp>, stop: () => Promise<void> = async () => {}) {
  describe(`time comparison on ${engine}`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let nowS: number;
    beforeAll(async () => {
      t = await start();
      nowS = Math.floor(t.clock.ms / 1000);
      await ingest(t, 'cmp', events(nowS, DAY));
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await stop();
    });

    it('COUNT, SUM and AVG by service: each group a day back, with totals and series lined up by the offset', async () => {
      const spec = { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'd' }, { op: 'AVG', column: 'd' }], breakdowns: ['service'], time_range: HOUR, granularity: 600, compare_time_offset_seconds: DAY };
      const body = await runQuery(t, 'cmp', spec, { disable_total_by_aggregate: false });
      expect(body.query.compare_time_offset_seconds).toBe(DAY);
      expect(byService(body.data.results)).toEqual({
        a: { service: 'a', COUNT: 2, 'SUM(d)': 30, 'AVG(d)': 15 },
        b: { service: 'b', COUNT: 1, 'SUM(d)': 5, 'AVG(d)': 5 },
      });
      const c = body.data.comparison;
      expect(c.offset_seconds).toBe(DAY);
      expect(c.end_time - c.start_time).toBeGreaterThanOrEqual(HOUR);
      expect(c.end_time).toBeGreaterThanOrEqual(nowS - DAY);
      expect(byService(c.results)).toEqual({
        a: { service: 'a', COUNT: 1, 'SUM(d)': 30, 'AVG(d)': 30 },
        b: { service: 'b', COUNT: 2, 'SUM(d)': 4, 'AVG(d)': 2 },
        c: { service: 'c', COUNT: 1, 'SUM(d)': 7, 'AVG(d)': 7 },
      });
      expect(c.total_by_aggregate.data).toEqual({ COUNT: 4, 'SUM(d)': 41, 'AVG(d)': 41 / 4 });
      expect(body.data.total_by_aggregate.data.COUNT).toBe(3);
      // The past buckets, moved on by the offset, are buckets of the main window.
      const windowStart = Date.parse(body.data.series[0].time) / 1000;
      const shifted = c.series.map((s: { time: string }) => Date.parse(s.time) / 1000 + DAY);
      expect(shifted.every((x: number) => x >= windowStart - 600 && x < nowS + 600 && x % 600 === 0)).toBe(true);
      const pastCount = c.series.reduce((n: number, s: { data: { COUNT: number } }) => n + s.data.COUNT, 0);
      expect(pastCount).toBe(4);
      expect(c.total_by_aggregate_series.reduce((n: number, s: { data: { COUNT: number } }) => n + s.data.COUNT, 0)).toBe(4);
    });

    it(`P99, COUNT_DISTINCT${heatmap ? ' and HEATMAP' : ''} a day back; the answer matches the contract`, async () => {
      const calculations = [{ op: 'P99', column: 'd' }, { op: 'COUNT_DISTINCT', column: 'user' }, ...(heatmap ? [{ op: 'HEATMAP', column: 'd' }] : [])];
      const spec = { calculations, breakdowns: ['service'], time_range: HOUR, compare_time_offset_seconds: DAY };
      const id = await saveQuery(t, 'cmp', spec);
      const res = await t.app.inject({ method: 'POST', url: '/1/query_results/cmp', headers: t.config, payload: { query_id: id } });
      expect(res.statusCode, res.body).toBe(201);
      let got = res;
      for (let i = 0; i < 2000 && !json(got).complete; i++) {
        await new Promise((r) => setTimeout(r, 5));
        got = await t.app.inject({ method: 'GET', url: new URL(String(res.headers.location)).pathname, headers: t.config });
      }
      expect(got.statusCode).toBe(200);
      expectContract('/1/query_results/{datasetSlug}/{queryResultId}', 'get', got);
      const body = json(got);
      expect(body.error).toBeUndefined();
      const pick = (rows: { data: Record<string, unknown> }[]) =>
        Object.fromEntries(Object.entries(byService(rows)).map(([k, v]: [string, any]) => [k, [v['P99(d)'], v['COUNT_DISTINCT(user)'], heatmap ? typeof v['HEATMAP(d)'] : 'string']]));
      expect(pick(body.data.results)).toEqual({ a: [20, 2, 'string'], b: [5, 1, 'string'] });
      expect(pick(body.data.comparison.results)).toEqual({ a: [30, 1, 'string'], b: [3, 2, 'string'], c: [7, 1, 'string'] });
      expect(body.data.comparison.series.length).toBeGreaterThan(0);
    });

    it('without an offset there is no comparison', async () => {
      const body = await runQuery(t, 'cmp', { calculations: [{ op: 'COUNT' }], time_range: HOUR });
      expect(body.data.comparison).toBeUndefined();
      expect(body.data.results).toEqual([{ data: { COUNT: 3 } }]);
    });
  });
}

describe('the web UI shapes a comparison', () => {
  it('past lines on the main buckets (moved on by the offset), past rows per group, the change in %', () => {
    const t0 = 1_700_000_400; // a multiple of 600
    const time = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const spec = { calculations: [{ op: 'COUNT' as const }], breakdowns: ['s'], granularity: 600, compare_time_offset_seconds: DAY };
    const shaped = shapeResult(
      spec,
      {
        series: [{ time: time(t0), data: { s: 'a', COUNT: 4 } }],
        results: [{ data: { s: 'a', COUNT: 4 } }, { data: { s: 'b', COUNT: 1 } }],
        comparison: {
          offset_seconds: DAY, start_time: t0 - DAY, end_time: t0 - DAY + 1200,
          series: [{ time: time(t0 - DAY + 600), data: { s: 'a', COUNT: 2 } }, { time: time(t0 - DAY), data: { s: 'z', COUNT: 9 } }],
          results: [{ data: { s: 'a', COUNT: 2 } }, { data: { s: 'z', COUNT: 9 } }],
        },
      },
      { start: t0, end: t0 + 1200 },
    );
    expect(shaped.times).toEqual([t0, t0 + 600]);
    expect(shaped.series[0].lines).toEqual([[4, 0], [0, 0]]);
    expect(shaped.series[0].past).toEqual([[0, 2], [0, 0]]);
    expect(shaped.comparison).toEqual({ offset: DAY, rows: [{ s: 'a', COUNT: 2 }, undefined] });
    expect(formatChange(changePercent(4, 2))).toBe('+100%');
    expect(formatChange(changePercent(1, 4))).toBe('−75%');
    expect(formatChange(changePercent(1.05, 1))).toBe('+5%');
    expect(formatChange(changePercent(1, 0))).toBe('–');
    expect(normaliseSpec(spec).compare_time_offset_seconds).toBe(DAY);
  });
});

checks('DuckDB', true, () => makeApp({ settings: { queryResultRateLimit: null } }));

describe('time comparison a week back (DuckDB)', { timeout: 60_000 }, () => {
  let t: TestApp;
  beforeAll(async () => (t = await makeApp({ settings: { queryResultRateLimit: null } })));
  afterAll(() => t.close());
  it('reads the events of a week ago although query windows start at most 7 days back', async () => {
    const nowS = Math.floor(t.clock.ms / 1000);
    await ingest(t, 'week', events(nowS, WEEK));
    const body = await runQuery(t, 'week', { calculations: [{ op: 'COUNT' }], time_range: HOUR, compare_time_offset_seconds: WEEK }, { disable_series: true });
    expect(body.data.results).toEqual([{ data: { COUNT: 3 } }]);
    expect(body.data.comparison.results).toEqual([{ data: { COUNT: 4 } }]);
    expect(body.data.comparison.series).toEqual([]);
  });
});

let cluster: ClickHouseCluster | undefined;
if (clickhouseBinary) {
  checks(
    'ClickHouse',
    true,
    async () => {
      cluster = await startClickHouse(1);
      return makeApp({ eventStore: cluster.setting(), settings: { queryResultRateLimit: null } });
    },
    async () => void (await cluster?.stop()),
  );
} else {
  warnClickHouseSkipped('time comparison on ClickHouse');
}
