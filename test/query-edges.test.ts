// /1/query_results at its edges, through HTTP against the real app and stores: the window's
// truncation (1/5/30-minute rounding proven by events just inside and outside the rounded
// bounds), the 7-day limits, the rate-limit buckets (relational prefixes, no Retry-After),
// filter value conversion, hostile real column names, CONCURRENCY and RATE_* on sampled data,
// having operators, `compare_time_offset_seconds`, mixed column types in `__all__`, the
// expression language through inline calculated fields, and percentiles at their edges (the
// unweighted, one-rate and weighted plans; exact cumulative boundaries). Expected answers are
// computed here or by test/query-reference.ts from the events as sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest, pollResult, runQuery, saveQuery } from './query-helpers.js';
import { aggregate, concurrency, groupBy, ratesByBucket, rng, type RefEvent } from './query-reference.js';

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

describe('query results on real data: filter values, hostile column names, havings, __all__', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;
  const at = (k: number) => iso(nowS - 3600 + k * 7);

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    nowS = setClock(t);
  });
  afterAll(() => t.close());

  /** The `k` of every event a query counts (breakdown on `k`). */
  const ks = async (dataset: string, spec: object): Promise<number[]> => {
    const body = await runQuery(t, dataset, { breakdowns: ['k'], time_range: 7200, ...spec }, { disable_series: true });
    return body.data.results.map((r: any) => r.data.k).sort((a: number, b: number) => a - b);
  };

  it('filter values are converted to the column’s type; an unconvertible value matches nothing', async () => {
    // Column types: k, status integer; d float; code, name string; flag boolean.
    await ingest(t, 'conv', [
      { time: at(1), data: { k: 1, status: 200, code: '10', name: 'apple', d: 2.5, flag: true } },
      { time: at(2), data: { k: 2, status: 201, code: '9', name: 'banana', d: 10.25, flag: false } },
      { time: at(3), data: { k: 3, status: 404, code: 'abc', name: 'cherry', d: 100.5, flag: true } },
      { time: at(4), data: { k: 4, status: 500, code: '100', name: 'Banana', flag: false } },
      { time: at(5), data: { k: 5, name: 'date' } },
    ]);
    const ALL = [1, 2, 3, 4, 5];
    const cases: [string, string, unknown, number[]][] = [
      // strings for a number column are read as numbers
      ['status', 'in', ['200', '404'], [1, 3]],
      ['status', 'not-in', ['200', '404'], [2, 4, 5]],
      ['status', 'in', ['200.0'], [1]],
      ['status', '=', '200', [1]],
      ['status', '!=', '200', [2, 3, 4, 5]],
      ['status', '>', '250', [3, 4]],
      ['status', '<=', '201', [1, 2]],
      ['d', '=', '10.25', [2]],
      ['d', '>=', '10.25', [2, 3]],
      // a value that is not a number matches nothing (and every event is "not" it)
      ['status', '=', 'abc', []],
      ['status', '!=', 'abc', ALL],
      ['status', '>', 'abc', []],
      ['status', 'in', ['abc'], []],
      ['status', 'in', ['abc', '500'], [4]],
      ['status', 'not-in', ['abc'], ALL],
      ['flag', '=', 'true', [1, 3]],
      ['flag', '=', 'yes', []],
      ['flag', '!=', 'yes', ALL],
      ['name', '=', 5, []],
      // > and < on text compare text (byte-wise: "Banana" < "apple" < "b")
      ['name', '>', 'b', [2, 3, 5]],
      ['name', '>=', 'banana', [2, 3, 5]],
      ['name', '<', 'banana', [1, 4]],
      ['name', '<=', 'apple', [1, 4]],
      // a number against a text column compares numbers; a string compares text
      ['code', '>', 50, [4]],
      ['code', '<', 10, [2]],
      ['code', '>', '50', [2, 3]],
      // starts-with, ends-with, contains work on a number's text form
      ['status', 'starts-with', '20', [1, 2]],
      ['status', 'ends-with', '0', [1, 4]],
      ['status', 'contains', '0', [1, 2, 3, 4]],
      ['status', 'contains', 4, [3]],
      ['status', 'does-not-contain', '0', [5]],
      ['status', 'does-not-start-with', '5', [1, 2, 3, 5]],
      ['d', 'starts-with', '10', [2, 3]],
      ['d', 'ends-with', '.5', [1, 3]],
      ['flag', 'starts-with', 't', [1, 3]],
    ];
    for (const [column, op, value, expected] of cases) {
      expect(await ks('conv', { filters: [{ column, op, value }] }), `${column} ${op} ${JSON.stringify(value)}`).toEqual(expected);
    }
  });

  it('hostile real column names as breakdown, calculation column, filter column, order and inline field', async () => {
    const INJ = 'a"; DROP TABLE x; --';
    const QUOTE = "it's";
    const DOT = 'weird.col';
    const UNI = 'üñí 🐝';
    const DOLLAR = '$dollar';
    const groups = ['x', "o'k", 'x"y'];
    const events = Array.from({ length: 24 }, (_, i) => ({
      timeMs: (nowS - 3000 + i * 60) * 1000,
      samplerate: 1 + (i % 2),
      fields: {
        [INJ]: groups[i % 3],
        [QUOTE]: (i * 7) % 11,
        [DOT]: i % 4 !== 0,
        [UNI]: i < 12 ? 'früh 🐝' : 'spät',
        [DOLLAR]: i * 1.5,
      } as Record<string, string | number | boolean>,
    }));
    await ingest(t, 'hostile', events.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields })));
    const cols = await t.app.inject({ method: 'GET', url: '/1/columns/hostile', headers: t.config });
    expect(cols.statusCode).toBe(200);
    expect(json(cols).map((c: any) => c.key_name).sort()).toEqual([INJ, QUOTE, DOT, UNI, DOLLAR].sort());

    const spec = {
      calculations: [{ op: 'COUNT' }, { op: 'SUM', column: QUOTE }, { op: 'MAX', column: DOLLAR }, { op: 'P50', column: QUOTE }, { op: 'SUM', column: 'twice' }],
      breakdowns: [INJ, UNI],
      filters: [{ column: DOT, op: '=', value: true }, { column: DOLLAR, op: '>', value: 2 }],
      orders: [{ op: 'SUM', column: QUOTE, order: 'descending' }],
      havings: [{ calculate_op: 'COUNT', op: '>', value: 2 }],
      calculated_fields: [{ name: 'twice', expression: `$"${QUOTE}" * 2 + IF($weird.col, 0, 1000) + LENGTH($"${INJ.replace(/"/g, '\\"')}")` }],
      time_range: 7200,
    };
    const body = await runQuery(t, 'hostile', spec, { disable_series: true, disable_total_by_aggregate: false });
    const matching = events.filter((e) => e.fields[DOT] === true && (e.fields[DOLLAR] as number) > 2);
    const byKey = groupBy(matching, (e) => `${e.fields[INJ]}|${e.fields[UNI]}`);
    const expected = [...byKey.values()]
      .map((evs) => ({
        [INJ]: evs[0].fields[INJ],
        [UNI]: evs[0].fields[UNI],
        COUNT: aggregate(evs, 'COUNT'),
        [`SUM(${QUOTE})`]: aggregate(evs, 'SUM', QUOTE),
        [`MAX(${DOLLAR})`]: aggregate(evs, 'MAX', DOLLAR),
        [`P50(${QUOTE})`]: aggregate(evs, 'P50', QUOTE),
        'SUM(twice)': evs.reduce((s, e) => s + ((e.fields[QUOTE] as number) * 2 + String(e.fields[INJ]).length) * e.samplerate, 0),
      }))
      .filter((g) => g.COUNT! > 2)
      .sort((a, b) => (b[`SUM(${QUOTE})`] as number) - (a[`SUM(${QUOTE})`] as number));
    expect(expected.length).toBeGreaterThan(2);
    expect(body.data.results.map((r: any) => r.data)).toEqual(expected);
    expect(body.data.total_by_aggregate.data.COUNT).toBe(aggregate(matching, 'COUNT'));

    // A filter on each hostile name alone.
    const count = async (filter: object) =>
      (await runQuery(t, 'hostile', { filters: [filter], time_range: 7200 }, { disable_series: true })).data.results[0]?.data.COUNT ?? 0;
    const weight = (pred: (e: (typeof events)[number]) => boolean) => aggregate(events.filter(pred), 'COUNT');
    expect(await count({ column: INJ, op: '=', value: "o'k" })).toBe(weight((e) => e.fields[INJ] === "o'k"));
    expect(await count({ column: INJ, op: 'in', value: ['x"y', 'x'] })).toBe(weight((e) => e.fields[INJ] !== "o'k"));
    expect(await count({ column: QUOTE, op: '>=', value: 5 })).toBe(weight((e) => (e.fields[QUOTE] as number) >= 5));
    expect(await count({ column: UNI, op: 'contains', value: '🐝' })).toBe(weight((e) => String(e.fields[UNI]).includes('🐝')));
    expect(await count({ column: DOLLAR, op: '<', value: 3 })).toBe(weight((e) => (e.fields[DOLLAR] as number) < 3));

    // The table is intact: every event is still there and ingest still works.
    const all = await runQuery(t, 'hostile', { time_range: 7200 }, { disable_series: true });
    expect(all.data.results).toEqual([{ data: { COUNT: aggregate(events, 'COUNT') } }]);
    await ingest(t, 'hostile', [{ time: iso(nowS - 10), data: { [INJ]: 'after' } }]);
    const after = await runQuery(t, 'hostile', { breakdowns: [INJ], filters: [{ column: INJ, op: '=', value: 'after' }], time_range: 7200 }, { disable_series: true });
    expect(after.data.results).toEqual([{ data: { [INJ]: 'after', COUNT: 1 } }]);
  });

  it('having operators =, !=, >=, <= (and > , <) on decomposable and non-decomposable calculations', async () => {
    // Groups of 3, 5, 5 and 7 events; v is 1…n within each group.
    const sizes: Record<string, number> = { g3: 3, g5a: 5, g5b: 5, g7: 7 };
    const events: { time: string; data: Record<string, unknown> }[] = [];
    let i = 0;
    for (const [g, n] of Object.entries(sizes)) for (let v = 1; v <= n; v++) events.push({ time: at(i++), data: { g, v } });
    await ingest(t, 'havings', events);
    const groupsWith = async (havings: object[], calculations: object[] = [{ op: 'COUNT' }]) => {
      const body = await runQuery(t, 'havings', { calculations, breakdowns: ['g'], havings, time_range: 7200 }, { disable_series: true });
      return body.data.results.map((r: any) => r.data.g).sort();
    };
    const count = (op: string, value: number) => groupsWith([{ calculate_op: 'COUNT', op, value }]);
    expect(await count('=', 5)).toEqual(['g5a', 'g5b']);
    expect(await count('!=', 5)).toEqual(['g3', 'g7']);
    expect(await count('>=', 5)).toEqual(['g5a', 'g5b', 'g7']);
    expect(await count('<=', 5)).toEqual(['g3', 'g5a', 'g5b']);
    expect(await count('>', 5)).toEqual(['g7']);
    expect(await count('<', 5)).toEqual(['g3']);
    expect(await count('=', 4)).toEqual([]);
    // AVG(v) is (n + 1) / 2: 2, 3, 3, 4; two havings must both hold.
    const avg = [{ op: 'AVG', column: 'v' }, { op: 'COUNT' }];
    expect(await groupsWith([{ calculate_op: 'AVG', column: 'v', op: '=', value: 3 }], avg)).toEqual(['g5a', 'g5b']);
    expect(await groupsWith([{ calculate_op: 'AVG', column: 'v', op: '>=', value: 3 }, { calculate_op: 'COUNT', op: '!=', value: 7 }], avg)).toEqual(['g5a', 'g5b']);
    // P50 (nearest rank ⌈n/2⌉-th of 1…n): 2, 3, 3, 4 (one statement per part).
    const p50 = [{ op: 'P50', column: 'v' }];
    expect(await groupsWith([{ calculate_op: 'P50', column: 'v', op: '<=', value: 3 }], p50)).toEqual(['g3', 'g5a', 'g5b']);
    expect(await groupsWith([{ calculate_op: 'P50', column: 'v', op: '!=', value: 3 }], p50)).toEqual(['g3', 'g7']);
    expect(await groupsWith([{ calculate_op: 'P50', column: 'v', op: '=', value: 4 }], p50)).toEqual(['g7']);
    expect(await groupsWith([{ calculate_op: 'P50', column: 'v', op: '>=', value: 2 }], p50)).toEqual(['g3', 'g5a', 'g5b', 'g7']);
  });

  it('compare_time_offset_seconds: the answer is that of the same query without it, plus data.comparison', async () => {
    await ingest(t, 'compare', [
      { time: iso(nowS - 600), data: { s: 'now', n: 1 } },
      { time: iso(nowS - 1200), data: { s: 'now', n: 2 } },
      // In the window a comparison a day back would read.
      { time: iso(nowS - DAY - 600), data: { s: 'yesterday', n: 100 } },
    ]);
    const base = { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'n' }], breakdowns: ['s'], time_range: 3600, granularity: 60 };
    const withOffset = await runQuery(t, 'compare', { ...base, compare_time_offset_seconds: DAY }, { disable_total_by_aggregate: false });
    const without = await runQuery(t, 'compare', base, { disable_total_by_aggregate: false });
    expect(withOffset.query.compare_time_offset_seconds).toBe(DAY);
    const { comparison, ...rest } = withOffset.data;
    expect(rest).toEqual(without.data);
    expect(comparison.results).toEqual([{ data: { s: 'yesterday', COUNT: 1, 'SUM(n)': 100 } }]);
    expect(withOffset.data.results).toEqual([{ data: { s: 'now', COUNT: 2, 'SUM(n)': 3 } }]);
  });

  // (last: its datasets join the environment, which __all__ reads)
  it('__all__: a column whose type differs between datasets is read as text', async () => {
    await ingest(t, 'mixed-int', [
      { time: at(1), data: { mixed: 200 } },
      { time: at(2), data: { mixed: 404 } },
      { time: at(3), data: { mixed: 200 } },
    ]);
    await ingest(t, 'mixed-text', [
      { time: at(4), data: { mixed: '200' } },
      { time: at(5), data: { mixed: 'abc' } },
      { time: at(6), data: { mixed: '404x' } },
    ]);
    const run = (dataset: string, spec: object) =>
      runQuery(t, dataset, { filters: [{ column: 'mixed', op: 'exists' }], time_range: 7200, ...spec }, { disable_series: true });
    // Alone, the integer dataset's values are numbers.
    expect((await run('mixed-int', { breakdowns: ['mixed'] })).data.results).toEqual([
      { data: { mixed: 200, COUNT: 2 } },
      { data: { mixed: 404, COUNT: 1 } },
    ]);
    // Across both they are text: 200 and "200" are one group.
    expect((await run('__all__', { breakdowns: ['mixed'] })).data.results).toEqual([
      { data: { mixed: '200', COUNT: 3 } },
      { data: { mixed: '404', COUNT: 1 } },
      { data: { mixed: '404x', COUNT: 1 } },
      { data: { mixed: 'abc', COUNT: 1 } },
    ]);
    const count = async (filter: object) => (await run('__all__', { filters: [{ column: 'mixed', op: 'exists' }, filter] })).data.results[0]?.data.COUNT ?? 0;
    expect(await count({ column: 'mixed', op: '=', value: '200' })).toBe(3);
    expect(await count({ column: 'mixed', op: '=', value: 200 })).toBe(3);
    expect(await count({ column: 'mixed', op: 'starts-with', value: '40' })).toBe(2);
    // a number compares numerically where the text is a number; a string compares text
    expect(await count({ column: 'mixed', op: '>', value: 300 })).toBe(1);
    expect(await count({ column: 'mixed', op: '>', value: '3' })).toBe(3);
    // Numeric ops read the numeric texts as numbers.
    const max = await run('__all__', { calculations: [{ op: 'MAX', column: 'mixed' }, { op: 'SUM', column: 'mixed' }] });
    expect(max.data.results).toEqual([{ data: { 'MAX(mixed)': 404, 'SUM(mixed)': 1004 } }]);
  });
});

