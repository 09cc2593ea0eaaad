// /1/query_results at its edges, through HTTP against the real app and stores: the window's
// truncation (1/5/30-minute rounding proven by events just inside and outside the rounded
// bounds), the 7-day limits, the rate-limit buckets (relational prefixes, no Retry-After),
// filter value conversion, hostile real column names, CONCURRENCY and RATE_* on sampled data,
// having operators, `compare_time_offset_seconds`, mixed column types in `__all__`, and the
// expression language through inline calculated fields. Expected answers are computed here or
// by test/query-reference.ts from the events as sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest, pollResult, runQuery, saveQuery } from './query-helpers.js';

const DAY = 86_400;
const iso = (s: number) => new Date(s * 1000).toISOString();
const floorTo = (s: number, unit: number) => Math.floor(s / unit) * unit;
const ceilTo = (s: number, unit: number) => Math.ceil(s / unit) * unit;

/** A clock at a whole second that is not on a minute, 5-minute or 30-minute boundary. */
function setClock(t: TestApp): number {
  const nowS = floorTo(Math.floor(Date.now() / 1000), 1800) + 1007; // 47 s past a minute, 107 s past 5 min
  t.clock.ms = nowS * 1000;
  return nowS;
}

describe('query result windows: truncation and the 7-day limits', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    nowS = setClock(t);
  });
  afterAll(() => t.close());

  const create = (dataset: string, queryId: string) =>
    t.app.inject({ method: 'POST', url: `/1/query_results/${dataset}`, headers: t.config, payload: { query_id: queryId } });

  /** The tags of the events a query counts (breakdown on `tag`). */
  const tags = async (dataset: string, spec: object): Promise<string[]> => {
    const body = await runQuery(t, dataset, { breakdowns: ['tag'], ...spec }, { disable_series: true });
    return body.data.results.map((r: any) => r.data.tag).sort();
  };

  /**
   * Events at the rounded bounds of [start, end) for `unit`: at the rounded start and one second
   * before it, one second before the rounded end and at it; checks they would give another answer
   * with the neighbouring rounding units (so the test tells the units apart).
   */
  const edges = (start: number, end: number, unit: number, others: number[]) => {
    const lo = floorTo(start, unit);
    const hi = ceilTo(end, unit);
    for (const other of others) {
      // Under the other unit at least one of the four events would change sides.
      expect(floorTo(start, other) !== lo || ceilTo(end, other) !== hi, `unit ${other}`).toBe(true);
    }
    return [
      { time: iso(lo - 1), data: { tag: 'start-out' } },
      { time: iso(lo), data: { tag: 'start-in' } },
      { time: iso(Math.floor((start + end) / 2)), data: { tag: 'middle' } },
      { time: iso(hi - 1), data: { tag: 'end-in' } },
      { time: iso(hi), data: { tag: 'end-out' } },
    ];
  };
  const INSIDE = ['end-in', 'middle', 'start-in'];

  it('a window up to 2 days is rounded to 5 minutes: the start down, the end up', async () => {
    const base = floorTo(nowS - 2 * DAY, 1800);
    const start = base + 427; // 127 s past a 5-minute boundary, 427 s past a 30-minute one
    const end = start + DAY + 7; // 134 s past 5 min (ceil +166), 434 s past 30 min (ceil +1366)
    expect([floorTo(start, 300), ceilTo(end, 300)]).toEqual([start - 127, end + 166]);
    await ingest(t, 'trunc5', edges(start, end, 300, [60, 1800]));
    expect(await tags('trunc5', { start_time: start, end_time: end })).toEqual(INSIDE);

    // `time_range` alone is resolved against now, then rounded the same way.
    const recent = edges(nowS - DAY, nowS, 300, [60, 1800]).map((e) => ({ ...e, data: { tag: `r-${e.data.tag}` } }));
    await ingest(t, 'trunc5-now', recent);
    expect(await tags('trunc5-now', { time_range: DAY })).toEqual(INSIDE.map((x) => `r-${x}`));
  });

  it('a window up to 7 days is rounded to 30 minutes: the start down, the end up', async () => {
    const base = floorTo(nowS - 5 * DAY, 1800);
    const start = base + 427;
    const end = start + 3 * DAY + 7;
    expect([floorTo(start, 1800), ceilTo(end, 1800)]).toEqual([start - 427, end + 1366]);
    await ingest(t, 'trunc30', edges(start, end, 1800, [300]));
    expect(await tags('trunc30', { start_time: start, end_time: end })).toEqual(INSIDE);
    // Just over 2 days is already 30 minutes; exactly 2 days still 5.
    const twoDays = edges(start, start + 2 * DAY, 300, [1800]).map((e) => ({ ...e, data: { tag: `2d-${e.data.tag}` } }));
    await ingest(t, 'trunc2d', twoDays);
    expect(await tags('trunc2d', { start_time: start, end_time: start + 2 * DAY })).toEqual(INSIDE.map((x) => `2d-${x}`));
    // (rounded out by 30 minutes, the window takes in the events just outside the 5-minute bounds)
    expect(await tags('trunc2d', { start_time: start, end_time: start + 2 * DAY + 1 })).toEqual(
      ['2d-end-in', '2d-end-out', '2d-middle', '2d-start-in', '2d-start-out'],
    );
  });

  it('exactly 7 days is allowed, 7 days + 1 s is a 400, for time_range and for start_time/end_time', async () => {
    await ingest(t, 'week', [{ time: iso(nowS - 60), data: { tag: 'recent' } }]);
    const cases: [object, number][] = [
      [{ time_range: 7 * DAY }, 201],
      [{ time_range: 7 * DAY + 1 }, 400],
      [{ start_time: nowS - 7 * DAY - 10, end_time: nowS - 10 }, 201],
      [{ start_time: nowS - 7 * DAY - 10, end_time: nowS - 9 }, 400],
      [{ time_range: 7 * DAY, end_time: nowS }, 201],
      [{ time_range: 7 * DAY + 1, start_time: nowS - 8 * DAY }, 400],
    ];
    for (const [spec, status] of cases) {
      const res = await create('week', await saveQuery(t, 'week', spec));
      expect(res.statusCode, `${JSON.stringify(spec)}: ${res.body}`).toBe(status);
      if (status === 400) {
        expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
        expect(json(res).error).toMatch(/7 days/);
      } else {
        await pollResult(t, String(res.headers.location));
      }
    }
  });

  it('only events of the past 7 days are read, even when the rounded window reaches further back', async () => {
    const limit = nowS - 7 * DAY;
    // The 30-minute rounding of a 7-day window starts 1007 s before the limit: the event at
    // limit − 1000 is inside the rounded window but older than 7 days.
    expect(floorTo(limit, 1800)).toBe(limit - 1007);
    await ingest(t, 'old', [
      { time: iso(limit - 1000), data: { tag: 'rounded-but-old' } },
      { time: iso(limit - 1), data: { tag: 'old' } },
      { time: iso(limit), data: { tag: 'seven-days' } },
      { time: iso(nowS - 60), data: { tag: 'recent' } },
    ]);
    expect(await tags('old', { time_range: 7 * DAY })).toEqual(['recent', 'seven-days']);
    // A window that starts before the limit (and ends after it) reads from the limit on.
    expect(await tags('old', { start_time: limit - 3600, end_time: limit + 3600 })).toEqual(['seven-days']);
    // A window wholly older than 7 days reads nothing (its end, rounded up, is limit − 47).
    expect(await tags('old', { start_time: limit - 7200, end_time: limit - 100 })).toEqual([]);
  });
});

