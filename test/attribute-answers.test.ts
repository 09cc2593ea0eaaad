// The same answers whether a dataset's fields are table columns or attributes (src/stores/events/
// placement.ts): two apps on DuckDB take the same events, one with its usual hot columns and one
// with every field an attribute (WAGGLE_HOT_COLUMNS=0), and answer an SLO's detail (its SLI a
// calculated field over the fields), BubbleUp, a service map and a trigger's query alike. (Every
// query op, filter and breakdown is compared against a reference in the query-correctness suite,
// on both layouts and engines.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { columnsOf } from './ingest-helpers.js';
import { ingest, runQuery } from './query-helpers.js';
import { rng } from './query-reference.js';
import { isColumn } from '../src/stores/events/placement.js';

const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const SERVICES = ['frontend', 'cart', 'payments', "o'brien"];

/** Traces of three spans (a root and two children in other services), with durations, statuses and errors. */
function events() {
  const r = rng(7);
  const out: { time: string; samplerate: number; data: Record<string, unknown> }[] = [];
  for (let t = 0; t < 150; t++) {
    const ageMs = (t < 40 ? 1_000 : 130_000) + r() * 200_000;
    const trace = `t${t}`;
    const root = SERVICES[t % 2];
    for (const [i, service] of [root, SERVICES[2 + (t % 2)], SERVICES[(t + 1) % 4]].entries()) {
      out.push({
        time: new Date(T0 - ageMs - i * 10).toISOString(),
        samplerate: 1 + (t % 3),
        data: {
          'trace.trace_id': trace,
          'trace.span_id': `${trace}.${i}`,
          ...(i > 0 ? { 'trace.parent_id': `${trace}.0` } : {}),
          'service.name': service,
          duration_ms: Math.round((t < 40 ? 400 : 80) * (0.5 + r()) * 100) / 100,
          status: r() < (t < 40 ? 0.4 : 0.05) ? 500 : 200,
          error: r() < 0.1,
          region: ['eu', 'us', null][Math.floor(r() * 3)],
        },
      });
    }
  }
  return out;
}