describe('CONCURRENCY and RATE_* on sampled data', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;
  let events: RefEvent[];

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    nowS = setClock(t);
    const r = rng(11);
    const counters: Record<string, number> = { api: 0, db: 1000 };
    let ms = (floorTo(nowS - 7200, 60) + 5) * 1000;
    events = [];
    while (events.length < 500) {
      const service = r() < 0.5 ? 'api' : 'db';
      counters[service] += Math.floor(r() * 60) - 8; // mostly rising, sometimes falling
      const fields: Record<string, string | number> = { service, counter: counters[service] };
      if (r() < 0.9) fields.duration_ms = Math.floor(r() * 180_000); // spans up to 3 minutes
      const e = { timeMs: ms, samplerate: [1, 2, 5, 10][Math.floor(r() * 4)], fields };
      events.push(e);
      // Now and then the same event twice at the same instant (a pair with Δt = 0, same value).
      if (r() < 0.05) events.push({ ...e, fields: { ...fields }, samplerate: 3 });
      ms += 1000 + Math.floor(r() * 13_000);
    }
    expect(ms / 1000).toBeLessThan(nowS);
    await ingest(t, 'spans', events.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields })));
  });
  afterAll(() => t.close());

  it('RATE_*: events at one instant are taken in ascending value, so the next rate starts from the largest', async () => {
    const t0 = (floorTo(nowS - 3600, 60) + 5) * 1000;
    const at = (s: number, counter: number) => ({ time: new Date(t0 + s * 1000).toISOString(), data: { counter } });
    // Sent largest first: a planner ordering by time alone could take 50 before 20.
    await ingest(t, 'ties', [at(0, 10), at(10, 50), at(10, 20), at(20, 60)]);
    const body = await runQuery(t, 'ties', { calculations: ['RATE_MAX', 'RATE_SUM'].map((op) => ({ op, column: 'counter' })), time_range: 7200 });
    // (20 − 10) / 10 s and (60 − 50) / 10 s; the pair 20 → 50 at Δt = 0 is skipped.
    expect(body.data.results[0].data).toEqual({ 'RATE_MAX(counter)': 1, 'RATE_SUM(counter)': 2 });
  });

  it('CONCURRENCY weighs spans by sample rate; RATE_AVG, RATE_SUM, RATE_MAX are unweighted, in results, series and totals', async () => {
    const G = 60;
    const windowEndS = ceilTo(nowS, 60);
    const spec = {
      calculations: [{ op: 'COUNT' }, { op: 'CONCURRENCY' }, ...['RATE_AVG', 'RATE_SUM', 'RATE_MAX'].map((op) => ({ op, column: 'counter' }))],
      breakdowns: ['service'],
      time_range: 7200,
      granularity: G,
    };
    const body = await runQuery(t, 'spans', spec, { disable_total_by_aggregate: false });
    const groups = groupBy(events, (e) => String(e.fields.service));
    const ratesOfGroup = new Map([...groups].map(([k, evs]) => [k, ratesByBucket(evs, 'counter', G)]));
    const rateCalcs = (rates: number[] | undefined) =>
      rates && rates.length
        ? {
            'RATE_AVG(counter)': rates.reduce((a, b) => a + b, 0) / rates.length,
            'RATE_SUM(counter)': rates.reduce((a, b) => a + b, 0),
            'RATE_MAX(counter)': Math.max(...rates),
          }
        : {};
    const expectRow = (data: Record<string, unknown>, expected: Record<string, unknown>, what: string) => {
      expect(Object.keys(data).sort(), what).toEqual(Object.keys(expected).sort());
      for (const [key, want] of Object.entries(expected)) {
        if (typeof want === 'number' && !Number.isInteger(want)) expect(data[key] as number, `${what} ${key}`).toBeCloseTo(want, 9);
        else expect(data[key], `${what} ${key}`).toEqual(want);
      }
    };
    // The weighted concurrency differs from a count of spans (the test would notice unweighted spans).
    const per = (evs: RefEvent[]) => concurrency(evs, 'duration_ms', G, windowEndS);
    const unweighted = concurrency(events.map((e) => ({ ...e, samplerate: 1 })), 'duration_ms', G, windowEndS);
    expect(Math.max(...unweighted.values())).not.toBe(Math.max(...per(events).values()));

    expect(body.data.results.map((r: any) => r.data.service)).toEqual(
      [...groups.keys()].sort((a, b) => aggregate(groups.get(b)!, 'COUNT')! - aggregate(groups.get(a)!, 'COUNT')!),
    );
    for (const r of body.data.results) {
      const evs = groups.get(r.data.service)!;
      const rates = [...ratesOfGroup.get(r.data.service)!.values()].flat();
      expectRow(r.data, { service: r.data.service, COUNT: aggregate(evs, 'COUNT'), CONCURRENCY: Math.max(...per(evs).values()), ...rateCalcs(rates) }, r.data.service);
      expect(r.data['RATE_AVG(counter)']).toBeCloseTo(aggregate(evs, 'RATE_AVG', 'counter')!, 9);
    }
    // Series: every (group, bucket) where events start or a span of the group is still running
    // (there COUNT is 0 and the rates absent), in time order.
    const expectedSeries = groupBy(events, (e) => `${Math.floor(e.timeMs / 1000 / G)}|${e.fields.service}`);
    const seriesKeys = new Set(expectedSeries.keys());
    for (const [service, evs] of groups) for (const b of per(evs).keys()) seriesKeys.add(`${b}|${service}`);
    expect(seriesKeys.size).toBeGreaterThan(expectedSeries.size); // some buckets only running spans cover
    expect(body.data.series).toHaveLength(seriesKeys.size);
    for (const s of body.data.series) {
      const b = Date.parse(s.time) / 1000 / G;
      expect(seriesKeys.has(`${b}|${s.data.service}`), `${s.time} ${s.data.service}`).toBe(true);
      const evs = expectedSeries.get(`${b}|${s.data.service}`) ?? [];
      const all = groups.get(s.data.service)!;
      expectRow(
        s.data,
        { service: s.data.service, COUNT: evs.length ? aggregate(evs, 'COUNT') : 0, CONCURRENCY: per(all).get(b), ...rateCalcs(ratesOfGroup.get(s.data.service)!.get(b)) },
        `series ${s.time} ${s.data.service}`,
      );
    }
    // Totals: every event; rates still taken within each group's own sequence.
    const allRates = [...ratesOfGroup.values()].flatMap((m) => [...m.values()].flat());
    expectRow(body.data.total_by_aggregate.data, { COUNT: aggregate(events, 'COUNT'), CONCURRENCY: Math.max(...per(events).values()), ...rateCalcs(allRates) }, 'total');
    const perBucket = groupBy(events, (e) => String(Math.floor(e.timeMs / 1000 / G)));
    const totalKeys = new Set([...perBucket.keys(), ...[...per(events).keys()].map(String)]);
    expect(body.data.total_by_aggregate_series).toHaveLength(totalKeys.size);
    for (const s of body.data.total_by_aggregate_series) {
      const b = Date.parse(s.time) / 1000 / G;
      const rates = [...ratesOfGroup.values()].flatMap((m) => m.get(b) ?? []);
      const evs = perBucket.get(String(b));
      expectRow(s.data, { COUNT: evs ? aggregate(evs, 'COUNT') : 0, CONCURRENCY: per(events).get(b), ...rateCalcs(rates) }, `total series ${s.time}`);
    }
  });
});

