// Query results against an independent reference (test/query-reference.ts): every calculation
// op, every filter op, breakdowns with orders, limits and havings, series buckets, totals and
// "other" aggregates, sample-rate weighting, and `__all__` across datasets. The events are
// generated deterministically and sent through /1/batch; the answers come from /1/query_results.
// The same specs and expected answers run against every event engine: DuckDB, ClickHouse single
// node and ClickHouse with 2 shards. Floats compare within a relative 1e-9 (summation order
// differs between engines and shards). Every op runs on every engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { ingest, runQuery } from './query-helpers.js';
import {
  P,
  aggregate,
  concurrency,
  filterMatches,
  heatmapBounds,
  heatmapCells,
  groupBy,
  ratesByBucket,
  rng,
  type RefEvent,
} from './query-reference.js';

const SERVICES = ['api', 'web', 'db', 'cache', 'auth'];
const ENDPOINTS = ['/users/:id', '/health', '/orders', '/search', '/users/me'];
const STATUSES = [200, 200, 200, 201, 404, 500];

function generate(seed: number, count: number, startMs: number, sampled: boolean): RefEvent[] {
  const r = rng(seed);
  const counters = new Map<string, number>();
  return Array.from({ length: count }, (_, i) => {
    const service = SERVICES[Math.floor(r() * SERVICES.length)];
    counters.set(service, (counters.get(service) ?? 0) + Math.floor(r() * 100));
    const fields: Record<string, string | number | boolean | null> = {
      service,
      endpoint: ENDPOINTS[Math.floor(r() * ENDPOINTS.length)],
      status: STATUSES[Math.floor(r() * STATUSES.length)],
      user: `u${Math.floor(r() * 150)}`,
      ok: r() < 0.8,
      counter: counters.get(service)!,
    };
    // Some events lack a duration: not counted by duration ops.
    if (i % 17 !== 0) fields.duration_ms = Math.round(r() * 50_000) / 100;
    return {
      // Distinct, increasing times 1.9 s apart.
      timeMs: startMs + i * 1900,
      samplerate: sampled ? [1, 1, 2, 10][Math.floor(r() * 4)] : 1,
      fields,
    };
  });
}

function expectClose(actual: unknown, expected: number | undefined, what: string) {
  if (expected === undefined) {
    expect(actual, what).toBeUndefined();
    return;
  }
  expect(typeof actual, `${what}: ${actual}`).toBe('number');
  const tolerance = Math.max(1e-9, Math.abs(expected) * 1e-9);
  expect(Math.abs((actual as number) - expected), `${what}: got ${actual}, expected ${expected}`).toBeLessThanOrEqual(tolerance);
}

interface Engine {
  name: string;
  /** WAGGLE_EVENT_STORE for a fresh store (undefined: DuckDB). */
  setting(): string | undefined;
  /** WAGGLE_HOT_COLUMNS: 0 stores every field as an attribute, a few a mix of both (src/stores/events/placement.ts). */
  hotColumns?: number;
}