describe('query result rate limits', { timeout: 60_000 }, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await makeApp();
    await ingest(t, 'rl', [{ data: { n: 1 } }]);
  });
  afterAll(() => t.close());

  const create = (queryId: string) =>
    t.app.inject({ method: 'POST', url: '/1/query_results/rl', headers: t.config, payload: { query_id: queryId } });
  const expect429 = (res: Awaited<ReturnType<typeof create>>) => {
    expect(res.statusCode, res.body).toBe(429);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBeUndefined();
  };

  it('every relational prefix, wherever the query names it, takes the 1-per-minute bucket; its 429 has no Retry-After', async () => {
    const specs: [string, object][] = [
      ['root. in a breakdown', { breakdowns: ['root.service'] }],
      ['parent. in a calculation', { calculations: [{ op: 'MAX', column: 'parent.duration_ms' }] }],
      ['any. in a filter', { filters: [{ column: 'any.error', op: 'exists' }] }],
      ['any2. in a filter', { filters: [{ column: 'any2.name', op: '=', value: 'x' }] }],
      ['none. in a filter', { filters: [{ column: 'none.error', op: 'exists' }] }],
      ['parent. in a breakdown and order', { breakdowns: ['parent.name'], orders: [{ column: 'parent.name' }] }],
      ['root. read by an inline calculated field', { calculated_fields: [{ name: 'slow', expression: 'GT($root.duration_ms, 100)' }], breakdowns: ['slow'] }],
    ];
    for (const [what, spec] of specs) {
      const id = await saveQuery(t, 'rl', { ...spec, time_range: 600 });
      const first = await create(id);
      expect(first.statusCode, `${what}: ${first.body}`).toBe(201);
      expect(String(first.headers.ratelimit), what).toMatch(/^limit=1, remaining=0/);
      expect429(await create(id));
      t.clock.advance(60);
    }
    // Names that only look alike are plain.
    const plain = await saveQuery(t, 'rl', {
      breakdowns: ['rooted.x', 'my.root.x', 'anyx.y'],
      calculated_fields: [{ name: 'root.label', expression: 'CONCAT($parentname, "x")' }],
      time_range: 600,
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await create(plain)).statusCode);
    expect(statuses).toEqual([201, 201, 201]);
    t.clock.advance(60);
  });

  it('the relational bucket and the 10-per-minute bucket are independent', async () => {
    const plain = await saveQuery(t, 'rl', { time_range: 600 });
    const relational = await saveQuery(t, 'rl', { breakdowns: ['root.name'], time_range: 600 });
    // The relational bucket spent first leaves the plain one whole …
    expect((await create(relational)).statusCode).toBe(201);
    expect429(await create(relational));
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await create(plain)).statusCode);
    expect(statuses).toEqual(Array(10).fill(201));
    const eleventh = await create(plain);
    expect429(eleventh);
    expect(String(eleventh.headers.ratelimit)).toMatch(/^limit=10, remaining=0/);
    // … and once both refill, the plain bucket spent leaves the relational one whole.
    t.clock.advance(60);
    for (let i = 0; i < 10; i++) expect((await create(plain)).statusCode).toBe(201);
    expect429(await create(plain));
    expect((await create(relational)).statusCode).toBe(201);
    expect429(await create(relational));
  });
});