describe('the expression language through /1/query_results (inline calculated fields)', { timeout: 60_000 }, () => {
  type Row = Record<string, string | number | boolean | undefined>;
  const ROWS: Row[] = [
    { k: 1, status: 200, d: 2.5, name: 'Alpha', path: '/users/42/orders', opt: 'x', numtxt: '12.5', flag: true, ts: '2017-07-20T11:22:44.888Z', u: 'héllo😀' },
    { k: 2, status: 503, d: 0.25, name: 'beta', path: '/health', opt: 'y', numtxt: 'abc', flag: false, ts: '2017-07-20T11:22:44+02:00', u: 'abc' },
    { k: 3, status: 404, d: 10.5, name: 'gamma', path: '/users/7', opt: '', numtxt: ' 4e2 ', flag: true, ts: 'garbage', u: '' },
    { k: 4, name: 'Delta' },
  ];
  const has = (v: unknown) => v !== undefined && v !== null;
  const pad = (n: number) => String(n).padStart(2, '0');
  const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  const num = (s: number | undefined) => s as number;
  let t: TestApp;
  let t0: number;
  let ingestedS: number;
  const secs = (r: Row) => (t0 + num(r.k as number) * 1000 + 250) / 1000;

  /** [name, expression, expected value per row (undefined = null, left out of the result)] */
  const FIELDS: [string, string, (r: Row) => unknown][] = [
    // conditionals
    ['c_if', 'IF(GTE($status, 500), "error", EXISTS($status), "ok", "none")', (r) => (!has(r.status) ? 'none' : num(r.status as number) >= 500 ? 'error' : 'ok')],
    ['c_switch', 'SWITCH($name, "Alpha", 1, "beta", 2, 0)', (r) => (r.name === 'Alpha' ? 1 : r.name === 'beta' ? 2 : 0)],
    ['c_coalesce', 'COALESCE($opt, $name)', (r) => (r.opt ? r.opt : r.name)],
    // comparisons
    ['p_lt', 'LT($d, 2.5)', (r) => has(r.d) && (r.d as number) < 2.5],
    ['p_gte_text', 'GTE($name, "beta")', (r) => (r.name as string) >= 'beta'],
    ['p_eq', 'EQUALS($status, 200)', (r) => r.status === 200],
    ['p_eq_kinds', '$status = "200"', () => false],
    ['p_in', 'IN($name, "beta", "gamma")', (r) => ['beta', 'gamma'].includes(r.name as string)],
    ['p_not_in', 'NOT_IN($status, 200, 404)', (r) => ![200, 404].includes(r.status as number)],
    // boolean logic
    ['b_and', 'AND(EXISTS($opt), NOT($flag))', (r) => has(r.opt) && r.flag !== true],
    ['b_or', '$flag OR $status > 500', (r) => r.flag === true || (has(r.status) && (r.status as number) > 500)],
    // arithmetic and coercion
    ['a_float', '$d * 2 + 1', (r) => (has(r.d) ? (r.d as number) * 2 + 1 : undefined)],
    ['a_int', '$status + 1', (r) => (has(r.status) ? (r.status as number) + 1 : undefined)],
    ['a_text', 'SUM($numtxt, 1)', (r) => (has(r.numtxt) ? (Number.isNaN(Number(r.numtxt)) ? 0 : Number(r.numtxt)) + 1 : undefined)],
    ['a_div', '$status / 8', (r) => (has(r.status) ? (r.status as number) / 8 : undefined)],
    ['a_div0', 'DIV($status, 0)', () => undefined],
    ['a_mod', 'MOD($status, 7)', (r) => (has(r.status) ? (r.status as number) % 7 : undefined)],
    ['a_sub', 'SUB($status, $d)', (r) => (has(r.status) ? (r.status as number) - (r.d as number) : undefined)],
    ['a_mul_bool', 'MUL($status, $flag)', (r) => (has(r.status) ? 0 : undefined)],
    // MIN / MAX, LOG10, BUCKET
    ['m_min', 'MIN($status, $d)', (r) => (has(r.status) ? Math.min(r.status as number, r.d as number) : undefined)],
    ['m_max_text', 'MAX($name, "b")', (r) => [r.name as string, 'b'].sort().pop()],
    ['l_log10', 'LOG10($status)', (r) => (has(r.status) ? Math.log10(r.status as number) : undefined)],
    ['k_bucket', 'BUCKET($status, 100)', (r) => (has(r.status) ? `[${floorTo(r.status as number, 100)}, ${floorTo(r.status as number, 100) + 100})` : undefined)],
    ['k_bounds', 'BUCKET($status, 100, 300, 500)', (r) => {
      if (!has(r.status)) return undefined;
      const s = r.status as number;
      return s < 300 ? '(-inf, 300)' : s >= 500 ? '[500, +inf)' : `[${floorTo(s, 100)}, ${floorTo(s, 100) + 100})`;
    }],
    // casts
    ['x_int', 'INT($d)', (r) => (has(r.d) ? Math.trunc(r.d as number) : undefined)],
    ['x_float', 'FLOAT($status)', (r) => r.status],
    ['x_bool', 'BOOL($status)', (r) => has(r.status) && r.status !== 0],
    ['x_string', 'STRING($status)', (r) => (has(r.status) ? String(r.status) : '')],
    // strings
    ['s_concat', 'CONCAT($name, "-", $status)', (r) => `${r.name}-${r.status ?? ''}`],
    ['s_starts', 'STARTS_WITH($path, "/users")', (r) => typeof r.path === 'string' && r.path.startsWith('/users')],
    ['s_suffix', 'SUFFIX($path, "s")', (r) => typeof r.path === 'string' && r.path.endsWith('s')],
    ['s_contains', 'CONTAINS($path, "42")', (r) => typeof r.path === 'string' && r.path.includes('42')],
    ['s_lower', 'TO_LOWER($name)', (r) => (r.name as string).toLowerCase()],
    ['s_len', 'LENGTH($u)', (r) => (has(r.u) ? [...(r.u as string)].length : undefined)],
    ['s_bytes', 'LENGTH($u, "bytes")', (r) => (has(r.u) ? Buffer.byteLength(r.u as string) : undefined)],
    // regular expressions
    ['r_match', 'REG_MATCH($path, `^/users/\\d+`)', (r) => typeof r.path === 'string' && /^\/users\/\d+/.test(r.path)],
    ['r_value', 'REG_VALUE($path, `/users/(\\d+)`)', (r) => (typeof r.path === 'string' ? /\/users\/(\d+)/.exec(r.path)?.[1] : undefined)],
    ['r_count', 'REG_COUNT($path, `/`)', (r) => (typeof r.path === 'string' ? r.path.split('/').length - 1 : 0)],
    // time
    ['t_unix', 'UNIX_TIMESTAMP($ts)', (r) => (typeof r.ts === 'string' && !Number.isNaN(Date.parse(r.ts)) ? Date.parse(r.ts) / 1000 : undefined)],
    ['t_event', 'EVENT_TIMESTAMP()', (r) => secs(r)],
    ['t_ingest', 'INGEST_TIMESTAMP()', () => ingestedS],
    ['t_format', 'FORMAT_TIME("%Y-%m-%d %H:%M:%S", EVENT_TIMESTAMP())', (r) => {
      const d = new Date(secs(r) * 1000);
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    }],
    ['t_format_ts', 'FORMAT_TIME("%A %B %-d", UNIX_TIMESTAMP($ts))', (r) => {
      if (typeof r.ts !== 'string' || Number.isNaN(Date.parse(r.ts))) return undefined;
      const d = new Date(Date.parse(r.ts));
      return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
    }],
  ];

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const nowS = setClock(t);
    t0 = (nowS - 3600) * 1000;
    ingestedS = nowS;
    await ingest(
      t,
      'exprs',
      ROWS.map((r) => ({ time: new Date(secs(r) * 1000).toISOString(), data: Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) })),
    );
    t.clock.advance(5);
  });
  afterAll(() => t.close());

  it('every function family, per event (as breakdowns), matches values computed here', async () => {
    const calculated_fields = FIELDS.map(([name, expression]) => ({ name, expression }));
    const body = await runQuery(t, 'exprs', { breakdowns: ['k', ...FIELDS.map(([name]) => name)], calculated_fields, time_range: 7200 }, { disable_series: true });
    expect(body.data.results.map((x: any) => x.data.k)).toEqual([1, 2, 3, 4]);
    for (const [i, row] of ROWS.entries()) {
      const data = body.data.results[i].data;
      expect(data.COUNT).toBe(1);
      for (const [name, expression, expected] of FIELDS) {
        const want = expected(row);
        const what = `${expression} on event ${row.k}`;
        if (want === undefined || want === null) expect(data[name], what).toBeUndefined();
        else if (typeof want === 'number' && !Number.isInteger(want)) expect(data[name] as number, what).toBeCloseTo(want, 6);
        else expect(data[name], what).toEqual(want);
      }
    }
  });

  it('inline fields as calculation columns, filters and orders', async () => {
    const calculated_fields = FIELDS.map(([name, expression]) => ({ name, expression }));
    const field = (name: string) => FIELDS.find((f) => f[0] === name)![2];
    const body = await runQuery(
      t,
      'exprs',
      {
        calculations: [{ op: 'SUM', column: 'a_float' }, { op: 'MAX', column: 'r_count' }, { op: 'COUNT' }],
        breakdowns: ['c_if'],
        filters: [{ column: 'b_or', op: '=', value: true }, { column: 'r_value', op: 'does-not-exist' }],
        filter_combination: 'OR',
        orders: [{ column: 'c_if', order: 'ascending' }],
        calculated_fields,
        time_range: 7200,
      },
      { disable_series: true },
    );
    const matching = ROWS.filter((r) => field('b_or')(r) === true || field('r_value')(r) === undefined);
    const groups = groupBy(matching, (r) => String(field('c_if')(r)));
    expect(body.data.results.map((x: any) => x.data)).toEqual(
      [...groups.keys()].sort().map((g) => {
        const rows = groups.get(g)!;
        const floats = rows.map((r) => field('a_float')(r)).filter((v): v is number => typeof v === 'number');
        return { c_if: g, 'SUM(a_float)': floats.reduce((a, b) => a + b, 0), 'MAX(r_count)': Math.max(...rows.map((r) => field('r_count')(r) as number)), COUNT: rows.length };
      }),
    );
  });
});

