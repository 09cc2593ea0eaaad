// Calculated fields inside queries: dataset and environment-wide derived columns and a query's
// inline `calculated_fields`, used as calculation columns, breakdowns and filters, including a
// field built on another; compared with values computed in TypeScript from the same events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest, runQuery } from './query-helpers.js';
import { aggregate, groupBy, rng, type RefEvent } from './query-reference.js';

describe('calculated fields in queries', { timeout: 60_000 }, () => {
  let t: TestApp;
  let events: RefEvent[];

  const derived = async (dataset: string, alias: string, expression: string) => {
    const res = await t.app.inject({ method: 'POST', url: `/1/derived_columns/${dataset}`, headers: t.config, payload: { alias, expression } });
    expect(res.statusCode, res.body).toBe(201);
  };

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    const r = rng(7);
    const start = (Math.floor(t.clock.ms / 60_000) - 100) * 60_000;
    events = Array.from({ length: 1500 }, (_, i) => ({
      timeMs: start + i * 3000,
      samplerate: 1 + (i % 3),
      fields: {
        status: [200, 200, 404, 500, 503][Math.floor(r() * 5)],
        duration_ms: Math.round(r() * 100_000) / 100,
        route: ['/a', '/b/1', '/b/2', '/c'][Math.floor(r() * 4)],
      },
    }));
    await ingest(
      t,
      'calc',
      events.map((e) => ({ time: new Date(e.timeMs).toISOString(), samplerate: e.samplerate, data: e.fields })),
    );
    await derived('calc', 'is_error', 'GTE($status, 500)');
    await derived('calc', 'slow_error', 'AND($is_error, GT($duration_ms, 500))');
    await derived('__all__', 'route_group', 'IF(STARTS_WITH($route, "/b"), "b", "other")');
  });
  afterAll(() => t.close());

  const isError = (e: RefEvent) => (e.fields.status as number) >= 500;
  const routeGroup = (e: RefEvent) => (String(e.fields.route).startsWith('/b') ? 'b' : 'other');

  it('filters and breaks down on dataset and environment-wide calculated fields', async () => {
    const body = await runQuery(
      t,
      'calc',
      { calculations: [{ op: 'COUNT' }], breakdowns: ['route_group'], filters: [{ column: 'is_error', op: '=', value: true }], time_range: 7200 },
      { disable_series: true },
    );
    const groups = groupBy(events.filter(isError), routeGroup);
    expect(body.data.results).toHaveLength(groups.size);
    for (const r of body.data.results) expect(r.data.COUNT).toBe(aggregate(groups.get(r.data.route_group)!, 'COUNT'));
  });

  it('a calculated field built on another one', async () => {
    const body = await runQuery(t, 'calc', { filters: [{ column: 'slow_error', op: '=', value: true }], time_range: 7200 }, { disable_series: true });
    const expected = events.filter((e) => isError(e) && (e.fields.duration_ms as number) > 500);
    expect(body.data.results[0].data.COUNT).toBe(aggregate(expected, 'COUNT'));
  });

  it('inline calculated_fields as calculation columns, shadowing saved ones', async () => {
    const body = await runQuery(
      t,
      'calc',
      {
        calculations: [{ op: 'SUM', column: 'seconds' }, { op: 'MAX', column: 'is_error' }],
        calculated_fields: [
          { name: 'seconds', expression: 'DIV($duration_ms, 1000)' },
          // Shadows the dataset's is_error for this query only.
          { name: 'is_error', expression: 'IF(EQUALS($status, 404), 1, 0)' },
        ],
        breakdowns: ['route'],
        time_range: 7200,
      },
      { disable_series: true },
    );
    const groups = groupBy(events, (e) => String(e.fields.route));
    for (const r of body.data.results) {
      const evs = groups.get(r.data.route)!;
      const sum = evs.reduce((s, e) => s + ((e.fields.duration_ms as number) / 1000) * e.samplerate, 0);
      expect(Math.abs(r.data['SUM(seconds)'] - sum)).toBeLessThan(1e-6);
      expect(r.data['MAX(is_error)']).toBe(evs.some((e) => e.fields.status === 404) ? 1 : 0);
    }
  });

  it('an inline expression that does not compile is refused when the query is saved', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/1/queries/calc',
      headers: t.config,
      payload: { calculated_fields: [{ name: 'x', expression: 'IF($a, ' }] },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(json(res).type_detail[0].field).toBe('calculated_fields.0.expression');
  });

  it('environment-wide fields work in __all__ queries', async () => {
    const body = await runQuery(t, '__all__', { breakdowns: ['route_group'], time_range: 7200 }, { disable_series: true });
    const groups = groupBy(events, routeGroup);
    for (const r of body.data.results) expect(r.data.COUNT).toBe(aggregate(groups.get(r.data.route_group)!, 'COUNT'));
  });
});
