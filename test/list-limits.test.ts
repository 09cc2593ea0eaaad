// Every list in every request body has a documented maximum, checked before any of its items
// (issue 22: 160,000 burn alert recipients overflowed the stack with one problem per item). Per
// list-bearing resource, a list of 160,000 items that are each invalid must answer one 422 that
// names the list and its limit — one problem, so no item was looked at — and change nothing.
// The OpenAPI document must give every array of every request body a maxItems, and the limits
// table in docs/api.md must list each of them.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest, saveQuery } from './query-helpers.js';
import { expectValidation } from './problems.js';
import { expectJsonApiError } from './v2-helpers.js';

const HUGE = 160_000;
/** `n` items, each of them invalid wherever a list is expected to hold objects or strings. */
const many = (n = HUGE) => Array.from({ length: n }, () => 1);

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** One 422 problem on `field` that states `limit` and the length sent. */
function expectOneLimit(res: Res, field: string, limit: number, sent = HUGE) {
  const body = expectValidation(res, field);
  expect(body.type_detail, res.body.slice(0, 500)).toHaveLength(1);
  expect(body.type_detail[0].description).toContain(`at most ${limit}`);
  expect(body.type_detail[0].description).toContain(String(sent));
}

describe('list limits', () => {
  let t: TestApp;
  const DS = 'limits';
  const send = (method: 'POST' | 'PUT' | 'PATCH', url: string, body: unknown, headers = t.config) =>
    t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  let queryId: string;
  let annotationId: string;
  let sloId: string;
  let emailId: string;

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    await ingest(t, DS, [{ data: { status: 200, service: 'api' } }]);
    queryId = await saveQuery(t, DS, { calculations: [{ op: 'COUNT' }] });
    annotationId = json(await send('POST', `/1/query_annotations/${DS}`, { name: 'a', query_id: queryId })).id;
    expect((await send('POST', `/1/derived_columns/${DS}`, { alias: 'ok', expression: 'LT($status, 500)' })).statusCode).toBe(201);
    sloId = json(await send('POST', `/1/slos/${DS}`, { name: 's', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 })).id;
    emailId = json(await send('POST', '/1/recipients', { type: 'email', details: { email_address: 'limits@example.com' } })).id;
  });
  afterAll(async () => t?.close());

  it('burn alerts: recipients (100) on POST and PUT — the issue 22 case', async () => {
    const base = { slo: { id: sloId }, exhaustion_minutes: 60 };
    expectOneLimit(await send('POST', `/1/burn_alerts/${DS}`, { ...base, recipients: many() }), 'recipients', 100);
    const a = await send('POST', `/1/burn_alerts/${DS}`, { ...base, recipients: [{ id: emailId }] });
    expect(a.statusCode, a.body).toBe(201);
    expectOneLimit(await send('PUT', `/1/burn_alerts/${DS}/${json(a).id}`, { ...base, recipients: many() }), 'recipients', 100);
    expect(json(await t.app.inject({ method: 'GET', url: `/1/burn_alerts/${DS}/${json(a).id}`, headers: t.config })).recipients).toHaveLength(1);
    // 100 is fine: the limit is exact (100 copies of one recipient are refused as repeats, each named).
    const hundred = await send('POST', `/1/burn_alerts/${DS}`, { ...base, recipients: Array.from({ length: 100 }, () => ({ id: emailId })) });
    expect(json(hundred).type_detail.every((d: { field: string }) => /^recipients\.\d+\.id$/.test(d.field))).toBe(true);
  });

  it('triggers: recipients (100), tags (10), days_of_week (7), variables (10) and the query lists', async () => {
    const base = { name: 'limits', query: { calculations: [{ op: 'COUNT' }] }, threshold: { op: '>', value: 1 } };
    const post = (body: Record<string, unknown>) => send('POST', `/1/triggers/${DS}`, { ...base, ...body });
    expectOneLimit(await post({ recipients: many() }), 'recipients', 100);
    expectOneLimit(await post({ tags: many() }), 'tags', 10);
    expectOneLimit(await post({ evaluation_schedule: { window: { days_of_week: many(), start_time: '09:00', end_time: '17:00' } } }), 'evaluation_schedule.window.days_of_week', 7);
    expectOneLimit(await post({ recipients: [{ id: emailId, details: { variables: many() } }] }), 'recipients.0.details.variables', 10);
    expectOneLimit(await post({ query: { calculations: many() } }), 'query.calculations', 100);
    expectOneLimit(await post({ query: { filters: [{ column: 'status', op: 'in', value: many() }] } }), 'query.filters.0.value', 1000);
  });

  it('queries: every list (100) and in/not-in values (1,000)', async () => {
    for (const key of ['calculations', 'filters', 'breakdowns', 'orders', 'havings', 'calculated_fields']) {
      expectOneLimit(await send('POST', `/1/queries/${DS}`, { [key]: many() }), key, 100);
    }
    expectOneLimit(await send('POST', `/1/queries/${DS}`, { filters: [{ column: 'service', op: 'not-in', value: many() }] }), 'filters.0.value', 1000);
    const max = await send('POST', `/1/queries/${DS}`, { filters: [{ column: 'service', op: 'in', value: Array.from({ length: 1000 }, (_, i) => `s${i}`) }] });
    expect(max.statusCode, max.body.slice(0, 300)).toBe(200);
  });

  it('boards: panels (100), charts (100), tags (10), preset_filters (5)', async () => {
    const post = (body: Record<string, unknown>) => send('POST', '/1/boards', { name: 'b', type: 'flexible', ...body });
    expectOneLimit(await post({ panels: many() }), 'panels', 100);
    expectOneLimit(await post({ tags: many() }), 'tags', 10);
    expectOneLimit(await post({ preset_filters: many() }), 'preset_filters', 5);
    const panel = { type: 'query', query_panel: { query_id: queryId, query_annotation_id: annotationId, visualization_settings: { charts: many() } } };
    expectOneLimit(await post({ panels: [panel] }), 'panels.0.query_panel.visualization_settings.charts', 100);
    const board = await post({});
    expect(board.statusCode).toBe(201);
    expectOneLimit(await send('PUT', `/1/boards/${json(board).id}`, { name: 'b', type: 'flexible', panels: many() }), 'panels', 100);
  });

  it('board views: filters (100) and their values (1,000)', async () => {
    const board = json(await send('POST', '/1/boards', { name: 'views', type: 'flexible' }));
    expectOneLimit(await send('POST', `/1/boards/${board.id}/views`, { name: 'v', filters: many() }), 'filters', 100);
    expectOneLimit(await send('POST', `/1/boards/${board.id}/views`, { name: 'v', filters: [{ column: 'status', operation: 'in', value: many() }] }), 'filters.0.value', 1000);
  });

  it('SLOs: tags (10) and dataset_slugs (10); reporting: ids (24)', async () => {
    const base = { name: 's', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 };
    expectOneLimit(await send('POST', `/1/slos/${DS}`, { ...base, tags: many() }), 'tags', 10);
    expectOneLimit(await send('POST', '/1/slos/__all__', { ...base, dataset_slugs: many() }), 'dataset_slugs', 10);
    expectOneLimit(await send('PUT', `/1/slos/${DS}/${sloId}`, { ...base, tags: many() }), 'tags', 10);
    const now = Math.floor(t.clock.ms / 1000);
    expectOneLimit(await send('POST', '/1/reporting/slos/historical', { ids: many(), start_time: now - 3600, end_time: now }), 'ids', 24);
  });

  it('signals (schema-validated): recipients (100) and their variables (10), before the schema reads an item', async () => {
    const base = { service_name: 'api', kind: 'presence' };
    expectOneLimit(await send('POST', `/1/signals/${DS}`, { ...base, recipients: many() }), 'recipients', 100);
    expectOneLimit(await send('POST', `/1/signals/${DS}`, { ...base, recipients: [{ id: emailId, details: { variables: many() } }] }), 'recipients.0.details.variables', 10);
  });

  it('recipients: webhook_headers (5) and template_variables (10)', async () => {
    const details = { webhook_name: 'w', webhook_url: 'https://hooks.example.com/limits' };
    expectOneLimit(await send('POST', '/1/recipients', { type: 'webhook', details: { ...details, webhook_headers: many() } }), 'details.webhook_headers', 5);
    expectOneLimit(
      await send('POST', '/1/recipients', { type: 'webhook', details: { ...details, webhook_payloads: { template_variables: many() } } }),
      'details.webhook_payloads.template_variables',
      10,
    );
  });

  it('service maps (schema-validated): filters (100)', async () => {
    expectOneLimit(await send('POST', '/1/maps/dependencies/requests', { filters: many() }), 'filters', 100);
  });

  it('/2/ bodies hold no lists: a huge array where an object or a string goes is one 422', async () => {
    const team = t.init.team.slug;
    const big = many(40_000); // /2/ bodies are at most 100,000 bytes
    for (const [url, body] of [
      [`/2/teams/${team}/environments`, { data: big }],
      [`/2/teams/${team}/environments`, { data: { type: 'environments', attributes: { name: big } } }],
      [`/2/teams/${team}/api-keys`, { data: { type: 'api-keys', attributes: { name: 'k', key_type: 'configuration', permissions: big }, relationships: { environment: { data: { type: 'environments', id: 'x' } } } } }],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url, headers: t.mgmt, payload: JSON.stringify(body) });
      const errors = expectJsonApiError(res, 422);
      expect(errors.length, res.body.slice(0, 300)).toBeLessThanOrEqual(3);
    }
  });

  it('the OpenAPI document gives every array of every request body a maxItems, and docs/api.md lists them', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const missing: string[] = [];
    const limits = new Set<number>();
    const walk = (s: unknown, at: string): void => {
      if (typeof s !== 'object' || s === null) return;
      const o = s as Record<string, unknown>;
      const types = Array.isArray(o.type) ? o.type : [o.type];
      if (types.includes('array')) {
        if (typeof o.maxItems !== 'number') missing.push(at);
        else limits.add(o.maxItems);
      }
      for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(o[k])) (o[k] as unknown[]).forEach((x, i) => walk(x, `${at}|${k}${i}`));
      walk(o.items, `${at}[]`);
      if (o.properties) for (const [k, v] of Object.entries(o.properties as object)) walk(v, `${at}.${k}`);
    };
    let bodies = 0;
    for (const [path, ops] of Object.entries<Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const c of Object.values(op.requestBody?.content ?? {})) {
          bodies++;
          walk(c.schema, `${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(bodies).toBeGreaterThan(20);
    expect(missing).toEqual([]);
    const table = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8').split('**Limits.**')[1]?.split('\n\n**')[0] ?? '';
    for (const n of limits) expect(table, `limit ${n} in docs/api.md`).toContain(n.toLocaleString('en-US'));
  });
});