describe('sample-weighted percentiles over values of every magnitude and sign', { timeout: 60_000 }, () => {
  // The weighted plan (weightedPercentileCtes in src/stores/events/duckdb-query.ts) finds each group's bucket of the
  // value first and sorts only that bucket's events: negative values, zeros, values from 1e-6 to
  // 1e12, runs of equal values that straddle the target rank, a group key that is the value itself
  // and a missing (null) group key must all give the exact nearest rank.
  let t: TestApp;
  let events: RefEvent[];

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const nowS = setClock(t);
    const r = rng(29);
    const start = (floorTo(nowS - 7000, 60) + 5) * 1000;
    events = Array.from({ length: 1200 }, (_, i) => {
      const kind = i % 6;
      const magnitude = 10 ** (Math.floor(r() * 19) - 6); // 1e-6 … 1e12
      const v = kind === 0 ? 0 : kind === 1 ? -Math.round(r() * 1000) / 10 : kind === 2 ? 42.5 : kind === 3 ? magnitude * (1 + r()) : Math.round(r() * 5000) / 100;
      const fields: Record<string, string | number> = { v, small: Math.floor(v) % 3 === 0 ? 1 : 2 };
      if (i % 5 !== 0) fields.g = ['a', 'b', 'c'][i % 3];
      return { timeMs: start + i * 5000, samplerate: [1, 1, 1, 3, 10, 100][Math.floor(r() * 6)], fields };
    });
    await ingest(t, 'mixed', events.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields })));
  });
  afterAll(() => t.close());

  it('every percentile, by a group with nulls, by the value itself and over time, equals the reference', async () => {
    const ops = ['P001', 'P01', 'P05', 'P10', 'P20', 'P25', 'P50', 'P75', 'P80', 'P90', 'P95', 'P99', 'P999'];
    const calculations = ops.map((op) => ({ op, column: 'v' }));
    const byGroup = await runQuery(t, 'mixed', { calculations, breakdowns: ['g'], time_range: 7200, granularity: 1800 });
    const groups = groupBy(events, (e) => String(e.fields.g ?? null));
    expect(byGroup.data.results.length).toBe(4);
    for (const row of byGroup.data.results) {
      const evs = groups.get(String(row.data.g ?? null))!;
      for (const op of ops) expect(row.data[`${op}(v)`], `${op} of ${row.data.g}`).toBe(aggregate(evs, op, 'v'));
    }
    // The series: each 30-minute bucket's groups.
    for (const s of byGroup.data.series) {
      const fromMs = Date.parse(s.time);
      const evs = groups.get(String(s.data.g ?? null))!.filter((e) => e.timeMs >= fromMs && e.timeMs < fromMs + 1_800_000);
      if (evs.length) expect(s.data['P99(v)'], `series P99 ${s.time} ${s.data.g}`).toBe(aggregate(evs, 'P99', 'v'));
    }
    // Grouped by the value's own field: each group's percentile is its value.
    const byValue = await runQuery(t, 'mixed', { calculations: [{ op: 'P50', column: 'small' }], breakdowns: ['small'], time_range: 7200 }, { disable_series: true });
    expect(byValue.data.results.map((x: any) => [x.data.small, x.data['P50(small)']]).sort()).toEqual([[1, 1], [2, 2]]);
    const whole = await runQuery(t, 'mixed', { calculations, time_range: 7200 }, { disable_series: true });
    for (const op of ops) expect(whole.data.results[0].data[`${op}(v)`], op).toBe(aggregate(events, op, 'v'));
  });
});