function correctness(engine: Engine) {
  let t: TestApp;
  let sampled: RefEvent[];
  let plain: RefEvent[];
  let uniform: RefEvent[];
  let nowS: number;
  /** The window a 2-hour query reads (truncated to the minute). */
  let windowEndS: number;

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null, hotColumns: engine.hotColumns }, eventStore: engine.setting() });
    nowS = Math.floor(t.clock.ms / 1000);
    windowEndS = Math.floor(nowS / 60) * 60;
    const start = (windowEndS - 110 * 60) * 1000;
    sampled = generate(1, 3000, start, true);
    plain = generate(2, 3000, start + 950, false);
    const wire = (events: RefEvent[]) => events.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields }));
    await ingest(t, 'sampled', wire(sampled));
    await ingest(t, 'plain', wire(plain));
    // plain's events again, every one with sample rate 5: percentiles take the unweighted plan.
    uniform = plain.map((e) => ({ ...e, samplerate: 5 }));
    await ingest(t, 'uniform', wire(uniform));
  });
  afterAll(() => t.close());

  const SIMPLE_OPS = ['COUNT', 'SUM', 'AVG', 'MAX', 'MIN', ...Object.keys(P)];

  it('percentiles by group when every event of the window has one sample rate (the unweighted nearest rank)', async () => {
    const ops = Object.keys(P);
    const body = await runQuery(t, 'uniform', { calculations: [{ op: 'COUNT' }, ...ops.map((op) => ({ op, column: 'duration_ms' }))], breakdowns: ['service'], time_range: 7200 }, { disable_series: true });
    const groups = groupBy(plain, (e) => String(e.fields.service));
    expect(body.data.results).toHaveLength(groups.size);
    for (const r of body.data.results) {
      const evs = groups.get(r.data.service)!;
      expect(r.data.COUNT).toBe(5 * evs.length);
      for (const op of ops) expectClose(r.data[`${op}(duration_ms)`], aggregate(evs, op, 'duration_ms'), `${op} of ${r.data.service}`);
    }
  });

  for (const [name, events] of [
    ['sampled', () => sampled],
    ['plain', () => plain],
  ] as const) {
    it(`every numeric op over the whole window (${name})`, async () => {
      const calculations = SIMPLE_OPS.map((op) => (op === 'COUNT' ? { op } : { op, column: 'duration_ms' }));
      calculations.push({ op: 'COUNT_DISTINCT', column: 'user' });
      const body = await runQuery(t, name, { calculations, time_range: 7200 }, { disable_series: true });
      expect(body.data.results).toHaveLength(1);
      const data = body.data.results[0].data;
      for (const op of SIMPLE_OPS) {
        const key = op === 'COUNT' ? 'COUNT' : `${op}(duration_ms)`;
        expectClose(data[key], aggregate(events(), op, op === 'COUNT' ? undefined : 'duration_ms'), key);
      }
      expect(data['COUNT_DISTINCT(user)']).toBe(aggregate(events(), 'COUNT_DISTINCT', 'user'));
    });

    it(`breakdowns, default order, series per bucket (${name})`, async () => {
      const spec = {
        calculations: [{ op: 'COUNT' }, { op: 'P90', column: 'duration_ms' }, { op: 'SUM', column: 'status' }],
        breakdowns: ['service', 'ok'],
        time_range: 7200,
        granularity: 600,
      };
      const body = await runQuery(t, name, spec);
      const groups = groupBy(events(), (e) => `${e.fields.service}|${e.fields.ok}`);
      const expected = [...groups.entries()]
        .map(([k, evs]) => ({ k, count: aggregate(evs, 'COUNT')!, evs }))
        .sort((a, b) => b.count - a.count || a.k.localeCompare(b.k));
      expect(body.data.results.map((r: any) => `${r.data.service}|${r.data.ok}`)).toEqual(expected.map((e) => e.k));
      for (const [i, e] of expected.entries()) {
        const d = body.data.results[i].data;
        expect(d.COUNT).toBe(e.count);
        expectClose(d['P90(duration_ms)'], aggregate(e.evs, 'P90', 'duration_ms'), `P90 ${e.k}`);
        expectClose(d['SUM(status)'], aggregate(e.evs, 'SUM', 'status'), `SUM ${e.k}`);
      }
      // Series: one entry per group and 10-minute bucket that has events.
      const expectedSeries = new Map<string, RefEvent[]>();
      for (const e of events()) {
        const b = Math.floor(e.timeMs / 1000 / 600) * 600;
        const key = `${new Date(b * 1000).toISOString().replace('.000Z', 'Z')}|${e.fields.service}|${e.fields.ok}`;
        expectedSeries.set(key, [...(expectedSeries.get(key) ?? []), e]);
      }
      expect(body.data.series).toHaveLength(expectedSeries.size);
      for (const s of body.data.series) {
        const evs = expectedSeries.get(`${s.time}|${s.data.service}|${s.data.ok}`);
        expect(evs, `series ${s.time} ${s.data.service}`).toBeDefined();
        expect(s.data.COUNT).toBe(aggregate(evs!, 'COUNT'));
        expectClose(s.data['P90(duration_ms)'], aggregate(evs!, 'P90', 'duration_ms'), `series P90 ${s.time}`);
      }
      // Series entries come in time order.
      const times = body.data.series.map((s: any) => s.time);
      expect([...times].sort()).toEqual(times);
    });
  }

  it('every filter op', async () => {
    const cases: [string, string, unknown][] = [
      ['status', '=', 200],
      ['status', '!=', 200],
      ['status', '>', 201],
      ['status', '>=', 404],
      ['status', '<', 404],
      ['status', '<=', 201],
      ['duration_ms', '>', 250.5],
      ['endpoint', 'starts-with', '/users'],
      ['endpoint', 'does-not-start-with', '/users'],
      ['endpoint', 'ends-with', 'me'],
      ['endpoint', 'does-not-end-with', 'me'],
      ['endpoint', 'contains', 'er'],
      ['endpoint', 'does-not-contain', 'er'],
      ['duration_ms', 'exists', undefined],
      ['duration_ms', 'does-not-exist', undefined],
      ['service', 'in', ['api', 'db']],
      ['service', 'not-in', ['api', 'db']],
      ['service', '=', 'web'],
      ['ok', '=', true],
      ['ok', '!=', true],
      ['duration_ms', 'does-not-contain', '.5'],
    ];
    for (const [column, op, value] of cases) {
      const filter = value === undefined ? { column, op } : { column, op, value };
      const body = await runQuery(t, 'sampled', { calculations: [{ op: 'COUNT' }], filters: [filter], time_range: 7200 }, { disable_series: true });
      const matching = sampled.filter((e) => filterMatches(e, column, op, value));
      const count = body.data.results[0]?.data.COUNT;
      expect(count ?? 0, `${column} ${op} ${JSON.stringify(value)}`).toBe(aggregate(matching, 'COUNT'));
    }
  });

  it('filter_combination AND and OR', async () => {
    const filters = [
      { column: 'service', op: '=', value: 'api' },
      { column: 'status', op: '>=', value: 404 },
    ];
    for (const combination of ['AND', 'OR'] as const) {
      const body = await runQuery(t, 'plain', { filters, filter_combination: combination, time_range: 7200 }, { disable_series: true });
      const matching = plain.filter((e) =>
        combination === 'AND'
          ? filters.every((f) => filterMatches(e, f.column, f.op, f.value))
          : filters.some((f) => filterMatches(e, f.column, f.op, f.value)),
      );
      expect(body.data.results[0].data.COUNT).toBe(matching.length);
    }
  });

  it('orders, limit, havings, totals and other', async () => {
    const spec = {
      calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'duration_ms' }],
      breakdowns: ['endpoint'],
      orders: [{ op: 'AVG', column: 'duration_ms', order: 'ascending' }],
      havings: [{ calculate_op: 'COUNT', op: '>', value: 100 }],
      limit: 3,
      time_range: 7200,
    };
    const body = await runQuery(t, 'sampled', spec, { disable_total_by_aggregate: false, disable_other_by_aggregate: false, disable_series: false });
    const groups = [...groupBy(sampled, (e) => String(e.fields.endpoint)).entries()]
      .map(([k, evs]) => ({ k, evs, count: aggregate(evs, 'COUNT')!, avg: aggregate(evs, 'AVG', 'duration_ms')! }))
      .filter((g) => g.count > 100)
      .sort((a, b) => a.avg - b.avg)
      .slice(0, 3);
    expect(body.data.results.map((r: any) => r.data.endpoint)).toEqual(groups.map((g) => g.k));
    for (const [i, g] of groups.entries()) expectClose(body.data.results[i].data['AVG(duration_ms)'], g.avg, g.k);

    // Totals ignore havings and the limit; "other" is every event outside the shown groups.
    expect(body.data.total_by_aggregate.data.COUNT).toBe(aggregate(sampled, 'COUNT'));
    expectClose(body.data.total_by_aggregate.data['AVG(duration_ms)'], aggregate(sampled, 'AVG', 'duration_ms'), 'total AVG');
    const shown = new Set(groups.map((g) => g.k));
    const others = sampled.filter((e) => !shown.has(String(e.fields.endpoint)));
    expect(body.data.other_by_aggregate.data.COUNT).toBe(aggregate(others, 'COUNT'));
    expectClose(body.data.other_by_aggregate.data['AVG(duration_ms)'], aggregate(others, 'AVG', 'duration_ms'), 'other AVG');
    // The total series adds up to the total.
    const seriesTotal = body.data.total_by_aggregate_series.reduce((s: number, x: any) => s + x.data.COUNT, 0);
    expect(seriesTotal).toBe(aggregate(sampled, 'COUNT'));
    // Series only for the shown groups.
    expect(new Set(body.data.series.map((s: any) => s.data.endpoint))).toEqual(shown);

    // Ordering by a breakdown, descending.
    const byName = await runQuery(t, 'sampled', { breakdowns: ['service'], orders: [{ column: 'service', order: 'descending' }], time_range: 7200 }, { disable_series: true });
    expect(byName.data.results.map((r: any) => r.data.service)).toEqual([...SERVICES].sort().reverse());
    // Without options, totals and other are left out (both default to disabled).
    const plainRun = await runQuery(t, 'sampled', { breakdowns: ['service'], time_range: 7200 });
    expect(plainRun.data.total_by_aggregate).toBeUndefined();
    expect(plainRun.data.other_by_aggregate).toBeUndefined();
  });

  it.each(['sampled', 'plain'])('decomposable ops in one statement (%s): top groups, their series only, totals and other from one aggregation', async (dataset) => {
    // (`sampled` has sample rates above 1, so the weighted forms run; `plain` has none.)
    const events = dataset === 'sampled' ? sampled : plain;
    // COUNT, SUM, AVG, MIN, MAX and HEATMAP are answered by one statement that aggregates once per
    // (group, bucket, HEATMAP cell) and merges those partials per part (src/query/plan.ts).
    const ops = ['COUNT', 'SUM', 'AVG', 'MIN', 'MAX'];
    const spec = {
      calculations: [{ op: 'COUNT' }, ...ops.slice(1).map((op) => ({ op, column: 'duration_ms' })), { op: 'HEATMAP', column: 'duration_ms' }],
      breakdowns: ['service', 'status'],
      orders: [{ op: 'COUNT', order: 'descending' }],
      havings: [{ calculate_op: 'MAX', column: 'duration_ms', op: '>', value: 100 }],
      limit: 4,
      granularity: 600,
      time_range: 7200,
    };
    const body = await runQuery(t, dataset, spec, { disable_total_by_aggregate: false, disable_other_by_aggregate: false, disable_series: false });
    const keyOf = (e: RefEvent) => `${e.fields.service}|${e.fields.status}`;
    const bounds = heatmapBounds(events, 'duration_ms');
    const { lo, width } = bounds;
    const cells = (evs: RefEvent[]) => heatmapCells(evs, 'duration_ms', bounds);
    const expectAll = (data: Record<string, unknown>, evs: RefEvent[], what: string) => {
      expect(data.COUNT, what).toBe(aggregate(evs, 'COUNT'));
      for (const op of ops.slice(1)) expectClose(data[`${op}(duration_ms)`], aggregate(evs, op, 'duration_ms'), `${what} ${op}`);
      const hist = JSON.parse(String(data['HEATMAP(duration_ms)'])) as { lower: number; count: number }[];
      expect(hist.map((c) => [Math.round((c.lower - lo) / width), c.count]), `${what} HEATMAP`).toEqual(cells(evs));
      for (const c of hist) expectClose(c.lower, lo + Math.round((c.lower - lo) / width) * width, `${what} HEATMAP lower`);
    };
    const groups = [...groupBy(events, keyOf).entries()]
      .map(([k, evs]) => ({ k, evs, service: String(evs[0].fields.service), status: Number(evs[0].fields.status), count: aggregate(evs, 'COUNT')! }))
      .filter((g) => aggregate(g.evs, 'MAX', 'duration_ms')! > 100)
      .sort((a, b) => b.count - a.count || (a.service < b.service ? -1 : a.service > b.service ? 1 : a.status - b.status))
      .slice(0, 4);
    expect(body.data.results.map((r: any) => `${r.data.service}|${r.data.status}`)).toEqual(groups.map((g) => g.k));
    for (const [i, g] of groups.entries()) expectAll(body.data.results[i].data, g.evs, g.k);

    // The series: only the top groups, every (group, bucket) with events, in time order.
    const shown = new Set(groups.map((g) => g.k));
    const bucketOf = (e: RefEvent) => Math.floor(e.timeMs / 1000 / 600);
    const expectedSeries = groupBy(events.filter((e) => shown.has(keyOf(e))), (e) => `${bucketOf(e)}|${keyOf(e)}`);
    expect(body.data.series).toHaveLength(expectedSeries.size);
    let lastTime = '';
    for (const s of body.data.series) {
      expect(s.time >= lastTime).toBe(true);
      lastTime = s.time;
      const evs = expectedSeries.get(`${Date.parse(s.time) / 600_000}|${s.data.service}|${s.data.status}`);
      expect(evs, `series ${s.time} ${s.data.service} ${s.data.status}`).toBeDefined();
      expectAll(s.data, evs!, `series ${s.time}`);
    }
    // Totals: every event, havings and limit ignored; the total series per bucket.
    expectAll(body.data.total_by_aggregate.data, events, 'total');
    const perBucket = groupBy(events, (e) => String(bucketOf(e)));
    expect(body.data.total_by_aggregate_series).toHaveLength(perBucket.size);
    for (const s of body.data.total_by_aggregate_series) expectAll(s.data, perBucket.get(String(Date.parse(s.time) / 600_000))!, `total series ${s.time}`);
    // Other: the events outside the shown groups (the sum of the groups not shown).
    const others = events.filter((e) => !shown.has(keyOf(e)));
    expect(others.length).toBeGreaterThan(0);
    expectAll(body.data.other_by_aggregate.data, others, 'other');

    // No breakdowns, and a having no group passes: no results, no series; totals and other
    // still cover every event.
    const none = await runQuery(
      t,
      dataset,
      { calculations: [{ op: 'COUNT' }, { op: 'HEATMAP', column: 'duration_ms' }], havings: [{ calculate_op: 'COUNT', op: '<', value: 1 }], time_range: 7200 },
      { disable_total_by_aggregate: false, disable_other_by_aggregate: false },
    );
    expect(none.data.results).toEqual([]);
    expect(none.data.series).toEqual([]);
    expect(none.data.total_by_aggregate.data.COUNT).toBe(aggregate(events, 'COUNT'));
    expect(none.data.other_by_aggregate.data.COUNT).toBe(aggregate(events, 'COUNT'));
    expect(none.data.total_by_aggregate_series.reduce((n: number, s: any) => n + s.data.COUNT, 0)).toBe(aggregate(events, 'COUNT'));
    // Every group shown: "other" is empty.
    const all = await runQuery(t, dataset, { breakdowns: ['service'], time_range: 7200 }, { disable_other_by_aggregate: false, disable_series: true });
    expect(all.data.results).toHaveLength(SERVICES.length);
    expect(all.data.other_by_aggregate).toEqual({ data: {} });
  });

  it('only ops that do not weigh (MIN, MAX, COUNT_DISTINCT) on sampled data: the sample-rate check is skipped, answers unchanged', async () => {
    const spec = { calculations: [{ op: 'MIN', column: 'duration_ms' }, { op: 'MAX', column: 'duration_ms' }, { op: 'COUNT_DISTINCT', column: 'user' }], breakdowns: ['service'], time_range: 7200 };
    const body = await runQuery(t, 'sampled', spec, { disable_series: true, disable_other_by_aggregate: false });
    const groups = groupBy(sampled, (e) => String(e.fields.service));
    expect(body.data.results).toHaveLength(groups.size);
    for (const r of body.data.results) {
      const evs = groups.get(r.data.service)!;
      expectClose(r.data['MIN(duration_ms)'], aggregate(evs, 'MIN', 'duration_ms'), 'MIN');
      expectClose(r.data['MAX(duration_ms)'], aggregate(evs, 'MAX', 'duration_ms'), 'MAX');
      expect(r.data['COUNT_DISTINCT(user)']).toBe(aggregate(evs, 'COUNT_DISTINCT', 'user'));
    }
    expect(body.data.other_by_aggregate).toEqual({ data: {} });
  });

  it('RATE_AVG, RATE_SUM and RATE_MAX per group', async () => {
    const spec = {
      calculations: [{ op: 'RATE_AVG', column: 'counter' }, { op: 'RATE_SUM', column: 'counter' }, { op: 'RATE_MAX', column: 'counter' }],
      breakdowns: ['service'],
      time_range: 7200,
      granularity: 1200,
    };
    const body = await runQuery(t, 'plain', spec);
    const groups = groupBy(plain, (e) => String(e.fields.service));
    expect(body.data.results).toHaveLength(groups.size);
    for (const r of body.data.results) {
      const evs = groups.get(r.data.service)!;
      for (const op of ['RATE_AVG', 'RATE_SUM', 'RATE_MAX']) expectClose(r.data[`${op}(counter)`], aggregate(evs, op, 'counter'), `${op} ${r.data.service}`);
    }
    for (const s of body.data.series) {
      const bucket = Date.parse(s.time) / 1000 / 1200;
      const rates = ratesByBucket(groups.get(s.data.service)!, 'counter', 1200).get(bucket);
      if (!rates) {
        expect(s.data['RATE_SUM(counter)']).toBeUndefined();
        continue;
      }
      expectClose(s.data['RATE_SUM(counter)'], rates.reduce((a, b) => a + b, 0), `series RATE_SUM ${s.time}`);
      expectClose(s.data['RATE_MAX(counter)'], Math.max(...rates), `series RATE_MAX ${s.time}`);
    }
  });

  it('HEATMAP: weighted histogram buckets between the window’s smallest and largest value', async () => {
    const body = await runQuery(t, 'sampled', { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }], breakdowns: ['service'], time_range: 7200 }, { disable_series: true });
    const values = sampled.map((e) => e.fields.duration_ms).filter((v): v is number => typeof v === 'number');
    const lo = Math.min(...values);
    const width = (Math.max(...values) - lo) / 50;
    for (const r of body.data.results) {
      const buckets = JSON.parse(r.data['HEATMAP(duration_ms)']) as { lower: number; upper: number; count: number }[];
      const expected = new Map<number, number>();
      for (const e of sampled) {
        if (e.fields.service !== r.data.service || typeof e.fields.duration_ms !== 'number') continue;
        const b = Math.min(Math.floor((e.fields.duration_ms - lo) / width), 49);
        expected.set(b, (expected.get(b) ?? 0) + e.samplerate);
      }
      expect(buckets).toHaveLength(expected.size);
      for (const bucket of buckets) {
        const index = Math.round((bucket.lower - lo) / width);
        expectClose(bucket.lower, lo + index * width, 'lower');
        expectClose(bucket.upper, lo + (index + 1) * width, 'upper');
        expect(bucket.count).toBe(expected.get(index));
      }
    }
  });

  it('HEATMAP beside a percentile (one statement per part): the series and other use the bounds of every matching event', async () => {
    const spec = { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }, { op: 'P50', column: 'duration_ms' }], breakdowns: ['service'], limit: 2, granularity: 1800, time_range: 7200 };
    const body = await runQuery(t, 'sampled', spec, { disable_other_by_aggregate: false });
    const bounds = heatmapBounds(sampled, 'duration_ms');
    const { lo, width } = bounds;
    const cells = (evs: RefEvent[]) => heatmapCells(evs, 'duration_ms', bounds);
    const check = (json: string, evs: RefEvent[], what: string) => {
      const hist = JSON.parse(json) as { lower: number; upper: number; count: number }[];
      expect(hist.map((c) => [Math.round((c.lower - lo) / width), c.count]), what).toEqual(cells(evs));
      for (const c of hist) expectClose(c.lower, lo + Math.round((c.lower - lo) / width) * width, `${what} lower`);
    };
    expect(body.data.results).toHaveLength(2);
    const shown = new Set(body.data.results.map((r: any) => r.data.service));
    for (const s of body.data.series) {
      const evs = sampled.filter((e) => e.fields.service === s.data.service && Math.floor(e.timeMs / 1_800_000) === Date.parse(s.time) / 1_800_000);
      check(s.data['HEATMAP(duration_ms)'], evs, `series ${s.time} ${s.data.service}`);
    }
    check(body.data.other_by_aggregate.data['HEATMAP(duration_ms)'], sampled.filter((e) => !shown.has(e.fields.service)), 'other');
  });

  it('CONCURRENCY: spans overlapping each bucket, and the busiest bucket per group', async () => {
    const body = await runQuery(t, 'plain', { calculations: [{ op: 'CONCURRENCY' }], breakdowns: ['endpoint'], time_range: 7200, granularity: 10 });
    for (const r of body.data.results) {
      const per = concurrency(plain.filter((e) => e.fields.endpoint === r.data.endpoint), 'duration_ms', 10, windowEndS);
      expect(r.data.CONCURRENCY, String(r.data.endpoint)).toBe(Math.max(...per.values()));
    }
    for (const s of body.data.series) {
      const per = concurrency(plain.filter((e) => e.fields.endpoint === s.data.endpoint), 'duration_ms', 10, windowEndS);
      expect(s.data.CONCURRENCY).toBe(per.get(Date.parse(s.time) / 10000));
    }
  });

  it('__all__ reads every dataset of the environment', async () => {
    const body = await runQuery(t, '__all__', { calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'duration_ms' }], breakdowns: ['service'], time_range: 7200 }, { disable_series: true });
    const both = [...sampled, ...plain, ...uniform];
    const groups = groupBy(both, (e) => String(e.fields.service));
    expect(body.data.results).toHaveLength(groups.size);
    for (const r of body.data.results) {
      expect(r.data.COUNT).toBe(aggregate(groups.get(r.data.service)!, 'COUNT'));
      expectClose(r.data['MAX(duration_ms)'], aggregate(groups.get(r.data.service)!, 'MAX', 'duration_ms'), 'MAX');
    }
  });

  it('a window with no events answers no groups; a missing column reads as absent', async () => {
    const end = windowEndS - 3 * 3600;
    const empty = await runQuery(t, 'plain', { start_time: end - 600, end_time: end }, { disable_total_by_aggregate: false });
    expect(empty.data.results).toEqual([]);
    expect(empty.data.series).toEqual([]);
    const missing = await runQuery(t, 'plain', { calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'no_such_column' }], breakdowns: ['nope'], time_range: 7200 }, { disable_series: true });
    expect(missing.data.results).toEqual([{ data: { COUNT: plain.length } }]);
  });

  // (last: it adds a dataset, which __all__ above would read)
  it('non-decomposable ops: series and other of the shown groups, passed as parameters (quotes, nulls, booleans, numbers as keys)', async () => {
    // P50 and COUNT_DISTINCT take one statement per part; the series and "other" statements get
    // the groups `results` answered as bound VALUES, so these keys must survive the round trip.
    const names = ["it's", 'a"b', '$1', 'x); DROP TABLE t; --', 'plain'];
    const r = rng(7);
    const startMs = (windowEndS - 100 * 60) * 1000;
    const evs: RefEvent[] = Array.from({ length: 600 }, (_, i) => {
      const fields: Record<string, string | number | boolean | null> = { flag: r() < 0.5, code: [200, 404, 500][Math.floor(r() * 3)], d: Math.round(r() * 1000) / 10, who: `u${Math.floor(r() * 40)}` };
      if (i % 3 !== 0) fields.name = names[Math.floor(r() * names.length)]; // some events have no name: a null group
      return { timeMs: startMs + i * 9000, samplerate: 1 + (i % 3), fields };
    });
    await ingest(t, 'keys', evs.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields })));
    const spec = {
      calculations: [{ op: 'COUNT' }, { op: 'P50', column: 'd' }, { op: 'COUNT_DISTINCT', column: 'who' }],
      breakdowns: ['name', 'flag', 'code'],
      havings: [{ calculate_op: 'COUNT', op: '>', value: 10 }],
      limit: 7,
      granularity: 1200,
      time_range: 7200,
    };
    const body = await runQuery(t, 'keys', spec, { disable_other_by_aggregate: false });
    const keyOf = (e: { name?: unknown; flag?: unknown; code?: unknown }) => JSON.stringify([e.name ?? null, e.flag, e.code]);
    const expectGroup = (data: Record<string, unknown>, group: RefEvent[], what: string) => {
      expect(data.COUNT, what).toBe(aggregate(group, 'COUNT'));
      expectClose(data['P50(d)'], aggregate(group, 'P50', 'd'), `${what} P50`);
      expect(data['COUNT_DISTINCT(who)'], what).toBe(aggregate(group, 'COUNT_DISTINCT', 'who'));
    };
    const groups = [...groupBy(evs, (e) => keyOf(e.fields)).entries()]
      .map(([k, g]) => ({ k, g, count: aggregate(g, 'COUNT')! }))
      .filter((x) => x.count > 10)
      .sort((a, b) => b.count - a.count || (a.k < b.k ? -1 : 1))
      .slice(0, 7);
    expect(new Set(body.data.results.map((x: any) => keyOf(x.data)))).toEqual(new Set(groups.map((g) => g.k)));
    expect(body.data.results.map((x: any) => x.data.COUNT)).toEqual(groups.map((g) => g.count));
    for (const x of body.data.results) expectGroup(x.data, groups.find((g) => g.k === keyOf(x.data))!.g, keyOf(x.data));
    expect(groups.some((g) => JSON.parse(g.k)[0] === null)).toBe(true); // the null group is among the shown ones
    // Series: only the shown groups, every (group, bucket) with events.
    const shown = new Set(groups.map((g) => g.k));
    const expected = groupBy(evs.filter((e) => shown.has(keyOf(e.fields))), (e) => `${Math.floor(e.timeMs / 1_200_000)}|${keyOf(e.fields)}`);
    expect(body.data.series).toHaveLength(expected.size);
    for (const x of body.data.series) expectGroup(x.data, expected.get(`${Date.parse(x.time) / 1_200_000}|${keyOf(x.data)}`)!, `series ${x.time}`);
    // Other: every event outside the shown groups.
    expectGroup(body.data.other_by_aggregate.data, evs.filter((e) => !shown.has(keyOf(e.fields))), 'other');
    // No group passes the havings: no series, and "other" is every event.
    const none = await runQuery(t, 'keys', { ...spec, havings: [{ calculate_op: 'COUNT', op: '>', value: 1e9 }] }, { disable_other_by_aggregate: false });
    expect(none.data.results).toEqual([]);
    expect(none.data.series).toEqual([]);
    expectGroup(none.data.other_by_aggregate.data, evs, 'other of none');
    // Without breakdowns: the one group shown, so "other" is empty; hidden by a having, "other" is everything.
    const one = await runQuery(t, 'keys', { calculations: [{ op: 'P50', column: 'd' }], time_range: 7200 }, { disable_other_by_aggregate: false });
    expect(one.data.series.length).toBeGreaterThan(0);
    expect(one.data.other_by_aggregate).toEqual({ data: {} });
    const hidden = await runQuery(
      t,
      'keys',
      { calculations: [{ op: 'COUNT' }, { op: 'P50', column: 'd' }], havings: [{ calculate_op: 'COUNT', op: '<', value: 1 }], time_range: 7200 },
      { disable_other_by_aggregate: false },
    );
    expect(hidden.data.results).toEqual([]);
    expect(hidden.data.series).toEqual([]);
    expect(hidden.data.other_by_aggregate.data.COUNT).toBe(aggregate(evs, 'COUNT'));
  });
}