describe('SLOs, BubbleUp, service maps and triggers answer alike on columns and on attributes', { timeout: 120_000 }, () => {
  let columns: TestApp;
  let attributes: TestApp;
  const apps = () => [columns, attributes] as const;
  const send = (t: TestApp, method: 'POST' | 'GET', url: string, body?: unknown) =>
    t.app.inject({ method, url, headers: body === undefined ? t.config : { ...t.config, 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });

  beforeAll(async () => {
    [columns, attributes] = await Promise.all([makeApp({ settings: { evaluationTickMs: 0 } }), makeApp({ settings: { evaluationTickMs: 0, hotColumns: 0 } })]);
    for (const t of apps()) {
      t.clock.ms = T0;
      await ingest(t, 'shop', events());
    }
    // The two layouts, as meant.
    expect([...(await columnsOf(columns, 'shop')).values()].every((c) => isColumn(c.physical))).toBe(true);
    expect([...(await columnsOf(attributes, 'shop')).values()].some((c) => isColumn(c.physical))).toBe(false);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(apps().map((t) => t?.close()));
  });

  it('an SLO over a calculated field of the fields: the same detail', async () => {
    const details = [];
    for (const t of apps()) {
      const sli = await send(t, 'POST', '/1/derived_columns/shop', { alias: 'good', expression: 'AND(LT($duration_ms, 300), NOT($error), LT($status, 500))' });
      expect(sli.statusCode, sli.body).toBe(201);
      const slo = await send(t, 'POST', '/1/slos/shop', { name: 'Checkout', sli: { alias: 'good' }, time_period_days: 1, target_per_million: 990000 });
      expect(slo.statusCode, slo.body).toBe(201);
      const res = await send(t, 'GET', `/1/slos/shop/${json(slo).id}?detailed=true`);
      expect(res.statusCode, res.body).toBe(200);
      const { compliance, budget_remaining } = json(res);
      details.push({ compliance, budget_remaining });
    }
    expect(details[0].compliance).toBeLessThan(100);
    expect(details[1]).toEqual(details[0]);
  });

  it('BubbleUp of a selection: the same columns, values and scores', async () => {
    const answers = [];
    for (const t of apps()) {
      const now = Math.floor(t.clock.ms / 1000);
      const res = await send(t, 'POST', '/1/bubbleup/shop', {
        query: { time_range: 900 },
        selection: { start_time: now - 120, end_time: now + 1, column: 'duration_ms', lower: 150, upper: 10_000 },
      });
      expect(res.statusCode, res.body).toBe(200);
      answers.push(json(res));
    }
    expect(answers[0].columns.length).toBeGreaterThan(3);
    expect(answers[1]).toEqual(answers[0]);
  });

  it('a service map: the same edges and counts', async () => {
    const maps = [];
    for (const t of apps()) {
      const created = await send(t, 'POST', '/1/maps/dependencies/requests', { time_range: 3600 });
      expect([200, 201], created.body).toContain(created.statusCode);
      const id = json(created).request_id;
      let body;
      for (let i = 0; (body = json(await send(t, 'GET', `/1/maps/dependencies/requests/${id}?page[size]=100`))).status === 'pending' && i < 2000; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(body.status).toBe('ready');
      maps.push(body.dependencies);
    }
    expect(maps[0].length).toBeGreaterThan(2);
    expect(maps[1]).toEqual(maps[0]);
  });

  it("a trigger's query (a filter, a breakdown, a percentile): the same result", async () => {
    const results = [];
    for (const t of apps()) {
      const q = await send(t, 'POST', '/1/queries/shop', {
        calculations: [{ op: 'COUNT' }, { op: 'P95', column: 'duration_ms' }, { op: 'COUNT_DISTINCT', column: 'trace.trace_id' }],
        filters: [{ column: 'region', op: 'exists' }, { column: 'error', op: '=', value: false }],
        breakdowns: ['service.name', 'status'],
        time_range: 900,
      });
      expect(q.statusCode, q.body).toBe(200);
      const created = await send(t, 'POST', '/1/query_results/shop', { query_id: json(q).id });
      let result = json(created);
      for (let i = 0; !result.complete && i < 2000; i++) {
        await new Promise((r) => setTimeout(r, 5));
        result = json(await send(t, 'GET', `/1/query_results/shop/${result.id}`));
      }
      results.push(result.data);
    }
    expect(results[0].results.length).toBeGreaterThan(4);
    expect(results[1]).toEqual(results[0]);
  });
});

describe('an attribute keeps every value as it was sent', () => {
  it('bytes that mark or escape an entry in its bucket, empty strings and text that looks like an entry read back the same as from a column', async () => {
    // Each field is in one bucket (WAGGLE_HOT_COLUMNS=0 and one bucket at 64 MB) with the others:
    // a value that spells another field's entry must not be read as that field.
    const values = ['plain', '', 'a\u0001b', '\u0002a', '\u0002b\u0001', 'x=y', '\u0001', '\u0002', 'é 🐝', "o'brien", ...[1, 2, 3, 4, 5, 6].map((k) => `\u0001${k}=spoof`)];
    const sent = values.map((v, i) => ({ data: { s: v, n: i, [`k${i % 3}`]: v } }));
    const apps = await Promise.all([makeApp({}), makeApp({ settings: { hotColumns: 0 }, eventStoreLimits: { memoryBytes: 64 * 1024 ** 2 } })]);
    try {
      const answers = [];
      for (const t of apps) {
        await ingest(t, 'bytes', sent);
        const r = await runQuery(t, 'bytes', { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'n' }], breakdowns: ['s', 'k0', 'k1', 'k2'], time_range: 3600 });
        answers.push(r.data.results.map((x: { data: Record<string, unknown> }) => x.data));
      }
      // (A breakdown's NULL is left out of a result's data.)
      const expected = values.map((v, i) => ({ s: v, [`k${i % 3}`]: v, COUNT: 1, 'SUM(n)': i }));
      const order = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => Number(a['SUM(n)']) - Number(b['SUM(n)']));
      expect(order(answers[0])).toEqual(expected);
      expect(order(answers[1])).toEqual(expected);
      expect([...(await columnsOf(apps[1], 'bytes')).values()].some((c) => isColumn(c.physical))).toBe(false);
    } finally {
      await Promise.all(apps.map((t) => t.close()));
    }
  });
});