describe('percentiles: the unweighted, the weighted and the one-sample-rate plans agree at the edges', { timeout: 60_000 }, () => {
  // The planner answers a percentile three ways (src/query/plan.ts, src/query/run.ts): DuckDB's
  // quantile_disc when no event of the window is sampled, the same when every event of the window
  // has one sample rate (each cumulative weight is then r × the rank), and the weighted nearest
  // rank (two passes over buckets of the value) otherwise. The same values, sent three times:
  // `plain` (every rate 1), `ones` (every rate 1 but one event of another group with rate 2: the
  // weighted plan runs with every weight of the compared groups 1) and `uniform` (every rate 7),
  // must give the same answers as the exact nearest rank: a group of 1, groups where q·n is an
  // integer for many q (10, 20, 30 and 1,000 values: P10 of 30 is the 3rd), ties across the target
  // rank, events without the value, and a group with no value at all.
  let t: TestApp;
  const GROUPS: Record<string, (number | null)[]> = {
    n1: [5],
    n10: [7, 1, 10, 3, 2, 9, 4, 8, 6, 5],
    n20: Array.from({ length: 20 }, (_, i) => 20 - i),
    n30: Array.from({ length: 30 }, (_, i) => ((i * 7) % 30) + 1),
    n1000: Array.from({ length: 1000 }, (_, i) => ((i * 383) % 1000) + 1),
    nulls: [7, null, 3, 9, null, 3, 7, null, 3, null],
    none: [null, null, null],
  };
  const OPS = ['P001', 'P01', 'P05', 'P10', 'P20', 'P25', 'P50', 'P75', 'P80', 'P90', 'P95', 'P99', 'P999'];
  const refs = new Map<string, RefEvent[]>();

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const nowS = setClock(t);
    const start = (floorTo(nowS - 7000, 60) + 5) * 1000;
    const events = (rate: number) =>
      Object.entries(GROUPS).flatMap(([g, vs]) => vs.map((v) => ({ g, ...(v === null ? {} : { v }) }))).map((data, i) => ({ time: iso((start + i * 1000) / 1000), samplerate: rate, data }));
    for (const [g, vs] of Object.entries(GROUPS)) refs.set(g, vs.map((v) => ({ timeMs: 0, samplerate: 1, fields: v === null ? { g } : { g, v } })));
    await ingest(t, 'plain', events(1));
    await ingest(t, 'ones', [...events(1), { time: iso(start / 1000), samplerate: 2, data: { g: 'z', v: 1 } }]);
    await ingest(t, 'uniform', events(7));
  });
  afterAll(() => t.close());

  it.each(['plain', 'ones', 'uniform'])('every percentile by group equals the exact nearest rank (%s)', async (dataset) => {
    const body = await runQuery(t, dataset, { calculations: [{ op: 'COUNT' }, ...OPS.map((op) => ({ op, column: 'v' }))], breakdowns: ['g'], time_range: 7200 }, { disable_series: true });
    const rows = new Map(body.data.results.map((r: any) => [r.data.g, r.data]));
    expect(rows.size).toBe(Object.keys(GROUPS).length + (dataset === 'ones' ? 1 : 0));
    for (const [g, evs] of refs) {
      const data = rows.get(g) as Record<string, unknown>;
      // (the counts show the sample rates were applied)
      expect(data.COUNT, g).toBe(evs.length * (dataset === 'uniform' ? 7 : 1));
      for (const op of OPS) expect(data[`${op}(v)`], `${op} of ${g}`).toBe(aggregate(evs, op, 'v'));
    }
    expect((rows.get('n30') as any)['P10(v)']).toBe(3);
    expect((rows.get('n1') as any)['P999(v)']).toBe(5);
    expect(rows.get('none')).not.toHaveProperty('P50(v)');
  });
});