describe('query results match the reference: DuckDB', { timeout: 120_000 }, () => correctness({ name: 'DuckDB', setting: () => undefined }));
describe('query results match the reference: DuckDB, every field an attribute', { timeout: 120_000 }, () =>
  correctness({ name: 'DuckDB, attributes', setting: () => undefined, hotColumns: 0 }),
);
describe('query results match the reference: DuckDB, three columns and the rest attributes', { timeout: 120_000 }, () =>
  correctness({ name: 'DuckDB, mixed', setting: () => undefined, hotColumns: 4 }),
);

for (const [shards, hotColumns] of [[1, undefined], [2, undefined], [1, 0], [2, 4]] as const) {
  let cluster: ClickHouseCluster | undefined;
  const name =
    (shards === 1 ? 'ClickHouse single node' : 'ClickHouse 2 shards') +
    (hotColumns === 0 ? ', every field an attribute' : hotColumns !== undefined ? ', three columns and the rest attributes' : '');
  describe.skipIf(!clickhouseBinary)(`query results match the reference: ${name}`, { timeout: 120_000 }, () => {
    beforeAll(async () => {
      cluster = await startClickHouse(shards);
    }, 60_000);
    afterAll(() => cluster?.stop());
    correctness({ name, setting: () => cluster!.setting(), hotColumns });
  });
}
if (!clickhouseBinary) warnClickHouseSkipped('the query-correctness suite on ClickHouse');