describe('sample-weighted percentiles at exact cumulative boundaries', { timeout: 60_000 }, () => {
  // The weighted plan (several sample rates in the window): per group, the smallest value whose
  // cumulative sample-rate weight reaches p × the group's total weight. Pinned where p × total is
  // exactly a cumulative weight (that value, not the next: `b100`, `b1000`, `nulls`), for a group
  // of one event, ties across the target, events without the value (their weight is not in the
  // total), a missing group key and a group with no value at all.
  let t: TestApp;
  const GROUPS: Record<string, [number | null, number][]> = {
    // cumulative weights 1, 10, 50, 100: P01, P10 and P50 land on a boundary
    b100: [[4, 50], [2, 9], [1, 1], [3, 40]],
    // cumulative 989, 999, 1000: P999 lands on 999
    b1000: [[3, 1], [1, 989], [2, 10]],
    one: [[42, 3]],
    // ties: the run of 5s holds cumulative 3 … 63 of 100
    ties: [[5, 20], [1, 1], [5, 30], [9, 37], [5, 10], [2, 2]],
    // the null values' weight (100, 50) is not counted: the total is 4
    nulls: [[null, 100], [7, 1], [3, 2], [null, 50], [9, 1]],
    none: [[null, 10], [null, 1]],
  };
  const OPS = ['P001', 'P01', 'P05', 'P10', 'P20', 'P25', 'P50', 'P75', 'P80', 'P90', 'P95', 'P99', 'P999'];
  const refs = new Map<string, RefEvent[]>();

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const nowS = setClock(t);
    const start = floorTo(nowS - 7000, 60) + 5;
    const rows = [...Object.entries(GROUPS), ['(no key)', [[6, 1], [8, 10]]] as [string, [number | null, number][]]];
    let i = 0;
    const events = rows.flatMap(([g, vs]) =>
      vs.map(([v, w]) => {
        const fields: Record<string, string | number> = g === '(no key)' ? {} : { g };
        if (v !== null) fields.v = v;
        return { timeMs: (start + i++) * 1000, samplerate: w, fields };
      }),
    );
    for (const e of events) {
      const key = String(e.fields.g ?? null);
      refs.set(key, [...(refs.get(key) ?? []), e]);
    }
    await ingest(t, 'edges', events.map((e) => ({ time: iso(e.timeMs / 1000), samplerate: e.samplerate, data: e.fields })));
  });
  afterAll(() => t.close());

  it('every percentile by group equals the weighted nearest rank', async () => {
    const body = await runQuery(t, 'edges', { calculations: [{ op: 'COUNT' }, ...OPS.map((op) => ({ op, column: 'v' }))], breakdowns: ['g'], time_range: 7200 }, { disable_series: true });
    const rows = new Map(body.data.results.map((r: any) => [String(r.data.g ?? null), r.data]));
    expect([...rows.keys()].sort()).toEqual([...refs.keys()].sort());
    for (const [g, evs] of refs) {
      const data = rows.get(g) as Record<string, unknown>;
      expect(data.COUNT, g).toBe(evs.reduce((s, e) => s + e.samplerate, 0));
      for (const op of OPS) expect(data[`${op}(v)`], `${op} of ${g}`).toBe(aggregate(evs, op, 'v'));
    }
    // The boundaries, written out: the value whose cumulative weight is exactly p × total.
    const at = (g: string, op: string) => (rows.get(g) as any)[`${op}(v)`];
    expect([at('b100', 'P01'), at('b100', 'P10'), at('b100', 'P50'), at('b100', 'P99')]).toEqual([1, 2, 3, 4]);
    expect([at('b1000', 'P95'), at('b1000', 'P99'), at('b1000', 'P999')]).toEqual([1, 2, 2]);
    expect([at('one', 'P001'), at('one', 'P999')]).toEqual([42, 42]);
    expect([at('ties', 'P05'), at('ties', 'P50'), at('ties', 'P75')]).toEqual([5, 5, 9]);
    expect([at('nulls', 'P25'), at('nulls', 'P50'), at('nulls', 'P75'), at('nulls', 'P99')]).toEqual([3, 3, 7, 9]);
    expect(rows.get('none')).not.toHaveProperty('P50(v)');
    // Without a breakdown: the same rank over every event.
    const whole = await runQuery(t, 'edges', { calculations: OPS.map((op) => ({ op, column: 'v' })), time_range: 7200 }, { disable_series: true });
    const all = [...refs.values()].flat();
    for (const op of OPS) expect(whole.data.results[0].data[`${op}(v)`], op).toBe(aggregate(all, op, 'v'));
  });
});
